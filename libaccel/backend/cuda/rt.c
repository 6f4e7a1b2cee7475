// SPDX-License-Identifier: MIT
/*
 * The cuda backend: libcudart, loaded at run time (so that one libaccel
 * binary serves machines with and without a GPU), the mapping of CUDA
 * errors to errnos, and the lost state a sticky error puts a context in.
 */
#include "cuda.h"

pthread_once_t cx_rt_once = PTHREAD_ONCE_INIT;
struct cx_rt cx_rt;

void cx_rt_load(void)
{
	const char *env = getenv("ACCEL_CUDART");
	const char *names[] = { env, "libcudart.so.13", "libcudart.so.12",
				"libcudart.so" };
	void *h = NULL, *batch, *entry;
	unsigned int i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]) && !h; i++)
		if (names[i] && *names[i])
			h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		snprintf(cx_rt.why, sizeof(cx_rt.why), "cannot load libcudart.so.13: %s",
			 dlerror());
		cx_rt.load_error = -ENODEV;
		return;
	}
#define X(f)								\
	cx_rt.f = (__typeof__(f) *)dlsym(h, #f);				\
	if (!cx_rt.f) {							\
		snprintf(cx_rt.why, sizeof(cx_rt.why),			\
			 "libcudart has no %s", #f);			\
		cx_rt.load_error = -ENODEV;				\
		return;							\
	}
	CUDA_FNS(X)
#undef X
	if (cx_rt.cudaRuntimeGetVersion(&cx_rt.runtime_version) != cudaSuccess)
		cx_rt.runtime_version = 0;
	batch = dlsym(h, "cudaMemcpyBatchAsync");
	if (batch && cx_rt.runtime_version >= 13000)
		cx_rt.batch13 = (__typeof__(cudaMemcpyBatchAsync) *)batch;
	else if (batch && cx_rt.runtime_version >= 12080)
		cx_rt.batch12 = (batch12_fn)batch;
	/*
	 * Completion by host word: mapped pinned memory and the driver's
	 * cuStreamWriteValue32, reached through the runtime (CUDA 12.5+), so
	 * that libcuda is never named here. Any of them missing: events.
	 */
	cx_rt.cudaHostAlloc = (__typeof__(cudaHostAlloc) *)dlsym(h, "cudaHostAlloc");
	cx_rt.cudaFreeHost = (__typeof__(cudaFreeHost) *)dlsym(h, "cudaFreeHost");
	cx_rt.cudaHostGetDevicePointer = (__typeof__(cudaHostGetDevicePointer) *)
		dlsym(h, "cudaHostGetDevicePointer");
	entry = dlsym(h, "cudaGetDriverEntryPointByVersion");
	if (entry) {
		__typeof__(cudaGetDriverEntryPointByVersion) *get = entry;
		enum cudaDriverEntryPointQueryResult st;
		void *fn = NULL;

		/* The 12.0 ABI of the call: the _v2 entry, no V1 attribute. */
		if (get("cuStreamWriteValue32", &fn, 12000, cudaEnableDefault,
			&st) == cudaSuccess && st == cudaDriverEntryPointSuccess)
			cx_rt.write32 = (write32_fn)fn;
		else
			cx_rt.cudaGetLastError();
	}
	/* The library stays loaded for the life of the process. */
	cx_rt.handle = h;
}

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
	snprintf(buf, len, "%s: %s (%s)", call, cx_rt.cudaGetErrorName(e),
		 cx_rt.cudaGetErrorString(e));
}

/* Enter the lost state once; callable with or without cx->lock. */
void cx_set_lost(struct accel_cuda *cx, cudaError_t e, const char *call)
{
	if (atomic_exchange(&cx->lost_claimed, true))
		return;
	cuda_describe(cx->lost_why, sizeof(cx->lost_why), e, call);
	/* Readers test ->lost first, then read ->lost_why. */
	atomic_store(&cx->lost, true);
	accel_log(LOG_ERR, "cuda: context lost: %s", cx->lost_why);
}

/* An error from a CUDA call: -errno, and lost if it is sticky. */
int cx_error(struct accel_cuda *cx, cudaError_t e, const char *call)
{
	char buf[256];

	if (e == cudaSuccess)
		return 0;
	if (cuda_sticky(e)) {
		cx_set_lost(cx, e, call);
	} else {
		/* Clear it, so that the next call does not report it again. */
		cx_rt.cudaGetLastError();
	}
	cuda_describe(buf, sizeof(buf), e, call);
	accel_set_error("%s", buf);
	return cuda_errno(e);
}

static pthread_once_t cx_rt_driver_once = PTHREAD_ONCE_INIT;

static void cx_rt_driver_load(void)
{
	__typeof__(cudaGetDriverEntryPointByVersion) *get;
	enum cudaDriverEntryPointQueryResult q;
	void *fn;

	/* From the runtime cx_rt_load() loaded (CUDA 12.5 and later). */
	if (!cx_rt.handle)
		return;
	get = (__typeof__(get))dlsym(cx_rt.handle,
				     "cudaGetDriverEntryPointByVersion");
	if (!get)
		return;
	if (get("cuMemsetD16Async", &fn, 12000, cudaEnableDefault, &q) ==
	    cudaSuccess && q == cudaDriverEntryPointSuccess)
		cx_rt.memset_d16 = (cx_memset_d16_fn)fn;
	if (get("cuMemsetD32Async", &fn, 12000, cudaEnableDefault, &q) ==
	    cudaSuccess && q == cudaDriverEntryPointSuccess)
		cx_rt.memset_d32 = (cx_memset_d32_fn)fn;
}

/* Resolve cx_rt.memset_d16 and memset_d32, once; they stay NULL if absent. */
void cx_rt_driver(void)
{
	pthread_once(&cx_rt_driver_once, cx_rt_driver_load);
}

bool accel_cuda_lost(struct accel_ctx *ctx, const char **why)
{
	struct accel_cuda *cx = cx_of(ctx);

	if (!cx || !atomic_load(&cx->lost))
		return false;
	*why = cx->lost_why;
	return true;
}
