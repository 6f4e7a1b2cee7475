// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Events and host waits, the pure part: an event's captured point and
 * state, user events' counters, export and import of a point, elapsed
 * time, and the entries of a host wait. Built with the rest of the core
 * into accelstream.ko, libaccel's in-process transport and the unit tests.
 *
 * As everywhere in the core, nothing here locks, allocates or sleeps:
 * every function runs under the shell's context lock and reports what the
 * shell must do next.
 */
#include "asc_core.h"

/**
 * asc_event_init() - initialise a new event
 * @ev: the event.
 * @flags: ACCEL_EVENT_* flags, already checked.
 */
void asc_event_init(struct asc_event *ev, u32 flags)
{
	ev->flags = flags;
	ev->refs = 0;
	ev->point.tl = NULL;
	ev->point.seq = 0;
	ev->timestamp_ns = 0;
	ev->value = 0;
	ev->error = 0;
	ev->dead = false;
	ev->waits = NULL;
}

/**
 * asc_event_state() - an event's state, as cudaEventQuery reports it
 * @ev: the event.
 * @error: out: 0 or -EIO.
 *
 * Return: %ACCEL_EVENT_STATE_COMPLETE or %ACCEL_EVENT_STATE_PENDING. A
 * failed point is complete with *@error set.
 */
int asc_event_state(const struct asc_event *ev, int *error)
{
	int st;

	*error = 0;
	if (ev->flags & ACCEL_EVENT_USER) {
		*error = ev->error;
		return (ev->value || ev->error) ? ACCEL_EVENT_STATE_COMPLETE :
						  ACCEL_EVENT_STATE_PENDING;
	}
	st = asc_point_state(&ev->point);
	if (st < 0) {
		*error = st;
		return ACCEL_EVENT_STATE_COMPLETE;
	}
	return st ? ACCEL_EVENT_STATE_COMPLETE : ACCEL_EVENT_STATE_PENDING;
}

/**
 * asc_event_signal() - raise a user event's counter
 * @ev: a user event.
 * @value: the new value; never lowers the counter.
 * @error: fail the event's waiters with -EIO.
 *
 * Return: true when something changed and waiters should be woken.
 */
bool asc_event_signal(struct asc_event *ev, u64 value, bool error)
{
	bool changed = false;

	if (value > ev->value) {
		ev->value = value;
		changed = true;
	}
	if (error && !ev->error) {
		ev->error = -EIO;
		changed = true;
	}
	return changed;
}

/**
 * asc_event_kill() - the event's handle is gone
 * @ev: the event.
 * @rel: where its point's timeline is reported if left without references.
 */
void asc_event_kill(struct asc_event *ev, struct asc_release *rel)
{
	ev->dead = true;
	asc_point_put(&ev->point, rel);
}

/**
 * asc_event_destroy() - %ACCEL_IOC_EVENT_DESTROY on a resolved event
 * @ev: the event, live.
 * @rel: where its point's timeline, and the event itself when nothing
 *	references it, are reported.
 *
 * A user event's counter is raised only by its handle (a signal) or by a
 * HOST_SIGNAL already queued, which may never run (its stream can fail
 * first, or wait behind the very wait it would release). So the destroy
 * is refused while a queued HOST_WAIT on the event is not satisfied: once
 * the handle is gone, nothing could be sure to release that stream. A
 * satisfied wait, or one on an event signalled with an error (it fails),
 * does not hold the destroy back. The cost is a walk of the event's own
 * queued waits; plain events have none (a STREAM_WAIT holds the point it
 * captured, never the event).
 *
 * Return: 0, the event is dead (asc_event_kill()); -EBUSY, nothing
 * changed.
 */
int asc_event_destroy(struct asc_event *ev, struct asc_release *rel)
{
	const struct asc_entry *e;

	for (e = ev->waits; e; e = e->waiter.next)
		if (!asc_entry_ready(e))
			return -EBUSY;
	asc_event_kill(ev, rel);
	if (!ev->refs && rel->nevent < 1)
		rel->event[rel->nevent++] = ev;
	return 0;
}

