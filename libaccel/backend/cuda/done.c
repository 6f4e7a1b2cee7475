// SPDX-License-Identifier: MIT
/*
 * The cuda backend: completion. The event pool, the host words, the lazy
 * completion markers of ranges, when a range should be done, the report
 * of done ranges with EXEC_COMPLETE and the completion thread that makes
 * it for what nobody waits for. The waiting side, a waiter that polls
 * and reports from its own thread, is wait.c.
 */
#include "cuda.h"

/*
 * Host words (ACCEL_CUDA_COMPLETION=word): a cache line of mapped pinned
 * memory per stream, taken from pages of CX_WORDS_PER_PAGE; the device
 * writes a range's last seq there, the host reads it. Pages stay until
 * the context goes. 0, or -ENOMEM (the stream then uses events).
 */
int cx_word_get(struct accel_cuda *cx, struct cx_stream *s)
{
	struct cx_wordpage *pg;
	unsigned int slot;
	void *dev = NULL;
	cudaError_t e;

	pthread_mutex_lock(&cx->lock);
	for (pg = cx->cmp.words; pg; pg = pg->next)
		if (~pg->used)
			break;
	pthread_mutex_unlock(&cx->lock);
	if (!pg) {
		pg = calloc(1, sizeof(*pg));
		if (!pg)
			return -ENOMEM;
		e = cx_rt.cudaHostAlloc((void **)&pg->host,
				     CX_WORDS_PER_PAGE * 64,
				     cudaHostAllocMapped | cudaHostAllocPortable);
		if (e == cudaSuccess)
			e = cx_rt.cudaHostGetDevicePointer(&dev, pg->host, 0);
		if (e != cudaSuccess) {
			if (pg->host)
				cx_rt.cudaFreeHost(pg->host);
			free(pg);
			cx_rt.cudaGetLastError();
			return -ENOMEM;
		}
		memset(pg->host, 0, CX_WORDS_PER_PAGE * 64);
		pg->dev = (unsigned long long)(uintptr_t)dev;
		pthread_mutex_lock(&cx->lock);
		pg->next = cx->cmp.words;
		cx->cmp.words = pg;
		pthread_mutex_unlock(&cx->lock);
	}
	pthread_mutex_lock(&cx->lock);
	if (!~pg->used) {
		/* Taken meanwhile: the next caller allocates. */
		pthread_mutex_unlock(&cx->lock);
		return -ENOMEM;
	}
	slot = (unsigned int)__builtin_ctzll(~pg->used);
	pg->used |= 1ULL << slot;
	s->word_page = pg;
	s->word_slot = slot;
	s->word = (_Atomic uint32_t *)(pg->host + slot * 64);
	s->word_dev = pg->dev + slot * 64;
	/* Below every seq the stream will report from now on. */
	atomic_store(s->word, (uint32_t)s->last_fetched - 1);
	s->word_seq = s->last_fetched - 1;
	pthread_mutex_unlock(&cx->lock);
	return 0;
}

void cx_word_put(struct accel_cuda *cx, struct cx_stream *s)
{
	if (!s->word_page)
		return;
	pthread_mutex_lock(&cx->lock);
	s->word_page->used &= ~(1ULL << s->word_slot);
	s->word_page = NULL;
	s->word = NULL;
	pthread_mutex_unlock(&cx->lock);
}

void cx_words_free(struct accel_cuda *cx)
{
	struct cx_wordpage *pg;

	while ((pg = cx->cmp.words)) {
		cx->cmp.words = pg->next;
		cx_rt.cudaFreeHost(pg->host);
		free(pg);
	}
}

/*
 * The ns per byte @r's stream moves @r's direction at, the fastest seen
 * (the context's fastest for a stream that has none yet); 0: not known.
 */
static double cx_rate_locked(struct accel_cuda *cx, const struct cx_range *r)
{
	if (r->dir >= CX_NDIR)
		return 0;
	return r->s->nspb[r->dir] ? r->s->nspb[r->dir] : cx->cmp.nspb[r->dir];
}

/*
 * A range was issued at @now: when should it be done? It runs after the
 * stream's previous range (t_run), at its stream's fastest rate, so the
 * estimate errs early, never late (cx_hybrid_next() polls past it). A
 * range the rate does not cover (mixed, or never measured) has no
 * estimate, and neither has what follows it on the stream. Under
 * cx->lock.
 */
