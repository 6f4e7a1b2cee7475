// SPDX-License-Identifier: MIT
/*
 * Streams, the per-thread default stream, and submission helpers.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "accel_int.h"
#include "staging.h"

/* Default streams of this thread, one per context it used. */
#define DEFAULT_SLOTS	8

struct default_slot {
	uint64_t ctx;
	uint64_t stream;
};

static __thread struct default_slot defaults[DEFAULT_SLOTS];
static __thread unsigned int defaults_next;
static pthread_key_t defaults_key;
static pthread_once_t defaults_once = PTHREAD_ONCE_INIT;

static void stream_release(struct accel_obj *obj)
{
	struct accel_stream_impl *s = (struct accel_stream_impl *)obj;
	struct accel_ctx *ctx = s->child.ctx;

	free(s);
	accel_ctx_put(ctx);
}

static int stream_kill(struct accel_stream_impl *s)
{
	struct accel_handle h = { .handle = s->kstream };
	int ret;

	/*
	 * The kernel handle first (it dies at once; queued work still
	 * runs): a destroy the driver refuses (-EACCES in a forked child)
	 * leaves the stream as it was. Of two destroys racing, the driver
	 * lets one through. The pool's points on the stream are handed to
	 * an event first (mempool.c): they retire as its queue drains.
	 * Once the context's destroy has begun, the stream is its to end.
	 */
	ret = accel_ctx_queueing(s->child.ctx);
	if (ret)
		return ret;
	accel_pool_stream_dead(s->child.ctx, s->kstream);
	accel_staging_stream_dead(s->child.ctx, s->kstream);
	ret = accel_ioctl(s->child.ctx, ACCEL_IOC_STREAM_DESTROY, &h);
	if (ret)
		return ret;
	if (accel_obj_kill(&s->child.obj))
		return 0;	/* the context's destroy got there too */
	accel_child_unlink(&s->child);
	s->child.ctx->backend->stream_dead(s->child.ctx, s->kstream);
	return 0;
}

static void defaults_destroy(void *unused)
{
	struct accel_obj *obj;
	unsigned int i;

	(void)unused;
	for (i = 0; i < DEFAULT_SLOTS; i++) {
		if (!defaults[i].stream)
			continue;
		if (!accel_obj_get(defaults[i].stream, ACCEL_OBJ_STREAM, &obj)) {
			stream_kill((struct accel_stream_impl *)obj);
			accel_obj_put(obj);
		}
		defaults[i].stream = 0;
		defaults[i].ctx = 0;
	}
}

static void defaults_key_init(void)
{
	pthread_key_create(&defaults_key, defaults_destroy);
}

static int stream_new(struct accel_ctx *ctx, unsigned int flags,
		      int priority, bool is_default,
		      struct accel_stream_impl **out)
{
	struct accel_stream_create sc = {
		.flags = flags,
		.priority = priority,
	};
	struct accel_handle h;
	struct accel_stream_impl *s;
	int ret;

	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	/* On the current device: the transport's is ours under dev_lock. */
	pthread_mutex_lock(&ctx->dev_lock);
	ret = accel_ioctl(ctx, ACCEL_IOC_STREAM_CREATE, &sc);
	s->device = ctx->device;
	pthread_mutex_unlock(&ctx->dev_lock);
	if (ret == -ENOSPC)
		accel_set_error(is_default ?
				"the calling thread's default stream (ACCEL_STREAM_DEFAULT) cannot be made: the context has %u streams already (destroy one, or pass a stream)" :
				"the context has %u streams already (see LIMITS in libaccel(7))",
				ctx->info.max_streams);
	if (ret)
		goto err_free;
	s->kstream = sc.handle;
	s->flags = flags;
	s->priority = priority < ctx->info.greatest_priority ?
		      ctx->info.greatest_priority :
		      priority > ctx->info.least_priority ?
		      ctx->info.least_priority : priority;
	s->is_default = is_default;
	ret = accel_obj_publish(&s->child.obj, ACCEL_OBJ_STREAM,
				stream_release, &s->child.handle);
	if (ret)
		goto err_destroy;
	accel_obj_ref(&ctx->obj);
	ret = accel_child_link(ctx, &s->child);
	if (ret) {
		/* The context is being destroyed under us. */
		accel_obj_kill(&s->child.obj);
		return ret;
	}
	*out = s;
	return 0;

err_destroy:
	h.handle = sc.handle;
	h.pad = 0;
	accel_ioctl(ctx, ACCEL_IOC_STREAM_DESTROY, &h);
err_free:
	free(s);
	return ret;
}

