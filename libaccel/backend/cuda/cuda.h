/* SPDX-License-Identifier: MIT */
/*
 * The cuda backend: libaccel attaches as the context's executor and turns
 * the descriptors the transport hands out into CUDA stream work.
 *
 * The executor pipeline, in three parts:
 *
 *  - issue (issue.c, enqueue.c): SUBMIT returns once the transport holds the
 *    descriptors; issuing them to CUDA is decoupled from it. An isolated
 *    submission (the first after a wait began, or one that finds nothing
 *    of the context pending or being issued) is issued at once from the
 *    submitting thread, with no thread woken (no hand-off, the latency of
 *    an isolated copy: a round trip never involves another thread), and
 *    so is the next (a copy there and back before a wait). One that
 *    follows two or more with no wait between while they are still on
 *    their way is a burst's (cx_burst()): it wakes the issuer thread,
 *    hot, and returns; while hot (until nothing came for
 *    ACCEL_CUDA_ISSUE_SPIN_US, 50, or a wait begins) the issuer takes
 *    every later submission, so a burst from one thread accumulates while
 *    the previous issue runs and goes down as one pass: per stream,
 *    independent small copies as one
 *    cudaMemcpyBatchAsync (per-copy cudaMemcpyAsync where the runtime has
 *    no batch call, or ACCEL_CUDA_NO_BATCH=1), contiguous ones coalesced
 *    into one copy. COPY -> cudaMemcpyAsync(cudaMemcpyDefault);
 *    MEMSET -> cudaMemsetAsync (8-bit), cuMemsetD16Async or
 *    cuMemsetD32Async; COPY_2D -> cudaMemcpy2DAsync(cudaMemcpyDefault);
 *    EVENT_RECORD -> cudaEventRecord of an event kept per (stream, seq);
 *    STREAM_WAIT -> cudaStreamWaitEvent on that event (ordered on the
 *    device, no host round trip); NOP, HOST_WAIT and HOST_SIGNAL have no
 *    device work and complete in order. Each stream's part of a pass is
 *    one *range* [first, last]. A wait ends the burst: what the issuer
 *    has not taken yet is issued by the waiting thread, as one pass
 *    (cx_issue_tail()), and the waiter's completion marker goes down as
 *    soon as nothing is left to issue, without waiting for the issuer to
 *    cool. ACCEL_CUDA_ISSUER=0: every pass is made by the thread that
 *    submitted (no issuer thread taking over);
 *
 *  - completion (done.c): a range gets no completion marker when it is
 *    enqueued: one is written on the stream, after its newest range, when
 *    someone is about to wait for it (a waiter, unless a burst is still
 *    being issued; a stream query; the completion thread about to sleep)
 *    or when the stream went quiet
 *    (ACCEL_CUDA_LAZY_US, 10) or its oldest range has waited
 *    ACCEL_CUDA_LAZY_MAX_US (500); it covers every earlier range of the
 *    stream. The marker is a cuStreamWriteValue32 of the range's last
 *    seq into a word of mapped pinned memory that the host reads (the
 *    driver call reached through cudaGetDriverEntryPointByVersion; events
 *    where it is missing), or with ACCEL_CUDA_COMPLETION=event a
 *    cudaEventRecord polled with cudaEventQuery. An
 *    event is still recorded where one is needed to sleep on or to learn
 *    of an asynchronous error. The completion thread reports what nobody
 *    waits for: it takes ranges in order per stream and reports them with
 *    one ACCEL_IOC_EXEC_COMPLETE, so that the transport retires, unpins
 *    and wakes waiters, but leaves a range alone while a waiter polls and
 *    for its first ACCEL_CUDA_LAZY_US (a waiter is likely on its way).
 *    Idle, it dozes in CX_DOZE_NS timed sleeps, during which a submission
 *    does not wake it, and after CX_DOZE_MAX_NS with nothing pending
 *    sleeps until one does; blocked on an event in the driver it holds no
 *    lock a waiter needs. A fetch pass follows a report only when it may
 *    find work: a HOST_SIGNAL retired (a HOST_WAIT may go now) or a range
 *    failed;
 *
 *  - waiting (wait.c): a waiter whose context has work on the device
 *    polls completions itself and reports them, so that its wait returns
 *    without a thread hand-off. Hybrid (io_uring's hybrid polling, on by
 *    default): every range carries when it should be done, from its
 *    bytes per direction and the fastest ns per byte its stream (or the
 *    context) was seen to move that direction at, learned from ranges
 *    that ran alone in the context, timed from their issue to the poll
 *    that saw them done (an upper bound of their time: a late sighting
 *    never slows the estimate, and a rate learned too slow is corrected
 *    by the first faster completion); so the estimate errs early. The
 *    waiter sleeps towards the middle of the earliest pending range's
 *    expected run, then towards ACCEL_CUDA_WAKE_US (20) before its end,
 *    and polls from there; no sleep is longer than an eighth (first
 *    half) or a sixty-fourth (second half) of the time since the range
 *    was issued, so that a wrong, too-slow estimate keeps it asleep past
 *    the real end by at most that share (cx_hybrid_next()). Past the
 *    expected end it polls ACCEL_CUDA_SPIN_US (50), then sleeps a 128th
 *    of the range's time between polls; with no estimate, it polls
 *    ACCEL_CUDA_SPIN_US and then sleeps a thirty-second of the time
 *    waited (at most 1 ms) between polls. It sleeps in the transport's
 *    own wait (with a 1 us timer slack), so that what it waits for still
 *    wakes it at once if it comes from elsewhere (a host event, another
 *    thread's report). ACCEL_CUDA_HYBRID=0: the earlier spin-then-sleep
 *    (poll ACCEL_CUDA_SPIN_US, then sleep in the transport while the
 *    completion thread sleeps on a blocking-sync event).
 *
 * The fetch thread is the issuer: hot, it polls the kick flag; cold, it
 * sleeps on fetch_cond (a safety net every few seconds).
 *
 * Lock order, outermost first; a lock may be taken while holding any lock
 * above it, never one below it while holding it:
 *
 *   1. accel_ctx.lock (libaccel's context lock, accel_int.h), or the
 *      staging pool's lock (staging/stage.h): the API calls the backend's
 *      release, pin and region hooks under the first, the pool submits
 *      (and so kicks the issue path) and pins chunks under the second.
 *   2. cx->is.exec_lock (issue path) or cx->cmp.report_lock (completion
 *      path, done.c and wait.c): never both at once. The completion
 *      path kicks the issue path only after dropping report_lock; a
 *      waiter (wait.c) takes report_lock with trylock only, holding
 *      nothing.
 *   3. cx->lock: the state the roles share (struct accel_cuda).
 *   4. cx->mem.map_lock: the handle map, a leaf; or the process-wide
 *      table of portable allocations (mem.c), a leaf too (never both).
 *   5. the transport's lock (inproc ip_ctx.lock, or the kernel's as_ctx
 *      lock inside an ioctl): every accel_ioctl() is made holding at most
 *      locks 1 and 2, never cx->lock or map_lock, and the transport calls
 *      nothing of the backend back.
 *   6. cx->tr.lock (ACCEL_TRACE's samples, trace.c): a leaf, taken under
 *      report_lock or holding nothing.
 *
 * CUDA calls are made without cx->lock except cudaEventQuery in the
 * completion scan and the record (cudaEventRecord or
 * cuStreamWriteValue32) of a lazy completion marker. TSan checks
 * the order in make check (libaccel test-fakecuda: the suite under TSan
 * over the stand-in libcudart).
 *
 * A CUDA error while enqueueing fails that descriptor (its stream fails,
 * sticky, as the ABI says); an error reported by a completion event fails
 * the range's first descriptor. A sticky error (the device context is
 * unusable) puts the libaccel context in the lost state: every fetched
 * descriptor then fails with -EIO and every later call with
 * -ENOTRECOVERABLE.
 */
