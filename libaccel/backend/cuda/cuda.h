/* SPDX-License-Identifier: MIT */
/*
 * The cuda backend: libaccel attaches as the context's executor and turns
 * the descriptors the transport hands out into CUDA stream work.
 *
 * Two threads per context:
 *
 *  - the fetch thread blocks in ACCEL_IOC_EXEC_FETCH (with a deadline, so
 *    an idle context costs one wakeup every few seconds) and enqueues each
 *    batch: one non-blocking cudaStream_t per accelstream stream; COPY ->
 *    cudaMemcpyAsync(cudaMemcpyDefault), consecutive small independent
 *    copies of one stream in one batch -> one cudaMemcpyBatchAsync;
 *    EVENT_RECORD -> cudaEventRecord of an event kept per (stream, seq);
 *    STREAM_WAIT -> cudaStreamWaitEvent on that event (ordered on the
 *    device, no host round trip); NOP, HOST_WAIT and HOST_SIGNAL have no
 *    device work and complete in order. Each stream's part of a batch is
 *    one *range* [first, last]. Contiguous independent copies of a run
 *    coalesce into one copy. A range gets no completion event when it is
 *    enqueued: one event is recorded on the stream, after its newest
 *    range, when someone is about to wait for it (a waiter, a stream
 *    query, the completion thread about to sleep) or when the stream went
 *    quiet (ACCEL_CUDA_LAZY_US, 10) or its oldest range has waited
 *    ACCEL_CUDA_LAZY_MAX_US (500); it covers every earlier range of the
 *    stream. Events come from a pool;
 *
 *  - the completion thread takes ranges in order per stream, polls their
 *    events (cudaEventQuery, a short spin while work is in flight, then
 *    cudaEventSynchronize on a blocking-sync event: it sleeps, it does not
 *    burn a core), and reports them with one ACCEL_IOC_EXEC_COMPLETE, so
 *    that the transport retires, unpins and wakes waiters. Idle, it
 *    sleeps on a condition variable.
 *
 * Lock order: cx->lock, then cx->map_lock (never the other way);
 * ctx->lock is never taken under either. CUDA calls are made without
 * cx->lock except cudaEventQuery in the completion scan.
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

#include <cuda_runtime_api.h>

#include "accel_int.h"
#include "backend.h"

/* CUDA 12.8's cudaMemcpyBatchAsync had a failIdx argument; 13 dropped it. */
typedef cudaError_t (*batch12_fn)(void **dsts, void **srcs, size_t *sizes,
		     size_t count, struct cudaMemcpyAttributes *a,
		     size_t *idx, size_t nattrs, size_t *fail_idx,
		     cudaStream_t stream);

#define CUDA_FNS(X)							\
	X(cudaGetDeviceCount) X(cudaSetDevice) X(cudaGetDevice) X(cudaFree)		\
	X(cudaMalloc) X(cudaHostRegister) X(cudaHostUnregister)		\
	X(cudaStreamCreateWithPriority) X(cudaStreamDestroy)		\
	X(cudaDeviceGetStreamPriorityRange) X(cudaEventCreateWithFlags)	\
	X(cudaEventDestroy) X(cudaEventRecord) X(cudaEventQuery)	\
	X(cudaEventSynchronize) X(cudaStreamWaitEvent)			\
	X(cudaMemcpyAsync) X(cudaGetErrorName) X(cudaGetErrorString)	\
	X(cudaGetLastError) X(cudaRuntimeGetVersion) X(cudaMemset)

struct cx_rt {
#define X(f) __typeof__(f) *f;
	CUDA_FNS(X)
#undef X
	__typeof__(cudaMemcpyBatchAsync) *batch13;
	batch12_fn batch12;
	int runtime_version;
	int load_error;
	char why[256];
};
extern struct cx_rt cx_rt;
extern pthread_once_t cx_rt_once;

#define CX_FETCH_MAX		256
#define CX_BATCH_MAX		64
#define CX_IDLE_NS		(2ULL * 1000000000ULL)
#define CX_BUCKETS		256
#define CX_POLL_GAP_NS		1000ULL	/* completion thread, busy */

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
};

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
	/* ACCEL_TRACE: submit, fetch, enqueued, seen done (mono ns). */
	uint64_t t_submit, t_fetch, t_enq, t_seen;
	bool seen_by_waiter;
};

/* ACCEL_TRACE=1: where a copy's time goes, summed per context. */
struct cx_trace {
	_Atomic uint64_t ranges, by_waiter, passes_inline, passes_thread;
	_Atomic uint64_t submit_fetch, fetch_enq, enq_seen, seen_done;
	_Atomic uint64_t waits, done_woken, done_waiter;
	_Atomic uint64_t last_done;	/* when the last COMPLETE returned */
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

struct accel_cuda {
	struct accel_ctx *ctx;
	int device;
	int prio_least, prio_greatest;
	uint32_t ctl_stream;		/* private stream: wakes the fetcher */
	bool batch_ok;
	bool multi_dev;			/* more than one device: save/restore */
	bool merge_ok;			/* coalesce contiguous copies */
	unsigned int batch_max_bytes;
	uint64_t lazy_ns, lazy_max_ns;
	unsigned int spin_ns;
	pthread_t fetch_thread, done_thread;
	bool trace;
	struct cx_trace tr;

