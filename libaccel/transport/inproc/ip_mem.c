// SPDX-License-Identifier: MIT
/*
 * The in-process transport: regions. Pinned bytes charged to
 * RLIMIT_MEMLOCK, memfd mappings for pinned host allocations, anonymous
 * memory as device memory, and their release (the twin of driver/as_mem.c).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/resource.h>

#include "backend.h"
#include "ip.h"

/*
 * Bytes pinned by every inproc context of the process, charged against
 * RLIMIT_MEMLOCK unless the caller has CAP_IPC_LOCK: the module's
 * locked_vm charge (as_mem_charge(), io_uring's), per region. Registered
 * ranges are not mlock()ed: munlock() on release would undo a lock that
 * another registration of the same pages, or the program itself
 * (mlock(2), mlockall(2)), still holds, as mlock does not count.
 */
static _Atomic u64 ip_memlock;

static int ip_memlock_charge(struct ip_region *r, u64 bytes)
{
	struct rlimit rl;
	u64 cur, limit = UINT64_MAX;

	if (accel_has_ipc_lock())
		return 0;
	if (!getrlimit(RLIMIT_MEMLOCK, &rl) && rl.rlim_cur != RLIM_INFINITY)
		limit = rl.rlim_cur;
	cur = atomic_load(&ip_memlock);
	do {
		if (bytes > limit || cur > limit - bytes)
			return -ENOMEM;
	} while (!atomic_compare_exchange_weak(&ip_memlock, &cur, cur + bytes));
	r->memlock = bytes;
	return 0;
}

static void ip_memlock_uncharge(struct ip_region *r)
{
	atomic_fetch_sub(&ip_memlock, r->memlock);
	r->memlock = 0;
}

/*
 * The child's memory is its own (fork() gives it private copies): the
 * parent's regions, which the child can never release (-EACCES), charge
 * the child nothing, as mlock()ed pages are not locked in a child.
 */
void ip_mem_forked(void)
{
	atomic_store(&ip_memlock, 0);
}

void ip_region_free_locked(struct ip_ctx *c, struct ip_region *r)
{
	switch (r->core.kind) {
	case IP_REGION_USER:
		ip_memlock_uncharge(r);
		c->pinned_bytes -= r->charged;
		break;
	case IP_REGION_HOST:
		munmap(r->base, r->map_len);
		close(r->memfd);
		ip_memlock_uncharge(r);
		c->pinned_bytes -= r->map_len;
		break;
	case IP_REGION_DEVICE:
		munmap(r->base, r->map_len);
		c->device_bytes -= r->map_len;
		c->dev_bytes[r->dev] -= r->map_len;
		break;
	case IP_REGION_EXTERNAL:
		break;
	}
	node_del(&r->node);
	free(r);
}

/* Registered host ranges and external ranges are two address spaces. */
static bool overlaps_locked(struct ip_ctx *c, u32 kind, u64 addr, u64 size)
{
	struct ip_node *n;

	for (n = c->all_regions.next; n != &c->all_regions; n = n->next)
		if (asc_region_conflicts(&container_of(n, struct ip_region,
						       node)->core,
					 kind, addr, size))
			return true;
	return false;
}

/* A new region, not yet published: no memory behind it, no handle. */
static struct ip_region *region_new(u32 kind, u64 addr, u64 size, u32 flags)
{
	struct ip_region *reg = calloc(1, sizeof(*reg));

	if (!reg)
		return NULL;
	node_init(&reg->node);
	reg->core.kind = kind;
	reg->core.addr = addr;
	reg->core.size = size;
	reg->core.flags = flags;
	reg->memfd = -1;
	return reg;
}

/* Give @reg its handle and put it on the context's list. */
static int region_publish_locked(struct ip_ctx *c, struct ip_region *reg)
{
	int ret = ip_idr_alloc(&c->regions, reg, ASC_MAX_REGIONS, &reg->handle);

	if (!ret)
		node_add(&c->all_regions, &reg->node);
	return ret;
}

/* An executor's address range: bounds only, nothing locked or charged. */
static int ip_mem_register_external(struct ip_ctx *c,
				    struct accel_mem_register *r)
{
	struct ip_region *reg;
	int ret;