#ifndef LIBACCEL_CUDA_H
#define LIBACCEL_CUDA_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>

#include <cuda.h>
#include <cuda_runtime_api.h>

#include "accel_int.h"
#include "backend.h"

/* CUDA 12.8's cudaMemcpyBatchAsync had a failIdx argument; 13 dropped it. */
typedef cudaError_t (*batch12_fn)(void **dsts, void **srcs, size_t *sizes,
		     size_t count, struct cudaMemcpyAttributes *a,
		     size_t *idx, size_t nattrs, size_t *fail_idx,
		     cudaStream_t stream);

/* The driver's cuStreamWriteValue32 (CUresult is an int-sized enum). */
typedef int (*write32_fn)(cudaStream_t stream, unsigned long long addr,
			  uint32_t value, unsigned int flags);

#define CUDA_FNS(X)							\
	X(cudaGetDeviceCount) X(cudaSetDevice) X(cudaGetDevice) X(cudaFree)		\
	X(cudaMalloc) X(cudaHostRegister) X(cudaHostUnregister)		\
	X(cudaStreamCreateWithPriority) X(cudaStreamDestroy)		\
	X(cudaDeviceGetStreamPriorityRange) X(cudaEventCreateWithFlags)	\
	X(cudaEventDestroy) X(cudaEventRecord) X(cudaEventQuery)	\
	X(cudaEventSynchronize) X(cudaStreamWaitEvent)			\
	X(cudaMemcpyAsync) X(cudaGetErrorName) X(cudaGetErrorString)	\
	X(cudaGetLastError) X(cudaRuntimeGetVersion) X(cudaMemset)	\
	X(cudaGetDeviceProperties) X(cudaMemGetInfo) X(cudaMemsetAsync)	\
	X(cudaMemcpy2DAsync)

