// SPDX-License-Identifier: MIT
/*
 * The staging pool: pageable copies of any size and any queue length go
 * through a few pinned chunks per context, reused; the bytes are exact
 * across chunk and page boundaries, the order of the stream is kept, and
 * pinned memory does not grow with the queue.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "helpers.h"

#define KB	1024UL
#define MB	(1024UL * 1024UL)

static long ps;

/* Pinned and locked memory of this process, bytes (VmPin + VmLck). */
static long pinned_now(void)
{
	char line[256];
	long kb, sum = -1;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "VmPin: %ld kB", &kb) == 1 ||
		    sscanf(line, "VmLck: %ld kB", &kb) == 1)
			sum = (sum < 0 ? 0 : sum) + kb * 1024;
	}
	fclose(f);
	return sum;
}

/*
 * Whether mlock(2) shows in VmLck: the sanitizers intercept mlock and do
 * nothing, so over inproc under ASan or TSan nothing pinned can be seen
 * (nor a memlock limit hit). The module's pins show in VmPin regardless.
 */
static int pins_observable(void)
{
	const char *tp = getenv("ACCEL_TRANSPORT");
	long before, after;
	void *p;
	int ok;

	if (tp && !strcmp(tp, "kernel"))
		return 1;
	p = mmap(NULL, ps, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return 0;
	before = pinned_now();
	ok = !mlock(p, ps);
	after = pinned_now();
	munlock(p, ps);
	munmap(p, ps);
	return ok && after > before;
}

static long mem_available(void)
{
	long kb = t_read_long("/proc/meminfo", "MemAvailable: %ld kB");

	return kb < 0 ? -1 : kb * 1024;
}

static int staging_env(const char *chunk_kb, const char *chunks)
{
	if (setenv("ACCEL_STAGING_CHUNK_KB", chunk_kb, 1) ||
	    setenv("ACCEL_STAGING_CHUNKS", chunks, 1))
		return -1;
	return 0;
}

static void staging_env_reset(void)
{
	unsetenv("ACCEL_STAGING_CHUNK_KB");
	unsetenv("ACCEL_STAGING_CHUNKS");
}

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
	staging_env_reset();
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
	staging_env_reset();
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
	staging_env_reset();
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
	staging_env_reset();
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
	staging_env_reset();
	return ret;
}

/*
 * Bounded: pageable copies queued behind a gate pin no more than the pool
 * (4 chunks of 4 MiB and the ring of small copies, one chunk more),
 * however many; the queue's bytes wait in ordinary memory. Read from what
 * the process has pinned and locked (VmPin over the module, VmLck over
 * inproc).
 */
static int pinned_bounded_behind_gate(void)
{
	const size_t pool = (4 + 1) * 4 * MB;
	long avail = mem_available(), before, after, count = 4000;
	unsigned char *src, *out;
	accel_event_t gate;
	accel_stream_t s;
	unsigned char *dev;
	long i;

	if (!pins_observable()) {
		printf("# mlock does not show in VmLck here (a sanitizer)\n");
		return T_SKIP;
	}
	CHECK(!staging_env("4096", "4"));
	/* 4000 as asked where memory allows; the queue's bytes are real. */
	if (avail > 0 && count > avail / 4 / (long)MB)
		count = avail / 4 / (long)MB;
	CHECK(count >= 64);
	printf("# %ld queued 1 MiB copies\n", count);
	CHECK_OK(t_stream(&s));
	CHECK_OK(accel_malloc(NULL, (void **)&dev, MB));
	CHECK_OK(accel_host_alloc(NULL, (void **)&out, MB, 0));
	src = malloc(MB);
	CHECK(src);
	before = pinned_now();
	CHECK(before >= 0);
	CHECK_OK(t_gate(s, &gate));
	for (i = 0; i < count; i++) {
		*(long *)src = i;
		t_fill(src + sizeof(long), 64, (unsigned int)i);
		CHECK_OK(accel_memcpy_async(s, dev, src, MB, ACCEL_MEMCPY_H2D));
	}
	after = pinned_now();
	printf("# pinned before %ld, after queueing %ld bytes\n", before, after);
	CHECK(after - before <= (long)pool);
	CHECK_OK(t_gate_open(gate));
	CHECK_OK(accel_memcpy_async(s, out, dev, MB, ACCEL_MEMCPY_D2H));
	CHECK_OK(accel_stream_synchronize(s, 300 * T_SEC));
	CHECK(*(long *)out == count - 1);
	CHECK(t_check_fill(out + sizeof(long), 64, (unsigned int)(count - 1)));
	CHECK(pinned_now() - before <= (long)pool);
	free(src);
	staging_env_reset();
	return T_PASS;
}

