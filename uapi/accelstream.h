/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * accelstream: streams, events and asynchronous copies over pinned memory.
 *
 * Copyright (C) 2026 The accelstream authors
 */
#ifndef _UAPI_LINUX_ACCELSTREAM_H
#define _UAPI_LINUX_ACCELSTREAM_H

#include <linux/types.h>
#include <linux/ioctl.h>

/**
 * DOC: overview
 *
 * Every open file of ``/dev/accelstream`` is one *context*. All handles
 * (regions, streams, events) are u32 values private to that file, never 0,
 * and never reused while the file is open. Closing the file cancels the work
 * that has not started, waits for the copies that have, and releases every
 * pin and allocation. Only the process that opened the file (the same mm)
 * may issue ioctls on it; any other gets ``-EACCES``.
 *
 * A *region* is memory a descriptor may name: a registered user range
 * (pinned with FOLL_LONGTERM and charged to RLIMIT_MEMLOCK), a pinned host
 * buffer the driver allocates and the user maps with mmap(2) (the
 * equivalent of cudaMallocHost / aclrtMallocHost), or device memory
 * (cudaMalloc / aclrtMalloc). Every queued descriptor that names a region
 * holds a reference on it: the pages stay pinned until the descriptor
 * retires, whatever the process does to its mappings.
 *
 * A *stream* is an in-order queue with a 64-bit timeline. Each submitted
 * descriptor takes the next sequence number (the first is 1); descriptor N
 * has finished when the stream's completed count is at least N.
 *
 * An *event* is a captured point (stream, sequence number). Recording
 * captures the stream's last submitted descriptor at the time of the record;
 * a stream wait captures the event's point at the time the wait is
 * submitted. An event never recorded is complete. A *user event*
 * (%ACCEL_EVENT_USER) is instead a 64-bit counter that the host or a
 * %ACCEL_OP_HOST_SIGNAL descriptor raises, so that streams can be gated
 * deterministically.
 *
 * Errors are sticky per stream: once a descriptor fails, the descriptors
 * queued behind it are retired without running, later submissions fail with
 * ``-EIO``, and every wait on a point at or after the failure returns
 * ``-EIO``. Destroying the stream still works.
 *
 * Timeouts are absolute CLOCK_MONOTONIC times in nanoseconds, so that a wait
 * interrupted by a signal restarts with the same deadline. %ACCEL_TIMEOUT_INFINITE
 * waits forever; any time in the past (0, say) polls.
 *
 * Reserved and padding fields must be zero and unknown flag bits must be
 * clear, or the ioctl fails with ``-EINVAL``; output structures are written
 * in full. Unknown commands fail with ``-ENOTTY``. Features are discovered
 * through the capability bits of &struct accel_info, not the version.
 */

/**
 * DOC: completions
 *
 * The file is also a completion counter, for event loops: read(2) of 8
 * bytes returns, as a native-endian __u64, how many descriptors of this
 * context retired since the previous read, and resets it; it blocks while
 * the count is zero (``-EAGAIN`` with O_NONBLOCK). poll(2) reports
 * EPOLLIN while the count is not zero. A read of fewer than 8 bytes fails
 * with ``-EINVAL``.
 *
 * These are the semantics of a non-semaphore eventfd(2), which the
 * in-process model of libaccel hands out in its place: readiness is
 * level-triggered on "something retired since the last read", so the
 * read is the acknowledgement. An epoll(7) loop either reads the count on
 * every EPOLLIN (level-triggered) or, with EPOLLET, is told once per burst
 * of retirements that arrive after its previous read. Polled from a
 * process other than the opener the file reports EPOLLERR, and read(2)
 * fails with ``-EACCES``.
 */

/** @ACCEL_ABI_VERSION: the ABI version this header describes. */
#define ACCEL_ABI_VERSION		1

/** @ACCEL_TIMEOUT_INFINITE: wait without a deadline. */
#ifndef ACCEL_TIMEOUT_INFINITE
#define ACCEL_TIMEOUT_INFINITE		(~(__u64)0)
#endif

/* Capability bits of accel_info.caps. */
/** @ACCEL_CAP_SOFT_ENGINE: the in-kernel CPU copy engine runs the queues. */
#define ACCEL_CAP_SOFT_ENGINE		(1ULL << 0)
/** @ACCEL_CAP_HOST_ALLOC: %ACCEL_MEM_HOST allocations that can be mmapped. */
#define ACCEL_CAP_HOST_ALLOC		(1ULL << 1)
/** @ACCEL_CAP_DEVICE_MEM: %ACCEL_MEM_DEVICE allocations. */
#define ACCEL_CAP_DEVICE_MEM		(1ULL << 2)
/** @ACCEL_CAP_USER_EVENTS: %ACCEL_EVENT_USER and the HOST_WAIT/HOST_SIGNAL ops. */
#define ACCEL_CAP_USER_EVENTS		(1ULL << 3)
/** @ACCEL_CAP_EVENT_TIMING: %ACCEL_EVENT_TIMING and %ACCEL_IOC_EVENT_ELAPSED. */
#define ACCEL_CAP_EVENT_TIMING		(1ULL << 4)
/** @ACCEL_CAP_POLL: poll(2) and read(2) report retired descriptors. */
#define ACCEL_CAP_POLL			(1ULL << 5)
/** @ACCEL_CAP_DEFERRED_RELEASE: %ACCEL_MEM_RELEASE_DEFERRED. */
#define ACCEL_CAP_DEFERRED_RELEASE	(1ULL << 6)
/** @ACCEL_CAP_EXECUTOR: the userspace executor protocol (ACCEL_IOC_EXEC_*). */
#define ACCEL_CAP_EXECUTOR		(1ULL << 7)
/** @ACCEL_CAP_QUERY: %ACCEL_IOC_QUERY lists contexts, streams and regions. */
#define ACCEL_CAP_QUERY			(1ULL << 8)
/** @ACCEL_CAP_DEVICES: accel_info.devices, SET_DEVICE and QUERY_DEVICES. */
#define ACCEL_CAP_DEVICES		(1ULL << 9)
/** @ACCEL_CAP_EVENT_FD: %ACCEL_IOC_EVENT_EXPORT and %ACCEL_IOC_EVENT_IMPORT. */
#define ACCEL_CAP_EVENT_FD		(1ULL << 10)
/** @ACCEL_CAP_MEMSET_2D: the %ACCEL_OP_MEMSET and %ACCEL_OP_COPY_2D ops. */
#define ACCEL_CAP_MEMSET_2D		(1ULL << 11)