/*
 * The driver API's 16 and 32-bit fills, which the runtime lacks, taken
 * through the runtime (cudaGetDriverEntryPointByVersion) at their first
 * use: libaccel links neither library.
 */
typedef CUresult (*cx_memset_d16_fn)(CUdeviceptr dst, unsigned short v,
				     size_t n, CUstream s);
typedef CUresult (*cx_memset_d32_fn)(CUdeviceptr dst, unsigned int v,
				     size_t n, CUstream s);

struct cx_rt {
#define X(f) __typeof__(f) *f;
	CUDA_FNS(X)
#undef X
	__typeof__(cudaMemcpyBatchAsync) *batch13;
	batch12_fn batch12;
	/* Optional: completion by host word (ACCEL_CUDA_COMPLETION=word). */
	__typeof__(cudaHostAlloc) *cudaHostAlloc;
	__typeof__(cudaFreeHost) *cudaFreeHost;
	__typeof__(cudaHostGetDevicePointer) *cudaHostGetDevicePointer;
	write32_fn write32;		/* the driver's cuStreamWriteValue32 */
	cx_memset_d16_fn memset_d16;	/* NULL: not found (cx_rt_driver()) */
	cx_memset_d32_fn memset_d32;
	void *handle;		/* dlopen()'s, for late lookups */
	int runtime_version;
	int load_error;
	char why[256];
};
extern struct cx_rt cx_rt;
extern pthread_once_t cx_rt_once;
void cx_rt_driver(void);

#define CX_FETCH_MAX		256
#define CX_BATCH_MAX		64
#define CX_IDLE_NS		(2ULL * 1000000000ULL)
#define CX_BUCKETS		256
#define CX_POLL_GAP_NS		1000ULL	/* completion thread, busy */
#define CX_HELPER_NAP_NS	200000ULL /* completion thread, a waiter polls */
#define CX_SLICE_MAX_NS		1000000ULL /* longest sleep between polls */
#define CX_DOZE_NS		50000ULL /* completion thread, idle: a doze */
#define CX_DOZE_MAX_NS		2000000ULL /* then it sleeps until woken */
#define CX_SAMPLE_MIN_BYTES	(1U << 20) /* a range that teaches the rate */
#define CX_WORDS_PER_PAGE	64	/* host words, a cache line each */

/* Directions, for the rate a range moves at. */
enum { CX_H2D, CX_D2H, CX_D2D, CX_H2H, CX_NDIR, CX_MIXED = CX_NDIR };

struct cx_record {
	uint64_t seq;
	cudaEvent_t ev;
};

