// SPDX-License-Identifier: MIT
/*
 * The stream-ordered memory pool (mempool.h): its chunks, their blocks
 * and the blocks' points; growing by a chunk, splitting, merging,
 * trimming and teardown.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "mempool.h"

struct accel_pool *pool_get_locked(struct accel_ctx *ctx)
{
	if (!ctx->pool)
		ctx->pool = calloc(1, sizeof(*ctx->pool));
	return ctx->pool;
}

/* The block holding byte @off of @c. */
unsigned int pool_chunk_find(const struct accel_pool_chunk *c, size_t off)
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

void pool_point_drop(struct pool_point *p)
{
	if (!p->kstream && p->tomb)
		p->tomb->refs--;
}

static void block_free(struct pool_block *b)
{
	unsigned int i;

	for (i = 0; i < b->npts; i++)
		pool_point_drop(&b->pts[i]);
	free(b->pts);
	free(b);
}

/*
 * Room for one point more than the block has and its busy copies may add
 * (each adds at most one), so that recording one never fails.
 */
int pool_block_reserve_point(struct pool_block *b)
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
void pool_block_note(struct pool_block *b, uint32_t kstream, uint64_t seq)
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
void pool_chunk_coalesce(struct accel_pool_chunk *c, unsigned int i)
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

/*
 * Make the first @need bytes of @b LIVE for @req bytes; the rest stays
 * what @b was, with the same points. Its own unretired points stay with
 * it (they are on the taking stream, before its new work).
 */
int pool_block_take_locked(struct accel_pool *pool, struct pool_block *b,
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
		if (chunk_insert(c, pool_chunk_find(c, b->off) + 1, rest)) {
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
void pool_trim_locked(struct accel_ctx *ctx, struct accel_pool *pool,
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

void pool_gone_unmap(struct accel_ctx *ctx, struct pool_gone *g)
{
	unsigned int i;

	for (i = 0; i < g->n; i++)
		ctx->backend->unmap(ctx, &g->r[i]);
	g->n = 0;
}

/*
 * A new chunk for at least @need bytes, entered in the pool and the
 * table, and @need bytes of it taken for @req; *@out the block.
 */
int pool_grow(struct accel_ctx *ctx, int device, size_t need,
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
	ret = pool_block_take_locked(pool, b, need, req);
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
