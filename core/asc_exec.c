// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The pure core of accelstream: the userspace executor protocol (what a
 * fetch hands out, what a completion retires) and the soft engine's next
 * step. Nothing here locks, allocates or sleeps.
 */
#include "asc_core.h"

/**
 * asc_entry_fetchable() - may a userspace executor take this entry now?
 * @e: the oldest entry of its stream not yet handed out.
 *
 * A HOST_WAIT goes out once satisfied (or failed). A STREAM_WAIT goes out
 * once the point it waits for has retired, failed, or been handed out
 * itself, so that the executor can order the two on its device.
 *
 * Return: 1 when it may be handed out, 0 when not yet.
 */
int asc_entry_fetchable(const struct asc_entry *e)
{
	switch (e->desc.op) {
	case ACCEL_OP_STREAM_WAIT:
		if (asc_point_state(&e->wait))
			return 1;
		return e->wait.tl->fetched >= e->wait.seq ? 1 : 0;
	case ACCEL_OP_HOST_WAIT:
		return asc_entry_ready(e) ? 1 : 0;
	default:
		return 1;
	}
}

/**
 * exec_item_init() - what the core decides about a fetched item
 * @e: the entry being handed out to an executor.
 * @it: the item; written in full here, except what only the shell knows:
 *	@it->stream, a STREAM_WAIT's @it->wait_stream, and the region kinds
 *	and addresses of a COPY, MEMSET or COPY_2D.
 *
 * A wait whose point already failed, or a HOST_WAIT on a failed user
 * event, goes out with status -EIO; a STREAM_WAIT whose point retired
 * goes out with nothing to wait for.
 *
 * Return: the timeline of a STREAM_WAIT's pending point (the shell puts its
 * stream handle in @it->wait_stream), else NULL.
 */
static struct asc_timeline *exec_item_init(const struct asc_entry *e,
					   struct accel_exec_item *it)
{
	int st;

	*it = (struct accel_exec_item){ .seq = e->seq, .desc = e->desc };
	switch (e->desc.op) {
	case ACCEL_OP_STREAM_WAIT:
		st = asc_point_state(&e->wait);
		if (st < 0) {
			it->status = -EIO;
		} else if (!st) {
			it->wait_seq = e->wait.seq;
			return e->wait.tl;
		}
		break;
	case ACCEL_OP_HOST_WAIT:
		if (asc_entry_ready(e) < 0)
			it->status = -EIO;
		break;
	default:
		break;
	}
	return NULL;
}

/**
 * asc_exec_check_done() - is an executor's completion acceptable?
 * @tl: the stream's timeline, NULL when no stream (live or draining) has
 *	the handle.
 * @d: the completion.
 *
 * Return: 0; -ENOENT for an unknown stream; -EINVAL for a positive status
 * or a sequence number that was not handed out or has retired already.
 */
int asc_exec_check_done(const struct asc_timeline *tl,
			const struct accel_exec_done *d)
{
	if (!tl)
		return -ENOENT;
	if (d->status > 0 || d->seq <= tl->completed || d->seq > tl->fetched)
		return -EINVAL;
	return 0;
}

/**
 * exec_done_status() - the status the oldest entry retires with
 * @tl: the stream's timeline.
 * @e: the oldest entry, at or before @d->seq.
 * @d: the completion being applied.
 *
 * Entries before @d->seq completed fine; the one at it carries @d->status.
 * A HOST_SIGNAL that completed takes effect here, in order.
 *
 * Return: 0 or the negative errno to retire @e with.
 */
static int exec_done_status(const struct asc_timeline *tl, struct asc_entry *e,
			    const struct accel_exec_done *d)
{
	int status = e->seq == d->seq ? d->status : 0;

	if (!status && !tl->error)
		asc_entry_execute(e);
	return status;
}

/**
 * exec_cancel_rest() - must what was not handed out go now?
 * @tl: the stream's timeline.
 *
 * Return: true when the stream failed and nothing handed out is pending:
 * the descriptors still queued retire without running.
 */
