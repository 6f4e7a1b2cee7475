/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * The pure scheduling core of accelstream: timelines, event capture, wait
 * resolution, descriptor validation and reference counts.
 *
 * It has no locking, allocation or sleeping of its own. A shell (the kernel
 * module, or libaccel's in-process transport) takes its lock, calls the
 * core, and then sleeps, wakes, pins or frees as the core's answer says.
 * Every function here must be called with the shell's context lock held.
 */
#ifndef _ASC_CORE_H
#define _ASC_CORE_H

#include "asc_types.h"

struct asc_entry;

/**
 * struct asc_timeline - a stream's 64-bit timeline
 * @submitted: sequence number of the last submitted descriptor (first is 1).
 * @completed: every descriptor up to this sequence number has retired.
 * @error_seq: sequence number of the first failed descriptor, 0 if none.
 * @error: negative errno of that failure, 0 if none.
 * @fetched: with a userspace executor: the last sequence number handed to
 *	it (never below @completed while it is attached).
 * @refs: points (event captures, queued stream waits, host waits in
 *	progress) that name this timeline; the shell keeps the stream's
 *	memory while this is not zero.
 * @id: the stream's handle, as fetched items name it (kept after the
 *	handle is destroyed: the stream still drains through an executor).
 * @import: not a stream's: the one-point timeline of an imported event
 *	(%ACCEL_IOC_EVENT_IMPORT), retired by asc_import_done() when the
 *	exported point is done; the shell frees it with its import.
 */
struct asc_timeline {
	u64 submitted;
	u64 completed;
	u64 error_seq;
	s32 error;
	u32 refs;
	u64 fetched;
	u32 id;
	bool import;
};

/**
 * struct asc_point - a captured (timeline, sequence number) pair
 * @tl: the timeline, NULL for an empty point (complete by definition).
 * @seq: the sequence number on @tl.
 */
struct asc_point {
	struct asc_timeline *tl;
	u64 seq;
};

/**
 * struct asc_region - the core's view of a region
 * @size: bytes a descriptor may address, from offset 0.
 * @flags: ACCEL_MEM_* flags of the region.
 * @kind: where its memory is, as the executor protocol reports it
 *	(ACCEL_REGION_*).
 * @addr: %ACCEL_REGION_HOST, %ACCEL_REGION_EXTERNAL: the registered
 *	address of offset 0; 0 for the other kinds (resolved by handle).
 * @inflight: queued descriptors that name this region (twice if both
 *	sides of a copy).
 * @released: the handle is gone; the shell frees the region when
 *	@inflight drops to zero.
 */
struct asc_region {
	u64 size;
	u32 flags;
	u32 kind;
	u64 addr;
	u64 inflight;
	bool released;
};

/**
 * struct asc_event - the core's view of an event
 * @flags: ACCEL_EVENT_* flags.
 * @refs: queued descriptors and waits in progress that name this event.
 * @point: plain events: the captured point.
 * @timestamp_ns: %ACCEL_EVENT_TIMING: when @point retired, 0 before.
 * @value: user events: the counter.
 * @error: user events: -EIO once signalled with %ACCEL_SIGNAL_ERROR.
 * @dead: the handle is gone; the shell frees the event when @refs is 0.
 * @waits: user events: the queued HOST_WAIT entries naming it, linked
 *	through their &asc_entry.waiter, newest first; asc_event_destroy()
 *	refuses while one of them is not satisfied.
 */
struct asc_event {
	u32 flags;
	u32 refs;
	struct asc_point point;
	u64 timestamp_ns;
	u64 value;
	s32 error;
	bool dead;
	struct asc_entry *waits;
};

/**
 * struct asc_waiter - a queued HOST_WAIT's place on its event's @waits
 * @prev: the next newer HOST_WAIT on the event, NULL for the newest.
 * @next: the next older one, NULL for the oldest.
 */
struct asc_waiter {
	struct asc_entry *prev;
	struct asc_entry *next;
};

/**
 * struct asc_entry - a validated descriptor queued on a stream
 * @next: next entry in the stream's FIFO.
 * @desc: the descriptor as submitted.
 * @seq: its sequence number.
 * @dst: COPY, MEMSET, COPY_2D: destination region.
 * @src: COPY, COPY_2D: source region.
 * @event: EVENT_RECORD, HOST_WAIT, HOST_SIGNAL: the event.
 * @wait: STREAM_WAIT: the point captured at submission.
 * @waiter: HOST_WAIT, once queued: its links on @event's &asc_event.waits
 *	(shares @wait's room: an entry is one op or the other, and the entry
 *	stays 128 bytes).
 * @batch: the submission it came in, NULL for an entry of its own.
 *
 * asc_batch_init() sets every member one by one: a new member is
 * initialised there too.
 */
struct asc_entry {
	struct asc_entry *next;
	struct accel_desc desc;
	u64 seq;
	struct asc_region *dst;
	struct asc_region *src;
	struct asc_event *event;
	union {
		struct asc_point wait;
		struct asc_waiter waiter;
	};
	struct asc_batch *batch;
};

/**
 * struct asc_batch - the entries of one submission, in one allocation
 * @next: free for the shell (its list of batches to free after unlocking).
 * @count: entries in @ents.
 * @remaining: entries not yet retired; the batch is reported in
 *	&asc_release.batch when this reaches zero.
 * @ents: the entries.
 */
struct asc_batch {
	struct asc_batch *next;
	u32 count;
	u32 remaining;
	struct asc_entry ents[];
};

/**
 * struct asc_queue - a stream's FIFO of queued descriptors
 * @head: oldest entry (next to run), NULL when empty.
 * @tail: newest entry.
 * @count: entries queued.
 * @fetch_last: with an executor attached, the last entry handed out while
 *	it is still queued (NULL: start from @head), so that a fetch does not
 *	walk what it handed out before.
 */
struct asc_queue {
	struct asc_entry *head;
	struct asc_entry *tail;
	u32 count;
	struct asc_entry *fetch_last;
};

/**
 * struct asc_release - objects whose last reference a core call dropped
 * @tl: timelines whose @refs reached zero.
 * @ntl: number of entries in @tl.
 * @region: released regions whose @inflight reached zero.
 * @nregion: number of entries in @region.
 * @event: dead events whose @refs reached zero.
 * @nevent: number of entries in @event.
 * @batch: a batch whose last entry retired, else NULL.
 *
 * The shell frees these (or checks its own conditions) after the call.
 */
struct asc_release {
	struct asc_timeline *tl[2];
	unsigned int ntl;
	struct asc_region *region[2];
	unsigned int nregion;
	struct asc_event *event[1];
	unsigned int nevent;
	struct asc_batch *batch;
};

/**
 * struct asc_wait_item - one entry of a host wait, captured at its start
 * @event: the event (the shell holds a reference through @event->refs).
 * @point: plain events: the point captured when the wait began.
 * @value: user events: the counter value waited for.
 */
struct asc_wait_item {
	struct asc_event *event;
	struct asc_point point;
	u64 value;
};

/* ABI checks: cheap, before any lookup or allocation. */
int asc_check_info(const struct accel_info *in);
int asc_check_set_device(const struct accel_device_select *s, u32 devices);
int asc_devices_param(u32 n);
int asc_device_charge(u64 *used, u64 bytes, u64 max);
int asc_check_mem_register(const struct accel_mem_register *r);
int asc_check_mem_alloc(const struct accel_mem_alloc *a);
int asc_check_mem_release(const struct accel_mem_release *r);
int asc_check_stream_create(const struct accel_stream_create *c);
int asc_check_handle(const struct accel_handle *h);
int asc_check_stream_sync(const struct accel_stream_sync *s);
int asc_check_submit(const struct accel_submit *s, u32 max_submit);
int asc_check_event_create(const struct accel_event_create *c);
int asc_check_event_signal(const struct accel_event_signal *s);
int asc_check_wait(const struct accel_wait *w, u32 max_wait);
int asc_check_wait_entry(const struct accel_wait_entry *e);
int asc_check_desc(const struct accel_desc *d);
u32 asc_memset_width(const struct accel_desc *d);
u32 asc_desc_event(const struct accel_desc *d);
u64 asc_desc_bytes(const struct accel_desc *d);
void asc_memset_fill(void *to, u64 len, u32 value, u32 width, u64 phase);
bool asc_desc_writes(const struct accel_desc *d);
bool asc_desc_reads(const struct accel_desc *d);
int asc_check_stream_query(const struct accel_stream_query *q);
int asc_check_event_query(const struct accel_event_query *q);
int asc_check_event_record(const struct accel_event_record *r,
			   struct accel_desc *d);
int asc_check_event_export(const struct accel_event_export *x);
int asc_check_event_import(const struct accel_event_import *x);
int asc_check_exec_attach(const struct accel_exec_attach *a);
int asc_check_exec_fetch(const struct accel_exec_fetch *f, u32 max_items);
int asc_check_exec_complete(const struct accel_exec_complete *c,
			    u32 max_entries);
s32 asc_clamp_priority(s32 prio);

/* Answers the shells copy out. */
#define ASC_CAPS	(ACCEL_CAP_SOFT_ENGINE | ACCEL_CAP_HOST_ALLOC | \
			 ACCEL_CAP_DEVICE_MEM | ACCEL_CAP_USER_EVENTS | \
			 ACCEL_CAP_EVENT_TIMING | ACCEL_CAP_DEFERRED_RELEASE | \
			 ACCEL_CAP_EXECUTOR | ACCEL_CAP_DEVICES | ACCEL_CAP_EVENT_FD | \
			 ACCEL_CAP_MEMSET_2D)
