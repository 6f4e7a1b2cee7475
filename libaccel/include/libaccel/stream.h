/* SPDX-License-Identifier: MIT */
/*
 * libaccel: streams, host functions, callbacks and value writes.
 *
 * Part of libaccel's public interface; include <libaccel.h>, which
 * includes this header with the types and constants it needs.
 */
#ifndef LIBACCEL_STREAM_H
#define LIBACCEL_STREAM_H

#ifndef LIBACCEL_H
#error "include <libaccel.h>, not <libaccel/stream.h>"
#endif

/* ------------------------------------------------------------------ */
/* Streams                                                            */
/* ------------------------------------------------------------------ */

/* Stream flags (cudaStreamNonBlocking: recorded, reported). */
#define ACCEL_STREAM_NON_BLOCKING	(1U << 0)

/**
 * accel_stream_create() - create a stream
 * @ctx: the context, NULL for the current one
 * @flags: 0 or %ACCEL_STREAM_NON_BLOCKING
 * @priority: lower is more urgent; clamped to accel_stream_priority_range()
 * @stream: where the new stream is stored
 *
 * Creates an in-order queue in @ctx (NULL: the current context). @flags is 0
 * or ACCEL_STREAM_NON_BLOCKING (recorded and reported). @priority: lower is
 * more urgent, from 0 (the default) to -5; values outside
 * accel_stream_priority_range() are clamped. The cpu backend's soft engine
 * runs a stream's next copy only while no more urgent stream of the
 * context has work ready (streams of one priority run concurrently); the
 * cuda backend maps the levels linearly onto CUDA's range.
 *
 * CUDA / AscendCL: cudaStreamCreateWithPriority, aclrtCreateStream
 *
 * Return: 0 on success, or a negative errno value (errno is never set):
 *
 * * %-EINVAL - @stream is NULL or @flags has unknown bits
 * * %-ENOENT - @ctx is not a live context
 * * %-ENODEV - @ctx is NULL and no context is alive
 * * %-ENOSPC - the context has 1024 streams (libaccel(7) LIMITS)
 * * %-ENOMEM - out of memory
 * * %-EACCES - the context was created by another process (a child after
 *   fork() using its parent's context); the call changed nothing
 * * %-ENOTRECOVERABLE - the context is lost (cuda backend: a sticky device
 *   error; accel_last_error_string(3) says which)
 */
int accel_stream_create(accel_context *ctx, unsigned int flags, int priority,
			accel_stream_t *stream);

/**
 * accel_stream_destroy() - destroy a stream
 * @stream: the stream (not %ACCEL_STREAM_DEFAULT)
 *
 * The handle becomes stale at once; work already queued still runs, then the
 * @stream's resources go (as cudaStreamDestroy). Events recorded on it stay
 * usable. The per-thread default @stream cannot be destroyed; it goes when
 * its thread exits.
 *
 * CUDA / AscendCL: cudaStreamDestroy, aclrtDestroyStream
 *
 * Return: 0 on success, or a negative errno value (errno is never set):
 *
 * * %-EINVAL - @stream is ACCEL_STREAM_DEFAULT, a default @stream, or not a
 *   @stream handle
 * * %-ENOENT - @stream is stale or unknown
 * * %-EACCES - the context was created by another process (a child after
 *   fork() using its parent's context); the call changed nothing
 */
int accel_stream_destroy(accel_stream_t stream);

/**
 * accel_stream_query() - has a stream's work retired?
 * @stream: the stream, or %ACCEL_STREAM_DEFAULT
 *
 * Returns 0 when everything queued on @stream has retired.
 *
 * CUDA / AscendCL: cudaStreamQuery, aclrtStreamQuery
 *
 * Return: 0 on success, or a negative errno value (errno is never set):
 *
 * * %-EAGAIN - work is pending (cudaErrorNotReady)
 * * %-EIO - the @stream failed (errors are sticky)
 * * %-ENOENT - @stream is stale or unknown
 * * %-EINVAL - not a stream handle
 * * %-ENODEV - ACCEL_STREAM_DEFAULT and no context is alive
 * * %-EACCES - the context was created by another process (a child after
 *   fork() using its parent's context); the call changed nothing
 * * %-ENOTRECOVERABLE - the context is lost (cuda backend: a sticky device
 *   error; accel_last_error_string(3) says which)
 * * %-ENOSPC - @stream is ACCEL_STREAM_DEFAULT and the calling thread has
 *   no default stream in the context yet, which has 1024 streams already
 *   (libaccel(7) LIMITS)
 */
int accel_stream_query(accel_stream_t stream);

