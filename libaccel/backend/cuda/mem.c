// SPDX-License-Identifier: MIT
/*
 * The cuda backend: memory. cudaMalloc'ed device memory registered as
 * ACCEL_MEM_EXTERNAL, cudaHostRegister of host regions, the map of
 * HOST_ALLOC regions by handle, and releases kept until the last queued
 * use retired (the CUDA side cannot see the transport's references).
 */
#include "cuda.h"

/*
 * Portable pinned memory (ACCEL_HOST_ALLOC_PORTABLE): the owner's mapping
 * and its CUDA registration (cudaHostRegisterPortable, so that every CUDA
 * context of the process takes it as pinned) are shared with the other
 * contexts that imported the allocation (accel_cuda_host_import()): their
 * executors copy straight from the owner's mapping. The last of the owner
 * and the imports to clean up its region unregisters and unmaps, so a
 * copy queued in an importer still finds the pages mapped and pinned after
 * the owner freed the memory or was destroyed. The table is process-wide
 * (the contexts are); its lock is a leaf, no CUDA call is made under it.
 */
struct cx_portable {
	struct cx_portable *next;
	uintptr_t base;
	size_t map_len;
	unsigned int refs;	/* the owner's region and every import */
	bool cuda_pinned;
};

/* Protects cx_portables and every entry's refs. */
static pthread_mutex_t cx_portable_lock = PTHREAD_MUTEX_INITIALIZER;
static struct cx_portable *cx_portables;

static struct cx_portable **cx_portable_find_locked(uintptr_t base)
{
	struct cx_portable **pp;

	for (pp = &cx_portables; *pp; pp = &(*pp)->next)
		if ((*pp)->base == base)
			return pp;
	return NULL;
}

/*
 * Drop a reference on the portable allocation at @base; the last one
 * unregisters and unmaps it. False when @base is no portable allocation.
 */
static bool cx_portable_put(uintptr_t base)
{
	struct cx_portable **pp, *p = NULL;

	pthread_mutex_lock(&cx_portable_lock);
	pp = cx_portable_find_locked(base);
	if (pp && !--(*pp)->refs) {
		p = *pp;
		*pp = p->next;
	}
	pthread_mutex_unlock(&cx_portable_lock);
	if (!p)
		return pp != NULL;
	if (p->cuda_pinned)
		cx_rt.cudaHostUnregister((void *)p->base);
	accel_unmap_guarded((void *)p->base, p->map_len);
	free(p);
	return true;
}

