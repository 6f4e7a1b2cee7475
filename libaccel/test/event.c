// SPDX-License-Identifier: MIT
/* Events: record, query, synchronize, elapsed time, waits, ordering. */
#include "helpers.h"

static int never_recorded_is_complete(void)
{
	accel_event_t ev;
	accel_stream_t s;

	CHECK(t_ctx());
	CHECK_OK(accel_event_create(NULL, 0, &ev));
	CHECK_OK(accel_event_query(ev));
	CHECK_OK(accel_event_synchronize(ev, 0));
	/* A wait on it waits for nothing. */
	CHECK_OK(accel_stream_create(NULL, 0, 0, &s));
	CHECK_OK(accel_stream_wait_event(s, ev, 0));
	CHECK_OK(accel_stream_synchronize(s, ACCEL_TIMEOUT_INFINITE));
	return T_PASS;
}

static int record_query_sync(void)
{
	accel_event_t ev, gate;
	accel_stream_t s;

	CHECK_OK(t_stream(&s));
	CHECK_OK(accel_event_create(NULL, 0, &ev));
	CHECK_OK(t_gate(s, &gate));
	CHECK_OK(accel_event_record(ev, s));
	CHECK_RET(accel_event_query(ev), -EAGAIN);
	CHECK_RET(accel_event_synchronize(ev, 0), -ETIME);
	CHECK_RET(accel_event_synchronize(ev, 10 * 1000 * 1000), -ETIME);
	CHECK_OK(t_gate_open(gate));
	CHECK_OK(accel_event_synchronize(ev, ACCEL_TIMEOUT_INFINITE));
	CHECK_OK(accel_event_query(ev));
	return T_PASS;
}

static int elapsed_time(void)
{
	accel_event_t a, b, nt, gate;
	accel_stream_t s;
	unsigned char *h;
	void *d;
	float ms = -1;

	CHECK_OK(t_stream(&s));
	CHECK_OK(accel_host_alloc(NULL, (void **)&h, 1 << 20, 0));
	CHECK_OK(accel_malloc(NULL, &d, 1 << 20));
	CHECK_OK(accel_event_create(NULL, ACCEL_EVENT_DEFAULT, &a));
	CHECK_OK(accel_event_create(NULL, ACCEL_EVENT_DEFAULT, &b));
	CHECK_OK(accel_event_create(NULL, ACCEL_EVENT_DISABLE_TIMING, &nt));
	/* Never recorded: invalid (cudaErrorInvalidResourceHandle). */
	CHECK_RET(accel_event_elapsed_time(&ms, a, b), -EINVAL);
	CHECK_OK(t_gate(s, &gate));
	CHECK_OK(accel_event_record(a, s));
	CHECK_OK(accel_memcpy_async(s, d, h, 1 << 20, ACCEL_MEMCPY_H2D));
	CHECK_OK(accel_event_record(b, s));
	CHECK_OK(accel_event_record(nt, s));
	CHECK_RET(accel_event_elapsed_time(&ms, a, b), -EAGAIN);
	CHECK_OK(t_gate_open(gate));
	CHECK_OK(accel_stream_synchronize(s, ACCEL_TIMEOUT_INFINITE));
	CHECK_OK(accel_event_elapsed_time(&ms, a, b));
	CHECK(ms >= 0.0f);
	CHECK_RET(accel_event_elapsed_time(&ms, a, nt), -EINVAL);
	CHECK_RET(accel_event_elapsed_time(NULL, a, b), -EINVAL);
	return T_PASS;
}

