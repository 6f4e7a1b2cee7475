// SPDX-License-Identifier: GPL-2.0
/*
 * accelstream: events. Capture semantics of record and stream wait, user
 * events, host waits (any/all, timeouts, errors), elapsed time, and the
 * file's completion counter (poll(2)/read(2)).
 */
#include <poll.h>

#include "kselftest_harness.h"
#include "accel_helpers.h"

ACCEL_FIXTURE(event);

#define SHORT_NS	(20 * NSEC_PER_MSEC)

TEST_F(event, never_recorded_is_complete)
{
	static const uint32_t kinds[] = { 0, ACCEL_EVENT_TIMING };
	struct accel_event_query q;
	size_t i;
	uint32_t e;

	for (i = 0; i < ARRAY_SIZE(kinds); i++) {
		ASSERT_EQ(0, accel_event(self->fd, kinds[i], &e));
		EXPECT_NE(0u, e);
		memset(&q, 0xcc, sizeof(q));
		q.handle = e;
		q.pad = 0;
		ASSERT_EQ(0, ioctl(self->fd, ACCEL_IOC_EVENT_QUERY, &q));
		EXPECT_EQ(e, q.handle);
		EXPECT_EQ(0u, q.pad);
		EXPECT_EQ((uint32_t)ACCEL_EVENT_STATE_COMPLETE, q.state);
		EXPECT_EQ(0, q.error);
		EXPECT_EQ(0u, q.stream);
		EXPECT_EQ(kinds[i], q.flags);
		EXPECT_EQ(0ULL, q.seq);
		EXPECT_EQ(0ULL, q.value);
		EXPECT_EQ(0ULL, q.timestamp_ns);
		/* A wait on it returns at once, even polling. */
		EXPECT_EQ(0, accel_wait1(self->fd, e, 0, 0));
	}
}

TEST_F(event, user_event_query)
{
	struct accel_event_query q;
	uint32_t u;

	REQUIRE_CAP(ACCEL_CAP_USER_EVENTS);
	ASSERT_EQ(0, accel_event(self->fd, ACCEL_EVENT_USER, &u));
	memset(&q, 0xcc, sizeof(q));
	q.handle = u;
	q.pad = 0;
	ASSERT_EQ(0, ioctl(self->fd, ACCEL_IOC_EVENT_QUERY, &q));
	EXPECT_EQ((uint32_t)ACCEL_EVENT_STATE_PENDING, q.state);
	EXPECT_EQ(0, q.error);
	EXPECT_EQ(0u, q.stream);
	EXPECT_EQ((uint32_t)ACCEL_EVENT_USER, q.flags);
	EXPECT_EQ(0ULL, q.seq);
	EXPECT_EQ(0ULL, q.value);
	EXPECT_EQ(0ULL, q.timestamp_ns);

	ASSERT_EQ(0, accel_signal(self->fd, u, 0, 5));
	ASSERT_EQ(0, accel_event_query(self->fd, u, &q));
	EXPECT_EQ((uint32_t)ACCEL_EVENT_STATE_COMPLETE, q.state);
	EXPECT_EQ(5ULL, q.value);
	/* Never lowered. */
	ASSERT_EQ(0, accel_signal(self->fd, u, 0, 3));
	ASSERT_EQ(0, accel_event_query(self->fd, u, &q));
	EXPECT_EQ(5ULL, q.value);
	EXPECT_EQ(0, q.error);
	/* An error keeps the counter and sets the error. */
	ASSERT_EQ(0, accel_signal(self->fd, u, ACCEL_SIGNAL_ERROR, 0));
	ASSERT_EQ(0, accel_event_query(self->fd, u, &q));
	EXPECT_EQ(5ULL, q.value);
	EXPECT_EQ(-EIO, q.error);
	EXPECT_EQ((uint32_t)ACCEL_EVENT_STATE_COMPLETE, q.state);
}

/* @handle is output only. */
TEST_F(event, create_output_prefilled)
{
	struct accel_event_create c;

	memset(&c, 0xcc, sizeof(c));
	c.flags = 0;
	ASSERT_EQ(0, ioctl(self->fd, ACCEL_IOC_EVENT_CREATE, &c));
	EXPECT_NE(0u, c.handle);
	EXPECT_NE(0xccccccccu, c.handle);
}

TEST_F(event, create_bad_flags)
{
	static const uint32_t bad[] = {
		ACCEL_EVENT_TIMING | ACCEL_EVENT_USER, 4, 1u << 31,
		ACCEL_EVENT_TIMING | 8,
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		struct accel_event_create c = { .flags = bad[i] };

		EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_EVENT_CREATE, &c));
		EXPECT_EQ(EINVAL, errno) {
			TH_LOG("flags %#x accepted", bad[i]);
		}
	}
}

TEST_F(event, handle_errors)
{
	struct accel_event_query q = { .handle = BAD_HANDLE };
	struct accel_handle h = { .handle = BAD_HANDLE };
	uint32_t e;

	EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_EVENT_QUERY, &q));
	EXPECT_EQ(ENOENT, errno);
	EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_EVENT_DESTROY, &h));
	EXPECT_EQ(ENOENT, errno);

	ASSERT_EQ(0, accel_event(self->fd, 0, &e));
	q.handle = e;
	q.pad = 1;
	EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_EVENT_QUERY, &q));
	EXPECT_EQ(EINVAL, errno);
	h.handle = e;
	h.pad = 1;
	EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_EVENT_DESTROY, &h));
	EXPECT_EQ(EINVAL, errno);
	h.pad = 0;
	EXPECT_EQ(0, ioctl(self->fd, ACCEL_IOC_EVENT_DESTROY, &h));
	EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_EVENT_DESTROY, &h));
	EXPECT_EQ(ENOENT, errno);
	q.pad = 0;
	EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_EVENT_QUERY, &q));
	EXPECT_EQ(ENOENT, errno);
}