	/*
	 * Serializes fetching and enqueueing: every EXEC_FETCH is a poll made
	 * under it, so CUDA work goes out in fetch order whoever issues it
	 * (the thread that submitted, or the fetch thread). Protects the
	 * stream table and everything the fetch path builds.
	 */
	pthread_mutex_t exec_lock;
	atomic_int kick;		/* fetchable work may be waiting */
	struct accel_exec_item *items;
	struct cx_stream **touched;
	uint32_t fetch_max;
	struct cx_stream *streams;	/* every stream, list */
	struct cx_range *rcache;	/* idle ranges for the fetch path */
	bool stopped;			/* no more fetching */
	unsigned int nrec_total;	/* record events held */
	bool any_dead;

	/* Serializes taking done ranges and reporting them (in order). */
	pthread_mutex_t report_lock;
	_Atomic unsigned int helpers;	/* waiters polling completions */
	/*
	 * A waiter reported completions: the fetch pass they may enable
	 * (HOST_WAITs behind them) is left to the completion thread, off
	 * the waiter's way back, unless that thread sleeps (done_idle).
	 */
	atomic_bool kick_deferred;
	atomic_bool done_idle;

	/* Protects the fields below. */
	pthread_mutex_t lock;
	pthread_cond_t cond;		/* completion thread: work or stop */
	struct cx_range *head, *tail;	/* pending ranges, fetch order */
	unsigned int pass;
	pthread_cond_t fetch_cond;	/* fetch thread: stop (monotonic) */
	bool stop_fetch, stop_done, fetch_exited;
	struct cx_range **done;		/* under report_lock */
	struct accel_exec_done *ents;	/* under report_lock */
	unsigned int done_max;
	cudaEvent_t *pool;		/* idle events */
	unsigned int npool, cappool;
	struct cx_range *rfree;		/* retired ranges, back to rcache */
	struct cx_zombie *zombies;
	uint32_t *dead_streams;
	unsigned int ndead, capdead;
	atomic_uint ndead_hint;		/* ndead, readable without the lock */
	_Atomic unsigned int npending;	/* also read without the lock */

	/* Protects the handle map (HOST_ALLOC regions by handle). */
	pthread_mutex_t map_lock;
	struct cx_map_ent *map;
	unsigned int nmap, capmap;

	/* Under exec_lock. */
	struct cx_stream *buckets[CX_BUCKETS];

	/* The lost state: set once, read by everyone. */
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

/* One take pass: the last event found done (ranges share a cover). */
struct cx_scan {
	uint64_t now;
	cudaEvent_t done_ev;
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
void accel_cuda_host_pin(struct accel_ctx *ctx, struct accel_region *r);
void cx_region_cleanup(struct accel_cuda *cx,
		       const struct accel_region *r);
int accel_cuda_release(struct accel_ctx *ctx, const struct accel_region *r,
		       bool deferred);
void cx_zombies_retry(struct accel_cuda *cx);
void accel_cuda_region_teardown(struct accel_ctx *ctx,
				const struct accel_region *r);
bool accel_cuda_reap(struct accel_ctx *ctx);

/* issue.c: fetching, enqueueing and merging (the issue path) */
void cx_stream_free(struct accel_cuda *cx, struct cx_stream *s);
void cx_range_fail(struct cx_range *r, uint64_t seq, int status);
void cx_kick(struct accel_cuda *cx, uint64_t t_submit, bool inline_);
void accel_cuda_kick(struct accel_ctx *ctx);
void *cx_fetch_main(void *arg);
void accel_cuda_stream_dead(struct accel_ctx *ctx, uint32_t kstream);

/* done.c: completion and waiting */
int cx_event_get(struct accel_cuda *cx, cudaEvent_t *ev);
void cx_event_put(struct accel_cuda *cx, cudaEvent_t ev);
void *cx_done_main(void *arg);
int accel_cuda_wait_fast(struct accel_ctx *ctx,
			 int (*poll)(struct accel_ctx *, void *), void *arg,
			 uint64_t deadline);
bool accel_cuda_poll(struct accel_ctx *ctx);

/* trace.c: ACCEL_TRACE */
extern __thread uint64_t cx_tl_submit_ns;
void accel_cuda_mark_submit(struct accel_ctx *ctx);
void accel_cuda_trace_wait(struct accel_ctx *ctx);
void cx_trace_print(struct accel_cuda *cx);


#endif /* LIBACCEL_CUDA_H */
