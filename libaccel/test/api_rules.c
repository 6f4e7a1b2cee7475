// SPDX-License-Identifier: MIT
/*
 * Rules every call keeps: a call that fails changes nothing (a forked
 * child's releases and destroys), a failed stream fails every call on it,
 * limits are checked before the caller's arrays are read, and a pointer
 * registered in two contexts is released in the current one first.
 */
#include <limits.h>
#include <sys/wait.h>

#include "helpers.h"

/* Run @fn in a forked child; its exit status, or -1 if it crashed. */
static int in_child(int (*fn)(void *), void *arg)
{
	int status;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0)
		_exit(fn(arg));
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

struct objs {
	accel_context *ctx;
	accel_stream_t s;
	accel_event_t ev;
	char *pinned;
	char *reg;
	void *dev;
};

static int objs_make(struct objs *o)
{
	memset(o, 0, sizeof(*o));
	o->ctx = t_ctx();
	if (!o->ctx)
		return -ENODEV;
	o->reg = aligned_alloc(4096, 4096);
	if (!o->reg)
		return -ENOMEM;
	return accel_stream_create(o->ctx, 0, 0, &o->s) ?:
	       accel_event_create(o->ctx, 0, &o->ev) ?:
	       accel_host_alloc(o->ctx, (void **)&o->pinned, 4096, 0) ?:
	       accel_host_register(o->ctx, o->reg, 4096, 0) ?:
	       accel_malloc(o->ctx, &o->dev, 4096);
}

/*
 * In the child every call on the parent's objects fails with -EACCES, and
 * failing leaves them as they were: the mappings stay, and the handles and
 * regions are still there to fail the same way again (not -ENOENT).
 */
static int child_releases(void *arg)
{
	struct objs *o = arg;
	int i;

	for (i = 0; i < 2; i++) {
		if (accel_host_free(o->pinned) != -EACCES)
			return 10 + i;
		o->pinned[0] = 1;	/* still mapped */
		if (accel_host_unregister(o->reg, 0) != -EACCES)
			return 20 + i;
		if (accel_host_unregister(o->reg,
					  ACCEL_HOST_UNREGISTER_DEFERRED) !=
		    -EACCES)
			return 30 + i;
		if (accel_free(o->dev) != -EACCES)
			return 40 + i;
		if (accel_stream_destroy(o->s) != -EACCES)
			return 50 + i;
		if (accel_event_destroy(o->ev) != -EACCES)
			return 60 + i;
		if (accel_context_destroy(o->ctx) != -EACCES)
			return 70 + i;
	}
	/* The handles are still live: -EACCES from the driver, not -ENOENT. */
	if (accel_stream_query(o->s) != -EACCES)
		return 80;
	if (accel_event_query(o->ev) != -EACCES)
		return 81;
	return 0;
}

static int fork_child_release_changes_nothing(void)
{
	struct objs o;
	int ret;

	CHECK_OK(objs_make(&o));
	t_no_probe = 1;
	ret = in_child(child_releases, &o);
	if (ret)
		printf("# child: step %d\n", ret);
	CHECK_RET(ret, 0);
	/* The parent's objects are untouched by the child's attempts. */
	o.pinned[1] = 2;
	CHECK_OK(accel_memcpy_async(o.s, o.dev, o.pinned, 4096,
				    ACCEL_MEMCPY_H2D));
	CHECK_OK(accel_event_record(o.ev, o.s));
	CHECK_OK(accel_stream_synchronize(o.s, ACCEL_TIMEOUT_INFINITE));
	CHECK_OK(accel_event_destroy(o.ev));
	CHECK_OK(accel_stream_destroy(o.s));
	CHECK_OK(accel_host_free(o.pinned));
	CHECK_OK(accel_host_unregister(o.reg, 0));
	CHECK_OK(accel_free(o.dev));
	free(o.reg);
	return T_PASS;
}

/* A stream whose HOST_WAIT failed: failed for good (-EIO). */
static int failed_stream(accel_context *ctx, accel_stream_t *s,
			 accel_event_t *gate)
{
	int ret;

	ret = accel_stream_create(ctx, 0, 0, s) ?: t_gate(*s, gate) ?:
	      accel_event_signal(*gate, 1, ACCEL_EVENT_SIGNAL_ERROR);
	if (ret)
		return ret;
	ret = accel_stream_synchronize(*s, ACCEL_TIMEOUT_INFINITE);
	return ret == -EIO ? 0 : -EPROTO;
}

