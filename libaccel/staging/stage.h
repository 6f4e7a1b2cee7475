/* SPDX-License-Identifier: MIT */
/*
 * The staging pool (../staging.h), internal to its files: a few pinned
 * chunks per context, reused, through which every pageable copy goes in
 * pieces of at most one chunk.
 *
 *   pool.c   the pool and its chunks, picking a chunk for a piece, the
 *            chunks' workers, the recorded points, stop and teardown
 *   copy.c   one copy through the pool: which path it takes, the room
 *            check, the parallel H2D fill, the D2H finished in the call
 *            through the chunks, and otherwise piece by piece, each
 *            piece handed a chunk and submitted
 *   ring.c   the ring of slots: small H2D copies, no worker involved,
 *            and small D2H copies on an idle stream, finished in the call
 *   fill.c   the fill threads: a large fill, copy-out or range check in
 *            parallel slices, and whole pieces of a parallel H2D fill
 *   out.c    outs and patches (stream order between a pageable write and
 *            a later pageable read), and copies with both sides pageable
 *
 * An H2D copy of at most ring.max bytes takes a slot of the ring (ring.c)
 * and is one COPY; so is a D2H copy of at most ring.max bytes on a stream
 * with nothing queued, which the caller then waits for and copies out. A
 * larger H2D, whose source no unfinished out overlaps, is filled in
 * parallel: each free chunk gets a piece that a fill thread copies, and
 * the caller submits the pieces in order as each is full
 * (h2d_parallel_locked(), copy.c). A larger D2H on a stream with nothing
 * queued is finished in the call through the free chunks
 * (d2h_direct_locked()): a COPY per piece; as each lands, in order, its
 * copy-out is posted to the fill threads (stage_fill_post()) and the
 * caller goes on to the next, and a chunk whose copy-out is done takes a
 * later piece. What none of these takes goes piece by piece, as below.
 *
 * Each chunk has a user event, its counter, that the streams' HOST_WAITs
 * name, and a plain event recorded after the last copy that named it (its
 * point). One piece of H2D (pageable source) is, on its stream,
 *
 *   [HOST_WAIT counter >= v]  COPY chunk -> dst  EVENT_RECORD point
 *
 * where the HOST_WAIT is left out when the chunk was free at enqueue and
 * the caller filled it itself. Otherwise the source is kept in unpinned
 * memory and the chunk's worker, once the previous point has passed,
 * fills the chunk and raises the counter to v. One piece of D2H (pageable
 * destination) is
 *
 *   [HOST_WAIT counter >= v1]  COPY src -> chunk  EVENT_RECORD point
 *
 * and the worker, once the point has passed, copies the chunk out and
 * raises the counter to v2; after the call's last piece, one
 *
 *   HOST_WAIT counter >= v2
 *
 * per chunk the call used (its last v2) makes the stream (and whoever
 * synchronizes on it) go on only after all the bytes are in the
 * destination, while the call's pieces went on the wire back to back.
 *
 * Counter values are handed out in the order the pieces are queued on the
 * transport (the pool lock is held across the submit), and each worker
 * runs its chunk's jobs in that order, so a job only ever waits for work
 * queued before it: nothing in the pool waits for the caller.
 *
 * A piece takes a free chunk and the caller fills it at once. With every
 * chunk busy, the caller waits (pool lock dropped) for the oldest one's
 * copy to retire, as long as the stream moves: only a chunk that did not
 * come free within STAGING_WAIT_MS (the stream is gated, or behind other
 * work) makes this call's remaining pieces, and the stream's next calls
 * until that chunk is free, spill into unpinned memory.
 * Fills and copy-outs of more than FILL_SLICE_MIN * 2 bytes are split into
 * slices that the fill threads (ACCEL_STAGING_THREADS - 1 of them) copy
 * in parallel with the thread that asked, which takes slices too.
 *
 * Stream order across pageable copies: a D2H piece into pageable memory
 * (or a pageable-to-pageable copy) is an "out" until its bytes are in the
 * destination. A pageable source that overlaps an out of the same stream
 * is read at enqueue but for the overlapping bytes, which are read again
 * once that out is done (by the chunk's worker before it fills the chunk,
 * or by the host function of a pageable-to-pageable copy), never by the
 * caller: nothing waits for the stream, gated or not (libaccel(7)).
 *
 * Lock order: pool->lock, then pool->fill_lock, then the transport's and
 * the cuda backend's own locks (a submit, an event ioctl, pinning a chunk,
 * all under pool->lock). ctx->lock is never taken with pool->lock held.
 * Workers hold no lock while they wait or copy.
 */
