// SPDX-License-Identifier: MIT
/*
 * Per-context limits, as libaccel(7) LIMITS states them: 1024 streams,
 * 65536 events less the one each context keeps for waking waiters on
 * destroy (and one more once a host function ran: its thread's
 * doorbell), 8192 memory regions (device allocations included), 65535
 * descriptors queued per stream; past them -ENOSPC, or -EAGAIN for a
 * full queue. Whatever fails changes nothing: freeing one makes room.
 */
#include <stdbool.h>

#include "helpers.h"

static void noop(void *arg)
{
	(void)arg;
}

static int streams_enospc(void)
{
	accel_context *c = t_ctx();
	accel_stream_t s, last = NULL;
	const char *backend = "";
	int n = 0;

	CHECK(c);
	CHECK_OK(accel_context_get_backend(c, &backend));
	while (!accel_stream_create(c, 0, 0, &s)) {
		last = s;
		n++;
	}
	/* The cuda backend keeps one stream for itself (libaccel(7)). */
	CHECK_RET(n, strcmp(backend, "cuda") ? 1024 : 1023);
	CHECK_RET(accel_stream_create(c, 0, 0, &s), -ENOSPC);
	CHECK_OK(accel_stream_destroy(last));
	CHECK_OK(accel_stream_create(c, 0, 0, &s));
	return T_PASS;
}

static int count_events(accel_context *c, accel_event_t *last)
{
	accel_event_t e;
	int n = 0;

	while (!accel_event_create(c, 0, &e)) {
		*last = e;
		n++;
	}
	return n;
}

static int events_enospc(void)
{
	accel_context *c = t_ctx();
	accel_event_t e, last = NULL;

	CHECK(c);
	CHECK_RET(count_events(c, &last), 65535);
	CHECK_RET(accel_event_create(c, 0, &e), -ENOSPC);
	CHECK_OK(accel_event_destroy(last));
	CHECK_OK(accel_event_create(c, 0, &e));
	return T_PASS;
}

static int host_function_takes_an_event(void)
{
	accel_context *c = t_ctx();
	accel_event_t last = NULL;
	accel_stream_t s;

	CHECK(c);
	CHECK_OK(accel_stream_create(c, 0, 0, &s));
	CHECK_OK(accel_launch_host_func(s, noop, NULL));
	CHECK_OK(accel_stream_synchronize(s, ACCEL_TIMEOUT_INFINITE));
	CHECK_RET(count_events(c, &last), 65534);
	/* A launch needs two events of its own: none left, -ENOSPC. */
	CHECK_RET(accel_launch_host_func(s, noop, NULL), -ENOSPC);
	return T_PASS;
}

static int device_allocations_enospc(void)
{
	accel_context *c = t_ctx();
	void *d, *last = NULL;
	char *h;
	int n = 0;

	CHECK(c);
	while (!accel_malloc(c, &d, 1)) {
		last = d;
		n++;
	}
	CHECK_RET(n, 8192);
	CHECK_RET(accel_malloc(c, &d, 1), -ENOSPC);
	CHECK_RET(accel_host_alloc(c, (void **)&h, 64, 0), -ENOSPC);
	CHECK_OK(accel_free(last));
	CHECK_OK(accel_host_alloc(c, (void **)&h, 64, 0));
	return T_PASS;
}

static int queue_full_eagain(void)
{
	accel_context *c = t_ctx();
	accel_event_t gate;
	accel_stream_t s;
	char *h;
	void *d;
	int n = 0;

	CHECK(c);
	CHECK_OK(accel_stream_create(c, 0, 0, &s));
	CHECK_OK(accel_host_alloc(c, (void **)&h, 64, 0));
	CHECK_OK(accel_malloc(c, &d, 64));
	CHECK_OK(t_gate(s, &gate));
	while (!accel_memcpy_async(s, d, h, 4, ACCEL_MEMCPY_H2D))
		n++;
	CHECK_RET(n, 65535);
	CHECK_RET(accel_memcpy_async(s, d, h, 4, ACCEL_MEMCPY_H2D), -EAGAIN);
	CHECK_OK(t_gate_open(gate));
	CHECK_OK(accel_stream_synchronize(s, ACCEL_TIMEOUT_INFINITE));
	CHECK_OK(accel_memcpy_async(s, d, h, 4, ACCEL_MEMCPY_H2D));
	CHECK_OK(accel_stream_synchronize(s, ACCEL_TIMEOUT_INFINITE));
	return T_PASS;
}