ACCEL_EXPORT
int accel_stream_create(accel_context *ctxh, unsigned int flags, int priority,
			accel_stream_t *out)
{
	ACCEL_API_ENTER();
	struct accel_stream_impl *s;
	struct accel_ctx *ctx;
	int ret;

	ret = accel_ctx_get_checked(ctxh,
				     out && !(flags & ~ACCEL_STREAM_NON_BLOCKING), &ctx);
	if (ret)
		return ret;
	ret = stream_new(ctx, flags, priority, false, &s);
	if (!ret)
		*out = (accel_stream_t)(uintptr_t)s->child.handle;
	accel_ctx_put(ctx);
	return ret;
}

static int default_stream_get(struct accel_stream_impl **out)
{
	struct accel_stream_impl *s;
	struct accel_obj *obj;
	struct accel_ctx *ctx;
	unsigned int i;
	int ret;

	ret = accel_ctx_get(NULL, &ctx);
	if (ret)
		return ret;
	for (i = 0; i < DEFAULT_SLOTS; i++) {
		if (defaults[i].ctx != ctx->handle)
			continue;
		if (!accel_obj_get(defaults[i].stream, ACCEL_OBJ_STREAM,
				   &obj)) {
			accel_ctx_put(ctx);
			*out = (struct accel_stream_impl *)obj;
			return 0;
		}
		defaults[i].ctx = 0;
		defaults[i].stream = 0;
	}

	pthread_once(&defaults_once, defaults_key_init);
	ret = stream_new(ctx, ACCEL_STREAM_NON_BLOCKING,
			 ctx->info.least_priority, true, &s);
	if (ret) {
		accel_ctx_put(ctx);
		return ret;
	}
	for (i = 0; i < DEFAULT_SLOTS; i++)
		if (!defaults[i].stream)
			break;
	if (i == DEFAULT_SLOTS) {
		/* Full: retire the oldest slot's stream. */
		i = defaults_next++ % DEFAULT_SLOTS;
		if (!accel_obj_get(defaults[i].stream, ACCEL_OBJ_STREAM, &obj)) {
			stream_kill((struct accel_stream_impl *)obj);
			accel_obj_put(obj);
		}
	}
	defaults[i].ctx = ctx->handle;
	defaults[i].stream = s->child.handle;
	pthread_setspecific(defaults_key, (void *)1);
	accel_ctx_put(ctx);
	accel_obj_ref(&s->child.obj);
	*out = s;
	return 0;
}

static int stream_get_any(accel_stream_t stream,
			  struct accel_stream_impl **out)
{
	struct accel_obj *obj;
	int ret;

	if (stream == ACCEL_STREAM_DEFAULT)
		return default_stream_get(out);
	ret = accel_obj_get_user((uint64_t)(uintptr_t)stream, ACCEL_OBJ_STREAM,
				 &obj);
	if (ret)
		return ret;
	*out = (struct accel_stream_impl *)obj;
	return 0;
}

/* A stream of a live context: a lost one reports it. */
int accel_stream_get(accel_stream_t stream, struct accel_stream_impl **out)
{
	int ret = stream_get_any(stream, out);

	if (ret)
		return ret;
	return accel_child_check(&(*out)->child);
}

int accel_stream_get_checked(accel_stream_t stream, bool args_ok,
			     struct accel_stream_impl **out)
{
	if (!args_ok)
		return -EINVAL;
	return accel_stream_get(stream, out);
}

void accel_stream_put(struct accel_stream_impl *s)
{
	accel_obj_put(&s->child.obj);
}

ACCEL_EXPORT
int accel_stream_destroy(accel_stream_t stream)
{
	ACCEL_API_ENTER();
	struct accel_stream_impl *s;
	int ret;

	if (stream == ACCEL_STREAM_DEFAULT)
		return -EINVAL;
	ret = stream_get_any(stream, &s);
	if (ret)
		return ret;
	ret = s->is_default ? -EINVAL : stream_kill(s);
	accel_stream_put(s);
	return ret;
}

ACCEL_EXPORT
int accel_stream_query(accel_stream_t stream)
{
	ACCEL_API_ENTER();
	struct accel_stream_query q;
	struct accel_stream_impl *s;
	int ret;

	ret = accel_stream_get(stream, &s);
	if (ret)
		return ret;
	ret = accel_kstream_query(s->child.ctx, s->kstream, &q);
	/* Take what the device finished, then ask again. */
	if (!ret && q.completed < q.submitted && !q.error &&
	    s->child.ctx->backend->poll(s->child.ctx))
		ret = accel_kstream_query(s->child.ctx, s->kstream, &q);
	if (!ret) {
		if (q.error)
			ret = accel_failed_errno(q.error);
		else if (q.completed < q.submitted)
			ret = -EAGAIN;
	}
	accel_stream_put(s);
	return ret;
}

