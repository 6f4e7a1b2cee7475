/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Thin wrappers over the accelstream ioctls for the fault tests: each
 * returns 0 or -errno, so that a test can compare with the documented
 * errno directly.
 */
#ifndef ACCEL_FAULT_UTIL_H
#define ACCEL_FAULT_UTIL_H

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>

#include "accelstream.h"
#include "as_check.h"

#define PG 4096ul

static inline int as_ioctl(int fd, unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) ? -errno : 0;
}

static inline int as_open_dev(void)
{
	int fd = open(AS_DEV, O_RDWR | O_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

static inline int as_stream(int fd, uint32_t *h)
{
	struct accel_stream_create c = { 0 };
	int r = as_ioctl(fd, ACCEL_IOC_STREAM_CREATE, &c);

	*h = c.handle;
	return r;
}

static inline int as_stream_destroy(int fd, uint32_t h)
{
	struct accel_handle a = { .handle = h };

	return as_ioctl(fd, ACCEL_IOC_STREAM_DESTROY, &a);
}

static inline int as_event(int fd, uint32_t flags, uint32_t *h)
{
	struct accel_event_create c = { .flags = flags };
	int r = as_ioctl(fd, ACCEL_IOC_EVENT_CREATE, &c);

	*h = c.handle;
	return r;
}

static inline int as_event_destroy(int fd, uint32_t h)
{
	struct accel_handle a = { .handle = h };

	return as_ioctl(fd, ACCEL_IOC_EVENT_DESTROY, &a);
}

static inline int as_signal(int fd, uint32_t h, uint64_t v)
{
	struct accel_event_signal s = { .handle = h, .value = v };

	return as_ioctl(fd, ACCEL_IOC_EVENT_SIGNAL, &s);
}

static inline int as_register(int fd, const void *p, uint64_t len,
			      uint32_t flags, uint32_t *h)
{
	struct accel_mem_register r = {
		.addr = (uintptr_t)p, .size = len, .flags = flags,
	};
	int ret = as_ioctl(fd, ACCEL_IOC_MEM_REGISTER, &r);

	*h = r.handle;
	return ret;
}

static inline int as_alloc(int fd, uint64_t len, uint32_t flags, uint32_t *h,
			   uint64_t *off)
{
	struct accel_mem_alloc a = { .size = len, .flags = flags };
	int ret = as_ioctl(fd, ACCEL_IOC_MEM_ALLOC, &a);

	*h = a.handle;
	if (off)
		*off = a.mmap_offset;
	return ret;
}

static inline int as_release_mem(int fd, uint32_t h, uint32_t flags)
{
	struct accel_mem_release r = { .handle = h, .flags = flags };

	return as_ioctl(fd, ACCEL_IOC_MEM_RELEASE, &r);
}

static inline struct accel_desc as_copy_desc(uint32_t dst, uint64_t doff,
					     uint32_t src, uint64_t soff,
					     uint64_t len)
{
	struct accel_desc d;

	memset(&d, 0, sizeof(d));
	d.op = ACCEL_OP_COPY;
	d.dst = dst;
	d.src = src;
	d.dst_offset = doff;
	d.src_offset = soff;
	d.length = len;
	return d;
}

static inline struct accel_desc as_ev_desc(uint32_t op, uint32_t ev,
					   uint64_t value)
{
	struct accel_desc d;

	memset(&d, 0, sizeof(d));
	d.op = op;
	d.event = ev;
	d.value = value;
	return d;
}

static inline int as_submit(int fd, uint32_t stream, const struct accel_desc *d,
			    uint32_t n, uint64_t *seq)
{
	struct accel_submit s = {
		.stream = stream, .count = n, .descs = (uintptr_t)d,
	};
	int r = as_ioctl(fd, ACCEL_IOC_SUBMIT, &s);

	if (seq)
		*seq = s.seq;
	return r;
}

static inline int as_sync(int fd, uint32_t stream, uint64_t seq,
			  uint64_t timeout_ns)
{
	struct accel_stream_sync s = {
		.handle = stream, .seq = seq, .timeout_ns = timeout_ns,
	};

	return as_ioctl(fd, ACCEL_IOC_STREAM_SYNC, &s);
}

static inline int as_query(int fd, uint32_t stream, struct accel_stream_query *q)
{
	memset(q, 0, sizeof(*q));
	q->handle = stream;
	return as_ioctl(fd, ACCEL_IOC_STREAM_QUERY, q);
}

static inline int as_wait1(int fd, uint32_t ev, uint64_t value,
			   uint64_t timeout_ns)
{
	struct accel_wait_entry e = { .event = ev, .value = value };
	struct accel_wait w = {
		.entries = (uintptr_t)&e, .count = 1, .timeout_ns = timeout_ns,
	};

	return as_ioctl(fd, ACCEL_IOC_WAIT, &w);
}

/* Deterministic byte pattern: byte i of buffer @tag. */
static inline uint8_t pat(uint32_t tag, uint64_t i)
{
	uint64_t x = (i + 1) * 0x9E3779B97F4A7C15ull ^ ((uint64_t)tag << 32);

	return (uint8_t)(x >> 29);
}

static inline void fill(void *p, uint64_t len, uint32_t tag)
{
	uint8_t *b = p;
	uint64_t i;

	for (i = 0; i < len; i++)
		b[i] = pat(tag, i);
}

/* Index of the first byte that differs from pattern @tag at @off, or -1. */
static inline long long check_pat(const void *p, uint64_t len, uint32_t tag,
				  uint64_t off)
{
	const uint8_t *b = p;
	uint64_t i;

	for (i = 0; i < len; i++)
		if (b[i] != pat(tag, off + i))
			return (long long)i;
	return -1;
}

static inline void *map_anon(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

#endif /* ACCEL_FAULT_UTIL_H */