static void noop_fn(void *arg)
{
	(void)arg;
}

/* Every call on a failed stream returns its sticky -EIO, 0 bytes or not. */
static int failed_stream_every_call_eio(void)
{
	accel_context *ctx = t_ctx();
	accel_stream_t s;
	accel_event_t gate, ev;
	char *h, buf[64];
	void *d, *dsts[1], *srcs[1];
	size_t sizes[1] = { 0 };
	unsigned int flags;
	int prio;

	CHECK(ctx);
	CHECK_OK(failed_stream(ctx, &s, &gate));
	CHECK_OK(accel_host_alloc(ctx, (void **)&h, 4096, 0));
	CHECK_OK(accel_malloc(ctx, &d, 4096));
	CHECK_OK(accel_event_create(ctx, 0, &ev));
	dsts[0] = d;
	srcs[0] = h;

	CHECK_RET(accel_memcpy_async(s, d, h, 0, ACCEL_MEMCPY_H2D), -EIO);
	CHECK_RET(accel_memcpy_async(s, buf, buf, 0, ACCEL_MEMCPY_H2H), -EIO);
	CHECK_RET(accel_memcpy_h2d_async(s, d, h, 0), -EIO);
	CHECK_RET(accel_memcpy_d2h_async(s, h, d, 0), -EIO);
	CHECK_RET(accel_memcpy_async(s, d, h, 64, ACCEL_MEMCPY_H2D), -EIO);
	CHECK_RET(accel_memcpy_async(s, d, buf, 64, ACCEL_MEMCPY_H2D), -EIO);
	CHECK_RET(accel_memcpy_batch_async(s, dsts, (const void *const *)srcs,
					   sizes, 1, ACCEL_MEMCPY_H2D), -EIO);
	CHECK_RET(accel_memcpy_batch_async(s, NULL, NULL, NULL, 0,
					   ACCEL_MEMCPY_DEFAULT), -EIO);
	CHECK_RET(accel_event_record(ev, s), -EIO);
	CHECK_RET(accel_stream_wait_event(s, ev, 0), -EIO);
	CHECK_RET(accel_stream_wait_value(s, gate, 1, 0), -EIO);
	CHECK_RET(accel_launch_host_func(s, noop_fn, NULL), -EIO);
	CHECK_RET(accel_stream_query(s), -EIO);
	CHECK_RET(accel_stream_synchronize(s, 0), -EIO);
	CHECK_RET(accel_stream_get_flags(s, &flags), -EIO);
	CHECK_RET(accel_stream_get_priority(s, &prio), -EIO);
	/* Destroy still works. */
	CHECK_OK(accel_stream_destroy(s));
	CHECK_RET(accel_stream_query(s), -ENOENT);
	return T_PASS;
}

/* The limit is checked before the array is allocated or read. */
static int event_wait_count_checked_first(void)
{
	accel_context *ctx = t_ctx();
	accel_event_t *one, many[256];
	unsigned int i, first;

	CHECK(ctx);
	/* Exactly one element: reading a second one is past the array. */
	one = malloc(sizeof(*one));
	CHECK(one);
	CHECK_OK(accel_event_create(ctx, 0, one));
	CHECK_RET(accel_event_wait(one, UINT_MAX, 0, 0, &first), -EINVAL);
	CHECK_RET(accel_event_wait(one, UINT_MAX, ACCEL_WAIT_ALL, 0, &first),
		  -EINVAL);
	CHECK_RET(accel_event_wait(one, 257, 0, 0, &first), -EINVAL);
	CHECK_RET(accel_event_wait(one, 256, 0, 0, &first), -EINVAL);
	CHECK_OK(accel_event_wait(one, 1, 0, 0, &first));
	CHECK_RET(first, 0);
	/* 255, the documented most, works. */
	for (i = 0; i < 255; i++)
		many[i] = *one;
	CHECK_OK(accel_event_wait(many, 255, ACCEL_WAIT_ALL, 0, &first));
	CHECK_OK(accel_event_destroy(*one));
	free(one);
	return T_PASS;
}

/*
 * A range registered in two contexts: accel_host_unregister(p, 0) releases
 * the calling thread's current context's registration first.
 */
