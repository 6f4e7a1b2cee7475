// SPDX-License-Identifier: MIT
/*
 * The staging pool's ring: small pageable copies take slots of one pinned
 * chunk, copied and submitted by the calling thread with no hand-off and
 * no wait; the ring wraps in order, a ring full behind a gate hands the
 * copies to the chunks, and a stream destroyed with copies in the ring
 * leaves its slots to be reused.
 */
#include "staging_helpers.h"

/*
 * Behind a gate, @count small pageable H2D copies of @n bytes into
 * consecutive ranges of @dev, the i-th of t_fill(@seed + i) from @src,
 * which is overwritten as soon as each call returns; then their D2H into
 * pinned @out, the gate opened and @s synchronized.
 */
static int ring_burst(accel_stream_t s, unsigned char *dev,
		      unsigned char *out, unsigned char *src, size_t n,
		      int count, unsigned int seed)
{
	accel_event_t gate;
	int i;

	CHECK_OK(t_gate(s, &gate));
	for (i = 0; i < count; i++) {
		t_fill(src, n, seed + (unsigned int)i);
		CHECK_OK(accel_memcpy_async(s, dev + i * n, src, n,
					    ACCEL_MEMCPY_H2D));
		memset(src, 0xee, n);
	}
	CHECK_OK(accel_memcpy_async(s, out, dev, count * n, ACCEL_MEMCPY_D2H));
	CHECK_OK(t_gate_open(gate));
	CHECK_OK(accel_stream_synchronize(s, 60 * T_SEC));
	accel_event_destroy(gate);
	return T_PASS;
}

/*
 * A burst of small pageable copies takes slots of the ring: the calling
 * thread copies each source and submits it, with no hand-off to a worker
 * and no wait for an earlier copy's completion, far more copies than the
 * pool has chunks, behind a gate (nothing retires meanwhile). Each source
 * is overwritten as soon as its call returns; the bytes are exact.
 */
static int small_burst_no_waits(void)
{
	enum { N = 200 };
	const size_t n = 4 * KB;
	struct staging_test x;
	int i;

	/* The sources are x.page, the device's bytes come back into x.host. */
	CHECK_OK(staging_test_begin(&x, "4096", "4", true, N * n, n));
	CHECK(ring_burst(x.s, x.dev, x.host, x.page, n, N, 7) == T_PASS);
	for (i = 0; i < N; i++)
		CHECK(t_check_fill(x.host + i * n, n, (unsigned int)i + 7));
	CHECK(staging_test_end(&x) == T_PASS);
	printf("# %llu through the ring, %llu ring waits, %llu filled in a chunk, %llu handed to a worker, %llu spilled, %llu chunk waits\n",
	       x.t.ring, x.t.ring_waits, x.t.filled, x.t.handoffs, x.t.spills,
	       x.t.chunk_waits);
	CHECK(x.t.ring == N);
	CHECK(x.t.ring_waits == 0 && x.t.chunk_waits == 0);
	CHECK(x.t.handoffs == 0 && x.t.spills == 0 && x.t.filled == 0);
	return T_PASS;
}

/*
 * The ring wraps: copies of sizes up to its largest, many times its size
 * in all, into overlapping device ranges, each source freed at once; the
 * device ends up as the same writes made in order on the host. A 64 KiB
 * ring (chunks of 64 KiB) takes copies of up to 16 KiB.
 */
