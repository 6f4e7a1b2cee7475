/* SPDX-License-Identifier: MIT */
/*
 * libaccel/cuda_compat.h - the CUDA runtime's stream, event, copy and memory
 * calls, spelled the CUDA way on top of libaccel. A porting aid: a program
 * written against cuda_runtime.h builds with this include instead, and its
 * buffers get libaccel's lifetime promise. Include it instead of
 * cuda_runtime.h, never with it.
 *
 * Every function is static inline over the public libaccel API; nothing
 * here is part of libaccel's ABI. The mapping, and what differs from
 * CUDA, is in accel_compat(7). In short:
 *  - the first call that needs a context creates one (CUDA's primary
 *    context) if the process has none, once, however many threads make
 *    their first call at the same time;
 *  - stream 0 is the calling thread's default stream (cudaStreamPerThread
 *    semantics: it does not synchronize with other streams);
 *  - cudaMemcpy is cudaMemcpyAsync on that stream, then its synchronize;
 *    cudaMemset and cudaMemcpy2D likewise;
 *  - cudaMemcpy2DAsync with a pageable side copies row by row (libaccel's
 *    accel_memcpy_2d_async() refuses pageable memory);
 *  - cudaMemcpyAsync into pageable memory returns once the copy completed
 *    (as in CUDA), so that the destination may be read, or freed, at once;
 *  - errors map from libaccel's errno values (accel_cuda_error());
 *    cudaGetLastError reports the calling thread's last error of the
 *    calls made from this translation unit.
 */
#ifndef LIBACCEL_CUDA_COMPAT_H
#define LIBACCEL_CUDA_COMPAT_H

#if defined(__CUDA_RUNTIME_API_H__) || defined(__DRIVER_TYPES_H__)
#error "libaccel/cuda_compat.h replaces cuda_runtime.h: include one of them, not both"
#endif

#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "libaccel.h"
#include "compat_default.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ */
/* Types and constants (CUDA's values)                                */
/* ------------------------------------------------------------------ */

typedef enum cudaError {
	cudaSuccess = 0,
	cudaErrorInvalidValue = 1,
	cudaErrorMemoryAllocation = 2,
	cudaErrorInitializationError = 3,
	cudaErrorInvalidDevicePointer = 17,
	cudaErrorNoDevice = 100,
	cudaErrorInvalidDevice = 101,
	cudaErrorInvalidResourceHandle = 400,
	cudaErrorIllegalState = 401,
	cudaErrorNotReady = 600,
	cudaErrorIllegalAddress = 700,
	cudaErrorHostMemoryAlreadyRegistered = 712,
	cudaErrorHostMemoryNotRegistered = 713,
	cudaErrorLaunchFailure = 719,
	cudaErrorNotPermitted = 800,
	cudaErrorNotSupported = 801,
	cudaErrorTimeout = 909,
	cudaErrorUnknown = 999,
} cudaError_t;

typedef accel_stream_t cudaStream_t;
typedef accel_event_t cudaEvent_t;

enum cudaMemcpyKind {
	cudaMemcpyHostToHost = ACCEL_MEMCPY_H2H,
	cudaMemcpyHostToDevice = ACCEL_MEMCPY_H2D,
	cudaMemcpyDeviceToHost = ACCEL_MEMCPY_D2H,
	cudaMemcpyDeviceToDevice = ACCEL_MEMCPY_D2D,
	cudaMemcpyDefault = ACCEL_MEMCPY_DEFAULT,
};

#define cudaStreamDefault		0x00
#define cudaStreamNonBlocking		ACCEL_STREAM_NON_BLOCKING
#define cudaStreamPerThread		ACCEL_STREAM_DEFAULT

#define cudaEventDefault		0x00
/* Accepted: libaccel's waiters sleep in the transport. */
#define cudaEventBlockingSync		0x01
#define cudaEventDisableTiming		0x02

#define cudaHostAllocDefault		0x00
#define cudaHostAllocPortable		0x01
#define cudaHostRegisterDefault		0x00
#define cudaHostRegisterReadOnly	0x08

