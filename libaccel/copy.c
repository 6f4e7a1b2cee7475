// SPDX-License-Identifier: MIT
/*
 * accel_memcpy_async(): resolve raw pointers to regions, queue one COPY,
 * or hand a copy with a pageable side to the staging pool (staging/).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "accel_int.h"
#include "staging.h"
#include "copy_int.h"

struct check_done {
	void *src_token;
	void *dst_token;
};

static atomic_bool warned_staging, warned_foreign;

/* The call that made a region of each kind, for messages. */
const char *const copy_region_call[] = {
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
				what, ptr, ptr, r.pool ? "accel_malloc_async()" :
				copy_region_call[r.kind],
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
	/* ACCEL_SYNC_DEBUG=1 asked for it: passed to the log callback. */
	accel_log(LOG_WARNING, "ACCEL_SYNC_DEBUG: %s (reported once)",
			accel_last_error_string());
}

/*
 * Say what a copy side's @bytes at @ptr run past: the region @r holds
 * r->size bytes from r->base, @what names the side.
 */
static int out_of_bounds(const struct accel_region *r, const void *ptr,
			 size_t bytes, const char *what)
{
	accel_set_error("the %s %p + %zu bytes runs past the end of its %s allocation of %zu bytes at %p (offset %zu, %zu bytes left)",
			what, ptr, bytes, copy_region_call[r->kind], r->size,
			(void *)r->base, (size_t)((uintptr_t)ptr - r->base),
			r->size - (size_t)((uintptr_t)ptr - r->base));
	return -EINVAL;
}

/* The pageable @bytes at @ptr run on into the region @r. */
static int runs_into(const struct accel_region *r, const void *ptr,
		     size_t bytes, const char *what)
{
	/* A portable allocation imported here is a shadow registration. */
	bool reg = r->kind == LA_REGION_REGISTERED && !r->shadow;

	accel_set_error("the %s %p + %zu bytes starts in pageable memory and runs on into the %s %s of %zu bytes at %p (%zu bytes in): a copy's range lies inside one allocation or registration, or outside all of them",
			what, ptr, bytes,
			r->shadow ? "accel_host_alloc()" :
			copy_region_call[r->kind],
			reg ? "registration" : "allocation", r->size,
			(void *)r->base,
			(size_t)((uintptr_t)ptr + bytes - r->base));
	return -EINVAL;
}

/* copy_resolve_locked()'s rule for another context's portable memory. */
static int portable_runs_into(struct accel_ctx *ctx, const void *ptr,
			      size_t bytes, const char *what)
{
	struct accel_region r;

	if (!accel_portable_within(ctx, (uintptr_t)ptr, bytes, &r))
		return 0;
	return runs_into(&r, ptr, bytes, what);
}

int copy_resolve_locked(struct accel_ctx *ctx, const void *ptr,
			size_t bytes, struct side *s, const char *what)
{
	struct accel_region *r;

	memset(s, 0, sizeof(*s));
	r = accel_region_find_locked(ctx, (uintptr_t)ptr);
	if (!r) {
		/*
		 * Pageable, unless it runs on into a region: a range lies
		 * inside one allocation or registration or outside all of
		 * them (else a read-only registration could be written, and
		 * the region's queued copies be passed, from its pageable
		 * neighbour).
		 */
		r = accel_region_after_locked(ctx, (uintptr_t)ptr);
		if (r && r->base - (uintptr_t)ptr < bytes)
			return runs_into(r, ptr, bytes, what);
		return 0;
	}
	if (r->pool) {
		int ret = accel_pool_resolve_locked(ctx, r, (uintptr_t)ptr,
						    bytes, &s->offset, &s->blk);

		if (ret)
			return ret;
	} else if ((uintptr_t)ptr - r->base > r->size ||
		   bytes > r->size - ((uintptr_t)ptr - r->base)) {
		return out_of_bounds(r, ptr, bytes, what);
	} else {
		s->offset = (uintptr_t)ptr - r->base;
	}
	s->found = true;
	s->r = *r;
	s->handle = r->handle;
	return 0;
}