/**
 * struct accel_info - what the driver is and what it can do
 * @abi_version: %ACCEL_ABI_VERSION of the driver. A library built for a
 *	different major ABI must refuse to run and say which side to upgrade.
 * @flags: must be zero on input; zero on output.
 * @caps: ACCEL_CAP_* bits.
 * @max_streams: most live streams per context.
 * @max_events: most live events per context.
 * @max_regions: most live regions per context.
 * @max_submit: most descriptors in one %ACCEL_IOC_SUBMIT.
 * @queue_depth: most descriptors queued (not yet retired) on one stream;
 *	a submission that would exceed it fails with ``-EAGAIN``.
 * @max_wait: most entries in one %ACCEL_IOC_WAIT.
 * @greatest_priority: numerically lowest (most urgent) stream priority;
 *	-5 today.
 * @least_priority: numerically highest (least urgent) stream priority,
 *	also the default; 0. Every value in between is a level of its own
 *	(CUDA's convention and, on current GPUs, CUDA's range).
 *	Out-of-range priorities are clamped, as in CUDA.
 * @max_pinned_bytes: most bytes one context may pin (registered and host
 *	allocations), before RLIMIT_MEMLOCK applies; bytes.
 * @max_device_bytes: most device memory one context may allocate; bytes.
 * @page_size: the granule of pinning and of mmap offsets; bytes.
 * @devices: with %ACCEL_CAP_DEVICES: how many devices the driver serves,
 *	numbered 0 to @devices - 1 (cudaGetDeviceCount); at least 1. An
 *	output, as the limits are: its input value is ignored. A driver
 *	without the capability writes 0 here (a reserved field then): it
 *	serves one device.
 * @reserved: must be zero on input; zero on output.
 */
struct accel_info {
	__u32 abi_version;
	__u32 flags;
	__u64 caps;
	__u32 max_streams;
	__u32 max_events;
	__u32 max_regions;
	__u32 max_submit;
	__u32 queue_depth;
	__u32 max_wait;
	__s32 greatest_priority;
	__s32 least_priority;
	__u64 max_pinned_bytes;
	__u64 max_device_bytes;
	__u32 page_size;
	__u32 devices;
	__u32 reserved[4];
};

/* Region flags. */
/** @ACCEL_MEM_READONLY: register: the device only reads it (no FOLL_WRITE). */
#define ACCEL_MEM_READONLY		(1U << 0)
/** @ACCEL_MEM_HOST: alloc: pinned host memory, mapped with mmap(2). */
#define ACCEL_MEM_HOST			(1U << 1)
/** @ACCEL_MEM_DEVICE: alloc: device memory. */
#define ACCEL_MEM_DEVICE		(1U << 2)
/** @ACCEL_MEM_EXTERNAL: register: an executor's opaque range, not pinned. */
#define ACCEL_MEM_EXTERNAL		(1U << 3)

/**
 * struct accel_mem_register - pin a user range (cudaHostRegister)
 * @addr: in: start of the range, any alignment; a user virtual address.
 * @size: in: length of the range in bytes, not zero.
 * @flags: in: 0, %ACCEL_MEM_READONLY, or %ACCEL_MEM_EXTERNAL.
 * @handle: out: the region's handle.
 *
 * Pins every page the range touches with FOLL_LONGTERM (and FOLL_WRITE
 * unless %ACCEL_MEM_READONLY), charging them to the user's locked memory
 * against RLIMIT_MEMLOCK (as io_uring does) unless the caller has
 * CAP_IPC_LOCK; they show as VmPin in /proc/PID/status. Region offsets
 * count from @addr.
 *
 * Errors: ``-EINVAL`` zero size, wrapping range, unknown flags;
 * ``-EEXIST`` the range overlaps a registered range of this context;
 * ``-EFAULT`` part of the range is not mapped, or is VM_IO/VM_PFNMAP, or is
 * not writable without %ACCEL_MEM_READONLY; ``-ENOMEM`` past
 * RLIMIT_MEMLOCK or @max_pinned_bytes, or out of memory; ``-ENOSPC`` too
 * many regions. With %ACCEL_MEM_EXTERNAL the range is an opaque part of an
 * executor's address space (a cudaMalloc pointer, say): nothing is pinned
 * or charged, only an attached executor can run copies that name it, and
 * the range only has to not overlap another external range (``-EEXIST``).
 */
struct accel_mem_register {
	__u64 addr;
	__u64 size;
	__u32 flags;
	__u32 handle;
};

/**
 * struct accel_mem_alloc - allocate pinned host or device memory
 * @size: in: bytes, not zero; rounded up to whole pages.
 * @flags: in: exactly one of %ACCEL_MEM_HOST (cudaMallocHost) or
 *	%ACCEL_MEM_DEVICE (cudaMalloc).
 * @handle: out: the region's handle.
 * @mmap_offset: out: for %ACCEL_MEM_HOST, the offset to pass to mmap(2)
 *	(MAP_SHARED, length at most the rounded size); 0 for device memory.
 *
 * Memory is zeroed. Host allocations count against RLIMIT_MEMLOCK and
 * @max_pinned_bytes; device allocations against @max_device_bytes.
 *
 * Errors: ``-EINVAL`` zero size or bad flags; ``-ENOMEM`` past a limit
 * (or above 2^46 bytes) or out of memory; ``-ENOSPC`` too many regions;
 * ``-EINTR`` a fatal signal arrived while the pages were allocated.
 */
struct accel_mem_alloc {
	__u64 size;
	__u32 flags;
	__u32 handle;
	__u64 mmap_offset;
};

/** @ACCEL_MEM_RELEASE_DEFERRED: release when the last queued use retires. */
#define ACCEL_MEM_RELEASE_DEFERRED	(1U << 0)

/**
 * struct accel_mem_release - unregister or free a region
 * @handle: in: the region.
 * @flags: in: 0 or %ACCEL_MEM_RELEASE_DEFERRED.
 *
 * Without a flag, a region named by queued descriptors is not touched and
 * the call fails with ``-EBUSY``. With %ACCEL_MEM_RELEASE_DEFERRED the
 * handle dies at once and the pages are unpinned (or freed) when the last
 * descriptor naming them retires (stream-ordered free, cudaFreeAsync).
 *
 * Errors: ``-ENOENT`` unknown handle; ``-EINVAL`` bad flags;
 * ``-EBUSY`` queued work names the region.
 */
struct accel_mem_release {
	__u32 handle;
	__u32 flags;
};

/** @ACCEL_STREAM_NON_BLOCKING: cudaStreamNonBlocking; recorded and reported. */
#define ACCEL_STREAM_NON_BLOCKING	(1U << 0)

/**
 * struct accel_stream_create - create a stream (cudaStreamCreateWithPriority)
 * @flags: in: 0 or %ACCEL_STREAM_NON_BLOCKING.
 * @priority: in: lower is more urgent; clamped to the range of
 *	&struct accel_info (@greatest_priority to @least_priority); out: the
 *	effective priority. The soft engine takes the more urgent stream's
 *	ready work first: a stream runs its next descriptor only while no
 *	stream of the same context with a more urgent priority has work ready
 *	to run (a stream blocked on a wait holds nobody back), and streams of
 *	one priority run concurrently; those above the least priority run on
 *	a high-priority workqueue. An attached executor orders the streams on
 *	its device (the CUDA executor: cudaStreamCreateWithPriority).
 * @handle: out: the stream's handle.
 * @pad: must be zero.
 *
 * Errors: ``-EINVAL`` unknown flags or nonzero pad; ``-ENOSPC`` too many
 * streams; ``-ENOMEM``.
 */
