// SPDX-License-Identifier: GPL-2.0
/*
 * accelstream: the soft devices. The module serves as_ndevices of them
 * (module parameter devices), each with its own copy engine (a pair of
 * workqueues) and its own memory account. A context has a current device
 * (%ACCEL_IOC_SET_DEVICE); its streams and device allocations are made on
 * the current device of the time and stay there, so one context may hold
 * objects of several devices (uapi DOC: devices).
 *
 * Locks: the device array is written at load and unload only; its counters
 * are atomic. The query takes as_ctx_list_lock, then each context's lock
 * (as_drv.h's order).
 */
#include <linux/atomic.h>
#include <linux/moduleparam.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/workqueue.h>

#include "as_drv.h"

static unsigned int devices = 1;
module_param(devices, uint, 0444);
MODULE_PARM_DESC(devices, "Soft devices to serve, 1 to 64 (default 1)");

struct as_device *as_devices;
u32 as_ndevices;

/**
 * as_devices_init() - create the devices the module parameter asks for
 *
 * Context: module init.
 * Return: 0, -EINVAL for a count out of range, -ENOMEM.
 */
int as_devices_init(void)
{
	u32 i;

	if (asc_devices_param(devices)) {
		pr_err("devices=%u: must be 1 to %u\n", devices, ASC_MAX_DEVICES);
		return -EINVAL;
	}
	as_devices = kcalloc(devices, sizeof(*as_devices), GFP_KERNEL);
	if (!as_devices)
		return -ENOMEM;
	for (i = 0; i < devices; i++) {
		struct as_device *d = &as_devices[i];

		d->index = i;
		atomic64_set(&d->device_bytes, 0);
		atomic64_set(&d->retired, 0);
		d->wq = alloc_workqueue("accelstream%u", WQ_UNBOUND, 0, i);
		d->wq_hi = alloc_workqueue("accelstream%u_hi",
					   WQ_UNBOUND | WQ_HIGHPRI, 0, i);
		if (!d->wq || !d->wq_hi) {
			as_ndevices = i + 1;
			as_devices_fini();
			return -ENOMEM;
		}
	}
	as_ndevices = devices;
	return 0;
}

/**
 * as_devices_fini() - destroy the devices' engines
 *
 * Context: module exit (every context closed; destroy_workqueue() drains
 * the workers of closed contexts still returning), or a failed init.
 */
void as_devices_fini(void)
{
	u32 i;

	for (i = 0; i < as_ndevices; i++) {
		if (as_devices[i].wq_hi)
			destroy_workqueue(as_devices[i].wq_hi);
		if (as_devices[i].wq)
			destroy_workqueue(as_devices[i].wq);
	}
	kfree(as_devices);
	as_devices = NULL;
	as_ndevices = 0;
}

/**
 * as_set_device_ioctl() - %ACCEL_IOC_SET_DEVICE: the context's current device
 * @ctx: the context.
 * @arg: user pointer to &struct accel_device_select.
 *
 * Context: process context of the opener.
 * Return: 0, -EFAULT, -EINVAL or -ENODEV (see the uapi header).
 */
int as_set_device_ioctl(struct as_ctx *ctx, void __user *arg)
{
	struct accel_device_select req;
	int ret;

	if (copy_from_user(&req, arg, sizeof(req)))
		return -EFAULT;
	ret = asc_check_set_device(&req, as_ndevices);
	if (ret)
		return ret;
	spin_lock(&ctx->lock);
	ctx->device = req.device;
	spin_unlock(&ctx->lock);
	return 0;
}

/**
 * as_query_devices() - fill the entries of %ACCEL_QUERY_DEVICES
 * @buf: @room entries, or NULL to count only.
 * @room: entries @buf holds.
 *
 * Context: as_ctx_list_lock held; takes each context's lock.
 * Return: the number of devices.
 */
u32 as_query_devices(struct accel_device_info *buf, u32 room)
{
	struct as_ctx *ctx;
	u32 i, n = min(room, as_ndevices);

	lockdep_assert_held(&as_ctx_list_lock);
	if (!buf)
		return as_ndevices;
	for (i = 0; i < n; i++) {
		buf[i] = (struct accel_device_info){
			.index = i,
			.device_bytes = atomic64_read(&as_devices[i].device_bytes),
			.retired = atomic64_read(&as_devices[i].retired),
			.max_device_bytes = as_max_device_bytes(),
		};
	}
	list_for_each_entry(ctx, &as_ctx_list, node) {
		struct as_stream *s;

		spin_lock(&ctx->lock);
		if (ctx->device < n) {
			buf[ctx->device].contexts++;
			buf[ctx->device].pinned_bytes += ctx->pinned_bytes;
		}
		list_for_each_entry(s, &ctx->streams, node) {
			if (s->dev >= n)
				continue;
			buf[s->dev].streams++;
			buf[s->dev].queued += s->q.count;
		}
		spin_unlock(&ctx->lock);
	}
	return as_ndevices;
}
