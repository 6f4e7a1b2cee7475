// SPDX-License-Identifier: MIT
/*
 * The staging pool (stage.h): the fill threads, which copy slices of a
 * large fill or copy-out alongside the thread that asked for it.
 */
#include <unistd.h>

#include "stage.h"

/* ------------------------------------------------------------------ */
/* Parallel fills                                                      */
/* ------------------------------------------------------------------ */

static bool slice_copy(struct fill_task *t, unsigned int i)
{
	size_t off = (size_t)i * t->slice;
	size_t len = i + 1 == t->nslices ? t->len - off : t->slice;

	if (t->probe)
		return accel_range_check((uintptr_t)t->src + off, len,
					 t->write) != 0;
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

/* A task was queued, of slices for @all threads or one: fill_lock held. */
static void fill_kick_locked(struct accel_staging *p, bool all)
{
	__atomic_fetch_add(&p->fill_queued, 1, __ATOMIC_RELEASE);
	if (all)
		pthread_cond_broadcast(&p->fill_cond);
	else
		pthread_cond_signal(&p->fill_cond);
}

/*
 * After a slice, look for the next task for FILL_SPIN_NS before sleeping,
 * fill_lock dropped meanwhile: in a burst of copies the next call's task
 * comes within microseconds, and a thread woken from the condition
 * variable comes tens of microseconds late, by when the caller has
 * copied most slices alone. Likewise until the deadline of
 * stage_fill_warm(), when a copy-out is about to come. Idle, the threads
 * sleep.
 */
static void fill_spin_unlocked(struct accel_staging *p, unsigned int seen,
			       uint64_t until)
{
	while (__atomic_load_n(&p->fill_queued, __ATOMIC_ACQUIRE) == seen &&
	       stage_mono_ns() < until) {
#if defined(__x86_64__) || defined(__i386__)
		__builtin_ia32_pause();
#else
		sched_yield();
#endif
	}
}

static void *fill_thread(void *arg)
{
	struct accel_staging *p = arg;
	uint64_t hot = 0, until;

	pthread_mutex_lock(&p->fill_lock);
	while (!p->fill_stop) {
		if (p->tasks) {
			slice_take_locked(p, p->tasks);
			hot = stage_mono_ns() + FILL_SPIN_NS;
			continue;
		}
		until = __atomic_load_n(&p->fill_warm, __ATOMIC_RELAXED);
		if (until < hot)
			until = hot;
		if (until > stage_mono_ns()) {
			/* Read under the lock: no task queued after it is missed. */
			unsigned int seen = __atomic_load_n(&p->fill_queued,
							    __ATOMIC_ACQUIRE);

			hot = 0;
			pthread_mutex_unlock(&p->fill_lock);
			fill_spin_unlocked(p, seen, until);
			pthread_mutex_lock(&p->fill_lock);
			continue;
		}
		p->fill_sleeping++;
		pthread_cond_wait(&p->fill_cond, &p->fill_lock);
		p->fill_sleeping--;
	}
	pthread_mutex_unlock(&p->fill_lock);
	return NULL;
}

/*
 * A copy-out in parallel is about to come (a D2H finished in the call,
 * its bytes on the wire): the fill threads look for it for FILL_WARM_NS
 * from now instead of sleeping, so that its slices are shared at once
 * rather than after their wake-up, which costs tens of microseconds,
 * most of a 1 MiB copy-out.
 */
void stage_fill_warm(struct accel_staging *p)
{
	if (!p->nfill)
		return;
	__atomic_store_n(&p->fill_warm, stage_mono_ns() + FILL_WARM_NS,
			 __ATOMIC_RELAXED);
	pthread_mutex_lock(&p->fill_lock);
	if (p->fill_sleeping)
		pthread_cond_broadcast(&p->fill_cond);
	pthread_mutex_unlock(&p->fill_lock);
}

/*
 * Cut @t (its len set) into slices of at least @min bytes, each a multiple
 * of @align (a power of two), one per fill thread and one for the caller;
 * queue it, take slices with the fill threads until none is left, and
 * wait until every slice is done.
 */
static void par_run(struct accel_staging *p, struct fill_task *t,
		    size_t min, size_t align)
{
	t->nslices = p->nfill + 1;
	if (t->nslices > t->len / min)
		t->nslices = t->len / min;
	t->slice = (t->len / t->nslices + align - 1) & ~(align - 1);
	t->nslices = (t->len + t->slice - 1) / t->slice;

	pthread_mutex_lock(&p->fill_lock);
	t->next = p->tasks;
	p->tasks = t;
	fill_kick_locked(p, true);
	while (t->taken < t->nslices)
		slice_take_locked(p, t);
	while (t->done < t->nslices)
		pthread_cond_wait(&p->fill_done, &p->fill_lock);
	pthread_mutex_unlock(&p->fill_lock);
}

/*
 * Run @t (what it does and its len set): par_run() when it is two slices
 * of @min or more and there are fill threads, else all of it in the
 * calling thread, as one slice. true on a fault.
 */
static bool par_task(struct accel_staging *p, struct fill_task *t,
		     size_t min, size_t align)
{
	if (!p->nfill || t->len < 2 * min) {
		t->slice = t->len;
		t->nslices = 1;
		return slice_copy(t, 0);
	}
	par_run(p, t, min, align);
	return t->fault;
}

/*
 * Copy @len bytes, in slices shared with the fill threads when it is
 * worth it; the calling thread copies too, so this never waits for a fill
 * thread that is not copying for it. @checked: through
 * accel_copy_checked() (a destination that may be gone). true on a fault.
 */
bool stage_par_copy(struct accel_staging *p, void *dst, const void *src,
		    size_t len, bool checked)
{
	struct fill_task t = { .dst = dst, .src = src, .len = len,
			       .checked = checked };

	return par_task(p, &t, FILL_SLICE_MIN, 64);
}

/*
 * accel_range_check() of a large range, in slices shared with the fill
 * threads: its page walk (one madvise per slice) costs about as much per
 * byte as a memcpy on some hosts, so one thread doing it alone would
 * halve a large copy's rate. -EFAULT when any slice fails.
 */
int stage_par_check(struct accel_staging *p, const void *ptr, size_t len,
		    bool write)
{
	struct fill_task t = { .src = ptr, .len = len, .probe = true,
			       .write = write };

	return par_task(p, &t, CHECK_SLICE_MIN, 4096) ? -EFAULT : 0;
}

/* Queue @t, its slices set, behind the others; kick @all threads or one. */
static void fill_append(struct accel_staging *p, struct fill_task *t, bool all)
{
	struct fill_task **pp;

	t->next = NULL;
	t->taken = t->done = 0;
	pthread_mutex_lock(&p->fill_lock);
	for (pp = &p->tasks; *pp; pp = &(*pp)->next)
		;
	*pp = t;
	fill_kick_locked(p, all);
	pthread_mutex_unlock(&p->fill_lock);
}

void stage_fill_queue(struct accel_staging *p, struct fill_task *t)
{
	t->slice = t->len;
	t->nslices = 1;
	fill_append(p, t, false);
}

void stage_fill_post(struct accel_staging *p, struct fill_task *t)
{
	t->slice = FILL_SLICE_MIN;
	t->nslices = (unsigned int)((t->len + t->slice - 1) / t->slice);
	t->taken = t->done = 0;
	if (t->nslices)
		fill_append(p, t, t->nslices > 1);
}

bool stage_fill_done(struct accel_staging *p, struct fill_task *t)
{
	bool done;

	pthread_mutex_lock(&p->fill_lock);
	done = t->done == t->nslices;
	pthread_mutex_unlock(&p->fill_lock);
	return done;
}

bool stage_fill_help(struct accel_staging *p)
{
	bool any;

	pthread_mutex_lock(&p->fill_lock);
	any = p->tasks != NULL;
	if (any)
		slice_take_locked(p, p->tasks);
	pthread_mutex_unlock(&p->fill_lock);
	return any;
}

void stage_fill_wait(struct accel_staging *p, struct fill_task *t)
{
	pthread_mutex_lock(&p->fill_lock);
	while (t->taken < t->nslices)
		slice_take_locked(p, t);
	while (t->done < t->nslices)
		pthread_cond_wait(&p->fill_done, &p->fill_lock);
	pthread_mutex_unlock(&p->fill_lock);
}

/*
 * Threads that copy, the caller included: half the online CPUs, from 2 to
 * STAGING_THREADS (8 on a 16-core host: a memcpy per core reaches a few
 * GB/s, eight of them about the link's 50).
 */
unsigned int stage_default_threads(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN) / 2;

	if (n < 2)
		return 2;
	return n > STAGING_THREADS ? STAGING_THREADS : (unsigned int)n;
}

void stage_fill_start(struct accel_staging *p)
{
	unsigned long n = stage_env_ulong("ACCEL_STAGING_THREADS",
					  stage_default_threads(), 1,
					  STAGING_MAX_THREADS);

	pthread_mutex_init(&p->fill_lock, NULL);
	pthread_cond_init(&p->fill_cond, NULL);
	pthread_cond_init(&p->fill_done, NULL);
	/* Too few threads is slower, never wrong. */
	while (p->nfill + 1 < n &&
	       !pthread_create(&p->fill[p->nfill], NULL, fill_thread, p))
		p->nfill++;
}

void stage_fill_stop(struct accel_staging *p)
{
	unsigned int i;

	pthread_mutex_lock(&p->fill_lock);
	p->fill_stop = true;
	pthread_cond_broadcast(&p->fill_cond);
	pthread_mutex_unlock(&p->fill_lock);
	for (i = 0; i < p->nfill; i++)
		pthread_join(p->fill[i], NULL);
}

void stage_fill_destroy(struct accel_staging *p)
{
	pthread_mutex_destroy(&p->fill_lock);
	pthread_cond_destroy(&p->fill_cond);
	pthread_cond_destroy(&p->fill_done);
}
