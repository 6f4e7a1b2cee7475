// SPDX-License-Identifier: MIT
/*
 * accel_memset_async() and its 16/32-bit forms (one MEMSET descriptor) and
 * accel_memcpy_2d_async() (one COPY_2D): device and pinned memory only,
 * resolved as copies are (copy_int.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "accel_int.h"
#include "copy_int.h"

/*
 * Memory a fill or a 2D copy names must be the context's own (device
 * memory, a pinned allocation, a registered range): these are queued as
 * one descriptor, never staged.
 */
static int not_context_memory(struct accel_ctx *ctx, const void *ptr,
			      const char *call)
{
	struct accel_region r;
	uint64_t owner;

	if (accel_region_foreign(ctx, (uintptr_t)ptr, &r, &owner))
		accel_set_error("%s: %p is memory of %s in another context (%#llx), not of this stream's context (%#llx)",
				call, ptr, copy_region_call[r.kind],
				(unsigned long long)owner,
				(unsigned long long)ctx->handle);
	else if (accel_range_check((uintptr_t)ptr, 1, false))
		accel_set_error("%s: %p is not memory of the stream's context nor mapped in this process: freed (accel_free(), accel_host_free()) or never allocated",
				call, ptr);
	else
		accel_set_error("%s: %p is pageable memory; use accel_malloc(), accel_host_alloc() or accel_host_register() memory",
				call, ptr);
	return -EOPNOTSUPP;
}

/* accel_memset_async() and its 16 and 32-bit forms: one MEMSET. */
static int memset_async(accel_stream_t stream, void *ptr, uint32_t value,
			uint32_t width, size_t count, const char *call)
{
	void *dst_token = NULL;
	struct accel_stream_impl *s;
	struct pool_block *blks[1];
	struct uses u = { .blk = blks };
	struct accel_desc desc;
	struct accel_ctx *ctx;
	struct side d;
	size_t bytes;
	int ret;

	if (!ptr || (uintptr_t)ptr % width) {
		accel_set_error("%s: the destination %p is %s", call, ptr,
				!ptr ? "NULL" : width == 2 ?
				"not 2-byte aligned" : "not 4-byte aligned");
		return -EINVAL;
	}
	if (__builtin_mul_overflow(count, (size_t)width, &bytes) ||
	    (uintptr_t)ptr + bytes < (uintptr_t)ptr) {
		accel_set_error("%s: %zu values of %u bytes from %p wrap past the top of the address space",
				call, count, width, ptr);
		return -EINVAL;
	}
	ret = accel_stream_get(stream, &s);
	if (ret)
		return ret;
	ctx = s->child.ctx;
	pthread_mutex_lock(&ctx->lock);
	ret = copy_resolve_locked(ctx, ptr, bytes, &d, "destination");
	if (!ret && bytes)
		ret = copy_uses_begin_locked(&u, d.blk);
	pthread_mutex_unlock(&ctx->lock);
	if (!ret && !d.found)
		ret = not_context_memory(ctx, ptr, call);
	if (!ret && !bytes)
		ret = accel_stream_error(s);
	if (ret || !bytes)
		goto out;

	dst_token = copy_check_dst(ctx, &d, ptr, bytes);
	memset(&desc, 0, sizeof(desc));
	desc.op = ACCEL_OP_MEMSET;
	desc.flags = width == 4 ? ACCEL_MEMSET_D32 :
		     width == 2 ? ACCEL_MEMSET_D16 : 0;
	desc.dst = d.handle;
	desc.dst_offset = d.offset;
	desc.length = bytes;
	desc.value = value;
	/* A stream-ordered block is named until this fill retired. */
	ret = copy_submit_one(s, &u, &desc, NULL, NULL, 0, dst_token);
out:
	return copy_call_end(s, &u, ret);
}

ACCEL_EXPORT
int accel_memset_async(accel_stream_t stream, void *ptr, int value,
		       size_t bytes)
{
	ACCEL_API_ENTER();

	/* As memset(3) and cudaMemsetAsync: the value as an unsigned char. */
	return memset_async(stream, ptr, (unsigned char)value, 1, bytes,
			    __func__);
}

