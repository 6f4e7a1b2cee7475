// SPDX-License-Identifier: MIT
/*
 * Device queries and device-wide synchronization: what the context's
 * device is (cudaGetDeviceProperties, aclrtGetDeviceCount), how much of
 * its memory is free (cudaMemGetInfo, aclrtGetMemInfo), and waiting for
 * every stream of the context (cudaDeviceSynchronize,
 * aclrtSynchronizeDevice).
 *
 * The cpu backend answers from GET_INFO, which reports the context's
 * limits but neither the device memory in use nor a count of copy
 * engines: those two are reported as unknown rather than guessed (a
 * count kept here would be wrong under deferred frees, whose memory the
 * transport keeps until the work naming it retired).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <linux/capability.h>

#include "accel_int.h"

/* CAP_IPC_LOCK in the effective set: RLIMIT_MEMLOCK does not apply. */
bool accel_has_ipc_lock(void)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3];

	memset(data, 0, sizeof(data));
	if (syscall(SYS_capget, &hdr, data))
		return false;
	return data[CAP_TO_INDEX(CAP_IPC_LOCK)].effective &
	       CAP_TO_MASK(CAP_IPC_LOCK);
}

/*
 * Both transports pin under RLIMIT_MEMLOCK (the module charges it as
 * io_uring does, inproc charges a process-wide count the same way), on
 * top of the context's limit.
 */
static uint64_t pinned_limit(const struct accel_ctx *ctx)
{
	uint64_t limit = ctx->info.max_pinned_bytes;
	struct rlimit rl;

	if (accel_has_ipc_lock() || getrlimit(RLIMIT_MEMLOCK, &rl) ||
	    rl.rlim_cur == RLIM_INFINITY)
		return limit;
	return (uint64_t)rl.rlim_cur < limit ? (uint64_t)rl.rlim_cur : limit;
}

ACCEL_EXPORT
int accel_device_get_count(accel_context *handle, int *count)
{
	ACCEL_API_ENTER();
	struct accel_ctx *ctx;
	int ret;

	ret = accel_ctx_get_checked(handle, count, &ctx);
	if (ret)
		return ret;
	ret = accel_ctx_device_count(ctx, count);
	accel_ctx_put(ctx);
	return ret;
}

ACCEL_EXPORT
int accel_device_get_properties(accel_context *handle,
				struct accel_device_prop *prop)
{
	ACCEL_API_ENTER();
	struct accel_backend_device dev;
	size_t free_b = 0, total_b;
	struct accel_ctx *ctx;
	bool known = true;
	int ret;

	ret = accel_ctx_get_checked(handle, prop, &ctx);
	if (ret)
		return ret;
	memset(&dev, 0, sizeof(dev));
	ret = ctx->backend->device_query(ctx, &dev);
	if (!ret)
		ret = ctx->backend->mem_info(ctx, &free_b, &total_b);
	if (ret == -EOPNOTSUPP) {
		known = false;
		ret = 0;
	}
	if (ret)
		goto out;
	/* Written only on success: a failed call leaves *prop as it was. */
	memset(prop, 0, sizeof(*prop));
	memcpy(prop->name, dev.name, sizeof(prop->name));
	prop->total_mem = dev.total_mem;
	prop->free_mem = known ? (uint64_t)free_b : ACCEL_MEM_UNKNOWN;
	prop->pinned_limit = pinned_limit(ctx);
	prop->copy_engines = dev.copy_engines;
	prop->device = dev.device;
	prop->backend = accel_backend_name(ctx);
	prop->transport = ctx->ops->name;
out:
	accel_ctx_put(ctx);
	return ret;
}

ACCEL_EXPORT
int accel_mem_get_info(accel_context *handle, size_t *free_bytes,
		       size_t *total_bytes)
{
	ACCEL_API_ENTER();
	struct accel_ctx *ctx;
	size_t f, t;
	int ret;

	ret = accel_ctx_get_checked(handle, free_bytes && total_bytes, &ctx);
	if (ret)
		return ret;
	ret = ctx->backend->mem_info(ctx, &f, &t);
	if (!ret) {
		*free_bytes = f;
		*total_bytes = t;
	} else if (ret == -EOPNOTSUPP) {
		accel_set_error("the accelstream ABI reports the device memory limit (%llu bytes), not how much of it is in use",
				(unsigned long long)ctx->info.max_device_bytes);
	}
	accel_ctx_put(ctx);
	return ret;
}

/*
 * The streams live when the call starts, every thread's default stream
 * included; each is synchronized against one deadline. A stream destroyed
 * meanwhile is done with (-ENOENT); a failed one makes the answer -EIO,
 * after the others were waited for. The context destroyed meanwhile ends
 * the call with -ENOENT, as it ends every wait.
 */
