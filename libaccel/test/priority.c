// SPDX-License-Identifier: MIT
/*
 * Stream priorities: CUDA's convention, 0 the least urgent (the default)
 * down to -5 the most urgent; every level in between is kept; the soft
 * engine (kernel and inproc) takes a more urgent stream's ready work
 * first (the tests read it as an order, never as a time); the cuda
 * backend maps the range onto CUDA's.
 */
#include <stdint.h>

#include "helpers.h"

#define NLEVELS	6

static int range_and_levels(void)
{
	int least, greatest, p, prio;
	accel_stream_t s;

	CHECK(t_ctx());
	CHECK_OK(accel_stream_priority_range(NULL, &least, &greatest));
	CHECK_RET(least, 0);
	CHECK_RET(greatest, -(NLEVELS - 1));
	/* Every level is its own; outside the range, clamped. */
	for (p = greatest - 2; p <= least + 2; p++) {
		CHECK_OK(accel_stream_create(NULL, 0, p, &s));
		CHECK_OK(accel_stream_get_priority(s, &prio));
		CHECK_RET(prio, p < greatest ? greatest : p > least ? least : p);
		CHECK_OK(accel_stream_destroy(s));
	}
	return T_PASS;
}

static int cpu_backend(void)
{
	const char *name = "";

	if (accel_context_get_backend(NULL, &name) || strcmp(name, "cpu")) {
		/* An executor's device orders its streams (CUDA priorities). */
		printf("# the %s backend runs the queues, not the soft engine\n",
		       name);
		return 0;
	}
	return 1;
}

/*
 * Streams opened from the least to the most urgent; each logs its turn in
 * one pinned log with two tiny copies: the last writer's id into its own
 * slot, then its id into the last-writer word. The least urgent stream,
 * gated on the host, releases all the others with a write_value and then
 * logs its own turn. From that write on the others are runnable, so the
 * engine's rule decides: every step of the most urgent one first, then
 * the next, and the releaser last. The chain of last writers is that
 * order; with priorities ignored the releaser, already running, logs its
 * turn before anyone (its predecessor would be nobody).
 */
static int urgent_ready_work_first(void)
{
	enum { LAST = 0, PREV = 8, ID = 16 };
	accel_stream_t s[NLEVELS];
	accel_event_t gate, release;
	uint64_t *log;
	int i;

	CHECK(t_ctx());
	if (!cpu_backend())
		return T_SKIP;
	CHECK_OK(accel_event_create(NULL, ACCEL_EVENT_HOST, &gate));
	CHECK_OK(accel_event_create(NULL, ACCEL_EVENT_HOST, &release));
	CHECK_OK(accel_host_alloc(NULL, (void **)&log, 4096, 0));
	memset(log, 0, 4096);
	for (i = 0; i < NLEVELS; i++)
		log[ID + i] = 100 + i;
	for (i = 0; i < NLEVELS; i++)
		/* s[0] is priority 0 (least urgent), s[5] priority -5. */
		CHECK_OK(accel_stream_create(NULL, 0, -i, &s[i]));
	/* The most urgent first, so that queue order cannot be the answer. */
	for (i = NLEVELS - 1; i >= 0; i--) {
		if (i) {
			CHECK_OK(accel_stream_wait_value(s[i], release, 1, 0));
		} else {
			CHECK_OK(accel_stream_wait_value(s[i], gate, 1, 0));
			CHECK_OK(accel_stream_write_value(s[i], release, 1, 0));
		}
		CHECK_OK(accel_memcpy_async(s[i], &log[PREV + i], &log[LAST],
					    sizeof(*log), ACCEL_MEMCPY_H2H));
		CHECK_OK(accel_memcpy_async(s[i], &log[LAST], &log[ID + i],
					    sizeof(*log), ACCEL_MEMCPY_H2H));
	}
	CHECK_RET(accel_stream_query(s[NLEVELS - 1]), -EAGAIN);
	CHECK_OK(t_gate_open(gate));
	for (i = 0; i < NLEVELS; i++)
		CHECK_OK(accel_stream_synchronize(s[i], ACCEL_TIMEOUT_INFINITE));
	/* s[5] ran first (after nobody), s[i] after s[i + 1], s[0] last. */
	for (i = 0; i < NLEVELS; i++) {
		uint64_t want = i == NLEVELS - 1 ? 0 : 100 + i + 1;

		if (log[PREV + i] != want) {
			printf("# priority %d ran after id %llu, not %llu\n",
			       -i, (unsigned long long)log[PREV + i],
			       (unsigned long long)want);
			return T_FAIL;
		}
	}
	CHECK(log[LAST] == 100);
	return T_PASS;
}

/* A stream waiting on a gate does not hold back the less urgent ones. */
static int blocked_urgent_stream_yields_nothing(void)
{
	accel_stream_t hi, lo;
	accel_event_t gate, ev;

	CHECK(t_ctx());
	CHECK_OK(accel_stream_create(NULL, 0, -5, &hi));
	CHECK_OK(accel_stream_create(NULL, 0, 0, &lo));
	CHECK_OK(t_gate(hi, &gate));
	CHECK_OK(accel_event_create(NULL, 0, &ev));
	CHECK_OK(accel_event_record(ev, hi));
	CHECK_OK(accel_event_record(ev, lo));
	CHECK_OK(accel_stream_synchronize(lo, 10 * T_SEC));
	CHECK_RET(accel_stream_query(hi), -EAGAIN);
	CHECK_OK(t_gate_open(gate));
	CHECK_OK(accel_stream_synchronize(hi, ACCEL_TIMEOUT_INFINITE));
	return T_PASS;
}

/*
 * The cuda backend creates each CUDA stream with the CUDA priority of its
 * level: over the stand-in libcudart, whose range is set to 0..-2 here,
 * the six levels map linearly, ends onto ends.
 */
static int cuda_priority_mapping(void)
{
	static const int want[NLEVELS] = { 0, 0, 0, -1, -1, -2 };
	int (*last)(void);
	const char *name = "";
	unsigned char *host;
	accel_stream_t s;
	void *dev;
	int i;

	last = (int (*)(void))t_fake_hook("fake_cuda_last_priority", 1);
	if (!last) {
		printf("# not over the stand-in libcudart\n");
		return T_SKIP;
	}
	setenv("FAKE_CUDA_PRIO_GREATEST", "-2", 1);
	CHECK(t_ctx());
	unsetenv("FAKE_CUDA_PRIO_GREATEST");
	CHECK_OK(accel_context_get_backend(NULL, &name));
	if (strcmp(name, "cuda"))
		return T_SKIP;
	CHECK_OK(accel_host_alloc(NULL, (void **)&host, 4096, 0));
	CHECK_OK(accel_malloc(NULL, &dev, 4096));
	for (i = 0; i < NLEVELS; i++) {
		CHECK_OK(accel_stream_create(NULL, 0, -i, &s));
		/* The CUDA stream comes with the first device work. */
		CHECK_OK(accel_memcpy_async(s, dev, host, 4096,
					    ACCEL_MEMCPY_H2D));
		CHECK_OK(accel_stream_synchronize(s, ACCEL_TIMEOUT_INFINITE));
		CHECK_RET(last(), want[i]);
	}
	return T_PASS;
}

T_MAIN(T(range_and_levels), T(urgent_ready_work_first),
       T(blocked_urgent_stream_yields_nothing), T(cuda_priority_mapping))
