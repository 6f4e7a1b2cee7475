// SPDX-License-Identifier: MIT
/*
 * accel_memcpy_async(): resolve raw pointers to regions, queue one COPY,
 * or hand a copy with a pageable side to the staging pool (staging.c).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "accel_int.h"
#include "staging.h"

struct side {
	bool found;
	struct accel_region r;
	uint32_t handle;
	uint64_t offset;
};

struct check_done {
	void *src_token;
	void *dst_token;
};

static atomic_bool warned_staging, warned_foreign;

static const char *const region_kind_call[] = {
	[LA_REGION_HOST_ALLOC] = "accel_host_alloc()",
	[LA_REGION_REGISTERED] = "accel_host_register()",
	[LA_REGION_DEVICE] = "accel_malloc()",
};

/*
 * A copy staged through the pinned staging pool: say so, and why, in
 * accel_last_error_string(); print it (once per cause) only when the
 * user asked with ACCEL_SYNC_DEBUG=1.
 */
static void warn_staging(struct accel_ctx *ctx, const void *ptr,
			 const char *what)
{
	struct accel_region r;
	atomic_bool *once = &warned_staging;
	uint64_t owner;

	if (accel_region_foreign(ctx, (uintptr_t)ptr, &r, &owner)) {
		accel_set_error("the copy %s %p was staged through the pinned staging pool like pageable memory: %p is memory of %s in another context (%#llx), and memory is pinned and mapped for the context that allocated or registered it only, not for this stream's context (%#llx); allocate or register it in this stream's context",
				what, ptr, ptr, region_kind_call[r.kind],
				(unsigned long long)owner,
				(unsigned long long)ctx->handle);
		once = &warned_foreign;
	} else {
		accel_set_error("the copy %s pageable memory %p was staged through the pinned staging pool (%s); use accel_host_alloc() or accel_host_register() for asynchronous copies",
				what, ptr, *what == 'f' ?
				"the source was read before the call returned" :
				"the destination is written when the copy completes: keep it allocated until the stream is synchronized");
	}
	if (!accel_env_flag("ACCEL_SYNC_DEBUG") || atomic_exchange(once, true))
		return;
	/* ACCEL_SYNC_DEBUG=1 asked for it: logged even without ACCEL_LOG. */
	accel_log_asked(LOG_WARNING, "ACCEL_SYNC_DEBUG: %s (reported once)",
			accel_last_error_string());
}

static int resolve_locked(struct accel_ctx *ctx, const void *ptr,
			  size_t bytes, struct side *s)
{
	struct accel_region *r;

	memset(s, 0, sizeof(*s));
	r = accel_region_find_locked(ctx, (uintptr_t)ptr);
	if (!r)
		return 0;
	if (bytes > r->size - ((uintptr_t)ptr - r->base))
		return -EINVAL;
	s->found = true;
	s->r = *r;
	s->handle = r->handle;
	s->offset = (uintptr_t)ptr - r->base;
	return 0;
}

static bool is_device(const struct side *s)
{
	return s->found && s->r.kind == LA_REGION_DEVICE;
}

static int check_kind(enum accel_memcpy_kind kind, const struct side *dst,
		      const struct side *src)
{
	bool dd = is_device(dst), sd = is_device(src);

	switch (kind) {
	case ACCEL_MEMCPY_H2H:
		return (!dd && !sd) ? 0 : -EINVAL;
	case ACCEL_MEMCPY_H2D:
		return (dd && !sd) ? 0 : -EINVAL;
	case ACCEL_MEMCPY_D2H:
		return (!dd && sd) ? 0 : -EINVAL;
	case ACCEL_MEMCPY_D2D:
		return (dd && sd) ? 0 : -EINVAL;
	case ACCEL_MEMCPY_DEFAULT:
		return 0;
	}
	return -EINVAL;
}

static void check_done_fn(void *arg)
{
	struct check_done *cd = arg;

	accel_check_done(cd->src_token);
	accel_check_done(cd->dst_token);
	free(cd);
}

