/* SPDX-License-Identifier: MIT */
/*
 * libaccel/acl_compat.h - AscendCL's runtime calls for contexts, streams,
 * events, copies and memory (aclrt*), spelled the AscendCL way on top of
 * libaccel. A porting aid: a program written against acl/acl.h builds
 * with this include instead, as long as it only uses these calls (no
 * models, no operators), and its buffers get libaccel's lifetime promise.
 *
 * Every function is static inline over the public libaccel API; nothing
 * here is part of libaccel's ABI. The mapping, and what differs from
 * AscendCL, is in accel_compat(7). In short:
 *  - aclrtSetDevice makes the process's default context if it has none
 *    (AscendCL's default context); aclrtCreateContext makes one and makes
 *    it the calling thread's current context, as AscendCL does;
 *  - a NULL stream is the calling thread's default stream;
 *  - aclrtLaunchCallback runs the callback on a library thread, always
 *    blocking the stream; there is no report to subscribe to or process;
 *  - errors map from libaccel's errno values (accel_acl_error()).
 */
#ifndef LIBACCEL_ACL_COMPAT_H
#define LIBACCEL_ACL_COMPAT_H

#if defined(INC_EXTERNAL_ACL_ACL_RT_H_) || defined(INC_EXTERNAL_ACL_ACL_BASE_H_)
#error "libaccel/acl_compat.h replaces acl/acl.h: include one of them, not both"
#endif

#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "libaccel.h"
#include "compat_default.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ */
/* Types and constants (AscendCL's values)                            */
/* ------------------------------------------------------------------ */

typedef int aclError;

#define ACL_SUCCESS				0
#define ACL_ERROR_NONE				0
#define ACL_ERROR_INVALID_PARAM			100000
#define ACL_ERROR_UNINITIALIZE			100001
#define ACL_ERROR_BAD_ALLOC			200000
#define ACL_ERROR_API_NOT_SUPPORT		200001
#define ACL_ERROR_INVALID_DEVICE		200002
#define ACL_ERROR_INVALID_RESOURCE_HANDLE	200005
#define ACL_ERROR_INTERNAL_ERROR		500000
#define ACL_ERROR_FAILURE			500001
#define ACL_ERROR_RT_FAILURE			500003
#define ACL_ERROR_RT_STREAM_SYNC_TIMEOUT	507046
#define ACL_ERROR_RT_EVENT_SYNC_TIMEOUT		507047

typedef accel_context *aclrtContext;
typedef accel_stream_t aclrtStream;
typedef accel_event_t aclrtEvent;

typedef enum aclrtMemcpyKind {
	ACL_MEMCPY_HOST_TO_HOST = ACCEL_MEMCPY_H2H,
	ACL_MEMCPY_HOST_TO_DEVICE = ACCEL_MEMCPY_H2D,
	ACL_MEMCPY_DEVICE_TO_HOST = ACCEL_MEMCPY_D2H,
	ACL_MEMCPY_DEVICE_TO_DEVICE = ACCEL_MEMCPY_D2D,
	ACL_MEMCPY_DEFAULT = ACCEL_MEMCPY_DEFAULT,
} aclrtMemcpyKind;

/* Placement hints: accepted, libaccel has one kind of device memory. */
typedef enum aclrtMemMallocPolicy {
	ACL_MEM_MALLOC_HUGE_FIRST = 0,
	ACL_MEM_MALLOC_HUGE_ONLY = 1,
	ACL_MEM_MALLOC_NORMAL_ONLY = 2,
} aclrtMemMallocPolicy;

typedef enum aclrtMemAttr {
	ACL_DDR_MEM = 0,
	ACL_HBM_MEM = 1,
} aclrtMemAttr;

typedef enum aclrtEventRecordedStatus {
	ACL_EVENT_RECORDED_STATUS_NOT_READY = 0,
	ACL_EVENT_RECORDED_STATUS_COMPLETE = 1,
} aclrtEventRecordedStatus;

typedef enum aclrtCallbackBlockType {
	ACL_CALLBACK_NO_BLOCK = 0,
	ACL_CALLBACK_BLOCK = 1,
} aclrtCallbackBlockType;