/* The pool's ACCEL_TRACE line, caught when its context is destroyed. */
struct trace_catch {
	unsigned long long ring, ring_waits, ring_d2h, d2h_direct, filled,
			   par, handoffs, spills, chunk_waits;
	int seen;
};

static void catch_trace(void *data, int prio, const char *msg)
{
	struct trace_catch *t = data;

	(void)prio;
	if (sscanf(msg, "trace: staging: %llu copies through the ring (%llu waits for a slot), %llu D2H finished in the call through the ring, %llu through the chunks, %llu pieces filled by the caller in a chunk, %llu by the fill threads, %llu handed to a chunk's worker, %llu spilled to unpinned memory, %llu waits for a chunk",
		   &t->ring, &t->ring_waits, &t->ring_d2h, &t->d2h_direct,
		   &t->filled, &t->par, &t->handoffs, &t->spills,
		   &t->chunk_waits) == 9)
		t->seen++;
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
	struct trace_catch t;
	unsigned char *src, *dev, *out;
	accel_context *ctx;
	accel_event_t gate;
	accel_stream_t s;
	int i;

	memset(&t, 0, sizeof(t));
	CHECK(!staging_env("4096", "4"));
	CHECK(!setenv("ACCEL_TRACE", "1", 1));
	CHECK_OK(accel_context_create(&ctx, 0));
	accel_set_log_fn(catch_trace, &t);
	CHECK_OK(accel_stream_create(ctx, 0, 0, &s));
	CHECK_OK(accel_malloc(ctx, (void **)&dev, N * n));
	CHECK_OK(accel_host_alloc(ctx, (void **)&out, N * n, 0));
	src = malloc(n);
	CHECK(src);
	CHECK_OK(t_gate(s, &gate));
	for (i = 0; i < N; i++) {
		t_fill(src, n, (unsigned int)i + 7);
		CHECK_OK(accel_memcpy_async(s, dev + i * n, src, n,
					    ACCEL_MEMCPY_H2D));
		memset(src, 0xee, n);
	}
	CHECK_OK(accel_memcpy_async(s, out, dev, N * n, ACCEL_MEMCPY_D2H));
	CHECK_OK(t_gate_open(gate));
	CHECK_OK(accel_stream_synchronize(s, 60 * T_SEC));
	for (i = 0; i < N; i++)
		CHECK(t_check_fill(out + i * n, n, (unsigned int)i + 7));
	accel_event_destroy(gate);
	accel_context_destroy(ctx);
	accel_set_log_fn(NULL, NULL);
	unsetenv("ACCEL_TRACE");
	staging_env_reset();
	free(src);
	CHECK(t.seen == 1);
	printf("# %llu through the ring, %llu ring waits, %llu filled in a chunk, %llu handed to a worker, %llu spilled, %llu chunk waits\n",
	       t.ring, t.ring_waits, t.filled, t.handoffs, t.spills,
	       t.chunk_waits);
	CHECK(t.ring == N);
	CHECK(t.ring_waits == 0 && t.chunk_waits == 0);
	CHECK(t.handoffs == 0 && t.spills == 0 && t.filled == 0);
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
	staging_env_reset();
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
	unsigned char *src, *dev, *out;
	struct trace_catch t;
	accel_context *ctx;
	accel_stream_t s;
	int round;

	memset(&t, 0, sizeof(t));
	CHECK(!staging_env("64", "6"));
	CHECK(!setenv("ACCEL_STAGING_THREADS", "3", 1));
	CHECK(!setenv("ACCEL_TRACE", "1", 1));
	CHECK_OK(accel_context_create(&ctx, 0));
	accel_set_log_fn(catch_trace, &t);
	CHECK_OK(accel_stream_create(ctx, 0, 0, &s));
	CHECK_OK(accel_malloc(ctx, (void **)&dev, 4 * n));
	CHECK_OK(accel_host_alloc(ctx, (void **)&out, 4 * n, 0));
	src = malloc(n);
	CHECK(src);
	for (round = 0; round < 8; round++) {
		t_fill(src, n, (unsigned int)round + 50);
		CHECK_OK(accel_memcpy_async(s, dev + (round % 4) * n, src, n,
					    ACCEL_MEMCPY_H2D));
		memset(src, 0xee, n);
		if (round % 4 == 3) {
			CHECK_OK(accel_memcpy_async(s, out, dev, 4 * n,
						    ACCEL_MEMCPY_D2H));
			CHECK_OK(accel_stream_synchronize(s, 60 * T_SEC));
			for (int i = 0; i < 4; i++)
				CHECK(t_check_fill(out + i * n, n,
						   (unsigned int)(round - 3 + i) + 50));
		}
	}
	accel_context_destroy(ctx);
	accel_set_log_fn(NULL, NULL);
	unsetenv("ACCEL_TRACE");
	unsetenv("ACCEL_STAGING_THREADS");
	staging_env_reset();
	free(src);
	CHECK(t.seen == 1);
	printf("# %llu pieces by the fill threads, %llu filled by the caller, %llu spilled\n",
	       t.par, t.filled, t.spills);
	CHECK(t.par >= 1);
	return T_PASS;
}

