// SPDX-License-Identifier: MIT
/*
 * The cuda backend: waiting. A waiter whose context has work on the
 * device polls completions itself and reports them (cx_poll_locked(),
 * done.c), sleeping between polls as the hybrid wait plans from the
 * ranges' expected ends, so that its wait returns without a thread
 * hand-off.
 */
#include "cuda.h"
#include <sys/prctl.h>

/*
 * A sleep of the hybrid wait ends up to the thread's timer slack late
 * (50 us by default): it is lowered to 1 us for the wait; *@slack keeps
 * the caller's, for cx_slack_restore().
 */
static void cx_slack_lower(long *slack)
{
	if (*slack >= 0)
		return;
	*slack = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
	if (*slack > 1000)
		prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
}

static void cx_slack_restore(long slack)
{
	if (slack > 1000)
		prctl(PR_SET_TIMERSLACK, (unsigned long)slack, 0, 0, 0);
}

/* What the hybrid wait goes by: the pending range expected first. */
struct cx_plan {
	uint64_t eta;			/* its expected end; 0: none known */
	uint64_t run;			/* when it should have started */
	uint64_t issued;		/* when it was issued */
};

/*
 * The pending range on the device expected to end first; eta 0 when one
 * of them has no estimate (its end cannot be told: poll for it).
 */
static struct cx_plan cx_next_plan(struct accel_cuda *cx)
{
	struct cx_plan p = { UINT64_MAX, 0, 0 };
	struct cx_range *r;
	unsigned int n = 0;

	pthread_mutex_lock(&cx->lock);
	for (r = cx->cmp.head; r && n < 64; r = r->next, n++) {
		if (!r->need_ev)
			continue;
		if (!r->eta) {
			p.eta = 0;
			break;
		}
		if (r->eta < p.eta) {
			p.eta = r->eta;
			p.run = r->t_run;
			p.issued = r->t_close;
		}
	}
	pthread_mutex_unlock(&cx->lock);
	if (p.eta == UINT64_MAX)
		p.eta = 0;
	return p;
}

/* A sleep shorter than this is not worth its wake-up: poll instead. */
#define CX_SLEEP_MIN_NS		2000ULL
/* Polling, the hybrid wait looks at its plan again this often. */
#define CX_REPLAN_NS		2000ULL

/*
 * Between two polls of a hybrid wait that began at @start: until when to
 * sleep (mono ns), or 0 to poll again at once. With the first expected
 * end E of a range that should have started at S and was issued at I
 * (cx_range_plan_locked()):
 *
 *  - before the middle of its expected run, S + (E - S) / 2, sleep
 *    towards it (io_uring's hybrid polling sleeps half the expected
 *    time); in the second half sleep towards E - wake_ns; within wake_ns
 *    of E, and spin_ns past it, poll;
 *  - each sleep is at most an eighth (first half) or a sixty-fourth
 *    (second half) of the time since I, so that an estimate that is
 *    wrong and too slow (a rate learned under load) cannot keep the
 *    waiter asleep past the real end by more than that share of the
 *    range's time;
 *  - past E + spin_ns (the estimate was early: the device is shared),
 *    sleep a 128th of the time since I between polls, or with no
 *    estimate, after spin_ns of polling, a thirty-second of the time
 *    waited; at most CX_SLICE_MAX_NS either way.
 *
 * A sleep never ends past E - wake_ns while E is ahead.
 */
static uint64_t cx_hybrid_next(struct accel_cuda *cx, uint64_t start,
			       uint64_t now)
{
	struct cx_plan p = cx_next_plan(cx);
	uint64_t until, cap, since, slice;

	if (p.eta > now) {
		uint64_t mid = p.run + (p.eta - p.run) / 2;
		uint64_t ran = now > p.issued ? now - p.issued : 0;

		if (p.eta - now <= cx->cfg.wake_ns)
			return 0;
		if (now < mid) {
			until = mid;
			cap = ran / 8;
		} else {
			until = p.eta - cx->cfg.wake_ns;
			cap = ran / 64;
		}
		if (until > now + cap)
			until = now + cap;
		return until < now + CX_SLEEP_MIN_NS ? 0 : until;
	}
	since = p.eta > start ? p.eta : start;
	if (now - since < cx->cfg.spin_ns)
		return 0;
	slice = p.eta ? (now - (p.issued < start ? p.issued : start)) / 128 :
		(now - start) / 32;
	if (slice > CX_SLICE_MAX_NS)
		slice = CX_SLICE_MAX_NS;
	return slice < CX_SLEEP_MIN_NS ? 0 : now + slice;
}

/*
 * Work on the device, or about to be: a pass is issuing, or a kick
 * waits for the issuer (a waiter may come before the copy it waits for
 * went down: submission returns before the issue).
 */