typedef void (*cudaHostFn_t)(void *userData);
typedef void (*cudaStreamCallback_t)(cudaStream_t stream, cudaError_t status,
				     void *userData);

/*
 * The device's default memory pool: the context's stream-ordered pool. A
 * cudaMemPool_t names the context (cudaDeviceGetDefaultMemPool); only the
 * attributes below are known.
 */
typedef accel_context *cudaMemPool_t;

enum cudaMemPoolAttr {
	cudaMemPoolAttrReleaseThreshold = 4,
	cudaMemPoolAttrReservedMemCurrent = 5,
	cudaMemPoolAttrUsedMemCurrent = 7,
};

/* The part of CUDA's cudaDeviceProp that libaccel can fill. */
struct cudaDeviceProp {
	char name[256];
	size_t totalGlobalMem;
	int asyncEngineCount;
};

/* ------------------------------------------------------------------ */
/* Errors                                                             */
/* ------------------------------------------------------------------ */

/* The calling thread's last error, for cudaGetLastError (per file). */
static __thread cudaError_t accel_cuda_last_error;

/* A libaccel return value as a CUDA error. */
static inline cudaError_t accel_cuda_error(int err)
{
	switch (err) {
	case 0:			return cudaSuccess;
	case -EINVAL:
	case -EFAULT:		return cudaErrorInvalidValue;
	case -ENOMEM:
	case -ENOSPC:		return cudaErrorMemoryAllocation;
	case -ENODEV:		return cudaErrorNoDevice;
	case -ENOENT:		return cudaErrorInvalidResourceHandle;
	case -EBUSY:		return cudaErrorIllegalState;
	case -EAGAIN:		return cudaErrorNotReady;
	case -EEXIST:		return cudaErrorHostMemoryAlreadyRegistered;
	case -EIO:		return cudaErrorLaunchFailure;
	case -ENOTRECOVERABLE:	return cudaErrorIllegalAddress;
	case -EDEADLK:
	case -EACCES:		return cudaErrorNotPermitted;
	case -EOPNOTSUPP:	return cudaErrorNotSupported;
	case -ETIME:		return cudaErrorTimeout;
	default:		return cudaErrorUnknown;
	}
}

static inline cudaError_t accel_cuda_ret(int err)
{
	cudaError_t e = accel_cuda_error(err);

	if (e != cudaSuccess)
		accel_cuda_last_error = e;
	return e;
}

/* Run a libaccel call; with no context yet, make the primary one. */
#define ACCEL_CUDA_CALL(call) do {					\
	int _r = (call);						\
	if (_r == -ENODEV && !accel_compat_default_context())		\
		_r = (call);						\
	return accel_cuda_ret(_r);					\
} while (0)

static inline const char *cudaGetErrorName(cudaError_t e)
{
	switch (e) {
	case cudaSuccess:			return "cudaSuccess";
	case cudaErrorInvalidValue:		return "cudaErrorInvalidValue";
	case cudaErrorMemoryAllocation:		return "cudaErrorMemoryAllocation";
	case cudaErrorInitializationError:	return "cudaErrorInitializationError";
	case cudaErrorInvalidDevicePointer:	return "cudaErrorInvalidDevicePointer";
	case cudaErrorNoDevice:			return "cudaErrorNoDevice";
	case cudaErrorInvalidDevice:		return "cudaErrorInvalidDevice";
	case cudaErrorInvalidResourceHandle:	return "cudaErrorInvalidResourceHandle";
	case cudaErrorIllegalState:		return "cudaErrorIllegalState";
	case cudaErrorNotReady:			return "cudaErrorNotReady";
	case cudaErrorIllegalAddress:		return "cudaErrorIllegalAddress";
	case cudaErrorHostMemoryAlreadyRegistered: return "cudaErrorHostMemoryAlreadyRegistered";
	case cudaErrorHostMemoryNotRegistered:	return "cudaErrorHostMemoryNotRegistered";
	case cudaErrorLaunchFailure:		return "cudaErrorLaunchFailure";
	case cudaErrorNotPermitted:		return "cudaErrorNotPermitted";
	case cudaErrorNotSupported:		return "cudaErrorNotSupported";
	case cudaErrorTimeout:			return "cudaErrorTimeout";
	default:				return "cudaErrorUnknown";
	}
}