/**
 * accel_stream_synchronize() - wait for a stream
 * @stream: the stream, or %ACCEL_STREAM_DEFAULT
 * @timeout_ns: nanoseconds from the call; 0 polls, %ACCEL_TIMEOUT_INFINITE
 *   blocks
 *
 * Blocks until everything queued on @stream when the call started has
 * retired, including host functions and the copy-out of pageable
 * destinations. @timeout_ns is relative, in nanoseconds;
 * ACCEL_TIMEOUT_INFINITE blocks like cudaStreamSynchronize, 0 polls.
 * Interrupted waits restart with the same deadline.
 *
 * CUDA / AscendCL: cudaStreamSynchronize, aclrtSynchronizeStream(WithTimeout)
 *
 * Return: 0 on success, or a negative errno value (errno is never set):
 *
 * * %-ETIME - the timeout passed first
 * * %-EIO - the @stream failed at or before that point
 * * %-ENOENT - @stream is stale or unknown
 * * %-EINVAL - not a stream handle
 * * %-ENODEV - ACCEL_STREAM_DEFAULT and no context is alive
 * * %-EDEADLK - called from a host function (accel_launch_host_func(3)) with
 *   a nonzero timeout: it could wait for itself
 * * %-EACCES - the context was created by another process (a child after
 *   fork() using its parent's context); the call changed nothing
 * * %-ENOMEM - the driver had no memory for the wait
 * * %-ENOTRECOVERABLE - the context is lost (cuda backend: a sticky device
 *   error; accel_last_error_string(3) says which)
 * * %-ENOSPC - @stream is ACCEL_STREAM_DEFAULT and the calling thread has
 *   no default stream in the context yet, which has 1024 streams already
 *   (libaccel(7) LIMITS)
 */
int accel_stream_synchronize(accel_stream_t stream, uint64_t timeout_ns);

/**
 * accel_stream_get_priority() - a stream's priority
 * @stream: the stream
 * @priority: where its priority is stored
 *
 * Store the effective (clamped) @priority or the creation flags of @stream.
 *
 * CUDA / AscendCL: cudaStreamGetPriority / cudaStreamGetFlags
 *
 * Return: 0 on success, or a negative errno value (errno is never set):
 *
 * * %-EINVAL - @priority or flags is NULL, or not a stream handle
 * * %-ENOENT - @stream is stale or unknown
 * * %-EACCES - the context was created by another process (a child after
 *   fork() using its parent's context); the call changed nothing
 * * %-EIO - the stream failed (sticky: every call on it but
 *   accel_stream_destroy() returns it)
 * * %-ENODEV - ACCEL_STREAM_DEFAULT and no context is alive
 * * %-ENOTRECOVERABLE - the context is lost (cuda backend: a sticky device
 *   error; accel_last_error_string(3) says which)
 * * %-ENOSPC - @stream is ACCEL_STREAM_DEFAULT and the calling thread has
 *   no default stream in the context yet, which has 1024 streams already
 *   (libaccel(7) LIMITS)
 */
int accel_stream_get_priority(accel_stream_t stream, int *priority);

/**
 * accel_stream_get_flags() - a stream's creation flags
 * @stream: the stream
 * @flags: where its creation flags are stored
 *
 * Store the effective (clamped) priority or the creation @flags of @stream.
 *
 * CUDA / AscendCL: cudaStreamGetPriority / cudaStreamGetFlags
 *
 * Return: 0 on success, or a negative errno value (errno is never set):
 *
 * * %-EINVAL - priority or @flags is NULL, or not a stream handle
 * * %-ENOENT - @stream is stale or unknown
 * * %-EACCES - the context was created by another process (a child after
 *   fork() using its parent's context); the call changed nothing
 * * %-EIO - the stream failed (sticky: every call on it but
 *   accel_stream_destroy() returns it)
 * * %-ENODEV - ACCEL_STREAM_DEFAULT and no context is alive
 * * %-ENOTRECOVERABLE - the context is lost (cuda backend: a sticky device
 *   error; accel_last_error_string(3) says which)
 * * %-ENOSPC - @stream is ACCEL_STREAM_DEFAULT and the calling thread has
 *   no default stream in the context yet, which has 1024 streams already
 *   (libaccel(7) LIMITS)
 */
int accel_stream_get_flags(accel_stream_t stream, unsigned int *flags);

