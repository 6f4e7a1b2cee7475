// SPDX-License-Identifier: GPL-2.0
/*
 * Contexts, streams and regions from the driver: ACCEL_IOC_QUERY on the
 * device node (uapi/accelstream.h), which shows an ordinary user their own
 * processes' contexts and root everyone's. Opening the node makes a
 * context of accelctl's own, which the driver marks ACCEL_CTX_SELF and
 * the list leaves out.
 *
 * Copyright (C) 2026 The accelstream authors
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "accelctl.h"
#include "../../uapi/accelstream.h"

/* Opens the device and checks that the driver answers ACCEL_IOC_QUERY. */
static int query_open(const struct accelctl *actl)
{
	struct accel_info info;
	int fd, err;

	fd = open(actl->roots.dev, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		err = errno;
		if (err == EACCES || err == EPERM)
			accelctl_err("cannot open %s: permission denied (it takes read-write access to the device, which its udev rule gives the accel group)",
				     actl->roots.dev);
		else
			accelctl_err("cannot open %s: %s", actl->roots.dev,
				     strerror(err));
		return -err;
	}
	memset(&info, 0, sizeof(info));
	if (ioctl(fd, ACCEL_IOC_GET_INFO, &info)) {
		err = errno;
		accelctl_err("%s: ACCEL_IOC_GET_INFO: %s", actl->roots.dev,
			     strerror(err));
		close(fd);
		return -err;
	}
	if (!(info.caps & ACCEL_CAP_QUERY)) {
		accelctl_err("the loaded %s (ABI %u) has no ACCEL_IOC_QUERY: load the module this accelctl came with",
			     ACCELCTL_MODULE, info.abi_version);
		close(fd);
		return -EOPNOTSUPP;
	}
	return fd;
}

/*
 * One query into a malloc'ed array in *@out: a sizing call, then calls
 * with some room to spare until the answer fits (contexts come and go).
 */
static int query(const struct accelctl *actl, uint32_t kind, uint64_t ctx,
		 uint32_t entry_size, void **out, uint32_t *n)
{
	struct accel_query q;
	void *buf = NULL, *nb;
	uint32_t room = 0;
	int fd, ret, tries;

	*out = NULL;
	*n = 0;
	if (ctx > UINT32_MAX)
		return -ENOENT;
	fd = query_open(actl);
	if (fd < 0)
		return fd;
	for (tries = 0; tries < 8; tries++) {
		memset(&q, 0, sizeof(q));
		q.kind = kind;
		q.ctx_id = ctx;
		q.entry_size = entry_size;
		q.capacity = room;
		q.entries = (uintptr_t)buf;
		ret = ioctl(fd, ACCEL_IOC_QUERY, &q) ? -errno : 0;
		if (ret || q.count <= room)
			break;
		room = q.count + 16;
		if (room > ACCEL_QUERY_MAX_ENTRIES)
			room = ACCEL_QUERY_MAX_ENTRIES;
		nb = realloc(buf, (size_t)room * entry_size);
		ret = -ENOMEM;
		if (!nb)
			break;
		buf = nb;
		ret = -EAGAIN;
	}
	close(fd);
	if (ret == -EAGAIN)
		accelctl_err("the list kept growing while being read; try again");
	else if (ret && ret != -ENOENT)
		accelctl_err("%s: ACCEL_IOC_QUERY: %s", actl->roots.dev,
			     strerror(-ret));
	if (ret) {
		free(buf);
		return ret;
	}
	*out = buf;
	*n = q.count;
	return 0;
}

static void executor_name(char *buf, size_t len, const struct accel_ctx_info *c)
{
	if (c->flags & ACCEL_CTX_EXECUTOR)
		snprintf(buf, len, "user:%u", c->executor_pid);
	else
		snprintf(buf, len, "soft");
}

int accelctl_list_contexts(const struct accelctl *actl,
			   struct accelctl_context **out, size_t *n)
{
	struct accel_ctx_info *info;
	struct accelctl_context *c;
	uint32_t count, i;
	int ret;

	*out = NULL;
	*n = 0;
	if (actl->roots.debugfs)
		return accelctl_debugfs_contexts(&actl->roots, out, n);
	ret = query(actl, ACCEL_QUERY_CONTEXTS, 0, sizeof(*info),
		    (void **)&info, &count);
	if (ret)
		return ret;
	c = calloc(count ? count : 1, sizeof(*c));
	if (!c) {
		free(info);
		accelctl_err("out of memory");
		return -ENOMEM;
	}
	for (i = 0; i < count; i++) {
		struct accelctl_context *o = &c[*n];

		if (info[i].flags & ACCEL_CTX_SELF)
			continue;
		o->id = info[i].id;
		o->pid = info[i].pid;
		o->uid = info[i].uid;
		o->streams = info[i].streams;
		o->events = info[i].events;
		o->regions = info[i].regions;
		o->queued = info[i].queued;
		o->pinned_bytes = info[i].pinned_bytes;
		o->device_bytes = info[i].device_bytes;
		o->failed_streams = info[i].failed_streams;
		executor_name(o->executor, sizeof(o->executor), &info[i]);
		snprintf(o->comm, sizeof(o->comm), "%.*s",
			 (int)sizeof(info[i].comm), (const char *)info[i].comm);
		(*n)++;
	}
	free(info);
	*out = c;
	return 0;
}

