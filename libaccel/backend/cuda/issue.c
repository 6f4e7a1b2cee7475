// SPDX-License-Identifier: MIT
/*
 * The cuda backend: the issue path. Fetch what the transport hands out
 * (from the thread that submitted, or the fetch thread), hand each item
 * to the enqueue (enqueue.c), and pass the ranges of a batch to the
 * completer; the stream table, its garbage collection and the issuer
 * thread.
 */
#include "cuda.h"

struct cx_stream *cx_stream_get(struct accel_cuda *cx, uint32_t k,
				bool create)
{
	struct cx_stream **pp = &cx->is.buckets[k % CX_BUCKETS], *s;

	for (s = *pp; s; s = s->hnext)
		if (s->kstream == k)
			return s;
	if (!create)
		return NULL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->kstream = k;
	s->hnext = *pp;
	*pp = s;
	s->lnext = cx->is.streams;
	cx->is.streams = s;
	return s;
}

void cx_stream_free(struct accel_cuda *cx, struct cx_stream *s)
{
	unsigned int i;

	for (i = 0; i < s->nrec; i++)
		cx_event_put(cx, s->rec[i].ev);
	if (s->cs)
		cx_rt.cudaStreamDestroy(s->cs);
	cx_word_put(cx, s);
	free(s->rec);
	free(s->copies);
	free(s);
}

static void cx_stream_unhash(struct accel_cuda *cx, struct cx_stream *s)
{
	struct cx_stream **pp;

	for (pp = &cx->is.buckets[s->kstream % CX_BUCKETS]; *pp; pp = &(*pp)->hnext)
		if (*pp == s) {
			*pp = s->hnext;
			break;
		}
}

/*
 * Before each fetch, under exec_lock: drop record events whose point was
 * reported (no wait fetched from now on can name them: the transport
 * hands out (stream, seq) only for points that had not retired), and free
 * the streams that were destroyed and have nothing left in flight.
 */
static void cx_gc(struct accel_cuda *cx)
{
	struct cx_stream **pp, *s;
	uint32_t *dead = NULL;
	unsigned int ndead, i, j;

	for (s = cx->is.streams; s; s = s->lnext) {
		uint64_t rep;

		if (!s->nrec)
			continue;
		rep = atomic_load(&s->reported);
		for (j = 0; j < s->nrec && s->rec[j].seq <= rep; j++)
			cx_event_put(cx, s->rec[j].ev);
		if (j) {
			memmove(s->rec, s->rec + j,
				(s->nrec - j) * sizeof(*s->rec));
			s->nrec -= j;
		}
	}

	ndead = 0;
	if (atomic_load_explicit(&cx->is.ndead_hint, memory_order_acquire)) {
		pthread_mutex_lock(&cx->lock);
		ndead = cx->is.ndead;
		if (ndead) {
			dead = cx->is.dead_streams;
			cx->is.dead_streams = NULL;
			cx->is.ndead = cx->is.capdead = 0;
			atomic_store(&cx->is.ndead_hint, 0);
		}
		pthread_mutex_unlock(&cx->lock);
	}
	for (i = 0; i < ndead; i++) {
		s = cx_stream_get(cx, dead[i], false);
		if (s) {
			s->dead = true;
			cx->is.any_dead = true;
		}
	}
	free(dead);
	if (!cx->is.any_dead)
		return;

	cx->is.any_dead = false;
	pp = &cx->is.streams;
	while ((s = *pp)) {
		bool idle;

		if (!s->dead) {
			pp = &s->lnext;
			continue;
		}
		pthread_mutex_lock(&cx->lock);
		idle = !s->npending;
		pthread_mutex_unlock(&cx->lock);
		if (idle && atomic_load(&s->reported) >= s->last_fetched) {
			*pp = s->lnext;
			cx_stream_unhash(cx, s);
			cx_stream_free(cx, s);
		} else {
			cx->is.any_dead = true;
			pp = &s->lnext;
		}
	}
}

