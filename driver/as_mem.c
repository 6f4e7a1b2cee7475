// SPDX-License-Identifier: GPL-2.0
/*
 * accelstream: regions. Pinning of user ranges, pinned host allocations the
 * user maps, soft device memory, and their release.
 */
#include <linux/error-injection.h>
#include <linux/mm.h>
#include <linux/capability.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/sched/user.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "as_drv.h"
#include "as_compat.h"

static struct as_mem *as_mem_new(struct as_ctx *ctx, enum as_mem_kind kind)
{
	struct as_mem *m;

	m = kzalloc(sizeof(*m), GFP_KERNEL_ACCOUNT);
	if (!m)
		return NULL;
	m->ctx = ctx;
	m->core.kind = kind;
	INIT_LIST_HEAD(&m->node);
	return m;
}

/*
 * Pinned pages are charged to the opening user's locked_vm against
 * RLIMIT_MEMLOCK, as io_uring charges its buffers, unless the caller has
 * CAP_IPC_LOCK; and shown in the mm's pinned_vm (VmPin). Neither takes the
 * mmap lock, so a region may be freed from any context, mmap(2) included.
 */
static noinline int as_mem_charge(struct as_ctx *ctx, struct as_mem *m)
{
	u64 bytes = (u64)m->npages << PAGE_SHIFT;
	unsigned long limit, cur, new;

	spin_lock(&ctx->lock);
	if (ctx->pinned_bytes + bytes > ctx->max_pinned_bytes) {
		spin_unlock(&ctx->lock);
		return -ENOMEM;
	}
	ctx->pinned_bytes += bytes;
	spin_unlock(&ctx->lock);

	m->charged_user = !capable(CAP_IPC_LOCK);
	if (m->charged_user) {
		limit = rlimit(RLIMIT_MEMLOCK) >> PAGE_SHIFT;
		cur = atomic_long_read(&ctx->user->locked_vm);
		do {
			new = cur + m->npages;
			if (new > limit || new < cur) {
				spin_lock(&ctx->lock);
				ctx->pinned_bytes -= bytes;
				spin_unlock(&ctx->lock);
				return -ENOMEM;
			}
		} while (!atomic_long_try_cmpxchg(&ctx->user->locked_vm, &cur, new));
	}
	if (ctx->mm)
		atomic64_add(m->npages, &ctx->mm->pinned_vm);
	return 0;
}
ALLOW_ERROR_INJECTION(as_mem_charge, ERRNO);

static void as_mem_uncharge(struct as_ctx *ctx, struct as_mem *m)
{
	if (m->charged_user)
		atomic_long_sub(m->npages, &ctx->user->locked_vm);
	if (ctx->mm)
		atomic64_sub(m->npages, &ctx->mm->pinned_vm);
	spin_lock(&ctx->lock);
	ctx->pinned_bytes -= (u64)m->npages << PAGE_SHIFT;
	spin_unlock(&ctx->lock);
}

static void as_mem_uncharge_device(struct as_ctx *ctx, struct as_mem *m)
{
	atomic64_sub(m->core.size, &as_devices[m->dev].device_bytes);
	spin_lock(&ctx->lock);
	ctx->dev_bytes[m->dev] -= m->core.size;
	ctx->device_bytes -= m->core.size;
	spin_unlock(&ctx->lock);
}

static noinline int as_mem_pin(struct as_mem *m, unsigned long start,
			       bool write)
{
	unsigned int gup = FOLL_LONGTERM | (write ? FOLL_WRITE : 0);
	unsigned long done = 0;
	int ret;

	while (done < m->npages) {
		int nr = min_t(unsigned long, m->npages - done, SZ_64K);

		ret = pin_user_pages_fast(start + (done << PAGE_SHIFT), nr, gup,
					  m->pages + done);
		if (ret <= 0) {
			ret = ret == -ENOMEM ? -ENOMEM : -EFAULT;
			goto err_unpin;
		}
		done += ret;
	}
	return 0;

err_unpin:
	if (done)
		unpin_user_pages(m->pages, done);
	return ret;
}
ALLOW_ERROR_INJECTION(as_mem_pin, ERRNO);

/* Registered host ranges and external ranges are two address spaces. */
static bool as_mem_overlaps_locked(struct as_ctx *ctx, enum as_mem_kind kind,
				   u64 addr, u64 size)
{
	struct as_mem *m;

	lockdep_assert_held(&ctx->lock);
	list_for_each_entry(m, &ctx->regions, node)
		if (asc_region_conflicts(&m->core, kind, addr, size))
			return true;
	return false;
}

