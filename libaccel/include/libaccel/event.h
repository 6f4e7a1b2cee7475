/* SPDX-License-Identifier: MIT */
/*
 * libaccel: events and the descriptors other code waits on.
 *
 * Part of libaccel's public interface; include <libaccel.h>, which
 * includes this header with the types and constants it needs.
 */
#ifndef LIBACCEL_EVENT_H
#define LIBACCEL_EVENT_H

#ifndef LIBACCEL_H
#error "include <libaccel.h>, not <libaccel/event.h>"
#endif

/* ------------------------------------------------------------------ */
/* Events                                                             */
/* ------------------------------------------------------------------ */

/* Event flags. Events keep timestamps unless timing is disabled. */
#define ACCEL_EVENT_DEFAULT		0U
#define ACCEL_EVENT_DISABLE_TIMING	(1U << 0)
/*
 * A host event: a 64-bit counter raised by accel_event_signal() rather
 * than a recorded point; streams wait on it with accel_stream_wait_value()
 * (cuStreamWaitValue64). Complete once its value is not zero.
 */
#define ACCEL_EVENT_HOST		(1U << 1)

/* accel_event_signal() flags: fail the event's waiters with -EIO. */
#define ACCEL_EVENT_SIGNAL_ERROR	(1U << 0)

/* accel_event_wait() modes. */
#define ACCEL_WAIT_ANY			0U
#define ACCEL_WAIT_ALL			(1U << 0)

/**
 * accel_event_create() - create an event
 * @ctx: the context, NULL for the current one
 * @flags: %ACCEL_EVENT_DEFAULT, %ACCEL_EVENT_DISABLE_TIMING or
 *   %ACCEL_EVENT_HOST, each with or without %ACCEL_EVENT_BLOCKING_SYNC
 * @event: where the new event is stored
 *
 * Creates an @event in @ctx (NULL: current). @flags: ACCEL_EVENT_DEFAULT
 * (keeps timestamps, as CUDA's default), ACCEL_EVENT_DISABLE_TIMING, or
 * ACCEL_EVENT_HOST: a host event, a 64-bit counter raised by
 * accel_event_signal() and waited on by streams with
 * accel_stream_wait_value() instead of a recorded point. A never-recorded
 * @event is complete. ACCEL_EVENT_BLOCKING_SYNC (cudaEventBlockingSync)
 * may be added to any of them: a host waiting on the @event sleeps from the
 * start instead of polling first.
 *
 * CUDA / AscendCL: cudaEventCreateWithFlags, aclrtCreateEventWithFlag
 *
 * Return: 0 on success, or a negative errno value (errno is never set):
 *
 * * %-EINVAL - @event is NULL, or @flags has unknown bits
 * * %-ENOSPC - the context has 65536 events, those the library holds
 *   included (libaccel(7) LIMITS)
 * * %-ENOMEM - out of memory
 * * %-ENOENT - @ctx is not a live context
 * * %-ENODEV - @ctx is NULL and no context is alive
 * * %-EACCES - the context was created by another process (a child after
 *   fork() using its parent's context); the call changed nothing
 * * %-ENOTRECOVERABLE - the context is lost (cuda backend: a sticky device
 *   error; accel_last_error_string(3) says which)
 */
int accel_event_create(accel_context *ctx, unsigned int flags,
		       accel_event_t *event);

/**
 * accel_event_destroy() - destroy an event
 * @event: the event
 *
 * The handle becomes stale; queued records and waits naming the @event still
 * complete. A host event is not destroyed while a stream's queued
 * accel_stream_wait_value() waits for a value above its counter: nothing
 * could be sure to raise it once the handle is gone (a queued
 * accel_stream_write_value() may never run), and the stream would be
 * blocked for good. Signal it first; accel_context_destroy() destroys it
 * whatever waits on it.
 *
 * CUDA / AscendCL: cudaEventDestroy, aclrtDestroyEvent
 *
 * Return: 0 on success, or a negative errno value (errno is never set):
 *
 * * %-ENOENT - @event is stale or unknown
 * * %-EINVAL - not an event handle
 * * %-EBUSY - @event is a host event and a stream's queued
 *   accel_stream_wait_value() waits for a value above its counter; the call
 *   changed nothing
 * * %-EACCES - the context was created by another process (a child after
 *   fork() using its parent's context); the call changed nothing
 */
