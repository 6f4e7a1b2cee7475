// SPDX-License-Identifier: MIT
/*
 * The staging pool (stage.h): the pool, its chunks and their workers, the
 * recorded points, stop and teardown. How a copy is cut into pieces and
 * handed the chunks is copy.c.
 */
#include <stdio.h>
#include <syslog.h>
#include <unistd.h>
#include <sys/resource.h>

#include "stage.h"

unsigned long stage_env_ulong(const char *name, unsigned long def,
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

/* Bytes the context's staging pool holds pinned (0: no pool yet). */
static size_t staging_pinned(struct accel_ctx *ctx)
{
	struct accel_staging *p = __atomic_load_n(&ctx->staging,
						  __ATOMIC_ACQUIRE);

	return p ? __atomic_load_n(&p->pinned, __ATOMIC_RELAXED) : 0;
}

void accel_pin_error(struct accel_ctx *ctx, size_t bytes, const char *what)
{
	unsigned long long max = ctx->info.max_pinned_bytes;
	size_t staged = staging_pinned(ctx);
	char held[160] = "";
	struct rlimit rl;
	bool rlim;

	/* The transport said what was missing (a file descriptor). */
	if (*accel_last_error_string())
		return;
	/* RLIMIT_MEMLOCK binds a process without CAP_IPC_LOCK. */
	rlim = !getrlimit(RLIMIT_MEMLOCK, &rl) && !accel_has_ipc_lock() &&
	       rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < max;
	/* What the library holds itself, and the settings that bound it. */
	if (staged)
		snprintf(held, sizeof(held),
			 "; the staging pool holds %zu KiB of it (fewer ACCEL_STAGING_CHUNKS or a smaller ACCEL_STAGING_CHUNK_KB make it smaller)",
			 staged >> 10);
	if (rlim)
		accel_set_error("cannot pin %zu bytes for %s: RLIMIT_MEMLOCK is %llu KiB for this process (raise it with ulimit -l, LimitMEMLOCK= or limits.conf memlock)%s",
				bytes, what,
				(unsigned long long)rl.rlim_cur >> 10, held);
	else
		accel_set_error("cannot pin %zu bytes for %s: the driver allows %llu MiB pinned per context (%s)%s",
				bytes, what, max >> 20,
				strcmp(ctx->ops->name, "inproc") ?
				"raise the module parameter max_pinned_mb" :
				"raise ACCEL_INPROC_MAX_PINNED_MB", held);
}

/* ------------------------------------------------------------------ */
/* Events                                                              */
/* ------------------------------------------------------------------ */

int stage_point_get_locked(struct accel_staging *p, uint32_t *ev)
{
	if (p->npoints) {
		*ev = p->points[--p->npoints];
		return 0;
	}
	return accel_kevent_create(p->ctx, 0, ev);
}

void stage_point_put_locked(struct accel_staging *p, uint32_t ev)
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
	stage_point_put_locked(p, ev);
	pthread_mutex_unlock(&p->lock);
}

bool stage_point_passed(struct accel_ctx *ctx, uint32_t ev)
{
	struct accel_event_query q;

	if (accel_kevent_query(ctx, ev, &q))
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
	struct accel_wait_entry ents[3];
	uint32_t first = 0;
	int ret;

	/*
	 * As a user's wait: the device is polled first where the backend
	 * does (cuda), so that a piece is copied out as soon as it landed
	 * rather than when the completion thread wakes.
	 */
	memset(ents, 0, sizeof(ents));
	ents[0].event = p->doorbell;
	ents[0].value = 1;
	ents[1].event = ev;
	ret = accel_kwait_user(p->ctx, ents, 2, 0, ACCEL_TIMEOUT_INFINITE,
			       &first);
	if (ret == -ENOENT || ((!ret || ret == -EIO) && first == 0))
		return -ECANCELED;
	return ret == -EIO ? -EIO : 0;
}

/* ------------------------------------------------------------------ */
/* Workers                                                             */
/* ------------------------------------------------------------------ */

