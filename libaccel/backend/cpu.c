// SPDX-License-Identifier: MIT
/*
 * The "cpu" backend: the transport's own engine runs the queues (the
 * kernel's soft engine, or the in-process transport's workers), and its
 * memory is the transport's. Nothing runs on a device, so every hook that
 * concerns one does nothing.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "accel_int.h"

static int cpu_start(struct accel_ctx *ctx, bool quiet)
{
	(void)ctx;
	(void)quiet;
	return 0;
}

static void cpu_nop(struct accel_ctx *ctx)
{
	(void)ctx;
}

static bool cpu_false(struct accel_ctx *ctx)
{
	(void)ctx;
	return false;
}

static bool cpu_lost(struct accel_ctx *ctx, const char **why)
{
	(void)ctx;
	(void)why;
	return false;
}

/* Soft device memory: the transport's, with a reservation for its address. */
static int cpu_device_alloc(struct accel_ctx *ctx, size_t size,
			    struct accel_region *r)
{
	uint64_t off;
	void *p;
	int ret;

	ret = accel_kregion_alloc(ctx, size, ACCEL_MEM_DEVICE, &r->handle, &off);
	if (ret)
		return ret;
	r->map_len = accel_page_round(ctx, size);
	p = accel_map_guarded(r->map_len, PROT_NONE, 0, -1, 0);
	if (p == MAP_FAILED) {
		accel_kregion_release(ctx, r->handle, 0);
		return -ENOMEM;
	}
	r->base = (uintptr_t)p;
	r->size = size;
	return 0;
}

static int cpu_host_map(struct accel_ctx *ctx, uint32_t handle, void *base,
			size_t len)
{
	(void)ctx;
	(void)handle;
	(void)base;
	(void)len;
	return 0;
}

/* The transport pinned it (the module), or faulted it in (inproc). */
static int cpu_host_pin(struct accel_ctx *ctx, struct accel_region *r)
{
	(void)ctx;
	(void)r;
	return 0;
}

/* The transport's import holds the pages: nothing to add. */
static int cpu_host_import(struct accel_ctx *ctx, struct accel_region *r)
{
	(void)ctx;
	(void)r;
	return 0;
}

/* The transport keeps the pages of a deferred release alive itself. */
static int cpu_release(struct accel_ctx *ctx, const struct accel_region *r,
		       bool deferred)
{
	return accel_kregion_release(ctx, r->handle,
				     deferred ? ACCEL_MEM_RELEASE_DEFERRED : 0);
}

static void cpu_unmap(struct accel_ctx *ctx, const struct accel_region *r)
{
	(void)ctx;
	if (r->kind != LA_REGION_REGISTERED)
		accel_unmap_guarded((void *)r->base, r->map_len);
}

static void cpu_stream_dead(struct accel_ctx *ctx, uint32_t kstream)
{
	(void)ctx;
	(void)kstream;
}

/* Nothing on a device to poll: one look, then the caller waits. */
static int cpu_wait_fast(struct accel_ctx *ctx,
			 int (*poll_fn)(struct accel_ctx *, void *, uint64_t),
			 void *arg, uint64_t deadline)
{
	(void)deadline;
	return poll_fn(ctx, arg, 0);
}

/* One soft device per transport connection, as big as GET_INFO says. */
static int cpu_device_query(struct accel_ctx *ctx,
			    struct accel_backend_device *out)
{
	memset(out, 0, sizeof(*out));
	snprintf(out->name, sizeof(out->name), "accelstream soft engine (%s)",
		 ctx->ops->name);
	out->total_mem = ctx->info.max_device_bytes;
	/* A driver without ACCEL_CAP_DEVICES serves one device. */
	out->count = ctx->info.devices ? (int)ctx->info.devices : 1;
	out->device = ctx->device;
	return 0;
}

/* The transport's current device follows ours (ACCEL_IOC_SET_DEVICE). */
static int cpu_set_device(struct accel_ctx *ctx, int device)
{
	struct accel_device_select sel = { .device = (uint32_t)device };

	if (!(ctx->info.caps & ACCEL_CAP_DEVICES))
		return device == 0 ? 0 : -ENODEV;
	return accel_ioctl(ctx, ACCEL_IOC_SET_DEVICE, &sel);
}

/* The ABI reports the device memory limit, not how much is in use. */
static int cpu_mem_info(struct accel_ctx *ctx, size_t *free_bytes,
			size_t *total_bytes)
{
	(void)ctx;
	(void)free_bytes;
	(void)total_bytes;
	return -EOPNOTSUPP;
}

const struct accel_backend_ops accel_backend_cpu = {
	.name = "cpu",
	.start = cpu_start,
	.stop = cpu_nop,
	.teardown = cpu_nop,
	.lost = cpu_lost,
	.device_alloc = cpu_device_alloc,
	.host_map = cpu_host_map,
	.host_pin = cpu_host_pin,
	.host_import = cpu_host_import,
	.release = cpu_release,
	.unmap = cpu_unmap,
	.region_teardown = cpu_unmap,
	.reap = cpu_false,
	.stream_dead = cpu_stream_dead,
	.kick = cpu_nop,
	.poll = cpu_false,
	.wait_fast = cpu_wait_fast,
	.mark_submit = cpu_nop,
	.trace_wait = cpu_nop,
	.device_query = cpu_device_query,
	.mem_info = cpu_mem_info,
	.set_device = cpu_set_device,
};