static bool exec_cancel_rest(const struct asc_timeline *tl)
{
	return tl->error && tl->fetched == tl->completed;
}

/* The region address an executor copies at, for kinds that have one. */
static u64 exec_addr(const struct asc_region *r, u64 off)
{
	if (r->kind == ACCEL_REGION_HOST || r->kind == ACCEL_REGION_EXTERNAL)
		return r->addr + off;
	return 0;
}

/**
 * asc_exec_item_fill() - the item a fetch hands out for an entry
 * @tl: the timeline of the entry's stream.
 * @e: the entry.
 * @it: written in full: the stream, the descriptor and its sequence
 *	number, a wait's stream and point, the region kinds and
 *	addresses of a COPY, MEMSET or COPY_2D, and -EIO for a wait on what already failed.
 */
void asc_exec_item_fill(const struct asc_timeline *tl,
			const struct asc_entry *e, struct accel_exec_item *it)
{
	struct asc_timeline *wait = exec_item_init(e, it);

	it->stream = tl->id;
	if (wait)
		it->wait_stream = wait->id;
	if (e->dst) {
		it->dst_kind = e->dst->kind;
		it->dst_addr = exec_addr(e->dst, e->desc.dst_offset);
	}
	if (e->src) {
		it->src_kind = e->src->kind;
		it->src_addr = exec_addr(e->src, e->desc.src_offset);
	}
}

/**
 * asc_fetch_stream() - hand out what one stream has ready, in order
 * @tl: the stream's timeline.
 * @q: its queue; @q->fetch_last is the cursor.
 * @items: the fetch's items.
 * @max: room in @items.
 * @count: in/out: items filled so far.
 *
 * A failed stream hands out nothing more. The shell calls this for every
 * stream, repeating while a pass made progress: a wait on another
 * stream's record becomes fetchable once that record went out.
 *
 * Return: true when at least one item was handed out.
 */
bool asc_fetch_stream(struct asc_timeline *tl, struct asc_queue *q,
		      struct accel_exec_item *items, u32 max, u32 *count)
{
	struct asc_entry *e;
	bool progress = false;

	if (tl->error)
		return false;
	e = q->fetch_last ? q->fetch_last->next : q->head;
	for (; e; e = e->next) {
		if (e->seq <= tl->fetched)
			continue;
		if (*count == max || !asc_entry_fetchable(e))
			break;
		asc_exec_item_fill(tl, e, &items[(*count)++]);
		tl->fetched = e->seq;
		q->fetch_last = e;
		progress = true;
	}
	return progress;
}

/**
 * asc_exec_attach_stream() - an executor starts at a stream's oldest entry
 * @tl: the stream's timeline.
 * @q: its queue.
 */
void asc_exec_attach_stream(struct asc_timeline *tl, struct asc_queue *q)
{
	tl->fetched = tl->completed;
	q->fetch_last = NULL;
}

/**
 * asc_exec_detach_next() - must the head fail because the executor left?
 * @tl: the stream's timeline.
 * @q: its queue.
 *
 * What was handed out and not completed retires with -EIO on detach; the
 * soft engine runs the rest.
 *
 * Return: true while the head was handed out and not completed.
 */
bool asc_exec_detach_next(const struct asc_timeline *tl,
			  const struct asc_queue *q)
{
	return q->count && tl->fetched > tl->completed;
}

/**
 * asc_exec_done_next() - the next retirement one completion calls for
 * @tl: the stream's timeline.
 * @q: its queue.
 * @d: a completion accepted by asc_exec_check_done().
 * @status: out: what to retire the head with.
 *
 * Entries up to @d->seq retire (the one at it with @d->status); once the
 * stream failed and nothing handed out is pending, what was not handed
 * out retires with -ECANCELED. The shell retires the head with *@status
 * for as long as this returns true.
 *
 * Return: true when the head must retire now.
 */
