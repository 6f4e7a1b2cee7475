// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Unit tests of the pure core (core/), compiled in userspace from the very
 * files the module builds.
 */
#include <string.h>

#include "kselftest_harness.h"
#include "asc_core.h"

static struct asc_entry mk_copy(struct asc_region *dst, struct asc_region *src,
			       u64 doff, u64 soff, u64 len)
{
	struct asc_entry e = { 0 };

	e.desc.op = ACCEL_OP_COPY;
	e.desc.dst = 1;
	e.desc.src = 2;
	e.desc.dst_offset = doff;
	e.desc.src_offset = soff;
	e.desc.length = len;
	e.dst = dst;
	e.src = src;
	return e;
}

static struct asc_entry mk_ev(u32 op, struct asc_event *ev, u64 value)
{
	struct asc_entry e = { 0 };

	e.desc.op = op;
	e.desc.event = 7;
	e.desc.value = value;
	e.event = ev;
	return e;
}

TEST(desc_shape)
{
	struct accel_desc d = { .op = ACCEL_OP_COPY, .dst = 1, .src = 2, .length = 5 };

	EXPECT_EQ(0, asc_check_desc(&d));
	d.flags = 1;
	EXPECT_EQ(-EINVAL, asc_check_desc(&d));
	d.flags = 0;
	d.reserved = 1;
	EXPECT_EQ(-EINVAL, asc_check_desc(&d));
	d.reserved = 0;
	d.event = 3;		/* unused by COPY */
	EXPECT_EQ(-EINVAL, asc_check_desc(&d));
	d.event = 0;
	d.dst = 0;
	EXPECT_EQ(-EINVAL, asc_check_desc(&d));

	memset(&d, 0, sizeof(d));
	EXPECT_EQ(0, asc_check_desc(&d));	/* NOP */
	d.user_data = ~0ULL;
	EXPECT_EQ(0, asc_check_desc(&d));	/* user_data is free */
	d.length = 1;
	EXPECT_EQ(-EINVAL, asc_check_desc(&d));

	memset(&d, 0, sizeof(d));
	d.op = ACCEL_OP_EVENT_RECORD;
	EXPECT_EQ(-EINVAL, asc_check_desc(&d));	/* no event */
	d.event = 4;
	EXPECT_EQ(0, asc_check_desc(&d));
	d.value = 1;
	EXPECT_EQ(-EINVAL, asc_check_desc(&d));
	d.op = ACCEL_OP_HOST_WAIT;
	EXPECT_EQ(0, asc_check_desc(&d));
	d.op = 99;
	EXPECT_EQ(-EINVAL, asc_check_desc(&d));
}

TEST(copy_bounds)
{
	struct asc_region dst = { .size = 100 }, src = { .size = 50 };
	struct asc_entry e;

	e = mk_copy(&dst, &src, 0, 0, 50);
	EXPECT_EQ(0, asc_validate_desc(&e.desc, &dst, &src, NULL));
	e = mk_copy(&dst, &src, 50, 0, 50);
	EXPECT_EQ(0, asc_validate_desc(&e.desc, &dst, &src, NULL));
	e = mk_copy(&dst, &src, 51, 0, 50);
	EXPECT_EQ(-EINVAL, asc_validate_desc(&e.desc, &dst, &src, NULL));
	e = mk_copy(&dst, &src, 0, 1, 50);
	EXPECT_EQ(-EINVAL, asc_validate_desc(&e.desc, &dst, &src, NULL));
	e = mk_copy(&dst, &src, ~0ULL, 0, 2);	/* offset + length wraps */
	EXPECT_EQ(-EINVAL, asc_validate_desc(&e.desc, &dst, &src, NULL));
	e = mk_copy(&dst, &src, 0, 0, 0);	/* zero length: a no-op */
	EXPECT_EQ(0, asc_validate_desc(&e.desc, &dst, &src, NULL));
	dst.flags = ACCEL_MEM_READONLY;
	e = mk_copy(&dst, &src, 0, 0, 1);
	EXPECT_EQ(-EPERM, asc_validate_desc(&e.desc, &dst, &src, NULL));
	dst.flags = 0;
	src.released = true;
	EXPECT_EQ(-ENOENT, asc_validate_desc(&e.desc, &dst, &src, NULL));
}

