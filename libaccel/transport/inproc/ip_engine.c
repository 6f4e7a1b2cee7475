// SPDX-License-Identifier: MIT
/*
 * The in-process transport: the copy engine. One worker thread per stream
 * runs the stream's queue in order, as the core's asc_engine_next() says;
 * streams run concurrently (the twin of driver/as_engine.c). A worker
 * waits while a more urgent stream of its context has runnable work
 * (asc_engine_outranked()); that stream's retirements wake it.
 */
#define _GNU_SOURCE
#include "ip.h"

/* Must @s leave the engine to a more urgent stream of its context? */
static bool ip_stream_outranked_locked(struct ip_stream *s)
{
	struct ip_ctx *c = s->ctx;
	struct ip_node *n;

	if (!c->priorities || s->priority == ASC_GREATEST_PRIORITY)
		return false;
	for (n = c->all_streams.next; n != &c->all_streams; n = n->next) {
		struct ip_stream *o = container_of(n, struct ip_stream, node);

		if (asc_engine_outranked(s->priority, o->priority, &o->tl,
					 &o->q, c->closing, c->executor))
			return true;
	}
	return false;
}

void ip_retire_locked(struct ip_stream *s, int status)
{
	struct ip_ctx *c = s->ctx;
	struct asc_release rel = { 0 };

	asc_retire_head(&s->tl, &s->q, status, now_ns(), &rel);
	ip_process_release(c, &rel);
	if (s->dead && !s->q.count)
		pthread_cond_broadcast(&c->exec_cond);
	if (!c->quiet_retire)
		pthread_cond_broadcast(&c->cond);
}

void *ip_stream_worker(void *arg)
{
	struct ip_stream *s = arg;
	struct ip_ctx *c = s->ctx;
	int status, step;

	pthread_mutex_lock(&c->lock);
	for (;;) {
		if (ip_stream_outranked_locked(s)) {
			pthread_cond_wait(&c->cond, &c->lock);
			continue;
		}
		step = asc_engine_next(&s->tl, &s->q, c->closing, c->executor,
				       &status);
		if (step == ASC_STEP_IDLE) {
			if (!s->q.count && (s->dead || c->closing))
				break;
			/* The executor fetches and completes; we only wait. */
			pthread_cond_wait(c->executor ? &c->exec_cond : &c->cond,
					  &c->lock);
			continue;
		}
		if (step == ASC_STEP_BLOCKED) {
			pthread_cond_wait(&c->cond, &c->lock);
			continue;
		}
		if (step == ASC_STEP_COPY) {
			struct asc_entry *e = asc_queue_peek(&s->q);
			struct ip_region *dst = container_of(e->dst,
							     struct ip_region, core);
			struct ip_region *src = container_of(e->src,
							     struct ip_region, core);
			unsigned char *d = dst->base + e->desc.dst_offset;
			const unsigned char *from = src->base + e->desc.src_offset;
			/*
			 * A registered range is the user's mapping: unlike the
			 * module's pinned pages it goes with munmap (after a
			 * deferred unregister, say). Copy it checked: such a
			 * copy fails with -EFAULT instead of crashing.
			 */
			bool user = dst->core.kind == IP_REGION_USER ||
				    src->core.kind == IP_REGION_USER;

			s->copying = true;
			pthread_mutex_unlock(&c->lock);
			if (user)
				status = accel_copy_checked(d, from, e->desc.length);
			else
				memmove(d, from, e->desc.length);
			pthread_mutex_lock(&c->lock);
			s->copying = false;
		}
		ip_retire_locked(s, status);
	}
	s->exited = true;
	ip_stream_maybe_free_locked(s);
	pthread_cond_broadcast(&c->cond);
	pthread_mutex_unlock(&c->lock);
	return NULL;
}
