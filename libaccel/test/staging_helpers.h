/* SPDX-License-Identifier: MIT */
/*
 * What the staging pool's test programs share (staging.c, staging_ring.c,
 * staging_d2h.c, staging_d2h_pipe.c, staging_pinned.c): the pool's
 * settings for a test, its ACCEL_TRACE line, caught when a context goes,
 * and a test's own context with its buffers (struct staging_test).
 */
#ifndef LIBACCEL_TEST_STAGING_HELPERS_H
#define LIBACCEL_TEST_STAGING_HELPERS_H

#include "helpers.h"

#define KB	1024UL
#define MB	(1024UL * 1024UL)

static inline int staging_env(const char *chunk_kb, const char *chunks)
{
	if (setenv("ACCEL_STAGING_CHUNK_KB", chunk_kb, 1) ||
	    setenv("ACCEL_STAGING_CHUNKS", chunks, 1))
		return -1;
	return 0;
}

static inline void staging_env_reset(void)
{
	unsetenv("ACCEL_STAGING_CHUNK_KB");
	unsetenv("ACCEL_STAGING_CHUNKS");
}

/*
 * Every setting of the pool a staging case makes, undone: the staging
 * programs' t_case_reset (staging_run()), so that t_run() undoes them
 * after each case, and a case that failed half way leaves none to the
 * next.
 */
static inline void staging_case_reset(void)
{
	staging_env_reset();
	unsetenv("ACCEL_STAGING_THREADS");
	unsetenv("ACCEL_STAGING_SMALL_KB");
	unsetenv("ACCEL_TRACE");
}

/* t_run() for a staging program: staging_case_reset() after each case. */
static inline int staging_run(const struct t_case *cases, size_t n)
{
	t_case_reset = staging_case_reset;
	return t_run(cases, n);
}

#define STAGING_MAIN(...)	T_MAIN_RUN(staging_run, __VA_ARGS__)

/* The pool's ACCEL_TRACE line, caught when its context is destroyed. */
struct trace_catch {
	unsigned long long ring, ring_waits, ring_d2h, d2h_direct, filled,
			   par, handoffs, spills, chunk_waits;
	int seen;
};

static inline void catch_trace(void *data, int prio, const char *msg)
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
 * A context of its own for a test that reads the pool's trace: the pool
 * set by staging_env(@chunk_kb, @chunks), ACCEL_TRACE on, and the line
 * the context writes when staging_trace_end() destroys it caught into
 * @t. 0 or -errno.
 */
static inline int staging_trace_begin(struct trace_catch *t,
				      const char *chunk_kb, const char *chunks,
				      accel_context **ctx)
{
	int ret;

	memset(t, 0, sizeof(*t));
	if (staging_env(chunk_kb, chunks) || setenv("ACCEL_TRACE", "1", 1))
		return -EINVAL;
	ret = accel_context_create(ctx, 0);
	if (!ret)
		accel_set_log_fn(catch_trace, t);
	return ret;
}

/* Destroy @ctx, which writes its trace line, and undo staging_trace_begin(). */
static inline void staging_trace_end(accel_context *ctx)
{
	accel_context_destroy(ctx);
	accel_set_log_fn(NULL, NULL);
	unsetenv("ACCEL_TRACE");
	staging_env_reset();
}

/*
 * What a copy test works with, on @ctx (NULL: the current context): a
 * stream, @n bytes of device memory and as many of pinned host memory,
 * and @page_n bytes of pageable memory from malloc(3), the caller's to
 * free. 0 or -errno.
 */
static inline int staging_bufs(accel_context *ctx, size_t n, size_t page_n,
			       accel_stream_t *s, unsigned char **dev,
			       unsigned char **host, unsigned char **page)
{
	int ret = accel_stream_create(ctx, 0, 0, s);

	if (!ret)
		ret = accel_malloc(ctx, (void **)dev, n);
	if (!ret)
		ret = accel_host_alloc(ctx, (void **)host, n, 0);
	if (!ret) {
		*page = malloc(page_n);
		if (!*page)
			ret = -ENOMEM;
	}
	return ret;
}

/*
 * A staging test on a context of its own: the pool set by staging_env(),
 * the pool's trace caught in @t when traced (staging_trace_begin()), and
 * the buffers of staging_bufs() on that context.
 */
struct staging_test {
	accel_context *ctx;
	accel_stream_t s;
	unsigned char *dev, *host, *page;
	bool trace;
	struct trace_catch t;
};

/*
 * Begin @x: the pool set by staging_env(@chunk_kb, @chunks), its trace
 * caught when @trace, a context of its own with a stream, @n bytes of
 * device and of pinned memory and @page_n of pageable memory. 0 or -errno.
 */
static inline int staging_test_begin(struct staging_test *x,
				     const char *chunk_kb, const char *chunks,
				     bool trace, size_t n, size_t page_n)
{
	int ret;

	memset(x, 0, sizeof(*x));
	x->trace = trace;
	if (trace)
		ret = staging_trace_begin(&x->t, chunk_kb, chunks, &x->ctx);
	else if (staging_env(chunk_kb, chunks))
		ret = -EINVAL;
	else
		ret = accel_context_create(&x->ctx, 0);
	if (!ret)
		ret = staging_bufs(x->ctx, n, page_n, &x->s, &x->dev, &x->host,
				   &x->page);
	return ret;
}

/*
 * End @x: its context destroyed (which writes the trace line), the pool's
 * settings and the trace undone, its pageable memory freed. T_FAIL if @x
 * was traced and the line was not caught once, else T_PASS.
 */
static inline int staging_test_end(struct staging_test *x)
{
	if (x->trace) {
		staging_trace_end(x->ctx);
	} else {
		accel_context_destroy(x->ctx);
		staging_env_reset();
	}
	free(x->page);
	CHECK(!x->trace || x->t.seen == 1);
	return T_PASS;
}

/*
 * End the traced test @x of D2H copies finished in the call through the
 * chunks (staging_test_end()): T_PASS if its trace counted @direct of them
 * and @handoffs pieces handed to a chunk's worker.
 */
static inline int staging_test_end_direct(struct staging_test *x,
					  unsigned long long direct,
					  unsigned long long handoffs)
{
	CHECK(staging_test_end(x) == T_PASS);
	printf("# %llu D2H finished in the call through the chunks, %llu pieces handed to a worker\n",
	       x->t.d2h_direct, x->t.handoffs);
	CHECK(x->t.d2h_direct == direct);
	CHECK(x->t.handoffs == handoffs);
	return T_PASS;
}

#endif /* LIBACCEL_TEST_STAGING_HELPERS_H */
