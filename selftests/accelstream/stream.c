// SPDX-License-Identifier: GPL-2.0
/*
 * accelstream: streams. Create, destroy, query and synchronize; priority
 * clamping; sequence numbers; timeouts; sticky errors; destroying a stream
 * with work still queued.
 */
#include <limits.h>

#include "kselftest_harness.h"
#include "accel_helpers.h"

ACCEL_FIXTURE(stream);

TEST_F(stream, create_default)
{
	struct accel_stream_query q;
	uint32_t s;

	ASSERT_EQ(0, accel_stream(self->fd, 0, self->info.least_priority, &s));
	EXPECT_NE(0u, s);

	memset(&q, 0xcc, sizeof(q));
	q.handle = s;
	q.pad = 0;
	ASSERT_EQ(0, ioctl(self->fd, ACCEL_IOC_STREAM_QUERY, &q));
	EXPECT_EQ(s, q.handle);
	EXPECT_EQ(0u, q.pad);
	EXPECT_EQ(0ULL, q.submitted);
	EXPECT_EQ(0ULL, q.completed);
	EXPECT_EQ(0, q.error);
	EXPECT_EQ(0u, q.flags);
	EXPECT_EQ(self->info.least_priority, q.priority);
	EXPECT_EQ(0u, q.queued);
}

/* @handle is output only: whatever it holds on input is overwritten. */
TEST_F(stream, create_output_prefilled)
{
	struct accel_stream_create c;

	memset(&c, 0xcc, sizeof(c));
	c.flags = 0;
	c.priority = 0;
	c.pad = 0;
	ASSERT_EQ(0, ioctl(self->fd, ACCEL_IOC_STREAM_CREATE, &c));
	EXPECT_NE(0u, c.handle);
	EXPECT_NE(0xccccccccu, c.handle);
	EXPECT_EQ(0, accel_stream_destroy(self->fd, c.handle));
}

TEST_F(stream, create_non_blocking)
{
	struct accel_stream_query q;
	uint32_t s;

	ASSERT_EQ(0, accel_stream(self->fd, ACCEL_STREAM_NON_BLOCKING, 0, &s));
	ASSERT_EQ(0, accel_query(self->fd, s, &q));
	EXPECT_EQ((uint32_t)ACCEL_STREAM_NON_BLOCKING, q.flags);
}

TEST_F(stream, create_bad_flags)
{
	static const uint32_t bad[] = { 2, 1u << 31, ACCEL_STREAM_NON_BLOCKING | 4 };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		struct accel_stream_create c = { .flags = bad[i] };

		EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_STREAM_CREATE, &c));
		EXPECT_EQ(EINVAL, errno) {
			TH_LOG("flags %#x accepted", bad[i]);
		}
	}
}

TEST_F(stream, create_pad)
{
	struct accel_stream_create c = { .pad = 1 };

	EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_STREAM_CREATE, &c));
	EXPECT_EQ(EINVAL, errno);
}

TEST_F(stream, priority_clamp)
{
	int32_t lo = self->info.greatest_priority, hi = self->info.least_priority;
	const int32_t asked[] = { INT_MIN, lo - 100, lo - 1, hi + 1, hi + 100, INT_MAX };
	const int32_t want[] = { lo, lo, lo, hi, hi, hi };
	struct accel_stream_query q;
	uint32_t s;
	size_t i;
	int32_t p;

	/* In range: kept as asked. */
	for (p = lo; p <= hi; p++) {
		ASSERT_EQ(0, accel_stream(self->fd, 0, p, &s));
		ASSERT_EQ(0, accel_query(self->fd, s, &q));
		EXPECT_EQ(p, q.priority);
	}
	/* Out of range: clamped, not refused. */
	for (i = 0; i < ARRAY_SIZE(asked); i++) {
		ASSERT_EQ(0, accel_stream(self->fd, 0, asked[i], &s));
		ASSERT_EQ(0, accel_query(self->fd, s, &q));
		EXPECT_EQ(want[i], q.priority) {
			TH_LOG("priority %d", asked[i]);
		}
	}
}

