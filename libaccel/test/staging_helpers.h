/* SPDX-License-Identifier: MIT */
/*
 * What the staging pool's test programs share (staging.c, staging_ring.c,
 * staging_d2h.c, staging_pinned.c): the pool's settings for a test, and
 * its ACCEL_TRACE line, caught when a context goes.
 */
#ifndef LIBACCEL_TEST_STAGING_HELPERS_H
#define LIBACCEL_TEST_STAGING_HELPERS_H

#include "helpers.h"

#define KB	1024UL
#define MB	(1024UL * 1024UL)

static inline int staging_env(const char *chunk_kb, const char *chunks)
{
	if (setenv("ACCEL_STAGING_CHUNK_KB", chunk_kb, 1) ||
	    setenv("ACCEL_STAGING_CHUNKS", chunks, 1))
		return -1;
	return 0;
}

static inline void staging_env_reset(void)
{
	unsetenv("ACCEL_STAGING_CHUNK_KB");
	unsetenv("ACCEL_STAGING_CHUNKS");
}

/* The pool's ACCEL_TRACE line, caught when its context is destroyed. */
struct trace_catch {
	unsigned long long ring, ring_waits, ring_d2h, d2h_direct, filled,
			   par, handoffs, spills, chunk_waits;
	int seen;
};

static inline void catch_trace(void *data, int prio, const char *msg)
{
	struct trace_catch *t = data;

	(void)prio;
	if (sscanf(msg, "trace: staging: %llu copies through the ring (%llu waits for a slot), %llu D2H finished in the call through the ring, %llu through the chunks, %llu pieces filled by the caller in a chunk, %llu by the fill threads, %llu handed to a chunk's worker, %llu spilled to unpinned memory, %llu waits for a chunk",
		   &t->ring, &t->ring_waits, &t->ring_d2h, &t->d2h_direct,
		   &t->filled, &t->par, &t->handoffs, &t->spills,
		   &t->chunk_waits) == 9)
		t->seen++;
}

#endif /* LIBACCEL_TEST_STAGING_HELPERS_H */