#ifndef LIBACCEL_STAGE_H
#define LIBACCEL_STAGE_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "accel_int.h"
#include "staging.h"

#define STAGING_CHUNK_KB	4096
#define STAGING_MAX_CHUNKS	64
#define STAGING_THREADS		8	/* the most by default */
#define STAGING_MAX_THREADS	16
#define STAGING_SMALL_KB	1024
#define STAGING_WAIT_MS		10
#define FILL_SLICE_MIN		(128 << 10)
#define CHECK_SLICE_MIN		(4 << 20)
#define PAR_PIECE_MIN		(1 << 20)
#define FILL_SPIN_NS		50000	/* a fill thread looks for more work */
#define FILL_WARM_NS		100000	/* ... and for a copy-out on its way */
#define STAGE_DESCS		4	/* most descriptors one piece takes */

/* Bytes a pageable source shares with an unfinished out: read them late. */
struct stage_patch {
	size_t off, len;
};

/* A pending write into pageable memory (an "out"). */
struct stage_out {
	struct stage_out *next;
	uint64_t id;
	uintptr_t start, end;
	uint32_t kstream;
};

/* One parallel copy, cut into slices the fill threads take. */
struct fill_task {
	struct fill_task *next;
	char *dst;
	const char *src;
	size_t len, slice;
	unsigned int nslices, taken, done;
	bool checked, fault;
	bool probe, write;	/* accel_range_check() the source, no copy */
};

struct stage_job {
	struct stage_job *next;
	uint32_t prev_point;	/* the chunk's last use must pass it, or 0 */
	void *spill;		/* fill the chunk with these bytes, or NULL */
	size_t len;
	uint64_t ready;		/* raise the counter to it once filled, or 0 */
	uint32_t point;		/* D2H: the copy into the chunk */
	void *dst;		/* D2H: the pageable destination, or NULL */
	uint64_t drained;	/* D2H: raise the counter to it once copied out */
	uint32_t kstream;	/* for the ACCEL_CHECK report */
	struct stage_out *out;	/* D2H: this job's out, done once drained */
	const char *src;	/* H2D: the pageable source, for the patches */
	uint64_t dep;		/* H2D: outs up to this id must be done */
	struct stage_patch *patch;
	unsigned int npatch;
};

/* A slot of the ring (ring.c): read by the COPY at @seq of @kstream. */
struct stage_slot {
	size_t off, len;
	uint64_t seq;
	uint32_t kstream;	/* 0 once its stream was destroyed: @point */
	uint32_t point;		/* recorded at that stream's tail, or 0 */
	bool own_point;		/* the newest slot of @point: gives it back */
	bool reading;		/* D2H: being copied out, not yet free */
};

/* The ring of slots for small copies (ring.c), one chunk of the pool. */
struct stage_ring {
	struct accel_region r;	/* pinned, HOST_ALLOC; base 0: not yet */
	size_t max;		/* the largest copy it takes */
	struct stage_slot *slot;	/* oldest at @first, @n of @cap */
	unsigned int cap, first, n;
	size_t head;		/* where the next slot goes */
	bool failed;		/* could not be pinned: the chunks serve */
	bool behind;		/* its oldest copy did not retire in time */
};

/* What ACCEL_TRACE=1 reports of the pool when the context goes. */
struct stage_trace {
	uint64_t ring;		/* copies through the ring */
	uint64_t ring_waits;	/* the ring was full: waits for a retire */
	uint64_t ring_d2h;	/* D2H copies finished in the call (ring) */
	uint64_t d2h_direct;	/* D2H copies finished in the call (chunks) */
	uint64_t filled;	/* pieces the calling thread filled in a chunk */
	uint64_t handoffs;	/* pieces handed to a chunk's worker */
	uint64_t chunk_waits;	/* every chunk busy: waits for a retire */
	uint64_t spills;	/* pieces kept in unpinned memory */
	uint64_t par_fills;	/* pieces the fill threads filled */
	/*
	 * D2H finished in the call, timed (ns): through the chunks, the
	 * calls' time, and of it the calling thread's waits for a piece to
	 * land and for the last copy-outs; through the ring, its waits and
	 * copy-outs.
	 */
	uint64_t d2h_pieces, d2h_ns, d2h_wait_ns, d2h_out_ns;
	uint64_t ring_d2h_wait_ns, ring_d2h_out_ns;
};