void cx_range_plan_locked(struct accel_cuda *cx, struct cx_range *r,
			  uint64_t now)
{
	struct cx_stream *s = r->s;
	double nspb = r->need_ev ? cx_rate_locked(cx, r) : 0;
	uint64_t start = now;

	/* Alone in the context: its time, once seen, tells the rate. */
	r->t_start = !atomic_load(&cx->cmp.npending) ? now : 0;
	r->closes = ++cx->cmp.closes;
	r->eta = 0;
	r->t_run = now;
	if (!r->need_ev) {
		r->eta = s->npending ? s->eta_tail : now;
		return;
	}
	if (s->npending) {
		if (!s->eta_tail)
			return;		/* behind a range of unknown end */
		if (s->eta_tail > start)
			start = s->eta_tail;
	}
	r->t_run = start;
	if (nspb > 0)
		r->eta = start + (uint64_t)(nspb * (double)r->bytes);
	s->eta_tail = r->eta;
}

/* Keep @nspb if it is faster than what @slot holds (0: nothing yet). */
static void cx_rate_min(double *slot, double nspb)
{
	if (!*slot || nspb < *slot)
		*slot = nspb;
}

/*
 * @r was seen done at @now by a poll. If it ran alone in the context from
 * its issue (nothing else pending then, nothing issued since), @now minus
 * its issue is an upper bound of its time on the device, and the better
 * the closer the poll before found it not done: less half that gap when
 * the gap is within a sixteenth of it. The stream and the context keep
 * the fastest rate such a bound gives, per direction: a late sighting
 * never slows the estimate, and a wrong, slow one is corrected by the
 * first faster completion. Under cx->lock.
 */
static void cx_rate_learn_locked(struct accel_cuda *cx, struct cx_range *r,
				 uint64_t now)
{
	uint64_t took, gap;
	double nspb;

	if (!r->t_start || r->closes != cx->cmp.closes || r->dir >= CX_NDIR ||
	    r->bytes < CX_SAMPLE_MIN_BYTES || r->fail_seq || now <= r->t_start)
		return;
	took = now - r->t_start;
	gap = r->t_notready > r->t_start ? now - r->t_notready : took;
	if (gap * 16 <= took)
		took -= gap / 2;
	nspb = (double)took / (double)r->bytes;
	cx_rate_min(&r->s->nspb[r->dir], nspb);
	cx_rate_min(&cx->cmp.nspb[r->dir], nspb);
	if (cx->cfg.trace)
		atomic_fetch_add(&cx->tr.rate_samples, 1);
}

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
		/* The completion thread may be blocked on it: keep it. */
		if (ev != cx->cmp.sync_ev)
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
	CX_STAMP(cx, t, CX_T_MARKED);
	CX_COUNT(cx, t, marker_calls);
	return ev;
}

/*
 * ACCEL_CUDA_COMPLETION=word: make sure a write of a seq at or past @r's
 * last is on its stream (lazily, as events are). 1: @r is done (the word
 * says so), 0: not yet, -1: no word (use an event). Under cx->lock.
 */
static int cx_range_word(struct accel_cuda *cx, struct cx_range *r, bool force,
			 uint64_t *now)
{
	struct cx_stream *s = r->s;
	struct cx_range *t = s->tail_r ? s->tail_r : r;
	uint32_t w;
	int e;

	if (!s->word)
		return -1;
	w = atomic_load_explicit(s->word, memory_order_acquire);
	if ((int32_t)(w - (uint32_t)r->last) >= 0)
		return 1;
	if (s->word_seq >= r->last)
		return 0;
	if (!force) {
		if (!*now)
			*now = cx_mono_ns();
		if (*now - t->t_close < cx->cfg.lazy_ns &&
		    *now - r->t_close < cx->cfg.lazy_max_ns)
			return 0;
	}
	e = cx_rt.write32(s->cs, s->word_dev, (uint32_t)t->last, 0);
	if (e) {
		/* This stream goes back to events. */
		cx_rt.cudaGetLastError();
		s->word = NULL;
		return -1;
	}
	s->word_seq = t->last;
	CX_STAMP(cx, t, CX_T_MARKED);
	CX_COUNT(cx, t, marker_calls);
	/* Idle device: it may be written already. */
	w = atomic_load_explicit(s->word, memory_order_acquire);
	return (int32_t)(w - (uint32_t)r->last) >= 0;
}

/* The event of a later range of @r's stream that covers it, or NULL. */
static cudaEvent_t s_cover_ev(const struct cx_range *r)
{
	const struct cx_range *c = r->s->cover;

	return c && c->last >= r->last ? c->ev : NULL;
}

