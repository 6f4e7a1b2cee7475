// SPDX-License-Identifier: MIT
/*
 * A stand-in libcudart for machines without a GPU: "device" memory is host
 * memory and every copy runs at once, in call order. It lets the CUDA
 * executor's bookkeeping (fetch, ranges, batching, completions, frees)
 * run under the sanitizers here: ACCEL_CUDART=.../libfakecudart.so.
 * Only the calls libaccel makes exist. FAKE_CUDA_BATCH=0 makes the batch
 * call fail as unsupported.
 *
 * For host-cost measurements (bench/latency over this library):
 * FAKE_CUDA_CALL_NS=N busy-waits N ns in every stream/event call (a rough
 * model of the driver's cost per call), and FAKE_CUDA_STATS=1 prints how
 * many of each call were made, at exit.
 *
 * For the executor pipeline's tests (dlsym on this library):
 * fake_cuda_count(name) reads a call counter, fake_cuda_thread_count(name)
 * the calling thread's (who made the call: no hand-off); fake_cuda_hold(1) makes
 * every copy call (cudaMemcpyAsync, cudaMemcpyBatchAsync) block on entry
 * until fake_cuda_hold(0), fake_cuda_held() says how many are blocked
 * (so a test can let work accumulate behind a copy being issued, without
 * timing anything); fake_cuda_fail_dst(p) makes a copy into @p fail with
 * cudaErrorInvalidValue (a batch holding one fails whole, copying
 * nothing), and fake_cuda_fail_nth(n) the n-th copy call from now.
 * cuStreamWriteValue32 is reached through cudaGetDriverEntryPointByVersion,
 * as on CUDA 12.5+; FAKE_CUDA_NO_WRITE=1 hides it. fake_cuda_rate(ps) models a device that takes @ps picoseconds
 * per byte copied: copies still land at once, but each stream is busy
 * until its modelled end, an event recorded on it completes then
 * (cudaEventQuery says cudaErrorNotReady before, cudaEventSynchronize
 * sleeps until then) and fake_cuda_busy() says whether any stream's
 * modelled work is still running, so that a test can tell a completion
 * reported early (host words are written at once: not modelled).
 * FAKE_CUDA_RATE_PS=N sets that rate from the start, and FAKE_CUDA_LINK=1
 * makes all streams share one link (their copies take turns), for a
 * benchmark of the waits over the stand-in (FAKE_CUDA_NO_DATA=1: and no
 * bytes are copied, so that the host's memcpy does not set the pace).
 * Mapped host memory (cudaHostAlloc) is plain memory: the "device"
 * address is the host address, as with UVA.
 *
 * FAKE_CUDA_DEVICES=N (default 1) simulates N GPUs: a current device per
 * thread (cudaSetDevice/cudaGetDevice), allocations that remember their
 * device (in the header before them), peer access between any two
 * (FAKE_CUDA_PEER=0: none, where CUDA would stage), and
 * cudaMemcpyPeerAsync.
 *
 * As with CUDA, a child forked after the parent initialised the runtime
 * cannot use it: its cudaGetDeviceCount() fails with
 * cudaErrorInitializationError.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>

#include <cuda.h>
#include <cuda_runtime_api.h>

static int batch_calls;

enum { C_COPY, C_BATCH, C_BATCH_ITEMS, C_REC, C_QUERY, C_SYNC, C_WAIT,
       C_GETDEV, C_SETDEV, C_EVCREATE, C_WRITE, C_MEMSET, C_MEMSET16,
       C_MEMSET32, C_COPY2D, C_MEMOP, C_N };
static const char *const c_name[C_N] = {
	"cudaMemcpyAsync", "cudaMemcpyBatchAsync", "  (copies in batches)",
	"cudaEventRecord", "cudaEventQuery", "cudaEventSynchronize",
	"cudaStreamWaitEvent", "cudaGetDevice", "cudaSetDevice",
	"cudaEventCreateWithFlags", "cuStreamWriteValue32", "cudaMemsetAsync",
	"cuMemsetD16Async", "cuMemsetD32Async", "cudaMemcpy2DAsync",
	"cuStreamBatchMemOp",
};
static unsigned long counts[C_N];
static __thread unsigned long thread_counts[C_N];
static long call_ns = -1;

static void stats_print(void)
{
	int i;

	fprintf(stderr, "fakecudart: calls:");
	for (i = 0; i < C_N; i++)
		fprintf(stderr, " %s %lu%s", c_name[i],
			__atomic_load_n(&counts[i], __ATOMIC_RELAXED),
			i + 1 < C_N ? "," : "\n");
}

/* How many times the call @name was made (dlsym fake_cuda_calls), -1: unknown. */
long fake_cuda_calls(const char *name);
long fake_cuda_calls(const char *name)
{
	int i;

	for (i = 0; i < C_N; i++)
		if (!strcmp(name, c_name[i]))
			return (long)__atomic_load_n(&counts[i], __ATOMIC_RELAXED);
	return -1;
}