static int ring_wraps_in_order(void)
{
	enum { N = 400 };
	const size_t span = 64 * KB, max = 16 * KB;
	unsigned char *model, *dev, *out;
	accel_stream_t s;
	int i, ret = T_FAIL;

	if (staging_env("64", "2"))
		return T_FAIL;
	model = calloc(1, span);
	out = malloc(span);
	if (!model || !out || !t_ctx() ||
	    accel_stream_create(NULL, 0, 0, &s) ||
	    accel_malloc(NULL, (void **)&dev, span) ||
	    accel_memset_async(s, dev, 0, span))
		goto out;
	for (i = 0; i < N; i++) {
		size_t n = 1 + ((size_t)i * 7919) % max;
		size_t off = ((size_t)i * 4099) % (span - n + 1);
		unsigned char *src = malloc(n);

		if (!src)
			goto out;
		t_fill(src, n, (unsigned int)i);
		memcpy(model + off, src, n);
		if (accel_memcpy_async(s, dev + off, src, n,
				       ACCEL_MEMCPY_H2D)) {
			free(src);
			goto out;
		}
		memset(src, 0xee, n);
		free(src);
	}
	if (accel_memcpy_async(s, out, dev, span, ACCEL_MEMCPY_D2H) ||
	    accel_stream_synchronize(s, 60 * T_SEC))
		goto out;
	if (memcmp(out, model, span)) {
		printf("# the device differs from the writes made in order\n");
		goto out;
	}
	ret = T_PASS;
out:
	free(model);
	free(out);
	return ret;
}

/*
 * Behind a gate, more small copies than the ring has slots: a slot is
 * never reused before its copy ran (the copies past the ring's room take
 * the chunks instead), so every copy lands with its own bytes.
 */
static int ring_full_behind_gate(void)
{
	enum { N = 40 };
	const size_t n = 4 * KB;
	unsigned char *src, *dev, *out;
	accel_stream_t s;
	int i;

	/* A 64 KiB ring: 16 slots of 4 KiB. */
	CHECK(!staging_env("64", "2"));
	CHECK(t_ctx());
	CHECK_OK(staging_bufs(NULL, N * n, n, &s, &dev, &out, &src));
	CHECK(ring_burst(s, dev, out, src, n, N, 300) == T_PASS);
	for (i = 0; i < N; i++)
		if (!t_check_fill(out + i * n, n, (unsigned int)i + 300)) {
			printf("# copy %d: its slot was reused before it ran\n", i);
			return T_FAIL;
		}
	free(src);
	return T_PASS;
}

/*
 * A stream destroyed with small copies queued in the ring: its slots are
 * reused once its queued work ran (its handle died at once), and the
 * copies it had queued still land, as do those of the next stream, which
 * found the ring full of the destroyed stream's slots.
 */
static int ring_stream_destroyed(void)
{
	const size_t n = 4 * KB;
	unsigned char *src, *dev, *dev2, *out, *out2;
	accel_event_t gate, done;
	accel_stream_t a, b;
	int i, round;

	CHECK(!staging_env("64", "2"));
	CHECK(t_ctx());
	CHECK_OK(accel_malloc(NULL, (void **)&dev, 16 * n));
	CHECK_OK(accel_malloc(NULL, (void **)&dev2, 16 * n));
	CHECK_OK(accel_host_alloc(NULL, (void **)&out, 16 * n, 0));
	CHECK_OK(accel_host_alloc(NULL, (void **)&out2, 16 * n, 0));
	src = malloc(n);
	CHECK(src);
	for (round = 0; round < 6; round++) {
		CHECK_OK(accel_stream_create(NULL, 0, 0, &a));
		CHECK_OK(t_gate(a, &gate));
		/* 16 slots of 4 KiB fill the 64 KiB ring. */
		for (i = 0; i < 16; i++) {
			t_fill(src, n, (unsigned int)(round * 16 + i));
			CHECK_OK(accel_memcpy_async(a, dev + i * n, src, n,
						    ACCEL_MEMCPY_H2D));
		}
		CHECK_OK(accel_event_create(NULL, 0, &done));
		CHECK_OK(accel_event_record(done, a));
		CHECK_OK(accel_stream_destroy(a));
		CHECK_OK(accel_stream_create(NULL, 0, 0, &b));
		/* The ring is full: B's copies wait for A's slots to retire. */
		CHECK_OK(t_gate_open(gate));
		for (i = 0; i < 16; i++) {
			t_fill(src, n, (unsigned int)(1000 + i));
			CHECK_OK(accel_memcpy_async(b, dev2 + i * n, src, n,
						    ACCEL_MEMCPY_H2D));
		}
		CHECK_OK(accel_stream_wait_event(b, done, 0));
		CHECK_OK(accel_memcpy_async(b, out, dev, 16 * n,
					    ACCEL_MEMCPY_D2H));
		CHECK_OK(accel_memcpy_async(b, out2, dev2, 16 * n,
					    ACCEL_MEMCPY_D2H));
		CHECK_OK(accel_stream_synchronize(b, 60 * T_SEC));
		for (i = 0; i < 16; i++)
			CHECK(t_check_fill(out + i * n, n,
					   (unsigned int)(round * 16 + i)) &&
			      t_check_fill(out2 + i * n, n,
					   (unsigned int)(1000 + i)));
		CHECK_OK(accel_stream_destroy(b));
		accel_event_destroy(gate);
		accel_event_destroy(done);
	}
	free(src);
	return T_PASS;
}