struct cx_copy {
	void *dst;
	const void *src;
	size_t len;
	uint64_t seq;
	uint32_t dreg, sreg;		/* region handles: merge within one */
};

struct cx_stream {
	struct cx_stream *hnext;	/* hash chain (under exec_lock) */
	struct cx_stream *lnext;	/* list of all streams (under exec_lock) */
	uint32_t kstream;
	cudaStream_t cs;		/* created at its first device work */
	/* Under exec_lock. */
	struct cx_record *rec;		/* EVENT_RECORD events, by seq */
	unsigned int nrec, caprec;
	struct cx_copy *copies;		/* the copy run being gathered */
	unsigned int ncopies, capcopies;
	struct cx_range *open;		/* this batch's range */
	bool touched;
	bool dead;			/* handle destroyed */
	/* Set by either thread: the stream failed; no more device work. */
	atomic_bool failed;
	/* Last seq reported complete (completion thread writes). */
	_Atomic uint64_t reported;
	uint64_t last_fetched;
	/* Under cx->lock. */
	unsigned int npending;
	unsigned int blocked_pass;
	struct cx_range *tail_r;	/* its newest pending range */
	struct cx_range *cover;		/* its newest pending range with ->ev */
	uint64_t eta_tail;		/* when its newest range should end */
	double nspb[CX_NDIR];		/* fastest ns per byte seen, 0: none */
	/*
	 * ACCEL_CUDA_COMPLETION=word: the stream's word in mapped pinned
	 * memory (written by the device, read by the host), and the last
	 * seq a write was enqueued for (under cx->lock).
	 */
	_Atomic uint32_t *word;
	unsigned long long word_dev;
	struct cx_wordpage *word_page;
	unsigned int word_slot;
	uint64_t word_seq;
};

/* A page of mapped pinned host words (ACCEL_CUDA_COMPLETION=word). */
struct cx_wordpage {
	struct cx_wordpage *next;
	char *host;
	unsigned long long dev;
	uint64_t used;			/* bit per slot */
};

/* ACCEL_TRACE=1: the moments of one range (mono ns; 0: not taken). */
enum {
	CX_T_SUBMIT,		/* accel_submit() entered */
	CX_T_FETCHED,		/* EXEC_FETCH handed it out */
	CX_T_CALL,		/* its first CUDA call entered */
	CX_T_CALLED,		/* its last CUDA call returned: enqueued */
	CX_T_MARKED,		/* its completion marker was recorded */
	CX_T_SEEN,		/* a poll saw it done */
	CX_T_RETIRED,		/* EXEC_COMPLETE for it returned */
	CX_T_WAITER,		/* the wait that saw it returned */
	CX_T_N
};

struct cx_sample {
	uint64_t t[CX_T_N];
	uint16_t issue_calls;		/* copies, fills, records, waits */
	uint16_t marker_calls;		/* completion markers recorded */
	uint16_t queries;		/* cudaEventQuery calls for it */
	uint8_t by_issuer;		/* issued by the issuer thread */
	uint8_t by_waiter;		/* seen done by a waiting thread */
};

/* Take moment @i of @r once (ACCEL_TRACE). */
#define CX_STAMP(cx, r, i)						\
	do {								\
		if ((cx)->cfg.trace && !(r)->smp.t[i])			\
			(r)->smp.t[i] = cx_mono_ns();			\
	} while (0)
/* Count a CUDA call of @r's (ACCEL_TRACE). */
#define CX_COUNT(cx, r, what)						\
	do {								\
		if ((cx)->cfg.trace)					\
			(r)->smp.what++;				\
	} while (0)

