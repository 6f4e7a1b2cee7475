// SPDX-License-Identifier: MIT
/*
 * The CUDA executor: libaccel attaches as the context's executor and turns
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
#define _GNU_SOURCE
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

#include "accel_int.h"
#include "backend.h"


#include <cuda_runtime_api.h>

/* ------------------------------------------------------------------ */
/* libcudart, loaded at run time                                       */
/* ------------------------------------------------------------------ */

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

static struct {
#define X(f) __typeof__(f) *f;
	CUDA_FNS(X)
#undef X
	__typeof__(cudaMemcpyBatchAsync) *batch13;
	batch12_fn batch12;
	int runtime_version;
	int load_error;
	char why[256];
} rt;

static pthread_once_t rt_once = PTHREAD_ONCE_INIT;

static void rt_load(void)
{
	const char *env = getenv("ACCEL_CUDART");
	const char *names[] = { env, "libcudart.so.13", "libcudart.so.12",
				"libcudart.so" };
	void *h = NULL, *batch;
	unsigned int i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]) && !h; i++)
		if (names[i] && *names[i])
			h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		snprintf(rt.why, sizeof(rt.why), "cannot load libcudart.so.13: %s",
			 dlerror());
		rt.load_error = -ENODEV;
		return;
	}
#define X(f)								\
	rt.f = (__typeof__(f) *)dlsym(h, #f);				\
	if (!rt.f) {							\
		snprintf(rt.why, sizeof(rt.why),			\
			 "libcudart has no %s", #f);			\
		rt.load_error = -ENODEV;				\
		return;							\
	}
	CUDA_FNS(X)
#undef X
	if (rt.cudaRuntimeGetVersion(&rt.runtime_version) != cudaSuccess)
		rt.runtime_version = 0;
	batch = dlsym(h, "cudaMemcpyBatchAsync");
	if (batch && rt.runtime_version >= 13000)
		rt.batch13 = (__typeof__(cudaMemcpyBatchAsync) *)batch;
	else if (batch && rt.runtime_version >= 12080)
		rt.batch12 = (batch12_fn)batch;
	/* The library stays loaded for the life of the process. */
}

/* ------------------------------------------------------------------ */
/* Errors                                                              */
/* ------------------------------------------------------------------ */

static int cuda_errno(cudaError_t e)
{
	switch (e) {
	case cudaSuccess:			return 0;
	case cudaErrorNotReady:			return -EAGAIN;
	case cudaErrorInvalidValue:		return -EINVAL;
	case cudaErrorMemoryAllocation:		return -ENOMEM;
	case cudaErrorInvalidDevicePointer:	return -EFAULT;
	case cudaErrorHostMemoryAlreadyRegistered: return -EEXIST;
	case cudaErrorNotSupported:		return -EOPNOTSUPP;
	case cudaErrorNoDevice:
	case cudaErrorInsufficientDriver:
	case cudaErrorInitializationError:
	case cudaErrorDevicesUnavailable:
	case cudaErrorSystemDriverMismatch:
	case cudaErrorCudartUnloading:		return -ENODEV;
	default:				return -EIO;
	}
}

/* Errors after which the device context cannot be used again. */
static bool cuda_sticky(cudaError_t e)
{
	switch (e) {
	case cudaErrorIllegalAddress:
	case cudaErrorLaunchFailure:
	case cudaErrorHardwareStackError:
	case cudaErrorIllegalInstruction:
	case cudaErrorMisalignedAddress:
	case cudaErrorInvalidAddressSpace:
	case cudaErrorInvalidPc:
	case cudaErrorECCUncorrectable:
	case cudaErrorLaunchTimeout:
	case cudaErrorAssert:
	case cudaErrorContextIsDestroyed:
	case cudaErrorNvlinkUncorrectable:
	case cudaErrorExternalDevice:
	case cudaErrorUnknown:
		return true;
	default:
		return false;
	}
}

static void cuda_describe(char *buf, size_t len, cudaError_t e,
			  const char *call)
{
	snprintf(buf, len, "%s: %s (%s)", call, rt.cudaGetErrorName(e),
		 rt.cudaGetErrorString(e));
}

/* ------------------------------------------------------------------ */
/* The executor's state                                                */
/* ------------------------------------------------------------------ */

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

/* The backend's ops (accel_backend_cuda, at the end of this file). */
int accel_cuda_start(struct accel_ctx *ctx, bool quiet);
void accel_cuda_stop(struct accel_ctx *ctx);
void accel_cuda_free_ctx(struct accel_ctx *ctx);
bool accel_cuda_lost(struct accel_ctx *ctx, const char **why);
int accel_cuda_malloc(struct accel_ctx *ctx, size_t size, void **ptr);
int accel_cuda_device_alloc(struct accel_ctx *ctx, size_t size,
			    struct accel_region *r);
int accel_cuda_map_add(struct accel_ctx *ctx, uint32_t handle, void *base,
		       size_t len);
void accel_cuda_host_pin(struct accel_ctx *ctx, struct accel_region *r);
int accel_cuda_release(struct accel_ctx *ctx, const struct accel_region *r,
		       bool deferred);
void accel_cuda_unmap(struct accel_ctx *ctx, const struct accel_region *r);
void accel_cuda_region_teardown(struct accel_ctx *ctx,
				const struct accel_region *r);
bool accel_cuda_reap(struct accel_ctx *ctx);
void accel_cuda_stream_dead(struct accel_ctx *ctx, uint32_t kstream);
void accel_cuda_kick(struct accel_ctx *ctx);
bool accel_cuda_poll(struct accel_ctx *ctx);
int accel_cuda_wait_fast(struct accel_ctx *ctx,
			 int (*poll)(struct accel_ctx *, void *), void *arg,
			 uint64_t deadline);
void accel_cuda_mark_submit(struct accel_ctx *ctx);
void accel_cuda_trace_wait(struct accel_ctx *ctx);

static void *grow(void *p, unsigned int *cap, unsigned int need, size_t elem)
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

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* Enter the lost state once; callable with or without cx->lock. */
static void cx_set_lost(struct accel_cuda *cx, cudaError_t e, const char *call)
{
	if (atomic_exchange(&cx->lost_claimed, true))
		return;
	cuda_describe(cx->lost_why, sizeof(cx->lost_why), e, call);
	/* Readers test ->lost first, then read ->lost_why. */
	atomic_store(&cx->lost, true);
	fprintf(stderr, "libaccel: cuda: context lost: %s\n", cx->lost_why);
}

/* An error from a CUDA call: -errno, and lost if it is sticky. */
static int cx_error(struct accel_cuda *cx, cudaError_t e, const char *call)
{
	char buf[256];

	if (e == cudaSuccess)
		return 0;
	if (cuda_sticky(e)) {
		cx_set_lost(cx, e, call);
	} else {
		/* Clear it, so that the next call does not report it again. */
		rt.cudaGetLastError();
	}
	cuda_describe(buf, sizeof(buf), e, call);
	accel_set_error("%s", buf);
	return cuda_errno(e);
}

/* ------------------------------------------------------------------ */
/* Events                                                              */
/* ------------------------------------------------------------------ */

/* Under cx->lock (creating one there is rare: events are reused). */
static int cx_event_get_locked(struct accel_cuda *cx, cudaEvent_t *ev)
{
	cudaError_t e;

	if (cx->npool) {
		*ev = cx->pool[--cx->npool];
		return 0;
	}
	e = rt.cudaEventCreateWithFlags(ev, cudaEventBlockingSync |
					cudaEventDisableTiming);
	return cx_error(cx, e, "cudaEventCreateWithFlags");
}

static int cx_event_get(struct accel_cuda *cx, cudaEvent_t *ev)
{
	cudaError_t e;

	pthread_mutex_lock(&cx->lock);
	if (cx->npool) {
		*ev = cx->pool[--cx->npool];
		pthread_mutex_unlock(&cx->lock);
		return 0;
	}
	pthread_mutex_unlock(&cx->lock);
	/* Blocking sync: a host waiting on it sleeps instead of spinning. */
	e = rt.cudaEventCreateWithFlags(ev, cudaEventBlockingSync |
					cudaEventDisableTiming);
	return cx_error(cx, e, "cudaEventCreateWithFlags");
}

static void cx_event_put_locked(struct accel_cuda *cx, cudaEvent_t ev)
{
	cudaEvent_t *p = grow(cx->pool, &cx->cappool, cx->npool + 1,
			      sizeof(*p));

	if (!p) {
		rt.cudaEventDestroy(ev);
		return;
	}
	cx->pool = p;
	cx->pool[cx->npool++] = ev;
}

static void cx_event_put(struct accel_cuda *cx, cudaEvent_t ev)
{
	pthread_mutex_lock(&cx->lock);
	cx_event_put_locked(cx, ev);
	pthread_mutex_unlock(&cx->lock);
}

/* ------------------------------------------------------------------ */
/* Host allocations by handle                                          */
/* ------------------------------------------------------------------ */

static unsigned int map_find_locked(struct accel_cuda *cx, uint32_t handle)
{
	unsigned int lo = 0, hi = cx->nmap;

	while (lo < hi) {
		unsigned int mid = lo + (hi - lo) / 2;

		if (cx->map[mid].handle < handle)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int accel_cuda_map_add(struct accel_ctx *ctx, uint32_t handle, void *base,
		       size_t len)
{
	struct accel_cuda *cx = cx_of(ctx);
	struct cx_map_ent *m;
	unsigned int i;

	if (!cx)
		return 0;
	pthread_mutex_lock(&cx->map_lock);
	m = grow(cx->map, &cx->capmap, cx->nmap + 1, sizeof(*m));
	if (!m) {
		pthread_mutex_unlock(&cx->map_lock);
		return -ENOMEM;
	}
	cx->map = m;
	i = map_find_locked(cx, handle);
	memmove(&m[i + 1], &m[i], (cx->nmap - i) * sizeof(*m));
	m[i].handle = handle;
	m[i].base = (uintptr_t)base;
	m[i].len = len;
	cx->nmap++;
	pthread_mutex_unlock(&cx->map_lock);
	return 0;
}

static void map_remove(struct accel_cuda *cx, uint32_t handle)
{
	unsigned int i;

	pthread_mutex_lock(&cx->map_lock);
	i = map_find_locked(cx, handle);
	if (i < cx->nmap && cx->map[i].handle == handle) {
		memmove(&cx->map[i], &cx->map[i + 1],
			(cx->nmap - i - 1) * sizeof(*cx->map));
		cx->nmap--;
	}
	pthread_mutex_unlock(&cx->map_lock);
}

/* The host address of byte @off of HOST_ALLOC region @handle, or NULL. */
static void *map_addr(struct accel_cuda *cx, uint32_t handle, uint64_t off,
		      uint64_t len)
{
	uintptr_t p = 0;
	unsigned int i;

	pthread_mutex_lock(&cx->map_lock);
	i = map_find_locked(cx, handle);
	if (i < cx->nmap && cx->map[i].handle == handle &&
	    off <= cx->map[i].len && len <= cx->map[i].len - off)
		p = cx->map[i].base + off;
	pthread_mutex_unlock(&cx->map_lock);
	return (void *)p;
}

/* ------------------------------------------------------------------ */
/* Streams (fetch thread)                                              */
/* ------------------------------------------------------------------ */

static struct cx_stream *cx_stream_get(struct accel_cuda *cx, uint32_t k,
				       bool create)
{
	struct cx_stream **pp = &cx->buckets[k % CX_BUCKETS], *s;

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
	s->lnext = cx->streams;
	cx->streams = s;
	return s;
}

/* Create the CUDA stream at the first device work, at its priority. */
static int cx_stream_cuda(struct accel_cuda *cx, struct cx_stream *s)
{
	struct accel_stream_query q;
	int prio = cx->prio_least;
	cudaError_t e;

	if (s->cs)
		return 0;
	memset(&q, 0, sizeof(q));
	q.handle = s->kstream;
	if (!accel_ioctl(cx->ctx, ACCEL_IOC_STREAM_QUERY, &q) &&
	    q.priority < cx->ctx->info.least_priority)
		prio = cx->prio_greatest;
	e = rt.cudaStreamCreateWithPriority(&s->cs, cudaStreamNonBlocking,
					    prio);
	if (e != cudaSuccess)
		s->cs = NULL;
	return cx_error(cx, e, "cudaStreamCreateWithPriority");
}

static cudaEvent_t cx_record_find(struct cx_stream *s, uint64_t seq)
{
	unsigned int lo = 0, hi = s->nrec;

	while (lo < hi) {
		unsigned int mid = lo + (hi - lo) / 2;

		if (s->rec[mid].seq < seq)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < s->nrec && s->rec[lo].seq == seq ? s->rec[lo].ev : NULL;
}

static void cx_stream_free(struct accel_cuda *cx, struct cx_stream *s)
{
	unsigned int i;

	for (i = 0; i < s->nrec; i++)
		cx_event_put(cx, s->rec[i].ev);
	if (s->cs)
		rt.cudaStreamDestroy(s->cs);
	free(s->rec);
	free(s->copies);
	free(s);
}

static void cx_stream_unhash(struct accel_cuda *cx, struct cx_stream *s)
{
	struct cx_stream **pp;

	for (pp = &cx->buckets[s->kstream % CX_BUCKETS]; *pp; pp = &(*pp)->hnext)
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

	for (s = cx->streams; s; s = s->lnext) {
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
	if (atomic_load_explicit(&cx->ndead_hint, memory_order_acquire)) {
		pthread_mutex_lock(&cx->lock);
		ndead = cx->ndead;
		if (ndead) {
			dead = cx->dead_streams;
			cx->dead_streams = NULL;
			cx->ndead = cx->capdead = 0;
			atomic_store(&cx->ndead_hint, 0);
		}
		pthread_mutex_unlock(&cx->lock);
	}
	for (i = 0; i < ndead; i++) {
		s = cx_stream_get(cx, dead[i], false);
		if (s) {
			s->dead = true;
			cx->any_dead = true;
		}
	}
	free(dead);
	if (!cx->any_dead)
		return;

	cx->any_dead = false;
	pp = &cx->streams;
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
			cx->any_dead = true;
			pp = &s->lnext;
		}
	}
}

/* ------------------------------------------------------------------ */
/* Enqueueing a fetched batch (fetch thread)                           */
/* ------------------------------------------------------------------ */

static void range_fail(struct cx_range *r, uint64_t seq, int status)
{
	if (!r->fail_seq) {
		r->fail_seq = seq;
		r->fail_status = status;
	}
}

static bool overlaps(const void *a, size_t alen, const void *b, size_t blen)
{
	uintptr_t x = (uintptr_t)a, y = (uintptr_t)b;

	return x < y + blen && y < x + alen;
}

/* May copy @c join @batch[0..n) without depending on one of them? */
static bool independent(const struct cx_copy *batch, unsigned int n,
			const struct cx_copy *c)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		if (overlaps(c->dst, c->len, batch[i].dst, batch[i].len) ||
		    overlaps(c->dst, c->len, batch[i].src, batch[i].len) ||
		    overlaps(c->src, c->len, batch[i].dst, batch[i].len))
			return false;
	}
	return true;
}

/*
 * Bounds of a batch's destinations and of all its bytes: a copy that
 * writes outside all of them and reads outside the destinations is
 * independent of the batch without comparing it with every member
 * (the common case: consecutive buffers).
 */
struct cx_box {
	uintptr_t dlo, dhi;	/* destinations */
	uintptr_t alo, ahi;	/* destinations and sources */
};

static void box_init(struct cx_box *b, const struct cx_copy *c)
{
	uintptr_t d = (uintptr_t)c->dst, s = (uintptr_t)c->src;

	b->dlo = d;
	b->dhi = d + c->len;
	b->alo = d < s ? d : s;
	b->ahi = d + c->len > s + c->len ? d + c->len : s + c->len;
}

static void box_add(struct cx_box *b, const struct cx_copy *c)
{
	struct cx_box n;

	box_init(&n, c);
	if (n.dlo < b->dlo)
		b->dlo = n.dlo;
	if (n.dhi > b->dhi)
		b->dhi = n.dhi;
	if (n.alo < b->alo)
		b->alo = n.alo;
	if (n.ahi > b->ahi)
		b->ahi = n.ahi;
}

static bool box_clear(const struct cx_box *b, const struct cx_copy *c)
{
	uintptr_t d = (uintptr_t)c->dst, s = (uintptr_t)c->src;

	return (d + c->len <= b->alo || d >= b->ahi) &&
	       (s + c->len <= b->dlo || s >= b->dhi);
}

static cudaError_t cx_memcpy_batch(struct accel_cuda *cx, cudaStream_t cs,
				   const struct cx_copy *c, unsigned int n)
{
	void *dsts[CX_BATCH_MAX];
	void *srcs[CX_BATCH_MAX];
	size_t sizes[CX_BATCH_MAX], idx = 0, fail = 0;
	struct cudaMemcpyAttributes attr;
	unsigned int i;

	(void)cx;
	for (i = 0; i < n; i++) {
		dsts[i] = c[i].dst;
		srcs[i] = (void *)c[i].src;
		sizes[i] = c[i].len;
	}
	memset(&attr, 0, sizeof(attr));
	/* Sources may be written by earlier work of the stream. */
	attr.srcAccessOrder = cudaMemcpySrcAccessOrderStream;
	if (rt.batch13)
		return rt.batch13(dsts, (const void *const *)srcs, sizes, n,
				  &attr, &idx, 1, cs);
	return rt.batch12(dsts, srcs, sizes, n, &attr, &idx, 1, &fail, cs);
}

/*
 * Coalesce the copies of an independent run @c[0..n) that continue the
 * previous one (destination and source, within the same regions) into
 * @m; returns how many remain.
 */
static unsigned int cx_merge(const struct accel_cuda *cx,
			     const struct cx_copy *c, unsigned int n,
			     struct cx_copy *m)
{
	unsigned int i, nm = 0;

	for (i = 0; i < n; i++) {
		struct cx_copy *p = nm ? &m[nm - 1] : NULL;

		if (cx->merge_ok && p && p->dreg == c[i].dreg &&
		    p->sreg == c[i].sreg &&
		    (char *)p->dst + p->len == (char *)c[i].dst &&
		    (const char *)p->src + p->len == (const char *)c[i].src) {
			p->len += c[i].len;
			continue;
		}
		m[nm++] = c[i];
	}
	return nm;
}

/* Enqueue one copy at a time; on an error, fail that descriptor. */
static void cx_copies_single(struct accel_cuda *cx, struct cx_stream *s,
			     const struct cx_copy *c, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		cudaError_t e = rt.cudaMemcpyAsync(c[i].dst, c[i].src, c[i].len,
						   cudaMemcpyDefault, s->cs);

		if (e != cudaSuccess) {
			range_fail(s->open, c[i].seq,
				   cx_error(cx, e, "cudaMemcpyAsync"));
			atomic_store(&s->failed, true);
			return;
		}
		s->open->device_work = true;
	}
}

