// SPDX-License-Identifier: GPL-2.0
/*
 * accelstream: COPY integrity. Random data, sizes from one byte to 64 MiB
 * at unaligned offsets, every pair of region kinds, in-order execution of
 * overlapping writes, and byte-exact checks of what must not change.
 */
#include "kselftest_harness.h"
#include "accel_helpers.h"

#define GUARD	64	/* bytes checked on each side of a destination */

ACCEL_FIXTURE(copy);

static const size_t copy_sizes[] = {
	1, 2, 3, 7, 8, 63, 64, 65, 511, 4095, 4096, 4097, 8191, 65537,
	(1 << 20) + 3, (16 << 20) + 5, 64 << 20,
};

/* Offsets that straddle pages differently for each size. */
static size_t src_off_for(size_t i) { return (i * 977 + 1) % 4096; }
static size_t dst_off_for(size_t i) { return (i * 1543 + 3) % 4096; }

TEST_F_TIMEOUT(copy, sizes_registered, 240)
{
	size_t max = 0, span, i;
	uint8_t *src, *dst;
	uint32_t hs, hd, s;

	for (i = 0; i < ARRAY_SIZE(copy_sizes); i++)
		if (copy_sizes[i] + 2 * 4096 <= self->info.max_pinned_bytes / 2 &&
		    copy_sizes[i] > max)
			max = copy_sizes[i];
	if (max < (64 << 20))
		TH_LOG("max_pinned_bytes %llu: largest copy %zu bytes",
		       (unsigned long long)self->info.max_pinned_bytes, max);
	span = max + 2 * 4096;
	src = anon_map(span);
	dst = anon_map(span);
	ASSERT_NE(NULL, src);
	ASSERT_NE(NULL, dst);
	fill_random(src, span, 42);
	ASSERT_EQ(0, accel_register(self->fd, src, span, ACCEL_MEM_READONLY, &hs));
	ASSERT_EQ(0, accel_register(self->fd, dst, span, 0, &hd));
	ASSERT_EQ(0, accel_stream(self->fd, 0, 0, &s));

	for (i = 0; i < ARRAY_SIZE(copy_sizes); i++) {
		size_t n = copy_sizes[i], so = src_off_for(i), dof = dst_off_for(i);
		size_t lo = dof > GUARD ? dof - GUARD : 0;
		size_t hi = dof + n + GUARD < span ? dof + n + GUARD : span;
		long diff;

		if (n > max)
			continue;
		memset(dst + lo, 0xa5, hi - lo);
		ASSERT_EQ(0, accel_submit1(self->fd, s, d_copy(hd, dof, hs, so, n), NULL));
		ASSERT_EQ(0, accel_drain(self->fd, s));
		diff = first_diff(dst + dof, src + so, n);
		EXPECT_EQ(-1, diff) {
			TH_LOG("size %zu (src +%zu, dst +%zu): first bad byte %ld",
			       n, so, dof, diff);
		}
		EXPECT_TRUE(all_bytes(dst + lo, dof - lo, 0xa5)) {
			TH_LOG("size %zu: bytes before the destination changed", n);
		}
		EXPECT_TRUE(all_bytes(dst + dof + n, hi - dof - n, 0xa5)) {
			TH_LOG("size %zu: bytes after the destination changed", n);
		}
	}
	EXPECT_EQ(0, accel_release(self->fd, hs, 0));
	EXPECT_EQ(0, accel_release(self->fd, hd, 0));
	munmap(src, span);
	munmap(dst, span);
}