TEST_F_TIMEOUT(event, too_many_events, 120)
{
	struct accel_event_create c = { 0 };
	uint32_t i, e;

	if (self->info.max_events > (1u << 17))
		SKIP(return, "max_events %u too large", self->info.max_events);
	for (i = 0; i < self->info.max_events; i++)
		ASSERT_EQ(0, accel_event(self->fd, 0, &e)) {
			TH_LOG("event %u of %u", i, self->info.max_events);
		}
	EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_EVENT_CREATE, &c));
	EXPECT_EQ(ENOSPC, errno);
	ASSERT_EQ(0, accel_event_destroy(self->fd, e));
	c.handle = 0;
	EXPECT_EQ(0, ioctl(self->fd, ACCEL_IOC_EVENT_CREATE, &c));
}

TEST_F(event, signal_errors)
{
	struct accel_event_signal sg = { .handle = BAD_HANDLE, .value = 1 };
	uint32_t e, u;

	ASSERT_EQ(0, accel_event(self->fd, 0, &e));
	ASSERT_EQ(0, accel_event(self->fd, ACCEL_EVENT_USER, &u));
	EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_EVENT_SIGNAL, &sg));
	EXPECT_EQ(ENOENT, errno);
	sg.handle = e;
	EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_EVENT_SIGNAL, &sg));
	EXPECT_EQ(EINVAL, errno);
	sg.handle = u;
	sg.flags = 2;
	EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_EVENT_SIGNAL, &sg));
	EXPECT_EQ(EINVAL, errno);
	sg.flags = 0;
	EXPECT_EQ(0, ioctl(self->fd, ACCEL_IOC_EVENT_SIGNAL, &sg));
}

TEST_F(event, record_ioctl)
{
	struct accel_event_record r;
	struct accel_event_query q;
	struct gate g;
	uint32_t e, te;

	ASSERT_EQ(0, accel_event(self->fd, 0, &e));
	ASSERT_EQ(0, accel_event(self->fd, ACCEL_EVENT_TIMING, &te));
	ASSERT_EQ(0, gate_init(self->fd, &g));

	memset(&r, 0xcc, sizeof(r));
	r.event = e;
	r.stream = g.stream;
	ASSERT_EQ(0, ioctl(self->fd, ACCEL_IOC_EVENT_RECORD, &r));
	EXPECT_EQ(2ULL, r.seq);
	{
		uint64_t seq = 0;

		EXPECT_EQ(0, accel_record(self->fd, te, g.stream, &seq));
		EXPECT_EQ(3ULL, seq);
	}

	ASSERT_EQ(0, accel_event_query(self->fd, e, &q));
	EXPECT_EQ((uint32_t)ACCEL_EVENT_STATE_PENDING, q.state);
	EXPECT_EQ(g.stream, q.stream);
	EXPECT_EQ(2ULL, q.seq);
	EXPECT_EQ(0ULL, q.timestamp_ns);
	EXPECT_EQ(-EAGAIN, xioctl(self->fd, ACCEL_IOC_EVENT_ELAPSED,
				  &(struct accel_event_elapsed){ .start = te, .end = te }));
	ASSERT_EQ(0, accel_event_query(self->fd, te, &q));
	EXPECT_EQ(0ULL, q.timestamp_ns);
	EXPECT_EQ(3ULL, q.seq);

	ASSERT_EQ(0, gate_open(self->fd, &g));
	ASSERT_EQ(0, accel_wait1(self->fd, te, 0, deadline_in(SURE_NS)));
	ASSERT_EQ(0, accel_event_query(self->fd, te, &q));
	EXPECT_EQ((uint32_t)ACCEL_EVENT_STATE_COMPLETE, q.state);
	EXPECT_EQ(0, q.error);
	EXPECT_NE(0ULL, q.timestamp_ns);
	EXPECT_LE(q.timestamp_ns, now_ns());
	EXPECT_EQ((uint32_t)ACCEL_EVENT_TIMING, q.flags);
	ASSERT_EQ(0, accel_event_query(self->fd, e, &q));
	EXPECT_EQ((uint32_t)ACCEL_EVENT_STATE_COMPLETE, q.state);

	/* Errors are those of SUBMIT. */
	r.event = e;
	r.stream = BAD_HANDLE;
	EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_EVENT_RECORD, &r));
	EXPECT_EQ(ENOENT, errno);
	r.event = BAD_HANDLE;
	r.stream = g.stream;
	EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_EVENT_RECORD, &r));
	EXPECT_EQ(ENOENT, errno);
	r.event = g.event;	/* a user event */
	EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_EVENT_RECORD, &r));
	EXPECT_EQ(EINVAL, errno);
}

/*
 * A STREAM_WAIT captures the event's point when it is submitted: a later
 * re-record (behind a gate that stays shut) does not move it.
 */