/* Issue the gathered copies of @s, in order. */
static void cx_flush_copies(struct accel_cuda *cx, struct cx_stream *s)
{
	struct cx_copy *c = s->copies;
	unsigned int n = s->ncopies, i = 0;

	s->ncopies = 0;
	if (!n || atomic_load(&s->failed))
		return;
	if (cx_stream_cuda(cx, s)) {
		range_fail(s->open, c[0].seq, -EIO);
		atomic_store(&s->failed, true);
		return;
	}
	while (i < n && !atomic_load(&s->failed)) {
		unsigned int j = i + 1;

		/*
		 * Small independent copies in a row go as one batch call, and
		 * those that continue the previous one in both source and
		 * destination (same regions) as one copy: with no overlap
		 * among them, order within the run does not matter.
		 */
		if ((cx->batch_ok || cx->merge_ok) &&
		    c[i].len <= cx->batch_max_bytes) {
			struct cx_box b;

			box_init(&b, &c[i]);
			while (j < n && j - i < CX_BATCH_MAX &&
			       c[j].len <= cx->batch_max_bytes &&
			       (box_clear(&b, &c[j]) ||
				independent(&c[i], j - i, &c[j]))) {
				box_add(&b, &c[j]);
				j++;
			}
		}
		if (j - i >= 2) {
			struct cx_copy m[CX_BATCH_MAX];
			unsigned int nm = cx_merge(cx, &c[i], j - i, m);
			cudaError_t e;

			if (nm == 1 || !cx->batch_ok) {
				if (nm < j - i) {
					unsigned int k;

					for (k = 0, e = cudaSuccess;
					     k < nm && e == cudaSuccess; k++)
						e = rt.cudaMemcpyAsync(
							m[k].dst, m[k].src,
							m[k].len,
							cudaMemcpyDefault,
							s->cs);
					if (k > 1 || e == cudaSuccess)
						s->open->device_work = true;
					if (e == cudaSuccess) {
						i = j;
						continue;
					}
					/*
					 * From the group that failed on, one
					 * by one: the error finds its owner.
					 */
					rt.cudaGetLastError();
					while (c[i].seq != m[k - 1].seq)
						i++;
				}
			} else {
				e = cx_memcpy_batch(cx, s->cs, m, nm);
				if (e == cudaSuccess) {
					s->open->device_work = true;
					i = j;
					continue;
				}
				/* Not for this device or driver: do without it. */
				rt.cudaGetLastError();
				cx->batch_ok = false;
			}
		}
		cx_copies_single(cx, s, &c[i], j - i);
		i = j;
	}
}

