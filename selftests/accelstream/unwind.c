// SPDX-License-Identifier: GPL-2.0
/*
 * accelstream: a create ioctl whose reply cannot reach userspace creates
 * nothing. The request is written into a page that is then made
 * read-only, so the driver reads it (copy_from_user() works) and cannot
 * write its answer (copy_to_user() fails): the ioctl returns -EFAULT and
 * the context is as it was, with no object counted, listed, pinned or
 * charged, no handle that finds anything, and no new file descriptor.
 */
#include <dirent.h>

#include "kselftest_harness.h"
#include "accel_helpers.h"

/* What a failed create must leave as it was. */
struct ctx_state {
	struct accel_ctx_info info;	/* the caller's context */
	uint32_t stream_entries;	/* ACCEL_QUERY_STREAMS count */
	uint32_t region_entries;	/* ACCEL_QUERY_REGIONS count */
	long long vm_pin_kb;		/* VmPin of this process */
	long long pins;			/* pins held system-wide */
	int fds;			/* open file descriptors */
};

static int query_count(int fd, uint32_t kind, uint32_t entry_size,
		       void *entries, uint32_t capacity, uint32_t *count)
{
	struct accel_query q = {
		.kind = kind, .entry_size = entry_size,
		.capacity = capacity, .entries = (uintptr_t)entries,
		.count = 0xccccccccu,
	};
	int ret = xioctl(fd, ACCEL_IOC_QUERY, &q);

	if (!ret)
		*count = q.count;
	return ret;
}

/* The ACCEL_CTX_SELF entry of ACCEL_QUERY_CONTEXTS. */
static int self_info(int fd, struct accel_ctx_info *out)
{
	struct accel_ctx_info *c;
	uint32_t n, room, i;
	int ret;

	ret = query_count(fd, ACCEL_QUERY_CONTEXTS, sizeof(*c), NULL, 0, &n);
	if (ret)
		return ret;
	room = n + 8;
	c = malloc(room * sizeof(*c));
	if (!c)
		return -ENOMEM;
	memset(c, 0xcc, room * sizeof(*c));
	ret = query_count(fd, ACCEL_QUERY_CONTEXTS, sizeof(*c), c, room, &n);
	if (!ret)
		ret = -ENOENT;
	for (i = 0; ret == -ENOENT && i < n && i < room; i++) {
		if (c[i].flags & ACCEL_CTX_SELF) {
			*out = c[i];
			ret = 0;
		}
	}
	free(c);
	return ret;
}

static int open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n - 1;	/* the directory's own descriptor */
}

static void take_state(struct __test_metadata *_metadata, int fd,
		       struct ctx_state *s)
{
	ASSERT_EQ(0, self_info(fd, &s->info));
	ASSERT_EQ(0, query_count(fd, ACCEL_QUERY_STREAMS,
				 sizeof(struct accel_stream_info), NULL, 0,
				 &s->stream_entries));
	ASSERT_EQ(0, query_count(fd, ACCEL_QUERY_REGIONS,
				 sizeof(struct accel_region_info), NULL, 0,
				 &s->region_entries));
	s->vm_pin_kb = kv_get("/proc/self/status", "VmPin:");
	s->pins = pins_held();
	s->fds = open_fds();
	ASSERT_LE(0, s->fds);
}

static void expect_same_state(struct __test_metadata *_metadata,
			      const struct ctx_state *a,
			      const struct ctx_state *b)
{
	EXPECT_EQ(a->info.streams, b->info.streams);
	EXPECT_EQ(a->info.events, b->info.events);
	EXPECT_EQ(a->info.regions, b->info.regions);
	EXPECT_EQ(a->info.queued, b->info.queued);
	EXPECT_EQ(a->info.pinned_bytes, b->info.pinned_bytes);
	EXPECT_EQ(a->info.device_bytes, b->info.device_bytes);
	EXPECT_EQ(a->stream_entries, b->stream_entries);
	EXPECT_EQ(a->region_entries, b->region_entries);
	EXPECT_EQ(a->vm_pin_kb, b->vm_pin_kb);
	EXPECT_EQ(a->pins, b->pins);
	EXPECT_EQ(a->fds, b->fds);
}

/*
 * Issue @cmd with a copy of @req (@size bytes, its output fields already
 * 0xcc) in a read-only page: expect -EFAULT and the page untouched.
 */
static void expect_reply_efault(struct __test_metadata *_metadata, int fd,
				unsigned long cmd, const void *req,
				size_t size)
{
	long ps = page_size();
	void *p;

	p = mmap(NULL, ps, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, p);
	memcpy(p, req, size);
	ASSERT_EQ(0, mprotect(p, ps, PROT_READ));

	EXPECT_EQ(-1, ioctl(fd, cmd, p));
	EXPECT_EQ(EFAULT, errno);
	EXPECT_EQ(0, memcmp(p, req, size));
	munmap(p, ps);
}

ACCEL_FIXTURE(unwind);

/*
 * Handles are one counter per context, and the failed call took the
 * number before the one a following create gets: it must find nothing.
 */
