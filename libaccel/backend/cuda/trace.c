// SPDX-License-Identifier: MIT
/*
 * The cuda backend: ACCEL_TRACE=1, where a copy's time goes. Every range
 * carries its moments (submit entered, handed out by EXEC_FETCH, its
 * first CUDA call, enqueued, completion marker recorded, seen done,
 * retired by EXEC_COMPLETE, the wait that saw it returned) and the CUDA
 * calls made for it; the last CX_TRACE_SAMPLES reported ranges are kept
 * and, when the context goes, logged as medians per phase, with the
 * thread hand-offs and wake-ups the context made.
 */
#include "cuda.h"

/* This thread's last submit, for ACCEL_TRACE (0: not known). */
__thread uint64_t cx_tl_submit_ns;

void accel_cuda_mark_submit(struct accel_ctx *ctx)
{
	if (cx_of(ctx) && cx_of(ctx)->cfg.trace)
		cx_tl_submit_ns = cx_mono_ns();
}

int cx_trace_init(struct accel_cuda *cx)
{
	if (!cx->cfg.trace)
		return 0;
	cx->tr.ring = calloc(CX_TRACE_SAMPLES, sizeof(*cx->tr.ring));
	if (!cx->tr.ring)
		return -ENOMEM;
	pthread_mutex_init(&cx->tr.lock, NULL);
	return 0;
}

void cx_trace_fini(struct accel_cuda *cx)
{
	if (!cx->tr.ring)
		return;
	pthread_mutex_destroy(&cx->tr.lock);
	free(cx->tr.ring);
	cx->tr.ring = NULL;
}

/* Ranges just retired (under report_lock): keep their samples. */
void cx_trace_ranges(struct accel_cuda *cx, struct cx_range **done,
		     unsigned int n)
{
	uint64_t now = cx_mono_ns();
	unsigned int i;

	pthread_mutex_lock(&cx->tr.lock);
	for (i = 0; i < n; i++) {
		struct cx_sample *smp = &done[i]->smp;

		smp->t[CX_T_RETIRED] = now;
		cx->tr.ring[cx->tr.nring++ % CX_TRACE_SAMPLES] = *smp;
	}
	pthread_mutex_unlock(&cx->tr.lock);
}

/* A wait returned: the newest retired range was what it waited for. */
void cx_trace_waited(struct accel_cuda *cx)
{
	struct cx_sample *smp;

	if (!cx->cfg.trace)
		return;
	pthread_mutex_lock(&cx->tr.lock);
	if (cx->tr.nring) {
		smp = &cx->tr.ring[(cx->tr.nring - 1) % CX_TRACE_SAMPLES];
		if (!smp->t[CX_T_WAITER])
			smp->t[CX_T_WAITER] = cx_mono_ns();
	}
	pthread_mutex_unlock(&cx->tr.lock);
}

/* ACCEL_TRACE: a wait returned after sleeping in the transport. */
void accel_cuda_trace_wait(struct accel_ctx *ctx)
{
	struct accel_cuda *cx = cx_of(ctx);

	if (cx)
		cx_trace_waited(cx);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The median of @n values (sorted in place); 0 for none. */
static uint64_t median(uint64_t *v, size_t n)
{
	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), cmp_u64);
	return v[n / 2];
}

/*
 * The median of moment @b - moment @a over the samples that have both;
 * *@count says how many had. In us.
 */
static double phase_us(const struct cx_sample *s, size_t n, uint64_t *tmp,
		       int a, int b, size_t *count)
{
	size_t i, k = 0;

	for (i = 0; i < n; i++)
		if (s[i].t[a] && s[i].t[b] && s[i].t[b] >= s[i].t[a])
			tmp[k++] = s[i].t[b] - s[i].t[a];
	if (count)
		*count = k;
	return (double)median(tmp, k) / 1e3;
}

/* Median and mean of a per-range count. */
static void calls_stat(const struct cx_sample *s, size_t n, uint64_t *tmp,
		       int what, uint64_t *med, double *mean)
{
	uint64_t sum = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		tmp[i] = what == 0 ? s[i].issue_calls :
			 what == 1 ? s[i].marker_calls :
			 what == 2 ? s[i].queries :
			 (uint64_t)s[i].issue_calls + s[i].marker_calls +
			 s[i].queries;
		sum += tmp[i];
	}
	*mean = n ? (double)sum / (double)n : 0.0;
	*med = median(tmp, n);
}

