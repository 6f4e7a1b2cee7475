// SPDX-License-Identifier: MIT
/*
 * Memory: pinned host allocations, registered host ranges and device
 * allocations, and the per-context table that resolves a raw pointer to
 * (region handle, offset).
 *
 * Device pointers are addresses of a PROT_NONE reservation as large as the
 * allocation: never accessible on the host, but unique, so that a range
 * lookup tells a device pointer from a host one. With the cuda backend they
 * are cudaMalloc pointers registered as ACCEL_MEM_EXTERNAL (unique as
 * well: CUDA's unified addressing keeps them apart from host memory), host
 * regions are also cudaHostRegister'ed, and releases go through the
 * backend, which keeps CUDA memory until the work naming it retired.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "accel_int.h"
#include "staging.h"

size_t accel_page_round(const struct accel_ctx *ctx, size_t size)
{
	return (size + (size_t)ctx->page_size - 1) &
	       ~((size_t)ctx->page_size - 1);
}

/* Index of the first region whose base is above @ptr. */
static unsigned int region_upper_locked(struct accel_ctx *ctx, uintptr_t ptr)
{
	unsigned int lo = 0, hi = ctx->nregions;

	while (lo < hi) {
		unsigned int mid = lo + (hi - lo) / 2;

		if (ctx->regions[mid].base <= ptr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

struct accel_region *accel_region_find_locked(struct accel_ctx *ctx,
					      uintptr_t ptr)
{
	unsigned int i = region_upper_locked(ctx, ptr);
	struct accel_region *r;

	if (!i)
		return NULL;
	r = &ctx->regions[i - 1];
	return ptr - r->base < r->size ? r : NULL;
}

/* The first region of @ctx that starts above @ptr, or NULL. */
struct accel_region *accel_region_after_locked(struct accel_ctx *ctx,
					       uintptr_t ptr)
{
	unsigned int i = region_upper_locked(ctx, ptr);

	return i < ctx->nregions ? &ctx->regions[i] : NULL;
}

static bool region_overlaps_locked(struct accel_ctx *ctx, uintptr_t base,
				   size_t size)
{
	unsigned int i = region_upper_locked(ctx, base);

	if (i && ctx->regions[i - 1].base + ctx->regions[i - 1].size > base)
		return true;
	if (i < ctx->nregions && ctx->regions[i].base < base + size)
		return true;
	return false;
}

int accel_region_insert_locked(struct accel_ctx *ctx,
			       const struct accel_region *r)
{
	unsigned int i;

	if (ctx->nregions == ctx->cap_regions) {
		unsigned int cap = ctx->cap_regions ? ctx->cap_regions * 2 : 16;
		struct accel_region *n;

		n = realloc(ctx->regions, cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		ctx->regions = n;
		ctx->cap_regions = cap;
	}
	i = region_upper_locked(ctx, r->base);
	memmove(&ctx->regions[i + 1], &ctx->regions[i],
		(ctx->nregions - i) * sizeof(*r));
	ctx->regions[i] = *r;
	ctx->nregions++;
	return 0;
}

void accel_region_remove_locked(struct accel_ctx *ctx, struct accel_region *r)
{
	unsigned int i = (unsigned int)(r - ctx->regions);

	memmove(&ctx->regions[i], &ctx->regions[i + 1],
		(ctx->nregions - i - 1) * sizeof(*r));
	ctx->nregions--;
}

int accel_kregion_release(struct accel_ctx *ctx, uint32_t handle,
			  uint32_t flags)
{
	struct accel_mem_release rel = { .handle = handle, .flags = flags };

	return accel_ioctl(ctx, ACCEL_IOC_MEM_RELEASE, &rel);
}

static void region_limit_error(const struct accel_ctx *ctx)
{
	accel_set_error("the context has %u memory regions already: device and pinned allocations, registrations and the staging pool's chunks together (see LIMITS in libaccel(7)): free one",
			ctx->info.max_regions);
}

int accel_kregion_alloc(struct accel_ctx *ctx, size_t size, uint32_t flags,
			uint32_t *handle, uint64_t *offset)
{
	struct accel_mem_alloc a;
	int ret;

	memset(&a, 0, sizeof(a));
	a.size = size;
	a.flags = flags;
	ret = accel_ioctl(ctx, ACCEL_IOC_MEM_ALLOC, &a);
	/*
	 * Pages released with work queued whose release the thread that
	 * reported it has not got to yet: give them back, then retry.
	 */
	if (ret == -ENOMEM && ctx->backend->reap(ctx))
		ret = accel_ioctl(ctx, ACCEL_IOC_MEM_ALLOC, &a);
	if (!ret) {
		*handle = a.handle;
		*offset = a.mmap_offset;
	} else if (ret == -ENOSPC) {
		region_limit_error(ctx);
	}
	return ret;
}

int accel_bounce_alloc(struct accel_ctx *ctx, size_t size, uint32_t *handle,
		       void **ptr, size_t *map_len)
{
	uint64_t off;
	int ret;

	ret = accel_kregion_alloc(ctx, size, ACCEL_MEM_HOST, handle, &off);
	if (ret)
		return ret;
	*map_len = accel_page_round(ctx, size);
	ret = ctx->ops->mmap(ctx->tp, off, *map_len, ptr);
	if (ret) {
		accel_kregion_release(ctx, *handle, 0);
		return ret;
	}
	/* An executor backend finds HOST_ALLOC regions by handle. */
	ret = ctx->backend->host_map(ctx, *handle, *ptr, *map_len);
	if (ret) {
		accel_kregion_release(ctx, *handle, 0);
		accel_unmap_guarded(*ptr, *map_len);
	}
	return ret;
}

void accel_bounce_release(struct accel_ctx *ctx, uint32_t handle, void *ptr,
			  size_t map_len)
{
	struct accel_region r = {
		.kind = LA_REGION_HOST_ALLOC,
		.base = (uintptr_t)ptr,
		.map_len = map_len,
		.handle = handle,
	};

	/* Stream-ordered: the pages go when the copies naming them retire. */
	ctx->backend->release(ctx, &r, true);
	ctx->backend->unmap(ctx, &r);
}

/* Undo a region that never made it into the table (no work names it). */
static void region_undo(struct accel_ctx *ctx, struct accel_region *r)
{
	ctx->backend->release(ctx, r, true);
	ctx->backend->unmap(ctx, r);
}

/* Enter a new region in the context's table, or undo it. */
static int region_publish(struct accel_ctx *ctx, struct accel_region *r)
{
	int ret;

	pthread_mutex_lock(&ctx->lock);
	ret = accel_region_insert_locked(ctx, r);
	pthread_mutex_unlock(&ctx->lock);
	if (ret)
		region_undo(ctx, r);
	return ret;
}

ACCEL_EXPORT
int accel_host_alloc(accel_context *ctxh, void **ptr, size_t size,
		     unsigned int flags)
{
	ACCEL_API_ENTER();
	struct accel_region r;
	struct accel_ctx *ctx;
	void *p;
	int ret;

	ret = accel_ctx_get_checked(ctxh,
				     ptr && size && !(flags & ~ACCEL_HOST_ALLOC_PORTABLE), &ctx);
	if (ret)
		return ret;
	memset(&r, 0, sizeof(r));
	r.kind = LA_REGION_HOST_ALLOC;
	r.flags = flags;
	ret = accel_bounce_alloc(ctx, size, &r.handle, &p, &r.map_len);
	if (ret == -ENOMEM)
		accel_pin_error(ctx, size, "accel_host_alloc()");
	if (ret)
		goto out;
	r.base = (uintptr_t)p;
	r.size = size;
	ctx->backend->host_pin(ctx, &r);
	ret = region_publish(ctx, &r);
	if (!ret)
		*ptr = p;
out:
	accel_ctx_put(ctx);
	return ret;
}

/*
 * Nothing of the context is locked while the range is looked at and
 * pinned (the transport's check, the backend's cudaHostRegister): that
 * takes as long as the range is large, and the context's other threads
 * copy meanwhile. The range enters the table last, once it is pinned; a
 * registration of an overlapping range that got there first makes this
 * one -EEXIST and undo what it did.
 */
/* Why the driver (or the library, for an overlap) refused a range. */
static void register_error(const void *ptr, size_t size, int err)
{
	if (err == -EEXIST)
		accel_set_error("[%p, +%zu) overlaps memory the context knows already (a registered range or a pinned allocation): unregister it first, or register it in another context",
				ptr, size);
	else if (err == -EFAULT)
		accel_set_error("[%p, +%zu) is not all mapped, or not writable while registered without ACCEL_HOST_REGISTER_READONLY",
				ptr, size);
}

ACCEL_EXPORT
int accel_host_register(accel_context *ctxh, void *ptr, size_t size,
			unsigned int flags)
{
	ACCEL_API_ENTER();
	struct accel_mem_register reg;
	struct accel_region r;
	struct accel_ctx *ctx;
	bool overlap;
	int ret;

	if (!ptr || !size || (flags & ~ACCEL_HOST_REGISTER_READONLY))
		return -EINVAL;
	if ((uintptr_t)ptr + size < (uintptr_t)ptr)
		return -EINVAL;
	ret = accel_ctx_get(ctxh, &ctx);
	if (ret)
		return ret;
	pthread_mutex_lock(&ctx->lock);
	overlap = region_overlaps_locked(ctx, (uintptr_t)ptr, size);
	pthread_mutex_unlock(&ctx->lock);
	if (overlap) {
		ret = -EEXIST;
		register_error(ptr, size, ret);
		goto out;
	}
	memset(&reg, 0, sizeof(reg));
	reg.addr = (uint64_t)(uintptr_t)ptr;
	reg.size = size;
	reg.flags = (flags & ACCEL_HOST_REGISTER_READONLY) ?
		    ACCEL_MEM_READONLY : 0;
	ret = accel_ioctl(ctx, ACCEL_IOC_MEM_REGISTER, &reg);
	/*
	 * A range released with work queued that has retired since, or
	 * pages still charged for one.
	 */
	if ((ret == -EEXIST || ret == -ENOMEM) && ctx->backend->reap(ctx))
		ret = accel_ioctl(ctx, ACCEL_IOC_MEM_REGISTER, &reg);
	if (ret == -ENOMEM)
		accel_pin_error(ctx, size, "accel_host_register()");
	else if (ret == -ENOSPC)
		region_limit_error(ctx);
	else if (ret)
		register_error(ptr, size, ret);
	if (ret)
		goto out;
	memset(&r, 0, sizeof(r));
	r.kind = LA_REGION_REGISTERED;
	r.base = (uintptr_t)ptr;
	r.size = size;
	r.handle = reg.handle;
	r.flags = flags;
	ret = ctx->backend->host_pin(ctx, &r);
	if (ret) {
		region_undo(ctx, &r);
		goto out;
	}
	pthread_mutex_lock(&ctx->lock);
	ret = region_overlaps_locked(ctx, r.base, r.size) ? -EEXIST :
	      accel_region_insert_locked(ctx, &r);
	pthread_mutex_unlock(&ctx->lock);
	if (ret)
		region_undo(ctx, &r);
out:
	accel_ctx_put(ctx);
	return ret;
}

ACCEL_EXPORT
int accel_malloc(accel_context *ctxh, void **dev_ptr, size_t size)
{
	ACCEL_API_ENTER();
	struct accel_region r;
	struct accel_ctx *ctx;
	int ret;

	ret = accel_ctx_get_checked(ctxh, dev_ptr && size, &ctx);
	if (ret)
		return ret;
	memset(&r, 0, sizeof(r));
	r.kind = LA_REGION_DEVICE;
	/* On the current device: the transport's is ours under dev_lock. */
	pthread_mutex_lock(&ctx->dev_lock);
	r.device = ctx->device;
	ret = ctx->backend->device_alloc(ctx, size, &r);
	if (ret == -ENOMEM) {
		/* The stream-ordered pool's idle chunks are memory too. */
		accel_pool_trim(ctx, 0);
		ret = ctx->backend->device_alloc(ctx, size, &r);
	}
	pthread_mutex_unlock(&ctx->dev_lock);
	/* A backend that failed it with its own reason (CUDA's) keeps it. */
	if (ret == -ENOMEM && !*accel_last_error_string())
		accel_set_error("accel_malloc(): no %zu bytes of device memory on device %d: the context's device memory limit is %llu bytes (see LIMITS in libaccel(7)); free some",
				size, r.device,
				(unsigned long long)ctx->info.max_device_bytes);
	if (ret)
		goto out;
	ret = region_publish(ctx, &r);
	if (!ret)
		*dev_ptr = (void *)r.base;
out:
	accel_ctx_put(ctx);
	return ret;
}

/*
 * Release the region starting at @ptr, of @kind, in whichever context
 * holds it: -EINVAL for a pointer inside a region (or of another kind),
 * -ENOENT for one no context knows.
 */
struct release_arg {
	uintptr_t ptr;
	enum accel_region_kind kind;
	uint32_t flags;
	int ret;
	struct accel_ctx *skip;	/* tried first, not again */
};

/* Why the region @r holding a->ptr is not one a->kind's call releases. */
static void release_error(const struct accel_region *r,
			  const struct release_arg *a)
{
	static const char *const alloc_call[] = {
		[LA_REGION_HOST_ALLOC] = "accel_host_alloc()",
		[LA_REGION_REGISTERED] = "accel_host_register()",
		[LA_REGION_DEVICE] = "accel_malloc()",
	};
	static const char *const free_call[] = {
		[LA_REGION_HOST_ALLOC] = "accel_host_free()",
		[LA_REGION_REGISTERED] = "accel_host_unregister()",
		[LA_REGION_DEVICE] = "accel_free()",
	};
	const char *what = r->pool ? "accel_malloc_async()" :
			   alloc_call[r->kind];

	if (r->kind != a->kind || r->pool)
		accel_set_error("%s: %p is memory of %s, which %s does not release",
				free_call[a->kind], (void *)a->ptr, what,
				free_call[a->kind]);
	else
		accel_set_error("%s: %p is %zu bytes into the %s %s of %zu bytes at %p: pass %s",
				free_call[a->kind], (void *)a->ptr,
				(size_t)(a->ptr - r->base), what,
				r->kind == LA_REGION_REGISTERED ? "range" :
								  "allocation",
				r->size, (void *)r->base,
				r->kind == LA_REGION_REGISTERED ?
				"the start of the registered range" :
				"the pointer that call returned");
}

static int release_in_ctx(struct accel_ctx *ctx, void *data)
{
	struct release_arg *a = data;
	struct accel_region *r, copy;
	int ret;

	pthread_mutex_lock(&ctx->lock);
	r = accel_region_find_locked(ctx, a->ptr);
	/* An import is released with its allocation, never by itself. */
	if (!r || r->shadow) {
		pthread_mutex_unlock(&ctx->lock);
		return 0;
	}
	if (r->pool && a->kind == LA_REGION_DEVICE) {
		/* accel_free() of an accel_malloc_async() block. */
		a->ret = ctx->forked ? -EACCES :
			 accel_pool_free_locked(ctx, r, a->ptr, 0, 0);
		pthread_mutex_unlock(&ctx->lock);
		return 1;
	}
	if (r->base != a->ptr || r->kind != a->kind || r->pool) {
		release_error(r, a);
		pthread_mutex_unlock(&ctx->lock);
		a->ret = -EINVAL;
		return 1;
	}
	ret = ctx->backend->release(ctx, r, a->flags &
				    ACCEL_MEM_RELEASE_DEFERRED);
	/* A release that failed leaves the region and its mapping. */
	if (ret && ret != -ENOENT) {
		pthread_mutex_unlock(&ctx->lock);
		a->ret = ret;
		return 1;
	}
	copy = *r;
	accel_region_remove_locked(ctx, r);
	pthread_mutex_unlock(&ctx->lock);

	accel_check_forget(copy.base, copy.map_len ? copy.map_len : copy.size);
	/* The other contexts' imports go too (their pages stay queued). */
	if (copy.flags & ACCEL_HOST_ALLOC_PORTABLE &&
	    copy.kind == LA_REGION_HOST_ALLOC)
		accel_portable_forget(ctx, copy.base);
	ctx->backend->unmap(ctx, &copy);
	a->ret = 0;
	return 1;
}

static int release_in_other_ctx(struct accel_ctx *ctx, void *data)
{
	struct release_arg *a = data;

	return ctx == a->skip ? 0 : release_in_ctx(ctx, data);
}

/* Why no context released a->ptr (-ENOENT, or -EACCES in a child). */
static void release_unknown_error(const struct release_arg *a)
{
	static const char *const what[] = {
		[LA_REGION_HOST_ALLOC] = "an accel_host_alloc() block",
		[LA_REGION_REGISTERED] = "a range registered with accel_host_register()",
		[LA_REGION_DEVICE] = "an accel_malloc() block",
	};

	if (a->ret == -ENOENT)
		accel_set_error("%p is not %s of any live context (freed already, or never allocated or registered)",
				(void *)a->ptr, what[a->kind]);
	else if (a->ret == -EACCES)
		accel_set_error("%p is %s of a context created by the parent process: a forked child cannot release it",
				(void *)a->ptr, what[a->kind]);
}

/*
 * A range registered in several contexts: the calling thread's current
 * context (accel_context_get_current()) releases its own first, then the
 * others are tried, newest first.
 */
static int release_ptr(void *ptr, enum accel_region_kind kind, uint32_t flags)
{
	struct release_arg a = {
		.ptr = (uintptr_t)ptr,
		.kind = kind,
		.flags = flags,
		.ret = -ENOENT,
	};

	if (!ptr)
		return -EINVAL;
	/* The reference keeps a.skip from naming a new context meanwhile. */
	if (accel_ctx_get_current(&a.skip))
		a.skip = NULL;
	if (!a.skip || !release_in_ctx(a.skip, &a))
		accel_ctx_foreach(release_in_other_ctx, &a);
	if (a.skip)
		accel_ctx_put(a.skip);
	if (!*accel_last_error_string())
		release_unknown_error(&a);
	return a.ret;
}

ACCEL_EXPORT
int accel_host_free(void *ptr)
{
	ACCEL_API_ENTER();
	return release_ptr(ptr, LA_REGION_HOST_ALLOC,
			   ACCEL_MEM_RELEASE_DEFERRED);
}

ACCEL_EXPORT
int accel_host_unregister(void *ptr, unsigned int flags)
{
	ACCEL_API_ENTER();
	if (flags & ~ACCEL_HOST_UNREGISTER_DEFERRED)
		return -EINVAL;
	return release_ptr(ptr, LA_REGION_REGISTERED,
			   (flags & ACCEL_HOST_UNREGISTER_DEFERRED) ?
			   ACCEL_MEM_RELEASE_DEFERRED : 0);
}

ACCEL_EXPORT
int accel_free(void *dev_ptr)
{
	ACCEL_API_ENTER();
	return release_ptr(dev_ptr, LA_REGION_DEVICE,
			   ACCEL_MEM_RELEASE_DEFERRED);
}

struct foreign_arg {
	struct accel_ctx *self;
	uintptr_t ptr;
	struct accel_region r;
	uint64_t owner;
};

static int foreign_in_ctx(struct accel_ctx *ctx, void *data)
{
	struct foreign_arg *a = data;
	struct accel_region *r;

	if (ctx == a->self)
		return 0;
	pthread_mutex_lock(&ctx->lock);
	r = accel_region_find_locked(ctx, a->ptr);
	if (r) {
		a->r = *r;
		a->owner = ctx->handle;
	}
	pthread_mutex_unlock(&ctx->lock);
	return r != NULL;
}

bool accel_region_foreign(struct accel_ctx *self, uintptr_t ptr,
			  struct accel_region *r, uint64_t *owner)
{
	struct foreign_arg a = { .self = self, .ptr = ptr };

	if (!accel_ctx_foreach(foreign_in_ctx, &a))
		return false;
	*r = a.r;
	*owner = a.owner;
	return true;
}

struct within_arg {
	struct accel_ctx *self;
	uintptr_t ptr;
	size_t len;
	struct accel_region r;
};

static int portable_within_ctx(struct accel_ctx *ctx, void *data)
{
	struct within_arg *a = data;
	struct accel_region *r;
	int found = 0;

	if (ctx == a->self || ctx->ops != a->self->ops ||
	    ctx->backend != a->self->backend || ctx->forked)
		return 0;
	pthread_mutex_lock(&ctx->lock);
	for (r = accel_region_after_locked(ctx, a->ptr);
	     r && r < ctx->regions + ctx->nregions &&
	     r->base - a->ptr < a->len; r++) {
		if (r->kind == LA_REGION_HOST_ALLOC && !r->shadow &&
		    (r->flags & ACCEL_HOST_ALLOC_PORTABLE)) {
			a->r = *r;
			found = 1;
			break;
		}
	}
	pthread_mutex_unlock(&ctx->lock);
	return found;
}

/*
 * Another context's portable allocation (pinned memory of every context)
 * that starts inside the @len bytes above @ptr, into *@r; under no
 * context's lock (each is taken in turn).
 */
bool accel_portable_within(struct accel_ctx *self, uintptr_t ptr, size_t len,
			   struct accel_region *r)
{
	struct within_arg a = { .self = self, .ptr = ptr, .len = len };

	if (!accel_ctx_foreach(portable_within_ctx, &a))
		return false;
	*r = a.r;
	return true;
}

/*
 * Portable pinned memory (ACCEL_HOST_ALLOC_PORTABLE, cudaHostAllocPortable).
 * The owner context allocates; any other context of the process (same
 * transport and backend) that names the memory in a copy imports it at
 * that first copy: a region of its own over the same pages, entered in its
 * table as a shadow registration, so that the copy is asynchronous there
 * too. The import holds the pages for that context's queued work (the
 * kernel pins them; inproc maps the memory file) and is charged to that
 * context's pin limit; it is released, stream-ordered, when the owner frees
 * the allocation or is destroyed. The backend adds what its device needs
 * (host_import: the cuda backend shares the owner's mapping and CUDA
 * registration, kept until the last import is cleaned up, so the import's
 * copies go straight from the pinned pages). Lock order: the owner's
 * ctx->lock is dropped before the importer's is taken; the transport's
 * locks come last.
 */
struct portable_arg {
	struct accel_ctx *self;
	uintptr_t ptr;
	struct accel_region r;
	struct accel_ctx *owner;	/* referenced */
};

static int portable_owner_in_ctx(struct accel_ctx *ctx, void *data)
{
	struct portable_arg *a = data;
	struct accel_region *r;

	/* An inherited context's transport is the parent's: not touched. */
	if (ctx == a->self || ctx->ops != a->self->ops ||
	    ctx->backend != a->self->backend || ctx->forked)
		return 0;
	pthread_mutex_lock(&ctx->lock);
	r = accel_region_find_locked(ctx, a->ptr);
	if (r && r->kind == LA_REGION_HOST_ALLOC && !r->shadow &&
	    (r->flags & ACCEL_HOST_ALLOC_PORTABLE)) {
		a->r = *r;
		a->owner = ctx;
		accel_obj_ref(&ctx->obj);
	}
	pthread_mutex_unlock(&ctx->lock);
	return a->owner != NULL;
}

int accel_portable_import(struct accel_ctx *ctx, uintptr_t ptr)
{
	struct portable_arg a = { .self = ctx, .ptr = ptr };
	struct accel_region r;
	uint32_t handle;
	int ret = 0;

	if (!ctx->ops->import_host)
		return -ENOENT;
	if (!accel_ctx_foreach(portable_owner_in_ctx, &a))
		return -ENOENT;
	pthread_mutex_lock(&ctx->lock);
	/* Imported meanwhile by another thread of this context? */
	if (accel_region_find_locked(ctx, ptr))
		goto out_unlock;
	if (region_overlaps_locked(ctx, a.r.base, a.r.size)) {
		ret = -ENOENT;
		goto out_unlock;
	}
	ret = ctx->ops->import_host(ctx->tp, a.owner->tp, a.r.handle,
				    a.r.base, a.r.size, &handle);
	if ((ret == -ENOMEM || ret == -EEXIST) && ctx->backend->reap(ctx))
		ret = ctx->ops->import_host(ctx->tp, a.owner->tp, a.r.handle,
					    a.r.base, a.r.size, &handle);
	if (ret)
		goto out_unlock;
	memset(&r, 0, sizeof(r));
	r.kind = LA_REGION_REGISTERED;
	r.base = a.r.base;
	r.size = a.r.size;
	r.handle = handle;
	r.shadow = true;
	ret = ctx->backend->host_import(ctx, &r);
	if (ret) {
		accel_kregion_release(ctx, handle, 0);
		ret = -ENOENT;
		goto out_unlock;
	}
	ret = accel_region_insert_locked(ctx, &r);
	if (ret) {
		accel_kregion_release(ctx, handle, 0);
		ctx->backend->region_teardown(ctx, &r);
	}
out_unlock:
	pthread_mutex_unlock(&ctx->lock);
	accel_ctx_put(a.owner);
	return ret;
}

struct forget_arg {
	struct accel_ctx *owner;
	const uintptr_t *bases;
	unsigned int n;
};

static int forget_in_ctx(struct accel_ctx *ctx, void *data)
{
	struct forget_arg *a = data;
	struct accel_region *r;
	unsigned int i;

	if (ctx == a->owner)
		return 0;
	pthread_mutex_lock(&ctx->lock);
	for (i = 0; i < a->n; i++) {
		r = accel_region_find_locked(ctx, a->bases[i]);
		if (!r || !r->shadow || r->base != a->bases[i])
			continue;
		/* Stream-ordered: its queued copies keep the pages. */
		ctx->backend->release(ctx, r, true);
		accel_region_remove_locked(ctx, r);
	}
	pthread_mutex_unlock(&ctx->lock);
	return 0;
}

void accel_portable_forget(struct accel_ctx *owner, uintptr_t base)
{
	struct forget_arg a = { .owner = owner };
	uintptr_t *bases = NULL;
	unsigned int i, n = 0;

	if (base) {
		a.bases = &base;
		a.n = 1;
		accel_ctx_foreach(forget_in_ctx, &a);
		return;
	}
	pthread_mutex_lock(&owner->lock);
	bases = calloc(owner->nregions ? owner->nregions : 1, sizeof(*bases));
	for (i = 0; bases && i < owner->nregions; i++) {
		const struct accel_region *r = &owner->regions[i];

		if (r->kind == LA_REGION_HOST_ALLOC && !r->shadow &&
		    (r->flags & ACCEL_HOST_ALLOC_PORTABLE))
			bases[n++] = r->base;
	}
	pthread_mutex_unlock(&owner->lock);
	if (n) {
		a.bases = bases;
		a.n = n;
		accel_ctx_foreach(forget_in_ctx, &a);
	}
	free(bases);
}

void accel_regions_teardown(struct accel_ctx *ctx)
{
	unsigned int i;

	for (i = 0; i < ctx->nregions; i++) {
		struct accel_region *r = &ctx->regions[i];

		accel_check_forget(r->base, r->map_len ? r->map_len : r->size);
		ctx->backend->region_teardown(ctx, r);
	}
	ctx->nregions = 0;
}