static void expect_no_handle(struct __test_metadata *_metadata, int fd,
			     unsigned long destroy_cmd, uint32_t next)
{
	/* accel_handle and accel_mem_release: the handle, then zeroes. */
	uint32_t req[4] = { next - 1 };

	EXPECT_EQ(-1, ioctl(fd, destroy_cmd, req));
	EXPECT_EQ(ENOENT, errno);
}

TEST_F(unwind, stream_create)
{
	struct accel_stream_create c;
	struct ctx_state before, after;
	uint32_t s;

	memset(&c, 0xcc, sizeof(c));
	c.flags = 0;
	c.priority = 0;
	c.pad = 0;
	take_state(_metadata, self->fd, &before);
	expect_reply_efault(_metadata, self->fd, ACCEL_IOC_STREAM_CREATE,
			    &c, sizeof(c));
	take_state(_metadata, self->fd, &after);
	expect_same_state(_metadata, &before, &after);

	ASSERT_EQ(0, accel_stream(self->fd, 0, 0, &s));
	take_state(_metadata, self->fd, &after);
	EXPECT_EQ(before.info.streams + 1, after.info.streams);
	EXPECT_EQ(before.stream_entries + 1, after.stream_entries);
	expect_no_handle(_metadata, self->fd, ACCEL_IOC_STREAM_DESTROY, s);
	EXPECT_EQ(0, accel_stream_destroy(self->fd, s));
}

TEST_F(unwind, event_create)
{
	struct accel_event_create c;
	struct ctx_state before, after;
	uint32_t ev;

	memset(&c, 0xcc, sizeof(c));
	c.flags = ACCEL_EVENT_USER;
	take_state(_metadata, self->fd, &before);
	expect_reply_efault(_metadata, self->fd, ACCEL_IOC_EVENT_CREATE,
			    &c, sizeof(c));
	take_state(_metadata, self->fd, &after);
	expect_same_state(_metadata, &before, &after);

	ASSERT_EQ(0, accel_event(self->fd, ACCEL_EVENT_USER, &ev));
	take_state(_metadata, self->fd, &after);
	EXPECT_EQ(before.info.events + 1, after.info.events);
	expect_no_handle(_metadata, self->fd, ACCEL_IOC_EVENT_DESTROY, ev);
	EXPECT_EQ(0, accel_event_destroy(self->fd, ev));
}

static void reg_request(struct accel_mem_register *r, const void *addr,
			uint64_t size, uint32_t flags)
{
	memset(r, 0xcc, sizeof(*r));
	r->addr = (uintptr_t)addr;
	r->size = size;
	r->flags = flags;
}

TEST_F(unwind, mem_register)
{
	size_t size = 4 * page_size();
	struct ctx_state before, after;
	struct accel_mem_register r;
	uint32_t h;
	void *buf;

	buf = anon_map(size);
	ASSERT_NE(NULL, buf);
	reg_request(&r, buf, size, 0);
	take_state(_metadata, self->fd, &before);
	expect_reply_efault(_metadata, self->fd, ACCEL_IOC_MEM_REGISTER,
			    &r, sizeof(r));
	take_state(_metadata, self->fd, &after);
	expect_same_state(_metadata, &before, &after);

	/* The range is not registered: registering it again works. */
	ASSERT_EQ(0, accel_register(self->fd, buf, size, 0, &h));
	take_state(_metadata, self->fd, &after);
	EXPECT_EQ(before.info.regions + 1, after.info.regions);
	EXPECT_EQ(before.region_entries + 1, after.region_entries);
	EXPECT_EQ(before.info.pinned_bytes + size, after.info.pinned_bytes);
	expect_no_handle(_metadata, self->fd, ACCEL_IOC_MEM_RELEASE, h);
	EXPECT_EQ(0, accel_release(self->fd, h, 0));
	munmap(buf, size);
}

TEST_F(unwind, mem_register_external)
{
	struct ctx_state before, after;
	struct accel_mem_register r;
	uint64_t addr = 1ULL << 40, size = 1 << 20;
	uint32_t h;

	reg_request(&r, (void *)(uintptr_t)addr, size, ACCEL_MEM_EXTERNAL);
	take_state(_metadata, self->fd, &before);
	expect_reply_efault(_metadata, self->fd, ACCEL_IOC_MEM_REGISTER,
			    &r, sizeof(r));
	take_state(_metadata, self->fd, &after);
	expect_same_state(_metadata, &before, &after);

	/* No overlap with a leftover: the same range registers. */
	ASSERT_EQ(0, accel_register(self->fd, (void *)(uintptr_t)addr, size,
				    ACCEL_MEM_EXTERNAL, &h));
	take_state(_metadata, self->fd, &after);
	EXPECT_EQ(before.info.regions + 1, after.info.regions);
	expect_no_handle(_metadata, self->fd, ACCEL_IOC_MEM_RELEASE, h);
	EXPECT_EQ(0, accel_release(self->fd, h, 0));
}

