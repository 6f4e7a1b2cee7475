// SPDX-License-Identifier: GPL-2.0
/*
 * accelstream: object and buffer lifetimes. Closing with work queued
 * (including a stream blocked forever), munmap of registered memory with
 * copies queued, use from another process, SIGKILL mid-copy. After each,
 * no pin is left (nr_foll_pin_acquired == nr_foll_pin_released once this
 * process holds no accelstream file) and the debugfs summary is back to
 * zero.
 */
#include <signal.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "accel_helpers.h"

/* Every test ends by reading the debugfs summary. */
ACCEL_FIXTURE_SUMMARY(lifetime);

/* Close the fixture's file, then expect nothing of accelstream left. */
#define EXPECT_QUIESCENT() do {						\
	long long __v = 0;						\
	const char *__bad;						\
									\
	if (self->fd >= 0) {						\
		close(self->fd);					\
		self->fd = -1;						\
	}								\
	__bad = wait_quiescent(10000, &__v);				\
	EXPECT_TRUE(__bad == NULL) {					\
		TH_LOG("%s still %lld", __bad, __v);			\
	}								\
} while (0)

/* Work on @fd that cannot finish: a stream blocked on a user event. */
static int queue_forever(int fd, uint32_t dst, uint32_t src, uint64_t len)
{
	uint32_t s, u;
	int ret;

	ret = accel_stream(fd, 0, 0, &s);
	if (!ret)
		ret = accel_event(fd, ACCEL_EVENT_USER, &u);
	if (!ret)
		ret = accel_submit1(fd, s, d_host_wait(u, 1), NULL);
	if (!ret && len)
		ret = accel_submit1(fd, s, d_copy(dst, 0, src, 0, len), NULL);
	return ret;
}

TEST_F(lifetime, baseline_quiescent)
{
	EXPECT_QUIESCENT();
}

TEST_F_TIMEOUT(lifetime, close_with_work_queued, 120)
{
	const size_t n = 8 << 20;
	uint8_t *a = anon_map(n), *b = anon_map(n);
	uint32_t ha, hb, s1, s2, e;
	struct accel_desc d[16];
	int fd2, i;

	ASSERT_NE(NULL, a);
	ASSERT_NE(NULL, b);
	fill_random(a, n, 1);
	fd2 = accel_open();
	ASSERT_LE(0, fd2);
	ASSERT_EQ(0, accel_register(fd2, a, n, 0, &ha));
	ASSERT_EQ(0, accel_register(fd2, b, n, 0, &hb));
	/* A stream blocked forever, with a copy behind it. */
	ASSERT_EQ(0, queue_forever(fd2, hb, ha, n));
	/* A stream with many copies in flight. */
	ASSERT_EQ(0, accel_stream(fd2, 0, 0, &s1));
	for (i = 0; i < 16; i++)
		d[i] = i % 2 ? d_copy(ha, 0, hb, 0, n) : d_copy(hb, 0, ha, 0, n);
	ASSERT_EQ(0, accel_submit(fd2, s1, d, 16, NULL));
	/* A stream waiting on an event recorded behind the blocked one. */
	ASSERT_EQ(0, accel_event(fd2, 0, &e));
	{
		uint32_t sb, u;

		ASSERT_EQ(0, accel_stream(fd2, 0, 0, &sb));
		ASSERT_EQ(0, accel_event(fd2, ACCEL_EVENT_USER, &u));
		ASSERT_EQ(0, accel_submit1(fd2, sb, d_host_wait(u, 1), NULL));
		ASSERT_EQ(0, accel_record(fd2, e, sb, NULL));
	}
	ASSERT_EQ(0, accel_stream(fd2, 0, 0, &s2));
	ASSERT_EQ(0, accel_submit1(fd2, s2, d_stream_wait(e), NULL));
	ASSERT_EQ(0, accel_submit1(fd2, s2, d_copy(hb, 0, ha, 0, n), NULL));

	EXPECT_EQ(0, close(fd2));
	EXPECT_QUIESCENT();
	munmap(a, n);
	munmap(b, n);
}

