// SPDX-License-Identifier: GPL-2.0
/*
 * accelstream: exported and imported events. An exported point is an
 * anonymous file (as_xevent) that polls readable once the point is done;
 * an import makes it an event of another context (as_import), whose
 * one-point timeline the core treats like any stream's.
 *
 * References on an as_xevent: its file, each import, and its producing
 * stream's @exports list while the point is pending. It is done (once,
 * for good) when its point retires or fails, or when the producing
 * context closes first; it never stays pending after its producer went.
 *
 * Lock order: as_ctx.lock -> as_xevent.lock (see as_drv.h). Marking an
 * export done happens under the producer's lock; it queues each
 * importer's work item, which takes the importer's lock by itself.
 */
#include <linux/anon_inodes.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/kref.h>
#include <linux/poll.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "as_drv.h"

/**
 * struct as_xevent - an exported point, the private data of its file
 * @ref: the file, each &struct as_import, and the pending list.
 * @lock: Protects @importers, and @done and @status as they are set.
 * @done: the point retired or can never retire; set once.
 * @status: once @done: 0, or -EIO.
 * @wq: pollers of the file, woken when @done is set.
 * @importers: &struct as_import.xnode of the imports waiting for @done.
 * @seq: while pending: the exported sequence number on its stream.
 * @node: while pending: in the producing stream's @exports, under the
 *	producer's as_ctx.lock; empty once done.
 */
struct as_xevent {
	struct kref ref;
	spinlock_t lock;	/* Protects @importers, @done, @status */
	bool done;
	int status;
	wait_queue_head_t wq;
	struct list_head importers;
	u64 seq;
	struct list_head node;
};

/**
 * struct as_import - an imported event's view of an exported point
 * @tl: the one-point timeline its event waits on (core; @tl.import set).
 * @ctx: the importing context.
 * @xev: the exported point (a reference).
 * @work: takes @ctx->lock to retire @tl once @xev is done.
 * @xnode: in @xev->importers until @xev is done, under @xev->lock.
 * @node: in @ctx->imports, under @ctx->lock.
 * @free_node: on a local list of imports to free after unlocking.
 */
struct as_import {
	struct asc_timeline tl;
	struct as_ctx *ctx;
	struct as_xevent *xev;
	struct work_struct work;
	struct list_head xnode;
	struct list_head node;
	struct list_head free_node;
};

/**
 * to_as_import() - the import a timeline with @import set belongs to
 * @tl: the timeline.
 *
 * Return: the import.
 */
struct as_import *to_as_import(struct asc_timeline *tl)
{
	return container_of(tl, struct as_import, tl);
}

static void as_xevent_free(struct kref *ref)
{
	kfree(container_of(ref, struct as_xevent, ref));
}

static void as_xevent_put(struct as_xevent *x)
{
	/* kfree() only: fine under any lock. */
	kref_put(&x->ref, as_xevent_free);
}

/* Mark @x done with @status and tell its pollers and importers. */
static void as_xevent_signal(struct as_xevent *x, int status)
{
	struct as_import *imp, *tmp;

	spin_lock(&x->lock);
	x->status = status;
	/* Pairs with the acquire in poll and in the importers' work. */
	smp_store_release(&x->done, true);
	list_for_each_entry_safe(imp, tmp, &x->importers, xnode) {
		list_del_init(&imp->xnode);
		/* Any engine's queue: the work only takes the importer's lock. */
		queue_work(as_devices[0].wq, &imp->work);
	}
	spin_unlock(&x->lock);
	wake_up_all(&x->wq);
}

/* A pending export is done: off its stream, and the list's reference. */
static void as_export_finish_locked(struct as_ctx *ctx, struct as_xevent *x,
				    int status)
{
	lockdep_assert_held(&ctx->lock);
	list_del_init(&x->node);
	ctx->nexports--;
	as_xevent_signal(x, status);
	as_xevent_put(x);
}

/**
 * as_export_retired_locked() - finish the exports an entry's retirement made done
 * @ctx: the context.
 * @s: the stream whose oldest entry just retired.
 *
 * @s->exports is sorted by sequence number, and a stream fails at its
 * oldest unretired entry: the first pending export ends the walk.
 *
 * Context: @ctx->lock held.
 */
void as_export_retired_locked(struct as_ctx *ctx, struct as_stream *s)
{
	struct as_xevent *x, *tmp;
	int st;

	lockdep_assert_held(&ctx->lock);
	list_for_each_entry_safe(x, tmp, &s->exports, node) {
		st = asc_export_state(&s->tl, x->seq);
		if (st == -EAGAIN)
			break;
		as_export_finish_locked(ctx, x, st);
	}
}

/**
 * as_export_ctx_close_locked() - the producing context is closing
 * @ctx: the context, its queues drained.
 *
 * Every export still pending is done with -EIO: nothing will retire it.
 *
 * Context: @ctx->lock held, from release().
 */
