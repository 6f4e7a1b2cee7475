// SPDX-License-Identifier: MIT
/*
 * Events: record, query, synchronize, elapsed time, stream waits and
 * waits on several events.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "accel_int.h"

static void event_release(struct accel_obj *obj)
{
	struct accel_event_impl *ev = (struct accel_event_impl *)obj;
	struct accel_ctx *ctx = ev->child.ctx;

	free(ev);
	accel_ctx_put(ctx);
}

static int event_get_any(accel_event_t event, struct accel_event_impl **out)
{
	struct accel_obj *obj;
	int ret;

	ret = accel_obj_get_user((uint64_t)(uintptr_t)event, ACCEL_OBJ_EVENT,
				 &obj);
	if (ret)
		return ret;
	*out = (struct accel_event_impl *)obj;
	return 0;
}

static void event_put(struct accel_event_impl *ev)
{
	accel_obj_put(&ev->child.obj);
}

/* An event of a live context: a lost one reports it. */
static int event_get(accel_event_t event, struct accel_event_impl **out)
{
	int ret = event_get_any(event, out);

	if (ret)
		return ret;
	return accel_child_check(&(*out)->child);
}

/* Why a wait on @ev or a query of it found it failed (-EIO). */
static int event_failed_error(const struct accel_event_impl *ev, int err)
{
	if (ev->flags & ACCEL_EVENT_HOST)
		accel_set_error("host event %#llx was signalled with ACCEL_EVENT_SIGNAL_ERROR: every wait on it fails -EIO, and so does every stream waiting on it",
				(unsigned long long)ev->child.handle);
	else
		accel_set_error("event %#llx failed: its stream failed before the point it records (see accel_stream_synchronize() of that stream for why)",
				(unsigned long long)ev->child.handle);
	return err;
}

/*
 * The event and the stream a record or a stream-ordered event operation
 * names, both live and of one context (-EINVAL otherwise); on success both
 * are held until event_stream_put().
 */
static int event_stream_get(accel_event_t event, accel_stream_t stream,
			    struct accel_event_impl **ev,
			    struct accel_stream_impl **s)
{
	int ret = event_get(event, ev);

	if (ret)
		return ret;
	ret = accel_stream_get(stream, s);
	if (!ret && (*s)->child.ctx != (*ev)->child.ctx) {
		accel_stream_put(*s);
		ret = -EINVAL;
	}
	if (ret)
		event_put(*ev);
	return ret;
}

static void event_stream_put(struct accel_event_impl *ev,
			     struct accel_stream_impl *s)
{
	accel_stream_put(s);
	event_put(ev);
}

/*
 * A new event with @flags for the live context @ctxh, its kernel event
 * still to be made; on success the caller holds @ctx until it puts it.
 */
static int event_alloc(accel_context *ctxh, unsigned int flags,
		       struct accel_ctx **ctx, struct accel_event_impl **ev)
{
	int ret = accel_ctx_get(ctxh, ctx);

	if (ret)
		return ret;
	*ev = calloc(1, sizeof(**ev));
	if (!*ev) {
		accel_ctx_put(*ctx);
		return -ENOMEM;
	}
	(*ev)->flags = flags;
	return 0;
}

/*
 * Give @ev, whose kernel event exists, its handle in @ctx; on failure the
 * kernel event is destroyed and @ev freed.
 */
static int event_publish(struct accel_ctx *ctx, struct accel_event_impl *ev,
			 accel_event_t *out)
{
	int ret;

	ret = accel_obj_publish(&ev->child.obj, ACCEL_OBJ_EVENT, event_release,
				&ev->child.handle);
	if (ret) {
		accel_kevent_destroy(ctx, ev->kevent);
		free(ev);
		return ret;
	}
	accel_obj_ref(&ctx->obj);
	ret = accel_child_link(ctx, &ev->child);
	if (ret) {
		accel_obj_kill(&ev->child.obj);
		return ret;
	}
	*out = (accel_event_t)(uintptr_t)ev->child.handle;
	return 0;
}