typedef void (*aclrtCallback)(void *userData);

/* ------------------------------------------------------------------ */
/* Errors                                                             */
/* ------------------------------------------------------------------ */

/* A libaccel return value as an AscendCL error. */
static inline aclError accel_acl_error(int err)
{
	switch (err) {
	case 0:			return ACL_SUCCESS;
	case -EINVAL:
	case -EFAULT:
	case -EEXIST:		return ACL_ERROR_INVALID_PARAM;
	case -ENOMEM:
	case -ENOSPC:		return ACL_ERROR_BAD_ALLOC;
	case -ENODEV:		return ACL_ERROR_UNINITIALIZE;
	case -ENOENT:		return ACL_ERROR_INVALID_RESOURCE_HANDLE;
	case -EOPNOTSUPP:	return ACL_ERROR_API_NOT_SUPPORT;
	case -EIO:
	case -ENOTRECOVERABLE:	return ACL_ERROR_RT_FAILURE;
	default:		return ACL_ERROR_FAILURE;
	}
}

/* 0 or a relative timeout in ns from AscendCL's milliseconds (-1: none). */
static inline uint64_t accel_acl_timeout(int32_t timeout_ms)
{
	if (timeout_ms < 0)
		return ACCEL_TIMEOUT_INFINITE;
	return (uint64_t)timeout_ms * 1000000ULL;
}

/* ------------------------------------------------------------------ */
/* Initialization, devices, contexts                                  */
/* ------------------------------------------------------------------ */

/* Nothing to configure: contexts open the transport when made. */
static inline aclError aclInit(const char *configPath)
{
	(void)configPath;
	return ACL_SUCCESS;
}

static inline aclError aclFinalize(void)
{
	return ACL_SUCCESS;
}

static inline aclError aclrtGetDeviceCount(uint32_t *count)
{
	int n = 0, r = accel_compat_default_context();

	if (!count)
		return ACL_ERROR_INVALID_PARAM;
	if (!r)
		r = accel_device_get_count(NULL, &n);
	if (!r)
		*count = (uint32_t)n;
	return accel_acl_error(r);
}

/*
 * The current context's current device (accel_context_set_device()),
 * making the default context if needed. The device is the context's,
 * shared by its threads; the cuda backend runs a context on one GPU and
 * refuses any other (aclrtCreateContext() makes one on another).
 */
static inline aclError aclrtSetDevice(int32_t deviceId)
{
	int r = accel_compat_default_context();

	if (r)
		return accel_acl_error(r);
	r = accel_context_set_device(NULL, deviceId);
	if (r == -ENODEV || r == -EOPNOTSUPP)
		return ACL_ERROR_INVALID_DEVICE;
	return accel_acl_error(r);
}

/* Waits for the device's work; contexts go with aclrtDestroyContext. */
static inline aclError aclrtResetDevice(int32_t deviceId)
{
	int r;

	(void)deviceId;
	r = accel_context_synchronize(NULL, ACCEL_TIMEOUT_INFINITE);
	return accel_acl_error(r == -ENODEV ? 0 : r);
}

static inline aclError aclrtCreateContext(aclrtContext *context,
					  int32_t deviceId)
{
	struct accel_device_prop p;
	int r;

	if (!context)
		return ACL_ERROR_INVALID_PARAM;
	r = accel_context_create(context, 0);
	if (r)
		return accel_acl_error(r);
	r = accel_device_get_properties(*context, &p);
	if (!r && p.device != deviceId)
		r = accel_context_set_device(*context, deviceId);
	if (r == -EOPNOTSUPP) {
		/* The cuda backend: a context of its own on that GPU. */
		accel_context_destroy(*context);
		r = accel_context_create_on_device(context, deviceId, 0);
		if (r == -ENODEV)
			return ACL_ERROR_INVALID_DEVICE;
		return accel_acl_error(r);
	}
	if (r) {
		accel_context_destroy(*context);
		return r == -ENODEV ? ACL_ERROR_INVALID_DEVICE :
		       accel_acl_error(r);
	}
	return ACL_SUCCESS;
}