TEST_F(event, stream_wait_captures_at_submit)
{
	struct gate g1, g3;
	uint32_t e, s2;

	ASSERT_EQ(0, accel_event(self->fd, 0, &e));
	ASSERT_EQ(0, gate_init(self->fd, &g1));
	ASSERT_EQ(0, gate_init(self->fd, &g3));
	ASSERT_EQ(0, accel_stream(self->fd, 0, 0, &s2));

	ASSERT_EQ(0, accel_record(self->fd, e, g1.stream, NULL));
	ASSERT_EQ(0, accel_submit1(self->fd, s2, d_stream_wait(e), NULL));
	ASSERT_EQ(0, accel_submit1(self->fd, s2, d_nop(), NULL));
	/* Re-record on a stream whose gate never opens during the test. */
	ASSERT_EQ(0, accel_record(self->fd, e, g3.stream, NULL));

	EXPECT_EQ(-ETIME, accel_sync(self->fd, s2, 0, deadline_in(SHORT_NS)));
	ASSERT_EQ(0, gate_open(self->fd, &g1));
	EXPECT_EQ(0, accel_sync(self->fd, s2, 0, deadline_in(SURE_NS)));
	/* The event itself now names the later point. */
	EXPECT_EQ(-ETIME, accel_wait1(self->fd, e, 0, deadline_in(SHORT_NS)));
	ASSERT_EQ(0, gate_open(self->fd, &g3));
	EXPECT_EQ(0, accel_wait1(self->fd, e, 0, deadline_in(SURE_NS)));
}

/* The other way round: a wait submitted after the re-record follows it. */
TEST_F(event, stream_wait_follows_rerecord)
{
	struct gate g1, g3;
	struct accel_stream_query q;
	uint32_t e, s2;

	ASSERT_EQ(0, accel_event(self->fd, 0, &e));
	ASSERT_EQ(0, gate_init(self->fd, &g1));
	ASSERT_EQ(0, gate_init(self->fd, &g3));
	ASSERT_EQ(0, accel_stream(self->fd, 0, 0, &s2));

	ASSERT_EQ(0, accel_record(self->fd, e, g1.stream, NULL));
	ASSERT_EQ(0, accel_record(self->fd, e, g3.stream, NULL));
	ASSERT_EQ(0, accel_submit1(self->fd, s2, d_stream_wait(e), NULL));
	ASSERT_EQ(0, accel_submit1(self->fd, s2, d_nop(), NULL));

	ASSERT_EQ(0, gate_open(self->fd, &g1));
	ASSERT_EQ(0, accel_drain(self->fd, g1.stream));
	EXPECT_EQ(-ETIME, accel_sync(self->fd, s2, 0, deadline_in(SHORT_NS)));
	ASSERT_EQ(0, accel_query(self->fd, s2, &q));
	EXPECT_EQ(0ULL, q.completed);
	ASSERT_EQ(0, gate_open(self->fd, &g3));
	EXPECT_EQ(0, accel_sync(self->fd, s2, 0, deadline_in(SURE_NS)));
}

/* A wait on a never-recorded event waits for nothing. */
TEST_F(event, stream_wait_never_recorded)
{
	uint32_t e, s;

	ASSERT_EQ(0, accel_event(self->fd, 0, &e));
	ASSERT_EQ(0, accel_stream(self->fd, 0, 0, &s));
	ASSERT_EQ(0, accel_submit1(self->fd, s, d_stream_wait(e), NULL));
	ASSERT_EQ(0, accel_submit1(self->fd, s, d_nop(), NULL));
	EXPECT_EQ(0, accel_sync(self->fd, s, 0, deadline_in(SURE_NS)));
}

/* Recorded on three streams: waiters order only after the last record. */
TEST_F(event, rerecord_several_streams)
{
	struct gate g[3];
	struct accel_event_query q;
	uint32_t e, s4;
	int i;

	ASSERT_EQ(0, accel_event(self->fd, 0, &e));
	for (i = 0; i < 3; i++) {
		ASSERT_EQ(0, gate_init(self->fd, &g[i]));
		ASSERT_EQ(0, accel_record(self->fd, e, g[i].stream, NULL));
	}
	ASSERT_EQ(0, accel_event_query(self->fd, e, &q));
	EXPECT_EQ(g[2].stream, q.stream);
	EXPECT_EQ(2ULL, q.seq);
	ASSERT_EQ(0, accel_stream(self->fd, 0, 0, &s4));
	ASSERT_EQ(0, accel_submit1(self->fd, s4, d_stream_wait(e), NULL));

	ASSERT_EQ(0, gate_open(self->fd, &g[0]));
	ASSERT_EQ(0, gate_open(self->fd, &g[1]));
	ASSERT_EQ(0, accel_drain(self->fd, g[0].stream));
	ASSERT_EQ(0, accel_drain(self->fd, g[1].stream));
	EXPECT_EQ(-ETIME, accel_wait1(self->fd, e, 0, deadline_in(SHORT_NS)));
	EXPECT_EQ(-ETIME, accel_sync(self->fd, s4, 0, 0));
	ASSERT_EQ(0, accel_event_query(self->fd, e, &q));
	EXPECT_EQ((uint32_t)ACCEL_EVENT_STATE_PENDING, q.state);

	ASSERT_EQ(0, gate_open(self->fd, &g[2]));
	EXPECT_EQ(0, accel_wait1(self->fd, e, 0, deadline_in(SURE_NS)));
	EXPECT_EQ(0, accel_sync(self->fd, s4, 0, deadline_in(SURE_NS)));
}