/* Is @r done on the device? 1 yes, 0 not yet; fails the range on error. */
static int cx_range_ready(struct accel_cuda *cx, struct cx_range *r,
			  bool force, struct cx_scan *sc)
{
	cudaEvent_t ev;
	cudaError_t e;

	if (!r->need_ev)
		return 1;
	/*
	 * A pass is issuing a burst: a marker, an event record or a query
	 * from here would contend with the issuer's copy calls (on the H200
	 * one 16 MiB D2D call went from 5.7 to 8.2 us with a waiter making
	 * them, and a burst of them became bound by its issue). Only what
	 * the host word already says, until the pass ends or the range
	 * has waited quiet_max_ns.
	 */
	if (sc->quiet) {
		if (!sc->now)
			sc->now = cx_mono_ns();
		if (sc->now - r->t_close < cx->cfg.quiet_max_ns) {
			struct cx_stream *s = r->s;

			return s->word && (int32_t)(atomic_load_explicit(
				s->word, memory_order_acquire) -
				(uint32_t)r->last) >= 0;
		}
	}
	if (cx->cfg.word) {
		int w = cx_range_word(cx, r, force, &sc->now);

		if (w == 1)
			return 1;
		if (w == 0) {
			uint64_t now;

			/*
			 * An event only where one was recorded (to sleep on),
			 * or for a waiter once the range is late: an earlier
			 * copy's failure shows only there (the word is then
			 * never written).
			 */
			ev = r->ev ? r->ev : s_cover_ev(r);
			if (!ev) {
				now = cx_mono_ns();
				if (!force || now - r->t_close < cx->cfg.spin_ns ||
				    (r->eta && now < r->eta)) {
					r->t_notready = now;
					return 0;
				}
				ev = cx_range_event(cx, r, true, &sc->now);
				if (!ev)
					return r->need_ev ? 0 : 1;
			}
			goto query;
		}
	}
	ev = cx_range_event(cx, r, force, &sc->now);
	if (!ev)
		return r->need_ev ? 0 : 1;
query:
	if (ev == sc->done_ev)
		return 1;
	CX_COUNT(cx, r, queries);
	e = cx_rt.cudaEventQuery(ev);
	if (e == cudaSuccess)
		sc->done_ev = ev;
	if (e == cudaSuccess)
		return 1;
	if (e == cudaErrorNotReady) {
		r->t_notready = cx_mono_ns();
		return 0;
	}
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
	struct cx_scan sc = {
		.quiet = !force && atomic_load(&cx->is.issuing),
	};

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
		if (cx->cfg.hybrid) {
			if (!sc.now2)
				sc.now2 = cx_mono_ns();
			cx_rate_learn_locked(cx, r, sc.now2);
		}
		CX_STAMP(cx, r, CX_T_SEEN);
		out[n++] = r;
	}
	atomic_fetch_sub(&cx->cmp.npending, n);
	return n;
}

/*
 * Report @done[0..n) with EXEC_COMPLETE. Returns true when that may have
 * made work fetchable: a HOST_SIGNAL retired (a HOST_WAIT on its user
 * event may go now) or a range failed; nothing else a completion does
 * changes what the transport hands out (asc_entry_fetchable()).
 */