/* Memory this process has locked or pinned (VmLck + VmPin), kB. */
static long locked_kb(void)
{
	long l = t_read_long("/proc/self/status", "VmLck: %ld kB");
	long p = t_read_long("/proc/self/status", "VmPin: %ld kB");

	return (l > 0 ? l : 0) + (p > 0 ? p : 0);
}

/*
 * A pageable copy that fails (its stream failed: -EIO), H2D or D2H,
 * small or past the ring, as the first staged copies of its context,
 * leaves nothing pinned: the ring is released again and no chunk is
 * pinned, so VmLck and VmPin are as before (the ring and the chunks had
 * stayed pinned and charged to RLIMIT_MEMLOCK).
 * A healthy stream's copies then take the ring as usual.
 */
static int failed_copy_pins_nothing(void)
{
	const size_t n = 4 * KB;
	unsigned char *src, *back, *dev, *big;
	accel_stream_t s, ok;
	long before;

	CHECK(t_ctx());
	CHECK_OK(accel_malloc(NULL, (void **)&dev, 8 * MB));
	src = malloc(n);
	back = malloc(n);
	big = malloc(8 * MB);
	CHECK(src && back && big);
	memset(big, 1, 8 * MB);
	CHECK_OK(accel_stream_create(NULL, 0, 0, &s));
	CHECK_RET(t_fail_stream(s), -EIO);
	before = locked_kb();
	t_fill(src, n, 5);
	CHECK_RET(accel_memcpy_async(s, dev, src, n, ACCEL_MEMCPY_H2D), -EIO);
	CHECK(locked_kb() == before);
	CHECK_RET(accel_memcpy_async(s, back, dev, n, ACCEL_MEMCPY_D2H), -EIO);
	CHECK(locked_kb() == before);
	/* Past the ring (the chunks' path), both ways. */
	CHECK_RET(accel_memcpy_async(s, dev, big, 8 * MB, ACCEL_MEMCPY_H2D),
		  -EIO);
	CHECK(locked_kb() == before);
	CHECK_RET(accel_memcpy_async(s, big, dev, 8 * MB, ACCEL_MEMCPY_D2H),
		  -EIO);
	CHECK(locked_kb() == before);
	CHECK_OK(accel_stream_create(NULL, 0, 0, &ok));
	CHECK_OK(accel_memcpy_async(ok, dev, src, n, ACCEL_MEMCPY_H2D));
	CHECK_OK(accel_memcpy_async(ok, back, dev, n, ACCEL_MEMCPY_D2H));
	CHECK_OK(accel_stream_synchronize(ok, 60 * T_SEC));
	CHECK(!memcmp(back, src, n));
	CHECK_OK(accel_stream_destroy(ok));
	CHECK_OK(accel_stream_destroy(s));
	free(src);
	free(back);
	free(big);
	return T_PASS;
}

STAGING_MAIN(T(small_burst_no_waits), T(ring_wraps_in_order),
	     T(ring_full_behind_gate), T(ring_stream_destroyed),
	     T(failed_copy_pins_nothing))
