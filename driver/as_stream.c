// SPDX-License-Identifier: GPL-2.0
/*
 * accelstream: streams and descriptor submission.
 */
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "as_drv.h"

/**
 * as_stream_freeable_locked() - may a stream's memory go now?
 * @ctx: the context.
 * @s: the stream.
 *
 * Context: @ctx->lock held.
 * Return: true when its handle is gone, its queue is empty, no point names
 * its timeline and no worker owns it.
 */
bool as_stream_freeable_locked(struct as_ctx *ctx, struct as_stream *s)
{
	lockdep_assert_held(&ctx->lock);
	return s->destroyed && !s->q.count && !s->tl.refs && !s->work_active;
}

/**
 * as_stream_create_ioctl() - %ACCEL_IOC_STREAM_CREATE
 * @ctx: the context.
 * @arg: user pointer to &struct accel_stream_create.
 *
 * Context: process context of the opener.
 * Return: 0 or a negative errno as documented in the uapi header.
 */
int as_stream_create_ioctl(struct as_ctx *ctx, void __user *arg)
{
	struct accel_stream_create req;
	struct as_stream *s;
	int ret;

	if (copy_from_user(&req, arg, sizeof(req)))
		return -EFAULT;
	ret = asc_check_stream_create(&req);
	if (ret)
		return ret;

	s = kzalloc(sizeof(*s), GFP_KERNEL_ACCOUNT);
	if (!s)
		return -ENOMEM;
	s->ctx = ctx;
	s->flags = req.flags;
	s->priority = asc_clamp_priority(req.priority);
	INIT_WORK(&s->work, as_engine_work);

	spin_lock(&ctx->lock);
	if (ctx->nstreams >= ASC_MAX_STREAMS) {
		spin_unlock(&ctx->lock);
		ret = -ENOSPC;
		goto err_free_stream;
	}
	ctx->nstreams++;
	if (s->priority != ASC_LEAST_PRIORITY)
		ctx->priorities = true;
	list_add_tail(&s->node, &ctx->streams);
	spin_unlock(&ctx->lock);

	ret = as_handle_publish(ctx, &s->obj, AS_OBJ_STREAM);
	if (ret)
		goto err_unlist;

	s->tl.id = s->obj.handle;
	req.handle = s->obj.handle;
	req.priority = s->priority;
	if (copy_to_user(arg, &req, sizeof(req)))
		return -EFAULT;
	return 0;

err_unlist:
	spin_lock(&ctx->lock);
	ctx->nstreams--;
	list_del(&s->node);
	spin_unlock(&ctx->lock);
err_free_stream:
	kfree(s);
	return ret;
}

/**
 * as_stream_destroy_ioctl() - %ACCEL_IOC_STREAM_DESTROY
 * @ctx: the context.
 * @arg: user pointer to &struct accel_handle.
 *
 * The handle dies at once; queued work still runs, then the stream goes.
 *
 * Context: process context of the opener.
 * Return: 0 or a negative errno as documented in the uapi header.
 */
int as_stream_destroy_ioctl(struct as_ctx *ctx, void __user *arg)
{
	struct accel_handle req;
	struct as_stream *s;
	bool free_now;

	if (copy_from_user(&req, arg, sizeof(req)))
		return -EFAULT;
	if (asc_check_handle(&req))
		return -EINVAL;

	spin_lock(&ctx->lock);
	s = as_stream_lookup_locked(ctx, req.handle);
	if (!s) {
		spin_unlock(&ctx->lock);
		return -ENOENT;
	}
	xa_erase(&ctx->handles, req.handle);
	ctx->nstreams--;
	s->destroyed = true;
	free_now = as_stream_freeable_locked(ctx, s);
	if (free_now)
		list_del(&s->node);
	spin_unlock(&ctx->lock);

	if (free_now)
		kfree(s);
	return 0;
}

/**
 * as_stream_query_ioctl() - %ACCEL_IOC_STREAM_QUERY
 * @ctx: the context.
 * @arg: user pointer to &struct accel_stream_query.
 *
 * Context: process context of the opener.
 * Return: 0 or a negative errno as documented in the uapi header.
 */
int as_stream_query_ioctl(struct as_ctx *ctx, void __user *arg)
{
	struct accel_stream_query req;
	struct as_stream *s;
	u32 handle;

	if (copy_from_user(&req, arg, sizeof(req)))
		return -EFAULT;
	if (asc_check_stream_query(&req))
		return -EINVAL;
	handle = req.handle;

	spin_lock(&ctx->lock);
	s = as_stream_lookup_locked(ctx, handle);
	if (!s) {
		spin_unlock(&ctx->lock);
		return -ENOENT;
	}
	asc_stream_query_fill(&req, handle, &s->tl, &s->q, s->flags,
			      s->priority);
	spin_unlock(&ctx->lock);

	if (copy_to_user(arg, &req, sizeof(req)))
		return -EFAULT;
	return 0;
}

struct as_sync_arg {
	struct as_stream *s;
	u64 seq;
};

static int as_sync_check(struct as_ctx *ctx, void *arg)
{
	struct as_sync_arg *a = arg;

	return asc_timeline_check_sync(&a->s->tl, a->seq);
}

/**
 * as_stream_sync_ioctl() - %ACCEL_IOC_STREAM_SYNC
 * @ctx: the context.
 * @arg: user pointer to &struct accel_stream_sync.
 *
 * Context: process context of the opener; sleeps.
 * Return: 0 or a negative errno as documented in the uapi header.
 */
