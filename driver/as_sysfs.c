// SPDX-License-Identifier: GPL-2.0
/*
 * accelstream: the stable interface of admin tools.
 *
 * Module totals are attributes of the misc device
 * (/sys/class/misc/accelstream/, Documentation/ABI/testing/
 * sysfs-class-misc-accelstream); contexts, streams and regions are listed
 * by %ACCEL_IOC_QUERY, whose rules (argument checks, who sees what) live
 * in the core. debugfs shows the same for debugging, without promises.
 *
 * Locks: as_ctx_list_lock, then a context's lock (as_drv.h's order). The
 * query allocates under as_ctx_list_lock only, never under a context's
 * lock, and copies out after dropping both.
 */
#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/device.h>
#include <linux/mm.h>
#include <linux/pid.h>
#include <linux/pid_namespace.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/sysfs.h>
#include <linux/uaccess.h>
#include <linux/uidgid.h>

#include "as_drv.h"

/**
 * as_totals() - add up every context's objects and bytes
 * @t: filled with the sums.
 *
 * Context: process context; takes as_ctx_list_lock and each context's lock.
 */
void as_totals(struct as_totals *t)
{
	struct as_ctx *ctx;

	memset(t, 0, sizeof(*t));
	mutex_lock(&as_ctx_list_lock);
	list_for_each_entry(ctx, &as_ctx_list, node) {
		struct as_event_obj *ev;
		struct as_stream *s;
		struct as_mem *r;

		t->contexts++;
		spin_lock(&ctx->lock);
		list_for_each_entry(s, &ctx->streams, node)
			t->streams++;
		list_for_each_entry(r, &ctx->regions, node)
			t->regions++;
		list_for_each_entry(ev, &ctx->events, node)
			t->events++;
		t->queued += ctx->queued;
		t->pinned_bytes += ctx->pinned_bytes;
		t->device_bytes += ctx->device_bytes;
		spin_unlock(&ctx->lock);
	}
	mutex_unlock(&as_ctx_list_lock);
	t->submitted_total = atomic64_read(&as_submitted_total);
	t->retired_total = atomic64_read(&as_retired_total);
}

static ssize_t abi_version_show(struct device *dev,
				struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n", ACCEL_ABI_VERSION);
}
static DEVICE_ATTR_RO(abi_version);

static ssize_t devices_show(struct device *dev, struct device_attribute *attr,
			    char *buf)
{
	return sysfs_emit(buf, "%u\n", as_ndevices);
}
static DEVICE_ATTR_RO(devices);

/* One read-only attribute per field of struct as_totals. */
#define AS_TOTAL_ATTR(field)						\
static ssize_t field##_show(struct device *dev,				\
			    struct device_attribute *attr, char *buf)	\
{									\
	struct as_totals t;						\
									\
	as_totals(&t);							\
	return sysfs_emit(buf, "%llu\n", (unsigned long long)t.field);	\
}									\
static DEVICE_ATTR_RO(field)

AS_TOTAL_ATTR(contexts);
AS_TOTAL_ATTR(streams);
AS_TOTAL_ATTR(events);
AS_TOTAL_ATTR(regions);
AS_TOTAL_ATTR(queued);
AS_TOTAL_ATTR(pinned_bytes);
AS_TOTAL_ATTR(device_bytes);
AS_TOTAL_ATTR(submitted_total);
AS_TOTAL_ATTR(retired_total);

static struct attribute *as_attrs[] = {
	&dev_attr_abi_version.attr,
	&dev_attr_devices.attr,
	&dev_attr_contexts.attr,
	&dev_attr_streams.attr,
	&dev_attr_events.attr,
	&dev_attr_regions.attr,
	&dev_attr_queued.attr,
	&dev_attr_pinned_bytes.attr,
	&dev_attr_device_bytes.attr,
	&dev_attr_submitted_total.attr,
	&dev_attr_retired_total.attr,
	NULL,
};

static const struct attribute_group as_attr_group = {
	.attrs = as_attrs,
};

/* The misc device's attribute groups (struct miscdevice.groups). */
const struct attribute_group *as_sysfs_groups[] = {
	&as_attr_group,
	NULL,
};

/* A pid number of the initial namespace as the caller sees it, or 0. */
static u32 as_pid_vnr(pid_t nr)
{
	u32 vnr;

	if (!nr)
		return 0;
	rcu_read_lock();
	vnr = pid_nr_ns(find_pid_ns(nr, &init_pid_ns),
			task_active_pid_ns(current));
	rcu_read_unlock();
	return vnr;
}

static bool as_ctx_visible(const struct as_ctx *ctx, const struct as_ctx *self,
			   bool admin)
{
	return asc_query_visible(ctx == self, uid_eq(ctx->uid, current_euid()),
				admin);
}

static void as_ctx_info_locked(struct as_ctx *ctx, const struct as_ctx *self,
			       struct accel_ctx_info *out)
{
	lockdep_assert_held(&ctx->lock);
	out->id = ctx->id;
	out->flags = (ctx == self ? ACCEL_CTX_SELF : 0) |
		     (ctx->executor ? ACCEL_CTX_EXECUTOR : 0);
	out->pid = pid_vnr(ctx->pid);
	out->uid = from_kuid_munged(current_user_ns(), ctx->uid);
	out->executor_pid = ctx->executor ? as_pid_vnr(ctx->executor_pid) : 0;
	out->streams = ctx->nstreams;
	out->events = ctx->nevents;
	out->regions = ctx->nregions;
	out->failed_streams = ctx->failed_streams;
	out->device = ctx->device;
	out->queued = ctx->queued;
	out->pinned_bytes = ctx->pinned_bytes;
	out->device_bytes = ctx->device_bytes;
	out->max_pinned_bytes = ctx->max_pinned_bytes;
	out->max_device_bytes = ctx->max_device_bytes;
	memcpy(out->comm, ctx->comm, sizeof(out->comm));
}

