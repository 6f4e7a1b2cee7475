// SPDX-License-Identifier: MIT
/* Streams: create, destroy, query, synchronize, stale handles. */
#include "helpers.h"

static int create_destroy(void)
{
	accel_stream_t s[16];
	unsigned int flags;
	int i, prio, least, greatest;

	CHECK(t_ctx());
	for (i = 0; i < 16; i++)
		CHECK_OK(accel_stream_create(NULL, i & 1 ?
					     ACCEL_STREAM_NON_BLOCKING : 0,
					     0, &s[i]));
	CHECK_OK(accel_stream_get_flags(s[1], &flags));
	CHECK(flags == ACCEL_STREAM_NON_BLOCKING);
	CHECK_OK(accel_stream_priority_range(NULL, &least, &greatest));
	CHECK(greatest <= least);
	for (i = 0; i < 16; i++)
		CHECK_OK(accel_stream_destroy(s[i]));
	/* Out-of-range priorities are clamped, as in CUDA. */
	CHECK_OK(accel_stream_create(NULL, 0, -1000, &s[0]));
	CHECK_OK(accel_stream_get_priority(s[0], &prio));
	CHECK(prio == greatest);
	CHECK_OK(accel_stream_create(NULL, 0, 1000, &s[1]));
	CHECK_OK(accel_stream_get_priority(s[1], &prio));
	CHECK(prio == least);
	return T_PASS;
}

static int errnos(void)
{
	accel_stream_t s;
	accel_event_t ev;
	int prio;

	CHECK(t_ctx());
	CHECK_RET(accel_stream_create(NULL, 0, 0, NULL), -EINVAL);
	CHECK_RET(accel_stream_create(NULL, 0x100, 0, &s), -EINVAL);
	CHECK_RET(accel_stream_destroy(ACCEL_STREAM_DEFAULT), -EINVAL);
	CHECK_RET(accel_stream_get_priority(ACCEL_STREAM_DEFAULT, NULL),
		  -EINVAL);
	/* A handle that was never handed out. */
	CHECK_RET(accel_stream_query((accel_stream_t)(uintptr_t)0x7777777700001234ULL),
		  -ENOENT);
	/* An event handle where a stream is expected. */
	CHECK_OK(accel_event_create(NULL, 0, &ev));
	CHECK_RET(accel_stream_query((accel_stream_t)ev), -EINVAL);
	CHECK_RET(accel_stream_get_priority((accel_stream_t)ev, &prio),
		  -EINVAL);
	return T_PASS;
}

/* Bug report: a destroyed handle crashed once new objects were made. */
static int stale_handle_after_new_objects(void)
{
	accel_stream_t old, s[8];
	accel_event_t ev;
	unsigned char *h;
	void *d;
	int i;

	CHECK(t_ctx());
	CHECK_OK(accel_host_alloc(NULL, (void **)&h, 64, 0));
	CHECK_OK(accel_malloc(NULL, &d, 64));
	CHECK_OK(accel_stream_create(NULL, 0, 0, &old));
	CHECK_OK(accel_stream_destroy(old));
	for (i = 0; i < 8; i++)
		CHECK_OK(accel_stream_create(NULL, 0, 0, &s[i]));
	CHECK_OK(accel_event_create(NULL, 0, &ev));
	CHECK_RET(accel_stream_destroy(old), -ENOENT);
	CHECK_RET(accel_stream_query(old), -ENOENT);
	CHECK_RET(accel_stream_synchronize(old, 0), -ENOENT);
	CHECK_RET(accel_memcpy_async(old, d, h, 64, ACCEL_MEMCPY_H2D), -ENOENT);
	CHECK_RET(accel_event_record(ev, old), -ENOENT);
	CHECK_RET(accel_stream_wait_event(old, ev, 0), -ENOENT);
	CHECK_RET(accel_launch_host_func(old, (accel_host_fn)free, NULL),
		  -ENOENT);
	for (i = 0; i < 8; i++)
		CHECK_OK(accel_stream_query(s[i]));
	return T_PASS;
}