static bool cx_report(struct accel_cuda *cx, struct cx_range **done,
		      unsigned int n, struct accel_exec_done *ents)
{
	struct accel_exec_complete c;
	unsigned int i, k = 0;
	bool refetch = false;
	int ret;

	for (i = 0; i < n; i++) {
		struct cx_range *r = done[i];

		refetch = refetch || r->host_signal || r->fail_seq;
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
	if (cx->cfg.trace)
		cx_trace_ranges(cx, done, n);
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
	return refetch;
}

/*
 * Take the ranges that are done and report them; under report_lock, so
 * that reports go out in order whoever polls. Returns how many; *@refetch
 * is set when a fetch pass should follow (cx_report()).
 */
unsigned int cx_poll_locked(struct accel_cuda *cx, bool waiter,
			    bool *refetch)
{
	/*
	 * A waiter has a completion marker recorded at once, unless a burst
	 * is still being issued: its markers then come lazily (when the
	 * stream goes quiet), not one per poll between the issuer's copies.
	 * A burst is over once a wait began (since_wait 0) and nothing is
	 * left to issue, though the issuer may not have cooled yet.
	 */
	bool force = waiter && !atomic_load(&cx->is.issuing) &&
		     (!atomic_load(&cx->is.hot) ||
		      (!atomic_load(&cx->is.since_wait) &&
		       !atomic_load(&cx->is.kick)));
	unsigned int n, i;

	pthread_mutex_lock(&cx->lock);
	n = cx_take_ready_locked(cx, cx->cmp.done, cx->cmp.done_max, force);
	pthread_mutex_unlock(&cx->lock);
	if (!n)
		return 0;
	for (i = 0; i < n; i++)
		cx->cmp.done[i]->smp.by_waiter = waiter;
	if (cx_report(cx, cx->cmp.done, n, cx->cmp.ents))
		*refetch = true;
	return n;
}

/* After completions: HOST_WAITs behind them may be fetchable now. */
void cx_after_report(struct accel_cuda *cx)
{
	if (cx->cfg.trace)
		atomic_fetch_add(&cx->tr.after_kicks, 1);
	cx_kick(cx, 0, false);
}

/*
 * The completion thread sleeps until @until (mono ns) or a signal; under
 * cx->lock. Dozing (@deep false) it is not signalled for new work, so
 * that a submission does not pay a wake-up; deep asleep (nothing pending
 * for CX_DOZE_MAX_NS) it is, by cx_close_ranges().
 */
static void cx_done_sleep_locked(struct accel_cuda *cx, uint64_t until,
				 bool deep)
{
	struct timespec ts;

	if (cx->cfg.trace)
		atomic_fetch_add(&cx->tr.done_slept, 1);
	cx->cmp.deep_sleep = deep;
	if (deep) {
		pthread_cond_wait(&cx->cmp.cond, &cx->lock);
	} else {
		ts.tv_sec = (time_t)(until / 1000000000ULL);
		ts.tv_nsec = (long)(until % 1000000000ULL);
		pthread_cond_timedwait(&cx->cmp.cond, &cx->lock, &ts);
	}
	cx->cmp.deep_sleep = false;
}

/*
 * The completion thread reports what nobody waits for (a waiter takes
 * and reports its own completions: accel_cuda_wait_fast()). It leaves a
 * range alone while a waiter polls and for its first lazy_ns (a waiter
 * is likely on its way: a round trip needs no thread but its own), then
 * polls it and, past spin_ns, sleeps in the driver on its event.
 */
void *cx_done_main(void *arg)
{
	struct accel_cuda *cx = arg;
	uint64_t waiting_since = 0, idle_since = 0;
	bool refetch;

	cx_rt.cudaSetDevice(cx->cfg.device);
	pthread_mutex_lock(&cx->lock);
	for (;;) {
		unsigned int n;
		uint64_t now;

		if (!cx->cmp.head) {
			if (cx->cmp.stop_done && cx->is.fetch_exited)
				break;
			now = cx_mono_ns();
			if (!idle_since)
				idle_since = now;
			/* Just busy: more work is likely soon; doze. */
			cx_done_sleep_locked(cx, now + CX_DOZE_NS,
					     now - idle_since >= CX_DOZE_MAX_NS);
			waiting_since = 0;
			continue;
		}
		idle_since = 0;
		now = cx_mono_ns();
		if (atomic_load(&cx->cmp.helpers) ||
		    now - cx->cmp.head->t_close < cx->cfg.lazy_ns) {
			/*
			 * A waiter polls the device, or may be about to: leave
			 * it the work. The waiter signals before it goes to
			 * sleep in the transport; the timeout is a safety net.
			 */
			cx_done_sleep_locked(cx, atomic_load(&cx->cmp.helpers) ?
					     now + CX_HELPER_NAP_NS :
					     cx->cmp.head->t_close + cx->cfg.lazy_ns,
					     false);
			continue;
		}
		pthread_mutex_unlock(&cx->lock);
		refetch = false;
		pthread_mutex_lock(&cx->cmp.report_lock);
		n = cx_poll_locked(cx, false, &refetch);
		pthread_mutex_unlock(&cx->cmp.report_lock);
		if (n) {
			if (refetch)
				cx_after_report(cx);
			pthread_mutex_lock(&cx->lock);
			waiting_since = 0;
			continue;
		}
		/*
		 * Work in flight, none done: poll for a short while (a small
		 * copy takes microseconds), then sleep in the driver on the
		 * oldest range's blocking-sync event, without report_lock (a
		 * waiter may come and report meanwhile). The event stays
		 * alive: pooled events are destroyed with the context only,
		 * and cx_event_put_locked() keeps this one (sync_ev).
		 */
		if (!waiting_since)
			waiting_since = cx_mono_ns();
		if (cx_mono_ns() - waiting_since < cx->cfg.spin_ns) {
			uint64_t until = cx_mono_ns() + CX_POLL_GAP_NS;

			/*
			 * Not every pause: each poll takes the locks the
			 * submitters take and queries the driver.
			 */
			while (cx_mono_ns() < until && !atomic_load(&cx->cmp.helpers))
				cx_pause();
		} else {
			cudaEvent_t ev = NULL;

			now = 0;
			pthread_mutex_lock(&cx->lock);
			/* Long enough: the head's event, recorded if need be. */
			if (cx->cmp.head && cx->cmp.head->need_ev &&
			    !atomic_load(&cx->cmp.helpers))
				ev = cx_range_event(cx, cx->cmp.head, true, &now);
			cx->cmp.sync_ev = ev;
			pthread_mutex_unlock(&cx->lock);
			if (ev)
				cx_rt.cudaEventSynchronize(ev);
			pthread_mutex_lock(&cx->lock);
			cx->cmp.sync_ev = NULL;
			pthread_mutex_unlock(&cx->lock);
		}
		pthread_mutex_lock(&cx->lock);
	}
	pthread_mutex_unlock(&cx->lock);
	return NULL;
}