/* Close every range this batch opened and hand them to the completer. */
static void cx_close_ranges(struct accel_cuda *cx, struct cx_stream **touched,
			    unsigned int n, bool inline_)
{
	struct cx_range *first = NULL, *last = NULL, **tail = &first;
	unsigned int i, count = 0;
	uint64_t now = 0;

	struct cx_range *r;

	for (i = 0; i < n; i++) {
		struct cx_stream *s = touched[i];

		r = s->open;

		cx_flush_copies(cx, s);
		s->open = NULL;
		s->touched = false;
		/* Its completion event comes later, when it is needed. */
		r->need_ev = r->device_work && s->cs;
		if (!now)
			now = cx_mono_ns();
		r->t_close = now;
		if (cx->cfg.trace) {
			r->smp.t[CX_T_CALLED] = now;
			r->smp.by_issuer = !inline_;
		}
		*tail = r;
		tail = &r->next;
		last = r;
		count++;
	}
	if (!first)
		return;
	pthread_mutex_lock(&cx->lock);
	for (r = first; r; r = r->next) {
		cx_range_plan_locked(cx, r, now);
		/* Streams of one pass share the device: none runs alone. */
		if (count > 1)
			r->t_start = 0;
		r->s->npending++;
		r->s->tail_r = r;
	}
	if (!cx->is.rcache) {
		cx->is.rcache = cx->cmp.rfree;
		cx->cmp.rfree = NULL;
	}
	if (cx->cmp.tail)
		cx->cmp.tail->next = first;
	else
		cx->cmp.head = first;
	cx->cmp.tail = last;
	atomic_fetch_add(&cx->cmp.npending, count);
	/* Dozing, it looks by itself: no wake-up per submission. */
	if (cx->cmp.deep_sleep) {
		if (cx->cfg.trace)
			atomic_fetch_add(&cx->tr.wake_done, 1);
		pthread_cond_signal(&cx->cmp.cond);
	}
	pthread_mutex_unlock(&cx->lock);
}

/*
 * Poll EXEC_FETCH until nothing more is fetchable and enqueue what came,
 * under exec_lock: fetch order is enqueue order.
 */
static void cx_fetch_locked(struct accel_cuda *cx, uint64_t t_submit,
			    bool inline_)
{
	struct accel_exec_fetch f;

	for (;;) {
		uint64_t t_fetch = 0;
		unsigned int i, n = 0;
		int ret;

		cx_gc(cx);
		memset(&f, 0, sizeof(f));
		f.items = (uint64_t)(uintptr_t)cx->is.items;
		f.max_items = cx->is.fetch_max;
		f.timeout_ns = 0;	/* a past deadline: poll */
		ret = accel_ioctl(cx->ctx, ACCEL_IOC_EXEC_FETCH, &f);
		if (ret) {
			if (ret != -ETIME && ret != -EINTR && ret != -ENXIO)
				accel_log(LOG_ERR, "cuda: EXEC_FETCH: %s",
					  strerror(-ret));
			return;
		}
		if (cx->cfg.trace)
			t_fetch = cx_mono_ns();
		for (i = 0; i < f.count; i++) {
			struct cx_stream *s;

			cx_item(cx, &cx->is.items[i], t_submit, t_fetch);
			s = cx_stream_get(cx, cx->is.items[i].stream, false);
			/* Each stream listed once; close clears ->touched. */
			if (s && s->open && !s->touched) {
				s->touched = true;
				cx->is.touched[n++] = s;
			}
		}
		cx_close_ranges(cx, cx->is.touched, n, inline_);
		if (f.count < f.max_items)
			return;
	}
}

/* ACCEL_TRACE: another thread issues what this submit made fetchable. */
static void cx_trace_handoff(struct accel_cuda *cx, uint64_t t_submit)
{
	uint64_t none = 0;

	if (t_submit)
		atomic_compare_exchange_strong(&cx->tr.handoff, &none, t_submit);
}

/* Make the issuer hot: it takes the kicks from now on. */
static void cx_issuer_wake(struct accel_cuda *cx)
{
	pthread_mutex_lock(&cx->lock);
	if (!atomic_load(&cx->is.hot)) {
		atomic_store(&cx->is.hot, true);
		if (cx->cfg.trace)
			atomic_fetch_add(&cx->tr.wake_issuer, 1);
		pthread_cond_signal(&cx->is.fetch_cond);
	}
	pthread_mutex_unlock(&cx->lock);
}

