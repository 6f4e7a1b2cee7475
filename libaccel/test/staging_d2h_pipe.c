// SPDX-License-Identifier: MIT
/*
 * The pipeline of a D2H into pageable memory finished in the call (a
 * stream with nothing queued, more bytes than the ring takes): pieces on
 * the wire into the pool's chunks, each copied out by the fill threads as
 * it lands while later ones are still on the wire, each chunk reused as
 * soon as its copy-out is done. The bytes and their order, a destination
 * whose pieces straddle chunks and overlap an earlier copy's, a device
 * copy failing part way, and the context destroyed during the call.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>

#include "staging_helpers.h"

/*
 * Chunks of 512 KiB, three of them (one kept spare): many reuses per
 * call; @threads copying (1: the calling thread alone copies out, after
 * it queued the next pieces).
 */
#define PIPE_CHUNK_KB	"512"
#define PIPE_CHUNKS	"3"

static int pipe_env_threads(const char *threads)
{
	if (staging_env(PIPE_CHUNK_KB, PIPE_CHUNKS) ||
	    setenv("ACCEL_STAGING_THREADS", threads, 1) ||
	    setenv("ACCEL_STAGING_SMALL_KB", "0", 1))
		return -1;
	return 0;
}

static int pipe_env(void)
{
	return pipe_env_threads("4");
}

/* Bytes of the call: eleven pieces of at most a chunk, the last short. */
#define PIPE_N	(5 * MB + 4093)
#define GUARD	64

/*
 * In-call D2H copies of many pieces into a destination that starts off a
 * page and cache line (so every piece straddles the destination's pages
 * differently from the chunk's), round after round from different device
 * bytes, copied out by the fill threads and by the calling thread alone:
 * the destination holds exactly the device's bytes when the call
 * returns, the guard bytes around it are untouched, and every copy went
 * through the chunks with no worker taking part. (A chunk taken for the
 * next piece before its copy-out is done shows here as wrong bytes.)
 */
static int pieces_exact_with(const char *threads)
{
	struct staging_test x;
	unsigned char *dst;
	int round;

	CHECK(!pipe_env_threads(threads));
	/* The destination is in x.page, between its guard bytes. */
	CHECK_OK(staging_test_begin(&x, PIPE_CHUNK_KB, PIPE_CHUNKS, true,
				    PIPE_N, PIPE_N + 2 * GUARD));
	dst = x.page + GUARD - 13;
	for (round = 0; round < 6; round++) {
		t_fill(x.host, PIPE_N, (unsigned int)round + 70);
		CHECK_OK(accel_memcpy_async(x.s, x.dev, x.host, PIPE_N,
					    ACCEL_MEMCPY_H2D));
		CHECK_OK(accel_stream_synchronize(x.s, 60 * T_SEC));
		memset(x.page, 0xa5, PIPE_N + 2 * GUARD);
		CHECK_OK(accel_memcpy_async(x.s, dst, x.dev, PIPE_N,
					    ACCEL_MEMCPY_D2H));
		/* No synchronize: the call finished the copy. */
		CHECK(!memcmp(dst, x.host, PIPE_N));
		CHECK(dst[-1] == 0xa5 && dst[PIPE_N] == 0xa5);
		CHECK_OK(accel_stream_query(x.s));
	}
	CHECK(staging_test_end_direct(&x, 6, 0) == T_PASS);
	return T_PASS;
}

static int pieces_exact(void)
{
	return pieces_exact_with("4");
}

static int pieces_exact_caller_alone(void)
{
	return pieces_exact_with("1");
}

/*
 * Copies in the call are in the destination in the order they were made:
 * a second in-call D2H whose destination overlaps the first's second half
 * (its pieces land on bytes the first's pieces wrote, in other chunks)
 * leaves the first's first half and its own bytes; a pageable H2D then
 * reads those bytes back as they are. Order kept across copies, with no
 * synchronize between them.
 */
