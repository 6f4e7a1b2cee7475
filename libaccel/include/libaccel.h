/* SPDX-License-Identifier: MIT */
/*
 * libaccel: streams, events and asynchronous copies over accelstream.
 *
 * The whole public surface of the library. Every call returns 0 or a
 * negative errno value and never sets errno; accel_strerror() turns the
 * value into text. Sizes are in bytes, timeouts in nanoseconds relative to
 * the call (ACCEL_TIMEOUT_INFINITE blocks, 0 polls).
 *
 * The promise libaccel makes on top of CUDA/AscendCL semantics: a buffer
 * handed to an asynchronous copy is never freed or reused underneath it.
 * Pageable (unregistered) sources are staged at enqueue; pinned buffers that
 * are freed with work queued are released when that work retires. A
 * pageable destination is written when its copy completes: it must stay
 * allocated until then (accel_memcpy_async(3)).
 */
#ifndef LIBACCEL_H
#define LIBACCEL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Small wrappers are inline so that picking a copy kind costs no call;
 * everything with state lives out of line, behind the versioned ABI.
 */
#ifndef ACCELINLINE
#define ACCELINLINE static inline
#endif

#define LIBACCEL_VERSION_MAJOR	1
#define LIBACCEL_VERSION_MINOR	4

/* ------------------------------------------------------------------ */
/* Handles and constants                                              */
/* ------------------------------------------------------------------ */

/*
 * Handles are opaque values, never pointers to live memory: a destroyed
 * handle is recognised by its generation and gives -ENOENT, never a crash,
 * even after new objects have been created.
 */
typedef struct accel_context accel_context;
typedef struct accel_stream *accel_stream_t;
typedef struct accel_event *accel_event_t;

/* Wait forever (stream/event synchronize, accel_event_wait). */
#ifndef ACCEL_TIMEOUT_INFINITE
#define ACCEL_TIMEOUT_INFINITE		(~(uint64_t)0)
#endif

/*
 * The calling thread's default stream of the stream's context: created
 * lazily per thread and per context (cudaStreamPerThread), destroyed when
 * the thread exits. Usable wherever a stream is expected.
 */
#define ACCEL_STREAM_DEFAULT		((accel_stream_t)0)

/* ------------------------------------------------------------------ */
/* Contexts                                                           */
/* ------------------------------------------------------------------ */

/**
 * DOC: Contexts
 *
 * A context is one open accelstream device (or one in-process model of
 * it): every stream, event and memory region belongs to one context.
 * Creating a context makes it the calling thread's current context
 * (aclrtCreateContext). Calls that take a context accept NULL for "the
 * current context": the thread's current one if it is alive, else the
 * oldest live context of the process (the primary context of CUDA).
 *
 * Environment: ACCEL_TRANSPORT=kernel|inproc (inproc limits:
 * ACCEL_INPROC_MAX_PINNED_MB, default a quarter of RAM, and
 * ACCEL_INPROC_MAX_DEVICE_MB, default 1024, as the module's; ACCEL_INPROC_DEVICES, default 1, the
 * module's devices), ACCEL_BACKEND=cpu|cuda|auto,
 * ACCEL_CHECK=1 (write-protect in-flight sources), ACCEL_SYNC_DEBUG=1
 * (warn when a copy is staged synchronously). See libaccel(7).
 *
 * Backends: "cpu" (the default) lets the transport's engine run the
 * queues. "cuda" makes libaccel the context's executor: copies run as CUDA
 * stream work on device ACCEL_CUDA_DEVICE (default 0), accel_malloc() is
 * cudaMalloc, host buffers are also cudaHostRegister'ed. Without a usable
 * GPU, or in a libaccel built without CUDA, creation fails with -ENODEV
 * and accel_last_error_string() says why. "auto" is cuda when a GPU is
 * usable, else cpu. Tuning: ACCEL_CUDA_NO_BATCH=1 (no
 * cudaMemcpyBatchAsync), ACCEL_CUDA_BATCH_MAX (bytes, largest copy to
 * batch, default 262144), ACCEL_CUDA_SPIN_US (how long completion is
 * polled before sleeping, default 50), ACCEL_CUDART (libcudart to load);
 * the executor pipeline's switches ACCEL_CUDA_ISSUER, ACCEL_CUDA_HYBRID
 * and ACCEL_CUDA_COMPLETION=event|word are in libaccel(7).
 */

/**
 * accel_context_create() - create a context
 * @ctx: where the new context is stored
 * @flags: must be 0
 *
 * Opens one accelstream context (one open file of /dev/accelstream, or one
 * in-process model of it with ACCEL_TRANSPORT=inproc) and stores an opaque,
 * generation-checked handle in ``*ctx``. The new context becomes the calling
 * thread's current context. @flags must be 0. The transport is chosen by
 * ACCEL_TRANSPORT, the backend by ACCEL_BACKEND (see libaccel(7)); a driver
 * speaking another ABI version is refused with a message saying which side to
 * upgrade. On failure, the reason is in accel_last_error_string(3) (and
 * logged when asked, see accel_set_log_fn(3)); on success that string is
 * empty. A context
 * belongs to the process that created it: in a child after fork(), create new
 * ones (see libaccel(7)).
 *
 * CUDA / AscendCL: cuCtxCreate, aclrtCreateContext
 *
 * Return: 0 on success, or a negative errno value (errno is never set):
 *
 * * %-EINVAL - @ctx is NULL, @flags is not 0, or ACCEL_TRANSPORT /
 *   ACCEL_BACKEND names no known value
 * * %-ENODEV - the default transport is not available (the module is not
 *   loaded; load it with accelctl or modprobe, or set
 *   ACCEL_TRANSPORT=inproc), or ACCEL_BACKEND=cuda and the CUDA backend
 *   cannot start: libcudart (loaded at run time; ACCEL_CUDART names it)
 *   cannot be loaded, there is no usable GPU or ACCEL_CUDA_DEVICE names none,
 *   or this libaccel was built without the CUDA headers.
 *   accel_last_error_string(3) says which, with the CUDA error.
 *   ACCEL_BACKEND=auto falls back to cpu instead
 * * %-ENOENT - ACCEL_TRANSPORT=kernel and /dev/accelstream does not exist
 * * %-EPROTO - the driver's ABI version differs from the library's
 * * %-ENOMEM - out of memory
 */
int accel_context_create(accel_context **ctx, unsigned int flags);

/**
 * accel_context_destroy() - destroy a context
 * @ctx: the context (not NULL)
 *
 * Destroys @ctx: every stream and event handle of the context becomes stale,
 * work not started is cancelled, running copies finish, and every pinned
 * buffer and device allocation of the context is released (its mappings are
 * removed). Pending host functions are dropped. Do not destroy a context
 * while another thread is inside a call on it. In a child process after
 * fork(), a context of the parent cannot be used (every call on it returns
 * -EACCES); leave it alone, as with the inproc transport its threads do not
 * exist in the child.
 *
 * CUDA / AscendCL: cuCtxDestroy, aclrtDestroyContext
 *
 * Return: 0 on success, or a negative errno value (errno is never set):
 *
 * * %-ENOENT - @ctx is not a live context (already destroyed, or never
 *   created)
 * * %-EINVAL - @ctx is NULL, or a handle of another type (a stream or an
 *   event)
 * * %-EDEADLK - called from a host function (accel_launch_host_func(3)): the
 *   context is left alive; destroy it from another thread
 * * %-EACCES - the context was created by another process (a child after
 *   fork() using its parent's context); the call changed nothing
 */
int accel_context_destroy(accel_context *ctx);

/**
 * accel_context_set_current() - set the calling thread's current context
 * @ctx: the context to make current; NULL clears the thread's current context
 *
 * Calls that take a context accept NULL for the current context: the calling
 * thread's, set by accel_context_create() or accel_context_set_current(); if
 * that one is gone or was never set, the oldest live context of the process
 * (as CUDA's primary context). accel_context_set_current(NULL) clears the
 * thread's choice. accel_context_get_current() stores the context NULL would
 * mean.
 *
 * CUDA / AscendCL: cuCtxSetCurrent / cuCtxGetCurrent, aclrtSetCurrentContext
 * / aclrtGetCurrentContext
 *
 * Return: 0 on success, or a negative errno value (errno is never set):
 *
 * * %-ENOENT - @ctx is not a live context
 * * %-EACCES - the context was created by another process (a child after
 *   fork() using its parent's context); the call changed nothing
 */
