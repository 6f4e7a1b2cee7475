// SPDX-License-Identifier: GPL-2.0
/*
 * accelstream: ACCEL_IOC_SUBMIT. Every op, every field an op does not use,
 * bounds with overflow, access, queue depth, sticky errors, bad pointers,
 * and all-or-nothing batches.
 */
#include "kselftest_harness.h"
#include "accel_helpers.h"

#define RSIZE	(4096 + 13)	/* region size: not a page multiple */

FIXTURE(submit) {
	int fd;
	struct accel_info info;
	uint8_t *a, *b, *ro;	/* mappings behind the regions */
	size_t map_size;
	uint32_t ra, rb, rro;	/* registered: a, b writable; ro READONLY */
	uint32_t s;		/* an idle stream */
	uint32_t ev, uev;	/* a plain and a user event */
};

FIXTURE_SETUP(submit)
{
	self->fd = accel_open();
	if (self->fd < 0)
		SETUP_SKIP(ACCEL_SKIP_NODEV_MSG);
	ASSERT_EQ(0, accel_info(self->fd, &self->info));
	self->map_size = 2 * page_size() + RSIZE;
	self->a = anon_map(self->map_size);
	self->b = anon_map(self->map_size);
	self->ro = anon_map(self->map_size);
	ASSERT_NE(NULL, self->a);
	ASSERT_NE(NULL, self->b);
	ASSERT_NE(NULL, self->ro);
	fill_random(self->a, self->map_size, 1);
	memset(self->b, 0, self->map_size);
	fill_random(self->ro, self->map_size, 2);
	/* Odd starting offsets: regions count from their own start. */
	ASSERT_EQ(0, accel_register(self->fd, self->a + 5, RSIZE, 0, &self->ra));
	ASSERT_EQ(0, accel_register(self->fd, self->b + 11, RSIZE, 0, &self->rb));
	ASSERT_EQ(0, accel_register(self->fd, self->ro + 3, RSIZE,
				    ACCEL_MEM_READONLY, &self->rro));
	ASSERT_EQ(0, accel_stream(self->fd, 0, 0, &self->s));
	ASSERT_EQ(0, accel_event(self->fd, 0, &self->ev));
	ASSERT_EQ(0, accel_event(self->fd, ACCEL_EVENT_USER, &self->uev));
}

FIXTURE_TEARDOWN(submit)
{
	if (self->fd >= 0)
		close(self->fd);
	munmap(self->a, self->map_size);
	munmap(self->b, self->map_size);
	munmap(self->ro, self->map_size);
}

/* Submit one descriptor to the fixture's stream the raw way. */
static int submit_raw(int fd, uint32_t stream, const struct accel_desc *d,
		      uint32_t count, uint64_t *seq)
{
	struct accel_submit s = {
		.stream = stream, .count = count, .descs = (uintptr_t)d,
		.seq = 0xccccccccccccccccULL,
	};
	int ret = ioctl(fd, ACCEL_IOC_SUBMIT, &s);

	if (seq)
		*seq = s.seq;
	return ret;
}

TEST_F(submit, every_op)
{
	struct accel_desc d[7];
	struct accel_event_query eq;
	struct accel_stream_query q;
	uint64_t seq;

	d[0] = d_nop();
	d[1] = d_copy(self->rb, 1, self->ra, 2, 100);
	d[2] = d_record(self->ev);
	d[3] = d_stream_wait(self->ev);
	d[4] = d_host_signal(self->uev, 7);
	d[5] = d_host_wait(self->uev, 7);
	d[6] = d_nop();
	d[6].user_data = ~0ULL;	/* opaque: any value */
	d[0].user_data = 0x1234;
	ASSERT_EQ(0, submit_raw(self->fd, self->s, d, 7, &seq));
	EXPECT_EQ(7ULL, seq);
	ASSERT_EQ(0, accel_drain(self->fd, self->s));
	ASSERT_EQ(0, accel_query(self->fd, self->s, &q));
	EXPECT_EQ(7ULL, q.submitted);
	EXPECT_EQ(7ULL, q.completed);
	EXPECT_EQ(0u, q.queued);
	EXPECT_EQ(0, q.error);
	EXPECT_EQ(-1, first_diff(self->b + 11 + 1, self->a + 5 + 2, 100));
	EXPECT_EQ(0, self->b[11]);
	EXPECT_EQ(0, self->b[11 + 101]);
	ASSERT_EQ(0, accel_event_query(self->fd, self->uev, &eq));
	EXPECT_EQ(7ULL, eq.value);
	ASSERT_EQ(0, accel_event_query(self->fd, self->ev, &eq));
	EXPECT_EQ(self->s, eq.stream);
	EXPECT_EQ(3ULL, eq.seq);
	EXPECT_EQ((uint32_t)ACCEL_EVENT_STATE_COMPLETE, eq.state);
}