struct stage_chunk {
	struct accel_staging *pool;
	struct accel_region r;	/* pinned, HOST_ALLOC, not in the table */
	uint32_t counter;	/* user event */
	uint64_t assigned;	/* last counter value handed out */
	uint32_t point;		/* after the last copy naming the chunk, or 0 */
	uint32_t kstream;	/* the stream of the last piece handed it */
	struct stage_job *head, *tail;
	bool running;		/* the worker is in a job */
	bool filling;		/* a parallel fill's piece, not yet submitted */
	pthread_t thread;
};

struct accel_staging {
	struct accel_ctx *ctx;
	size_t chunk_size;
	unsigned int max_chunks;
	uint32_t doorbell;	/* user event, raised once: stop */
	/*
	 * Bytes pinned for the chunks and the ring: atomic, as
	 * accel_pin_error() reads it with or without the lock.
	 */
	size_t pinned;

	/* Protects everything below. */
	pthread_mutex_t lock;
	pthread_cond_t cond;	/* a job was queued, or stop */
	bool stopping;
	bool joined;		/* stop ran: the workers are gone */
	bool full;		/* pinning another chunk failed: no more */
	uint32_t behind_stream;	/* its wait for behind_point timed out */
	uint32_t behind_point;
	unsigned int nchunks, next;
	uint32_t *points;	/* recorded and passed: free for reuse */
	unsigned int npoints, cap_points;
	struct stage_out *outs;	/* unfinished writes into pageable memory */
	uint64_t out_ids;
	pthread_cond_t out_cond;	/* an out is done, or stop */
	struct stage_chunk chunks[STAGING_MAX_CHUNKS];
	struct stage_ring ring;
	bool trace;		/* ACCEL_TRACE: time the D2H in the call too */
	struct stage_trace tr;

	/* Protects the fill threads' queue, below. */
	pthread_mutex_t fill_lock;
	pthread_cond_t fill_cond;	/* a task was queued, or stop */
	pthread_cond_t fill_done;	/* a task's last slice was copied */
	struct fill_task *tasks;
	bool fill_stop;
	unsigned int nfill;
	unsigned int fill_queued;	/* tasks queued so far (atomic) */
	unsigned int fill_sleeping;	/* threads in fill_cond's wait */
	uint64_t fill_warm;	/* mono ns: look for tasks until (atomic) */
	pthread_t fill[STAGING_MAX_THREADS];
};

static inline uint64_t stage_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* pool.c */
unsigned long stage_env_ulong(const char *name, unsigned long def,
			      unsigned long lo, unsigned long hi);
int stage_point_get_locked(struct accel_staging *p, uint32_t *ev);
void stage_point_put_locked(struct accel_staging *p, uint32_t ev);
bool stage_point_passed(struct accel_ctx *ctx, uint32_t ev);
void stage_job_free(struct stage_job *job);
/* The context's pool, made on first use: 0 or -errno (-EACCES in a child). */
int stage_pool_get(struct accel_ctx *ctx, struct accel_staging **out);
/* Pin one more chunk and start its worker: 0 or -errno. */
int stage_chunk_add_locked(struct accel_staging *p);
/*
 * A chunk the caller may fill at once (*@out NULL: every chunk busy), or
 * the chunk for @kstream's next piece (*@now: usable at once); -errno when
 * not even one chunk could be pinned.
 */
int stage_chunk_now_locked(struct accel_staging *p, struct stage_chunk **out);
int stage_chunk_pick_locked(struct accel_staging *p, uint32_t kstream,
			    struct stage_chunk **out, bool *now);