int accel_context_set_current(accel_context *ctx);

/**
 * accel_context_get_current() - get the calling thread's current context
 * @ctx: where the current context is stored
 *
 * Calls that take a context accept NULL for the current context: the calling
 * thread's, set by accel_context_create() or accel_context_set_current(); if
 * that one is gone or was never set, the oldest live context of the process
 * (as CUDA's primary context). accel_context_set_current(NULL) clears the
 * thread's choice. accel_context_get_current() stores the context NULL would
 * mean.
 *
 * CUDA / AscendCL: cuCtxSetCurrent / cuCtxGetCurrent, aclrtSetCurrentContext
 * / aclrtGetCurrentContext
 *
 * Return: 0 on success, or a negative errno value (errno is never set):
 *
 * * %-ENOENT - @ctx is not a live context
 * * %-EACCES - the context was created by another process (a child after
 *   fork() using its parent's context); the call changed nothing
 * * %-ENODEV - no context is alive
 * * %-EINVAL - @ctx is NULL
 * * %-ENOTRECOVERABLE - the context is lost (cuda backend: a sticky device
 *   error; accel_last_error_string(3) says which)
 */
int accel_context_get_current(accel_context **ctx);

/**
 * accel_context_get_transport() - name the transport of a context
 * @ctx: the context, NULL for the current one
 * @name: where a static string is stored: "kernel" or "inproc"
 *
 * Stores "kernel" or "inproc" in ``*name`` for @ctx (NULL: the current
 * context).
 *
 * CUDA / AscendCL: none
 *
 * Return: 0 on success, or a negative errno value (errno is never set):
 *
 * * %-EINVAL - @name is NULL
 * * %-ENOENT - @ctx is not a live context
 * * %-EACCES - the context was created by another process (a child after
 *   fork() using its parent's context); the call changed nothing
 * * %-ENODEV - @ctx is NULL and no context is alive
 * * %-ENOTRECOVERABLE - the context is lost (cuda backend: a sticky device
 *   error; accel_last_error_string(3) says which)
 */
int accel_context_get_transport(accel_context *ctx, const char **name);

/**
 * accel_context_get_backend() - name the backend that runs a context's queues
 * @ctx: the context, NULL for the current one
 * @name: where a static string is stored: "cpu" or "cuda"
 *
 * Stores "cpu" or "cuda" in ``*name`` for @ctx (NULL: the current context):
 * the backend chosen by ACCEL_BACKEND when the context was created. With
 * ACCEL_BACKEND=auto it tells which one was picked. The string is static.
 * Unlike most calls, it also answers for a lost context (one whose device hit
 * a sticky error), so that a program can report which backend failed.
 *
 * CUDA / AscendCL: none
 *
 * Return: 0 on success, or a negative errno value (errno is never set):
 *
 * * %-EINVAL - @name is NULL, or @ctx is a handle of another type
 * * %-ENOENT - @ctx is not a live context
 * * %-EACCES - the context was created by another process (a child after
 *   fork() using its parent's context); the call changed nothing
 * * %-ENODEV - @ctx is NULL and no context is alive
 */
int accel_context_get_backend(accel_context *ctx, const char **name);

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
/* Memory                                                             */
/* ------------------------------------------------------------------ */

/* accel_host_register() flags. */
#define ACCEL_HOST_REGISTER_READONLY	(1U << 0)
/* accel_host_unregister() flags: release when queued copies retire. */
#define ACCEL_HOST_UNREGISTER_DEFERRED	(1U << 0)

/**
 * accel_host_alloc() - allocate pinned host memory
 * @ctx: the context, NULL for the current one
 * @ptr: where the address of the allocation is stored
 * @size: bytes, not 0
 * @flags: 0 or %ACCEL_HOST_ALLOC_PORTABLE
 *
 * Allocates @size bytes (rounded up to pages) of zeroed, pinned host memory
 * in @ctx (NULL: current), mapped into the process, and stores its address in
 * ``*ptr``. Copies from and to it are asynchronous. @flags is 0 (pinned for
 * @ctx only: another context stages copies naming it) or
 * ACCEL_HOST_ALLOC_PORTABLE (pinned for every context of the process).
 *
 * CUDA / AscendCL: cudaMallocHost, cudaHostAlloc (cudaHostAllocPortable),
 * aclrtMallocHost
 *
 * Return: 0 on success, or a negative errno value (errno is never set):
 *
 * * %-EINVAL - @ptr is NULL, @size is 0, or @flags has unknown bits
 * * %-ENOMEM - past RLIMIT_MEMLOCK or the driver's pinning limit, or out of
 *   memory
 * * %-ENOSPC - the context has 8192 memory regions (libaccel(7) LIMITS)
 * * %-ENOENT - @ctx is not a live context
 * * %-ENODEV - @ctx is NULL and no context is alive
 * * %-EACCES - the context was created by another process (a child after
 *   fork() using its parent's context); the call changed nothing
 * * %-ENOTRECOVERABLE - the context is lost (cuda backend: a sticky device
 *   error; accel_last_error_string(3) says which)
 */
int accel_host_alloc(accel_context *ctx, void **ptr, size_t size,
		     unsigned int flags);

/**
 * accel_host_free() - free pinned host memory, stream-ordered
 * @ptr: an address accel_host_alloc() returned
 *
 * Frees memory from accel_host_alloc(). The mapping goes at once, so @ptr
 * must not be used again; the pages go when the last queued copy naming them
 * retires, so those copies still see the bytes they were given
 * (ACCEL_MEM_RELEASE_DEFERRED). The next allocation may reuse the address.
 *
 * CUDA / AscendCL: cudaFreeHost (which would synchronize), aclrtFreeHost
 *
 * Return: 0 on success, or a negative errno value (errno is never set):
 *
 * * %-EINVAL - @ptr is NULL, or points inside an allocation or at memory of
 *   another kind
 * * %-ENOENT - no live context knows @ptr
 * * %-EACCES - the context was created by another process (a child after
 *   fork() using its parent's context); the call changed nothing
 */
int accel_host_free(void *ptr);

/**
 * accel_host_register() - pin an existing host range
 * @ctx: the context, NULL for the current one
 * @ptr: start of the range
 * @size: bytes, not 0
 * @flags: 0 or %ACCEL_HOST_REGISTER_READONLY
 *
 * Pins [@ptr, @ptr + @size) in @ctx (NULL: current), any alignment, so that
 * copies from and to it are asynchronous. @flags: 0, or
 * ACCEL_HOST_REGISTER_READONLY (the device only reads it; copies into it fail
 * with -EPERM). With the inproc transport the range must stay mapped until it
 * is unregistered (the kernel keeps pinned pages whatever the process does; a
 * process cannot).
 *
 * CUDA / AscendCL: cudaHostRegister, aclrtHostRegister
 *
 * Return: 0 on success, or a negative errno value (errno is never set):
 *
 * * %-EINVAL - @ptr is NULL, @size is 0, the range wraps, or @flags has
 *   unknown bits
 * * %-EEXIST - the range overlaps a registered range, a pinned allocation or
 *   a device allocation of the context
 * * %-EFAULT - part of the range is not mapped (or not writable without
 *   READONLY)
 * * %-ENOMEM - past RLIMIT_MEMLOCK or the pinning limit
 * * %-ENOSPC - the context has 8192 memory regions (libaccel(7) LIMITS)
 * * %-ENOENT - @ctx is not a live context
 * * %-ENODEV - @ctx is NULL and no context is alive
 * * %-EACCES - the context was created by another process (a child after
 *   fork() using its parent's context); the call changed nothing
 * * %-ENOTRECOVERABLE - the context is lost (cuda backend: a sticky device
 *   error; accel_last_error_string(3) says which)
 */