static void call(int what)
{
	long ns = __atomic_load_n(&call_ns, __ATOMIC_RELAXED);

	__atomic_add_fetch(&counts[what], 1, __ATOMIC_RELAXED);
	thread_counts[what]++;
	if (ns < 0) {
		const char *v = getenv("FAKE_CUDA_CALL_NS");
		const char *st = getenv("FAKE_CUDA_STATS");

		ns = v ? atol(v) : 0;
		if (__atomic_exchange_n(&call_ns, ns, __ATOMIC_RELAXED) < 0 &&
		    st && !strcmp(st, "1"))
			atexit(stats_print);
	}
	if (ns > 0 && what != C_GETDEV) {
		struct timespec a, b;

		clock_gettime(CLOCK_MONOTONIC, &a);
		do
			clock_gettime(CLOCK_MONOTONIC, &b);
		while ((b.tv_sec - a.tv_sec) * 1000000000L +
		       (b.tv_nsec - a.tv_nsec) < ns);
	}
}

long fake_cuda_count(const char *name);
long fake_cuda_count(const char *name)
{
	int i;

	for (i = 0; i < C_N; i++)
		if (!strcmp(c_name[i], name))
			return (long)__atomic_load_n(&counts[i], __ATOMIC_RELAXED);
	if (!strcmp(name, "batch_items"))
		return (long)__atomic_load_n(&counts[C_BATCH_ITEMS], __ATOMIC_RELAXED);
	return -1;
}

/* How many times the calling thread made the call @name; -1: unknown. */
long fake_cuda_thread_count(const char *name);
long fake_cuda_thread_count(const char *name)
{
	int i;

	for (i = 0; i < C_N; i++)
		if (!strcmp(c_name[i], name))
			return (long)thread_counts[i];
	return -1;
}

/* Copy calls blocked on entry while held; a test releases them. */
static pthread_mutex_t hold_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t hold_cond = PTHREAD_COND_INITIALIZER;
static bool hold_on;
static long hold_waiting;
static void *fail_dst;

void fake_cuda_hold(int on);
void fake_cuda_hold(int on)
{
	pthread_mutex_lock(&hold_lock);
	hold_on = on;
	pthread_cond_broadcast(&hold_cond);
	pthread_mutex_unlock(&hold_lock);
}

long fake_cuda_held(void);
long fake_cuda_held(void)
{
	long n;

	pthread_mutex_lock(&hold_lock);
	n = hold_waiting;
	pthread_mutex_unlock(&hold_lock);
	return n;
}

void fake_cuda_fail_dst(void *p);
void fake_cuda_fail_dst(void *p)
{
	pthread_mutex_lock(&hold_lock);
	fail_dst = p;
	pthread_mutex_unlock(&hold_lock);
}

/* The copy calls left before the one that fails, or 0: none fails. */
static long fail_nth;

void fake_cuda_fail_nth(long n);
void fake_cuda_fail_nth(long n)
{
	pthread_mutex_lock(&hold_lock);
	fail_nth = n;
	pthread_mutex_unlock(&hold_lock);
}

