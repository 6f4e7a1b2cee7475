// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The pure scheduling core of accelstream. Built into accelstream.ko and,
 * unchanged, into libaccel's in-process transport and the unit tests.
 *
 * Nothing here locks, allocates or sleeps: every function runs under the
 * shell's context lock and reports what the shell must do next. Events
 * and host waits are in asc_event.c, the executor protocol in asc_exec.c.
 */
#include "asc_core.h"

/**
 * asc_ranges_overlap() - do two byte ranges share a byte?
 * @a: start of the first range.
 * @alen: its length in bytes, not zero.
 * @b: start of the second range.
 * @blen: its length in bytes, not zero.
 *
 * Return: true when [@a, @a + @alen) and [@b, @b + @blen) intersect.
 */
bool asc_ranges_overlap(u64 a, u64 alen, u64 b, u64 blen)
{
	return a < b + blen && b < a + alen;
}

static int check_bounds(const struct asc_region *r, u64 off, u64 len)
{
	u64 end;

	if (check_add_overflow(off, len, &end))
		return -EINVAL;
	if (end > r->size)
		return -EINVAL;
	return 0;
}

/*
 * The rows of a 2D area: @height rows of @width bytes, @pitch apart (at
 * least @width, asc_check_desc() saw to it), from @off. The last row ends
 * furthest; an empty area (no rows or no width) only needs @off in bounds.
 */
static int check_bounds_2d(const struct asc_region *r, u64 off, u64 pitch,
			   u64 width, u64 height)
{
	u64 span;

	if (!width || !height)
		return check_bounds(r, off, 0);
	if (check_mul_overflow(height - 1, pitch, &span) ||
	    check_add_overflow(span, width, &span))
		return -EINVAL;
	return check_bounds(r, off, span);
}

/**
 * asc_desc_writes() - does a descriptor name a destination region?
 * @d: the descriptor.
 *
 * Return: true for COPY, MEMSET and COPY_2D.
 */
bool asc_desc_writes(const struct accel_desc *d)
{
	return d->op == ACCEL_OP_COPY || d->op == ACCEL_OP_MEMSET ||
	       d->op == ACCEL_OP_COPY_2D;
}

/**
 * asc_desc_reads() - does a descriptor name a source region?
 * @d: the descriptor.
 *
 * Return: true for COPY and COPY_2D.
 */
bool asc_desc_reads(const struct accel_desc *d)
{
	return d->op == ACCEL_OP_COPY || d->op == ACCEL_OP_COPY_2D;
}

/**
 * asc_validate_desc() - validate a descriptor against the objects it names
 * @d: a descriptor that passed asc_check_desc().
 * @dst: COPY, MEMSET, COPY_2D: the destination region, else NULL.
 * @src: COPY, COPY_2D: the source region, else NULL.
 * @ev: RECORD, WAIT, HOST ops: the event, else NULL.
 *
 * Return: 0; -EINVAL for a copy or fill out of bounds (for COPY_2D, any
 * row), a MEMSET whose first element is not aligned to its size, or an
 * event of the wrong kind; -EPERM for a write into a read-only
 * region; -ENOENT for an unknown or released region.
 */
int asc_validate_desc(const struct accel_desc *d, const struct asc_region *dst,
		      const struct asc_region *src, const struct asc_event *ev)
{
	int ret;

	switch (d->op) {
	case ACCEL_OP_COPY:
		if (!dst || !src || dst->released || src->released)
			return -ENOENT;
		if (dst->flags & ACCEL_MEM_READONLY)
			return -EPERM;
		ret = check_bounds(dst, d->dst_offset, d->length);
		if (!ret)
			ret = check_bounds(src, d->src_offset, d->length);
		return ret;
	case ACCEL_OP_MEMSET:
		if (!dst || dst->released)
			return -ENOENT;
		if (dst->flags & ACCEL_MEM_READONLY)
			return -EPERM;
		/*
		 * The first element's address is aligned to the element size
		 * (a registered range's address counts: it has any alignment;
		 * the other kinds start on a page).
		 */
		if ((dst->addr + d->dst_offset) & (asc_memset_width(d) - 1))
			return -EINVAL;
		return check_bounds(dst, d->dst_offset, d->length);
	case ACCEL_OP_COPY_2D:
		if (!dst || !src || dst->released || src->released)
			return -ENOENT;
		if (dst->flags & ACCEL_MEM_READONLY)
			return -EPERM;
		ret = check_bounds_2d(dst, d->dst_offset, d->dst_pitch,
				      d->width, d->height);
		if (!ret)
			ret = check_bounds_2d(src, d->src_offset, d->src_pitch,
					      d->width, d->height);
		return ret;
	case ACCEL_OP_EVENT_RECORD:
	case ACCEL_OP_STREAM_WAIT:
		if (!ev || ev->dead)
			return -ENOENT;
		/* An imported event holds its exported point for good. */
		if (d->op == ACCEL_OP_EVENT_RECORD &&
		    (ev->flags & ACCEL_EVENT_IMPORTED))
			return -EINVAL;
		return (ev->flags & ACCEL_EVENT_USER) ? -EINVAL : 0;
	case ACCEL_OP_HOST_WAIT:
	case ACCEL_OP_HOST_SIGNAL:
		if (!ev || ev->dead)
			return -ENOENT;
		return (ev->flags & ACCEL_EVENT_USER) ? 0 : -EINVAL;
	default:
		return 0;
	}
}

