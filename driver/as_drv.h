/* SPDX-License-Identifier: GPL-2.0 */
/*
 * accelstream: objects of the kernel shell around the pure core.
 *
 * Lock order (the only places that take two locks):
 *   as_ctx_list_lock (mutex, module) -> as_ctx.lock (spinlock, per context)
 * The devices (&struct as_device) have no lock: their counters are atomic
 * and their workqueues live from load to unload.
 *   as_ctx.lock -> xarray lock (taken inside xa_erase) -> wait queue lock
 * as_handle_reserve(), as_handle_commit() and as_handle_cancel() take the
 * xarray lock with no context lock held. A create ioctl reserves the
 * handle, copies its reply out, and only then commits the object to it:
 * a failed copy cancels the reservation and frees what nobody ever saw.
 *   as_ctx.lock -> as_xevent.lock (an exported point, as_export.c)
 *	-> workqueue and wait queue locks (queue_work(), wake_up_all())
 * No context lock is ever taken under an as_xevent.lock, and no context
 * lock under another's: an exported point done in one context reaches the
 * contexts that imported it through a work item (as_import.work) that
 * takes the importer's lock on its own.
 * The core state under as_ctx.lock includes each user event's list of
 * queued HOST_WAITs (asc_event.waits), walked by the destroy ioctl and
 * changed by submission and retirement, all under it: no lock of its own.
 * No sleeping call is made under as_ctx.lock: pinning, unpinning, page
 * allocation, mm accounting and copy_{from,to}_user happen outside it.
 * The soft engine's inline path (a submitter running its stream's queue)
 * takes no lock of its own: it owns the stream through as_stream.work_active
 * exactly as the worker does, under as_ctx.lock.
 */
#ifndef _AS_DRV_H
#define _AS_DRV_H

#include <linux/list.h>
#include <linux/mm_types.h>
#include <linux/spinlock.h>
#include <linux/uidgid.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>

#include "asc_core.h"

#define AS_DRV_NAME	"accelstream"

struct attribute_group;
struct dentry;
struct pid;

/**
 * enum as_obj_type - what a handle names
 * @AS_OBJ_REGION: a &struct as_mem.
 * @AS_OBJ_STREAM: a &struct as_stream.
 * @AS_OBJ_EVENT: a &struct as_event_obj.
 */
enum as_obj_type {
	AS_OBJ_REGION = 1,
	AS_OBJ_STREAM,
	AS_OBJ_EVENT,
};

/**
 * struct as_obj - the common head of every object a handle names
 * @type: an &enum as_obj_type.
 * @handle: the handle, unique for the life of the context.
 */
struct as_obj {
	u32 type;
	u32 handle;
};

/**
 * struct as_device - one soft device
 * @index: its number, 0 to as_ndevices - 1.
 * @wq: its copy engine: the work items of its streams.
 * @wq_hi: the same for streams of priority below the least.
 * @device_bytes: its memory allocated, every context added up; bytes.
 * @retired: descriptors retired on its streams since load.
 */
struct as_device {
	u32 index;
	struct workqueue_struct *wq;
	struct workqueue_struct *wq_hi;
	atomic64_t device_bytes;
	atomic64_t retired;
};

/**
 * struct as_ctx - one open file of /dev/accelstream
 * @mm: the opener's mm (mmgrab'd): ioctls from another mm get -EACCES,
 *	and pinned pages show in its pinned_vm.
 * @user: the opener's user, whose locked_vm pinned pages are charged to.
 * @tgid: the opener's thread group id, for debugfs.
 * @pid: the opener's thread group (a reference), for %ACCEL_IOC_QUERY.
 * @uid: the opener's effective uid: who may see the context in a query.
 * @comm: the opener's command name, for debugfs.
 * @id: context number, for debugfs.
 * @lock: Protects every field below, the core state of every object of
 *	this context, and the object lists.
 * @handles: handle -> &struct as_obj. Erases happen under @lock; a new
 *	handle's slot is reserved, then stored once its creator learnt it.
 * @next_handle: last handle handed out; handles are never reused.
 * @streams: every &struct as_stream, live or destroyed-and-draining.
 * @regions: every &struct as_mem, live or release-deferred.
 * @events: every &struct as_event_obj, live or dead-and-referenced.
 * @wq: woken on every retirement and signal: syncs, waits, poll, release.
 * @completions: descriptors retired since the last read(2).
 * @closing: release() began: queued work is cancelled, not run.
 * @nstreams: live stream handles.
 * @nevents: live event handles.
 * @nregions: live region handles.
 * @queued: descriptors submitted and not yet retired.
 * @pinned_bytes: bytes of host memory pinned for this context.
 * @device_bytes: bytes of device memory allocated, on all devices.
 * @dev_bytes: bytes of device memory allocated on each device
 *	(as_ndevices entries), each against @max_device_bytes.
 * @device: the current device: new streams and device memory go there.
 * @max_pinned_bytes: the pin limit taken from the module parameter at open.
 * @max_device_bytes: the device memory limit on each device, taken at open.
 * @failed_streams: streams whose timeline failed.
 * @nexports: exported points of this context still pending (on their
 *	streams' @exports lists).
 * @imports: every &struct as_import of this context (imported events).
 * @executor: a userspace executor is attached: the soft engine runs
 *	nothing, the executor fetches and completes.
 * @priorities: a stream of another priority than the least was created:
 *	the soft engine checks asc_engine_outranked() before each step
 *	(never set, it costs nothing).
 * @executor_pid: the thread that attached it, for debugfs.
 * @node: in the module's context list.
 * @dbg: this context's debugfs directory.
 */
