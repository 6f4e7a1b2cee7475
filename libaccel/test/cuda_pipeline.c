// SPDX-License-Identifier: MIT
/*
 * The CUDA executor's pipeline, over the stand-in libcudart (its hooks
 * make it deterministic, nothing is timed): a burst that accumulates
 * while a copy is being issued goes down as one cudaMemcpyBatchAsync, an
 * isolated copy goes down alone and at once, order and data hold within
 * a burst, a wait issues what of a burst the issuer has not taken yet
 * itself, an error in the middle of a batch fails its own stream only
 * (the copies before it landed, those after it did not run), and
 * completions are seen through the host word (cuStreamWriteValue32, the
 * default), not by querying events, and the hybrid wait, over the
 * stand-in's modelled device time (host words written when the copies
 * before them end), neither returns early nor spins nor oversleeps.
 * Skips, with the reason, without the stand-in (on a GPU: its hooks are
 * not there).
 *
 * "Device" memory of the stand-in is host memory: the tests read it
 * directly.
 */
#include <sched.h>
#include <stdbool.h>
#include <sys/resource.h>

#include "helpers.h"

static long (*f_count)(const char *name);
static long (*f_tcount)(const char *name);
static void (*f_hold)(int on);
static long (*f_held)(void);
static void (*f_fail_dst)(void *p);
static void (*f_rate)(long ps);
static int (*f_busy)(void);
static long (*f_late)(void);
static long (*f_busy_ns)(void);

/* The stand-in's hooks, once libaccel loaded it; 0, or T_SKIP. */
static int fake_hooks(void)
{
	f_count = (long (*)(const char *))t_fake_hook("fake_cuda_count", 0);
	f_tcount = (long (*)(const char *))t_fake_hook("fake_cuda_thread_count",
						       0);
	f_hold = (void (*)(int))t_fake_hook("fake_cuda_hold", 0);
	f_held = (long (*)(void))t_fake_hook("fake_cuda_held", 0);
	f_fail_dst = (void (*)(void *))t_fake_hook("fake_cuda_fail_dst", 0);
	f_rate = (void (*)(long))t_fake_hook("fake_cuda_rate", 0);
	f_busy = (int (*)(void))t_fake_hook("fake_cuda_busy", 0);
	f_late = (long (*)(void))t_fake_hook("fake_cuda_late_writes", 0);
	f_busy_ns = (long (*)(void))t_fake_hook("fake_cuda_busy_ns", 0);
	if (!f_count || !f_tcount || !f_hold || !f_held || !f_fail_dst || !f_rate ||
	    !f_busy || !f_late || !f_busy_ns) {
		printf("# needs the stand-in libcudart (ACCEL_CUDART=.../libfakecudart.so) and its hooks\n");
		return T_SKIP;
	}
	return 0;
}

static bool env_is(const char *name, const char *v)
{
	const char *e = getenv(name);

	return e && !strcmp(e, v);
}

/*
 * t_ctx(), made with @name=@value unless the caller's environment sets
 * @name: the caller's choice holds, here and for the tests after this one.
 */
static accel_context *ctx_env_default(const char *name, const char *value)
{
	bool ours = !getenv(name);
	accel_context *ctx;

	if (ours)
		setenv(name, value, 1);
	ctx = t_ctx();
	if (ours)
		unsetenv(name);
	return ctx;
}

/*
 * How many times the calling thread went to sleep (its voluntary context
 * switches): a count of sleeps, not a time.
 */
static long thread_sleeps(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_THREAD, &ru))
		return -1;
	return ru.ru_nvcsw;
}

/* No batch call (absent, refused, or switched off): copies one by one. */
static bool no_batch(void)
{
	return env_is("FAKE_CUDA_BATCH", "0") || env_is("ACCEL_CUDA_NO_BATCH", "1");
}

/* Until the issuer blocks inside the held copy call (no timing). */
static int wait_held(long n)
{
	unsigned long i;

	for (i = 0; i < 100000000UL; i++) {
		if (f_held() >= n)
			return 1;
		sched_yield();
	}
	return 0;
}

/*
 * On the current context, over the stand-in (T_SKIP without its hooks):
 * a stream, @n bytes of pinned host memory *@h and @n of device memory
 * *@d. T_PASS, T_SKIP or T_FAIL.
 */
static int fake_copy_setup(size_t n, accel_stream_t *s, unsigned char **h,
			   void **d)
{
	if (fake_hooks())
		return T_SKIP;
	CHECK_OK(accel_stream_create(NULL, 0, 0, s));
	*h = t_host_buf(n);
	CHECK(*h);
	CHECK_OK(accel_malloc(NULL, d, n));
	return T_PASS;
}