struct d2h_seen {
	const unsigned char *dst;
	size_t n;
	unsigned int seed;
	int exact;
};

static void d2h_check_fn(void *arg)
{
	struct d2h_seen *c = arg;

	c->exact = t_check_fill(c->dst, c->n, c->seed);
}

/*
 * D2H into pageable memory in many pieces, several on the wire and being
 * copied out at once: when the stream passes the copy (a host function
 * queued right after it runs), every byte is in the destination, round
 * after round, with more pieces than chunks.
 */
static int d2h_pipelined_done_when_passed(void)
{
	const size_t n = 10 * 64 * KB + 5;
	unsigned char *host, *dev, *dst;
	struct d2h_seen c;
	accel_event_t gate;
	accel_stream_t s;
	int round;

	CHECK(!staging_env("64", "3"));
	CHECK(t_ctx());
	CHECK_OK(accel_stream_create(NULL, 0, 0, &s));
	CHECK_OK(accel_malloc(NULL, (void **)&dev, n));
	CHECK_OK(accel_host_alloc(NULL, (void **)&host, n, 0));
	dst = malloc(n);
	CHECK(dst);
	for (round = 0; round < 6; round++) {
		memset(dst, 0, n);
		t_fill(host, n, (unsigned int)round + 90);
		CHECK_OK(t_gate(s, &gate));
		CHECK_OK(accel_memcpy_async(s, dev, host, n, ACCEL_MEMCPY_H2D));
		CHECK_OK(accel_memcpy_async(s, dst, dev, n, ACCEL_MEMCPY_D2H));
		c.dst = dst;
		c.n = n;
		c.seed = (unsigned int)round + 90;
		c.exact = -1;
		CHECK_OK(accel_launch_host_func(s, d2h_check_fn, &c));
		CHECK(dst[0] == 0 && dst[n - 1] == 0);
		CHECK_OK(t_gate_open(gate));
		CHECK_OK(accel_stream_synchronize(s, 60 * T_SEC));
		CHECK(c.exact == 1);
		accel_event_destroy(gate);
	}
	free(dst);
	staging_env_reset();
	return T_PASS;
}

/*
 * A small D2H into pageable memory on a stream with nothing queued is
 * finished in the call: the destination holds the bytes when it returns,
 * no worker took part and nothing waits on the stream. Behind a gate the
 * same copy stays asynchronous: the call returns with the destination
 * untouched, which holds the bytes once the gate opened.
 */
static int small_d2h_idle_in_call(void)
{
	enum { N = 50 };
	const size_t n = 8 * KB + 3;
	unsigned char *host, *dev, *dst;
	struct trace_catch t;
	accel_context *ctx;
	accel_event_t gate;
	accel_stream_t s;
	int i;

	memset(&t, 0, sizeof(t));
	CHECK(!staging_env("256", "2"));
	CHECK(!setenv("ACCEL_TRACE", "1", 1));
	CHECK_OK(accel_context_create(&ctx, 0));
	accel_set_log_fn(catch_trace, &t);
	CHECK_OK(accel_stream_create(ctx, 0, 0, &s));
	CHECK_OK(accel_malloc(ctx, (void **)&dev, N * n));
	CHECK_OK(accel_host_alloc(ctx, (void **)&host, N * n, 0));
	dst = malloc(n);
	CHECK(dst);
	t_fill(host, N * n, 11);
	CHECK_OK(accel_memcpy_async(s, dev, host, N * n, ACCEL_MEMCPY_H2D));
	CHECK_OK(accel_stream_synchronize(s, 60 * T_SEC));
	for (i = 0; i < N; i++) {
		memset(dst, 0, n);
		CHECK_OK(accel_memcpy_async(s, dst, dev + i * n, n,
					    ACCEL_MEMCPY_D2H));
		/* No synchronize: the call finished the copy. */
		CHECK(!memcmp(dst, host + i * n, n));
	}
	/* Behind other work: queued, not waited for. */
	memset(dst, 0, n);
	CHECK_OK(t_gate(s, &gate));
	CHECK_OK(accel_memcpy_async(s, dst, dev, n, ACCEL_MEMCPY_D2H));
	CHECK(dst[0] == 0 && dst[n - 1] == 0);
	CHECK_OK(t_gate_open(gate));
	CHECK_OK(accel_stream_synchronize(s, 60 * T_SEC));
	CHECK(!memcmp(dst, host, n));
	accel_event_destroy(gate);
	accel_context_destroy(ctx);
	accel_set_log_fn(NULL, NULL);
	unsetenv("ACCEL_TRACE");
	staging_env_reset();
	free(dst);
	CHECK(t.seen == 1);
	printf("# %llu D2H finished in the call, %llu handed to a worker\n",
	       t.ring_d2h, t.handoffs);
	CHECK(t.ring_d2h == N);
	CHECK(t.handoffs == 1);
	return T_PASS;
}