/* STREAM_SYNC until absolute @until (0: a poll): -ETIME while not done. */
static int stream_sync_poll(struct accel_ctx *ctx, void *arg, uint64_t until)
{
	struct accel_stream_sync ss = *(struct accel_stream_sync *)arg;

	ss.timeout_ns = until;
	return accel_ioctl(ctx, ACCEL_IOC_STREAM_SYNC, &ss);
}

/*
 * A blocking synchronize is a wait for an event recorded at the stream's
 * tail, so that it also waits on the context's doom event: a destroy from
 * another thread ends it (-ENOENT). -EAGAIN: the event cannot be had (a
 * stream too full for the record, no event left).
 */
static int stream_sync_tail(struct accel_stream_impl *s, uint64_t deadline)
{
	struct accel_ctx *ctx = s->child.ctx;
	struct accel_wait_entry ents[2];
	struct accel_event_record rec;
	int ret;

	memset(&rec, 0, sizeof(rec));
	rec.stream = s->kstream;
	if (accel_kevent_create(ctx, 0, &rec.event))
		return -EAGAIN;
	ret = accel_ioctl(ctx, ACCEL_IOC_EVENT_RECORD, &rec);
	if (!ret) {
		memset(ents, 0, sizeof(ents));
		ents[0].event = rec.event;
		ret = accel_kwait_user_until(ctx, ents, 1, ACCEL_WAIT_ALL,
					     deadline, NULL);
	}
	accel_kevent_destroy(ctx, rec.event);
	return ret;
}

/* The context's destroy has released its waiters (its doom event failed). */
static bool ctx_doomed(struct accel_ctx *ctx)
{
	struct accel_event_query q;

	return !accel_kevent_query(ctx, ctx->doom, &q) && q.error;
}

/* How long one STREAM_SYNC of a stream too full for a record sleeps. */
#define SYNC_FULL_SLICE_NS	(50 * 1000000ULL)

/*
 * Without the tail event, STREAM_SYNC, which a destroy cannot end: it
 * sleeps until the stream's next descriptor retires (then there is room
 * for the record) or for a slice at most, and between slices the call
 * looks whether the context's destroy released its waiters. -EAGAIN:
 * try the record again.
 */
static int stream_sync_full(struct accel_stream_impl *s, uint64_t deadline)
{
	struct accel_ctx *ctx = s->child.ctx;
	struct accel_stream_query q;
	struct accel_stream_sync ss;
	uint64_t slice;
	int ret;

	ret = accel_kstream_query(ctx, s->kstream, &q);
	if (ret)
		return ret;
	if (q.error)
		return accel_failed_errno(q.error);
	if (q.completed >= q.submitted)
		return 0;
	slice = accel_deadline(SYNC_FULL_SLICE_NS);
	memset(&ss, 0, sizeof(ss));
	ss.handle = s->kstream;
	ss.seq = q.completed + 1;
	ss.timeout_ns = deadline < slice ? deadline : slice;
	/* The deadline is absolute, so a restart keeps it. */
	do {
		ret = accel_ioctl(ctx, ACCEL_IOC_STREAM_SYNC, &ss);
	} while (ret == -EINTR);
	ctx->backend->trace_wait(ctx);
	if (ret == -ETIME && ss.timeout_ns == deadline)
		return -ETIME;
	if (ret && ret != -ETIME)
		return ret;
	if (ctx_doomed(ctx)) {
		accel_set_error("the context was destroyed during the wait");
		return -ENOENT;
	}
	return -EAGAIN;
}

static int stream_sync_wait(struct accel_stream_impl *s, uint64_t deadline)
{
	int ret;

	do {
		ret = stream_sync_tail(s, deadline);
		if (ret == -EAGAIN)
			ret = stream_sync_full(s, deadline);
	} while (ret == -EAGAIN);
	return ret;
}

ACCEL_EXPORT
int accel_stream_synchronize(accel_stream_t stream, uint64_t timeout_ns)
{
	ACCEL_API_ENTER();
	struct accel_stream_sync ss;
	struct accel_stream_impl *s;
	int ret;

	ret = accel_stream_get(stream, &s);
	if (ret)
		return ret;
	if (timeout_ns && accel_in_host_fn()) {
		accel_stream_put(s);
		return -EDEADLK;
	}
	memset(&ss, 0, sizeof(ss));
	ss.handle = s->kstream;
	ss.timeout_ns = accel_deadline(timeout_ns);
	/* A first look (cuda: polling the device meanwhile), then a wait. */
	ret = s->child.ctx->backend->wait_fast(s->child.ctx, stream_sync_poll,
					       &ss, ss.timeout_ns);
	if (ret == -ETIME && timeout_ns)
		ret = stream_sync_wait(s, ss.timeout_ns);
	/* A synchronization point: the pool gives back what is idle. */
	if (!ret)
		accel_pool_sync(s->child.ctx);
	/* The wait saw the failure: the stream's sticky error says which. */
	if (ret == -EIO)
		accel_stream_error(s);
	accel_stream_put(s);
	return ret;
}