/*
 * A stream on a context whose issuer, once woken, stays hot until a wait
 * begins and whose completion thread leaves pending work alone for 10 s
 * (so that a copy stays pending, and the next one is a burst's, however
 * slowly this thread runs). T_SKIP with ACCEL_CUDA_ISSUER=0 (every copy
 * is then issued by the thread that submits it, so a held copy call would
 * hold the test) or without the stand-in's hooks.
 */
static int hot_stream(accel_stream_t *s)
{
	accel_context *ctx;

	if (env_is("ACCEL_CUDA_ISSUER", "0")) {
		printf("# ACCEL_CUDA_ISSUER=0: no issuer thread to hand bursts to\n");
		return T_SKIP;
	}
	setenv("ACCEL_CUDA_ISSUE_SPIN_US", "100000000", 1);
	setenv("ACCEL_CUDA_LAZY_US", "10000000", 1);
	ctx = t_ctx();
	unsetenv("ACCEL_CUDA_LAZY_US");
	CHECK(ctx);
	if (fake_hooks())
		return T_SKIP;
	CHECK_OK(accel_stream_create(NULL, 0, 0, s));
	return T_PASS;
}

/*
 * The two copies that follow a wait are issued inline; the third, with
 * them still pending and no wait between, is a burst's: handed to the
 * issuer, which blocks in the held copy call. Copies 64 bytes each from
 * @h to @d, @h + 64 to @d + 64, @h + 128 to @d + 128. Returns 1 once the
 * issuer blocks.
 */
static int start_burst(accel_stream_t s, void *d, const void *h)
{
	long copies = f_tcount("cudaMemcpyAsync");
	unsigned int i;

	for (i = 0; i < 3; i++) {
		if (i == 2) {
			/* The first two went down from this thread. */
			if (f_tcount("cudaMemcpyAsync") != copies + 2)
				return 0;
			f_hold(1);
		}
		if (accel_memcpy_async(s, (char *)d + 64 * i,
				       (const char *)h + 64 * i, 64,
				       ACCEL_MEMCPY_H2D))
			return 0;
	}
	return wait_held(1);
}

/*
 * The first copy of a context finds the issuer cold: it is issued from
 * the submitting thread, before accel_memcpy_async returns, alone.
 */
static int isolated_copy_issued_at_once(void)
{
	unsigned char *h;
	accel_stream_t s;
	long copies, batches;
	int ret;
	void *d;

	unsetenv("ACCEL_CUDA_ISSUE_SPIN_US");
	CHECK(t_ctx());
	ret = fake_copy_setup(64, &s, &h, &d);
	if (ret != T_PASS)
		return ret;
	t_fill(h, 64, 1);
	copies = f_count("cudaMemcpyAsync");
	batches = f_count("cudaMemcpyBatchAsync");
	CHECK_OK(accel_memcpy_async(s, d, h, 64, ACCEL_MEMCPY_H2D));
	CHECK(f_count("cudaMemcpyAsync") == copies + 1);
	CHECK_OK(accel_stream_synchronize(s, 60 * T_SEC));
	CHECK(f_count("cudaMemcpyBatchAsync") == batches);
	CHECK(t_check_fill(d, 64, 1));
	return T_PASS;
}

/* The stand-in's calls @name made so far: by anyone, by this thread. */
struct calls {
	long all, mine;
};

static struct calls calls(const char *name)
{
	struct calls c = { f_count(name), f_tcount(name) };

	return c;
}

/* Made since @c, all of them by this thread? How many. */
static long calls_mine(const char *name, struct calls c, bool *all_mine)
{
	long all = f_count(name) - c.all, mine = f_tcount(name) - c.mine;

	if (all != mine)
		*all_mine = false;
	return all;
}

/*
 * Round trips (one copy, then a synchronize), 200 of them: the thread
 * that waits finds each completion itself. Every CUDA call of a round
 * trip is made by this thread (the copy by the submit, the completion
 * marker and its queries by the wait: no hand-off to the issuer or the
 * completion thread, whose window of lazy_ns is made long enough here
 * that a slow machine cannot open it), and there are no more of them than
 * raw CUDA makes: one cudaMemcpyAsync and one marker (cudaEventRecord,
 * or cuStreamWriteValue32 with host words) per trip, no batch call and no
 * blocking wait.
 */