/* Pool blocks a call names, busy from resolve until its submit. */
int copy_uses_begin_locked(struct uses *u, struct pool_block *b)
{
	int ret;

	if (!b)
		return 0;
	ret = accel_pool_use_begin_locked(b);
	if (!ret)
		u->blk[u->n++] = b;
	return ret;
}

/* The submit is over: what was queued (@queued) ends at @seq. */
void copy_uses_end(struct accel_ctx *ctx, struct uses *u, uint32_t kstream,
		   uint64_t seq, bool queued)
{
	while (u->n)
		accel_pool_use_end(ctx, u->blk[--u->n], kstream, seq, queued);
}

/*
 * Resolve both sides of a copy under ctx->lock (@dlen and @slen bytes)
 * and, with @u and @dlen nonzero, mark the pool blocks they name busy
 * until copy_uses_end().
 */
int copy_resolve_sides(struct accel_ctx *ctx, const void *dst, size_t dlen,
		       const void *src, size_t slen, struct side *d,
		       struct side *sr, struct uses *u)
{
	int ret;

	pthread_mutex_lock(&ctx->lock);
	ret = copy_resolve_locked(ctx, dst, dlen, d, "destination");
	if (!ret)
		ret = copy_resolve_locked(ctx, src, slen, sr, "source");
	if (!ret && u && dlen)
		ret = copy_uses_begin_locked(u, d->blk);
	if (!ret && u && dlen)
		ret = copy_uses_begin_locked(u, sr->blk);
	pthread_mutex_unlock(&ctx->lock);
	return ret;
}

bool copy_side_is_device(const struct side *s)
{
	return s->found && s->r.kind == LA_REGION_DEVICE;
}

static const char *const kind_name[] = {
	[ACCEL_MEMCPY_H2H] = "ACCEL_MEMCPY_H2H",
	[ACCEL_MEMCPY_H2D] = "ACCEL_MEMCPY_H2D",
	[ACCEL_MEMCPY_D2H] = "ACCEL_MEMCPY_D2H",
	[ACCEL_MEMCPY_D2D] = "ACCEL_MEMCPY_D2D",
	[ACCEL_MEMCPY_DEFAULT] = "ACCEL_MEMCPY_DEFAULT",
};

/* What a side is, for a message: at most @len bytes into @buf. */
static const char *side_desc(struct accel_ctx *ctx, const struct side *s,
			     const void *ptr, char *buf, size_t len)
{
	struct accel_region r;
	uint64_t owner;

	if (s->found)
		return copy_side_is_device(s) ? "device memory of the stream's context" :
		       "host memory of the stream's context";
	if (ctx && accel_region_foreign(ctx, (uintptr_t)ptr, &r, &owner)) {
		snprintf(buf, len, "memory of %s in another context (%#llx), not of the stream's context (%#llx)",
			 r.pool ? "accel_malloc_async()" :
			 copy_region_call[r.kind], (unsigned long long)owner,
			 (unsigned long long)ctx->handle);
		return buf;
	}
	return "pageable memory";
}

/* @kind names the sides a copy's direction requires: do they match? */
int copy_check_kind(struct accel_ctx *ctx, enum accel_memcpy_kind kind,
		    const struct side *dst, const void *dptr,
		    const struct side *src, const void *sptr)
{
	bool dd = copy_side_is_device(dst), sd = copy_side_is_device(src);
	bool want_dd, want_sd;
	char buf[192];

	switch (kind) {
	case ACCEL_MEMCPY_H2H:
		want_dd = false, want_sd = false;
		break;
	case ACCEL_MEMCPY_H2D:
		want_dd = true, want_sd = false;
		break;
	case ACCEL_MEMCPY_D2H:
		want_dd = false, want_sd = true;
		break;
	case ACCEL_MEMCPY_D2D:
		want_dd = true, want_sd = true;
		break;
	case ACCEL_MEMCPY_DEFAULT:
		return 0;
	default:
		return -EINVAL;
	}
	if (sd != want_sd) {
		accel_set_error("kind %s wants the source in %s memory, but the source %p is %s",
				kind_name[kind], want_sd ? "device" : "host",
				sptr,
				side_desc(ctx, src, sptr, buf, sizeof(buf)));
		return -EINVAL;
	}
	if (dd != want_dd) {
		accel_set_error("kind %s wants the destination in %s memory, but the destination %p is %s",
				kind_name[kind], want_dd ? "device" : "host",
				dptr,
				side_desc(ctx, dst, dptr, buf, sizeof(buf)));
		return -EINVAL;
	}
	return 0;
}