static int errnos(void)
{
	accel_event_t ev, hev, other;
	accel_context *c2;
	accel_stream_t s, s2;
	unsigned int first;

	CHECK_OK(t_stream(&s));
	CHECK_RET(accel_event_create(NULL, 0, NULL), -EINVAL);
	CHECK_RET(accel_event_create(NULL, 0x80, &ev), -EINVAL);
	CHECK_OK(accel_event_create(NULL, 0, &ev));
	CHECK_OK(accel_event_create(NULL, ACCEL_EVENT_HOST, &hev));
	/* Host events are signalled, not recorded, and vice versa. */
	CHECK_RET(accel_event_record(hev, s), -EINVAL);
	CHECK_RET(accel_stream_wait_event(s, hev, 0), -EINVAL);
	CHECK_RET(accel_stream_wait_value(s, ev, 1, 0), -EINVAL);
	CHECK_RET(accel_event_signal(ev, 1, 0), -EINVAL);
	CHECK_RET(accel_event_signal(hev, 1, 0x10), -EINVAL);
	CHECK_RET(accel_stream_wait_event(s, ev, 1), -EINVAL);
	CHECK_RET(accel_stream_wait_value(s, hev, 1, 1), -EINVAL);
	/* Events and streams of different contexts do not mix. */
	c2 = t_ctx();
	CHECK(c2);
	CHECK_OK(accel_event_create(c2, 0, &other));
	CHECK_OK(accel_stream_create(c2, 0, 0, &s2));
	CHECK_RET(accel_event_record(other, s), -EINVAL);
	CHECK_RET(accel_stream_wait_event(s2, ev, 0), -EINVAL);
	{
		accel_event_t two[2] = { ev, other };

		CHECK_RET(accel_event_wait(two, 2, ACCEL_WAIT_ALL, 0, &first),
			  -EINVAL);
	}
	CHECK_RET(accel_event_wait(NULL, 1, 0, 0, &first), -EINVAL);
	CHECK_RET(accel_event_wait(&ev, 0, 0, 0, &first), -EINVAL);
	CHECK_RET(accel_event_wait(&ev, 1, 0x8, 0, &first), -EINVAL);
	CHECK_OK(accel_event_destroy(ev));
	CHECK_RET(accel_event_destroy(ev), -ENOENT);
	return T_PASS;
}

/* Bug report: a destroyed event handle crashed after new events. */
static int stale_handle_after_new_objects(void)
{
	accel_event_t old, evs[8];
	accel_stream_t s;
	float ms;
	int i;

	CHECK_OK(t_stream(&s));
	CHECK_OK(accel_event_create(NULL, 0, &old));
	CHECK_OK(accel_event_record(old, s));
	CHECK_OK(accel_event_destroy(old));
	for (i = 0; i < 8; i++) {
		CHECK_OK(accel_event_create(NULL, 0, &evs[i]));
		CHECK_OK(accel_event_record(evs[i], s));
	}
	CHECK_RET(accel_event_query(old), -ENOENT);
	CHECK_RET(accel_event_record(old, s), -ENOENT);
	CHECK_RET(accel_event_synchronize(old, 0), -ENOENT);
	CHECK_RET(accel_stream_wait_event(s, old, 0), -ENOENT);
	CHECK_RET(accel_event_elapsed_time(&ms, old, evs[0]), -ENOENT);
	CHECK_RET(accel_event_wait(&old, 1, 0, 0, NULL), -ENOENT);
	CHECK_RET(accel_event_destroy(old), -ENOENT);
	CHECK_OK(accel_stream_synchronize(s, ACCEL_TIMEOUT_INFINITE));
	for (i = 0; i < 8; i++)
		CHECK_OK(accel_event_query(evs[i]));
	return T_PASS;
}