static bool cx_busy(struct accel_cuda *cx)
{
	return atomic_load(&cx->cmp.npending) || atomic_load(&cx->is.issuing) ||
	       (atomic_load(&cx->is.kick) && atomic_load(&cx->is.hot));
}

/*
 * A waiter polls the device itself before it sleeps in the transport:
 * while the work it may be waiting for is on the GPU, it takes
 * completions and reports them from this thread, so that the
 * transport's wait returns at once instead of after two thread
 * hand-offs (completion thread, then the wake of the waiter). Hybrid
 * (cfg.hybrid): for as long as there is device work, sleeping between
 * polls as cx_hybrid_next() says; else for up to spin_ns.
 * @poll is the transport's wait until an absolute time (0: a poll):
 * -ETIME while not satisfied. Returns its last answer.
 */
int accel_cuda_wait_fast(struct accel_ctx *ctx,
			 int (*poll)(struct accel_ctx *, void *, uint64_t),
			 void *arg, uint64_t deadline)
{
	struct accel_cuda *cx = cx_of(ctx);
	uint64_t start, replan = 0;
	bool refetch = false;
	unsigned int iter;
	long slack = -1;
	int ret;

	/*
	 * The submissions before this are not a burst with those after, and
	 * what of them the issuer has not taken yet goes down from here.
	 */
	if (cx && atomic_load_explicit(&cx->is.since_wait, memory_order_relaxed))
		atomic_store(&cx->is.since_wait, 0);
	if (cx)
		cx_issue_tail(cx);
	ret = poll(ctx, arg, 0);
	if (ret != -ETIME || !cx || !cx_busy(cx)) {
		if (!ret && cx)
			cx_trace_waited(cx);
		return ret;
	}
	start = cx_mono_ns();
	atomic_fetch_add(&cx->cmp.helpers, 1);
	for (iter = 0;; iter++) {
		unsigned int got = 0;
		uint64_t now, until;

		if (!pthread_mutex_trylock(&cx->cmp.report_lock)) {
			got = cx_poll_locked(cx, true, &refetch);
			pthread_mutex_unlock(&cx->cmp.report_lock);
		}
		/*
		 * The transport's answer changes with a report: ask it after
		 * ours, and every eighth time (another thread's, a host
		 * event), so that a poll of the device is all a turn costs.
		 */
		if (got || !(iter & 7) || !cx_busy(cx)) {
			ret = poll(ctx, arg, 0);
			if (ret != -ETIME || !cx_busy(cx))
				break;
		}
		now = cx_mono_ns();
		if (now >= deadline)
			break;
		if (!cx->cfg.hybrid) {
			if (now - start >= cx->cfg.spin_ns)
				break;
			cx_pause();
			continue;
		}
		/* Polling: the plan is looked at again after a while. */
		if (now < replan) {
			cx_pause();
			continue;
		}
		until = cx_hybrid_next(cx, start, now);
		if (!until) {
			replan = now + CX_REPLAN_NS;
			cx_pause();
			continue;
		}
		if (until > deadline)
			until = deadline;
		cx_slack_lower(&slack);
		if (cx->cfg.trace)
			atomic_fetch_add(&cx->tr.naps, 1);
		/* In the transport: what we wait for may come first. */
		ret = poll(ctx, arg, until);
		if (ret != -ETIME && ret != -EINTR)
			break;
		ret = -ETIME;
	}
	cx_slack_restore(slack);
	if (cx->cfg.trace) {
		if (!ret)
			cx_trace_waited(cx);
		else if (ret == -ETIME && deadline > cx_mono_ns())
			atomic_fetch_add(&cx->tr.waiter_sleeps, 1);
	}
	/*
	 * Going to sleep in the transport with work on the device: the
	 * completion thread, napping while we polled, takes over now.
	 */
	if (atomic_fetch_sub(&cx->cmp.helpers, 1) == 1 && ret == -ETIME &&
	    atomic_load(&cx->cmp.npending)) {
		pthread_mutex_lock(&cx->lock);
		pthread_cond_signal(&cx->cmp.cond);
		pthread_mutex_unlock(&cx->lock);
	}
	/* Rare: a HOST_SIGNAL retired or a range failed. */
	if (refetch)
		cx_after_report(cx);
	return ret;
}

static int no_poll(struct accel_ctx *ctx, void *arg, uint64_t until)
{
	(void)ctx;
	(void)arg;
	(void)until;
	return -ETIME;
}

/* Take what the device finished now, from this thread. */
bool accel_cuda_poll(struct accel_ctx *ctx)
{
	accel_cuda_wait_fast(ctx, no_poll, NULL, 0);
	return true;
}