/* A host wait captures points when it starts, not later records. */
static void *rerecord_then_open(void *arg)
{
	uint32_t *a = arg;	/* fd, event, stream of a shut gate, gate 1 event */

	usleep(50 * 1000);
	accel_record((int)a[0], a[1], a[2], NULL);
	usleep(50 * 1000);
	accel_signal((int)a[0], a[3], 0, 1);
	return NULL;
}

TEST_F(event, host_wait_captures_at_start)
{
	struct gate g1, g2;
	pthread_t th;
	uint32_t arg[4], e;

	ASSERT_EQ(0, accel_event(self->fd, 0, &e));
	ASSERT_EQ(0, gate_init(self->fd, &g1));
	ASSERT_EQ(0, gate_init(self->fd, &g2));
	ASSERT_EQ(0, accel_record(self->fd, e, g1.stream, NULL));
	arg[0] = self->fd;
	arg[1] = e;
	arg[2] = g2.stream;
	arg[3] = g1.event;
	ASSERT_EQ(0, pthread_create(&th, NULL, rerecord_then_open, arg));
	/* Returns once g1 opens, although e was re-recorded behind g2. */
	EXPECT_EQ(0, accel_wait1(self->fd, e, 0, deadline_in(SURE_NS)));
	pthread_join(th, NULL);
	EXPECT_EQ(-ETIME, accel_wait1(self->fd, e, 0, 0));
	ASSERT_EQ(0, gate_open(self->fd, &g2));
}

TEST_F(event, wait_any_all)
{
	struct accel_wait_entry ent[3];
	struct accel_wait w = { 0 };
	uint32_t u[3];
	int i;

	REQUIRE_CAP(ACCEL_CAP_USER_EVENTS);
	for (i = 0; i < 3; i++) {
		ASSERT_EQ(0, accel_event(self->fd, ACCEL_EVENT_USER, &u[i]));
		ent[i] = (struct accel_wait_entry){ .event = u[i] };
	}
	w.entries = (uintptr_t)ent;
	w.count = 3;

	w.first_signaled = 0xcccccccc;
	w.timeout_ns = deadline_in(SHORT_NS);
	EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_WAIT, &w));
	EXPECT_EQ(ETIME, errno);

	ASSERT_EQ(0, accel_signal(self->fd, u[2], 0, 1));
	w.first_signaled = 0xcccccccc;
	w.timeout_ns = deadline_in(SURE_NS);
	EXPECT_EQ(0, ioctl(self->fd, ACCEL_IOC_WAIT, &w));
	EXPECT_EQ(2u, w.first_signaled);
	EXPECT_EQ(0u, w.pad);
	EXPECT_EQ(3u, w.count);

	ASSERT_EQ(0, accel_signal(self->fd, u[1], 0, 1));
	w.first_signaled = 0xcccccccc;
	EXPECT_EQ(0, ioctl(self->fd, ACCEL_IOC_WAIT, &w));
	EXPECT_EQ(1u, w.first_signaled);

	/* All: u[0] still pending. */
	w.flags = ACCEL_WAIT_ALL;
	w.timeout_ns = 0;
	EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_WAIT, &w));
	EXPECT_EQ(ETIME, errno);
	w.timeout_ns = deadline_in(SHORT_NS);
	EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_WAIT, &w));
	EXPECT_EQ(ETIME, errno);
	ASSERT_EQ(0, accel_signal(self->fd, u[0], 0, 1));
	w.first_signaled = 0xcccccccc;
	w.timeout_ns = deadline_in(SURE_NS);
	EXPECT_EQ(0, ioctl(self->fd, ACCEL_IOC_WAIT, &w));
	EXPECT_EQ(0u, w.first_signaled);
	/* Any: the lowest complete one. */
	w.flags = 0;
	EXPECT_EQ(0, ioctl(self->fd, ACCEL_IOC_WAIT, &w));
	EXPECT_EQ(0u, w.first_signaled);
}

/* User event entries wait for counter >= value; 0 means 1. */
TEST_F(event, wait_user_values)
{
	struct accel_wait_entry ent = { 0 };
	uint32_t u;

	ASSERT_EQ(0, accel_event(self->fd, ACCEL_EVENT_USER, &u));
	ent.event = u;
	ent.value = 0;
	EXPECT_EQ(-ETIME, accel_wait(self->fd, &ent, 1, 0, 0, NULL));
	ASSERT_EQ(0, accel_signal(self->fd, u, 0, 1));
	EXPECT_EQ(0, accel_wait(self->fd, &ent, 1, 0, 0, NULL));
	ent.value = 3;
	EXPECT_EQ(-ETIME, accel_wait(self->fd, &ent, 1, 0, deadline_in(SHORT_NS), NULL));
	ASSERT_EQ(0, accel_signal(self->fd, u, 0, 2));
	EXPECT_EQ(-ETIME, accel_wait(self->fd, &ent, 1, 0, 0, NULL));
	ASSERT_EQ(0, accel_signal(self->fd, u, 0, 3));
	EXPECT_EQ(0, accel_wait(self->fd, &ent, 1, 0, 0, NULL));
	ent.value = 2;
	EXPECT_EQ(0, accel_wait(self->fd, &ent, 1, 0, 0, NULL));

	/* HOST_SIGNAL from a stream raises it; HOST_WAIT gates on the value. */
	{
		uint32_t s1, s2;

		ASSERT_EQ(0, accel_stream(self->fd, 0, 0, &s1));
		ASSERT_EQ(0, accel_stream(self->fd, 0, 0, &s2));
		ASSERT_EQ(0, accel_submit1(self->fd, s2, d_host_wait(u, 10), NULL));
		EXPECT_EQ(-ETIME, accel_sync(self->fd, s2, 0, deadline_in(SHORT_NS)));
		ASSERT_EQ(0, accel_submit1(self->fd, s1, d_host_signal(u, 9), NULL));
		ASSERT_EQ(0, accel_drain(self->fd, s1));
		EXPECT_EQ(-ETIME, accel_sync(self->fd, s2, 0, deadline_in(SHORT_NS)));
		ASSERT_EQ(0, accel_submit1(self->fd, s1, d_host_signal(u, 10), NULL));
		EXPECT_EQ(0, accel_sync(self->fd, s2, 0, deadline_in(SURE_NS)));
	}
}