static inline const char *cudaGetErrorString(cudaError_t e)
{
	switch (e) {
	case cudaSuccess:			return "no error";
	case cudaErrorInvalidValue:		return "invalid argument";
	case cudaErrorMemoryAllocation:		return "out of memory";
	case cudaErrorInitializationError:	return "initialization error";
	case cudaErrorInvalidDevicePointer:	return "invalid device pointer";
	case cudaErrorNoDevice:			return "no accelstream device or context";
	case cudaErrorInvalidDevice:		return "invalid device ordinal";
	case cudaErrorInvalidResourceHandle:	return "invalid resource handle";
	case cudaErrorIllegalState:		return "operation not permitted in this state (work still queued)";
	case cudaErrorNotReady:			return "device not ready";
	case cudaErrorIllegalAddress:		return "the context is lost";
	case cudaErrorHostMemoryAlreadyRegistered: return "part or all of the requested memory range is already mapped";
	case cudaErrorHostMemoryNotRegistered:	return "pointer does not correspond to a registered memory region";
	case cudaErrorLaunchFailure:		return "the stream failed";
	case cudaErrorNotPermitted:		return "operation not permitted";
	case cudaErrorNotSupported:		return "operation not supported";
	case cudaErrorTimeout:			return "timeout expired";
	default:				return "unknown error";
	}
}

static inline cudaError_t cudaGetLastError(void)
{
	cudaError_t e = accel_cuda_last_error;

	accel_cuda_last_error = cudaSuccess;
	return e;
}

static inline cudaError_t cudaPeekAtLastError(void)
{
	return accel_cuda_last_error;
}

/* ------------------------------------------------------------------ */
/* Devices                                                            */
/* ------------------------------------------------------------------ */

static inline cudaError_t cudaGetDeviceCount(int *count)
{
	ACCEL_CUDA_CALL(accel_device_get_count(NULL, count));
}

/* The current context's current device (accel_context_get_device()). */
static inline cudaError_t cudaGetDevice(int *device)
{
	ACCEL_CUDA_CALL(accel_context_get_device(NULL, device));
}

/* cudaSuccess when @device is the current context's (cudaGetDevice). */
static inline cudaError_t accel_cuda_device_is_current(int device)
{
	int cur;
	cudaError_t e = cudaGetDevice(&cur);

	if (e == cudaSuccess && device != cur)
		e = accel_cuda_last_error = cudaErrorInvalidDevice;
	return e;
}

/*
 * The current context's current device (accel_context_set_device()):
 * streams and device memory made from now on go there. The device is the
 * context's, shared by its threads, where CUDA's is per thread; the cuda
 * backend runs a context on one GPU and refuses any other.
 */
static inline cudaError_t cudaSetDevice(int device)
{
	int r = accel_compat_default_context();

	if (r)
		return accel_cuda_ret(r);
	r = accel_context_set_device(NULL, device);
	if (r == -ENODEV || r == -EOPNOTSUPP)
		return accel_cuda_last_error = cudaErrorInvalidDevice;
	return accel_cuda_ret(r);
}

static inline cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *prop,
						  int device)
{
	struct accel_device_prop p;
	unsigned int i;
	cudaError_t e;

	if (!prop)
		return accel_cuda_ret(-EINVAL);
	e = accel_cuda_device_is_current(device);
	if (e != cudaSuccess)
		return e;
	e = accel_cuda_ret(accel_device_get_properties(NULL, &p));
	if (e != cudaSuccess)
		return e;
	for (i = 0; i < sizeof(prop->name); i++)
		prop->name[i] = p.name[i];
	prop->totalGlobalMem = (size_t)p.total_mem;
	prop->asyncEngineCount = (int)p.copy_engines;
	return cudaSuccess;
}

