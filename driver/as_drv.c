// SPDX-License-Identifier: GPL-2.0
/*
 * accelstream: streams, events and asynchronous copies over pinned memory.
 *
 * Module init, the misc device, file operations and the ioctl table.
 */
#include <linux/atomic.h>
#include <linux/error-injection.h>
#include <linux/fs.h>
#include <linux/hrtimer.h>
#include <linux/miscdevice.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/poll.h>
#include <linux/pid.h>
#include <linux/sched.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/sched/user.h>
#include <linux/cred.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "as_drv.h"

/* 0 at load: a quarter of RAM (asc_default_pinned_mb()), set in as_init(). */
static unsigned int max_pinned_mb;
module_param(max_pinned_mb, uint, 0644);
MODULE_PARM_DESC(max_pinned_mb,
		 "Most host memory one context may pin, MiB (default: a quarter of RAM; RLIMIT_MEMLOCK also applies)");

static unsigned int max_device_mb = 1024;
module_param(max_device_mb, uint, 0644);
MODULE_PARM_DESC(max_device_mb,
		 "Most soft device memory one context may allocate, MiB");

atomic64_t as_submitted_total;
atomic64_t as_retired_total;

/**
 * as_max_device_bytes() - the per-context, per-device memory limit now
 *
 * Return: max_device_mb in bytes.
 */
u64 as_max_device_bytes(void)
{
	return (u64)READ_ONCE(max_device_mb) << 20;
}

/* Protects as_ctx_list and as_next_ctx_id. */
DEFINE_MUTEX(as_ctx_list_lock);
LIST_HEAD(as_ctx_list);
static u32 as_next_ctx_id;

/**
 * as_lookup_locked() - find a live object by handle
 * @ctx: the context.
 * @handle: the handle.
 * @type: the &enum as_obj_type expected.
 *
 * Context: takes no lock; the caller holds @ctx->lock.
 * Return: the object, or NULL for an unknown handle or one of another type.
 */
struct as_obj *as_lookup_locked(struct as_ctx *ctx, u32 handle, u32 type)
{
	struct as_obj *obj;

	lockdep_assert_held(&ctx->lock);
	if (!handle)
		return NULL;
	obj = xa_load(&ctx->handles, handle);
	if (!obj || obj->type != type)
		return NULL;
	return obj;
}

/**
 * as_handle_reserve() - take a handle for a new object, not yet visible
 * @ctx: the context.
 * @obj: the object.
 * @type: its &enum as_obj_type.
 *
 * Creation is reserve, copy the reply out, commit: the handle's slot in
 * @ctx->handles is reserved (lookups find nothing there, as for a handle
 * never given) so that storing the object later cannot fail, and an ioctl
 * whose reply cannot reach userspace gives the slot back with
 * as_handle_cancel() and frees the object, which nobody ever saw.
 *
 * Context: process context, may sleep; @ctx->lock not held.
 * Return: 0, -ENOSPC when the handle space is exhausted, -ENOMEM.
 */
noinline int as_handle_reserve(struct as_ctx *ctx, struct as_obj *obj,
			       u32 type)
{
	u32 handle;
	int ret;

	spin_lock(&ctx->lock);
	if (ctx->next_handle == U32_MAX) {
		spin_unlock(&ctx->lock);
		return -ENOSPC;
	}
	handle = ++ctx->next_handle;
	spin_unlock(&ctx->lock);

	obj->type = type;
	obj->handle = handle;
	ret = xa_insert(&ctx->handles, handle, NULL, GFP_KERNEL_ACCOUNT);
	return ret == -EBUSY ? -ENOSPC : ret;
}
ALLOW_ERROR_INJECTION(as_handle_reserve, ERRNO);

/**
 * as_handle_commit() - make a reserved handle find its object
 * @ctx: the context.
 * @obj: the object, fully initialised, its handle reserved by
 *	as_handle_reserve() and already reported to userspace.
 *
 * The slot exists, so the store allocates nothing and cannot fail.
 *
 * Context: any context but NMI; takes the xarray lock.
 */
void as_handle_commit(struct as_ctx *ctx, struct as_obj *obj)
{
	xa_store(&ctx->handles, obj->handle, obj, GFP_NOWAIT);
}

/**
 * as_handle_cancel() - give back a handle reserved and never committed
 * @ctx: the context.
 * @obj: the object whose handle as_handle_reserve() took.
 *
 * The number stays used (handles are never reused); the slot goes.
 *
 * Context: any context but NMI; takes the xarray lock.
 */
void as_handle_cancel(struct as_ctx *ctx, struct as_obj *obj)
{
	xa_release(&ctx->handles, obj->handle);
}

/**
 * as_freelist_init() - start an empty list of objects to free
 * @fl: the list.
 */