/* Work runs whatever the priority: every priority drains. */
TEST_F(stream, priority_runs)
{
	int32_t lo = self->info.greatest_priority, hi = self->info.least_priority;
	struct accel_desc d[3] = { d_nop(), d_nop(), d_nop() };
	int32_t p;
	uint32_t s;

	for (p = lo; p <= hi; p++) {
		ASSERT_EQ(0, accel_stream(self->fd, 0, p, &s));
		ASSERT_EQ(0, accel_submit(self->fd, s, d, 3, NULL));
		EXPECT_EQ(0, accel_drain(self->fd, s));
	}
}

/*
 * The soft engine takes the more urgent stream's ready work first, read
 * as an order: one stream per level, each logging its turn in one
 * registered page with two 8-byte copies (the last writer's id into its
 * own slot, then its id into the last-writer word). The least urgent
 * stream, gated on the host, releases the others with a HOST_SIGNAL and
 * then logs its turn. From that signal on the others are runnable, so
 * the rule decides: all steps of the most urgent first, then the next,
 * the releaser last; the chain of last writers is that order. With
 * priorities ignored the releaser, already running, logs first.
 */
TEST_F(stream, priority_order)
{
	enum { LAST = 0, PREV = 8, ID = 32 };
	int32_t least = self->info.least_priority;
	int32_t n = least - self->info.greatest_priority + 1;
	uint32_t page, gate, release, s[16];
	uint64_t *log;
	int32_t i;

	ASSERT_GE(n, 6);
	ASSERT_LE(n, 16);
	log = anon_map(4096);
	ASSERT_NE(NULL, log);
	for (i = 0; i < n; i++)
		log[ID + i] = 100 + i;
	ASSERT_EQ(0, accel_register(self->fd, log, 4096, 0, &page));
	ASSERT_EQ(0, accel_event(self->fd, ACCEL_EVENT_USER, &gate));
	ASSERT_EQ(0, accel_event(self->fd, ACCEL_EVENT_USER, &release));
	for (i = 0; i < n; i++)
		ASSERT_EQ(0, accel_stream(self->fd, 0, least - i, &s[i]));
	/* The most urgent queued first: queue order is not the answer. */
	for (i = n - 1; i >= 0; i--) {
		struct accel_desc d[4] = {
			d_host_wait(gate, 1),
			d_host_signal(release, 1),
		};
		uint32_t k = 2;

		if (i) {
			d[0] = d_host_wait(release, 1);
			k = 1;
		}
		d[k++] = d_copy(page, (PREV + i) * 8, page, LAST * 8, 8);
		d[k++] = d_copy(page, LAST * 8, page, (ID + i) * 8, 8);
		ASSERT_EQ(0, accel_submit(self->fd, s[i], d, k, NULL));
	}
	ASSERT_EQ(0, accel_signal(self->fd, gate, 0, 1));
	for (i = 0; i < n; i++)
		ASSERT_EQ(0, accel_drain(self->fd, s[i]));
	/* s[n - 1] ran after nobody, s[i] after s[i + 1], s[0] last. */
	for (i = 0; i < n; i++) {
		uint64_t want = i == n - 1 ? 0 : 100 + i + 1;

		EXPECT_EQ(want, log[PREV + i]) {
			TH_LOG("priority %d ran after id %llu", least - i,
			       (unsigned long long)log[PREV + i]);
		}
	}
	EXPECT_EQ(100, log[LAST]);
	EXPECT_EQ(0, accel_release(self->fd, page, 0));
	munmap(log, 4096);
}

TEST_F_TIMEOUT(stream, too_many_streams, 120)
{
	struct accel_stream_create c = { 0 };
	uint32_t i, s;

	if (self->info.max_streams > (1u << 16))
		SKIP(return, "max_streams %u too large", self->info.max_streams);
	for (i = 0; i < self->info.max_streams; i++)
		ASSERT_EQ(0, accel_stream(self->fd, 0, 0, &s)) {
			TH_LOG("stream %u of %u", i, self->info.max_streams);
		}
	EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_STREAM_CREATE, &c));
	EXPECT_EQ(ENOSPC, errno);
	/* A destroyed (idle) stream makes room. */
	EXPECT_EQ(0, accel_stream_destroy(self->fd, s));
	c.handle = 0;
	EXPECT_EQ(0, ioctl(self->fd, ACCEL_IOC_STREAM_CREATE, &c));
	/* The limit is per context. */
	{
		int fd2 = accel_open();

		ASSERT_LE(0, fd2);
		EXPECT_EQ(0, accel_stream(fd2, 0, 0, &s));
		close(fd2);
	}
}