struct as_ctx {
	struct mm_struct *mm;
	struct user_struct *user;
	pid_t tgid;
	struct pid *pid;
	kuid_t uid;
	char comm[16];
	u32 id;

	spinlock_t lock;	/* Protects the context and its objects' state */
	struct xarray handles;
	u32 next_handle;
	struct list_head streams;
	struct list_head regions;
	struct list_head events;
	wait_queue_head_t wq;
	u64 completions;
	bool closing;

	u32 nstreams;
	u32 nevents;
	u32 nregions;
	u64 queued;
	u64 pinned_bytes;
	u64 device_bytes;
	u64 *dev_bytes;
	u32 device;
	u64 max_pinned_bytes;
	u64 max_device_bytes;
	u32 failed_streams;
	u32 nexports;
	struct list_head imports;
	bool executor;
	bool priorities;
	pid_t executor_pid;

	struct list_head node;
	struct dentry *dbg;
};

/**
 * enum as_mem_kind - where a region's pages come from
 * @AS_MEM_USER: user pages pinned by %ACCEL_IOC_MEM_REGISTER.
 * @AS_MEM_HOST_ALLOC: pages the driver allocated for mmap(2).
 * @AS_MEM_DEVICE: pages the driver allocated as soft device memory.
 * @AS_MEM_EXTERNAL: an executor's opaque address range; no pages.
 *
 * The values are the ACCEL_REGION_* values the executor protocol reports.
 */
enum as_mem_kind {
	AS_MEM_USER = ACCEL_REGION_HOST,
	AS_MEM_HOST_ALLOC = ACCEL_REGION_HOST_ALLOC,
	AS_MEM_DEVICE = ACCEL_REGION_DEVICE,
	AS_MEM_EXTERNAL = ACCEL_REGION_EXTERNAL,
};

/**
 * struct as_mem - a region
 * @obj: handle head.
 * @core: the core's view (size, flags, kind, registered address, in-flight
 *	count, released); @core.kind is an &enum as_mem_kind.
 * @ctx: the owning context.
 * @dev: %AS_MEM_DEVICE: the device whose memory it is.
 * @first_off: byte offset of region offset 0 in the first of @pages.
 * @pages: the pages backing the region.
 * @npages: number of @pages.
 * @charged_user: the pages are charged to the opener's RLIMIT_MEMLOCK.
 * @maps: mmap(2) calls in progress; the region is not freed while set.
 * @node: in @ctx->regions.
 * @free_node: on a local list of regions to free after unlocking.
 */
struct as_mem {
	struct as_obj obj;
	struct asc_region core;
	struct as_ctx *ctx;
	u32 dev;
	unsigned long first_off;
	struct page **pages;
	unsigned long npages;
	bool charged_user;
	u32 maps;
	struct list_head node;
	struct list_head free_node;
};

/**
 * struct as_stream - a stream
 * @obj: handle head.
 * @tl: its timeline (core).
 * @q: its queue of validated descriptors (core).
 * @ctx: the owning context.
 * @dev: the device it runs on (its engine), fixed at creation.
 * @work: the soft engine's work item for this stream.
 * @work_active: @work is queued or running, or a submitting thread runs
 *	the queue inline; set and cleared under @ctx->lock. While set that
 *	owner runs the queue (one at a time, in order) and owns the stream's
 *	freeing.
 * @spare: a retired batch of at most %AS_SPARE_ENTRIES entries kept for
 *	the next submission of as many or fewer, so that a stream submitting
 *	over and over allocates nothing; NULL if none. Freed with the stream.
 * @spare_cap: the entries @spare has room for.
 * @destroyed: the handle is gone; freed once drained and unreferenced.
 * @flags: creation flags.
 * @priority: effective priority.
 * @exports: pending &struct as_xevent of points on this stream, by
 *	ascending sequence number (as_export.c).
 * @node: in @ctx->streams.
 * @free_node: on a local list of streams to free after unlocking.
 */