void stage_job_free(struct stage_job *job)
{
	free(job->spill);
	free(job->patch);
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
	if (job->npatch && !stage_job_wait_outs(p, job))
		return;
	if (job->spill)
		stage_par_copy(p, (void *)c->r.base, job->spill, job->len,
			       false);
	if (job->npatch)
		stage_patch_apply((char *)c->r.base, job->src, job->patch,
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
	if (!ret &&
	    stage_par_copy(p, job->dst, (void *)c->r.base, job->len, true))
		accel_check_dst_gone(job->dst, job->len, job->kstream);
	/*
	 * Forget the write before the stream may go on: once it has, the
	 * caller may read the destination as a source and overwrite it at
	 * once, and a source overlapping a listed write is read late.
	 */
	stage_out_done(p, job->out);
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
		stage_job_free(job);
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
int stage_pool_get(struct accel_ctx *ctx, struct accel_staging **out)
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
	p->chunk_size = stage_env_ulong("ACCEL_STAGING_CHUNK_KB",
					STAGING_CHUNK_KB, 4, 1UL << 20) << 10;
	p->chunk_size = (p->chunk_size + (size_t)ctx->page_size - 1) &
			~((size_t)ctx->page_size - 1);
	/* Two per copying thread: one filling while the other is on the wire. */
	p->max_chunks = stage_env_ulong("ACCEL_STAGING_CHUNKS",
					2 * stage_default_threads(), 1,
					STAGING_MAX_CHUNKS);
	/* The ring: one chunk more, for small copies (ring.c). */
	p->ring.max = stage_env_ulong("ACCEL_STAGING_SMALL_KB", STAGING_SMALL_KB,
				      0, 1UL << 20) << 10;
	if (p->ring.max > p->chunk_size / 4)
		p->ring.max = p->chunk_size / 4;
	p->ring.failed = !p->ring.max;
	p->trace = accel_env_flag("ACCEL_TRACE");
	ret = accel_kevent_create(ctx, ACCEL_EVENT_USER, &p->doorbell);
	if (ret) {
		free(p);
		return ret;
	}
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->cond, NULL);
	pthread_cond_init(&p->out_cond, NULL);
	stage_fill_start(p);

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
		stage_fill_stop(p);
		stage_fill_destroy(p);
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
int stage_chunk_add_locked(struct accel_staging *p)
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
	__atomic_add_fetch(&p->pinned, c->r.map_len, __ATOMIC_RELAXED);
	return 0;

err_counter:
	accel_kevent_destroy(ctx, c->counter);
err_release:
	accel_bounce_release(ctx, c->r.handle, ptr, c->r.map_len);
	return ret;
}

static bool chunk_free_locked(struct accel_staging *p, struct stage_chunk *c)
{
	if (c->head || c->running || c->filling)
		return false;
	if (c->point) {
		if (!stage_point_passed(p->ctx, c->point))
			return false;
		stage_point_put_locked(p, c->point);
		c->point = 0;
	}
	return true;
}

/*
 * A chunk the caller may fill at once: a free one, else one more pinned
 * while the pool may grow; *@out NULL when every chunk is busy. -errno
 * when not even one chunk could be pinned.
 */
int stage_chunk_now_locked(struct accel_staging *p, struct stage_chunk **out)
{
	unsigned int i;
	int ret;

	*out = NULL;
	for (i = 0; i < p->nchunks; i++) {
		struct stage_chunk *c = &p->chunks[(p->next + i) % p->nchunks];

		if (chunk_free_locked(p, c)) {
			p->next = (unsigned int)(c - p->chunks) + 1;
			*out = c;
			return 0;
		}
	}
	if (p->nchunks >= p->max_chunks || p->full)
		return 0;
	ret = stage_chunk_add_locked(p);
	/*
	 * A pinning limit: work with the chunks there are; with none yet,
	 * with smaller ones, down to a page.
	 */
	while (ret && !p->nchunks && (ret == -ENOMEM || ret == -EAGAIN) &&
	       p->chunk_size > (size_t)p->ctx->page_size) {
		p->chunk_size = (p->chunk_size / 2 +
				 (size_t)p->ctx->page_size - 1) &
				~((size_t)p->ctx->page_size - 1);
		ret = stage_chunk_add_locked(p);
	}
	if (!ret) {
		*out = &p->chunks[p->nchunks - 1];
		return 0;
	}
	if (!p->nchunks) {
		if (ret == -ENOMEM || ret == -EAGAIN)
			accel_pin_error(p->ctx, p->chunk_size,
					"a staging chunk of pageable copies (halved down to one page already)");
		return ret;
	}
	p->full = true;
	return 0;
}

/*
 * The chunk for the next piece on @kstream: a free one if there is one
 * (*now: the caller may use it at once), else one more pinned while the
 * pool may grow, else one whose last piece is on the same stream (waiting
 * for it adds no dependency the stream's order does not already have),
 * else the next in turn: then this stream's piece waits for another
 * stream's to reach the device (libaccel(7)).
 */
int stage_chunk_pick_locked(struct accel_staging *p, uint32_t kstream,
			    struct stage_chunk **out, bool *now)
{
	unsigned int i;
	int ret;

