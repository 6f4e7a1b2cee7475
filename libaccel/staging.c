// SPDX-License-Identifier: MIT
/*
 * The staging pool (staging.h): a few pinned chunks per context, reused,
 * through which every pageable copy goes in pieces of at most one chunk.
 *
 * Each chunk has a user event, its counter, that the streams' HOST_WAITs
 * name, and a plain event recorded after the last copy that named it (its
 * point). One piece of H2D (pageable source) is, on its stream,
 *
 *   [HOST_WAIT counter >= v]  COPY chunk -> dst  EVENT_RECORD point
 *
 * where the HOST_WAIT is left out when the chunk was free at enqueue and
 * the caller filled it itself. Otherwise the source is kept in unpinned
 * memory and the chunk's worker, once the previous point has passed,
 * fills the chunk and raises the counter to v. One piece of D2H (pageable
 * destination) is
 *
 *   [HOST_WAIT counter >= v1]  COPY src -> chunk  EVENT_RECORD point
 *   HOST_WAIT counter >= v2
 *
 * and the worker, once the point has passed, copies the chunk out and
 * raises the counter to v2, so that the stream (and whoever synchronizes
 * on it) goes on only after the bytes are in the destination.
 *
 * Counter values are handed out in the order the pieces are queued on the
 * transport (the pool lock is held across the submit), and each worker
 * runs its chunk's jobs in that order, so a job only ever waits for work
 * queued before it: nothing in the pool waits for the caller.
 *
 * Lock order: pool->lock, then the transport's and the cuda backend's own
 * locks (a submit, an event ioctl, pinning a chunk, all under it).
 * ctx->lock is never taken with pool->lock held. Workers hold no lock
 * while they wait or copy.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/resource.h>

#include "accel_int.h"
#include "staging.h"

#define STAGING_CHUNKS		4
#define STAGING_CHUNK_KB	4096
#define STAGING_MAX_CHUNKS	64

struct stage_job {
	struct stage_job *next;
	uint32_t prev_point;	/* the chunk's last use must pass it, or 0 */
	void *spill;		/* fill the chunk with these bytes, or NULL */
	size_t len;
	uint64_t ready;		/* raise the counter to it once filled, or 0 */
	uint32_t point;		/* D2H: the copy into the chunk */
	void *dst;		/* D2H: the pageable destination, or NULL */
	uint64_t drained;	/* D2H: raise the counter to it once copied out */
	uint32_t kstream;	/* for the ACCEL_CHECK report */
};

struct stage_chunk {
	struct accel_staging *pool;
	struct accel_region r;	/* pinned, HOST_ALLOC, not in the table */
	uint32_t counter;	/* user event */
	uint64_t assigned;	/* last counter value handed out */
	uint32_t point;		/* after the last copy naming the chunk, or 0 */
	uint32_t kstream;	/* the stream of the last piece handed it */
	struct stage_job *head, *tail;
	bool running;		/* the worker is in a job */
	pthread_t thread;
};

struct accel_staging {
	struct accel_ctx *ctx;
	size_t chunk_size;
	unsigned int max_chunks;
	uint32_t doorbell;	/* user event, raised once: stop */

	/* Protects everything below. */
	pthread_mutex_t lock;
	pthread_cond_t cond;	/* a job was queued, or stop */
	bool stopping;
	bool joined;		/* stop ran: the workers are gone */
	bool full;		/* pinning another chunk failed: no more */
	unsigned int nchunks, next;
	uint32_t *points;	/* recorded and passed: free for reuse */
	unsigned int npoints, cap_points;
	struct stage_chunk chunks[STAGING_MAX_CHUNKS];
};

static unsigned long env_ulong(const char *name, unsigned long def,
			       unsigned long lo, unsigned long hi)
{
	const char *v = getenv(name);
	unsigned long n;
	char *end;

	if (!v || !*v)
		return def;
	n = strtoul(v, &end, 10);
	if (*end || n < lo || n > hi)
		return def;
	return n;
}