void cx_trace_print(struct accel_cuda *cx)
{
	struct cx_trace *t = &cx->tr;
	size_t n = t->nring < CX_TRACE_SAMPLES ? t->nring : CX_TRACE_SAMPLES;
	size_t i, nwait, nmark;
	uint64_t *tmp, med[4], issuer = 0, waiter = 0;
	double mean[4], ph[7], total, marked;

	if (!t->ring)
		return;
	if (!n) {
		accel_log(LOG_INFO, "trace: no ranges");
		return;
	}
	tmp = calloc(n ? n : 1, sizeof(*tmp));
	if (!tmp)
		return;
	for (i = 0; i < n; i++) {
		issuer += t->ring[i].by_issuer;
		waiter += t->ring[i].by_waiter;
	}
	ph[0] = phase_us(t->ring, n, tmp, CX_T_SUBMIT, CX_T_FETCHED, NULL);
	ph[1] = phase_us(t->ring, n, tmp, CX_T_FETCHED, CX_T_CALL, NULL);
	ph[2] = phase_us(t->ring, n, tmp, CX_T_CALL, CX_T_CALLED, NULL);
	ph[3] = phase_us(t->ring, n, tmp, CX_T_CALLED, CX_T_SEEN, NULL);
	ph[4] = phase_us(t->ring, n, tmp, CX_T_SEEN, CX_T_RETIRED, NULL);
	ph[5] = phase_us(t->ring, n, tmp, CX_T_RETIRED, CX_T_WAITER, &nwait);
	marked = phase_us(t->ring, n, tmp, CX_T_CALLED, CX_T_MARKED, &nmark);
	ph[6] = phase_us(t->ring, n, tmp, CX_T_MARKED, CX_T_SEEN, NULL);
	total = phase_us(t->ring, n, tmp, CX_T_SUBMIT, CX_T_WAITER, NULL);
	for (i = 0; i < 4; i++)
		calls_stat(t->ring, n, tmp, (int)i, &med[i], &mean[i]);
	free(tmp);

	/* ACCEL_TRACE=1 asked for it: passed to the log callback. */
	accel_log(LOG_INFO,
		"trace: %llu ranges, the last %zu sampled; median us: submit->fetched %.2f, fetched->CUDA call %.2f, CUDA call->returned %.2f, returned->seen done %.2f, seen->retired %.2f, retired->waiter returned %.2f; submit->waiter returned %.2f (%zu ranges a wait returned for)",
		(unsigned long long)t->nring, n, ph[0], ph[1], ph[2], ph[3],
		ph[4], ph[5], total, nwait);
	accel_log(LOG_INFO,
		"trace: completion marker: %zu ranges recorded their own, median us returned->marker recorded %.2f, marker->seen done %.2f",
		nmark, marked, ph[6]);
	accel_log(LOG_INFO,
		"trace: CUDA calls per range, median (mean): all %llu (%.2f), issue %llu (%.2f), completion markers %llu (%.2f), cudaEventQuery %llu (%.2f)",
		(unsigned long long)med[3], mean[3],
		(unsigned long long)med[0], mean[0],
		(unsigned long long)med[1], mean[1],
		(unsigned long long)med[2], mean[2]);
	accel_log(LOG_INFO,
		"trace: hand-offs: of %zu sampled ranges %llu issued by the issuer thread (the rest by the submitting thread), %llu seen done by a waiter (the rest by the completion thread); wake-ups: issuer thread %llu, completion thread %llu (it slept %llu times), waiters sleeping in the transport %llu",
		n, (unsigned long long)issuer, (unsigned long long)waiter,
		(unsigned long long)atomic_load(&t->wake_issuer),
		(unsigned long long)atomic_load(&t->wake_done),
		(unsigned long long)atomic_load(&t->done_slept),
		(unsigned long long)atomic_load(&t->waiter_sleeps));
	accel_log(LOG_INFO,
		"trace: passes: %llu inline after a submit, %llu by a waiter (a burst's tail), %llu by a thread, %llu by the hot issuer; fetches after completions %llu; hybrid waits slept %llu times; %llu completions taught a rate",
		(unsigned long long)atomic_load(&t->passes_inline),
		(unsigned long long)atomic_load(&t->passes_waiter),
		(unsigned long long)atomic_load(&t->passes_thread),
		(unsigned long long)atomic_load(&t->passes_issuer),
		(unsigned long long)atomic_load(&t->after_kicks),
		(unsigned long long)atomic_load(&t->naps),
		(unsigned long long)atomic_load(&t->rate_samples));
}