/* A COPY of length 0 is valid, takes a sequence number, and copies nothing. */
TEST_F(submit, copy_length_zero)
{
	uint64_t seq;
	struct accel_desc d = d_copy(self->rb, 0, self->ra, 0, 0);

	ASSERT_EQ(0, submit_raw(self->fd, self->s, &d, 1, &seq));
	EXPECT_EQ(1ULL, seq);
	/* At the very end of both regions. */
	d = d_copy(self->rb, RSIZE, self->ra, RSIZE, 0);
	ASSERT_EQ(0, submit_raw(self->fd, self->s, &d, 1, &seq));
	EXPECT_EQ(2ULL, seq);
	ASSERT_EQ(0, accel_drain(self->fd, self->s));
	EXPECT_TRUE(all_bytes(self->b, self->map_size, 0));
}

/* Each field an op leaves unused must be zero; flags and reserved always. */
TEST_F(submit, unused_fields)
{
	enum { F_FLAGS, F_DST, F_SRC, F_DOFF, F_SOFF, F_LEN, F_EVENT, F_RSVD,
	       F_VALUE, F_N };
	static const char *const fname[F_N] = {
		"flags", "dst", "src", "dst_offset", "src_offset", "length",
		"event", "reserved", "value",
	};
	struct {
		const char *name;
		struct accel_desc d;
		unsigned int unused;	/* bit per F_* */
	} ops[] = {
		{ "NOP", d_nop(), ~0u },
		{ "COPY", d_copy(self->rb, 0, self->ra, 0, 8),
		  1u << F_FLAGS | 1u << F_EVENT | 1u << F_RSVD | 1u << F_VALUE },
		{ "EVENT_RECORD", d_record(self->ev),
		  ~(1u << F_EVENT) },
		{ "STREAM_WAIT", d_stream_wait(self->ev),
		  ~(1u << F_EVENT) },
		{ "HOST_WAIT", d_host_wait(self->uev, 0),
		  ~(1u << F_EVENT | 1u << F_VALUE) },
		{ "HOST_SIGNAL", d_host_signal(self->uev, 0),
		  ~(1u << F_EVENT | 1u << F_VALUE) },
	};
	struct accel_stream_query q;
	size_t i;
	int f;

	for (i = 0; i < ARRAY_SIZE(ops); i++) {
		for (f = 0; f < F_N; f++) {
			struct accel_desc d = ops[i].d;
			uint64_t seq;

			if (!(ops[i].unused & (1u << f)))
				continue;
			/* Nonzero, and a valid handle where it is one. */
			switch (f) {
			case F_FLAGS: d.flags = 1; break;
			case F_DST: d.dst = self->rb; break;
			case F_SRC: d.src = self->ra; break;
			case F_DOFF: d.dst_offset = 1; break;
			case F_SOFF: d.src_offset = 1; break;
			case F_LEN: d.length = 1; break;
			case F_EVENT: d.event = self->ev; break;
			case F_RSVD: d.reserved = 1; break;
			case F_VALUE: d.value = 1; break;
			}
			EXPECT_EQ(-1, submit_raw(self->fd, self->s, &d, 1, &seq));
			EXPECT_EQ(EINVAL, errno) {
				TH_LOG("%s with %s set: errno %d", ops[i].name,
				       fname[f], errno);
			}
			EXPECT_EQ(0xccccccccccccccccULL, seq);
		}
	}
	/* Every refusal queued nothing. */
	ASSERT_EQ(0, accel_query(self->fd, self->s, &q));
	EXPECT_EQ(0ULL, q.submitted);
	EXPECT_EQ(0u, q.queued);
}