void accel_pin_error(struct accel_ctx *ctx, size_t bytes, const char *what)
{
	unsigned long long max = ctx->info.max_pinned_bytes;
	struct rlimit rl;
	bool rlim;

	/*
	 * RLIMIT_MEMLOCK binds a user without CAP_IPC_LOCK; euid 0 stands
	 * for that capability here (a guess for other capability sets).
	 */
	rlim = !getrlimit(RLIMIT_MEMLOCK, &rl) && geteuid() &&
	       rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < max;
	if (rlim)
		accel_set_error("cannot pin %zu bytes for %s: RLIMIT_MEMLOCK is %llu KiB for this user (raise it with ulimit -l, LimitMEMLOCK= or limits.conf memlock, or lower ACCEL_STAGING_CHUNK_KB)",
				bytes, what,
				(unsigned long long)rl.rlim_cur >> 10);
	else
		accel_set_error("cannot pin %zu bytes for %s: the driver allows %llu MiB pinned per context (%s; or lower ACCEL_STAGING_CHUNK_KB)",
				bytes, what, max >> 20,
				strcmp(ctx->ops->name, "inproc") ?
				"raise the module parameter max_pinned_mb" :
				"raise ACCEL_INPROC_MAX_PINNED_MB");
}

/* ------------------------------------------------------------------ */
/* Events                                                              */
/* ------------------------------------------------------------------ */

static int point_get_locked(struct accel_staging *p, uint32_t *ev)
{
	if (p->npoints) {
		*ev = p->points[--p->npoints];
		return 0;
	}
	return accel_kevent_create(p->ctx, 0, ev);
}

static void point_put_locked(struct accel_staging *p, uint32_t ev)
{
	if (p->npoints == p->cap_points) {
		unsigned int cap = p->cap_points ? 2 * p->cap_points : 16;
		uint32_t *n = realloc(p->points, cap * sizeof(*n));

		if (!n) {
			accel_kevent_destroy(p->ctx, ev);
			return;
		}
		p->points = n;
		p->cap_points = cap;
	}
	p->points[p->npoints++] = ev;
}

static void point_put(struct accel_staging *p, uint32_t ev)
{
	pthread_mutex_lock(&p->lock);
	point_put_locked(p, ev);
	pthread_mutex_unlock(&p->lock);
}

static bool point_passed(struct accel_ctx *ctx, uint32_t ev)
{
	struct accel_event_query q;

	memset(&q, 0, sizeof(q));
	q.handle = ev;
	if (accel_ioctl(ctx, ACCEL_IOC_EVENT_QUERY, &q))
		return false;
	return q.state == ACCEL_EVENT_STATE_COMPLETE;
}

static void raise_counter(struct accel_ctx *ctx, uint32_t ev, uint64_t v)
{
	struct accel_event_signal sg = { .handle = ev, .value = v };

	accel_ioctl(ctx, ACCEL_IOC_EVENT_SIGNAL, &sg);
}

/*
 * Wait until @ev has passed: 0, -EIO when its stream failed before it
 * (the copies naming the chunk will never run), -ECANCELED on stop.
 */
static int point_wait(struct accel_staging *p, uint32_t ev)
{
	struct accel_wait_entry ents[2];
	uint32_t first = 0;
	int ret;

	memset(ents, 0, sizeof(ents));
	ents[0].event = p->doorbell;
	ents[0].value = 1;
	ents[1].event = ev;
	ret = accel_kwait(p->ctx, ents, 2, 0, ACCEL_TIMEOUT_INFINITE, &first);
	if ((!ret || ret == -EIO) && first == 0)
		return -ECANCELED;
	return ret == -EIO ? -EIO : 0;
}

/* ------------------------------------------------------------------ */
/* Workers                                                             */
/* ------------------------------------------------------------------ */

static void job_free(struct stage_job *job)
{
	free(job->spill);
	free(job);
}

static void job_run(struct stage_chunk *c, struct stage_job *job)
{
	struct accel_staging *p = c->pool;
	int ret;

	if (job->prev_point) {
		if (point_wait(p, job->prev_point) == -ECANCELED)
			return;
		point_put(p, job->prev_point);
	}
	if (job->spill)
		memcpy((void *)c->r.base, job->spill, job->len);
	if (job->ready)
		raise_counter(p->ctx, c->counter, job->ready);
	if (!job->dst)
		return;
	ret = point_wait(p, job->point);
	if (ret == -ECANCELED)
		return;
	point_put(p, job->point);
	/*
	 * The promise covers sources: a destination freed before the copy
	 * finished is undefined (as in CUDA), but never a crash here.
	 */
	if (!ret && accel_copy_checked(job->dst, (void *)c->r.base, job->len))
		accel_check_dst_gone(job->dst, job->len, job->kstream);
	raise_counter(p->ctx, c->counter, job->drained);
}

