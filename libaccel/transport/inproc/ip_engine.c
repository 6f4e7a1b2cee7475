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

/* Must @s leave the engine to a more urgent stream of its device? */
static bool ip_stream_outranked_locked(struct ip_stream *s)
{
	struct ip_ctx *c = s->ctx;
	struct ip_node *n;

	if (!c->priorities || s->priority == ASC_GREATEST_PRIORITY)
		return false;
	for (n = c->all_streams.next; n != &c->all_streams; n = n->next) {
		struct ip_stream *o = container_of(n, struct ip_stream, node);

		if (o->dev == s->dev &&
		    asc_engine_outranked(s->priority, o->priority, &o->tl,
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
	if (s->exports.next != &s->exports)
		ip_export_retired_locked(s);
	ip_ctx_count_retired_locked(c, 1);
	if (s->dead && !s->q.count)
		pthread_cond_broadcast(&c->exec_cond);
	if (!c->quiet_retire)
		pthread_cond_broadcast(&c->cond);
}

/*
 * A registered range is the user's mapping: unlike the module's pinned
 * pages it goes with munmap (after a deferred unregister, say). Copy it
 * checked: such a copy fails with -EFAULT instead of crashing.
 */
static int ip_move(unsigned char *d, const unsigned char *from, size_t len,
		   bool user)
{
	if (user)
		return accel_copy_checked(d, from, len);
	memmove(d, from, len);
	return 0;
}

/* MEMSET: the core's pattern, through a buffer when the memory is the user's. */
static int ip_memset(unsigned char *d, const struct accel_desc *desc,
		     bool user)
{
	u32 width = asc_memset_width(desc);
	unsigned char pat[4096];
	u64 done, n;
	int ret = 0;

	if (!user) {
		asc_memset_fill(d, desc->length, (u32)desc->value, width, 0);
		return 0;
	}
	/* 4096 is a multiple of every element size: each piece starts one. */
	asc_memset_fill(pat, sizeof(pat), (u32)desc->value, width, 0);
	for (done = 0; !ret && done < desc->length; done += n) {
		n = desc->length - done < sizeof(pat) ? desc->length - done :
							sizeof(pat);
		ret = accel_copy_checked(d + done, pat, n);
	}
	return ret;
}

/* Run a COPY, MEMSET or COPY_2D the core said to perform; 0 or -EFAULT. */
static int ip_engine_copy(const struct asc_entry *e)
{
	const struct accel_desc *desc = &e->desc;
	struct ip_region *dst = container_of(e->dst, struct ip_region, core);
	struct ip_region *src = e->src ?
		container_of(e->src, struct ip_region, core) : NULL;
	unsigned char *d = dst->base + desc->dst_offset;
	const unsigned char *from = src ? src->base + desc->src_offset : NULL;
	bool user = dst->core.kind == IP_REGION_USER ||
		    (src && src->core.kind == IP_REGION_USER);
	u64 row;
	int ret = 0;

	switch (desc->op) {
	case ACCEL_OP_MEMSET:
		return ip_memset(d, desc, user);
	case ACCEL_OP_COPY_2D:
		/* Validated: every row lies inside both regions. */
		for (row = 0; !ret && row < desc->height; row++)
			ret = ip_move(d + row * desc->dst_pitch,
				      from + row * desc->src_pitch,
				      desc->width, user);
		return ret;
	default:
		return ip_move(d, from, desc->length, user);
	}
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

			s->copying = true;
			pthread_mutex_unlock(&c->lock);
			status = ip_engine_copy(e);
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