static void as_mem_unlist(struct as_ctx *ctx, struct as_mem *m)
{
	spin_lock(&ctx->lock);
	ctx->nregions--;
	list_del_init(&m->node);
	spin_unlock(&ctx->lock);
}

/*
 * Count and list a new region and reserve its handle, or fail when the
 * context has too many; as_mem_commit() or as_mem_remove() follows.
 */
static int as_mem_insert(struct as_ctx *ctx, struct as_mem *m)
{
	int ret;

	spin_lock(&ctx->lock);
	if ((m->core.kind == AS_MEM_USER || m->core.kind == AS_MEM_EXTERNAL) &&
	    as_mem_overlaps_locked(ctx, m->core.kind, m->core.addr, m->core.size)) {
		spin_unlock(&ctx->lock);
		return -EEXIST;
	}
	if (ctx->nregions >= ASC_MAX_REGIONS) {
		spin_unlock(&ctx->lock);
		return -ENOSPC;
	}
	ctx->nregions++;
	list_add_tail(&m->node, &ctx->regions);
	spin_unlock(&ctx->lock);

	ret = as_handle_reserve(ctx, &m->obj, AS_OBJ_REGION);
	if (ret)
		as_mem_unlist(ctx, m);
	return ret;
}

/* Undo as_mem_insert(): the reply never reached userspace. */
static void as_mem_remove(struct as_ctx *ctx, struct as_mem *m)
{
	as_handle_cancel(ctx, &m->obj);
	as_mem_unlist(ctx, m);
}

/* An executor's address range: validated by bounds only, nothing pinned. */
static int as_mem_register_external(struct as_ctx *ctx, void __user *arg,
				    struct accel_mem_register *req)
{
	struct as_mem *m;
	int ret;

	m = as_mem_new(ctx, AS_MEM_EXTERNAL);
	if (!m)
		return -ENOMEM;
	m->core.addr = req->addr;
	m->core.size = req->size;
	m->core.flags = req->flags;
	ret = as_mem_insert(ctx, m);
	if (ret) {
		kfree(m);
		return ret;
	}
	req->handle = m->obj.handle;
	if (copy_to_user(arg, req, sizeof(*req))) {
		as_mem_remove(ctx, m);
		kfree(m);
		return -EFAULT;
	}
	as_handle_commit(ctx, &m->obj);
	return 0;
}

/**
 * as_mem_register_ioctl() - %ACCEL_IOC_MEM_REGISTER: pin a user range
 * @ctx: the context.
 * @arg: user pointer to &struct accel_mem_register.
 *
 * Context: process context of the opener.
 * Return: 0 or a negative errno as documented in the uapi header.
 */