struct cx_range {
	struct cx_range *next;
	struct cx_stream *s;
	uint64_t first, last;
	uint64_t fail_seq;		/* 0, or the descriptor that failed */
	int fail_status;
	bool device_work;
	bool need_ev;			/* device work: done when an event says */
	/*
	 * Recorded after the range (or after a later range of the stream,
	 * which covers this one too), lazily: when someone is about to wait
	 * for the stream, or the stream went quiet. NULL until then.
	 */
	cudaEvent_t ev;
	uint64_t t_close;		/* when its fetch pass closed it */
	/* Hybrid waiting: what it moves and when it should be done. */
	uint64_t bytes;
	unsigned int dir;		/* CX_H2D.., CX_MIXED */
	uint64_t t_start;		/* issued to an idle context: then; else 0 */
	uint64_t closes;		/* cmp.closes when it was issued */
	uint64_t t_run;			/* when it should start on the device */
	uint64_t eta;			/* expected end (mono ns), 0: unknown */
	uint64_t t_notready;		/* last poll that found it not done */
	bool host_signal;		/* holds a HOST_SIGNAL (see cx_report()) */
	struct cx_sample smp;		/* ACCEL_TRACE: its moments */
};

/* ACCEL_TRACE=1: the context's ranges, sampled (trace.c). */
#define CX_TRACE_SAMPLES	16384
struct cx_trace {
	/*
	 * Protects ring and nring: the samples of the ranges reported
	 * last. A leaf, taken under report_lock (a report) or nothing (a
	 * waiter stamping its return).
	 */
	pthread_mutex_t lock;
	struct cx_sample *ring;
	uint64_t nring;			/* samples written, ever */
	/* A submit whose issue the issuer thread took over (mono ns). */
	_Atomic uint64_t handoff;
	_Atomic uint64_t passes_inline, passes_thread, passes_issuer;
	_Atomic uint64_t passes_waiter;	/* a burst's tail (cx_issue_tail()) */
	_Atomic uint64_t naps, rate_samples, waiter_sleeps;
	_Atomic uint64_t wake_issuer, wake_done, done_slept, after_kicks;
};
struct cx_map_ent {
	uint32_t handle;
	uintptr_t base;
	size_t len;
};

struct cx_zombie {
	struct cx_zombie *next;
	struct accel_region r;
};

/* Set once by accel_cuda_start(), read-only after (ctx.c). */
struct cx_config {
	int device;
	int prio_least, prio_greatest;
	uint32_t ctl_stream;		/* private stream: wakes the fetcher */
	bool batch_ok;
	bool multi_dev;			/* more than one device: save/restore */
	bool merge_ok;			/* coalesce contiguous copies */
	unsigned int batch_max_bytes;
	uint64_t lazy_ns, lazy_max_ns;
	/* Pollers make no CUDA call while a pass issues, this long at most. */
	uint64_t quiet_max_ns;
	unsigned int spin_ns;
	bool issuer;			/* an issuer thread takes bursts */
	uint64_t issue_spin_ns;		/* how long it stays hot */
	bool hybrid;			/* hybrid waiting */
	uint64_t wake_ns;		/* poll from this close to the end */
	bool word;			/* completion by host word */
	bool trace;			/* ACCEL_TRACE=1 */
};

/* The issue path (issue.c, enqueue.c): fetch, enqueue, merge. */
struct cx_issue {
	/*
	 * Protects items, touched, fetch_max, streams, buckets, rcache,
	 * stopped, nrec_total, any_dead, and every cx_stream field marked
	 * "under exec_lock". Serializes fetching and enqueueing: every
	 * EXEC_FETCH is a poll made under it, so CUDA work goes out in fetch
	 * order whoever issues it (the thread that submitted, or the fetch
	 * thread).
	 */
	pthread_mutex_t exec_lock;
	atomic_int kick;		/* fetchable work may be waiting */
	/* The issuer thread polls the kick flag: leave the work to it. */
	atomic_bool hot;
	/* Submissions since a wait last began (cx_burst()). */
	atomic_uint since_wait;
	atomic_bool stopping;		/* the context is going: cool down */
	/* A pass is fetching and issuing: ranges are about to be pending. */
	atomic_uint issuing;
	struct accel_exec_item *items;
	struct cx_stream **touched;
	uint32_t fetch_max;
	struct cx_stream *streams;	/* every stream, list */
	struct cx_stream *buckets[CX_BUCKETS];
	struct cx_range *rcache;	/* idle ranges for the fetch path */
	bool stopped;			/* no more fetching */
	unsigned int nrec_total;	/* record events held */
	bool any_dead;
	/* Under cx->lock: streams whose handle died, for the next pass. */
	uint32_t *dead_streams;
	unsigned int ndead, capdead;
	atomic_uint ndead_hint;		/* ndead, readable without the lock */
	/* Under cx->lock: the fetch thread's sleep and its stop. */
	pthread_cond_t fetch_cond;	/* monotonic clock */
	bool stop_fetch, fetch_exited;
};