/* A host allocation's mapping outlives the file; the memory goes after. */
TEST_F(lifetime, host_alloc_mapping_outlives_close)
{
	long ps = page_size();
	uint32_t h, s, hr;
	uint64_t off;
	uint8_t *m, *r = anon_map(4 * ps);

	REQUIRE_CAP(ACCEL_CAP_HOST_ALLOC);
	ASSERT_NE(NULL, r);
	fill_random(r, 4 * ps, 4);
	ASSERT_EQ(0, accel_alloc(self->fd, 4 * ps, ACCEL_MEM_HOST, &h, &off));
	m = mmap(NULL, 4 * ps, PROT_READ | PROT_WRITE, MAP_SHARED, self->fd, off);
	ASSERT_NE(MAP_FAILED, m);
	ASSERT_EQ(0, accel_register(self->fd, r, 4 * ps, 0, &hr));
	ASSERT_EQ(0, accel_stream(self->fd, 0, 0, &s));
	ASSERT_EQ(0, accel_submit1(self->fd, s, d_copy(h, 0, hr, 0, 4 * ps), NULL));
	ASSERT_EQ(0, accel_drain(self->fd, s));
	close(self->fd);
	self->fd = -1;
	/* Still the copied data, still writable. */
	EXPECT_EQ(-1, first_diff(m, r, 4 * ps));
	memset(m, 0x42, 4 * ps);
	EXPECT_TRUE(all_bytes(m, 4 * ps, 0x42));
	munmap(m, 4 * ps);
	EXPECT_QUIESCENT();
	munmap(r, 4 * ps);
}

/*
 * munmap of registered buffers with copies still queued: the pages stay
 * pinned, so the copies read and write the old pages, even when a new
 * mapping takes the same address.
 */
TEST_F(lifetime, munmap_with_copies_queued)
{
	const size_t n = 1 << 20;
	uint8_t *src = anon_map(n), *mid = anon_map(n), *out = anon_map(n);
	uint8_t *ref = malloc(n), *again;
	uint32_t hs, hm, ho;
	struct gate g;

	ASSERT_NE(NULL, src);
	ASSERT_NE(NULL, mid);
	ASSERT_NE(NULL, out);
	ASSERT_NE(NULL, ref);
	fill_random(src, n, 21);
	memcpy(ref, src, n);
	memset(out, 0, n);
	ASSERT_EQ(0, accel_register(self->fd, src, n, ACCEL_MEM_READONLY, &hs));
	ASSERT_EQ(0, accel_register(self->fd, mid, n, 0, &hm));
	ASSERT_EQ(0, accel_register(self->fd, out, n, 0, &ho));
	ASSERT_EQ(0, gate_init(self->fd, &g));
	ASSERT_EQ(0, accel_submit1(self->fd, g.stream, d_copy(hm, 0, hs, 0, n), NULL));
	ASSERT_EQ(0, accel_submit1(self->fd, g.stream, d_copy(ho, 0, hm, 0, n), NULL));

	ASSERT_EQ(0, munmap(src, n));
	ASSERT_EQ(0, munmap(mid, n));
	/* New memory at the old source address, other contents. */
	again = mmap(src, n, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	ASSERT_EQ(src, again);
	memset(again, 0x77, n);

	ASSERT_EQ(0, gate_open(self->fd, &g));
	ASSERT_EQ(0, accel_drain(self->fd, g.stream));
	EXPECT_EQ(-1, first_diff(ref, out, n));
	EXPECT_TRUE(all_bytes(again, n, 0x77));
	/* The regions are still valid handles, and idle. */
	EXPECT_EQ(0, accel_release(self->fd, hs, 0));
	EXPECT_EQ(0, accel_release(self->fd, hm, 0));
	EXPECT_EQ(0, accel_release(self->fd, ho, 0));
	EXPECT_QUIESCENT();
	munmap(again, n);
	munmap(out, n);
	free(ref);
}

/* Only the opener's mm may use the file. */
TEST_F(lifetime, forked_child_eacces)
{
	long ps = page_size();
	uint8_t *buf = anon_map(ps);
	struct accel_stream_query q;
	uint32_t s;
	int status;
	pid_t pid;

	ASSERT_NE(NULL, buf);
	ASSERT_EQ(0, accel_stream(self->fd, 0, 0, &s));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct accel_info info = { 0 };
		struct accel_stream_query cq = { .handle = s };
		struct accel_mem_register r = { .addr = (uintptr_t)buf, .size = 8 };
		struct accel_desc d = d_nop();
		struct accel_submit sub = { .stream = s, .count = 1,
					    .descs = (uintptr_t)&d };
		int bad = 0, fd3;

		if (ioctl(self->fd, ACCEL_IOC_GET_INFO, &info) != -1 || errno != EACCES)
			bad |= 1;
		if (ioctl(self->fd, ACCEL_IOC_STREAM_QUERY, &cq) != -1 || errno != EACCES)
			bad |= 2;
		if (ioctl(self->fd, ACCEL_IOC_SUBMIT, &sub) != -1 || errno != EACCES)
			bad |= 4;
		if (ioctl(self->fd, ACCEL_IOC_MEM_REGISTER, &r) != -1 || errno != EACCES)
			bad |= 8;
		/* Its own file works. */
		fd3 = accel_open();
		if (fd3 < 0 || accel_info(fd3, &info))
			bad |= 16;
		close(fd3);
		close(self->fd);	/* not the last reference */
		_exit(bad);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status)) {
		TH_LOG("child saw wrong results, mask %#x", WEXITSTATUS(status));
	}
	/* The parent's context is untouched. */
	ASSERT_EQ(0, accel_query(self->fd, s, &q));
	EXPECT_EQ(0ULL, q.submitted);
	EXPECT_EQ(0, accel_submit1(self->fd, s, d_nop(), NULL));
	EXPECT_EQ(0, accel_drain(self->fd, s));
	munmap(buf, ps);
	EXPECT_QUIESCENT();
}