int accelctl_list_streams(const struct accelctl *actl, uint64_t ctx,
			  struct accelctl_stream **out, size_t *n)
{
	struct accel_stream_info *info;
	struct accelctl_stream *s;
	uint32_t count, i;
	int ret;

	*out = NULL;
	*n = 0;
	if (actl->roots.debugfs)
		return accelctl_debugfs_streams(&actl->roots, ctx, out, n);
	ret = query(actl, ACCEL_QUERY_STREAMS, ctx, sizeof(*info),
		    (void **)&info, &count);
	if (ret)
		return ret;
	s = calloc(count ? count : 1, sizeof(*s));
	if (!s) {
		free(info);
		accelctl_err("out of memory");
		return -ENOMEM;
	}
	for (i = 0; i < count; i++) {
		s[i].handle = info[i].handle;
		s[i].submitted = info[i].submitted;
		s[i].completed = info[i].completed;
		s[i].queued = info[i].queued;
		s[i].priority = info[i].priority;
		s[i].flags = info[i].flags;
		s[i].error = info[i].error;
		snprintf(s[i].state, sizeof(s[i].state), "%s",
			 info[i].state == ACCEL_OBJ_DESTROYED ? "destroyed" : "live");
	}
	free(info);
	*out = s;
	*n = count;
	return 0;
}

static const char *region_kind(uint32_t kind)
{
	switch (kind) {
	case ACCEL_REGION_HOST:
		return "host";
	case ACCEL_REGION_HOST_ALLOC:
		return "host_alloc";
	case ACCEL_REGION_DEVICE:
		return "device";
	case ACCEL_REGION_EXTERNAL:
		return "external";
	}
	return "?";
}

int accelctl_list_regions(const struct accelctl *actl, uint64_t ctx,
			  struct accelctl_region **out, size_t *n)
{
	struct accel_region_info *info;
	struct accelctl_region *r;
	uint32_t count, i;
	int ret;

	*out = NULL;
	*n = 0;
	if (actl->roots.debugfs)
		return accelctl_debugfs_regions(&actl->roots, ctx, out, n);
	ret = query(actl, ACCEL_QUERY_REGIONS, ctx, sizeof(*info),
		    (void **)&info, &count);
	if (ret)
		return ret;
	r = calloc(count ? count : 1, sizeof(*r));
	if (!r) {
		free(info);
		accelctl_err("out of memory");
		return -ENOMEM;
	}
	for (i = 0; i < count; i++) {
		r[i].handle = info[i].handle;
		snprintf(r[i].kind, sizeof(r[i].kind), "%s",
			 region_kind(info[i].kind));
		r[i].size = info[i].size;
		r[i].inflight = info[i].inflight;
		r[i].flags = info[i].flags;
		snprintf(r[i].state, sizeof(r[i].state), "%s",
			 info[i].state == ACCEL_OBJ_RELEASED ? "released" : "live");
	}
	free(info);
	*out = r;
	*n = count;
	return 0;
}

int accelctl_list_devices(const struct accelctl *actl,
			  struct accelctl_device **out, size_t *n)
{
	struct accel_device_info *info;
	struct accelctl_device *d;
	uint32_t count, i;
	int ret;

	*out = NULL;
	*n = 0;
	if (actl->roots.debugfs) {
		accelctl_err("devices are listed by ACCEL_IOC_QUERY only, not from debugfs");
		return -EOPNOTSUPP;
	}
	ret = query(actl, ACCEL_QUERY_DEVICES, 0, sizeof(*info),
		    (void **)&info, &count);
	if (ret == -EINVAL)
		accelctl_err("the loaded %s lists no devices (ACCEL_QUERY_DEVICES): load the module this accelctl came with",
			     ACCELCTL_MODULE);
	if (ret)
		return ret;
	d = calloc(count ? count : 1, sizeof(*d));
	if (!d) {
		free(info);
		accelctl_err("out of memory");
		return -ENOMEM;
	}
	for (i = 0; i < count; i++) {
		d[i].index = info[i].index;
		d[i].contexts = info[i].contexts;
		/* accelctl's own context, opened for the query, on device 0. */
		if (info[i].index == 0 && d[i].contexts)
			d[i].contexts--;
		d[i].streams = info[i].streams;
		d[i].queued = info[i].queued;
		d[i].pinned_bytes = info[i].pinned_bytes;
		d[i].device_bytes = info[i].device_bytes;
		d[i].max_device_bytes = info[i].max_device_bytes;
		d[i].retired = info[i].retired;
	}
	free(info);
	*out = d;
	*n = count;
	return 0;
}
