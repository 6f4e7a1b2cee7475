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
 * nothing), and fake_cuda_fail_nth(n) the n-th copy call from now;
 * fake_cuda_hold_threads(1) makes cudaSetDevice block on entry in every
 * thread but the caller's until fake_cuda_hold_threads(0) (libaccel's
 * own threads, held at their start: a test sees what happens without
 * them), fake_cuda_threads_held() says how many are blocked.
 * cuStreamWriteValue32 is reached through cudaGetDriverEntryPointByVersion,
 * as on CUDA 12.5+; FAKE_CUDA_NO_WRITE=1 hides it. fake_cuda_rate(ps)
 * models a device that takes @ps picoseconds per byte copied: copies
 * still land at once, but each stream is busy until its modelled end, an
 * event recorded on it completes then (cudaEventQuery says
 * cudaErrorNotReady before, cudaEventSynchronize sleeps until then), a
 * host word written on it (cuStreamWriteValue32) is written then, in
 * stream order, by a thread of the stand-in (fake_cuda_late_writes()
 * says how many were written after their call returned), and
 * fake_cuda_busy() says whether any stream's modelled work is still
 * running (fake_cuda_busy_ns(): for how long), so that a test can tell a
 * completion reported early.
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
 *
 * This file has the devices, streams, events, copies and fills;
 * fake_control.c the call counters, the copy gate and the modelled device
 * (the fake_cuda_* hooks above but those of memory); fake_mem.c the
 * device memory, the host registrations and mapped pinned memory.
 */
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fake_cudart.h"

static int batch_calls;

static pid_t init_pid;
__thread int fake_cur_dev;

int fake_ndevices(void)
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
	*n = fake_ndevices();
	fake_model_env_once();
	return cudaSuccess;
}

cudaError_t cudaSetDevice(int d)
{
	fake_call(C_SETDEV);
	fake_thread_gate();
	if (d < 0 || d >= fake_ndevices())
		return cudaErrorInvalidDevice;
	fake_cur_dev = d;
	return cudaSuccess;
}

cudaError_t cudaGetDevice(int *d)
{
	fake_call(C_GETDEV);
	*d = fake_cur_dev;
	return cudaSuccess;
}

cudaError_t cudaDeviceCanAccessPeer(int *can, int d, int peer)
{
	const char *v = getenv("FAKE_CUDA_PEER");

	if (d < 0 || d >= fake_ndevices() || peer < 0 || peer >= fake_ndevices())
		return cudaErrorInvalidDevice;
	*can = d != peer && !(v && !strcmp(v, "0"));
	return cudaSuccess;
}

cudaError_t cudaDeviceEnablePeerAccess(int peer, unsigned int flags)
{
	int can = 0;

	if (flags)
		return cudaErrorInvalidValue;
	if (cudaDeviceCanAccessPeer(&can, fake_cur_dev, peer) != cudaSuccess ||
	    !can)
		return cudaErrorInvalidDevice;
	return cudaSuccess;
}
cudaError_t cudaRuntimeGetVersion(int *v) { *v = 13000; return cudaSuccess; }
cudaError_t cudaGetLastError(void) { return cudaSuccess; }
const char *cudaGetErrorName(cudaError_t e) { return e == cudaErrorMemoryAllocation ? "cudaErrorMemoryAllocation" : "cudaErrorFake"; }
const char *cudaGetErrorString(cudaError_t e) { (void)e; return "fake error"; }

cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *prop, int d)
{
	if (d < 0 || d >= fake_ndevices())
		return cudaErrorInvalidDevice;
	memset(prop, 0, sizeof(*prop));
	strcpy(prop->name, "Fake CUDA Device");
	prop->totalGlobalMem = FAKE_TOTAL_MEM;
	prop->asyncEngineCount = 3;
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
	fake_call(C_EVCREATE);
	*e = calloc(1, sizeof(struct fake_obj));
	return *e ? cudaSuccess : cudaErrorMemoryAllocation;
}

cudaError_t cudaEventDestroy(cudaEvent_t e) { free(e); return cudaSuccess; }

cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s)
{
	fake_call(C_REC);
	__atomic_store_n(&((struct fake_obj *)e)->end, s ? fake_obj_end(s) : 0,
			 __ATOMIC_RELAXED);
	return cudaSuccess;
}

