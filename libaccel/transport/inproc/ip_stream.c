// SPDX-License-Identifier: MIT
/*
 * The in-process transport: streams and descriptor submission (the twin
 * of driver/as_stream.c).
 */
#define _GNU_SOURCE
#include "ip.h"

void ip_stream_reap_locked(struct ip_ctx *c)
{
	struct ip_node *n, *next;

	for (n = c->all_streams.next; n != &c->all_streams; n = next) {
		struct ip_stream *s = container_of(n, struct ip_stream, node);

		next = n->next;
		if (!s->reap)
			continue;
		/* The worker set ->exited under the lock and only returns. */
		pthread_join(s->thread, NULL);
		node_del(&s->node);
		free(s);
	}
}

void ip_stream_maybe_free_locked(struct ip_stream *s)
{
	if (s->dead && s->exited && !s->tl.refs)
		s->reap = true;
}

int ip_stream_create(struct ip_ctx *c, void *arg)
{
	struct accel_stream_create *sc = arg;
	struct ip_stream *s;
	int ret;

	ret = asc_check_stream_create(sc);
	if (ret)
		return ret;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	node_init(&s->node);
	node_init(&s->exports);
	s->ctx = c;
	s->flags = sc->flags;
	s->priority = asc_clamp_priority(sc->priority);

	pthread_mutex_lock(&c->lock);
	ip_stream_reap_locked(c);
	s->dev = c->device;
	ret = ip_idr_alloc(&c->streams, s, ASC_MAX_STREAMS, &s->handle);
	if (ret)
		goto err_unlock;
	if (pthread_create(&s->thread, NULL, ip_stream_worker, s)) {
		ip_idr_remove(&c->streams, s->handle);
		ret = -ENOMEM;
		goto err_unlock;
	}
	node_add(&c->all_streams, &s->node);
	if (s->priority != ASC_LEAST_PRIORITY)
		c->priorities = true;
	s->tl.id = s->handle;
	sc->handle = s->handle;
	pthread_mutex_unlock(&c->lock);
	return 0;

err_unlock:
	pthread_mutex_unlock(&c->lock);
	free(s);
	return ret;
}

int ip_stream_destroy(struct ip_ctx *c, void *arg)
{
	struct accel_handle *h = arg;
	struct ip_stream *s;
	int ret;

	ret = asc_check_handle(h);
	if (ret)
		return ret;
	pthread_mutex_lock(&c->lock);
	s = ip_idr_find(&c->streams, h->handle);
	if (!s) {
		ret = -ENOENT;
	} else {
		ip_idr_remove(&c->streams, h->handle);
		s->dead = true;
		pthread_cond_broadcast(&c->cond);
		pthread_cond_broadcast(&c->exec_cond);
	}
	pthread_mutex_unlock(&c->lock);
	return ret;
}

int ip_stream_query(struct ip_ctx *c, void *arg)
{
	struct accel_stream_query *q = arg;
	struct ip_stream *s;
	int ret;

	ret = asc_check_stream_query(q);
	if (ret)
		return ret;
	pthread_mutex_lock(&c->lock);
	s = ip_idr_find(&c->streams, q->handle);
	if (!s)
		ret = -ENOENT;
	else
		asc_stream_query_fill(q, q->handle, &s->tl, &s->q, s->flags,
				      s->priority);
	pthread_mutex_unlock(&c->lock);
	return ret;
}

int ip_stream_sync(struct ip_ctx *c, void *arg)
{
	struct accel_stream_sync *ss = arg;
	struct asc_release rel = { 0 };
	struct ip_stream *s;
	u64 seq;
	int ret;

	ret = asc_check_stream_sync(ss);
	if (ret)
		return ret;
	pthread_mutex_lock(&c->lock);
	s = ip_idr_find(&c->streams, ss->handle);
	if (!s) {
		ret = -ENOENT;
		goto out;
	}
	ret = asc_sync_target(&s->tl, ss->seq, &seq);
	if (ret || !seq)
		goto out;
	/* Keep the timeline while we sleep, even if the handle dies. */
	s->tl.refs++;
	for (;;) {
		ret = asc_timeline_check_sync(&s->tl, seq);
		if (ret != -EAGAIN)
			break;
		ret = ip_ctx_wait(c, ss->timeout_ns);
		if (ret)
			break;
	}
	if (--s->tl.refs == 0)
		ip_stream_maybe_free_locked(s);
	ip_process_release(c, &rel);
out:
	pthread_mutex_unlock(&c->lock);
	return ret;
}

/*
 * Look up the handles of one descriptor (handle 0 finds nothing: the
 * fields an op does not use are zero); the core judges what was found.
 */
static void resolve_locked(struct ip_ctx *c, struct asc_entry *e)
{
	struct ip_region *dst = ip_idr_find(&c->regions, e->desc.dst);
	struct ip_region *src = ip_idr_find(&c->regions, e->desc.src);
	struct ip_event *ev = ip_idr_find(&c->events,
					  asc_desc_event(&e->desc));

	e->dst = dst ? &dst->core : NULL;
	e->src = src ? &src->core : NULL;
	e->event = ev ? &ev->core : NULL;
}

static int submit_locked(struct ip_ctx *c, u32 stream, struct asc_batch *b,
			 u64 *seq)
{
	struct asc_release rel = { 0 };
	struct ip_stream *s = ip_idr_find(&c->streams, stream);
	u32 i;
	int ret;

	for (i = 0; i < b->count; i++)
		resolve_locked(c, &b->ents[i]);
	ret = asc_submit_admit(s ? &s->tl : NULL, s ? &s->q : NULL, b,
			       c->executor);
	if (ret)
		return ret;
	for (i = 0; i < b->count; i++) {
		asc_enqueue(&s->tl, &s->q, &b->ents[i], &rel);
		ip_process_release(c, &rel);
	}
	*seq = s->tl.submitted;
	pthread_cond_broadcast(&c->cond);
	return 0;
}

/* Queue @count shape-checked descriptors (in our memory) on @stream. */
int ip_submit_descs(struct ip_ctx *c, u32 stream,
		    const struct accel_desc *descs, u32 count, u64 *seq)
{
	struct asc_batch *b;
	int ret;

	b = malloc(sizeof(*b) + count * sizeof(b->ents[0]));
	if (!b)
		return -ENOMEM;
	asc_batch_init(b, descs, count);
	pthread_mutex_lock(&c->lock);
	ret = submit_locked(c, stream, b, seq);
	pthread_mutex_unlock(&c->lock);
	if (ret)
		free(b);
	return ret;
}

int ip_submit(struct ip_ctx *c, void *arg)
{
	struct accel_submit *s = arg;
	struct accel_desc *descs;
	u64 seq = 0;
	u32 i;
	int ret;

	ret = asc_check_submit(s, ASC_MAX_SUBMIT);
	if (ret)
		return ret;
	descs = ip_buf_get(&c->desc_buf, s->count, sizeof(*descs),
			IP_BUF_CACHE);
	if (!descs)
		return -ENOMEM;
	ret = ip_copy_from_user(descs, s->descs, s->count * sizeof(*descs));
	for (i = 0; !ret && i < s->count; i++)
		ret = asc_check_desc(&descs[i]);
	if (!ret)
		ret = ip_submit_descs(c, s->stream, descs, s->count, &seq);
	ip_buf_put(&c->desc_buf, descs, s->count, IP_BUF_CACHE);
	if (!ret)
		s->seq = seq;
	return ret;
}