TEST_F(submit, flags_and_reserved_bits)
{
	struct accel_desc d = d_nop();
	int bit;

	for (bit = 0; bit < 32; bit += 7) {
		d = d_nop();
		d.flags = 1u << bit;
		EXPECT_EQ(-1, submit_raw(self->fd, self->s, &d, 1, NULL));
		EXPECT_EQ(EINVAL, errno);
		d = d_copy(self->rb, 0, self->ra, 0, 1);
		d.reserved = 1u << bit;
		EXPECT_EQ(-1, submit_raw(self->fd, self->s, &d, 1, NULL));
		EXPECT_EQ(EINVAL, errno);
	}
}

TEST_F(submit, bad_op)
{
	static const uint32_t bad[] = { ACCEL_OP_HOST_SIGNAL + 1, 64, 0x80000000u, ~0u };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		struct accel_desc d = { .op = bad[i] };

		EXPECT_EQ(-1, submit_raw(self->fd, self->s, &d, 1, NULL));
		EXPECT_EQ(EINVAL, errno) {
			TH_LOG("op %u accepted", bad[i]);
		}
	}
}

TEST_F(submit, header)
{
	struct accel_desc *d;
	struct accel_submit s = { .stream = self->s, .count = 1 };
	uint32_t n = self->info.max_submit, i;

	d = calloc(n + 1, sizeof(*d));
	ASSERT_NE(NULL, d);
	for (i = 0; i <= n; i++)
		d[i] = d_nop();
	s.descs = (uintptr_t)d;

	s.count = 0;
	EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_SUBMIT, &s));
	EXPECT_EQ(EINVAL, errno);
	s.count = n + 1;
	EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_SUBMIT, &s));
	EXPECT_EQ(EINVAL, errno);
	s.count = ~0u;
	EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_SUBMIT, &s));
	EXPECT_EQ(EINVAL, errno);
	s.count = 1;
	s.flags = 1;
	EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_SUBMIT, &s));
	EXPECT_EQ(EINVAL, errno);
	s.flags = 0;
	s.pad = 1;
	EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_SUBMIT, &s));
	EXPECT_EQ(EINVAL, errno);
	s.pad = 0;
	s.stream = BAD_HANDLE;
	EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_SUBMIT, &s));
	EXPECT_EQ(ENOENT, errno);
	s.stream = 0;
	EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_SUBMIT, &s));
	EXPECT_EQ(ENOENT, errno);

	/* max_submit exactly is fine; seq is written. */
	s.stream = self->s;
	s.count = n;
	s.seq = 0xccccccccccccccccULL;
	EXPECT_EQ(0, ioctl(self->fd, ACCEL_IOC_SUBMIT, &s));
	EXPECT_EQ((uint64_t)n, s.seq);
	EXPECT_EQ(self->s, s.stream);
	EXPECT_EQ(n, s.count);
	EXPECT_EQ(0, accel_drain(self->fd, self->s));
	free(d);
}