static void *chunk_worker(void *arg)
{
	struct stage_chunk *c = arg;
	struct accel_staging *p = c->pool;
	struct stage_job *job;

	pthread_mutex_lock(&p->lock);
	for (;;) {
		if (p->stopping)
			break;
		job = c->head;
		if (!job) {
			pthread_cond_wait(&p->cond, &p->lock);
			continue;
		}
		c->head = job->next;
		if (!c->head)
			c->tail = NULL;
		c->running = true;
		pthread_mutex_unlock(&p->lock);
		job_run(c, job);
		job_free(job);
		pthread_mutex_lock(&p->lock);
		c->running = false;
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

/* ------------------------------------------------------------------ */
/* The pool                                                            */
/* ------------------------------------------------------------------ */

static struct accel_staging *pool_get(struct accel_ctx *ctx)
{
	struct accel_staging *p, *old;
	int ret;

	p = __atomic_load_n(&ctx->staging, __ATOMIC_ACQUIRE);
	if (p)
		return p;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->ctx = ctx;
	p->chunk_size = env_ulong("ACCEL_STAGING_CHUNK_KB", STAGING_CHUNK_KB,
				  4, 1UL << 20) << 10;
	p->chunk_size = (p->chunk_size + (size_t)ctx->page_size - 1) &
			~((size_t)ctx->page_size - 1);
	p->max_chunks = env_ulong("ACCEL_STAGING_CHUNKS", STAGING_CHUNKS, 1,
				  STAGING_MAX_CHUNKS);
	ret = accel_kevent_create(ctx, ACCEL_EVENT_USER, &p->doorbell);
	if (ret) {
		free(p);
		return NULL;
	}
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->cond, NULL);

	pthread_mutex_lock(&ctx->lock);
	old = ctx->staging;
	if (!old && !ctx->dead)
		__atomic_store_n(&ctx->staging, p, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&ctx->lock);
	if (old || ctx->staging != p) {
		accel_kevent_destroy(ctx, p->doorbell);
		pthread_mutex_destroy(&p->lock);
		pthread_cond_destroy(&p->cond);
		free(p);
		return old;
	}
	return p;
}

/* Pin one more chunk and start its worker. */
static int chunk_add_locked(struct accel_staging *p)
{
	struct accel_ctx *ctx = p->ctx;
	struct stage_chunk *c = &p->chunks[p->nchunks];
	void *ptr;
	int ret;

	memset(c, 0, sizeof(*c));
	c->pool = p;
	c->r.kind = LA_REGION_HOST_ALLOC;
	ret = accel_bounce_alloc(ctx, p->chunk_size, &c->r.handle, &ptr,
				 &c->r.map_len);
	if (ret)
		return ret;
	c->r.base = (uintptr_t)ptr;
	c->r.size = p->chunk_size;
	/* Once per chunk: without it CUDA would stage the copy again. */
	ctx->backend->host_pin(ctx, &c->r);
	ret = accel_kevent_create(ctx, ACCEL_EVENT_USER, &c->counter);
	if (ret)
		goto err_release;
	ret = -pthread_create(&c->thread, NULL, chunk_worker, c);
	if (ret)
		goto err_counter;
	p->nchunks++;
	return 0;

err_counter:
	accel_kevent_destroy(ctx, c->counter);
err_release:
	accel_bounce_release(ctx, c->r.handle, ptr, c->r.map_len);
	return ret;
}

static bool chunk_free_locked(struct accel_staging *p, struct stage_chunk *c)
{
	if (c->head || c->running)
		return false;
	if (c->point) {
		if (!point_passed(p->ctx, c->point))
			return false;
		point_put_locked(p, c->point);
		c->point = 0;
	}
	return true;
}

/*
 * The chunk for the next piece on @kstream: a free one if there is one
 * (*now: the caller may use it at once), else one more pinned while the
 * pool may grow, else one whose last piece is on the same stream (waiting
 * for it adds no dependency the stream's order does not already have),
 * else the next in turn: then this stream's piece waits for another
 * stream's to reach the device (libaccel(7)).
 */
static int chunk_pick_locked(struct accel_staging *p, uint32_t kstream,
			     struct stage_chunk **out, bool *now)
{
	unsigned int i;
	int ret;

	for (i = 0; i < p->nchunks; i++) {
		struct stage_chunk *c = &p->chunks[(p->next + i) % p->nchunks];

		if (chunk_free_locked(p, c)) {
			p->next = (unsigned int)(c - p->chunks) + 1;
			*out = c;
			*now = true;
			return 0;
		}
	}
	if (p->nchunks < p->max_chunks && !p->full) {
		ret = chunk_add_locked(p);
		if (!ret) {
			*out = &p->chunks[p->nchunks - 1];
			*now = true;
			return 0;
		}
		/*
		 * A pinning limit: work with the chunks there are; with none
		 * yet, with smaller ones, down to a page.
		 */
		while (!p->nchunks && (ret == -ENOMEM || ret == -EAGAIN) &&
		       p->chunk_size > (size_t)p->ctx->page_size) {
			p->chunk_size = (p->chunk_size / 2 +
					 (size_t)p->ctx->page_size - 1) &
					~((size_t)p->ctx->page_size - 1);
			ret = chunk_add_locked(p);
		}
		if (!ret) {
			*out = &p->chunks[p->nchunks - 1];
			*now = true;
			return 0;
		}
		if (!p->nchunks) {
			if (ret == -ENOMEM || ret == -EAGAIN)
				accel_pin_error(p->ctx, p->chunk_size,
						"a staging chunk of pageable copies");
			return ret;
		}
		p->full = true;
	}
	for (i = 0; i < p->nchunks; i++) {
		struct stage_chunk *c = &p->chunks[(p->next + i) % p->nchunks];

		if (c->kstream == kstream) {
			*out = c;
			*now = false;
			return 0;
		}
	}
	*out = &p->chunks[p->next++ % p->nchunks];
	*now = false;
	return 0;
}

static void job_queue_locked(struct accel_staging *p, struct stage_chunk *c,
			     struct stage_job *job)
{
	if (c->tail)
		c->tail->next = job;
	else
		c->head = job;
	c->tail = job;
	pthread_cond_broadcast(&p->cond);
}

static void desc_copy(struct accel_desc *d, uint32_t dst, uint64_t doff,
		      uint32_t src, uint64_t soff, size_t len)
{
	memset(d, 0, sizeof(*d));
	d->op = ACCEL_OP_COPY;
	d->dst = dst;
	d->dst_offset = doff;
	d->src = src;
	d->src_offset = soff;
	d->length = len;
}

static void desc_event(struct accel_desc *d, uint32_t op, uint32_t ev,
		       uint64_t value)
{
	memset(d, 0, sizeof(*d));
	d->op = op;
	d->event = ev;
	d->value = value;
}

/*
 * One piece of at most *@lenp bytes (set to what it took, at most a
 * chunk): @src or @dst pageable (not both), already advanced to it.
 */
static int piece_locked(struct accel_staging *p, uint32_t kstream,
			const struct accel_stage_side *dst,
			const struct accel_stage_side *src, size_t *lenp,
			uint64_t *seq)
{
	struct stage_job *job = NULL;
	struct accel_desc d[4];
	struct stage_chunk *c;
	uint64_t assigned;
	uint32_t point, n = 0;
	bool now;
	int ret;

	size_t len;

	ret = chunk_pick_locked(p, kstream, &c, &now);
	if (ret)
		return ret;
	/* The pool's first chunk may have come out smaller than asked. */
	len = *lenp < c->r.size ? *lenp : c->r.size;
	*lenp = len;
	ret = point_get_locked(p, &point);
	if (ret)
		return ret;
	assigned = c->assigned;
	if (!now || dst->pageable) {
		job = calloc(1, sizeof(*job));
		if (!job)
			goto err_nomem;
		job->len = len;
		job->kstream = kstream;
	}
	if (!now) {
		job->prev_point = c->point;
		job->ready = ++c->assigned;
		desc_event(&d[n++], ACCEL_OP_HOST_WAIT, c->counter, job->ready);
	}
	if (src->pageable) {
		if (now) {
			memcpy((void *)c->r.base, src->ptr, len);
		} else {
			job->spill = malloc(len);
			if (!job->spill)
				goto err_nomem;
			memcpy(job->spill, src->ptr, len);
		}
		desc_copy(&d[n++], dst->handle, dst->offset, c->r.handle, 0,
			  len);
	} else {
		desc_copy(&d[n++], c->r.handle, 0, src->handle, src->offset,
			  len);
	}
	desc_event(&d[n++], ACCEL_OP_EVENT_RECORD, point, 0);
	if (dst->pageable) {
		job->point = point;
		job->dst = dst->ptr;
		job->drained = ++c->assigned;
		desc_event(&d[n++], ACCEL_OP_HOST_WAIT, c->counter,
			   job->drained);
	}
	ret = accel_submit(p->ctx, kstream, d, n, seq);
	if (ret) {
		c->assigned = assigned;
		if (job)
			job_free(job);
		point_put_locked(p, point);
		return ret;
	}
	if (dst->pageable) {
		/* The worker waits for the point: free once it drained. */
		c->point = 0;
	} else {
		c->point = point;
	}
	c->kstream = kstream;
	if (job)
		job_queue_locked(p, c, job);
	return 0;

err_nomem:
	c->assigned = assigned;
	if (job)
		job_free(job);
	point_put_locked(p, point);
	return -ENOMEM;
}

/* Both sides pageable: no device is involved, a host function copies. */
struct h2h_job {
	struct accel_ctx *ctx;
	void *dst;
	void *bytes;
	size_t len;
	uint32_t kstream;
};

static void h2h_drop(void *arg)
{
	struct h2h_job *j = arg;

	accel_ctx_put(j->ctx);
	free(j->bytes);
	free(j);
}

static void h2h_fn(void *arg)
{
	struct h2h_job *j = arg;

	if (accel_copy_checked(j->dst, j->bytes, j->len))
		accel_check_dst_gone(j->dst, j->len, j->kstream);
	h2h_drop(j);
}

static int h2h_copy(struct accel_ctx *ctx, uint32_t kstream, void *dst,
		    const void *src, size_t bytes)
{
	struct h2h_job *j;
	int ret;

	j = calloc(1, sizeof(*j));
	if (!j)
		return -ENOMEM;
	j->bytes = malloc(bytes);
	if (!j->bytes) {
		free(j);
		return -ENOMEM;
	}
	memcpy(j->bytes, src, bytes);
	j->ctx = ctx;
	j->dst = dst;
	j->len = bytes;
	j->kstream = kstream;
	accel_obj_ref(&ctx->obj);
	ret = accel_hostfn_launch_drop(ctx, kstream, h2h_fn, h2h_drop, j);
	if (ret)
		h2h_drop(j);
	return ret;
}

int accel_staging_copy(struct accel_ctx *ctx, uint32_t kstream,
		       const struct accel_stage_side *dst,
		       const struct accel_stage_side *src, size_t bytes,
		       uint64_t *seq)
{
	struct accel_stage_side d = *dst, s = *src;
	struct accel_staging *p;
	size_t done = 0, len;
	int ret = 0;

	if (dst->pageable && src->pageable)
		return h2h_copy(ctx, kstream, dst->ptr, src->ptr, bytes);
	p = pool_get(ctx);
	if (!p)
		return ctx->dead ? -ENOENT : -ENOMEM;
	pthread_mutex_lock(&p->lock);
	if (p->stopping)
		ret = -ENOENT;
	while (!ret && done < bytes) {
		len = bytes - done < p->chunk_size ? bytes - done :
						     p->chunk_size;
		if (d.pageable)
			d.ptr = (char *)dst->ptr + done;
		else
			d.offset = dst->offset + done;
		if (s.pageable)
			s.ptr = (char *)src->ptr + done;
		else
			s.offset = src->offset + done;
		ret = piece_locked(p, kstream, &d, &s, &len, seq);
		done += len;
	}
	pthread_mutex_unlock(&p->lock);
	return ret;
}

void accel_staging_stop(struct accel_ctx *ctx)
{
	struct accel_staging *p = ctx->staging;
	struct stage_job *job;
	unsigned int i;

	if (!p || p->joined)
		return;
	pthread_mutex_lock(&p->lock);
	p->stopping = true;
	pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->lock);
	raise_counter(ctx, p->doorbell, 1);
	for (i = 0; i < p->nchunks; i++) {
		struct stage_chunk *c = &p->chunks[i];

		pthread_join(c->thread, NULL);
		while ((job = c->head)) {
			c->head = job->next;
			job_free(job);
		}
		c->tail = NULL;
	}
	p->joined = true;
}

void accel_staging_teardown(struct accel_ctx *ctx)
{
	struct accel_staging *p = ctx->staging;
	unsigned int i;

	if (!p)
		return;
	for (i = 0; i < p->nchunks; i++) {
		struct stage_chunk *c = &p->chunks[i];

		ctx->backend->region_teardown(ctx, &c->r);
	}
	pthread_mutex_destroy(&p->lock);
	pthread_cond_destroy(&p->cond);
	free(p->points);
	free(p);
	ctx->staging = NULL;
}