static inline cudaError_t cudaMemGetInfo(size_t *free_bytes, size_t *total)
{
	ACCEL_CUDA_CALL(accel_mem_get_info(NULL, free_bytes, total));
}

static inline cudaError_t cudaDeviceSynchronize(void)
{
	ACCEL_CUDA_CALL(accel_context_synchronize(NULL,
						  ACCEL_TIMEOUT_INFINITE));
}

static inline cudaError_t cudaDeviceGetStreamPriorityRange(int *least,
							   int *greatest)
{
	ACCEL_CUDA_CALL(accel_stream_priority_range(NULL, least, greatest));
}

/* ------------------------------------------------------------------ */
/* Streams                                                            */
/* ------------------------------------------------------------------ */

static inline cudaError_t cudaStreamCreateWithPriority(cudaStream_t *stream,
						       unsigned int flags,
						       int priority)
{
	ACCEL_CUDA_CALL(accel_stream_create(NULL, flags, priority, stream));
}

static inline cudaError_t cudaStreamCreateWithFlags(cudaStream_t *stream,
						    unsigned int flags)
{
	int least = 0, greatest = 0;
	cudaError_t e = cudaDeviceGetStreamPriorityRange(&least, &greatest);

	if (e != cudaSuccess)
		return e;
	return cudaStreamCreateWithPriority(stream, flags, least);
}

static inline cudaError_t cudaStreamCreate(cudaStream_t *stream)
{
	return cudaStreamCreateWithFlags(stream, cudaStreamDefault);
}

static inline cudaError_t cudaStreamDestroy(cudaStream_t stream)
{
	return accel_cuda_ret(accel_stream_destroy(stream));
}

static inline cudaError_t cudaStreamSynchronize(cudaStream_t stream)
{
	ACCEL_CUDA_CALL(accel_stream_synchronize(stream,
						 ACCEL_TIMEOUT_INFINITE));
}

/* cudaErrorNotReady while work is pending, as CUDA (not recorded). */
static inline cudaError_t cudaStreamQuery(cudaStream_t stream)
{
	int r = accel_stream_query(stream);

	if (r == -EAGAIN)
		return cudaErrorNotReady;
	return accel_cuda_ret(r);
}

static inline cudaError_t cudaStreamWaitEvent(cudaStream_t stream,
					      cudaEvent_t event,
					      unsigned int flags)
{
	ACCEL_CUDA_CALL(accel_stream_wait_event(stream, event, flags));
}

static inline cudaError_t cudaStreamGetPriority(cudaStream_t stream,
						int *priority)
{
	return accel_cuda_ret(accel_stream_get_priority(stream, priority));
}

static inline cudaError_t cudaStreamGetFlags(cudaStream_t stream,
					     unsigned int *flags)
{
	return accel_cuda_ret(accel_stream_get_flags(stream, flags));
}

static inline cudaError_t cudaLaunchHostFunc(cudaStream_t stream,
					     cudaHostFn_t fn, void *userData)
{
	ACCEL_CUDA_CALL(accel_launch_host_func(stream, fn, userData));
}

/* cudaStreamAddCallback: the CUDA callback behind a libaccel one. */
struct accel_cuda_callback {
	cudaStreamCallback_t fn;
	void *arg;
};

static inline void accel_cuda_callback_run(accel_stream_t stream, int status,
					   void *arg)
{
	struct accel_cuda_callback cb = *(struct accel_cuda_callback *)arg;

	/* libaccel calls it exactly once, so it owns the wrapper. */
	free(arg);
	cb.fn(stream, accel_cuda_error(status), cb.arg);
}