TEST(memset_shape_and_bounds)
{
	struct accel_desc d = { .op = ACCEL_OP_MEMSET, .dst = 1, .length = 8,
				.value = 0xff };
	struct asc_region r = { .size = 64 };
	unsigned char b[16];
	uint16_t v;

	EXPECT_EQ(0, asc_check_desc(&d));
	EXPECT_EQ(1u, asc_memset_width(&d));
	d.value = 0x100;			/* does not fit a byte */
	EXPECT_EQ(-EINVAL, asc_check_desc(&d));
	d.flags = ACCEL_MEMSET_D16;
	d.value = 0xffff;
	EXPECT_EQ(0, asc_check_desc(&d));
	d.length = 7;				/* not whole elements */
	EXPECT_EQ(-EINVAL, asc_check_desc(&d));
	d.length = 8;
	d.flags = ACCEL_MEMSET_D16 | ACCEL_MEMSET_D32;
	EXPECT_EQ(-EINVAL, asc_check_desc(&d));
	d.flags = ACCEL_MEMSET_D32;
	d.value = 1ULL << 32;
	EXPECT_EQ(-EINVAL, asc_check_desc(&d));
	d.value = 0;
	d.src = 2;				/* unused by MEMSET */
	EXPECT_EQ(-EINVAL, asc_check_desc(&d));
	d.src = 0;
	d.reserved = 1;
	EXPECT_EQ(-EINVAL, asc_check_desc(&d));
	d.reserved = 0;
	EXPECT_EQ(0, asc_desc_event(&d));
	EXPECT_EQ(8ULL, asc_desc_bytes(&d));

	d.dst_offset = 56;
	EXPECT_EQ(0, asc_validate_desc(&d, &r, NULL, NULL));
	d.dst_offset = 60;
	EXPECT_EQ(-EINVAL, asc_validate_desc(&d, &r, NULL, NULL));
	d.dst_offset = 2;			/* not 4-byte aligned */
	EXPECT_EQ(-EINVAL, asc_validate_desc(&d, &r, NULL, NULL));
	r.addr = 0x1002;			/* a registered range's address */
	EXPECT_EQ(0, asc_validate_desc(&d, &r, NULL, NULL));
	r.flags = ACCEL_MEM_READONLY;
	EXPECT_EQ(-EPERM, asc_validate_desc(&d, &r, NULL, NULL));
	r.flags = 0;
	r.released = true;
	EXPECT_EQ(-ENOENT, asc_validate_desc(&d, &r, NULL, NULL));

	/* The pattern, from a phase inside an element. */
	memset(b, 0, sizeof(b));
	asc_memset_fill(b, 11, 0xaabb, 2, 1);
	memcpy(&v, b + 1, 2);
	EXPECT_EQ(0xaabb, v);
	EXPECT_EQ(0xaa, b[0]);
	EXPECT_EQ(0, b[11]);
}

TEST(copy_2d_shape_and_bounds)
{
	struct accel_desc d = { .op = ACCEL_OP_COPY_2D, .dst = 1, .src = 2,
				.width = 10, .height = 4, .dst_pitch = 16,
				.src_pitch = 10 };
	struct asc_region dst = { .size = 58 }, src = { .size = 40 };

	EXPECT_EQ(0, asc_check_desc(&d));
	EXPECT_EQ(0, asc_desc_event(&d));	/* dst_pitch is no event */
	EXPECT_EQ(40ULL, asc_desc_bytes(&d));
	/* Last row ends at 3 * 16 + 10 = 58 and 3 * 10 + 10 = 40. */
	EXPECT_EQ(0, asc_validate_desc(&d, &dst, &src, NULL));
	d.dst_offset = 1;
	EXPECT_EQ(-EINVAL, asc_validate_desc(&d, &dst, &src, NULL));
	d.dst_offset = 0;
	d.src_offset = 1;
	EXPECT_EQ(-EINVAL, asc_validate_desc(&d, &dst, &src, NULL));
	d.src_offset = 0;
	d.height = 1ULL << 62;			/* rows * pitch overflows */
	EXPECT_EQ(-EINVAL, asc_validate_desc(&d, &dst, &src, NULL));
	d.height = 4;
	d.dst_offset = ~0ULL - 20;		/* offset + span wraps */
	EXPECT_EQ(-EINVAL, asc_validate_desc(&d, &dst, &src, NULL));
	d.dst_offset = 0;
	d.width = 0;				/* empty: offsets in bounds */
	EXPECT_EQ(0, asc_validate_desc(&d, &dst, &src, NULL));
	d.dst_offset = 59;
	EXPECT_EQ(-EINVAL, asc_validate_desc(&d, &dst, &src, NULL));
	d.dst_offset = 0;
	d.width = 10;
	d.src_pitch = 9;			/* below the width */
	EXPECT_EQ(-EINVAL, asc_check_desc(&d));
	d.src_pitch = 10;
	d.flags = 1;
	EXPECT_EQ(-EINVAL, asc_check_desc(&d));
	d.flags = 0;
	dst.flags = ACCEL_MEM_READONLY;
	EXPECT_EQ(-EPERM, asc_validate_desc(&d, &dst, &src, NULL));
	dst.flags = 0;
	src.flags = ACCEL_MEM_READONLY;		/* a read-only source is fine */
	EXPECT_EQ(0, asc_validate_desc(&d, &dst, &src, NULL));
	EXPECT_EQ(-ENOENT, asc_validate_desc(&d, &dst, NULL, NULL));
}

TEST(event_kinds)
{
	struct asc_event plain, user;
	struct asc_entry e;

	asc_event_init(&plain, 0);
	asc_event_init(&user, ACCEL_EVENT_USER);
	e = mk_ev(ACCEL_OP_EVENT_RECORD, &plain, 0);
	EXPECT_EQ(0, asc_validate_desc(&e.desc, NULL, NULL, &plain));
	EXPECT_EQ(-EINVAL, asc_validate_desc(&e.desc, NULL, NULL, &user));
	e = mk_ev(ACCEL_OP_HOST_WAIT, &user, 1);
	EXPECT_EQ(0, asc_validate_desc(&e.desc, NULL, NULL, &user));
	EXPECT_EQ(-EINVAL, asc_validate_desc(&e.desc, NULL, NULL, &plain));
}