struct accel_stream_create {
	__u32 flags;
	__s32 priority;
	__u32 handle;
	__u32 pad;
};

/**
 * struct accel_handle - an ioctl argument that names one object
 * @handle: in: the object.
 * @pad: must be zero.
 *
 * Used by %ACCEL_IOC_STREAM_DESTROY and %ACCEL_IOC_EVENT_DESTROY. A
 * destroyed stream's handle dies at once; its queued work still runs, then
 * its resources go (cudaStreamDestroy). A user event is not destroyed
 * while a queued %ACCEL_OP_HOST_WAIT on it waits for a value above its
 * counter: once the handle is gone nothing could be sure to raise it (a
 * queued %ACCEL_OP_HOST_SIGNAL may never run), and the waiting stream
 * would be blocked until close. Errors: ``-ENOENT`` unknown handle;
 * ``-EINVAL`` nonzero pad; ``-EBUSY`` (EVENT_DESTROY) such a wait is
 * queued, on any stream of the context: nothing changed, the event and
 * its handle are as they were (signal it first).
 */
struct accel_handle {
	__u32 handle;
	__u32 pad;
};

/**
 * struct accel_stream_query - a stream's state (cudaStreamQuery)
 * @handle: in: the stream.
 * @pad: must be zero.
 * @submitted: out: sequence number of the last submitted descriptor.
 * @completed: out: all descriptors up to this sequence number retired.
 * @error: out: 0, or the negative errno that made the stream fail.
 * @flags: out: the creation flags.
 * @priority: out: the effective (clamped) priority.
 * @queued: out: descriptors submitted and not yet retired.
 *
 * Errors: ``-ENOENT`` unknown handle; ``-EINVAL`` nonzero pad.
 */
struct accel_stream_query {
	__u32 handle;
	__u32 pad;
	__u64 submitted;
	__u64 completed;
	__s32 error;
	__u32 flags;
	__s32 priority;
	__u32 queued;
};

/**
 * struct accel_stream_sync - wait for a stream (cudaStreamSynchronize)
 * @handle: in: the stream.
 * @flags: must be zero.
 * @seq: in: wait until this sequence number retired; 0 means everything
 *	submitted when the call started.
 * @timeout_ns: in: absolute CLOCK_MONOTONIC deadline in nanoseconds, or
 *	%ACCEL_TIMEOUT_INFINITE.
 *
 * Errors: ``-ENOENT`` unknown handle; ``-EINVAL`` bad flags or @seq past
 * the last submitted; ``-ETIME`` deadline passed; ``-EIO`` the stream
 * failed at or before @seq; ``-EINTR`` (restarted by the kernel where the
 * signal allows) a signal arrived.
 */
struct accel_stream_sync {
	__u32 handle;
	__u32 flags;
	__u64 seq;
	__u64 timeout_ns;
};

/**
 * enum accel_op - what a descriptor does
 * @ACCEL_OP_NOP: nothing; retires in order (a marker).
 * @ACCEL_OP_COPY: copy @length bytes from (@src, @src_offset) to
 *	(@dst, @dst_offset) (cudaMemcpyAsync). Any two region kinds.
 * @ACCEL_OP_EVENT_RECORD: capture this point in @event (cudaEventRecord).
 * @ACCEL_OP_STREAM_WAIT: later descriptors of this stream wait until the
 *	point @event holds at submission time completes
 *	(cudaStreamWaitEvent). A never-recorded event waits for nothing.
 * @ACCEL_OP_HOST_WAIT: wait until user event @event reaches @value
 *	(cuStreamWaitValue64 with GEQ). While it waits, destroying @event
 *	fails with ``-EBUSY``.
 * @ACCEL_OP_HOST_SIGNAL: raise user event @event to @value
 *	(cuStreamWriteValue64), never lowering it.
 * @ACCEL_OP_MEMSET: fill @length bytes of (@dst, @dst_offset) with
 *	elements of @value (cudaMemsetAsync, cuMemsetD16Async,
 *	cuMemsetD32Async; aclrtMemsetAsync). Any writable region kind.
 * @ACCEL_OP_COPY_2D: copy @height rows of @width bytes from (@src,
 *	@src_offset) to (@dst, @dst_offset), row i starting i * @src_pitch
 *	bytes after the first in the source and i * @dst_pitch in the
 *	destination (cudaMemcpy2DAsync; aclrtMemcpy2dAsync). Any two
 *	region kinds.
 */
enum accel_op {
	ACCEL_OP_NOP = 0,
	ACCEL_OP_COPY = 1,
	ACCEL_OP_EVENT_RECORD = 2,
	ACCEL_OP_STREAM_WAIT = 3,
	ACCEL_OP_HOST_WAIT = 4,
	ACCEL_OP_HOST_SIGNAL = 5,
	ACCEL_OP_MEMSET = 6,
	ACCEL_OP_COPY_2D = 7,
};

/* accel_desc.flags of %ACCEL_OP_MEMSET; neither: 8-bit elements. */
/** @ACCEL_MEMSET_D16: 16-bit elements (cuMemsetD16Async). */
#define ACCEL_MEMSET_D16		(1U << 0)
/** @ACCEL_MEMSET_D32: 32-bit elements (cuMemsetD32Async). */
#define ACCEL_MEMSET_D32		(1U << 1)

/**
 * struct accel_desc - one queued operation; 64 bytes, ring-friendly
 * @op: an &enum accel_op.
 * @flags: MEMSET: 0 (8-bit elements), %ACCEL_MEMSET_D16 or
 *	%ACCEL_MEMSET_D32; otherwise zero.
 * @dst: COPY, MEMSET, COPY_2D: destination region handle; otherwise zero.
 * @src: COPY, COPY_2D: source region handle; otherwise zero.
 * @dst_offset: COPY, MEMSET, COPY_2D: byte offset into @dst (of the first
 *	row for COPY_2D); otherwise zero. MEMSET: the first element's
 *	address must be a multiple of the element size (for a registered
 *	range, its address plus @dst_offset; the other kinds start on a
 *	page, so @dst_offset itself).
 * @src_offset: COPY, COPY_2D: byte offset into @src (of the first row);
 *	otherwise zero.
 * @length: COPY: bytes to copy (0 is a no-op); MEMSET: bytes to fill, a
 *	multiple of the element size (0 is a no-op); otherwise zero.
 * @width: COPY_2D: bytes of every row (0 is a no-op); the same field as
 *	@length.
 * @event: EVENT_RECORD, STREAM_WAIT, HOST_WAIT, HOST_SIGNAL: event handle
 *	(a user event for the HOST ops, a plain one for the others);
 *	otherwise zero.
 * @dst_pitch: COPY_2D: bytes from the start of one destination row to the
 *	next, at least @width; the same field as @event.
 * @reserved: must be zero, except for COPY_2D, where it is @src_pitch.
 * @src_pitch: COPY_2D: bytes from the start of one source row to the next,
 *	at least @width; the same field as @reserved.
 * @value: HOST_WAIT, HOST_SIGNAL: the counter value; MEMSET: the element
 *	value, in its low 8, 16 or 32 bits (the bits above must be zero);
 *	otherwise zero.
 * @height: COPY_2D: number of rows (0 is a no-op); the same field as
 *	@value.
 * @user_data: opaque; any value.
 *
 * Fields an op does not use must be zero, so that they can gain a meaning
 * later. Each descriptor takes one sequence number on its stream.
 *
 * A COPY_2D touches bytes [@dst_offset, @dst_offset + (@height - 1) *
 * @dst_pitch + @width) of @dst and likewise of @src; that span must lie
 * inside the region (every row then does: the pitches are at least
 * @width), computed with overflow checks. Pitches are 32-bit, as CUDA's
 * are below 2^31 (cudaDevAttrMaxPitch). Areas that overlap in one region
 * give an unspecified result, as with cudaMemcpy2DAsync.
 */