/*
 * A D2H into pageable memory of many chunks, on a stream with nothing
 * queued, is finished in the call too: more pieces than the pool has
 * chunks, each chunk copied out and reused while later pieces are on the
 * wire; the destination holds every byte when the call returns and no
 * worker took part. The same copy behind a gate stays asynchronous.
 */
static int large_d2h_idle_in_call(void)
{
	const size_t n = 10 * 64 * KB + 5;
	unsigned char *host, *dev, *dst;
	struct trace_catch t;
	accel_context *ctx;
	accel_event_t gate;
	accel_stream_t s;
	int round;

	memset(&t, 0, sizeof(t));
	CHECK(!staging_env("64", "3"));
	CHECK(!setenv("ACCEL_TRACE", "1", 1));
	CHECK_OK(accel_context_create(&ctx, 0));
	accel_set_log_fn(catch_trace, &t);
	CHECK_OK(accel_stream_create(ctx, 0, 0, &s));
	CHECK_OK(accel_malloc(ctx, (void **)&dev, n));
	CHECK_OK(accel_host_alloc(ctx, (void **)&host, n, 0));
	dst = malloc(n);
	CHECK(dst);
	for (round = 0; round < 3; round++) {
		t_fill(host, n, (unsigned int)round + 30);
		CHECK_OK(accel_memcpy_async(s, dev, host, n, ACCEL_MEMCPY_H2D));
		CHECK_OK(accel_stream_synchronize(s, 60 * T_SEC));
		memset(dst, 0, n);
		CHECK_OK(accel_memcpy_async(s, dst, dev, n, ACCEL_MEMCPY_D2H));
		/* No synchronize: the call finished the copy. */
		CHECK(t_check_fill(dst, n, (unsigned int)round + 30));
	}
	memset(dst, 0, n);
	CHECK_OK(t_gate(s, &gate));
	CHECK_OK(accel_memcpy_async(s, dst, dev, n, ACCEL_MEMCPY_D2H));
	CHECK(dst[0] == 0 && dst[n - 1] == 0);
	CHECK_OK(t_gate_open(gate));
	CHECK_OK(accel_stream_synchronize(s, 60 * T_SEC));
	CHECK(t_check_fill(dst, n, 32));
	accel_event_destroy(gate);
	accel_context_destroy(ctx);
	accel_set_log_fn(NULL, NULL);
	unsetenv("ACCEL_TRACE");
	staging_env_reset();
	free(dst);
	CHECK(t.seen == 1);
	printf("# %llu D2H finished in the call through the chunks, %llu pieces handed to a worker\n",
	       t.d2h_direct, t.handoffs);
	CHECK(t.d2h_direct == 3);
	/* The gated copy: its pieces, each to a chunk's worker. */
	CHECK(t.handoffs == 11);
	return T_PASS;
}

/* The other stream of d2h_in_call_beside_chunks(): pieces through the chunks. */
struct beside {
	accel_context *ctx;
	int rounds, ok;
};

static void *beside_thread(void *arg)
{
	const size_t n = 5 * 64 * KB + 7;
	struct beside *b = arg;
	unsigned char *src, *dst, *dev;
	accel_stream_t s;
	int r;

	b->ok = 0;
	src = malloc(n);
	dst = malloc(n);
	if (!src || !dst || accel_malloc(b->ctx, (void **)&dev, n))
		return NULL;
	for (r = 0; r < b->rounds; r++) {
		/* A new stream: no chunk was its own yet. */
		if (accel_stream_create(b->ctx, 0, 0, &s))
			return NULL;
		t_fill(src, n, (unsigned int)r + 200);
		/* The D2H is behind the H2D: asynchronous, a worker's. */
		if (accel_memcpy_async(s, dev, src, n, ACCEL_MEMCPY_H2D) ||
		    accel_memcpy_async(s, dst, dev, n, ACCEL_MEMCPY_D2H) ||
		    accel_stream_synchronize(s, 60 * T_SEC) ||
		    !t_check_fill(dst, n, (unsigned int)r + 200) ||
		    accel_stream_destroy(s))
			return NULL;
	}
	free(src);
	free(dst);
	b->ok = 1;
	return NULL;
}