static inline cudaError_t cudaStreamAddCallback(cudaStream_t stream,
						cudaStreamCallback_t fn,
						void *userData,
						unsigned int flags)
{
	struct accel_cuda_callback *cb;
	int r;

	if (!fn)
		return accel_cuda_ret(-EINVAL);
	cb = (struct accel_cuda_callback *)malloc(sizeof(*cb));
	if (!cb)
		return accel_cuda_ret(-ENOMEM);
	cb->fn = fn;
	cb->arg = userData;
	r = accel_stream_add_callback(stream, accel_cuda_callback_run, cb,
				      flags);
	if (r == -ENODEV && !accel_compat_default_context())
		r = accel_stream_add_callback(stream, accel_cuda_callback_run,
					      cb, flags);
	if (r)
		free(cb);
	return accel_cuda_ret(r);
}

/* ------------------------------------------------------------------ */
/* Events                                                             */
/* ------------------------------------------------------------------ */

static inline cudaError_t cudaEventCreateWithFlags(cudaEvent_t *event,
						   unsigned int flags)
{
	unsigned int f = 0;

	if (flags & ~(unsigned int)(cudaEventBlockingSync |
				    cudaEventDisableTiming))
		return accel_cuda_ret(-EINVAL);
	if (flags & cudaEventDisableTiming)
		f |= ACCEL_EVENT_DISABLE_TIMING;
	if (flags & cudaEventBlockingSync)
		f |= ACCEL_EVENT_BLOCKING_SYNC;
	ACCEL_CUDA_CALL(accel_event_create(NULL, f, event));
}

static inline cudaError_t cudaEventCreate(cudaEvent_t *event)
{
	return cudaEventCreateWithFlags(event, cudaEventDefault);
}

static inline cudaError_t cudaEventDestroy(cudaEvent_t event)
{
	return accel_cuda_ret(accel_event_destroy(event));
}

static inline cudaError_t cudaEventRecord(cudaEvent_t event,
					  cudaStream_t stream)
{
	ACCEL_CUDA_CALL(accel_event_record(event, stream));
}

static inline cudaError_t cudaEventQuery(cudaEvent_t event)
{
	int r = accel_event_query(event);

	if (r == -EAGAIN)
		return cudaErrorNotReady;
	return accel_cuda_ret(r);
}

static inline cudaError_t cudaEventSynchronize(cudaEvent_t event)
{
	return accel_cuda_ret(accel_event_synchronize(event,
						      ACCEL_TIMEOUT_INFINITE));
}

static inline cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start,
					       cudaEvent_t end)
{
	return accel_cuda_ret(accel_event_elapsed_time(ms, start, end));
}

/* ------------------------------------------------------------------ */
/* Memory and copies                                                  */
/* ------------------------------------------------------------------ */

static inline cudaError_t cudaMalloc(void **devPtr, size_t size)
{
	ACCEL_CUDA_CALL(accel_malloc(NULL, devPtr, size));
}

/* cudaFree(0), the usual way to make the context, makes it. */
static inline cudaError_t cudaFree(void *devPtr)
{
	if (!devPtr)
		return accel_cuda_ret(accel_compat_default_context());
	return accel_cuda_ret(accel_free(devPtr));
}

/* Stream-ordered allocation from the context's pool. */
static inline cudaError_t cudaMallocAsync(void **devPtr, size_t size,
					  cudaStream_t hStream)
{
	ACCEL_CUDA_CALL(accel_malloc_async(hStream, devPtr, size));
}

static inline cudaError_t cudaFreeAsync(void *devPtr, cudaStream_t hStream)
{
	ACCEL_CUDA_CALL(accel_free_async(hStream, devPtr));
}

/* The current context's pool; @device must be its (cudaGetDevice). */
static inline cudaError_t cudaDeviceGetDefaultMemPool(cudaMemPool_t *pool,
						      int device)
{
	accel_context *ctx = NULL;
	cudaError_t e;

	if (!pool)
		return accel_cuda_ret(-EINVAL);
	e = accel_cuda_device_is_current(device);
	if (e != cudaSuccess)
		return e;
	e = accel_cuda_ret(accel_context_get_current(&ctx));
	if (e == cudaSuccess)
		*pool = ctx;
	return e;
}