TEST(timeline_order_and_refcounts)
{
	struct asc_timeline tl = { 0 };
	struct asc_queue q = { 0 };
	struct asc_region a = { .size = 10 }, b = { .size = 10 };
	struct asc_release rel = { 0 };
	struct asc_entry e1 = mk_copy(&a, &b, 0, 0, 10);
	struct asc_entry e2 = mk_copy(&b, &a, 0, 0, 10);

	asc_enqueue(&tl, &q, &e1, &rel);
	asc_enqueue(&tl, &q, &e2, &rel);
	EXPECT_EQ(1, e1.seq);
	EXPECT_EQ(2, e2.seq);
	EXPECT_EQ(2, tl.submitted);
	EXPECT_EQ(2, a.inflight);
	EXPECT_EQ(-EBUSY, asc_region_release(&a, 0));
	EXPECT_FALSE(a.released);
	EXPECT_EQ(0, asc_region_release(&a, ACCEL_MEM_RELEASE_DEFERRED));
	EXPECT_TRUE(a.released);
	EXPECT_EQ(&e1, asc_queue_peek(&q));
	EXPECT_EQ(-EAGAIN, asc_timeline_check_sync(&tl, 1));

	EXPECT_EQ(&e1, asc_retire_head(&tl, &q, 0, 5, &rel));
	EXPECT_EQ(1, tl.completed);
	EXPECT_EQ(0, asc_timeline_check_sync(&tl, 1));
	EXPECT_EQ(0, rel.nregion);
	EXPECT_EQ(&e2, asc_retire_head(&tl, &q, 0, 6, &rel));
	/* The deferred release of a is due; b was never released. */
	ASSERT_EQ(1, rel.nregion);
	EXPECT_EQ(&a, rel.region[0]);
	EXPECT_EQ(0, b.inflight);
	EXPECT_EQ(1, asc_region_release(&b, 0));
	EXPECT_EQ(NULL, asc_queue_peek(&q));
	EXPECT_EQ(0, q.count);
}

TEST(never_recorded_event_is_complete)
{
	struct asc_event ev;
	int err = 1;

	asc_event_init(&ev, 0);
	EXPECT_EQ(ACCEL_EVENT_STATE_COMPLETE, asc_event_state(&ev, &err));
	EXPECT_EQ(0, err);
}

TEST(wait_captures_point_at_enqueue)
{
	struct asc_timeline ta = { 0 }, tb = { 0 };
	struct asc_queue qa = { 0 }, qb = { 0 };
	struct asc_release rel = { 0 };
	struct asc_event ev;
	struct asc_entry n1 = { 0 }, rec1, wait, n2 = { 0 }, rec2;

	asc_event_init(&ev, ACCEL_EVENT_TIMING);
	asc_enqueue(&ta, &qa, &n1, &rel);		/* A:1 nop */
	rec1 = mk_ev(ACCEL_OP_EVENT_RECORD, &ev, 0);
	asc_enqueue(&ta, &qa, &rec1, &rel);		/* A:2 record */
	EXPECT_EQ(&ta, ev.point.tl);
	EXPECT_EQ(2, ev.point.seq);
	wait = mk_ev(ACCEL_OP_STREAM_WAIT, &ev, 0);
	asc_enqueue(&tb, &qb, &wait, &rel);		/* B:1 waits A:2 */
	EXPECT_EQ(2, wait.wait.seq);

	/* A re-record later does not move what B waits for. */
	asc_enqueue(&ta, &qa, &n2, &rel);		/* A:3 */
	rec2 = mk_ev(ACCEL_OP_EVENT_RECORD, &ev, 0);
	asc_enqueue(&ta, &qa, &rec2, &rel);		/* A:4 */
	EXPECT_EQ(4, ev.point.seq);
	EXPECT_EQ(2, wait.wait.seq);

	EXPECT_EQ(0, asc_entry_ready(&wait));
	asc_retire_head(&ta, &qa, 0, 10, &rel);
	EXPECT_EQ(0, asc_entry_ready(&wait));
	asc_retire_head(&ta, &qa, 0, 11, &rel);
	EXPECT_EQ(1, asc_entry_ready(&wait));	/* A:2 done, A:4 not */
	EXPECT_EQ(0, ev.timestamp_ns);		/* re-recorded: not yet */

	/* Timeline references: ev's point and B's wait. */
	EXPECT_EQ(2, ta.refs);
	asc_retire_head(&tb, &qb, 0, 12, &rel);
	EXPECT_EQ(1, ta.refs);
	asc_retire_head(&ta, &qa, 0, 13, &rel);
	asc_retire_head(&ta, &qa, 0, 14, &rel);
	EXPECT_EQ(14, ev.timestamp_ns);
	asc_event_kill(&ev, &rel);
	EXPECT_EQ(0, ta.refs);
	ASSERT_EQ(1, rel.ntl);
	EXPECT_EQ(&ta, rel.tl[0]);
}