/* A copy's pointers: both given, neither range wrapping past the top. */
static bool copy_args_ok(const void *dst, const void *src, size_t bytes)
{
	if (!dst || !src) {
		accel_set_error("the copy's %s is NULL",
				!dst ? "destination" : "source");
		return false;
	}
	if ((uintptr_t)dst + bytes < (uintptr_t)dst ||
	    (uintptr_t)src + bytes < (uintptr_t)src) {
		accel_set_error("the copy's %s %p + %zu bytes wraps past the top of the address space",
				(uintptr_t)dst + bytes < (uintptr_t)dst ?
				"destination" : "source",
				(uintptr_t)dst + bytes < (uintptr_t)dst ?
				dst : src, bytes);
		return false;
	}
	return true;
}

static bool kind_ok(enum accel_memcpy_kind kind)
{
	if ((unsigned int)kind <= ACCEL_MEMCPY_DEFAULT)
		return true;
	accel_set_error("kind %u is not an accel_memcpy_kind",
			(unsigned int)kind);
	return false;
}

/*
 * A side libaccel did not hand out failed accel_range_check(): -EFAULT,
 * saying whether it is another context's memory or not accessible at all.
 */
static int not_accessible(struct accel_ctx *ctx, const void *ptr,
			  size_t bytes, const char *what, int ret)
{
	struct accel_region r;
	uint64_t owner;

	if (ret != -EFAULT)
		return ret;
	if (accel_region_foreign(ctx, (uintptr_t)ptr, &r, &owner))
		accel_set_error("the copy's %s %p is memory of %s in another context (%#llx), which this stream's context (%#llx) cannot %s; allocate or register it in this stream's context",
				what, ptr, r.pool ? "accel_malloc_async()" :
				copy_region_call[r.kind],
				(unsigned long long)owner,
				(unsigned long long)ctx->handle,
				*what == 's' ? "read" : "write");
	else
		accel_set_error("the copy's %s %p + %zu bytes is not %s memory of this process (unmapped, freed or protected)",
				what, ptr, bytes,
				*what == 's' ? "readable" : "writable");
	return ret;
}

static void check_done_fn(void *arg)
{
	struct check_done *cd = arg;

	accel_check_done(cd->src_token);
	accel_check_done(cd->dst_token);
	free(cd);
}