/*
 * A staged (pageable) copy of several pieces with too little room left on
 * its stream: -EAGAIN before any piece is queued, so nothing of it lands;
 * once the stream drained, the same call queues it whole.
 */
static int queue_full_staged_copy_queues_nothing(void)
{
	enum { BATCH = 4096 };
	static void *dsts[BATCH];
	static const void *srcs[BATCH];
	static size_t sizes[BATCH];
	const size_t n = 1 << 20;	/* 16 pieces of 64 KiB */
	accel_context *c;
	accel_event_t gate;
	accel_stream_t s;
	unsigned char *src, *back;
	char *h, *d;
	int i, queued = 0, ret = T_FAIL;

	if (setenv("ACCEL_STAGING_CHUNK_KB", "64", 1))
		return T_FAIL;
	c = t_ctx();
	src = malloc(n);
	back = malloc(n);
	if (!c || !src || !back || accel_stream_create(c, 0, 0, &s) ||
	    accel_host_alloc(c, (void **)&h, 64, 0) ||
	    accel_malloc(c, (void **)&d, n + 64))
		goto out;
	memset(back, 0, n);
	if (accel_memcpy_async(s, d, back, n, ACCEL_MEMCPY_H2D) ||
	    accel_stream_synchronize(s, ACCEL_TIMEOUT_INFINITE) ||
	    t_gate(s, &gate))
		goto out;
	for (i = 0; i < BATCH; i++) {
		dsts[i] = d + n;
		srcs[i] = h;
		sizes[i] = 4;
	}
	/* Leave room for 20 descriptors: fewer than 16 pieces take. */
	while (queued < 65535 - 20) {
		size_t k = 65535 - 20 - queued < BATCH ? 65535 - 20 - queued :
							 BATCH;

		if (accel_memcpy_batch_async(s, dsts, srcs, sizes, k,
					     ACCEL_MEMCPY_H2D))
			goto out;
		queued += (int)k;
	}
	t_fill(src, n, 4);
	if (accel_memcpy_async(s, d, src, n, ACCEL_MEMCPY_H2D) != -EAGAIN) {
		printf("# the staged copy was not refused whole\n");
		goto out;
	}
	if (t_gate_open(gate) ||
	    accel_stream_synchronize(s, ACCEL_TIMEOUT_INFINITE) ||
	    accel_memcpy_async(s, back, d, n, ACCEL_MEMCPY_D2H) ||
	    accel_stream_synchronize(s, ACCEL_TIMEOUT_INFINITE))
		goto out;
	for (i = 0; i < (int)n; i++) {
		if (back[i]) {
			printf("# byte %d of the refused copy landed\n", i);
			goto out;
		}
	}
	if (accel_memcpy_async(s, d, src, n, ACCEL_MEMCPY_H2D) ||
	    accel_memcpy_async(s, back, d, n, ACCEL_MEMCPY_D2H) ||
	    accel_stream_synchronize(s, ACCEL_TIMEOUT_INFINITE) ||
	    !t_check_fill(back, n, 4))
		goto out;
	ret = T_PASS;
out:
	unsetenv("ACCEL_STAGING_CHUNK_KB");
	free(src);
	free(back);
	return ret;
}

/* @cond holds (a call's errno), and accel_last_error_string() says why. */
#define CHECK_WHY(cond, why) do {					\
	CHECK(cond);							\
	if (!strstr(accel_last_error_string(), why)) {			\
		printf("# %s: message \"%s\"\n", #cond,		\
		       accel_last_error_string());			\
		return T_FAIL;						\
	}								\
} while (0)

