// SPDX-License-Identifier: MIT
/*
 * The staging pool: pageable copies of any size and any queue length go
 * through a few pinned chunks per context, reused; the bytes are exact
 * across chunk and page boundaries (an unreadable side is -EFAULT, never a
 * signal), and the order of the stream is kept. The ring of small copies
 * is staging_ring.c, D2H copies into pageable memory staging_d2h.c, the
 * pinned memory the pool holds staging_pinned.c.
 */
#include <sys/mman.h>

#include "staging_helpers.h"

static long ps;

/* Item: an unreadable source is -EFAULT, never a SIGSEGV; nothing queued. */
static int unreadable_source(void)
{
	unsigned char *hole, *ok, *out;
	accel_context *a, *b;
	accel_stream_t s;
	const char *backend = "";
	void *da, *db;

	CHECK((a = t_ctx()));
	CHECK((b = t_ctx()));
	CHECK_OK(accel_stream_create(a, 0, 0, &s));
	CHECK_OK(accel_malloc(a, &da, 4096));
	CHECK_OK(accel_malloc(b, &db, 4096));
	/*
	 * Another context's device pointer is pageable memory here, and
	 * not readable (the stand-in libcudart's device memory is host
	 * memory, so only with the cpu backend).
	 */
	CHECK_OK(accel_context_get_backend(a, &backend));
	if (!strcmp(backend, "cpu")) {
		CHECK_RET(accel_memcpy_async(s, da, db, 100,
					     ACCEL_MEMCPY_DEFAULT), -EFAULT);
		CHECK_RET(accel_memcpy_async(s, da, db, 100, ACCEL_MEMCPY_H2D),
			  -EFAULT);
	}
	ok = malloc(4096);
	CHECK(ok);
	CHECK_RET(accel_memcpy_async(s, ok, (void *)0x1000, 64,
				     ACCEL_MEMCPY_H2H), -EFAULT);
	/* PROT_NONE, and readable memory running into a hole. */
	hole = mmap(NULL, 2 * ps, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(hole != MAP_FAILED);
	CHECK(!mprotect(hole + ps, ps, PROT_NONE));
	CHECK_RET(accel_memcpy_async(s, da, hole + ps, 8, ACCEL_MEMCPY_H2D),
		  -EFAULT);
	CHECK_RET(accel_memcpy_async(s, da, hole + ps - 8, 16,
				     ACCEL_MEMCPY_H2D), -EFAULT);
	CHECK(!munmap(hole + ps, ps));
	CHECK_RET(accel_memcpy_async(s, da, hole + ps - 8, 16,
				     ACCEL_MEMCPY_H2D), -EFAULT);
	/* Nothing was queued: the stream is idle and works. */
	CHECK_OK(accel_stream_query(s));
	t_fill(hole, ps, 3);
	CHECK_OK(accel_memcpy_async(s, da, hole, ps, ACCEL_MEMCPY_H2D));
	CHECK_OK(accel_host_alloc(a, (void **)&out, ps, 0));
	CHECK_OK(accel_memcpy_async(s, out, da, ps, ACCEL_MEMCPY_D2H));
	CHECK_OK(accel_stream_synchronize(s, 30 * T_SEC));
	CHECK(t_check_fill(out, ps, 3));
	munmap(hole, ps);
	free(ok);
	return T_PASS;
}

/*
 * Large pageable sides are checked in slices by the pool's threads: a
 * page deep inside a 48 MiB source that cannot be read, or inside a
 * destination that cannot be written, is -EFAULT, and nothing is queued.
 */
static int large_unreadable_side(void)
{
	const size_t n = 48 * MB, bad = 37 * MB + 3 * 4096;
	unsigned char *buf, *dev;
	accel_stream_t s;

	CHECK(t_ctx());
	CHECK_OK(accel_stream_create(NULL, 0, 0, &s));
	CHECK_OK(accel_malloc(NULL, (void **)&dev, n));
	buf = mmap(NULL, n, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(buf != MAP_FAILED);
	memset(buf, 1, n);
	CHECK(!mprotect(buf + bad, ps, PROT_NONE));
	CHECK_RET(accel_memcpy_async(s, dev, buf, n, ACCEL_MEMCPY_H2D),
		  -EFAULT);
	CHECK_RET(accel_memcpy_async(s, buf, dev, n, ACCEL_MEMCPY_D2H),
		  -EFAULT);
	/* Readable but not writable: a source, not a destination. */
	CHECK(!mprotect(buf + bad, ps, PROT_READ));
	CHECK_RET(accel_memcpy_async(s, buf, dev, n, ACCEL_MEMCPY_D2H),
		  -EFAULT);
	/* Nothing was queued: the stream is idle. */
	CHECK_OK(accel_stream_query(s));
	CHECK_OK(accel_memcpy_async(s, dev, buf, n, ACCEL_MEMCPY_H2D));
	CHECK_OK(accel_stream_synchronize(s, 60 * T_SEC));
	munmap(buf, n);
	return T_PASS;
}

/*
 * H2D from pageable memory freed at once, D2H back into pageable memory,
 * at sizes and offsets around page and chunk boundaries, with a pool of
 * three 64 KiB chunks so that most copies go through it in pieces.
 */
static int exact_across_boundaries(void)
{
	const size_t chunk = 64 * KB;
	size_t sizes[] = { 1, ps - 1, ps, ps + 1, chunk - 1, chunk, chunk + 1,
			   2 * chunk + ps + 7, 3 * chunk, 3 * chunk + 1,
			   10 * chunk + 13 };
	size_t i, max = 10 * chunk + 13 + 2 * ps;
	unsigned char *dev, *back;
	accel_event_t gate;
	accel_stream_t s;
	int ret = T_FAIL;

	if (staging_env("64", "3"))
		return T_FAIL;
	if (!t_ctx())
		goto out;
	if (accel_stream_create(NULL, 0, 0, &s) ||
	    accel_malloc(NULL, (void **)&dev, max))
		goto out;
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		size_t n = sizes[i], off = (i * 37) % ps;
		unsigned char *src = malloc(n + off);

		if (!src)
			goto out;
		t_fill(src + off, n, (unsigned int)i + 20);
		/* Gated: the pieces wait in the pool, the source goes now. */
		if (t_gate(s, &gate) ||
		    accel_memcpy_async(s, dev + off, src + off, n,
				       ACCEL_MEMCPY_H2D))
			goto out;
		memset(src, 0xee, n + off);
		free(src);
		back = calloc(1, n + 3);
		if (!back)
			goto out;
		if (accel_memcpy_async(s, back + 3, dev + off, n,
				       ACCEL_MEMCPY_D2H))
			goto out;
		if (n > 1 && back[4] != 0) {
			printf("# D2H landed while gated\n");
			goto out;
		}
		if (t_gate_open(gate) ||
		    accel_stream_synchronize(s, 60 * T_SEC))
			goto out;
		if (!t_check_fill(back + 3, n, (unsigned int)i + 20) ||
		    back[0] || back[1] || back[2]) {
			printf("# size %zu offset %zu: bytes differ\n", n, off);
			free(back);
			goto out;
		}
		free(back);
		accel_event_destroy(gate);
	}
	ret = T_PASS;
out:
	return ret;
}

/*
 * A D2H into pageable memory that the stream has passed is done: the
 * next H2D from that memory reads all of it at enqueue, so the caller may
 * overwrite it at once. (The pool once forgot the write only after the
 * stream went on, and read such a source late, after the overwrite.)
 */
static int write_done_when_synchronized(void)
{
	const size_t n = 3 * KB + 7;
	unsigned char *buf, *dev, *dev2, *back;
	accel_stream_t s;
	int i, ret = T_FAIL;

	if (staging_env("64", "3"))
		return T_FAIL;
	buf = malloc(n);
	back = malloc(n);
	if (!buf || !back || !t_ctx() ||
	    accel_stream_create(NULL, 0, 0, &s) ||
	    accel_malloc(NULL, (void **)&dev, n) ||
	    accel_malloc(NULL, (void **)&dev2, n))
		goto out;
	for (i = 0; i < 3000; i++) {
		t_fill(buf, n, (unsigned int)i);
		if (accel_memcpy_async(s, dev, buf, n, ACCEL_MEMCPY_H2D) ||
		    accel_memcpy_async(s, buf, dev, n, ACCEL_MEMCPY_D2H) ||
		    accel_stream_synchronize(s, 60 * T_SEC))
			goto out;
		/* buf holds fill i; copy it out, then overwrite it at once. */
		if (accel_memcpy_async(s, dev2, buf, n, ACCEL_MEMCPY_H2D))
			goto out;
		memset(buf, 0xee, n);
		if (accel_memcpy_async(s, back, dev2, n, ACCEL_MEMCPY_D2H) ||
		    accel_stream_synchronize(s, 60 * T_SEC))
			goto out;
		if (!t_check_fill(back, n, (unsigned int)i)) {
			printf("# round %d: the source was read after the caller overwrote it\n",
			       i);
			goto out;
		}
	}
	ret = T_PASS;
out:
	free(buf);
	free(back);
	return ret;
}

/*
 * Order: behind a gate, many more pageable writes of one device range
 * than the pool has chunks, each followed by a D2H into its own pageable
 * buffer: each read sees exactly the write before it.
 */
static int order_kept(void)
{
	enum { N = 40 };
	const size_t n = 3 * 16 * KB + 5;
	unsigned char *back[N], *src, *dev;
	accel_event_t gate;
	accel_stream_t s;
	int i, ret = T_FAIL;

	if (staging_env("16", "2"))
		return T_FAIL;
	memset(back, 0, sizeof(back));
	src = malloc(n);
	if (!src || !t_ctx() || accel_stream_create(NULL, 0, 0, &s) ||
	    accel_malloc(NULL, (void **)&dev, n) || t_gate(s, &gate))
		goto out;
	for (i = 0; i < N; i++) {
		back[i] = calloc(1, n);
		t_fill(src, n, (unsigned int)i + 100);
		if (!back[i] ||
		    accel_memcpy_async(s, dev, src, n, ACCEL_MEMCPY_H2D) ||
		    accel_memcpy_async(s, back[i], dev, n, ACCEL_MEMCPY_D2H))
			goto out;
	}
	if (t_gate_open(gate) || accel_stream_synchronize(s, 60 * T_SEC))
		goto out;
	for (i = 0; i < N; i++)
		if (!t_check_fill(back[i], n, (unsigned int)i + 100)) {
			printf("# read %d does not see write %d\n", i, i);
			goto out;
		}
	ret = T_PASS;
out:
	for (i = 0; i < N; i++)
		free(back[i]);
	free(src);
	return ret;
}

/*
 * Stream order across pageable copies: on one gated stream, a copy into
 * pageable P, then copies reading P (into pageable Q, and H2D), see what
 * the first wrote. Bytes of the source that no queued copy writes are
 * read at enqueue: overwriting them after the call changes nothing.
 */
static int read_after_pageable_write(void)
{
	const size_t n = 3 * 16 * KB + 5;
	unsigned char *src, *p, *q, *r, *p2, *q2, *dev, *dev2;
	accel_event_t gate;
	accel_stream_t s;
	int ret = T_FAIL;

	if (staging_env("16", "2"))
		return T_FAIL;
	src = malloc(n);
	p = calloc(1, n);
	q = calloc(1, n);
	r = calloc(1, n);
	p2 = malloc(2 * n);
	q2 = calloc(1, 2 * n);
	if (!src || !p || !q || !r || !p2 || !q2 || !t_ctx() ||
	    accel_stream_create(NULL, 0, 0, &s) ||
	    accel_malloc(NULL, (void **)&dev, n) ||
	    accel_malloc(NULL, (void **)&dev2, n))
		goto out;
	t_fill(src, n, 5);
	if (accel_memcpy_async(s, dev, src, n, ACCEL_MEMCPY_H2D) ||
	    accel_stream_synchronize(s, 60 * T_SEC) || t_gate(s, &gate))
		goto out;
	t_fill(p2, 2 * n, 9);
	/* Into P, then out of P: pageable to pageable, and H2D. */
	if (accel_memcpy_async(s, p, dev, n, ACCEL_MEMCPY_D2H) ||
	    accel_memcpy_async(s, q, p, n, ACCEL_MEMCPY_DEFAULT) ||
	    accel_memcpy_async(s, dev2, p, n, ACCEL_MEMCPY_H2D) ||
	    accel_memcpy_async(s, r, dev2, n, ACCEL_MEMCPY_D2H))
		goto out;
	/* The first half of P2 written, then all of P2 read. */
	if (accel_memcpy_async(s, p2, dev, n, ACCEL_MEMCPY_D2H) ||
	    accel_memcpy_async(s, q2, p2, 2 * n, ACCEL_MEMCPY_DEFAULT))
		goto out;
	memset(p2 + n, 0xee, n);
	if (t_gate_open(gate) || accel_stream_synchronize(s, 60 * T_SEC))
		goto out;
	if (!t_check_fill(q, n, 5)) {
		printf("# pageable to pageable read P before the write into it\n");
		goto out;
	}
	if (!t_check_fill(r, n, 5)) {
		printf("# H2D staged P before the write into it\n");
		goto out;
	}
	if (!t_check_fill(q2, n, 5)) {
		printf("# the written half of P2 was read early\n");
		goto out;
	}
	t_fill(p2, 2 * n, 9);
	if (memcmp(q2 + n, p2 + n, n)) {
		printf("# the unwritten half of P2 was not read at enqueue\n");
		goto out;
	}
	ret = T_PASS;
out:
	free(src);
	free(p);
	free(q);
	free(r);
	free(p2);
	free(q2);
	return ret;
}

/*
 * With every chunk busy, a stream's piece takes a chunk its own stream
 * used last: a stream whose gate opens finishes while another stays
 * gated (a chunk taken in turn would have made it wait for the other).
 */
static int streams_stay_independent(void)
{
	const size_t n = 16 * KB;
	unsigned char *src, *out, *da, *db;
	accel_event_t ga, gb;
	accel_stream_t a, b;
	int i, ret = T_FAIL;

	if (staging_env("16", "2"))
		return T_FAIL;
	src = malloc(n);
	if (!src || !t_ctx() || accel_stream_create(NULL, 0, 0, &a) ||
	    accel_stream_create(NULL, 0, 0, &b) ||
	    accel_malloc(NULL, (void **)&da, n) ||
	    accel_malloc(NULL, (void **)&db, n) ||
	    accel_host_alloc(NULL, (void **)&out, n, 0) ||
	    t_gate(a, &ga) || t_gate(b, &gb))
		goto out;
	/* A takes one chunk, B the other, then A three more pieces. */
	t_fill(src, n, 1);
	if (accel_memcpy_async(a, da, src, n, ACCEL_MEMCPY_H2D))
		goto out;
	if (accel_memcpy_async(b, db, src, n, ACCEL_MEMCPY_H2D))
		goto out;
	for (i = 2; i < 5; i++) {
		t_fill(src, n, (unsigned int)i);
		if (accel_memcpy_async(a, da, src, n, ACCEL_MEMCPY_H2D))
			goto out;
	}
	if (accel_memcpy_async(a, out, da, n, ACCEL_MEMCPY_D2H) ||
	    t_gate_open(ga))
		goto out;
	/* Not a timing check: a generous bound on what would be a hang. */
	ret = accel_stream_synchronize(a, 60 * T_SEC);
	if (ret) {
		printf("# stream A: %s while B is gated\n", accel_strerror(ret));
		ret = T_FAIL;
		goto out;
	}
	ret = T_FAIL;
	if (!t_check_fill(out, n, 4))
		goto out;
	if (t_gate_open(gb) || accel_stream_synchronize(b, 60 * T_SEC))
		goto out;
	ret = T_PASS;
out:
	free(src);
	return ret;
}

/*
 * Large H2D copies are filled several chunks at once by the fill threads
 * and submitted in order: the bytes are exact across chunk boundaries,
 * round after round with the source overwritten as each call returns,
 * and the pool's trace says pieces went through the parallel fill.
 */
static int parallel_fill_exact(void)
{
	const size_t n = 16 * 64 * KB + 13;
	struct staging_test x;
	int round;

	CHECK(!setenv("ACCEL_STAGING_THREADS", "3", 1));
	/* The source is x.page, the device's bytes come back into x.host. */
	CHECK_OK(staging_test_begin(&x, "64", "6", true, 4 * n, n));
	for (round = 0; round < 8; round++) {
		t_fill(x.page, n, (unsigned int)round + 50);
		CHECK_OK(accel_memcpy_async(x.s, x.dev + (round % 4) * n,
					    x.page, n, ACCEL_MEMCPY_H2D));
		memset(x.page, 0xee, n);
		if (round % 4 == 3) {
			CHECK_OK(accel_memcpy_async(x.s, x.host, x.dev, 4 * n,
						    ACCEL_MEMCPY_D2H));
			CHECK_OK(accel_stream_synchronize(x.s, 60 * T_SEC));
			for (int i = 0; i < 4; i++)
				CHECK(t_check_fill(x.host + i * n, n,
						   (unsigned int)(round - 3 + i) + 50));
		}
	}
	CHECK(staging_test_end(&x) == T_PASS);
	printf("# %llu pieces by the fill threads, %llu filled by the caller, %llu spilled\n",
	       x.t.par, x.t.filled, x.t.spills);
	CHECK(x.t.par >= 1);
	return T_PASS;
}

/*
 * A pageable copy whose pieces would not fit even an empty queue (4 KiB
 * chunks: 64 MiB is 16384 pieces of 4 descriptors) is -EINVAL, not an
 * -EAGAIN that no synchronize can end; nothing is queued, and the same
 * stream then takes a copy that fits.
 */
static int larger_than_any_queue(void)
{
	const size_t n = 64 * MB;
	unsigned char *src, *dev;
	accel_context *ctx;
	accel_stream_t s;
	int ret;

	CHECK_OK(accel_context_create(&ctx, 0));
	CHECK_OK(accel_stream_create(ctx, 0, 0, &s));
	CHECK_OK(accel_malloc(ctx, (void **)&dev, n));
	src = calloc(1, n);
	CHECK(src);
	/* The pool takes its settings at the context's first staged copy. */
	CHECK(!setenv("ACCEL_STAGING_CHUNK_KB", "4", 1));
	ret = accel_memcpy_async(s, dev, src, n, ACCEL_MEMCPY_H2D);
	unsetenv("ACCEL_STAGING_CHUNK_KB");
	CHECK_RET(ret, -EINVAL);
	CHECK(strstr(accel_last_error_string(), "more than a stream's queue"));
	CHECK_OK(accel_stream_query(s));
	CHECK_OK(accel_memcpy_async(s, dev, src, MB, ACCEL_MEMCPY_H2D));
	CHECK_OK(accel_stream_synchronize(s, 60 * T_SEC));
	accel_context_destroy(ctx);
	free(src);
	return T_PASS;
}

int main(void)
{
	static const struct t_case cases[] = {
		T(unreadable_source), T(large_unreadable_side),
		T(exact_across_boundaries), T(write_done_when_synchronized),
		T(order_kept), T(read_after_pageable_write),
		T(streams_stay_independent), T(parallel_fill_exact),
		T(larger_than_any_queue),
	};

	ps = sysconf(_SC_PAGESIZE);
	return staging_run(cases, sizeof(cases) / sizeof(cases[0]));
}
