// SPDX-License-Identifier: MIT
/*
 * libaccel/cuda_compat.h and libaccel/acl_compat.h: the CUDA and AscendCL
 * spellings map onto libaccel with the right semantics and error codes
 * (not ready, timeouts, bad devices, stale handles, the primary context
 * made on first use, callbacks that learn the stream's status).
 */
#include <stdbool.h>

#include "helpers.h"
#include "libaccel/cuda_compat.h"
#include "libaccel/acl_compat.h"

/* Destroy the context the compat layer made on first use. */
static void drop_primary(void)
{
	accel_context *ctx;

	if (!accel_context_get_current(&ctx))
		accel_context_destroy(ctx);
}

static int cuda_primary_context_on_first_use(void)
{
	accel_context *ctx = NULL;
	void *d = NULL;

	CHECK_RET(accel_context_get_current(&ctx), -ENODEV);
	CHECK(cudaMalloc(&d, 64) == cudaSuccess);
	CHECK_OK(accel_context_get_current(&ctx));
	CHECK(cudaFree(d) == cudaSuccess);
	drop_primary();
	/* cudaFree(0), the usual way to start CUDA, makes it too. */
	CHECK(cudaFree(NULL) == cudaSuccess);
	CHECK_OK(accel_context_get_current(&ctx));
	drop_primary();
	return T_PASS;
}

/*
 * Threads whose first calls race make one primary context between them,
 * with cuda_compat.h and acl_compat.h alike.
 */
#define RACERS	8

struct racer {
	pthread_barrier_t *go;
	bool acl;
	accel_context *got;
	int ret;
};

static void *race_first_call(void *arg)
{
	struct racer *r = arg;
	void *d = NULL;

	pthread_barrier_wait(r->go);
	if (r->acl)
		r->ret = aclrtSetDevice(0) == ACL_SUCCESS &&
			 aclrtMalloc(&d, 64, ACL_MEM_MALLOC_HUGE_FIRST) ==
			 ACL_SUCCESS ? 0 : -1;
	else
		r->ret = cudaMalloc(&d, 64) == cudaSuccess ? 0 : -1;
	if (!r->ret)
		r->ret = accel_context_get_current(&r->got);
	if (d)
		accel_free(d);
	return NULL;
}

static int primary_made_once(bool acl)
{
	struct racer r[RACERS];
	pthread_barrier_t go;
	pthread_t th[RACERS];
	int round, i, j;

	for (round = 0; round < 20; round++) {
		int distinct = 0;

		pthread_barrier_init(&go, NULL, RACERS);
		for (i = 0; i < RACERS; i++) {
			r[i] = (struct racer){ .go = &go, .acl = acl };
			CHECK(pthread_create(&th[i], NULL, race_first_call,
					     &r[i]) == 0);
		}
		for (i = 0; i < RACERS; i++)
			pthread_join(th[i], NULL);
		pthread_barrier_destroy(&go);
		for (i = 0; i < RACERS; i++) {
			CHECK_OK(r[i].ret);
			for (j = 0; j < i && r[j].got != r[i].got; j++)
				;
			if (j == i) {
				distinct++;
				accel_context_destroy(r[i].got);
			}
		}
		CHECK_RET(distinct, 1);
	}
	return T_PASS;
}

static int cuda_primary_made_once_by_racing_threads(void)
{
	return primary_made_once(false);
}

static int acl_default_made_once_by_racing_threads(void)
{
	return primary_made_once(true);
}

/*
 * cudaMemcpyAsync into pageable memory returns once the bytes are there,
 * as in CUDA: the stream is gated, and the gate opens only once the call
 * returned (or after a second, which is what lets the call return).
 */
struct opener {
	accel_event_t gate;
	volatile int returned;
};

static void *open_gate_later(void *arg)
{
	struct opener *o = arg;
	int i;

	for (i = 0; i < 1000 && !o->returned; i++)
		usleep(1000);
	accel_event_signal(o->gate, 1, 0);
	return NULL;
}

