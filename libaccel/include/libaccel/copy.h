/* SPDX-License-Identifier: MIT */
/*
 * libaccel: copies, fills and 2D copies.
 *
 * Part of libaccel's public interface; include <libaccel.h>, which
 * includes this header with the types and constants it needs.
 */
#ifndef LIBACCEL_COPY_H
#define LIBACCEL_COPY_H

#ifndef LIBACCEL_H
#error "include <libaccel.h>, not <libaccel/copy.h>"
#endif

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
 * * %-ENOSPC - a pageable side is staged and the context has all its 65536
 *   events or 8192 memory regions in use, so the staging pool can take
 *   none for it (libaccel(7) LIMITS); or @stream is ACCEL_STREAM_DEFAULT and the calling thread has
 *   no default stream in the context yet, which has 1024 streams already
 *   (libaccel(7) LIMITS)
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
 * * %-ENOSPC - a pageable side is staged and the context has all its 65536
 *   events or 8192 memory regions in use, so the staging pool can take
 *   none for it (libaccel(7) LIMITS); or @stream is ACCEL_STREAM_DEFAULT and the calling thread has
 *   no default stream in the context yet, which has 1024 streams already
 *   (libaccel(7) LIMITS)
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
 * * %-EFAULT - a pointer is stream-ordered pool memory that is not
 *   allocated (freed with accel_free_async() or accel_free(), or never
 *   handed out by accel_malloc_async()); nothing is queued
 * * %-ENOSPC - @stream is ACCEL_STREAM_DEFAULT and the calling thread has
 *   no default stream in the context yet, which has 1024 streams already
 *   (libaccel(7) LIMITS)
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
 * * %-EFAULT - a pointer is stream-ordered pool memory that is not
 *   allocated (freed with accel_free_async() or accel_free(), or never
 *   handed out by accel_malloc_async()); nothing is queued
 * * %-ENOSPC - @stream is ACCEL_STREAM_DEFAULT and the calling thread has
 *   no default stream in the context yet, which has 1024 streams already
 *   (libaccel(7) LIMITS)
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

#endif /* LIBACCEL_COPY_H */