static int round_trip_no_hand_off(void)
{
	const unsigned int trips = 200;
	struct calls cp, rec, wr, q, sy, bt;
	bool mine = true;
	long markers;
	unsigned char *h;
	accel_stream_t s;
	unsigned int i;
	int ret;
	void *d;

	unsetenv("ACCEL_CUDA_ISSUE_SPIN_US");
	setenv("ACCEL_CUDA_LAZY_US", "10000000", 1);
	CHECK(t_ctx());
	unsetenv("ACCEL_CUDA_LAZY_US");
	ret = fake_copy_setup(64, &s, &h, &d);
	if (ret != T_PASS)
		return ret;
	/* The stream's first copy creates its CUDA stream: not counted. */
	CHECK_OK(accel_memcpy_async(s, d, h, 64, ACCEL_MEMCPY_H2D));
	CHECK_OK(accel_stream_synchronize(s, 60 * T_SEC));
	cp = calls("cudaMemcpyAsync");
	bt = calls("cudaMemcpyBatchAsync");
	rec = calls("cudaEventRecord");
	wr = calls("cuStreamWriteValue32");
	q = calls("cudaEventQuery");
	sy = calls("cudaEventSynchronize");
	for (i = 0; i < trips; i++) {
		t_fill(h, 64, i);
		CHECK_OK(accel_memcpy_async(s, d, h, 64, ACCEL_MEMCPY_H2D));
		CHECK_OK(accel_stream_synchronize(s, 60 * T_SEC));
		CHECK(t_check_fill(d, 64, i));
	}
	CHECK(calls_mine("cudaMemcpyAsync", cp, &mine) == trips);
	markers = calls_mine("cudaEventRecord", rec, &mine) +
		  calls_mine("cuStreamWriteValue32", wr, &mine);
	printf("# %u round trips: %ld markers, %ld event queries, all by this thread: %s\n",
	       trips, markers, calls_mine("cudaEventQuery", q, &mine),
	       mine ? "yes" : "no");
	CHECK(markers == trips);
	CHECK(calls_mine("cudaMemcpyBatchAsync", bt, &mine) == 0);
	CHECK(calls_mine("cudaEventSynchronize", sy, &mine) == 0);
	CHECK(mine);
	return T_PASS;
}

/*
 * One thread: a copy is being issued (held inside cudaMemcpyAsync) while
 * the same thread submits 16 more; each returns at once, and the 16 go
 * down as one batch of 16 once the first issue ends. Then a copy alone
 * goes down alone, without waiting for company.
 */
static int burst_batched_while_issuing(void)
{
	int ret;
	const unsigned int k = 16;
	unsigned char *h;
	accel_stream_t s;
	long copies, batches, items;
	unsigned int i;
	char *d;

	ret = hot_stream(&s);
	if (ret != T_PASS)
		return ret;
	h = t_host_buf(128 * (k + 2));
	CHECK(h);
	CHECK_OK(accel_malloc(NULL, (void **)&d, 128 * (k + 2)));
	t_fill(h, 128 * (k + 2), 2);
	/* Warm: this one goes down inline. */
	CHECK_OK(accel_memcpy_async(s, d, h, 64, ACCEL_MEMCPY_H2D));
	CHECK_OK(accel_stream_synchronize(s, 60 * T_SEC));

	/* The issuer is inside the copy call; this thread is not. */
	CHECK(start_burst(s, d, h));
	copies = f_count("cudaMemcpyAsync");
	batches = f_count("cudaMemcpyBatchAsync");
	items = f_count("batch_items");
	/* 64 bytes every 128: independent, not contiguous (no merging). */
	for (i = 0; i < k; i++)
		CHECK_OK(accel_memcpy_async(s, d + 128 * (i + 2),
					    h + 128 * (i + 2), 64,
					    ACCEL_MEMCPY_H2D));
	CHECK(f_count("cudaMemcpyAsync") == copies);
	f_hold(0);
	CHECK_OK(accel_stream_synchronize(s, 60 * T_SEC));
	printf("# burst of %u: %ld batch call(s) of %ld copies, %ld single\n",
	       k, f_count("cudaMemcpyBatchAsync") - batches,
	       f_count("batch_items") - items,
	       f_count("cudaMemcpyAsync") - copies);
	if (no_batch()) {
		/* One by one, after at most one refused batch call. */
		CHECK(f_count("cudaMemcpyAsync") == copies + k);
		CHECK(f_count("cudaMemcpyBatchAsync") <= batches + 1);
	} else {
		CHECK(f_count("cudaMemcpyBatchAsync") == batches + 1);
		CHECK(f_count("batch_items") == items + k);
		CHECK(f_count("cudaMemcpyAsync") == copies);
	}
	/* The three that started the burst, then the 16. */
	CHECK(!memcmp(d, h, 192));
	for (i = 2; i < k + 2; i++)
		CHECK(!memcmp(d + 128 * i, h + 128 * i, 64));

	/* Alone: one cudaMemcpyAsync, no batch call. */
	copies = f_count("cudaMemcpyAsync");
	batches = f_count("cudaMemcpyBatchAsync");
	memset(d, 0, 64);
	CHECK_OK(accel_memcpy_async(s, d, h, 64, ACCEL_MEMCPY_H2D));
	CHECK_OK(accel_stream_synchronize(s, 60 * T_SEC));
	CHECK(f_count("cudaMemcpyAsync") == copies + 1);
	CHECK(f_count("cudaMemcpyBatchAsync") == batches);
	CHECK(!memcmp(d, h, 64));
	return T_PASS;
}