TEST_F(submit, unknown_handles)
{
	struct accel_desc d;

	d = d_copy(BAD_HANDLE, 0, self->ra, 0, 1);
	EXPECT_EQ(-1, submit_raw(self->fd, self->s, &d, 1, NULL));
	EXPECT_EQ(ENOENT, errno);
	d = d_copy(self->rb, 0, BAD_HANDLE, 0, 1);
	EXPECT_EQ(-1, submit_raw(self->fd, self->s, &d, 1, NULL));
	EXPECT_EQ(ENOENT, errno);
	d = d_record(BAD_HANDLE);
	EXPECT_EQ(-1, submit_raw(self->fd, self->s, &d, 1, NULL));
	EXPECT_EQ(ENOENT, errno);
	d = d_stream_wait(BAD_HANDLE);
	EXPECT_EQ(-1, submit_raw(self->fd, self->s, &d, 1, NULL));
	EXPECT_EQ(ENOENT, errno);
	d = d_host_wait(BAD_HANDLE, 1);
	EXPECT_EQ(-1, submit_raw(self->fd, self->s, &d, 1, NULL));
	EXPECT_EQ(ENOENT, errno);
	d = d_host_signal(BAD_HANDLE, 1);
	EXPECT_EQ(-1, submit_raw(self->fd, self->s, &d, 1, NULL));
	EXPECT_EQ(ENOENT, errno);

	/* Handles of other kinds are not regions or events. */
	d = d_copy(self->s, 0, self->ra, 0, 1);
	EXPECT_EQ(-1, submit_raw(self->fd, self->s, &d, 1, NULL));
	EXPECT_EQ(ENOENT, errno);
	d = d_record(self->ra);
	if (self->ra != self->ev && self->ra != self->uev) {
		EXPECT_EQ(-1, submit_raw(self->fd, self->s, &d, 1, NULL));
		EXPECT_EQ(ENOENT, errno);
	}
	/* A destroyed event is unknown. */
	{
		uint32_t e;

		ASSERT_EQ(0, accel_event(self->fd, 0, &e));
		ASSERT_EQ(0, accel_event_destroy(self->fd, e));
		d = d_record(e);
		EXPECT_EQ(-1, submit_raw(self->fd, self->s, &d, 1, NULL));
		EXPECT_EQ(ENOENT, errno);
	}
}

TEST_F(submit, event_kind_mismatch)
{
	struct accel_desc d;

	d = d_host_wait(self->ev, 1);
	EXPECT_EQ(-1, submit_raw(self->fd, self->s, &d, 1, NULL));
	EXPECT_EQ(EINVAL, errno);
	d = d_host_signal(self->ev, 1);
	EXPECT_EQ(-1, submit_raw(self->fd, self->s, &d, 1, NULL));
	EXPECT_EQ(EINVAL, errno);
	d = d_record(self->uev);
	EXPECT_EQ(-1, submit_raw(self->fd, self->s, &d, 1, NULL));
	EXPECT_EQ(EINVAL, errno);
	d = d_stream_wait(self->uev);
	EXPECT_EQ(-1, submit_raw(self->fd, self->s, &d, 1, NULL));
	EXPECT_EQ(EINVAL, errno);
}

TEST_F(submit, copy_bounds)
{
	const uint64_t max = ~0ULL;
	const struct { uint64_t doff, soff, len; int ok; } c[] = {
		{ 0, 0, RSIZE, 1 },
		{ RSIZE - 10, 0, 10, 1 },
		{ 0, RSIZE - 10, 10, 1 },
		{ RSIZE, RSIZE, 0, 1 },
		{ 0, 0, RSIZE + 1, 0 },
		{ RSIZE - 10, 0, 11, 0 },
		{ 0, RSIZE - 10, 11, 0 },
		{ RSIZE + 1, 0, 0, 0 },
		{ 0, RSIZE + 1, 0, 0 },
		{ max - 5, 0, 10, 0 },		/* dst offset + length wraps */
		{ 0, max - 5, 10, 0 },		/* src offset + length wraps */
		{ 1, 0, max, 0 },
		{ 0, 1, max, 0 },
		{ max, max, 1, 0 },
		{ max, 0, 0, 0 },
		{ 0, 0, max, 0 },
		{ 1ULL << 63, 1ULL << 63, 1ULL << 63, 0 },
	};
	struct accel_stream_query q;
	uint64_t ok = 0;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(c); i++) {
		struct accel_desc d = d_copy(self->rb, c[i].doff, self->ra,
					     c[i].soff, c[i].len);
		int ret = submit_raw(self->fd, self->s, &d, 1, NULL);

		if (c[i].ok) {
			EXPECT_EQ(0, ret) {
				TH_LOG("case %zu refused: errno %d", i, errno);
			}
			ok++;
		} else {
			EXPECT_EQ(-1, ret) {
				TH_LOG("case %zu accepted", i);
			}
			EXPECT_EQ(EINVAL, errno) {
				TH_LOG("case %zu: errno %d", i, errno);
			}
		}
	}
	ASSERT_EQ(0, accel_drain(self->fd, self->s));
	ASSERT_EQ(0, accel_query(self->fd, self->s, &q));
	EXPECT_EQ(ok, q.submitted);
	EXPECT_EQ(0, q.error);
	/* The accepted copies, in order; nothing past the region. */
	{
		uint8_t model[RSIZE];
		const uint8_t *a = self->a + 5;

		memcpy(model, a, RSIZE);
		memcpy(model + RSIZE - 10, a, 10);
		memcpy(model, a + RSIZE - 10, 10);
		EXPECT_EQ(-1, first_diff(self->b + 11, model, RSIZE));
		EXPECT_TRUE(all_bytes(self->b, 11, 0));
		EXPECT_TRUE(all_bytes(self->b + 11 + RSIZE,
				      self->map_size - 11 - RSIZE, 0));
	}
}