ACCEL_EXPORT
int accel_event_create(accel_context *ctxh, unsigned int flags,
		       accel_event_t *out)
{
	ACCEL_API_ENTER();
	struct accel_event_impl *ev;
	struct accel_ctx *ctx;
	int ret;

	if (!out || (flags & ~(ACCEL_EVENT_DISABLE_TIMING | ACCEL_EVENT_HOST |
			       ACCEL_EVENT_BLOCKING_SYNC)))
		return -EINVAL;
	ret = event_alloc(ctxh, flags, &ctx, &ev);
	if (ret)
		return ret;
	ret = accel_kevent_create(ctx, (flags & ACCEL_EVENT_HOST) ?
				  ACCEL_EVENT_USER :
				  (flags & ACCEL_EVENT_DISABLE_TIMING) ?
				  0 : ACCEL_EVENT_TIMING, &ev->kevent);
	if (ret)
		free(ev);
	else
		ret = event_publish(ctx, ev, out);
	accel_ctx_put(ctx);
	return ret;
}

ACCEL_EXPORT
int accel_event_destroy(accel_event_t event)
{
	ACCEL_API_ENTER();
	struct accel_event_impl *ev;
	int ret;

	ret = event_get_any(event, &ev);
	if (ret)
		return ret;
	/*
	 * The kernel's event first (queued records and waits keep it
	 * alive): a destroy the driver refuses leaves the event as it was.
	 */
	ret = accel_kevent_destroy(ev->child.ctx, ev->kevent);
	if (!ret && !accel_obj_kill(&ev->child.obj))
		accel_child_unlink(&ev->child);
	else if (ret == -EBUSY)
		accel_set_error("host event %#llx: a stream waits (accel_stream_wait_value()) for a value the event has not reached; signal it, or destroy the context, first",
				(unsigned long long)ev->child.handle);
	event_put(ev);
	return ret;
}

ACCEL_EXPORT
int accel_event_record(accel_event_t event, accel_stream_t stream)
{
	ACCEL_API_ENTER();
	struct accel_event_record rec;
	struct accel_stream_impl *s;
	struct accel_event_impl *ev;
	int ret;

	ret = event_stream_get(event, stream, &ev, &s);
	if (ret)
		return ret;
	ret = accel_ctx_queueing(s->child.ctx);
	if (ret) {
		event_stream_put(ev, s);
		return ret;
	}
	memset(&rec, 0, sizeof(rec));
	rec.event = ev->kevent;
	rec.stream = s->kstream;
	ret = accel_ioctl(s->child.ctx, ACCEL_IOC_EVENT_RECORD, &rec);
	event_stream_put(ev, s);
	return ret;
}

ACCEL_EXPORT
int accel_event_query(accel_event_t event)
{
	ACCEL_API_ENTER();
	struct accel_event_query q;
	struct accel_event_impl *ev;
	int ret;

	ret = event_get(event, &ev);
	if (ret)
		return ret;
	ret = accel_kevent_query(ev->child.ctx, ev->kevent, &q);
	if (!ret) {
		if (q.error)
			ret = event_failed_error(ev,
						 accel_failed_errno(q.error));
		else if (q.state != ACCEL_EVENT_STATE_COMPLETE)
			ret = -EAGAIN;
	}
	event_put(ev);
	return ret;
}

ACCEL_EXPORT
int accel_event_synchronize(accel_event_t event, uint64_t timeout_ns)
{
	ACCEL_API_ENTER();
	struct accel_wait_entry ents[2];
	struct accel_event_impl *ev;
	int ret;

	ret = event_get(event, &ev);
	if (ret)
		return ret;
	if (timeout_ns && accel_in_host_fn()) {
		event_put(ev);
		return -EDEADLK;
	}
	memset(ents, 0, sizeof(ents));
	ents[0].event = ev->kevent;
	ret = accel_kwait_user(ev->child.ctx, ents, 1, ACCEL_WAIT_ALL |
			       ((ev->flags & ACCEL_EVENT_BLOCKING_SYNC) ?
				ACCEL_KWAIT_BLOCKING : 0), timeout_ns, NULL);
	if (ret == -EIO)
		event_failed_error(ev, ret);
	/* A synchronization point: the pool gives back what is idle. */
	if (!ret)
		accel_pool_sync(ev->child.ctx);
	event_put(ev);
	return ret;
}