void as_freelist_init(struct as_freelist *fl)
{
	INIT_LIST_HEAD(&fl->streams);
	INIT_LIST_HEAD(&fl->regions);
	INIT_LIST_HEAD(&fl->events);
	INIT_LIST_HEAD(&fl->imports);
	fl->batches = NULL;
}

/**
 * as_freelist_empty() - is there anything to free?
 * @fl: the list.
 *
 * Return: true when as_freelist_free() would do nothing.
 */
bool as_freelist_empty(const struct as_freelist *fl)
{
	return list_empty(&fl->streams) && list_empty(&fl->regions) &&
	       list_empty(&fl->events) && list_empty(&fl->imports) &&
	       !fl->batches;
}

/**
 * as_collect_locked() - move objects the core released onto a free list
 * @ctx: the context.
 * @rel: what a core call reported.
 * @fl: where freeable objects go; freed by as_freelist_free() after unlock.
 *
 * Context: @ctx->lock held.
 */
void as_collect_locked(struct as_ctx *ctx, struct asc_release *rel,
		       struct as_freelist *fl)
{
	unsigned int i;

	lockdep_assert_held(&ctx->lock);
	for (i = 0; i < rel->ntl; i++) {
		struct as_stream *s;

		if (rel->tl[i]->import) {
			if (!rel->tl[i]->refs)
				as_import_unlist_locked(ctx,
							to_as_import(rel->tl[i]),
							fl);
			continue;
		}
		s = to_as_stream(rel->tl[i]);
		if (as_stream_freeable_locked(ctx, s)) {
			list_del(&s->node);
			list_add(&s->free_node, &fl->streams);
		}
	}
	for (i = 0; i < rel->nregion; i++) {
		struct as_mem *m = to_as_mem(rel->region[i]);

		if (as_mem_freeable_locked(ctx, m)) {
			list_del(&m->node);
			list_add(&m->free_node, &fl->regions);
		}
	}
	for (i = 0; i < rel->nevent; i++) {
		struct as_event_obj *ev = to_as_event(rel->event[i]);

		list_del(&ev->node);
		list_add(&ev->free_node, &fl->events);
	}
	if (rel->batch) {
		/* kfree() is fine under the lock, vfree() is not. */
		if (is_vmalloc_addr(rel->batch)) {
			rel->batch->next = fl->batches;
			fl->batches = rel->batch;
		} else {
			kfree(rel->batch);
		}
	}
	rel->ntl = 0;
	rel->nregion = 0;
	rel->nevent = 0;
	rel->batch = NULL;
}

/**
 * as_freelist_free() - free what as_collect_locked() gathered
 * @ctx: the context.
 * @fl: the list.
 *
 * Context: process or worker context, may sleep; @ctx->lock not held.
 */
void as_freelist_free(struct as_ctx *ctx, struct as_freelist *fl)
{
	struct as_stream *s, *stmp;
	struct as_mem *m, *mtmp;
	struct as_event_obj *ev, *etmp;
	struct asc_batch *b;

	/* A context may hold tens of thousands of objects: yield as we go. */
	while (fl->batches) {
		b = fl->batches;
		fl->batches = b->next;
		kvfree(b);
		cond_resched();
	}
	list_for_each_entry_safe(s, stmp, &fl->streams, free_node) {
		as_stream_free(s);
		cond_resched();
	}
	list_for_each_entry_safe(m, mtmp, &fl->regions, free_node) {
		as_mem_free(ctx, m);
		cond_resched();
	}
	list_for_each_entry_safe(ev, etmp, &fl->events, free_node) {
		kfree(ev);
		cond_resched();
	}
	as_imports_free(&fl->imports);
	as_freelist_init(fl);
}

/**
 * as_ctx_wait() - sleep until a condition holds or a deadline passes
 * @ctx: the context whose wait queue is woken on progress.
 * @check: returns 0 or an error when done, -EAGAIN to keep waiting; called
 *	with @ctx->lock held.
 * @arg: passed to @check.
 * @timeout_ns: absolute CLOCK_MONOTONIC deadline, or %ACCEL_TIMEOUT_INFINITE.
 *
 * Context: process context, may sleep.
 * Return: what @check returned, -ETIME past the deadline, or -ERESTARTSYS
 * on a signal (the ioctl restarts with the same absolute deadline).
 */
