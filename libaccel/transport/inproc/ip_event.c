// SPDX-License-Identifier: MIT
/*
 * The in-process transport: events and host waits (the twin of
 * driver/as_event.c).
 */
#define _GNU_SOURCE
#include "ip.h"

int ip_event_create(struct ip_ctx *c, void *arg)
{
	struct accel_event_create *ec = arg;
	struct ip_event *ev;
	int ret;

	ret = asc_check_event_create(ec);
	if (ret)
		return ret;
	ev = calloc(1, sizeof(*ev));
	if (!ev)
		return -ENOMEM;
	node_init(&ev->node);
	asc_event_init(&ev->core, ec->flags);
	pthread_mutex_lock(&c->lock);
	ret = ip_idr_alloc(&c->events, ev, ASC_MAX_EVENTS, &ev->handle);
	if (!ret) {
		node_add(&c->all_events, &ev->node);
		ec->handle = ev->handle;
	}
	pthread_mutex_unlock(&c->lock);
	if (ret)
		free(ev);
	return ret;
}

int ip_event_destroy(struct ip_ctx *c, void *arg)
{
	struct accel_handle *h = arg;
	struct asc_release rel = { 0 };
	struct ip_event *ev;
	int ret;

	ret = asc_check_handle(h);
	if (ret)
		return ret;
	pthread_mutex_lock(&c->lock);
	ev = ip_idr_find(&c->events, h->handle);
	if (!ev) {
		ret = -ENOENT;
		goto out;
	}
	ret = asc_event_destroy(&ev->core, &rel);
	if (ret)
		goto out;
	ip_idr_remove(&c->events, h->handle);
	ip_process_release(c, &rel);
out:
	pthread_mutex_unlock(&c->lock);
	return ret;
}

int ip_event_record(struct ip_ctx *c, void *arg)
{
	struct accel_event_record *r = arg;
	struct accel_desc d;
	u64 seq = 0;
	int ret;

	ret = asc_check_event_record(r, &d);
	if (!ret)
		ret = ip_submit_descs(c, r->stream, &d, 1, &seq);
	if (!ret)
		r->seq = seq;
	return ret;
}

int ip_event_query(struct ip_ctx *c, void *arg)
{
	struct accel_event_query *q = arg;
	struct ip_event *ev;
	u32 stream = 0;
	int ret;

	ret = asc_check_event_query(q);
	if (ret)
		return ret;
	pthread_mutex_lock(&c->lock);
	ev = ip_idr_find(&c->events, q->handle);
	if (!ev) {
		pthread_mutex_unlock(&c->lock);
		return -ENOENT;
	}
	if (ev->core.point.tl && !ev->core.point.tl->import) {
		struct ip_stream *s = container_of(ev->core.point.tl,
						   struct ip_stream, tl);

		stream = s->dead ? 0 : s->handle;
	}
	asc_event_query_fill(q, q->handle, &ev->core, stream);
	pthread_mutex_unlock(&c->lock);
	return 0;
}

int ip_event_elapsed(struct ip_ctx *c, void *arg)
{
	struct accel_event_elapsed *el = arg;
	struct ip_event *a, *b;
	s64 ns = 0;
	int ret;

	pthread_mutex_lock(&c->lock);
	a = ip_idr_find(&c->events, el->start);
	b = ip_idr_find(&c->events, el->end);
	if (!a || !b) {
		ret = -ENOENT;
	} else {
		ret = asc_event_elapsed(&a->core, &b->core, &ns);
		if (!ret)
			el->elapsed_ns = ns;
	}
	pthread_mutex_unlock(&c->lock);
	return ret;
}

int ip_event_signal(struct ip_ctx *c, void *arg)
{
	struct accel_event_signal *sg = arg;
	struct ip_event *ev;
	bool wake;
	int ret;

	ret = asc_check_event_signal(sg);
	if (ret)
		return ret;
	pthread_mutex_lock(&c->lock);
	ev = ip_idr_find(&c->events, sg->handle);
	ret = asc_event_signal_user(ev ? &ev->core : NULL, sg, &wake);
	if (wake)
		pthread_cond_broadcast(&c->cond);
	pthread_mutex_unlock(&c->lock);
	return ret;
}

int ip_wait(struct ip_ctx *c, void *arg)
{
	struct accel_wait *w = arg;
	struct accel_wait_entry *ents;
	struct asc_wait_item *items;
	struct asc_release rel = { 0 };
	u32 i, n = 0, first = 0;
	int ret;

	ret = asc_check_wait(w, ASC_MAX_WAIT);
	if (ret)
		return ret;
	ents = malloc(w->count * sizeof(*ents));
	items = calloc(w->count, sizeof(*items));
	if (!ents || !items) {
		ret = -ENOMEM;
		goto out_free;
	}
	ret = ip_copy_from_user(ents, w->entries, w->count * sizeof(*ents));
	for (i = 0; !ret && i < w->count; i++)
		ret = asc_check_wait_entry(&ents[i]);
	if (ret)
		goto out_free;

	/* Capture every point now: later records do not move the target. */
	pthread_mutex_lock(&c->lock);
	for (n = 0; n < w->count; n++) {
		struct ip_event *ev = ip_idr_find(&c->events, ents[n].event);

		ret = asc_wait_entry_validate(ev ? &ev->core : NULL, &ents[n]);
		if (ret)
			goto out_fini;
		asc_wait_item_init(&items[n], &ev->core, ents[n].value);
	}
	for (;;) {
		ret = asc_wait_check(items, n, w->flags & ACCEL_WAIT_ALL, &first);
		if (ret != -EAGAIN)
			break;
		ret = ip_ctx_wait(c, w->timeout_ns);
		if (ret)
			break;
	}
	if (!ret || ret == -EIO)
		w->first_signaled = first;
out_fini:
	for (i = 0; i < n; i++) {
		asc_wait_item_fini(&items[i], &rel);
		ip_process_release(c, &rel);
	}
	pthread_mutex_unlock(&c->lock);
out_free:
	free(items);
	free(ents);
	return ret;
}