/* Counts, then (with @buf) fills up to @room entries of the visible contexts. */
static u32 as_query_contexts(struct as_ctx *self, bool admin,
			     struct accel_ctx_info *buf, u32 room)
{
	struct as_ctx *ctx;
	u32 n = 0;

	lockdep_assert_held(&as_ctx_list_lock);
	list_for_each_entry(ctx, &as_ctx_list, node) {
		if (!as_ctx_visible(ctx, self, admin))
			continue;
		if (buf && n < room) {
			spin_lock(&ctx->lock);
			as_ctx_info_locked(ctx, self, &buf[n]);
			spin_unlock(&ctx->lock);
		}
		n++;
	}
	return n;
}

static u32 as_query_streams_locked(struct as_ctx *ctx,
				   struct accel_stream_info *buf, u32 room)
{
	struct as_stream *s;
	u32 n = 0;

	lockdep_assert_held(&ctx->lock);
	list_for_each_entry(s, &ctx->streams, node) {
		if (buf && n < room) {
			struct accel_stream_info *e = &buf[n];

			asc_stream_info_init(e, &s->tl, &s->q);
			e->handle = s->obj.handle;
			e->flags = s->flags;
			e->priority = s->priority;
			e->state = s->destroyed ? ACCEL_OBJ_DESTROYED :
						  ACCEL_OBJ_LIVE;
		}
		n++;
	}
	return n;
}

static u32 as_query_regions_locked(struct as_ctx *ctx,
				   struct accel_region_info *buf, u32 room)
{
	struct as_mem *m;
	u32 n = 0;

	lockdep_assert_held(&ctx->lock);
	list_for_each_entry(m, &ctx->regions, node) {
		if (buf && n < room) {
			struct accel_region_info *e = &buf[n];

			asc_region_info_init(e, &m->core);
			e->handle = m->obj.handle;
			e->kind = m->core.kind;
		}
		n++;
	}
	return n;
}

static u32 as_query_objects_locked(struct as_ctx *ctx, u32 kind, void *buf,
				   u32 room)
{
	if (kind == ACCEL_QUERY_STREAMS)
		return as_query_streams_locked(ctx, buf, room);
	return as_query_regions_locked(ctx, buf, room);
}

/* The context @id names for the caller (0: its own), or NULL. */
static struct as_ctx *as_query_find(struct as_ctx *self, u32 id, bool admin)
{
	struct as_ctx *ctx;

	lockdep_assert_held(&as_ctx_list_lock);
	if (!id)
		return self;
	list_for_each_entry(ctx, &as_ctx_list, node)
		if (ctx->id == id)
			return as_ctx_visible(ctx, self, admin) ? ctx : NULL;
	return NULL;
}

/**
 * as_query_ioctl() - %ACCEL_IOC_QUERY: list contexts, streams, regions or devices
 * @self: the context the ioctl came through.
 * @arg: user pointer to a &struct accel_query.
 *
 * The entries are counted under the locks, allocated under
 * as_ctx_list_lock alone (which keeps the named context alive), filled
 * under the locks again, and copied out after both are dropped.
 *
 * Context: process context, may sleep.
 * Return: 0, -EINVAL, -ENOENT, -EFAULT or -ENOMEM (see the uapi header).
 */
int as_query_ioctl(struct as_ctx *self, void __user *arg)
{
	/* No audit record: an ordinary user's query is not a denial. */
	bool admin = ns_capable_noaudit(&init_user_ns, CAP_SYS_ADMIN);
	struct accel_query q;
	struct as_ctx *ctx = NULL;
	void *buf = NULL;
	u32 n, room;
	int ret;

	if (copy_from_user(&q, arg, sizeof(q)))
		return -EFAULT;
	ret = asc_check_query(&q);
	if (ret)
		return ret;

	mutex_lock(&as_ctx_list_lock);
	if (q.kind == ACCEL_QUERY_CONTEXTS) {
		n = as_query_contexts(self, admin, NULL, 0);
	} else if (q.kind == ACCEL_QUERY_DEVICES) {
		n = as_query_devices(NULL, 0);
	} else {
		ctx = as_query_find(self, q.ctx_id, admin);
		ret = -ENOENT;
		if (!ctx)
			goto err_unlock;
		spin_lock(&ctx->lock);
		n = as_query_objects_locked(ctx, q.kind, NULL, 0);
		spin_unlock(&ctx->lock);
	}
	room = min(n, q.capacity);
	if (room) {
		buf = kvcalloc(room, q.entry_size, GFP_KERNEL_ACCOUNT);
		ret = -ENOMEM;
		if (!buf)
			goto err_unlock;
		/* Counted again: contexts may have come or gone meanwhile. */
		if (q.kind == ACCEL_QUERY_DEVICES) {
			n = as_query_devices(buf, room);
		} else if (!ctx) {
			n = as_query_contexts(self, admin, buf, room);
		} else {
			spin_lock(&ctx->lock);
			n = as_query_objects_locked(ctx, q.kind, buf, room);
			spin_unlock(&ctx->lock);
		}
		room = min(n, room);
	}
	mutex_unlock(&as_ctx_list_lock);

	q.count = n;
	ret = -EFAULT;
	if (room && copy_to_user(u64_to_user_ptr(q.entries), buf,
				 (size_t)room * q.entry_size))
		goto err_free;
	if (copy_to_user(arg, &q, sizeof(q)))
		goto err_free;
	kvfree(buf);
	return 0;

err_unlock:
	mutex_unlock(&as_ctx_list_lock);
err_free:
	kvfree(buf);
	return ret;
}
