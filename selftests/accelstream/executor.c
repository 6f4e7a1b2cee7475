// SPDX-License-Identifier: GPL-2.0
/*
 * The userspace executor protocol, driven by a CPU executor: attach, fetch
 * in order per stream with regions resolved, complete, detach, and what
 * happens to fetched work when the executor goes away.
 */
#include <signal.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "accel_helpers.h"

static int exec_attach(int fd)
{
	struct accel_exec_attach a = { 0 };

	return xioctl(fd, ACCEL_IOC_EXEC_ATTACH, &a);
}

static int exec_detach(int fd)
{
	struct accel_exec_attach a = { 0 };

	return xioctl(fd, ACCEL_IOC_EXEC_DETACH, &a);
}

/* Fetch up to @max items, polling until @timeout_ns (absolute). */
static int exec_fetch(int fd, struct accel_exec_item *items, uint32_t max,
		      uint64_t timeout_ns, uint32_t *count)
{
	struct accel_exec_fetch f = {
		.items = (uintptr_t)items, .max_items = max,
		.timeout_ns = timeout_ns,
	};
	int ret = xioctl(fd, ACCEL_IOC_EXEC_FETCH, &f);

	*count = f.count;
	return ret;
}

static int exec_done(int fd, uint32_t stream, uint64_t seq, int32_t status)
{
	struct accel_exec_done d = { .stream = stream, .seq = seq,
				     .status = status };
	struct accel_exec_complete c = { .entries = (uintptr_t)&d, .count = 1 };

	return xioctl(fd, ACCEL_IOC_EXEC_COMPLETE, &c);
}

FIXTURE(exec) {
	int fd;
	long pg;
	uint8_t *a, *b;
	uint32_t ra, rb, s1, s2;
};

FIXTURE_SETUP(exec)
{
	self->fd = accel_open();
	if (self->fd < 0)
		SETUP_SKIP("%s: %s", ACCEL_DEV, strerror(errno));
	self->pg = page_size();
	self->a = anon_map(4 * self->pg);
	self->b = anon_map(4 * self->pg);
	ASSERT_NE(NULL, self->a);
	ASSERT_NE(NULL, self->b);
	fill_random(self->a, 4 * self->pg, 7);
	memset(self->b, 0, 4 * self->pg);
	ASSERT_EQ(0, accel_register(self->fd, self->a + 5, 3 * self->pg, 0, &self->ra));
	ASSERT_EQ(0, accel_register(self->fd, self->b + 9, 3 * self->pg, 0, &self->rb));
	ASSERT_EQ(0, accel_stream(self->fd, 0, 0, &self->s1));
	ASSERT_EQ(0, accel_stream(self->fd, 0, 0, &self->s2));
}

FIXTURE_TEARDOWN(exec)
{
	if (self->fd >= 0)
		close(self->fd);
}

TEST_F(exec, attach_detach_errnos)
{
	struct accel_exec_item it;
	uint32_t n = 99;
	struct accel_exec_attach bad = { .flags = 1 };

	EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_EXEC_DETACH, &(struct accel_exec_attach){ 0 }));
	EXPECT_EQ(ENXIO, errno);
	EXPECT_EQ(-ENXIO, exec_fetch(self->fd, &it, 1, 0, &n));
	EXPECT_EQ(-ENXIO, exec_done(self->fd, self->s1, 1, 0));
	EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_EXEC_ATTACH, &bad));
	EXPECT_EQ(EINVAL, errno);
	ASSERT_EQ(0, exec_attach(self->fd));
	EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_EXEC_ATTACH, &(struct accel_exec_attach){ 0 }));
	EXPECT_EQ(EBUSY, errno);
	/* Nothing queued: a poll times out with nothing written. */
	EXPECT_EQ(-ETIME, exec_fetch(self->fd, &it, 1, 0, &n));
	EXPECT_EQ(0, n);
	EXPECT_EQ(0, exec_detach(self->fd));
	EXPECT_EQ(-ENXIO, exec_detach(self->fd));
}