/*
 * 4096 bytes from @src into the pageable @dst on the gated @s: the bytes,
 * t_fill(@seed), are there when cudaMemcpyAsync() returns.
 */
static int copy_done_on_return(cudaStream_t s, void *dst, const void *src,
			       enum cudaMemcpyKind kind, unsigned int seed)
{
	struct opener o = { 0 };
	pthread_t th;

	CHECK_OK(t_gate(s, &o.gate));
	CHECK(pthread_create(&th, NULL, open_gate_later, &o) == 0);
	CHECK(cudaMemcpyAsync(dst, src, 4096, kind, s) == cudaSuccess);
	o.returned = 1;
	CHECK(t_check_fill(dst, 4096, seed));
	pthread_join(th, NULL);
	return T_PASS;
}

static int cuda_memcpy_async_pageable_dst_done_on_return(void)
{
	accel_context *ctx = t_ctx();
	unsigned char *h, *dst, *src;
	cudaStream_t s;
	void *d;

	CHECK(ctx);
	CHECK(cudaStreamCreate(&s) == cudaSuccess);
	CHECK(cudaMalloc(&d, 4096) == cudaSuccess);
	CHECK(cudaMallocHost((void **)&h, 4096) == cudaSuccess);
	t_fill(h, 4096, 9);
	CHECK(cudaMemcpyAsync(d, h, 4096, cudaMemcpyHostToDevice, s) ==
	      cudaSuccess);
	dst = calloc(1, 4096);
	CHECK(dst);
	CHECK_OK(copy_done_on_return(s, dst, d, cudaMemcpyDeviceToHost, 9));
	free(dst);	/* at once, as a CUDA program may */
	CHECK(cudaStreamSynchronize(s) == cudaSuccess);

	/* Pageable to pageable (H2H) is as synchronous in CUDA. */
	src = malloc(4096);
	dst = calloc(1, 4096);
	CHECK(src && dst);
	t_fill(src, 4096, 11);
	CHECK_OK(copy_done_on_return(s, dst, src, cudaMemcpyHostToHost, 11));
	free(dst);
	free(src);
	CHECK(cudaStreamSynchronize(s) == cudaSuccess);
	CHECK(cudaStreamDestroy(s) == cudaSuccess);
	return T_PASS;
}

static int cuda_not_ready_and_errors(void)
{
	unsigned char *h, *out;
	cudaStream_t s;
	cudaEvent_t ev;
	accel_event_t gate;
	void *d;

	CHECK(t_ctx());
	CHECK(cudaStreamCreate(&s) == cudaSuccess);
	CHECK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming) ==
	      cudaSuccess);
	CHECK(cudaMallocHost((void **)&h, 4096) == cudaSuccess);
	CHECK(cudaMallocHost((void **)&out, 4096) == cudaSuccess);
	CHECK(cudaMalloc(&d, 4096) == cudaSuccess);
	t_fill(h, 4096, 5);
	CHECK_OK(t_gate(s, &gate));
	CHECK(cudaMemcpyAsync(d, h, 4096, cudaMemcpyHostToDevice, s) ==
	      cudaSuccess);
	CHECK(cudaMemcpyAsync(out, d, 4096, cudaMemcpyDefault, s) ==
	      cudaSuccess);
	CHECK(cudaEventRecord(ev, s) == cudaSuccess);
	CHECK(cudaStreamQuery(s) == cudaErrorNotReady);
	CHECK(cudaEventQuery(ev) == cudaErrorNotReady);
	CHECK(cudaGetLastError() == cudaSuccess);	/* not ready: no error */
	CHECK_OK(t_gate_open(gate));
	CHECK(cudaEventSynchronize(ev) == cudaSuccess);
	CHECK(cudaStreamSynchronize(s) == cudaSuccess);
	CHECK(t_check_fill(out, 4096, 5));
	CHECK(cudaDeviceSynchronize() == cudaSuccess);

	CHECK(cudaStreamDestroy(s) == cudaSuccess);
	CHECK(cudaStreamDestroy(s) == cudaErrorInvalidResourceHandle);
	CHECK(cudaPeekAtLastError() == cudaErrorInvalidResourceHandle);
	CHECK(cudaGetLastError() == cudaErrorInvalidResourceHandle);
	CHECK(cudaGetLastError() == cudaSuccess);
	CHECK(cudaHostAlloc((void **)&h, 64, 0x04) == cudaErrorInvalidValue);
	CHECK(!strcmp(cudaGetErrorName(cudaErrorNotReady), "cudaErrorNotReady"));
	return T_PASS;
}