/* Completion (done.c) and waiting (wait.c). */
struct cx_completion {
	/*
	 * Protects done, ents and done_max, and keeps the ranges being
	 * reported (and their events) alive: taking done ranges and
	 * reporting them happens under it, so that reports go out in order
	 * whoever polls (the completion thread, or a waiter with trylock).
	 */
	pthread_mutex_t report_lock;
	struct cx_range **done;
	struct accel_exec_done *ents;
	unsigned int done_max;
	_Atomic unsigned int helpers;	/* waiters polling completions */
	/* Under cx->lock. */
	pthread_cond_t cond;		/* completion thread: work or stop */
	bool deep_sleep;		/* it sleeps until signalled */
	cudaEvent_t sync_ev;		/* it is blocked on this event */
	struct cx_range *head, *tail;	/* pending ranges, fetch order */
	unsigned int pass;
	bool stop_done;
	cudaEvent_t *pool;		/* idle events */
	unsigned int npool, cappool;
	struct cx_range *rfree;		/* retired ranges, back to rcache */
	_Atomic unsigned int npending;	/* also read without the lock */
	/* Under cx->lock: fastest ns per byte by direction, any stream. */
	double nspb[CX_NDIR];
	uint64_t closes;		/* ranges issued, ever */
	struct cx_wordpage *words;	/* host word pages */
};

/* Memory (mem.c). */
struct cx_memory {
	/* Protects map, nmap, capmap: HOST_ALLOC regions by handle. */
	pthread_mutex_t map_lock;
	struct cx_map_ent *map;
	unsigned int nmap, capmap;
	/* Under cx->lock: releases waiting for their last queued use. */
	struct cx_zombie *zombies;
};

/*
 * struct accel_cuda - the cuda backend's state for one context
 *
 * Split by role as the files are; the one lock the roles share is
 * cx->lock. The lock order is written once, at the top of this file.
 */
struct accel_cuda {
	struct accel_ctx *ctx;
	struct cx_config cfg;
	pthread_t fetch_thread, done_thread;
	/*
	 * Protects what the roles share: the pending ranges and the event
	 * pool (cmp), the dead-stream list and the fetch thread's stop (is),
	 * the zombies (mem), and every cx_stream field marked "under
	 * cx->lock". Held briefly; no CUDA call is made under it except
	 * cudaEventQuery in the completion scan and cudaEventRecord of a lazy
	 * completion event, and no ioctl.
	 */
	pthread_mutex_t lock;
	struct cx_issue is;
	struct cx_completion cmp;
	struct cx_memory mem;
	struct cx_trace tr;

	/* The lost state (rt.c): set once, read by everyone, lock-free. */
	atomic_bool lost_claimed;
	atomic_bool lost;
	char lost_why[256];
};

static inline struct accel_cuda *cx_of(const struct accel_ctx *ctx)
{
	return ctx->backend_data;
}

static inline void *cx_grow(void *p, unsigned int *cap, unsigned int need, size_t elem)
{
	unsigned int c = *cap ? *cap : 16;
	void *n;

	if (need <= *cap)
		return p;
	while (c < need)
		c *= 2;
	n = realloc(p, (size_t)c * elem);
	if (n)
		*cap = c;
	return n;
}

static inline uint64_t cx_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static inline void cx_pause(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#else
	sched_yield();
#endif
}

/* One take pass: the last event found done (ranges share a cover). */
struct cx_scan {
	uint64_t now;
	cudaEvent_t done_ev;
	uint64_t now2;			/* when the pass saw ranges done */
	bool quiet;			/* a pass is issuing: no CUDA calls */
};