/*
 * A child with copies in flight and a stream blocked forever. @how:
 * 0 = SIGKILL after it submitted, 1 = it exits on its own.
 */
static int child_with_work(int how, pid_t *out_pid)
{
	const size_t n = 16 << 20;
	int p[2];
	pid_t pid;
	char c;

	if (pipe(p))
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		uint8_t *a = anon_map(n), *b = anon_map(n);
		struct accel_desc d[32];
		uint32_t ha, hb, s;
		int fd = accel_open(), i;

		if (fd < 0 || !a || !b)
			_exit(1);
		fill_random(a, n, 3);
		if (accel_register(fd, a, n, 0, &ha) ||
		    accel_register(fd, b, n, 0, &hb) ||
		    queue_forever(fd, hb, ha, n) ||
		    accel_stream(fd, 0, 0, &s))
			_exit(2);
		for (i = 0; i < 32; i++)
			d[i] = i % 2 ? d_copy(ha, 0, hb, 0, n) : d_copy(hb, 0, ha, 0, n);
		if (accel_submit(fd, s, d, 32, NULL))
			_exit(3);
		if (write(p[1], "x", 1) != 1)
			_exit(4);
		if (how == 1)
			_exit(0);
		pause();
		_exit(5);
	}
	close(p[1]);
	if (read(p[0], &c, 1) != 1) {
		close(p[0]);
		*out_pid = pid;
		return -2;
	}
	close(p[0]);
	if (how == 0)
		kill(pid, SIGKILL);
	*out_pid = pid;
	return 0;
}

TEST_F_TIMEOUT(lifetime, sigkill_mid_copy, 120)
{
	int status;
	pid_t pid;

	close(self->fd);
	self->fd = -1;
	ASSERT_EQ(0, child_with_work(0, &pid));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFSIGNALED(status));
	EXPECT_EQ(SIGKILL, WTERMSIG(status));
	EXPECT_QUIESCENT();
}

TEST_F_TIMEOUT(lifetime, exit_with_work_queued, 120)
{
	int status;
	pid_t pid;

	close(self->fd);
	self->fd = -1;
	ASSERT_EQ(0, child_with_work(1, &pid));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	EXPECT_QUIESCENT();
}