static void queue_check_done(struct accel_stream_impl *s, void *src_token,
			     void *dst_token)
{
	struct check_done *cd;

	if (!src_token && !dst_token)
		return;
	cd = malloc(sizeof(*cd));
	if (cd) {
		cd->src_token = src_token;
		cd->dst_token = dst_token;
		if (!accel_hostfn_launch_drop(s->child.ctx, s->kstream,
					      check_done_fn, check_done_fn, cd))
			return;
		free(cd);
	}
	/* Cannot watch the end of this copy: stop watching it now. */
	accel_check_done(src_token);
	accel_check_done(dst_token);
}

ACCEL_EXPORT
int accel_memcpy_async(accel_stream_t stream, void *dst, const void *src,
		       size_t bytes, enum accel_memcpy_kind kind)
{
	ACCEL_API_ENTER();
	void *src_token = NULL, *dst_token = NULL;
	struct accel_stream_impl *s;
	struct accel_ctx *ctx;
	struct side d, sr;
	struct accel_desc desc;
	bool check;
	uint64_t seq;
	int ret;

	if (!dst || !src || (unsigned int)kind > ACCEL_MEMCPY_DEFAULT)
		return -EINVAL;
	if ((uintptr_t)dst + bytes < (uintptr_t)dst ||
	    (uintptr_t)src + bytes < (uintptr_t)src)
		return -EINVAL;
	ret = accel_stream_get(stream, &s);
	if (ret)
		return ret;
	ctx = s->child.ctx;

	pthread_mutex_lock(&ctx->lock);
	ret = resolve_locked(ctx, dst, bytes, &d);
	if (!ret)
		ret = resolve_locked(ctx, src, bytes, &sr);
	pthread_mutex_unlock(&ctx->lock);
	/* Portable memory of another context: imported at its first copy. */
	if (!ret && bytes && (!d.found || !sr.found)) {
		bool imported = false;

		if (!d.found && !accel_portable_import(ctx, (uintptr_t)dst))
			imported = true;
		if (!sr.found && !accel_portable_import(ctx, (uintptr_t)src))
			imported = true;
		if (imported) {
			pthread_mutex_lock(&ctx->lock);
			ret = resolve_locked(ctx, dst, bytes, &d);
			if (!ret)
				ret = resolve_locked(ctx, src, bytes, &sr);
			pthread_mutex_unlock(&ctx->lock);
		}
	}
	if (!ret)
		ret = check_kind(kind, &d, &sr);
	/*
	 * A pageable destination is written by a host function once the
	 * copy retired: one the driver could not pin is -EFAULT now rather
	 * than a SIGSEGV on the library's thread then.
	 */
	if (!ret && bytes && !d.found)
		ret = accel_range_check((uintptr_t)dst, bytes, true);
	/*
	 * Any source libaccel did not hand out or register is read by the
	 * library at enqueue: one that cannot be read is -EFAULT now, not a
	 * SIGSEGV in the staging memcpy. One madvise(MADV_POPULATE_READ)
	 * for the whole range (vmcheck.c), the pages being read next anyway.
	 */
	if (!ret && bytes && !sr.found)
		ret = accel_range_check((uintptr_t)src, bytes, false);
	/* A failed stream fails every call, a copy of 0 bytes too. */
	if (!ret && !bytes)
		ret = accel_stream_error(s);
	if (ret || !bytes)
		goto out;

	check = accel_check_enabled();
	if (check && d.found && !is_device(&d))
		accel_check_dst(ctx, (uintptr_t)dst, bytes, &d.r, &dst_token);

	if (!sr.found || !d.found) {
		struct accel_stage_side dd = {
			.pageable = !d.found, .ptr = dst,
			.handle = d.handle, .offset = d.offset,
		};
		struct accel_stage_side ss = {
			.pageable = !sr.found, .ptr = (void *)src,
			.handle = sr.handle, .offset = sr.offset,
		};

		seq = 0;
		ret = accel_staging_copy(ctx, s->kstream, &dd, &ss, bytes, &seq);
		/* Said only of a copy that was staged, never of a failure. */
		if (!ret)
			warn_staging(ctx, !sr.found ? src : dst,
				     !sr.found ? "from" : "into");
	} else {
		memset(&desc, 0, sizeof(desc));
		desc.op = ACCEL_OP_COPY;
		desc.dst = d.handle;
		desc.src = sr.handle;
		desc.dst_offset = d.offset;
		desc.src_offset = sr.offset;
		desc.length = bytes;
		ret = accel_submit(ctx, s->kstream, &desc, 1, &seq);
	}
	if (ret) {
		accel_check_done(dst_token);
		goto out;
	}
	if (check && sr.found && !is_device(&sr))
		accel_check_src(ctx, (accel_stream_t)(uintptr_t)s->child.handle,
				seq, (uintptr_t)src, bytes, &sr.r, &src_token);
	queue_check_done(s, src_token, dst_token);

out:
	accel_stream_put(s);
	return ret;
}