TEST_F(stream, handles_not_reused)
{
	uint32_t seen[64];
	int i, j;

	for (i = 0; i < 64; i++) {
		ASSERT_EQ(0, accel_stream(self->fd, 0, 0, &seen[i]));
		EXPECT_NE(0u, seen[i]);
		for (j = 0; j < i; j++)
			EXPECT_NE(seen[j], seen[i]);
		if (i % 2)
			ASSERT_EQ(0, accel_stream_destroy(self->fd, seen[i]));
	}
}

TEST_F(stream, destroy_unknown)
{
	struct accel_handle h = { .handle = BAD_HANDLE };
	uint32_t s;

	EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_STREAM_DESTROY, &h));
	EXPECT_EQ(ENOENT, errno);
	h.handle = 0;
	EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_STREAM_DESTROY, &h));
	EXPECT_EQ(ENOENT, errno);

	ASSERT_EQ(0, accel_stream(self->fd, 0, 0, &s));
	h.handle = s;
	EXPECT_EQ(0, ioctl(self->fd, ACCEL_IOC_STREAM_DESTROY, &h));
	EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_STREAM_DESTROY, &h));
	EXPECT_EQ(ENOENT, errno);
}

/* Streams are per context. */
TEST_F(stream, other_context_handle)
{
	struct accel_stream_query q = { 0 };
	int fd2 = accel_open();
	uint32_t s, s2, mine;

	ASSERT_LE(0, fd2);
	ASSERT_EQ(0, accel_stream(fd2, 0, 0, &s));
	ASSERT_EQ(0, accel_stream(fd2, 0, 0, &s2));
	ASSERT_EQ(0, accel_stream(self->fd, 0, 0, &mine));
	if (s2 != mine) {
		q.handle = s2;
		EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_STREAM_QUERY, &q));
		EXPECT_EQ(ENOENT, errno);
	}
	close(fd2);
}

TEST_F(stream, destroy_pad)
{
	struct accel_handle h = { .pad = 1 };
	uint32_t s;

	ASSERT_EQ(0, accel_stream(self->fd, 0, 0, &s));
	h.handle = s;
	EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_STREAM_DESTROY, &h));
	EXPECT_EQ(EINVAL, errno);
	/* Still alive. */
	EXPECT_EQ(0, accel_stream_destroy(self->fd, s));
}

TEST_F(stream, query_errors)
{
	struct accel_stream_query q = { .handle = BAD_HANDLE };
	uint32_t s;

	EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_STREAM_QUERY, &q));
	EXPECT_EQ(ENOENT, errno);
	ASSERT_EQ(0, accel_stream(self->fd, 0, 0, &s));
	q.handle = s;
	q.pad = 1;
	EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_STREAM_QUERY, &q));
	EXPECT_EQ(EINVAL, errno);
	/* A destroyed stream is unknown to every ioctl. */
	ASSERT_EQ(0, accel_stream_destroy(self->fd, s));
	q.pad = 0;
	EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_STREAM_QUERY, &q));
	EXPECT_EQ(ENOENT, errno);
	EXPECT_EQ(-ENOENT, accel_sync(self->fd, s, 0, 0));
	EXPECT_EQ(-ENOENT, accel_submit1(self->fd, s, d_nop(), NULL));
}

TEST_F(stream, sync_errors)
{
	struct accel_stream_sync sy = { .handle = BAD_HANDLE };
	uint32_t s;

	EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_STREAM_SYNC, &sy));
	EXPECT_EQ(ENOENT, errno);

	ASSERT_EQ(0, accel_stream(self->fd, 0, 0, &s));
	sy.handle = s;
	sy.flags = 1;
	EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_STREAM_SYNC, &sy));
	EXPECT_EQ(EINVAL, errno);
	sy.flags = 0;
	/* Nothing submitted: seq 0 is reached at once, seq 1 is past it. */
	EXPECT_EQ(0, ioctl(self->fd, ACCEL_IOC_STREAM_SYNC, &sy));
	sy.seq = 1;
	EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_STREAM_SYNC, &sy));
	EXPECT_EQ(EINVAL, errno);

	ASSERT_EQ(0, accel_submit1(self->fd, s, d_nop(), NULL));
	ASSERT_EQ(0, accel_submit1(self->fd, s, d_nop(), NULL));
	sy.seq = 3;
	sy.timeout_ns = deadline_in(SURE_NS);
	EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_STREAM_SYNC, &sy));
	EXPECT_EQ(EINVAL, errno);
	sy.seq = ~0ULL;
	EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_STREAM_SYNC, &sy));
	EXPECT_EQ(EINVAL, errno);
	sy.seq = 2;
	EXPECT_EQ(0, ioctl(self->fd, ACCEL_IOC_STREAM_SYNC, &sy));
}