/* Destroying the events queued work names does not strand it. */
TEST_F(lifetime, destroy_events_with_waiters)
{
	struct gate g;
	uint32_t e, s2, s3, u;

	ASSERT_EQ(0, accel_event(self->fd, 0, &e));
	ASSERT_EQ(0, gate_init(self->fd, &g));
	ASSERT_EQ(0, accel_record(self->fd, e, g.stream, NULL));
	ASSERT_EQ(0, accel_stream(self->fd, 0, 0, &s2));
	ASSERT_EQ(0, accel_submit1(self->fd, s2, d_stream_wait(e), NULL));
	ASSERT_EQ(0, accel_submit1(self->fd, s2, d_nop(), NULL));
	ASSERT_EQ(0, accel_event_destroy(self->fd, e));
	ASSERT_EQ(0, gate_open(self->fd, &g));
	EXPECT_EQ(0, accel_sync(self->fd, s2, 0, deadline_in(SURE_NS)));

	/*
	 * A HOST_WAIT on a user event: its destroy is refused (nothing could
	 * signal it after), so the stream stays blocked on a live event; close
	 * must still return and clean up.
	 */
	ASSERT_EQ(0, accel_event(self->fd, ACCEL_EVENT_USER, &u));
	ASSERT_EQ(0, accel_stream(self->fd, 0, 0, &s3));
	ASSERT_EQ(0, accel_submit1(self->fd, s3, d_host_wait(u, 1), NULL));
	ASSERT_EQ(0, accel_submit1(self->fd, s3, d_nop(), NULL));
	EXPECT_EQ(-EBUSY, accel_event_destroy(self->fd, u));
	EXPECT_EQ(-ETIME, accel_sync(self->fd, s3, 0, 0));
	EXPECT_QUIESCENT();
}

/* A deferred release whose work never runs is cleaned up by close. */
TEST_F(lifetime, deferred_release_then_close)
{
	long ps = page_size();
	uint8_t *a = anon_map(4 * ps), *b = anon_map(4 * ps);
	uint32_t ha, hb;

	REQUIRE_CAP(ACCEL_CAP_DEFERRED_RELEASE);
	ASSERT_NE(NULL, a);
	ASSERT_NE(NULL, b);
	ASSERT_EQ(0, accel_register(self->fd, a, 4 * ps, 0, &ha));
	ASSERT_EQ(0, accel_register(self->fd, b, 4 * ps, 0, &hb));
	ASSERT_EQ(0, queue_forever(self->fd, hb, ha, 4 * ps));
	EXPECT_EQ(0, accel_release(self->fd, ha, ACCEL_MEM_RELEASE_DEFERRED));
	EXPECT_EQ(0, accel_release(self->fd, hb, ACCEL_MEM_RELEASE_DEFERRED));
	EXPECT_QUIESCENT();
	munmap(a, 4 * ps);
	munmap(b, 4 * ps);
}

/* Destroyed streams with queued copies drain and go away. */
TEST_F(lifetime, destroyed_streams_drain)
{
	const size_t n = 4 << 20;
	uint8_t *a = anon_map(n), *b = anon_map(n);
	uint32_t ha, hb, s;
	int i;

	ASSERT_NE(NULL, a);
	ASSERT_NE(NULL, b);
	fill_random(a, n, 8);
	ASSERT_EQ(0, accel_register(self->fd, a, n, 0, &ha));
	ASSERT_EQ(0, accel_register(self->fd, b, n, 0, &hb));
	for (i = 0; i < 8; i++) {
		ASSERT_EQ(0, accel_stream(self->fd, 0, 0, &s));
		ASSERT_EQ(0, accel_submit1(self->fd, s, d_copy(hb, 0, ha, 0, n), NULL));
		ASSERT_EQ(0, accel_stream_destroy(self->fd, s));
	}
	/* The regions become idle once the destroyed streams drained. */
	{
		uint64_t end = deadline_in(SURE_NS);
		int ret;

		while ((ret = accel_release(self->fd, ha, 0)) == -EBUSY &&
		       now_ns() < end)
			usleep(1000);
		EXPECT_EQ(0, ret);
	}
	EXPECT_EQ(-1, first_diff(a, b, n));
	EXPECT_QUIESCENT();
	munmap(a, n);
	munmap(b, n);
}

ACCEL_HARNESS_MAIN