/*
 * The burst of burst_tail_issued_by_waiter(), on a context whose threads
 * are held at their start: 2 copies issued inline, 16 independent ones
 * left to the issuer (64 bytes every 128 from @h to @d, as in
 * burst_batched_while_issuing()), then one that writes the 16th's bytes
 * again from @h2. T_PASS or T_FAIL.
 */
static int burst_tail_held(unsigned char *h, unsigned char *h2, char *d,
			   unsigned int k)
{
	struct calls cp, bt;
	long items, tail_copies, tail_batches;
	bool mine = true;
	accel_stream_t s;
	unsigned int i;

	CHECK_OK(accel_stream_create(NULL, 0, 0, &s));
	/* Warm: creates the CUDA stream; then a wait began. */
	CHECK_OK(accel_memcpy_async(s, d, h, 64, ACCEL_MEMCPY_H2D));
	CHECK_OK(accel_stream_synchronize(s, 60 * T_SEC));
	for (i = 0; i < 2; i++)
		CHECK_OK(accel_memcpy_async(s, d + 128 * i, h + 128 * i, 64,
					    ACCEL_MEMCPY_H2D));
	cp = calls("cudaMemcpyAsync");
	bt = calls("cudaMemcpyBatchAsync");
	items = f_count("batch_items");
	for (i = 2; i < k + 2; i++)
		CHECK_OK(accel_memcpy_async(s, d + 128 * i, h + 128 * i, 64,
					    ACCEL_MEMCPY_H2D));
	CHECK_OK(accel_memcpy_async(s, d + 128 * (k + 1), h2, 64,
				    ACCEL_MEMCPY_H2D));
	/* Left to the issuer, which is held: nothing went down. */
	CHECK(f_count("cudaMemcpyAsync") == cp.all);
	CHECK(f_count("cudaMemcpyBatchAsync") == bt.all);
	CHECK_OK(accel_stream_synchronize(s, 10 * T_SEC));
	tail_copies = calls_mine("cudaMemcpyAsync", cp, &mine);
	tail_batches = calls_mine("cudaMemcpyBatchAsync", bt, &mine);
	printf("# tail of %u: %ld batch call(s) of %ld copies, %ld single, all by this thread: %s\n",
	       k + 1, tail_batches, f_count("batch_items") - items,
	       tail_copies, mine ? "yes" : "no");
	CHECK(mine);
	if (no_batch()) {
		CHECK(tail_copies == k + 1);
	} else {
		/* The 16 as one batch; the copy that rewrites one after it. */
		CHECK(tail_batches == 1);
		CHECK(f_count("batch_items") == items + k);
		CHECK(tail_copies == 1);
	}
	for (i = 0; i < k + 1; i++)
		CHECK(!memcmp(d + 128 * i, h + 128 * i, 64));
	CHECK(!memcmp(d + 128 * (k + 1), h2, 64));
	return T_PASS;
}

/*
 * A wait ends a burst without the issuer: with libaccel's threads held at
 * their start (the issuer never runs, nor the completion thread), the
 * synchronize after a burst issues what was left to the issuer itself,
 * as one pass from this thread (a batch call, and the copy that depends
 * on it after it), records its completion marker at once though the
 * issuer was woken hot and never cooled, and returns with every byte in
 * place, in order. Before, it waited for the issuer to take the tail and
 * for it to cool (or for the stream to stay quiet ACCEL_CUDA_LAZY_US,
 * here a minute): the synchronize timed out.
 */