TEST_F(stream, seq_numbers)
{
	struct accel_desc d[5] = { d_nop(), d_nop(), d_nop(), d_nop(), d_nop() };
	struct accel_stream_query q;
	uint64_t seq = 0xccccccccccccccccULL;
	uint32_t s, t;

	ASSERT_EQ(0, accel_stream(self->fd, 0, 0, &s));
	ASSERT_EQ(0, accel_stream(self->fd, 0, 0, &t));
	ASSERT_EQ(0, accel_submit(self->fd, s, d, 1, &seq));
	EXPECT_EQ(1ULL, seq);
	ASSERT_EQ(0, accel_submit(self->fd, s, d, 3, &seq));
	EXPECT_EQ(4ULL, seq);
	ASSERT_EQ(0, accel_submit(self->fd, s, d, 5, &seq));
	EXPECT_EQ(9ULL, seq);
	/* Each stream has its own timeline. */
	ASSERT_EQ(0, accel_submit(self->fd, t, d, 2, &seq));
	EXPECT_EQ(2ULL, seq);

	ASSERT_EQ(0, accel_drain(self->fd, s));
	ASSERT_EQ(0, accel_query(self->fd, s, &q));
	EXPECT_EQ(9ULL, q.submitted);
	EXPECT_EQ(9ULL, q.completed);
	EXPECT_EQ(0u, q.queued);
	EXPECT_EQ(0, q.error);
	ASSERT_EQ(0, accel_drain(self->fd, t));
	ASSERT_EQ(0, accel_query(self->fd, t, &q));
	EXPECT_EQ(2ULL, q.submitted);
	EXPECT_EQ(2ULL, q.completed);
}

/* Deadlines in the past poll; a pending stream times out with ETIME. */
TEST_F(stream, sync_etime)
{
	struct accel_stream_sync sy = { 0 };
	struct accel_stream_query q;
	struct gate g;
	uint64_t now;

	ASSERT_EQ(0, gate_init(self->fd, &g));
	ASSERT_EQ(0, accel_submit1(self->fd, g.stream, d_nop(), NULL));
	sy.handle = g.stream;

	sy.timeout_ns = 0;
	EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_STREAM_SYNC, &sy));
	EXPECT_EQ(ETIME, errno);
	now = now_ns();
	sy.timeout_ns = now > NSEC_PER_SEC ? now - NSEC_PER_SEC : 1;
	EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_STREAM_SYNC, &sy));
	EXPECT_EQ(ETIME, errno);
	sy.timeout_ns = deadline_in(50 * NSEC_PER_MSEC);
	EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_STREAM_SYNC, &sy));
	EXPECT_EQ(ETIME, errno);
	sy.seq = 1;
	sy.timeout_ns = deadline_in(20 * NSEC_PER_MSEC);
	EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_STREAM_SYNC, &sy));
	EXPECT_EQ(ETIME, errno);

	/* Nothing ran meanwhile. */
	ASSERT_EQ(0, accel_query(self->fd, g.stream, &q));
	EXPECT_EQ(2ULL, q.submitted);
	EXPECT_EQ(0ULL, q.completed);
	EXPECT_EQ(2u, q.queued);
	EXPECT_EQ(0, q.error);

	ASSERT_EQ(0, gate_open(self->fd, &g));
	sy.seq = 0;
	sy.timeout_ns = deadline_in(SURE_NS);
	EXPECT_EQ(0, ioctl(self->fd, ACCEL_IOC_STREAM_SYNC, &sy));
	ASSERT_EQ(0, accel_query(self->fd, g.stream, &q));
	EXPECT_EQ(2ULL, q.completed);
	EXPECT_EQ(0u, q.queued);
	/* Once reached, even an expired deadline succeeds. */
	sy.timeout_ns = 0;
	EXPECT_EQ(0, ioctl(self->fd, ACCEL_IOC_STREAM_SYNC, &sy));
}