struct as_stream {
	struct as_obj obj;
	struct asc_timeline tl;
	struct asc_queue q;
	struct as_ctx *ctx;
	u32 dev;
	struct work_struct work;
	bool work_active;
	struct asc_batch *spare;
	u32 spare_cap;
	bool destroyed;
	u32 flags;
	s32 priority;
	struct list_head exports;
	struct list_head node;
	struct list_head free_node;
};

/*
 * The largest batch a stream keeps for reuse (about 8 KiB): bounds what an
 * idle stream holds while sparing the common submission its allocation.
 */
#define AS_SPARE_ENTRIES	64

/**
 * struct as_event_obj - an event
 * @obj: handle head.
 * @core: the core's view.
 * @node: in the context's event list.
 * @free_node: on a local list of events to free after unlocking.
 */
struct as_event_obj {
	struct as_obj obj;
	struct asc_event core;
	struct list_head node;
	struct list_head free_node;
};

/**
 * struct as_freelist - objects to free once the context lock is dropped
 * @streams: &struct as_stream via @free_node.
 * @regions: &struct as_mem via @free_node.
 * @events: &struct as_event_obj via @free_node.
 * @imports: &struct as_import via @free_node.
 * @batches: &struct asc_batch via its @next, freed with kvfree().
 */
struct as_freelist {
	struct list_head streams;
	struct list_head regions;
	struct list_head events;
	struct list_head imports;
	struct asc_batch *batches;
};

static inline struct as_stream *to_as_stream(struct asc_timeline *tl)
{
	return container_of(tl, struct as_stream, tl);
}

static inline struct as_mem *to_as_mem(struct asc_region *r)
{
	return container_of(r, struct as_mem, core);
}

static inline struct as_event_obj *to_as_event(struct asc_event *ev)
{
	return container_of(ev, struct as_event_obj, core);
}

/* as_drv.c */
u64 as_max_device_bytes(void);

/* as_device.c */
extern struct as_device *as_devices;
extern u32 as_ndevices;
int as_devices_init(void);
void as_devices_fini(void);
u32 as_query_devices(struct accel_device_info *buf, u32 room);
extern atomic64_t as_submitted_total;
extern atomic64_t as_retired_total;
extern struct mutex as_ctx_list_lock;
extern struct list_head as_ctx_list;

struct as_obj *as_lookup_locked(struct as_ctx *ctx, u32 handle, u32 type);

static inline struct as_stream *as_stream_lookup_locked(struct as_ctx *ctx,
							u32 handle)
{
	struct as_obj *obj = as_lookup_locked(ctx, handle, AS_OBJ_STREAM);

	return obj ? container_of(obj, struct as_stream, obj) : NULL;
}

static inline struct as_mem *as_region_lookup_locked(struct as_ctx *ctx,
						     u32 handle)
{
	struct as_obj *obj = as_lookup_locked(ctx, handle, AS_OBJ_REGION);

	return obj ? container_of(obj, struct as_mem, obj) : NULL;
}

static inline struct as_event_obj *as_event_lookup_locked(struct as_ctx *ctx,
							  u32 handle)
{
	struct as_obj *obj = as_lookup_locked(ctx, handle, AS_OBJ_EVENT);

	return obj ? container_of(obj, struct as_event_obj, obj) : NULL;
}

int as_handle_reserve(struct as_ctx *ctx, struct as_obj *obj, u32 type);
void as_handle_commit(struct as_ctx *ctx, struct as_obj *obj);
void as_handle_cancel(struct as_ctx *ctx, struct as_obj *obj);
void as_freelist_init(struct as_freelist *fl);
void as_collect_locked(struct as_ctx *ctx, struct asc_release *rel,
		       struct as_freelist *fl);
void as_freelist_free(struct as_ctx *ctx, struct as_freelist *fl);
bool as_freelist_empty(const struct as_freelist *fl);
int as_ctx_wait(struct as_ctx *ctx, int (*check)(struct as_ctx *ctx, void *arg),
		void *arg, u64 timeout_ns);