int accel_event_destroy(accel_event_t event);

/**
 * accel_event_record() - record an event on a stream
 * @event: the event (not a host event)
 * @stream: the stream, or %ACCEL_STREAM_DEFAULT
 *
 * Captures the point after everything queued on @stream so far. A re-record
 * moves the @event; waits already queued keep the point they captured.
 *
 * CUDA / AscendCL: cudaEventRecord, aclrtRecordEvent
 *
 * Return: 0 on success, or a negative errno value (errno is never set):
 *
 * * %-EINVAL - @event is a host event, the two belong to different contexts,
 *   or a handle of the wrong type
 * * %-ENOENT - @event or @stream is stale or unknown
 * * %-EIO - the @stream failed
 * * %-EAGAIN - the @stream's queue is full
 * * %-EACCES - the context was created by another process (a child after
 *   fork() using its parent's context); the call changed nothing
 * * %-ENOTRECOVERABLE - the context is lost (cuda backend: a sticky device
 *   error; accel_last_error_string(3) says which)
 * * %-ENOSPC - @stream is ACCEL_STREAM_DEFAULT and the calling thread has
 *   no default stream in the context yet, which has 1024 streams already
 *   (libaccel(7) LIMITS)
 */
int accel_event_record(accel_event_t event, accel_stream_t stream);

/**
 * accel_event_query() - has an event completed?
 * @event: the event
 *
 * Returns 0 when the point last recorded has retired (or the @event was never
 * recorded; a host event once its value is not zero).
 *
 * CUDA / AscendCL: cudaEventQuery, aclrtQueryEventStatus
 *
 * Return: 0 on success, or a negative errno value (errno is never set):
 *
 * * %-EAGAIN - pending
 * * %-EIO - the point's stream failed at or before it, or the host event was
 *   signalled with an error
 * * %-ENOENT - @event is stale or unknown
 * * %-EINVAL - not an event handle
 * * %-EACCES - the context was created by another process (a child after
 *   fork() using its parent's context); the call changed nothing
 * * %-ENOTRECOVERABLE - the context is lost (cuda backend: a sticky device
 *   error; accel_last_error_string(3) says which)
 */
int accel_event_query(accel_event_t event);

/**
 * accel_event_synchronize() - wait for an event
 * @event: the event
 * @timeout_ns: nanoseconds from the call; 0 polls, %ACCEL_TIMEOUT_INFINITE
 *   blocks
 *
 * Waits for the point @event holds when the call starts. @timeout_ns is
 * relative nanoseconds; ACCEL_TIMEOUT_INFINITE blocks, 0 polls.
 *
 * CUDA / AscendCL: cudaEventSynchronize, aclrtSynchronizeEvent
 *
 * Return: 0 on success, or a negative errno value (errno is never set):
 *
 * * %-ETIME - the timeout passed
 * * %-EIO - the point failed
 * * %-ENOENT - @event is stale or unknown
 * * %-EINVAL - not an event handle
 * * %-EDEADLK - called from a host function (accel_launch_host_func(3)) with
 *   a nonzero timeout: it could wait for itself
 * * %-EACCES - the context was created by another process (a child after
 *   fork() using its parent's context); the call changed nothing
 * * %-ENOMEM - the driver had no memory for the wait
 * * %-ENOTRECOVERABLE - the context is lost (cuda backend: a sticky device
 *   error; accel_last_error_string(3) says which)
 */
int accel_event_synchronize(accel_event_t event, uint64_t timeout_ns);