int as_ctx_wait(struct as_ctx *ctx, int (*check)(struct as_ctx *ctx, void *arg),
		void *arg, u64 timeout_ns)
{
	bool infinite = timeout_ns >= (u64)KTIME_MAX;
	ktime_t deadline = ns_to_ktime(infinite ? 0 : timeout_ns);
	DEFINE_WAIT(wait);
	bool expired = false;
	int ret;

	for (;;) {
		prepare_to_wait(&ctx->wq, &wait, TASK_INTERRUPTIBLE);
		spin_lock(&ctx->lock);
		ret = check(ctx, arg);
		spin_unlock(&ctx->lock);
		if (ret != -EAGAIN)
			break;
		if (expired) {
			ret = -ETIME;
			break;
		}
		if (signal_pending(current)) {
			ret = -ERESTARTSYS;
			break;
		}
		if (infinite)
			schedule();
		else if (!schedule_hrtimeout(&deadline, HRTIMER_MODE_ABS))
			expired = true;	/* check once more, then -ETIME */
	}
	finish_wait(&ctx->wq, &wait);
	return ret;
}

static int as_get_info_ioctl(struct as_ctx *ctx, void __user *arg)
{
	struct accel_info info;

	if (copy_from_user(&info, arg, sizeof(info)))
		return -EFAULT;
	if (asc_check_info(&info))
		return -EINVAL;

	asc_info_fill(&info, ASC_CAPS | ACCEL_CAP_POLL | ACCEL_CAP_QUERY,
		      ctx->max_pinned_bytes, ctx->max_device_bytes, PAGE_SIZE);
	info.devices = as_ndevices;

	if (copy_to_user(arg, &info, sizeof(info)))
		return -EFAULT;
	return 0;
}

static int as_open(struct inode *inode, struct file *file)
{
	struct as_ctx *ctx;
	int ret;

	ret = nonseekable_open(inode, file);
	if (ret)
		return ret;

	ctx = kzalloc(sizeof(*ctx), GFP_KERNEL_ACCOUNT);
	if (!ctx)
		return -ENOMEM;
	ctx->dev_bytes = kcalloc(as_ndevices, sizeof(*ctx->dev_bytes),
				 GFP_KERNEL_ACCOUNT);
	if (!ctx->dev_bytes) {
		kfree(ctx);
		return -ENOMEM;
	}

	spin_lock_init(&ctx->lock);
	xa_init(&ctx->handles);
	INIT_LIST_HEAD(&ctx->streams);
	INIT_LIST_HEAD(&ctx->regions);
	INIT_LIST_HEAD(&ctx->events);
	INIT_LIST_HEAD(&ctx->imports);
	init_waitqueue_head(&ctx->wq);
	ctx->max_pinned_bytes = (u64)READ_ONCE(max_pinned_mb) << 20;
	ctx->max_device_bytes = as_max_device_bytes();
	ctx->tgid = task_tgid_nr(current);
	ctx->pid = get_pid(task_tgid(current));
	ctx->uid = current_euid();
	get_task_comm(ctx->comm, current);
	ctx->mm = current->mm;
	if (ctx->mm)
		mmgrab(ctx->mm);
	ctx->user = get_uid(current_user());

	mutex_lock(&as_ctx_list_lock);
	ctx->id = ++as_next_ctx_id;
	list_add_tail(&ctx->node, &as_ctx_list);
	as_debugfs_ctx_init(ctx);
	mutex_unlock(&as_ctx_list_lock);

	file->private_data = ctx;
	return 0;
}

static int as_ctx_idle(struct as_ctx *ctx, void *arg)
{
	struct as_stream *s;

	list_for_each_entry(s, &ctx->streams, node)
		if (s->work_active)
			return -EAGAIN;
	return 0;
}

static int as_release(struct inode *inode, struct file *file)
{
	struct as_ctx *ctx = file->private_data;
	struct asc_release rel = {};
	struct as_event_obj *ev, *etmp;
	struct as_stream *s, *stmp;
	struct as_mem *m, *mtmp;
	struct as_freelist fl;

	mutex_lock(&as_ctx_list_lock);
	list_del(&ctx->node);
	as_debugfs_ctx_fini(ctx);
	mutex_unlock(&as_ctx_list_lock);

	/* Cancel what has not started; let running copies finish. */
	spin_lock(&ctx->lock);
	ctx->closing = true;
	as_ctx_kick_all_locked(ctx);
	spin_unlock(&ctx->lock);
	wait_event(ctx->wq, ({
		int busy;

		spin_lock(&ctx->lock);
		busy = as_ctx_idle(ctx, NULL);
		spin_unlock(&ctx->lock);
		!busy;
	}));

	/*
	 * No ioctl can run any more and every queue is empty: exports still
	 * pending can never retire (done with -EIO), the events' points go,
	 * then every object goes.
	 */
	as_freelist_init(&fl);
	spin_lock(&ctx->lock);
	as_export_ctx_close_locked(ctx);
	list_for_each_entry_safe(ev, etmp, &ctx->events, node) {
		if (!ev->core.dead)
			asc_event_kill(&ev->core, &rel);
		rel.ntl = 0;
		list_del(&ev->node);
		list_add(&ev->free_node, &fl.events);
	}
	list_for_each_entry_safe(s, stmp, &ctx->streams, node) {
		list_del(&s->node);
		list_add(&s->free_node, &fl.streams);
	}
	list_for_each_entry_safe(m, mtmp, &ctx->regions, node) {
		list_del(&m->node);
		list_add(&m->free_node, &fl.regions);
	}
	as_imports_unlist_all_locked(ctx, &fl);
	spin_unlock(&ctx->lock);
	as_freelist_free(ctx, &fl);

	xa_destroy(&ctx->handles);
	free_uid(ctx->user);
	put_pid(ctx->pid);
	if (ctx->mm)
		mmdrop(ctx->mm);
	kfree(ctx->dev_bytes);
	kfree(ctx);
	return 0;
}