static int overlapping_in_order(void)
{
	const size_t half = PIPE_N / 2;
	unsigned char *host, *dev, *dst, *back;
	accel_context *ctx;
	accel_stream_t s;

	CHECK(!pipe_env());
	CHECK_OK(accel_context_create(&ctx, 0));
	CHECK_OK(accel_stream_create(ctx, 0, 0, &s));
	CHECK_OK(accel_malloc(ctx, (void **)&dev, 2 * PIPE_N));
	CHECK_OK(accel_host_alloc(ctx, (void **)&host, 2 * PIPE_N, 0));
	CHECK_OK(accel_host_alloc(ctx, (void **)&back, PIPE_N + half, 0));
	dst = malloc(PIPE_N + half);
	CHECK(dst);
	memset(dst, 0, PIPE_N + half);
	t_fill(host, 2 * PIPE_N, 5);
	CHECK_OK(accel_memcpy_async(s, dev, host, 2 * PIPE_N,
				    ACCEL_MEMCPY_H2D));
	CHECK_OK(accel_stream_synchronize(s, 60 * T_SEC));
	CHECK_OK(accel_memcpy_async(s, dst, dev, PIPE_N, ACCEL_MEMCPY_D2H));
	CHECK_OK(accel_memcpy_async(s, dst + half, dev + PIPE_N, PIPE_N,
				    ACCEL_MEMCPY_D2H));
	/* Back to the device from the pageable buffer, then to pinned memory. */
	CHECK_OK(accel_memcpy_async(s, dev, dst, PIPE_N + half,
				    ACCEL_MEMCPY_H2D));
	CHECK_OK(accel_memcpy_async(s, back, dev, PIPE_N + half,
				    ACCEL_MEMCPY_D2H));
	CHECK_OK(accel_stream_synchronize(s, 60 * T_SEC));
	CHECK(!memcmp(dst, host, half));
	CHECK(!memcmp(dst + half, host + PIPE_N, PIPE_N));
	CHECK(!memcmp(back, dst, PIPE_N + half));
	accel_context_destroy(ctx);
	free(dst);
	return T_PASS;
}

/* The stand-in libcudart's hooks, when it is the one loaded. */
static long (*f_count)(const char *name);
static void (*f_fail_nth)(long n);
static void (*f_rate)(long ps);

static int fake_hooks(void)
{
	const char *lib = getenv("ACCEL_CUDART");
	void *h = lib ? dlopen(lib, RTLD_NOW | RTLD_NOLOAD) : NULL;

	if (h) {
		f_count = (long (*)(const char *))dlsym(h, "fake_cuda_count");
		f_fail_nth = (void (*)(long))dlsym(h, "fake_cuda_fail_nth");
		f_rate = (void (*)(long))dlsym(h, "fake_cuda_rate");
	}
	if (!h || !f_count || !f_fail_nth || !f_rate) {
		printf("# needs the cuda backend over the stand-in libcudart (ACCEL_CUDART=.../libfakecudart.so)\n");
		return T_SKIP;
	}
	return 0;
}

/* Completion markers the backend recorded so far, events or host words. */
static long markers(void)
{
	return f_count("cudaEventRecord") + f_count("cuStreamWriteValue32");
}

/*
 * Each piece is seen to land on its own: the backend learns of completions
 * through a marker after a stream's newest work, made when someone looks,
 * so the pipeline looks once as it queues each piece. An in-call D2H of
 * eleven pieces, up to seven on the modelled wire at once (and no marker
 * made by the completion thread), records a marker for most pieces (two
 * issued together by the issuer thread share one); looking only when
 * waiting for the oldest piece, it recorded two in all (the first piece
 * seen done only with the seventh).
 */
