// SPDX-License-Identifier: MIT
/*
 * Rules every call keeps: a call that fails changes nothing (a forked
 * child's releases and destroys), a failed stream fails every call on it,
 * limits are checked before the caller's arrays are read, and a pointer
 * registered in two contexts is released in the current one first.
 */
#include <limits.h>
#include <sys/mman.h>

#include "helpers.h"

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
	ret = t_in_child(child_releases, &o);
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

/*
 * accel_last_error_string() is about the last call only: a call that
 * fails its argument checks leaves it empty or saying what was wrong with
 * its own arguments, never with the note of the staged copy before it.
 */
static int error_string_cleared_by_every_call(void)
{
	accel_context *c = t_ctx();
	accel_event_t evs[256], e;
	char page[64], *h;
	accel_stream_t s;
	size_t sz = 16;
	void *d;
	int i;

	CHECK(c);
	CHECK_OK(accel_stream_create(c, 0, 0, &s));
	CHECK_OK(accel_malloc(c, &d, 4096));
	CHECK_OK(accel_host_alloc(c, (void **)&h, 4096, 0));
	CHECK_OK(accel_event_create(c, 0, &e));
#define NOTE_THEN(call, want) do {					\
		CHECK_OK(accel_memcpy_async(s, d, page, sizeof(page),	\
					    ACCEL_MEMCPY_H2D));		\
		CHECK(*accel_last_error_string());			\
		CHECK_RET(call, want);					\
		CHECK(!strstr(accel_last_error_string(), "staged"));	\
	} while (0)
	NOTE_THEN(accel_memcpy_async(s, d, h, SIZE_MAX, ACCEL_MEMCPY_H2D),
		  -EINVAL);
	NOTE_THEN(accel_memcpy_async(s, NULL, h, 16, ACCEL_MEMCPY_H2D),
		  -EINVAL);
	NOTE_THEN(accel_memcpy_batch_async(s, &d, (const void **)&h, &sz,
					   1 << 30, ACCEL_MEMCPY_H2D),
		  -EINVAL);
	NOTE_THEN(accel_event_wait(&e, 0, 0, 0, NULL), -EINVAL);
	NOTE_THEN(accel_event_wait(NULL, 1, 0, 0, NULL), -EINVAL);
	NOTE_THEN(accel_stream_create(c, 0, 0, NULL), -EINVAL);
	NOTE_THEN(accel_event_create(c, 0, NULL), -EINVAL);
	NOTE_THEN(accel_launch_host_func(s, NULL, NULL), -EINVAL);
	NOTE_THEN(accel_host_alloc(c, NULL, 4096, 0), -EINVAL);
	NOTE_THEN(accel_context_create(NULL, 0), -EINVAL);
	NOTE_THEN(accel_context_get_current(NULL), -EINVAL);
#undef NOTE_THEN
	/* Too many events says why; the next call's bad mode does not. */
	for (i = 0; i < 256; i++)
		evs[i] = e;
	CHECK_RET(accel_event_wait(evs, 256, 0, 0, NULL), -EINVAL);
	CHECK_RET(accel_event_wait(&e, 1, 0x8, 0, NULL), -EINVAL);
	CHECK(!*accel_last_error_string());
	/* A staged destination is said to be written when the copy ends. */
	CHECK_OK(accel_memcpy_async(s, page, d, sizeof(page),
				    ACCEL_MEMCPY_D2H));
	CHECK(strstr(accel_last_error_string(), "until the stream is synchronized"));
	CHECK_OK(accel_stream_synchronize(s, ACCEL_TIMEOUT_INFINITE));
	CHECK(!*accel_last_error_string());
	return T_PASS;
}

/* Every page: errno is never set, whatever a call ran into. */
static int errno_never_set(void)
{
	const long pg = sysconf(_SC_PAGESIZE);
	accel_context *c = t_ctx(), *c2;
	char page[64], *ro, *none;
	accel_stream_t s;
	void *d;

	CHECK(c);
	CHECK_OK(accel_stream_create(c, 0, 0, &s));
	CHECK_OK(accel_malloc(c, &d, 4096));
	ro = mmap(NULL, pg, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	none = mmap(NULL, pg, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(ro != MAP_FAILED && none != MAP_FAILED);
#define ERRNO_KEPT(call, want) do {					\
		errno = EBADMSG;					\
		CHECK_RET(call, want);					\
		CHECK_RET(errno, EBADMSG);				\
	} while (0)
	ERRNO_KEPT(accel_memcpy_async(s, ro, d, 16, ACCEL_MEMCPY_D2H),
		   -EFAULT);
	ERRNO_KEPT(accel_memcpy_async(s, none, d, 16, ACCEL_MEMCPY_D2H),
		   -EFAULT);
	ERRNO_KEPT(accel_memcpy_async(s, d, none, 16, ACCEL_MEMCPY_H2D),
		   -EFAULT);
	ERRNO_KEPT(accel_host_register(c, ro, pg, 0), -EFAULT);
	ERRNO_KEPT(accel_host_register(c, none, pg, ACCEL_HOST_REGISTER_READONLY),
		   -EFAULT);
	ERRNO_KEPT(accel_free(page), -ENOENT);
	ERRNO_KEPT(accel_memcpy_async(s, d, page, sizeof(page),
				      ACCEL_MEMCPY_H2D), 0);
	ERRNO_KEPT(accel_stream_synchronize(s, ACCEL_TIMEOUT_INFINITE), 0);
	munmap(none, pg);
	ERRNO_KEPT(accel_memcpy_async(s, d, none, 16, ACCEL_MEMCPY_H2D),
		   -EFAULT);
	/* No /dev/accelstream: the open's errno stays inside. */
	if (access("/dev/accelstream", F_OK)) {
		const char *old = getenv("ACCEL_TRANSPORT");
		char *saved = old ? strdup(old) : NULL;
		int ret;

		setenv("ACCEL_TRANSPORT", "kernel", 1);
		errno = EBADMSG;
		ret = accel_context_create(&c2, 0);
		if (saved)
			setenv("ACCEL_TRANSPORT", saved, 1);
		else
			unsetenv("ACCEL_TRANSPORT");
		free(saved);
		CHECK(ret < 0);
		CHECK_RET(errno, EBADMSG);
	}
#undef ERRNO_KEPT
	munmap(ro, pg);
	return T_PASS;
}

T_MAIN(T(fork_child_release_changes_nothing),
       T(failed_stream_every_call_eio),
       T(event_wait_count_checked_first),
       T(unregister_current_context_first),
       T(foreign_pinned_buffer_explained),
       T(default_stream_without_context),
       T(error_string_cleared_by_every_call),
       T(errno_never_set))