static void callback_noop(accel_stream_t s, int status, void *arg)
{
	(void)s;
	(void)status;
	(void)arg;
}

/*
 * With every stream of the context taken, a thread that has no default
 * stream in it yet cannot get one: every call that takes
 * ACCEL_STREAM_DEFAULT returns -ENOSPC and says so; one stream destroyed
 * makes room.
 */
static int default_stream_enospc(void)
{
	static const char why[] = "default stream (ACCEL_STREAM_DEFAULT) cannot be made";
	accel_context *c = t_ctx();
	accel_stream_t s, last = NULL, user, ds = ACCEL_STREAM_DEFAULT;
	const void *srcs[1];
	void *dsts[1], *pool;
	size_t sizes[1] = { 16 };
	unsigned int flags;
	accel_event_t ev, hev;
	int n = 0, v;
	char *h;
	void *d;

	CHECK(c);
	CHECK_OK(accel_context_set_current(c));
	CHECK_OK(accel_stream_create(c, 0, 0, &user));
	CHECK_OK(accel_malloc(c, &d, 4096));
	CHECK_OK(accel_host_alloc(c, (void **)&h, 4096, 0));
	CHECK_OK(accel_event_create(c, 0, &ev));
	CHECK_OK(accel_event_create(c, ACCEL_EVENT_HOST, &hev));
	CHECK_OK(accel_malloc_async(user, &pool, 64));
	CHECK_OK(accel_stream_synchronize(user, ACCEL_TIMEOUT_INFINITE));
	while (!accel_stream_create(c, 0, 0, &s)) {
		last = s;
		n++;
	}
	CHECK(last);
	dsts[0] = d;
	srcs[0] = h;
	CHECK_WHY(accel_stream_query(ds) == -ENOSPC, why);
	CHECK_WHY(accel_stream_synchronize(ds, 0) == -ENOSPC, why);
	CHECK_WHY(accel_stream_get_priority(ds, &v) == -ENOSPC, why);
	CHECK_WHY(accel_stream_get_flags(ds, &flags) == -ENOSPC, why);
	CHECK_WHY(accel_stream_get_device(ds, &v) == -ENOSPC, why);
	CHECK_WHY(accel_memcpy_async(ds, d, h, 16, ACCEL_MEMCPY_H2D) ==
		  -ENOSPC, why);
	CHECK_WHY(accel_memcpy_batch_async(ds, dsts, srcs, sizes, 1,
					   ACCEL_MEMCPY_H2D) == -ENOSPC, why);
	CHECK_WHY(accel_memcpy_2d_async(ds, d, 16, h, 16, 16, 2,
					ACCEL_MEMCPY_H2D) == -ENOSPC, why);
	CHECK_WHY(accel_memcpy_peer_async(ds, d, 0, (char *)d + 64, 0, 16) ==
		  -ENOSPC, why);
	CHECK_WHY(accel_memset_async(ds, d, 0, 16) == -ENOSPC, why);
	CHECK_WHY(accel_memset_d16_async(ds, d, 0, 8) == -ENOSPC, why);
	CHECK_WHY(accel_memset_d32_async(ds, d, 0, 4) == -ENOSPC, why);
	CHECK_WHY(accel_event_record(ev, ds) == -ENOSPC, why);
	CHECK_WHY(accel_stream_wait_event(ds, ev, 0) == -ENOSPC, why);
	CHECK_WHY(accel_stream_wait_value(ds, hev, 1, 0) == -ENOSPC, why);
	CHECK_WHY(accel_stream_write_value(ds, hev, 1, 0) == -ENOSPC, why);
	CHECK_WHY(accel_launch_host_func(ds, noop, NULL) == -ENOSPC, why);
	CHECK_WHY(accel_stream_add_callback(ds, callback_noop, NULL, 0) ==
		  -ENOSPC, why);
	CHECK_WHY(accel_malloc_async(ds, &d, 64) == -ENOSPC, why);
	CHECK_WHY(accel_free_async(ds, pool) == -ENOSPC, why);
	/* Nothing changed: the pool block is still allocated. */
	CHECK_OK(accel_stream_destroy(last));
	CHECK_OK(accel_stream_query(ACCEL_STREAM_DEFAULT));
	CHECK_OK(accel_free_async(ACCEL_STREAM_DEFAULT, pool));
	CHECK_OK(accel_stream_synchronize(ACCEL_STREAM_DEFAULT,
					  ACCEL_TIMEOUT_INFINITE));
	return T_PASS;
}