static int each_piece_seen(void)
{
	unsigned char *host, *dev, *dst;
	accel_context *ctx;
	accel_stream_t s;
	long before, pieces;
	int ret;

	ret = fake_hooks();
	if (ret)
		return ret;
	CHECK(!pipe_env());
	CHECK(!setenv("ACCEL_STAGING_CHUNKS", "8", 1));
	/* No marker made by the completion thread for a quiet stream. */
	CHECK(!setenv("ACCEL_CUDA_LAZY_US", "1000000", 1));
	CHECK(!setenv("ACCEL_CUDA_LAZY_MAX_US", "1000000", 1));
	CHECK_OK(accel_context_create(&ctx, 0));
	unsetenv("ACCEL_CUDA_LAZY_US");
	unsetenv("ACCEL_CUDA_LAZY_MAX_US");
	CHECK_OK(accel_stream_create(ctx, 0, 0, &s));
	CHECK_OK(accel_malloc(ctx, (void **)&dev, PIPE_N));
	CHECK_OK(accel_host_alloc(ctx, (void **)&host, PIPE_N, 0));
	dst = malloc(PIPE_N);
	CHECK(dst);
	t_fill(host, PIPE_N, 21);
	CHECK_OK(accel_memcpy_async(s, dev, host, PIPE_N, ACCEL_MEMCPY_H2D));
	CHECK_OK(accel_stream_synchronize(s, 60 * T_SEC));
	/* 100 us a piece on the modelled device: they land one by one. */
	f_rate(200);
	before = markers();
	CHECK_OK(accel_memcpy_async(s, dst, dev, PIPE_N, ACCEL_MEMCPY_D2H));
	f_rate(0);
	pieces = (long)((PIPE_N + 512 * KB - 1) / (512 * KB));
	printf("# %ld completion markers for %ld pieces\n", markers() - before,
	       pieces);
	CHECK(markers() - before > pieces / 2);
	CHECK(!memcmp(dst, host, PIPE_N));
	accel_context_destroy(ctx);
	free(dst);
	return T_PASS;
}

/*
 * A device copy fails part way through the pipeline (the stand-in fails
 * the fourth copy call of the call): the stream fails, as it would for
 * any copy; the pieces before the failed one are in the destination,
 * exact, and nothing after it is written; the chunks are free again, so
 * that the same copy on a new stream of the context is finished whole.
 */
static int failure_mid_pipeline(void)
{
	const size_t piece = 512 * KB;
	unsigned char *host, *dev, *dst;
	accel_context *ctx;
	accel_stream_t s, s2;
	size_t off, good = 0;
	int ret;

	ret = fake_hooks();
	if (ret)
		return ret;
	CHECK(!pipe_env());
	CHECK_OK(accel_context_create(&ctx, 0));
	CHECK_OK(accel_stream_create(ctx, 0, 0, &s));
	CHECK_OK(accel_stream_create(ctx, 0, 0, &s2));
	CHECK_OK(accel_malloc(ctx, (void **)&dev, PIPE_N));
	CHECK_OK(accel_host_alloc(ctx, (void **)&host, PIPE_N, 0));
	dst = malloc(PIPE_N);
	CHECK(dst);
	memset(dst, 0, PIPE_N);
	t_fill(host, PIPE_N, 33);
	CHECK_OK(accel_memcpy_async(s, dev, host, PIPE_N, ACCEL_MEMCPY_H2D));
	CHECK_OK(accel_stream_synchronize(s, 60 * T_SEC));
	f_fail_nth(4);
	ret = accel_memcpy_async(s, dst, dev, PIPE_N, ACCEL_MEMCPY_D2H);
	f_fail_nth(0);
	/* Failed before the call returned, or reported by the synchronize. */
	CHECK(ret == 0 || ret == -EIO);
	CHECK_RET(accel_stream_synchronize(s, 60 * T_SEC), -EIO);
	/* Whole pieces exact from the start, then nothing written. */
	for (off = 0; off < PIPE_N; off += piece) {
		size_t len = PIPE_N - off < piece ? PIPE_N - off : piece;

		if (memcmp(dst + off, host + off, len))
			break;
		good = off + len;
	}
	printf("# %zu of %zu bytes landed before the failure\n", good,
	       (size_t)PIPE_N);
	CHECK(good > 0 && good < PIPE_N);
	for (off = good; off < PIPE_N; off++)
		CHECK(dst[off] == 0);
	memset(dst, 0, PIPE_N);
	CHECK_OK(accel_memcpy_async(s2, dst, dev, PIPE_N, ACCEL_MEMCPY_D2H));
	CHECK(!memcmp(dst, host, PIPE_N));
	accel_context_destroy(ctx);
	free(dst);
	return T_PASS;
}

