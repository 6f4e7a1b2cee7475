// SPDX-License-Identifier: MIT
/*
 * The cuda backend: completion and waiting. The event pool, the lazy
 * completion events of ranges, the completion thread that reports done
 * ranges with EXEC_COMPLETE, and the waiter fast path that does the same
 * from a waiting thread.
 */
#include "cuda.h"

/* Under cx->lock (creating one there is rare: events are reused). */
static int cx_event_get_locked(struct accel_cuda *cx, cudaEvent_t *ev)
{
	cudaError_t e;

	if (cx->cmp.npool) {
		*ev = cx->cmp.pool[--cx->cmp.npool];
		return 0;
	}
	e = cx_rt.cudaEventCreateWithFlags(ev, cudaEventBlockingSync |
					cudaEventDisableTiming);
	return cx_error(cx, e, "cudaEventCreateWithFlags");
}

int cx_event_get(struct accel_cuda *cx, cudaEvent_t *ev)
{
	cudaError_t e;

	pthread_mutex_lock(&cx->lock);
	if (cx->cmp.npool) {
		*ev = cx->cmp.pool[--cx->cmp.npool];
		pthread_mutex_unlock(&cx->lock);
		return 0;
	}
	pthread_mutex_unlock(&cx->lock);
	/* Blocking sync: a host waiting on it sleeps instead of spinning. */
	e = cx_rt.cudaEventCreateWithFlags(ev, cudaEventBlockingSync |
					cudaEventDisableTiming);
	return cx_error(cx, e, "cudaEventCreateWithFlags");
}

static void cx_event_put_locked(struct accel_cuda *cx, cudaEvent_t ev)
{
	cudaEvent_t *p = cx_grow(cx->cmp.pool, &cx->cmp.cappool, cx->cmp.npool + 1,
			      sizeof(*p));

	if (!p) {
		cx_rt.cudaEventDestroy(ev);
		return;
	}
	cx->cmp.pool = p;
	cx->cmp.pool[cx->cmp.npool++] = ev;
}

void cx_event_put(struct accel_cuda *cx, cudaEvent_t ev)
{
	pthread_mutex_lock(&cx->lock);
	cx_event_put_locked(cx, ev);
	pthread_mutex_unlock(&cx->lock);
}

/*
 * The event that tells when @r is done: its own, or that of a later range
 * of its stream (recorded after it). Without one, record one after the
 * stream's newest pending range, if @force (someone waits) or the stream
 * went quiet (no range closed for lazy_ns) or @r has waited lazy_max_ns;
 * else NULL (not yet asked: not done). Under cx->lock.
 */
static cudaEvent_t cx_range_event(struct accel_cuda *cx, struct cx_range *r,
				  bool force, uint64_t *now)
{
	struct cx_stream *s = r->s;
	struct cx_range *t = s->tail_r;
	cudaEvent_t ev;
	cudaError_t e;

	if (r->ev)
		return r->ev;
	if (s->cover && s->cover->last >= r->last)
		return s->cover->ev;
	if (!t)
		t = r;
	if (!force) {
		if (!*now)
			*now = cx_mono_ns();
		if (*now - t->t_close < cx->cfg.lazy_ns &&
		    *now - r->t_close < cx->cfg.lazy_max_ns)
			return NULL;
	}
	if (cx_event_get_locked(cx, &ev)) {
		/* No way to tell when it is done: fail it, as a lost event. */
		cx_range_fail(r, r->first, -EIO);
		r->need_ev = false;
		return NULL;
	}
	e = cx_rt.cudaEventRecord(ev, s->cs);
	if (e != cudaSuccess) {
		cx_event_put_locked(cx, ev);
		/* Unknown what ran: fail from the start. */
		cx_range_fail(r, r->first, cx_error(cx, e, "cudaEventRecord"));
		atomic_store(&s->failed, true);
		r->need_ev = false;
		return NULL;
	}
	t->ev = ev;
	s->cover = t;
	return ev;
}