static inline cudaError_t cudaMemPoolSetAttribute(cudaMemPool_t pool,
						  enum cudaMemPoolAttr attr,
						  void *value)
{
	if (attr != cudaMemPoolAttrReleaseThreshold || !value)
		return accel_cuda_ret(-EINVAL);
	return accel_cuda_ret(accel_mem_pool_set_release_threshold(pool,
						*(uint64_t *)value));
}

static inline cudaError_t cudaMemPoolGetAttribute(cudaMemPool_t pool,
						  enum cudaMemPoolAttr attr,
						  void *value)
{
	size_t reserved, used;
	int r;

	if ((attr != cudaMemPoolAttrReservedMemCurrent &&
	     attr != cudaMemPoolAttrUsedMemCurrent) || !value)
		return accel_cuda_ret(-EINVAL);
	r = accel_mem_pool_get_usage(pool, &reserved, &used);
	if (!r)
		*(uint64_t *)value = attr == cudaMemPoolAttrUsedMemCurrent ?
				     used : reserved;
	return accel_cuda_ret(r);
}

static inline cudaError_t cudaMemPoolTrimTo(cudaMemPool_t pool,
					    size_t minBytesToKeep)
{
	return accel_cuda_ret(accel_mem_pool_trim_to(pool, minBytesToKeep));
}

static inline cudaError_t cudaHostAlloc(void **ptr, size_t size,
					unsigned int flags)
{
	if (flags & ~(unsigned int)cudaHostAllocPortable)
		return accel_cuda_ret(-EINVAL);
	ACCEL_CUDA_CALL(accel_host_alloc(NULL, ptr, size,
					 (flags & cudaHostAllocPortable) ?
					 ACCEL_HOST_ALLOC_PORTABLE : 0));
}

static inline cudaError_t cudaMallocHost(void **ptr, size_t size)
{
	return cudaHostAlloc(ptr, size, cudaHostAllocDefault);
}

static inline cudaError_t cudaFreeHost(void *ptr)
{
	return accel_cuda_ret(accel_host_free(ptr));
}

static inline cudaError_t cudaHostRegister(void *ptr, size_t size,
					   unsigned int flags)
{
	unsigned int f = 0;

	if (flags & ~(unsigned int)cudaHostRegisterReadOnly)
		return accel_cuda_ret(-EINVAL);
	if (flags & cudaHostRegisterReadOnly)
		f |= ACCEL_HOST_REGISTER_READONLY;
	ACCEL_CUDA_CALL(accel_host_register(NULL, ptr, size, f));
}

/* Stream-ordered: copies still queued keep the pages (libaccel). */
static inline cudaError_t cudaHostUnregister(void *ptr)
{
	return accel_cuda_ret(accel_host_unregister(ptr,
					ACCEL_HOST_UNREGISTER_DEFERRED));
}

/*
 * A copy into pageable memory is synchronous in CUDA: the call returns
 * once the bytes are in the destination, which may then be read or freed.
 * libaccel writes a staged destination when the copy completes, and says
 * it staged one in accel_last_error_string() ("the copy into ..."): then
 * wait for the stream here, as CUDA would have.
 */
static inline int accel_cuda_memcpy_async(void *dst, const void *src,
					  size_t count,
					  enum cudaMemcpyKind kind,
					  cudaStream_t stream)
{
	static const char staged_dst[] = "the copy into ";
	int r = accel_memcpy_async(stream, dst, src, count,
				   (enum accel_memcpy_kind)kind);

	if (!r && !strncmp(accel_last_error_string(), staged_dst,
			   sizeof(staged_dst) - 1))
		r = accel_stream_synchronize(stream, ACCEL_TIMEOUT_INFINITE);
	return r;
}

static inline cudaError_t cudaMemcpyAsync(void *dst, const void *src,
					  size_t count,
					  enum cudaMemcpyKind kind,
					  cudaStream_t stream)
{
	ACCEL_CUDA_CALL(accel_cuda_memcpy_async(dst, src, count, kind,
						stream));
}

