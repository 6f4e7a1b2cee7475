// SPDX-License-Identifier: MIT
/*
 * What a host function may call: queueing work is fine, anything that
 * would block (a wait with a nonzero timeout, a context destroy) returns
 * -EDEADLK rather than deadlock or free the thread it runs on.
 */
#include "helpers.h"

struct calls {
	accel_context *ctx, *other;
	accel_stream_t s, s2;
	accel_event_t ev, gate;
	void *h, *d;
	int destroy, destroy_other, sync_self, sync_other, sync_poll;
	int ev_sync, ev_wait, ev_poll, copy, launch, ran;
};

static void nested(void *arg)
{
	((struct calls *)arg)->ran++;
}

static void destroy_ctx(void *arg)
{
	struct calls *c = arg;

	c->destroy = accel_context_destroy(c->ctx);
	if (c->other)
		c->destroy_other = accel_context_destroy(c->other);
	c->ran++;
}

static int destroy_own_context(void)
{
	struct calls c = { .destroy = 1, .destroy_other = 1 };
	accel_context *ctx, *other;

	CHECK(other = t_ctx());
	CHECK(ctx = t_ctx());
	c.ctx = ctx;
	c.other = other;
	CHECK_OK(accel_stream_create(ctx, 0, 0, &c.s));
	CHECK_OK(accel_launch_host_func(c.s, destroy_ctx, &c));
	CHECK_OK(accel_stream_synchronize(c.s, 10 * T_SEC));
	CHECK(c.ran == 1);
	CHECK_RET(c.destroy, -EDEADLK);
	CHECK_RET(c.destroy_other, -EDEADLK);
	/* Both contexts are still alive and work. */
	CHECK_OK(accel_stream_query(c.s));
	CHECK_OK(accel_launch_host_func(c.s, nested, &c));
	CHECK_OK(accel_stream_synchronize(c.s, 10 * T_SEC));
	CHECK(c.ran == 2);
	CHECK_OK(accel_stream_create(other, 0, 0, &c.s2));
	CHECK_OK(accel_stream_synchronize(c.s2, 10 * T_SEC));
	return T_PASS;
}

static void waits(void *arg)
{
	struct calls *c = arg;

	c->sync_self = accel_stream_synchronize(c->s, ACCEL_TIMEOUT_INFINITE);
	c->sync_other = accel_stream_synchronize(c->s2, T_SEC);
	c->sync_poll = accel_stream_synchronize(c->s, 0);
	c->ev_sync = accel_event_synchronize(c->ev, ACCEL_TIMEOUT_INFINITE);
	c->ev_wait = accel_event_wait(&c->ev, 1, ACCEL_WAIT_ALL, T_SEC, NULL);
	c->ev_poll = accel_event_wait(&c->ev, 1, ACCEL_WAIT_ALL, 0, NULL);
	/* Queueing is allowed: a copy and another host function. */
	c->copy = accel_memcpy_async(c->s, c->d, c->h, 64, ACCEL_MEMCPY_H2D);
	c->launch = accel_launch_host_func(c->s, nested, c);
	c->ran++;
}

static int waits_return_edeadlk(void)
{
	struct calls c = { .sync_self = 1 };

	CHECK(c.ctx = t_ctx());
	CHECK_OK(accel_stream_create(NULL, 0, 0, &c.s));
	CHECK_OK(accel_stream_create(NULL, 0, 0, &c.s2));
	CHECK_OK(accel_event_create(NULL, 0, &c.ev));
	CHECK_OK(accel_host_alloc(NULL, &c.h, 4096, 0));
	CHECK_OK(accel_malloc(NULL, &c.d, 4096));
	/*
	 * s2 waits for a gate opened only once the host function ran, and
	 * so does the event recorded behind it: waiting would hang.
	 */
	CHECK_OK(t_gate(c.s2, &c.gate));
	CHECK_OK(accel_event_record(c.ev, c.s2));
	CHECK_OK(accel_memcpy_async(c.s, c.d, c.h, 4096, ACCEL_MEMCPY_H2D));
	CHECK_OK(accel_launch_host_func(c.s, waits, &c));
	CHECK_OK(accel_stream_synchronize(c.s, 10 * T_SEC));
	/* Again, for what the host function queued meanwhile. */
	CHECK_OK(accel_stream_synchronize(c.s, 10 * T_SEC));
	CHECK(c.ran == 2);
	CHECK_FN_WAITS(c.sync_self, c.sync_other, c.sync_poll);
	CHECK_FN_WAITS(c.ev_sync, c.ev_wait, c.ev_poll);
	CHECK_OK(c.copy);
	CHECK_OK(c.launch);
	CHECK_OK(t_gate_open(c.gate));
	CHECK_OK(accel_stream_synchronize(c.s2, 10 * T_SEC));
	CHECK_OK(accel_event_synchronize(c.ev, 10 * T_SEC));
	return T_PASS;
}

/*
 * A host function runs in its own context (as a CUDA host function does):
 * there the current context is the stream's, not the oldest live one, so
 * NULL and ACCEL_STREAM_DEFAULT name it, even after an earlier function
 * of the same thread made another context current.
 */
struct current {
	accel_context *a, *b, *seen[2];
	void *d, *h;
	int get[2], copy, set;
};

static void in_b(void *arg)
{
	struct current *c = arg;
	int i = c->seen[0] ? 1 : 0;

	c->get[i] = accel_context_get_current(&c->seen[i]);
	if (!i) {
		c->copy = accel_memcpy_async(ACCEL_STREAM_DEFAULT, c->d, c->h,
					     64, ACCEL_MEMCPY_H2D);
		c->set = accel_context_set_current(c->a);
	}
}

static int current_is_own_context(void)
{
	struct current c;
	accel_stream_t s;

	memset(&c, 0, sizeof(c));
	c.a = t_ctx();
	c.b = t_ctx();
	CHECK(c.a && c.b);
	/* The library's thread has none of its own: not the oldest (a). */
	CHECK_OK(accel_stream_create(c.b, 0, 0, &s));
	CHECK_OK(accel_malloc(c.b, &c.d, 64));
	CHECK_OK(accel_host_alloc(c.b, &c.h, 64, 0));
	CHECK_OK(accel_launch_host_func(s, in_b, &c));
	CHECK_OK(accel_launch_host_func(s, in_b, &c));
	CHECK_OK(accel_stream_synchronize(s, ACCEL_TIMEOUT_INFINITE));
	CHECK_OK(c.get[0]);
	CHECK(c.seen[0] == c.b);
	CHECK_OK(c.copy);
	CHECK_OK(c.set);
	CHECK_OK(c.get[1]);
	CHECK(c.seen[1] == c.b);
	return T_PASS;
}

T_MAIN(T(destroy_own_context), T(waits_return_edeadlk),
       T(current_is_own_context))