/* On entry to a copy call: wait while held; true if @dst is to fail. */
static bool copy_gate(void *const *dsts, size_t n)
{
	bool fail = false;
	size_t i;

	pthread_mutex_lock(&hold_lock);
	if (hold_on) {
		hold_waiting++;
		while (hold_on)
			pthread_cond_wait(&hold_cond, &hold_lock);
		hold_waiting--;
	}
	if (fail_nth && !--fail_nth)
		fail = true;
	for (i = 0; i < n && fail_dst; i++)
		fail = fail || dsts[i] == fail_dst;
	pthread_mutex_unlock(&hold_lock);
	return fail;
}

/* The modelled device: ps per byte, and each stream's end (mono ns). */
static long rate_ps;
static uint64_t busy_max;

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

void fake_cuda_rate(long ps);
void fake_cuda_rate(long ps)
{
	__atomic_store_n(&rate_ps, ps, __ATOMIC_RELAXED);
}

int fake_cuda_busy(void);
int fake_cuda_busy(void)
{
	return __atomic_load_n(&busy_max, __ATOMIC_ACQUIRE) > mono_ns();
}

/* A stream or an event: when its work ends on the modelled device. */
struct fake_obj {
	uint64_t end;
	uint64_t pad;
};

static uint64_t obj_end_raw(const struct fake_obj *o)
{
	return __atomic_load_n(&o->end, __ATOMIC_RELAXED);
}

/*
 * FAKE_CUDA_RATE_PS=N: the rate from the start (for a benchmark over the
 * stand-in); FAKE_CUDA_LINK=1: every stream shares one link, so copies of
 * several streams take turns instead of running side by side.
 */
static struct fake_obj link_obj;
static int link_shared = -1;
static int no_data;

/* The bytes of a copy, unless FAKE_CUDA_NO_DATA=1 (timing only). */
static void data_copy(void *dst, const void *src, size_t n)
{
	if (!__atomic_load_n(&no_data, __ATOMIC_RELAXED))
		memmove(dst, src, n);
}

static void model_env(void)
{
	const char *r = getenv("FAKE_CUDA_RATE_PS");
	const char *l = getenv("FAKE_CUDA_LINK");
	const char *nd = getenv("FAKE_CUDA_NO_DATA");

	if (r)
		__atomic_store_n(&rate_ps, atol(r), __ATOMIC_RELAXED);
	__atomic_store_n(&no_data, nd && !strcmp(nd, "1"), __ATOMIC_RELAXED);
	__atomic_store_n(&link_shared, l && !strcmp(l, "1"), __ATOMIC_RELAXED);
}

static void model_copy(cudaStream_t s, size_t n)
{
	struct fake_obj *o = (struct fake_obj *)s;
	long ps = __atomic_load_n(&rate_ps, __ATOMIC_RELAXED);
	uint64_t now, end, max;

	if (ps <= 0 || !o)
		return;
	if (__atomic_load_n(&link_shared, __ATOMIC_RELAXED) == 1) {
		/* The stream's work ends when the link is done with it. */
		static pthread_mutex_t link_lock = PTHREAD_MUTEX_INITIALIZER;

		pthread_mutex_lock(&link_lock);
		now = mono_ns();
		end = __atomic_load_n(&link_obj.end, __ATOMIC_RELAXED);
		if (obj_end_raw(o) > end)
			end = obj_end_raw(o);
		end = (end > now ? end : now) +
		      (uint64_t)((double)n * (double)ps / 1000.0);
		__atomic_store_n(&link_obj.end, end, __ATOMIC_RELAXED);
		__atomic_store_n(&o->end, end, __ATOMIC_RELAXED);
		pthread_mutex_unlock(&link_lock);
		goto busy;
	}
	now = mono_ns();
	end = __atomic_load_n(&o->end, __ATOMIC_RELAXED);
	end = (end > now ? end : now) + (uint64_t)((double)n * (double)ps / 1000.0);
	__atomic_store_n(&o->end, end, __ATOMIC_RELAXED);
busy:
	max = __atomic_load_n(&busy_max, __ATOMIC_RELAXED);
	while (max < end &&
	       !__atomic_compare_exchange_n(&busy_max, &max, end, false,
					    __ATOMIC_RELEASE, __ATOMIC_RELAXED))
		;
}

