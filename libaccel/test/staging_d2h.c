// SPDX-License-Identifier: MIT
/*
 * The staging pool's D2H copies into pageable memory: pipelined through
 * the chunks and done once the stream passed them, or, on a stream with
 * nothing queued, finished in the call (through the ring when small,
 * through the chunks when large, beside another stream's pieces, from a
 * host function).
 */
#include <pthread.h>

#include "staging_helpers.h"

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
	CHECK_OK(staging_bufs(NULL, n, n, &s, &dev, &host, &dst));
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
	return T_PASS;
}

/*
 * Behind a gate a D2H of @n bytes of @dev into pageable @dst stays
 * asynchronous: the call returns with @dst untouched, which holds the
 * bytes, those of @host, once the gate opened.
 */
static int d2h_gated_stays_queued(accel_stream_t s, unsigned char *dst,
				  const unsigned char *dev,
				  const unsigned char *host, size_t n)
{
	accel_event_t gate;

	memset(dst, 0, n);
	CHECK_OK(t_gate(s, &gate));
	CHECK_OK(accel_memcpy_async(s, dst, dev, n, ACCEL_MEMCPY_D2H));
	CHECK(dst[0] == 0 && dst[n - 1] == 0);
	CHECK_OK(t_gate_open(gate));
	CHECK_OK(accel_stream_synchronize(s, 60 * T_SEC));
	CHECK(!memcmp(dst, host, n));
	accel_event_destroy(gate);
	return T_PASS;
}

/*
 * One round of an in-call test: @n bytes of @host filled with
 * t_fill(@seed) and copied H2D into @dev, then their D2H into pageable
 * @dst on the idle stream @s: the call finishes it, the bytes are there
 * when it returns.
 */
static int d2h_round_in_call(accel_stream_t s, unsigned char *dst,
			     unsigned char *dev, unsigned char *host, size_t n,
			     unsigned int seed)
{
	t_fill(host, n, seed);
	CHECK_OK(accel_memcpy_async(s, dev, host, n, ACCEL_MEMCPY_H2D));
	CHECK_OK(accel_stream_synchronize(s, 60 * T_SEC));
	memset(dst, 0, n);
	CHECK_OK(accel_memcpy_async(s, dst, dev, n, ACCEL_MEMCPY_D2H));
	/* No synchronize: the call finished the copy. */
	CHECK(t_check_fill(dst, n, seed));
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
	struct staging_test x;
	int i;

	/* The destination is x.page. */
	CHECK_OK(staging_test_begin(&x, "256", "2", true, N * n, n));
	t_fill(x.host, N * n, 11);
	CHECK_OK(accel_memcpy_async(x.s, x.dev, x.host, N * n,
				    ACCEL_MEMCPY_H2D));
	CHECK_OK(accel_stream_synchronize(x.s, 60 * T_SEC));
	for (i = 0; i < N; i++) {
		memset(x.page, 0, n);
		CHECK_OK(accel_memcpy_async(x.s, x.page, x.dev + i * n, n,
					    ACCEL_MEMCPY_D2H));
		/* No synchronize: the call finished the copy. */
		CHECK(!memcmp(x.page, x.host + i * n, n));
	}
	/* Behind other work: queued, not waited for. */
	CHECK(d2h_gated_stays_queued(x.s, x.page, x.dev, x.host, n) == T_PASS);
	CHECK(staging_test_end(&x) == T_PASS);
	printf("# %llu D2H finished in the call, %llu handed to a worker\n",
	       x.t.ring_d2h, x.t.handoffs);
	CHECK(x.t.ring_d2h == N);
	CHECK(x.t.handoffs == 1);
	return T_PASS;
}

/*
 * With a pool of one chunk the chunk path cannot keep a chunk spare for
 * other streams, yet a D2H on an idle stream is still finished when the
 * call returns: the bytes are there and nothing of it is left queued.
 */
static int d2h_idle_one_chunk_in_call(void)
{
	const size_t n = 3 * 64 * KB + 7;
	struct staging_test x;
	int round;

	CHECK(!setenv("ACCEL_STAGING_SMALL_KB", "0", 1));
	CHECK_OK(staging_test_begin(&x, "64", "1", false, n, n));
	for (round = 0; round < 3; round++) {
		CHECK(d2h_round_in_call(x.s, x.page, x.dev, x.host, n,
					(unsigned int)round + 40) == T_PASS);
		/* Nothing of it is left queued. */
		CHECK_OK(accel_stream_query(x.s));
	}
	CHECK(staging_test_end(&x) == T_PASS);
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
	struct staging_test x;
	int round;

	CHECK_OK(staging_test_begin(&x, "64", "3", true, n, n));
	for (round = 0; round < 3; round++)
		CHECK(d2h_round_in_call(x.s, x.page, x.dev, x.host, n,
					(unsigned int)round + 30) == T_PASS);
	CHECK(d2h_gated_stays_queued(x.s, x.page, x.dev, x.host, n) == T_PASS);
	CHECK(t_check_fill(x.page, n, 32));
	/* The gated copy: its 11 pieces, each to a chunk's worker. */
	CHECK(staging_test_end_direct(&x, 3, 11) == T_PASS);
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
	struct staging_test x;
	struct beside b;
	pthread_t th;
	int r;

	CHECK_OK(staging_test_begin(&x, "64", "2", false, n, n));
	t_fill(x.host, n, 61);
	CHECK_OK(accel_memcpy_async(x.s, x.dev, x.host, n, ACCEL_MEMCPY_H2D));
	CHECK_OK(accel_stream_synchronize(x.s, 60 * T_SEC));
	b.ctx = x.ctx;
	b.rounds = 40;
	CHECK(!pthread_create(&th, NULL, beside_thread, &b));
	for (r = 0; r < 40; r++) {
		memset(x.page, 0, n);
		/* In the call, or through a worker when no chunk was free. */
		CHECK_OK(accel_memcpy_async(x.s, x.page, x.dev, n,
					    ACCEL_MEMCPY_D2H));
		CHECK_OK(accel_stream_synchronize(x.s, 60 * T_SEC));
		CHECK(t_check_fill(x.page, n, 61));
	}
	CHECK(!pthread_join(th, NULL));
	CHECK(b.ok);
	CHECK(staging_test_end(&x) == T_PASS);
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
	CHECK_OK(staging_bufs(NULL, sizes[1], sizes[1], &s2, &dev, &host,
			      &dst));
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
	return T_PASS;
}

STAGING_MAIN(T(d2h_pipelined_done_when_passed), T(small_d2h_idle_in_call),
	     T(large_d2h_idle_in_call), T(d2h_idle_one_chunk_in_call),
	     T(d2h_in_call_beside_chunks), T(hostfn_d2h))