static int cuda_memcpy_is_synchronous(void)
{
	unsigned char src[512], dst[512];
	void *d;

	CHECK(t_ctx());
	CHECK(cudaMalloc(&d, sizeof(src)) == cudaSuccess);
	t_fill(src, sizeof(src), 8);
	memset(dst, 0, sizeof(dst));
	/* Pageable both ways: returns once dst holds the data. */
	CHECK(cudaMemcpy(d, src, sizeof(src), cudaMemcpyHostToDevice) ==
	      cudaSuccess);
	CHECK(cudaMemcpy(dst, d, sizeof(dst), cudaMemcpyDeviceToHost) ==
	      cudaSuccess);
	CHECK(t_check_fill(dst, sizeof(dst), 8));
	return T_PASS;
}

static int cuda_device_queries(void)
{
	struct accel_device_prop ap;
	struct cudaDeviceProp p;
	int n = 0, dev = -1;

	CHECK(t_ctx());
	CHECK_OK(accel_device_get_properties(NULL, &ap));
	CHECK(cudaGetDeviceCount(&n) == cudaSuccess && n >= 1);
	CHECK(cudaGetDevice(&dev) == cudaSuccess && dev == ap.device);
	CHECK(cudaSetDevice(dev) == cudaSuccess);
	CHECK(cudaSetDevice(n) == cudaErrorInvalidDevice);
	CHECK(cudaGetDeviceProperties(&p, dev + 1) == cudaErrorInvalidDevice);
	CHECK(cudaGetDeviceProperties(&p, dev) == cudaSuccess);
	CHECK(!strcmp(p.name, ap.name));
	CHECK(p.totalGlobalMem == ap.total_mem);
	CHECK(p.asyncEngineCount == (int)ap.copy_engines);
	return T_PASS;
}

