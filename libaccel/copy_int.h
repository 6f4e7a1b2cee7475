/* SPDX-License-Identifier: MIT */
/*
 * The pointer resolution a queued copy, fill or 2D copy shares (copy.c),
 * for memset_2d.c: both sides of a copy resolved to the context's regions
 * or pool blocks under ctx->lock, and the blocks' uses ended once queued.
 */
#ifndef LIBACCEL_COPY_INT_H
#define LIBACCEL_COPY_INT_H

#include "accel_int.h"

extern const char *const copy_region_call[];

struct side {
	bool found;
	struct accel_region r;
	uint32_t handle;
	uint64_t offset;
	struct pool_block *blk;	/* an accel_malloc_async() block */
};

struct uses {
	struct pool_block **blk;
	unsigned int n;
};

int copy_resolve_locked(struct accel_ctx *ctx, const void *ptr,
			size_t bytes, struct side *s, const char *what);
int copy_uses_begin_locked(struct uses *u, struct pool_block *b);
void copy_uses_end(struct accel_ctx *ctx, struct uses *u, uint32_t kstream,
		   uint64_t seq, bool queued);
int copy_resolve_sides(struct accel_ctx *ctx, const void *dst, size_t dlen,
		       const void *src, size_t slen, struct side *d,
		       struct side *sr, struct uses *u);
bool copy_side_is_device(const struct side *s);
int copy_check_kind(struct accel_ctx *ctx, enum accel_memcpy_kind kind,
		    const struct side *dst, const void *dptr,
		    const struct side *src, const void *sptr);
void copy_queue_check_done(struct accel_stream_impl *s, void *src_token,
			   void *dst_token);
void copy_desc_init(struct accel_desc *desc, uint32_t op,
		    const struct side *dst, const struct side *src,
		    uint64_t length);
int copy_submitted(struct accel_stream_impl *s, struct uses *u, uint64_t seq,
		   int ret, const struct side *src, const void *sptr,
		   size_t slen, void *dst_token);
void *copy_check_dst(struct accel_ctx *ctx, const struct side *d,
		     const void *dptr, size_t len);
int copy_submit_one(struct accel_stream_impl *s, struct uses *u,
		    const struct accel_desc *desc, const struct side *src,
		    const void *sptr, size_t slen, void *dst_token);
int copy_call_end(struct accel_stream_impl *s, struct uses *u, int ret);

#endif