ACCEL_EXPORT
int accel_memset_d16_async(accel_stream_t stream, void *ptr, uint16_t value,
			   size_t count)
{
	ACCEL_API_ENTER();

	return memset_async(stream, ptr, value, 2, count, __func__);
}

ACCEL_EXPORT
int accel_memset_d32_async(accel_stream_t stream, void *ptr, uint32_t value,
			   size_t count)
{
	ACCEL_API_ENTER();

	return memset_async(stream, ptr, value, 4, count, __func__);
}

/* Bytes a 2D area spans: (@height - 1) * @pitch + @width; false on overflow. */
static bool span_2d(size_t pitch, size_t width, size_t height, size_t *span)
{
	if (!width || !height) {
		*span = 0;
		return true;
	}
	return !__builtin_mul_overflow(height - 1, pitch, span) &&
	       !__builtin_add_overflow(*span, width, span);
}

ACCEL_EXPORT
int accel_memcpy_2d_async(accel_stream_t stream, void *dst, size_t dpitch,
			  const void *src, size_t spitch, size_t width,
			  size_t height, enum accel_memcpy_kind kind)
{
	ACCEL_API_ENTER();
	void *dst_token = NULL;
	struct accel_stream_impl *s;
	struct pool_block *blks[2];
	struct uses u = { .blk = blks };
	size_t dspan, sspan;
	struct accel_desc desc;
	struct accel_ctx *ctx;
	struct side d, sr;
	int ret;

	if (!dst || !src) {
		accel_set_error("accel_memcpy_2d_async: the %s is NULL",
				!dst ? "destination" : "source");
		return -EINVAL;
	}
	if ((unsigned int)kind > ACCEL_MEMCPY_DEFAULT) {
		accel_set_error("accel_memcpy_2d_async: kind %u is not an accel_memcpy_kind",
				(unsigned int)kind);
		return -EINVAL;
	}
	/* The descriptor's pitches are 32-bit, CUDA's below 2^31 anyway. */
	if (dpitch < width || spitch < width || dpitch > UINT32_MAX ||
	    spitch > UINT32_MAX) {
		accel_set_error("accel_memcpy_2d_async: width %zu, dpitch %zu, spitch %zu: each pitch must be at least the width and at most %u bytes",
				width, dpitch, spitch, UINT32_MAX);
		return -EINVAL;
	}
	if (!span_2d(dpitch, width, height, &dspan) ||
	    !span_2d(spitch, width, height, &sspan) ||
	    (uintptr_t)dst + dspan < (uintptr_t)dst ||
	    (uintptr_t)src + sspan < (uintptr_t)src) {
		accel_set_error("accel_memcpy_2d_async: %zu rows of %zu bytes (dpitch %zu, spitch %zu) wrap past the top of the address space",
				height, width, dpitch, spitch);
		return -EINVAL;
	}
	ret = accel_stream_get(stream, &s);
	if (ret)
		return ret;
	ctx = s->child.ctx;

	ret = copy_resolve_sides(ctx, dst, dspan, src, sspan, &d, &sr, &u);
	if (!ret)
		ret = copy_check_kind(ctx, kind, &d, dst, &sr, src);
	if (!ret && !d.found)
		ret = not_context_memory(ctx, dst, "accel_memcpy_2d_async");
	if (!ret && !sr.found)
		ret = not_context_memory(ctx, src, "accel_memcpy_2d_async");
	if (!ret && !dspan)
		ret = accel_stream_error(s);
	if (ret || !dspan)
		goto out;

	dst_token = copy_check_dst(ctx, &d, dst, dspan);
	copy_desc_init(&desc, ACCEL_OP_COPY_2D, &d, &sr, 0);
	desc.width = width;
	desc.height = height;
	desc.dst_pitch = (uint32_t)dpitch;
	desc.src_pitch = (uint32_t)spitch;
	ret = copy_submit_one(s, &u, &desc, &sr, src, sspan, dst_token);
out:
	return copy_call_end(s, &u, ret);
}