/* rt.c: libcudart loaded at run time, errno mapping, the lost state */
void cx_rt_load(void);
void cx_set_lost(struct accel_cuda *cx, cudaError_t e, const char *call);
int cx_error(struct accel_cuda *cx, cudaError_t e, const char *call);
bool accel_cuda_lost(struct accel_ctx *ctx, const char **why);

/* mem.c: device memory, host pinning, the handle map, deferred releases */
int accel_cuda_map_add(struct accel_ctx *ctx, uint32_t handle, void *base,
		       size_t len);
void *cx_map_addr(struct accel_cuda *cx, uint32_t handle, uint64_t off,
		  uint64_t len);
int accel_cuda_device_alloc(struct accel_ctx *ctx, size_t size,
			    struct accel_region *r);
void accel_cuda_unmap(struct accel_ctx *ctx, const struct accel_region *r);
int accel_cuda_host_pin(struct accel_ctx *ctx, struct accel_region *r);
int accel_cuda_host_import(struct accel_ctx *ctx, struct accel_region *r);
void cx_region_cleanup(struct accel_cuda *cx,
		       const struct accel_region *r);
int accel_cuda_release(struct accel_ctx *ctx, const struct accel_region *r,
		       bool deferred);
void cx_zombies_retry(struct accel_cuda *cx);
void accel_cuda_region_teardown(struct accel_ctx *ctx,
				const struct accel_region *r);
bool accel_cuda_reap(struct accel_ctx *ctx);

/* issue.c: fetching and handing over (the issue path) */
struct cx_stream *cx_stream_get(struct accel_cuda *cx, uint32_t k,
				bool create);
void cx_stream_free(struct accel_cuda *cx, struct cx_stream *s);
void cx_kick(struct accel_cuda *cx, uint64_t t_submit, bool inline_);
void cx_issue_tail(struct accel_cuda *cx);
void accel_cuda_kick(struct accel_ctx *ctx);
void *cx_fetch_main(void *arg);
void accel_cuda_stream_dead(struct accel_ctx *ctx, uint32_t kstream);

/* enqueue.c: one fetched item to CUDA stream work (copies merged, batched) */
int accel_cuda_priority(int prio, int least, int greatest, int cuda_least,
			int cuda_greatest);
void cx_range_fail(struct cx_range *r, uint64_t seq, int status);
void cx_flush_copies(struct accel_cuda *cx, struct cx_stream *s);
void cx_item(struct accel_cuda *cx, const struct accel_exec_item *it,
	     uint64_t t_submit, uint64_t t_fetch);

/* done.c: completion (markers, reports, the completion thread) */
int cx_event_get(struct accel_cuda *cx, cudaEvent_t *ev);
void cx_event_put(struct accel_cuda *cx, cudaEvent_t ev);
void *cx_done_main(void *arg);
void cx_words_free(struct accel_cuda *cx);
int cx_word_get(struct accel_cuda *cx, struct cx_stream *s);
void cx_word_put(struct accel_cuda *cx, struct cx_stream *s);
void cx_range_plan_locked(struct accel_cuda *cx, struct cx_range *r,
			  uint64_t now);
unsigned int cx_poll_locked(struct accel_cuda *cx, bool waiter,
			    bool *refetch);
void cx_after_report(struct accel_cuda *cx);

/* wait.c: waiting (a waiter polls and reports itself, hybrid sleeps) */
int accel_cuda_wait_fast(struct accel_ctx *ctx,
			 int (*poll)(struct accel_ctx *, void *, uint64_t),
			 void *arg, uint64_t deadline);
bool accel_cuda_poll(struct accel_ctx *ctx);

/* trace.c: ACCEL_TRACE */
extern __thread uint64_t cx_tl_submit_ns;
void accel_cuda_mark_submit(struct accel_ctx *ctx);
void accel_cuda_trace_wait(struct accel_ctx *ctx);
int cx_trace_init(struct accel_cuda *cx);
void cx_trace_fini(struct accel_cuda *cx);
void cx_trace_ranges(struct accel_cuda *cx, struct cx_range **done,
		     unsigned int n);
void cx_trace_waited(struct accel_cuda *cx);
void cx_trace_print(struct accel_cuda *cx);


#endif /* LIBACCEL_CUDA_H */
