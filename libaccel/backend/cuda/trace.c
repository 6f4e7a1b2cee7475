// SPDX-License-Identifier: MIT
/*
 * The cuda backend: ACCEL_TRACE=1, where a copy's time goes (submit,
 * fetch, enqueue, seen done, reported), summed per context.
 */
#include "cuda.h"

/* This thread's last submit, for ACCEL_TRACE (0: not known). */
__thread uint64_t cx_tl_submit_ns;

void accel_cuda_mark_submit(struct accel_ctx *ctx)
{
	if (cx_of(ctx) && cx_of(ctx)->cfg.trace)
		cx_tl_submit_ns = cx_mono_ns();
}

/* ACCEL_TRACE: a wait returned; how long after the last COMPLETE. */
void accel_cuda_trace_wait(struct accel_ctx *ctx)
{
	struct accel_cuda *cx = cx_of(ctx);
	uint64_t last;

	if (!cx || !cx->cfg.trace)
		return;
	last = atomic_load(&cx->tr.last_done);
	atomic_fetch_add(&cx->tr.waits, 1);
	if (last)
		atomic_fetch_add(&cx->tr.done_waiter, cx_mono_ns() - last);
}

void cx_trace_print(struct accel_cuda *cx)
{
	struct cx_trace *t = &cx->tr;
	uint64_t n = atomic_load(&t->ranges), w = atomic_load(&t->waits);
	double d = n ? (double)n * 1e3 : 1.0;

	/* ACCEL_TRACE=1 asked for it: logged even without ACCEL_LOG. */
	accel_log_asked(LOG_INFO,
		"trace: %llu ranges (%llu seen done by a waiter, %llu by the completion thread); fetch passes %llu inline after a submit, %llu after completions or by the fetch thread; completion thread slept %llu times",
		(unsigned long long)n, (unsigned long long)atomic_load(&t->by_waiter),
		(unsigned long long)(n - atomic_load(&t->by_waiter)),
		(unsigned long long)atomic_load(&t->passes_inline),
		(unsigned long long)atomic_load(&t->passes_thread),
		(unsigned long long)atomic_load(&t->done_woken));
	accel_log_asked(LOG_INFO,
		"trace: pipeline: %llu passes by the hot issuer; hybrid waits slept %llu times; %llu completions taught a stream's rate",
		(unsigned long long)atomic_load(&t->passes_issuer),
		(unsigned long long)atomic_load(&t->naps),
		(unsigned long long)atomic_load(&t->samples));
	accel_log_asked(LOG_INFO,
		"trace: mean us per range: submit->fetch %.2f, fetch->enqueued %.2f, enqueued->seen done %.2f, seen->COMPLETE returned %.2f; COMPLETE->waiter returned %.2f (%llu waits)",
		(double)atomic_load(&t->submit_fetch) / d,
		(double)atomic_load(&t->fetch_enq) / d,
		(double)atomic_load(&t->enq_seen) / d,
		(double)atomic_load(&t->seen_done) / d,
		w ? (double)atomic_load(&t->done_waiter) / ((double)w * 1e3) : 0.0,
		(unsigned long long)w);
}