/**
 * accel_stream_priority_range() - the range of stream priorities
 * @ctx: the context, NULL for the current one
 * @least: where the least urgent priority is stored
 * @greatest: where the most urgent priority is stored
 *
 * Stores the @least urgent (numerically highest, the default) and the
 * @greatest (numerically lowest) priority of @ctx (NULL: current): 0 and
 * -5, CUDA's convention and CUDA's range on current GPUs; every value in
 * between is a level of its own (see accel_stream_create()).
 *
 * CUDA / AscendCL: cudaDeviceGetStreamPriorityRange
 *
 * Return: 0 on success, or a negative errno value (errno is never set):
 *
 * * %-EINVAL - @least or @greatest is NULL
 * * %-ENOENT - @ctx is not a live context
 * * %-EACCES - the context was created by another process (a child after
 *   fork() using its parent's context); the call changed nothing
 * * %-ENODEV - @ctx is NULL and no context is alive
 * * %-ENOTRECOVERABLE - the context is lost (cuda backend: a sticky device
 *   error; accel_last_error_string(3) says which)
 */
int accel_stream_priority_range(accel_context *ctx, int *least,
				int *greatest);

/* ------------------------------------------------------------------ */
/* Host functions                                                     */
/* ------------------------------------------------------------------ */

typedef void (*accel_host_fn)(void *arg);

/**
 * accel_launch_host_func() - run a host function in stream order
 * @stream: the stream, or %ACCEL_STREAM_DEFAULT
 * @fn: the function
 * @arg: its argument
 *
 * Runs @fn(@arg) on a library thread of the @stream's context once everything
 * queued before it on @stream has retired; work queued after it waits for it
 * to return. @fn should not block: host functions of a context run on one
 * thread. If the @stream failed first, @fn is not called. Functions not
 * reached when the context is destroyed are dropped.
 *
 * @fn may queue work (copies, event records, @stream waits, host functions)
 * and query streams and events, but must not wait for work or destroy a
 * context, as the work it would wait for may be queued behind @fn itself
 * (CUDA forbids any CUDA call from a host function, cudaErrorNotPermitted).
 * Called from a host function, accel_stream_synchronize(3),
 * accel_event_synchronize(3) and accel_event_wait(3) with a nonzero timeout,
 * and accel_context_destroy(3) of any context, return -EDEADLK and do
 * nothing; with a timeout of 0 the waits still poll.
 *
 * CUDA / AscendCL: cudaLaunchHostFunc, aclrtLaunchCallback
 *
 * Return: 0 on success, or a negative errno value (errno is never set):
 *
 * * %-EINVAL - @fn is NULL, or not a stream handle
 * * %-ENOENT - @stream is stale or unknown, or its context is being destroyed
 * * %-EIO - the @stream failed
 * * %-EAGAIN - the @stream's queue is full (the driver's queue_depth,
 *   65536 descriptors, are queued; libaccel(7) LIMITS); wait for some of its work to retire and try
 *   again
 * * %-EACCES - the @stream's context was created by another process (a forked
 *   child using its parent's context)
 * * %-ENOMEM - out of memory
 * * %-ENOSPC - no two events left in the context for the launch (each
 *   pending launch takes two; libaccel(7) LIMITS);
 *   or @stream is ACCEL_STREAM_DEFAULT and the calling thread has
 *   no default stream in the context yet, which has 1024 streams already
 *   (libaccel(7) LIMITS)
 * * %-ENODEV - ACCEL_STREAM_DEFAULT and no context is alive
 * * %-ENOTRECOVERABLE - the context is lost (cuda backend: a sticky device
 *   error; accel_last_error_string(3) says which)
 */
int accel_launch_host_func(accel_stream_t stream, accel_host_fn fn,
			   void *arg);

/* ------------------------------------------------------------------ */
/* Callbacks that learn the stream's status                           */
/* ------------------------------------------------------------------ */

/*
 * @status: 0, the stream's sticky error (a negative errno, -EIO say) when
 * it failed before the callback, or -ECANCELED when the context was
 * destroyed before the stream reached it.
 */
typedef void (*accel_stream_callback_t)(accel_stream_t stream, int status,
					void *arg);

/**
 * accel_stream_add_callback() - run a function at a point of a stream
 * @stream: the stream, or %ACCEL_STREAM_DEFAULT
 * @fn: called once, with the stream's status at that point
 * @arg: passed to @fn
 * @flags: must be 0
 *
 * Like accel_launch_host_func(), but @fn always runs, exactly once, and
 * learns the stream's status (0, the sticky error, or -ECANCELED when the
 * context was destroyed first) instead of being skipped on a failed stream.
 *
 * CUDA / AscendCL: cudaStreamAddCallback, aclrtSubscribeReport
 *
 * Return: 0 on success, or a negative errno value (errno is never set):
 *
 * * %-EINVAL - fn is NULL, flags is not 0, or stream is not a stream handle.
 * * %-ENOENT - stream is stale or unknown, or its context is being
 *   destroyed.
 * * %-ENODEV - stream is ACCEL_STREAM_DEFAULT and no context is alive.
 * * %-EIO - the stream had already failed when the call was made.
 * * %-EAGAIN - the stream's queue is full (the driver's queue_depth,
 *   65536 descriptors, are queued; libaccel(7) LIMITS); wait for some of its work to retire and try
 *   again.
 * * %-EACCES - the stream's context was created by another process (a forked
 *   child using its parent's context).
 * * %-ENOTRECOVERABLE - the context is lost (see libaccel(7)).
 * * %-ENOMEM - out of memory.
 * * %-ENOSPC - no two events left in the context for the callback (each
 *   pending callback takes two; libaccel(7) LIMITS);
 *   or @stream is ACCEL_STREAM_DEFAULT and the calling thread has
 *   no default stream in the context yet, which has 1024 streams already
 *   (libaccel(7) LIMITS)
 */