int accel_host_register(accel_context *ctx, void *ptr, size_t size,
			unsigned int flags);

/**
 * accel_host_unregister() - unpin a registered range
 * @ptr: the start of a registered range
 * @flags: 0 or %ACCEL_HOST_UNREGISTER_DEFERRED
 *
 * Unregisters the range registered at @ptr. Without @flags, a range named by
 * queued copies is left alone and the call fails with -EBUSY; with
 * ACCEL_HOST_UNREGISTER_DEFERRED the registration goes at once and the pages
 * are unpinned when the last queued copy naming them retires.
 *
 * CUDA / AscendCL: cudaHostUnregister, aclrtHostUnregister
 *
 * Return: 0 on success, or a negative errno value (errno is never set):
 *
 * * %-EINVAL - @ptr is NULL, points inside a registered range (not at its
 *   start) or at memory of another kind, or @flags has unknown bits
 * * %-ENOENT - @ptr was not registered (or already unregistered)
 * * %-EBUSY - queued copies name the range and ACCEL_HOST_UNREGISTER_DEFERRED
 *   was not given
 * * %-EACCES - the context was created by another process (a child after
 *   fork() using its parent's context); the call changed nothing
 */
int accel_host_unregister(void *ptr, unsigned int flags);

/**
 * accel_malloc() - allocate device memory
 * @ctx: the context, NULL for the current one
 * @dev_ptr: where the device address is stored
 * @size: bytes, not 0
 *
 * Allocates @size bytes of zeroed device memory in @ctx (NULL: current).
 * ``*dev_ptr`` is an opaque device address: a reserved, inaccessible
 * (PROT_NONE) range of the process as large as the allocation, so that
 * accel_memcpy_async() can tell device pointers from host ones. Never
 * dereference it on the host.
 *
 * CUDA / AscendCL: cudaMalloc, aclrtMalloc
 *
 * Return: 0 on success, or a negative errno value (errno is never set):
 *
 * * %-EINVAL - @dev_ptr is NULL or @size is 0
 * * %-ENOMEM - past the device memory limit, or out of memory
 * * %-ENOSPC - the context has 8192 memory regions (libaccel(7) LIMITS)
 * * %-ENOENT - @ctx is not a live context
 * * %-ENODEV - @ctx is NULL and no context is alive
 * * %-EACCES - the context was created by another process (a child after
 *   fork() using its parent's context); the call changed nothing
 * * %-ENOTRECOVERABLE - the context is lost (cuda backend: a sticky device
 *   error; accel_last_error_string(3) says which)
 */
int accel_malloc(accel_context *ctx, void **dev_ptr, size_t size);

/**
 * accel_free() - free device memory, stream-ordered
 * @dev_ptr: an address accel_malloc() returned
 *
 * Frees an accel_malloc() allocation; copies already queued on it complete
 * first (cudaFreeAsync semantics, never undefined). An accel_malloc_async()
 * allocation goes back to its pool in no stream's order: it is handed out
 * again once every copy naming it retired.
 *
 * CUDA / AscendCL: cudaFree / cudaFreeAsync, aclrtFree
 *
 * Return: 0 on success, or a negative errno value (errno is never set):
 *
 * * %-EINVAL - @dev_ptr is NULL, or points inside an allocation or at memory
 *   of another kind
 * * %-ENOENT - no live context knows @dev_ptr, or it is an
 *   accel_malloc_async() allocation freed already
 * * %-EACCES - the context was created by another process (a child after
 *   fork() using its parent's context); the call changed nothing
 */
int accel_free(void *dev_ptr);

/* ------------------------------------------------------------------ */
/* Copies                                                             */
/* ------------------------------------------------------------------ */

enum accel_memcpy_kind {
	ACCEL_MEMCPY_H2H = 0,
	ACCEL_MEMCPY_H2D = 1,
	ACCEL_MEMCPY_D2H = 2,
	ACCEL_MEMCPY_D2D = 3,
	ACCEL_MEMCPY_DEFAULT = 4,	/* inferred from the pointers */
};

/**
 * accel_memcpy_async() - queue a copy on a stream
 * @stream: the stream, or %ACCEL_STREAM_DEFAULT
 * @dst: destination (host or device address)
 * @src: source (host or device address)
 * @bytes: bytes to copy
 * @kind: the direction, or %ACCEL_MEMCPY_DEFAULT to infer it from the
 *   pointers
 *
 * Queues a copy of bytes @bytes. @kind is ACCEL_MEMCPY_H2D, D2H, D2D, H2H,
 * or DEFAULT (inferred from the pointers). Pointers are resolved to the
 * context's regions: device allocations, pinned allocations, registered
 * ranges; any other host pointer is pageable. A pageable source is read
 * before the call returns (into the context's pinned staging chunks, see
 * libaccel(7)), so the caller may reuse or free it at once; this part is
 * therefore not asynchronous with respect to the source (ACCEL_SYNC_DEBUG=1
 * warns once); one that cannot be read is -EFAULT. A pageable destination is
 * filled from a staging chunk after the copy into it retired, before the
 * stream goes on; the lifetime promise covers sources only. A copy of 0
 * @bytes does nothing. Pinned source buffers freed while queued keep their
 * @bytes (see accel_host_free(3)).
 *
 * CUDA / AscendCL: cudaMemcpyAsync, aclrtMemcpyAsync
 *
 * Return: 0 on success, or a negative errno value (errno is never set):
 *
 * * %-EINVAL - @dst or @src is NULL, @kind is unknown or contradicts the
 *   pointers, a range wraps or runs past its allocation or registration
 * * %-EPERM - the destination is a read-only registration
 * * %-EIO - the @stream failed
 * * %-EAGAIN - the @stream's queue is full
 * * %-ENOENT - @stream is stale or unknown, or a buffer was freed
 *   concurrently
 * * %-EFAULT - a pageable source cannot be read, or a pageable destination
 *   cannot be written; or @dst or @src is stream-ordered pool memory that
 *   is not allocated (freed with accel_free_async() or accel_free())
 * * %-ENOMEM - no memory for staging, or the pinning limit allows not even
 *   one staging chunk (accel_last_error_string(3) names the limit)
 * * %-ENODEV - ACCEL_STREAM_DEFAULT and no context is alive
 * * %-EACCES - the context was created by another process (a child after
 *   fork() using its parent's context); the call changed nothing
 * * %-ENOTRECOVERABLE - the context is lost (cuda backend: a sticky device
 *   error; accel_last_error_string(3) says which)
 */
int accel_memcpy_async(accel_stream_t stream, void *dst, const void *src,
		       size_t bytes, enum accel_memcpy_kind kind);

