/* SPDX-License-Identifier: MIT */
/*
 * The staging pool: how pageable (never registered) memory reaches the
 * device, and comes back, with bounded pinned memory per context.
 *
 * A context owns at most ACCEL_STAGING_CHUNKS chunks of
 * ACCEL_STAGING_CHUNK_KB each (default two per copying thread, 4096 KiB
 * each) and one more, the ring of small copies, pinned the first time
 * they are needed and reused until the context is destroyed: over the
 * module they are ACCEL_MEM_HOST allocations (kernel-pinned, charged to
 * RLIMIT_MEMLOCK), with the cuda backend also cudaHostRegister'ed once
 * each. An H2D copy of at most ACCEL_STAGING_SMALL_KB takes a slot of the
 * ring, filled and submitted by the caller; a D2H copy on a stream with
 * nothing queued is finished in the call, through a slot of the ring or
 * the free chunks. Others go through the chunks
 * in pieces of at most one chunk: H2D pieces are filled several at once by
 * the fill threads (ACCEL_STAGING_THREADS, default half the CPUs, 2 to 8,
 * the caller included) and submitted in order; each chunk has a worker
 * thread that copies D2H pieces out into their pageable destination as
 * each lands.
 *
 * The promise stays: a pageable source has been read when the call
 * returns, but for bytes an unfinished pageable write of the same stream
 * will write, which are read once written (stream order). A piece whose
 * chunk does not come free in time (its stream is behind, or gated) is
 * kept in ordinary, unpinned memory until the chunk is free, so that a
 * queue of any length pins no more than the pool.
 */
#ifndef LIBACCEL_STAGING_H
#define LIBACCEL_STAGING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct accel_ctx;

/* One side of a staged copy: a pageable pointer, or (handle, offset). */
struct accel_stage_side {
	bool pageable;
	void *ptr;		/* pageable: the user's pointer */
	uint32_t handle;	/* else: the transport's region */
	uint64_t offset;
};

/*
 * Queue a copy of @bytes on @kstream where @dst, @src or both are
 * pageable. A pageable source must have been checked readable, a pageable
 * destination writable (accel_range_check). @seq: the sequence number of
 * the last descriptor queued (left alone when both sides are pageable).
 * 0 or -errno; on -ENOMEM from
 * a pinning limit, accel_last_error_string() names the limit.
 */
int accel_staging_copy(struct accel_ctx *ctx, uint32_t kstream,
		       const struct accel_stage_side *dst,
		       const struct accel_stage_side *src, size_t bytes,
		       uint64_t *seq);
/*
 * accel_range_check() of a pageable side about to be staged (the source
 * read at enqueue, the destination written later), shared with the
 * pool's fill threads when it is large: -EFAULT, or 0.
 */
int accel_staging_range_check(struct accel_ctx *ctx, const void *ptr,
			      size_t bytes, bool write);
/*
 * @kstream is about to be destroyed: what the pool knows by its timeline
 * is handed to an event recorded at its tail (queued work still runs).
 */
void accel_staging_stream_dead(struct accel_ctx *ctx, uint32_t kstream);
/* Stop the workers; queued pieces are dropped (context destroy). */
void accel_staging_stop(struct accel_ctx *ctx);
/* Release the chunks, once the device can no longer use them. */
void accel_staging_teardown(struct accel_ctx *ctx);

/*
 * Say in accel_last_error_string() which pinning limit refused @bytes
 * more (RLIMIT_MEMLOCK or the driver's per-context limit), its value and
 * how to raise it. @what names what was being pinned. A message the
 * transport set already (out of file descriptors, in process) is kept.
 */
void accel_pin_error(struct accel_ctx *ctx, size_t bytes, const char *what);

#endif /* LIBACCEL_STAGING_H */