void copy_queue_check_done(struct accel_stream_impl *s, void *src_token,
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

/* A descriptor @op from side @src into side @dst, the rest zero. */
void copy_desc_init(struct accel_desc *desc, uint32_t op,
		    const struct side *dst, const struct side *src,
		    uint64_t length)
{
	memset(desc, 0, sizeof(*desc));
	desc->op = op;
	desc->dst = dst->handle;
	desc->src = src->handle;
	desc->dst_offset = dst->offset;
	desc->src_offset = src->offset;
	desc->length = length;
}

/*
 * A copy or fill was submitted to @s (@ret, at @seq): the stream-ordered
 * blocks it names (@u) stay named until it retires, and the ACCEL_CHECK
 * watches of its sides end with it: @dst_token's, and the one armed here
 * over its source when @src is given (@slen bytes at @sptr), ACCEL_CHECK
 * is on and it is host memory. A failed submit ends the watch at once.
 * Returns @ret.
 */
int copy_submitted(struct accel_stream_impl *s, struct uses *u, uint64_t seq,
		   int ret, const struct side *src, const void *sptr,
		   size_t slen, void *dst_token)
{
	struct accel_ctx *ctx = s->child.ctx;
	void *src_token = NULL;

	copy_uses_end(ctx, u, s->kstream, seq, !ret);
	if (ret) {
		accel_check_done(dst_token);
		return ret;
	}
	if (src && src->found && !copy_side_is_device(src) &&
	    accel_check_enabled())
		accel_check_src(ctx, (accel_stream_t)(uintptr_t)s->child.handle,
				seq, (uintptr_t)sptr, slen, &src->r,
				&src_token);
	copy_queue_check_done(s, src_token, dst_token);
	return 0;
}

/*
 * Under ACCEL_CHECK, the watch of the destination @d of a copy or fill
 * (@len bytes at @dptr) when it is host memory of the context: its token
 * for copy_submitted(), else NULL.
 */
void *copy_check_dst(struct accel_ctx *ctx, const struct side *d,
		     const void *dptr, size_t len)
{
	void *token = NULL;

	if (accel_check_enabled() && d->found && !copy_side_is_device(d))
		accel_check_dst(ctx, (uintptr_t)dptr, len, &d->r, &token);
	return token;
}

/* Submit @desc, a call's one descriptor, to @s; then copy_submitted(). */
int copy_submit_one(struct accel_stream_impl *s, struct uses *u,
		    const struct accel_desc *desc, const struct side *src,
		    const void *sptr, size_t slen, void *dst_token)
{
	uint64_t seq = 0;
	int ret = accel_submit(s->child.ctx, s->kstream, desc, 1, &seq);

	return copy_submitted(s, u, seq, ret, src, sptr, slen, dst_token);
}

/*
 * The end of a call that queues a copy or fill on @s: the blocks of @u
 * still marked (it failed before its submit) are let go, nothing queued
 * naming them, and @s is put. Returns @ret.
 */
int copy_call_end(struct accel_stream_impl *s, struct uses *u, int ret)
{
	copy_uses_end(s->child.ctx, u, s->kstream, 0, false);
	accel_stream_put(s);
	return ret;
}

ACCEL_EXPORT
int accel_memcpy_async(accel_stream_t stream, void *dst, const void *src,
		       size_t bytes, enum accel_memcpy_kind kind)
{
	ACCEL_API_ENTER();
	void *dst_token = NULL;
	struct accel_stream_impl *s;
	struct accel_ctx *ctx;
	struct side d, sr;
	struct pool_block *blks[2];
	struct uses u = { .blk = blks };
	struct accel_desc desc;
	uint64_t seq = 0;
	int ret;

	ret = accel_stream_get_checked(stream, copy_args_ok(dst, src, bytes) &&
				       kind_ok(kind),
				       &s);
	if (ret)
		return ret;
	ctx = s->child.ctx;

	ret = copy_resolve_sides(ctx, dst, bytes, src, bytes, &d, &sr, &u);
	/* Portable memory of another context: imported at its first copy. */
	if (!ret && bytes && (!d.found || !sr.found)) {
		bool imported = false;

		if (!d.found && !accel_portable_import(ctx, (uintptr_t)dst))
			imported = true;
		if (!sr.found && !accel_portable_import(ctx, (uintptr_t)src))
			imported = true;
		if (imported) {
			pthread_mutex_lock(&ctx->lock);
			ret = copy_resolve_locked(ctx, dst, bytes, &d,
						  "destination");
			if (!ret)
				ret = copy_resolve_locked(ctx, src, bytes, &sr,
							  "source");
			pthread_mutex_unlock(&ctx->lock);
		}
		/*
		 * A pageable side running on into portable memory, which is
		 * this context's too, whether imported yet or not.
		 */
		if (!ret && !d.found)
			ret = portable_runs_into(ctx, dst, bytes, "destination");
		if (!ret && !sr.found)
			ret = portable_runs_into(ctx, src, bytes, "source");
	}
	if (!ret)
		ret = copy_check_kind(ctx, kind, &d, dst, &sr, src);
	/*
	 * A pageable destination is written by a host function once the
	 * copy retired: one the driver could not pin is -EFAULT now rather
	 * than a SIGSEGV on the library's thread then.
	 */
	if (!ret && bytes && !d.found)
		ret = not_accessible(ctx, dst, bytes, "destination",
				     accel_staging_range_check(ctx, dst, bytes,
							       true));
	/*
	 * Any source libaccel did not hand out or register is read by the
	 * library at enqueue: one that cannot be read is -EFAULT now, not a
	 * SIGSEGV in the staging memcpy. madvise(MADV_POPULATE_READ) over
	 * the range (vmcheck.c; split between the staging pool's threads
	 * when large), the pages being read next anyway.
	 */
	if (!ret && bytes && !sr.found)
		ret = not_accessible(ctx, src, bytes, "source",
				     accel_staging_range_check(ctx, src, bytes,
							       false));
	/* A failed stream fails every call, a copy of 0 bytes too. */
	if (!ret && !bytes)
		ret = accel_stream_error(s);
	if (ret || !bytes)
		goto out;

	dst_token = copy_check_dst(ctx, &d, dst, bytes);
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
		/*
		 * Said only of a copy that was staged, never of a failure; of
		 * the destination whenever it is pageable (with a pageable
		 * source too): it is written later, which the porting header
		 * and the caller need to know.
		 */
		if (!ret)
			warn_staging(ctx, !d.found ? dst : src,
				     !d.found ? "into" : "from");
	} else {
		copy_desc_init(&desc, ACCEL_OP_COPY, &d, &sr, bytes);
		ret = accel_submit(ctx, s->kstream, &desc, 1, &seq);
	}
	ret = copy_submitted(s, &u, seq, ret, &sr, src, bytes, dst_token);
out:
	return copy_call_end(s, &u, ret);
}