/* Host -> device -> device -> host, all through COPY, odd offsets. */
TEST_F_TIMEOUT(copy, four_directions, 120)
{
	const size_t n = (1 << 20) + 17;
	uint8_t *a = anon_map(n + 64), *b = anon_map(n + 64);
	struct accel_desc d[4];
	uint32_t ha, hb, dx, dy, s;

	REQUIRE_CAP(ACCEL_CAP_DEVICE_MEM);
	ASSERT_NE(NULL, a);
	ASSERT_NE(NULL, b);
	fill_random(a, n + 64, 7);
	memset(b, 0, n + 64);
	ASSERT_EQ(0, accel_register(self->fd, a, n + 64, 0, &ha));
	ASSERT_EQ(0, accel_register(self->fd, b, n + 64, 0, &hb));
	ASSERT_EQ(0, accel_alloc(self->fd, n + 64, ACCEL_MEM_DEVICE, &dx, NULL));
	ASSERT_EQ(0, accel_alloc(self->fd, n + 64, ACCEL_MEM_DEVICE, &dy, NULL));
	ASSERT_EQ(0, accel_stream(self->fd, 0, 0, &s));

	d[0] = d_copy(dx, 3, ha, 1, n);		/* H2D */
	d[1] = d_copy(dy, 5, dx, 3, n);		/* D2D */
	d[2] = d_copy(hb, 7, dy, 5, n);		/* D2H */
	d[3] = d_copy(ha, 0, hb, 7, 1);		/* H2H: b[7] -> a[0] */
	ASSERT_EQ(0, accel_submit(self->fd, s, d, 4, NULL));
	ASSERT_EQ(0, accel_drain(self->fd, s));
	EXPECT_EQ(-1, first_diff(b + 7, a + 1, n));
	EXPECT_TRUE(all_bytes(b, 7, 0));
	EXPECT_TRUE(all_bytes(b + 7 + n, 64 - 7, 0));
	EXPECT_EQ(a[1], a[0]);

	/* H2H over a whole buffer, back again. */
	memset(b, 0, n + 64);
	ASSERT_EQ(0, accel_submit1(self->fd, s, d_copy(hb, 0, ha, 0, n + 64), NULL));
	ASSERT_EQ(0, accel_drain(self->fd, s));
	EXPECT_EQ(-1, first_diff(a, b, n + 64));
	munmap(a, n + 64);
	munmap(b, n + 64);
}

/* Host allocations as source and destination, seen through mmap. */
TEST_F_TIMEOUT(copy, host_alloc, 120)
{
	const size_t n = (3 << 20) + 4096 * 3 + 11;
	size_t rounded = (n + 4095) / 4096 * 4096;
	uint32_t h1, h2, dv, hr, s;
	uint64_t o1, o2;
	uint8_t *m1, *m2, *r;

	REQUIRE_CAP(ACCEL_CAP_HOST_ALLOC);
	REQUIRE_CAP(ACCEL_CAP_DEVICE_MEM);
	ASSERT_EQ(0, accel_alloc(self->fd, n, ACCEL_MEM_HOST, &h1, &o1));
	ASSERT_EQ(0, accel_alloc(self->fd, n, ACCEL_MEM_HOST, &h2, &o2));
	ASSERT_EQ(0, accel_alloc(self->fd, n, ACCEL_MEM_DEVICE, &dv, NULL));
	m1 = mmap(NULL, rounded, PROT_READ | PROT_WRITE, MAP_SHARED, self->fd, o1);
	ASSERT_NE(MAP_FAILED, m1);
	m2 = mmap(NULL, rounded, PROT_READ | PROT_WRITE, MAP_SHARED, self->fd, o2);
	ASSERT_NE(MAP_FAILED, m2);
	r = anon_map(rounded);
	ASSERT_NE(NULL, r);
	memset(r, 0, rounded);
	ASSERT_EQ(0, accel_register(self->fd, r, rounded, 0, &hr));
	ASSERT_EQ(0, accel_stream(self->fd, 0, 0, &s));

	fill_random(m1, rounded, 9);
	/* host alloc -> device -> host alloc, and host alloc -> registered */
	ASSERT_EQ(0, accel_submit1(self->fd, s, d_copy(dv, 0, h1, 0, n), NULL));
	ASSERT_EQ(0, accel_submit1(self->fd, s, d_copy(h2, 1, dv, 0, n - 1), NULL));
	ASSERT_EQ(0, accel_submit1(self->fd, s, d_copy(hr, 2, h1, 0, n - 2), NULL));
	ASSERT_EQ(0, accel_drain(self->fd, s));
	EXPECT_EQ(0, m2[0]);
	EXPECT_EQ(-1, first_diff(m2 + 1, m1, n - 1));
	EXPECT_EQ(-1, first_diff(r + 2, m1, n - 2));
	EXPECT_TRUE(all_bytes(r, 2, 0));

	/* registered -> host alloc */
	fill_random(r, rounded, 10);
	ASSERT_EQ(0, accel_submit1(self->fd, s, d_copy(h1, 0, hr, 0, n), NULL));
	ASSERT_EQ(0, accel_drain(self->fd, s));
	EXPECT_EQ(-1, first_diff(m1, r, n));

	munmap(m1, rounded);
	munmap(m2, rounded);
	munmap(r, rounded);
}

