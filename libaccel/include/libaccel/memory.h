/* SPDX-License-Identifier: MIT */
/*
 * libaccel: host and device memory, and stream-ordered allocation.
 *
 * Part of libaccel's public interface; include <libaccel.h>, which
 * includes this header with the types and constants it needs.
 */
#ifndef LIBACCEL_MEMORY_H
#define LIBACCEL_MEMORY_H

#ifndef LIBACCEL_H
#error "include <libaccel.h>, not <libaccel/memory.h>"
#endif

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
 * process cannot). Nothing of @ctx is locked while the pages are faulted in
 * and pinned, which takes as long as the range is large: the context's other
 * threads copy meanwhile. Of two overlapping registrations in progress at
 * once, one fails with -EEXIST.
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
 *   READONLY), or its pages cannot be faulted in (a file mapping past the
 *   end of its file)
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
 *   each pool chunk is one;
 *   or @stream is ACCEL_STREAM_DEFAULT and the calling thread has
 *   no default stream in the context yet, which has 1024 streams already
 *   (libaccel(7) LIMITS)
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
 * * %-ENOSPC - @stream is ACCEL_STREAM_DEFAULT and the calling thread has
 *   no default stream in the context yet, which has 1024 streams already
 *   (libaccel(7) LIMITS)
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

#endif /* LIBACCEL_MEMORY_H */