static int cx_resolve(struct accel_cuda *cx, uint32_t kind, uint64_t addr,
		      uint32_t handle, uint64_t off, uint64_t len, void **p)
{
	switch (kind) {
	case ACCEL_REGION_HOST:
	case ACCEL_REGION_EXTERNAL:
		*p = (void *)(uintptr_t)addr;
		return 0;
	case ACCEL_REGION_HOST_ALLOC:
		*p = map_addr(cx, handle, off, len);
		return *p ? 0 : -ENXIO;
	default:
		/* Soft-engine device memory: not reachable from CUDA. */
		return -ENXIO;
	}
}

static void cx_item(struct accel_cuda *cx, const struct accel_exec_item *it,
		    uint64_t t_submit, uint64_t t_fetch)
{
	struct cx_stream *s = cx_stream_get(cx, it->stream, true);
	struct cx_range *r;
	cudaError_t e;
	int ret;

	if (!s) {
		/* Out of memory: the item cannot even be tracked. */
		cx_set_lost(cx, cudaErrorMemoryAllocation, "libaccel executor");
		return;
	}
	s->last_fetched = it->seq;
	if (!s->open) {
		r = cx->rcache;
		if (r) {
			cx->rcache = r->next;
			memset(r, 0, sizeof(*r));
		} else {
			r = calloc(1, sizeof(*r));
		}
		if (!r) {
			cx_set_lost(cx, cudaErrorMemoryAllocation,
				    "libaccel executor");
			return;
		}
		r->s = s;
		r->first = it->seq;
		r->t_submit = t_submit ? t_submit : t_fetch;
		r->t_fetch = t_fetch;
		s->open = r;
	}
	r = s->open;
	r->last = it->seq;

	if (atomic_load(&cx->lost)) {
		range_fail(r, it->seq, -EIO);
		return;
	}
	if (atomic_load(&s->failed))
		return;
	if (it->status) {
		cx_flush_copies(cx, s);
		range_fail(r, it->seq, it->status);
		atomic_store(&s->failed, true);
		return;
	}

	switch (it->desc.op) {
	case ACCEL_OP_COPY: {
		struct cx_copy *c;
		void *dst, *src;

		if (!it->desc.length)
			return;
		ret = cx_resolve(cx, it->dst_kind, it->dst_addr, it->desc.dst,
				 it->desc.dst_offset, it->desc.length, &dst);
		if (!ret)
			ret = cx_resolve(cx, it->src_kind, it->src_addr,
					 it->desc.src, it->desc.src_offset,
					 it->desc.length, &src);
		if (ret) {
			cx_flush_copies(cx, s);
			range_fail(r, it->seq, ret);
			atomic_store(&s->failed, true);
			return;
		}
		c = grow(s->copies, &s->capcopies, s->ncopies + 1, sizeof(*c));
		if (!c) {
			cx_flush_copies(cx, s);
			range_fail(r, it->seq, -ENOMEM);
			atomic_store(&s->failed, true);
			return;
		}
		s->copies = c;
		c[s->ncopies].dst = dst;
		c[s->ncopies].src = src;
		c[s->ncopies].len = it->desc.length;
		c[s->ncopies].seq = it->seq;
		c[s->ncopies].dreg = it->desc.dst;
		c[s->ncopies].sreg = it->desc.src;
		s->ncopies++;
		return;
	}
	case ACCEL_OP_EVENT_RECORD: {
		struct cx_record *rec;
		cudaEvent_t ev;

		cx_flush_copies(cx, s);
		if (atomic_load(&s->failed))
			return;
		ret = cx_stream_cuda(cx, s);
		if (!ret)
			ret = cx_event_get(cx, &ev);
		if (ret) {
			range_fail(r, it->seq, ret);
			atomic_store(&s->failed, true);
			return;
		}
		rec = grow(s->rec, &s->caprec, s->nrec + 1, sizeof(*rec));
		if (!rec) {
			cx_event_put(cx, ev);
			range_fail(r, it->seq, -ENOMEM);
			atomic_store(&s->failed, true);
			return;
		}
		s->rec = rec;
		e = rt.cudaEventRecord(ev, s->cs);
		if (e != cudaSuccess) {
			cx_event_put(cx, ev);
			range_fail(r, it->seq, cx_error(cx, e, "cudaEventRecord"));
			atomic_store(&s->failed, true);
			return;
		}
		rec[s->nrec].seq = it->seq;
		rec[s->nrec].ev = ev;
		s->nrec++;
		r->device_work = true;
		return;
	}
	case ACCEL_OP_STREAM_WAIT: {
		struct cx_stream *ws;
		cudaEvent_t ev = NULL;

		cx_flush_copies(cx, s);
		if (atomic_load(&s->failed) || !it->wait_stream)
			return;
		ws = cx_stream_get(cx, it->wait_stream, false);
		if (ws)
			ev = cx_record_find(ws, it->wait_seq);
		/* No event: the record already completed on the device. */
		if (!ev || ws == s)
			return;
		ret = cx_stream_cuda(cx, s);
		if (ret) {
			range_fail(r, it->seq, ret);
			atomic_store(&s->failed, true);
			return;
		}
		e = rt.cudaStreamWaitEvent(s->cs, ev, 0);
		if (e != cudaSuccess) {
			range_fail(r, it->seq,
				   cx_error(cx, e, "cudaStreamWaitEvent"));
			atomic_store(&s->failed, true);
			return;
		}
		r->device_work = true;
		return;
	}
	default:
		/* NOP, HOST_WAIT (already satisfied), HOST_SIGNAL: in order. */
		return;
	}
}