TEST(sticky_error)
{
	struct asc_timeline tl = { 0 };
	struct asc_queue q = { 0 };
	struct asc_release rel = { 0 };
	struct asc_entry e[3] = { { 0 }, { 0 }, { 0 } };
	struct asc_point p1 = { &tl, 1 }, p2 = { &tl, 2 }, p3 = { &tl, 3 };
	int i;

	for (i = 0; i < 3; i++)
		asc_enqueue(&tl, &q, &e[i], &rel);
	asc_retire_head(&tl, &q, 0, 1, &rel);
	asc_retire_head(&tl, &q, -EIO, 2, &rel);
	EXPECT_EQ(1, asc_point_state(&p1));
	EXPECT_EQ(-EIO, asc_point_state(&p2));
	EXPECT_EQ(-EIO, asc_point_state(&p3));	/* not retired, still failed */
	EXPECT_EQ(-EIO, asc_timeline_check_sync(&tl, 3));
	EXPECT_EQ(0, asc_timeline_check_sync(&tl, 1));
	EXPECT_EQ(2, tl.error_seq);
	asc_retire_head(&tl, &q, -ECANCELED, 3, &rel);
	EXPECT_EQ(-EIO, tl.error);		/* the first failure stays */
}

TEST(user_events_gate)
{
	struct asc_timeline tl = { 0 };
	struct asc_queue q = { 0 };
	struct asc_release rel = { 0 };
	struct asc_event u;
	struct asc_entry w, s;

	asc_event_init(&u, ACCEL_EVENT_USER);
	w = mk_ev(ACCEL_OP_HOST_WAIT, &u, 2);
	s = mk_ev(ACCEL_OP_HOST_SIGNAL, &u, 5);
	asc_enqueue(&tl, &q, &w, &rel);
	asc_enqueue(&tl, &q, &s, &rel);
	EXPECT_EQ(2, u.refs);
	EXPECT_EQ(0, asc_entry_ready(&w));
	EXPECT_TRUE(asc_event_signal(&u, 1, false));
	EXPECT_EQ(0, asc_entry_ready(&w));
	EXPECT_TRUE(asc_event_signal(&u, 2, false));
	EXPECT_FALSE(asc_event_signal(&u, 1, false));	/* never lowers */
	EXPECT_EQ(2, u.value);
	EXPECT_EQ(1, asc_entry_ready(&w));
	asc_retire_head(&tl, &q, 0, 1, &rel);
	asc_entry_execute(&s);
	EXPECT_EQ(5, u.value);
	asc_event_kill(&u, &rel);
	asc_retire_head(&tl, &q, 0, 2, &rel);
	/* Dead and unreferenced: reported for freeing. */
	ASSERT_EQ(1, rel.nevent);
	EXPECT_EQ(&u, rel.event[0]);
}

/*
 * asc_event_destroy(): refused while a queued HOST_WAIT is not satisfied,
 * whatever HOST_SIGNAL is queued; nothing changes when refused; the
 * waits list follows enqueue and retirement in any order.
 */