/**
 * accel_memcpy_batch_async() - queue many copies on a stream in one
 *   submission
 * @stream: the stream, or %ACCEL_STREAM_DEFAULT
 * @dsts: @count destinations
 * @srcs: @count sources
 * @sizes: @count sizes in bytes
 * @count: number of copies, at most the submit limit (4096)
 * @kind: the direction of every copy, or %ACCEL_MEMCPY_DEFAULT
 *
 * Queues @count copies on @stream: copy i moves @sizes[i] bytes from @srcs[i]
 * to @dsts[i]. The result is that of @count calls of accel_memcpy_async(3) in
 * index order: each copy runs after the work queued before it, later work of
 * the @stream after all of them, and a copy may read what an earlier copy of
 * the batch wrote. @kind applies to every copy and must agree with each pair
 * of pointers, as for accel_memcpy_async(3). Copies of 0 bytes do nothing.
 *
 * When every buffer is device memory, a pinned allocation or a registered
 * range, the batch is one submission of @count descriptors (one ioctl with
 * the kernel transport): either all copies are queued or, on error, none. The
 * CUDA backend issues runs of small independent copies of one submission with
 * one cudaMemcpyBatchAsync and one completion event, so the host cost per
 * copy is well below that of separate calls.
 *
 * When a buffer is pageable, or checking mode (ACCEL_CHECK=1) is on, the
 * copies are queued one by one, exactly as by accel_memcpy_async(3) (pageable
 * sources are staged before the call returns); an error then leaves the
 * copies before the failing one queued.
 *
 * @count is at most the transport's submit limit (4096 descriptors with the
 * accelstream driver and the inproc transport).
 *
 * CUDA / AscendCL: cudaMemcpyBatchAsync (CUDA 12.8 and later); no AscendCL
 * equivalent.
 *
 * Return: 0 on success, or a negative errno value (errno is never set):
 *
 * * %-EINVAL - @dsts, @srcs or @sizes is NULL with @count not 0; a pointer is
 *   NULL; @kind is unknown or contradicts a pair of pointers; a range wraps
 *   or runs past its allocation or registration; @count exceeds the submit
 *   limit
 * * %-EPERM - a destination is a read-only registration
 * * %-EIO - the @stream failed
 * * %-EAGAIN - the @stream's queue has no room for @count more descriptors
 * * %-ENOENT - @stream is stale or unknown, or a buffer was freed
 *   concurrently
 * * %-ENOMEM - out of memory (descriptor array or bounce buffers)
 * * %-ENODEV - ACCEL_STREAM_DEFAULT and no context is alive
 * * %-ENOTRECOVERABLE - the context's device was lost (cuda backend)
 * * %-EACCES - the context was created by another process (a child after
 *   fork() using its parent's context); the call changed nothing
 * * %-EFAULT - a pageable source cannot be read, or a pageable destination
 *   cannot be written (see accel_memcpy_async(3))
 */
int accel_memcpy_batch_async(accel_stream_t stream, void *const *dsts,
			     const void *const *srcs, const size_t *sizes,
			     size_t count, enum accel_memcpy_kind kind);

/* ------------------------------------------------------------------ */
/* Fills and 2D copies (libaccel 1.4)                                 */
/* ------------------------------------------------------------------ */

/**
 * accel_memset_async() - queue a fill of memory with a byte value
 * @stream: the stream, or %ACCEL_STREAM_DEFAULT
 * @ptr: device memory, a pinned allocation or a registered range
 * @value: the byte to write, as an unsigned char (higher bits are ignored,
 *   as by memset(3))
 * @bytes: bytes to fill
 *
 * Queues one descriptor that sets @bytes bytes from @ptr to @value, in
 * stream order. The range must lie inside one device allocation, pinned
 * allocation or registered range of the @stream's context: pageable memory
 * is refused (-EOPNOTSUPP), since nothing can fill it asynchronously without
 * pinning it. A fill of 0 @bytes does nothing.
 *
 * accel_memset_d16_async() and accel_memset_d32_async() fill with 16 or 32-bit
 * elements instead: their @count is a number of elements, not of bytes, and
 * @ptr must be aligned to the element size.
 *
 * CUDA / AscendCL: cudaMemsetAsync, aclrtMemsetAsync
 *
 * Return: 0 on success, or a negative errno value (errno is never set):
 *
 * * %-EINVAL - @ptr is NULL or (16 and 32-bit forms) not aligned to the
 *   element size; the range wraps or runs past its allocation or
 *   registration
 * * %-EOPNOTSUPP - @ptr is pageable memory or memory of another context
 *   (accel_last_error_string(3) says which)
 * * %-EPERM - the memory is a read-only registration
 * * %-EIO - the @stream failed
 * * %-EAGAIN - the @stream's queue is full
 * * %-ENOENT - @stream is stale or unknown, or the memory was freed
 *   concurrently
 * * %-ENOMEM - out of memory
 * * %-ENODEV - ACCEL_STREAM_DEFAULT and no context is alive
 * * %-EACCES - the context was created by another process (a child after
 *   fork() using its parent's context); the call changed nothing
 * * %-ENOTRECOVERABLE - the context is lost (cuda backend: a sticky device
 *   error; accel_last_error_string(3) says which)
 */
int accel_memset_async(accel_stream_t stream, void *ptr, int value,
		       size_t bytes);

/**
 * accel_memset_d16_async() - queue a fill of memory with 16-bit elements
 * @stream: the stream, or %ACCEL_STREAM_DEFAULT
 * @ptr: device memory, a pinned allocation or a registered range, aligned
 *   to 2 bytes
 * @value: the element to write (native byte order)
 * @count: number of 16-bit elements (2 * @count bytes)
 *
 * As accel_memset_async(), with 16-bit elements.
 *
 * CUDA / AscendCL: cuMemsetD16Async; no AscendCL equivalent
 *
 * Return: as accel_memset_async().
 */
int accel_memset_d16_async(accel_stream_t stream, void *ptr, uint16_t value,
			   size_t count);

/**
 * accel_memset_d32_async() - queue a fill of memory with 32-bit elements
 * @stream: the stream, or %ACCEL_STREAM_DEFAULT
 * @ptr: device memory, a pinned allocation or a registered range, aligned
 *   to 4 bytes
 * @value: the element to write (native byte order)
 * @count: number of 32-bit elements (4 * @count bytes)
 *
 * As accel_memset_async(), with 32-bit elements.
 *
 * CUDA / AscendCL: cuMemsetD32Async; no AscendCL equivalent
 *
 * Return: as accel_memset_async().
 */
int accel_memset_d32_async(accel_stream_t stream, void *ptr, uint32_t value,
			   size_t count);

/**
 * accel_memcpy_2d_async() - queue a copy of a 2D area on a stream
 * @stream: the stream, or %ACCEL_STREAM_DEFAULT
 * @dst: first byte of the destination's first row
 * @dpitch: bytes from one destination row to the next, at least @width
 * @src: first byte of the source's first row
 * @spitch: bytes from one source row to the next, at least @width
 * @width: bytes of every row
 * @height: number of rows
 * @kind: the direction, or %ACCEL_MEMCPY_DEFAULT to infer it from the
 *   pointers
 *
 * Queues one descriptor that copies @height rows of @width bytes: row i
 * from @src + i * @spitch to @dst + i * @dpitch. The bytes between rows
 * (from @width to the pitch) are neither read nor written. Each side's whole
 * span, (@height - 1) * pitch + @width bytes, must lie inside one device
 * allocation, pinned allocation or registered range of the @stream's
 * context (checked for overflow here and again by the driver). Pageable
 * memory on either side is refused with -EOPNOTSUPP rather than staged row
 * by row: copy such rows with accel_memcpy_async(3), or pin the buffer with
 * accel_host_register(3). Pitches are at most 2^32 - 1 bytes (CUDA's are
 * below 2^31). A copy with @width or @height 0 does nothing. Areas that
 * overlap give an unspecified result, as in CUDA.
 *
 * CUDA / AscendCL: cudaMemcpy2DAsync, aclrtMemcpy2dAsync
 *
 * Return: 0 on success, or a negative errno value (errno is never set):
 *
 * * %-EINVAL - @dst or @src is NULL; @kind is unknown or contradicts the
 *   pointers; a pitch is below @width or above 2^32 - 1; a span wraps or
 *   runs past its allocation or registration
 * * %-EOPNOTSUPP - a side is pageable memory or memory of another context
 *   (accel_last_error_string(3) says which)
 * * %-EPERM - the destination is a read-only registration
 * * %-EIO - the @stream failed
 * * %-EAGAIN - the @stream's queue is full
 * * %-ENOENT - @stream is stale or unknown, or a buffer was freed
 *   concurrently
 * * %-ENOMEM - out of memory
 * * %-ENODEV - ACCEL_STREAM_DEFAULT and no context is alive
 * * %-EACCES - the context was created by another process (a child after
 *   fork() using its parent's context); the call changed nothing
 * * %-ENOTRECOVERABLE - the context is lost (cuda backend: a sticky device
 *   error; accel_last_error_string(3) says which)
 */
int accel_memcpy_2d_async(accel_stream_t stream, void *dst, size_t dpitch,
			  const void *src, size_t spitch, size_t width,
			  size_t height, enum accel_memcpy_kind kind);