/* as_mem.c */
int as_mem_register_ioctl(struct as_ctx *ctx, void __user *arg);
int as_mem_alloc_ioctl(struct as_ctx *ctx, void __user *arg);
int as_mem_release_ioctl(struct as_ctx *ctx, void __user *arg);
int as_mem_mmap(struct as_ctx *ctx, struct vm_area_struct *vma);
bool as_mem_freeable_locked(struct as_ctx *ctx, struct as_mem *m);
void as_mem_free(struct as_ctx *ctx, struct as_mem *m);

/* as_stream.c */
int as_stream_create_ioctl(struct as_ctx *ctx, void __user *arg);
int as_stream_destroy_ioctl(struct as_ctx *ctx, void __user *arg);
int as_stream_query_ioctl(struct as_ctx *ctx, void __user *arg);
int as_stream_sync_ioctl(struct as_ctx *ctx, void __user *arg);
int as_submit_ioctl(struct as_ctx *ctx, void __user *arg);
int as_submit(struct as_ctx *ctx, u32 stream, const struct accel_desc *descs,
	      u32 count, u64 *seq);
bool as_stream_freeable_locked(struct as_ctx *ctx, struct as_stream *s);
struct asc_batch *as_stream_keep_batch_locked(struct as_ctx *ctx,
					      struct as_stream *s,
					      struct asc_batch *b);
void as_stream_free(struct as_stream *s);

/* as_event.c */
int as_event_create_ioctl(struct as_ctx *ctx, void __user *arg);
int as_event_destroy_ioctl(struct as_ctx *ctx, void __user *arg);
int as_event_record_ioctl(struct as_ctx *ctx, void __user *arg);
int as_event_query_ioctl(struct as_ctx *ctx, void __user *arg);
int as_event_elapsed_ioctl(struct as_ctx *ctx, void __user *arg);
int as_event_signal_ioctl(struct as_ctx *ctx, void __user *arg);
int as_wait_ioctl(struct as_ctx *ctx, void __user *arg);

/* as_export.c */
struct as_import;
int as_event_export_ioctl(struct as_ctx *ctx, void __user *arg);
int as_event_import_ioctl(struct as_ctx *ctx, void __user *arg);
void as_export_retired_locked(struct as_ctx *ctx, struct as_stream *s);
void as_export_ctx_close_locked(struct as_ctx *ctx);
struct as_import *to_as_import(struct asc_timeline *tl);
void as_import_unlist_locked(struct as_ctx *ctx, struct as_import *imp,
			     struct as_freelist *fl);
void as_imports_unlist_all_locked(struct as_ctx *ctx, struct as_freelist *fl);
void as_imports_free(struct list_head *imports);

/* as_engine.c */
void as_engine_work(struct work_struct *work);
void as_retire_locked(struct as_ctx *ctx, struct as_stream *s, int status,
		      struct as_freelist *fl);
void as_stream_kick_locked(struct as_ctx *ctx, struct as_stream *s);
void as_engine_submit_locked(struct as_ctx *ctx, struct as_stream *s,
			     struct as_freelist *fl);
void as_ctx_kick_all_locked(struct as_ctx *ctx);
void as_ctx_wake_locked(struct as_ctx *ctx);

/* as_exec.c */
int as_exec_attach_ioctl(struct as_ctx *ctx, void __user *arg);
int as_exec_detach_ioctl(struct as_ctx *ctx, void __user *arg);
int as_exec_fetch_ioctl(struct as_ctx *ctx, void __user *arg);
int as_exec_complete_ioctl(struct as_ctx *ctx, void __user *arg);

/**
 * struct as_totals - every context's objects and bytes, added up
 * @contexts: open files.
 * @streams: streams, draining ones included.
 * @events: events, dead-and-referenced ones included.
 * @regions: regions, release-deferred ones included.
 * @queued: descriptors submitted and not retired.
 * @pinned_bytes: host bytes pinned.
 * @device_bytes: device bytes allocated.
 * @submitted_total: descriptors submitted since load.
 * @retired_total: descriptors retired since load.
 */
struct as_totals {
	u64 contexts;
	u64 streams;
	u64 events;
	u64 regions;
	u64 queued;
	u64 pinned_bytes;
	u64 device_bytes;
	u64 submitted_total;
	u64 retired_total;
};

/* as_sysfs.c */
extern const struct attribute_group *as_sysfs_groups[];
void as_totals(struct as_totals *t);
int as_query_ioctl(struct as_ctx *self, void __user *arg);

/* as_device.c */
int as_set_device_ioctl(struct as_ctx *ctx, void __user *arg);

/* as_debugfs.c */
void as_debugfs_init(void);
void as_debugfs_fini(void);
void as_debugfs_ctx_init(struct as_ctx *ctx);
void as_debugfs_ctx_fini(struct as_ctx *ctx);

#endif /* _AS_DRV_H */