/*
 * EVENT_DESTROY of a user event that a queued HOST_WAIT waits on, for a
 * value above its counter: -EBUSY, nothing changed, even with a
 * HOST_SIGNAL queued that would reach it; once the value is reached the
 * stream drains and the destroy succeeds.
 */
TEST_F(event, destroy_busy_while_waited)
{
	struct accel_event_query eq;
	struct accel_stream_query q;
	struct gate g;
	uint32_t u, s;

	REQUIRE_CAP(ACCEL_CAP_USER_EVENTS);
	ASSERT_EQ(0, accel_event(self->fd, ACCEL_EVENT_USER, &u));
	ASSERT_EQ(0, accel_stream(self->fd, 0, 0, &s));
	ASSERT_EQ(0, accel_submit1(self->fd, s, d_host_wait(u, 2), NULL));
	ASSERT_EQ(0, accel_submit1(self->fd, s, d_nop(), NULL));
	EXPECT_EQ(-EBUSY, accel_event_destroy(self->fd, u));

	/* Unchanged: the handle answers, the counter is 0, s still waits. */
	ASSERT_EQ(0, accel_event_query(self->fd, u, &eq));
	EXPECT_EQ((uint32_t)ACCEL_EVENT_STATE_PENDING, eq.state);
	EXPECT_EQ(0ULL, eq.value);
	ASSERT_EQ(0, accel_query(self->fd, s, &q));
	EXPECT_EQ(2ULL, q.submitted);
	EXPECT_EQ(0ULL, q.completed);
	EXPECT_EQ(2u, q.queued);
	EXPECT_EQ(0, q.error);
	EXPECT_EQ(-ETIME, accel_sync(self->fd, s, 0, 0));

	/* Below the value, or with a signal queued behind a gate: refused. */
	ASSERT_EQ(0, accel_signal(self->fd, u, 0, 1));
	EXPECT_EQ(-EBUSY, accel_event_destroy(self->fd, u));
	ASSERT_EQ(0, gate_init(self->fd, &g));
	ASSERT_EQ(0, accel_submit1(self->fd, g.stream, d_host_signal(u, 2), NULL));
	EXPECT_EQ(-EBUSY, accel_event_destroy(self->fd, u));
	ASSERT_EQ(0, accel_query(self->fd, s, &q));
	EXPECT_EQ(0ULL, q.completed);
	EXPECT_EQ(2u, q.queued);

	/* The signal runs: the wait completes, s drains, the destroy goes. */
	ASSERT_EQ(0, gate_open(self->fd, &g));
	EXPECT_EQ(0, accel_drain(self->fd, s));
	EXPECT_EQ(0, accel_drain(self->fd, g.stream));
	ASSERT_EQ(0, accel_event_query(self->fd, u, &eq));
	EXPECT_EQ(2ULL, eq.value);
	EXPECT_EQ(0, accel_event_destroy(self->fd, u));
	EXPECT_EQ(-ENOENT, accel_event_destroy(self->fd, u));
	EXPECT_EQ(-ENOENT, accel_signal(self->fd, u, 0, 3));
}

/* A HOST_WAIT already satisfied, or on a failed event, does not refuse. */
TEST_F(event, destroy_satisfied_wait)
{
	struct gate g;
	uint32_t u, bad;

	REQUIRE_CAP(ACCEL_CAP_USER_EVENTS);
	ASSERT_EQ(0, accel_event(self->fd, ACCEL_EVENT_USER, &u));
	ASSERT_EQ(0, accel_event(self->fd, ACCEL_EVENT_USER, &bad));
	ASSERT_EQ(0, accel_signal(self->fd, u, 0, 4));
	ASSERT_EQ(0, gate_init(self->fd, &g));
	ASSERT_EQ(0, accel_submit1(self->fd, g.stream, d_host_wait(u, 4), NULL));
	ASSERT_EQ(0, accel_submit1(self->fd, g.stream, d_host_wait(bad, 1), NULL));
	EXPECT_EQ(0, accel_event_destroy(self->fd, u));
	EXPECT_EQ(-EBUSY, accel_event_destroy(self->fd, bad));
	ASSERT_EQ(0, accel_signal(self->fd, bad, ACCEL_SIGNAL_ERROR, 0));
	EXPECT_EQ(0, accel_event_destroy(self->fd, bad));
	ASSERT_EQ(0, gate_open(self->fd, &g));
	EXPECT_EQ(-EIO, accel_drain(self->fd, g.stream));
}