/* Stream-ordered allocation, spelled the CUDA way. */
static int cuda_malloc_async(void)
{
	unsigned char *h, *out;
	cudaMemPool_t pool;
	cudaStream_t s;
	uint64_t v = UINT64_MAX;
	void *d, *d2;
	int dev;

	CHECK(cudaGetDevice(&dev) == cudaSuccess);
	CHECK(cudaStreamCreate(&s) == cudaSuccess);
	CHECK(cudaMallocHost((void **)&h, 4096) == cudaSuccess);
	CHECK(cudaMallocHost((void **)&out, 4096) == cudaSuccess);
	CHECK(cudaDeviceGetDefaultMemPool(&pool, dev) == cudaSuccess);
	CHECK(cudaDeviceGetDefaultMemPool(&pool, dev + 1) ==
	      cudaErrorInvalidDevice);
	CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold,
				      &v) == cudaSuccess);
	CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrUsedMemCurrent,
				      &v) == cudaErrorInvalidValue);
	CHECK(cudaMallocAsync(&d, 4096, s) == cudaSuccess);
	CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent,
				      &v) == cudaSuccess && v == 4096);
	t_fill(h, 4096, 3);
	CHECK(cudaMemcpyAsync(d, h, 4096, cudaMemcpyHostToDevice, s) ==
	      cudaSuccess);
	CHECK(cudaMemcpyAsync(out, d, 4096, cudaMemcpyDeviceToHost, s) ==
	      cudaSuccess);
	CHECK(cudaFreeAsync(d, s) == cudaSuccess);
	CHECK(cudaFreeAsync(d, s) == cudaErrorInvalidResourceHandle);
	CHECK(cudaMemcpyAsync(out, d, 64, cudaMemcpyDeviceToHost, s) ==
	      cudaErrorInvalidValue);
	CHECK(cudaMallocAsync(&d2, 4096, s) == cudaSuccess && d2 == d);
	CHECK(cudaFreeAsync(d2, s) == cudaSuccess);
	CHECK(cudaStreamSynchronize(s) == cudaSuccess);
	CHECK(t_check_fill(out, 4096, 3));
	CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent,
				      &v) == cudaSuccess && v == (2U << 20));
	CHECK(cudaMemPoolTrimTo(pool, 0) == cudaSuccess);
	CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent,
				      &v) == cudaSuccess && v == 0);
	/* Stream 0: the thread's default stream, made with the context. */
	CHECK(cudaMallocAsync(&d, 64, 0) == cudaSuccess);
	CHECK(cudaFreeAsync(d, 0) == cudaSuccess);
	CHECK(cudaStreamDestroy(s) == cudaSuccess);
	drop_primary();
	return T_PASS;
}

struct cb_seen {
	volatile int calls;
	cudaError_t status;
	cudaStream_t stream;
};

static void cuda_cb(cudaStream_t stream, cudaError_t status, void *arg)
{
	struct cb_seen *s = arg;

	s->status = status;
	s->stream = stream;
	__atomic_add_fetch(&s->calls, 1, __ATOMIC_RELEASE);
}

static int cuda_stream_add_callback_status(void)
{
	struct cb_seen ok = { 0, cudaErrorUnknown, NULL };
	struct cb_seen bad = { 0, cudaSuccess, NULL };
	accel_event_t gate;
	cudaStream_t s;
	int i;

	CHECK(t_ctx());
	CHECK(cudaStreamCreate(&s) == cudaSuccess);
	CHECK(cudaStreamAddCallback(s, cuda_cb, &ok, 0) == cudaSuccess);
	CHECK(cudaStreamSynchronize(s) == cudaSuccess);
	CHECK_OK(t_gate(s, &gate));
	CHECK(cudaStreamAddCallback(s, cuda_cb, &bad, 0) == cudaSuccess);
	CHECK(cudaStreamAddCallback(s, cuda_cb, &bad, 1) ==
	      cudaErrorInvalidValue);
	CHECK_OK(accel_event_signal(gate, 0, ACCEL_EVENT_SIGNAL_ERROR));
	CHECK(cudaStreamSynchronize(s) == cudaErrorLaunchFailure);
	/* Bounded wait for the library thread (a hang guard only). */
	for (i = 0; i < 30000 && !__atomic_load_n(&bad.calls, __ATOMIC_ACQUIRE); i++)
		usleep(1000);
	CHECK(__atomic_load_n(&ok.calls, __ATOMIC_ACQUIRE) == 1);
	CHECK(ok.status == cudaSuccess && ok.stream == s);
	CHECK(bad.calls == 1);
	CHECK(bad.status == cudaErrorLaunchFailure && bad.stream == s);
	return T_PASS;
}