static int unregister_current_context_first(void)
{
	accel_context *a = t_ctx(), *b = t_ctx();
	char *p = aligned_alloc(4096, 4096);

	CHECK(a && b && p);
	CHECK_OK(accel_host_register(a, p, 4096, 0));
	CHECK_OK(accel_host_register(b, p, 4096, 0));
	/* a is the older context; make it the current one. */
	CHECK_OK(accel_context_set_current(a));
	CHECK_OK(accel_host_unregister(p, 0));
	CHECK_OK(accel_host_register(a, p, 4096, 0));
	CHECK_RET(accel_host_register(b, p, 4096, 0), -EEXIST);
	CHECK_OK(accel_context_set_current(b));
	CHECK_OK(accel_host_unregister(p, 0));
	CHECK_RET(accel_host_register(a, p, 4096, 0), -EEXIST);
	CHECK_OK(accel_host_register(b, p, 4096, 0));
	/* Not in the current context: the other one's goes. */
	CHECK_OK(accel_host_unregister(p, 0));
	CHECK_RET(accel_host_register(a, p, 4096, 0), -EEXIST);
	CHECK_OK(accel_host_unregister(p, 0));
	CHECK_RET(accel_host_unregister(p, 0), -ENOENT);
	CHECK_OK(accel_host_register(a, p, 4096, 0));
	CHECK_OK(accel_host_unregister(p, 0));
	free(p);
	return T_PASS;
}

/*
 * Another context's pinned buffer on this context's stream is staged like
 * pageable memory: the call says so, and why, in accel_last_error_string().
 */
static int foreign_pinned_buffer_explained(void)
{
	accel_context *a = t_ctx(), *b = t_ctx();
	char *pb, *pa, page[128];
	accel_stream_t s;
	void *d;

	CHECK(a && b);
	CHECK_OK(accel_stream_create(a, 0, 0, &s));
	CHECK_OK(accel_malloc(a, &d, 4096));
	CHECK_OK(accel_host_alloc(a, (void **)&pa, 4096, 0));
	CHECK_OK(accel_host_alloc(b, (void **)&pb, 4096, 0));
	t_fill(pb, 100, 3);
	CHECK_OK(accel_memcpy_async(s, d, pb, 100, ACCEL_MEMCPY_H2D));
	CHECK(strstr(accel_last_error_string(), "another context"));
	CHECK(strstr(accel_last_error_string(), "accel_host_alloc()"));
	CHECK(strstr(accel_last_error_string(), "staging pool"));
	CHECK_OK(accel_memcpy_async(s, pa, d, 100, ACCEL_MEMCPY_D2H));
	CHECK_OK(accel_stream_synchronize(s, ACCEL_TIMEOUT_INFINITE));
	CHECK(t_check_fill(pa, 100, 3));
	/* Plain pageable memory: said as such. */
	CHECK_OK(accel_memcpy_async(s, d, page, sizeof(page),
				    ACCEL_MEMCPY_H2D));
	CHECK(strstr(accel_last_error_string(), "pageable memory"));
	CHECK(!strstr(accel_last_error_string(), "another context"));
	/* A pinned buffer of this context: nothing to say. */
	CHECK_OK(accel_memcpy_async(s, d, pa, 100, ACCEL_MEMCPY_H2D));
	CHECK(!*accel_last_error_string());
	CHECK_OK(accel_stream_synchronize(s, ACCEL_TIMEOUT_INFINITE));
	return T_PASS;
}

/* ACCEL_STREAM_DEFAULT with no context alive: -ENODEV from every call. */
static int default_stream_without_context(void)
{
	accel_stream_t d = ACCEL_STREAM_DEFAULT;
	unsigned int flags;
	char a[8], b[8];
	int prio;

	CHECK_RET(accel_stream_query(d), -ENODEV);
	CHECK_RET(accel_stream_synchronize(d, 0), -ENODEV);
	CHECK_RET(accel_stream_get_priority(d, &prio), -ENODEV);
	CHECK_RET(accel_stream_get_flags(d, &flags), -ENODEV);
	CHECK_RET(accel_launch_host_func(d, noop_fn, NULL), -ENODEV);
	CHECK_RET(accel_memcpy_async(d, a, b, sizeof(a), ACCEL_MEMCPY_H2H),
		  -ENODEV);
	CHECK_RET(accel_memcpy_batch_async(d, NULL, NULL, NULL, 0,
					   ACCEL_MEMCPY_DEFAULT), -ENODEV);
	return T_PASS;
}

T_MAIN(T(fork_child_release_changes_nothing),
       T(failed_stream_every_call_eio),
       T(event_wait_count_checked_first),
       T(unregister_current_context_first),
       T(foreign_pinned_buffer_explained),
       T(default_stream_without_context))