/* Is @r done on the device? 1 yes, 0 not yet; fails the range on error. */
static int cx_range_ready(struct accel_cuda *cx, struct cx_range *r,
			  bool force, struct cx_scan *sc)
{
	cudaEvent_t ev;
	cudaError_t e;

	if (!r->need_ev)
		return 1;
	ev = cx_range_event(cx, r, force, &sc->now);
	if (!ev)
		return r->need_ev ? 0 : 1;
	if (ev == sc->done_ev)
		return 1;
	e = cx_rt.cudaEventQuery(ev);
	if (e == cudaSuccess)
		sc->done_ev = ev;
	if (e == cudaSuccess)
		return 1;
	if (e == cudaErrorNotReady)
		return 0;
	cx_range_fail(r, r->first, -EIO);
	atomic_store(&r->s->failed, true);
	cx_error(cx, e, "cudaEventQuery (an earlier copy failed)");
	return 1;
}

/* Take the ranges that are done, in order per stream; under cx->lock. */
static unsigned int cx_take_ready_locked(struct accel_cuda *cx,
					 struct cx_range **out, unsigned int max,
					 bool force)
{
	struct cx_range **pp = &cx->cmp.head, *r, *prev = NULL;
	unsigned int n = 0, pass = ++cx->cmp.pass;
	struct cx_scan sc = { 0, NULL };

	while ((r = *pp) && n < max) {
		if (r->s->blocked_pass == pass ||
		    !cx_range_ready(cx, r, force, &sc)) {
			r->s->blocked_pass = pass;
			prev = r;
			pp = &r->next;
			continue;
		}
		*pp = r->next;
		if (cx->cmp.tail == r)
			cx->cmp.tail = prev;
		r->next = NULL;
		r->s->npending--;
		if (r->s->cover == r)
			r->s->cover = NULL;
		if (r->s->tail_r == r)
			r->s->tail_r = NULL;
		if (cx->cfg.trace)
			r->t_seen = cx_mono_ns();
		out[n++] = r;
	}
	atomic_fetch_sub(&cx->cmp.npending, n);
	return n;
}

static void cx_report(struct accel_cuda *cx, struct cx_range **done,
		      unsigned int n, struct accel_exec_done *ents)
{
	struct accel_exec_complete c;
	unsigned int i, k = 0;
	int ret;

	for (i = 0; i < n; i++) {
		struct cx_range *r = done[i];

		if (r->fail_seq) {
			ents[k].stream = r->s->kstream;
			ents[k].status = r->fail_status;
			ents[k].seq = r->fail_seq;
			k++;
		}
		if (!r->fail_seq || r->last > r->fail_seq) {
			ents[k].stream = r->s->kstream;
			ents[k].status = 0;
			ents[k].seq = r->last;
			k++;
		}
	}
	for (i = 0; i < k; ) {
		uint32_t chunk = k - i;

		if (chunk > cx->ctx->info.max_submit)
			chunk = cx->ctx->info.max_submit;
		memset(&c, 0, sizeof(c));
		c.entries = (uint64_t)(uintptr_t)&ents[i];
		c.count = chunk;
		ret = accel_ioctl(cx->ctx, ACCEL_IOC_EXEC_COMPLETE, &c);
		if (ret)
			accel_log(LOG_ERR, "cuda: EXEC_COMPLETE: %s",
				  strerror(-ret));
		i += chunk;
	}
	if (cx->cfg.trace) {
		uint64_t now = cx_mono_ns();

		for (i = 0; i < n; i++) {
			struct cx_range *r = done[i];

			atomic_fetch_add(&cx->tr.ranges, 1);
			atomic_fetch_add(&cx->tr.submit_fetch,
					 r->t_fetch - r->t_submit);
			atomic_fetch_add(&cx->tr.fetch_enq, r->t_enq - r->t_fetch);
			atomic_fetch_add(&cx->tr.enq_seen, r->t_seen - r->t_enq);
			atomic_fetch_add(&cx->tr.seen_done, now - r->t_seen);
			if (r->seen_by_waiter)
				atomic_fetch_add(&cx->tr.by_waiter, 1);
		}
		atomic_store(&cx->tr.last_done, now);
	}
	pthread_mutex_lock(&cx->lock);
	for (i = 0; i < n; i++) {
		struct cx_range *r = done[i];

		atomic_store(&r->s->reported, r->last);
		if (r->ev)
			cx_event_put_locked(cx, r->ev);
		r->next = cx->cmp.rfree;
		cx->cmp.rfree = r;
	}
	pthread_mutex_unlock(&cx->lock);
	cx_zombies_retry(cx);
}