static void alloc_case(struct __test_metadata *_metadata, int fd,
		       uint32_t flags)
{
	uint64_t size = 3 * page_size();
	struct ctx_state before, after;
	struct accel_mem_alloc a;
	uint32_t h;

	memset(&a, 0xcc, sizeof(a));
	a.size = size;
	a.flags = flags;
	take_state(_metadata, fd, &before);
	expect_reply_efault(_metadata, fd, ACCEL_IOC_MEM_ALLOC, &a, sizeof(a));
	take_state(_metadata, fd, &after);
	expect_same_state(_metadata, &before, &after);

	ASSERT_EQ(0, accel_alloc(fd, size, flags, &h, NULL));
	take_state(_metadata, fd, &after);
	EXPECT_EQ(before.info.regions + 1, after.info.regions);
	EXPECT_EQ(before.region_entries + 1, after.region_entries);
	if (flags == ACCEL_MEM_HOST) {
		EXPECT_EQ(before.info.pinned_bytes + size,
			  after.info.pinned_bytes);
	} else {
		EXPECT_EQ(before.info.device_bytes + size,
			  after.info.device_bytes);
	}
	expect_no_handle(_metadata, fd, ACCEL_IOC_MEM_RELEASE, h);
	EXPECT_EQ(0, accel_release(fd, h, 0));
}

TEST_F(unwind, mem_alloc_host)
{
	REQUIRE_CAP(ACCEL_CAP_HOST_ALLOC);
	alloc_case(_metadata, self->fd, ACCEL_MEM_HOST);
}

TEST_F(unwind, mem_alloc_device)
{
	REQUIRE_CAP(ACCEL_CAP_DEVICE_MEM);
	alloc_case(_metadata, self->fd, ACCEL_MEM_DEVICE);
}

/* A recorded event whose point is pending behind a gate. */
static void pending_event(struct __test_metadata *_metadata, int fd,
			  struct gate *g, uint32_t *ev)
{
	ASSERT_EQ(0, gate_init(fd, g));
	ASSERT_EQ(0, accel_event(fd, 0, ev));
	ASSERT_EQ(0, accel_record(fd, *ev, g->stream, NULL));
}

TEST_F(unwind, event_export)
{
	struct ctx_state before, after;
	struct accel_event_export x;
	struct gate g;
	uint32_t ev;

	REQUIRE_CAP(ACCEL_CAP_EVENT_FD);
	pending_event(_metadata, self->fd, &g, &ev);
	memset(&x, 0xcc, sizeof(x));
	x.event = ev;
	x.flags = 0;
	x.pad = 0;
	take_state(_metadata, self->fd, &before);
	expect_reply_efault(_metadata, self->fd, ACCEL_IOC_EVENT_EXPORT,
			    &x, sizeof(x));
	take_state(_metadata, self->fd, &after);
	expect_same_state(_metadata, &before, &after);

	memset(&x, 0, sizeof(x));
	x.event = ev;
	ASSERT_EQ(0, xioctl(self->fd, ACCEL_IOC_EVENT_EXPORT, &x));
	take_state(_metadata, self->fd, &after);
	EXPECT_EQ(before.fds + 1, after.fds);
	EXPECT_EQ(0, close(x.fd));
	EXPECT_EQ(0, gate_open(self->fd, &g));
	EXPECT_EQ(0, accel_drain(self->fd, g.stream));
}

TEST_F(unwind, event_import)
{
	struct accel_event_export x = {};
	struct ctx_state before, after;
	struct accel_event_import im;
	uint32_t ev, got;
	struct gate g;

	REQUIRE_CAP(ACCEL_CAP_EVENT_FD);
	pending_event(_metadata, self->fd, &g, &ev);
	x.event = ev;
	ASSERT_EQ(0, xioctl(self->fd, ACCEL_IOC_EVENT_EXPORT, &x));

	memset(&im, 0xcc, sizeof(im));
	im.fd = x.fd;
	im.flags = 0;
	im.pad = 0;
	take_state(_metadata, self->fd, &before);
	expect_reply_efault(_metadata, self->fd, ACCEL_IOC_EVENT_IMPORT,
			    &im, sizeof(im));
	take_state(_metadata, self->fd, &after);
	expect_same_state(_metadata, &before, &after);

	memset(&im, 0, sizeof(im));
	im.fd = x.fd;
	ASSERT_EQ(0, xioctl(self->fd, ACCEL_IOC_EVENT_IMPORT, &im));
	got = im.handle;
	take_state(_metadata, self->fd, &after);
	EXPECT_EQ(before.info.events + 1, after.info.events);
	expect_no_handle(_metadata, self->fd, ACCEL_IOC_EVENT_DESTROY, got);

	/* The import that took still completes with its point. */
	EXPECT_EQ(0, gate_open(self->fd, &g));
	EXPECT_EQ(0, accel_wait1(self->fd, got, 0, deadline_in(SURE_NS)));
	EXPECT_EQ(0, accel_event_destroy(self->fd, got));
	EXPECT_EQ(0, close(x.fd));
}

ACCEL_HARNESS_MAIN
