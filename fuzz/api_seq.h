/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * api_seq: one interpreter of a byte string into a sequence of libaccel
 * calls, shared by the libFuzzer target (api_fuzz.c) and the replay and
 * seeded-generator driver (api_replay.c), so that an input found by one
 * replays unchanged in the other, over either transport.
 */
#ifndef ACCEL_FUZZ_API_SEQ_H
#define ACCEL_FUZZ_API_SEQ_H

#include <stddef.h>
#include <stdint.h>

struct api_opts {
	/*
	 * Staging pool chunk sizes (bytes) that copy and buffer sizes are
	 * aimed around (chunk - 1, chunk, chunk + 1, 2 * chunk + page + 1).
	 */
	size_t chunk[2];
	/*
	 * Bytes one context may keep pinned for its own staging once idle
	 * (the staging pool). Above it, an idle context's pinned total is a
	 * leak. 0: libaccel keeps nothing pinned when idle.
	 */
	size_t pool_bytes;
	/* Largest buffer the interpreter allocates (bytes). */
	size_t max_buf;
	/* Print every call and its result to stderr. */
	int trace;
	/* Never fork (the fork step is skipped). */
	int no_fork;
	/*
	 * Known bugs not to provoke, to look past them while they are open
	 * (ACCEL_FUZZ_SKIP=unreadable-src,child-release,child-destroy,
	 * huge-wait,staged-order). make check sets none.
	 */
	int skip_unreadable_src, skip_child_release, skip_child_destroy;
	int skip_huge_wait, skip_staged_order;
};

/* Defaults, then the ACCEL_FUZZ_* environment variables (api_seq.c). */
void api_opts_init(struct api_opts *o);

/*
 * Run the calls @data describes, then tear everything down. Returns 0;
 * a crash or an oracle violation prints "api_seq: VIOLATION: ..." on
 * stderr and aborts, so that libFuzzer keeps the input and the replay
 * driver reports it.
 */
int api_seq_run(const uint8_t *data, size_t size, const struct api_opts *o);

#endif