struct accel_desc {
	__u32 op;
	__u32 flags;
	__u32 dst;
	__u32 src;
	__u64 dst_offset;
	__u64 src_offset;
	union {
		__u64 length;
		__u64 width;
	};
	union {
		__u32 event;
		__u32 dst_pitch;
	};
	union {
		__u32 reserved;
		__u32 src_pitch;
	};
	union {
		__u64 value;
		__u64 height;
	};
	__u64 user_data;
};

/**
 * struct accel_submit - queue descriptors on a stream
 * @stream: in: the stream.
 * @count: in: number of descriptors, 1 to @max_submit.
 * @descs: in: user pointer to @count &struct accel_desc.
 * @flags: must be zero.
 * @pad: must be zero.
 * @seq: out: the sequence number of the last descriptor; the first is
 *	@seq - @count + 1.
 *
 * All descriptors are validated before any is queued: on error nothing is
 * queued and @seq is not written.
 *
 * Errors: ``-ENOENT`` unknown stream, region or event handle;
 * ``-EINVAL`` bad count, op, flags, reserved or unused fields, a COPY,
 * MEMSET or COPY_2D out of its region's bounds (offsets, lengths and rows
 * are checked for overflow), a MEMSET whose start or @length is not a
 * multiple of its element size or whose @value does not fit in it, a
 * COPY_2D pitch below its @width, a plain event in a HOST op, a user
 * event in a RECORD/WAIT, or an imported event (%ACCEL_EVENT_IMPORTED) in
 * a RECORD;
 * ``-EPERM`` a COPY, MEMSET or COPY_2D into a %ACCEL_MEM_READONLY region;
 * ``-EFAULT`` bad
 * @descs; ``-EAGAIN`` the stream's queue would exceed @queue_depth;
 * ``-EIO`` the stream has failed; ``-ENXIO`` a COPY, MEMSET or COPY_2D
 * names an %ACCEL_MEM_EXTERNAL region and no executor is attached; ``-ENOMEM``.
 */
struct accel_submit {
	__u32 stream;
	__u32 count;
	__u64 descs;
	__u32 flags;
	__u32 pad;
	__u64 seq;
};

/* Event flags. */
/** @ACCEL_EVENT_TIMING: keep completion timestamps (no cudaEventDisableTiming). */
#define ACCEL_EVENT_TIMING		(1U << 0)
/** @ACCEL_EVENT_USER: a host-signalled counter, not a stream point. */
#define ACCEL_EVENT_USER		(1U << 1)
/* Output only (event query); ACCEL_IOC_EVENT_CREATE refuses it: -EINVAL. */
/** @ACCEL_EVENT_IMPORTED: the event came from %ACCEL_IOC_EVENT_IMPORT. */
#define ACCEL_EVENT_IMPORTED		(1U << 2)

/**
 * struct accel_event_create - create an event (cudaEventCreateWithFlags)
 * @flags: in: 0, %ACCEL_EVENT_TIMING, or %ACCEL_EVENT_USER.
 * @handle: out: the event's handle.
 *
 * Errors: ``-EINVAL`` unknown or conflicting flags; ``-ENOSPC`` too many
 * events; ``-ENOMEM``.
 */
struct accel_event_create {
	__u32 flags;
	__u32 handle;
};

/**
 * struct accel_event_record - record an event on a stream (cudaEventRecord)
 * @event: in: a plain event.
 * @stream: in: the stream.
 * @seq: out: the sequence number of the record descriptor.
 *
 * The same as submitting one %ACCEL_OP_EVENT_RECORD.
 * Errors: those of %ACCEL_IOC_SUBMIT.
 */
struct accel_event_record {
	__u32 event;
	__u32 stream;
	__u64 seq;
};

/** @ACCEL_EVENT_STATE_COMPLETE: the captured point has retired. */
#define ACCEL_EVENT_STATE_COMPLETE	0
/** @ACCEL_EVENT_STATE_PENDING: the captured point has not retired. */
#define ACCEL_EVENT_STATE_PENDING	1

/**
 * struct accel_event_query - an event's state (cudaEventQuery)
 * @handle: in: the event.
 * @pad: must be zero.
 * @state: out: %ACCEL_EVENT_STATE_COMPLETE or %ACCEL_EVENT_STATE_PENDING;
 *	a user event is complete once its @value is not zero.
 * @error: out: 0, or ``-EIO`` when the captured stream failed at or
 *	before the point (or the user event was signalled with an error).
 * @stream: out: the stream of the captured point, 0 if never recorded
 *	(or if that stream's handle is gone).
 * @flags: out: the creation flags.
 * @seq: out: the captured sequence number, 0 if never recorded.
 * @value: out: a user event's counter; 0 for plain events.
 * @timestamp_ns: out: %ACCEL_EVENT_TIMING: CLOCK_MONOTONIC time at which
 *	the point retired, 0 until then.
 *
 * Errors: ``-ENOENT`` unknown handle; ``-EINVAL`` nonzero pad.
 */
struct accel_event_query {
	__u32 handle;
	__u32 pad;
	__u32 state;
	__s32 error;
	__u32 stream;
	__u32 flags;
	__u64 seq;
	__u64 value;
	__u64 timestamp_ns;
};

/**
 * struct accel_event_elapsed - time between two events (cudaEventElapsedTime)
 * @start: in: a completed %ACCEL_EVENT_TIMING event.
 * @end: in: a completed %ACCEL_EVENT_TIMING event.
 * @elapsed_ns: out: @end's timestamp minus @start's, nanoseconds (negative
 *	when @end retired first).
 *
 * Errors: ``-ENOENT`` unknown handle; ``-EINVAL`` an event without
 * %ACCEL_EVENT_TIMING, or never recorded; ``-EAGAIN`` not both complete
 * (cudaErrorNotReady); ``-EIO`` a point failed.
 */