	reg = region_new(IP_REGION_EXTERNAL, r->addr, r->size, r->flags);
	if (!reg)
		return -ENOMEM;

	pthread_mutex_lock(&c->lock);
	if (overlaps_locked(c, IP_REGION_EXTERNAL, r->addr, r->size)) {
		ret = -EEXIST;
		goto err_unlock;
	}
	ret = region_publish_locked(c, reg);
	if (ret)
		goto err_unlock;
	r->handle = reg->handle;
	pthread_mutex_unlock(&c->lock);
	return 0;

err_unlock:
	pthread_mutex_unlock(&c->lock);
	free(reg);
	return ret;
}

/*
 * -EEXIST or -ENOMEM if a registration of @reg could not be published
 * now; the answer of the call when the range is fine.
 */
static int register_admit_locked(struct ip_ctx *c, const struct ip_region *reg)
{
	if (overlaps_locked(c, IP_REGION_USER, reg->core.addr, reg->core.size))
		return -EEXIST;
	if (reg->charged > c->max_pinned_bytes - c->pinned_bytes)
		return -ENOMEM;
	return 0;
}

/*
 * The twin of as_mem_register_ioctl(): admission under the lock, the
 * RLIMIT_MEMLOCK charge, the range looked at without the lock (the
 * module pins outside its lock too, and a large or faulting range may
 * take long: another thread's copies go on meanwhile), then admission
 * again and the handle under it.
 *
 * Looking at the range is what the module's pin_user_pages() would find:
 * every page mapped, and writable unless read-only. Without an executor
 * the pages are also faulted in (MADV_POPULATE_*), as the pin would, so
 * that one the process cannot fault (a file mapping past its end) is
 * -EFAULT here. With an executor attached the transport never touches
 * the range: the executor does, and pins it itself (the cuda backend's
 * cudaHostRegister faults and pins every page); the mappings alone are
 * checked, and faulting it in a second time would only cost the time.
 */
int ip_mem_register(struct ip_ctx *c, void *arg)
{
	struct accel_mem_register *r = arg;
	bool write = !(r->flags & ACCEL_MEM_READONLY);
	long ps = c->page_size;
	struct ip_region *reg;
	bool executor;
	u64 start, end;
	int ret;

	ret = asc_check_mem_register(r);
	if (ret)
		return ret;
	if (r->flags & ACCEL_MEM_EXTERNAL)
		return ip_mem_register_external(c, r);
	start = r->addr & ~(u64)(ps - 1);
	if (r->addr + r->size > UINT64_MAX - ps)
		return -EINVAL;
	end = (r->addr + r->size + ps - 1) & ~(u64)(ps - 1);

	reg = region_new(IP_REGION_USER, r->addr, r->size, r->flags);
	if (!reg)
		return -ENOMEM;
	reg->base = (unsigned char *)(uintptr_t)r->addr;
	/* Whole pages are charged, as the driver pins them. */
	reg->charged = end - start;

	/* What fails at once fails before the range is looked at. */
	pthread_mutex_lock(&c->lock);
	ret = register_admit_locked(c, reg);
	executor = c->executor;
	pthread_mutex_unlock(&c->lock);
	if (ret)
		goto err_free;
	ret = ip_memlock_charge(reg, end - start);
	if (ret)
		goto err_free;
	ret = executor ? accel_range_mapped(r->addr, r->size, write) :
			 accel_range_check(r->addr, r->size, write);
	if (ret)
		goto err_uncharge;

	/* Another registration may have come in meanwhile. */
	pthread_mutex_lock(&c->lock);
	ret = register_admit_locked(c, reg);
	if (ret)
		goto err_unlock;
	ret = region_publish_locked(c, reg);
	if (ret)
		goto err_unlock;
	c->pinned_bytes += reg->charged;
	r->handle = reg->handle;
	pthread_mutex_unlock(&c->lock);
	return 0;

err_unlock:
	pthread_mutex_unlock(&c->lock);
err_uncharge:
	ip_memlock_uncharge(reg);
err_free:
	free(reg);
	return ret;
}

/*
 * A pinned allocation in process is a memory file, so it takes a file
 * descriptor (the module's needs none): out of them, the call fails as
 * the module's would out of memory (-ENOMEM, the ABI's errno) and says
 * what is really missing, before the caller's pinning advice could.
 */