static int query_and_sync_with_gate(void)
{
	accel_stream_t s;
	accel_event_t gate;
	unsigned char *h;
	void *d;

	CHECK_OK(t_stream(&s));
	CHECK_OK(accel_host_alloc(NULL, (void **)&h, 4096, 0));
	CHECK_OK(accel_malloc(NULL, &d, 4096));
	CHECK_OK(accel_stream_query(s));
	CHECK_OK(accel_stream_synchronize(s, 0));
	CHECK_OK(t_gate(s, &gate));
	CHECK_OK(accel_memcpy_async(s, d, h, 4096, ACCEL_MEMCPY_H2D));
	CHECK_RET(accel_stream_query(s), -EAGAIN);
	/* Zero timeout polls; a short one expires. */
	CHECK_RET(accel_stream_synchronize(s, 0), -ETIME);
	CHECK_RET(accel_stream_synchronize(s, 20 * 1000 * 1000), -ETIME);
	CHECK_OK(t_gate_open(gate));
	CHECK_OK(accel_stream_synchronize(s, ACCEL_TIMEOUT_INFINITE));
	CHECK_OK(accel_stream_query(s));
	return T_PASS;
}

/* Destroy with work queued: the work still runs (cudaStreamDestroy). */
static int destroy_with_queued_work(void)
{
	accel_stream_t s;
	accel_event_t gate, done;
	unsigned char *a, *b;
	void *d;

	CHECK_OK(t_stream(&s));
	CHECK_OK(accel_host_alloc(NULL, (void **)&a, 4096, 0));
	CHECK_OK(accel_host_alloc(NULL, (void **)&b, 4096, 0));
	CHECK_OK(accel_malloc(NULL, &d, 4096));
	CHECK_OK(accel_event_create(NULL, 0, &done));
	CHECK_OK(t_gated_h2d(s, d, a, 4096, 9, &gate));
	CHECK_OK(accel_memcpy_async(s, b, d, 4096, ACCEL_MEMCPY_D2H));
	CHECK_OK(accel_event_record(done, s));
	CHECK_OK(accel_stream_destroy(s));
	CHECK_RET(accel_event_query(done), -EAGAIN);
	CHECK_OK(t_gate_open(gate));
	CHECK_OK(accel_event_synchronize(done, ACCEL_TIMEOUT_INFINITE));
	CHECK(t_check_fill(b, 4096, 9));
	return T_PASS;
}

/* Sticky errors: a failed wait fails the stream and what follows. */
static int sticky_error(void)
{
	accel_stream_t s;
	accel_event_t gate, after;
	unsigned char *h;
	void *d;

	CHECK_OK(t_stream(&s));
	CHECK_OK(accel_host_alloc(NULL, (void **)&h, 64, 0));
	CHECK_OK(accel_malloc(NULL, &d, 64));
	CHECK_OK(accel_event_create(NULL, 0, &after));
	CHECK_OK(t_gate(s, &gate));
	CHECK_OK(accel_memcpy_async(s, d, h, 64, ACCEL_MEMCPY_H2D));
	CHECK_OK(accel_event_record(after, s));
	CHECK_OK(accel_event_signal(gate, 0, ACCEL_EVENT_SIGNAL_ERROR));
	CHECK_RET(accel_stream_synchronize(s, ACCEL_TIMEOUT_INFINITE), -EIO);
	CHECK_RET(accel_event_synchronize(after, ACCEL_TIMEOUT_INFINITE), -EIO);
	CHECK_RET(accel_event_query(after), -EIO);
	CHECK_RET(accel_stream_query(s), -EIO);
	CHECK_RET(accel_memcpy_async(s, d, h, 64, ACCEL_MEMCPY_H2D), -EIO);
	CHECK_OK(accel_stream_destroy(s));
	return T_PASS;
}

T_MAIN(T(create_destroy), T(errnos), T(stale_handle_after_new_objects),
       T(query_and_sync_with_gate), T(destroy_with_queued_work),
       T(sticky_error))