static int acl_contexts_and_errors(void)
{
	aclrtContext ctx = NULL, cur = NULL;
	uint32_t count = 0;
	aclrtStream s;

	CHECK(aclrtCreateStream(&s) == ACL_ERROR_UNINITIALIZE);
	/* Past the last device (ASC_MAX_DEVICES, 64, at most). */
	CHECK(aclrtCreateContext(&ctx, 64) == ACL_ERROR_INVALID_DEVICE);
	CHECK_RET(accel_context_get_current(&cur), -ENODEV);
	CHECK(aclrtCreateContext(&ctx, 0) == ACL_SUCCESS);
	CHECK(aclrtGetCurrentContext(&cur) == ACL_SUCCESS && cur == ctx);
	CHECK(aclrtGetDeviceCount(&count) == ACL_SUCCESS && count >= 1);
	CHECK(aclrtSetDevice((int32_t)count) == ACL_ERROR_INVALID_DEVICE);
	CHECK(aclrtSetDevice(0) == ACL_SUCCESS);
	CHECK(aclrtCreateStream(&s) == ACL_SUCCESS);
	CHECK(aclrtDestroyStream(s) == ACL_SUCCESS);
	CHECK(aclrtDestroyStream(s) == ACL_ERROR_INVALID_RESOURCE_HANDLE);
	CHECK(aclrtDestroyContext(ctx) == ACL_SUCCESS);
	CHECK(aclrtDestroyContext(ctx) == ACL_ERROR_INVALID_RESOURCE_HANDLE);
	return T_PASS;
}

static int acl_timeouts_and_status(void)
{
	aclrtEventRecordedStatus st = ACL_EVENT_RECORDED_STATUS_COMPLETE;
	unsigned char *h, *out;
	accel_event_t gate;
	aclrtEvent ev;
	aclrtStream s;
	void *d;

	CHECK(t_ctx());
	CHECK(aclrtCreateStream(&s) == ACL_SUCCESS);
	CHECK(aclrtCreateEvent(&ev) == ACL_SUCCESS);
	CHECK(aclrtMallocHost((void **)&h, 4096) == ACL_SUCCESS);
	CHECK(aclrtMallocHost((void **)&out, 4096) == ACL_SUCCESS);
	CHECK(aclrtMalloc(&d, 4096, ACL_MEM_MALLOC_HUGE_FIRST) == ACL_SUCCESS);
	t_fill(h, 4096, 6);
	/* count past destMax: refused, nothing queued. */
	CHECK(aclrtMemcpyAsync(d, 4095, h, 4096, ACL_MEMCPY_HOST_TO_DEVICE,
			       s) == ACL_ERROR_INVALID_PARAM);
	CHECK_OK(t_gate(s, &gate));
	CHECK(aclrtMemcpyAsync(d, 4096, h, 4096, ACL_MEMCPY_HOST_TO_DEVICE,
			       s) == ACL_SUCCESS);
	CHECK(aclrtMemcpyAsync(out, 4096, d, 4096, ACL_MEMCPY_DEVICE_TO_HOST,
			       s) == ACL_SUCCESS);
	CHECK(aclrtRecordEvent(ev, s) == ACL_SUCCESS);
	CHECK(aclrtQueryEventStatus(ev, &st) == ACL_SUCCESS);
	CHECK(st == ACL_EVENT_RECORDED_STATUS_NOT_READY);
	CHECK(aclrtSynchronizeStreamWithTimeout(s, 1) ==
	      ACL_ERROR_RT_STREAM_SYNC_TIMEOUT);
	CHECK(aclrtSynchronizeDeviceWithTimeout(1) ==
	      ACL_ERROR_RT_STREAM_SYNC_TIMEOUT);
	CHECK_OK(t_gate_open(gate));
	CHECK(aclrtSynchronizeEvent(ev) == ACL_SUCCESS);
	CHECK(aclrtQueryEventStatus(ev, &st) == ACL_SUCCESS);
	CHECK(st == ACL_EVENT_RECORDED_STATUS_COMPLETE);
	CHECK(aclrtSynchronizeStreamWithTimeout(s, -1) == ACL_SUCCESS);
	CHECK(aclrtSynchronizeDevice() == ACL_SUCCESS);
	CHECK(t_check_fill(out, 4096, 6));
	return T_PASS;
}

/*
 * cudaMemset and cudaMemcpy2D: exact bytes; a pageable side goes row by
 * row (libaccel alone refuses it), the gaps between rows untouched.
 */
