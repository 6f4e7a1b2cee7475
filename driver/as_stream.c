// SPDX-License-Identifier: GPL-2.0
/*
 * accelstream: streams and descriptor submission.
 */
#include <linux/mm.h>
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
 * as_stream_keep_batch_locked() - keep a retired batch for the next submission
 * @ctx: the context.
 * @s: the stream the batch was submitted on.
 * @b: the batch, all its entries retired.
 *
 * The stream keeps the larger of @b and its spare, if at most
 * %AS_SPARE_ENTRIES entries and allocated with kmalloc(); a destroyed
 * stream keeps none.
 *
 * Context: @ctx->lock held.
 * Return: the batch to free (@b, the old spare, or NULL).
 */
struct asc_batch *as_stream_keep_batch_locked(struct as_ctx *ctx,
					      struct as_stream *s,
					      struct asc_batch *b)
{
	struct asc_batch *old = s->spare;

	lockdep_assert_held(&ctx->lock);
	/* @b->count: at least what it has room for (it may be a reused one). */
	if (s->destroyed || b->count > AS_SPARE_ENTRIES ||
	    is_vmalloc_addr(b) || (old && s->spare_cap >= b->count))
		return b;
	s->spare = b;
	s->spare_cap = b->count;
	return old;
}

/* Take the stream's spare batch if it has room for @count entries. */
static struct asc_batch *as_stream_take_batch_locked(struct as_ctx *ctx,
						     struct as_stream *s,
						     u32 count)
{
	struct asc_batch *b = s->spare;

	lockdep_assert_held(&ctx->lock);
	if (!b || s->spare_cap < count)
		return NULL;
	s->spare = NULL;
	return b;
}

/**
 * as_stream_free() - free a stream's memory
 * @s: the stream, unlisted and unreferenced.
 *
 * Context: any context but NMI.
 */
void as_stream_free(struct as_stream *s)
{
	kfree(s->spare);
	kfree(s);
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
	INIT_LIST_HEAD(&s->exports);

	spin_lock(&ctx->lock);
	if (ctx->nstreams >= ASC_MAX_STREAMS) {
		spin_unlock(&ctx->lock);
		ret = -ENOSPC;
		goto err_free_stream;
	}
	ctx->nstreams++;
	s->dev = ctx->device;
	if (s->priority != ASC_LEAST_PRIORITY)
		ctx->priorities = true;
	list_add_tail(&s->node, &ctx->streams);
	spin_unlock(&ctx->lock);

	ret = as_handle_reserve(ctx, &s->obj, AS_OBJ_STREAM);
	if (ret)
		goto err_unlist;

	s->tl.id = s->obj.handle;
	req.handle = s->obj.handle;
	req.priority = s->priority;
	if (copy_to_user(arg, &req, sizeof(req))) {
		ret = -EFAULT;
		goto err_cancel_handle;
	}
	as_handle_commit(ctx, &s->obj);
	return 0;

err_cancel_handle:
	as_handle_cancel(ctx, &s->obj);
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
		as_stream_free(s);
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

static struct asc_region *as_resolve_region_locked(struct as_ctx *ctx,
						   u32 handle)
{
	struct as_mem *m = as_region_lookup_locked(ctx, handle);

	return m ? &m->core : NULL;
}

/*
 * Look up the handles of one descriptor (handle 0 finds nothing: the
 * fields an op does not use are zero); the core judges what was found.
 * A handle the previous descriptor of the batch (@prev, or NULL) named
 * too is not looked up again: batches name the same regions over and over.
 */
static void as_resolve_locked(struct as_ctx *ctx, struct asc_entry *e,
			      const struct asc_entry *prev)
{
	u32 event = asc_desc_event(&e->desc);
	struct as_event_obj *ev;

	if (prev && e->desc.dst == prev->desc.dst)
		e->dst = prev->dst;
	else
		e->dst = as_resolve_region_locked(ctx, e->desc.dst);
	if (prev && e->desc.src == prev->desc.src)
		e->src = prev->src;
	else if (e->desc.src == e->desc.dst)
		e->src = e->dst;
	else
		e->src = as_resolve_region_locked(ctx, e->desc.src);
	/* Only ops that name one (a COPY_2D keeps a pitch there). */
	if (prev && event == asc_desc_event(&prev->desc)) {
		e->event = prev->event;
	} else {
		ev = as_event_lookup_locked(ctx, event);
		e->event = ev ? &ev->core : NULL;
	}
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
	struct asc_batch *b = NULL;
	struct as_freelist fl __uninitialized;	/* as_freelist_init() */
	struct as_stream *s;
	u32 i;
	int ret;

	as_freelist_init(&fl);
	spin_lock(&ctx->lock);
	s = as_stream_lookup_locked(ctx, stream);
	/* The stream's spare batch if it has room, else a new one. */
	if (s)
		b = as_stream_take_batch_locked(ctx, s, count);
	if (!b) {
		spin_unlock(&ctx->lock);
		b = kvmalloc(struct_size(b, ents, count), GFP_KERNEL_ACCOUNT);
		if (!b)
			return -ENOMEM;
		spin_lock(&ctx->lock);
		s = as_stream_lookup_locked(ctx, stream);
	}
	asc_batch_init(b, descs, count);
	for (i = 0; i < count; i++)
		as_resolve_locked(ctx, &b->ents[i], i ? &b->ents[i - 1] : NULL);
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
		as_ctx_wake_locked(ctx);	/* a fetch may be waiting */
	spin_unlock(&ctx->lock);

	atomic64_add(count, &as_submitted_total);
	as_freelist_free(ctx, &fl);
	return 0;

err_unlock:
	/* A failed submission changes nothing, the stream's spare aside. */
	if (s)
		b = as_stream_keep_batch_locked(ctx, s, b);
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
	/*
	 * A few descriptors, the common case, are copied in on the stack; not
	 * cleared first (CONFIG_INIT_STACK_ALL_ZERO would, at every call):
	 * only what copy_from_user() wrote is read.
	 */
	struct accel_desc stack_descs[4] __uninitialized;
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
