// SPDX-License-Identifier: MIT
/*
 * Stream priorities: CUDA's convention, 0 the least urgent (the default)
 * down to -5 the most urgent; every level in between is kept; the soft
 * engine (kernel and inproc) takes a more urgent stream's ready work
 * first; the cuda backend maps the range onto CUDA's.
 */
#include <dlfcn.h>

#include "helpers.h"

#define NLEVELS	6
#define COPY	(1 << 20)

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
 * Streams opened from the least to the most urgent, all gated on one host
 * event, each a 1 MiB copy then a timing event. Once the gate opens they
 * are all ready at once; the engine takes the most urgent first and lets a
 * stream go on only when no more urgent one has work, so the events
 * complete from the most urgent to the least: each later than the last.
 */
static int urgent_ready_work_first(void)
{
	accel_stream_t s[NLEVELS];
	accel_event_t gate, done[NLEVELS];
	unsigned char *host;
	void *dev;
	float ms;
	int i;

	CHECK(t_ctx());
	if (!cpu_backend())
		return T_SKIP;
	CHECK_OK(accel_event_create(NULL, ACCEL_EVENT_HOST, &gate));
	CHECK_OK(accel_host_alloc(NULL, (void **)&host, COPY, 0));
	CHECK_OK(accel_malloc(NULL, &dev, (size_t)COPY * NLEVELS));
	t_fill(host, COPY, 3);
	for (i = 0; i < NLEVELS; i++) {
		/* s[0] is priority 0 (least urgent), s[5] priority -5. */
		CHECK_OK(accel_stream_create(NULL, 0, -i, &s[i]));
		CHECK_OK(accel_event_create(NULL, 0, &done[i]));
		CHECK_OK(accel_stream_wait_value(s[i], gate, 1, 0));
		CHECK_OK(accel_memcpy_async(s[i], (char *)dev + (size_t)i * COPY,
					    host, COPY, ACCEL_MEMCPY_H2D));
		CHECK_OK(accel_event_record(done[i], s[i]));
	}
	CHECK_OK(t_gate_open(gate));
	for (i = 0; i < NLEVELS; i++)
		CHECK_OK(accel_stream_synchronize(s[i], ACCEL_TIMEOUT_INFINITE));
	for (i = NLEVELS - 1; i > 0; i--) {
		CHECK_OK(accel_event_elapsed_time(&ms, done[i], done[i - 1]));
		if (ms < 0.0f) {
			printf("# priority %d completed %.3f ms after priority %d\n",
			       -(i - 1), ms, -i);
			return T_FAIL;
		}
	}
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
	const char *lib = getenv("ACCEL_CUDART");
	int (*last)(void) = NULL;
	const char *name = "";
	unsigned char *host;
	accel_stream_t s;
	void *dev, *h;
	int i;

	h = lib ? dlopen(lib, RTLD_NOW) : NULL;
	if (h)
		last = (int (*)(void))dlsym(h, "fake_cuda_last_priority");
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