static pid_t init_pid;
static __thread int cur_dev;

static int ndevices(void)
{
	const char *v = getenv("FAKE_CUDA_DEVICES");
	int n = v ? atoi(v) : 1;

	return n >= 1 && n <= 64 ? n : 1;
}

cudaError_t cudaGetDeviceCount(int *n)
{
	pid_t self = getpid(), was = 0;

	if (!__atomic_compare_exchange_n(&init_pid, &was, self, false,
					 __ATOMIC_RELAXED, __ATOMIC_RELAXED) &&
	    was != self)
		return cudaErrorInitializationError;
	*n = ndevices();
	if (__atomic_load_n(&link_shared, __ATOMIC_RELAXED) < 0)
		model_env();
	return cudaSuccess;
}

cudaError_t cudaSetDevice(int d)
{
	call(C_SETDEV);
	if (d < 0 || d >= ndevices())
		return cudaErrorInvalidDevice;
	cur_dev = d;
	return cudaSuccess;
}

cudaError_t cudaGetDevice(int *d) { call(C_GETDEV); *d = cur_dev; return cudaSuccess; }

cudaError_t cudaDeviceCanAccessPeer(int *can, int d, int peer)
{
	const char *v = getenv("FAKE_CUDA_PEER");

	if (d < 0 || d >= ndevices() || peer < 0 || peer >= ndevices())
		return cudaErrorInvalidDevice;
	*can = d != peer && !(v && !strcmp(v, "0"));
	return cudaSuccess;
}

cudaError_t cudaDeviceEnablePeerAccess(int peer, unsigned int flags)
{
	int can = 0;

	if (flags)
		return cudaErrorInvalidValue;
	if (cudaDeviceCanAccessPeer(&can, cur_dev, peer) != cudaSuccess || !can)
		return cudaErrorInvalidDevice;
	return cudaSuccess;
}
cudaError_t cudaRuntimeGetVersion(int *v) { *v = 13000; return cudaSuccess; }
cudaError_t cudaGetLastError(void) { return cudaSuccess; }
const char *cudaGetErrorName(cudaError_t e) { return e == cudaErrorMemoryAllocation ? "cudaErrorMemoryAllocation" : "cudaErrorFake"; }
const char *cudaGetErrorString(cudaError_t e) { (void)e; return "fake error"; }

/*
 * "Device memory" of FAKE_TOTAL_MEM bytes: each allocation carries its
 * size in front, so cudaMemGetInfo reports what is really outstanding.
 */
#define FAKE_TOTAL_MEM	((size_t)80 << 30)
/* cudaMalloc's pointers are aligned to 256 bytes at least: so are ours. */
#define FAKE_HDR	((size_t)256)
static size_t fake_allocated;

cudaError_t cudaMalloc(void **p, size_t n)
{
	size_t *b;

	if (n > ((size_t)1 << 40))
		return cudaErrorMemoryAllocation;
	b = aligned_alloc(FAKE_HDR,
			  FAKE_HDR + ((n + FAKE_HDR - 1) & ~(FAKE_HDR - 1)));
	if (!b)
		return cudaErrorMemoryAllocation;
	memset(b, 0, FAKE_HDR + n);
	b[0] = n;
	b[1] = (size_t)cur_dev;
	__atomic_add_fetch(&fake_allocated, n, __ATOMIC_RELAXED);
	*p = (char *)b + FAKE_HDR;
	return cudaSuccess;
}

cudaError_t cudaFree(void *p)
{
	size_t *b;

	if (!p)
		return cudaSuccess;
	b = (size_t *)((char *)p - FAKE_HDR);
	__atomic_sub_fetch(&fake_allocated, b[0], __ATOMIC_RELAXED);
	free(b);
	return cudaSuccess;
}