static inline aclError aclrtDestroyContext(aclrtContext context)
{
	return accel_acl_error(accel_context_destroy(context));
}

static inline aclError aclrtSetCurrentContext(aclrtContext context)
{
	return accel_acl_error(accel_context_set_current(context));
}

static inline aclError aclrtGetCurrentContext(aclrtContext *context)
{
	return accel_acl_error(accel_context_get_current(context));
}

static inline aclError aclrtSynchronizeDevice(void)
{
	return accel_acl_error(accel_context_synchronize(NULL,
						ACCEL_TIMEOUT_INFINITE));
}

static inline aclError aclrtSynchronizeDeviceWithTimeout(int32_t timeout)
{
	int r = accel_context_synchronize(NULL, accel_acl_timeout(timeout));

	return r == -ETIME ? ACL_ERROR_RT_STREAM_SYNC_TIMEOUT :
	       accel_acl_error(r);
}

/* attr is accepted and ignored: one kind of device memory. */
static inline aclError aclrtGetMemInfo(aclrtMemAttr attr, size_t *free_bytes,
				       size_t *total)
{
	(void)attr;
	return accel_acl_error(accel_mem_get_info(NULL, free_bytes, total));
}

/* ------------------------------------------------------------------ */
/* Streams                                                            */
/* ------------------------------------------------------------------ */

static inline aclError aclrtCreateStream(aclrtStream *stream)
{
	int least = 0, greatest = 0;
	int r = accel_stream_priority_range(NULL, &least, &greatest);

	if (!r)
		r = accel_stream_create(NULL, 0, least, stream);
	return accel_acl_error(r);
}

static inline aclError aclrtDestroyStream(aclrtStream stream)
{
	return accel_acl_error(accel_stream_destroy(stream));
}

static inline aclError aclrtSynchronizeStream(aclrtStream stream)
{
	return accel_acl_error(accel_stream_synchronize(stream,
						ACCEL_TIMEOUT_INFINITE));
}

static inline aclError aclrtSynchronizeStreamWithTimeout(aclrtStream stream,
							 int32_t timeout)
{
	int r = accel_stream_synchronize(stream, accel_acl_timeout(timeout));

	return r == -ETIME ? ACL_ERROR_RT_STREAM_SYNC_TIMEOUT :
	       accel_acl_error(r);
}

static inline aclError aclrtStreamWaitEvent(aclrtStream stream,
					    aclrtEvent event)
{
	return accel_acl_error(accel_stream_wait_event(stream, event, 0));
}

/* The stream always waits for the callback (ACL_CALLBACK_BLOCK). */
static inline aclError aclrtLaunchCallback(aclrtCallback fn, void *userData,
					   aclrtCallbackBlockType blockType,
					   aclrtStream stream)
{
	(void)blockType;
	return accel_acl_error(accel_launch_host_func(stream, fn, userData));
}

/* ------------------------------------------------------------------ */
/* Events                                                             */
/* ------------------------------------------------------------------ */

static inline aclError aclrtCreateEvent(aclrtEvent *event)
{
	return accel_acl_error(accel_event_create(NULL, ACCEL_EVENT_DEFAULT,
						  event));
}

static inline aclError aclrtDestroyEvent(aclrtEvent event)
{
	return accel_acl_error(accel_event_destroy(event));
}

static inline aclError aclrtRecordEvent(aclrtEvent event, aclrtStream stream)
{
	return accel_acl_error(accel_event_record(event, stream));
}

static inline aclError aclrtQueryEventStatus(aclrtEvent event,
					     aclrtEventRecordedStatus *status)
{
	int r;

	if (!status)
		return ACL_ERROR_INVALID_PARAM;
	r = accel_event_query(event);
	if (r == -EAGAIN) {
		*status = ACL_EVENT_RECORDED_STATUS_NOT_READY;
		return ACL_SUCCESS;
	}
	if (!r)
		*status = ACL_EVENT_RECORDED_STATUS_COMPLETE;
	return accel_acl_error(r);
}