cudaError_t cudaEventQuery(cudaEvent_t e)
{
	uint64_t now = fake_mono_ns();

	fake_call(C_QUERY);
	if (fake_obj_end(e) > now)
		return cudaErrorNotReady;
	/* Done: so is every write before it on its stream. */
	fake_writes_flush(now);
	return cudaSuccess;
}

cudaError_t cudaEventSynchronize(cudaEvent_t e)
{
	uint64_t end = fake_obj_end(e);

	fake_call(C_SYNC);
	if (end > fake_mono_ns()) {
		struct timespec ts = {
			.tv_sec = (time_t)(end / 1000000000ULL),
			.tv_nsec = (long)(end % 1000000000ULL),
		};

		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
	}
	fake_writes_flush(fake_mono_ns());
	return cudaSuccess;
}

cudaError_t cudaStreamWaitEvent(cudaStream_t s, cudaEvent_t e, unsigned int f)
{
	struct fake_obj *o = (struct fake_obj *)s;

	fake_call(C_WAIT);
	(void)f;
	if (fake_obj_end(e) > fake_obj_end(o))
		__atomic_store_n(&o->end, fake_obj_end(e), __ATOMIC_RELAXED);
	return cudaSuccess;
}

cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t n,
			    enum cudaMemcpyKind k, cudaStream_t s)
{
	(void)k;
	fake_call(C_COPY);
	if (fake_copy_gate(&dst, 1))
		return cudaErrorInvalidValue;
	fake_watch_copy(src, n, false);
	fake_data_copy(dst, src, n);
	fake_model_copy(s, n);
	return cudaSuccess;
}

cudaError_t cudaMemcpyPeerAsync(void *dst, int dst_dev, const void *src,
				int src_dev, size_t n, cudaStream_t s)
{
	(void)s;
	fake_call(C_COPY);
	if (dst_dev < 0 || dst_dev >= fake_ndevices() || src_dev < 0 ||
	    src_dev >= fake_ndevices())
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
	fake_call(C_BATCH);
	__atomic_add_fetch(&fake_counts[C_BATCH_ITEMS], count, __ATOMIC_RELAXED);
	if (b && !strcmp(b, "0"))
		return cudaErrorNotSupported;
	if (!nattrs || attrs[0].srcAccessOrder != cudaMemcpySrcAccessOrderStream)
		return cudaErrorInvalidValue;
	if (fake_copy_gate(dsts, count))
		return cudaErrorInvalidValue;
	/* Copies of a batch have no order: run them backwards to show it. */
	for (i = count; i-- > 0; ) {
		fake_watch_copy(srcs[i], sizes[i], true);
		fake_data_copy(dsts[i], srcs[i], sizes[i]);
		fake_model_copy(s, sizes[i]);
	}
	__atomic_add_fetch(&batch_calls, 1, __ATOMIC_RELAXED);
	return cudaSuccess;
}

/*
 * The driver's cuStreamWriteValue32: the word is written when the
 * modelled work before it on @stream is done (at once on an idle one).
 */
static int fake_write_value32(void *stream, unsigned long long addr,
			      unsigned int value, unsigned int flags)
{
	(void)flags;
	fake_call(C_WRITE);
	return fake_model_write32(stream, (uint32_t *)(uintptr_t)addr, value) ?
	       CUDA_ERROR_OUT_OF_MEMORY : CUDA_SUCCESS;
}

cudaError_t cudaMemsetAsync(void *p, int v, size_t n, cudaStream_t s)
{
	(void)s;
	fake_call(C_MEMSET);
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
	fake_call(C_MEMSET16);
	return fake_fill(p, &v, 2, n);
}

static CUresult fake_memset_d32(CUdeviceptr p, unsigned int v, size_t n,
				CUstream s)
{
	(void)s;
	fake_call(C_MEMSET32);
	return fake_fill(p, &v, 4, n);
}

/*
 * FAKE_CUDA_DRIVER_FILLS=0: a runtime that gives out no driver fills;
 * FAKE_CUDA_NO_WRITE=1: none that writes a host word.
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
	fake_call(C_COPY2D);
	if (dpitch < w || spitch < w)
		return cudaErrorInvalidPitchValue;
	for (i = 0; i < h; i++)
		memmove((char *)dst + i * dpitch, (const char *)src + i * spitch,
			w);
	return cudaSuccess;
}