int accel_failed_errno(int error)
{
	if (!error)
		return 0;
	if (error == -EIO)
		accel_set_error("the stream failed earlier: an operation queued on it failed, or a host event it waited for was signalled with ACCEL_EVENT_SIGNAL_ERROR (%d); every later call on it fails -EIO",
				error);
	else if (error == -EFAULT)
		accel_set_error("the stream failed earlier: %s (%d): an operation queued on it found its memory gone (a registered or pageable range unmapped before the operation ran)",
				strerror(-error), error);
	else
		accel_set_error("the stream failed earlier: %s (%d)",
				strerror(-error), error);
	return -EIO;
}

int accel_kstream_query(struct accel_ctx *ctx, uint32_t kstream,
			struct accel_stream_query *q)
{
	memset(q, 0, sizeof(*q));
	q->handle = kstream;
	return accel_ioctl(ctx, ACCEL_IOC_STREAM_QUERY, q);
}

/* The stream's sticky error (-EIO once it failed), or 0. */
int accel_stream_error(struct accel_stream_impl *s)
{
	struct accel_stream_query q;
	int ret;

	ret = accel_kstream_query(s->child.ctx, s->kstream, &q);
	return ret ? ret : accel_failed_errno(q.error);
}

/*
 * What @stream was created with, for the getters (a NULL output is not
 * asked for): 0, or the lookup's error, or the stream's sticky one.
 */
static int stream_attrs(accel_stream_t stream, int *priority,
			unsigned int *flags)
{
	struct accel_stream_impl *s;
	int ret;

	ret = accel_stream_get(stream, &s);
	if (ret)
		return ret;
	ret = accel_stream_error(s);
	if (!ret && priority)
		*priority = s->priority;
	if (!ret && flags)
		*flags = s->flags;
	accel_stream_put(s);
	return ret;
}

ACCEL_EXPORT
int accel_stream_get_priority(accel_stream_t stream, int *priority)
{
	ACCEL_API_ENTER();

	if (!priority)
		return -EINVAL;
	return stream_attrs(stream, priority, NULL);
}

ACCEL_EXPORT
int accel_stream_get_flags(accel_stream_t stream, unsigned int *flags)
{
	ACCEL_API_ENTER();

	if (!flags)
		return -EINVAL;
	return stream_attrs(stream, NULL, flags);
}

int accel_submit(struct accel_ctx *ctx, uint32_t kstream,
		 const struct accel_desc *descs, uint32_t count, uint64_t *seq)
{
	struct accel_submit sub;
	int ret;

	ret = accel_ctx_queueing(ctx);
	if (ret)
		return ret;
	ctx->backend->mark_submit(ctx);
	memset(&sub, 0, sizeof(sub));
	sub.stream = kstream;
	sub.count = count;
	sub.descs = (uint64_t)(uintptr_t)descs;
	ret = accel_ioctl(ctx, ACCEL_IOC_SUBMIT, &sub);
	if (!ret && seq)
		*seq = sub.seq;
	else if (ret == -EAGAIN)
		accel_set_error("stream %u's queue is full: it holds at most %u descriptors not yet retired, and %u more did not fit; synchronize it (or wait for an event on it) and queue again",
				kstream, ctx->info.queue_depth, count);
	return ret;
}

int accel_kevent_create(struct accel_ctx *ctx, uint32_t flags,
			uint32_t *handle)
{
	struct accel_event_create ec = { .flags = flags };
	int ret;

	ret = accel_ioctl(ctx, ACCEL_IOC_EVENT_CREATE, &ec);
	if (!ret)
		*handle = ec.handle;
	else if (ret == -ENOSPC)
		accel_set_error("the context has all its %u events in use, those libaccel keeps for host functions and pageable copies included (see LIMITS in libaccel(7)): destroy events",
				ctx->info.max_events);
	return ret;
}

int accel_kevent_destroy(struct accel_ctx *ctx, uint32_t handle)
{
	struct accel_handle h = { .handle = handle };

	return accel_ioctl(ctx, ACCEL_IOC_EVENT_DESTROY, &h);
}