static void cx_spin_pause(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#else
	sched_yield();
#endif
}

/*
 * Take the ranges that are done and report them; under report_lock, so
 * that reports go out in order whoever polls. Returns how many.
 */
static unsigned int cx_poll_locked(struct accel_cuda *cx, bool waiter)
{
	unsigned int n, i;

	pthread_mutex_lock(&cx->lock);
	n = cx_take_ready_locked(cx, cx->cmp.done, cx->cmp.done_max, waiter);
	pthread_mutex_unlock(&cx->lock);
	if (!n)
		return 0;
	for (i = 0; i < n; i++)
		cx->cmp.done[i]->seen_by_waiter = waiter;
	cx_report(cx, cx->cmp.done, n, cx->cmp.ents);
	return n;
}

/* After completions: HOST_WAITs behind them may be fetchable now. */
static void cx_after_report(struct accel_cuda *cx)
{
	cx_kick(cx, 0, false);
}

void *cx_done_main(void *arg)
{
	struct accel_cuda *cx = arg;
	uint64_t waiting_since = 0;

	cx_rt.cudaSetDevice(cx->cfg.device);
	pthread_mutex_lock(&cx->lock);
	for (;;) {
		unsigned int n;

		if (atomic_load(&cx->cmp.kick_deferred)) {
			pthread_mutex_unlock(&cx->lock);
			if (atomic_exchange(&cx->cmp.kick_deferred, false))
				cx_after_report(cx);
			pthread_mutex_lock(&cx->lock);
			continue;
		}
		if (!cx->cmp.head) {
			uint64_t until;

			if (cx->cmp.stop_done && cx->is.fetch_exited)
				break;
			/* Just busy: more work is likely soon; look briefly. */
			pthread_mutex_unlock(&cx->lock);
			until = cx_mono_ns() + cx->cfg.spin_ns;
			while (!atomic_load(&cx->cmp.npending) &&
			       !atomic_load(&cx->cmp.kick_deferred) &&
			       cx_mono_ns() < until)
				cx_spin_pause();
			pthread_mutex_lock(&cx->lock);
			atomic_store(&cx->cmp.done_idle, true);
			while (!cx->cmp.head && !(cx->cmp.stop_done && cx->is.fetch_exited) &&
			       !atomic_load(&cx->cmp.kick_deferred)) {
				if (cx->cfg.trace)
					atomic_fetch_add(&cx->tr.done_woken, 1);
				pthread_cond_wait(&cx->cmp.cond, &cx->lock);
			}
			atomic_store(&cx->cmp.done_idle, false);
			waiting_since = 0;
			continue;
		}
		if (atomic_load(&cx->cmp.helpers)) {
			/* A waiter polls the device: leave it to it. */
			pthread_mutex_unlock(&cx->lock);
			while (atomic_load(&cx->cmp.helpers) &&
			       !atomic_load(&cx->cmp.kick_deferred))
				cx_spin_pause();
			pthread_mutex_lock(&cx->lock);
			continue;
		}
		pthread_mutex_unlock(&cx->lock);
		pthread_mutex_lock(&cx->cmp.report_lock);
		n = cx_poll_locked(cx, false);
		if (n) {
			pthread_mutex_unlock(&cx->cmp.report_lock);
			cx_after_report(cx);
			pthread_mutex_lock(&cx->lock);
			waiting_since = 0;
			continue;
		}
		/*
		 * Work in flight, none done: poll for a short while (a small
		 * copy takes microseconds), then sleep in the driver on the
		 * oldest range's blocking-sync event. report_lock is held
		 * meanwhile: no range (and no event) goes away under us.
		 */
		if (!waiting_since)
			waiting_since = cx_mono_ns();
		if (cx_mono_ns() - waiting_since < cx->cfg.spin_ns) {
			uint64_t until = cx_mono_ns() + CX_POLL_GAP_NS;

			pthread_mutex_unlock(&cx->cmp.report_lock);
			/*
			 * Not every pause: each poll takes the locks the
			 * submitters take and queries the driver.
			 */
			while (cx_mono_ns() < until &&
			       !atomic_load(&cx->cmp.kick_deferred))
				cx_spin_pause();
		} else {
			cudaEvent_t ev = NULL;

			uint64_t now = 0;

			pthread_mutex_lock(&cx->lock);
			/* Long enough: the head's event, recorded if need be. */
			if (cx->cmp.head && cx->cmp.head->need_ev)
				ev = cx_range_event(cx, cx->cmp.head, true, &now);
			pthread_mutex_unlock(&cx->lock);
			if (ev) {
				atomic_store(&cx->cmp.done_idle, true);
				cx_rt.cudaEventSynchronize(ev);
				atomic_store(&cx->cmp.done_idle, false);
				if (atomic_exchange(&cx->cmp.kick_deferred, false)) {
					pthread_mutex_unlock(&cx->cmp.report_lock);
					cx_after_report(cx);
					pthread_mutex_lock(&cx->lock);
					continue;
				}
			}
			pthread_mutex_unlock(&cx->cmp.report_lock);
		}
		pthread_mutex_lock(&cx->lock);
	}
	pthread_mutex_unlock(&cx->lock);
	return NULL;
}