struct accel_event_elapsed {
	__u32 start;
	__u32 end;
	__s64 elapsed_ns;
};

/** @ACCEL_SIGNAL_ERROR: fail the waiters of the user event with -EIO. */
#define ACCEL_SIGNAL_ERROR		(1U << 0)

/**
 * struct accel_event_signal - raise a user event from the host
 * @handle: in: a user event.
 * @flags: in: 0 or %ACCEL_SIGNAL_ERROR.
 * @value: in: the new counter value; a value not above the current one
 *	changes nothing.
 *
 * With %ACCEL_SIGNAL_ERROR the event becomes failed: every HOST_WAIT on it
 * fails (making its stream fail) and host waits on it return ``-EIO``.
 *
 * Errors: ``-ENOENT`` unknown handle; ``-EINVAL`` a plain event, or bad
 * flags.
 */
struct accel_event_signal {
	__u32 handle;
	__u32 flags;
	__u64 value;
};

/**
 * struct accel_wait_entry - one event of an %ACCEL_IOC_WAIT
 * @event: the event.
 * @pad: must be zero.
 * @value: for a user event, the counter value to wait for (0 means 1);
 *	for a plain event, must be zero.
 */
struct accel_wait_entry {
	__u32 event;
	__u32 pad;
	__u64 value;
};

/** @ACCEL_WAIT_ALL: wait for every entry, not the first one. */
#define ACCEL_WAIT_ALL			(1U << 0)

/**
 * struct accel_wait - wait for events (cudaEventSynchronize, wait-any/all)
 * @entries: in: user pointer to @count &struct accel_wait_entry.
 * @count: in: 1 to @max_wait.
 * @flags: in: 0 (any) or %ACCEL_WAIT_ALL.
 * @timeout_ns: in: absolute CLOCK_MONOTONIC deadline in nanoseconds, or
 *	%ACCEL_TIMEOUT_INFINITE.
 * @first_signaled: out: index of the lowest complete entry (any mode), or
 *	of the failing one on ``-EIO``; written on success and on ``-EIO``.
 * @pad: must be zero.
 *
 * Points are captured when the call starts: a record made while it waits
 * does not move the target.
 *
 * Errors: ``-ENOENT`` unknown handle; ``-EINVAL`` bad count, flags or
 * entry; ``-EFAULT`` bad @entries; ``-ETIME`` deadline passed; ``-EIO``
 * an entry failed; ``-EINTR`` a signal arrived (restarted where allowed);
 * ``-ENOMEM``.
 */
struct accel_wait {
	__u64 entries;
	__u32 count;
	__u32 flags;
	__u64 timeout_ns;
	__u32 first_signaled;
	__u32 pad;
};

/**
 * DOC: exported events
 *
 * An event's captured point can leave its context as a file descriptor,
 * so that another context, or another process that receives the
 * descriptor over a Unix socket (SCM_RIGHTS) or by fork(2), can wait for
 * it: the role of cudaIpcGetEventHandle() / cudaIpcOpenEventHandle(),
 * with a descriptor that poll(2) and epoll(7) understand.
 *
 * %ACCEL_IOC_EVENT_EXPORT captures the point the event holds at the time
 * of the call (a later record does not move it: export again for the new
 * point) and returns a new descriptor (close-on-exec) of an anonymous
 * file, ``[accelstream-event]``. The file holds the point, not the
 * context: it may outlive the context and the producing process. It
 * polls ``EPOLLIN | EPOLLRDNORM`` once the point is *done*, and stays so;
 * it supports nothing else (no read, write, ioctl or mmap).
 *
 * A point is done when it retired (status 0) or when it can never retire
 * (status ``-EIO``): its stream failed at or before it, the producer's
 * executor detached with it fetched, or the producing context was closed
 * (the process exited or was killed) before it retired. An exported point
 * never stays pending forever because its producer went away; the kernel's
 * dma-buf guide forbids fences that may never signal, and although these
 * are no dma_fences, the same rule serves their waiters. A point that
 * waits for a user event that is never signalled is, like any stream
 * work, pending until the producer signals or closes.
 *
 * %ACCEL_IOC_EVENT_IMPORT turns such a descriptor into a new event handle
 * of the calling context, flagged %ACCEL_EVENT_IMPORTED, that holds the
 * exported point for good: it may be waited on by %ACCEL_OP_STREAM_WAIT,
 * %ACCEL_IOC_WAIT and %ACCEL_IOC_EVENT_QUERY like any plain event, and
 * neither recorded nor timed (``-EINVAL``). A wait on a point done with
 * ``-EIO`` fails as a wait on a failed stream does: a host wait returns
 * ``-EIO``, a stream wait makes its stream fail. With a userspace
 * executor attached, a %ACCEL_OP_STREAM_WAIT on an imported event is
 * handed out once the point is done, with nothing left to wait for on
 * the device (@wait_stream 0): the host orders it, not the device.
 *
 * Lifetimes: the file holds the exported state; each imported event holds
 * it too; the producing context holds it while the point is pending. The
 * descriptor may be closed at once after an import, and either side may
 * close first or be killed. The module cannot be unloaded while an
 * exported file is open.
 */

/**
 * struct accel_event_export - export an event's point as a file descriptor
 * @event: in: a plain event of this context (not a user event, not an
 *	imported one).
 * @flags: in: must be zero.
 * @fd: out: the new file descriptor, close-on-exec.
 * @pad: must be zero.
 *
 * A never-recorded event, or one whose point retired, exports a point
 * that is done at once (status 0, or ``-EIO`` if it failed).
 *
 * Errors: ``-ENOENT`` unknown handle; ``-EINVAL`` nonzero @flags or @pad,
 * a user event or an imported event; ``-ENOSPC`` the context has
 * %ACCEL_EXPORT_MAX_PENDING exports pending already; ``-EMFILE`` the
 * process has RLIMIT_NOFILE descriptors open; ``-ENFILE`` the system's
 * file table is full (fs.file-max) and the caller lacks CAP_SYS_ADMIN;
 * ``-ENOMEM`` the exported state or its file could not be allocated.
 * On error no descriptor is made and @fd is not written.
 */
struct accel_event_export {
	__u32 event;
	__u32 flags;
	__s32 fd;
	__u32 pad;
};

/** @ACCEL_EXPORT_MAX_PENDING: most exported points pending per context. */
#define ACCEL_EXPORT_MAX_PENDING	4096

/**
 * struct accel_event_import - import an exported event
 * @fd: in: a descriptor returned by %ACCEL_IOC_EVENT_EXPORT (in any
 *	process), or one passed from it.
 * @flags: in: must be zero.
 * @handle: out: the new event's handle (%ACCEL_EVENT_IMPORTED).
 * @pad: must be zero.
 *
 * The descriptor is not consumed: close it when done with it.
 *
 * Errors: ``-EBADF`` @fd is not an open descriptor; ``-EINVAL`` nonzero
 * @flags or @pad, or @fd is not an exported accelstream event;
 * ``-ENOSPC`` too many events; ``-ENOMEM`` the import, its event or its
 * handle could not be allocated.
 */