/* The thread that copies while its context is destroyed. */
struct copier {
	accel_context *ctx;
	accel_stream_t s;
	unsigned char *dev, *dst, *want;	/* want: what dev holds */
	int calls;		/* atomic: calls that returned 0 */
	int bad;		/* the first other than 0 or -ENOENT */
	int short_ok;		/* calls that returned 0 with dst not whole */
};

static void *copier_thread(void *arg)
{
	struct copier *c = arg;
	int ret;

	for (;;) {
		memset(c->dst, 0, PIPE_N);
		ret = accel_memcpy_async(c->s, c->dst, c->dev, PIPE_N,
					 ACCEL_MEMCPY_D2H);
		/* Destroyed under the call or before it: -ENOENT. */
		if (ret == -ENOENT)
			break;
		if (ret) {
			__atomic_store_n(&c->bad, ret, __ATOMIC_RELAXED);
			break;
		}
		/* 0: finished in the call, every byte in the destination. */
		if (memcmp(c->dst, c->want, PIPE_N))
			c->short_ok++;
		__atomic_fetch_add(&c->calls, 1, __ATOMIC_RELEASE);
	}
	return NULL;
}

/*
 * The context is destroyed while another thread's in-call D2H copies are
 * in the pipeline (over the stand-in, a device that takes about a
 * millisecond per piece): the destroy returns, the copying thread's call
 * returns -ENOENT (a call that returned 0 has every byte in the
 * destination, whether or not the destroy came during it), nothing
 * crashes or races (the TSan run), and a new context copies the same
 * bytes exactly.
 */
static int destroy_mid_pipeline(void)
{
	unsigned char *host, *dev, *dst;
	accel_context *ctx;
	accel_stream_t s;
	struct copier c;
	pthread_t th;
	bool fake = !fake_hooks();

	CHECK(!pipe_env());
	memset(&c, 0, sizeof(c));
	CHECK_OK(accel_context_create(&c.ctx, 0));
	CHECK_OK(accel_stream_create(c.ctx, 0, 0, &c.s));
	CHECK_OK(accel_malloc(c.ctx, (void **)&c.dev, PIPE_N));
	CHECK_OK(accel_host_alloc(c.ctx, (void **)&host, PIPE_N, 0));
	t_fill(host, PIPE_N, 43);
	CHECK_OK(accel_memcpy_async(c.s, c.dev, host, PIPE_N,
				    ACCEL_MEMCPY_H2D));
	CHECK_OK(accel_stream_synchronize(c.s, 60 * T_SEC));
	c.want = malloc(PIPE_N);
	c.dst = malloc(PIPE_N);
	CHECK(c.dst && c.want);
	memcpy(c.want, host, PIPE_N);
	if (fake)
		f_rate(2000);	/* 2 ns per byte: 1 ms per piece */
	CHECK(!pthread_create(&th, NULL, copier_thread, &c));
	/* Two calls done: the third is under way, or about to be. */
	while (__atomic_load_n(&c.calls, __ATOMIC_ACQUIRE) < 2 &&
	       !__atomic_load_n(&c.bad, __ATOMIC_RELAXED))
		sched_yield();
	CHECK_OK(accel_context_destroy(c.ctx));
	CHECK(!pthread_join(th, NULL));
	if (fake)
		f_rate(0);
	printf("# %d calls returned 0, then -ENOENT\n", c.calls);
	CHECK(c.bad == 0);
	CHECK(c.short_ok == 0);
	free(c.dst);
	free(c.want);

	CHECK_OK(accel_context_create(&ctx, 0));
	CHECK_OK(accel_stream_create(ctx, 0, 0, &s));
	CHECK_OK(accel_malloc(ctx, (void **)&dev, PIPE_N));
	CHECK_OK(accel_host_alloc(ctx, (void **)&host, PIPE_N, 0));
	dst = malloc(PIPE_N);
	CHECK(dst);
	t_fill(host, PIPE_N, 44);
	CHECK_OK(accel_memcpy_async(s, dev, host, PIPE_N, ACCEL_MEMCPY_H2D));
	CHECK_OK(accel_stream_synchronize(s, 60 * T_SEC));
	CHECK_OK(accel_memcpy_async(s, dst, dev, PIPE_N, ACCEL_MEMCPY_D2H));
	CHECK(!memcmp(dst, host, PIPE_N));
	accel_context_destroy(ctx);
	free(dst);
	return T_PASS;
}