/**
 * asc_point_state() - has a captured point retired?
 * @p: the point.
 *
 * Return: 1 when retired (or empty), 0 when pending, -EIO when its timeline
 * failed at or before it.
 */
int asc_point_state(const struct asc_point *p)
{
	const struct asc_timeline *tl = p->tl;

	if (!tl)
		return 1;
	if (tl->error && p->seq >= tl->error_seq)
		return -EIO;
	return tl->completed >= p->seq ? 1 : 0;
}

/**
 * asc_point_get() - take a reference on a point's timeline
 * @p: the point; an empty point takes nothing.
 */
void asc_point_get(struct asc_point *p)
{
	if (p->tl)
		p->tl->refs++;
}

static void release_tl(struct asc_timeline *tl, struct asc_release *rel)
{
	if (--tl->refs == 0 && rel->ntl < 2)
		rel->tl[rel->ntl++] = tl;
}

/**
 * asc_point_put() - drop a point's reference and empty it
 * @p: the point.
 * @rel: where a timeline left without references is reported.
 */
void asc_point_put(struct asc_point *p, struct asc_release *rel)
{
	if (p->tl)
		release_tl(p->tl, rel);
	p->tl = NULL;
	p->seq = 0;
}

/**
 * asc_timeline_check_sync() - is a synchronize target reached?
 * @tl: the timeline.
 * @seq: the target sequence number, not above @tl->submitted.
 *
 * Return: 0 when reached, -EAGAIN when pending, -EIO when failed at or
 * before @seq.
 */
int asc_timeline_check_sync(const struct asc_timeline *tl, u64 seq)
{
	struct asc_point p = { .tl = (struct asc_timeline *)tl, .seq = seq };
	int st = asc_point_state(&p);

	if (st < 0)
		return st;
	return st ? 0 : -EAGAIN;
}

/* A HOST_WAIT being queued joins its event's waits, as the newest. */
static void waiter_add(struct asc_entry *e)
{
	struct asc_event *ev = e->event;

	e->waiter.prev = NULL;
	e->waiter.next = ev->waits;
	if (ev->waits)
		ev->waits->waiter.prev = e;
	ev->waits = e;
}

/* A HOST_WAIT retiring leaves its event's waits. */
static void waiter_del(struct asc_entry *e)
{
	struct asc_event *ev = e->event;

	if (e->waiter.prev)
		e->waiter.prev->waiter.next = e->waiter.next;
	else
		ev->waits = e->waiter.next;
	if (e->waiter.next)
		e->waiter.next->waiter.prev = e->waiter.prev;
	e->waiter.prev = NULL;
	e->waiter.next = NULL;
}

/**
 * asc_enqueue() - give a validated entry its sequence number and queue it
 * @tl: the stream's timeline.
 * @q: the stream's queue.
 * @e: the entry; @e->desc, @e->dst, @e->src and @e->event are filled.
 * @rel: where a re-record reports the timeline it no longer names.
 *
 * Takes the entry's references: regions' in-flight counts, the event, and
 * for STREAM_WAIT the event's current point; a HOST_WAIT joins its event's
 * waits until it retires. EVENT_RECORD re-captures the event at this
 * entry, as cudaEventRecord does at call time.
 */
void asc_enqueue(struct asc_timeline *tl, struct asc_queue *q,
		 struct asc_entry *e, struct asc_release *rel)
{
	e->next = NULL;
	e->seq = ++tl->submitted;
	e->wait.tl = NULL;
	e->wait.seq = 0;