TEST_F(exec, cpu_executor_copies)
{
	struct accel_exec_item it[4];
	struct accel_stream_query q;
	uint32_t n = 0;
	uint64_t seq;

	ASSERT_EQ(0, exec_attach(self->fd));
	ASSERT_EQ(0, accel_submit1(self->fd, self->s1,
				   d_copy(self->rb, 3, self->ra, 1, 2 * self->pg), &seq));
	EXPECT_EQ(1, seq);
	/* The soft engine runs nothing while an executor is attached. */
	ASSERT_EQ(0, accel_query(self->fd, self->s1, &q));
	EXPECT_EQ(0, q.completed);
	EXPECT_EQ(-EBUSY, accel_release(self->fd, self->ra, 0));

	memset(it, 0xcc, sizeof(it));
	ASSERT_EQ(0, exec_fetch(self->fd, it, 4, deadline_in(SURE_NS), &n));
	ASSERT_EQ(1, n);
	EXPECT_EQ(self->s1, it[0].stream);
	EXPECT_EQ(0, it[0].status);
	EXPECT_EQ(1, it[0].seq);
	EXPECT_EQ(ACCEL_OP_COPY, it[0].desc.op);
	EXPECT_EQ(ACCEL_REGION_HOST, it[0].dst_kind);
	EXPECT_EQ(ACCEL_REGION_HOST, it[0].src_kind);
	EXPECT_EQ((uintptr_t)(self->b + 9 + 3), it[0].dst_addr);
	EXPECT_EQ((uintptr_t)(self->a + 5 + 1), it[0].src_addr);
	EXPECT_EQ(0, it[0].wait_stream);
	EXPECT_EQ(0, it[0].pad);
	EXPECT_EQ(0, it[0].wait_seq);
	/* Handed out once only. */
	EXPECT_EQ(-ETIME, exec_fetch(self->fd, it, 4, 0, &n));

	memcpy((void *)(uintptr_t)it[0].dst_addr,
	       (void *)(uintptr_t)it[0].src_addr, it[0].desc.length);
	EXPECT_EQ(0, exec_done(self->fd, self->s1, 1, 0));
	EXPECT_EQ(0, accel_drain(self->fd, self->s1));
	EXPECT_EQ(0, memcmp(self->b + 12, self->a + 6, 2 * self->pg));
	EXPECT_EQ(0, accel_release(self->fd, self->ra, 0));
	/* Retired work cannot be completed twice. */
	EXPECT_EQ(-EINVAL, exec_done(self->fd, self->s1, 1, 0));
}

TEST_F(exec, complete_errnos)
{
	struct accel_exec_item it[4];
	struct accel_exec_done d = { .stream = self->s1, .seq = 1, .status = 1 };
	struct accel_exec_complete c = { .entries = (uintptr_t)&d, .count = 1 };
	uint32_t n;

	ASSERT_EQ(0, exec_attach(self->fd));
	ASSERT_EQ(0, accel_submit1(self->fd, self->s1, d_nop(), NULL));
	ASSERT_EQ(0, accel_submit1(self->fd, self->s1, d_nop(), NULL));
	/* Not fetched yet. */
	EXPECT_EQ(-EINVAL, exec_done(self->fd, self->s1, 1, 0));
	ASSERT_EQ(0, exec_fetch(self->fd, it, 1, deadline_in(SURE_NS), &n));
	ASSERT_EQ(1, n);
	EXPECT_EQ(-EINVAL, exec_done(self->fd, self->s1, 2, 0));
	EXPECT_EQ(-ENOENT, exec_done(self->fd, BAD_HANDLE, 1, 0));
	EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_EXEC_COMPLETE, &c));
	EXPECT_EQ(EINVAL, errno);	/* positive status */
	c.count = 0;
	EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_EXEC_COMPLETE, &c));
	EXPECT_EQ(EINVAL, errno);
	c.count = 1;
	c.entries = 8;
	EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_EXEC_COMPLETE, &c));
	EXPECT_EQ(EFAULT, errno);
	EXPECT_EQ(0, exec_done(self->fd, self->s1, 1, 0));
}