/*
 * A waiter polls the device itself before it sleeps: while the work it
 * may be waiting for is on the GPU, for up to the spin time (or its
 * deadline), it takes completions and reports them from this thread, so
 * that the transport's wait returns at once instead of after two thread
 * hand-offs (completion thread, then the wake of the waiter).
 * @poll is the wait with a past deadline: -ETIME while not satisfied.
 * Returns its last answer.
 */
int accel_cuda_wait_fast(struct accel_ctx *ctx,
			 int (*poll)(struct accel_ctx *, void *), void *arg,
			 uint64_t deadline)
{
	struct accel_cuda *cx = cx_of(ctx);
	unsigned int reported = 0;
	uint64_t until;
	int ret;

	ret = poll(ctx, arg);
	if (ret != -ETIME || !cx || !atomic_load(&cx->cmp.npending))
		return ret;
	until = cx_mono_ns() + cx->cfg.spin_ns;
	if (deadline < until)
		until = deadline;
	atomic_fetch_add(&cx->cmp.helpers, 1);
	for (;;) {
		if (!pthread_mutex_trylock(&cx->cmp.report_lock)) {
			reported += cx_poll_locked(cx, true);
			pthread_mutex_unlock(&cx->cmp.report_lock);
		}
		ret = poll(ctx, arg);
		if (ret != -ETIME || !atomic_load(&cx->cmp.npending) ||
		    cx_mono_ns() >= until)
			break;
		cx_spin_pause();
	}
	atomic_fetch_sub(&cx->cmp.helpers, 1);
	/* Off the waiter's critical path: by the completion thread. */
	if (reported) {
		atomic_store(&cx->cmp.kick_deferred, true);
		if (atomic_load(&cx->cmp.done_idle) &&
		    atomic_exchange(&cx->cmp.kick_deferred, false))
			cx_after_report(cx);
	}
	return ret;
}

static int no_poll(struct accel_ctx *ctx, void *arg)
{
	(void)ctx;
	(void)arg;
	return -ETIME;
}

/* Take what the device finished now, from this thread. */
bool accel_cuda_poll(struct accel_ctx *ctx)
{
	accel_cuda_wait_fast(ctx, no_poll, NULL, 0);
	return true;
}