void asc_info_fill(struct accel_info *info, u64 caps, u64 max_pinned_bytes,
		   u64 max_device_bytes, u32 page_size);
void asc_stream_query_fill(struct accel_stream_query *q, u32 handle,
			   const struct asc_timeline *tl,
			   const struct asc_queue *queue, u32 flags, s32 prio);
void asc_event_query_fill(struct accel_event_query *q, u32 handle,
			  const struct asc_event *ev, u32 stream);

bool asc_ranges_overlap(u64 a, u64 alen, u64 b, u64 blen);

/* Descriptor validation against resolved objects, and submission. */
int asc_validate_desc(const struct accel_desc *d, const struct asc_region *dst,
		      const struct asc_region *src, const struct asc_event *ev);
bool asc_entry_external(const struct asc_entry *e);
void asc_batch_init(struct asc_batch *b, const struct accel_desc *descs,
		    u32 count);
int asc_submit_admit(const struct asc_timeline *tl, const struct asc_queue *q,
		     const struct asc_batch *b, bool executor);

/* Timelines and points. */
int asc_point_state(const struct asc_point *p);
void asc_point_get(struct asc_point *p);
void asc_point_put(struct asc_point *p, struct asc_release *rel);
int asc_timeline_check_sync(const struct asc_timeline *tl, u64 seq);
int asc_sync_target(const struct asc_timeline *tl, u64 seq, u64 *target);