/* seq 0 means what was submitted when the call started. */
TEST_F(stream, sync_partial)
{
	struct accel_desc d[4];
	struct accel_stream_query q;
	uint32_t s, u;

	ASSERT_EQ(0, accel_stream(self->fd, 0, 0, &s));
	ASSERT_EQ(0, accel_event(self->fd, ACCEL_EVENT_USER, &u));
	d[0] = d_host_wait(u, 1);
	d[1] = d_nop();
	d[2] = d_host_wait(u, 2);
	d[3] = d_nop();
	ASSERT_EQ(0, accel_submit(self->fd, s, d, 4, NULL));

	ASSERT_EQ(0, accel_signal(self->fd, u, 0, 1));
	EXPECT_EQ(0, accel_sync(self->fd, s, 2, deadline_in(SURE_NS)));
	EXPECT_EQ(-ETIME, accel_sync(self->fd, s, 3, deadline_in(20 * NSEC_PER_MSEC)));
	EXPECT_EQ(-ETIME, accel_sync(self->fd, s, 0, 0));
	ASSERT_EQ(0, accel_query(self->fd, s, &q));
	EXPECT_EQ(4ULL, q.submitted);
	EXPECT_EQ(2ULL, q.completed);
	EXPECT_EQ(2u, q.queued);

	ASSERT_EQ(0, accel_signal(self->fd, u, 0, 2));
	EXPECT_EQ(0, accel_sync(self->fd, s, 4, deadline_in(SURE_NS)));
	ASSERT_EQ(0, accel_query(self->fd, s, &q));
	EXPECT_EQ(4ULL, q.completed);
	EXPECT_EQ(0u, q.queued);
}

/* A sync waits on others' progress, from another thread of the process. */
static void *signal_later(void *arg)
{
	int *p = arg;

	usleep(100 * 1000);
	accel_signal(p[0], (uint32_t)p[1], 0, 1);
	return NULL;
}

TEST_F(stream, sync_blocks_until_done)
{
	struct accel_stream_query q;
	struct gate g;
	pthread_t th;
	int arg[2];

	ASSERT_EQ(0, gate_init(self->fd, &g));
	ASSERT_EQ(0, accel_submit1(self->fd, g.stream, d_nop(), NULL));
	arg[0] = self->fd;
	arg[1] = (int)g.event;
	ASSERT_EQ(0, pthread_create(&th, NULL, signal_later, arg));
	EXPECT_EQ(0, accel_sync(self->fd, g.stream, 0, deadline_in(SURE_NS)));
	pthread_join(th, NULL);
	ASSERT_EQ(0, accel_query(self->fd, g.stream, &q));
	EXPECT_EQ(2ULL, q.completed);
}

/* Errors are sticky: failed at seq 2, seq 1 is still fine. */
TEST_F(stream, sync_eio)
{
	struct accel_desc d[3];
	struct accel_stream_query q;
	struct accel_stream_sync sy = { 0 };
	uint32_t s, u;

	REQUIRE_CAP(ACCEL_CAP_USER_EVENTS);
	ASSERT_EQ(0, accel_stream(self->fd, 0, 0, &s));
	ASSERT_EQ(0, accel_event(self->fd, ACCEL_EVENT_USER, &u));
	d[0] = d_nop();
	d[1] = d_host_wait(u, 1);
	d[2] = d_nop();
	ASSERT_EQ(0, accel_submit(self->fd, s, d, 3, NULL));
	ASSERT_EQ(0, accel_sync(self->fd, s, 1, deadline_in(SURE_NS)));
	ASSERT_EQ(0, accel_signal(self->fd, u, ACCEL_SIGNAL_ERROR, 0));

	sy.handle = s;
	sy.timeout_ns = deadline_in(SURE_NS);
	sy.seq = 3;
	EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_STREAM_SYNC, &sy));
	EXPECT_EQ(EIO, errno);
	sy.seq = 2;
	EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_STREAM_SYNC, &sy));
	EXPECT_EQ(EIO, errno);
	sy.seq = 0;
	EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_STREAM_SYNC, &sy));
	EXPECT_EQ(EIO, errno);
	sy.seq = 1;
	EXPECT_EQ(0, ioctl(self->fd, ACCEL_IOC_STREAM_SYNC, &sy));

	ASSERT_EQ(0, accel_wait_idle(self->fd, s, &q));
	EXPECT_EQ(3ULL, q.submitted);
	EXPECT_EQ(3ULL, q.completed);
	EXPECT_EQ(-EIO, q.error);
	EXPECT_EQ(0u, q.queued);

	/* Destroying a failed stream still works. */
	EXPECT_EQ(0, accel_stream_destroy(self->fd, s));
}