int as_stream_sync_ioctl(struct as_ctx *ctx, void __user *arg)
{
	struct asc_release rel = {};
	struct accel_stream_sync req;
	struct as_sync_arg a;
	struct as_freelist fl;
	int ret;

	if (copy_from_user(&req, arg, sizeof(req)))
		return -EFAULT;
	if (asc_check_stream_sync(&req))
		return -EINVAL;

	spin_lock(&ctx->lock);
	a.s = as_stream_lookup_locked(ctx, req.handle);
	if (!a.s) {
		spin_unlock(&ctx->lock);
		return -ENOENT;
	}
	if (asc_sync_target(&a.s->tl, req.seq, &a.seq)) {
		spin_unlock(&ctx->lock);
		return -EINVAL;
	}
	/* Keep the timeline while sleeping, even if the stream is destroyed. */
	a.s->tl.refs++;
	spin_unlock(&ctx->lock);

	ret = as_ctx_wait(ctx, as_sync_check, &a, req.timeout_ns);

	as_freelist_init(&fl);
	spin_lock(&ctx->lock);
	if (--a.s->tl.refs == 0) {
		rel.tl[rel.ntl++] = &a.s->tl;
		as_collect_locked(ctx, &rel, &fl);
	}
	spin_unlock(&ctx->lock);
	as_freelist_free(ctx, &fl);
	return ret;
}

/*
 * Look up the handles of one descriptor (handle 0 finds nothing: the
 * fields an op does not use are zero); the core judges what was found.
 */
static void as_resolve_locked(struct as_ctx *ctx, struct asc_entry *e)
{
	struct as_mem *dst = as_region_lookup_locked(ctx, e->desc.dst);
	struct as_mem *src = as_region_lookup_locked(ctx, e->desc.src);
	struct as_event_obj *ev = as_event_lookup_locked(ctx, e->desc.event);

	e->dst = dst ? &dst->core : NULL;
	e->src = src ? &src->core : NULL;
	e->event = ev ? &ev->core : NULL;
}

/**
 * as_submit() - validate and queue descriptors on a stream
 * @ctx: the context.
 * @stream: the stream handle.
 * @descs: @count descriptors in kernel memory, shape-checked.
 * @count: 1 to %ASC_MAX_SUBMIT.
 * @seq: out: the sequence number of the last one.
 *
 * All descriptors are validated before any is queued.
 *
 * Context: process context; takes @ctx->lock.
 * Return: 0 or a negative errno as documented for %ACCEL_IOC_SUBMIT.
 */
int as_submit(struct as_ctx *ctx, u32 stream, const struct accel_desc *descs,
	      u32 count, u64 *seq)
{
	struct asc_release rel = {};
	struct as_freelist fl;
	struct asc_batch *b;
	struct as_stream *s;
	u32 i;
	int ret;

	b = kvmalloc(struct_size(b, ents, count), GFP_KERNEL_ACCOUNT);
	if (!b)
		return -ENOMEM;
	asc_batch_init(b, descs, count);

	as_freelist_init(&fl);
	spin_lock(&ctx->lock);
	s = as_stream_lookup_locked(ctx, stream);
	for (i = 0; i < count; i++)
		as_resolve_locked(ctx, &b->ents[i]);
	ret = asc_submit_admit(s ? &s->tl : NULL, s ? &s->q : NULL, b,
			       ctx->executor);
	if (ret)
		goto err_unlock;
	for (i = 0; i < count; i++) {
		asc_enqueue(&s->tl, &s->q, &b->ents[i], &rel);
		as_collect_locked(ctx, &rel, &fl);
	}
	ctx->queued += count;
	*seq = s->tl.submitted;
	as_engine_submit_locked(ctx, s, &fl);
	if (ctx->executor)
		wake_up_all(&ctx->wq);	/* a fetch may be waiting */
	spin_unlock(&ctx->lock);

	atomic64_add(count, &as_submitted_total);
	as_freelist_free(ctx, &fl);
	return 0;

err_unlock:
	spin_unlock(&ctx->lock);
	kvfree(b);
	return ret;
}

/**
 * as_submit_ioctl() - %ACCEL_IOC_SUBMIT
 * @ctx: the context.
 * @arg: user pointer to &struct accel_submit.
 *
 * Context: process context of the opener.
 * Return: 0 or a negative errno as documented in the uapi header.
 */
int as_submit_ioctl(struct as_ctx *ctx, void __user *arg)
{
	/* A few descriptors, the common case, are copied in on the stack. */
	struct accel_desc stack_descs[4];
	struct accel_submit req;
	struct accel_desc *descs = stack_descs;
	u32 i;
	int ret;

	if (copy_from_user(&req, arg, sizeof(req)))
		return -EFAULT;
	ret = asc_check_submit(&req, ASC_MAX_SUBMIT);
	if (ret)
		return ret;

	if (req.count > ARRAY_SIZE(stack_descs))
		descs = kvmalloc_array(req.count, sizeof(*descs), GFP_KERNEL);
	if (!descs)
		return -ENOMEM;
	if (copy_from_user(descs, u64_to_user_ptr(req.descs),
			   array_size(req.count, sizeof(*descs)))) {
		ret = -EFAULT;
		goto out_free;
	}
	for (i = 0; i < req.count; i++) {
		ret = asc_check_desc(&descs[i]);
		if (ret)
			goto out_free;
	}

	ret = as_submit(ctx, req.stream, descs, req.count, &req.seq);
	if (!ret && copy_to_user(arg, &req, sizeof(req)))
		ret = -EFAULT;
out_free:
	if (descs != stack_descs)
		kvfree(descs);
	return ret;
}