ACCEL_EXPORT
int accel_event_elapsed_time(float *ms, accel_event_t start,
			     accel_event_t end)
{
	ACCEL_API_ENTER();
	struct accel_event_elapsed el;
	struct accel_event_impl *a, *b;
	int ret;

	if (!ms)
		return -EINVAL;
	ret = event_get(start, &a);
	if (ret)
		return ret;
	ret = event_get(end, &b);
	if (!ret && a->child.ctx != b->child.ctx) {
		event_put(b);
		ret = -EINVAL;
	}
	if (ret) {
		event_put(a);
		return ret;
	}
	memset(&el, 0, sizeof(el));
	el.start = a->kevent;
	el.end = b->kevent;
	ret = accel_ioctl(a->child.ctx, ACCEL_IOC_EVENT_ELAPSED, &el);
	if (!ret)
		*ms = (float)((double)el.elapsed_ns / 1e6);
	event_put(b);
	event_put(a);
	return ret;
}

/* Queue one descriptor naming @event on @stream (same context). */
static int submit_event_op(accel_stream_t stream, accel_event_t event,
			   uint32_t op, uint64_t value, unsigned int flags)
{
	struct accel_desc d;
	struct accel_stream_impl *s;
	struct accel_event_impl *ev;
	int ret;

	if (flags)
		return -EINVAL;
	ret = event_stream_get(event, stream, &ev, &s);
	if (ret)
		return ret;
	accel_desc_event(&d, op, ev->kevent, value);
	ret = accel_submit(s->child.ctx, s->kstream, &d, 1, NULL);
	event_stream_put(ev, s);
	return ret;
}

ACCEL_EXPORT
int accel_stream_wait_event(accel_stream_t stream, accel_event_t event,
			    unsigned int flags)
{
	ACCEL_API_ENTER();
	return submit_event_op(stream, event, ACCEL_OP_STREAM_WAIT, 0, flags);
}

ACCEL_EXPORT
int accel_event_wait(const accel_event_t *events, unsigned int count,
		     unsigned int mode, uint64_t timeout_ns,
		     unsigned int *first)
{
	ACCEL_API_ENTER();
	struct accel_event_impl **evs = NULL, *ev0;
	struct accel_wait_entry *ents = NULL;
	struct accel_ctx *ctx = NULL;
	uint32_t blocking = ACCEL_KWAIT_BLOCKING;
	unsigned int i, n = 0;
	uint32_t idx = 0;
	int ret;

	if (!events || !count || (mode & ~ACCEL_WAIT_ALL))
		return -EINVAL;
	/* The limit first: nothing past events[0] is read above it. */
	ret = event_get(events[0], &ev0);
	if (ret)
		return ret;
	if (count > ACCEL_USER_WAIT_MAX(ev0->child.ctx)) {
		accel_set_error("%u events: one wait takes at most %u", count,
				ACCEL_USER_WAIT_MAX(ev0->child.ctx));
		event_put(ev0);
		return -EINVAL;
	}
	event_put(ev0);
	evs = calloc(count, sizeof(*evs));
	ents = calloc(count + 1, sizeof(*ents));
	if (!evs || !ents) {
		ret = -ENOMEM;
		goto out;
	}
	for (n = 0; n < count; n++) {
		ret = event_get(events[n], &evs[n]);
		if (ret)
			goto out;
		if (ctx && evs[n]->child.ctx != ctx) {
			n++;
			ret = -EINVAL;
			goto out;
		}
		ctx = evs[n]->child.ctx;
		ents[n].event = evs[n]->kevent;
		/* Sleeps at once only when every event asks for it. */
		if (!(evs[n]->flags & ACCEL_EVENT_BLOCKING_SYNC))
			blocking = 0;
	}
	if (timeout_ns && accel_in_host_fn()) {
		ret = -EDEADLK;
		goto out;
	}
	ret = accel_kwait_user(ctx, ents, count,
			       ((mode & ACCEL_WAIT_ALL) ? ACCEL_WAIT_ALL : 0) |
			       blocking, timeout_ns, &idx);
	if (ret == -EIO && idx < count)
		event_failed_error(evs[idx], ret);
	if ((!ret || ret == -EIO) && first)
		*first = idx;
out:
	for (i = 0; i < n; i++)
		event_put(evs[i]);
	free(evs);
	free(ents);
	return ret;
}