static int wait_any_all(void)
{
	accel_stream_t s[3];
	accel_event_t ev[3], gate[3];
	unsigned int first = 99;
	int i;

	CHECK(t_ctx());
	for (i = 0; i < 3; i++) {
		CHECK_OK(accel_stream_create(NULL, 0, 0, &s[i]));
		CHECK_OK(accel_event_create(NULL, 0, &ev[i]));
		CHECK_OK(t_gate(s[i], &gate[i]));
		CHECK_OK(accel_event_record(ev[i], s[i]));
	}
	CHECK_RET(accel_event_wait(ev, 3, ACCEL_WAIT_ANY, 0, &first), -ETIME);
	CHECK_OK(t_gate_open(gate[2]));
	CHECK_OK(accel_event_wait(ev, 3, ACCEL_WAIT_ANY,
				  ACCEL_TIMEOUT_INFINITE, &first));
	CHECK(first == 2);
	CHECK_RET(accel_event_wait(ev, 3, ACCEL_WAIT_ALL, 1000000, &first),
		  -ETIME);
	CHECK_OK(t_gate_open(gate[1]));
	CHECK_OK(accel_event_wait(ev, 3, ACCEL_WAIT_ANY,
				  ACCEL_TIMEOUT_INFINITE, &first));
	CHECK(first == 1 || first == 2);
	CHECK_OK(t_gate_open(gate[0]));
	CHECK_OK(accel_event_wait(ev, 3, ACCEL_WAIT_ALL,
				  ACCEL_TIMEOUT_INFINITE, &first));
	/* Host events in a wait: complete once signalled. */
	CHECK_OK(accel_event_wait(gate, 3, ACCEL_WAIT_ALL, 0, NULL));
	return T_PASS;
}

/* Three streams, the event under test, a done event, s1 gated. */
static int rerecord_setup(accel_stream_t *s1, accel_stream_t *s2,
			  accel_stream_t *s3, accel_event_t *ev,
			  accel_event_t *done, accel_event_t *g1)
{
	int ret = t_ctx() ? 0 : -ENODEV;

	if (!ret)
		ret = accel_stream_create(NULL, 0, 0, s1);
	if (!ret)
		ret = accel_stream_create(NULL, 0, 0, s2);
	if (!ret)
		ret = accel_stream_create(NULL, 0, 0, s3);
	if (!ret)
		ret = accel_event_create(NULL, 0, ev);
	if (!ret)
		ret = accel_event_create(NULL, 0, done);
	if (!ret)
		ret = t_gate(*s1, g1);
	return ret;
}

/*
 * Bug report: one event re-recorded on several streams and then waited
 * on once must order only after the last record.
 */
static int rerecord_orders_after_last(void)
{
	accel_stream_t s1, s2, s3;
	accel_event_t ev, g1, g2, done;

	CHECK_OK(rerecord_setup(&s1, &s2, &s3, &ev, &done, &g1));
	CHECK_OK(t_gate(s2, &g2));
	CHECK_OK(accel_event_record(ev, s1));
	CHECK_OK(accel_event_record(ev, s2));	/* the last record */
	CHECK_OK(accel_stream_wait_event(s3, ev, 0));
	CHECK_OK(accel_event_record(done, s3));
	/* A record made after the wait does not move its target. */
	CHECK_OK(accel_event_record(ev, s1));

	CHECK_RET(accel_event_query(done), -EAGAIN);
	CHECK_OK(t_gate_open(g2));
	/* s1 is still gated: s3 must not be waiting for it. */
	CHECK_OK(accel_event_synchronize(done, 5 * T_SEC));
	CHECK_RET(accel_stream_query(s1), -EAGAIN);
	CHECK_OK(t_gate_open(g1));
	CHECK_OK(accel_stream_synchronize(s1, ACCEL_TIMEOUT_INFINITE));
	return T_PASS;
}

/* Reverse: the last record is on the gated stream, so the wait blocks. */
static int rerecord_waits_for_last(void)
{
	accel_stream_t s1, s2, s3;
	accel_event_t ev, g1, done;

	CHECK_OK(rerecord_setup(&s1, &s2, &s3, &ev, &done, &g1));
	CHECK_OK(accel_event_record(ev, s2));
	CHECK_OK(accel_stream_synchronize(s2, ACCEL_TIMEOUT_INFINITE));
	CHECK_OK(accel_event_record(ev, s1));	/* the last record, gated */
	CHECK_OK(accel_stream_wait_event(s3, ev, 0));
	CHECK_OK(accel_event_record(done, s3));
	CHECK_RET(accel_event_synchronize(done, 20 * 1000 * 1000), -ETIME);
	CHECK_OK(t_gate_open(g1));
	CHECK_OK(accel_event_synchronize(done, ACCEL_TIMEOUT_INFINITE));
	return T_PASS;
}

