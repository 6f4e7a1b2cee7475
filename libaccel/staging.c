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
 * A piece takes a free chunk and the caller fills it at once. With every
 * chunk busy, the caller waits (pool lock dropped) for the oldest one's
 * copy to retire, as long as the stream moves: only a chunk that did not
 * come free within STAGING_WAIT_MS (the stream is gated, or behind other
 * work) makes this call's remaining pieces, and the stream's next calls
 * until that chunk is free, spill into unpinned memory.
 * Fills and copy-outs of more than FILL_SLICE_MIN * 2 bytes are split into
 * slices that the fill threads (ACCEL_STAGING_THREADS - 1 of them) copy
 * in parallel with the thread that asked, which takes slices too.
 *
 * Stream order across pageable copies: a D2H piece into pageable memory
 * (or a pageable-to-pageable copy) is an "out" until its bytes are in the
 * destination. A pageable source that overlaps an out of the same stream
 * is read at enqueue but for the overlapping bytes, which are read again
 * once that out is done (by the chunk's worker before it fills the chunk,
 * or by the host function of a pageable-to-pageable copy), never by the
 * caller: nothing waits for the stream, gated or not (libaccel(7)).
 *
 * Lock order: pool->lock, then pool->fill_lock, then the transport's and
 * the cuda backend's own locks (a submit, an event ioctl, pinning a chunk,
 * all under pool->lock). ctx->lock is never taken with pool->lock held.
 * Workers hold no lock while they wait or copy.
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
#define STAGING_THREADS		4
#define STAGING_MAX_THREADS	16
#define STAGING_WAIT_MS		10
#define FILL_SLICE_MIN		(256 << 10)

/* Bytes a pageable source shares with an unfinished out: read them late. */
struct stage_patch {
	size_t off, len;
};

/* A pending write into pageable memory (an "out"). */
struct stage_out {
	struct stage_out *next;
	uint64_t id;
	uintptr_t start, end;
	uint32_t kstream;
};

/* One parallel copy, cut into slices the fill threads take. */
struct fill_task {
	struct fill_task *next;
	char *dst;
	const char *src;
	size_t len, slice;
	unsigned int nslices, taken, done;
	bool checked, fault;
};

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
	struct stage_out *out;	/* D2H: this job's out, done once drained */
	const char *src;	/* H2D: the pageable source, for the patches */
	uint64_t dep;		/* H2D: outs up to this id must be done */
	struct stage_patch *patch;
	unsigned int npatch;
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
	uint32_t behind_stream;	/* its wait for behind_point timed out */
	uint32_t behind_point;
	unsigned int nchunks, next;
	uint32_t *points;	/* recorded and passed: free for reuse */
	unsigned int npoints, cap_points;
	struct stage_out *outs;	/* unfinished writes into pageable memory */
	uint64_t out_ids;
	pthread_cond_t out_cond;	/* an out is done, or stop */
	struct stage_chunk chunks[STAGING_MAX_CHUNKS];

	/* Protects the fill threads' queue, below. */
	pthread_mutex_t fill_lock;
	pthread_cond_t fill_cond;	/* a task was queued, or stop */
	pthread_cond_t fill_done;	/* a task's last slice was copied */
	struct fill_task *tasks;
	bool fill_stop;
	unsigned int nfill;
	pthread_t fill[STAGING_MAX_THREADS];
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
/* Parallel fills                                                      */
/* ------------------------------------------------------------------ */

static bool slice_copy(struct fill_task *t, unsigned int i)
{
	size_t off = (size_t)i * t->slice;
	size_t len = i + 1 == t->nslices ? t->len - off : t->slice;

	if (t->checked)
		return accel_copy_checked(t->dst + off, t->src + off, len) != 0;
	memcpy(t->dst + off, t->src + off, len);
	return false;
}

/* Take the next slice of the first task; fill_lock held, dropped inside. */
static void slice_take_locked(struct accel_staging *p, struct fill_task *t)
{
	unsigned int i = t->taken++;
	bool fault;

	if (t->taken == t->nslices) {
		struct fill_task **pp;

		for (pp = &p->tasks; *pp != t; pp = &(*pp)->next)
			;
		*pp = t->next;
	}
	pthread_mutex_unlock(&p->fill_lock);
	fault = slice_copy(t, i);
	pthread_mutex_lock(&p->fill_lock);
	t->fault |= fault;
	if (++t->done == t->nslices)
		pthread_cond_broadcast(&p->fill_done);
}