/**
 * accel_memcpy_h2d_async() - queue a host-to-device copy on a stream
 * @stream: the stream, or %ACCEL_STREAM_DEFAULT
 * @dst: device destination
 * @src: host source
 * @bytes: bytes to copy
 *
 * accel_memcpy_async() with %ACCEL_MEMCPY_H2D, inline.
 *
 * CUDA / AscendCL: cudaMemcpyAsync, aclrtMemcpyAsync
 *
 * Return: as accel_memcpy_async().
 */
ACCELINLINE int accel_memcpy_h2d_async(accel_stream_t stream, void *dst,
				       const void *src, size_t bytes)
{
	return accel_memcpy_async(stream, dst, src, bytes, ACCEL_MEMCPY_H2D);
}

/**
 * accel_memcpy_d2h_async() - queue a device-to-host copy on a stream
 * @stream: the stream, or %ACCEL_STREAM_DEFAULT
 * @dst: host destination
 * @src: device source
 * @bytes: bytes to copy
 *
 * accel_memcpy_async() with %ACCEL_MEMCPY_D2H, inline.
 *
 * CUDA / AscendCL: cudaMemcpyAsync, aclrtMemcpyAsync
 *
 * Return: as accel_memcpy_async().
 */
ACCELINLINE int accel_memcpy_d2h_async(accel_stream_t stream, void *dst,
				       const void *src, size_t bytes)
{
	return accel_memcpy_async(stream, dst, src, bytes, ACCEL_MEMCPY_D2H);
}

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
 * complete.
 *
 * CUDA / AscendCL: cudaEventDestroy, aclrtDestroyEvent
 *
 * Return: 0 on success, or a negative errno value (errno is never set):
 *
 * * %-ENOENT - @event is stale or unknown
 * * %-EINVAL - not an event handle
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
 * counter reaches @value (@flags must be 0): a deterministic gate.
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
 * * %-ENFILE - in process: the system has no file left
 * * %-ENOMEM - in process: out of memory
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
 * * %-ENFILE - the system has no file left
 * * %-ENOMEM - out of memory
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
 * * %-ENOMEM - out of memory
 * * %-EACCES - the context was created by another process
 * * %-ENOTRECOVERABLE - the context is lost
 */
int accel_event_import_fd(accel_context *ctx, int fd, accel_event_t *event);

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
 *   65535 descriptors, are queued; libaccel(7) LIMITS); wait for some of its work to retire and try
 *   again
 * * %-EACCES - the @stream's context was created by another process (a forked
 *   child using its parent's context)
 * * %-ENOMEM - out of memory
 * * %-ENOSPC - no two events left in the context for the launch (each
 *   pending launch takes two; libaccel(7) LIMITS)
 * * %-ENODEV - ACCEL_STREAM_DEFAULT and no context is alive
 * * %-ENOTRECOVERABLE - the context is lost (cuda backend: a sticky device
 *   error; accel_last_error_string(3) says which)
 */
int accel_launch_host_func(accel_stream_t stream, accel_host_fn fn,
			   void *arg);

/* ------------------------------------------------------------------ */
/* Errors                                                             */
/* ------------------------------------------------------------------ */

/**
 * accel_strerror() - describe an error value
 * @err: a value a libaccel call returned (negative or positive errno)
 *
 * Returns a static string for @err, a negative (or positive) errno value
 * returned by libaccel, with the library's meaning (for example -EAGAIN reads
 * "Resource temporarily unavailable: not ready, or queue full", -EACCES
 * "context opened by another process"). Any int has a text: values libaccel
 * never returns, INT_MIN included, read "Unknown error". Never NULL,
 * thread-safe. For what a call ran into beyond its errno value, see
 * accel_last_error_string(3).
 *
 * CUDA / AscendCL: cudaGetErrorString, aclGetRecentErrMsg
 *
 * Return: A pointer to a static string.
 */
const char *accel_strerror(int err);

/**
 * accel_last_error_string() - what the calling thread's last call ran into
 * Context: any thread; the string belongs to the calling thread.
 *
 * Returns the details of the calling thread's last failing call, beyond its
 * errno value: why a context could not be created (an unknown ACCEL_TRANSPORT
 * or ACCEL_BACKEND, /dev/accelstream missing and what to do about it, an ABI
 * mismatch, why the cuda backend could not start, with the CUDA error), the
 * CUDA error name and text of a failed CUDA call ("cudaMalloc:
 * cudaErrorMemoryAllocation (out of memory)"), or why a context is lost
 * (-ENOTRECOVERABLE). The messages libaccel logs for a call (see
 * accel_set_log_fn(3)) are here too.
 *
 * The string is per thread and about the last call only: every call but
 * accel_last_error_string() and accel_strerror() clears it when it starts,
 * argument checks included. It is empty after a call that succeeded, but
 * for a copy staged through the pinned staging pool, which leaves a note
 * saying what was staged and why (pageable memory, or pinned memory of
 * another context; a staged destination's note begins "the copy into ");
 * and after one that failed with nothing to add (the errno value says it
 * all; see accel_strerror(3)). It is never NULL, and stays valid and
 * unchanged until the thread's next libaccel call other than
 * accel_strerror().
 *
 * CUDA / AscendCL: cudaGetErrorString(cudaGetLastError()), aclGetRecentErrMsg
 *
 * Return: A pointer to a thread-local string, possibly empty.
 */
const char *accel_last_error_string(void);

/**
 * typedef accel_log_fn - receives libaccel's log messages
 * @data: what accel_set_log_fn() was given.
 * @priority: the message's syslog(3) priority (LOG_ERR 3 ... LOG_DEBUG 7).
 * @msg: the text, one line without a newline.
 */
typedef void (*accel_log_fn)(void *data, int priority, const char *msg);

/**
 * accel_set_log_fn() - where libaccel's messages go
 * @fn: receives every message; NULL restores the default.
 * @data: passed to @fn.
 * Context: any thread; process-wide. @fn may be called from any thread,
 * libaccel's own included, and must not call libaccel.
 *
 * libaccel never writes to stderr by itself: a failure is in the return
 * value and its details in accel_last_error_string(3). Its messages (why a
 * context could not be created, a device context lost, a failure of one of
 * its own threads, the ACCEL_TRACE=1 breakdown, the ACCEL_SYNC_DEBUG=1 note)
 * are passed on only when asked for, as libkmod's kmod_set_log_fn(): to @fn,
 * or without one to stderr when ACCEL_LOG names a priority (1 or err,
 * warning, info, debug) at or below the message's; a diagnostic turned on
 * by its own variable (ACCEL_TRACE, ACCEL_SYNC_DEBUG) is asked for by it.
 *
 * CUDA / AscendCL: none in CUDA (the runtime does not log);
 * aclInitCallbackRegister is the nearest in AscendCL.
 */
void accel_set_log_fn(accel_log_fn fn, void *data);

/*
 * A lost context: -ENOTRECOVERABLE. The context's device hit a sticky
 * error (an illegal address, say): its streams failed with -EIO, and every
 * later call on the context returns -ENOTRECOVERABLE, except the destroy,
 * free and unregister calls, which still work. Destroy it and create one.
 */

/* ------------------------------------------------------------------ */
/* Devices                                                            */
/* ------------------------------------------------------------------ */

/* accel_device_prop.free_mem when the transport cannot tell. */
#define ACCEL_MEM_UNKNOWN		(~(uint64_t)0)

/**
 * struct accel_device_prop - what a context's device is
 * @name: NUL-terminated device name
 * @total_mem: device memory in bytes (cpu backend: the context's limit)
 * @free_mem: free device memory now in bytes, or %ACCEL_MEM_UNKNOWN
 * @pinned_limit: most bytes the context may pin, in force now
 *   (the driver's limit, lowered to RLIMIT_MEMLOCK without CAP_IPC_LOCK)
 * @copy_engines: concurrent copy engines; 0 when unknown
 * @device: ordinal of the device the context runs on
 * @backend: "cpu" or "cuda", static storage
 * @transport: "kernel" or "inproc", static storage
 * @reserved: zero
 *
 * CUDA / AscendCL: struct cudaDeviceProp, aclrtGetDeviceInfo
 */