TEST(user_event_destroy_busy)
{
	struct asc_timeline t1 = { 0 }, t2 = { 0 };
	struct asc_queue q1 = { 0 }, q2 = { 0 };
	struct asc_release rel = { 0 };
	struct asc_event u, p;
	struct asc_entry w1, w2, w3, sig;

	asc_event_init(&u, ACCEL_EVENT_USER);
	EXPECT_EQ(NULL, u.waits);
	EXPECT_EQ(0, asc_event_destroy(&u, &rel));	/* nothing waits */
	EXPECT_TRUE(u.dead);
	ASSERT_EQ(1, rel.nevent);			/* and nothing names it */
	EXPECT_EQ(&u, rel.event[0]);

	memset(&rel, 0, sizeof(rel));
	asc_event_init(&u, ACCEL_EVENT_USER);
	w1 = mk_ev(ACCEL_OP_HOST_WAIT, &u, 1);
	w2 = mk_ev(ACCEL_OP_HOST_WAIT, &u, 3);
	w3 = mk_ev(ACCEL_OP_HOST_WAIT, &u, 0);		/* 0: satisfied at once */
	sig = mk_ev(ACCEL_OP_HOST_SIGNAL, &u, 3);
	asc_enqueue(&t1, &q1, &w1, &rel);
	asc_enqueue(&t2, &q2, &w2, &rel);
	asc_enqueue(&t2, &q2, &w3, &rel);
	asc_enqueue(&t1, &q1, &sig, &rel);		/* behind w1: could run */
	EXPECT_EQ(&w3, u.waits);
	EXPECT_EQ(4, u.refs);
	EXPECT_EQ(-EBUSY, asc_event_destroy(&u, &rel));
	EXPECT_FALSE(u.dead);
	EXPECT_EQ(4, u.refs);
	EXPECT_EQ(0, rel.nevent);
	EXPECT_EQ(0, rel.ntl);

	/* w1 satisfied, w2 not: still refused. */
	EXPECT_TRUE(asc_event_signal(&u, 1, false));
	EXPECT_EQ(-EBUSY, asc_event_destroy(&u, &rel));
	/* w1 retires first (another stream than w2's): unlinked. */
	asc_retire_head(&t1, &q1, 0, 1, &rel);
	EXPECT_EQ(&w3, u.waits);
	EXPECT_EQ(&w2, w3.waiter.next);
	EXPECT_EQ(NULL, w2.waiter.next);
	EXPECT_EQ(-EBUSY, asc_event_destroy(&u, &rel));
	/* The queued signal runs: every queued wait is satisfied. */
	asc_entry_execute(&sig);
	asc_retire_head(&t1, &q1, 0, 2, &rel);
	EXPECT_EQ(3, u.value);
	EXPECT_EQ(0, asc_event_destroy(&u, &rel));
	EXPECT_TRUE(u.dead);
	EXPECT_EQ(0, rel.nevent);			/* w2, w3 name it */
	asc_retire_head(&t2, &q2, 0, 3, &rel);
	EXPECT_EQ(&w3, u.waits);
	EXPECT_EQ(NULL, w3.waiter.prev);
	asc_retire_head(&t2, &q2, 0, 4, &rel);
	EXPECT_EQ(NULL, u.waits);
	ASSERT_EQ(1, rel.nevent);
	EXPECT_EQ(&u, rel.event[0]);

	/* A failed event fails its waiters: they hold nothing back. */
	memset(&rel, 0, sizeof(rel));
	asc_event_init(&u, ACCEL_EVENT_USER);
	w1 = mk_ev(ACCEL_OP_HOST_WAIT, &u, 9);
	asc_enqueue(&t1, &q1, &w1, &rel);
	EXPECT_EQ(-EBUSY, asc_event_destroy(&u, &rel));
	EXPECT_TRUE(asc_event_signal(&u, 0, true));
	EXPECT_EQ(0, asc_event_destroy(&u, &rel));
	asc_retire_head(&t1, &q1, -EIO, 5, &rel);
	EXPECT_EQ(NULL, u.waits);
	ASSERT_EQ(1, rel.nevent);

	/* A plain event: a STREAM_WAIT holds its point, never the event. */
	memset(&rel, 0, sizeof(rel));
	asc_event_init(&p, 0);
	w1 = mk_ev(ACCEL_OP_EVENT_RECORD, &p, 0);
	w2 = mk_ev(ACCEL_OP_STREAM_WAIT, &p, 0);
	asc_enqueue(&t1, &q1, &w1, &rel);
	asc_enqueue(&t2, &q2, &w2, &rel);
	EXPECT_EQ(NULL, p.waits);
	EXPECT_EQ(0, asc_event_destroy(&p, &rel));
	EXPECT_EQ(&t1, w2.wait.tl);
	asc_retire_head(&t1, &q1, 0, 6, &rel);
	asc_retire_head(&t2, &q2, 0, 7, &rel);
}

TEST(user_event_error_fails_waiters)
{
	struct asc_event u;
	struct asc_entry w;

	asc_event_init(&u, ACCEL_EVENT_USER);
	w = mk_ev(ACCEL_OP_HOST_WAIT, &u, 1);
	EXPECT_TRUE(asc_event_signal(&u, 0, true));
	EXPECT_EQ(-EIO, asc_entry_ready(&w));
}

TEST(wait_any_all)
{
	struct asc_timeline tl = { 0 };
	struct asc_queue q = { 0 };
	struct asc_release rel = { 0 };
	struct asc_event a, b, u;
	struct asc_entry ra, rb;
	struct asc_wait_item it[3];
	u32 first = 99;

	asc_event_init(&a, 0);
	asc_event_init(&b, 0);
	asc_event_init(&u, ACCEL_EVENT_USER);
	ra = mk_ev(ACCEL_OP_EVENT_RECORD, &a, 0);
	rb = mk_ev(ACCEL_OP_EVENT_RECORD, &b, 0);
	asc_enqueue(&tl, &q, &ra, &rel);
	asc_enqueue(&tl, &q, &rb, &rel);
	asc_wait_item_init(&it[0], &b, 0);
	asc_wait_item_init(&it[1], &a, 0);
	asc_wait_item_init(&it[2], &u, 3);

	EXPECT_EQ(-EAGAIN, asc_wait_check(it, 3, false, &first));
	asc_retire_head(&tl, &q, 0, 1, &rel);
	EXPECT_EQ(0, asc_wait_check(it, 3, false, &first));
	EXPECT_EQ(1, first);
	EXPECT_EQ(-EAGAIN, asc_wait_check(it, 3, true, &first));
	asc_retire_head(&tl, &q, 0, 2, &rel);
	asc_event_signal(&u, 2, false);
	EXPECT_EQ(-EAGAIN, asc_wait_check(it, 3, true, &first));
	asc_event_signal(&u, 3, false);
	EXPECT_EQ(0, asc_wait_check(it, 3, true, &first));
	asc_event_signal(&u, 0, true);
	EXPECT_EQ(-EIO, asc_wait_check(it, 3, true, &first));
	EXPECT_EQ(2, first);
	for (first = 0; first < 3; first++)
		asc_wait_item_fini(&it[first], &rel);
	EXPECT_EQ(0, u.refs);
}