TEST_F(event, wait_errors)
{
	struct accel_wait_entry ent[2] = { 0 };
	struct accel_wait w = { .count = 1 };
	uint32_t e, u;

	ASSERT_EQ(0, accel_event(self->fd, 0, &e));
	ASSERT_EQ(0, accel_event(self->fd, ACCEL_EVENT_USER, &u));
	ent[0].event = e;
	ent[1].event = u;
	w.entries = (uintptr_t)ent;
	w.timeout_ns = deadline_in(SURE_NS);

	EXPECT_EQ(0, ioctl(self->fd, ACCEL_IOC_WAIT, &w));
	w.count = 0;
	EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_WAIT, &w));
	EXPECT_EQ(EINVAL, errno);
	w.count = self->info.max_wait + 1;
	EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_WAIT, &w));
	EXPECT_EQ(EINVAL, errno);
	w.count = 1;
	w.flags = 2;
	EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_WAIT, &w));
	EXPECT_EQ(EINVAL, errno);
	w.flags = 0;
	w.pad = 1;
	EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_WAIT, &w));
	EXPECT_EQ(EINVAL, errno);
	w.pad = 0;
	ent[0].pad = 1;
	EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_WAIT, &w));
	EXPECT_EQ(EINVAL, errno);
	ent[0].pad = 0;
	ent[0].value = 1;	/* a plain event takes no value */
	EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_WAIT, &w));
	EXPECT_EQ(EINVAL, errno);
	ent[0].value = 0;
	ent[0].event = BAD_HANDLE;
	EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_WAIT, &w));
	EXPECT_EQ(ENOENT, errno);
	ent[0].event = e;
	w.entries = 8;
	EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_WAIT, &w));
	EXPECT_EQ(EFAULT, errno);
	EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_WAIT, (void *)8));
	EXPECT_EQ(EFAULT, errno);
}

TEST_F(event, wait_eio)
{
	struct accel_wait_entry ent[2] = { 0 };
	struct accel_wait w = { .count = 2 };
	uint32_t u0, u1, e;
	struct gate g;

	REQUIRE_CAP(ACCEL_CAP_USER_EVENTS);
	ASSERT_EQ(0, accel_event(self->fd, ACCEL_EVENT_USER, &u0));
	ASSERT_EQ(0, accel_event(self->fd, ACCEL_EVENT_USER, &u1));
	ent[0].event = u0;
	ent[1].event = u1;
	w.entries = (uintptr_t)ent;
	ASSERT_EQ(0, accel_signal(self->fd, u1, ACCEL_SIGNAL_ERROR, 0));
	w.first_signaled = 0xcccccccc;
	w.timeout_ns = deadline_in(SURE_NS);
	EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_WAIT, &w));
	EXPECT_EQ(EIO, errno);
	EXPECT_EQ(1u, w.first_signaled);
	w.flags = ACCEL_WAIT_ALL;
	w.first_signaled = 0xcccccccc;
	EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_WAIT, &w));
	EXPECT_EQ(EIO, errno);
	EXPECT_EQ(1u, w.first_signaled);

	/* A plain event recorded on a stream that fails. */
	ASSERT_EQ(0, accel_event(self->fd, 0, &e));
	ASSERT_EQ(0, gate_init(self->fd, &g));
	ASSERT_EQ(0, accel_record(self->fd, e, g.stream, NULL));
	ASSERT_EQ(0, accel_signal(self->fd, g.event, ACCEL_SIGNAL_ERROR, 0));
	EXPECT_EQ(-EIO, accel_wait1(self->fd, e, 0, deadline_in(SURE_NS)));
}

TEST_F(event, elapsed)
{
	struct accel_event_elapsed el;
	struct accel_event_query q0, q1;
	long ps = page_size();
	uint8_t *a = anon_map(64 * ps), *b = anon_map(64 * ps);
	uint32_t t0, t1, s, ha, hb;
	struct accel_desc d[3];

	REQUIRE_CAP(ACCEL_CAP_EVENT_TIMING);
	ASSERT_NE(NULL, a);
	ASSERT_NE(NULL, b);
	ASSERT_EQ(0, accel_register(self->fd, a, 64 * ps, 0, &ha));
	ASSERT_EQ(0, accel_register(self->fd, b, 64 * ps, 0, &hb));
	ASSERT_EQ(0, accel_event(self->fd, ACCEL_EVENT_TIMING, &t0));
	ASSERT_EQ(0, accel_event(self->fd, ACCEL_EVENT_TIMING, &t1));
	ASSERT_EQ(0, accel_stream(self->fd, 0, 0, &s));
	d[0] = d_record(t0);
	d[1] = d_copy(hb, 0, ha, 0, 64 * ps);
	d[2] = d_record(t1);
	ASSERT_EQ(0, accel_submit(self->fd, s, d, 3, NULL));
	ASSERT_EQ(0, accel_drain(self->fd, s));

	memset(&el, 0xcc, sizeof(el));
	el.start = t0;
	el.end = t1;
	ASSERT_EQ(0, ioctl(self->fd, ACCEL_IOC_EVENT_ELAPSED, &el));
	EXPECT_LE(0, el.elapsed_ns);
	EXPECT_EQ(t0, el.start);
	EXPECT_EQ(t1, el.end);
	ASSERT_EQ(0, accel_event_query(self->fd, t0, &q0));
	ASSERT_EQ(0, accel_event_query(self->fd, t1, &q1));
	EXPECT_NE(0ULL, q0.timestamp_ns);
	EXPECT_EQ((int64_t)(q1.timestamp_ns - q0.timestamp_ns), el.elapsed_ns);
	{
		int64_t fwd = el.elapsed_ns;

		el.start = t1;
		el.end = t0;
		ASSERT_EQ(0, ioctl(self->fd, ACCEL_IOC_EVENT_ELAPSED, &el));
		EXPECT_EQ(-fwd, el.elapsed_ns);
		el.start = t0;
		ASSERT_EQ(0, ioctl(self->fd, ACCEL_IOC_EVENT_ELAPSED, &el));
		EXPECT_EQ(0, el.elapsed_ns);
	}
	munmap(a, 64 * ps);
	munmap(b, 64 * ps);
}