ACCEL_EXPORT
int accel_event_signal(accel_event_t event, uint64_t value, unsigned int flags)
{
	ACCEL_API_ENTER();
	struct accel_event_signal sg;
	struct accel_event_impl *ev;
	int ret;

	if (flags & ~ACCEL_EVENT_SIGNAL_ERROR)
		return -EINVAL;
	ret = event_get(event, &ev);
	if (ret)
		return ret;
	memset(&sg, 0, sizeof(sg));
	sg.handle = ev->kevent;
	sg.value = value;
	sg.flags = (flags & ACCEL_EVENT_SIGNAL_ERROR) ? ACCEL_SIGNAL_ERROR : 0;
	ret = accel_ioctl(ev->child.ctx, ACCEL_IOC_EVENT_SIGNAL, &sg);
	event_put(ev);
	return ret;
}

ACCEL_EXPORT
int accel_stream_wait_value(accel_stream_t stream, accel_event_t event,
			    uint64_t value, unsigned int flags)
{
	ACCEL_API_ENTER();
	return submit_event_op(stream, event, ACCEL_OP_HOST_WAIT, value, flags);
}

ACCEL_EXPORT
int accel_event_export_fd(accel_event_t event, int *fd)
{
	ACCEL_API_ENTER();
	struct accel_event_export x;
	struct accel_event_impl *ev;
	int ret;

	if (!fd)
		return -EINVAL;
	ret = event_get(event, &ev);
	if (ret)
		return ret;
	memset(&x, 0, sizeof(x));
	x.event = ev->kevent;
	ret = accel_ioctl(ev->child.ctx, ACCEL_IOC_EVENT_EXPORT, &x);
	if (!ret)
		*fd = x.fd;
	else if (ret == -EINVAL)
		accel_set_error("a host event or an imported event cannot be exported");
	event_put(ev);
	return ret;
}

ACCEL_EXPORT
int accel_event_import_fd(accel_context *ctxh, int fd, accel_event_t *out)
{
	ACCEL_API_ENTER();
	struct accel_event_import im;
	struct accel_event_impl *ev;
	struct accel_ctx *ctx;
	int ret;

	if (!out)
		return -EINVAL;
	if (fd < 0)
		return -EBADF;
	ret = event_alloc(ctxh, ACCEL_EVENT_DISABLE_TIMING, &ctx, &ev);
	if (ret)
		return ret;
	memset(&im, 0, sizeof(im));
	im.fd = fd;
	ret = accel_ioctl(ctx, ACCEL_IOC_EVENT_IMPORT, &im);
	if (ret) {
		/* The transport may have said why already (inproc: pending). */
		if (ret == -EINVAL && !*accel_last_error_string())
			accel_set_error("fd %d is not an exported accelstream event", fd);
		free(ev);
	} else {
		ev->kevent = im.handle;
		ret = event_publish(ctx, ev, out);
	}
	accel_ctx_put(ctx);
	return ret;
}

/*
 * One HOST_SIGNAL descriptor: the transport raises the counter when the
 * stream reaches it (the core never lowers it), and wakes host waiters and
 * the streams waiting on the value, as accel_event_signal() does at once.
 */
ACCEL_EXPORT
int accel_stream_write_value(accel_stream_t stream, accel_event_t event,
			     uint64_t value, unsigned int flags)
{
	ACCEL_API_ENTER();
	return submit_event_op(stream, event, ACCEL_OP_HOST_SIGNAL, value,
			       flags);
}
