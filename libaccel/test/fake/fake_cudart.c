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
 * As with CUDA, a child forked after the parent initialised the runtime
 * cannot use it: its cudaGetDeviceCount() fails with
 * cudaErrorInitializationError.
 */
#include <stdatomic.h>
#include <stdbool.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

static int batch_calls;

enum { C_COPY, C_BATCH, C_BATCH_ITEMS, C_REC, C_QUERY, C_SYNC, C_WAIT,
       C_GETDEV, C_SETDEV, C_EVCREATE, C_N };
static const char *const c_name[C_N] = {
	"cudaMemcpyAsync", "cudaMemcpyBatchAsync", "  (copies in batches)",
	"cudaEventRecord", "cudaEventQuery", "cudaEventSynchronize",
	"cudaStreamWaitEvent", "cudaGetDevice", "cudaSetDevice",
	"cudaEventCreateWithFlags",
};
static unsigned long counts[C_N];
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

static void call(int what)
{
	long ns = __atomic_load_n(&call_ns, __ATOMIC_RELAXED);

	__atomic_add_fetch(&counts[what], 1, __ATOMIC_RELAXED);
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

static pid_t init_pid;

cudaError_t cudaGetDeviceCount(int *n)
{
	pid_t self = getpid(), was = 0;

	if (!__atomic_compare_exchange_n(&init_pid, &was, self, false,
					 __ATOMIC_RELAXED, __ATOMIC_RELAXED) &&
	    was != self)
		return cudaErrorInitializationError;
	*n = 1;
	return cudaSuccess;
}
cudaError_t cudaSetDevice(int d) { call(C_SETDEV); return d ? cudaErrorInvalidDevice : cudaSuccess; }
cudaError_t cudaGetDevice(int *d) { call(C_GETDEV); *d = 0; return cudaSuccess; }
cudaError_t cudaRuntimeGetVersion(int *v) { *v = 13000; return cudaSuccess; }
cudaError_t cudaGetLastError(void) { return cudaSuccess; }
const char *cudaGetErrorName(cudaError_t e) { return e == cudaErrorMemoryAllocation ? "cudaErrorMemoryAllocation" : "cudaErrorFake"; }
const char *cudaGetErrorString(cudaError_t e) { (void)e; return "fake error"; }

/*
 * "Device memory" of FAKE_TOTAL_MEM bytes: each allocation carries its
 * size in front, so cudaMemGetInfo reports what is really outstanding.
 */
#define FAKE_TOTAL_MEM	((size_t)80 << 30)
#define FAKE_HDR	((size_t)64)
static size_t fake_allocated;

cudaError_t cudaMalloc(void **p, size_t n)
{
	size_t *b;

	if (n > ((size_t)1 << 40))
		return cudaErrorMemoryAllocation;
	b = calloc(1, FAKE_HDR + (n ? n : 1));
	if (!b)
		return cudaErrorMemoryAllocation;
	b[0] = n;
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
	if (d)
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
 * cudaHostRegisters (dlsym fake_cuda_host_registrations).
 */
static atomic_long host_registers, host_registered;

long fake_cuda_host_registrations(long *live);
long fake_cuda_host_registrations(long *live)
{
	if (live)
		*live = atomic_load(&host_registered);
	return atomic_load(&host_registers);
}

cudaError_t cudaHostRegister(void *p, size_t n, unsigned int f)
{
	(void)p; (void)n; (void)f;
	atomic_fetch_add(&host_registers, 1);
	atomic_fetch_add(&host_registered, 1);
	return cudaSuccess;
}

cudaError_t cudaHostUnregister(void *p)
{
	(void)p;
	atomic_fetch_sub(&host_registered, 1);
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
	*s = malloc(16);
	return *s ? cudaSuccess : cudaErrorMemoryAllocation;
}

cudaError_t cudaStreamDestroy(cudaStream_t s) { free(s); return cudaSuccess; }

cudaError_t cudaEventCreateWithFlags(cudaEvent_t *e, unsigned int f)
{
	(void)f;
	call(C_EVCREATE);
	*e = malloc(16);
	return *e ? cudaSuccess : cudaErrorMemoryAllocation;
}

cudaError_t cudaEventDestroy(cudaEvent_t e) { free(e); return cudaSuccess; }
cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s) { call(C_REC); (void)e; (void)s; return cudaSuccess; }
cudaError_t cudaEventQuery(cudaEvent_t e) { call(C_QUERY); (void)e; return cudaSuccess; }
cudaError_t cudaEventSynchronize(cudaEvent_t e) { call(C_SYNC); (void)e; return cudaSuccess; }
cudaError_t cudaStreamWaitEvent(cudaStream_t s, cudaEvent_t e, unsigned int f) { call(C_WAIT); (void)s; (void)e; (void)f; return cudaSuccess; }

cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t n,
			    enum cudaMemcpyKind k, cudaStream_t s)
{
	(void)k; (void)s;
	call(C_COPY);
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

	(void)s; (void)idx;
	call(C_BATCH);
	__atomic_add_fetch(&counts[C_BATCH_ITEMS], count, __ATOMIC_RELAXED);
	if (b && !strcmp(b, "0"))
		return cudaErrorNotSupported;
	if (!nattrs || attrs[0].srcAccessOrder != cudaMemcpySrcAccessOrderStream)
		return cudaErrorInvalidValue;
	/* Copies of a batch have no order: run them backwards to show it. */
	for (i = count; i-- > 0; )
		memmove(dsts[i], srcs[i], sizes[i]);
	__atomic_add_fetch(&batch_calls, 1, __ATOMIC_RELAXED);
	return cudaSuccess;
}