struct accel_event_import {
	__s32 fd;
	__u32 flags;
	__u32 handle;
	__u32 pad;
};

/**
 * DOC: executor protocol
 *
 * A thread of the owning process may attach as the context's *executor*
 * (a CUDA executor in libaccel, say). From then on the soft engine runs
 * nothing: the executor fetches descriptors in order per stream with
 * %ACCEL_IOC_EXEC_FETCH, runs them on its device, and reports them done
 * with %ACCEL_IOC_EXEC_COMPLETE; the kernel then retires them, unpins,
 * signals events and wakes waiters, exactly as for the soft engine. A
 * %ACCEL_OP_HOST_WAIT is handed out only once satisfied; a
 * %ACCEL_OP_STREAM_WAIT once the record it waits for has been handed out
 * (so that the executor can order it on the device), with the point to
 * wait for; a %ACCEL_OP_HOST_SIGNAL takes effect when it is completed.
 * Detaching with work fetched and not completed fails that work with
 * ``-EIO`` (sticky on its streams); the soft engine then resumes.
 */

/** @ACCEL_REGION_HOST: a registered user range; @dst_addr is its address. */
#define ACCEL_REGION_HOST		0
/** @ACCEL_REGION_HOST_ALLOC: an %ACCEL_MEM_HOST allocation (resolve by handle). */
#define ACCEL_REGION_HOST_ALLOC		1
/** @ACCEL_REGION_DEVICE: soft-engine device memory (resolve by handle). */
#define ACCEL_REGION_DEVICE		2
/** @ACCEL_REGION_EXTERNAL: an %ACCEL_MEM_EXTERNAL range; the address is given. */
#define ACCEL_REGION_EXTERNAL		3

/**
 * struct accel_exec_attach - attach or detach the context's executor
 * @flags: must be zero.
 * @pad: must be zero.
 *
 * %ACCEL_IOC_EXEC_ATTACH errors: ``-EBUSY`` an executor is attached;
 * ``-EINVAL`` nonzero fields. %ACCEL_IOC_EXEC_DETACH errors: ``-ENXIO`` no
 * executor is attached; ``-EINVAL``.
 */
struct accel_exec_attach {
	__u32 flags;
	__u32 pad;
};

/**
 * struct accel_exec_item - one fetched descriptor, resolved
 * @stream: the stream's handle (still valid for COMPLETE after the stream
 *	was destroyed).
 * @status: 0; ``-EIO`` when what it waits for failed: complete it with
 *	this status.
 * @seq: its sequence number on @stream.
 * @desc: the descriptor as submitted.
 * @dst_addr: COPY, MEMSET, COPY_2D: address of destination byte 0 (of
 *	the first row) for HOST and EXTERNAL regions (region address plus
 *	@desc.dst_offset), else 0.
 * @src_addr: COPY, COPY_2D: likewise for the source.
 * @dst_kind: COPY, MEMSET, COPY_2D: ACCEL_REGION_* of the destination.
 * @src_kind: COPY, COPY_2D: ACCEL_REGION_* of the source.
 * @wait_stream: STREAM_WAIT: the stream of the point to wait for; 0 when
 *	the point has already retired (nothing to wait for).
 * @pad: zero.
 * @wait_seq: STREAM_WAIT: the sequence number of that point (the
 *	EVENT_RECORD handed out earlier), 0 when none.
 */
struct accel_exec_item {
	__u32 stream;
	__s32 status;
	__u64 seq;
	struct accel_desc desc;
	__u64 dst_addr;
	__u64 src_addr;
	__u32 dst_kind;
	__u32 src_kind;
	__u32 wait_stream;
	__u32 pad;
	__u64 wait_seq;
};

/**
 * struct accel_exec_fetch - take descriptors ready for the executor
 * @items: in: user pointer to @max_items &struct accel_exec_item.
 * @max_items: in: capacity of @items, 1 to @max_submit.
 * @count: out: items written.
 * @timeout_ns: in: absolute CLOCK_MONOTONIC deadline for the first item,
 *	or %ACCEL_TIMEOUT_INFINITE; a past time polls.
 * @flags: must be zero.
 * @pad: must be zero.
 *
 * Errors: ``-ENXIO`` no executor attached; ``-EINVAL``; ``-EFAULT``;
 * ``-ETIME`` nothing became ready in time (@count is 0); ``-EINTR``.
 */
struct accel_exec_fetch {
	__u64 items;
	__u32 max_items;
	__u32 count;
	__u64 timeout_ns;
	__u32 flags;
	__u32 pad;
};

/**
 * struct accel_exec_done - one completion
 * @stream: the stream handle of the fetched items.
 * @status: 0, or the negative errno the item at @seq failed with.
 * @seq: every fetched item of @stream up to @seq retires; the one at
 *	@seq with @status, earlier ones with 0.
 */
struct accel_exec_done {
	__u32 stream;
	__s32 status;
	__u64 seq;
};

/**
 * struct accel_exec_complete - report fetched work done
 * @entries: in: user pointer to @count &struct accel_exec_done.
 * @count: in: 1 to @max_submit.
 * @pad: must be zero.
 *
 * Entries are applied in order; on an error the ones before it stay
 * applied. Errors: ``-ENXIO`` no executor attached; ``-ENOENT`` unknown
 * stream; ``-EINVAL`` bad count, a status above 0, or @seq not fetched or
 * already retired; ``-EFAULT``.
 */
struct accel_exec_complete {
	__u64 entries;
	__u32 count;
	__u32 pad;
};

/**
 * DOC: query
 *
 * %ACCEL_IOC_QUERY is the stable interface of admin tools (accelctl ps and
 * stats): it lists the contexts of the device, or the streams or the
 * regions of one context, as arrays of fixed-size entries. It is the
 * equivalent of what nvidia-smi reads through NVML's
 * nvmlDeviceGetComputeRunningProcesses(); CUDA and AscendCL have no call
 * for it. The debugfs files of the driver show the same and more, but
 * are for debugging and no ABI.
 *
 * A context is *visible* to the caller when it is the caller's own (the
 * file the ioctl is issued on), when it was opened by a process with the
 * caller's effective uid, or when the caller has CAP_SYS_ADMIN. Other
 * contexts are left out of %ACCEL_QUERY_CONTEXTS and are ``-ENOENT`` for
 * %ACCEL_QUERY_STREAMS and %ACCEL_QUERY_REGIONS, as unknown ones are.
 *
 * The answer is a snapshot taken under the driver's locks: the entries of
 * one call are consistent with each other, and may be stale once the call
 * returns. To size a buffer, call with @capacity 0 (then @entries may be
 * 0), then again with room for a few more than @count.
 */

