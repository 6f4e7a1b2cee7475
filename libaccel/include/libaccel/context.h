/* SPDX-License-Identifier: MIT */
/*
 * libaccel: contexts and devices.
 *
 * Part of libaccel's public interface; include <libaccel.h>, which
 * includes this header with the types and constants it needs.
 */
#ifndef LIBACCEL_CONTEXT_H
#define LIBACCEL_CONTEXT_H

#ifndef LIBACCEL_H
#error "include <libaccel.h>, not <libaccel/context.h>"
#endif

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
 * * %-EMFILE - no file descriptor left for /dev/accelstream (kernel
 *   transport): the process is at RLIMIT_NOFILE
 * * %-ENFILE - as %-EMFILE, the system at fs.file-max
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
 * * %-EINVAL - @ctx is a handle of another type (a stream or an event)
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
 * * %-ENOSPC - @stream is ACCEL_STREAM_DEFAULT and the calling thread has
 *   no default stream in the context yet, which has 1024 streams already
 *   (libaccel(7) LIMITS)
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
 * * %-EFAULT - a pointer is stream-ordered pool memory that is not
 *   allocated (freed with accel_free_async() or accel_free(), or never
 *   handed out by accel_malloc_async()); nothing is queued
 * * %-ENOSPC - @stream is ACCEL_STREAM_DEFAULT and the calling thread has
 *   no default stream in the context yet, which has 1024 streams already
 *   (libaccel(7) LIMITS)
 */
int accel_memcpy_peer_async(accel_stream_t stream, void *dst, int dst_device,
			    const void *src, int src_device, size_t bytes);

#endif /* LIBACCEL_CONTEXT_H */