int accel_stream_add_callback(accel_stream_t stream,
			      accel_stream_callback_t fn, void *arg,
			      unsigned int flags);

/* ------------------------------------------------------------------ */
/* Stream-ordered value writes and blocking-sync events (1.4)         */
/* ------------------------------------------------------------------ */

/*
 * accel_event_create() flag: a host waiting on the event
 * (accel_event_synchronize(), accel_event_wait() when every event has it)
 * sleeps in the driver, or on a futex with the inproc transport, from the
 * start of the wait, never polling the device first; the CPU is free
 * while it waits, at the price of a wake-up's latency (cudaEventBlockingSync).
 * Any event may have it, host events too.
 */
#define ACCEL_EVENT_BLOCKING_SYNC	(1U << 2)

/*
 * accel_host_alloc() flag: the allocation is pinned memory of every
 * context of the process (cudaHostAllocPortable), not only of the one that
 * allocated it: a copy in another context (of the same transport and
 * backend) is asynchronous too instead of being staged. That context
 * imports the pages at its first copy naming them (the kernel pins them
 * for it as a registration; charged to its own pin limit), and holds them
 * for its queued copies whatever happens to the allocation: accel_host_free()
 * and the owner's destroy release every import stream-ordered, as they
 * release the allocation. With the cuda backend the owner registers it
 * with cudaHostRegisterPortable and another context's copies go straight
 * from it, the owner's mapping and CUDA registration kept until the last
 * such copy retired (see accel_host_alloc(3)).
 */
#define ACCEL_HOST_ALLOC_PORTABLE	(1U << 0)

/**
 * accel_stream_write_value() - raise a host event's counter in stream order
 * @stream: the stream that writes, or %ACCEL_STREAM_DEFAULT
 * @event: a host event (%ACCEL_EVENT_HOST) of the @stream's context
 * @value: the value to raise its counter to
 * @flags: must be 0
 *
 * Queues a write on @stream: once everything queued before it on @stream
 * has retired, the counter of @event is raised to @value, as
 * accel_event_signal() would do at once; a @value not above the counter
 * changes nothing (the counter never goes down, whatever the order in
 * which writes and signals arrive). Streams that wait with
 * accel_stream_wait_value() for a value up to @value go on, and host waits
 * on @event (accel_event_synchronize(), accel_event_wait()) return. Work
 * queued after the write waits for it. If @stream failed before the write
 * is reached, the write does not happen (the stream's error is sticky);
 * with the cuda backend the write takes effect once the device finished
 * the work queued before it.
 *
 * CUDA / AscendCL: cuStreamWriteValue64 (cuStreamWaitValue64 with
 * CU_STREAM_WAIT_VALUE_GEQ is accel_stream_wait_value()); AscendCL has no
 * counter write, aclrtRecordEvent / aclrtStreamWaitEvent is the nearest.
 *
 * Return: 0 on success, or a negative errno value (errno is never set):
 *
 * * %-EINVAL - @event is not a host event, @flags is not 0, the two belong
 *   to different contexts, or a handle of the wrong type
 * * %-ENOENT - @stream or @event is stale or unknown
 * * %-EIO - the @stream failed
 * * %-EAGAIN - the @stream's queue is full (65536 descriptors; libaccel(7)
 *   LIMITS)
 * * %-EACCES - the context was created by another process (a child after
 *   fork() using its parent's context); the call changed nothing
 * * %-ENOTRECOVERABLE - the context is lost (cuda backend: a sticky device
 *   error; accel_last_error_string(3) says which)
 * * %-ENOSPC - @stream is ACCEL_STREAM_DEFAULT and the calling thread has
 *   no default stream in the context yet, which has 1024 streams already
 *   (libaccel(7) LIMITS)
 */
int accel_stream_write_value(accel_stream_t stream, accel_event_t event,
			     uint64_t value, unsigned int flags);

#endif /* LIBACCEL_STREAM_H */