static int host_fd_error(int err)
{
	if (err == EMFILE || err == ENFILE)
		accel_set_error("no file descriptor left for the in-process transport's memory file of a pinned allocation (%s): %s",
				err == EMFILE ? "EMFILE" : "ENFILE",
				err == EMFILE ?
				"the process is at RLIMIT_NOFILE (raise it with ulimit -n, LimitNOFILE= or limits.conf nofile, or close descriptors)" :
				"the system is at fs.file-max");
	return -ENOMEM;
}

/*
 * Our own view of a host region's memory file, charged and locked as the
 * module pins (the lock is this mapping's own: nothing else holds it).
 */
static int host_view_map(struct ip_region *reg)
{
	int ret = ip_memlock_charge(reg, reg->map_len);

	if (ret)
		return ret;
	reg->base = mmap(NULL, reg->map_len, PROT_READ | PROT_WRITE, MAP_SHARED,
			 reg->memfd, 0);
	if (reg->base == MAP_FAILED)
		goto err_uncharge;
	/* A child of fork() must not share the pages (libaccel(7) FORK). */
	if (madvise(reg->base, reg->map_len, MADV_DONTFORK) ||
	    mlock(reg->base, reg->map_len))
		goto err_unmap;
	return 0;

err_unmap:
	munmap(reg->base, reg->map_len);
err_uncharge:
	ip_memlock_uncharge(reg);
	return -ENOMEM;
}

int ip_mem_alloc(struct ip_ctx *c, void *arg)
{
	struct accel_mem_alloc *a = arg;
	struct ip_region *reg;
	size_t len;
	u64 used;
	int ret;

	ret = asc_check_mem_alloc(a);
	if (ret)
		return ret;
	len = (a->size + c->page_size - 1) & ~(u64)(c->page_size - 1);
	/* Past the limit whatever else is allocated: before any memory. */
	if (len > ((a->flags & ACCEL_MEM_HOST) ? c->max_pinned_bytes :
		   c->max_device_bytes))
		return -ENOMEM;

	reg = region_new((a->flags & ACCEL_MEM_HOST) ? IP_REGION_HOST :
			 IP_REGION_DEVICE, 0, a->size, a->flags);
	if (!reg)
		return -ENOMEM;
	reg->map_len = len;

	if (reg->core.kind == IP_REGION_HOST) {
		reg->memfd = memfd_create("accelstream-host", MFD_CLOEXEC);
		if (reg->memfd < 0) {
			ret = host_fd_error(errno);
			goto err_free;
		}
		if (ftruncate(reg->memfd, (off_t)len)) {
			ret = -ENOMEM;
			goto err_close;
		}
		ret = host_view_map(reg);
		if (ret)
			goto err_close;
	} else {
		reg->base = mmap(NULL, len, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
				 -1, 0);
		if (reg->base == MAP_FAILED) {
			ret = -ENOMEM;
			goto err_free;
		}
	}

	pthread_mutex_lock(&c->lock);
	/* Device memory: the current device's, on that device's account. */
	reg->dev = c->device;
	used = c->dev_bytes[reg->dev];
	if (reg->core.kind == IP_REGION_HOST ?
	    len > c->max_pinned_bytes - c->pinned_bytes :
	    asc_device_charge(&used, len, c->max_device_bytes) < 0) {
		ret = -ENOMEM;
		goto err_unlock;
	}
	ret = region_publish_locked(c, reg);
	if (ret)
		goto err_unlock;
	if (reg->core.kind == IP_REGION_HOST) {
		c->pinned_bytes += len;
	} else {
		c->device_bytes += len;
		c->dev_bytes[reg->dev] = used;
	}
	a->handle = reg->handle;
	a->mmap_offset = reg->core.kind == IP_REGION_HOST ?
			 (u64)reg->handle << IP_MMAP_SHIFT : 0;
	pthread_mutex_unlock(&c->lock);
	return 0;

err_unlock:
	pthread_mutex_unlock(&c->lock);
	munmap(reg->base, len);
	ip_memlock_uncharge(reg);
err_close:
	if (reg->memfd >= 0)
		close(reg->memfd);
err_free:
	free(reg);
	return ret;
}