/**
 * accel_event_elapsed_time() - time between two events
 * @ms: where the time is stored, in milliseconds
 * @start: the earlier event
 * @end: the later event
 *
 * Stores in ``*ms`` the milliseconds from @start's completion to @end's
 * (negative when @end completed first).
 *
 * CUDA / AscendCL: cudaEventElapsedTime, aclrtEventElapsedTime
 *
 * Return: 0 on success, or a negative errno value (errno is never set):
 *
 * * %-EINVAL - @ms is NULL, an event was created with
 *   ACCEL_EVENT_DISABLE_TIMING or is a host event, was never recorded, or the
 *   two belong to different contexts
 * * %-EAGAIN - one is not complete yet (cudaErrorNotReady)
 * * %-EIO - a point failed
 * * %-ENOENT - a handle is stale or unknown
 * * %-EACCES - the context was created by another process (a child after
 *   fork() using its parent's context); the call changed nothing
 * * %-ENOTRECOVERABLE - the context is lost (cuda backend: a sticky device
 *   error; accel_last_error_string(3) says which)
 */
int accel_event_elapsed_time(float *ms, accel_event_t start,
			     accel_event_t end);

/**
 * accel_stream_wait_event() - make a stream wait for an event
 * @stream: the stream that waits, or %ACCEL_STREAM_DEFAULT
 * @event: the event whose current point it waits for
 * @flags: must be 0
 *
 * Later work on @stream waits until the point @event holds now has retired. A
 * never-recorded @event waits for nothing: a wait issued before another
 * thread's record succeeds and does not wait for that record. @flags must be
 * 0. @stream and the stream @event was recorded on may run on different
 * devices of the context (as CUDA allows; AscendCL's aclrtStreamWaitEvent
 * refuses an event of another device's context).
 *
 * CUDA / AscendCL: cudaStreamWaitEvent, aclrtStreamWaitEvent
 *
 * Return: 0 on success, or a negative errno value (errno is never set):
 *
 * * %-EINVAL - @flags is not 0, @event is a host event, or the two belong to
 *   different contexts
 * * %-ENOENT - a handle is stale or unknown
 * * %-EIO - @stream failed
 * * %-EAGAIN - the @stream's queue is full
 * * %-EACCES - the context was created by another process (a child after
 *   fork() using its parent's context); the call changed nothing
 * * %-ENOTRECOVERABLE - the context is lost (cuda backend: a sticky device
 *   error; accel_last_error_string(3) says which)
 * * %-ENOSPC - @stream is ACCEL_STREAM_DEFAULT and the calling thread has
 *   no default stream in the context yet, which has 1024 streams already
 *   (libaccel(7) LIMITS)
 */
int accel_stream_wait_event(accel_stream_t stream, accel_event_t event,
			    unsigned int flags);

/**
 * accel_event_wait() - wait for any or all of several events
 * @events: array of @count events of one context
 * @count: number of events, 1 to the driver's max_wait
 * @mode: %ACCEL_WAIT_ANY or %ACCEL_WAIT_ALL
 * @timeout_ns: nanoseconds from the call; 0 polls, %ACCEL_TIMEOUT_INFINITE
 *   blocks
 * @first: if not NULL, where the index of the lowest complete (or failed)
 *   event is stored
 *
 * Waits until one (ACCEL_WAIT_ANY) or every (ACCEL_WAIT_ALL) event completes;
 * points are captured when the call starts. All @events must belong to one
 * context. On success in any @mode, and on -EIO, ``*first`` (if not NULL) is
 * the index of the lowest complete (or failed) event. Host @events @count as
 * complete once their value is not zero.
 *
 * CUDA / AscendCL: none (cuStreamWaitValue patterns; WaitForMultipleObjects)
 *
 * Return: 0 on success, or a negative errno value (errno is never set):
 *
 * * %-EINVAL - @events is NULL, @count is 0 or above the driver's max_wait,
 *   unknown @mode bits, or @events of different contexts
 * * %-ETIME - the timeout passed
 * * %-EIO - an event failed
 * * %-ENOENT - a handle is stale or unknown
 * * %-ENOMEM - out of memory
 * * %-EDEADLK - called from a host function (accel_launch_host_func(3)) with
 *   a nonzero timeout: it could wait for itself
 * * %-EACCES - the context was created by another process (a child after
 *   fork() using its parent's context); the call changed nothing
 * * %-ENOTRECOVERABLE - the context is lost (cuda backend: a sticky device
 *   error; accel_last_error_string(3) says which)
 */
int accel_event_wait(const accel_event_t *events, unsigned int count,
		     unsigned int mode, uint64_t timeout_ns,
		     unsigned int *first);

