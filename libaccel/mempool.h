/* SPDX-License-Identifier: MIT */
/*
 * The stream-ordered memory pool: accel_malloc_async(), accel_free_async()
 * and the pool's trimming (cudaMallocAsync, cudaFreeAsync, the device's
 * default cudaMemPool_t).
 *
 * One pool per context, made on first use. It reserves device memory in
 * chunks of at least POOL_CHUNK bytes through the backend's device_alloc
 * (the transport's ACCEL_MEM_DEVICE over the cpu backend, cudaMalloc
 * registered as ACCEL_MEM_EXTERNAL over the cuda backend), each chunk one
 * entry of the context's region table (accel_region.pool), and carves it
 * into blocks, multiples of POOL_ALIGN bytes, that cover the chunk:
 *
 *   FREE     anyone may take it (adjacent FREE blocks are merged);
 *   LIVE     handed out by accel_malloc_async(): copies may name it;
 *   PENDING  freed, with points that must retire before it is FREE.
 *
 * A point is a place in one stream's order, (stream, seq): every copy that
 * named the block adds (its stream, its sequence number), the free adds
 * (the freeing stream, the last sequence number submitted on it). A
 * PENDING block may be taken at once by a stream whose own order puts its
 * new work after every point left, that is when all the points it still
 * has are on that stream: the freeing stream, when no other stream's copy
 * of the block is still queued. For any other stream it becomes FREE once
 * every point retired. No event dependency is followed (CUDA's
 * cudaMemPoolReuseFollowEventDependencies): a stream that waited on an
 * event recorded after the free still waits for the free to retire.
 *
 * A stream destroyed with points of its own still queued leaves them to a
 * "tomb": a plain event recorded on it just before its handle goes, whose
 * completion retires them (the stream's queue drains after its handle
 * died). If the event cannot be made, those points never retire and
 * their blocks stay PENDING until the context goes (never reused early).
 *
 * A copy resolves a block with accel_pool_resolve_locked() and marks it
 * busy (accel_pool_use_begin_locked()) under the same hold of ctx->lock,
 * then, once submitted, records its point (accel_pool_use_end()): a block
 * freed meanwhile is not reused before that point is known.
 *
 * Memory goes back to the device (chunks wholly FREE are released) at
 * every synchronization (stream, event, context) while the pool holds
 * more than its release threshold, at accel_mem_pool_trim_to(), and when
 * a device allocation would fail for want of memory.
 *
 * Locking: all of it under ctx->lock. Region and event ioctls are made
 * under it (as accel_host_register() does); backend->poll, the event
 * record of a tomb and unmapping released chunks happen outside it.
 *
 * Internal to its files:
 *
 *   mempool.c        the public calls, the free, a copy's resolve and
 *                    point, and the reuse rules: reaping retired points,
 *                    which block a stream may take, when memory goes back
 *   mempool_block.c  chunks, blocks and their points: growing the pool by
 *                    a chunk, splitting, merging and trimming, teardown
 */
#ifndef LIBACCEL_MEMPOOL_H
#define LIBACCEL_MEMPOOL_H

#include "accel_int.h"

#define POOL_CHUNK	(2UL << 20)
#define POOL_ALIGN	256UL

enum pool_state {
	BLK_FREE,
	BLK_LIVE,
	BLK_PENDING,
};

/* The end of a destroyed stream's queue: a plain event recorded there. */
struct pool_tomb {
	struct pool_tomb *next;
	uint32_t kevent;
	unsigned int refs;	/* points that name it */
	bool done;
};

/*
 * A point that must retire: (@kstream, @seq), or with @kstream 0 the tomb
 * @tomb, or with neither a point that never retires.
 */
struct pool_point {
	uint32_t kstream;
	struct pool_tomb *tomb;
	uint64_t seq;
};

struct pool_block {
	struct accel_pool_chunk *chunk;
	size_t off;		/* from the chunk's base */
	size_t size;		/* bytes of the chunk it covers */
	size_t req;		/* LIVE: bytes asked for (copies are checked) */
	enum pool_state state;
	unsigned int busy;	/* copies between resolve and submit */
	struct pool_point *pts;
	unsigned int npts, cappts;
};

struct accel_pool_chunk {
	struct accel_pool_chunk *next;
	uintptr_t base;
	size_t size;
	int device;			/* whose memory it is */
	struct pool_block **blk;	/* by offset, covering the chunk */
	unsigned int nblk, capblk;
};

struct accel_pool {
	struct accel_pool_chunk *chunks;
	struct pool_tomb *tombs;
	size_t reserved;	/* bytes of all chunks */
	size_t used;		/* bytes of LIVE blocks */
	uint64_t threshold;	/* bytes kept at a synchronization */
};

/* Chunks taken out of the table, unmapped once ctx->lock is dropped. */
struct pool_gone {
	struct accel_region r[16];
	unsigned int n;
	bool more;	/* the array was full: trim again */
};

/* mempool_block.c */
struct accel_pool *pool_get_locked(struct accel_ctx *ctx);
unsigned int pool_chunk_find(const struct accel_pool_chunk *c, size_t off);
void pool_point_drop(struct pool_point *p);
int pool_block_reserve_point(struct pool_block *b);
void pool_block_note(struct pool_block *b, uint32_t kstream, uint64_t seq);
void pool_chunk_coalesce(struct accel_pool_chunk *c, unsigned int i);
int pool_block_take_locked(struct accel_pool *pool, struct pool_block *b,
			   size_t need, size_t req);
void pool_trim_locked(struct accel_ctx *ctx, struct accel_pool *pool,
		      size_t keep, struct pool_gone *g);
void pool_gone_unmap(struct accel_ctx *ctx, struct pool_gone *g);
int pool_grow(struct accel_ctx *ctx, int device, size_t need,
	      size_t req, struct pool_block **out);

#endif /* LIBACCEL_MEMPOOL_H */