typedef int (*as_ioctl_fn)(struct as_ctx *ctx, void __user *arg);

/* The handler of every command, from the core's one list of them. */
#define ASC_IOCTL(cmd, name) \
	[ASC_IOC_##cmd] = as_##name##_ioctl,
static const as_ioctl_fn as_ioctls[ASC_NR_IOCTLS] = {
#include "asc_ioctls.h"
#undef ASC_IOCTL
};

static long as_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct as_ctx *ctx = file->private_data;
	int nr;

	if (current->mm != ctx->mm)
		return -EACCES;
	nr = asc_ioctl_index(cmd);
	if (nr < 0)
		return nr;
	return as_ioctls[nr](ctx, (void __user *)arg);
}

static int as_completions_ready(struct as_ctx *ctx, void *arg)
{
	return ctx->completions ? 0 : -EAGAIN;
}

static ssize_t as_read(struct file *file, char __user *buf, size_t len,
		       loff_t *ppos)
{
	struct as_ctx *ctx = file->private_data;
	u64 count;
	int ret;

	if (current->mm != ctx->mm)
		return -EACCES;
	if (len < sizeof(count))
		return -EINVAL;

	if (file->f_flags & O_NONBLOCK) {
		spin_lock(&ctx->lock);
		ret = as_completions_ready(ctx, NULL);
		spin_unlock(&ctx->lock);
	} else {
		ret = as_ctx_wait(ctx, as_completions_ready, NULL,
				  ACCEL_TIMEOUT_INFINITE);
	}
	if (ret)
		return ret;

	spin_lock(&ctx->lock);
	count = ctx->completions;
	ctx->completions = 0;
	spin_unlock(&ctx->lock);

	if (copy_to_user(buf, &count, sizeof(count)))
		return -EFAULT;
	return sizeof(count);
}

static __poll_t as_poll(struct file *file, struct poll_table_struct *pt)
{
	struct as_ctx *ctx = file->private_data;
	__poll_t mask = 0;

	if (current->mm != ctx->mm)
		return EPOLLERR;
	poll_wait(file, &ctx->wq, pt);
	spin_lock(&ctx->lock);
	if (ctx->completions)
		mask = EPOLLIN | EPOLLRDNORM;
	spin_unlock(&ctx->lock);
	return mask;
}

static int as_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct as_ctx *ctx = file->private_data;

	if (current->mm != ctx->mm)
		return -EACCES;
	return as_mem_mmap(ctx, vma);
}

static const struct file_operations as_fops = {
	.owner = THIS_MODULE,
	.open = as_open,
	.release = as_release,
	.unlocked_ioctl = as_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.read = as_read,
	.poll = as_poll,
	.mmap = as_mmap,
};

static struct miscdevice as_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = AS_DRV_NAME,
	.fops = &as_fops,
	.groups = as_sysfs_groups,
	.mode = 0660,
};

static int __init as_init(void)
{
	int ret;

	if (!max_pinned_mb)
		max_pinned_mb = asc_default_pinned_mb((u64)totalram_pages() <<
						     PAGE_SHIFT);
	ret = as_devices_init();
	if (ret)
		return ret;
	as_debugfs_init();
	ret = misc_register(&as_misc);
	if (ret)
		goto err_debugfs;
	return 0;

err_debugfs:
	as_debugfs_fini();
	as_devices_fini();
	return ret;
}

static void __exit as_exit(void)
{
	misc_deregister(&as_misc);
	as_debugfs_fini();
	/* Workers of closed contexts may still be returning: drain them. */
	as_devices_fini();
}

module_init(as_init);
module_exit(as_exit);

MODULE_DESCRIPTION("accelstream: streams, events and asynchronous copies over pinned memory");
MODULE_AUTHOR("The accelstream authors");
MODULE_LICENSE("GPL");
/* Kept equal to VERSION by tests/install/versions.sh (make check). */
MODULE_VERSION("1.4.0");