static void *fill_thread(void *arg)
{
	struct accel_staging *p = arg;

	pthread_mutex_lock(&p->fill_lock);
	while (!p->fill_stop) {
		if (!p->tasks) {
			pthread_cond_wait(&p->fill_cond, &p->fill_lock);
			continue;
		}
		slice_take_locked(p, p->tasks);
	}
	pthread_mutex_unlock(&p->fill_lock);
	return NULL;
}

/*
 * Copy @len bytes, in slices shared with the fill threads when it is
 * worth it; the calling thread copies too, so this never waits for a fill
 * thread that is not copying for it. @checked: through
 * accel_copy_checked() (a destination that may be gone). true on a fault.
 */
static bool par_copy(struct accel_staging *p, void *dst, const void *src,
		     size_t len, bool checked)
{
	struct fill_task t;

	if (!p->nfill || len < 2 * FILL_SLICE_MIN) {
		if (checked)
			return accel_copy_checked(dst, src, len) != 0;
		memcpy(dst, src, len);
		return false;
	}
	memset(&t, 0, sizeof(t));
	t.dst = dst;
	t.src = src;
	t.len = len;
	t.checked = checked;
	t.nslices = p->nfill + 1;
	if (t.nslices > len / FILL_SLICE_MIN)
		t.nslices = len / FILL_SLICE_MIN;
	t.slice = (len / t.nslices + 63) & ~(size_t)63;
	t.nslices = (len + t.slice - 1) / t.slice;

	pthread_mutex_lock(&p->fill_lock);
	t.next = p->tasks;
	p->tasks = &t;
	pthread_cond_broadcast(&p->fill_cond);
	while (t.taken < t.nslices)
		slice_take_locked(p, &t);
	while (t.done < t.nslices)
		pthread_cond_wait(&p->fill_done, &p->fill_lock);
	pthread_mutex_unlock(&p->fill_lock);
	return t.fault;
}

static void fill_start(struct accel_staging *p)
{
	unsigned long n = env_ulong("ACCEL_STAGING_THREADS", STAGING_THREADS,
				    1, STAGING_MAX_THREADS);

	pthread_mutex_init(&p->fill_lock, NULL);
	pthread_cond_init(&p->fill_cond, NULL);
	pthread_cond_init(&p->fill_done, NULL);
	/* Too few threads is slower, never wrong. */
	while (p->nfill + 1 < n &&
	       !pthread_create(&p->fill[p->nfill], NULL, fill_thread, p))
		p->nfill++;
}

static void fill_stop(struct accel_staging *p)
{
	unsigned int i;

	pthread_mutex_lock(&p->fill_lock);
	p->fill_stop = true;
	pthread_cond_broadcast(&p->fill_cond);
	pthread_mutex_unlock(&p->fill_lock);
	for (i = 0; i < p->nfill; i++)
		pthread_join(p->fill[i], NULL);
}

static void fill_destroy(struct accel_staging *p)
{
	pthread_mutex_destroy(&p->fill_lock);
	pthread_cond_destroy(&p->fill_cond);
	pthread_cond_destroy(&p->fill_done);
}

/* ------------------------------------------------------------------ */
/* Outs: stream order between a pageable write and a later read        */
/* ------------------------------------------------------------------ */

static struct stage_out *out_add_locked(struct accel_staging *p,
					uint32_t kstream, void *dst,
					size_t len)
{
	struct stage_out *o = calloc(1, sizeof(*o));

	if (!o)
		return NULL;
	o->id = ++p->out_ids;
	o->start = (uintptr_t)dst;
	o->end = o->start + len;
	o->kstream = kstream;
	o->next = p->outs;
	p->outs = o;
	return o;
}

static void out_done_locked(struct accel_staging *p, struct stage_out *o)
{
	struct stage_out **pp;

	for (pp = &p->outs; *pp; pp = &(*pp)->next) {
		if (*pp == o) {
			*pp = o->next;
			free(o);
			pthread_cond_broadcast(&p->out_cond);
			return;
		}
	}
}

static void out_done(struct accel_staging *p, struct stage_out *o)
{
	pthread_mutex_lock(&p->lock);
	out_done_locked(p, o);
	pthread_mutex_unlock(&p->lock);
}

/*
 * The bytes of [@src, @src + @len) that unfinished outs of @kstream will
 * write: *@patch (malloc'd, *@n entries, overlaps possible) and in *@dep
 * the newest such out's id. 0, or -ENOMEM.
 */