/**
 * asc_event_put() - drop a reference on an event
 * @ev: the event.
 *
 * Return: true when the event is dead and this was the last reference.
 */
bool asc_event_put(struct asc_event *ev)
{
	return --ev->refs == 0 && ev->dead;
}

/**
 * asc_event_export() - the point an export of an event captures
 * @ev: the event, NULL for an unknown handle.
 * @npending: exports of the context still pending.
 * @point: out: the pending point (not referenced: the shell keeps the
 *	export on its stream, which cannot drain past it unseen), or an
 *	empty point when the export is done at once.
 * @status: out: when @point is empty, the export's status: 0, or -EIO
 *	for a point that failed.
 *
 * Return: 0; -ENOENT for an unknown or dead event; -EINVAL for a user
 * event or an imported one; -ENOSPC with %ASC_EXPORT_MAX_PENDING exports
 * pending already and this one pending too.
 */
int asc_event_export(const struct asc_event *ev, u32 npending,
		     struct asc_point *point, int *status)
{
	int st;

	if (!ev || ev->dead)
		return -ENOENT;
	if (ev->flags & (ACCEL_EVENT_USER | ACCEL_EVENT_IMPORTED))
		return -EINVAL;
	point->tl = NULL;
	point->seq = 0;
	*status = 0;
	st = asc_point_state(&ev->point);
	if (st) {
		*status = st < 0 ? -EIO : 0;
		return 0;
	}
	if (npending >= ASC_EXPORT_MAX_PENDING)
		return -ENOSPC;
	*point = ev->point;
	return 0;
}

/**
 * asc_export_state() - is an exported point done?
 * @tl: the producing stream's timeline.
 * @seq: the exported sequence number.
 *
 * Return: -EAGAIN while pending; once done, its status: 0 retired, -EIO
 * failed.
 */
int asc_export_state(const struct asc_timeline *tl, u64 seq)
{
	return asc_timeline_check_sync(tl, seq);
}

/**
 * asc_import_init() - make the event and timeline of an import
 * @tl: the import's timeline: one point, pending.
 * @ev: the new event, holding that point (%ACCEL_EVENT_IMPORTED).
 *
 * Every wait on the event is then a wait on (@tl, 1), exactly as on a
 * plain event's point: streams, host waits, queries and the executor
 * protocol need nothing of their own.
 */
void asc_import_init(struct asc_timeline *tl, struct asc_event *ev)
{
	*tl = (struct asc_timeline){ .submitted = 1, .import = true };
	asc_event_init(ev, ACCEL_EVENT_IMPORTED);
	ev->point.tl = tl;
	ev->point.seq = 1;
	asc_point_get(&ev->point);
}

/**
 * asc_import_done() - the exported point of an import is done
 * @tl: the import's timeline.
 * @status: 0, or the negative errno the point failed with.
 *
 * Return: true when this changed the timeline: the shell wakes waiters
 * and kicks the streams.
 */
bool asc_import_done(struct asc_timeline *tl, int status)
{
	if (tl->completed || tl->error)
		return false;
	if (status) {
		tl->error_seq = 1;
		tl->error = status;
	} else {
		tl->completed = 1;
	}
	return true;
}

/**
 * asc_event_elapsed() - time between two completed timing events
 * @start: the first event.
 * @end: the second event.
 * @elapsed_ns: out: @end's timestamp minus @start's.
 *
 * Return: 0; -EINVAL without %ACCEL_EVENT_TIMING or never recorded; -EAGAIN
 * when one is still pending; -EIO when one failed.
 */
