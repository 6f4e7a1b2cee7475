// SPDX-License-Identifier: GPL-2.0
/*
 * accelstream: the userspace executor protocol. An attached executor (a
 * CUDA executor in libaccel, say) fetches descriptors in order per stream
 * and reports them done; retiring, unpinning and waking stay here.
 */
#include <linux/pid.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "as_drv.h"

static int as_ctx_engine_idle(struct as_ctx *ctx)
{
	struct as_stream *s;

	list_for_each_entry(s, &ctx->streams, node)
		if (s->work_active)
			return -EAGAIN;
	return 0;
}

/**
 * as_exec_attach_ioctl() - %ACCEL_IOC_EXEC_ATTACH
 * @ctx: the context.
 * @arg: user pointer to &struct accel_exec_attach.
 *
 * Waits for the soft engine to finish the copy it may be running, so that
 * the executor starts at each stream's oldest queued descriptor.
 *
 * Context: process context of the opener; may sleep briefly.
 * Return: 0 or a negative errno as documented in the uapi header.
 */
int as_exec_attach_ioctl(struct as_ctx *ctx, void __user *arg)
{
	struct accel_exec_attach req;
	struct as_stream *s;

	if (copy_from_user(&req, arg, sizeof(req)))
		return -EFAULT;
	if (req.flags || req.pad)
		return -EINVAL;

	spin_lock(&ctx->lock);
	if (ctx->executor) {
		spin_unlock(&ctx->lock);
		return -EBUSY;
	}
	ctx->executor = true;
	ctx->executor_pid = task_pid_nr(current);
	spin_unlock(&ctx->lock);

	wait_event(ctx->wq, ({
		int busy;

		spin_lock(&ctx->lock);
		busy = as_ctx_engine_idle(ctx);
		spin_unlock(&ctx->lock);
		!busy;
	}));

	spin_lock(&ctx->lock);
	list_for_each_entry(s, &ctx->streams, node) {
		s->tl.fetched = s->tl.completed;
		s->fetch_last = NULL;
	}
	spin_unlock(&ctx->lock);
	return 0;
}

/**
 * as_exec_detach_ioctl() - %ACCEL_IOC_EXEC_DETACH
 * @ctx: the context.
 * @arg: user pointer to &struct accel_exec_attach.
 *
 * Work fetched and not completed fails with -EIO; the soft engine resumes
 * the rest.
 *
 * Context: process context of the opener.
 * Return: 0 or a negative errno as documented in the uapi header.
 */
int as_exec_detach_ioctl(struct as_ctx *ctx, void __user *arg)
{
	struct accel_exec_attach req;
	struct as_freelist fl;
	struct as_stream *s;

	if (copy_from_user(&req, arg, sizeof(req)))
		return -EFAULT;
	if (req.flags || req.pad)
		return -EINVAL;

	as_freelist_init(&fl);
	spin_lock(&ctx->lock);
	if (!ctx->executor) {
		spin_unlock(&ctx->lock);
		return -ENXIO;
	}
	/*
	 * Retiring may unlist a drained destroyed stream (this one or another
	 * whose last point goes): rescan from the head after each stream.
	 */
restart:
	list_for_each_entry(s, &ctx->streams, node) {
		if (s->q.count && s->tl.fetched > s->tl.completed) {
			while (s->q.count && s->tl.fetched > s->tl.completed)
				as_retire_locked(ctx, s, -EIO, &fl);
			goto restart;
		}
	}
	ctx->executor = false;
	as_ctx_kick_all_locked(ctx);
	wake_up_all(&ctx->wq);
	spin_unlock(&ctx->lock);

	as_freelist_free(ctx, &fl);
	return 0;
}

/* The region address an executor copies at, for kinds that have one. */
static u64 as_exec_addr(const struct asc_region *r, u64 off)
{
	const struct as_mem *m = container_of(r, struct as_mem, core);

	if (m->kind == AS_MEM_USER || m->kind == AS_MEM_EXTERNAL)
		return m->addr + off;
	return 0;
}

static void as_exec_fill(struct as_stream *s, struct asc_entry *e,
			 struct accel_exec_item *it)
{
	struct asc_timeline *wait = asc_exec_item_init(e, it);

	it->stream = s->obj.handle;
	if (wait)
		it->wait_stream = to_as_stream(wait)->obj.handle;
	if (e->desc.op == ACCEL_OP_COPY) {
		it->dst_kind = to_as_mem(e->dst)->kind;
		it->src_kind = to_as_mem(e->src)->kind;
		it->dst_addr = as_exec_addr(e->dst, e->desc.dst_offset);
		it->src_addr = as_exec_addr(e->src, e->desc.src_offset);
	}
}

struct as_fetch_arg {
	struct accel_exec_item *items;
	u32 max;
	u32 count;
};

/*
 * Hand out what is fetchable, stream by stream, repeating while a pass made
 * progress: a wait on another stream's record becomes fetchable once that
 * record went out.
 */