TEST_F(exec, stream_wait_after_its_record)
{
	struct accel_exec_item it[8];
	uint32_t ev, n, i, rec_at = 99, wait_at = 99;
	uint64_t rec_seq, wait_seq;

	ASSERT_EQ(0, accel_event(self->fd, 0, &ev));
	ASSERT_EQ(0, exec_attach(self->fd));
	/* s2 is created second, so a single pass visits s1 first... */
	ASSERT_EQ(0, accel_submit1(self->fd, self->s1, d_nop(), NULL));
	ASSERT_EQ(0, accel_submit1(self->fd, self->s1, d_record(ev), &rec_seq));
	ASSERT_EQ(0, accel_submit1(self->fd, self->s2, d_stream_wait(ev), &wait_seq));
	ASSERT_EQ(0, exec_fetch(self->fd, it, 8, deadline_in(SURE_NS), &n));
	ASSERT_EQ(3, n);
	for (i = 0; i < n; i++) {
		if (it[i].desc.op == ACCEL_OP_EVENT_RECORD)
			rec_at = i;
		if (it[i].desc.op == ACCEL_OP_STREAM_WAIT)
			wait_at = i;
	}
	ASSERT_LT(rec_at, wait_at);
	EXPECT_EQ(self->s1, it[wait_at].wait_stream);
	EXPECT_EQ(rec_seq, it[wait_at].wait_seq);
	EXPECT_EQ(self->s2, it[wait_at].stream);
	EXPECT_EQ(wait_seq, it[wait_at].seq);

	/* The executor may complete the wait first: ordering is its job. */
	EXPECT_EQ(0, exec_done(self->fd, self->s1, rec_seq, 0));
	EXPECT_EQ(0, exec_done(self->fd, self->s2, wait_seq, 0));
	EXPECT_EQ(0, accel_drain(self->fd, self->s1));
	EXPECT_EQ(0, accel_drain(self->fd, self->s2));
}

TEST_F(exec, wait_on_unfetched_record_is_held_back)
{
	struct accel_exec_item it[4];
	struct gate g;
	uint32_t ev, n;

	ASSERT_EQ(0, accel_event(self->fd, 0, &ev));
	/* s1: gate, then record; s2 waits on that record. */
	ASSERT_EQ(0, gate_on(self->fd, &g, self->s1));
	ASSERT_EQ(0, accel_submit1(self->fd, self->s1, d_record(ev), NULL));
	ASSERT_EQ(0, accel_submit1(self->fd, self->s2, d_stream_wait(ev), NULL));
	ASSERT_EQ(0, exec_attach(self->fd));
	/* The gate is shut: neither the record nor the wait goes out. */
	EXPECT_EQ(-ETIME, exec_fetch(self->fd, it, 4, 0, &n));
	ASSERT_EQ(0, gate_open(self->fd, &g));
	ASSERT_EQ(0, exec_fetch(self->fd, it, 4, deadline_in(SURE_NS), &n));
	ASSERT_EQ(3, n);
	EXPECT_EQ(ACCEL_OP_HOST_WAIT, it[0].desc.op);
	EXPECT_EQ(ACCEL_OP_EVENT_RECORD, it[1].desc.op);
	EXPECT_EQ(ACCEL_OP_STREAM_WAIT, it[2].desc.op);
	EXPECT_EQ(0, exec_done(self->fd, self->s1, it[1].seq, 0));
	EXPECT_EQ(0, exec_done(self->fd, self->s2, it[2].seq, 0));
}

TEST_F(exec, host_signal_on_complete)
{
	struct accel_exec_item it[2];
	struct accel_event_query eq;
	uint32_t u, n;

	ASSERT_EQ(0, accel_event(self->fd, ACCEL_EVENT_USER, &u));
	ASSERT_EQ(0, exec_attach(self->fd));
	ASSERT_EQ(0, accel_submit1(self->fd, self->s1, d_host_signal(u, 4), NULL));
	ASSERT_EQ(0, exec_fetch(self->fd, it, 2, deadline_in(SURE_NS), &n));
	ASSERT_EQ(1, n);
	ASSERT_EQ(0, accel_event_query(self->fd, u, &eq));
	EXPECT_EQ(0, eq.value);		/* fetched is not done */
	EXPECT_EQ(0, exec_done(self->fd, self->s1, it[0].seq, 0));
	ASSERT_EQ(0, accel_event_query(self->fd, u, &eq));
	EXPECT_EQ(4, eq.value);
}

TEST_F(exec, failure_is_sticky_and_cancels_the_rest)
{
	struct accel_exec_item it[4];
	struct accel_stream_query q;
	uint32_t n;

	ASSERT_EQ(0, exec_attach(self->fd));
	ASSERT_EQ(0, accel_submit1(self->fd, self->s1, d_nop(), NULL));
	ASSERT_EQ(0, exec_fetch(self->fd, it, 4, deadline_in(SURE_NS), &n));
	ASSERT_EQ(1, n);
	ASSERT_EQ(0, accel_submit1(self->fd, self->s1, d_nop(), NULL));
	EXPECT_EQ(0, exec_done(self->fd, self->s1, 1, -EIO));
	ASSERT_EQ(0, accel_query(self->fd, self->s1, &q));
	EXPECT_EQ(-EIO, q.error);
	EXPECT_EQ(2, q.completed);	/* the unfetched one went too */
	EXPECT_EQ(-EIO, accel_sync(self->fd, self->s1, 0, deadline_in(SURE_NS)));
	EXPECT_EQ(-EIO, accel_submit1(self->fd, self->s1, d_nop(), NULL));
}