static int burst_tail_issued_by_waiter(void)
{
	void (*hold_threads)(int);
	long (*threads_held)(void);
	const unsigned int k = 16;
	unsigned char *h = NULL, *h2 = NULL;
	unsigned long n;
	char *d = NULL;
	int ret;

	if (env_is("ACCEL_CUDA_ISSUER", "0")) {
		printf("# ACCEL_CUDA_ISSUER=0: no issuer thread to leave a burst to\n");
		return T_SKIP;
	}
	hold_threads = (void (*)(int))t_fake_hook("fake_cuda_hold_threads", 1);
	threads_held = (long (*)(void))t_fake_hook("fake_cuda_threads_held", 1);
	if (!hold_threads || !threads_held) {
		printf("# needs the stand-in libcudart (ACCEL_CUDART=.../libfakecudart.so) and its hooks\n");
		return T_SKIP;
	}
	unsetenv("ACCEL_CUDA_ISSUE_SPIN_US");
	setenv("ACCEL_CUDA_LAZY_US", "60000000", 1);
	setenv("ACCEL_CUDA_LAZY_MAX_US", "60000000", 1);
	hold_threads(1);
	ret = t_ctx() ? T_PASS : T_FAIL;
	unsetenv("ACCEL_CUDA_LAZY_US");
	unsetenv("ACCEL_CUDA_LAZY_MAX_US");
	if (ret == T_PASS)
		ret = fake_hooks();
	/* Both of the context's threads stopped at their start. */
	for (n = 0; ret == T_PASS && threads_held() < 2; n++) {
		if (n == 100000000UL)
			ret = T_FAIL;
		sched_yield();
	}
	if (ret == T_PASS) {
		h = t_host_buf(128 * (k + 2));
		h2 = t_host_buf(64);
		if (!h || !h2 ||
		    accel_malloc(NULL, (void **)&d, 128 * (k + 2)))
			ret = T_FAIL;
	}
	if (ret == T_PASS) {
		t_fill(h, 128 * (k + 2), 3);
		t_fill(h2, 64, 4);
		ret = burst_tail_held(h, h2, d, k);
	}
	/* Let them go whatever happened: the context's end joins them. */
	hold_threads(0);
	return ret;
}

/*
 * While the issuer is inside a copy call (a burst's pass), a thread that
 * polls the stream makes no CUDA call of its own: no completion marker,
 * no event record or query, which would contend with the issuer's calls.
 * The settings open every other door: markers may be written lazily at
 * once (ACCEL_CUDA_LAZY_MAX_US=0), and the quiet lasts 10 s (so that a
 * slow machine cannot end it). Once the pass ends the poll completes.
 */
static int no_poller_calls_while_issuing(void)
{
	static const char *const names[] = {
		"cuStreamWriteValue32", "cudaEventRecord", "cudaEventQuery",
	};
	long mine[3];
	unsigned char *h;
	accel_stream_t s;
	unsigned int i;
	int ret;
	char *d;

	setenv("ACCEL_CUDA_LAZY_MAX_US", "0", 1);
	setenv("ACCEL_CUDA_QUIET_MAX_US", "10000000", 1);
	ret = hot_stream(&s);
	unsetenv("ACCEL_CUDA_LAZY_MAX_US");
	unsetenv("ACCEL_CUDA_QUIET_MAX_US");
	if (ret != T_PASS)
		return ret;
	h = t_host_buf(192);
	CHECK(h);
	CHECK_OK(accel_malloc(NULL, (void **)&d, 192));
	t_fill(h, 192, 4);
	CHECK_OK(accel_memcpy_async(s, d, h, 64, ACCEL_MEMCPY_H2D));
	CHECK_OK(accel_stream_synchronize(s, 60 * T_SEC));
	CHECK(start_burst(s, d, h));
	for (i = 0; i < 3; i++)
		mine[i] = f_tcount(names[i]);
	/* The third copy is held: not done, whatever this poll finds. */
	CHECK_RET(accel_stream_query(s), -EAGAIN);
	CHECK_RET(accel_stream_query(s), -EAGAIN);
	for (i = 0; i < 3; i++) {
		if (f_tcount(names[i]) != mine[i])
			printf("# %s called by the poller while issuing\n",
			       names[i]);
		CHECK(f_tcount(names[i]) == mine[i]);
	}
	f_hold(0);
	CHECK_OK(accel_stream_synchronize(s, 60 * T_SEC));
	CHECK(!memcmp(d, h, 192));
	return T_PASS;
}

/*
 * A burst that accumulated behind an issue holds copies that depend on
 * each other (the same bytes written twice, then read back, then a
 * chain through device memory): they land in submission order although
 * the stand-in runs the copies of a batch backwards.
 */
static int burst_keeps_order(void)
{
	int ret;
	unsigned char *h1, *h2, *out;
	accel_stream_t s;
	unsigned int i;
	char *d;

	ret = hot_stream(&s);
	if (ret != T_PASS)
		return ret;
	h1 = t_host_buf(4096);
	h2 = t_host_buf(4096);
	out = t_host_buf(4096);
	CHECK(h1 && h2 && out);
	CHECK_OK(accel_malloc(NULL, (void **)&d, 8192));
	t_fill(h1, 4096, 3);
	t_fill(h2, 4096, 4);
	memset(out, 0, 4096);
	CHECK_OK(accel_memcpy_async(s, d, h1, 64, ACCEL_MEMCPY_H2D));
	CHECK_OK(accel_stream_synchronize(s, 60 * T_SEC));

	CHECK(start_burst(s, d + 4096, h1));
	for (i = 0; i < 8; i++) {
		/* Written from h1, then over it from h2, then read. */
		CHECK_OK(accel_memcpy_async(s, d + 256 * i, h1 + 256 * i, 256,
					    ACCEL_MEMCPY_H2D));
		CHECK_OK(accel_memcpy_async(s, d + 256 * i, h2 + 256 * i, 256,
					    ACCEL_MEMCPY_H2D));
	}
	/* A chain: d[2048..] <- d[0..], d[4096..] <- d[2048..]. */
	CHECK_OK(accel_memcpy_async(s, d + 2048, d, 2048, ACCEL_MEMCPY_D2D));
	CHECK_OK(accel_memcpy_async(s, d + 4096, d + 2048, 2048,
				    ACCEL_MEMCPY_D2D));
	CHECK_OK(accel_memcpy_async(s, out, d + 4096, 2048, ACCEL_MEMCPY_D2H));
	f_hold(0);
	CHECK_OK(accel_stream_synchronize(s, 60 * T_SEC));
	CHECK(!memcmp(out, h2, 2048));
	return T_PASS;
}