static int cuda_memset_and_2d(void)
{
	unsigned char src[40 * 6], dst[48 * 6];
	size_t i;
	void *d;

	CHECK(t_ctx());
	CHECK(cudaMalloc(&d, 4096) == cudaSuccess);
	CHECK(cudaMemset(d, 0x5c, 4096) == cudaSuccess);
	t_fill(src, sizeof(src), 3);
	/* Pageable source, 6 rows of 32 bytes from pitch 40 to pitch 48. */
	CHECK(cudaMemcpy2D((char *)d + 16, 48, src, 40, 32, 6,
			   cudaMemcpyHostToDevice) == cudaSuccess);
	memset(dst, 0, sizeof(dst));
	CHECK(cudaMemcpy(dst, (char *)d + 16, sizeof(dst),
			 cudaMemcpyDeviceToHost) == cudaSuccess);
	for (i = 0; i < sizeof(dst); i++) {
		size_t r = i / 48, c = i % 48, j = r * 40 + c;

		if (c < 32)
			CHECK(dst[i] == (unsigned char)(3 * 131 + j * 7 + (j >> 8)));
		else
			CHECK(dst[i] == 0x5c);
	}
	CHECK(cudaMemcpy2DAsync(d, 8, src, 16, 9, 1, cudaMemcpyHostToDevice,
				0) == cudaErrorInvalidValue);
	CHECK(cudaMemsetAsync(src, 0, 8, 0) == cudaErrorNotSupported);
	return T_PASS;
}

static int acl_memset_and_2d(void)
{
	unsigned char *h = NULL, *out = NULL;
	void *d = NULL;
	size_t i;

	CHECK(aclrtSetDevice(0) == ACL_SUCCESS);
	CHECK(aclrtMalloc(&d, 4096, ACL_MEM_MALLOC_HUGE_FIRST) == ACL_SUCCESS);
	CHECK(aclrtMallocHost((void **)&h, 4096) == ACL_SUCCESS);
	CHECK(aclrtMallocHost((void **)&out, 4096) == ACL_SUCCESS);
	CHECK(aclrtMemset(d, 4096, 0x21, 4096) == ACL_SUCCESS);
	CHECK(aclrtMemset(d, 16, 0, 17) == ACL_ERROR_INVALID_PARAM);
	t_fill(h, 4096, 9);
	CHECK(aclrtMemcpy2d(d, 100, h, 64, 50, 10,
			    ACL_MEMCPY_HOST_TO_DEVICE) == ACL_SUCCESS);
	CHECK(aclrtMemcpy(out, 4096, d, 4096, ACL_MEMCPY_DEVICE_TO_HOST) ==
	      ACL_SUCCESS);
	for (i = 0; i < 4096; i++) {
		size_t r = i / 100, c = i % 100, j = r * 64 + c;

		if (r < 10 && c < 50)
			CHECK(out[i] == (unsigned char)(9 * 131 + j * 7 + (j >> 8)));
		else
			CHECK(out[i] == 0x21);
	}
	CHECK(aclrtFree(d) == ACL_SUCCESS);
	CHECK(aclrtFreeHost(h) == ACL_SUCCESS);
	CHECK(aclrtFreeHost(out) == ACL_SUCCESS);
	drop_primary();
	return T_PASS;
}

/*
 * The usual loop over the devices: cudaSetDevice(i) and aclrtSetDevice(i)
 * for every i below the count, each moving the current context to device
 * i (its new streams and memory go there); past the last or negative:
 * the invalid-device error, the device unchanged. Over inproc with three
 * devices (ACCEL_INPROC_DEVICES, unless set); the cuda backend runs a
 * context on one GPU and refuses the others.
 */