void as_export_ctx_close_locked(struct as_ctx *ctx)
{
	struct as_xevent *x, *tmp;
	struct as_stream *s;

	lockdep_assert_held(&ctx->lock);
	list_for_each_entry(s, &ctx->streams, node)
		list_for_each_entry_safe(x, tmp, &s->exports, node)
			as_export_finish_locked(ctx, x, -EIO);
}

static __poll_t as_xevent_poll(struct file *file, struct poll_table_struct *pt)
{
	struct as_xevent *x = file->private_data;

	poll_wait(file, &x->wq, pt);
	/* Pairs with the release in as_xevent_signal(): @status is set. */
	return smp_load_acquire(&x->done) ? EPOLLIN | EPOLLRDNORM : 0;
}

static int as_xevent_release(struct inode *inode, struct file *file)
{
	as_xevent_put(file->private_data);
	return 0;
}

static const struct file_operations as_xevent_fops = {
	.owner = THIS_MODULE,
	.poll = as_xevent_poll,
	.release = as_xevent_release,
	.llseek = noop_llseek,
};

/* Put @x on @s->exports, keeping the list sorted by sequence number. */
static void as_export_link_locked(struct as_stream *s, struct as_xevent *x)
{
	struct as_xevent *pos;

	list_for_each_entry_reverse(pos, &s->exports, node) {
		if (pos->seq <= x->seq) {
			list_add(&x->node, &pos->node);
			return;
		}
	}
	list_add(&x->node, &s->exports);
}

/**
 * as_event_export_ioctl() - %ACCEL_IOC_EVENT_EXPORT
 * @ctx: the context.
 * @arg: user pointer to &struct accel_event_export.
 *
 * Context: process context of the opener.
 * Return: 0 or a negative errno as documented in the uapi header.
 */
int as_event_export_ioctl(struct as_ctx *ctx, void __user *arg)
{
	struct accel_event_export req;
	struct as_event_obj *ev;
	struct asc_point point;
	struct as_xevent *x;
	struct file *file;
	int fd, status, ret;

	if (copy_from_user(&req, arg, sizeof(req)))
		return -EFAULT;
	ret = asc_check_event_export(&req);
	if (ret)
		return ret;

	x = kzalloc(sizeof(*x), GFP_KERNEL_ACCOUNT);
	if (!x)
		return -ENOMEM;
	kref_init(&x->ref);	/* the file's */
	spin_lock_init(&x->lock);
	init_waitqueue_head(&x->wq);
	INIT_LIST_HEAD(&x->importers);
	INIT_LIST_HEAD(&x->node);

	fd = get_unused_fd_flags(O_CLOEXEC);
	if (fd < 0) {
		ret = fd;
		goto err_free_xevent;
	}
	file = anon_inode_getfile("[accelstream-event]", &as_xevent_fops, x,
				  O_RDONLY);
	if (IS_ERR(file)) {
		ret = PTR_ERR(file);
		goto err_put_fd;
	}

	spin_lock(&ctx->lock);
	ev = as_event_lookup_locked(ctx, req.event);
	ret = asc_event_export(ev ? &ev->core : NULL, ctx->nexports, &point,
			       &status);
	if (ret) {
		spin_unlock(&ctx->lock);
		goto err_fput;
	}
	if (point.tl) {
		kref_get(&x->ref);	/* the pending list's */
		x->seq = point.seq;
		as_export_link_locked(to_as_stream(point.tl), x);
		ctx->nexports++;
	} else {
		x->status = status;
		x->done = true;
	}
	spin_unlock(&ctx->lock);

	req.fd = fd;
	if (copy_to_user(arg, &req, sizeof(req))) {
		ret = -EFAULT;
		goto err_unlink;
	}
	fd_install(fd, file);
	return 0;

err_unlink:
	spin_lock(&ctx->lock);
	if (!list_empty(&x->node)) {
		list_del_init(&x->node);
		ctx->nexports--;
		as_xevent_put(x);
	}
	spin_unlock(&ctx->lock);
err_fput:
	fput(file);	/* its release drops the file's reference */
	put_unused_fd(fd);
	return ret;
err_put_fd:
	put_unused_fd(fd);
err_free_xevent:
	kfree(x);
	return ret;
}

/* Retire the import's timeline now that its exported point is done. */
static void as_import_work(struct work_struct *work)
{
	struct as_import *imp = container_of(work, struct as_import, work);
	struct as_ctx *ctx = imp->ctx;
	int status;

	/* Pairs with the release in as_xevent_signal(). */
	if (!smp_load_acquire(&imp->xev->done))
		return;
	status = READ_ONCE(imp->xev->status);
	spin_lock(&ctx->lock);
	if (asc_import_done(&imp->tl, status)) {
		as_ctx_kick_all_locked(ctx);
		wake_up_all(&ctx->wq);
	}
	spin_unlock(&ctx->lock);
}

