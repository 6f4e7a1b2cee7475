// SPDX-License-Identifier: MIT
/*
 * The stream-ordered memory pool (mempool.h): accel_malloc_async(),
 * accel_free_async() and the pool's trimming, and the rules of reuse:
 * which points retired, which block a stream may take.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "mempool.h"

/* What a reap learnt of the streams, so that each is asked once. */
struct pool_seen {
	uint32_t kstream;
	uint64_t completed;
};

struct pool_reap {
	struct pool_seen seen[16];
	unsigned int nseen;
};

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
			if (!accel_kevent_query(ctx, p->tomb->kevent, &eq) &&
			    eq.state == ACCEL_EVENT_STATE_COMPLETE)
				p->tomb->done = true;
		}
		return p->tomb->done;
	}
	for (i = 0; i < rp->nseen; i++)
		if (rp->seen[i].kstream == p->kstream)
			return rp->seen[i].completed >= p->seq;
	/* A stream the transport no longer knows: its tomb will say. */
	if (accel_kstream_query(ctx, p->kstream, &q))
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
					pool_point_drop(&b->pts[j]);
				else
					b->pts[k++] = b->pts[j];
			}
			b->npts = k;
			if (b->state != BLK_PENDING || b->npts || b->busy)
				continue;
			b->state = BLK_FREE;
			/* @b may merge into the block before it: go on after it. */
			pool_chunk_coalesce(c, i);
			i = pool_chunk_find(c, off);
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
		ret = pool_block_take_locked(pool, b, need, size);
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

	i = pool_chunk_find(c, ptr - c->base);
	b = c->blk[i];
	if (b->off != ptr - c->base)
		return b->state == BLK_LIVE ? -EINVAL : -ENOENT;
	if (b->state != BLK_LIVE)
		return -ENOENT;
	if (kstream) {
		if (pool_block_reserve_point(b))
			return -ENOMEM;
		pool_block_note(b, kstream, seq);
	}
	b->state = BLK_PENDING;
	ctx->pool->used -= b->size;
	if (!b->npts && !b->busy) {
		b->state = BLK_FREE;
		pool_chunk_coalesce(c, i);
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

	ret = accel_stream_get_checked(stream, dev_ptr, &s);
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
	ret = accel_kstream_query(ctx, s->kstream, &q);
	if (!ret && q.error)
		ret = accel_failed_errno(q.error);
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
	b = c->blk[pool_chunk_find(c, off)];
	if (b->state != BLK_LIVE) {
		accel_set_error("%p is device memory of the context's stream-ordered pool that is not allocated: %s",
				(void *)ptr, b->state == BLK_PENDING ?
				"it was freed (accel_free_async() or accel_free()) and the work before that free has not all retired" :
				"it was freed, or never handed out by accel_malloc_async()");
		return -EFAULT;
	}
	/* Past what was asked for (the rounding included): out of bounds. */
	if (off - b->off >= b->req || bytes > b->req - (off - b->off)) {
		accel_set_error("%p + %zu bytes runs past the end of its accel_malloc_async() block of %zu bytes at %p (offset %zu)",
				(void *)ptr, bytes, (size_t)b->req,
				(void *)(c->base + b->off),
				(size_t)(off - b->off));
		return -EINVAL;
	}
	*offset = off;
	*blk = b;
	return 0;
}

int accel_pool_use_begin_locked(struct pool_block *b)
{
	int ret = pool_block_reserve_point(b);

	if (!ret)
		b->busy++;
	return ret;
}

void accel_pool_use_end(struct accel_ctx *ctx, struct pool_block *b,
			uint32_t kstream, uint64_t seq, bool queued)
{
	pthread_mutex_lock(&ctx->lock);
	if (queued)
		pool_block_note(b, kstream, seq);
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

	ret = accel_ctx_get_checked(ctxh, reserved && used, &ctx);
	if (ret)
		return ret;
	pthread_mutex_lock(&ctx->lock);
	*reserved = ctx->pool ? ctx->pool->reserved : 0;
	*used = ctx->pool ? ctx->pool->used : 0;
	pthread_mutex_unlock(&ctx->lock);
	accel_ctx_put(ctx);
	return 0;
}
