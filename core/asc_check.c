// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The pure core of accelstream: the ABI checks of every command, made
 * before any lookup or allocation. Built into accelstream.ko and, unchanged,
 * into libaccel and the unit tests; nothing here locks, allocates or sleeps.
 */
#include "asc_core.h"

static_assert(sizeof(struct accel_desc) == 64, "descriptor is 64 bytes");
static_assert(sizeof(struct accel_info) % 8 == 0, "info is 8-byte sized");
static_assert(sizeof(struct accel_wait_entry) == 16, "wait entry size");
static_assert(sizeof(struct accel_device_info) == 56, "device info size");

static bool all_zero(const u32 *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

/**
 * asc_check_info() - check the input of %ACCEL_IOC_GET_INFO
 * @in: the structure as copied from userspace.
 *
 * Return: 0, or -EINVAL when @flags or a reserved field is not zero.
 */
int asc_check_info(const struct accel_info *in)
{
	if (in->flags || !all_zero(in->reserved, sizeof(in->reserved) / 4))
		return -EINVAL;
	return 0;
}

/**
 * asc_check_set_device() - check an %ACCEL_IOC_SET_DEVICE request
 * @s: the request.
 * @devices: how many devices the shell serves.
 *
 * Return: 0; -EINVAL for nonzero flags; -ENODEV for a device past the last.
 */
int asc_check_set_device(const struct accel_device_select *s, u32 devices)
{
	if (s->flags)
		return -EINVAL;
	if (s->device >= devices)
		return -ENODEV;
	return 0;
}

/**
 * asc_devices_param() - check how many devices a shell is asked to serve
 * @n: the module parameter ``devices``, or ACCEL_INPROC_DEVICES.
 *
 * Return: 0 for 1 to %ASC_MAX_DEVICES, else -EINVAL.
 */
int asc_devices_param(u32 n)
{
	return n >= 1 && n <= ASC_MAX_DEVICES ? 0 : -EINVAL;
}

/**
 * asc_device_charge() - account an allocation on one device of a context
 * @used: the context's bytes on that device; raised by @bytes on success.
 * @bytes: the allocation's size.
 * @max: the context's limit on each device.
 *
 * Each device keeps its own account: what a context holds on one device
 * does not count against another.
 *
 * Return: 0, or -ENOMEM past @max (nothing changed).
 */
int asc_device_charge(u64 *used, u64 bytes, u64 max)
{
	if (bytes > max || *used > max - bytes)
		return -ENOMEM;
	*used += bytes;
	return 0;
}

/**
 * asc_check_mem_register() - check a register request before pinning
 * @r: the request.
 *
 * Return: 0, or -EINVAL for zero size, a wrapping range or unknown flags.
 */
int asc_check_mem_register(const struct accel_mem_register *r)
{
	u64 end;

	if (r->flags & ~(ACCEL_MEM_READONLY | ACCEL_MEM_EXTERNAL))
		return -EINVAL;
	if (!r->size || check_add_overflow(r->addr, r->size, &end))
		return -EINVAL;
	return 0;
}

/**
 * asc_check_mem_alloc() - check an allocation request
 * @a: the request.
 *
 * Output fields are not checked: they are overwritten.
 *
 * Return: 0; -EINVAL for zero size or flags other than exactly one of
 * %ACCEL_MEM_HOST and %ACCEL_MEM_DEVICE; -ENOMEM for a size no machine
 * could back (above 2^46 bytes).
 */
int asc_check_mem_alloc(const struct accel_mem_alloc *a)
{
	if (a->flags != ACCEL_MEM_HOST && a->flags != ACCEL_MEM_DEVICE)
		return -EINVAL;
	if (!a->size)
		return -EINVAL;
	if (a->size > (1ULL << 46))
		return -ENOMEM;
	return 0;
}

/**
 * asc_check_mem_release() - check a release request
 * @r: the request.
 *
 * Return: 0, or -EINVAL for unknown flags.
 */
int asc_check_mem_release(const struct accel_mem_release *r)
{
	return (r->flags & ~ACCEL_MEM_RELEASE_DEFERRED) ? -EINVAL : 0;
}

/**
 * asc_check_stream_create() - check a stream creation request
 * @c: the request.
 *
 * Return: 0, or -EINVAL for unknown flags or a nonzero pad.
 */
int asc_check_stream_create(const struct accel_stream_create *c)
{
	if (c->flags & ~ACCEL_STREAM_NON_BLOCKING)
		return -EINVAL;
	if (c->pad)
		return -EINVAL;
	return 0;
}

/**
 * asc_check_handle() - check a one-handle argument
 * @h: the argument.
 *
 * Return: 0, or -EINVAL for a nonzero pad.
 */
int asc_check_handle(const struct accel_handle *h)
{
	return h->pad ? -EINVAL : 0;
}

/**
 * asc_check_stream_sync() - check a stream synchronize request
 * @s: the request.
 *
 * Return: 0, or -EINVAL for nonzero flags.
 */
int asc_check_stream_sync(const struct accel_stream_sync *s)
{
	return s->flags ? -EINVAL : 0;
}

/**
 * asc_check_submit() - check a submission header
 * @s: the header.
 * @max_submit: the most descriptors one submission may carry.
 *
 * Return: 0, or -EINVAL for a count of 0 or above @max_submit, a NULL array,
 * or nonzero flags or pad.
 */
int asc_check_submit(const struct accel_submit *s, u32 max_submit)
{
	if (!s->count || s->count > max_submit || !s->descs)
		return -EINVAL;
	if (s->flags || s->pad)
		return -EINVAL;
	return 0;
}

/**
 * asc_check_event_create() - check an event creation request
 * @c: the request.
 *
 * Return: 0, or -EINVAL for unknown flags, or %ACCEL_EVENT_TIMING together
 * with %ACCEL_EVENT_USER.
 */
int asc_check_event_create(const struct accel_event_create *c)
{
	if (c->flags & ~(ACCEL_EVENT_TIMING | ACCEL_EVENT_USER))
		return -EINVAL;
	if ((c->flags & ACCEL_EVENT_TIMING) && (c->flags & ACCEL_EVENT_USER))
		return -EINVAL;
	return 0;
}

/**
 * asc_check_event_signal() - check a host signal request
 * @s: the request.
 *
 * Return: 0, or -EINVAL for unknown flags.
 */
int asc_check_event_signal(const struct accel_event_signal *s)
{
	return (s->flags & ~ACCEL_SIGNAL_ERROR) ? -EINVAL : 0;
}

/**
 * asc_check_wait() - check a host wait request
 * @w: the request.
 * @max_wait: the most entries one wait may name.
 *
 * Return: 0, or -EINVAL for a bad count, a NULL array, unknown flags or a
 * nonzero pad.
 */
int asc_check_wait(const struct accel_wait *w, u32 max_wait)
{
	if (!w->count || w->count > max_wait || !w->entries)
		return -EINVAL;
	if (w->flags & ~ACCEL_WAIT_ALL)
		return -EINVAL;
	if (w->pad)
		return -EINVAL;
	return 0;
}

/**
 * asc_check_wait_entry() - check one entry of a host wait
 * @e: the entry.
 *
 * Return: 0, or -EINVAL for a nonzero pad.
 */
int asc_check_wait_entry(const struct accel_wait_entry *e)
{
	return e->pad ? -EINVAL : 0;
}

/**
 * asc_memset_width() - the element size of a MEMSET descriptor
 * @d: a MEMSET descriptor.
 *
 * Return: 1, 2 or 4 bytes, from @d->flags; 0 for flags that name no
 * element size (unknown bits, or both %ACCEL_MEMSET_D16 and
 * %ACCEL_MEMSET_D32).
 */
u32 asc_memset_width(const struct accel_desc *d)
{
	switch (d->flags) {
	case 0:
		return 1;
	case ACCEL_MEMSET_D16:
		return 2;
	case ACCEL_MEMSET_D32:
		return 4;
	default:
		return 0;
	}
}

static int check_memset(const struct accel_desc *d)
{
	u32 width = asc_memset_width(d);

	if (!width || d->src || d->src_offset || d->event || d->reserved)
		return -EINVAL;
	if (!d->dst)
		return -EINVAL;
	/* The element value must fit in the element. */
	if (d->value >> (8 * width))
		return -EINVAL;
	/* The start's alignment needs the region: asc_validate_desc(). */
	if (d->length & (width - 1))
		return -EINVAL;
	return 0;
}

static int check_copy_2d(const struct accel_desc *d)
{
	if (d->flags || !d->dst || !d->src)
		return -EINVAL;
	if (d->dst_pitch < d->width || d->src_pitch < d->width)
		return -EINVAL;
	return 0;
}

/**
 * asc_check_desc() - check a descriptor's shape, before handles are resolved
 * @d: the descriptor.
 *
 * Every field the op does not use must be zero, as must @flags (but for
 * MEMSET's element size) and @reserved (but for COPY_2D's source pitch).
 * A MEMSET's length must be a multiple of its element size and its value
 * must fit in it; a COPY_2D's pitches must be at least its width.
 *
 * Return: 0, or -EINVAL.
 */
int asc_check_desc(const struct accel_desc *d)
{
	bool copy_fields, event_fields;

	if (d->op == ACCEL_OP_MEMSET)
		return check_memset(d);
	if (d->op == ACCEL_OP_COPY_2D)
		return check_copy_2d(d);
	if (d->flags || d->reserved)
		return -EINVAL;

	copy_fields = d->dst || d->src || d->dst_offset || d->src_offset ||
		      d->length;
	event_fields = d->event || d->value;

	switch (d->op) {
	case ACCEL_OP_NOP:
		return (copy_fields || event_fields) ? -EINVAL : 0;
	case ACCEL_OP_COPY:
		if (event_fields || !d->dst || !d->src)
			return -EINVAL;
		return 0;
	case ACCEL_OP_EVENT_RECORD:
	case ACCEL_OP_STREAM_WAIT:
		if (copy_fields || d->value || !d->event)
			return -EINVAL;
		return 0;
	case ACCEL_OP_HOST_WAIT:
	case ACCEL_OP_HOST_SIGNAL:
		if (copy_fields || !d->event)
			return -EINVAL;
		return 0;
	default:
		return -EINVAL;
	}
}

/**
 * asc_desc_event() - the event handle a descriptor names
 * @d: a descriptor that passed asc_check_desc().
 *
 * A shell looks up only this handle as an event: COPY_2D keeps its
 * destination pitch in the same field.
 *
 * Return: @d->event for EVENT_RECORD, STREAM_WAIT, HOST_WAIT and
 * HOST_SIGNAL; 0 (no event) for the other ops.
 */
u32 asc_desc_event(const struct accel_desc *d)
{
	switch (d->op) {
	case ACCEL_OP_EVENT_RECORD:
	case ACCEL_OP_STREAM_WAIT:
	case ACCEL_OP_HOST_WAIT:
	case ACCEL_OP_HOST_SIGNAL:
		return d->event;
	default:
		return 0;
	}
}

/**
 * asc_desc_bytes() - the bytes a descriptor writes
 * @d: a descriptor that passed asc_validate_desc().
 *
 * Return: COPY, MEMSET: @length; COPY_2D: @width times @height (no more
 * than the destination region's size, so it does not overflow once
 * validated); 0 for the other ops.
 */
u64 asc_desc_bytes(const struct accel_desc *d)
{
	switch (d->op) {
	case ACCEL_OP_COPY:
	case ACCEL_OP_MEMSET:
		return d->length;
	case ACCEL_OP_COPY_2D:
		return d->width * d->height;
	default:
		return 0;
	}
}

/**
 * asc_memset_fill() - write a MEMSET's element pattern into memory
 * @to: where to write.
 * @len: bytes to write.
 * @value: the element value (the low @width bytes count), native-endian.
 * @width: the element size, 1, 2 or 4.
 * @phase: the offset of @to from the start of the fill, in bytes: the
 *	first byte written is byte @phase % @width of an element.
 *
 * The shells call it per mapped piece of a region (a page in the module):
 * a piece may start inside an element when a registered range is not
 * aligned to it.
 */
void asc_memset_fill(void *to, u64 len, u32 value, u32 width, u64 phase)
{
	u8 pat[8], *p = to;
	u32 i;
	u64 n;

	if (width == 1) {
		memset(to, (int)(value & 0xff), len);
		return;
	}
	for (i = 0; i < 8; i++)
		pat[i] = ((const u8 *)&value)[(phase + i) % width];
	for (n = 0; n + 8 <= len; n += 8)
		memcpy(p + n, pat, 8);
	for (i = 0; n < len; n++, i++)
		p[n] = pat[i];
}

/**
 * asc_clamp_priority() - clamp a stream priority into the supported range
 * @prio: the requested priority (lower is more urgent).
 *
 * Return: the effective priority, as CUDA clamps cudaStreamCreateWithPriority.
 */
s32 asc_clamp_priority(s32 prio)
{
	if (prio < ASC_GREATEST_PRIORITY)
		return ASC_GREATEST_PRIORITY;
	if (prio > ASC_LEAST_PRIORITY)
		return ASC_LEAST_PRIORITY;
	return prio;
}

/**
 * asc_check_stream_query() - check a stream query
 * @q: the request.
 *
 * Return: 0, or -EINVAL for a nonzero pad.
 */
int asc_check_stream_query(const struct accel_stream_query *q)
{
	return q->pad ? -EINVAL : 0;
}

/**
 * asc_check_event_query() - check an event query
 * @q: the request.
 *
 * Return: 0, or -EINVAL for a nonzero pad.
 */
int asc_check_event_query(const struct accel_event_query *q)
{
	return q->pad ? -EINVAL : 0;
}

/**
 * asc_check_event_record() - turn %ACCEL_IOC_EVENT_RECORD into its descriptor
 * @r: the request.
 * @d: out: the EVENT_RECORD descriptor it submits.
 *
 * Return: 0, or -EINVAL for event handle 0.
 */
int asc_check_event_record(const struct accel_event_record *r,
			   struct accel_desc *d)
{
	*d = (struct accel_desc){ .op = ACCEL_OP_EVENT_RECORD,
				  .event = r->event };
	return asc_check_desc(d);
}

/**
 * asc_check_event_export() - check an event export request
 * @x: the request.
 *
 * Return: 0, or -EINVAL for nonzero flags or pad.
 */
int asc_check_event_export(const struct accel_event_export *x)
{
	return (x->flags || x->pad) ? -EINVAL : 0;
}

/**
 * asc_check_event_import() - check an event import request
 * @x: the request.
 *
 * Return: 0, or -EINVAL for nonzero flags or pad.
 */
int asc_check_event_import(const struct accel_event_import *x)
{
	return (x->flags || x->pad) ? -EINVAL : 0;
}

/**
 * asc_check_exec_attach() - check an executor attach or detach request
 * @a: the request.
 *
 * Return: 0, or -EINVAL for nonzero flags or pad.
 */
int asc_check_exec_attach(const struct accel_exec_attach *a)
{
	return (a->flags || a->pad) ? -EINVAL : 0;
}

/**
 * asc_check_exec_fetch() - check an executor fetch request
 * @f: the request.
 * @max_items: the most items one fetch may return.
 *
 * Return: 0, or -EINVAL for nonzero flags or pad, a NULL array, or a
 * @max_items of 0 or above @max_items.
 */
int asc_check_exec_fetch(const struct accel_exec_fetch *f, u32 max_items)
{
	if (f->flags || f->pad || !f->items)
		return -EINVAL;
	if (!f->max_items || f->max_items > max_items)
		return -EINVAL;
	return 0;
}

/**
 * asc_check_exec_complete() - check an executor completion request
 * @c: the request.
 * @max_entries: the most completions one call may carry.
 *
 * Return: 0, or -EINVAL for a nonzero pad, a NULL array, or a count of 0
 * or above @max_entries.
 */
int asc_check_exec_complete(const struct accel_exec_complete *c,
			    u32 max_entries)
{
	if (c->pad || !c->entries || !c->count || c->count > max_entries)
		return -EINVAL;
	return 0;
}

/**
 * asc_info_fill() - the answer of %ACCEL_IOC_GET_INFO
 * @info: written in full.
 * @caps: ACCEL_CAP_* bits the shell serves (%ASC_CAPS and its own).
 * @max_pinned_bytes: the context's pin limit, bytes.
 * @max_device_bytes: the context's device memory limit, bytes.
 * @page_size: the page size pinning and mmap(2) work in, bytes.
 */
void asc_info_fill(struct accel_info *info, u64 caps, u64 max_pinned_bytes,
		   u64 max_device_bytes, u32 page_size)
{
	*info = (struct accel_info){
		.abi_version = ACCEL_ABI_VERSION,
		.caps = caps,
		.max_streams = ASC_MAX_STREAMS,
		.max_events = ASC_MAX_EVENTS,
		.max_regions = ASC_MAX_REGIONS,
		.max_submit = ASC_MAX_SUBMIT,
		.queue_depth = ASC_QUEUE_DEPTH,
		.max_wait = ASC_MAX_WAIT,
		.greatest_priority = ASC_GREATEST_PRIORITY,
		.least_priority = ASC_LEAST_PRIORITY,
		.max_pinned_bytes = max_pinned_bytes,
		.max_device_bytes = max_device_bytes,
		.page_size = page_size,
	};
}

/**
 * asc_stream_query_fill() - the answer of %ACCEL_IOC_STREAM_QUERY
 * @q: written in full.
 * @handle: the stream's handle.
 * @tl: its timeline.
 * @queue: its queue.
 * @flags: its creation flags.
 * @prio: its effective priority.
 */
void asc_stream_query_fill(struct accel_stream_query *q, u32 handle,
			   const struct asc_timeline *tl,
			   const struct asc_queue *queue, u32 flags, s32 prio)
{
	*q = (struct accel_stream_query){
		.handle = handle,
		.submitted = tl->submitted,
		.completed = tl->completed,
		.error = tl->error,
		.flags = flags,
		.priority = prio,
		.queued = queue->count,
	};
}

/**
 * asc_event_query_fill() - the answer of %ACCEL_IOC_EVENT_QUERY
 * @q: written in full.
 * @handle: the event's handle.
 * @ev: the event.
 * @stream: the handle of the stream its point is on, 0 when it has no
 *	point or that stream's handle is destroyed.
 */
void asc_event_query_fill(struct accel_event_query *q, u32 handle,
			  const struct asc_event *ev, u32 stream)
{
	int error;

	*q = (struct accel_event_query){
		.handle = handle,
		.state = (u32)asc_event_state(ev, &error),
		.stream = stream,
		.flags = ev->flags,
		.seq = ev->point.seq,
		.value = ev->value,
		.timestamp_ns = ev->timestamp_ns,
	};
	q->error = error;
}

#define ASC_IOCTL(cmd, name) \
	[ASC_IOC_##cmd] = ACCEL_IOC_##cmd,
static const unsigned int asc_ioctl_cmds[ASC_NR_IOCTLS] = {
#include "asc_ioctls.h"
#undef ASC_IOCTL
};

/**
 * asc_ioctl_index() - which command of the ABI is this?
 * @cmd: the ioctl command number as the caller passed it.
 *
 * Return: its &enum asc_ioctl index, or -ENOTTY for an unknown command.
 */
int asc_ioctl_index(unsigned int cmd)
{
	int i;

	for (i = 0; i < ASC_NR_IOCTLS; i++)
		if (asc_ioctl_cmds[i] == cmd)
			return i;
	return -ENOTTY;
}

/**
 * asc_default_pinned_mb() - the default per-context pin limit
 * @ram_bytes: the machine's RAM (totalram_pages() in bytes in the module,
 *	_SC_PHYS_PAGES in the in-process model).
 *
 * A context may pin a quarter of RAM by default, so that one process
 * cannot take a small machine's memory away from reclaim; RLIMIT_MEMLOCK
 * still applies to users without CAP_IPC_LOCK.
 *
 * Return: the limit in MiB, at least 1 and at most U32_MAX.
 */
u32 asc_default_pinned_mb(u64 ram_bytes)
{
	u64 mb = (ram_bytes / ASC_DEFAULT_PINNED_DIV) >> 20;

	if (!mb)
		return 1;
	return mb > 0xffffffffULL ? 0xffffffffU : (u32)mb;
}