static int outs_overlap_locked(struct accel_staging *p, uint32_t kstream,
			       const void *src, size_t len,
			       struct stage_patch **patch, unsigned int *n,
			       uint64_t *dep)
{
	uintptr_t a = (uintptr_t)src, b = a + len;
	struct stage_out *o;

	*patch = NULL;
	*n = 0;
	*dep = 0;
	for (o = p->outs; o; o = o->next) {
		struct stage_patch *np;
		uintptr_t lo, hi;

		if (o->kstream != kstream || o->end <= a || o->start >= b)
			continue;
		lo = o->start > a ? o->start : a;
		hi = o->end < b ? o->end : b;
		np = realloc(*patch, (*n + 1) * sizeof(*np));
		if (!np) {
			free(*patch);
			*patch = NULL;
			*n = 0;
			return -ENOMEM;
		}
		*patch = np;
		np[*n].off = lo - a;
		np[*n].len = hi - lo;
		(*n)++;
		if (o->id > *dep)
			*dep = o->id;
	}
	return 0;
}

/* Outs of @job's stream up to its dep that overlap its source remain. */
static bool outs_pending_locked(struct accel_staging *p,
				const struct stage_job *job)
{
	uintptr_t a = (uintptr_t)job->src, b = a + job->len;
	struct stage_out *o;

	for (o = p->outs; o; o = o->next)
		if (o->kstream == job->kstream && o->id <= job->dep &&
		    o->end > a && o->start < b)
			return true;
	return false;
}

/* Read the patched bytes again, now that the outs wrote them. */
static void patch_apply(char *to, const char *src,
			const struct stage_patch *patch, unsigned int n)
{
	unsigned int i;

	/* A source freed under its queued write is undefined, not a crash. */
	for (i = 0; i < n; i++)
		accel_copy_checked(to + patch[i].off, src + patch[i].off,
				   patch[i].len);
}

/* ------------------------------------------------------------------ */
/* Workers                                                             */
/* ------------------------------------------------------------------ */

static void job_free(struct stage_job *job)
{
	free(job->spill);
	free(job->patch);
	free(job);
}