int asc_event_elapsed(const struct asc_event *start, const struct asc_event *end,
		      s64 *elapsed_ns)
{
	const struct asc_event *evs[2] = { start, end };
	int i, st;

	for (i = 0; i < 2; i++) {
		if (!(evs[i]->flags & ACCEL_EVENT_TIMING) || !evs[i]->point.tl)
			return -EINVAL;
	}
	for (i = 0; i < 2; i++) {
		st = asc_point_state(&evs[i]->point);
		if (st < 0)
			return st;
		if (!st || !evs[i]->timestamp_ns)
			return -EAGAIN;
	}
	*elapsed_ns = (s64)(end->timestamp_ns - start->timestamp_ns);
	return 0;
}

/**
 * asc_wait_item_init() - capture one entry of a host wait
 * @it: the item.
 * @ev: the event; takes a reference on it and on its current point.
 * @value: user events: the value to wait for (0 means 1).
 */
void asc_wait_item_init(struct asc_wait_item *it, struct asc_event *ev, u64 value)
{
	it->event = ev;
	ev->refs++;
	it->point = ev->point;
	asc_point_get(&it->point);
	it->value = value ? value : 1;
}

/**
 * asc_wait_item_fini() - drop the references of a host wait entry
 * @it: the item.
 * @rel: where objects left without references are reported.
 */
void asc_wait_item_fini(struct asc_wait_item *it, struct asc_release *rel)
{
	asc_point_put(&it->point, rel);
	if (asc_event_put(it->event) && rel->nevent < 1)
		rel->event[rel->nevent++] = it->event;
}

static int item_state(const struct asc_wait_item *it)
{
	const struct asc_event *ev = it->event;

	if (ev->flags & ACCEL_EVENT_USER) {
		if (ev->error)
			return -EIO;
		return ev->value >= it->value ? 1 : 0;
	}
	return asc_point_state(&it->point);
}

/**
 * asc_wait_check() - is a host wait satisfied?
 * @items: the captured entries.
 * @n: their number.
 * @all: every entry must complete (else the first one does).
 * @first: out: any mode: index of the lowest complete entry; either mode:
 *	index of the failed entry on -EIO; all mode on success: 0.
 *
 * Return: 0 satisfied, -EAGAIN pending, -EIO an entry failed.
 */
int asc_wait_check(const struct asc_wait_item *items, u32 n, bool all,
		   u32 *first)
{
	bool pending = false;
	u32 i;
	int st;

	for (i = 0; i < n; i++) {
		st = item_state(&items[i]);
		if (st < 0) {
			*first = i;
			return st;
		}
		if (st && !all) {
			*first = i;
			return 0;
		}
		if (!st)
			pending = true;
	}
	if (pending)
		return -EAGAIN;
	*first = 0;
	return 0;
}

/**
 * asc_event_signal_user() - %ACCEL_IOC_EVENT_SIGNAL on a resolved event
 * @ev: the event, NULL for an unknown handle.
 * @s: the request, checked with asc_check_event_signal().
 * @wake: out: something changed; the shell wakes waiters and engines.
 *
 * Return: 0, -ENOENT for an unknown event, -EINVAL for one that is not an
 * %ACCEL_EVENT_USER event.
 */
int asc_event_signal_user(struct asc_event *ev,
			  const struct accel_event_signal *s, bool *wake)
{
	*wake = false;
	if (!ev)
		return -ENOENT;
	if (!(ev->flags & ACCEL_EVENT_USER))
		return -EINVAL;
	*wake = asc_event_signal(ev, s->value, s->flags & ACCEL_SIGNAL_ERROR);
	return 0;
}

/**
 * asc_wait_entry_validate() - may a host wait name this event?
 * @ev: the event, NULL for an unknown handle.
 * @e: the wait entry, checked with asc_check_wait_entry().
 *
 * Return: 0, -ENOENT for an unknown event, -EINVAL for a value given for
 * an event that is not a user event.
 */
int asc_wait_entry_validate(const struct asc_event *ev,
			    const struct accel_wait_entry *e)
{
	if (!ev)
		return -ENOENT;
	if (!(ev->flags & ACCEL_EVENT_USER) && e->value)
		return -EINVAL;
	return 0;
}