/*
 * A copy that CUDA refuses in the middle of a burst on s1, s2's burst
 * beside it: s1 fails (-EIO), the copies before the refused one landed,
 * those after it did not run; s2 is untouched and exact.
 */
static int error_mid_batch_fails_its_stream(void)
{
	int ret;
	const unsigned int k = 8, bad = 4;
	accel_stream_t s1, s2;
	unsigned char *h;
	char *d1, *d2;
	unsigned int i;

	ret = hot_stream(&s1);
	if (ret != T_PASS)
		return ret;
	CHECK_OK(accel_stream_create(NULL, 0, 0, &s2));
	h = t_host_buf(128 * k);
	CHECK(h);
	CHECK_OK(accel_malloc(NULL, (void **)&d1, 128 * (k + 2)));
	CHECK_OK(accel_malloc(NULL, (void **)&d2, 128 * k));
	t_fill(h, 128 * k, 5);
	CHECK_OK(accel_memcpy_async(s1, d1 + 128 * k, h, 64, ACCEL_MEMCPY_H2D));
	CHECK_OK(accel_stream_synchronize(s1, 60 * T_SEC));

	CHECK(start_burst(s1, d1 + 128 * k, h));
	f_fail_dst(d1 + 128 * bad);
	for (i = 0; i < k; i++) {
		CHECK_OK(accel_memcpy_async(s1, d1 + 128 * i, h + 128 * i, 64,
					    ACCEL_MEMCPY_H2D));
		CHECK_OK(accel_memcpy_async(s2, d2 + 128 * i, h + 128 * i, 64,
					    ACCEL_MEMCPY_H2D));
	}
	f_hold(0);
	CHECK_RET(accel_stream_synchronize(s1, 60 * T_SEC), -EIO);
	CHECK_OK(accel_stream_synchronize(s2, 60 * T_SEC));
	f_fail_dst(NULL);
	for (i = 0; i < k; i++) {
		static const unsigned char zero[64];

		CHECK(!memcmp(d2 + 128 * i, h + 128 * i, 64));
		if (i < bad)
			CHECK(!memcmp(d1 + 128 * i, h + 128 * i, 64));
		else
			CHECK(!memcmp(d1 + 128 * i, zero, 64));
	}
	/* Sticky on s1 only (the query says the copy's own status). */
	CHECK(accel_stream_query(s1) < 0 && accel_stream_query(s1) != -EAGAIN);
	CHECK_OK(accel_stream_query(s2));
	return T_PASS;
}

/*
 * ACCEL_CUDA_COMPLETION=word: the device writes the stream's host word
 * (cuStreamWriteValue32) and the host reads it; no event is queried to
 * see copies done.
 */
static int completion_by_host_word(void)
{
	unsigned char *h, *out;
	long writes, queries;
	accel_stream_t s;
	unsigned int i;
	int ret;
	void *d;

	if (getenv("ACCEL_CUDA_COMPLETION") &&
	    !env_is("ACCEL_CUDA_COMPLETION", "word")) {
		printf("# ACCEL_CUDA_COMPLETION=%s: the caller chose another completion\n",
		       getenv("ACCEL_CUDA_COMPLETION"));
		return T_SKIP;
	}
	CHECK(ctx_env_default("ACCEL_CUDA_COMPLETION", "word"));
	ret = fake_copy_setup(4096, &s, &h, &d);
	if (ret != T_PASS)
		return ret;
	out = t_host_buf(4096);
	CHECK(out);
	writes = f_count("cuStreamWriteValue32");
	queries = f_count("cudaEventQuery");
	for (i = 0; i < 50; i++) {
		t_fill(h, 4096, i);
		CHECK_OK(accel_memcpy_async(s, d, h, 4096, ACCEL_MEMCPY_H2D));
		CHECK_OK(accel_memcpy_async(s, out, d, 4096, ACCEL_MEMCPY_D2H));
		CHECK_OK(accel_stream_synchronize(s, 60 * T_SEC));
		CHECK(t_check_fill(out, 4096, i));
	}
	printf("# 50 round trips: %ld host word writes, %ld event queries\n",
	       f_count("cuStreamWriteValue32") - writes,
	       f_count("cudaEventQuery") - queries);
	CHECK(f_count("cuStreamWriteValue32") > writes);
	CHECK(f_count("cudaEventQuery") == queries);
	return T_PASS;
}

