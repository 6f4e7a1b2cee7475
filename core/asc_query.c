// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The pure core of accelstream: introspection (ACCEL_IOC_QUERY), what an
 * admin tool may ask and see. Nothing here locks, allocates or sleeps.
 */
#include "asc_core.h"

/**
 * asc_query_entry_size() - the size of one entry of a query kind
 * @kind: ACCEL_QUERY_*.
 *
 * Return: the entry's size in bytes, 0 for an unknown kind.
 */
u32 asc_query_entry_size(u32 kind)
{
	switch (kind) {
	case ACCEL_QUERY_CONTEXTS:
		return sizeof(struct accel_ctx_info);
	case ACCEL_QUERY_STREAMS:
		return sizeof(struct accel_stream_info);
	case ACCEL_QUERY_REGIONS:
		return sizeof(struct accel_region_info);
	case ACCEL_QUERY_DEVICES:
		return sizeof(struct accel_device_info);
	}
	return 0;
}

/**
 * asc_check_query() - check an %ACCEL_IOC_QUERY request before any lookup
 * @q: the request as copied from userspace.
 *
 * Return: 0, or -EINVAL for nonzero flags, an unknown kind, an entry size
 * that is not the kind's, a context id given to %ACCEL_QUERY_CONTEXTS or
 * %ACCEL_QUERY_DEVICES, or
 * a capacity above %ACCEL_QUERY_MAX_ENTRIES.
 */
int asc_check_query(const struct accel_query *q)
{
	u32 size = asc_query_entry_size(q->kind);

	if (q->flags || !size || q->entry_size != size)
		return -EINVAL;
	if ((q->kind == ACCEL_QUERY_CONTEXTS || q->kind == ACCEL_QUERY_DEVICES) &&
	    q->ctx_id)
		return -EINVAL;
	if (q->capacity > ACCEL_QUERY_MAX_ENTRIES)
		return -EINVAL;
	return 0;
}

/**
 * asc_query_visible() - may a caller see a context
 * @self: the context is the file the query came through.
 * @same_uid: it was opened with the caller's effective uid.
 * @admin: the caller has CAP_SYS_ADMIN.
 *
 * An ordinary user sees their own processes' contexts, an administrator
 * every context, the way ps(1) and nvidia-smi split it.
 *
 * Return: true when the context is listed and may be named by id.
 */
bool asc_query_visible(bool self, bool same_uid, bool admin)
{
	return self || same_uid || admin;
}

/**
 * asc_stream_info_init() - the core's part of a stream's query entry
 * @out: the entry; the shell fills handle, flags, priority and state.
 * @tl: the stream's timeline.
 * @q: the stream's queue.
 */
void asc_stream_info_init(struct accel_stream_info *out,
			  const struct asc_timeline *tl,
			  const struct asc_queue *q)
{
	out->submitted = tl->submitted;
	out->completed = tl->completed;
	out->error = tl->error;
	out->queued = q->count;
}

/**
 * asc_region_info_init() - the core's part of a region's query entry
 * @out: the entry; the shell fills handle and kind.
 * @r: the core's view of the region.
 */
void asc_region_info_init(struct accel_region_info *out,
			  const struct asc_region *r)
{
	out->size = r->size;
	out->flags = r->flags;
	out->inflight = r->inflight;
	out->state = r->released ? ACCEL_OBJ_RELEASED : ACCEL_OBJ_LIVE;
}