/*
 * Is this submission part of a burst? It is when at least two came since
 * a wait began and the context's earlier work is still on its way
 * (pending on the device, being issued, or the issuer is hot). A round
 * trip (submit, wait, submit, ...) is never one, nor a copy there and
 * back before a wait: those are issued by the thread that submits them,
 * without a hand-off.
 */
static bool cx_burst(struct accel_cuda *cx)
{
	if (atomic_fetch_add(&cx->is.since_wait, 1) < 2)
		return false;
	return atomic_load(&cx->cmp.npending) || atomic_load(&cx->is.issuing) ||
	       atomic_load(&cx->is.hot);
}

/*
 * Serve the kick flag: fetch and enqueue while it is set, under
 * exec_lock; a thread that finds exec_lock taken leaves the kick to its
 * holder, which polls once more before it lets go, so none is left
 * behind. @own: the calling thread is the one that submitted or waits
 * (ACCEL_TRACE's by_issuer); @passes counts the passes (ACCEL_TRACE).
 * @once: after one pass, a kick that came during it is left to the
 * issuer if it is hot (it sees the flag; paired as in cx_kick()), so
 * that a waiter does not become the issuer of another thread's burst.
 */
static void cx_issue_kicked(struct accel_cuda *cx, uint64_t t_submit,
			    bool own, bool once, _Atomic uint64_t *passes)
{
	int dev = -1;

	while (atomic_load(&cx->is.kick)) {
		if (pthread_mutex_trylock(&cx->is.exec_lock)) {
			cx_trace_handoff(cx, t_submit);
			return;
		}
		/*
		 * Counted before the kick is cleared, and until the ranges
		 * are pending: a waiter always sees work coming (cx_busy()).
		 */
		atomic_fetch_add(&cx->is.issuing, 1);
		atomic_store(&cx->is.kick, 0);
		if (!cx->is.stopped) {
			if (cx->cfg.multi_dev && dev < 0 &&
			    cx_rt.cudaGetDevice(&dev) == cudaSuccess &&
			    dev != cx->cfg.device)
				cx_rt.cudaSetDevice(cx->cfg.device);
			if (cx->cfg.trace)
				atomic_fetch_add(passes, 1);
			cx_fetch_locked(cx, t_submit, own);
		}
		atomic_fetch_sub(&cx->is.issuing, 1);
		pthread_mutex_unlock(&cx->is.exec_lock);
		if (once && atomic_load(&cx->is.hot))
			break;
	}
	/* The caller's current device is its own business. */
	if (dev >= 0 && dev != cx->cfg.device)
		cx_rt.cudaSetDevice(dev);
}

/*
 * Fetch and enqueue what became fetchable, from the calling thread
 * (inline: the thread that submitted issues its own CUDA work, no thread
 * hand-off), unless the submission is part of a burst (@inline_ and
 * cx_burst()): that is the issuer's, woken hot if it is not, so that the
 * submitting thread returns as soon as the transport has the
 * descriptors. Whoever holds exec_lock already fetches on our behalf:
 * the kick flag makes it poll once more after the work we just made
 * fetchable, so none is left behind.
 */
void cx_kick(struct accel_cuda *cx, uint64_t t_submit, bool inline_)
{
	atomic_store(&cx->is.kick, 1);
	/*
	 * The issuer is hot: it sees the flag within a pause and issues this
	 * with whatever else came meanwhile. Paired with the issuer storing
	 * hot = false before its last look at the flag (both seq_cst): one of
	 * the two sees the other's store, so no kick is left unserved.
	 */
	if (inline_ && cx->cfg.issuer && cx_burst(cx)) {
		cx_trace_handoff(cx, t_submit);
		if (!atomic_load(&cx->is.hot))
			cx_issuer_wake(cx);
		return;
	}
	cx_issue_kicked(cx, t_submit, inline_, false,
			inline_ ? &cx->tr.passes_inline : &cx->tr.passes_thread);
}

/*
 * A wait began: what was submitted and is not issued yet is the tail of
 * a burst, left to the issuer. Issue it from the waiting thread instead
 * of waiting for the issuer to take it (woken for the burst but not
 * running yet, the waiter would wait for a thread's wake-up, and then
 * for its pass); if a pass is under way, its thread takes it (the kick).
 */