	ret = stage_chunk_now_locked(p, out);
	if (ret || *out) {
		*now = true;
		return ret;
	}
	/*
	 * Never one a D2H finishing in its call holds (filling, the pool
	 * lock dropped): its worker would not wait for that call. Such a
	 * call always leaves one chunk to the others (d2h_direct_locked(),
	 * copy.c).
	 */
	for (i = 0; i < p->nchunks; i++) {
		struct stage_chunk *c = &p->chunks[(p->next + i) % p->nchunks];

		if (c->kstream == kstream && !c->filling) {
			/* The next one of the stream's goes to the next chunk. */
			p->next = (unsigned int)(c - p->chunks) + 1;
			*out = c;
			*now = false;
			return 0;
		}
	}
	for (i = 0; i < p->nchunks; i++) {
		struct stage_chunk *c = &p->chunks[p->next++ % p->nchunks];

		if (!c->filling) {
			*out = c;
			*now = false;
			return 0;
		}
	}
	/* Not reached: a D2H in its call leaves a chunk to the others. */
	return -EAGAIN;
}


int accel_staging_range_check(struct accel_ctx *ctx, const void *ptr,
			      size_t bytes, bool write)
{
	struct accel_staging *p;

	/* Small, or no pool to be had: the check alone, as before. */
	if (bytes < 2 * CHECK_SLICE_MIN || stage_pool_get(ctx, &p))
		return accel_range_check((uintptr_t)ptr, bytes, write);
	return stage_par_check(p, ptr, bytes, write);
}

void accel_staging_stream_dead(struct accel_ctx *ctx, uint32_t kstream)
{
	struct accel_staging *p = __atomic_load_n(&ctx->staging,
						  __ATOMIC_ACQUIRE);

	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	if (!p->stopping)
		stage_ring_stream_dead_locked(p, kstream);
	pthread_mutex_unlock(&p->lock);
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
			stage_job_free(job);
		}
		c->tail = NULL;
	}
	stage_fill_stop(p);
	p->joined = true;
}

void accel_staging_teardown(struct accel_ctx *ctx)
{
	struct accel_staging *p = ctx->staging;
	struct stage_out *o;
	unsigned int i;

	if (!p)
		return;
	if (p->trace)
		accel_log(LOG_INFO,
			"trace: staging: %llu copies through the ring (%llu waits for a slot), %llu D2H finished in the call through the ring, %llu through the chunks, %llu pieces filled by the caller in a chunk, %llu by the fill threads, %llu handed to a chunk's worker, %llu spilled to unpinned memory, %llu waits for a chunk",
			(unsigned long long)p->tr.ring,
			(unsigned long long)p->tr.ring_waits,
			(unsigned long long)p->tr.ring_d2h,
			(unsigned long long)p->tr.d2h_direct,
			(unsigned long long)p->tr.filled,
			(unsigned long long)p->tr.par_fills,
			(unsigned long long)p->tr.handoffs,
			(unsigned long long)p->tr.spills,
			(unsigned long long)p->tr.chunk_waits);
	if (p->trace)
		accel_log(LOG_INFO,
			"trace: staging: D2H finished in the call, mean us: through the ring %.1f waiting for the device, %.1f copying out; through the chunks, per piece (%llu), %.1f of the call, of which %.1f waiting for a piece to land and %.1f for the last copy-outs",
			p->tr.ring_d2h ? p->tr.ring_d2h_wait_ns / 1e3 /
					 p->tr.ring_d2h : 0.0,
			p->tr.ring_d2h ? p->tr.ring_d2h_out_ns / 1e3 /
					 p->tr.ring_d2h : 0.0,
			(unsigned long long)p->tr.d2h_pieces,
			p->tr.d2h_pieces ? p->tr.d2h_ns / 1e3 /
					   p->tr.d2h_pieces : 0.0,
			p->tr.d2h_pieces ? p->tr.d2h_wait_ns / 1e3 /
					   p->tr.d2h_pieces : 0.0,
			p->tr.d2h_pieces ? p->tr.d2h_out_ns / 1e3 /
					   p->tr.d2h_pieces : 0.0);
	for (i = 0; i < p->nchunks; i++) {
		struct stage_chunk *c = &p->chunks[i];

		ctx->backend->region_teardown(ctx, &c->r);
	}
	if (p->ring.r.base)
		ctx->backend->region_teardown(ctx, &p->ring.r);
	free(p->ring.slot);
	while ((o = p->outs)) {
		p->outs = o->next;
		free(o);
	}
	pthread_mutex_destroy(&p->lock);
	pthread_cond_destroy(&p->cond);
	pthread_cond_destroy(&p->out_cond);
	stage_fill_destroy(p);
	free(p->points);
	free(p);
	ctx->staging = NULL;
}