TEST(elapsed)
{
	struct asc_timeline tl = { 0 };
	struct asc_queue q = { 0 };
	struct asc_release rel = { 0 };
	struct asc_event s, e, notiming;
	struct asc_entry rs, re;
	s64 ns = 0;

	asc_event_init(&s, ACCEL_EVENT_TIMING);
	asc_event_init(&e, ACCEL_EVENT_TIMING);
	asc_event_init(&notiming, 0);
	EXPECT_EQ(-EINVAL, asc_event_elapsed(&s, &e, &ns));	/* not recorded */
	rs = mk_ev(ACCEL_OP_EVENT_RECORD, &s, 0);
	re = mk_ev(ACCEL_OP_EVENT_RECORD, &e, 0);
	asc_enqueue(&tl, &q, &rs, &rel);
	asc_enqueue(&tl, &q, &re, &rel);
	EXPECT_EQ(-EAGAIN, asc_event_elapsed(&s, &e, &ns));
	asc_retire_head(&tl, &q, 0, 1000, &rel);
	asc_retire_head(&tl, &q, 0, 3500, &rel);
	EXPECT_EQ(0, asc_event_elapsed(&s, &e, &ns));
	EXPECT_EQ(2500, ns);
	EXPECT_EQ(0, asc_event_elapsed(&e, &s, &ns));
	EXPECT_EQ(-2500, ns);
	EXPECT_EQ(-EINVAL, asc_event_elapsed(&s, &notiming, &ns));
}

TEST(abi_checks)
{
	struct accel_mem_register r = { .addr = 4096, .size = 1 };
	struct accel_mem_alloc a = { .size = 1, .flags = ACCEL_MEM_HOST };
	struct accel_event_create c = { .flags = ACCEL_EVENT_TIMING };
	struct accel_submit s = { .count = 1, .descs = 8 };
	struct accel_wait w = { .count = 1, .entries = 8 };
	struct accel_info info = { 0 };

	EXPECT_EQ(0, asc_check_mem_register(&r));
	r.size = 0;
	EXPECT_EQ(-EINVAL, asc_check_mem_register(&r));
	r.size = 2;
	r.addr = ~0ULL;
	EXPECT_EQ(-EINVAL, asc_check_mem_register(&r));
	r.addr = 0;
	r.flags = 4;
	EXPECT_EQ(-EINVAL, asc_check_mem_register(&r));

	EXPECT_EQ(0, asc_check_mem_alloc(&a));
	a.flags = ACCEL_MEM_HOST | ACCEL_MEM_DEVICE;
	EXPECT_EQ(-EINVAL, asc_check_mem_alloc(&a));
	a.flags = 0;
	EXPECT_EQ(-EINVAL, asc_check_mem_alloc(&a));

	EXPECT_EQ(0, asc_check_event_create(&c));
	c.flags = ACCEL_EVENT_TIMING | ACCEL_EVENT_USER;
	EXPECT_EQ(-EINVAL, asc_check_event_create(&c));

	EXPECT_EQ(0, asc_check_submit(&s, 4));
	s.count = 5;
	EXPECT_EQ(-EINVAL, asc_check_submit(&s, 4));
	s.count = 0;
	EXPECT_EQ(-EINVAL, asc_check_submit(&s, 4));

	EXPECT_EQ(0, asc_check_wait(&w, 2));
	w.flags = 2;
	EXPECT_EQ(-EINVAL, asc_check_wait(&w, 2));

	EXPECT_EQ(0, asc_check_info(&info));
	info.reserved[3] = 1;
	EXPECT_EQ(-EINVAL, asc_check_info(&info));

	EXPECT_EQ(ASC_GREATEST_PRIORITY, asc_clamp_priority(-100));
	EXPECT_EQ(ASC_LEAST_PRIORITY, asc_clamp_priority(100));
	EXPECT_TRUE(asc_ranges_overlap(0, 10, 9, 1));
	EXPECT_FALSE(asc_ranges_overlap(0, 10, 10, 1));
}

/* ENOENT -> EIO -> EAGAIN -> the descriptors -> ENXIO, changing nothing. */
TEST(submit_admission_order)
{
	struct asc_region ro = { .size = 8, .flags = ACCEL_MEM_READONLY };
	struct asc_region ext = { .size = 8, .kind = ACCEL_REGION_EXTERNAL };
	struct asc_region r = { .size = 8 };
	struct accel_desc d = { .op = ACCEL_OP_COPY, .dst = 1, .src = 2,
				.length = 8 };
	struct {
		struct asc_batch b;
		struct asc_entry e[1];
	} one;
	struct asc_timeline tl = { 0 };
	struct asc_queue q = { 0 };

	asc_batch_init(&one.b, &d, 1);
	EXPECT_EQ(one.b.remaining, 1);
	EXPECT_EQ(-ENOENT, asc_submit_admit(NULL, NULL, &one.b, false));
	/* unresolved handles */
	EXPECT_EQ(-ENOENT, asc_submit_admit(&tl, &q, &one.b, false));
	one.e[0].dst = &ro;
	one.e[0].src = &r;
	EXPECT_EQ(-EPERM, asc_submit_admit(&tl, &q, &one.b, false));
	q.count = ASC_QUEUE_DEPTH;
	EXPECT_EQ(-EAGAIN, asc_submit_admit(&tl, &q, &one.b, false));
	tl.error = -EIO;
	EXPECT_EQ(-EIO, asc_submit_admit(&tl, &q, &one.b, false));
	tl.error = 0;
	q.count = 0;
	one.e[0].dst = &ext;
	EXPECT_EQ(-ENXIO, asc_submit_admit(&tl, &q, &one.b, false));
	EXPECT_EQ(0, asc_submit_admit(&tl, &q, &one.b, true));
	EXPECT_EQ(0, ext.inflight);
	EXPECT_EQ(0, tl.submitted);
}