struct accel_device_prop {
	char name[256];
	uint64_t total_mem;
	uint64_t free_mem;
	uint64_t pinned_limit;
	unsigned int copy_engines;
	int device;
	const char *backend;
	const char *transport;
	uint64_t reserved[4];
};

/**
 * accel_device_get_count() - devices the context's backend can see
 * @ctx: the context, or NULL for the calling thread's current one
 * @count: out, the number of devices
 *
 * CUDA / AscendCL: cudaGetDeviceCount, aclrtGetDeviceCount
 *
 * Return: 0 on success, or a negative errno value (errno is never set):
 *
 * * %-EINVAL - count is NULL, or ctx is a handle of another type.
 * * %-ENOENT - ctx is not a live context.
 * * %-EACCES - the context was created by another process (a child after
 *   fork() using its parent's context); the call changed nothing
 * * %-ENODEV - ctx is NULL and no context is alive; or (cuda backend) CUDA
 *   reports no usable device.
 * * %-ENOTRECOVERABLE - the context is lost (see libaccel(7)).
 * * %-EIO - (cuda backend) CUDA failed the query; accel_last_error_string(3)
 *   names the CUDA error.
 */
int accel_device_get_count(accel_context *ctx, int *count);

/**
 * accel_device_get_properties() - describe the context's device
 * @ctx: the context, or NULL for the calling thread's current one
 * @prop: out, filled whole
 *
 * CUDA / AscendCL: cudaGetDeviceProperties, aclrtGetDeviceInfo
 *
 * Return: 0 on success, or a negative errno value (errno is never set):
 *
 * * %-EINVAL - prop is NULL, or ctx is a handle of another type.
 * * %-ENOENT - ctx is not a live context.
 * * %-EACCES - the context was created by another process (a child after
 *   fork() using its parent's context); the call changed nothing
 * * %-ENODEV - ctx is NULL and no context is alive; or (cuda backend) CUDA
 *   reports no usable device.
 * * %-ENOTRECOVERABLE - the context is lost (see libaccel(7)).
 * * %-EIO - (cuda backend) cudaGetDeviceProperties or cudaMemGetInfo failed;
 *   accel_last_error_string(3) names the CUDA error.
 */
int accel_device_get_properties(accel_context *ctx,
				struct accel_device_prop *prop);

/**
 * accel_mem_get_info() - free and total device memory
 * @ctx: the context, or NULL for the calling thread's current one
 * @free_bytes: out, free device memory in bytes
 * @total_bytes: out, total device memory in bytes
 *
 * CUDA / AscendCL: cudaMemGetInfo, aclrtGetMemInfo
 *
 * Return: 0 on success, or a negative errno value (errno is never set):
 *
 * * %-EINVAL - free_bytes or total_bytes is NULL, or ctx is a handle of
 *   another type.
 * * %-ENOENT - ctx is not a live context.
 * * %-EACCES - the context was created by another process (a child after
 *   fork() using its parent's context); the call changed nothing
 * * %-ENODEV - ctx is NULL and no context is alive.
 * * %-EOPNOTSUPP - the context runs on the cpu backend (see above);
 *   accel_last_error_string(3) says so.
 * * %-ENOTRECOVERABLE - the context is lost (see libaccel(7)).
 * * %-EIO - (cuda backend) cudaMemGetInfo failed; accel_last_error_string(3)
 *   names the CUDA error.
 */
int accel_mem_get_info(accel_context *ctx, size_t *free_bytes,
		       size_t *total_bytes);

/**
 * accel_context_synchronize() - wait for every stream of a context
 * @ctx: the context, or NULL for the calling thread's current one
 * @timeout_ns: nanoseconds from the call; 0 polls, %ACCEL_TIMEOUT_INFINITE
 *   blocks
 *
 * Blocks until everything queued on every live stream of the context when
 * the call started retired, against one deadline.
 *
 * CUDA / AscendCL: cudaDeviceSynchronize, aclrtSynchronizeDevice
 *
 * Return: 0 on success, or a negative errno value (errno is never set):
 *
 * * %-EINVAL - ctx is a handle of another type.
 * * %-ENOENT - ctx is not a live context.
 * * %-ENODEV - ctx is NULL and no context is alive.
 * * %-ETIME - the deadline passed with work pending (with timeout_ns 0: work
 *   is pending).
 * * %-EIO - a live stream of the context has failed.
 * * %-EDEADLK - called from a host function (accel_launch_host_func(3),
 *   accel_stream_add_callback(3)) with a nonzero timeout; nothing was waited
 *   for.
 * * %-EACCES - the context was created by another process (a forked child
 *   using its parent's context).
 * * %-ENOTRECOVERABLE - the context is lost (see libaccel(7)).
 * * %-ENOMEM - out of memory.
 */
int accel_context_synchronize(accel_context *ctx, uint64_t timeout_ns);

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
 *   65535 descriptors, are queued; libaccel(7) LIMITS); wait for some of its work to retire and try
 *   again.
 * * %-EACCES - the stream's context was created by another process (a forked
 *   child using its parent's context).
 * * %-ENOTRECOVERABLE - the context is lost (see libaccel(7)).
 * * %-ENOMEM - out of memory.
 * * %-ENOSPC - no two events left in the context for the callback (each
 *   pending callback takes two; libaccel(7) LIMITS).
 */
int accel_stream_add_callback(accel_stream_t stream,
			      accel_stream_callback_t fn, void *arg,
			      unsigned int flags);


/* ------------------------------------------------------------------ */
/* Several devices                                                    */
/* ------------------------------------------------------------------ */

/**
 * DOC: Several devices
 *
 * A context has a current device (0 unless it was created with
 * accel_context_create_on_device()): streams and device allocations made
 * in the context go to the current device of the time and stay there,
 * as cudaSetDevice() makes CUDA's. One context may therefore hold streams
 * and memory of several devices, which is CUDA's model with peer access:
 * a copy between two devices' memory (accel_memcpy_peer_async(), or
 * accel_memcpy_async() with two device pointers) may be queued on a stream
 * of either device, and a stream of one device may wait on an event
 * recorded on another (accel_stream_wait_event(); CUDA allows it,
 * AscendCL's aclrtStreamWaitEvent() does not). Unlike CUDA's, the current
 * device belongs to the context, not to the thread: threads sharing a
 * context share it.
 *
 * The cpu backend serves the transport's devices: the module's
 * ``devices`` parameter, or ACCEL_INPROC_DEVICES (default 1) with the
 * inproc transport. The cuda backend runs a context on one GPU (the one
 * it was created on); a context per GPU serves several.
 */

/**
 * accel_context_create_on_device() - create a context on a device
 * @ctx: where the new context is stored
 * @device: the device, 0 to accel_device_get_count() - 1
 * @flags: must be 0
 *
 * accel_context_create(), with @device as the context's current device
 * (the cuda backend runs the context on GPU @device instead of
 * ACCEL_CUDA_DEVICE).
 *
 * CUDA / AscendCL: cudaSetDevice + the primary context, cuCtxCreate(&ctx,
 * flags, dev), aclrtCreateContext(&ctx, deviceId)
 *
 * Return: 0 on success, or a negative errno value (errno is never set):
 *
 * * %-EINVAL - @ctx is NULL, @flags is not 0, or ACCEL_TRANSPORT /
 *   ACCEL_BACKEND names no known value
 * * %-ENODEV - @device is negative or past the last device, or the errors
 *   of accel_context_create(3): no transport, or the cuda backend cannot
 *   start
 * * %-ENOENT - ACCEL_TRANSPORT=kernel and /dev/accelstream does not exist
 * * %-EPROTO - the driver's ABI version differs from the library's
 * * %-ENOMEM - out of memory
 */
int accel_context_create_on_device(accel_context **ctx, int device,
				   unsigned int flags);