TEST_F(submit, copy_into_readonly)
{
	struct accel_desc d = d_copy(self->rro, 0, self->ra, 0, 1);
	uint64_t seq;

	EXPECT_EQ(-1, submit_raw(self->fd, self->s, &d, 1, &seq));
	EXPECT_EQ(EPERM, errno);
	EXPECT_EQ(0xccccccccccccccccULL, seq);
	d = d_copy(self->rro, 0, self->rro, 100, 10);
	EXPECT_EQ(-1, submit_raw(self->fd, self->s, &d, 1, NULL));
	EXPECT_EQ(EPERM, errno);
	d = d_copy(self->rro, 0, self->ra, 0, 0);
	EXPECT_EQ(-1, submit_raw(self->fd, self->s, &d, 1, NULL));
	EXPECT_EQ(EPERM, errno);

	/* Reading from it is fine. */
	d = d_copy(self->rb, 0, self->rro, 0, RSIZE);
	ASSERT_EQ(0, submit_raw(self->fd, self->s, &d, 1, &seq));
	EXPECT_EQ(1ULL, seq);
	ASSERT_EQ(0, accel_drain(self->fd, self->s));
	EXPECT_EQ(-1, first_diff(self->b + 11, self->ro + 3, RSIZE));
}

TEST_F(submit, bad_descs_pointer)
{
	long ps = page_size();
	struct accel_stream_query q;
	struct accel_desc *d;
	uint8_t *two;
	uint64_t seq;

	EXPECT_EQ(-1, submit_raw(self->fd, self->s, (void *)8, 1, &seq));
	EXPECT_EQ(EFAULT, errno);
	EXPECT_EQ(0xccccccccccccccccULL, seq);
	EXPECT_EQ(-1, submit_raw(self->fd, self->s, (void *)(~0ULL - 63), 1, NULL));
	EXPECT_EQ(EFAULT, errno);

	/* The second descriptor lies on an unmapped page. */
	two = anon_map(2 * ps);
	ASSERT_NE(NULL, two);
	ASSERT_EQ(0, munmap(two + ps, ps));
	d = (struct accel_desc *)(two + ps - sizeof(*d));
	*d = d_nop();
	EXPECT_EQ(-1, submit_raw(self->fd, self->s, d, 2, &seq));
	EXPECT_EQ(EFAULT, errno);
	EXPECT_EQ(0xccccccccccccccccULL, seq);
	/* The first alone is fine. */
	EXPECT_EQ(0, submit_raw(self->fd, self->s, d, 1, &seq));
	EXPECT_EQ(1ULL, seq);
	ASSERT_EQ(0, accel_drain(self->fd, self->s));
	ASSERT_EQ(0, accel_query(self->fd, self->s, &q));
	EXPECT_EQ(1ULL, q.submitted);
	munmap(two, ps);

	/* A bad pointer to the submit structure itself. */
	EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_SUBMIT, (void *)8));
	EXPECT_EQ(EFAULT, errno);
}