static int set_device_each(void)
{
	bool had = getenv("ACCEL_INPROC_DEVICES") != NULL;
	const char *backend = "";
	accel_context *ctx = NULL, *ac = NULL;
	int n = 0, i, dev = -1, first = -1, sd = -1;
	accel_stream_t as;
	cudaStream_t s;
	void *d;

	setenv("ACCEL_INPROC_DEVICES", "3", 0);
	CHECK_OK(accel_context_create(&ctx, 0));
	if (!had)
		unsetenv("ACCEL_INPROC_DEVICES");
	CHECK_OK(accel_context_set_current(ctx));
	CHECK_OK(accel_context_get_backend(ctx, &backend));
	CHECK(cudaGetDeviceCount(&n) == cudaSuccess && n >= 1);
	printf("# %d devices\n", n);
	CHECK(cudaGetDevice(&first) == cudaSuccess);
	for (i = 0; i < n; i++) {
		if (!strcmp(backend, "cuda") && i != first) {
			CHECK(cudaSetDevice(i) == cudaErrorInvalidDevice);
			CHECK(aclrtSetDevice(i) == ACL_ERROR_INVALID_DEVICE);
			continue;
		}
		CHECK(cudaSetDevice(i) == cudaSuccess);
		CHECK(cudaGetDevice(&dev) == cudaSuccess && dev == i);
		CHECK_OK(accel_context_get_device(ctx, &dev));
		CHECK_RET(dev, i);
		CHECK(cudaStreamCreate(&s) == cudaSuccess);
		CHECK_OK(accel_stream_get_device(s, &sd));
		CHECK_RET(sd, i);
		CHECK(cudaStreamDestroy(s) == cudaSuccess);
		CHECK(cudaMalloc(&d, 64) == cudaSuccess);
		CHECK(cudaFree(d) == cudaSuccess);
		CHECK(aclrtSetDevice(i) == ACL_SUCCESS);
		CHECK_OK(accel_context_get_device(ctx, &dev));
		CHECK_RET(dev, i);
	}
	CHECK(cudaSetDevice(n) == cudaErrorInvalidDevice);
	CHECK(cudaSetDevice(-1) == cudaErrorInvalidDevice);
	CHECK(aclrtSetDevice(n) == ACL_ERROR_INVALID_DEVICE);
	CHECK(aclrtSetDevice(-1) == ACL_ERROR_INVALID_DEVICE);
	CHECK(cudaGetDevice(&dev) == cudaSuccess);
	CHECK_RET(dev, strcmp(backend, "cuda") ? n - 1 : first);
	/* A context made on the last device, its streams there. */
	if (strcmp(backend, "cuda")) {
		setenv("ACCEL_INPROC_DEVICES", "3", 0);
		CHECK(aclrtCreateContext(&ac, n - 1) == ACL_SUCCESS);
		if (!had)
			unsetenv("ACCEL_INPROC_DEVICES");
		CHECK(aclrtCreateStream(&as) == ACL_SUCCESS);
		CHECK_OK(accel_stream_get_device(as, &sd));
		CHECK_RET(sd, n - 1);
		CHECK(aclrtDestroyStream(as) == ACL_SUCCESS);
		CHECK(aclrtDestroyContext(ac) == ACL_SUCCESS);
		CHECK(aclrtCreateContext(&ac, n) == ACL_ERROR_INVALID_DEVICE);
	}
	CHECK_OK(accel_context_destroy(ctx));
	return T_PASS;
}

T_MAIN(T(cuda_primary_context_on_first_use), T(cuda_not_ready_and_errors),
       T(cuda_memcpy_is_synchronous), T(cuda_device_queries),
       T(cuda_stream_add_callback_status), T(cuda_malloc_async),
       T(acl_contexts_and_errors),
       T(acl_timeouts_and_status),
       T(cuda_primary_made_once_by_racing_threads),
       T(acl_default_made_once_by_racing_threads),
       T(cuda_memcpy_async_pageable_dst_done_on_return),
       T(cuda_memset_and_2d), T(acl_memset_and_2d), T(set_device_each))