cudaError_t cudaMemGetInfo(size_t *free_bytes, size_t *total)
{
	*total = FAKE_TOTAL_MEM;
	*free_bytes = FAKE_TOTAL_MEM -
		      __atomic_load_n(&fake_allocated, __ATOMIC_RELAXED);
	return cudaSuccess;
}

cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *prop, int d)
{
	if (d < 0 || d >= ndevices())
		return cudaErrorInvalidDevice;
	memset(prop, 0, sizeof(*prop));
	strcpy(prop->name, "Fake CUDA Device");
	prop->totalGlobalMem = FAKE_TOTAL_MEM;
	prop->asyncEngineCount = 3;
	return cudaSuccess;
}

cudaError_t cudaMemset(void *p, int v, size_t n) { memset(p, v, n); return cudaSuccess; }
/*
 * Registrations are counted, for tests that check what libaccel
 * cudaHostRegisters (dlsym fake_cuda_host_registrations), and the ranges
 * kept with their flags: fake_cuda_registered(p) gives the flags of the
 * live registration holding @p (-1: none), and fake_cuda_watch(p, n)
 * makes the copy calls count the copies whose source lies in [p, p + n),
 * read back by fake_cuda_watched(): how many cudaMemcpyAsync, how many
 * batch items, and how many of them had a source no live registration
 * holds (what CUDA stages through its own buffer).
 */
static atomic_long host_registers, host_registered;

#define FAKE_MAX_REGS	1024
static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static struct fake_reg {
	uintptr_t base;
	size_t len;
	unsigned int flags;
} regs[FAKE_MAX_REGS];
static unsigned int nregs;
static uintptr_t watch_base;
static size_t watch_len;
static long watch_single, watch_batch, watch_unpinned;

long fake_cuda_host_registrations(long *live);
long fake_cuda_host_registrations(long *live)
{
	if (live)
		*live = atomic_load(&host_registered);
	return atomic_load(&host_registers);
}

static int reg_flags_locked(uintptr_t p, size_t n)
{
	unsigned int i;

	for (i = 0; i < nregs; i++)
		if (p >= regs[i].base && n <= regs[i].len &&
		    p - regs[i].base <= regs[i].len - n)
			return (int)regs[i].flags;
	return -1;
}

int fake_cuda_registered(const void *p);
int fake_cuda_registered(const void *p)
{
	int f;

	pthread_mutex_lock(&reg_lock);
	f = reg_flags_locked((uintptr_t)p, 1);
	pthread_mutex_unlock(&reg_lock);
	return f;
}

void fake_cuda_watch(const void *p, size_t n);
void fake_cuda_watch(const void *p, size_t n)
{
	pthread_mutex_lock(&reg_lock);
	watch_base = (uintptr_t)p;
	watch_len = n;
	watch_single = watch_batch = watch_unpinned = 0;
	pthread_mutex_unlock(&reg_lock);
}

long fake_cuda_watched(long *batched, long *unpinned);
long fake_cuda_watched(long *batched, long *unpinned)
{
	long n;

	pthread_mutex_lock(&reg_lock);
	n = watch_single;
	*batched = watch_batch;
	*unpinned = watch_unpinned;
	pthread_mutex_unlock(&reg_lock);
	return n;
}

static void watch_copy(const void *src, size_t n, bool batch)
{
	uintptr_t p = (uintptr_t)src;

	pthread_mutex_lock(&reg_lock);
	if (watch_len && p >= watch_base && p - watch_base < watch_len) {
		if (batch)
			watch_batch++;
		else
			watch_single++;
		if (reg_flags_locked(p, n) < 0)
			watch_unpinned++;
	}
	pthread_mutex_unlock(&reg_lock);
}

/*
 * cudaHostRegister pins the range as the driver's pin_user_pages() does:
 * every page faulted in, for writing unless cudaHostRegisterReadOnly, and
 * a range it cannot fault in fails with cudaErrorInvalidValue,
 * registering nothing. fake_cuda_host_register_fail(e) makes the later
 * calls fail with @e instead (cudaSuccess: as before), as CUDA does for a
 * range that shares a page with a registered one.
 */
