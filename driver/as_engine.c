// SPDX-License-Identifier: GPL-2.0
/*
 * accelstream: the soft copy engine. One work item per stream runs the
 * stream's queue in order; streams run concurrently on an unbound
 * workqueue (a high-priority one for urgent streams).
 *
 * A submission that finds its stream idle runs its small copies in the
 * submitting thread (as_engine_submit_locked()) instead of waking a
 * worker: a wake-up and a hand-off cost far more than copying a few KiB,
 * the way io_uring issues a request inline before punting it to io-wq.
 * Whoever runs a stream's queue, the submitter or the worker, owns it
 * through @work_active, so the queue still runs in order, by one thread
 * at a time. No lock is added: both run under the context lock as before.
 *
 * Priorities: before each step a stream yields while a more urgent stream
 * of its context has runnable work (asc_engine_outranked()); the urgent
 * stream's retirements kick it again (as_retired_wake_locked()). Streams
 * of one priority run concurrently, and the kernel's high-priority
 * workqueue serves every stream above the least priority.
 */
#include <linux/highmem.h>
#include <linux/moduleparam.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/timekeeping.h>
#include <linux/vmalloc.h>

#include "as_drv.h"

static unsigned int inline_copy_bytes = 16384;
module_param(inline_copy_bytes, uint, 0644);
MODULE_PARM_DESC(inline_copy_bytes,
		 "Copy bytes a submission to an idle stream runs in the submitting thread (0: always the worker)");

static void as_engine_queue(struct as_stream *s)
{
	struct as_device *d = &as_devices[s->dev];

	/* The engine of the stream's device runs it, peer copies included. */
	queue_work(s->priority < ASC_LEAST_PRIORITY ? d->wq_hi : d->wq,
		   &s->work);
}

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
	as_engine_queue(s);
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

/*
 * Must @s leave the engine to a more urgent stream of its context on the
 * same device (each device has its own engine)? Only a context that has
 * streams of several priorities pays for the walk.
 */
static bool as_stream_outranked_locked(struct as_ctx *ctx, struct as_stream *s)
{
	struct as_stream *o;

	lockdep_assert_held(&ctx->lock);
	if (!ctx->priorities || s->priority == ASC_GREATEST_PRIORITY)
		return false;
	list_for_each_entry(o, &ctx->streams, node)
		if (o->dev == s->dev &&
		    asc_engine_outranked(s->priority, o->priority, &o->tl,
					 &o->q, ctx->closing, ctx->executor))
			return true;
	return false;
}

/* Where region offset @off lives: a page and an offset within it. */
static struct page *as_mem_page(struct as_mem *m, u64 off, size_t *in_page)
{
	u64 pos = m->first_off + off;

	*in_page = pos & ~PAGE_MASK;
	return m->pages[pos >> PAGE_SHIFT];
}

/*
 * Copy @left bytes between two regions' pages: without the context lock
 * and yielding as it goes when @may_sleep, else (a small copy) under it.
 */
static void as_engine_copy_range(struct as_mem *dst, u64 doff,
				 struct as_mem *src, u64 soff, u64 left,
				 bool may_sleep)
{
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
		if (may_sleep)
			cond_resched();
	}
}

/* MEMSET: the element pattern, page by page (the core writes it). */
static void as_engine_memset(struct asc_entry *e, bool may_sleep)
{
	struct as_mem *dst = to_as_mem(e->dst);
	u32 width = asc_memset_width(&e->desc);
	u64 off = e->desc.dst_offset;
	u64 done = 0;

	while (done < e->desc.length) {
		size_t in, chunk;
		struct page *p = as_mem_page(dst, off + done, &in);
		void *d;

		chunk = min_t(u64, PAGE_SIZE - in, e->desc.length - done);
		d = kmap_local_page(p);
		asc_memset_fill(d + in, chunk, (u32)e->desc.value, width, done);
		kunmap_local(d);
		done += chunk;
		if (may_sleep)
			cond_resched();
	}
}

/* Run a COPY, MEMSET or COPY_2D the core said to perform. */
static void as_engine_copy(struct asc_entry *e, bool may_sleep)
{
	const struct accel_desc *d = &e->desc;
	struct as_mem *dst = to_as_mem(e->dst);
	u64 row;

	switch (d->op) {
	case ACCEL_OP_MEMSET:
		as_engine_memset(e, may_sleep);
		break;
	case ACCEL_OP_COPY_2D:
		/* Validated: no row offset overflows or leaves its region. */
		for (row = 0; row < d->height; row++)
			as_engine_copy_range(dst, d->dst_offset + row * d->dst_pitch,
					     to_as_mem(e->src),
					     d->src_offset + row * d->src_pitch,
					     d->width, may_sleep);
		break;
	default:
		as_engine_copy_range(dst, d->dst_offset, to_as_mem(e->src),
				     d->src_offset, d->length, may_sleep);
		break;
	}
}

