// SPDX-License-Identifier: GPL-2.0
/*
 * accelstream: the soft copy engine. One work item per stream runs the
 * stream's queue in order; streams run concurrently on an unbound
 * workqueue (a high-priority one for urgent streams).
 */
#include <linux/highmem.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/timekeeping.h>

#include "as_drv.h"

/**
 * as_stream_kick_locked() - make sure the stream's worker will look at it
 * @ctx: the context.
 * @s: the stream.
 *
 * Queues the stream's work item unless it is queued or running already, or
 * the stream is empty or blocked on a wait.
 *
 * Context: @ctx->lock held; any context.
 */
void as_stream_kick_locked(struct as_ctx *ctx, struct as_stream *s)
{
	lockdep_assert_held(&ctx->lock);
	/* A blocked head is kicked again by whatever unblocks it. */
	if (s->work_active ||
	    !asc_engine_runnable(&s->tl, &s->q, ctx->closing, ctx->executor))
		return;
	s->work_active = true;
	queue_work(s->priority < ASC_LEAST_PRIORITY ? as_wq_hi : as_wq,
		   &s->work);
}

/**
 * as_ctx_kick_all_locked() - kick every stream that has queued work
 * @ctx: the context.
 *
 * Called after anything that may unblock a wait: a retirement, a signal.
 *
 * Context: @ctx->lock held.
 */
void as_ctx_kick_all_locked(struct as_ctx *ctx)
{
	struct as_stream *s;

	lockdep_assert_held(&ctx->lock);
	list_for_each_entry(s, &ctx->streams, node)
		as_stream_kick_locked(ctx, s);
}

/* Where region offset @off lives: a page and an offset within it. */
static struct page *as_mem_page(struct as_mem *m, u64 off, size_t *in_page)
{
	u64 pos = m->first_off + off;

	*in_page = pos & ~PAGE_MASK;
	return m->pages[pos >> PAGE_SHIFT];
}

/* Copy between two regions' pages; runs without the context lock. */
static void as_engine_copy(struct asc_entry *e)
{
	struct as_mem *dst = to_as_mem(e->dst);
	struct as_mem *src = to_as_mem(e->src);
	u64 doff = e->desc.dst_offset;
	u64 soff = e->desc.src_offset;
	u64 left = e->desc.length;

	while (left) {
		size_t din, sin, chunk;
		struct page *dp = as_mem_page(dst, doff, &din);
		struct page *sp = as_mem_page(src, soff, &sin);
		void *d, *s;

		chunk = min3((size_t)(PAGE_SIZE - din), (size_t)(PAGE_SIZE - sin),
			     (size_t)min_t(u64, left, PAGE_SIZE));
		d = kmap_local_page(dp);
		s = kmap_local_page(sp);
		memcpy(d + din, s + sin, chunk);
		kunmap_local(s);
		kunmap_local(d);

		doff += chunk;
		soff += chunk;
		left -= chunk;
		cond_resched();
	}
}

/**
 * as_retire_locked() - retire the oldest entry of a stream
 * @ctx: the context.
 * @s: the stream, its queue not empty.
 * @status: 0, or the negative errno the entry failed with.
 * @fl: where objects and batches to free after unlocking go.
 *
 * Wakes everything that may wait for this point: host waiters, poll, and
 * streams blocked on it.
 *
 * Context: @ctx->lock held.
 */
void as_retire_locked(struct as_ctx *ctx, struct as_stream *s, int status,
		      struct as_freelist *fl)
{
	struct asc_release rel = {};
	bool was_failed = s->tl.error;

	lockdep_assert_held(&ctx->lock);
	asc_retire_head(&s->tl, &s->q, status, ktime_get_ns(), &rel);
	if (!was_failed && s->tl.error)
		ctx->failed_streams++;
	ctx->queued--;
	ctx->completions++;
	as_collect_locked(ctx, &rel, fl);
	atomic64_inc(&as_retired_total);

	as_ctx_kick_all_locked(ctx);
	wake_up_all(&ctx->wq);
}

/**
 * as_engine_work() - run a stream's queue until it is empty or blocked
 * @work: the stream's work item.
 *
 * Copies run with the context lock dropped; the descriptor's references
 * keep both regions' pages alive meanwhile. Once the context is closing,
 * and once the stream has failed, what is left retires without running.
 * While a userspace executor is attached the engine runs nothing. A
 * destroyed stream that ends up drained and unreferenced is freed here.
 *
 * Context: workqueue (process context), takes the context lock.
 */
void as_engine_work(struct work_struct *work)
{
	struct as_stream *s = container_of(work, struct as_stream, work);
	struct as_ctx *ctx = s->ctx;
	struct as_freelist fl;
	bool free_self;

	as_freelist_init(&fl);
	spin_lock(&ctx->lock);
	for (;;) {
		int status, step;

		step = asc_engine_next(&s->tl, &s->q, ctx->closing,
				       ctx->executor, &status);
		if (step == ASC_STEP_IDLE || step == ASC_STEP_BLOCKED)
			break;
		if (step == ASC_STEP_COPY) {
			spin_unlock(&ctx->lock);
			as_engine_copy(asc_queue_peek(&s->q));
			spin_lock(&ctx->lock);
		}
		as_retire_locked(ctx, s, status, &fl);
		if (!as_freelist_empty(&fl)) {
			/* Unpinning and freeing may sleep: drop the lock. */
			spin_unlock(&ctx->lock);
			as_freelist_free(ctx, &fl);
			spin_lock(&ctx->lock);
		}
		cond_resched_lock(&ctx->lock);
	}

	s->work_active = false;
	free_self = as_stream_freeable_locked(ctx, s);
	if (free_self)
		list_del(&s->node);
	/* Woken under the lock: release() may free @ctx once we drop it. */
	wake_up_all(&ctx->wq);
	spin_unlock(&ctx->lock);

	if (free_self)
		kfree(s);
}