static unsigned int map_find_locked(struct accel_cuda *cx, uint32_t handle)
{
	unsigned int lo = 0, hi = cx->mem.nmap;

	while (lo < hi) {
		unsigned int mid = lo + (hi - lo) / 2;

		if (cx->mem.map[mid].handle < handle)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int accel_cuda_map_add(struct accel_ctx *ctx, uint32_t handle, void *base,
		       size_t len)
{
	struct accel_cuda *cx = cx_of(ctx);
	struct cx_map_ent *m;
	unsigned int i;

	if (!cx)
		return 0;
	pthread_mutex_lock(&cx->mem.map_lock);
	m = cx_grow(cx->mem.map, &cx->mem.capmap, cx->mem.nmap + 1, sizeof(*m));
	if (!m) {
		pthread_mutex_unlock(&cx->mem.map_lock);
		return -ENOMEM;
	}
	cx->mem.map = m;
	i = map_find_locked(cx, handle);
	memmove(&m[i + 1], &m[i], (cx->mem.nmap - i) * sizeof(*m));
	m[i].handle = handle;
	m[i].base = (uintptr_t)base;
	m[i].len = len;
	cx->mem.nmap++;
	pthread_mutex_unlock(&cx->mem.map_lock);
	return 0;
}

static void map_remove(struct accel_cuda *cx, uint32_t handle)
{
	unsigned int i;

	pthread_mutex_lock(&cx->mem.map_lock);
	i = map_find_locked(cx, handle);
	if (i < cx->mem.nmap && cx->mem.map[i].handle == handle) {
		memmove(&cx->mem.map[i], &cx->mem.map[i + 1],
			(cx->mem.nmap - i - 1) * sizeof(*cx->mem.map));
		cx->mem.nmap--;
	}
	pthread_mutex_unlock(&cx->mem.map_lock);
}

/* The host address of byte @off of HOST_ALLOC region @handle, or NULL. */
void *cx_map_addr(struct accel_cuda *cx, uint32_t handle, uint64_t off,
		  uint64_t len)
{
	uintptr_t p = 0;
	unsigned int i;

	pthread_mutex_lock(&cx->mem.map_lock);
	i = map_find_locked(cx, handle);
	if (i < cx->mem.nmap && cx->mem.map[i].handle == handle &&
	    off <= cx->mem.map[i].len && len <= cx->mem.map[i].len - off)
		p = cx->mem.map[i].base + off;
	pthread_mutex_unlock(&cx->mem.map_lock);
	return (void *)p;
}

static int accel_cuda_malloc(struct accel_ctx *ctx, size_t size, void **ptr)
{
	struct accel_cuda *cx = cx_of(ctx);
	cudaError_t e;

	cx_rt.cudaSetDevice(cx->cfg.device);
	e = cx_rt.cudaMalloc(ptr, size);
	if (e != cudaSuccess)
		return cx_error(cx, e, "cudaMalloc");
	/* accel_malloc() memory starts zeroed, whoever backs it. */
	e = cx_rt.cudaMemset(*ptr, 0, size);
	if (e != cudaSuccess) {
		cx_rt.cudaFree(*ptr);
		return cx_error(cx, e, "cudaMemset");
	}
	return 0;
}

/* accel_malloc(): cudaMalloc, registered so that descriptors can name it. */
int accel_cuda_device_alloc(struct accel_ctx *ctx, size_t size,
			    struct accel_region *r)
{
	struct accel_mem_register reg;
	void *p = NULL;
	int ret;

	ret = accel_cuda_malloc(ctx, size, &p);
	if (ret)
		return ret;
	memset(&reg, 0, sizeof(reg));
	reg.addr = (uint64_t)(uintptr_t)p;
	reg.size = size;
	reg.flags = ACCEL_MEM_EXTERNAL;
	r->base = (uintptr_t)p;
	r->size = size;
	ret = accel_ioctl(ctx, ACCEL_IOC_MEM_REGISTER, &reg);
	if (ret) {
		r->handle = 0;
		accel_cuda_region_teardown(ctx, r);
		return ret;
	}
	r->handle = reg.handle;
	return 0;
}

/* The CUDA side keeps a region's mapping until its last use retired. */
void accel_cuda_unmap(struct accel_ctx *ctx, const struct accel_region *r)
{
	(void)ctx;
	(void)r;
}

int accel_cuda_host_pin(struct accel_ctx *ctx, struct accel_region *r)
{
	struct accel_cuda *cx = cx_of(ctx);
	size_t len = r->map_len ? r->map_len : r->size;
	bool portable = r->kind == LA_REGION_HOST_ALLOC &&
			(r->flags & ACCEL_HOST_ALLOC_PORTABLE);
	struct cx_portable *p;
	cudaError_t e;

	cx_rt.cudaSetDevice(cx->cfg.device);
	/* It faults in and pins every page: the transport left both to it. */
	e = cx_rt.cudaHostRegister((void *)r->base, len,
				   portable ? cudaHostRegisterPortable :
					      cudaHostRegisterDefault);
	if (e == cudaSuccess) {
		r->cuda_pinned = true;
	} else {
		cx_rt.cudaGetLastError();
		/*
		 * Ranges that share a page with a registered one fail here,
		 * and read-only ones (no cudaHostRegisterReadOnly): CUDA
		 * stages their copies (slow, still right). A range whose
		 * pages cannot be faulted in fails the registration, as the
		 * module's pin would; faulting it in tells which it is.
		 */
		if (r->kind == LA_REGION_REGISTERED)
			return accel_range_check(r->base, r->size, !(r->flags &
						 ACCEL_HOST_REGISTER_READONLY));
	}
	if (!portable)
		return 0;
	/* Without an entry other contexts do not import it: they stage. */
	p = calloc(1, sizeof(*p));
	if (!p)
		return 0;
	p->base = r->base;
	p->map_len = r->map_len;
	p->refs = 1;
	p->cuda_pinned = r->cuda_pinned;
	pthread_mutex_lock(&cx_portable_lock);
	p->next = cx_portables;
	cx_portables = p;
	pthread_mutex_unlock(&cx_portable_lock);
	return 0;
}

/*
 * Another context's portable allocation, imported as @r (a shadow region
 * over the owner's mapping at @r->base): hold the owner's mapping and CUDA
 * registration for it, registering nothing again, and resolve its handle
 * to the owner's mapping (the in-process transport hands it out as a host
 * allocation). 0, or -ENOENT (the copy is then staged).
 */
int accel_cuda_host_import(struct accel_ctx *ctx, struct accel_region *r)
{
	struct cx_portable **pp;
	int ret;

	pthread_mutex_lock(&cx_portable_lock);
	pp = cx_portable_find_locked(r->base);
	if (pp)
		(*pp)->refs++;
	pthread_mutex_unlock(&cx_portable_lock);
	if (!pp)
		return -ENOENT;
	ret = accel_cuda_map_add(ctx, r->handle, (void *)r->base, r->size);
	if (ret)
		cx_portable_put(r->base);
	return ret;
}

/* Give back what the CUDA side holds of a region no queued work names. */
void cx_region_cleanup(struct accel_cuda *cx,
		       const struct accel_region *r)
{
	cx_rt.cudaSetDevice(cx->cfg.device);
	if (r->shadow) {
		/* An import: the owner's mapping and registration, shared. */
		map_remove(cx, r->handle);
		cx_portable_put(r->base);
		return;
	}
	if (r->kind == LA_REGION_HOST_ALLOC &&
	    (r->flags & ACCEL_HOST_ALLOC_PORTABLE)) {
		map_remove(cx, r->handle);
		if (cx_portable_put(r->base))
			return;
	}
	if (r->cuda_pinned)
		cx_rt.cudaHostUnregister((void *)r->base);
	switch (r->kind) {
	case LA_REGION_DEVICE:
		cx_rt.cudaFree((void *)r->base);
		break;
	case LA_REGION_HOST_ALLOC:
		map_remove(cx, r->handle);
		accel_unmap_guarded((void *)r->base, r->map_len);
		break;
	case LA_REGION_REGISTERED:
		break;
	}
	cx_rt.cudaGetLastError();
}

int accel_cuda_release(struct accel_ctx *ctx, const struct accel_region *r,
		       bool deferred)
{
	struct accel_cuda *cx = cx_of(ctx);
	struct cx_zombie *z;
	int ret;

	/*
	 * Never deferred in the transport: the CUDA side must know when the
	 * last use retired, so a busy region is kept and retried after each
	 * completion.
	 */
	ret = accel_kregion_release(ctx, r->handle, 0);
	if (ret == -ENOENT)
		ret = 0;
	if (!ret) {
		cx_region_cleanup(cx, r);
		return 0;
	}
	if (ret != -EBUSY || !deferred)
		return ret;
	z = malloc(sizeof(*z));
	if (!z)
		return -ENOMEM;
	z->r = *r;
	pthread_mutex_lock(&cx->lock);
	z->next = cx->mem.zombies;
	cx->mem.zombies = z;
	pthread_mutex_unlock(&cx->lock);
	/* It may have retired meanwhile, with no completion to come. */
	cx_zombies_retry(cx);
	return 0;
}

void cx_zombies_retry(struct accel_cuda *cx)
{
	struct cx_zombie *list, *z, *keep = NULL;

	pthread_mutex_lock(&cx->lock);
	list = cx->mem.zombies;
	cx->mem.zombies = NULL;
	pthread_mutex_unlock(&cx->lock);
	while ((z = list)) {
		int ret;

		list = z->next;
		ret = accel_kregion_release(cx->ctx, z->r.handle, 0);
		if (ret == -EBUSY) {
			z->next = keep;
			keep = z;
			continue;
		}
		cx_region_cleanup(cx, &z->r);
		free(z);
	}
	if (!keep)
		return;
	pthread_mutex_lock(&cx->lock);
	for (z = keep; z->next; z = z->next)
		;
	z->next = cx->mem.zombies;
	cx->mem.zombies = keep;
	pthread_mutex_unlock(&cx->lock);
}

void accel_cuda_region_teardown(struct accel_ctx *ctx,
				const struct accel_region *r)
{
	cx_region_cleanup(cx_of(ctx), r);
}

bool accel_cuda_reap(struct accel_ctx *ctx)
{
	cx_zombies_retry(cx_of(ctx));
	/* Whatever came back, the failed call is worth one more try. */
	return true;
}