/* One in-call D2H of a stream that another thread destroys. */
struct d2h_call {
	accel_stream_t s;
	void *dst, *dev;
	size_t n;
	int ret;
};

static void *d2h_call_thread(void *arg)
{
	struct d2h_call *c = arg;

	c->ret = accel_memcpy_async(c->s, c->dst, c->dev, c->n,
				    ACCEL_MEMCPY_D2H);
	return NULL;
}

/*
 * A stream destroyed while a large D2H into pageable memory is being
 * finished in the call: the call returns 0 only with every byte in the
 * destination, else -ENOENT (accel_memcpy_async(3)); it used to return 0
 * with the pieces that had not landed missing. The destroy comes at a
 * different point of the call each round (the call takes a few ms here).
 */
static int stream_destroyed_mid_call(void)
{
	const size_t n = 64 * MB;
	unsigned char *host, *want, *dst, *dev;
	int round, whole = 0, enoent = 0;

	want = malloc(n);
	dst = malloc(n);
	CHECK(want && dst);
	t_fill(want, n, 45);
	for (round = 0; round < 8; round++) {
		struct d2h_call c = { .dst = dst, .n = n };
		accel_context *ctx;
		accel_stream_t fill;
		pthread_t th;

		/*
		 * A context each round: its pool's chunks all free, so the
		 * call is served in the call. The device buffer is written
		 * before, on a stream of its own.
		 */
		CHECK_OK(accel_context_create(&ctx, 0));
		CHECK_OK(accel_malloc(ctx, (void **)&dev, n));
		CHECK_OK(accel_host_alloc(ctx, (void **)&host, n, 0));
		memcpy(host, want, n);
		CHECK_OK(accel_stream_create(ctx, 0, 0, &fill));
		CHECK_OK(accel_memcpy_async(fill, dev, host, n,
					    ACCEL_MEMCPY_H2D));
		CHECK_OK(accel_stream_synchronize(fill, 60 * T_SEC));
		CHECK_OK(accel_stream_create(ctx, 0, 0, &c.s));
		c.dev = dev;
		memset(dst, 0, n);
		CHECK(!pthread_create(&th, NULL, d2h_call_thread, &c));
		usleep(1000 + 500 * (unsigned int)round);
		CHECK_OK(accel_stream_destroy(c.s));
		CHECK(!pthread_join(th, NULL));
		/*
		 * The destroyed stream's queued pieces may still be copied
		 * out into dst until the context's destroy has ended them.
		 */
		CHECK_OK(accel_context_destroy(ctx));
		if (c.ret == 0) {
			CHECK(!memcmp(dst, want, n));
			whole++;
		} else {
			CHECK(c.ret == -ENOENT);
			enoent++;
		}
	}
	printf("# %d calls whole, %d -ENOENT\n", whole, enoent);
	free(want);
	free(dst);
	return T_PASS;
}

STAGING_MAIN(T(pieces_exact), T(pieces_exact_caller_alone),
	     T(overlapping_in_order), T(each_piece_seen),
	     T(failure_mid_pipeline), T(destroy_mid_pipeline),
	     T(stream_destroyed_mid_call))
