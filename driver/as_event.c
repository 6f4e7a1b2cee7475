// SPDX-License-Identifier: GPL-2.0
/*
 * accelstream: events, user events and host waits.
 */
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "as_drv.h"

/**
 * as_event_create_ioctl() - %ACCEL_IOC_EVENT_CREATE
 * @ctx: the context.
 * @arg: user pointer to &struct accel_event_create.
 *
 * Context: process context of the opener.
 * Return: 0 or a negative errno as documented in the uapi header.
 */
int as_event_create_ioctl(struct as_ctx *ctx, void __user *arg)
{
	struct accel_event_create req;
	struct as_event_obj *ev;
	int ret;

	if (copy_from_user(&req, arg, sizeof(req)))
		return -EFAULT;
	ret = asc_check_event_create(&req);
	if (ret)
		return ret;

	ev = kzalloc(sizeof(*ev), GFP_KERNEL_ACCOUNT);
	if (!ev)
		return -ENOMEM;
	asc_event_init(&ev->core, req.flags);

	spin_lock(&ctx->lock);
	if (ctx->nevents >= ASC_MAX_EVENTS) {
		spin_unlock(&ctx->lock);
		ret = -ENOSPC;
		goto err_free_event;
	}
	ctx->nevents++;
	list_add_tail(&ev->node, &ctx->events);
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
	spin_unlock(&ctx->lock);
err_free_event:
	kfree(ev);
	return ret;
}

/**
 * as_event_destroy_ioctl() - %ACCEL_IOC_EVENT_DESTROY
 * @ctx: the context.
 * @arg: user pointer to &struct accel_handle.
 *
 * The handle dies at once; queued descriptors naming the event keep it
 * until they retire (cudaEventDestroy). The core refuses (-EBUSY) while
 * a stream's queued HOST_WAIT on the event is not satisfied.
 *
 * Context: process context of the opener.
 * Return: 0 or a negative errno as documented in the uapi header.
 */
int as_event_destroy_ioctl(struct as_ctx *ctx, void __user *arg)
{
	struct asc_release rel = {};
	struct accel_handle req;
	struct as_event_obj *ev;
	struct as_freelist fl;
	int ret;

	if (copy_from_user(&req, arg, sizeof(req)))
		return -EFAULT;
	if (asc_check_handle(&req))
		return -EINVAL;

	as_freelist_init(&fl);
	spin_lock(&ctx->lock);
	ev = as_event_lookup_locked(ctx, req.handle);
	if (!ev) {
		spin_unlock(&ctx->lock);
		return -ENOENT;
	}
	ret = asc_event_destroy(&ev->core, &rel);
	if (ret) {
		spin_unlock(&ctx->lock);
		return ret;
	}
	xa_erase(&ctx->handles, req.handle);
	ctx->nevents--;
	as_collect_locked(ctx, &rel, &fl);
	spin_unlock(&ctx->lock);

	as_freelist_free(ctx, &fl);
	return 0;
}

/**
 * as_event_record_ioctl() - %ACCEL_IOC_EVENT_RECORD
 * @ctx: the context.
 * @arg: user pointer to &struct accel_event_record.
 *
 * Context: process context of the opener.
 * Return: 0 or a negative errno as documented for %ACCEL_IOC_SUBMIT.
 */
int as_event_record_ioctl(struct as_ctx *ctx, void __user *arg)
{
	struct accel_event_record req;
	struct accel_desc d = {};
	int ret;

	if (copy_from_user(&req, arg, sizeof(req)))
		return -EFAULT;
	ret = asc_check_event_record(&req, &d);
	if (ret)
		return ret;
	ret = as_submit(ctx, req.stream, &d, 1, &req.seq);
	if (!ret && copy_to_user(arg, &req, sizeof(req)))
		ret = -EFAULT;
	return ret;
}

/**
 * as_event_query_ioctl() - %ACCEL_IOC_EVENT_QUERY
 * @ctx: the context.
 * @arg: user pointer to &struct accel_event_query.
 *
 * Context: process context of the opener.
 * Return: 0 or a negative errno as documented in the uapi header.
 */
int as_event_query_ioctl(struct as_ctx *ctx, void __user *arg)
{
	struct accel_event_query req;
	struct as_event_obj *ev;
	struct as_stream *s;
	u32 handle, stream = 0;

	if (copy_from_user(&req, arg, sizeof(req)))
		return -EFAULT;
	if (asc_check_event_query(&req))
		return -EINVAL;
	handle = req.handle;

	spin_lock(&ctx->lock);
	ev = as_event_lookup_locked(ctx, handle);
	if (!ev) {
		spin_unlock(&ctx->lock);
		return -ENOENT;
	}
	if (ev->core.point.tl && !ev->core.point.tl->import) {
		s = to_as_stream(ev->core.point.tl);
		stream = s->destroyed ? 0 : s->obj.handle;
	}
	asc_event_query_fill(&req, handle, &ev->core, stream);
	spin_unlock(&ctx->lock);

	if (copy_to_user(arg, &req, sizeof(req)))
		return -EFAULT;
	return 0;
}