/*
 * A pageable copy each way with nothing for the staging pool: -ENOSPC;
 * @h2h: a pageable H2H copy too (it needs an event, not a chunk).
 */
static int pageable_copies_nospc(accel_stream_t s, void *d, bool h2h,
				 const char *why)
{
	char pg[64] = "pageable", out[64];
	const void *srcs[1] = { pg };
	void *dsts[1] = { d };
	size_t sizes[1] = { sizeof(pg) };

	CHECK_WHY(accel_memcpy_async(s, d, pg, sizeof(pg), ACCEL_MEMCPY_H2D) ==
		  -ENOSPC, why);
	CHECK_WHY(accel_memcpy_async(s, out, d, sizeof(out), ACCEL_MEMCPY_D2H) ==
		  -ENOSPC, why);
	if (h2h)
		CHECK_WHY(accel_memcpy_async(s, out, pg, sizeof(out),
					     ACCEL_MEMCPY_H2H) == -ENOSPC, why);
	CHECK_WHY(accel_memcpy_batch_async(s, dsts, srcs, sizes, 1,
					   ACCEL_MEMCPY_H2D) == -ENOSPC, why);
	return T_PASS;
}

/* A pageable copy that made it after all: the bytes arrived. */
static int pageable_copy_works(accel_stream_t s, void *d)
{
	char pg[64] = "pageable", out[64] = "";

	CHECK_OK(accel_memcpy_async(s, d, pg, sizeof(pg), ACCEL_MEMCPY_H2D));
	CHECK_OK(accel_memcpy_async(s, out, d, sizeof(out), ACCEL_MEMCPY_D2H));
	CHECK_OK(accel_stream_synchronize(s, ACCEL_TIMEOUT_INFINITE));
	CHECK(!strcmp(out, "pageable"));
	return T_PASS;
}

/*
 * Pageable copies are staged through chunks the pool makes on first use,
 * each a memory region with an event: with every event, or every region,
 * of the context taken before the first, they return -ENOSPC and say
 * which; one freed makes room.
 */
static int pageable_copy_enospc(void)
{
	static accel_event_t evs[65536];
	accel_context *c = t_ctx();
	accel_stream_t s;
	void *d, *r, *rlast = NULL;
	int n = 0, i;

	CHECK(c);
	CHECK_OK(accel_stream_create(c, 0, 0, &s));
	CHECK_OK(accel_malloc(c, &d, 4096));
	while (n < 65536 && !accel_event_create(c, 0, &evs[n]))
		n++;
	CHECK_RET(pageable_copies_nospc(s, d, true, "events in use"), T_PASS);
	/* A few events back: the pool has what a chunk and a copy need. */
	for (i = 0; i < 16 && n; i++)
		CHECK_OK(accel_event_destroy(evs[--n]));
	CHECK_RET(pageable_copy_works(s, d), T_PASS);

	c = t_ctx();
	CHECK(c);
	CHECK_OK(accel_stream_create(c, 0, 0, &s));
	CHECK_OK(accel_malloc(c, &d, 4096));
	while (!accel_malloc(c, &r, 1))
		rlast = r;
	CHECK(rlast);
	CHECK_RET(pageable_copies_nospc(s, d, false,
					"memory regions already"),
		  T_PASS);
	CHECK_OK(accel_free(rlast));
	CHECK_RET(pageable_copy_works(s, d), T_PASS);
	return T_PASS;
}

T_MAIN(T(streams_enospc), T(events_enospc), T(host_function_takes_an_event),
       T(device_allocations_enospc), T(queue_full_eagain),
       T(queue_full_staged_copy_queues_nothing), T(default_stream_enospc),
       T(pageable_copy_enospc))