	switch (e->desc.op) {
	case ACCEL_OP_COPY:
	case ACCEL_OP_COPY_2D:
		e->dst->inflight++;
		e->src->inflight++;
		e->event = NULL;
		break;
	case ACCEL_OP_MEMSET:
		e->dst->inflight++;
		e->src = NULL;
		e->event = NULL;
		break;
	case ACCEL_OP_EVENT_RECORD:
		e->event->refs++;
		asc_point_put(&e->event->point, rel);
		e->event->point.tl = tl;
		e->event->point.seq = e->seq;
		e->event->timestamp_ns = 0;
		asc_point_get(&e->event->point);
		break;
	case ACCEL_OP_STREAM_WAIT:
		e->wait = e->event->point;
		asc_point_get(&e->wait);
		e->event = NULL;
		break;
	case ACCEL_OP_HOST_WAIT:
		e->event->refs++;
		waiter_add(e);
		break;
	case ACCEL_OP_HOST_SIGNAL:
		e->event->refs++;
		break;
	default:
		e->event = NULL;
		break;
	}
	if (!asc_desc_writes(&e->desc)) {
		e->dst = NULL;
		e->src = NULL;
	}

	if (q->tail)
		q->tail->next = e;
	else
		q->head = e;
	q->tail = e;
	q->count++;
}

/**
 * asc_queue_peek() - the next entry to run
 * @q: the queue.
 *
 * Return: the oldest entry, or NULL.
 */
struct asc_entry *asc_queue_peek(const struct asc_queue *q)
{
	return q->head;
}

/**
 * asc_entry_ready() - may an entry at the head of its queue run now?
 * @e: the entry.
 *
 * Return: 1 ready, 0 blocked on a wait, -EIO when what it waits for failed.
 */
int asc_entry_ready(const struct asc_entry *e)
{
	switch (e->desc.op) {
	case ACCEL_OP_STREAM_WAIT:
		return asc_point_state(&e->wait);
	case ACCEL_OP_HOST_WAIT:
		if (e->event->error)
			return -EIO;
		return e->event->value >= e->desc.value ? 1 : 0;
	default:
		return 1;
	}
}

/**
 * asc_entry_execute() - run the part of an entry that is pure bookkeeping
 * @e: a ready entry at the head of its queue.
 *
 * HOST_SIGNAL raises its user event; COPY is done by the shell (or by an
 * executor) before the entry retires.
 */
void asc_entry_execute(struct asc_entry *e)
{
	if (e->desc.op == ACCEL_OP_HOST_SIGNAL)
		asc_event_signal(e->event, e->desc.value, false);
}

static void put_region(struct asc_region *r, struct asc_release *rel)
{
	if (--r->inflight == 0 && r->released && rel->nregion < 2)
		rel->region[rel->nregion++] = r;
}

/**
 * asc_retire_head() - retire the oldest entry of a queue
 * @tl: the stream's timeline.
 * @q: the stream's queue, not empty.
 * @status: 0, or the negative errno it failed with; the first failure makes
 *	the timeline fail from this sequence number on.
 * @now_ns: CLOCK_MONOTONIC now, for timing events.
 * @rel: where objects left without references are reported.
 *
 * An executor's cursor and fetched mark never lag behind what retired.
 *
 * Return: the entry, unlinked. An entry of a batch is freed with its batch
 * (reported in @rel->batch once its last entry retired); the shell frees
 * an entry of its own.
 */
struct asc_entry *asc_retire_head(struct asc_timeline *tl, struct asc_queue *q,
				  int status, u64 now_ns, struct asc_release *rel)
{
	struct asc_entry *e = q->head;
	struct asc_event *ev = e->event;

	q->head = e->next;
	if (!q->head)
		q->tail = NULL;
	q->count--;
	if (q->fetch_last == e)
		q->fetch_last = NULL;

	if (status && !tl->error) {
		tl->error = status;
		tl->error_seq = e->seq;
	}
	tl->completed = e->seq;
	if (tl->fetched < tl->completed)
		tl->fetched = tl->completed;

	if (e->dst)
		put_region(e->dst, rel);
	if (e->src)
		put_region(e->src, rel);
	if (e->desc.op == ACCEL_OP_STREAM_WAIT)
		asc_point_put(&e->wait, rel);
	if (e->desc.op == ACCEL_OP_HOST_WAIT)
		waiter_del(e);
	if (ev) {
		if (e->desc.op == ACCEL_OP_EVENT_RECORD &&
		    (ev->flags & ACCEL_EVENT_TIMING) &&
		    ev->point.tl == tl && ev->point.seq == e->seq)
			ev->timestamp_ns = now_ns;
		if (asc_event_put(ev) && rel->nevent < 1)
			rel->event[rel->nevent++] = ev;
	}
	if (e->batch && --e->batch->remaining == 0)
		rel->batch = e->batch;
	e->next = NULL;
	return e;
}

/**
 * asc_region_release() - the user asks to unregister or free a region
 * @r: the region.
 * @flags: 0 or %ACCEL_MEM_RELEASE_DEFERRED.
 *
 * Return: 1 when the shell must free the region now, 0 when it is deferred
 * until its last queued use retires, -EBUSY when queued work names it and
 * the release is not deferred (nothing changes).
 */