/*
 * Waiting for copies the stand-in's device models as taking about 21 ms
 * each (5 ns per byte, 4 MiB), with the default completion (the host
 * word, which the modelled device writes when the copy ends) or the one
 * the caller chose: a synchronize never returns before the modelled
 * device is done, whether the waiter sleeps on an estimate or polls, and
 * it does not spin through the copy: it polls events a few hundred
 * times at most where it polls them (a waiter spinning for 21 ms polls
 * tens of thousands of times), and of the waits that began 5 ms or more
 * before the copy's modelled end (on a busy machine this thread may come
 * to wait after the copy ended) most went to sleep (the thread's
 * voluntary context switches; a waiter preempted through a copy need
 * not) and, with host words, most saw the copy's word written late:
 * after the call that asked for it returned, when the copy ended.
 */
static int wait_for_long_copies(void)
{
	const size_t n = 4 << 20;
	long polls = 0, q, syncs, writes, late, slept, ahead;
	unsigned int waits = 0, sleepers = 0, lates = 0;
	unsigned char *h;
	accel_stream_t s;
	unsigned int i;
	int ret;
	void *d;

	CHECK(t_ctx());
	ret = fake_copy_setup(n, &s, &h, &d);
	if (ret != T_PASS)
		return ret;
	t_fill(h, n, 7);
	syncs = f_count("cudaEventSynchronize");
	writes = f_count("cuStreamWriteValue32");
	f_rate(5000);
	for (i = 0; i < 6; i++) {
		q = f_count("cudaEventQuery");
		late = f_late();
		CHECK_OK(accel_memcpy_async(s, d, h, n, ACCEL_MEMCPY_H2D));
		ahead = f_busy_ns();
		slept = thread_sleeps();
		CHECK_OK(accel_stream_synchronize(s, 60 * T_SEC));
		slept = thread_sleeps() - slept;
		late = f_late() - late;
		CHECK(!f_busy());
		q = f_count("cudaEventQuery") - q;
		printf("# copy %u: waited from %ld us before its end, %ld event polls, %ld host words written late, the waiter slept %ld times\n",
		       i, ahead / 1000, q, late, slept);
		polls = q > polls ? q : polls;
		/* Else this thread came late: little or nothing to wait for. */
		if (ahead >= 5000000) {
			waits++;
			sleepers += slept >= 1;
			/* Its word: written when the copy ended, not at the call. */
			lates += late >= 1;
		}
	}
	f_rate(0);
	printf("# completion by %s; blocking waits on an event (cudaEventSynchronize): %ld\n",
	       f_count("cuStreamWriteValue32") > writes ? "host words" : "events",
	       f_count("cudaEventSynchronize") - syncs);
	printf("# of %u waits that began 5 ms or more before the end: %u slept, %u saw their word written late\n",
	       waits, sleepers, lates);
	CHECK(polls < 2000);
	CHECK(sleepers * 2 > waits);
	CHECK(f_count("cuStreamWriteValue32") == writes || lates * 2 > waits);
	CHECK(t_check_fill(d, n, 7));
	return T_PASS;
}

/*
 * The hybrid wait with a rate that is wrong and too slow: the stand-in's
 * device is modelled at 240 ns per byte while the waiter learns (two
 * 1 MiB copies alone), then a 4 MiB copy on one stream is modelled to
 * take 200 ms and, issued right after it, a 4 MiB copy on another at 2.5
 * ns per byte (10.5 ms; the learnt rate is 96 times too slow for it).
 * Both are estimated at 1 s (the first pending range's estimate is what
 * the waiter goes by): a waiter sleeping towards half the estimate would
 * return after the other stream's copy ended; bounded (a sleep is at
 * most an eighth of the time since the range was issued,
 * cx_hybrid_next()), it returns with that copy still running on the
 * modelled device, and never before its own copy is done: with host
 * words (the default), what ended the wait is the stream's word, written
 * when that copy ended (the estimate is far ahead: no event is asked).
 * The margins are wide (hundreds of ms) so that a busy machine does not
 * decide the outcome.
 */