/** @ACCEL_QUERY_CONTEXTS: &struct accel_ctx_info, one per visible context. */
#define ACCEL_QUERY_CONTEXTS		1
/** @ACCEL_QUERY_STREAMS: &struct accel_stream_info, one per stream of @ctx_id. */
#define ACCEL_QUERY_STREAMS		2
/** @ACCEL_QUERY_REGIONS: &struct accel_region_info, one per region of @ctx_id. */
#define ACCEL_QUERY_REGIONS		3
/** @ACCEL_QUERY_DEVICES: &struct accel_device_info, one per device (%ACCEL_CAP_DEVICES). */
#define ACCEL_QUERY_DEVICES		4

/** @ACCEL_QUERY_MAX_ENTRIES: the largest @capacity of a query. */
#define ACCEL_QUERY_MAX_ENTRIES		65536

/**
 * struct accel_query - list the contexts, or one context's streams or regions
 * @kind: in: ACCEL_QUERY_*.
 * @flags: must be zero.
 * @ctx_id: in: %ACCEL_QUERY_STREAMS, %ACCEL_QUERY_REGIONS: the context's
 *	@id (&struct accel_ctx_info), or 0 for the caller's own context;
 *	%ACCEL_QUERY_CONTEXTS, %ACCEL_QUERY_DEVICES: must be zero.
 * @entry_size: in: the size in bytes of one entry of @kind as the caller
 *	was built with: sizeof(struct accel_ctx_info) (96),
 *	sizeof(struct accel_stream_info) (40),
 *	sizeof(struct accel_region_info) (32) or
 *	sizeof(struct accel_device_info) (56).
 * @capacity: in: entries the buffer at @entries holds, 0 to
 *	%ACCEL_QUERY_MAX_ENTRIES.
 * @count: out: entries that exist (visible contexts, streams or regions);
 *	the first min(@capacity, @count) of them are written to @entries,
 *	in creation order.
 * @entries: in: user pointer to @capacity entries of @entry_size bytes;
 *	may be 0 when @capacity is 0.
 *
 * Errors: ``-EINVAL`` nonzero @flags, unknown @kind, @entry_size not the
 * size of @kind's entry, nonzero @ctx_id with %ACCEL_QUERY_CONTEXTS or
 * %ACCEL_QUERY_DEVICES, or
 * @capacity above %ACCEL_QUERY_MAX_ENTRIES; ``-ENOENT`` no visible context
 * @ctx_id; ``-EFAULT`` the structure or @entries is not writable;
 * ``-ENOMEM``; ``-EACCES`` the file was opened by another process.
 * On ``-EFAULT`` part of @entries may have been written; on any other
 * error nothing is.
 */
struct accel_query {
	__u32 kind;
	__u32 flags;
	__u32 ctx_id;
	__u32 entry_size;
	__u32 capacity;
	__u32 count;
	__u64 entries;
};

/* accel_ctx_info.flags */
/** @ACCEL_CTX_SELF: the context is the file the query was issued on. */
#define ACCEL_CTX_SELF			(1U << 0)
/** @ACCEL_CTX_EXECUTOR: a userspace executor is attached (@executor_pid). */
#define ACCEL_CTX_EXECUTOR		(1U << 1)

/**
 * struct accel_ctx_info - one context, an entry of %ACCEL_QUERY_CONTEXTS
 * @id: the context's number, unique while the module is loaded (the
 *	``ctx-<id>`` of debugfs).
 * @flags: ACCEL_CTX_* bits.
 * @pid: the process that opened the file, in the caller's pid namespace;
 *	0 when it is not visible there.
 * @uid: the opener's effective uid, in the caller's user namespace
 *	(the overflow uid when it does not map there).
 * @executor_pid: with %ACCEL_CTX_EXECUTOR: the thread that attached the
 *	executor, in the caller's pid namespace (0 when not visible); else 0.
 * @streams: live stream handles.
 * @events: live event handles.
 * @regions: live region handles.
 * @failed_streams: streams in the sticky error state.
 * @device: the context's current device (%ACCEL_IOC_SET_DEVICE); 0 for a
 *	driver without %ACCEL_CAP_DEVICES.
 * @queued: descriptors submitted and not yet retired.
 * @pinned_bytes: host memory pinned for the context; bytes.
 * @device_bytes: device memory allocated by the context, on all devices;
 *	bytes.
 * @max_pinned_bytes: the context's pin limit, taken from the module
 *	parameter when the file was opened; bytes.
 * @max_device_bytes: the context's device memory limit, on each device
 *	separately; bytes.
 * @comm: the opener's command name when it opened the file, NUL-padded
 *	(as /proc/PID/comm, any bytes but NUL: not necessarily UTF-8).
 */
struct accel_ctx_info {
	__u32 id;
	__u32 flags;
	__u32 pid;
	__u32 uid;
	__u32 executor_pid;
	__u32 streams;
	__u32 events;
	__u32 regions;
	__u32 failed_streams;
	__u32 device;
	__u64 queued;
	__u64 pinned_bytes;
	__u64 device_bytes;
	__u64 max_pinned_bytes;
	__u64 max_device_bytes;
	__u8 comm[16];
};

/* accel_stream_info.state and accel_region_info.state */
/** @ACCEL_OBJ_LIVE: the handle is valid. */
#define ACCEL_OBJ_LIVE			0
/** @ACCEL_OBJ_DESTROYED: a stream destroyed while its queue drains. */
#define ACCEL_OBJ_DESTROYED		1
/** @ACCEL_OBJ_RELEASED: a region released with %ACCEL_MEM_RELEASE_DEFERRED. */
#define ACCEL_OBJ_RELEASED		2

/**
 * struct accel_stream_info - one stream, an entry of %ACCEL_QUERY_STREAMS
 * @handle: the stream's handle.
 * @flags: its creation flags (ACCEL_STREAM_*).
 * @priority: its effective (clamped) priority.
 * @error: 0, or the negative errno of its first failed descriptor.
 * @queued: descriptors queued and not retired.
 * @state: %ACCEL_OBJ_LIVE or %ACCEL_OBJ_DESTROYED.
 * @submitted: sequence number of the last submitted descriptor.
 * @completed: every descriptor up to this sequence number has retired.
 */
struct accel_stream_info {
	__u32 handle;
	__u32 flags;
	__s32 priority;
	__s32 error;
	__u32 queued;
	__u32 state;
	__u64 submitted;
	__u64 completed;
};

/**
 * struct accel_region_info - one region, an entry of %ACCEL_QUERY_REGIONS
 * @handle: the region's handle.
 * @kind: ACCEL_REGION_* (registered range, host allocation, device
 *	memory, external range).
 * @flags: its ACCEL_MEM_* flags.
 * @state: %ACCEL_OBJ_LIVE or %ACCEL_OBJ_RELEASED.
 * @size: bytes.
 * @inflight: queued descriptors naming it (twice for both sides of a copy).
 */
struct accel_region_info {
	__u32 handle;
	__u32 kind;
	__u32 flags;
	__u32 state;
	__u64 size;
	__u64 inflight;
};