ACCEL_EXPORT
int accel_context_synchronize(accel_context *handle, uint64_t timeout_ns)
{
	ACCEL_API_ENTER();
	uint64_t deadline, *streams = NULL;
	unsigned int n = 0, i, cap = 0;
	struct accel_child *c;
	struct accel_ctx *ctx;
	int ret, r;

	ret = accel_ctx_get(handle, &ctx);
	if (ret)
		return ret;
	if (timeout_ns && accel_in_host_fn()) {
		ret = -EDEADLK;
		goto out;
	}
	deadline = accel_deadline(timeout_ns);
	pthread_mutex_lock(&ctx->lock);
	for (c = ctx->children; c; c = c->next)
		if (c->obj.type == ACCEL_OBJ_STREAM)
			cap++;
	streams = calloc(cap ? cap : 1, sizeof(*streams));
	for (c = ctx->children; c && streams; c = c->next)
		if (c->obj.type == ACCEL_OBJ_STREAM)
			streams[n++] = c->handle;
	pthread_mutex_unlock(&ctx->lock);
	if (!streams) {
		ret = -ENOMEM;
		goto out;
	}

	for (i = 0; i < n; i++) {
		r = accel_stream_synchronize((accel_stream_t)(uintptr_t)streams[i],
					     accel_deadline_left(deadline));
		if (r == -ENOENT &&
		    __atomic_load_n(&ctx->destroying, __ATOMIC_ACQUIRE)) {
			accel_set_error("the context was destroyed during the wait");
			ret = -ENOENT;
			break;
		}
		if (r == -ENOENT || r == 0)
			continue;
		if (r != -EIO) {
			ret = r;
			break;
		}
		ret = -EIO;
	}
	free(streams);
out:
	accel_ctx_put(ctx);
	return ret;
}

/* ------------------------------------------------------------------ */
/* Several devices                                                     */
/* ------------------------------------------------------------------ */

int accel_ctx_device_count(struct accel_ctx *ctx, int *count)
{
	struct accel_backend_device dev;
	int ret;

	memset(&dev, 0, sizeof(dev));
	ret = ctx->backend->device_query(ctx, &dev);
	if (!ret)
		*count = dev.count;
	return ret;
}

int accel_ctx_set_device_locked(struct accel_ctx *ctx, int device)
{
	int count, ret;

	ret = accel_ctx_device_count(ctx, &count);
	if (ret)
		return ret;
	if (device < 0 || device >= count) {
		accel_set_error("device %d: the %s backend sees %d device(s)",
				device, accel_backend_name(ctx), count);
		return -ENODEV;
	}
	ret = ctx->backend->set_device(ctx, device);
	if (!ret)
		ctx->device = device;
	return ret;
}

ACCEL_EXPORT
int accel_context_set_device(accel_context *handle, int device)
{
	ACCEL_API_ENTER();
	struct accel_ctx *ctx;
	int ret;

	ret = accel_ctx_get(handle, &ctx);
	if (ret)
		return ret;
	pthread_mutex_lock(&ctx->dev_lock);
	ret = accel_ctx_set_device_locked(ctx, device);
	pthread_mutex_unlock(&ctx->dev_lock);
	accel_ctx_put(ctx);
	return ret;
}

ACCEL_EXPORT
int accel_context_get_device(accel_context *handle, int *device)
{
	ACCEL_API_ENTER();
	struct accel_ctx *ctx;
	int ret;

	ret = accel_ctx_get_checked(handle, device, &ctx);
	if (ret)
		return ret;
	pthread_mutex_lock(&ctx->dev_lock);
	*device = ctx->device;
	pthread_mutex_unlock(&ctx->dev_lock);
	accel_ctx_put(ctx);
	return 0;
}

ACCEL_EXPORT
int accel_stream_get_device(accel_stream_t stream, int *device)
{
	ACCEL_API_ENTER();
	struct accel_stream_impl *s;
	int ret;

	ret = accel_stream_get_checked(stream, device, &s);
	if (ret)
		return ret;
	ret = accel_stream_error(s);
	if (!ret)
		*device = s->device;
	accel_stream_put(s);
	return ret;
}

/*
 * Every device of the soft engine reaches every other's memory (the
 * engine is the CPU); the cuda backend serves one GPU per context, whose
 * peers it does not drive.
 */
ACCEL_EXPORT
int accel_device_can_access_peer(accel_context *handle, int *can_access,
				 int device, int peer)
{
	ACCEL_API_ENTER();
	struct accel_ctx *ctx;
	int count, ret;

	ret = accel_ctx_get_checked(handle, can_access, &ctx);
	if (ret)
		return ret;
	ret = accel_ctx_device_count(ctx, &count);
	if (!ret && (device < 0 || device >= count || peer < 0 ||
		     peer >= count))
		ret = -ENODEV;
	if (!ret)
		*can_access = device != peer &&
			      ctx->backend == &accel_backend_cpu;
	accel_ctx_put(ctx);
	return ret;
}