TEST_F(event, elapsed_errors)
{
	struct accel_event_elapsed el = { 0 };
	uint32_t t0, t1, plain, fresh, tf;
	struct gate g;

	REQUIRE_CAP(ACCEL_CAP_EVENT_TIMING);
	ASSERT_EQ(0, accel_event(self->fd, ACCEL_EVENT_TIMING, &t0));
	ASSERT_EQ(0, accel_event(self->fd, ACCEL_EVENT_TIMING, &t1));
	ASSERT_EQ(0, accel_event(self->fd, ACCEL_EVENT_TIMING, &fresh));
	ASSERT_EQ(0, accel_event(self->fd, ACCEL_EVENT_TIMING, &tf));
	ASSERT_EQ(0, accel_event(self->fd, 0, &plain));
	ASSERT_EQ(0, accel_stream(self->fd, 0, 0, &g.stream));
	ASSERT_EQ(0, accel_record(self->fd, t0, g.stream, NULL));
	ASSERT_EQ(0, accel_record(self->fd, plain, g.stream, NULL));
	ASSERT_EQ(0, accel_drain(self->fd, g.stream));

	el.start = BAD_HANDLE;
	el.end = t0;
	EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_EVENT_ELAPSED, &el));
	EXPECT_EQ(ENOENT, errno);
	el.start = t0;
	el.end = BAD_HANDLE;
	EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_EVENT_ELAPSED, &el));
	EXPECT_EQ(ENOENT, errno);
	el.end = plain;		/* no TIMING */
	EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_EVENT_ELAPSED, &el));
	EXPECT_EQ(EINVAL, errno);
	el.end = fresh;		/* never recorded */
	EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_EVENT_ELAPSED, &el));
	EXPECT_EQ(EINVAL, errno);

	/* Pending: EAGAIN. */
	ASSERT_EQ(0, gate_on(self->fd, &g, g.stream));
	ASSERT_EQ(0, accel_record(self->fd, t1, g.stream, NULL));
	el.end = t1;
	EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_EVENT_ELAPSED, &el));
	EXPECT_EQ(EAGAIN, errno);
	/* Failed: EIO. */
	ASSERT_EQ(0, accel_signal(self->fd, g.event, ACCEL_SIGNAL_ERROR, 0));
	ASSERT_EQ(-EIO, accel_sync(self->fd, g.stream, 0, deadline_in(SURE_NS)));
	EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_EVENT_ELAPSED, &el));
	EXPECT_EQ(EIO, errno);
	(void)tf;
}

/* Cross-stream ordering: s2's copy runs only after s1's, via an event. */
TEST_F(event, cross_stream_order)
{
	const size_t n = 256 * 1024;
	uint8_t *a = anon_map(n), *b = anon_map(n), *c = anon_map(n);
	struct accel_stream_query q;
	uint32_t ha, hb, hc, e, s2;
	struct gate g;

	ASSERT_NE(NULL, a);
	ASSERT_NE(NULL, b);
	ASSERT_NE(NULL, c);
	fill_random(a, n, 3);
	memset(b, 0, n);
	memset(c, 0, n);
	ASSERT_EQ(0, accel_register(self->fd, a, n, 0, &ha));
	ASSERT_EQ(0, accel_register(self->fd, b, n, 0, &hb));
	ASSERT_EQ(0, accel_register(self->fd, c, n, 0, &hc));
	ASSERT_EQ(0, accel_event(self->fd, 0, &e));
	ASSERT_EQ(0, gate_init(self->fd, &g));
	ASSERT_EQ(0, accel_stream(self->fd, 0, 0, &s2));

	ASSERT_EQ(0, accel_submit1(self->fd, g.stream, d_copy(hb, 0, ha, 0, n), NULL));
	ASSERT_EQ(0, accel_record(self->fd, e, g.stream, NULL));
	ASSERT_EQ(0, accel_submit1(self->fd, s2, d_stream_wait(e), NULL));
	ASSERT_EQ(0, accel_submit1(self->fd, s2, d_copy(hc, 0, hb, 0, n), NULL));

	EXPECT_EQ(-ETIME, accel_sync(self->fd, s2, 0, deadline_in(SHORT_NS)));
	ASSERT_EQ(0, accel_query(self->fd, s2, &q));
	EXPECT_EQ(0ULL, q.completed);
	EXPECT_TRUE(all_bytes(c, n, 0));

	ASSERT_EQ(0, gate_open(self->fd, &g));
	EXPECT_EQ(0, accel_sync(self->fd, s2, 0, deadline_in(SURE_NS)));
	EXPECT_EQ(-1, first_diff(a, c, n));
}