/*
 * A D2H finishing in its call holds its chunks with the pool lock
 * dropped: another stream's pieces, queued meanwhile on a busy pool of
 * two chunks, never go to those chunks (their workers would write into a
 * chunk the call is copying out). Both streams' bytes stay exact,
 * whichever path each copy took.
 */
static int d2h_in_call_beside_chunks(void)
{
	const size_t n = 6 * 64 * KB + 1;
	unsigned char *host, *dev, *dst;
	struct beside b;
	accel_context *ctx;
	accel_stream_t s;
	pthread_t th;
	int r;

	CHECK(!staging_env("64", "2"));
	CHECK_OK(accel_context_create(&ctx, 0));
	CHECK_OK(accel_stream_create(ctx, 0, 0, &s));
	CHECK_OK(accel_malloc(ctx, (void **)&dev, n));
	CHECK_OK(accel_host_alloc(ctx, (void **)&host, n, 0));
	dst = malloc(n);
	CHECK(dst);
	t_fill(host, n, 61);
	CHECK_OK(accel_memcpy_async(s, dev, host, n, ACCEL_MEMCPY_H2D));
	CHECK_OK(accel_stream_synchronize(s, 60 * T_SEC));
	b.ctx = ctx;
	b.rounds = 40;
	CHECK(!pthread_create(&th, NULL, beside_thread, &b));
	for (r = 0; r < 40; r++) {
		memset(dst, 0, n);
		/* In the call, or through a worker when no chunk was free. */
		CHECK_OK(accel_memcpy_async(s, dst, dev, n, ACCEL_MEMCPY_D2H));
		CHECK_OK(accel_stream_synchronize(s, 60 * T_SEC));
		CHECK(t_check_fill(dst, n, 61));
	}
	CHECK(!pthread_join(th, NULL));
	CHECK(b.ok);
	accel_context_destroy(ctx);
	staging_env_reset();
	free(dst);
	return T_PASS;
}

/* What hostfn_d2h() did, from inside a host function. */
struct hostfn_d2h_arg {
	accel_stream_t s;
	void *dst, *dev;
	size_t n;
	int ret;
};

static void hostfn_d2h_fn(void *data)
{
	struct hostfn_d2h_arg *a = data;

	a->ret = accel_memcpy_async(a->s, a->dst, a->dev, a->n,
				    ACCEL_MEMCPY_D2H);
}

/*
 * A host function may queue a D2H into pageable memory on an idle
 * stream: it is not finished in the call there (that would wait for the
 * device from the thread that runs the queue), it is queued, and lands.
 */
static int hostfn_d2h(void)
{
	const size_t sizes[2] = { 8 * KB + 1, 6 * 64 * KB + 1 };
	struct hostfn_d2h_arg a;
	unsigned char *host, *dev, *dst;
	accel_stream_t s1, s2;
	int k;

	CHECK(!staging_env("64", "3"));
	CHECK(t_ctx());
	CHECK_OK(accel_stream_create(NULL, 0, 0, &s1));
	CHECK_OK(accel_stream_create(NULL, 0, 0, &s2));
	CHECK_OK(accel_malloc(NULL, (void **)&dev, sizes[1]));
	CHECK_OK(accel_host_alloc(NULL, (void **)&host, sizes[1], 0));
	dst = malloc(sizes[1]);
	CHECK(dst);
	t_fill(host, sizes[1], 19);
	CHECK_OK(accel_memcpy_async(s2, dev, host, sizes[1],
				    ACCEL_MEMCPY_H2D));
	CHECK_OK(accel_stream_synchronize(s2, 60 * T_SEC));
	for (k = 0; k < 2; k++) {
		memset(dst, 0, sizes[1]);
		a.s = s2;
		a.dst = dst;
		a.dev = dev;
		a.n = sizes[k];
		a.ret = 1;
		CHECK_OK(accel_launch_host_func(s1, hostfn_d2h_fn, &a));
		CHECK_OK(accel_stream_synchronize(s1, 60 * T_SEC));
		CHECK_OK(a.ret);
		CHECK_OK(accel_stream_synchronize(s2, 60 * T_SEC));
		CHECK(t_check_fill(dst, sizes[k], 19));
	}
	free(dst);
	staging_env_reset();
	return T_PASS;
}

/*
 * A parallel H2D that pinned chunks for its pieces pins as many again
 * before it returns (for the next call to fill while its pieces are on
 * the wire), within ACCEL_STAGING_CHUNKS: 64 KiB chunks, 3 copying
 * threads, a copy of three chunks pins 6 chunks, the pool's most, and the
 * next calls pin nothing.
 */