/**
 * struct accel_device_info - one device, an entry of %ACCEL_QUERY_DEVICES
 * @index: the device's number, 0 to &struct accel_info @devices - 1.
 * @flags: zero.
 * @contexts: open contexts whose current device this is.
 * @streams: streams that run on this device, draining ones included.
 * @queued: descriptors queued on those streams and not yet retired.
 * @device_bytes: this device's memory allocated, by every context; bytes.
 * @pinned_bytes: host memory pinned by the contexts whose current device
 *	this is; bytes.
 * @max_device_bytes: the most of this device's memory one context may
 *	allocate; bytes.
 * @retired: descriptors retired on this device's streams since load.
 *
 * The numbers add up every context, visible to the caller or not (as the
 * module totals in sysfs do); nothing names a context.
 */
struct accel_device_info {
	__u32 index;
	__u32 flags;
	__u32 contexts;
	__u32 streams;
	__u64 queued;
	__u64 device_bytes;
	__u64 pinned_bytes;
	__u64 max_device_bytes;
	__u64 retired;
};

/**
 * DOC: devices
 *
 * A driver with %ACCEL_CAP_DEVICES serves &struct accel_info @devices
 * devices, each with its own memory (its own accounting against
 * @max_device_bytes) and its own copy engine. A context is not tied to
 * one device: it has a *current device* (0 when opened), set with
 * %ACCEL_IOC_SET_DEVICE, and every stream and every %ACCEL_MEM_DEVICE
 * allocation is made on the context's current device at the time it is
 * created, and stays there (cudaSetDevice, then cudaStreamCreate and
 * cudaMalloc). Host memory (registered or allocated) belongs to no device.
 *
 * One context therefore holds streams and memory on several devices, in
 * one handle namespace, the way a CUDA process with peer access enabled
 * addresses every device's memory. So:
 *
 * - A COPY between regions of two devices (a *peer copy*,
 *   cudaMemcpyPeerAsync) is an ordinary %ACCEL_OP_COPY, queued on a stream
 *   of either device, or of a third; the engine of the stream's device
 *   runs it. Both regions are referenced by the queued descriptor, with
 *   the lifetime rules of any copy: neither can be freed underneath it
 *   (``-EBUSY``, or a deferred release that waits for it).
 * - A stream of one device may wait on an event recorded on a stream of
 *   another (%ACCEL_OP_STREAM_WAIT; cudaStreamWaitEvent allows it,
 *   AscendCL's aclrtStreamWaitEvent does not); host waits
 *   (%ACCEL_IOC_WAIT) may name events of streams of several devices.
 *
 * Closing a context tears down its streams and memory on every device;
 * other contexts, on the same devices or others, run on.
 */

/**
 * struct accel_device_select - set the context's current device
 * @device: in: the device, 0 to &struct accel_info @devices - 1.
 * @flags: must be zero.
 *
 * Streams and device allocations made afterwards are made on @device;
 * those made before stay where they are. Any time, any number of times
 * (cudaSetDevice; aclrtCreateContext(&ctx, deviceId) is open, then this).
 *
 * Errors: ``-ENODEV`` no such device (cudaErrorInvalidDevice);
 * ``-EINVAL`` nonzero @flags.
 */
struct accel_device_select {
	__u32 device;
	__u32 flags;
};

#define ACCEL_IOC_MAGIC			0xB7

/* Device-level commands. */
#define ACCEL_IOC_GET_INFO	_IOWR(ACCEL_IOC_MAGIC, 0x00, struct accel_info)
#define ACCEL_IOC_QUERY		_IOWR(ACCEL_IOC_MAGIC, 0x01, struct accel_query)
#define ACCEL_IOC_SET_DEVICE	_IOW(ACCEL_IOC_MAGIC, 0x02, struct accel_device_select)

/* Memory. */
#define ACCEL_IOC_MEM_REGISTER	_IOWR(ACCEL_IOC_MAGIC, 0x10, struct accel_mem_register)
#define ACCEL_IOC_MEM_ALLOC	_IOWR(ACCEL_IOC_MAGIC, 0x11, struct accel_mem_alloc)
#define ACCEL_IOC_MEM_RELEASE	_IOW(ACCEL_IOC_MAGIC, 0x12, struct accel_mem_release)

/* Streams. */
#define ACCEL_IOC_STREAM_CREATE	_IOWR(ACCEL_IOC_MAGIC, 0x20, struct accel_stream_create)
#define ACCEL_IOC_STREAM_DESTROY _IOW(ACCEL_IOC_MAGIC, 0x21, struct accel_handle)
#define ACCEL_IOC_STREAM_QUERY	_IOWR(ACCEL_IOC_MAGIC, 0x22, struct accel_stream_query)
#define ACCEL_IOC_STREAM_SYNC	_IOW(ACCEL_IOC_MAGIC, 0x23, struct accel_stream_sync)
#define ACCEL_IOC_SUBMIT	_IOWR(ACCEL_IOC_MAGIC, 0x24, struct accel_submit)

/* Events. */
#define ACCEL_IOC_EVENT_CREATE	_IOWR(ACCEL_IOC_MAGIC, 0x30, struct accel_event_create)
#define ACCEL_IOC_EVENT_DESTROY	_IOW(ACCEL_IOC_MAGIC, 0x31, struct accel_handle)
#define ACCEL_IOC_EVENT_RECORD	_IOWR(ACCEL_IOC_MAGIC, 0x32, struct accel_event_record)
#define ACCEL_IOC_EVENT_QUERY	_IOWR(ACCEL_IOC_MAGIC, 0x33, struct accel_event_query)
#define ACCEL_IOC_EVENT_ELAPSED	_IOWR(ACCEL_IOC_MAGIC, 0x34, struct accel_event_elapsed)
#define ACCEL_IOC_EVENT_SIGNAL	_IOW(ACCEL_IOC_MAGIC, 0x35, struct accel_event_signal)
#define ACCEL_IOC_WAIT		_IOWR(ACCEL_IOC_MAGIC, 0x36, struct accel_wait)
#define ACCEL_IOC_EVENT_EXPORT	_IOWR(ACCEL_IOC_MAGIC, 0x37, struct accel_event_export)
#define ACCEL_IOC_EVENT_IMPORT	_IOWR(ACCEL_IOC_MAGIC, 0x38, struct accel_event_import)

/* Executor protocol. */
#define ACCEL_IOC_EXEC_ATTACH	_IOW(ACCEL_IOC_MAGIC, 0x40, struct accel_exec_attach)
#define ACCEL_IOC_EXEC_DETACH	_IOW(ACCEL_IOC_MAGIC, 0x41, struct accel_exec_attach)
#define ACCEL_IOC_EXEC_FETCH	_IOWR(ACCEL_IOC_MAGIC, 0x42, struct accel_exec_fetch)
#define ACCEL_IOC_EXEC_COMPLETE	_IOW(ACCEL_IOC_MAGIC, 0x43, struct accel_exec_complete)

#endif /* _UAPI_LINUX_ACCELSTREAM_H */