/* All descriptors are validated before any is queued. */
TEST_F(submit, batch_all_or_nothing)
{
	struct accel_desc d[4];
	struct accel_stream_query q;
	struct accel_event_query eq;
	uint64_t seq;
	int bad;

	ASSERT_EQ(0, accel_submit1(self->fd, self->s, d_nop(), NULL));
	ASSERT_EQ(0, accel_drain(self->fd, self->s));

	for (bad = 0; bad < 4; bad++) {
		int want;

		d[0] = d_host_signal(self->uev, 5);
		d[1] = d_copy(self->rb, 0, self->ra, 0, 64);
		d[2] = d_record(self->ev);
		d[3] = d_nop();
		switch (bad) {
		case 0: d[3].op = 99; want = EINVAL; break;
		case 1: d[3] = d_copy(self->rro, 0, self->ra, 0, 1); want = EPERM; break;
		case 2: d[3] = d_host_wait(BAD_HANDLE, 1); want = ENOENT; break;
		default: d[3] = d_copy(self->rb, RSIZE, self->ra, 0, 1); want = EINVAL; break;
		}
		EXPECT_EQ(-1, submit_raw(self->fd, self->s, d, 4, &seq));
		EXPECT_EQ(want, errno) {
			TH_LOG("batch %d", bad);
		}
		EXPECT_EQ(0xccccccccccccccccULL, seq);
	}
	/* Give anything wrongly queued time to run, then look. */
	EXPECT_EQ(0, accel_sync(self->fd, self->s, 1, 0));
	usleep(100 * 1000);
	ASSERT_EQ(0, accel_query(self->fd, self->s, &q));
	EXPECT_EQ(1ULL, q.submitted);
	EXPECT_EQ(1ULL, q.completed);
	EXPECT_EQ(0u, q.queued);
	EXPECT_TRUE(all_bytes(self->b, self->map_size, 0));
	ASSERT_EQ(0, accel_event_query(self->fd, self->uev, &eq));
	EXPECT_EQ(0ULL, eq.value);
	ASSERT_EQ(0, accel_event_query(self->fd, self->ev, &eq));
	EXPECT_EQ(0ULL, eq.seq);
	EXPECT_EQ(0u, eq.stream);
}

/* EAGAIN past queue_depth, with nothing retiring behind a gate. */
TEST_F_TIMEOUT(submit, queue_depth, 120)
{
	uint32_t depth = self->info.queue_depth, chunk = self->info.max_submit;
	struct accel_stream_query q;
	struct accel_desc *d;
	struct gate g;
	uint64_t seq, left;

	if (depth > (1u << 20))
		SKIP(return, "queue_depth %u too large to fill", depth);
	d = calloc(chunk, sizeof(*d));
	ASSERT_NE(NULL, d);
	ASSERT_EQ(0, gate_on(self->fd, &g, self->s));
	/* Fill to exactly the depth: the gate is one. */
	left = depth - 1;
	while (left) {
		uint32_t n = left < chunk ? left : chunk;

		ASSERT_EQ(0, accel_submit(self->fd, self->s, d, n, NULL));
		left -= n;
	}
	EXPECT_EQ(-1, submit_raw(self->fd, self->s, d, 1, &seq));
	EXPECT_EQ(EAGAIN, errno);
	EXPECT_EQ(0xccccccccccccccccULL, seq);
	ASSERT_EQ(0, accel_query(self->fd, self->s, &q));
	EXPECT_EQ((uint64_t)depth, q.submitted);
	EXPECT_EQ(0ULL, q.completed);
	EXPECT_EQ(depth, q.queued);

	/* Other streams are not affected. */
	{
		uint32_t t;

		ASSERT_EQ(0, accel_stream(self->fd, 0, 0, &t));
		EXPECT_EQ(0, accel_submit(self->fd, t, d, chunk, NULL));
		EXPECT_EQ(0, accel_drain(self->fd, t));
	}

	ASSERT_EQ(0, gate_open(self->fd, &g));
	ASSERT_EQ(0, accel_drain(self->fd, self->s));
	ASSERT_EQ(0, accel_query(self->fd, self->s, &q));
	EXPECT_EQ((uint64_t)depth, q.completed);
	EXPECT_EQ(0u, q.queued);
	/* Room again. */
	EXPECT_EQ(0, submit_raw(self->fd, self->s, d, 1, &seq));
	EXPECT_EQ((uint64_t)depth + 1, seq);
	free(d);
}