/* Close every range this batch opened and hand them to the completer. */
static void cx_close_ranges(struct accel_cuda *cx, struct cx_stream **touched,
			    unsigned int n)
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
			now = mono_ns();
		r->t_close = now;
		if (cx->trace)
			r->t_enq = now;
		*tail = r;
		tail = &r->next;
		last = r;
		count++;
	}
	if (!first)
		return;
	pthread_mutex_lock(&cx->lock);
	for (i = 0; i < n; i++)
		touched[i]->npending++;
	for (r = first; r; r = r->next)
		r->s->tail_r = r;
	if (!cx->rcache) {
		cx->rcache = cx->rfree;
		cx->rfree = NULL;
	}
	if (cx->tail)
		cx->tail->next = first;
	else
		cx->head = first;
	cx->tail = last;
	atomic_fetch_add(&cx->npending, count);
	pthread_cond_signal(&cx->cond);
	pthread_mutex_unlock(&cx->lock);
}

/* This thread's last submit, for ACCEL_TRACE (0: not known). */
static __thread uint64_t tl_submit_ns;

void accel_cuda_mark_submit(struct accel_ctx *ctx)
{
	if (cx_of(ctx) && cx_of(ctx)->trace)
		tl_submit_ns = mono_ns();
}

/*
 * Poll EXEC_FETCH until nothing more is fetchable and enqueue what came,
 * under exec_lock: fetch order is enqueue order.
 */