/* Until the outs this job's source depends on are done: false on stop. */
static bool job_wait_outs(struct accel_staging *p, struct stage_job *job)
{
	bool ok;

	pthread_mutex_lock(&p->lock);
	while (!p->stopping && outs_pending_locked(p, job))
		pthread_cond_wait(&p->out_cond, &p->lock);
	ok = !p->stopping;
	pthread_mutex_unlock(&p->lock);
	return ok;
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
	if (job->npatch && !job_wait_outs(p, job))
		return;
	if (job->spill)
		par_copy(p, (void *)c->r.base, job->spill, job->len, false);
	if (job->npatch)
		patch_apply((char *)c->r.base, job->src, job->patch,
			    job->npatch);
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
	if (!ret && par_copy(p, job->dst, (void *)c->r.base, job->len, true))
		accel_check_dst_gone(job->dst, job->len, job->kstream);
	/*
	 * Forget the write before the stream may go on: once it has, the
	 * caller may read the destination as a source and overwrite it at
	 * once, and a source overlapping a listed write is read late.
	 */
	out_done(p, job->out);
	job->out = NULL;
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

/* The context's pool, made on first use: 0 or -errno (-EACCES in a child). */
static int pool_get(struct accel_ctx *ctx, struct accel_staging **out)
{
	struct accel_staging *p, *old;
	int ret;

	p = __atomic_load_n(&ctx->staging, __ATOMIC_ACQUIRE);
	if (p) {
		*out = p;
		return 0;
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
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
		return ret;
	}
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->cond, NULL);
	pthread_cond_init(&p->out_cond, NULL);
	fill_start(p);

	pthread_mutex_lock(&ctx->lock);
	old = ctx->staging;
	if (!old && !ctx->dead)
		__atomic_store_n(&ctx->staging, p, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&ctx->lock);
	if (old || ctx->staging != p) {
		accel_kevent_destroy(ctx, p->doorbell);
		pthread_mutex_destroy(&p->lock);
		pthread_cond_destroy(&p->cond);
		pthread_cond_destroy(&p->out_cond);
		fill_stop(p);
		fill_destroy(p);
		free(p);
		if (!old)
			return -ENOENT;
		*out = old;
		return 0;
	}
	*out = p;
	return 0;
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
 * Every chunk is busy: wait, the pool lock dropped, until the oldest one
 * holding only a copy on the wire has retired it. false when none did
 * within STAGING_WAIT_MS: its stream is gated or behind other work.
 */
static bool chunk_wait_unlocked(struct accel_staging *p, uint32_t kstream)
{
	struct accel_wait_entry ents[2];
	uint32_t first = 0, point = 0;
	unsigned int i;
	bool passed;
	int ret;

	/* Its last wait timed out, and that chunk is still not free: spill. */
	if (p->behind_point && p->behind_stream == kstream) {
		if (!point_passed(p->ctx, p->behind_point))
			return false;
		p->behind_point = 0;
	}
	for (i = 0; i < p->nchunks && !point; i++) {
		struct stage_chunk *c = &p->chunks[(p->next + i) % p->nchunks];

		if (c->point && !c->head && !c->running)
			point = c->point;
	}
	if (!point)
		return false;
	pthread_mutex_unlock(&p->lock);
	memset(ents, 0, sizeof(ents));
	ents[0].event = p->doorbell;
	ents[0].value = 1;
	ents[1].event = point;
	ret = accel_kwait(p->ctx, ents, 2, 0, STAGING_WAIT_MS * 1000000ULL,
			  &first);
	pthread_mutex_lock(&p->lock);
	passed = !ret && first == 1;
	if (!passed) {
		p->behind_stream = kstream;
		p->behind_point = point;
	}
	return passed;
}

/*
 * One piece of at most *@lenp bytes (set to what it took, at most a
 * chunk): @src or @dst pageable (not both), already advanced to it.
 * *@behind: a chunk did not come free in time during this call, so the
 * call's remaining pieces spill rather than wait.
 */
static int piece_locked(struct accel_staging *p, uint32_t kstream,
			const struct accel_stage_side *dst,
			const struct accel_stage_side *src, size_t *lenp,
			uint64_t *seq, bool *behind)
{
	struct stage_patch *patch = NULL;
	struct stage_job *job = NULL;
	unsigned int npatch = 0;
	struct accel_desc d[4];
	struct stage_chunk *c;
	uint64_t assigned, dep = 0;
	uint32_t point, n = 0;
	bool now, late;
	size_t len;
	int ret;

	for (;;) {
		ret = chunk_pick_locked(p, kstream, &c, &now);
		if (ret)
			return ret;
		if (now || *behind || !src->pageable)
			break;
		if (!chunk_wait_unlocked(p, kstream))
			*behind = true;
		if (p->stopping)
			return -ENOENT;
	}
	/* The pool's first chunk may have come out smaller than asked. */
	len = *lenp < c->r.size ? *lenp : c->r.size;
	*lenp = len;
	if (src->pageable) {
		ret = outs_overlap_locked(p, kstream, src->ptr, len, &patch,
					  &npatch, &dep);
		if (ret)
			return ret;
	}
	/* Part of the source is yet to be written: the worker reads it. */
	late = npatch != 0;
	ret = point_get_locked(p, &point);
	if (ret)
		goto err_patch;
	assigned = c->assigned;
	if (!now || late || dst->pageable) {
		job = calloc(1, sizeof(*job));
		if (!job)
			goto err_nomem;
		job->len = len;
		job->kstream = kstream;
		job->src = src->ptr;
		job->dep = dep;
		job->patch = patch;
		job->npatch = npatch;
		patch = NULL;
	}
	if (!now || late) {
		job->prev_point = now ? 0 : c->point;
		job->ready = ++c->assigned;
		desc_event(&d[n++], ACCEL_OP_HOST_WAIT, c->counter, job->ready);
	}
	if (src->pageable) {
		if (now) {
			/* The chunk is ours alone: fill it in place. */
			par_copy(p, (void *)c->r.base, src->ptr, len, false);
		} else {
			job->spill = malloc(len);
			if (!job->spill)
				goto err_nomem;
			par_copy(p, job->spill, src->ptr, len, false);
		}
		desc_copy(&d[n++], dst->handle, dst->offset, c->r.handle, 0,
			  len);
	} else {
		desc_copy(&d[n++], c->r.handle, 0, src->handle, src->offset,
			  len);
	}
	desc_event(&d[n++], ACCEL_OP_EVENT_RECORD, point, 0);
	if (dst->pageable) {
		job->out = out_add_locked(p, kstream, dst->ptr, len);
		if (!job->out)
			goto err_nomem;
		job->point = point;
		job->dst = dst->ptr;
		job->drained = ++c->assigned;
		desc_event(&d[n++], ACCEL_OP_HOST_WAIT, c->counter,
			   job->drained);
	}
	ret = accel_submit(p->ctx, kstream, d, n, seq);
	if (ret)
		goto err_job;
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
	ret = -ENOMEM;
err_job:
	c->assigned = assigned;
	if (job) {
		if (job->out)
			out_done_locked(p, job->out);
		job_free(job);
	}
	point_put_locked(p, point);
err_patch:
	free(patch);
	return ret;
}

/* Both sides pageable: no device is involved, a host function copies. */
struct h2h_job {
	struct accel_ctx *ctx;
	struct accel_staging *pool;
	void *dst;
	void *bytes;
	size_t len;
	uint32_t kstream;
	struct stage_out *out;	/* the write into dst, done once copied */
	const char *src;	/* the source, for the patches */
	struct stage_patch *patch;
	unsigned int npatch;
};

static void h2h_drop(void *arg)
{
	struct h2h_job *j = arg;

	if (j->out)
		out_done(j->pool, j->out);
	accel_ctx_put(j->ctx);
	free(j->patch);
	free(j->bytes);
	free(j);
}

static void h2h_fn(void *arg)
{
	struct h2h_job *j = arg;

	/* In stream order: the earlier writes into the source are done. */
	patch_apply(j->bytes, j->src, j->patch, j->npatch);
	if (accel_copy_checked(j->dst, j->bytes, j->len))
		accel_check_dst_gone(j->dst, j->len, j->kstream);
	h2h_drop(j);
}

static int h2h_copy(struct accel_staging *p, uint32_t kstream, void *dst,
		    const void *src, size_t bytes)
{
	struct accel_ctx *ctx = p->ctx;
	struct h2h_job *j;
	uint64_t dep;
	int ret;

	j = calloc(1, sizeof(*j));
	if (!j)
		return -ENOMEM;
	j->bytes = malloc(bytes);
	if (!j->bytes) {
		free(j);
		return -ENOMEM;
	}
	par_copy(p, j->bytes, src, bytes, false);
	j->ctx = ctx;
	j->pool = p;
	j->dst = dst;
	j->len = bytes;
	j->kstream = kstream;
	j->src = src;
	accel_obj_ref(&ctx->obj);
	pthread_mutex_lock(&p->lock);
	ret = outs_overlap_locked(p, kstream, src, bytes, &j->patch,
				  &j->npatch, &dep);
	if (!ret) {
		j->out = out_add_locked(p, kstream, dst, bytes);
		if (!j->out)
			ret = -ENOMEM;
	}
	pthread_mutex_unlock(&p->lock);
	/* hostfn takes ctx->lock: launched without the pool lock. */
	if (!ret)
		ret = accel_hostfn_launch_drop(ctx, kstream, h2h_fn, h2h_drop,
					       j);
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
	bool behind = false;
	int ret = 0;

	ret = pool_get(ctx, &p);
	if (ret)
		return ret;
	if (dst->pageable && src->pageable)
		return h2h_copy(p, kstream, dst->ptr, src->ptr, bytes);
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
		ret = piece_locked(p, kstream, &d, &s, &len, seq, &behind);
		done += len;
	}
	pthread_mutex_unlock(&p->lock);
	return ret;
}