/**
 * accel_event_signal() - raise a host event's counter
 * @event: a host event
 * @value: the value to raise its counter to
 * @flags: 0 or %ACCEL_EVENT_SIGNAL_ERROR
 *
 * accel_event_signal() raises the counter of host event @event to @value (a
 * lower @value changes nothing); with ACCEL_EVENT_SIGNAL_ERROR the @event
 * fails: streams waiting on it fail with -EIO (sticky), host waits return
 * -EIO. accel_stream_wait_value() makes later work on stream wait until the
 * counter reaches @value (@flags must be 0): a deterministic gate.
 *
 * CUDA / AscendCL: cuStreamWriteValue64 / cuStreamWaitValue64
 *
 * Return: 0 on success, or a negative errno value (errno is never set):
 *
 * * %-EINVAL - @event is not a host event, unknown @flags, or different
 *   contexts
 * * %-ENOENT - a handle is stale or unknown
 * * %-EAGAIN - the stream's queue is full
 * * %-EACCES - the context was created by another process (a child after
 *   fork() using its parent's context); the call changed nothing
 * * %-ENOTRECOVERABLE - the context is lost (cuda backend: a sticky device
 *   error; accel_last_error_string(3) says which)
 */
int accel_event_signal(accel_event_t event, uint64_t value,
		       unsigned int flags);

/**
 * accel_stream_wait_value() - make a stream wait for a host event's value
 * @stream: the stream that waits, or %ACCEL_STREAM_DEFAULT
 * @event: a host event
 * @value: the counter value to wait for
 * @flags: must be 0
 *
 * accel_event_signal() raises the counter of host event @event to @value (a
 * lower @value changes nothing); with ACCEL_EVENT_SIGNAL_ERROR the @event
 * fails: streams waiting on it fail with -EIO (sticky), host waits return
 * -EIO. accel_stream_wait_value() makes later work on @stream wait until the
 * counter reaches @value (@flags must be 0): a deterministic gate. While
 * the wait is queued and the counter is below @value, accel_event_destroy()
 * of @event fails with -EBUSY, a write queued on a stream notwithstanding.
 *
 * CUDA / AscendCL: cuStreamWriteValue64 / cuStreamWaitValue64
 *
 * Return: 0 on success, or a negative errno value (errno is never set):
 *
 * * %-EINVAL - @event is not a host event, unknown @flags, or different
 *   contexts
 * * %-ENOENT - a handle is stale or unknown
 * * %-EIO - the @stream failed
 * * %-EAGAIN - the @stream's queue is full
 * * %-ENOSPC - @stream is ACCEL_STREAM_DEFAULT and the calling thread has
 *   no default stream in the context yet, which has 1024 streams already
 *   (libaccel(7) LIMITS)
 */
int accel_stream_wait_value(accel_stream_t stream, accel_event_t event,
			    uint64_t value, unsigned int flags);

/* ------------------------------------------------------------------ */
/* Descriptors other code waits on (1.4)                              */
/* ------------------------------------------------------------------ */

/**
 * accel_context_get_fd() - a file descriptor that polls readable on progress
 * @ctx: the context, NULL for the current one
 *
 * Returns a descriptor for an event loop: it polls readable (POLLIN,
 * EPOLLIN) while descriptors of @ctx retired since it was last read, and
 * read(2) of 8 bytes returns how many (a native-endian uint64_t) and
 * resets the count: the read is the acknowledgement, as for a
 * non-semaphore eventfd(2). Over the module it is the context's device
 * file; in process it is an eventfd the transport counts retirements into
 * from then on. The count includes descriptors libaccel queues for itself
 * (staging, host functions): on a wake-up, query or synchronize what you
 * wait for. The descriptor belongs to @ctx: do not close it; it stays
 * valid until accel_context_destroy(). Calling it again returns the same
 * descriptor.
 *
 * CUDA / AscendCL: none (the role of an io_uring's registered eventfd)
 *
 * Return: the descriptor (not negative) on success, or a negative errno
 * value (errno is never set):
 *
 * * %-EINVAL - @ctx is a handle of another type
 * * %-ENOENT - @ctx is not a live context
 * * %-EACCES - the context was created by another process (a child after
 *   fork() using its parent's context); the call changed nothing
 * * %-ENODEV - @ctx is NULL and no context is alive
 * * %-EMFILE - in process: the process has no descriptor left for the eventfd
 * * %-ENFILE - in process: the system's file table is full (fs.file-max)
 *   and the caller lacks CAP_SYS_ADMIN
 * * %-ENOMEM - in process: the kernel could not allocate the eventfd (over
 *   the module the descriptor is the device file: no allocation)
 * * %-ENOTRECOVERABLE - the context is lost
 */