/*
 * Retire the oldest entry of a stream without waking anyone: the caller
 * calls as_retired_wake_locked() before it drops the lock or returns.
 * @rel is empty and left empty (as_collect_locked() empties it): a caller
 * retiring a run of entries passes the same one, cleared once (each
 * cleared stack copy costs a string store per entry).
 */
static void as_retire_quiet_locked(struct as_ctx *ctx, struct as_stream *s,
				   int status, struct asc_release *rel,
				   struct as_freelist *fl)
{
	bool was_failed = s->tl.error;
	struct asc_entry *e;

	lockdep_assert_held(&ctx->lock);
	e = asc_queue_peek(&s->q);
	/*
	 * Only an entry naming an event can take a timestamp: no clock read
	 * per copy (with the HPET clocksource, each is a device access).
	 */
	asc_retire_head(&s->tl, &s->q, status, e->event ? ktime_get_ns() : 0,
			rel);
	if (!was_failed && s->tl.error)
		ctx->failed_streams++;
	if (!list_empty(&s->exports))
		as_export_retired_locked(ctx, s);
	ctx->queued--;
	ctx->completions++;
	atomic64_inc(&as_devices[s->dev].retired);
	/* A retired batch is kept for the stream's next submission. */
	if (rel->batch)
		rel->batch = as_stream_keep_batch_locked(ctx, s, rel->batch);
	/* Frees a small batch at once, defers a vmalloc'ed one. */
	as_collect_locked(ctx, rel, fl);
	atomic64_inc(&as_retired_total);
}

/**
 * as_ctx_wake_locked() - wake the context's waiters, if there are any
 * @ctx: the context.
 *
 * Every sleeper on @ctx->wq queues itself before it takes @ctx->lock to
 * check its condition (as_ctx_wait(), wait_event(), poll), so a waker
 * holding the lock either sees it queued or changed the state before the
 * sleeper checks it: an empty queue needs no wake-up, and most
 * submissions and retirements have no one waiting.
 *
 * Context: @ctx->lock held.
 */
void as_ctx_wake_locked(struct as_ctx *ctx)
{
	lockdep_assert_held(&ctx->lock);
	/* The full barrier of wq_has_sleeper() is not needed, but cheap. */
	if (wq_has_sleeper(&ctx->wq))
		wake_up_all(&ctx->wq);
}

/* Wake whatever may wait for what was retired: host waiters, poll, streams. */
static void as_retired_wake_locked(struct as_ctx *ctx)
{
	lockdep_assert_held(&ctx->lock);
	as_ctx_kick_all_locked(ctx);
	as_ctx_wake_locked(ctx);
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

	as_retire_quiet_locked(ctx, s, status, &rel, fl);
	as_retired_wake_locked(ctx);
}

/*
 * What an entry costs against an inline budget: its copy length, and at
 * least the bookkeeping of any entry, about that of copying 64 bytes, so
 * that a stream of cheap entries also ends an inline run.
 */
#define AS_INLINE_MIN_COST	64

/*
 * Copies of at most AS_COPY_LOCKED_MAX bytes (a few cache lines) run under
 * the context lock: cheaper than dropping and retaking it. Waiters of
 * entries retired back to back are woken once, at the latest before the
 * run has copied AS_WAKE_BYTES more since the last wake-up.
 */
#define AS_COPY_LOCKED_MAX	256
#define AS_WAKE_BYTES		(64 * 1024)

/*
 * Run a stream's queue until it is empty or blocked, or until the next
 * entry would cost more than what is left of @budget (bytes). The caller
 * owns the stream (@s->work_active). Returns true when it stopped on the
 * budget with work left.
 */