/*
 * ring.c: copy @src (pageable, @len bytes) to @dst through the ring: 0
 * (*@seq set), -errno, or 1: not taken (too large, an unfinished write
 * overlaps the source, the ring cannot be pinned or is behind), the
 * chunks' path is to serve it.
 */
int stage_ring_copy_locked(struct accel_staging *p, uint32_t kstream,
			   const struct accel_stage_side *dst,
			   const void *src, size_t len, uint64_t *seq);
/*
 * ring.c: D2H of @len bytes from (@src) into pageable @dst on an idle
 * stream, finished before it returns: 0 (*@seq set), -errno, or 1: not
 * taken (too large, the stream has work queued, no ring), the chunks'
 * path is to serve it. Drops and retakes the pool lock.
 */
int stage_ring_d2h_locked(struct accel_staging *p, uint32_t kstream,
			  void *dst, const struct accel_stage_side *src,
			  size_t len, uint64_t *seq);
void stage_ring_stream_dead_locked(struct accel_staging *p, uint32_t kstream);
/*
 * Until the descriptor at @seq of @kstream retired, as a user's
 * synchronize (polling the device first where the backend does), the
 * pool lock not held: 0, -EIO (it failed, or never ran: the stream
 * failed before it), -ENOENT (the stream was destroyed meanwhile) or
 * -ECANCELED (the pool stops). In slices of STAGING_WAIT_MS, so that a
 * stop is seen.
 */
int stage_seq_wait_unlocked(struct accel_staging *p, uint32_t kstream,
			    uint64_t seq);
/* The same, one look only: -ETIME while it has not retired. */
int stage_seq_poll_unlocked(struct accel_staging *p, uint32_t kstream,
			    uint64_t seq);
/* ring.c: nothing is queued on @kstream, and it has not failed. */
bool stage_stream_idle_locked(struct accel_staging *p, uint32_t kstream);

/* fill.c */
unsigned int stage_default_threads(void);
void stage_fill_start(struct accel_staging *p);
void stage_fill_stop(struct accel_staging *p);
void stage_fill_destroy(struct accel_staging *p);
bool stage_par_copy(struct accel_staging *p, void *dst, const void *src,
		    size_t len, bool checked);
int stage_par_check(struct accel_staging *p, const void *ptr, size_t len,
		    bool write);
/* Queue @t (dst, src, len set) whole for a fill thread, behind the others. */
void stage_fill_queue(struct accel_staging *p, struct fill_task *t);
/*
 * Queue @t (dst, src, len set) for the fill threads in slices of
 * FILL_SLICE_MIN, behind the tasks queued before it, and return at once.
 */
void stage_fill_post(struct accel_staging *p, struct fill_task *t);
/* Whether every slice of @t (queued or posted) is copied. */
bool stage_fill_done(struct accel_staging *p, struct fill_task *t);
/* Copy one slice of the oldest task queued, if any: true when it did. */
bool stage_fill_help(struct accel_staging *p);
/* Until @t is copied; this thread copies the slices no fill thread took. */
void stage_fill_wait(struct accel_staging *p, struct fill_task *t);
/* A parallel copy-out comes soon: the fill threads stay awake for it. */
void stage_fill_warm(struct accel_staging *p);

/* copy.c: a COPY of @len bytes from (@src, @soff) to (@dst, @doff). */
void stage_desc_copy(struct accel_desc *d, uint32_t dst, uint64_t doff,
		     uint32_t src, uint64_t soff, size_t len);

/* out.c */
struct stage_out *stage_out_add_locked(struct accel_staging *p,
				       uint32_t kstream, void *dst,
				       size_t len);
void stage_out_done_locked(struct accel_staging *p, struct stage_out *o);
void stage_out_done(struct accel_staging *p, struct stage_out *o);
int stage_outs_overlap_locked(struct accel_staging *p, uint32_t kstream,
			      const void *src, size_t len,
			      struct stage_patch **patch, unsigned int *n,
			      uint64_t *dep);
void stage_patch_apply(char *to, const char *src,
		       const struct stage_patch *patch, unsigned int n);
bool stage_job_wait_outs(struct accel_staging *p, struct stage_job *job);
int stage_h2h_copy(struct accel_staging *p, uint32_t kstream, void *dst,
		   const void *src, size_t bytes);

#endif /* LIBACCEL_STAGE_H */