/**
 * accel_context_set_device() - set a context's current device
 * @ctx: the context, NULL for the current one
 * @device: the device, 0 to accel_device_get_count() - 1
 *
 * Streams and device allocations made in @ctx from now on go to @device;
 * those made before stay where they are. The current device is the
 * context's, shared by its threads (CUDA's is per thread).
 *
 * CUDA / AscendCL: cudaSetDevice, aclrtSetDevice
 *
 * Return: 0 on success, or a negative errno value (errno is never set):
 *
 * * %-ENODEV - @device is negative or past the last device; or @ctx is
 *   NULL and no context is alive
 * * %-EOPNOTSUPP - the cuda backend, and @device is not the GPU the
 *   context runs on (create a context on that device)
 * * %-ENOENT - @ctx is not a live context
 * * %-EINVAL - @ctx is a handle of another type
 * * %-EACCES - the context was created by another process (a child after
 *   fork() using its parent's context); the call changed nothing
 * * %-ENOTRECOVERABLE - the context is lost (see libaccel(7))
 */
int accel_context_set_device(accel_context *ctx, int device);

/**
 * accel_context_get_device() - a context's current device
 * @ctx: the context, NULL for the current one
 * @device: where the device's ordinal is stored
 *
 * CUDA / AscendCL: cudaGetDevice, aclrtGetDevice
 *
 * Return: 0 on success, or a negative errno value (errno is never set):
 *
 * * %-EINVAL - @device is NULL, or @ctx is a handle of another type
 * * %-ENOENT - @ctx is not a live context
 * * %-EACCES - the context was created by another process (a child after
 *   fork() using its parent's context); the call changed nothing
 * * %-ENODEV - @ctx is NULL and no context is alive
 * * %-ENOTRECOVERABLE - the context is lost (see libaccel(7))
 */
int accel_context_get_device(accel_context *ctx, int *device);

/**
 * accel_stream_get_device() - the device a stream runs on
 * @stream: the stream, or %ACCEL_STREAM_DEFAULT
 * @device: where the device's ordinal is stored
 *
 * The context's current device when @stream was created.
 *
 * CUDA / AscendCL: cudaStreamGetDevice; none in AscendCL (a stream is of
 * its context's device)
 *
 * Return: 0 on success, or a negative errno value (errno is never set):
 *
 * * %-EINVAL - @device is NULL, or not a stream handle
 * * %-ENOENT - @stream is stale or unknown
 * * %-EIO - the @stream failed (sticky)
 * * %-ENODEV - ACCEL_STREAM_DEFAULT and no context is alive
 * * %-EACCES - the context was created by another process
 * * %-ENOTRECOVERABLE - the context is lost (see libaccel(7))
 */
int accel_stream_get_device(accel_stream_t stream, int *device);

/**
 * accel_device_can_access_peer() - can one device reach another's memory?
 * @ctx: the context, NULL for the current one
 * @can_access: where 1 (yes) or 0 (no) is stored
 * @device: the device that would access
 * @peer: the device whose memory it would access
 *
 * Stores 1 when copies run by @device reach @peer's memory directly: with
 * the cpu backend for any two distinct devices. 0 for @device equal to
 * @peer (as CUDA answers), and with the cuda backend, whose context runs on
 * one GPU. A peer copy works either way: accel_memcpy_peer_async(3).
 *
 * CUDA / AscendCL: cudaDeviceCanAccessPeer, aclrtDeviceCanAccessPeer
 *
 * Return: 0 on success, or a negative errno value (errno is never set):
 *
 * * %-EINVAL - @can_access is NULL, or @ctx is a handle of another type
 * * %-ENODEV - @device or @peer is negative or past the last device; or
 *   @ctx is NULL and no context is alive
 * * %-ENOENT - @ctx is not a live context
 * * %-EACCES - the context was created by another process (a child after
 *   fork() using its parent's context); the call changed nothing
 * * %-ENOTRECOVERABLE - the context is lost (see libaccel(7))
 */
int accel_device_can_access_peer(accel_context *ctx, int *can_access,
				 int device, int peer);

/**
 * accel_memcpy_peer_async() - queue a copy between two devices' memory
 * @stream: the stream, of either device (or another), or
 *   %ACCEL_STREAM_DEFAULT
 * @dst: destination, device memory of @dst_device
 * @dst_device: the device of @dst
 * @src: source, device memory of @src_device
 * @src_device: the device of @src
 * @bytes: bytes to copy
 *
 * Queues a copy of @bytes bytes from @src on @src_device to @dst on
 * @dst_device (the two may be one device) on @stream, which may be a
 * stream of any device of the context: the engine of @stream's device runs
 * it, in @stream's order. Both allocations follow the lifetime rules of any
 * copy: accel_free(3) of either while the copy is queued releases it only
 * after the copy retired. Both pointers must be accel_malloc() memory of
 * @stream's context.
 *
 * CUDA / AscendCL: cudaMemcpyPeerAsync; aclrtMemcpyAsync with
 * ACL_MEMCPY_DEVICE_TO_DEVICE after aclrtDeviceEnablePeerAccess
 *
 * Return: 0 on success, or a negative errno value (errno is never set):
 *
 * * %-EINVAL - @dst or @src is NULL, a range wraps or runs past its
 *   allocation, a pointer is not device memory of @stream's context, or
 *   its device is not the one given (accel_last_error_string(3) says
 *   which), or not a stream handle
 * * %-ENODEV - @dst_device or @src_device is negative or past the last
 *   device; or ACCEL_STREAM_DEFAULT and no context is alive
 * * %-EIO - the @stream failed
 * * %-EAGAIN - the @stream's queue is full
 * * %-ENOENT - @stream is stale or unknown, or an allocation was freed
 *   concurrently
 * * %-ENOMEM - out of memory
 * * %-EACCES - the context was created by another process
 * * %-ENOTRECOVERABLE - the context is lost (see libaccel(7))
 */
int accel_memcpy_peer_async(accel_stream_t stream, void *dst, int dst_device,
			    const void *src, int src_device, size_t bytes);

/* ------------------------------------------------------------------ */
/* Stream-ordered allocation                                          */
/* ------------------------------------------------------------------ */

/*
 * DOC: Stream-ordered allocation
 *
 * Each context has one memory pool (CUDA: the device's default
 * cudaMemPool_t) from which accel_malloc_async() allocates and to which
 * accel_free_async() returns memory in a stream's order. The pool reserves
 * device memory in chunks of at least 2 MiB (counted against the context's
 * device memory limit, as accel_malloc() memory is) and hands out blocks
 * in multiples of 256 bytes, 256-byte aligned.
 *
 * Reuse: a block freed on stream S is reusable at once by work queued on S
 * after the free, unless a copy queued on another stream still names it;
 * by any other stream only once the free retired (everything queued on S
 * before it) and every queued copy that named the block retired, on any
 * stream. Event dependencies are not followed (CUDA's
 * cudaMemPoolReuseFollowEventDependencies is off): a stream that waited on
 * an event recorded after the free still gets the block only once the free
 * retired. So a block is never handed out while a copy queued on another
 * stream than the new owner's may still read or write it.
 *
 * Release threshold: at every synchronization that returns 0
 * (accel_stream_synchronize(), accel_event_synchronize(),
 * accel_context_synchronize()) a pool that reserves more than its release
 * threshold (0 bytes unless set, as in CUDA) gives back chunks none of
 * whose bytes is allocated or waiting for a free to retire, until it
 * reserves no more than the threshold. accel_mem_pool_trim_to() does the
 * same on demand, and an allocation that would pass the device memory
 * limit (accel_malloc() and accel_malloc_async() alike) first gives back
 * every such chunk. Reserved memory is thus bounded by the context's
 * device memory limit and, at each synchronization, by the threshold plus
 * what is allocated or pending.
 */