int accel_context_get_fd(accel_context *ctx);

/**
 * accel_event_export_fd() - export an event's point as a file descriptor
 * @event: an event that is not a host event nor an imported one
 * @fd: where the new descriptor (close-on-exec) is stored
 *
 * Captures the point @event holds now (its last record; a later record
 * does not move it) as a new descriptor, which polls readable once that
 * point is done, and stays so. The caller owns it: pass it to another
 * process over a Unix socket (SCM_RIGHTS) or keep it for an event loop,
 * and close it when done. accel_event_import_fd() makes it an event of
 * any context. The point is done when it retired, or with an error when
 * it can never retire: its stream failed, or the producing context went
 * away first (destroyed, or its process exited or was killed). An export
 * never stays pending because its producer died.
 *
 * CUDA / AscendCL: cudaIpcGetEventHandle (CUDA's handle is no descriptor
 * and follows later records); AscendCL has no equivalent (the closest is
 * aclrtIpcMemGetExportKey for memory)
 *
 * Return: 0 on success, or a negative errno value (errno is never set):
 *
 * * %-EINVAL - @fd is NULL, @event is not an event, or it is a host event
 *   or an imported event
 * * %-ENOENT - @event is stale or unknown
 * * %-ENOSPC - 4096 exports of the context are pending already
 * * %-EMFILE - the process has no descriptor left
 * * %-ENFILE - the system's file table is full (fs.file-max) and the
 *   caller lacks CAP_SYS_ADMIN
 * * %-ENOMEM - out of memory: over the module the kernel could not
 *   allocate the exported file; in process the socket pair or the
 *   library's record of the export
 * * %-EACCES - the context was created by another process
 * * %-ENOTRECOVERABLE - the context is lost
 */
int accel_event_export_fd(accel_event_t event, int *fd);

/**
 * accel_event_import_fd() - an event of a context from an exported descriptor
 * @ctx: the context, NULL for the current one
 * @fd: a descriptor from accel_event_export_fd(), in this process or another
 * @event: where the new event is stored
 *
 * The new @event holds the exported point for good: accel_stream_wait_event(),
 * accel_event_synchronize(), accel_event_wait() and accel_event_query()
 * work on it as on any event; a point done with an error fails them with
 * -EIO (a stream that waits on it fails, sticky). It cannot be recorded
 * nor timed (-EINVAL). @fd is not consumed: close it when you like.
 * Destroy @event with accel_event_destroy(). Over the module any process
 * may import; in process only exports of this process that are still
 * pending, or any that is done. With the cuda backend a stream wait on it
 * is ordered on the host: the wait is issued to CUDA once the point is
 * done, with nothing left to wait for on the device.
 *
 * CUDA / AscendCL: cudaIpcOpenEventHandle; AscendCL has no equivalent
 *
 * Return: 0 on success, or a negative errno value (errno is never set):
 *
 * * %-EBADF - @fd is not an open descriptor
 * * %-EINVAL - @event is NULL, @ctx is not a context, or @fd is not an
 *   exported event (in process: a pending export of another process)
 * * %-ENOENT - @ctx is not a live context
 * * %-ENODEV - @ctx is NULL and no context is alive
 * * %-ENOSPC - the context has 65536 events already
 * * %-ENOMEM - out of memory: over the module the kernel could not
 *   allocate the import or its handle; in process the library's record
 * * %-EACCES - the context was created by another process
 * * %-ENOTRECOVERABLE - the context is lost
 */
int accel_event_import_fd(accel_context *ctx, int fd, accel_event_t *event);

#endif /* LIBACCEL_EVENT_H */