/* A batch that would cross the depth is refused whole. */
TEST_F(submit, queue_depth_batch)
{
	uint32_t depth = self->info.queue_depth, chunk = self->info.max_submit;
	struct accel_stream_query q;
	struct accel_desc *d;
	struct gate g;
	uint64_t left;

	if (depth > (1u << 20) || chunk < 2)
		SKIP(return, "queue_depth %u too large to fill", depth);
	d = calloc(chunk, sizeof(*d));
	ASSERT_NE(NULL, d);
	ASSERT_EQ(0, gate_on(self->fd, &g, self->s));
	left = depth - 2;
	while (left) {
		uint32_t n = left < chunk ? left : chunk;

		ASSERT_EQ(0, accel_submit(self->fd, self->s, d, n, NULL));
		left -= n;
	}
	/* One slot left: two do not fit, one does. */
	EXPECT_EQ(-1, submit_raw(self->fd, self->s, d, 2, NULL));
	EXPECT_EQ(EAGAIN, errno);
	EXPECT_EQ(0, submit_raw(self->fd, self->s, d, 1, NULL));
	ASSERT_EQ(0, accel_query(self->fd, self->s, &q));
	EXPECT_EQ((uint64_t)depth, q.submitted);
	ASSERT_EQ(0, gate_open(self->fd, &g));
	ASSERT_EQ(0, accel_drain(self->fd, self->s));
	free(d);
}

/* A failed stream: queued work retires without running; EIO after. */
TEST_F(submit, eio_after_failure)
{
	struct accel_desc d[3];
	struct accel_stream_query q;
	struct accel_event_query eq;
	uint64_t seq;

	REQUIRE_CAP(ACCEL_CAP_USER_EVENTS);
	d[0] = d_host_wait(self->uev, 1);
	d[1] = d_copy(self->rb, 0, self->ra, 0, RSIZE);
	d[2] = d_record(self->ev);
	ASSERT_EQ(0, accel_submit(self->fd, self->s, d, 3, NULL));
	ASSERT_EQ(0, accel_signal(self->fd, self->uev, ACCEL_SIGNAL_ERROR, 1));

	EXPECT_EQ(-EIO, accel_sync(self->fd, self->s, 0, deadline_in(SURE_NS)));
	ASSERT_EQ(0, accel_wait_idle(self->fd, self->s, &q));
	EXPECT_EQ(3ULL, q.submitted);
	EXPECT_EQ(3ULL, q.completed);
	EXPECT_EQ(-EIO, q.error);
	EXPECT_EQ(0u, q.queued);
	/* The copy never ran. */
	EXPECT_TRUE(all_bytes(self->b, self->map_size, 0));
	/* The event recorded behind the failure failed too. */
	ASSERT_EQ(0, accel_event_query(self->fd, self->ev, &eq));
	EXPECT_EQ((uint32_t)ACCEL_EVENT_STATE_COMPLETE, eq.state);
	EXPECT_EQ(-EIO, eq.error);
	EXPECT_EQ(-EIO, accel_wait1(self->fd, self->ev, 0, deadline_in(SURE_NS)));

	/* Later submissions fail, queue nothing, and keep seq unwritten. */
	d[0] = d_nop();
	EXPECT_EQ(-1, submit_raw(self->fd, self->s, d, 1, &seq));
	EXPECT_EQ(EIO, errno);
	EXPECT_EQ(0xccccccccccccccccULL, seq);
	ASSERT_EQ(0, accel_query(self->fd, self->s, &q));
	EXPECT_EQ(3ULL, q.submitted);
	/* As does a record on it. */
	EXPECT_EQ(-EIO, accel_record(self->fd, self->ev, self->s, NULL));

	/* Other streams go on; the failed one can be destroyed. */
	{
		uint32_t t;

		ASSERT_EQ(0, accel_stream(self->fd, 0, 0, &t));
		EXPECT_EQ(0, accel_submit1(self->fd, t, d_copy(self->rb, 0, self->ra, 0, 1), NULL));
		EXPECT_EQ(0, accel_drain(self->fd, t));
		EXPECT_EQ(self->a[5], self->b[11]);
	}
	EXPECT_EQ(0, accel_stream_destroy(self->fd, self->s));
}

ACCEL_HARNESS_MAIN