bool asc_exec_done_next(const struct asc_timeline *tl, struct asc_queue *q,
			const struct accel_exec_done *d, int *status)
{
	if (tl->completed < d->seq) {
		*status = exec_done_status(tl, q->head, d);
		return true;
	}
	if (q->count && exec_cancel_rest(tl)) {
		*status = -ECANCELED;
		return true;
	}
	return false;
}

static int engine_decide(const struct asc_timeline *tl,
			 const struct asc_queue *q, bool closing,
			 bool executor, int *status)
{
	const struct asc_entry *e = q->head;
	int ready;

	*status = 0;
	if (!e)
		return ASC_STEP_IDLE;
	/* Closing, or behind a failure: what is left retires unrun. */
	if (closing) {
		*status = -ECANCELED;
		return ASC_STEP_RETIRE;
	}
	if (executor)
		return ASC_STEP_IDLE;
	if (tl->error) {
		*status = -ECANCELED;
		return ASC_STEP_RETIRE;
	}
	ready = asc_entry_ready(e);
	if (!ready)
		return ASC_STEP_BLOCKED;
	if (ready < 0) {
		*status = ready;
		return ASC_STEP_RETIRE;
	}
	if (asc_entry_external(e)) {
		/* Only an executor can reach its memory. */
		*status = -ENXIO;
		return ASC_STEP_RETIRE;
	}
	if (asc_desc_bytes(&e->desc))
		return ASC_STEP_COPY;
	return ASC_STEP_RETIRE;
}

/**
 * asc_engine_next() - what a soft engine does next with a stream
 * @tl: the stream's timeline.
 * @q: its queue.
 * @closing: the context is being torn down.
 * @executor: an executor is attached (the engine runs nothing).
 * @status: out: with %ASC_STEP_RETIRE, what the head retires with.
 *
 * For a head that runs here (HOST_SIGNAL), its bookkeeping is done before
 * %ASC_STEP_RETIRE is returned with status 0.
 *
 * Return: an &enum asc_step.
 */
int asc_engine_next(const struct asc_timeline *tl, struct asc_queue *q,
		    bool closing, bool executor, int *status)
{
	int step = engine_decide(tl, q, closing, executor, status);

	if (step == ASC_STEP_RETIRE && !*status)
		asc_entry_execute(q->head);
	return step;
}

/**
 * asc_engine_runnable() - has a soft engine something to do now?
 * @tl: the stream's timeline.
 * @q: its queue.
 * @closing: the context is being torn down.
 * @executor: an executor is attached.
 *
 * Return: true when asc_engine_next() would copy or retire.
 */
bool asc_engine_runnable(const struct asc_timeline *tl,
			 const struct asc_queue *q, bool closing, bool executor)
{
	int status;

	return engine_decide(tl, q, closing, executor, &status) >=
	       ASC_STEP_COPY;
}

/**
 * asc_engine_outranked() - must a stream leave the soft engine to another?
 * @prio: the stream's effective priority.
 * @other_prio: the effective priority of another stream of the context.
 * @otl: that stream's timeline.
 * @oq: that stream's queue.
 * @closing: the context is being torn down.
 * @executor: an executor is attached.
 *
 * The soft engine's priority rule: a stream runs its next descriptor only
 * while no stream of the same context with a more urgent (numerically
 * lower) priority has work the engine could run now; streams of one
 * priority run concurrently. The shell asks before each step, and a
 * stream that yields is kicked again by the retirements of the more
 * urgent one. A closing context drains without it.
 *
 * Return: true when the other stream is more urgent and runnable: the
 * stream must wait.
 */
bool asc_engine_outranked(s32 prio, s32 other_prio,
			  const struct asc_timeline *otl,
			  const struct asc_queue *oq, bool closing,
			  bool executor)
{
	if (closing || other_prio >= prio)
		return false;
	return asc_engine_runnable(otl, oq, closing, executor);
}