void cx_issue_tail(struct accel_cuda *cx)
{
	if (atomic_load(&cx->is.kick))
		cx_issue_kicked(cx, 0, true, true, &cx->tr.passes_waiter);
}

/*
 * The issuer, hot: serve every kick until none came for issue_spin_ns,
 * issuing what accumulated since its previous pass as one pass. Returns
 * with hot cleared and no kick left behind.
 */
static void cx_issuer_hot(struct accel_cuda *cx)
{
	uint64_t until = cx_mono_ns() + cx->cfg.issue_spin_ns;

	for (;;) {
		if (atomic_load(&cx->is.kick)) {
			if (cx->cfg.trace)
				atomic_fetch_add(&cx->tr.passes_issuer, 1);
			cx_kick(cx, 0, false);
			until = cx_mono_ns() + cx->cfg.issue_spin_ns;
			continue;
		}
		/* A wait began: the burst is over, its next copy is inline. */
		if (cx_mono_ns() >= until || atomic_load(&cx->is.stopping) ||
		    !atomic_load(&cx->is.since_wait)) {
			atomic_store(&cx->is.hot, false);
			/* A kick that saw hot still set: ours to serve. */
			if (!atomic_load(&cx->is.kick))
				return;
			atomic_store(&cx->is.hot, true);
			continue;
		}
		cx_pause();
	}
}

void accel_cuda_kick(struct accel_ctx *ctx)
{
	uint64_t t = cx_tl_submit_ns;

	cx_tl_submit_ns = 0;
	cx_kick(cx_of(ctx), t, true);
}

/*
 * The fetch thread is the issuer: woken hot by a submitter's inline pass,
 * it takes the submissions that follow (cx_issuer_hot). Cold, it is a
 * safety net: every call that can make work fetchable (SUBMIT,
 * EVENT_RECORD, EVENT_SIGNAL, EXEC_COMPLETE) kicks the executor from the
 * thread that made it; it polls every CX_IDLE_NS.
 */
void *cx_fetch_main(void *arg)
{
	struct accel_cuda *cx = arg;

	cx_rt.cudaSetDevice(cx->cfg.device);
	pthread_mutex_lock(&cx->lock);
	while (!cx->is.stop_fetch) {
		struct timespec ts;
		uint64_t until = cx_mono_ns() + CX_IDLE_NS;

		ts.tv_sec = (time_t)(until / 1000000000ULL);
		ts.tv_nsec = (long)(until % 1000000000ULL);
		if (!atomic_load(&cx->is.hot))
			pthread_cond_timedwait(&cx->is.fetch_cond, &cx->lock, &ts);
		if (cx->is.stop_fetch)
			break;
		pthread_mutex_unlock(&cx->lock);
		if (atomic_load(&cx->is.hot))
			cx_issuer_hot(cx);
		else
			cx_kick(cx, 0, false);
		pthread_mutex_lock(&cx->lock);
	}
	atomic_store(&cx->is.hot, false);
	pthread_mutex_unlock(&cx->lock);
	/* Last pass: what is fetchable now goes to the device. */
	cx_kick(cx, 0, false);
	pthread_mutex_lock(&cx->is.exec_lock);
	cx->is.stopped = true;
	pthread_mutex_unlock(&cx->is.exec_lock);
	pthread_mutex_lock(&cx->lock);
	cx->is.fetch_exited = true;
	pthread_cond_signal(&cx->cmp.cond);
	pthread_mutex_unlock(&cx->lock);
	return NULL;
}

void accel_cuda_stream_dead(struct accel_ctx *ctx, uint32_t kstream)
{
	struct accel_cuda *cx = cx_of(ctx);
	uint32_t *d;

	if (!cx)
		return;
	pthread_mutex_lock(&cx->lock);
	d = cx_grow(cx->is.dead_streams, &cx->is.capdead, cx->is.ndead + 1, sizeof(*d));
	if (d) {
		cx->is.dead_streams = d;
		d[cx->is.ndead++] = kstream;
		atomic_store(&cx->is.ndead_hint, cx->is.ndead);
	}
	pthread_mutex_unlock(&cx->lock);
}