static int as_fetch_check(struct as_ctx *ctx, void *arg)
{
	struct as_fetch_arg *a = arg;
	bool progress = true;
	struct as_stream *s;

	if (!ctx->executor)
		return -ENXIO;
	while (progress && a->count < a->max) {
		progress = false;
		list_for_each_entry(s, &ctx->streams, node) {
			struct asc_entry *e;

			if (s->tl.error)
				continue;
			e = s->fetch_last ? s->fetch_last->next :
					    asc_queue_peek(&s->q);
			for (; e; e = e->next) {
				if (e->seq <= s->tl.fetched)
					continue;
				if (a->count == a->max || !asc_entry_fetchable(e))
					break;
				as_exec_fill(s, e, &a->items[a->count++]);
				s->tl.fetched = e->seq;
				s->fetch_last = e;
				progress = true;
			}
		}
	}
	return a->count ? 0 : -EAGAIN;
}

/**
 * as_exec_fetch_ioctl() - %ACCEL_IOC_EXEC_FETCH
 * @ctx: the context.
 * @arg: user pointer to &struct accel_exec_fetch.
 *
 * Context: process context of the opener; sleeps until something is ready.
 * Return: 0 or a negative errno as documented in the uapi header.
 */
int as_exec_fetch_ioctl(struct as_ctx *ctx, void __user *arg)
{
	struct accel_exec_fetch req;
	struct as_fetch_arg a = {};
	int ret;

	if (copy_from_user(&req, arg, sizeof(req)))
		return -EFAULT;
	if (req.flags || req.pad || !req.items || !req.max_items ||
	    req.max_items > ASC_MAX_SUBMIT)
		return -EINVAL;

	spin_lock(&ctx->lock);
	ret = ctx->executor ? 0 : -ENXIO;
	spin_unlock(&ctx->lock);
	if (ret)
		return ret;

	a.max = req.max_items;
	a.items = kvmalloc_array(a.max, sizeof(*a.items), GFP_KERNEL);
	if (!a.items)
		return -ENOMEM;

	ret = as_ctx_wait(ctx, as_fetch_check, &a, req.timeout_ns);
	if (!ret && copy_to_user(u64_to_user_ptr(req.items), a.items,
				 array_size(a.count, sizeof(*a.items))))
		ret = -EFAULT;
	req.count = a.count;
	if ((!ret || ret == -ETIME) && copy_to_user(arg, &req, sizeof(req)))
		ret = -EFAULT;
	kvfree(a.items);
	return ret;
}

static struct as_stream *as_exec_stream_locked(struct as_ctx *ctx, u32 handle)
{
	struct as_stream *s;

	/* Destroyed streams still drain through the executor. */
	list_for_each_entry(s, &ctx->streams, node)
		if (s->obj.handle == handle)
			return s;
	return NULL;
}

/* Retire @s up to @d->seq; what failed stays sticky and the rest goes. */
static int as_exec_done_locked(struct as_ctx *ctx,
			       const struct accel_exec_done *d,
			       struct as_freelist *fl)
{
	struct as_stream *s = as_exec_stream_locked(ctx, d->stream);
	int ret;

	if (!s)
		return -ENOENT;
	ret = asc_exec_check_done(&s->tl, d);
	if (ret)
		return ret;
	while (s->tl.completed < d->seq) {
		int status = asc_exec_done_status(&s->tl, asc_queue_peek(&s->q), d);

		as_retire_locked(ctx, s, status, fl);
	}
	/* A failed stream runs nothing more: what was not handed out goes. */
	if (asc_exec_cancel_rest(&s->tl)) {
		while (s->q.count)
			as_retire_locked(ctx, s, -ECANCELED, fl);
	}
	return 0;
}

/**
 * as_exec_complete_ioctl() - %ACCEL_IOC_EXEC_COMPLETE
 * @ctx: the context.
 * @arg: user pointer to &struct accel_exec_complete.
 *
 * Context: process context of the opener.
 * Return: 0 or a negative errno as documented in the uapi header.
 */
int as_exec_complete_ioctl(struct as_ctx *ctx, void __user *arg)
{
	struct accel_exec_complete req;
	struct accel_exec_done *done;
	struct as_freelist fl;
	u32 i;
	int ret = 0;

	if (copy_from_user(&req, arg, sizeof(req)))
		return -EFAULT;
	if (req.pad || !req.entries || !req.count || req.count > ASC_MAX_SUBMIT)
		return -EINVAL;

	done = kvmalloc_array(req.count, sizeof(*done), GFP_KERNEL);
	if (!done)
		return -ENOMEM;
	if (copy_from_user(done, u64_to_user_ptr(req.entries),
			   array_size(req.count, sizeof(*done)))) {
		ret = -EFAULT;
		goto out_free;
	}

	as_freelist_init(&fl);
	spin_lock(&ctx->lock);
	if (!ctx->executor)
		ret = -ENXIO;
	for (i = 0; !ret && i < req.count; i++)
		ret = as_exec_done_locked(ctx, &done[i], &fl);
	spin_unlock(&ctx->lock);
	as_freelist_free(ctx, &fl);
out_free:
	kvfree(done);
	return ret;
}