int accel_kevent_query(struct accel_ctx *ctx, uint32_t kevent,
		       struct accel_event_query *q)
{
	memset(q, 0, sizeof(*q));
	q->handle = kevent;
	return accel_ioctl(ctx, ACCEL_IOC_EVENT_QUERY, q);
}

int accel_kwait(struct accel_ctx *ctx, struct accel_wait_entry *ents,
		uint32_t count, uint32_t flags, uint64_t timeout_ns,
		uint32_t *first)
{
	struct accel_wait w;
	int ret;

	memset(&w, 0, sizeof(w));
	w.entries = (uint64_t)(uintptr_t)ents;
	w.count = count;
	w.flags = flags;
	w.timeout_ns = accel_deadline(timeout_ns);
	do {
		ret = accel_ioctl(ctx, ACCEL_IOC_WAIT, &w);
	} while (ret == -EINTR);
	if ((!ret || ret == -EIO) && first)
		*first = w.first_signaled;
	return ret;
}

/* WAIT until absolute @until (0: a poll): -ETIME while not satisfied. */
static int kwait_poll(struct accel_ctx *ctx, void *arg, uint64_t until)
{
	struct accel_wait *w = arg;
	uint64_t deadline = w->timeout_ns;
	int ret;

	w->timeout_ns = until;
	ret = accel_ioctl(ctx, ACCEL_IOC_WAIT, w);
	w->timeout_ns = deadline;
	return ret;
}

/* accel_kwait() for a user's wait: polls the device first (cuda). */
int accel_kwait_user(struct accel_ctx *ctx, struct accel_wait_entry *ents,
		     uint32_t count, uint32_t flags, uint64_t timeout_ns,
		     uint32_t *first)
{
	return accel_kwait_user_until(ctx, ents, count, flags,
				      accel_deadline(timeout_ns), first);
}

int accel_kwait_user_until(struct accel_ctx *ctx,
			   struct accel_wait_entry *ents, uint32_t count,
			   uint32_t flags, uint64_t deadline, uint32_t *first)
{
	bool blocking = flags & ACCEL_KWAIT_BLOCKING;
	struct accel_wait w;
	int ret = -ETIME;

	/*
	 * The doom event is at 1: wait-all finds it satisfied, wait-any
	 * waits for 2, which never comes; failed, it ends either wait.
	 */
	memset(&ents[count], 0, sizeof(ents[count]));
	ents[count].event = ctx->doom;
	ents[count].value = (flags & ACCEL_WAIT_ALL) ? 1 : 2;
	memset(&w, 0, sizeof(w));
	w.entries = (uint64_t)(uintptr_t)ents;
	w.count = count + 1;
	w.flags = flags & ~ACCEL_KWAIT_BLOCKING;
	w.timeout_ns = deadline;
	/* Blocking sync: straight to the transport's sleep, no polling. */
	if (!blocking)
		ret = ctx->backend->wait_fast(ctx, kwait_poll, &w, w.timeout_ns);
	while (ret == -ETIME || ret == -EINTR) {
		ret = accel_ioctl(ctx, ACCEL_IOC_WAIT, &w);
		if (ret != -EINTR)
			break;
	}
	ctx->backend->trace_wait(ctx);
	if (ret == -EIO && w.first_signaled == count) {
		accel_set_error("the context was destroyed during the wait");
		return -ENOENT;
	}
	if ((!ret || ret == -EIO) && first)
		*first = w.first_signaled;
	return ret;
}

/*
 * The context's doom event, created at 1 (see accel_kwait_user()); 0 or
 * -errno.
 */
int accel_doom_init(struct accel_ctx *ctx)
{
	struct accel_event_signal sg;
	int ret;

	ret = accel_kevent_create(ctx, ACCEL_EVENT_USER, &ctx->doom);
	if (ret)
		return ret;
	memset(&sg, 0, sizeof(sg));
	sg.handle = ctx->doom;
	sg.value = 1;
	ret = accel_ioctl(ctx, ACCEL_IOC_EVENT_SIGNAL, &sg);
	if (ret)
		accel_kevent_destroy(ctx, ctx->doom);
	return ret;
}

/* accel_context_destroy(): every user's wait on @ctx returns -ENOENT. */
void accel_doom(struct accel_ctx *ctx)
{
	struct accel_event_signal sg;

	memset(&sg, 0, sizeof(sg));
	sg.handle = ctx->doom;
	sg.value = 1;
	sg.flags = ACCEL_SIGNAL_ERROR;
	accel_ioctl(ctx, ACCEL_IOC_EVENT_SIGNAL, &sg);
}