/*
 * Destroy with work queued: the handle dies at once, the queued copies
 * still run, and another stream waiting on an event recorded after them
 * completes.
 */
TEST_F(stream, destroy_with_work_queued)
{
	long ps = page_size();
	size_t size = 64 * ps;
	uint8_t *src = anon_map(size), *dst = anon_map(size);
	struct accel_desc d[6];
	struct accel_event_query eq;
	struct accel_stream_query q = { 0 };
	uint32_t hs, hd, s1, s2, ev, u;
	uint64_t rec_seq;
	int i;

	ASSERT_NE(NULL, src);
	ASSERT_NE(NULL, dst);
	fill_random(src, size, 11);
	memset(dst, 0, size);
	ASSERT_EQ(0, accel_register(self->fd, src, size, ACCEL_MEM_READONLY, &hs));
	ASSERT_EQ(0, accel_register(self->fd, dst, size, 0, &hd));
	ASSERT_EQ(0, accel_stream(self->fd, 0, 0, &s1));
	ASSERT_EQ(0, accel_stream(self->fd, 0, 0, &s2));
	ASSERT_EQ(0, accel_event(self->fd, 0, &ev));
	ASSERT_EQ(0, accel_event(self->fd, ACCEL_EVENT_USER, &u));

	d[0] = d_host_wait(u, 1);
	for (i = 0; i < 4; i++)
		d[1 + i] = d_copy(hd, i * size / 4, hs, i * size / 4, size / 4);
	d[5] = d_record(ev);
	ASSERT_EQ(0, accel_submit(self->fd, s1, d, 6, &rec_seq));
	ASSERT_EQ(6ULL, rec_seq);
	ASSERT_EQ(0, accel_submit1(self->fd, s2, d_stream_wait(ev), NULL));
	ASSERT_EQ(0, accel_submit1(self->fd, s2, d_nop(), NULL));

	ASSERT_EQ(0, accel_stream_destroy(self->fd, s1));
	q.handle = s1;
	EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_STREAM_QUERY, &q));
	EXPECT_EQ(ENOENT, errno);
	EXPECT_EQ(-ENOENT, accel_submit1(self->fd, s1, d_nop(), NULL));
	EXPECT_EQ(-ENOENT, accel_stream_destroy(self->fd, s1));

	/* Still gated: nothing copied, s2 still waits. */
	EXPECT_EQ(-ETIME, accel_sync(self->fd, s2, 0, deadline_in(20 * NSEC_PER_MSEC)));
	EXPECT_TRUE(all_bytes(dst, size, 0));

	ASSERT_EQ(0, accel_signal(self->fd, u, 0, 1));
	EXPECT_EQ(0, accel_sync(self->fd, s2, 0, deadline_in(SURE_NS)));
	EXPECT_EQ(0, accel_wait1(self->fd, ev, 0, deadline_in(SURE_NS)));
	EXPECT_EQ(-1, first_diff(src, dst, size));

	/* The event keeps its point; the stream's handle is gone. */
	memset(&eq, 0xcc, sizeof(eq));
	eq.handle = ev;
	eq.pad = 0;
	ASSERT_EQ(0, ioctl(self->fd, ACCEL_IOC_EVENT_QUERY, &eq));
	EXPECT_EQ((uint32_t)ACCEL_EVENT_STATE_COMPLETE, eq.state);
	EXPECT_EQ(0, eq.error);
	EXPECT_EQ(0u, eq.stream);
	EXPECT_EQ(6ULL, eq.seq);
	EXPECT_EQ(0u, eq.flags);
	EXPECT_EQ(0ULL, eq.value);

	/* The regions are idle again once the work retired. */
	EXPECT_EQ(0, accel_release(self->fd, hs, 0));
	EXPECT_EQ(0, accel_release(self->fd, hd, 0));
	munmap(src, size);
	munmap(dst, size);
}

ACCEL_HARNESS_MAIN