/* Attach, fetch with the cursor, complete, and the batch comes back. */
TEST(fetch_cursor_and_complete)
{
	struct accel_desc nops[3] = { { .op = ACCEL_OP_NOP },
				      { .op = ACCEL_OP_NOP },
				      { .op = ACCEL_OP_NOP } };
	struct {
		struct asc_batch b;
		struct asc_entry e[3];
	} three;
	struct accel_exec_done d = { .stream = 5, .seq = 2 };
	struct asc_timeline tl = { .id = 5 };
	struct asc_release rel = { 0 };
	struct accel_exec_item it[3];
	struct asc_queue q = { 0 };
	u32 n = 0, i;
	int status;

	asc_batch_init(&three.b, nops, 3);
	for (i = 0; i < 3; i++)
		asc_enqueue(&tl, &q, &three.e[i], &rel);
	asc_exec_attach_stream(&tl, &q);
	EXPECT_TRUE(asc_fetch_stream(&tl, &q, it, 2, &n));
	EXPECT_EQ(2, n);
	EXPECT_EQ(1, it[0].seq);
	EXPECT_EQ(2, it[1].seq);
	EXPECT_EQ(5, it[1].stream);
	EXPECT_EQ(&three.e[1], q.fetch_last);
	n = 0;
	EXPECT_TRUE(asc_fetch_stream(&tl, &q, it, 3, &n));
	EXPECT_EQ(1, n);
	EXPECT_EQ(3, it[0].seq);
	EXPECT_FALSE(asc_fetch_stream(&tl, &q, it, 3, &n));

	EXPECT_EQ(0, asc_exec_check_done(&tl, &d));
	while (asc_exec_done_next(&tl, &q, &d, &status)) {
		EXPECT_EQ(0, status);
		asc_retire_head(&tl, &q, status, 1, &rel);
	}
	EXPECT_EQ(2, tl.completed);
	EXPECT_EQ(&three.e[2], q.fetch_last);
	EXPECT_EQ(NULL, rel.batch);
	d.seq = 3;
	d.status = -EIO;
	EXPECT_EQ(0, asc_exec_check_done(&tl, &d));
	EXPECT_TRUE(asc_exec_done_next(&tl, &q, &d, &status));
	EXPECT_EQ(-EIO, status);
	asc_retire_head(&tl, &q, status, 2, &rel);
	EXPECT_FALSE(asc_exec_done_next(&tl, &q, &d, &status));
	EXPECT_EQ(NULL, q.fetch_last);
	EXPECT_EQ(-EIO, tl.error);
	EXPECT_EQ(&three.b, rel.batch);	/* the last entry of the batch */
	EXPECT_EQ(-EINVAL, asc_exec_check_done(&tl, &d));	/* retired */
}

/* What the soft engine does with the head, in the order the ABI says. */
TEST(engine_steps)
{
	struct asc_region a = { .size = 8 }, b = { .size = 8 };
	struct asc_region ext = { .size = 8, .kind = ACCEL_REGION_EXTERNAL };
	struct asc_event uev;
	struct asc_timeline tl = { 0 };
	struct asc_release rel = { 0 };
	struct asc_queue q = { 0 };
	struct asc_entry c = mk_copy(&a, &b, 0, 0, 8);
	struct asc_entry w;
	int status;

	asc_event_init(&uev, ACCEL_EVENT_USER);
	w = mk_ev(ACCEL_OP_HOST_WAIT, &uev, 1);
	EXPECT_EQ(ASC_STEP_IDLE, asc_engine_next(&tl, &q, false, false, &status));
	asc_enqueue(&tl, &q, &w, &rel);
	asc_enqueue(&tl, &q, &c, &rel);
	EXPECT_EQ(ASC_STEP_BLOCKED, asc_engine_next(&tl, &q, false, false,
						     &status));
	EXPECT_FALSE(asc_engine_runnable(&tl, &q, false, false));
	EXPECT_EQ(ASC_STEP_IDLE, asc_engine_next(&tl, &q, false, true, &status));
	EXPECT_EQ(ASC_STEP_RETIRE, asc_engine_next(&tl, &q, true, true, &status));
	EXPECT_EQ(-ECANCELED, status);
	asc_event_signal(&uev, 1, false);
	EXPECT_EQ(ASC_STEP_RETIRE, asc_engine_next(&tl, &q, false, false,
						    &status));
	EXPECT_EQ(0, status);
	asc_retire_head(&tl, &q, status, 1, &rel);
	EXPECT_EQ(ASC_STEP_COPY, asc_engine_next(&tl, &q, false, false, &status));
	c.src = &ext;
	EXPECT_EQ(ASC_STEP_RETIRE, asc_engine_next(&tl, &q, false, false,
						    &status));
	EXPECT_EQ(-ENXIO, status);
	c.src = &b;
	tl.error = -EIO;
	EXPECT_EQ(ASC_STEP_RETIRE, asc_engine_next(&tl, &q, false, false,
						    &status));
	EXPECT_EQ(-ECANCELED, status);
}