/* fork(): the pool's lock, after ctx->lock (context.c's lock order). */
void accel_staging_lock(struct accel_ctx *ctx)
{
	if (ctx->staging)
		pthread_mutex_lock(&ctx->staging->lock);
}

void accel_staging_unlock(struct accel_ctx *ctx)
{
	if (ctx->staging)
		pthread_mutex_unlock(&ctx->staging->lock);
}

void accel_staging_stop(struct accel_ctx *ctx)
{
	struct accel_staging *p = ctx->staging;
	struct stage_job *job;
	unsigned int i;

	if (!p || p->joined)
		return;
	if (ctx->forked) {
		/* The workers are the parent's: there is nothing to join. */
		p->stopping = true;
		p->joined = true;
		return;
	}
	pthread_mutex_lock(&p->lock);
	p->stopping = true;
	pthread_cond_broadcast(&p->cond);
	pthread_cond_broadcast(&p->out_cond);
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
	fill_stop(p);
	p->joined = true;
}

void accel_staging_teardown(struct accel_ctx *ctx)
{
	struct accel_staging *p = ctx->staging;
	struct stage_out *o;
	unsigned int i;

	if (!p)
		return;
	for (i = 0; i < p->nchunks; i++) {
		struct stage_chunk *c = &p->chunks[i];

		ctx->backend->region_teardown(ctx, &c->r);
	}
	while ((o = p->outs)) {
		p->outs = o->next;
		free(o);
	}
	pthread_mutex_destroy(&p->lock);
	pthread_cond_destroy(&p->cond);
	pthread_cond_destroy(&p->out_cond);
	fill_destroy(p);
	free(p->points);
	free(p);
	ctx->staging = NULL;
}