/**
 * as_import_unlist_locked() - an import no point names any more: free it later
 * @ctx: the importing context.
 * @imp: the import.
 * @fl: where it goes; freed by as_freelist_free() after unlocking.
 *
 * Context: @ctx->lock held.
 */
void as_import_unlist_locked(struct as_ctx *ctx, struct as_import *imp,
			     struct as_freelist *fl)
{
	lockdep_assert_held(&ctx->lock);
	list_del(&imp->node);
	list_add(&imp->free_node, &fl->imports);
}

/**
 * as_imports_unlist_all_locked() - the importing context is closing
 * @ctx: the context.
 * @fl: where every import goes.
 *
 * Context: @ctx->lock held, from release().
 */
void as_imports_unlist_all_locked(struct as_ctx *ctx, struct as_freelist *fl)
{
	lockdep_assert_held(&ctx->lock);
	while (!list_empty(&ctx->imports))
		as_import_unlist_locked(ctx, list_first_entry(&ctx->imports,
							      struct as_import,
							      node), fl);
}

/* Free one import; no context lock held (its work takes the importer's). */
static void as_import_free(struct as_import *imp)
{
	spin_lock(&imp->xev->lock);
	list_del_init(&imp->xnode);
	spin_unlock(&imp->xev->lock);
	cancel_work_sync(&imp->work);
	as_xevent_put(imp->xev);
	kfree(imp);
}

/**
 * as_imports_free() - free the imports of a free list
 * @imports: &struct as_import via @free_node.
 *
 * Context: process or worker context, may sleep; no context lock held.
 */
void as_imports_free(struct list_head *imports)
{
	struct as_import *imp, *tmp;

	list_for_each_entry_safe(imp, tmp, imports, free_node) {
		as_import_free(imp);
		cond_resched();
	}
}

/**
 * as_event_import_ioctl() - %ACCEL_IOC_EVENT_IMPORT
 * @ctx: the context.
 * @arg: user pointer to &struct accel_event_import.
 *
 * Context: process context of the opener.
 * Return: 0 or a negative errno as documented in the uapi header.
 */
int as_event_import_ioctl(struct as_ctx *ctx, void __user *arg)
{
	struct accel_event_import req;
	struct as_event_obj *ev;
	struct as_import *imp;
	struct as_xevent *x;
	struct file *file;
	int ret;

	if (copy_from_user(&req, arg, sizeof(req)))
		return -EFAULT;
	ret = asc_check_event_import(&req);
	if (ret)
		return ret;

	file = fget(req.fd);
	if (!file)
		return -EBADF;
	if (file->f_op != &as_xevent_fops) {
		fput(file);
		return -EINVAL;
	}
	x = file->private_data;
	kref_get(&x->ref);	/* the import's */
	fput(file);

	ret = -ENOMEM;
	imp = kzalloc(sizeof(*imp), GFP_KERNEL_ACCOUNT);
	if (!imp)
		goto err_put_xevent;
	ev = kzalloc(sizeof(*ev), GFP_KERNEL_ACCOUNT);
	if (!ev)
		goto err_free_import;
	imp->ctx = ctx;
	imp->xev = x;
	INIT_WORK(&imp->work, as_import_work);
	INIT_LIST_HEAD(&imp->xnode);
	asc_import_init(&imp->tl, &ev->core);

	spin_lock(&ctx->lock);
	if (ctx->nevents >= ASC_MAX_EVENTS) {
		spin_unlock(&ctx->lock);
		ret = -ENOSPC;
		goto err_free_event;
	}
	ctx->nevents++;
	list_add_tail(&ev->node, &ctx->events);
	list_add_tail(&imp->node, &ctx->imports);
	spin_lock(&x->lock);
	if (x->done)
		asc_import_done(&imp->tl, x->status);
	else
		list_add_tail(&imp->xnode, &x->importers);
	spin_unlock(&x->lock);
	spin_unlock(&ctx->lock);

	ret = as_handle_reserve(ctx, &ev->obj, AS_OBJ_EVENT);
	if (ret)
		goto err_unlist;

	req.handle = ev->obj.handle;
	if (copy_to_user(arg, &req, sizeof(req))) {
		ret = -EFAULT;
		goto err_cancel_handle;
	}
	as_handle_commit(ctx, &ev->obj);
	return 0;

err_cancel_handle:
	as_handle_cancel(ctx, &ev->obj);
err_unlist:
	spin_lock(&ctx->lock);
	ctx->nevents--;
	list_del(&ev->node);
	list_del(&imp->node);
	spin_unlock(&ctx->lock);
	kfree(ev);
	as_import_free(imp);
	return ret;
err_free_event:
	kfree(ev);
err_free_import:
	kfree(imp);
err_put_xevent:
	as_xevent_put(x);
	return ret;
}