/* One copy of a batch resolved to regions; false if it needs staging. */
static int batch_resolve_locked(struct accel_ctx *ctx, void *dst,
				const void *src, size_t bytes,
				enum accel_memcpy_kind kind,
				struct accel_desc *desc, bool *pinned)
{
	struct side d, sr;
	int ret;

	if (!dst || !src ||
	    (uintptr_t)dst + bytes < (uintptr_t)dst ||
	    (uintptr_t)src + bytes < (uintptr_t)src)
		return -EINVAL;
	ret = resolve_locked(ctx, dst, bytes, &d);
	if (!ret)
		ret = resolve_locked(ctx, src, bytes, &sr);
	if (!ret)
		ret = check_kind(kind, &d, &sr);
	if (ret)
		return ret;
	*pinned = d.found && sr.found;
	memset(desc, 0, sizeof(*desc));
	desc->op = ACCEL_OP_COPY;
	desc->dst = d.handle;
	desc->src = sr.handle;
	desc->dst_offset = d.offset;
	desc->src_offset = sr.offset;
	desc->length = bytes;
	return 0;
}

ACCEL_EXPORT
int accel_memcpy_batch_async(accel_stream_t stream, void *const *dsts,
			     const void *const *srcs, const size_t *sizes,
			     size_t count, enum accel_memcpy_kind kind)
{
	ACCEL_API_ENTER();
	struct accel_stream_impl *s;
	struct accel_desc *descs;
	struct accel_ctx *ctx;
	bool pinned = true;
	size_t i, n = 0;
	int ret = 0;

	if ((count && (!dsts || !srcs || !sizes)) ||
	    (unsigned int)kind > ACCEL_MEMCPY_DEFAULT)
		return -EINVAL;
	ret = accel_stream_get(stream, &s);
	if (ret)
		return ret;
	ctx = s->child.ctx;
	if (!count) {
		ret = accel_stream_error(s);
		goto out;
	}
	if (count > ctx->info.max_submit) {
		ret = -EINVAL;
		goto out;
	}
	descs = malloc(count * sizeof(*descs));
	if (!descs) {
		ret = -ENOMEM;
		goto out;
	}
	pthread_mutex_lock(&ctx->lock);
	for (i = 0; i < count && !ret && pinned; i++) {
		bool p = false;

		ret = batch_resolve_locked(ctx, dsts[i], srcs[i], sizes[i],
					   kind, &descs[n], &p);
		pinned = p;
		if (!ret && sizes[i])
			n++;
	}
	pthread_mutex_unlock(&ctx->lock);
	if (ret)
		goto out_free;
	if (!pinned || accel_check_enabled()) {
		/* Staging or watching: copy by copy, in order. */
		for (i = 0; i < count && !ret; i++)
			ret = accel_memcpy_async(stream, dsts[i], srcs[i],
						 sizes[i], kind);
		goto out_free;
	}
	/* One submission: one fetch, one cudaMemcpyBatchAsync. */
	if (n)
		ret = accel_submit(ctx, s->kstream, descs, (uint32_t)n, NULL);
	else
		ret = accel_stream_error(s);
out_free:
	free(descs);
out:
	accel_stream_put(s);
	return ret;
}