static inline cudaError_t cudaMemcpy(void *dst, const void *src,
				     size_t count, enum cudaMemcpyKind kind)
{
	cudaError_t e = cudaMemcpyAsync(dst, src, count, kind,
					ACCEL_STREAM_DEFAULT);

	if (e != cudaSuccess)
		return e;
	return cudaStreamSynchronize(ACCEL_STREAM_DEFAULT);
}

static inline cudaError_t cudaMemsetAsync(void *devPtr, int value,
					  size_t count, cudaStream_t stream)
{
	ACCEL_CUDA_CALL(accel_memset_async(stream, devPtr, value, count));
}

static inline cudaError_t cudaMemset(void *devPtr, int value, size_t count)
{
	cudaError_t e = cudaMemsetAsync(devPtr, value, count,
					ACCEL_STREAM_DEFAULT);

	if (e != cudaSuccess)
		return e;
	return cudaStreamSynchronize(ACCEL_STREAM_DEFAULT);
}

/*
 * libaccel refuses a 2D copy with a pageable side (-EOPNOTSUPP); CUDA
 * copies it. Here such a copy goes row by row through
 * accel_cuda_memcpy_async() (pageable sources staged at once, as any
 * copy's): in order, but a failure part way leaves the rows before it
 * queued.
 */
static inline int accel_cuda_memcpy_2d_async(void *dst, size_t dpitch,
					     const void *src, size_t spitch,
					     size_t width, size_t height,
					     enum cudaMemcpyKind kind,
					     cudaStream_t stream)
{
	int r = accel_memcpy_2d_async(stream, dst, dpitch, src, spitch, width,
				      height, (enum accel_memcpy_kind)kind);
	size_t i;

	if (r != -EOPNOTSUPP)
		return r;
	for (i = 0, r = 0; i < height && !r; i++)
		r = accel_cuda_memcpy_async((char *)dst + i * dpitch,
					    (const char *)src + i * spitch,
					    width, kind, stream);
	return r;
}

static inline cudaError_t cudaMemcpy2DAsync(void *dst, size_t dpitch,
					    const void *src, size_t spitch,
					    size_t width, size_t height,
					    enum cudaMemcpyKind kind,
					    cudaStream_t stream)
{
	if (dpitch < width || spitch < width)
		return accel_cuda_ret(-EINVAL);
	ACCEL_CUDA_CALL(accel_cuda_memcpy_2d_async(dst, dpitch, src, spitch,
						   width, height, kind,
						   stream));
}

static inline cudaError_t cudaMemcpy2D(void *dst, size_t dpitch,
				       const void *src, size_t spitch,
				       size_t width, size_t height,
				       enum cudaMemcpyKind kind)
{
	cudaError_t e = cudaMemcpy2DAsync(dst, dpitch, src, spitch, width,
					  height, kind, ACCEL_STREAM_DEFAULT);

	if (e != cudaSuccess)
		return e;
	return cudaStreamSynchronize(ACCEL_STREAM_DEFAULT);
}

#undef ACCEL_CUDA_CALL

#ifdef __cplusplus
}

/* CUDA's C++ overloads: a typed pointer's address without a cast. */
template <class T>
static inline cudaError_t cudaMalloc(T **devPtr, size_t size)
{
	return cudaMalloc((void **)devPtr, size);
}

template <class T>
static inline cudaError_t cudaMallocAsync(T **devPtr, size_t size,
					  cudaStream_t hStream)
{
	return cudaMallocAsync((void **)devPtr, size, hStream);
}

template <class T>
static inline cudaError_t cudaMallocHost(T **ptr, size_t size)
{
	return cudaMallocHost((void **)ptr, size);
}

template <class T>
static inline cudaError_t cudaHostAlloc(T **ptr, size_t size,
					unsigned int flags)
{
	return cudaHostAlloc((void **)ptr, size, flags);
}
#endif

#endif /* LIBACCEL_CUDA_COMPAT_H */