static int pool_grows_ahead(void)
{
	const size_t chunk = 64 * KB, n = 3 * chunk;
	unsigned char *src, *dev, *out;
	long base, after;
	accel_stream_t s;
	int round;

	if (!pins_observable()) {
		printf("# mlock does not show in VmLck here (a sanitizer)\n");
		return T_SKIP;
	}
	CHECK(!staging_env("64", "6"));
	CHECK(!setenv("ACCEL_STAGING_THREADS", "3", 1));
	CHECK(t_ctx());
	CHECK_OK(accel_stream_create(NULL, 0, 0, &s));
	CHECK_OK(accel_malloc(NULL, (void **)&dev, n));
	CHECK_OK(accel_host_alloc(NULL, (void **)&out, n, 0));
	src = malloc(n);
	CHECK(src);
	base = pinned_now();
	t_fill(src, n, 3);
	CHECK_OK(accel_memcpy_async(s, dev, src, n, ACCEL_MEMCPY_H2D));
	after = pinned_now();
	printf("# pinned %ld bytes by the first copy\n", after - base);
	CHECK(after - base == (long)(6 * chunk));
	for (round = 0; round < 4; round++) {
		t_fill(src, n, (unsigned int)round + 4);
		CHECK_OK(accel_memcpy_async(s, dev, src, n, ACCEL_MEMCPY_H2D));
		memset(src, 0xee, n);
	}
	CHECK(pinned_now() == after);
	CHECK_OK(accel_memcpy_async(s, out, dev, n, ACCEL_MEMCPY_D2H));
	CHECK_OK(accel_stream_synchronize(s, 60 * T_SEC));
	CHECK(t_check_fill(out, n, 7));
	unsetenv("ACCEL_STAGING_THREADS");
	staging_env_reset();
	free(src);
	return T_PASS;
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
	accel_event_t gate;
	accel_stream_t s;
	int i;

	/* A 64 KiB ring: 16 slots of 4 KiB. */
	CHECK(!staging_env("64", "2"));
	CHECK(t_ctx());
	CHECK_OK(accel_stream_create(NULL, 0, 0, &s));
	CHECK_OK(accel_malloc(NULL, (void **)&dev, N * n));
	CHECK_OK(accel_host_alloc(NULL, (void **)&out, N * n, 0));
	src = malloc(n);
	CHECK(src);
	CHECK_OK(t_gate(s, &gate));
	for (i = 0; i < N; i++) {
		t_fill(src, n, (unsigned int)i + 300);
		CHECK_OK(accel_memcpy_async(s, dev + i * n, src, n,
					    ACCEL_MEMCPY_H2D));
		memset(src, 0xee, n);
	}
	CHECK_OK(accel_memcpy_async(s, out, dev, N * n, ACCEL_MEMCPY_D2H));
	CHECK_OK(t_gate_open(gate));
	CHECK_OK(accel_stream_synchronize(s, 60 * T_SEC));
	for (i = 0; i < N; i++)
		if (!t_check_fill(out + i * n, n, (unsigned int)i + 300)) {
			printf("# copy %d: its slot was reused before it ran\n", i);
			return T_FAIL;
		}
	accel_event_destroy(gate);
	free(src);
	staging_env_reset();
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
	staging_env_reset();
	return T_PASS;
}

/* Reuse: round after round of large pageable copies pins nothing more. */
static int pool_reused(void)
{
	const size_t n = 5 * 64 * KB + 3;
	unsigned char *src, *dst, *dev;
	long base, first = -1, now;
	accel_stream_t s;
	int round, ret = T_FAIL;

	if (!pins_observable()) {
		printf("# mlock does not show in VmLck here (a sanitizer)\n");
		return T_SKIP;
	}
	if (staging_env("64", "2"))
		return T_FAIL;
	src = malloc(n);
	dst = malloc(n);
	if (!src || !dst || !t_ctx() || accel_stream_create(NULL, 0, 0, &s) ||
	    accel_malloc(NULL, (void **)&dev, n))
		goto out;
	base = pinned_now();
	for (round = 0; round < 6; round++) {
		t_fill(src, n, (unsigned int)round);
		if (accel_memcpy_async(s, dev, src, n, ACCEL_MEMCPY_H2D) ||
		    accel_memcpy_async(s, dst, dev, n, ACCEL_MEMCPY_D2H) ||
		    accel_stream_synchronize(s, 60 * T_SEC))
			goto out;
		if (!t_check_fill(dst, n, (unsigned int)round))
			goto out;
		now = pinned_now();
		/* Pinned once, kept: the chunks outlive the copies. */
		if (first < 0 && now <= base) {
			printf("# nothing kept pinned after the first round\n");
			goto out;
		}
		if (first < 0)
			first = now;
		if (now != first) {
			printf("# round %d: pinned %ld, after the first %ld\n",
			       round, now, first);
			goto out;
		}
	}
	ret = T_PASS;
out:
	free(src);
	free(dst);
	staging_env_reset();
	return ret;
}