int ip_mem_release(struct ip_ctx *c, void *arg)
{
	struct accel_mem_release *r = arg;
	struct ip_region *reg;
	int ret;

	ret = asc_check_mem_release(r);
	if (ret)
		return ret;
	pthread_mutex_lock(&c->lock);
	reg = ip_idr_find(&c->regions, r->handle);
	if (!reg) {
		ret = -ENOENT;
		goto out;
	}
	ret = asc_region_release(&reg->core, r->flags);
	if (ret < 0)
		goto out;
	ip_idr_remove(&c->regions, r->handle);
	if (ret == 1)
		ip_region_free_locked(c, reg);
	ret = 0;
out:
	pthread_mutex_unlock(&c->lock);
	return ret;
}

int ip_mem_mmap(struct accel_transport *tp, uint64_t offset,
		size_t len, void **addr)
{
	struct ip_ctx *c = &tp->ctx;
	struct ip_region *reg;
	void *p;
	int ret = 0;

	if (offset & ((1ULL << IP_MMAP_SHIFT) - 1))
		return -EINVAL;
	pthread_mutex_lock(&c->lock);
	reg = ip_idr_find(&c->regions, (u32)(offset >> IP_MMAP_SHIFT));
	if (!reg || reg->core.kind != IP_REGION_HOST) {
		ret = -EINVAL;
	} else if (!len || len > reg->map_len) {
		ret = -EINVAL;
	} else {
		/*
		 * A second mapping of the same pages: the user may unmap it.
		 * A child of fork() must not share them (libaccel(7) FORK).
		 */
		p = accel_map_guarded(len, PROT_READ | PROT_WRITE, MAP_SHARED,
				      reg->memfd, 0);
		if (p == MAP_FAILED) {
			ret = -ENOMEM;
		} else if (madvise(p, len, MADV_DONTFORK)) {
			accel_unmap_guarded(p, len);
			ret = -ENOMEM;
		} else {
			*addr = p;
		}
	}
	pthread_mutex_unlock(&c->lock);
	return ret;
}

/*
 * Portable pinned memory: another context's host allocation becomes a
 * host region of this one, with a mapping of its own of the same memory
 * file (a duplicate descriptor), locked and charged here as the kernel
 * pins and charges a registration: it outlives the owner's release and the
 * user's munmap until this context's last descriptor naming it retires.
 * The two contexts' locks are taken one after the other, never nested.
 */
int ip_mem_import_host(struct accel_transport *tp,
		       struct accel_transport *owner, uint32_t owner_handle,
		       uint64_t addr, uint64_t len, uint32_t *handle)
{
	struct ip_ctx *c = &tp->ctx, *o = &owner->ctx;
	struct ip_region *src, *reg;
	size_t map_len = 0;
	u64 size = 0;
	int fd = -1, ret;

	(void)addr;
	pthread_mutex_lock(&o->lock);
	src = ip_idr_find(&o->regions, owner_handle);
	if (src && src->core.kind == IP_REGION_HOST && len <= src->map_len) {
		fd = fcntl(src->memfd, F_DUPFD_CLOEXEC, 0);
		map_len = src->map_len;
		size = src->core.size;
	}
	pthread_mutex_unlock(&o->lock);
	if (!map_len)
		return -ENOENT;
	if (fd < 0)
		return host_fd_error(errno);

	reg = region_new(IP_REGION_HOST, 0, size, ACCEL_MEM_HOST);
	if (!reg) {
		ret = -ENOMEM;
		goto err_close;
	}
	reg->map_len = map_len;
	reg->memfd = fd;
	ret = host_view_map(reg);
	if (ret)
		goto err_free;

	pthread_mutex_lock(&c->lock);
	if (map_len > c->max_pinned_bytes - c->pinned_bytes) {
		ret = -ENOMEM;
		goto err_unlock;
	}
	ret = region_publish_locked(c, reg);
	if (ret)
		goto err_unlock;
	c->pinned_bytes += map_len;
	*handle = reg->handle;
	pthread_mutex_unlock(&c->lock);
	return 0;

err_unlock:
	pthread_mutex_unlock(&c->lock);
	munmap(reg->base, map_len);
	ip_memlock_uncharge(reg);
err_free:
	free(reg);
err_close:
	close(fd);
	return ret;
}