#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ	22
#define MADV_POPULATE_WRITE	23
#endif

static _Atomic int host_register_fail;

void fake_cuda_host_register_fail(int e);
void fake_cuda_host_register_fail(int e)
{
	atomic_store(&host_register_fail, e);
}

static bool host_fault_in(void *p, size_t n, bool write)
{
	uintptr_t ps = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t start = (uintptr_t)p & ~(ps - 1);
	uintptr_t end = ((uintptr_t)p + n + ps - 1) & ~(ps - 1);

	while (madvise((void *)start, end - start,
		       write ? MADV_POPULATE_WRITE : MADV_POPULATE_READ))
		if (errno != EINTR && errno != EAGAIN)
			return errno == EINVAL;	/* before Linux 5.14 */
	return true;
}

cudaError_t cudaHostRegister(void *p, size_t n, unsigned int f)
{
	int fail = atomic_load(&host_register_fail);

	if (fail)
		return (cudaError_t)fail;
	if (!host_fault_in(p, n, !(f & cudaHostRegisterReadOnly)))
		return cudaErrorInvalidValue;
	atomic_fetch_add(&host_registers, 1);
	atomic_fetch_add(&host_registered, 1);
	pthread_mutex_lock(&reg_lock);
	if (nregs < FAKE_MAX_REGS)
		regs[nregs++] = (struct fake_reg){ (uintptr_t)p, n, f };
	pthread_mutex_unlock(&reg_lock);
	return cudaSuccess;
}

cudaError_t cudaHostUnregister(void *p)
{
	unsigned int i;

	atomic_fetch_sub(&host_registered, 1);
	pthread_mutex_lock(&reg_lock);
	for (i = 0; i < nregs; i++)
		if (regs[i].base == (uintptr_t)p) {
			regs[i] = regs[--nregs];
			break;
		}
	pthread_mutex_unlock(&reg_lock);
	return cudaSuccess;
}

/*
 * CUDA's range on current GPUs, 0 to -5; FAKE_CUDA_PRIO_GREATEST=N makes
 * it 0 to N, so that a test sees libaccel map its own range onto another.
 */
cudaError_t cudaDeviceGetStreamPriorityRange(int *least, int *greatest)
{
	const char *g = getenv("FAKE_CUDA_PRIO_GREATEST");

	*least = 0;
	*greatest = g ? atoi(g) : -5;
	return cudaSuccess;
}

/* The priority of the last stream created, for the tests. */
static atomic_int last_priority = 1;
int fake_cuda_last_priority(void);
int fake_cuda_last_priority(void)
{
	return atomic_load(&last_priority);
}

cudaError_t cudaStreamCreateWithPriority(cudaStream_t *s, unsigned int f, int p)
{
	(void)f;
	atomic_store(&last_priority, p);
	*s = calloc(1, sizeof(struct fake_obj));
	return *s ? cudaSuccess : cudaErrorMemoryAllocation;
}

cudaError_t cudaStreamDestroy(cudaStream_t s) { free(s); return cudaSuccess; }

cudaError_t cudaEventCreateWithFlags(cudaEvent_t *e, unsigned int f)
{
	(void)f;
	call(C_EVCREATE);
	*e = calloc(1, sizeof(struct fake_obj));
	return *e ? cudaSuccess : cudaErrorMemoryAllocation;
}

cudaError_t cudaEventDestroy(cudaEvent_t e) { free(e); return cudaSuccess; }
static uint64_t obj_end(const void *o)
{
	return __atomic_load_n(&((const struct fake_obj *)o)->end, __ATOMIC_RELAXED);
}

cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s)
{
	call(C_REC);
	__atomic_store_n(&((struct fake_obj *)e)->end, s ? obj_end(s) : 0,
			 __ATOMIC_RELAXED);
	return cudaSuccess;
}

cudaError_t cudaEventQuery(cudaEvent_t e)
{
	call(C_QUERY);
	return obj_end(e) > mono_ns() ? cudaErrorNotReady : cudaSuccess;
}