/*
 * The cuda backend registers each chunk with CUDA once (the stand-in
 * libcudart counts): not once per copy, and not never (the bounce buffers
 * before the pool were never registered).
 */
static int chunks_cuda_registered_once(void)
{
	long (*regs)(long *) = NULL;
	const char *lib = getenv("ACCEL_CUDART");
	const size_t n = 5 * 64 * KB;
	unsigned char *src, *dev;
	long r0, r1, r2;
	accel_stream_t s;
	void *h;
	int i;

	h = lib ? dlopen(lib, RTLD_NOW | RTLD_NOLOAD) : NULL;
	if (h)
		regs = (long (*)(long *))dlsym(h, "fake_cuda_host_registrations");
	if (!regs) {
		printf("# not over the stand-in libcudart\n");
		return T_SKIP;
	}
	CHECK(!staging_env("64", "3"));
	const char *backend = "";

	CHECK(t_ctx());
	CHECK_OK(accel_context_get_backend(NULL, &backend));
	if (strcmp(backend, "cuda")) {
		staging_env_reset();
		return T_SKIP;
	}
	CHECK_OK(accel_stream_create(NULL, 0, 0, &s));
	CHECK_OK(accel_malloc(NULL, (void **)&dev, n));
	src = malloc(n);
	CHECK(src);
	r0 = regs(NULL);
	for (i = 0; i < 3; i++)
		CHECK_OK(accel_memcpy_async(s, dev, src, n, ACCEL_MEMCPY_H2D));
	CHECK_OK(accel_stream_synchronize(s, 60 * T_SEC));
	r1 = regs(NULL);
	for (i = 0; i < 5; i++)
		CHECK_OK(accel_memcpy_async(s, dev, src, n, ACCEL_MEMCPY_H2D));
	CHECK_OK(accel_stream_synchronize(s, 60 * T_SEC));
	r2 = regs(NULL);
	printf("# cudaHostRegister calls: %ld, then %ld, for 40 pieces\n",
	       r1 - r0, r2 - r1);
	/* Chunks are pinned lazily, at most 3 of them, each once. */
	CHECK(r1 - r0 >= 1);
	CHECK(r2 - r0 <= 3);
	free(src);
	staging_env_reset();
	return T_PASS;
}

/*
 * As an unprivileged user with RLIMIT_MEMLOCK at Debian's default of
 * 8192 KiB, a 16 MiB pageable round trip succeeds; with no memlock
 * allowance at all, the error names the limit, its value and the fix.
 */
static int child_memlock(void)
{
	const size_t n = 16 * MB + 3;
	unsigned char *src, *dst, *dev;
	struct rlimit rl = { 8192 * KB, 8192 * KB };
	accel_context *ctx, *ctx2;
	accel_stream_t s;
	int ret;

	/*
	 * CUDA does not survive fork (earlier tests initialised it in the
	 * parent): the limits are the transport's, tested over the cpu
	 * backend. The contexts first: the device node may be root's only.
	 * Pins are charged when made, against the caller's limit and
	 * capabilities.
	 */
	if (setenv("ACCEL_BACKEND", "cpu", 1))
		return 9;
	if (accel_context_create(&ctx, 0) || accel_context_create(&ctx2, 0))
		return 10;
	if (setrlimit(RLIMIT_MEMLOCK, &rl))
		return 11;
	if (!geteuid() && (setgid(65534) || setuid(65534)))
		return 12;
	if (accel_stream_create(ctx, 0, 0, &s) ||
	    accel_malloc(ctx, (void **)&dev, n))
		return 13;
	src = malloc(n);
	dst = malloc(n);
	if (!src || !dst)
		return 14;
	t_fill(src, n, 77);
	ret = accel_memcpy_async(s, dev, src, n, ACCEL_MEMCPY_H2D);
	if (ret) {
		printf("# 16 MiB H2D: %s: %s\n", accel_strerror(ret),
		       accel_last_error_string());
		return 15;
	}
	free(src);
	if (accel_memcpy_async(s, dst, dev, n, ACCEL_MEMCPY_D2H) ||
	    accel_stream_synchronize(s, 120 * T_SEC))
		return 16;
	if (!t_check_fill(dst, n, 77))
		return 17;
	accel_context_destroy(ctx);

	/* No allowance: the other context cannot pin even a page. */
	if (!pins_observable())
		return 0;
	rl.rlim_cur = 0;
	if (setrlimit(RLIMIT_MEMLOCK, &rl))
		return 18;
	ctx = ctx2;
	if (accel_stream_create(ctx, 0, 0, &s) ||
	    accel_malloc(ctx, (void **)&dev, 64))
		return 19;
	ret = accel_memcpy_async(s, dev, dst, 64, ACCEL_MEMCPY_H2D);
	if (ret != -ENOMEM) {
		printf("# with RLIMIT_MEMLOCK 0: %s\n", accel_strerror(ret));
		return 20;
	}
	printf("# %s\n", accel_last_error_string());
	if (!strstr(accel_last_error_string(), "RLIMIT_MEMLOCK is 0 KiB") ||
	    !strstr(accel_last_error_string(), "ulimit -l"))
		return 21;
	accel_context_destroy(ctx);
	return 0;
}