static inline aclError aclrtSynchronizeEvent(aclrtEvent event)
{
	return accel_acl_error(accel_event_synchronize(event,
						ACCEL_TIMEOUT_INFINITE));
}

static inline aclError aclrtEventElapsedTime(float *ms, aclrtEvent start,
					     aclrtEvent end)
{
	return accel_acl_error(accel_event_elapsed_time(ms, start, end));
}

/* ------------------------------------------------------------------ */
/* Memory and copies                                                  */
/* ------------------------------------------------------------------ */

static inline aclError aclrtMalloc(void **devPtr, size_t size,
				   aclrtMemMallocPolicy policy)
{
	(void)policy;
	return accel_acl_error(accel_malloc(NULL, devPtr, size));
}

static inline aclError aclrtFree(void *devPtr)
{
	return accel_acl_error(accel_free(devPtr));
}

static inline aclError aclrtMallocHost(void **hostPtr, size_t size)
{
	return accel_acl_error(accel_host_alloc(NULL, hostPtr, size, 0));
}

static inline aclError aclrtFreeHost(void *hostPtr)
{
	return accel_acl_error(accel_host_free(hostPtr));
}

/* count bytes; ACL_ERROR_INVALID_PARAM when they exceed destMax. */
static inline aclError aclrtMemcpyAsync(void *dst, size_t destMax,
					const void *src, size_t count,
					aclrtMemcpyKind kind, aclrtStream stream)
{
	if (count > destMax)
		return ACL_ERROR_INVALID_PARAM;
	return accel_acl_error(accel_memcpy_async(stream, dst, src, count,
					(enum accel_memcpy_kind)kind));
}

static inline aclError aclrtMemcpy(void *dst, size_t destMax, const void *src,
				   size_t count, aclrtMemcpyKind kind)
{
	aclError e = aclrtMemcpyAsync(dst, destMax, src, count, kind,
				      ACCEL_STREAM_DEFAULT);

	if (e != ACL_SUCCESS)
		return e;
	return aclrtSynchronizeStream(ACCEL_STREAM_DEFAULT);
}

/* count bytes of value (a byte); ACL_ERROR_INVALID_PARAM past maxCount. */
static inline aclError aclrtMemsetAsync(void *devPtr, size_t maxCount,
					int32_t value, size_t count,
					aclrtStream stream)
{
	if (count > maxCount)
		return ACL_ERROR_INVALID_PARAM;
	return accel_acl_error(accel_memset_async(stream, devPtr, (int)value,
						  count));
}

static inline aclError aclrtMemset(void *devPtr, size_t maxCount,
				   int32_t value, size_t count)
{
	aclError e = aclrtMemsetAsync(devPtr, maxCount, value, count,
				      ACCEL_STREAM_DEFAULT);

	if (e != ACL_SUCCESS)
		return e;
	return aclrtSynchronizeStream(ACCEL_STREAM_DEFAULT);
}

/* One 2D copy; device memory, pinned or registered memory on both sides. */
static inline aclError aclrtMemcpy2dAsync(void *dst, size_t dpitch,
					  const void *src, size_t spitch,
					  size_t width, size_t height,
					  aclrtMemcpyKind kind,
					  aclrtStream stream)
{
	return accel_acl_error(accel_memcpy_2d_async(stream, dst, dpitch, src,
					spitch, width, height,
					(enum accel_memcpy_kind)kind));
}

static inline aclError aclrtMemcpy2d(void *dst, size_t dpitch,
				     const void *src, size_t spitch,
				     size_t width, size_t height,
				     aclrtMemcpyKind kind)
{
	aclError e = aclrtMemcpy2dAsync(dst, dpitch, src, spitch, width,
					height, kind, ACCEL_STREAM_DEFAULT);

	if (e != ACL_SUCCESS)
		return e;
	return aclrtSynchronizeStream(ACCEL_STREAM_DEFAULT);
}

#ifdef __cplusplus
}
#endif

#endif /* LIBACCEL_ACL_COMPAT_H */