cudaError_t cudaEventSynchronize(cudaEvent_t e)
{
	uint64_t end = obj_end(e);

	call(C_SYNC);
	if (end > mono_ns()) {
		struct timespec ts = {
			.tv_sec = (time_t)(end / 1000000000ULL),
			.tv_nsec = (long)(end % 1000000000ULL),
		};

		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
	}
	return cudaSuccess;
}

cudaError_t cudaStreamWaitEvent(cudaStream_t s, cudaEvent_t e, unsigned int f)
{
	struct fake_obj *o = (struct fake_obj *)s;

	call(C_WAIT);
	(void)f;
	if (obj_end(e) > obj_end(o))
		__atomic_store_n(&o->end, obj_end(e), __ATOMIC_RELAXED);
	return cudaSuccess;
}

cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t n,
			    enum cudaMemcpyKind k, cudaStream_t s)
{
	(void)k;
	call(C_COPY);
	if (copy_gate(&dst, 1))
		return cudaErrorInvalidValue;
	watch_copy(src, n, false);
	data_copy(dst, src, n);
	model_copy(s, n);
	return cudaSuccess;
}

cudaError_t cudaMemcpyPeerAsync(void *dst, int dst_dev, const void *src,
				int src_dev, size_t n, cudaStream_t s)
{
	(void)s;
	call(C_COPY);
	if (dst_dev < 0 || dst_dev >= ndevices() || src_dev < 0 ||
	    src_dev >= ndevices())
		return cudaErrorInvalidDevice;
	memmove(dst, src, n);
	return cudaSuccess;
}

cudaError_t cudaMemcpyBatchAsync(void *const *dsts, const void *const *srcs,
				 const size_t *sizes, size_t count,
				 struct cudaMemcpyAttributes *attrs,
				 size_t *idx, size_t nattrs, cudaStream_t s)
{
	const char *b = getenv("FAKE_CUDA_BATCH");
	size_t i;

	(void)idx;
	call(C_BATCH);
	__atomic_add_fetch(&counts[C_BATCH_ITEMS], count, __ATOMIC_RELAXED);
	if (b && !strcmp(b, "0"))
		return cudaErrorNotSupported;
	if (!nattrs || attrs[0].srcAccessOrder != cudaMemcpySrcAccessOrderStream)
		return cudaErrorInvalidValue;
	if (copy_gate(dsts, count))
		return cudaErrorInvalidValue;
	/* Copies of a batch have no order: run them backwards to show it. */
	for (i = count; i-- > 0; ) {
		watch_copy(srcs[i], sizes[i], true);
		data_copy(dsts[i], srcs[i], sizes[i]);
		model_copy(s, sizes[i]);
	}
	__atomic_add_fetch(&batch_calls, 1, __ATOMIC_RELAXED);
	return cudaSuccess;
}

/* Mapped pinned memory: plain memory, its device address its own. */
cudaError_t cudaHostAlloc(void **p, size_t n, unsigned int f)
{
	(void)f;
	*p = calloc(1, n ? n : 1);
	return *p ? cudaSuccess : cudaErrorMemoryAllocation;
}

cudaError_t cudaFreeHost(void *p) { free(p); return cudaSuccess; }

cudaError_t cudaHostGetDevicePointer(void **d, void *h, unsigned int f)
{
	(void)f;
	*d = h;
	return cudaSuccess;
}

/* The driver's cuStreamWriteValue32: the word is written at once. */
static int fake_write_value32(void *stream, unsigned long long addr,
			      unsigned int value, unsigned int flags)
{
	(void)stream; (void)flags;
	call(C_WRITE);
	__atomic_store_n((unsigned int *)(uintptr_t)addr, value,
			 __ATOMIC_RELEASE);
	return 0;
}