/*
 * Many small copies in one batch at random offsets, overlapping each
 * other's destinations: in-order execution means the last write wins,
 * exactly as a sequential memcpy model says.
 */
TEST_F_TIMEOUT(copy, in_order_model, 120)
{
	const size_t n = 256 * 1024, ncopies = 2000;
	uint8_t *src = anon_map(n), *dst = anon_map(n), *model = malloc(n);
	struct accel_desc *d = calloc(ncopies, sizeof(*d));
	uint64_t x = 12345;
	uint32_t hs, hd, s;
	size_t i, done;

	ASSERT_NE(NULL, src);
	ASSERT_NE(NULL, dst);
	ASSERT_NE(NULL, model);
	ASSERT_NE(NULL, d);
	fill_random(src, n, 77);
	memset(dst, 0, n);
	memset(model, 0, n);
	ASSERT_EQ(0, accel_register(self->fd, src, n, 0, &hs));
	ASSERT_EQ(0, accel_register(self->fd, dst, n, 0, &hd));
	ASSERT_EQ(0, accel_stream(self->fd, 0, 0, &s));

	for (i = 0; i < ncopies; i++) {
		size_t len, so, dof;

		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		len = (x >> 33) % 9000;
		so = (x >> 13) % (n - len + 1);
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		dof = (x >> 20) % (n - len + 1);
		d[i] = d_copy(hd, dof, hs, so, len);
		memcpy(model + dof, src + so, len);
	}
	for (done = 0; done < ncopies; ) {
		uint32_t c = ncopies - done < self->info.max_submit ?
			     ncopies - done : self->info.max_submit;

		ASSERT_EQ(0, accel_submit(self->fd, s, d + done, c, NULL));
		done += c;
	}
	ASSERT_EQ(0, accel_drain(self->fd, s));
	EXPECT_EQ(-1, first_diff(model, dst, n));
	munmap(src, n);
	munmap(dst, n);
	free(model);
	free(d);
}

/* Streams copying disjoint slices at once all land byte-exact. */
TEST_F_TIMEOUT(copy, parallel_streams, 120)
{
	enum { NS = 8 };
	const size_t slice = (1 << 20) + 7;
	const size_t n = NS * slice;
	uint8_t *src = anon_map(n), *dst = anon_map(n);
	uint32_t hs, hd, s[NS];
	int i, j;

	ASSERT_NE(NULL, src);
	ASSERT_NE(NULL, dst);
	fill_random(src, n, 5);
	memset(dst, 0, n);
	ASSERT_EQ(0, accel_register(self->fd, src, n, 0, &hs));
	ASSERT_EQ(0, accel_register(self->fd, dst, n, 0, &hd));
	for (i = 0; i < NS; i++) {
		ASSERT_EQ(0, accel_stream(self->fd, 0, i % 2 ? self->info.greatest_priority : 0, &s[i]));
		/* Each slice in four pieces, last first. */
		for (j = 3; j >= 0; j--) {
			size_t piece = slice / 4, off = i * slice + j * piece;
			size_t len = j == 3 ? slice - 3 * piece : piece;

			ASSERT_EQ(0, accel_submit1(self->fd, s[i], d_copy(hd, off, hs, off, len), NULL));
		}
	}
	for (i = 0; i < NS; i++)
		ASSERT_EQ(0, accel_drain(self->fd, s[i]));
	EXPECT_EQ(-1, first_diff(src, dst, n));
	munmap(src, n);
	munmap(dst, n);
}

/* Within one region: copy to a disjoint part of itself. */
TEST_F(copy, same_region)
{
	const size_t n = 3 * 4096;
	uint8_t *buf = anon_map(2 * n), *ref = malloc(n);
	uint32_t h, s;

	ASSERT_NE(NULL, buf);
	ASSERT_NE(NULL, ref);
	fill_random(buf, 2 * n, 8);
	memcpy(ref, buf + 1, n - 1);
	ASSERT_EQ(0, accel_register(self->fd, buf, 2 * n, 0, &h));
	ASSERT_EQ(0, accel_stream(self->fd, 0, 0, &s));
	ASSERT_EQ(0, accel_submit1(self->fd, s, d_copy(h, n, h, 1, n - 1), NULL));
	ASSERT_EQ(0, accel_drain(self->fd, s));
	EXPECT_EQ(-1, first_diff(buf + n, ref, n - 1));
	munmap(buf, 2 * n);
	free(ref);
}

