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
 * asc_exec_item_init() - what the core decides about a fetched item
 * @e: the entry being handed out to an executor.
 * @it: the item; written in full here, except what only the shell knows:
 *	@it->stream, a STREAM_WAIT's @it->wait_stream, and a COPY's region
 *	kinds and addresses.
 *
 * A wait whose point already failed, or a HOST_WAIT on a failed user
 * event, goes out with status -EIO; a STREAM_WAIT whose point retired
 * goes out with nothing to wait for.
 *
 * Return: the timeline of a STREAM_WAIT's pending point (the shell puts its
 * stream handle in @it->wait_stream), else NULL.
 */
struct asc_timeline *asc_exec_item_init(const struct asc_entry *e,
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
 * @tl: the stream's timeline.
 * @d: the completion.
 *
 * Return: 0, or -EINVAL for a positive status or a sequence number that was
 * not handed out or has retired already.
 */
int asc_exec_check_done(const struct asc_timeline *tl,
			const struct accel_exec_done *d)
{
	if (d->status > 0 || d->seq <= tl->completed || d->seq > tl->fetched)
		return -EINVAL;
	return 0;
}

/**
 * asc_exec_done_status() - the status the oldest entry retires with
 * @tl: the stream's timeline.
 * @e: the oldest entry, at or before @d->seq.
 * @d: the completion being applied.
 *
 * Entries before @d->seq completed fine; the one at it carries @d->status.
 * A HOST_SIGNAL that completed takes effect here, in order.
 *
 * Return: 0 or the negative errno to retire @e with.
 */
int asc_exec_done_status(const struct asc_timeline *tl, struct asc_entry *e,
			 const struct accel_exec_done *d)
{
	int status = e->seq == d->seq ? d->status : 0;

	if (!status && !tl->error)
		asc_entry_execute(e);
	return status;
}

/**
 * asc_exec_cancel_rest() - must what was not handed out go now?
 * @tl: the stream's timeline.
 *
 * Return: true when the stream failed and nothing handed out is pending:
 * the descriptors still queued retire without running.
 */
bool asc_exec_cancel_rest(const struct asc_timeline *tl)
{
	return tl->error && tl->fetched == tl->completed;
}