int as_mem_register_ioctl(struct as_ctx *ctx, void __user *arg)
{
	struct accel_mem_register req;
	unsigned long first, last;
	struct as_mem *m;
	bool overlap;
	int ret;

	if (copy_from_user(&req, arg, sizeof(req)))
		return -EFAULT;
	ret = asc_check_mem_register(&req);
	if (ret)
		return ret;
	if (req.flags & ACCEL_MEM_EXTERNAL)
		return as_mem_register_external(ctx, arg, &req);
	if (req.addr + req.size > TASK_SIZE_MAX)
		return -EFAULT;

	spin_lock(&ctx->lock);
	overlap = as_mem_overlaps_locked(ctx, AS_MEM_USER, req.addr, req.size);
	spin_unlock(&ctx->lock);
	if (overlap)
		return -EEXIST;

	m = as_mem_new(ctx, AS_MEM_USER);
	if (!m)
		return -ENOMEM;
	first = req.addr & PAGE_MASK;
	last = (req.addr + req.size - 1) & PAGE_MASK;
	m->core.addr = req.addr;
	m->first_off = req.addr & ~PAGE_MASK;
	m->npages = ((last - first) >> PAGE_SHIFT) + 1;
	m->core.size = req.size;
	m->core.flags = req.flags;

	/* Past the pin limit already: fail before sizing anything by it. */
	if (((u64)m->npages << PAGE_SHIFT) > ctx->max_pinned_bytes) {
		ret = -ENOMEM;
		goto err_free_mem;
	}
	m->pages = kvmalloc_array(m->npages, sizeof(*m->pages),
				  GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
	if (!m->pages) {
		ret = -ENOMEM;
		goto err_free_mem;
	}
	ret = as_mem_charge(ctx, m);
	if (ret)
		goto err_free_pages;
	ret = as_mem_pin(m, first, !(req.flags & ACCEL_MEM_READONLY));
	if (ret)
		goto err_uncharge;
	ret = as_mem_insert(ctx, m);
	if (ret)
		goto err_unpin;

	req.handle = m->obj.handle;
	if (copy_to_user(arg, &req, sizeof(req))) {
		ret = -EFAULT;
		goto err_remove;
	}
	as_handle_commit(ctx, &m->obj);
	return 0;

err_remove:
	as_mem_remove(ctx, m);
err_unpin:
	unpin_user_pages(m->pages, m->npages);
err_uncharge:
	as_mem_uncharge(ctx, m);
err_free_pages:
	kvfree(m->pages);
err_free_mem:
	kfree(m);
	return ret;
}

static void as_mem_free_pages(struct as_mem *m, unsigned long n)
{
	unsigned long i;

	for (i = 0; i < n; i++)
		__free_page(m->pages[i]);
}

/**
 * as_mem_alloc_ioctl() - %ACCEL_IOC_MEM_ALLOC: pinned host or device memory
 * @ctx: the context.
 * @arg: user pointer to &struct accel_mem_alloc.
 *
 * Context: process context of the opener.
 * Return: 0 or a negative errno as documented in the uapi header.
 */
int as_mem_alloc_ioctl(struct as_ctx *ctx, void __user *arg)
{
	struct accel_mem_alloc req;
	bool host;
	struct as_mem *m;
	unsigned long i;
	int ret;

	if (copy_from_user(&req, arg, sizeof(req)))
		return -EFAULT;
	ret = asc_check_mem_alloc(&req);
	if (ret)
		return ret;
	host = req.flags == ACCEL_MEM_HOST;

	m = as_mem_new(ctx, host ? AS_MEM_HOST_ALLOC : AS_MEM_DEVICE);
	if (!m)
		return -ENOMEM;
	m->npages = PAGE_ALIGN(req.size) >> PAGE_SHIFT;
	m->core.size = (u64)m->npages << PAGE_SHIFT;
	m->core.flags = req.flags;

	if (host) {
		ret = as_mem_charge(ctx, m);
		if (ret)
			goto err_free_mem;
	} else {
		spin_lock(&ctx->lock);
		/* The current device's memory, on that device's account. */
		m->dev = ctx->device;
		ret = asc_device_charge(&ctx->dev_bytes[m->dev], m->core.size,
					ctx->max_device_bytes);
		if (ret) {
			spin_unlock(&ctx->lock);
			goto err_free_mem;
		}
		ctx->device_bytes += m->core.size;
		spin_unlock(&ctx->lock);
		atomic64_add(m->core.size, &as_devices[m->dev].device_bytes);
	}

	m->pages = kvmalloc_array(m->npages, sizeof(*m->pages),
				  GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
	if (!m->pages) {
		ret = -ENOMEM;
		goto err_uncharge;
	}
	/* Fail with -ENOMEM rather than wake the OOM killer for a user. */
	for (i = 0; i < m->npages; i++) {
		m->pages[i] = alloc_page(GFP_HIGHUSER | __GFP_ZERO |
					 __GFP_ACCOUNT | __GFP_NOWARN |
					 __GFP_RETRY_MAYFAIL);
		if (!m->pages[i]) {
			ret = -ENOMEM;
			goto err_free_page_array;
		}
		if (fatal_signal_pending(current)) {
			i++;
			ret = -EINTR;
			goto err_free_page_array;
		}
	}
	ret = as_mem_insert(ctx, m);
	if (ret)
		goto err_free_page_array;

	req.handle = m->obj.handle;
	req.mmap_offset = host ? (u64)m->obj.handle << PAGE_SHIFT : 0;
	if (copy_to_user(arg, &req, sizeof(req))) {
		ret = -EFAULT;
		goto err_remove;
	}
	as_handle_commit(ctx, &m->obj);
	return 0;

err_remove:
	as_mem_remove(ctx, m);
err_free_page_array:
	as_mem_free_pages(m, i);
	kvfree(m->pages);
err_uncharge:
	if (host)
		as_mem_uncharge(ctx, m);
	else
		as_mem_uncharge_device(ctx, m);
err_free_mem:
	kfree(m);
	return ret;
}

/**
 * as_mem_freeable_locked() - may a region's memory go now?
 * @ctx: the context.
 * @m: the region.
 *
 * Context: @ctx->lock held.
 * Return: true when its handle is gone, no queued descriptor names it and
 * no mmap(2) of it is in progress.
 */
bool as_mem_freeable_locked(struct as_ctx *ctx, struct as_mem *m)
{
	lockdep_assert_held(&ctx->lock);
	return m->core.released && !m->core.inflight && !m->maps;
}

/**
 * as_mem_free() - unpin or free a region's pages and the region
 * @ctx: the context.
 * @m: a region no longer listed or referenced.
 *
 * Context: may sleep; @ctx->lock not held.
 */
void as_mem_free(struct as_ctx *ctx, struct as_mem *m)
{
	switch (m->core.kind) {
	case AS_MEM_USER:
		unpin_user_pages_dirty_lock(m->pages, m->npages,
					    !(m->core.flags & ACCEL_MEM_READONLY));
		as_mem_uncharge(ctx, m);
		break;
	case AS_MEM_HOST_ALLOC:
		/* Pages still mapped by the user stay alive through the map. */
		as_mem_free_pages(m, m->npages);
		as_mem_uncharge(ctx, m);
		break;
	case AS_MEM_DEVICE:
		as_mem_free_pages(m, m->npages);
		as_mem_uncharge_device(ctx, m);
		break;
	case AS_MEM_EXTERNAL:
		break;
	}
	kvfree(m->pages);
	kfree(m);
}

/**
 * as_mem_release_ioctl() - %ACCEL_IOC_MEM_RELEASE: unregister or free
 * @ctx: the context.
 * @arg: user pointer to &struct accel_mem_release.
 *
 * Context: process context of the opener.
 * Return: 0 or a negative errno as documented in the uapi header.
 */
int as_mem_release_ioctl(struct as_ctx *ctx, void __user *arg)
{
	struct accel_mem_release req;
	struct as_mem *m;
	bool free_now;
	int ret;

	if (copy_from_user(&req, arg, sizeof(req)))
		return -EFAULT;
	ret = asc_check_mem_release(&req);
	if (ret)
		return ret;

	spin_lock(&ctx->lock);
	m = as_region_lookup_locked(ctx, req.handle);
	if (!m) {
		spin_unlock(&ctx->lock);
		return -ENOENT;
	}
	ret = asc_region_release(&m->core, req.flags);
	if (ret < 0) {
		spin_unlock(&ctx->lock);
		return ret;
	}
	xa_erase(&ctx->handles, req.handle);
	ctx->nregions--;
	free_now = as_mem_freeable_locked(ctx, m);
	if (free_now)
		list_del(&m->node);
	spin_unlock(&ctx->lock);

	if (free_now)
		as_mem_free(ctx, m);
	return 0;
}

/**
 * as_mem_mmap() - map a pinned host allocation into the opener
 * @ctx: the context.
 * @vma: the mapping; vm_pgoff is the handle (mmap_offset >> PAGE_SHIFT).
 *
 * Context: process context, mmap lock held for writing.
 * Return: 0; -EINVAL for a private or oversized mapping; -ENOENT for an
 * offset naming no host allocation; an error of vm_insert_page().
 */
int as_mem_mmap(struct as_ctx *ctx, struct vm_area_struct *vma)
{
	struct asc_release rel = {};
	struct as_freelist fl;
	unsigned long i, n = vma_pages(vma);
	struct as_mem *m;
	int ret = 0;

	if (!(vma->vm_flags & VM_SHARED))
		return -EINVAL;
	if (vma->vm_pgoff > U32_MAX)
		return -ENOENT;

	spin_lock(&ctx->lock);
	m = as_region_lookup_locked(ctx, vma->vm_pgoff);
	if (!m || m->core.kind != AS_MEM_HOST_ALLOC) {
		spin_unlock(&ctx->lock);
		return -ENOENT;
	}
	if (n > m->npages) {
		spin_unlock(&ctx->lock);
		return -EINVAL;
	}
	m->maps++;
	spin_unlock(&ctx->lock);

	/* A child of fork() gets none of the pinned pages (VM_DONTCOPY). */
	as_vm_flags_set(vma, VM_DONTEXPAND | VM_DONTDUMP | VM_DONTCOPY);
	for (i = 0; i < n && !ret; i++)
		ret = vm_insert_page(vma, vma->vm_start + (i << PAGE_SHIFT),
				     m->pages[i]);

	as_freelist_init(&fl);
	spin_lock(&ctx->lock);
	m->maps--;
	if (as_mem_freeable_locked(ctx, m)) {
		rel.region[rel.nregion++] = &m->core;
		as_collect_locked(ctx, &rel, &fl);
	}
	spin_unlock(&ctx->lock);
	as_freelist_free(ctx, &fl);
	return ret;
}