int asc_region_release(struct asc_region *r, u32 flags)
{
	if (r->inflight && !(flags & ACCEL_MEM_RELEASE_DEFERRED))
		return -EBUSY;
	r->released = true;
	return r->inflight ? 0 : 1;
}

/**
 * asc_entry_external() - does a descriptor touch an executor's memory?
 * @e: a resolved entry.
 *
 * Only an attached executor can reach %ACCEL_REGION_EXTERNAL memory: a
 * soft engine fails such a copy with -ENXIO, and submission refuses it
 * while no executor is attached.
 *
 * Return: true for a COPY, MEMSET or COPY_2D with a side external.
 */
bool asc_entry_external(const struct asc_entry *e)
{
	if (!asc_desc_writes(&e->desc))
		return false;
	if (e->dst->kind == ACCEL_REGION_EXTERNAL)
		return true;
	return asc_desc_reads(&e->desc) &&
	       e->src->kind == ACCEL_REGION_EXTERNAL;
}

/**
 * asc_batch_init() - start a batch of entries from submitted descriptors
 * @b: room for @count entries.
 * @descs: the descriptors, shape-checked with asc_check_desc().
 * @count: how many.
 *
 * The shell then resolves each entry's handles into @dst, @src and @event
 * (NULL for handle 0 or an unknown handle) and calls asc_submit_admit().
 */
void asc_batch_init(struct asc_batch *b, const struct accel_desc *descs,
		    u32 count)
{
	u32 i;

	b->next = NULL;
	b->count = count;
	b->remaining = count;
	/*
	 * Field by field: assigning a whole compound literal clears the
	 * entry first and then copies it, twice the stores per descriptor.
	 */
	for (i = 0; i < count; i++) {
		struct asc_entry *e = &b->ents[i];

		e->next = NULL;
		e->desc = descs[i];
		e->seq = 0;
		e->dst = NULL;
		e->src = NULL;
		e->event = NULL;
		e->wait.tl = NULL;
		e->wait.seq = 0;
		e->batch = b;
	}
}

/**
 * asc_submit_admit() - may a batch be queued on a stream?
 * @tl: the stream's timeline, NULL when its handle is unknown.
 * @q: the stream's queue (unused when @tl is NULL).
 * @b: the batch, every entry's handles resolved.
 * @executor: an executor is attached.
 *
 * The order of the checks is the ABI: the stream, its sticky error, room
 * in its queue, then every descriptor, then memory only an executor
 * reaches. Nothing changes; the shell enqueues every entry on success.
 *
 * Return: 0; -ENOENT for an unknown stream, region or event; -EIO for a
 * failed stream; -EAGAIN when the queue has no room for the batch; -EINVAL
 * or -EPERM from asc_validate_desc(); -ENXIO for external memory without
 * an executor.
 */
int asc_submit_admit(const struct asc_timeline *tl, const struct asc_queue *q,
		     const struct asc_batch *b, bool executor)
{
	u32 i;
	int ret;

	if (!tl)
		return -ENOENT;
	if (tl->error)
		return -EIO;
	if (q->count + b->count > ASC_QUEUE_DEPTH)
		return -EAGAIN;
	for (i = 0; i < b->count; i++) {
		const struct asc_entry *e = &b->ents[i];

		ret = asc_validate_desc(&e->desc, e->dst, e->src, e->event);
		if (ret)
			return ret;
	}
	if (executor)
		return 0;
	for (i = 0; i < b->count; i++)
		if (asc_entry_external(&b->ents[i]))
			return -ENXIO;
	return 0;
}

/**
 * asc_sync_target() - the sequence number a synchronize waits for
 * @tl: the stream's timeline.
 * @seq: the request's sequence number, 0 for everything submitted.
 * @target: out: the sequence number to wait for.
 *
 * Return: 0, or -EINVAL for a @seq not yet submitted.
 */
int asc_sync_target(const struct asc_timeline *tl, u64 seq, u64 *target)
{
	if (seq > tl->submitted)
		return -EINVAL;
	*target = seq ? seq : tl->submitted;
	return 0;
}

/**
 * asc_region_conflicts() - would a new range collide with a region?
 * @r: an existing region.
 * @kind: the new range's ACCEL_REGION_* kind.
 * @addr: its start.
 * @size: its length in bytes, not zero.
 *
 * Two live registrations of one kind may not share a byte.
 *
 * Return: true when registering the range must fail with -EEXIST.
 */
bool asc_region_conflicts(const struct asc_region *r, u32 kind, u64 addr,
			  u64 size)
{
	return r->kind == kind && !r->released &&
	       asc_ranges_overlap(addr, size, r->addr, r->size);
}