static void cx_fetch_locked(struct accel_cuda *cx, uint64_t t_submit)
{
	struct accel_exec_fetch f;

	for (;;) {
		uint64_t t_fetch = 0;
		unsigned int i, n = 0;
		int ret;

		cx_gc(cx);
		memset(&f, 0, sizeof(f));
		f.items = (uint64_t)(uintptr_t)cx->items;
		f.max_items = cx->fetch_max;
		f.timeout_ns = 0;	/* a past deadline: poll */
		ret = accel_ioctl(cx->ctx, ACCEL_IOC_EXEC_FETCH, &f);
		if (ret) {
			if (ret != -ETIME && ret != -EINTR && ret != -ENXIO)
				fprintf(stderr, "libaccel: cuda: EXEC_FETCH: %s\n",
					strerror(-ret));
			return;
		}
		if (cx->trace)
			t_fetch = mono_ns();
		for (i = 0; i < f.count; i++) {
			struct cx_stream *s;

			cx_item(cx, &cx->items[i], t_submit, t_fetch);
			s = cx_stream_get(cx, cx->items[i].stream, false);
			/* Each stream listed once; close clears ->touched. */
			if (s && s->open && !s->touched) {
				s->touched = true;
				cx->touched[n++] = s;
			}
		}
		cx_close_ranges(cx, cx->touched, n);
		if (f.count < f.max_items)
			return;
	}
}

/*
 * Fetch and enqueue what became fetchable, from the calling thread
 * (inline: the thread that submitted issues its own CUDA work, no thread
 * hand-off). Whoever holds exec_lock already fetches on our behalf: the
 * kick flag makes it poll once more after the work we just made
 * fetchable, so none is left behind.
 */
static void cx_kick(struct accel_cuda *cx, uint64_t t_submit, bool inline_)
{
	int dev = -1;

	atomic_store(&cx->kick, 1);
	while (atomic_load(&cx->kick)) {
		if (pthread_mutex_trylock(&cx->exec_lock))
			return;
		atomic_store(&cx->kick, 0);
		if (!cx->stopped) {
			if (cx->multi_dev && dev < 0 &&
			    rt.cudaGetDevice(&dev) == cudaSuccess &&
			    dev != cx->device)
				rt.cudaSetDevice(cx->device);
			if (cx->trace)
				atomic_fetch_add(inline_ ? &cx->tr.passes_inline :
						 &cx->tr.passes_thread, 1);
			cx_fetch_locked(cx, t_submit);
		}
		pthread_mutex_unlock(&cx->exec_lock);
	}
	/* The caller's current device is its own business. */
	if (dev >= 0 && dev != cx->device)
		rt.cudaSetDevice(dev);
}

void accel_cuda_kick(struct accel_ctx *ctx)
{
	uint64_t t = tl_submit_ns;

	tl_submit_ns = 0;
	cx_kick(cx_of(ctx), t, true);
}

/*
 * The fetch thread is only a safety net now: every call that can make
 * work fetchable (SUBMIT, EVENT_RECORD, EVENT_SIGNAL, EXEC_COMPLETE) kicks
 * the executor from the thread that made it. It polls every CX_IDLE_NS,
 * or at once when signalled.
 */
static void *cx_fetch_main(void *arg)
{
	struct accel_cuda *cx = arg;

	rt.cudaSetDevice(cx->device);
	pthread_mutex_lock(&cx->lock);
	while (!cx->stop_fetch) {
		struct timespec ts;
		uint64_t until = mono_ns() + CX_IDLE_NS;

		ts.tv_sec = (time_t)(until / 1000000000ULL);
		ts.tv_nsec = (long)(until % 1000000000ULL);
		pthread_cond_timedwait(&cx->fetch_cond, &cx->lock, &ts);
		if (cx->stop_fetch)
			break;
		pthread_mutex_unlock(&cx->lock);
		cx_kick(cx, 0, false);
		pthread_mutex_lock(&cx->lock);
	}
	pthread_mutex_unlock(&cx->lock);
	/* Last pass: what is fetchable now goes to the device. */
	cx_kick(cx, 0, false);
	pthread_mutex_lock(&cx->exec_lock);
	cx->stopped = true;
	pthread_mutex_unlock(&cx->exec_lock);
	pthread_mutex_lock(&cx->lock);
	cx->fetch_exited = true;
	pthread_cond_signal(&cx->cond);
	pthread_mutex_unlock(&cx->lock);
	return NULL;
}

/* ------------------------------------------------------------------ */
/* Completions (completion thread)                                     */
/* ------------------------------------------------------------------ */

static void cx_zombies_retry(struct accel_cuda *cx);

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
			*now = mono_ns();
		if (*now - t->t_close < cx->lazy_ns &&
		    *now - r->t_close < cx->lazy_max_ns)
			return NULL;
	}
	if (cx_event_get_locked(cx, &ev)) {
		/* No way to tell when it is done: fail it, as a lost event. */
		range_fail(r, r->first, -EIO);
		r->need_ev = false;
		return NULL;
	}
	e = rt.cudaEventRecord(ev, s->cs);
	if (e != cudaSuccess) {
		cx_event_put_locked(cx, ev);
		/* Unknown what ran: fail from the start. */
		range_fail(r, r->first, cx_error(cx, e, "cudaEventRecord"));
		atomic_store(&s->failed, true);
		r->need_ev = false;
		return NULL;
	}
	t->ev = ev;
	s->cover = t;
	return ev;
}

/* One take pass: the last event found done (ranges share a cover). */
struct cx_scan {
	uint64_t now;
	cudaEvent_t done_ev;
};

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
	e = rt.cudaEventQuery(ev);
	if (e == cudaSuccess)
		sc->done_ev = ev;
	if (e == cudaSuccess)
		return 1;
	if (e == cudaErrorNotReady)
		return 0;
	range_fail(r, r->first, -EIO);
	atomic_store(&r->s->failed, true);
	cx_error(cx, e, "cudaEventQuery (an earlier copy failed)");
	return 1;
}

/* Take the ranges that are done, in order per stream; under cx->lock. */
static unsigned int cx_take_ready_locked(struct accel_cuda *cx,
					 struct cx_range **out, unsigned int max,
					 bool force)
{
	struct cx_range **pp = &cx->head, *r, *prev = NULL;
	unsigned int n = 0, pass = ++cx->pass;
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
		if (cx->tail == r)
			cx->tail = prev;
		r->next = NULL;
		r->s->npending--;
		if (r->s->cover == r)
			r->s->cover = NULL;
		if (r->s->tail_r == r)
			r->s->tail_r = NULL;
		if (cx->trace)
			r->t_seen = mono_ns();
		out[n++] = r;
	}
	atomic_fetch_sub(&cx->npending, n);
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
			fprintf(stderr, "libaccel: cuda: EXEC_COMPLETE: %s\n",
				strerror(-ret));
		i += chunk;
	}
	if (cx->trace) {
		uint64_t now = mono_ns();

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
		r->next = cx->rfree;
		cx->rfree = r;
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
	n = cx_take_ready_locked(cx, cx->done, cx->done_max, waiter);
	pthread_mutex_unlock(&cx->lock);
	if (!n)
		return 0;
	for (i = 0; i < n; i++)
		cx->done[i]->seen_by_waiter = waiter;
	cx_report(cx, cx->done, n, cx->ents);
	return n;
}

/* After completions: HOST_WAITs behind them may be fetchable now. */
static void cx_after_report(struct accel_cuda *cx)
{
	cx_kick(cx, 0, false);
}

