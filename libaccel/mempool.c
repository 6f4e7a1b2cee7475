// SPDX-License-Identifier: MIT
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
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

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

/* What a reap learnt of the streams, so that each is asked once. */
struct pool_seen {
	uint32_t kstream;
	uint64_t completed;
};

struct pool_reap {
	struct pool_seen seen[16];
	unsigned int nseen;
};

/* Chunks taken out of the table, unmapped once ctx->lock is dropped. */
struct pool_gone {
	struct accel_region r[16];
	unsigned int n;
	bool more;	/* the array was full: trim again */
};

static struct accel_pool *pool_get_locked(struct accel_ctx *ctx)
{
	if (!ctx->pool)
		ctx->pool = calloc(1, sizeof(*ctx->pool));
	return ctx->pool;
}

/* The block holding byte @off of @c. */
static unsigned int chunk_find(const struct accel_pool_chunk *c, size_t off)
{
	unsigned int lo = 0, hi = c->nblk;

	while (hi - lo > 1) {
		unsigned int mid = lo + (hi - lo) / 2;

		if (c->blk[mid]->off <= off)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

static int chunk_insert(struct accel_pool_chunk *c, unsigned int i,
			struct pool_block *b)
{
	if (c->nblk == c->capblk) {
		unsigned int cap = c->capblk ? c->capblk * 2 : 8;
		struct pool_block **n = realloc(c->blk, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		c->blk = n;
		c->capblk = cap;
	}
	memmove(&c->blk[i + 1], &c->blk[i], (c->nblk - i) * sizeof(*c->blk));
	c->blk[i] = b;
	c->nblk++;
	return 0;
}

static void point_drop(struct pool_point *p)
{
	if (!p->kstream && p->tomb)
		p->tomb->refs--;
}

static void block_free(struct pool_block *b)
{
	unsigned int i;

	for (i = 0; i < b->npts; i++)
		point_drop(&b->pts[i]);
	free(b->pts);
	free(b);
}

/*
 * Room for one point more than the block has and its busy copies may add
 * (each adds at most one), so that recording one never fails.
 */
static int block_reserve_point(struct pool_block *b)
{
	unsigned int need = b->npts + b->busy + 1, cap;
	struct pool_point *n;

	if (need <= b->cappts)
		return 0;
	cap = b->cappts ? b->cappts * 2 : 2;
	while (cap < need)
		cap *= 2;
	n = realloc(b->pts, cap * sizeof(*n));
	if (!n)
		return -ENOMEM;
	b->pts = n;
	b->cappts = cap;
	return 0;
}

/* Add (@kstream, @seq); room was reserved. */
static void block_note(struct pool_block *b, uint32_t kstream, uint64_t seq)
{
	unsigned int i;

	for (i = 0; i < b->npts; i++) {
		if (b->pts[i].kstream == kstream) {
			if (b->pts[i].seq < seq)
				b->pts[i].seq = seq;
			return;
		}
	}
	b->pts[b->npts].kstream = kstream;
	b->pts[b->npts].tomb = NULL;
	b->pts[b->npts].seq = seq;
	b->npts++;
}

/* Merge the FREE block at @i with FREE neighbours. */
static void chunk_coalesce(struct accel_pool_chunk *c, unsigned int i)
{
	struct pool_block *b = c->blk[i];

	if (i + 1 < c->nblk && c->blk[i + 1]->state == BLK_FREE &&
	    !c->blk[i + 1]->busy) {
		b->size += c->blk[i + 1]->size;
		block_free(c->blk[i + 1]);
		memmove(&c->blk[i + 1], &c->blk[i + 2],
			(c->nblk - i - 2) * sizeof(*c->blk));
		c->nblk--;
	}
	if (i && c->blk[i - 1]->state == BLK_FREE && !c->blk[i - 1]->busy) {
		c->blk[i - 1]->size += b->size;
		block_free(b);
		memmove(&c->blk[i], &c->blk[i + 1],
			(c->nblk - i - 1) * sizeof(*c->blk));
		c->nblk--;
	}
}

/* The point has retired: its stream's completed passed it. */
static bool point_retired(struct accel_ctx *ctx, struct pool_reap *rp,
			  const struct pool_point *p)
{
	struct accel_stream_query q;
	unsigned int i;

	if (!p->kstream) {
		struct accel_event_query eq;

		if (!p->tomb)
			return false;
		if (!p->tomb->done) {
			memset(&eq, 0, sizeof(eq));
			eq.handle = p->tomb->kevent;
			if (!accel_ioctl(ctx, ACCEL_IOC_EVENT_QUERY, &eq) &&
			    eq.state == ACCEL_EVENT_STATE_COMPLETE)
				p->tomb->done = true;
		}
		return p->tomb->done;
	}
	for (i = 0; i < rp->nseen; i++)
		if (rp->seen[i].kstream == p->kstream)
			return rp->seen[i].completed >= p->seq;
	memset(&q, 0, sizeof(q));
	q.handle = p->kstream;
	/* A stream the transport no longer knows: its tomb will say. */
	if (accel_ioctl(ctx, ACCEL_IOC_STREAM_QUERY, &q))
		q.completed = 0;
	if (rp->nseen < sizeof(rp->seen) / sizeof(rp->seen[0])) {
		rp->seen[rp->nseen].kstream = p->kstream;
		rp->seen[rp->nseen].completed = q.completed;
		rp->nseen++;
	}
	return q.completed >= p->seq;
}

/* Drop the retired points of every block; PENDING ones left bare are FREE. */
static void pool_reap_locked(struct accel_ctx *ctx, struct accel_pool *pool)
{
	struct accel_pool_chunk *c;
	struct pool_tomb **tp, *t;
	struct pool_reap rp = { .nseen = 0 };
	unsigned int i, j, k;

	for (c = pool->chunks; c; c = c->next) {
		for (i = 0; i < c->nblk; i++) {
			struct pool_block *b = c->blk[i];
			size_t off = b->off;

			for (j = k = 0; j < b->npts; j++) {
				if (point_retired(ctx, &rp, &b->pts[j]))
					point_drop(&b->pts[j]);
				else
					b->pts[k++] = b->pts[j];
			}
			b->npts = k;
			if (b->state != BLK_PENDING || b->npts || b->busy)
				continue;
			b->state = BLK_FREE;
			/* @b may merge into the block before it: go on after it. */
			chunk_coalesce(c, i);
			i = chunk_find(c, off);
		}
	}
	/* Tombs no point names any more. */
	for (tp = &pool->tombs; (t = *tp);) {
		if (t->refs) {
			tp = &t->next;
			continue;
		}
		*tp = t->next;
		accel_kevent_destroy(ctx, t->kevent);
		free(t);
	}
}

/* May @b be handed to new work of @kstream now? */
static bool block_fits(const struct pool_block *b, size_t need,
		       uint32_t kstream)
{
	unsigned int i;

	if (b->busy || b->size < need || b->state == BLK_LIVE)
		return false;
	for (i = 0; i < b->npts; i++)
		if (b->pts[i].kstream != kstream)
			return false;
	return true;
}

/* The smallest block @kstream may take. */
static struct pool_block *pool_fit_locked(struct accel_pool *pool,
					  size_t need, uint32_t kstream,
					  int device)
{
	struct pool_block *best = NULL;
	struct accel_pool_chunk *c;
	unsigned int i;

	for (c = pool->chunks; c; c = c->next)
		for (i = 0; i < c->nblk && c->device == device; i++)
			if (block_fits(c->blk[i], need, kstream) &&
			    (!best || c->blk[i]->size < best->size))
				best = c->blk[i];
	return best;
}

/*
 * Make the first @need bytes of @b LIVE for @req bytes; the rest stays
 * what @b was, with the same points. Its own unretired points stay with
 * it (they are on the taking stream, before its new work).
 */
static int block_take_locked(struct accel_pool *pool, struct pool_block *b,
			     size_t need, size_t req)
{
	struct accel_pool_chunk *c = b->chunk;

	if (b->size > need) {
		struct pool_block *rest = calloc(1, sizeof(*rest));
		unsigned int i;

		if (!rest)
			return -ENOMEM;
		rest->chunk = c;
		rest->off = b->off + need;
		rest->size = b->size - need;
		rest->state = b->state;
		if (b->npts) {
			rest->pts = malloc(b->npts * sizeof(*rest->pts));
			if (!rest->pts) {
				free(rest);
				return -ENOMEM;
			}
			memcpy(rest->pts, b->pts, b->npts * sizeof(*rest->pts));
			rest->npts = rest->cappts = b->npts;
			for (i = 0; i < b->npts; i++)
				if (!b->pts[i].kstream && b->pts[i].tomb)
					b->pts[i].tomb->refs++;
		}
		if (chunk_insert(c, chunk_find(c, b->off) + 1, rest)) {
			block_free(rest);
			return -ENOMEM;
		}
		b->size = need;
	}
	b->state = BLK_LIVE;
	b->req = req;
	pool->used += b->size;
	return 0;
}

/*
 * Take the chunks wholly FREE out of the pool and the table while it holds
 * more than @keep bytes; backend->release under the lock, the unmap after.
 */
static void pool_trim_locked(struct accel_ctx *ctx, struct accel_pool *pool,
			     size_t keep, struct pool_gone *g)
{
	struct accel_pool_chunk **cp, *c;
	int ret;

	for (cp = &pool->chunks; (c = *cp) && pool->reserved > keep;) {
		struct accel_region *r;

		if (c->nblk != 1 || c->blk[0]->state != BLK_FREE ||
		    c->blk[0]->busy || c->blk[0]->npts) {
			cp = &c->next;
			continue;
		}
		if (g->n == sizeof(g->r) / sizeof(g->r[0])) {
			g->more = true;
			return;
		}
		r = accel_region_find_locked(ctx, c->base);
		/* No queued work names it: every point retired. */
		ret = r ? ctx->backend->release(ctx, r, true) : 0;
		if (ret && ret != -ENOENT) {
			cp = &c->next;
			continue;
		}
		if (r) {
			g->r[g->n++] = *r;
			accel_region_remove_locked(ctx, r);
		}
		*cp = c->next;
		pool->reserved -= c->size;
		block_free(c->blk[0]);
		free(c->blk);
		free(c);
	}
}

static void pool_gone_unmap(struct accel_ctx *ctx, struct pool_gone *g)
{
	unsigned int i;

	for (i = 0; i < g->n; i++)
		ctx->backend->unmap(ctx, &g->r[i]);
	g->n = 0;
}

/* Reap, then trim to @keep bytes; takes ctx->lock. */
void accel_pool_trim(struct accel_ctx *ctx, size_t keep)
{
	struct pool_gone g;

	do {
		g.n = 0;
		g.more = false;
		pthread_mutex_lock(&ctx->lock);
		if (ctx->pool) {
			pool_reap_locked(ctx, ctx->pool);
			pool_trim_locked(ctx, ctx->pool, keep, &g);
		}
		pthread_mutex_unlock(&ctx->lock);
		pool_gone_unmap(ctx, &g);
	} while (g.more);
}

/*
 * A new chunk for at least @need bytes, entered in the pool and the
 * table, and @need bytes of it taken for @req; *@out the block.
 */
static int pool_grow(struct accel_ctx *ctx, int device, size_t need,
		     size_t req, struct pool_block **out)
{
	size_t size = need < POOL_CHUNK ? POOL_CHUNK :
		      (need + POOL_CHUNK - 1) & ~(POOL_CHUNK - 1);
	struct accel_pool_chunk *c = NULL;
	struct pool_block *b = NULL;
	struct accel_pool *pool;
	struct accel_region r;
	int old, ret;

	if (size < need)
		return -ENOMEM;
	memset(&r, 0, sizeof(r));
	r.kind = LA_REGION_DEVICE;
	r.device = device;
	/*
	 * On the stream's device (cudaMallocAsync allocates from the pool
	 * of the stream's device): the context's current device is moved
	 * there for the allocation, under dev_lock, and moved back.
	 */
	pthread_mutex_lock(&ctx->dev_lock);
	old = ctx->device;
	ret = old == device ? 0 : accel_ctx_set_device_locked(ctx, device);
	if (!ret) {
		ret = ctx->backend->device_alloc(ctx, size, &r);
		if (ret == -ENOMEM) {
			/* Idle chunks are memory too: give them back, retry. */
			accel_pool_trim(ctx, 0);
			ret = ctx->backend->device_alloc(ctx, size, &r);
		}
		if (old != device && accel_ctx_set_device_locked(ctx, old) &&
		    !ret) {
			/* Not back on the caller's device: undo, say so. */
			ctx->backend->release(ctx, &r, true);
			ctx->backend->unmap(ctx, &r);
			ret = -EIO;
		}
	}
	pthread_mutex_unlock(&ctx->dev_lock);
	if (ret)
		return ret;
	c = calloc(1, sizeof(*c));
	b = calloc(1, sizeof(*b));
	ret = -ENOMEM;
	if (!c || !b)
		goto err_undo;
	c->base = r.base;
	c->size = size;
	c->device = device;
	b->chunk = c;
	b->size = size;
	b->state = BLK_FREE;
	if (chunk_insert(c, 0, b))
		goto err_undo;
	r.pool = c;

	pthread_mutex_lock(&ctx->lock);
	pool = pool_get_locked(ctx);
	if (pool)
		ret = accel_region_insert_locked(ctx, &r);
	if (!pool || ret) {
		pthread_mutex_unlock(&ctx->lock);
		goto err_undo;
	}
	c->next = pool->chunks;
	pool->chunks = c;
	pool->reserved += size;
	/* On -ENOMEM (splitting it) the chunk stays in the pool, FREE. */
	ret = block_take_locked(pool, b, need, req);
	if (!ret)
		*out = b;
	pthread_mutex_unlock(&ctx->lock);
	return ret;

err_undo:
	free(c ? c->blk : NULL);
	free(c);
	free(b);
	ctx->backend->release(ctx, &r, true);
	ctx->backend->unmap(ctx, &r);
	return ret;
}

ACCEL_EXPORT
int accel_malloc_async(accel_stream_t stream, void **dev_ptr, size_t size)
{
	ACCEL_API_ENTER();
	struct accel_stream_impl *s;
	struct pool_block *b = NULL;
	struct accel_pool *pool;
	struct accel_ctx *ctx;
	size_t need;
	int ret;

	if (!dev_ptr || !size)
		return -EINVAL;
	need = (size + POOL_ALIGN - 1) & ~(POOL_ALIGN - 1);
	if (need < size)
		return -ENOMEM;
	ret = accel_stream_get(stream, &s);
	if (ret)
		return ret;
	ctx = s->child.ctx;
	/* Stream-ordered: a failed stream allocates nothing. */
	ret = accel_stream_error(s);
	if (ret)
		goto out;

	pthread_mutex_lock(&ctx->lock);
	pool = pool_get_locked(ctx);
	if (!pool) {
		pthread_mutex_unlock(&ctx->lock);
		ret = -ENOMEM;
		goto out;
	}
	b = pool_fit_locked(pool, need, s->kstream, s->device);
	if (!b) {
		/* Learn what retired (cuda: take the device's completions). */
		pthread_mutex_unlock(&ctx->lock);
		ctx->backend->poll(ctx);
		pthread_mutex_lock(&ctx->lock);
		pool_reap_locked(ctx, pool);
		b = pool_fit_locked(pool, need, s->kstream, s->device);
	}
	if (b)
		ret = block_take_locked(pool, b, need, size);
	pthread_mutex_unlock(&ctx->lock);
	if (!b)
		ret = pool_grow(ctx, s->device, need, size, &b);
	if (!ret) {
		*dev_ptr = (void *)(b->chunk->base + b->off);
	} else if (ret == -ENOMEM) {
		pthread_mutex_lock(&ctx->lock);
		accel_set_error("accel_malloc_async(): no %zu bytes of device memory for the context's pool (it holds %zu bytes, %zu of them allocated; the context's device memory limit is %llu bytes)",
				size, ctx->pool ? ctx->pool->reserved : 0,
				ctx->pool ? ctx->pool->used : 0,
				(unsigned long long)ctx->info.max_device_bytes);
		pthread_mutex_unlock(&ctx->lock);
	}
out:
	accel_stream_put(s);
	return ret;
}

/*
 * Free the block at @ptr of chunk region @r: stream-ordered on @kstream
 * at @seq, or (@kstream 0, accel_free()) once every copy naming it
 * retired. -EINVAL inside a block, -ENOENT for a block not LIVE.
 */
int accel_pool_free_locked(struct accel_ctx *ctx,
			   const struct accel_region *r, uintptr_t ptr,
			   uint32_t kstream, uint64_t seq)
{
	struct accel_pool_chunk *c = r->pool;
	struct pool_block *b;
	unsigned int i;

	i = chunk_find(c, ptr - c->base);
	b = c->blk[i];
	if (b->off != ptr - c->base)
		return b->state == BLK_LIVE ? -EINVAL : -ENOENT;
	if (b->state != BLK_LIVE)
		return -ENOENT;
	if (kstream) {
		if (block_reserve_point(b))
			return -ENOMEM;
		block_note(b, kstream, seq);
	}
	b->state = BLK_PENDING;
	ctx->pool->used -= b->size;
	if (!b->npts && !b->busy) {
		b->state = BLK_FREE;
		chunk_coalesce(c, i);
	}
	return 0;
}

ACCEL_EXPORT
int accel_free_async(accel_stream_t stream, void *dev_ptr)
{
	ACCEL_API_ENTER();
	struct accel_stream_query q;
	struct accel_stream_impl *s;
	struct accel_region *r;
	struct accel_ctx *ctx;
	int ret;

	if (!dev_ptr)
		return -EINVAL;
	ret = accel_stream_get(stream, &s);
	if (ret)
		return ret;
	ctx = s->child.ctx;
	pthread_mutex_lock(&ctx->lock);
	r = accel_region_find_locked(ctx, (uintptr_t)dev_ptr);
	if (!r) {
		ret = -ENOENT;
		goto out_unlock;
	}
	if (!r->pool) {
		/* accel_malloc(), pinned or registered host memory. */
		ret = -EINVAL;
		goto out_unlock;
	}
	/* The free's point: everything queued on the stream so far. */
	memset(&q, 0, sizeof(q));
	q.handle = s->kstream;
	ret = accel_ioctl(ctx, ACCEL_IOC_STREAM_QUERY, &q);
	if (!ret && q.error)
		ret = q.error;
	if (!ret)
		ret = accel_pool_free_locked(ctx, r, (uintptr_t)dev_ptr,
					     s->kstream, q.submitted);
out_unlock:
	pthread_mutex_unlock(&ctx->lock);
	accel_stream_put(s);
	return ret;
}

int accel_pool_resolve_locked(struct accel_ctx *ctx,
			      const struct accel_region *r, uintptr_t ptr,
			      size_t bytes, uint64_t *offset,
			      struct pool_block **blk)
{
	struct accel_pool_chunk *c = r->pool;
	struct pool_block *b;
	size_t off = ptr - c->base;

	(void)ctx;
	b = c->blk[chunk_find(c, off)];
	if (b->state != BLK_LIVE) {
		accel_set_error("%p is device memory of the context's stream-ordered pool that is not allocated: %s",
				(void *)ptr, b->state == BLK_PENDING ?
				"it was freed (accel_free_async() or accel_free()) and the work before that free has not all retired" :
				"it was freed, or never handed out by accel_malloc_async()");
		return -EFAULT;
	}
	/* Past what was asked for (the rounding included): out of bounds. */
	if (off - b->off >= b->req || bytes > b->req - (off - b->off))
		return -EINVAL;
	*offset = off;
	*blk = b;
	return 0;
}

int accel_pool_use_begin_locked(struct pool_block *b)
{
	int ret = block_reserve_point(b);

	if (!ret)
		b->busy++;
	return ret;
}

void accel_pool_use_end(struct accel_ctx *ctx, struct pool_block *b,
			uint32_t kstream, uint64_t seq, bool queued)
{
	pthread_mutex_lock(&ctx->lock);
	if (queued)
		block_note(b, kstream, seq);
	b->busy--;
	pthread_mutex_unlock(&ctx->lock);
}

/* Is any point of the pool on @kstream? */
static bool pool_names_locked(struct accel_pool *pool, uint32_t kstream)
{
	struct accel_pool_chunk *c;
	unsigned int i, j;

	for (c = pool->chunks; c; c = c->next)
		for (i = 0; i < c->nblk; i++)
			for (j = 0; j < c->blk[i]->npts; j++)
				if (c->blk[i]->pts[j].kstream == kstream)
					return true;
	return false;
}

void accel_pool_stream_dead(struct accel_ctx *ctx, uint32_t kstream)
{
	struct accel_event_record rec;
	struct pool_tomb *t = NULL;
	struct accel_pool_chunk *c;
	bool names;
	unsigned int i, j;

	pthread_mutex_lock(&ctx->lock);
	names = false;
	if (ctx->pool) {
		pool_reap_locked(ctx, ctx->pool);
		names = pool_names_locked(ctx->pool, kstream);
	}
	pthread_mutex_unlock(&ctx->lock);
	if (!names)
		return;
	memset(&rec, 0, sizeof(rec));
	rec.stream = kstream;
	t = calloc(1, sizeof(*t));
	if (t && !accel_kevent_create(ctx, 0, &rec.event)) {
		if (accel_ioctl(ctx, ACCEL_IOC_EVENT_RECORD, &rec)) {
			accel_kevent_destroy(ctx, rec.event);
			free(t);
			t = NULL;
		}
	} else {
		free(t);
		t = NULL;
	}
	pthread_mutex_lock(&ctx->lock);
	if (t) {
		t->kevent = rec.event;
		t->next = ctx->pool->tombs;
		ctx->pool->tombs = t;
	}
	for (c = ctx->pool->chunks; c; c = c->next) {
		for (i = 0; i < c->nblk; i++) {
			struct pool_block *b = c->blk[i];

			for (j = 0; j < b->npts; j++) {
				struct pool_point *p = &b->pts[j];

				if (p->kstream != kstream)
					continue;
				p->kstream = 0;
				/* Queued after the record (a racing copy): never. */
				p->tomb = t && p->seq <= rec.seq ? t : NULL;
				if (p->tomb)
					t->refs++;
			}
		}
	}
	pthread_mutex_unlock(&ctx->lock);
}

void accel_pool_sync(struct accel_ctx *ctx)
{
	size_t keep;
	bool over;

	pthread_mutex_lock(&ctx->lock);
	over = ctx->pool && ctx->pool->reserved > ctx->pool->threshold;
	keep = over ? (size_t)ctx->pool->threshold : 0;
	pthread_mutex_unlock(&ctx->lock);
	if (over)
		accel_pool_trim(ctx, keep);
}

void accel_pool_teardown(struct accel_ctx *ctx)
{
	struct accel_pool *pool = ctx->pool;
	struct accel_pool_chunk *c;
	struct pool_tomb *t;
	unsigned int i;

	if (!pool)
		return;
	while ((c = pool->chunks)) {
		pool->chunks = c->next;
		for (i = 0; i < c->nblk; i++)
			block_free(c->blk[i]);
		free(c->blk);
		free(c);
	}
	/* Their events went with the transport. */
	while ((t = pool->tombs)) {
		pool->tombs = t->next;
		free(t);
	}
	free(pool);
	ctx->pool = NULL;
}

ACCEL_EXPORT
int accel_mem_pool_set_release_threshold(accel_context *ctxh, uint64_t bytes)
{
	ACCEL_API_ENTER();
	struct accel_ctx *ctx;
	int ret;

	ret = accel_ctx_get(ctxh, &ctx);
	if (ret)
		return ret;
	pthread_mutex_lock(&ctx->lock);
	if (pool_get_locked(ctx))
		ctx->pool->threshold = bytes;
	else
		ret = -ENOMEM;
	pthread_mutex_unlock(&ctx->lock);
	accel_ctx_put(ctx);
	return ret;
}

ACCEL_EXPORT
int accel_mem_pool_trim_to(accel_context *ctxh, size_t min_bytes_to_keep)
{
	ACCEL_API_ENTER();
	struct accel_ctx *ctx;
	int ret;

	ret = accel_ctx_get(ctxh, &ctx);
	if (ret)
		return ret;
	ctx->backend->poll(ctx);
	accel_pool_trim(ctx, min_bytes_to_keep);
	accel_ctx_put(ctx);
	return 0;
}

ACCEL_EXPORT
int accel_mem_pool_get_usage(accel_context *ctxh, size_t *reserved,
			     size_t *used)
{
	ACCEL_API_ENTER();
	struct accel_ctx *ctx;
	int ret;

	if (!reserved || !used)
		return -EINVAL;
	ret = accel_ctx_get(ctxh, &ctx);
	if (ret)
		return ret;
	pthread_mutex_lock(&ctx->lock);
	*reserved = ctx->pool ? ctx->pool->reserved : 0;
	*used = ctx->pool ? ctx->pool->used : 0;
	pthread_mutex_unlock(&ctx->lock);
	accel_ctx_put(ctx);
	return 0;
}