/* Queues. */
void asc_enqueue(struct asc_timeline *tl, struct asc_queue *q,
		 struct asc_entry *e, struct asc_release *rel);
struct asc_entry *asc_queue_peek(const struct asc_queue *q);
int asc_entry_ready(const struct asc_entry *e);
int asc_entry_fetchable(const struct asc_entry *e);
int asc_exec_check_done(const struct asc_timeline *tl,
			const struct accel_exec_done *d);
void asc_entry_execute(struct asc_entry *e);
struct asc_entry *asc_retire_head(struct asc_timeline *tl, struct asc_queue *q,
				  int status, u64 now_ns, struct asc_release *rel);

/* The executor protocol. */
void asc_exec_item_fill(const struct asc_timeline *tl,
			const struct asc_entry *e, struct accel_exec_item *it);
bool asc_fetch_stream(struct asc_timeline *tl, struct asc_queue *q,
		      struct accel_exec_item *items, u32 max, u32 *count);
void asc_exec_attach_stream(struct asc_timeline *tl, struct asc_queue *q);
bool asc_exec_detach_next(const struct asc_timeline *tl,
			  const struct asc_queue *q);
bool asc_exec_done_next(const struct asc_timeline *tl, struct asc_queue *q,
			const struct accel_exec_done *d, int *status);

/**
 * enum asc_step - what a soft engine does next with a stream
 * @ASC_STEP_IDLE: nothing: the queue is empty, or an executor runs it.
 * @ASC_STEP_BLOCKED: the head waits for a point or a user event; whatever
 *	unblocks it wakes the engine.
 * @ASC_STEP_COPY: the head is a COPY, MEMSET or COPY_2D the shell
 *	performs (context lock dropped), then retires with 0.
 * @ASC_STEP_RETIRE: retire the head now with the status given.
 */
enum asc_step {
	ASC_STEP_IDLE,
	ASC_STEP_BLOCKED,
	ASC_STEP_COPY,
	ASC_STEP_RETIRE,
};

int asc_engine_next(const struct asc_timeline *tl, struct asc_queue *q,
		    bool closing, bool executor, int *status);