#define INLINE_PARAM	"/sys/module/accelstream/parameters/inline_copy_bytes"

/* The module's inline_copy_bytes, or -1 when it cannot be read. */
static long inline_copy_bytes(void)
{
	FILE *f = fopen(INLINE_PARAM, "r");
	long v = -1;

	if (f) {
		if (fscanf(f, "%ld", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

/*
 * Small ready copies submitted to an idle stream run in the submitting
 * thread: done, data in place, when SUBMIT returns, without any sync. A
 * batch over the budget finishes the rest in the worker, in order.
 */
TEST_F(copy, small_on_idle_stream_done_at_submit)
{
	const size_t n = 64, nb = 64, span = 1 << 20;
	long budget = inline_copy_bytes();
	struct accel_desc d[64];
	struct accel_stream_query q;
	uint8_t *src, *dst;
	uint32_t hs, hd, s;
	uint64_t seq;
	size_t i, big;

	ASSERT_LE(0, budget) TH_LOG("cannot read " INLINE_PARAM);
	if (budget < (long)(n * nb))
		SKIP(return, "inline_copy_bytes=%ld is below %zu", budget, n * nb);
	src = anon_map(span);
	dst = anon_map(span);
	ASSERT_NE(NULL, src);
	ASSERT_NE(NULL, dst);
	fill_random(src, span, 77);
	ASSERT_EQ(0, accel_register(self->fd, src, span, ACCEL_MEM_READONLY, &hs));
	ASSERT_EQ(0, accel_register(self->fd, dst, span, 0, &hd));
	ASSERT_EQ(0, accel_stream(self->fd, 0, 0, &s));

	/* One copy per submission, 200 times: each done when SUBMIT returns. */
	for (i = 0; i < 200; i++) {
		size_t off = (i * n) % (span - n);

		ASSERT_EQ(0, accel_submit1(self->fd, s,
					   d_copy(hd, off, hs, off, n), &seq));
		ASSERT_EQ(0, accel_query(self->fd, s, &q));
		ASSERT_EQ(seq, q.completed) TH_LOG("copy %zu", i);
		ASSERT_EQ(0, q.queued);
		ASSERT_EQ(-1, first_diff(dst + off, src + off, n));
	}

	/* A batch of 64 x 64 B: all done at return. */
	memset(dst, 0, span);
	for (i = 0; i < nb; i++)
		d[i] = d_copy(hd, i * n, hs, i * n, n);
	ASSERT_EQ(0, accel_submit(self->fd, s, d, nb, &seq));
	ASSERT_EQ(0, accel_query(self->fd, s, &q));
	EXPECT_EQ(seq, q.completed);
	EXPECT_EQ(-1, first_diff(dst, src, n * nb));

	/*
	 * Over the budget: 64 copies of budget / 16 bytes each. What the
	 * budget does not cover goes to the worker; all of it lands, in order
	 * (the last copy rewrites the first 64 bytes the first one wrote).
	 */
	big = (size_t)budget / 16 + 1;
	ASSERT_LE(big * nb + n, span);
	memset(dst, 0, span);
	for (i = 0; i < nb; i++)
		d[i] = d_copy(hd, i * big, hs, i * big, big);
	d[nb - 1] = d_copy(hd, 0, hs, span - n, n);
	ASSERT_EQ(0, accel_submit(self->fd, s, d, nb, &seq));
	ASSERT_EQ(0, accel_drain(self->fd, s));
	ASSERT_EQ(0, accel_query(self->fd, s, &q));
	EXPECT_EQ(seq, q.completed);
	EXPECT_EQ(-1, first_diff(dst + n, src + n, big * (nb - 1) - n));
	EXPECT_EQ(-1, first_diff(dst, src + span - n, n));
	munmap(src, span);
	munmap(dst, span);
}

/* A small copy behind a closed gate is not run at submit, nor after it. */
TEST_F(copy, small_behind_wait_not_inline)
{
	uint8_t *src = anon_map(4096), *dst = anon_map(4096);
	struct accel_stream_query q;
	struct gate g;
	uint32_t hs, hd, s;
	uint64_t seq;

	ASSERT_NE(NULL, src);
	ASSERT_NE(NULL, dst);
	memset(src, 0x5a, 4096);
	ASSERT_EQ(0, accel_register(self->fd, src, 4096, 0, &hs));
	ASSERT_EQ(0, accel_register(self->fd, dst, 4096, 0, &hd));
	ASSERT_EQ(0, accel_stream(self->fd, 0, 0, &s));
	ASSERT_EQ(0, gate_on(self->fd, &g, s));
	ASSERT_EQ(0, accel_submit1(self->fd, s, d_copy(hd, 0, hs, 0, 64), &seq));
	ASSERT_EQ(0, accel_query(self->fd, s, &q));
	EXPECT_EQ(seq - 2, q.completed);
	EXPECT_EQ(0, dst[0]);
	ASSERT_EQ(0, gate_open(self->fd, &g));
	ASSERT_EQ(0, accel_drain(self->fd, s));
	EXPECT_EQ(-1, first_diff(dst, src, 64));
	munmap(src, 4096);
	munmap(dst, 4096);
}

/*
 * Submissions of changing sizes on one stream, some queued behind a gate
 * while others are submitted, one rejected in between: every copy lands
 * once and in order, the rejected one changes nothing, and destroying the
 * stream frees what it kept (the driver reuses a stream's retired batches).
 */
TEST_F(copy, batches_of_changing_sizes)
{
	static const size_t counts[] = { 1, 64, 3, 64, 65, 2, 1, 64 };
	const size_t n = 64, span = 65 * 64;
	struct accel_stream_query q;
	struct accel_desc d[65];
	uint8_t *src, *dst;
	uint32_t hs, hd, s;
	uint64_t seq, before;
	struct gate g = {};
	size_t c, i;

	src = anon_map(span);
	dst = anon_map(span);
	ASSERT_NE(NULL, src);
	ASSERT_NE(NULL, dst);
	ASSERT_EQ(0, accel_register(self->fd, src, span, ACCEL_MEM_READONLY, &hs));
	ASSERT_EQ(0, accel_register(self->fd, dst, span, 0, &hd));
	ASSERT_EQ(0, accel_stream(self->fd, 0, 0, &s));

	for (c = 0; c < ARRAY_SIZE(counts); c++) {
		bool gated = c % 3 == 1;

		fill_random(src, span, 100 + c);
		memset(dst, 0, span);
		if (gated)
			ASSERT_EQ(0, gate_on(self->fd, &g, s));
		for (i = 0; i < counts[c]; i++)
			d[i] = d_copy(hd, i * n, hs, i * n, n);
		/* The same batch with an unknown region last: -ENOENT. */
		d[counts[c] - 1].src = hs + 1000;
		ASSERT_EQ(0, accel_query(self->fd, s, &q));
		before = q.submitted;
		EXPECT_EQ(-ENOENT, accel_submit(self->fd, s, d, counts[c], &seq));
		ASSERT_EQ(0, accel_query(self->fd, s, &q));
		EXPECT_EQ(before, q.submitted);
		d[counts[c] - 1].src = hs;
		ASSERT_EQ(0, accel_submit(self->fd, s, d, counts[c], &seq));
		if (gated) {
			/* A second batch while the first is queued. */
			ASSERT_EQ(0, accel_submit(self->fd, s, d, 1, &seq));
			ASSERT_EQ(0, accel_query(self->fd, s, &q));
			EXPECT_EQ((uint32_t)counts[c] + 2, q.queued);
			EXPECT_EQ(0, dst[0]);
			ASSERT_EQ(0, gate_open(self->fd, &g));
		}
		ASSERT_EQ(0, accel_drain(self->fd, s));
		ASSERT_EQ(0, accel_query(self->fd, s, &q));
		EXPECT_EQ(seq, q.completed);
		EXPECT_EQ(-1, first_diff(dst, src, counts[c] * n))
			TH_LOG("submission %zu of %zu copies", c, counts[c]);
	}
	ASSERT_EQ(0, accel_stream_destroy(self->fd, s));
	munmap(src, span);
	munmap(dst, span);
}

ACCEL_HARNESS_MAIN
