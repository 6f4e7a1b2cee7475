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
	if (asc_check_exec_attach(&req))
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
	list_for_each_entry(s, &ctx->streams, node)
		asc_exec_attach_stream(&s->tl, &s->q);
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
	if (asc_check_exec_attach(&req))
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
		if (asc_exec_detach_next(&s->tl, &s->q)) {
			while (asc_exec_detach_next(&s->tl, &s->q))
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
		list_for_each_entry(s, &ctx->streams, node)
			progress |= asc_fetch_stream(&s->tl, &s->q, a->items,
						     a->max, &a->count);
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
	if (asc_check_exec_fetch(&req, ASC_MAX_SUBMIT))
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
	int ret = 0, status;
	u32 i;

	if (copy_from_user(&req, arg, sizeof(req)))
		return -EFAULT;
	if (asc_check_exec_complete(&req, ASC_MAX_SUBMIT))
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
	/* Each retires its stream up to its seq, as the core says. */
	for (i = 0; !ret && i < req.count; i++) {
		struct as_stream *s = as_exec_stream_locked(ctx, done[i].stream);

		ret = asc_exec_check_done(s ? &s->tl : NULL, &done[i]);
		while (!ret &&
		       asc_exec_done_next(&s->tl, &s->q, &done[i], &status))
			as_retire_locked(ctx, s, status, &fl);
	}
	spin_unlock(&ctx->lock);
	as_freelist_free(ctx, &fl);
out_free:
	kvfree(done);
	return ret;
}