bool asc_engine_runnable(const struct asc_timeline *tl,
			 const struct asc_queue *q, bool closing, bool executor);
bool asc_engine_outranked(s32 prio, s32 other_prio,
			  const struct asc_timeline *otl,
			  const struct asc_queue *oq, bool closing,
			  bool executor);

/* Events (asc_event.c). */
void asc_event_init(struct asc_event *ev, u32 flags);
int asc_event_state(const struct asc_event *ev, int *error);
bool asc_event_signal(struct asc_event *ev, u64 value, bool error);
void asc_event_kill(struct asc_event *ev, struct asc_release *rel);
int asc_event_destroy(struct asc_event *ev, struct asc_release *rel);
int asc_event_elapsed(const struct asc_event *start, const struct asc_event *end,
		      s64 *elapsed_ns);
bool asc_event_put(struct asc_event *ev);

/* Exported and imported events (%ACCEL_IOC_EVENT_EXPORT / _IMPORT). */
#define ASC_EXPORT_MAX_PENDING	ACCEL_EXPORT_MAX_PENDING
int asc_event_export(const struct asc_event *ev, u32 npending,
		     struct asc_point *point, int *status);
int asc_export_state(const struct asc_timeline *tl, u64 seq);
void asc_import_init(struct asc_timeline *tl, struct asc_event *ev);
bool asc_import_done(struct asc_timeline *tl, int status);

/* Regions. */
int asc_region_release(struct asc_region *r, u32 flags);
bool asc_region_conflicts(const struct asc_region *r, u32 kind, u64 addr,
			  u64 size);

/* User events and host waits (asc_event.c). */
int asc_event_signal_user(struct asc_event *ev,
			  const struct accel_event_signal *s, bool *wake);
int asc_wait_entry_validate(const struct asc_event *ev,
			    const struct accel_wait_entry *e);
void asc_wait_item_init(struct asc_wait_item *it, struct asc_event *ev, u64 value);
void asc_wait_item_fini(struct asc_wait_item *it, struct asc_release *rel);
int asc_wait_check(const struct asc_wait_item *items, u32 n, bool all,
		   u32 *first);

/*
 * enum asc_ioctl - the index of a command in a shell's handler table
 * (ASC_IOC_<command>), and ASC_NR_IOCTLS, the number of commands.
 *
 * The commands come from asc_ioctls.h, the one list of them: each shell
 * builds its handler table from it and dispatches through
 * asc_ioctl_index(), so that a new command is added there and nowhere else.
 */
enum asc_ioctl {
#define ASC_IOCTL(cmd, name) \
	ASC_IOC_##cmd,
#include "asc_ioctls.h"
#undef ASC_IOCTL
	ASC_NR_IOCTLS
};

int asc_ioctl_index(unsigned int cmd);

/*
 * The default of the per-context pin limit (max_pinned_mb), from the
 * machine's RAM in bytes: a quarter of it, in MiB, at least 1.
 */
#define ASC_DEFAULT_PINNED_DIV	4
u32 asc_default_pinned_mb(u64 ram_bytes);

/* Introspection (ACCEL_IOC_QUERY, asc_query.c). */
u32 asc_query_entry_size(u32 kind);
int asc_check_query(const struct accel_query *q);
bool asc_query_visible(bool self, bool same_uid, bool admin);
void asc_stream_info_init(struct accel_stream_info *out,
			  const struct asc_timeline *tl,
			  const struct asc_queue *q);
void asc_region_info_init(struct accel_region_info *out,
			  const struct asc_region *r);

/* Limits shared by both shells. */
#define ASC_MAX_STREAMS		1024
#define ASC_MAX_EVENTS		65536
#define ASC_MAX_REGIONS		8192
#define ASC_MAX_SUBMIT		4096
#define ASC_QUEUE_DEPTH		65536
#define ASC_MAX_WAIT		256
/*
 * Stream priorities, CUDA's convention: lower is more urgent, the least
 * urgent is 0 and the default; six levels, the range CUDA reports on
 * current GPUs (cudaDeviceGetStreamPriorityRange: 0, -5).
 */
#define ASC_GREATEST_PRIORITY	(-5)
#define ASC_LEAST_PRIORITY	0
/* Most devices a shell serves (module parameter devices, ACCEL_INPROC_DEVICES). */
#define ASC_MAX_DEVICES		64

#endif /* _ASC_CORE_H */