/**
 * accel_malloc_async() - allocate device memory in a stream's order
 * @stream: the stream, or %ACCEL_STREAM_DEFAULT
 * @dev_ptr: where the device address is stored
 * @size: bytes, not 0
 *
 * Allocates @size bytes of device memory from the pool of @stream's
 * context, usable by work queued on @stream after this call and, once
 * ordered after it (accel_event_record() on @stream, then
 * accel_stream_wait_event() or a synchronize), by any other stream of the
 * context. The memory is not zeroed: it may hold what an earlier
 * allocation of the same context left. The address is an opaque device
 * address, as accel_malloc()'s; free it with accel_free_async() or
 * accel_free(). See "Stream-ordered allocation" in libaccel(7).
 *
 * CUDA / AscendCL: cudaMallocAsync (cudaMallocFromPoolAsync with the
 * device's default pool); AscendCL has no stream-ordered allocator, the
 * closest being aclrtMalloc (not ordered on a stream)
 *
 * Return: 0 on success, or a negative errno value (errno is never set):
 *
 * * %-EINVAL - @dev_ptr is NULL, @size is 0, or @stream is a handle of
 *   another type
 * * %-ENOMEM - the pool cannot grow: past the context's device memory limit
 *   even after idle chunks were given back, or out of memory
 *   (accel_last_error_string(3) gives the pool's figures)
 * * %-ENOSPC - the context has 8192 memory regions (libaccel(7) LIMITS);
 *   each pool chunk is one
 * * %-EIO - the @stream failed
 * * %-ENOENT - @stream is stale or unknown
 * * %-ENODEV - %ACCEL_STREAM_DEFAULT and no context is alive
 * * %-EACCES - the context was created by another process (a child after
 *   fork() using its parent's context); the call changed nothing
 * * %-ENOTRECOVERABLE - the context is lost (cuda backend: a sticky device
 *   error; accel_last_error_string(3) says which)
 */
int accel_malloc_async(accel_stream_t stream, void **dev_ptr, size_t size);

/**
 * accel_free_async() - free device memory in a stream's order
 * @stream: the stream, or %ACCEL_STREAM_DEFAULT
 * @dev_ptr: an address accel_malloc_async() returned in @stream's context
 *
 * Returns the allocation to its pool at this point of @stream's order:
 * work queued on @stream before the call, and copies queued on any stream,
 * keep the memory until they retired; work queued on @stream after the
 * call may get it back at once from accel_malloc_async(). Once the call
 * returned, queueing a copy that names the memory fails with -EFAULT
 * until the memory is allocated again. A pointer freed twice gives
 * -ENOENT while the memory is not allocated again; after that it names
 * the new allocation, as with any allocator.
 *
 * CUDA / AscendCL: cudaFreeAsync; AscendCL has none (aclrtFree, not
 * ordered on a stream)
 *
 * Return: 0 on success, or a negative errno value (errno is never set):
 *
 * * %-EINVAL - @dev_ptr is NULL, points inside an allocation, or is memory
 *   of another kind (accel_malloc(), accel_host_alloc(), a registration);
 *   or @stream is a handle of another type
 * * %-ENOENT - @dev_ptr is no live accel_malloc_async() allocation of the
 *   stream's context (freed already, or never allocated there), or @stream
 *   is stale or unknown
 * * %-EIO - the @stream failed (the memory stays allocated; accel_free(3)
 *   frees it outside any stream's order)
 * * %-ENOMEM - out of memory
 * * %-ENODEV - %ACCEL_STREAM_DEFAULT and no context is alive
 * * %-EACCES - the context was created by another process (a child after
 *   fork() using its parent's context); the call changed nothing
 * * %-ENOTRECOVERABLE - the context is lost (cuda backend: a sticky device
 *   error; accel_last_error_string(3) says which)
 */
int accel_free_async(accel_stream_t stream, void *dev_ptr);

/**
 * accel_mem_pool_set_release_threshold() - bytes the pool keeps
 * @ctx: the context, NULL for the current one
 * @bytes: the release threshold in bytes; UINT64_MAX keeps everything
 *
 * At each synchronization the pool of @ctx gives idle chunks back to the
 * device while it reserves more than @bytes (see "Stream-ordered
 * allocation" in libaccel(7)). The default is 0: every idle chunk goes
 * back at the next synchronization.
 *
 * CUDA / AscendCL: cudaMemPoolSetAttribute(cudaMemPoolAttrReleaseThreshold)
 * on the device's default pool; AscendCL has none
 *
 * Return: 0 on success, or a negative errno value (errno is never set):
 *
 * * %-EINVAL - @ctx is a handle of another type
 * * %-ENOENT - @ctx is not a live context
 * * %-EACCES - the context was created by another process (a child after
 *   fork() using its parent's context); the call changed nothing
 * * %-ENODEV - @ctx is NULL and no context is alive
 * * %-ENOMEM - out of memory (the pool is made on first use)
 * * %-ENOTRECOVERABLE - the context is lost (see libaccel(7))
 */
int accel_mem_pool_set_release_threshold(accel_context *ctx, uint64_t bytes);

/**
 * accel_mem_pool_trim_to() - give idle pool memory back now
 * @ctx: the context, NULL for the current one
 * @min_bytes_to_keep: bytes the pool may keep reserved
 *
 * Gives the chunks of the pool of @ctx that hold no allocated byte and no
 * byte waiting for a free to retire back to the device, until the pool
 * reserves at most @min_bytes_to_keep bytes or no such chunk is left.
 * Allocated memory and memory whose free has not retired stay.
 *
 * CUDA / AscendCL: cudaMemPoolTrimTo on the device's default pool;
 * AscendCL has none
 *
 * Return: 0 on success, or a negative errno value (errno is never set):
 *
 * * %-EINVAL - @ctx is a handle of another type
 * * %-ENOENT - @ctx is not a live context
 * * %-EACCES - the context was created by another process (a child after
 *   fork() using its parent's context); the call changed nothing
 * * %-ENODEV - @ctx is NULL and no context is alive
 * * %-ENOTRECOVERABLE - the context is lost (see libaccel(7))
 */
int accel_mem_pool_trim_to(accel_context *ctx, size_t min_bytes_to_keep);

/**
 * accel_mem_pool_get_usage() - what the pool holds
 * @ctx: the context, NULL for the current one
 * @reserved: out, bytes of device memory the pool of @ctx reserves
 * @used: out, bytes of it allocated (each allocation rounded up to 256)
 *
 * CUDA / AscendCL: cudaMemPoolGetAttribute(cudaMemPoolAttrReservedMemCurrent,
 * cudaMemPoolAttrUsedMemCurrent); AscendCL has none
 *
 * Return: 0 on success, or a negative errno value (errno is never set):
 *
 * * %-EINVAL - @reserved or @used is NULL, or @ctx is a handle of another
 *   type
 * * %-ENOENT - @ctx is not a live context
 * * %-EACCES - the context was created by another process (a child after
 *   fork() using its parent's context); the call changed nothing
 * * %-ENODEV - @ctx is NULL and no context is alive
 * * %-ENOTRECOVERABLE - the context is lost (see libaccel(7))
 */
int accel_mem_pool_get_usage(accel_context *ctx, size_t *reserved,
			     size_t *used);

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
 * allocated it: a copy in another context (of the same transport, cpu
 * backend) is asynchronous too instead of being staged. That context
 * imports the pages at its first copy naming them (the kernel pins them
 * for it as a registration; charged to its own pin limit), and holds them
 * for its queued copies whatever happens to the allocation: accel_host_free()
 * and the owner's destroy release every import stream-ordered, as they
 * release the allocation. With the cuda backend, other contexts stage such
 * copies (see accel_host_alloc(3)).
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
 * * %-EAGAIN - the @stream's queue is full (65535 descriptors; libaccel(7)
 *   LIMITS)
 * * %-EACCES - the context was created by another process (a child after
 *   fork() using its parent's context); the call changed nothing
 * * %-ENOTRECOVERABLE - the context is lost (cuda backend: a sticky device
 *   error; accel_last_error_string(3) says which)
 */
int accel_stream_write_value(accel_stream_t stream, accel_event_t event,
			     uint64_t value, unsigned int flags);

#ifdef __cplusplus
}
#endif

#endif /* LIBACCEL_H */