/* One copy of a batch resolved to regions; false if it needs staging. */
static int batch_resolve_locked(struct accel_ctx *ctx, void *dst,
				const void *src, size_t bytes,
				enum accel_memcpy_kind kind,
				struct accel_desc *desc, bool *pinned,
				struct uses *u)
{
	struct side d, sr;
	int ret;

	if (!copy_args_ok(dst, src, bytes))
		return -EINVAL;
	ret = copy_resolve_locked(ctx, dst, bytes, &d, "destination");
	if (!ret)
		ret = copy_resolve_locked(ctx, src, bytes, &sr, "source");
	/* Under ctx->lock: no other context's lock to describe a side. */
	if (!ret)
		ret = copy_check_kind(NULL, kind, &d, dst, &sr, src);
	if (!ret && bytes)
		ret = copy_uses_begin_locked(u, d.blk);
	if (!ret && bytes)
		ret = copy_uses_begin_locked(u, sr.blk);
	if (ret)
		return ret;
	*pinned = d.found && sr.found;
	copy_desc_init(desc, ACCEL_OP_COPY, &d, &sr, bytes);
	return 0;
}

/*
 * What accel_memcpy_async() refuses before it queues anything, without
 * queuing: the sides resolve and fit, the kind matches, and a side that is
 * not libaccel's can be read (source) or written (destination).
 */
static int copy_precheck(struct accel_ctx *ctx, void *dst, const void *src,
			 size_t bytes, enum accel_memcpy_kind kind)
{
	struct side d, sr;
	int ret;

	if (!copy_args_ok(dst, src, bytes))
		return -EINVAL;
	if (!bytes)
		return 0;
	ret = copy_resolve_sides(ctx, dst, bytes, src, bytes, &d, &sr, NULL);
	if (!ret)
		ret = copy_check_kind(ctx, kind, &d, dst, &sr, src);
	if (!ret && !d.found)
		ret = not_accessible(ctx, dst, bytes, "destination",
				     accel_range_check((uintptr_t)dst, bytes,
						       true));
	if (!ret && !sr.found)
		ret = not_accessible(ctx, src, bytes, "source",
				     accel_range_check((uintptr_t)src, bytes,
						       false));
	return ret;
}