static int memlock_unprivileged(void)
{
	int st;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	CHECK(pid >= 0);
	if (!pid)
		_exit(child_memlock());
	CHECK(waitpid(pid, &st, 0) == pid);
	if (!WIFEXITED(st) || WEXITSTATUS(st)) {
		printf("# child: %s %d\n", WIFEXITED(st) ? "exit" : "signal",
		       WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
		return T_FAIL;
	}
	return T_PASS;
}

/* debugfs's total of pinned bytes over every context, or -1. */
static long module_pinned(void)
{
	return t_read_long("/sys/kernel/debug/accelstream/summary",
			   "pinned_bytes %ld");
}

/*
 * SIGKILL while pieces wait in the pool and on the wire: once the process
 * is gone, the module holds no pin of it.
 */
static int sigkill_mid_pipeline(void)
{
	const char *tp = getenv("ACCEL_TRANSPORT");
	int fds[2], st;
	long base;
	char c;
	pid_t pid;

	if (!tp || strcmp(tp, "kernel")) {
		printf("# over the module only (inproc pins die with the process)\n");
		return T_SKIP;
	}
	base = module_pinned();
	if (base < 0) {
		printf("# no /sys/kernel/debug/accelstream/summary\n");
		return T_SKIP;
	}
	CHECK(!pipe(fds));
	fflush(stdout);
	pid = fork();
	CHECK(pid >= 0);
	if (!pid) {
		accel_stream_t s;
		accel_event_t gate;
		unsigned char *src = malloc(8 * MB), *dev;
		int i;

		close(fds[0]);
		if (!src || !t_ctx() || accel_stream_create(NULL, 0, 0, &s) ||
		    accel_malloc(NULL, (void **)&dev, 8 * MB) ||
		    accel_memcpy_async(s, dev, src, 8 * MB, ACCEL_MEMCPY_H2D) ||
		    t_gate(s, &gate))
			_exit(1);
		for (i = 0; i < 16; i++)
			if (accel_memcpy_async(s, dev, src, 8 * MB,
					       ACCEL_MEMCPY_H2D))
				_exit(2);
		(void)!write(fds[1], "x", 1);
		pause();
		_exit(0);
	}
	close(fds[1]);
	CHECK(read(fds[0], &c, 1) == 1);
	CHECK(module_pinned() > base);
	kill(pid, SIGKILL);
	CHECK(waitpid(pid, &st, 0) == pid);
	close(fds[0]);
	CHECK(WIFSIGNALED(st));
	CHECK(module_pinned() == base);
	return T_PASS;
}

int main(void)
{
	static const struct t_case cases[] = {
		T(unreadable_source), T(large_unreadable_side),
		T(exact_across_boundaries),
		T(write_done_when_synchronized),
		T(order_kept), T(read_after_pageable_write),
		T(streams_stay_independent),
		T(pinned_bounded_behind_gate), T(small_burst_no_waits),
		T(ring_wraps_in_order), T(ring_full_behind_gate),
		T(ring_stream_destroyed),
		T(parallel_fill_exact), T(d2h_pipelined_done_when_passed),
		T(small_d2h_idle_in_call), T(large_d2h_idle_in_call),
		T(d2h_in_call_beside_chunks), T(hostfn_d2h),
		T(pool_grows_ahead),
		T(pool_reused),
		T(chunks_cuda_registered_once), T(memlock_unprivileged),
		T(sigkill_mid_pipeline),
	};

	ps = sysconf(_SC_PAGESIZE);
	/* Children open their own contexts (a CUDA backend does not fork). */
	t_no_probe = 1;
	return t_run(cases, sizeof(cases) / sizeof(cases[0]));
}