static bool as_engine_run_locked(struct as_ctx *ctx, struct as_stream *s,
				 u64 budget)
{
	bool more = false, woken = true;
	struct as_freelist fl __uninitialized;	/* as_freelist_init() */
	struct asc_release rel = {};
	u64 pending = 0;

	lockdep_assert_held(&ctx->lock);
	as_freelist_init(&fl);
	for (;;) {
		struct asc_entry *e = asc_queue_peek(&s->q);
		int status, step;
		u64 bytes, cost;

		if (!e)
			break;
		if (ctx->executor && !ctx->closing)
			break;
		/* Kicked again when the more urgent stream retires. */
		if (as_stream_outranked_locked(ctx, s))
			break;
		bytes = asc_desc_bytes(&e->desc);
		cost = max_t(u64, bytes, AS_INLINE_MIN_COST);
		if (cost > budget) {
			more = true;
			break;
		}
		budget -= cost;
		/* What to do with the head is the core's call. */
		step = asc_engine_next(&s->tl, &s->q, ctx->closing,
				       ctx->executor, &status);
		if (step == ASC_STEP_IDLE || step == ASC_STEP_BLOCKED)
			break;
		if (step == ASC_STEP_COPY && bytes <= AS_COPY_LOCKED_MAX) {
			as_engine_copy(e, false);
			pending += bytes;
		} else if (step == ASC_STEP_COPY) {
			/* Waiters of what retired run meanwhile. */
			if (!woken && pending + bytes > AS_WAKE_BYTES) {
				as_retired_wake_locked(ctx);
				woken = true;
				pending = 0;
			}
			spin_unlock(&ctx->lock);
			as_engine_copy(e, true);
			spin_lock(&ctx->lock);
			pending += bytes;
		}

		/*
		 * One wake-up for a run of entries retired back to back: given
		 * before a copy that would take the run past AS_WAKE_BYTES,
		 * before the lock is dropped to free or reschedule, and at
		 * the end.
		 */
		as_retire_quiet_locked(ctx, s, status, &rel, &fl);
		woken = false;
		if (!as_freelist_empty(&fl)) {
			/* Unpinning and freeing may sleep: drop the lock. */
			as_retired_wake_locked(ctx);
			woken = true;
			pending = 0;
			spin_unlock(&ctx->lock);
			as_freelist_free(ctx, &fl);
			spin_lock(&ctx->lock);
		}
		if (need_resched() || spin_needbreak(&ctx->lock)) {
			if (!woken)
				as_retired_wake_locked(ctx);
			woken = true;
			pending = 0;
			cond_resched_lock(&ctx->lock);
		}
	}
	if (!woken)
		as_retired_wake_locked(ctx);
	return more;
}

/*
 * The owner of a stream lets go of it. Returns true when the stream is
 * destroyed, drained and unreferenced: the caller frees it after unlocking.
 */
static bool as_engine_release_locked(struct as_ctx *ctx, struct as_stream *s)
{
	bool free_self;

	lockdep_assert_held(&ctx->lock);
	s->work_active = false;
	free_self = as_stream_freeable_locked(ctx, s);
	if (free_self)
		list_del(&s->node);
	return free_self;
}

/**
 * as_engine_submit_locked() - start the engine on what was just submitted
 * @ctx: the context.
 * @s: the stream, with new entries queued.
 * @fl: where the stream goes if it was destroyed meanwhile and is drained.
 *
 * On an idle stream (no worker queued or running), ready copies of up to
 * inline_copy_bytes in all run here, in the submitting thread, before the
 * submission returns; what is left (a larger copy) goes to the worker. A
 * busy stream's worker finds the new entries itself. With an executor
 * attached, nothing runs here.
 *
 * Context: process context, @ctx->lock held; drops and retakes it.
 */
void as_engine_submit_locked(struct as_ctx *ctx, struct as_stream *s,
			     struct as_freelist *fl)
{
	u64 budget = READ_ONCE(inline_copy_bytes);
	struct asc_entry *head;

	lockdep_assert_held(&ctx->lock);
	head = asc_queue_peek(&s->q);
	if (!budget || s->work_active || ctx->executor || !head ||
	    asc_entry_ready(head) <= 0) {
		as_stream_kick_locked(ctx, s);
		return;
	}
	s->work_active = true;
	if (as_engine_run_locked(ctx, s, budget))
		as_engine_queue(s);
	else if (as_engine_release_locked(ctx, s))
		list_add(&s->free_node, &fl->streams);	/* destroyed meanwhile */
	/* As in the worker: a release() waiter may be watching work_active. */
	as_ctx_wake_locked(ctx);
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
	bool free_self;

	spin_lock(&ctx->lock);
	as_engine_run_locked(ctx, s, U64_MAX);
	free_self = as_engine_release_locked(ctx, s);
	/* Woken under the lock: release() may free @ctx once we drop it. */
	as_ctx_wake_locked(ctx);
	spin_unlock(&ctx->lock);

	if (free_self)
		as_stream_free(s);
}