/* A failure propagates through STREAM_WAIT: the waiter fails too. */
TEST_F(event, stream_wait_on_failed)
{
	struct accel_stream_query q;
	struct gate g;
	uint32_t e, s2;

	ASSERT_EQ(0, accel_event(self->fd, 0, &e));
	ASSERT_EQ(0, gate_init(self->fd, &g));
	ASSERT_EQ(0, accel_stream(self->fd, 0, 0, &s2));
	ASSERT_EQ(0, accel_record(self->fd, e, g.stream, NULL));
	ASSERT_EQ(0, accel_submit1(self->fd, s2, d_stream_wait(e), NULL));
	ASSERT_EQ(0, accel_signal(self->fd, g.event, ACCEL_SIGNAL_ERROR, 0));
	EXPECT_EQ(-EIO, accel_sync(self->fd, s2, 0, deadline_in(SURE_NS)));
	ASSERT_EQ(0, accel_wait_idle(self->fd, s2, &q));
	EXPECT_EQ(-EIO, q.error);
}

static void *signal_later_thread(void *arg)
{
	int *a = arg;	/* fd, user event */

	usleep(100 * 1000);
	accel_signal(a[0], (uint32_t)a[1], 0, 1);
	return NULL;
}

/* DOC: completions: read(2) and poll(2) on the file. */
TEST_F(event, completions_read_poll)
{
	struct pollfd pfd = { .fd = self->fd, .events = POLLIN };
	struct accel_desc d[5] = { d_nop(), d_nop(), d_nop(), d_nop(), d_nop() };
	uint64_t v, total;
	uint32_t s, t;
	char small[4];
	int fl;

	REQUIRE_CAP(ACCEL_CAP_POLL);
	fl = fcntl(self->fd, F_GETFL);
	ASSERT_EQ(0, fcntl(self->fd, F_SETFL, fl | O_NONBLOCK));

	EXPECT_EQ(0, poll(&pfd, 1, 0));
	EXPECT_EQ(-1, read(self->fd, &v, 8));
	EXPECT_EQ(EAGAIN, errno);
	EXPECT_EQ(-1, read(self->fd, small, sizeof(small)));
	EXPECT_EQ(EINVAL, errno);

	ASSERT_EQ(0, accel_stream(self->fd, 0, 0, &s));
	ASSERT_EQ(0, accel_stream(self->fd, 0, 0, &t));
	ASSERT_EQ(0, accel_submit(self->fd, s, d, 5, NULL));
	ASSERT_EQ(0, accel_submit(self->fd, t, d, 2, NULL));
	ASSERT_EQ(0, accel_drain(self->fd, s));
	ASSERT_EQ(0, accel_drain(self->fd, t));

	EXPECT_EQ(1, poll(&pfd, 1, 0));
	EXPECT_EQ(POLLIN, pfd.revents & (POLLIN | POLLERR | POLLHUP));
	v = 0xccccccccccccccccULL;
	EXPECT_EQ(8, read(self->fd, &v, 8));
	EXPECT_EQ(7ULL, v);
	/* Reset by the read. */
	pfd.revents = 0;
	EXPECT_EQ(0, poll(&pfd, 1, 0));
	EXPECT_EQ(-1, read(self->fd, &v, 8));
	EXPECT_EQ(EAGAIN, errno);

	/* A larger buffer still reads 8 bytes. */
	ASSERT_EQ(0, accel_submit(self->fd, s, d, 1, NULL));
	ASSERT_EQ(0, accel_drain(self->fd, s));
	{
		uint64_t big[2] = { 0xcc, 0xdd };

		EXPECT_EQ(8, read(self->fd, big, sizeof(big)));
		EXPECT_EQ(1ULL, big[0]);
		EXPECT_EQ(0xddULL, big[1]);
	}

	/* Blocking: the read waits for retirement behind a gate. */
	ASSERT_EQ(0, fcntl(self->fd, F_SETFL, fl & ~O_NONBLOCK));
	{
		struct gate g;
		pthread_t th;
		int arg[2];

		ASSERT_EQ(0, gate_on(self->fd, &g, t));
		ASSERT_EQ(0, accel_submit(self->fd, t, d, 2, NULL));
		arg[0] = self->fd;
		arg[1] = (int)g.event;
		ASSERT_EQ(0, pthread_create(&th, NULL, signal_later_thread, arg));
		/* The gate's HOST_WAIT and two NOPs: three, maybe over reads. */
		total = 0;
		while (total < 3) {
			v = 0;
			ASSERT_EQ(8, read(self->fd, &v, 8));
			ASSERT_NE(0ULL, v);
			total += v;
		}
		EXPECT_EQ(3ULL, total);
		pthread_join(th, NULL);
	}
	/* poll with a timeout wakes on retirement, too. */
	ASSERT_EQ(0, accel_submit(self->fd, s, d, 1, NULL));
	pfd.revents = 0;
	EXPECT_EQ(1, poll(&pfd, 1, 30000));
	EXPECT_NE(0, pfd.revents & POLLIN);
}

ACCEL_HARNESS_MAIN