/**
 * as_event_elapsed_ioctl() - %ACCEL_IOC_EVENT_ELAPSED
 * @ctx: the context.
 * @arg: user pointer to &struct accel_event_elapsed.
 *
 * Context: process context of the opener.
 * Return: 0 or a negative errno as documented in the uapi header.
 */
int as_event_elapsed_ioctl(struct as_ctx *ctx, void __user *arg)
{
	struct accel_event_elapsed req;
	struct as_event_obj *start, *end;
	s64 ns = 0;
	int ret;

	if (copy_from_user(&req, arg, sizeof(req)))
		return -EFAULT;

	spin_lock(&ctx->lock);
	start = as_event_lookup_locked(ctx, req.start);
	end = as_event_lookup_locked(ctx, req.end);
	if (!start || !end)
		ret = -ENOENT;
	else
		ret = asc_event_elapsed(&start->core, &end->core, &ns);
	spin_unlock(&ctx->lock);
	if (ret)
		return ret;

	req.elapsed_ns = ns;
	if (copy_to_user(arg, &req, sizeof(req)))
		return -EFAULT;
	return 0;
}

/**
 * as_event_signal_ioctl() - %ACCEL_IOC_EVENT_SIGNAL
 * @ctx: the context.
 * @arg: user pointer to &struct accel_event_signal.
 *
 * Context: process context of the opener.
 * Return: 0 or a negative errno as documented in the uapi header.
 */
int as_event_signal_ioctl(struct as_ctx *ctx, void __user *arg)
{
	struct accel_event_signal req;
	struct as_event_obj *ev;
	bool wake;
	int ret;

	if (copy_from_user(&req, arg, sizeof(req)))
		return -EFAULT;
	ret = asc_check_event_signal(&req);
	if (ret)
		return ret;

	spin_lock(&ctx->lock);
	ev = as_event_lookup_locked(ctx, req.handle);
	ret = asc_event_signal_user(ev ? &ev->core : NULL, &req, &wake);
	if (wake) {
		as_ctx_kick_all_locked(ctx);
		wake_up_all(&ctx->wq);
	}
	spin_unlock(&ctx->lock);
	return ret;
}

struct as_wait_arg {
	struct asc_wait_item *items;
	u32 count;
	bool all;
	u32 first;
};

static int as_wait_check_cb(struct as_ctx *ctx, void *arg)
{
	struct as_wait_arg *a = arg;

	return asc_wait_check(a->items, a->count, a->all, &a->first);
}

/**
 * as_wait_ioctl() - %ACCEL_IOC_WAIT: wait for any or all of some events
 * @ctx: the context.
 * @arg: user pointer to &struct accel_wait.
 *
 * Context: process context of the opener; sleeps.
 * Return: 0 or a negative errno as documented in the uapi header.
 */
int as_wait_ioctl(struct as_ctx *ctx, void __user *arg)
{
	struct accel_wait_entry *ents;
	struct asc_release rel = {};
	struct accel_wait req;
	struct as_wait_arg a;
	struct as_freelist fl;
	u32 i, taken = 0;
	int ret;

	if (copy_from_user(&req, arg, sizeof(req)))
		return -EFAULT;
	ret = asc_check_wait(&req, ASC_MAX_WAIT);
	if (ret)
		return ret;

	ents = kmalloc_array(req.count, sizeof(*ents), GFP_KERNEL);
	a.items = kmalloc_array(req.count, sizeof(*a.items), GFP_KERNEL);
	if (!ents || !a.items) {
		ret = -ENOMEM;
		goto out_free;
	}
	if (copy_from_user(ents, u64_to_user_ptr(req.entries),
			   array_size(req.count, sizeof(*ents)))) {
		ret = -EFAULT;
		goto out_free;
	}
	for (i = 0; i < req.count; i++) {
		ret = asc_check_wait_entry(&ents[i]);
		if (ret)
			goto out_free;
	}
	a.count = req.count;
	a.all = req.flags & ACCEL_WAIT_ALL;
	a.first = 0;

	spin_lock(&ctx->lock);
	for (i = 0; i < req.count; i++) {
		struct as_event_obj *ev = as_event_lookup_locked(ctx,
							ents[i].event);

		ret = asc_wait_entry_validate(ev ? &ev->core : NULL, &ents[i]);
		if (ret)
			break;
		asc_wait_item_init(&a.items[i], &ev->core, ents[i].value);
		taken++;
	}
	spin_unlock(&ctx->lock);

	if (!ret)
		ret = as_ctx_wait(ctx, as_wait_check_cb, &a, req.timeout_ns);

	as_freelist_init(&fl);
	spin_lock(&ctx->lock);
	for (i = 0; i < taken; i++) {
		asc_wait_item_fini(&a.items[i], &rel);
		as_collect_locked(ctx, &rel, &fl);
	}
	spin_unlock(&ctx->lock);
	as_freelist_free(ctx, &fl);

	if (!ret || ret == -EIO) {
		req.first_signaled = a.first;
		if (copy_to_user(arg, &req, sizeof(req)))
			ret = -EFAULT;
	}
out_free:
	kfree(a.items);
	kfree(ents);
	return ret;
}