/*
 * The priority rule: a stream yields only to a more urgent one that has
 * runnable work; never to its own level or a less urgent one, never to a
 * blocked one, never while the context closes.
 */
TEST(engine_priority_rule)
{
	struct asc_region a = { .size = 8 }, b = { .size = 8 };
	struct asc_timeline tl = { 0 };
	struct asc_release rel = { 0 };
	struct asc_queue q = { 0 };
	struct asc_entry c = mk_copy(&a, &b, 0, 0, 8), w;
	struct asc_event uev;

	EXPECT_EQ(-5, ASC_GREATEST_PRIORITY);
	EXPECT_EQ(0, ASC_LEAST_PRIORITY);
	EXPECT_EQ(-3, asc_clamp_priority(-3));
	/* Nothing queued: nobody yields to it. */
	EXPECT_FALSE(asc_engine_outranked(0, -5, &tl, &q, false, false));
	asc_enqueue(&tl, &q, &c, &rel);
	EXPECT_TRUE(asc_engine_outranked(0, -1, &tl, &q, false, false));
	EXPECT_TRUE(asc_engine_outranked(-4, -5, &tl, &q, false, false));
	EXPECT_FALSE(asc_engine_outranked(-1, -1, &tl, &q, false, false));
	EXPECT_FALSE(asc_engine_outranked(-2, -1, &tl, &q, false, false));
	EXPECT_FALSE(asc_engine_outranked(0, -1, &tl, &q, true, false));
	EXPECT_FALSE(asc_engine_outranked(0, -1, &tl, &q, false, true));
	asc_retire_head(&tl, &q, 0, 1, &rel);
	/* A more urgent stream blocked on a gate holds nobody back. */
	asc_event_init(&uev, ACCEL_EVENT_USER);
	w = mk_ev(ACCEL_OP_HOST_WAIT, &uev, 1);
	asc_enqueue(&tl, &q, &w, &rel);
	EXPECT_FALSE(asc_engine_outranked(0, -5, &tl, &q, false, false));
	asc_event_signal(&uev, 1, false);
	EXPECT_TRUE(asc_engine_outranked(0, -5, &tl, &q, false, false));
}

/* The default pin limit: a quarter of RAM in MiB, at least 1, clamped. */
TEST(default_pinned_limit)
{
	EXPECT_EQ(1U, asc_default_pinned_mb(0));
	EXPECT_EQ(1U, asc_default_pinned_mb(3ULL << 20));
	EXPECT_EQ(1U, asc_default_pinned_mb(4ULL << 20));
	EXPECT_EQ(491U, asc_default_pinned_mb(2014152ULL << 10));
	EXPECT_EQ(6144U, asc_default_pinned_mb(24ULL << 30));
	EXPECT_EQ(0xffffffffU, asc_default_pinned_mb(~0ULL));
}

TEST(devices)
{
	struct accel_device_select sel = { .device = 2 };
	struct accel_query q = {
		.kind = ACCEL_QUERY_DEVICES,
		.entry_size = sizeof(struct accel_device_info),
	};
	u64 used = 0;

	EXPECT_EQ(0, asc_check_set_device(&sel, 3));
	EXPECT_EQ(-ENODEV, asc_check_set_device(&sel, 2));
	sel.device = UINT32_MAX;
	EXPECT_EQ(-ENODEV, asc_check_set_device(&sel, ASC_MAX_DEVICES));
	sel.device = 0;
	sel.flags = 1;
	EXPECT_EQ(-EINVAL, asc_check_set_device(&sel, 3));

	EXPECT_EQ(-EINVAL, asc_devices_param(0));
	EXPECT_EQ(0, asc_devices_param(1));
	EXPECT_EQ(0, asc_devices_param(ASC_MAX_DEVICES));
	EXPECT_EQ(-EINVAL, asc_devices_param(ASC_MAX_DEVICES + 1));

	/* Each device's account: up to the limit, never past, never wrapping. */
	EXPECT_EQ(0, asc_device_charge(&used, 4096, 8192));
	EXPECT_EQ(0, asc_device_charge(&used, 4096, 8192));
	EXPECT_EQ(-ENOMEM, asc_device_charge(&used, 1, 8192));
	EXPECT_EQ(8192u, used);
	EXPECT_EQ(-ENOMEM, asc_device_charge(&used, UINT64_MAX, UINT64_MAX));
	EXPECT_EQ(8192u, used);

	EXPECT_EQ(56u, asc_query_entry_size(ACCEL_QUERY_DEVICES));
	EXPECT_EQ(0, asc_check_query(&q));
	q.ctx_id = 1;
	EXPECT_EQ(-EINVAL, asc_check_query(&q));
}

TEST_HARNESS_MAIN