static int hybrid_wrong_slow_rate_bounded(void)
{
	long writes, late;
	accel_stream_t s1, s2;
	unsigned char *h;
	unsigned int i;
	bool busy;
	char *d;

	if (env_is("ACCEL_CUDA_HYBRID", "0")) {
		printf("# ACCEL_CUDA_HYBRID=0: no hybrid wait\n");
		return T_SKIP;
	}
	CHECK(t_ctx());
	if (fake_hooks())
		return T_SKIP;
	CHECK_OK(accel_stream_create(NULL, 0, 0, &s1));
	CHECK_OK(accel_stream_create(NULL, 0, 0, &s2));
	h = t_host_buf(4 << 20);
	CHECK(h);
	CHECK_OK(accel_malloc(NULL, (void **)&d, 8 << 20));
	t_fill(h, 4 << 20, 9);
	/* Both streams exist on the device before anything is timed. */
	CHECK_OK(accel_memcpy_async(s1, d, h, 64, ACCEL_MEMCPY_H2D));
	CHECK_OK(accel_memcpy_async(s2, d + (4 << 20), h, 64, ACCEL_MEMCPY_H2D));
	CHECK_OK(accel_stream_synchronize(s1, 60 * T_SEC));
	CHECK_OK(accel_stream_synchronize(s2, 60 * T_SEC));

	f_rate(240000);
	for (i = 0; i < 2; i++) {
		CHECK_OK(accel_memcpy_async(s1, d, h, 1 << 20, ACCEL_MEMCPY_H2D));
		CHECK_OK(accel_stream_synchronize(s1, 60 * T_SEC));
		CHECK(!f_busy());
	}
	f_rate(48000);
	CHECK_OK(accel_memcpy_async(s2, d + (4 << 20), h, 4 << 20,
				    ACCEL_MEMCPY_H2D));
	/* On the modelled device (issued by this thread: at once). */
	for (i = 0; i < 100000000U && !f_busy(); i++)
		sched_yield();
	CHECK(f_busy());
	f_rate(2500);
	writes = f_count("cuStreamWriteValue32");
	late = f_late();
	CHECK_OK(accel_memcpy_async(s1, d, h, 4 << 20, ACCEL_MEMCPY_H2D));
	CHECK_OK(accel_stream_synchronize(s1, 60 * T_SEC));
	/* What the device wrote by now: s1's words (s2's is due at its end). */
	late = f_late() - late;
	/* Not late: the other one is not done (asked first: checking is slow). */
	busy = f_busy();
	printf("# 4 MiB copy waited for, 200 ms copy beside it still running: %s; %ld host words written late\n",
	       busy ? "yes" : "no", late);
	CHECK(busy);
	/* Not early: its copy is done; with host words, its word said so. */
	CHECK(f_count("cuStreamWriteValue32") == writes || late >= 1);
	CHECK(t_check_fill(d, 4 << 20, 9));
	CHECK_OK(accel_stream_synchronize(s2, 60 * T_SEC));
	CHECK(!f_busy());
	f_rate(0);
	CHECK(t_check_fill(d + (4 << 20), 4 << 20, 9));
	return T_PASS;
}

/* With no ACCEL_CUDA_COMPLETION, a copy's completion is a host word. */
static int default_completion_is_host_word(void)
{
	unsigned char *h;
	accel_stream_t s;
	long words;
	int ret;
	void *d;

	if (getenv("ACCEL_CUDA_COMPLETION")) {
		printf("# ACCEL_CUDA_COMPLETION=%s: the caller chose\n",
		       getenv("ACCEL_CUDA_COMPLETION"));
		return T_SKIP;
	}
	CHECK(t_ctx());
	ret = fake_copy_setup(64, &s, &h, &d);
	if (ret != T_PASS)
		return ret;
	t_fill(h, 64, 5);
	words = f_count("cuStreamWriteValue32");
	CHECK_OK(accel_memcpy_async(s, d, h, 64, ACCEL_MEMCPY_H2D));
	CHECK_OK(accel_stream_synchronize(s, 60 * T_SEC));
	CHECK(f_count("cuStreamWriteValue32") > words);
	CHECK(t_check_fill(d, 64, 5));
	return T_PASS;
}

int main(void)
{
	static const struct t_case cases[] = {
		T(isolated_copy_issued_at_once), T(round_trip_no_hand_off),
		T(burst_batched_while_issuing), T(burst_keeps_order),
		T(burst_tail_issued_by_waiter),
		T(no_poller_calls_while_issuing),
		T(error_mid_batch_fails_its_stream),
		T(completion_by_host_word), T(default_completion_is_host_word),
		T(wait_for_long_copies),
		T(hybrid_wrong_slow_rate_bounded),
	};

	/* This program is about the CUDA backend, whatever the caller says. */
	setenv("ACCEL_BACKEND", "cuda", 1);
	return t_run(cases, sizeof(cases) / sizeof(cases[0]));
}