TEST_F(exec, detach_fails_fetched_work_and_resumes_the_soft_engine)
{
	struct accel_exec_item it[4];
	struct accel_stream_query q;
	uint32_t n;

	ASSERT_EQ(0, exec_attach(self->fd));
	ASSERT_EQ(0, accel_submit1(self->fd, self->s1, d_nop(), NULL));
	ASSERT_EQ(0, exec_fetch(self->fd, it, 4, deadline_in(SURE_NS), &n));
	ASSERT_EQ(1, n);
	ASSERT_EQ(0, accel_submit1(self->fd, self->s2,
				   d_copy(self->rb, 0, self->ra, 0, self->pg), NULL));
	EXPECT_EQ(0, exec_detach(self->fd));
	EXPECT_EQ(-EIO, accel_sync(self->fd, self->s1, 0, deadline_in(SURE_NS)));
	/* s2's copy was never fetched: the soft engine runs it. */
	EXPECT_EQ(0, accel_drain(self->fd, self->s2));
	ASSERT_EQ(0, accel_query(self->fd, self->s2, &q));
	EXPECT_EQ(0, q.error);
	EXPECT_EQ(0, memcmp(self->b + 9, self->a + 5, self->pg));
}

TEST_F(exec, external_regions)
{
	struct accel_exec_item it[2];
	uint32_t ext, ext2, n;
	const uint64_t dev = 0x7f0000000000ULL;

	ASSERT_EQ(0, accel_register(self->fd, (void *)(uintptr_t)dev, 1 << 20,
				    ACCEL_MEM_EXTERNAL, &ext));
	EXPECT_EQ(-EEXIST, accel_register(self->fd, (void *)(uintptr_t)(dev + 4096),
					  4096, ACCEL_MEM_EXTERNAL, &ext2));
	/* No executor, nobody can reach it. */
	EXPECT_EQ(-ENXIO, accel_submit1(self->fd, self->s1,
					d_copy(ext, 0, self->ra, 0, 64), NULL));
	ASSERT_EQ(0, exec_attach(self->fd));
	EXPECT_EQ(-EINVAL, accel_submit1(self->fd, self->s1,
					 d_copy(ext, (1 << 20) - 8, self->ra, 0, 64), NULL));
	ASSERT_EQ(0, accel_submit1(self->fd, self->s1,
				   d_copy(ext, 100, self->ra, 2, 64), NULL));
	ASSERT_EQ(0, exec_fetch(self->fd, it, 2, deadline_in(SURE_NS), &n));
	ASSERT_EQ(1, n);
	EXPECT_EQ(ACCEL_REGION_EXTERNAL, it[0].dst_kind);
	EXPECT_EQ(dev + 100, it[0].dst_addr);
	EXPECT_EQ(ACCEL_REGION_HOST, it[0].src_kind);
	EXPECT_EQ(0, exec_done(self->fd, self->s1, it[0].seq, 0));
	EXPECT_EQ(0, accel_release(self->fd, ext, 0));
}

TEST_F(exec, death_with_fetched_work_releases_pins)
{
	long long pins0 = pins_held(), v;
	int status;
	pid_t pid;

	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct accel_exec_item it[2];
		uint32_t ra, s, n;
		int fd = accel_open();
		void *buf = anon_map(16 * self->pg);

		if (fd < 0 || !buf || accel_register(fd, buf, 16 * self->pg, 0, &ra) ||
		    accel_stream(fd, 0, 0, &s) || exec_attach(fd) ||
		    accel_submit1(fd, s, d_copy(ra, 0, ra, 8 * self->pg, self->pg), NULL) ||
		    exec_fetch(fd, it, 2, deadline_in(SURE_NS), &n) || n != 1)
			_exit(1);
		raise(SIGKILL);	/* dies holding fetched work */
		_exit(2);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFSIGNALED(status));
	v = wait_pins(pins0, 5000);
	EXPECT_EQ(pins0, v);
}

ACCEL_HARNESS_MAIN