struct recorder {
	accel_event_t ev;
	accel_stream_t s;
	pthread_mutex_t m;
	pthread_cond_t c;
	int waited;
	int ret;
};

static void *record_later(void *arg)
{
	struct recorder *r = arg;

	pthread_mutex_lock(&r->m);
	while (!r->waited)
		pthread_cond_wait(&r->c, &r->m);
	pthread_mutex_unlock(&r->m);
	r->ret = accel_event_record(r->ev, r->s);
	return NULL;
}

/*
 * Bug report: a stream wait issued before another thread records the
 * event waits for nothing, and succeeds (the event was never recorded).
 */
static int wait_before_record_waits_for_nothing(void)
{
	struct recorder r = {
		.m = PTHREAD_MUTEX_INITIALIZER,
		.c = PTHREAD_COND_INITIALIZER,
	};
	accel_stream_t waiter;
	accel_event_t gate, done;
	pthread_t t;

	CHECK_OK(t_two_streams(&waiter, &r.s));
	CHECK_OK(accel_event_create(NULL, 0, &r.ev));
	CHECK_OK(accel_event_create(NULL, 0, &done));
	CHECK_OK(t_gate(r.s, &gate));	/* the record will stay pending */
	CHECK(pthread_create(&t, NULL, record_later, &r) == 0);
	CHECK_OK(accel_stream_wait_event(waiter, r.ev, 0));
	CHECK_OK(accel_event_record(done, waiter));
	pthread_mutex_lock(&r.m);
	r.waited = 1;
	pthread_cond_signal(&r.c);
	pthread_mutex_unlock(&r.m);
	pthread_join(t, NULL);
	CHECK_OK(r.ret);
	CHECK_RET(accel_event_query(r.ev), -EAGAIN);
	/* The wait captured "never recorded": done completes regardless. */
	CHECK_OK(accel_event_synchronize(done, 5 * T_SEC));
	CHECK_OK(accel_stream_synchronize(waiter, 5 * T_SEC));
	CHECK_OK(t_gate_open(gate));
	CHECK_OK(accel_event_synchronize(r.ev, ACCEL_TIMEOUT_INFINITE));
	return T_PASS;
}

/* Cross-stream order (aclrtRecordEvent + aclrtStreamWaitEvent). */
static int cross_stream_order(void)
{
	accel_stream_t a, b;
	accel_event_t ev, gate;
	unsigned char *h, *out;
	void *d;

	CHECK_OK(t_two_streams(&a, &b));
	CHECK_OK(accel_event_create(NULL, 0, &ev));
	CHECK_OK(accel_host_alloc(NULL, (void **)&h, 4096, 0));
	CHECK_OK(accel_host_alloc(NULL, (void **)&out, 4096, 0));
	CHECK_OK(accel_malloc(NULL, &d, 4096));
	t_fill(h, 4096, 5);
	CHECK_OK(t_gate(a, &gate));
	CHECK_OK(accel_memcpy_async(a, d, h, 4096, ACCEL_MEMCPY_H2D));
	CHECK_OK(accel_event_record(ev, a));
	CHECK_OK(accel_stream_wait_event(b, ev, 0));
	CHECK_OK(accel_memcpy_async(b, out, d, 4096, ACCEL_MEMCPY_D2H));
	CHECK_RET(accel_stream_synchronize(b, 10 * 1000 * 1000), -ETIME);
	CHECK_OK(t_gate_open(gate));
	CHECK_OK(accel_stream_synchronize(b, ACCEL_TIMEOUT_INFINITE));
	CHECK(t_check_fill(out, 4096, 5));
	return T_PASS;
}

T_MAIN(T(never_recorded_is_complete), T(record_query_sync), T(elapsed_time),
       T(errnos), T(stale_handle_after_new_objects), T(wait_any_all),
       T(rerecord_orders_after_last), T(rerecord_waits_for_last),
       T(wait_before_record_waits_for_nothing), T(cross_stream_order))