/* The driver's cuStreamBatchMemOp, writes only: done at once. */
static CUresult fake_batch_memop(CUstream stream, unsigned int n,
				 CUstreamBatchMemOpParams *ops,
				 unsigned int flags)
{
	unsigned int i;

	(void)stream;
	call(C_MEMOP);
	if (flags || !n)
		return CUDA_ERROR_INVALID_VALUE;
	for (i = 0; i < n; i++) {
		CUdeviceptr a = ops[i].writeValue.address;

		if (ops[i].operation == CU_STREAM_MEM_OP_WRITE_VALUE_64 && !(a % 8))
			memcpy((void *)(uintptr_t)a, &ops[i].writeValue.value64, 8);
		else if (ops[i].operation == CU_STREAM_MEM_OP_WRITE_VALUE_32 &&
			 !(a % 4))
			memcpy((void *)(uintptr_t)a, &ops[i].writeValue.value, 4);
		else
			return CUDA_ERROR_INVALID_VALUE;
	}
	return CUDA_SUCCESS;
}

cudaError_t cudaMemsetAsync(void *p, int v, size_t n, cudaStream_t s)
{
	(void)s;
	call(C_MEMSET);
	memset(p, v, n);
	return cudaSuccess;
}

/* @n copies of the @width bytes at @v from @p, which @width must align. */
static CUresult fake_fill(CUdeviceptr p, const void *v, size_t width, size_t n)
{
	unsigned char *b = (unsigned char *)(uintptr_t)p;
	size_t i;

	if (p & (width - 1))
		return CUDA_ERROR_INVALID_VALUE;
	for (i = 0; i < n; i++)
		memcpy(b + width * i, v, width);
	return CUDA_SUCCESS;
}

/* The driver's fills, as cudaGetDriverEntryPointByVersion hands them out. */
static CUresult fake_memset_d16(CUdeviceptr p, unsigned short v, size_t n,
				CUstream s)
{
	(void)s;
	call(C_MEMSET16);
	return fake_fill(p, &v, 2, n);
}

static CUresult fake_memset_d32(CUdeviceptr p, unsigned int v, size_t n,
				CUstream s)
{
	(void)s;
	call(C_MEMSET32);
	return fake_fill(p, &v, 4, n);
}

/*
 * FAKE_CUDA_DRIVER_FILLS=0: a runtime that gives out no driver fills;
 * FAKE_CUDA_NO_WRITE=1: none that writes memory (cuStreamWriteValue32,
 * cuStreamBatchMemOp).
 */
cudaError_t cudaGetDriverEntryPointByVersion(const char *sym, void **fn,
					     unsigned int ver,
					     unsigned long long flags,
					     enum cudaDriverEntryPointQueryResult *q)
{
	const char *off = getenv("FAKE_CUDA_DRIVER_FILLS");
	const char *nowrite = getenv("FAKE_CUDA_NO_WRITE");

	(void)ver; (void)flags;
	*fn = NULL;
	if (!strcmp(sym, "cuStreamWriteValue32") &&
	    !(nowrite && !strcmp(nowrite, "1")))
		*fn = (void *)fake_write_value32;
	if (!strcmp(sym, "cuStreamBatchMemOp") &&
	    !(nowrite && !strcmp(nowrite, "1")))
		*fn = (void *)fake_batch_memop;
	if (!(off && !strcmp(off, "0"))) {
		if (!strcmp(sym, "cuMemsetD16Async"))
			*fn = (void *)fake_memset_d16;
		else if (!strcmp(sym, "cuMemsetD32Async"))
			*fn = (void *)fake_memset_d32;
	}
	if (q)
		*q = *fn ? cudaDriverEntryPointSuccess :
			   cudaDriverEntryPointSymbolNotFound;
	return *fn ? cudaSuccess : cudaErrorSymbolNotFound;
}

cudaError_t cudaMemcpy2DAsync(void *dst, size_t dpitch, const void *src,
			      size_t spitch, size_t w, size_t h,
			      enum cudaMemcpyKind k, cudaStream_t s)
{
	size_t i;

	(void)k; (void)s;
	call(C_COPY2D);
	if (dpitch < w || spitch < w)
		return cudaErrorInvalidPitchValue;
	for (i = 0; i < h; i++)
		memmove((char *)dst + i * dpitch, (const char *)src + i * spitch,
			w);
	return cudaSuccess;
}