ACCEL_EXPORT
int accel_memcpy_batch_async(accel_stream_t stream, void *const *dsts,
			     const void *const *srcs, const size_t *sizes,
			     size_t count, enum accel_memcpy_kind kind)
{
	ACCEL_API_ENTER();
	struct accel_stream_impl *s;
	struct uses u = { .blk = NULL };
	struct accel_desc *descs;
	struct accel_ctx *ctx;
	bool pinned = true;
	uint64_t seq = 0;
	size_t i, n = 0;
	int ret = 0;

	if (count && (!dsts || !srcs || !sizes)) {
		accel_set_error("accel_memcpy_batch_async: %zu copies, but the %s array is NULL",
				count, !dsts ? "destination" :
				!srcs ? "source" : "size");
		return -EINVAL;
	}
	if (!kind_ok(kind))
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
		accel_set_error("accel_memcpy_batch_async: %zu copies, at most %u in one call",
				count, ctx->info.max_submit);
		ret = -EINVAL;
		goto out;
	}
	descs = malloc(count * sizeof(*descs));
	u.blk = malloc(2 * count * sizeof(*u.blk));
	if (!descs || !u.blk) {
		ret = -ENOMEM;
		goto out_free;
	}
	pthread_mutex_lock(&ctx->lock);
	for (i = 0; i < count && !ret && pinned; i++) {
		bool p = false;

		ret = batch_resolve_locked(ctx, dsts[i], srcs[i], sizes[i],
					   kind, &descs[n], &p, &u);
		pinned = p;
		if (!ret && sizes[i])
			n++;
	}
	pthread_mutex_unlock(&ctx->lock);
	if (ret)
		goto out_free;
	if (!pinned || accel_check_enabled()) {
		copy_uses_end(ctx, &u, s->kstream, 0, false);
		/* Every copy's checks first: bad input queues none of them. */
		for (i = 0; i < count && !ret; i++)
			ret = copy_precheck(ctx, dsts[i], srcs[i], sizes[i],
					    kind);
		/* Staging or watching: copy by copy, in order. */
		for (i = 0; i < count && !ret; i++)
			ret = accel_memcpy_async(stream, dsts[i], srcs[i],
						 sizes[i], kind);
		goto out_free;
	}
	/* One submission: one fetch, one cudaMemcpyBatchAsync. */
	if (n)
		ret = accel_submit(ctx, s->kstream, descs, (uint32_t)n, &seq);
	else
		ret = accel_stream_error(s);
	copy_uses_end(ctx, &u, s->kstream, seq, n && !ret);
out_free:
	copy_uses_end(ctx, &u, s->kstream, 0, false);
	free(u.blk);
	free(descs);
out:
	accel_stream_put(s);
	return ret;
}

/*
 * A peer copy names the devices of both sides, as cudaMemcpyPeerAsync
 * does: each pointer must be device memory of the stream's context on the
 * device given. The copy itself is an ordinary D2D copy, which reaches any
 * device's memory of the context (the engine of the stream's device runs
 * it).
 */
static int peer_side_check(const struct side *s, const void *ptr, int device,
			   const char *what)
{
	if (!copy_side_is_device(s)) {
		accel_set_error("the peer copy's %s %p is not device memory of the stream's context (accel_malloc() in that context)",
				what, ptr);
		return -EINVAL;
	}
	if (s->r.device != device) {
		accel_set_error("the peer copy's %s %p is memory of device %d, not of device %d",
				what, ptr, s->r.device, device);
		return -EINVAL;
	}
	return 0;
}

ACCEL_EXPORT
int accel_memcpy_peer_async(accel_stream_t stream, void *dst, int dst_device,
			    const void *src, int src_device, size_t bytes)
{
	ACCEL_API_ENTER();
	struct accel_stream_impl *s;
	struct accel_ctx *ctx;
	struct side d, sr;
	int count, ret;

	ret = accel_stream_get_checked(stream, copy_args_ok(dst, src, bytes),
				       &s);
	if (ret)
		return ret;
	ctx = s->child.ctx;
	ret = accel_ctx_device_count(ctx, &count);
	if (!ret && (dst_device < 0 || dst_device >= count ||
		     src_device < 0 || src_device >= count))
		ret = -ENODEV;
	if (!ret)
		ret = copy_resolve_sides(ctx, dst, bytes, src, bytes, &d, &sr, NULL);
	if (!ret)
		ret = peer_side_check(&d, dst, dst_device, "destination");
	if (!ret)
		ret = peer_side_check(&sr, src, src_device, "source");
	accel_stream_put(s);
	if (ret)
		return ret;
	return accel_memcpy_async(stream, dst, src, bytes, ACCEL_MEMCPY_D2D);
}