static void *cx_done_main(void *arg)
{
	struct accel_cuda *cx = arg;
	uint64_t waiting_since = 0;

	rt.cudaSetDevice(cx->device);
	pthread_mutex_lock(&cx->lock);
	for (;;) {
		unsigned int n;

		if (atomic_load(&cx->kick_deferred)) {
			pthread_mutex_unlock(&cx->lock);
			if (atomic_exchange(&cx->kick_deferred, false))
				cx_after_report(cx);
			pthread_mutex_lock(&cx->lock);
			continue;
		}
		if (!cx->head) {
			uint64_t until;

			if (cx->stop_done && cx->fetch_exited)
				break;
			/* Just busy: more work is likely soon; look briefly. */
			pthread_mutex_unlock(&cx->lock);
			until = mono_ns() + cx->spin_ns;
			while (!atomic_load(&cx->npending) &&
			       !atomic_load(&cx->kick_deferred) &&
			       mono_ns() < until)
				cx_spin_pause();
			pthread_mutex_lock(&cx->lock);
			atomic_store(&cx->done_idle, true);
			while (!cx->head && !(cx->stop_done && cx->fetch_exited) &&
			       !atomic_load(&cx->kick_deferred)) {
				if (cx->trace)
					atomic_fetch_add(&cx->tr.done_woken, 1);
				pthread_cond_wait(&cx->cond, &cx->lock);
			}
			atomic_store(&cx->done_idle, false);
			waiting_since = 0;
			continue;
		}
		if (atomic_load(&cx->helpers)) {
			/* A waiter polls the device: leave it to it. */
			pthread_mutex_unlock(&cx->lock);
			while (atomic_load(&cx->helpers) &&
			       !atomic_load(&cx->kick_deferred))
				cx_spin_pause();
			pthread_mutex_lock(&cx->lock);
			continue;
		}
		pthread_mutex_unlock(&cx->lock);
		pthread_mutex_lock(&cx->report_lock);
		n = cx_poll_locked(cx, false);
		if (n) {
			pthread_mutex_unlock(&cx->report_lock);
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
			waiting_since = mono_ns();
		if (mono_ns() - waiting_since < cx->spin_ns) {
			uint64_t until = mono_ns() + CX_POLL_GAP_NS;

			pthread_mutex_unlock(&cx->report_lock);
			/*
			 * Not every pause: each poll takes the locks the
			 * submitters take and queries the driver.
			 */
			while (mono_ns() < until &&
			       !atomic_load(&cx->kick_deferred))
				cx_spin_pause();
		} else {
			cudaEvent_t ev = NULL;

			uint64_t now = 0;

			pthread_mutex_lock(&cx->lock);
			/* Long enough: the head's event, recorded if need be. */
			if (cx->head && cx->head->need_ev)
				ev = cx_range_event(cx, cx->head, true, &now);
			pthread_mutex_unlock(&cx->lock);
			if (ev) {
				atomic_store(&cx->done_idle, true);
				rt.cudaEventSynchronize(ev);
				atomic_store(&cx->done_idle, false);
				if (atomic_exchange(&cx->kick_deferred, false)) {
					pthread_mutex_unlock(&cx->report_lock);
					cx_after_report(cx);
					pthread_mutex_lock(&cx->lock);
					continue;
				}
			}
			pthread_mutex_unlock(&cx->report_lock);
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
	if (ret != -ETIME || !cx || !atomic_load(&cx->npending))
		return ret;
	until = mono_ns() + cx->spin_ns;
	if (deadline < until)
		until = deadline;
	atomic_fetch_add(&cx->helpers, 1);
	for (;;) {
		if (!pthread_mutex_trylock(&cx->report_lock)) {
			reported += cx_poll_locked(cx, true);
			pthread_mutex_unlock(&cx->report_lock);
		}
		ret = poll(ctx, arg);
		if (ret != -ETIME || !atomic_load(&cx->npending) ||
		    mono_ns() >= until)
			break;
		cx_spin_pause();
	}
	atomic_fetch_sub(&cx->helpers, 1);
	/* Off the waiter's critical path: by the completion thread. */
	if (reported) {
		atomic_store(&cx->kick_deferred, true);
		if (atomic_load(&cx->done_idle) &&
		    atomic_exchange(&cx->kick_deferred, false))
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

/* ACCEL_TRACE: a wait returned; how long after the last COMPLETE. */
void accel_cuda_trace_wait(struct accel_ctx *ctx)
{
	struct accel_cuda *cx = cx_of(ctx);
	uint64_t last;

	if (!cx || !cx->trace)
		return;
	last = atomic_load(&cx->tr.last_done);
	atomic_fetch_add(&cx->tr.waits, 1);
	if (last)
		atomic_fetch_add(&cx->tr.done_waiter, mono_ns() - last);
}

static void cx_trace_print(struct accel_cuda *cx)
{
	struct cx_trace *t = &cx->tr;
	uint64_t n = atomic_load(&t->ranges), w = atomic_load(&t->waits);
	double d = n ? (double)n * 1e3 : 1.0;

	fprintf(stderr,
		"libaccel: trace: %llu ranges (%llu seen done by a waiter, %llu by the completion thread); fetch passes %llu inline after a submit, %llu after completions or by the fetch thread; completion thread slept %llu times\n"
		"libaccel: trace: mean us per range: submit->fetch %.2f, fetch->enqueued %.2f, enqueued->seen done %.2f, seen->COMPLETE returned %.2f; COMPLETE->waiter returned %.2f (%llu waits)\n",
		(unsigned long long)n, (unsigned long long)atomic_load(&t->by_waiter),
		(unsigned long long)(n - atomic_load(&t->by_waiter)),
		(unsigned long long)atomic_load(&t->passes_inline),
		(unsigned long long)atomic_load(&t->passes_thread),
		(unsigned long long)atomic_load(&t->done_woken),
		(double)atomic_load(&t->submit_fetch) / d,
		(double)atomic_load(&t->fetch_enq) / d,
		(double)atomic_load(&t->enq_seen) / d,
		(double)atomic_load(&t->seen_done) / d,
		w ? (double)atomic_load(&t->done_waiter) / ((double)w * 1e3) : 0.0,
		(unsigned long long)w);
}

/* ------------------------------------------------------------------ */
/* Memory                                                              */
/* ------------------------------------------------------------------ */

int accel_cuda_malloc(struct accel_ctx *ctx, size_t size, void **ptr)
{
	struct accel_cuda *cx = cx_of(ctx);
	cudaError_t e;

	rt.cudaSetDevice(cx->device);
	e = rt.cudaMalloc(ptr, size);
	if (e != cudaSuccess)
		return cx_error(cx, e, "cudaMalloc");
	/* accel_malloc() memory starts zeroed, whoever backs it. */
	e = rt.cudaMemset(*ptr, 0, size);
	if (e != cudaSuccess) {
		rt.cudaFree(*ptr);
		return cx_error(cx, e, "cudaMemset");
	}
	return 0;
}

/* accel_malloc(): cudaMalloc, registered so that descriptors can name it. */
int accel_cuda_device_alloc(struct accel_ctx *ctx, size_t size,
			    struct accel_region *r)
{
	struct accel_mem_register reg;
	void *p = NULL;
	int ret;

	ret = accel_cuda_malloc(ctx, size, &p);
	if (ret)
		return ret;
	memset(&reg, 0, sizeof(reg));
	reg.addr = (uint64_t)(uintptr_t)p;
	reg.size = size;
	reg.flags = ACCEL_MEM_EXTERNAL;
	r->base = (uintptr_t)p;
	r->size = size;
	ret = accel_ioctl(ctx, ACCEL_IOC_MEM_REGISTER, &reg);
	if (ret) {
		r->handle = 0;
		accel_cuda_region_teardown(ctx, r);
		return ret;
	}
	r->handle = reg.handle;
	return 0;
}

/* The CUDA side keeps a region's mapping until its last use retired. */
void accel_cuda_unmap(struct accel_ctx *ctx, const struct accel_region *r)
{
	(void)ctx;
	(void)r;
}

void accel_cuda_host_pin(struct accel_ctx *ctx, struct accel_region *r)
{
	struct accel_cuda *cx = cx_of(ctx);
	size_t len = r->map_len ? r->map_len : r->size;
	cudaError_t e;

	rt.cudaSetDevice(cx->device);
	/*
	 * Best effort: without it CUDA stages the copy (slow, still right).
	 * Ranges that share a page with a registered one fail here.
	 */
	e = rt.cudaHostRegister((void *)r->base, len, cudaHostRegisterDefault);
	if (e == cudaSuccess)
		r->cuda_pinned = true;
	else
		rt.cudaGetLastError();
}

/* Give back what the CUDA side holds of a region no queued work names. */
static void cx_region_cleanup(struct accel_cuda *cx,
			      const struct accel_region *r)
{
	rt.cudaSetDevice(cx->device);
	if (r->cuda_pinned)
		rt.cudaHostUnregister((void *)r->base);
	switch (r->kind) {
	case LA_REGION_DEVICE:
		rt.cudaFree((void *)r->base);
		break;
	case LA_REGION_HOST_ALLOC:
		map_remove(cx, r->handle);
		munmap((void *)r->base, r->map_len);
		break;
	case LA_REGION_REGISTERED:
		break;
	}
	rt.cudaGetLastError();
}

int accel_cuda_release(struct accel_ctx *ctx, const struct accel_region *r,
		       bool deferred)
{
	struct accel_cuda *cx = cx_of(ctx);
	struct cx_zombie *z;
	int ret;

	/*
	 * Never deferred in the transport: the CUDA side must know when the
	 * last use retired, so a busy region is kept and retried after each
	 * completion.
	 */
	ret = accel_kregion_release(ctx, r->handle, 0);
	if (ret == -ENOENT)
		ret = 0;
	if (!ret) {
		cx_region_cleanup(cx, r);
		return 0;
	}
	if (ret != -EBUSY || !deferred)
		return ret;
	z = malloc(sizeof(*z));
	if (!z)
		return -ENOMEM;
	z->r = *r;
	pthread_mutex_lock(&cx->lock);
	z->next = cx->zombies;
	cx->zombies = z;
	pthread_mutex_unlock(&cx->lock);
	/* It may have retired meanwhile, with no completion to come. */
	cx_zombies_retry(cx);
	return 0;
}

static void cx_zombies_retry(struct accel_cuda *cx)
{
	struct cx_zombie *list, *z, *keep = NULL;

	pthread_mutex_lock(&cx->lock);
	list = cx->zombies;
	cx->zombies = NULL;
	pthread_mutex_unlock(&cx->lock);
	while ((z = list)) {
		int ret;

		list = z->next;
		ret = accel_kregion_release(cx->ctx, z->r.handle, 0);
		if (ret == -EBUSY) {
			z->next = keep;
			keep = z;
			continue;
		}
		cx_region_cleanup(cx, &z->r);
		free(z);
	}
	if (!keep)
		return;
	pthread_mutex_lock(&cx->lock);
	for (z = keep; z->next; z = z->next)
		;
	z->next = cx->zombies;
	cx->zombies = keep;
	pthread_mutex_unlock(&cx->lock);
}

void accel_cuda_region_teardown(struct accel_ctx *ctx,
				const struct accel_region *r)
{
	cx_region_cleanup(cx_of(ctx), r);
}

bool accel_cuda_reap(struct accel_ctx *ctx)
{
	cx_zombies_retry(cx_of(ctx));
	/* Whatever came back, the failed call is worth one more try. */
	return true;
}

void accel_cuda_stream_dead(struct accel_ctx *ctx, uint32_t kstream)
{
	struct accel_cuda *cx = cx_of(ctx);
	uint32_t *d;

	if (!cx)
		return;
	pthread_mutex_lock(&cx->lock);
	d = grow(cx->dead_streams, &cx->capdead, cx->ndead + 1, sizeof(*d));
	if (d) {
		cx->dead_streams = d;
		d[cx->ndead++] = kstream;
		atomic_store(&cx->ndead_hint, cx->ndead);
	}
	pthread_mutex_unlock(&cx->lock);
}

/* ------------------------------------------------------------------ */
/* Start and stop                                                      */
/* ------------------------------------------------------------------ */

bool accel_cuda_lost(struct accel_ctx *ctx, const char **why)
{
	struct accel_cuda *cx = cx_of(ctx);

	if (!cx || !atomic_load(&cx->lost))
		return false;
	*why = cx->lost_why;
	return true;
}

static unsigned int env_uint(const char *name, unsigned int def)
{
	const char *v = getenv(name);
	char *end;
	unsigned long n;

	if (!v || !*v)
		return def;
	n = strtoul(v, &end, 0);
	return *end ? def : (unsigned int)n;
}

static int cx_fail_start(bool quiet, int ret, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int cx_fail_start(bool quiet, int ret, const char *fmt, ...)
{
	char buf[384];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	accel_set_error("%s", buf);
	if (!quiet)
		fprintf(stderr, "libaccel: ACCEL_BACKEND=cuda: %s\n", buf);
	return ret;
}

static void cx_free_arrays(struct accel_cuda *cx)
{
	free(cx->items);
	free(cx->touched);
	free(cx->done);
	free(cx->ents);
}

static void cx_destroy_sync(struct accel_cuda *cx)
{
	pthread_cond_destroy(&cx->fetch_cond);
	pthread_cond_destroy(&cx->cond);
	pthread_mutex_destroy(&cx->report_lock);
	pthread_mutex_destroy(&cx->exec_lock);
	pthread_mutex_destroy(&cx->map_lock);
	pthread_mutex_destroy(&cx->lock);
}

int accel_cuda_start(struct accel_ctx *ctx, bool quiet)
{
	struct accel_exec_attach at = { 0 };
	struct accel_stream_create sc = { 0 };
	struct accel_cuda *cx;
	cudaError_t e;
	int ndev = 0, ret;

	pthread_once(&rt_once, rt_load);
	if (rt.load_error)
		return cx_fail_start(quiet, rt.load_error, "%s", rt.why);
	e = rt.cudaGetDeviceCount(&ndev);
	if (e != cudaSuccess)
		return cx_fail_start(quiet, -ENODEV,
				     "no usable GPU: cudaGetDeviceCount: %s: %s",
				     rt.cudaGetErrorName(e),
				     rt.cudaGetErrorString(e));
	if (ndev <= 0)
		return cx_fail_start(quiet, -ENODEV, "no CUDA device");
	if (!(ctx->info.caps & ACCEL_CAP_EXECUTOR))
		return cx_fail_start(quiet, -ENODEV,
				     "the %s transport has no executor protocol (ACCEL_CAP_EXECUTOR): upgrade the accelstream module",
				     ctx->ops->name);

	cx = calloc(1, sizeof(*cx));
	if (!cx)
		return -ENOMEM;
	cx->ctx = ctx;
	cx->device = (int)env_uint("ACCEL_CUDA_DEVICE", 0);
	if (cx->device >= ndev) {
		ret = cx_fail_start(quiet, -ENODEV,
				    "ACCEL_CUDA_DEVICE=%d: only %d device(s)",
				    cx->device, ndev);
		free(cx);
		return ret;
	}
	cx->batch_ok = (rt.batch13 || rt.batch12) &&
		       !accel_env_flag("ACCEL_CUDA_NO_BATCH");
	cx->batch_max_bytes = env_uint("ACCEL_CUDA_BATCH_MAX", 256 * 1024);
	cx->spin_ns = env_uint("ACCEL_CUDA_SPIN_US", 50) * 1000U;
	cx->lazy_ns = env_uint("ACCEL_CUDA_LAZY_US", 10) * 1000ULL;
	cx->lazy_max_ns = env_uint("ACCEL_CUDA_LAZY_MAX_US", 500) * 1000ULL;
	cx->multi_dev = ndev > 1;
	cx->merge_ok = !accel_env_flag("ACCEL_CUDA_NO_MERGE");
	cx->trace = accel_env_flag("ACCEL_TRACE");
	cx->fetch_max = CX_FETCH_MAX;
	if (cx->fetch_max > ctx->info.max_submit)
		cx->fetch_max = ctx->info.max_submit;
	cx->done_max = CX_FETCH_MAX * 4;
	cx->items = calloc(cx->fetch_max, sizeof(*cx->items));
	cx->touched = calloc(cx->fetch_max, sizeof(*cx->touched));
	cx->done = calloc(cx->done_max, sizeof(*cx->done));
	cx->ents = calloc(2 * (size_t)cx->done_max, sizeof(*cx->ents));
	if (!cx->items || !cx->touched || !cx->done || !cx->ents) {
		cx_free_arrays(cx);
		free(cx);
		return -ENOMEM;
	}
	pthread_mutex_init(&cx->lock, NULL);
	pthread_mutex_init(&cx->map_lock, NULL);
	pthread_mutex_init(&cx->exec_lock, NULL);
	pthread_mutex_init(&cx->report_lock, NULL);
	pthread_cond_init(&cx->cond, NULL);
	{
		pthread_condattr_t ca;

		pthread_condattr_init(&ca);
		pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
		pthread_cond_init(&cx->fetch_cond, &ca);
		pthread_condattr_destroy(&ca);
	}

	e = rt.cudaSetDevice(cx->device);
	if (e == cudaSuccess)
		e = rt.cudaFree(NULL);	/* create the device context now */
	if (e == cudaSuccess)
		e = rt.cudaDeviceGetStreamPriorityRange(&cx->prio_least,
							&cx->prio_greatest);
	if (e != cudaSuccess) {
		ret = cx_fail_start(quiet, -ENODEV, "device %d: %s: %s",
				    cx->device, rt.cudaGetErrorName(e),
				    rt.cudaGetErrorString(e));
		goto err_free;
	}
	ret = accel_ioctl(ctx, ACCEL_IOC_STREAM_CREATE, &sc);
	if (ret)
		goto err_free;
	cx->ctl_stream = sc.handle;
	ret = accel_ioctl(ctx, ACCEL_IOC_EXEC_ATTACH, &at);
	if (ret) {
		cx_fail_start(quiet, ret, "EXEC_ATTACH: %s", strerror(-ret));
		goto err_stream;
	}
	ctx->backend_data = cx;
	if (pthread_create(&cx->done_thread, NULL, cx_done_main, cx)) {
		ret = -ENOMEM;
		goto err_detach;
	}
	if (pthread_create(&cx->fetch_thread, NULL, cx_fetch_main, cx)) {
		pthread_mutex_lock(&cx->lock);
		cx->stop_done = cx->fetch_exited = true;
		pthread_cond_signal(&cx->cond);
		pthread_mutex_unlock(&cx->lock);
		pthread_join(cx->done_thread, NULL);
		ret = -ENOMEM;
		goto err_detach;
	}
	return 0;

err_detach:
	ctx->backend_data = NULL;
	accel_ioctl(ctx, ACCEL_IOC_EXEC_DETACH, &at);
err_stream:
	{
		struct accel_handle h = { .handle = cx->ctl_stream };

		accel_ioctl(ctx, ACCEL_IOC_STREAM_DESTROY, &h);
	}
err_free:
	cx_destroy_sync(cx);
	cx_free_arrays(cx);
	free(cx);
	return ret;
}

void accel_cuda_stop(struct accel_ctx *ctx)
{
	struct accel_cuda *cx = cx_of(ctx);

	if (!cx)
		return;
	pthread_mutex_lock(&cx->lock);
	cx->stop_fetch = true;
	pthread_cond_signal(&cx->fetch_cond);
	pthread_mutex_unlock(&cx->lock);
	pthread_join(cx->fetch_thread, NULL);
	/* What went to the device completes and is reported. */
	pthread_mutex_lock(&cx->lock);
	cx->stop_done = true;
	pthread_cond_signal(&cx->cond);
	pthread_mutex_unlock(&cx->lock);
	pthread_join(cx->done_thread, NULL);
	if (cx->trace)
		cx_trace_print(cx);
	/*
	 * Stay attached: closing the transport cancels what was never
	 * fetched, where a detach would let the CPU engine run it.
	 */
}

void accel_cuda_free_ctx(struct accel_ctx *ctx)
{
	struct accel_cuda *cx = cx_of(ctx);
	struct cx_zombie *z;
	unsigned int i;

	if (!cx)
		return;
	rt.cudaSetDevice(cx->device);
	for (i = 0; i < CX_BUCKETS; i++) {
		struct cx_stream *s;

		while ((s = cx->buckets[i])) {
			cx->buckets[i] = s->hnext;
			free(s->open);
			cx_stream_free(cx, s);
		}
	}
	while ((z = cx->zombies)) {
		cx->zombies = z->next;
		cx_region_cleanup(cx, &z->r);
		free(z);
	}
	while (cx->head) {
		struct cx_range *r = cx->head;

		cx->head = r->next;
		if (r->ev)
			rt.cudaEventDestroy(r->ev);
		free(r);
	}
	while (cx->rcache) {
		struct cx_range *r = cx->rcache;

		cx->rcache = r->next;
		free(r);
	}
	while (cx->rfree) {
		struct cx_range *r = cx->rfree;

		cx->rfree = r->next;
		free(r);
	}
	for (i = 0; i < cx->npool; i++)
		rt.cudaEventDestroy(cx->pool[i]);
	free(cx->pool);
	free(cx->map);
	free(cx->dead_streams);
	cx_destroy_sync(cx);
	cx_free_arrays(cx);
	free(cx);
	ctx->backend_data = NULL;
}

const struct accel_backend_ops accel_backend_cuda = {
	.name = "cuda",
	.start = accel_cuda_start,
	.stop = accel_cuda_stop,
	.teardown = accel_cuda_free_ctx,
	.lost = accel_cuda_lost,
	.device_alloc = accel_cuda_device_alloc,
	.host_map = accel_cuda_map_add,
	.host_pin = accel_cuda_host_pin,
	.release = accel_cuda_release,
	.unmap = accel_cuda_unmap,
	.region_teardown = accel_cuda_region_teardown,
	.reap = accel_cuda_reap,
	.stream_dead = accel_cuda_stream_dead,
	.kick = accel_cuda_kick,
	.poll = accel_cuda_poll,
	.wait_fast = accel_cuda_wait_fast,
	.mark_submit = accel_cuda_mark_submit,
	.trace_wait = accel_cuda_trace_wait,
};
