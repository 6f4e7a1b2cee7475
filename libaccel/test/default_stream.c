// SPDX-License-Identifier: MIT
/* The per-thread default stream and the current context. */
#include "helpers.h"

struct thr {
	accel_context *ctx;
	unsigned char *h;
	unsigned char *out;
	void *d;
	int ret;
};

static void *thread_copy(void *arg)
{
	struct thr *t = arg;

	t->ret = accel_context_set_current(t->ctx);
	if (!t->ret)
		t->ret = accel_memcpy_async(ACCEL_STREAM_DEFAULT, t->d, t->h,
					    4096, ACCEL_MEMCPY_H2D);
	if (!t->ret)
		t->ret = accel_memcpy_async(ACCEL_STREAM_DEFAULT, t->out, t->d,
					    4096, ACCEL_MEMCPY_D2H);
	if (!t->ret)
		t->ret = accel_stream_synchronize(ACCEL_STREAM_DEFAULT,
						  5 * T_SEC);
	return NULL;
}

/* Another thread's default stream is not blocked by ours. */
static int per_thread(void)
{
	struct thr t = { 0 };
	accel_event_t gate;
	pthread_t th;

	t.ctx = t_ctx();
	CHECK(t.ctx);
	CHECK_OK(accel_host_alloc(NULL, (void **)&t.h, 4096, 0));
	CHECK_OK(accel_host_alloc(NULL, (void **)&t.out, 4096, 0));
	CHECK_OK(accel_malloc(NULL, &t.d, 4096));
	t_fill(t.h, 4096, 14);
	CHECK_OK(t_gate(ACCEL_STREAM_DEFAULT, &gate));
	CHECK_RET(accel_stream_query(ACCEL_STREAM_DEFAULT), -EAGAIN);
	CHECK(pthread_create(&th, NULL, thread_copy, &t) == 0);
	pthread_join(th, NULL);
	CHECK_OK(t.ret);
	CHECK(t_check_fill(t.out, 4096, 14));
	CHECK_RET(accel_stream_query(ACCEL_STREAM_DEFAULT), -EAGAIN);
	CHECK_OK(t_gate_open(gate));
	CHECK_OK(accel_stream_synchronize(ACCEL_STREAM_DEFAULT,
					  ACCEL_TIMEOUT_INFINITE));
	return T_PASS;
}

static void bump(void *arg)
{
	*(int *)arg += 1;
}

static int usable_everywhere(void)
{
	accel_event_t ev;
	int calls = 0, prio;
	unsigned int flags;

	CHECK(t_ctx());
	CHECK_OK(accel_event_create(NULL, 0, &ev));
	CHECK_OK(accel_event_record(ev, ACCEL_STREAM_DEFAULT));
	CHECK_OK(accel_stream_wait_event(ACCEL_STREAM_DEFAULT, ev, 0));
	CHECK_OK(accel_launch_host_func(ACCEL_STREAM_DEFAULT, bump, &calls));
	CHECK_OK(accel_stream_synchronize(ACCEL_STREAM_DEFAULT,
					  ACCEL_TIMEOUT_INFINITE));
	CHECK(calls == 1);
	CHECK_OK(accel_stream_query(ACCEL_STREAM_DEFAULT));
	CHECK_OK(accel_stream_get_priority(ACCEL_STREAM_DEFAULT, &prio));
	CHECK_OK(accel_stream_get_flags(ACCEL_STREAM_DEFAULT, &flags));
	CHECK_RET(accel_stream_destroy(ACCEL_STREAM_DEFAULT), -EINVAL);
	return T_PASS;
}

/* Each context has its own default stream for this thread. */
static int per_context(void)
{
	accel_context *a, *b, *cur;
	accel_event_t gate;

	a = t_ctx();
	b = t_ctx();
	CHECK(a && b);
	CHECK_OK(accel_context_get_current(&cur));
	CHECK(cur == b);
	CHECK_OK(accel_context_set_current(a));
	CHECK_OK(accel_context_get_current(&cur));
	CHECK(cur == a);
	CHECK_OK(t_gate(ACCEL_STREAM_DEFAULT, &gate));
	CHECK_OK(accel_context_set_current(b));
	CHECK_OK(accel_stream_query(ACCEL_STREAM_DEFAULT));
	CHECK_OK(accel_context_set_current(a));
	CHECK_RET(accel_stream_query(ACCEL_STREAM_DEFAULT), -EAGAIN);
	CHECK_OK(t_gate_open(gate));
	CHECK_OK(accel_stream_synchronize(ACCEL_STREAM_DEFAULT,
					  ACCEL_TIMEOUT_INFINITE));
	return T_PASS;
}

static int no_context(void)
{
	accel_context *cur;
	accel_stream_t s;

	/* Every test's contexts are gone by now. */
	CHECK_RET(accel_context_get_current(&cur), -ENODEV);
	CHECK_RET(accel_stream_query(ACCEL_STREAM_DEFAULT), -ENODEV);
	CHECK_RET(accel_stream_create(NULL, 0, 0, &s), -ENODEV);
	return T_PASS;
}

T_MAIN(T(per_thread), T(usable_everywhere), T(per_context), T(no_context))
