// SPDX-License-Identifier: MIT
/*
 * Stream-ordered allocation: accel_malloc_async(), accel_free_async(), the
 * pool's reuse rules (at once on the freeing stream, after retirement on
 * the others), its threshold and trimming, and the errnos.
 */
#include <stdint.h>
#include "helpers.h"

/* One block as large as a pool chunk: the chunk holds nothing else. */
#define CHUNK	(2U << 20)

/* Two streams of a new context whose pool keeps every idle chunk. */
static int two_streams(accel_stream_t *s1, accel_stream_t *s2)
{
	int ret = t_two_streams(s1, s2);

	return ret ? ret : accel_mem_pool_set_release_threshold(NULL, UINT64_MAX);
}

/* A block *@a of @s1 that a D2H copy on @s2, held back by *@gate, reads. */
static int block_read_by_gated_copy(accel_stream_t s1, accel_stream_t s2,
				    accel_event_t *gate, void **a)
{
	void *h;
	int ret = accel_host_alloc(NULL, &h, 4096, 0);

	if (!ret)
		ret = accel_malloc_async(s1, a, CHUNK);
	if (!ret)
		ret = t_gate(s2, gate);
	if (!ret)
		ret = accel_memcpy_async(s2, h, *a, 4096, ACCEL_MEMCPY_D2H);
	return ret;
}

static int errnos(void)
{
	accel_stream_t s, dead;
	unsigned char *h;
	void *a, *m;
	size_t res, used;
	char stack[64];

	CHECK_OK(t_stream(&s));
	CHECK_RET(accel_malloc_async(s, NULL, 64), -EINVAL);
	CHECK_RET(accel_malloc_async(s, &a, 0), -EINVAL);
	CHECK_OK(accel_stream_create(NULL, 0, 0, &dead));
	CHECK_OK(accel_stream_destroy(dead));
	CHECK_RET(accel_malloc_async(dead, &a, 64), -ENOENT);
	CHECK_RET(accel_malloc_async((accel_stream_t)t_ctxs[0], &a, 64),
		  -EINVAL);

	CHECK_OK(accel_malloc_async(s, &a, 1000));
	CHECK_OK(accel_malloc(NULL, &m, 4096));
	CHECK_OK(accel_host_alloc(NULL, (void **)&h, 4096, 0));
	CHECK_RET(accel_free_async(s, NULL), -EINVAL);
	CHECK_RET(accel_free_async(s, m), -EINVAL);
	CHECK_RET(accel_free_async(s, h), -EINVAL);
	CHECK_RET(accel_free_async(s, stack), -ENOENT);
	CHECK_RET(accel_free_async(s, (char *)a + 256), -EINVAL);
	CHECK_RET(accel_free_async(dead, a), -ENOENT);
	/* Another kind's free leaves the block allocated. */
	CHECK_RET(accel_host_free(a), -EINVAL);
	CHECK_RET(accel_host_unregister(a, 0), -EINVAL);
	CHECK_OK(accel_mem_pool_get_usage(NULL, &res, &used));
	CHECK(used == 1024);
	CHECK_OK(accel_free_async(s, a));
	CHECK_RET(accel_free_async(s, a), -ENOENT);
	CHECK_RET(accel_free(a), -ENOENT);
	/* Never handed out: the rest of the chunk. */
	CHECK_RET(accel_free_async(s, (char *)a + 4096), -ENOENT);
	CHECK_RET(accel_free_async(dead, m), -ENOENT);

	CHECK_RET(accel_mem_pool_get_usage(NULL, NULL, &used), -EINVAL);
	CHECK_RET(accel_mem_pool_get_usage(NULL, &res, NULL), -EINVAL);
	CHECK_RET(accel_mem_pool_get_usage((accel_context *)(uintptr_t)s,
					   &res, &used), -EINVAL);
	CHECK_RET(accel_mem_pool_trim_to((accel_context *)(uintptr_t)s, 0),
		  -EINVAL);
	CHECK_RET(accel_mem_pool_set_release_threshold(
			(accel_context *)(uintptr_t)s, 0), -EINVAL);
	return T_PASS;
}

/* Calls on a destroyed context, or with none alive. */
static int errnos_no_context(void)
{
	accel_context *ctx;
	size_t res, used;
	void *a;

	CHECK_OK(accel_context_create(&ctx, 0));
	CHECK_OK(accel_context_destroy(ctx));
	CHECK_RET(accel_mem_pool_get_usage(ctx, &res, &used), -ENOENT);
	CHECK_RET(accel_mem_pool_trim_to(ctx, 0), -ENOENT);
	CHECK_RET(accel_mem_pool_set_release_threshold(ctx, 0), -ENOENT);
	CHECK_RET(accel_mem_pool_get_usage(NULL, &res, &used), -ENODEV);
	CHECK_RET(accel_mem_pool_trim_to(NULL, 0), -ENODEV);
	CHECK_RET(accel_mem_pool_set_release_threshold(NULL, 0), -ENODEV);
	CHECK_RET(accel_malloc_async(ACCEL_STREAM_DEFAULT, &a, 64), -ENODEV);
	CHECK_RET(accel_free_async(ACCEL_STREAM_DEFAULT, &res), -ENODEV);
	return T_PASS;
}

/* Bytes survive H2D into one block, D2D to another and D2H back. */
static int roundtrip(void)
{
	unsigned char *h, *out;
	accel_stream_t s;
	void *a, *b;
	size_t n = 300000;

	CHECK_OK(t_stream(&s));
	CHECK_OK(accel_host_alloc(NULL, (void **)&h, n, 0));
	CHECK_OK(accel_host_alloc(NULL, (void **)&out, n, 0));
	CHECK_OK(accel_malloc_async(s, &a, n));
	CHECK_OK(accel_malloc_async(s, &b, n));
	CHECK(a != b);
	CHECK(((uintptr_t)a & 255) == 0 && ((uintptr_t)b & 255) == 0);
	t_fill(h, n, 7);
	CHECK_OK(accel_memcpy_async(s, a, h, n, ACCEL_MEMCPY_H2D));
	CHECK_OK(accel_memcpy_async(s, b, a, n, ACCEL_MEMCPY_DEFAULT));
	CHECK_OK(accel_free_async(s, a));
	CHECK_OK(accel_memcpy_async(s, out, b, n, ACCEL_MEMCPY_D2H));
	CHECK_OK(accel_free_async(s, b));
	CHECK_OK(accel_stream_synchronize(s, ACCEL_TIMEOUT_INFINITE));
	CHECK(t_check_fill(out, n, 7));
	return T_PASS;
}

/* A pointer freed on a stream is refused by later copies: -EFAULT. */
static int use_after_free_efault(void)
{
	unsigned char *h;
	accel_stream_t s;
	void *a, *b;

	CHECK_OK(t_stream(&s));
	CHECK_OK(accel_host_alloc(NULL, (void **)&h, 4096, 0));
	CHECK_OK(accel_malloc_async(s, &a, 100));
	CHECK_OK(accel_malloc_async(s, &b, 4096));
	/* Past the 100 bytes asked for (the block is 256). */
	CHECK_RET(accel_memcpy_async(s, a, h, 200, ACCEL_MEMCPY_H2D), -EINVAL);
	CHECK_RET(accel_memcpy_async(s, (char *)a + 50, h, 51,
				     ACCEL_MEMCPY_H2D), -EINVAL);
	CHECK_OK(accel_memcpy_async(s, (char *)a + 50, h, 50,
				    ACCEL_MEMCPY_H2D));
	/* In the block's rounding, past the 100 bytes: no copy's. */
	CHECK_RET(accel_memcpy_async(s, (char *)a + 200, h, 8,
				     ACCEL_MEMCPY_H2D), -EINVAL);
	CHECK_RET(accel_memcpy_async(s, h, (char *)a + 100, 1,
				     ACCEL_MEMCPY_D2H), -EINVAL);
	CHECK_OK(accel_free_async(s, a));
	CHECK_RET(accel_memcpy_async(s, a, h, 64, ACCEL_MEMCPY_H2D), -EFAULT);
	CHECK(strstr(accel_last_error_string(), "freed"));
	CHECK_RET(accel_memcpy_async(s, h, a, 64, ACCEL_MEMCPY_D2H), -EFAULT);
	CHECK_RET(accel_memcpy_async(s, b, a, 64, ACCEL_MEMCPY_D2D), -EFAULT);
	/* Fills, 2D and peer copies refuse it the same way. */
	CHECK_RET(accel_memset_async(s, a, 0, 64), -EFAULT);
	CHECK_RET(accel_memcpy_2d_async(s, b, 64, a, 64, 32, 2,
					ACCEL_MEMCPY_D2D), -EFAULT);
	CHECK_RET(accel_memcpy_peer_async(s, b, 0, a, 0, 64), -EFAULT);
	/* Never handed out: past the last block. */
	CHECK_RET(accel_memcpy_async(s, (char *)b + 8192, h, 64,
				     ACCEL_MEMCPY_H2D), -EFAULT);
	CHECK_OK(accel_stream_synchronize(s, ACCEL_TIMEOUT_INFINITE));
	CHECK_OK(accel_free_async(s, b));
	CHECK_RET(accel_memcpy_async(s, h, b, 64, ACCEL_MEMCPY_DEFAULT),
		  -EFAULT);
	return T_PASS;
}

/* The freeing stream takes the block back at once, nothing retired. */
static int same_stream_reuse_at_once(void)
{
	accel_event_t gate;
	unsigned char *h;
	accel_stream_t s;
	void *a, *b;

	CHECK_OK(t_stream(&s));
	CHECK_OK(accel_host_alloc(NULL, (void **)&h, 4096, 0));
	CHECK_OK(t_gate(s, &gate));
	CHECK_OK(accel_malloc_async(s, &a, CHUNK));
	CHECK_OK(accel_memcpy_async(s, a, h, 4096, ACCEL_MEMCPY_H2D));
	CHECK_OK(accel_free_async(s, a));
	CHECK_OK(accel_malloc_async(s, &b, CHUNK));
	CHECK(b == a);
	CHECK_OK(t_gate_open(gate));
	CHECK_OK(accel_stream_synchronize(s, ACCEL_TIMEOUT_INFINITE));
	return T_PASS;
}

/*
 * The lifetime promise: a block a queued D2H on another stream still reads
 * is not handed to the freeing stream; the bytes that D2H delivers are the
 * old owner's, not what the new allocation's writer put there. The
 * reading stream itself may take it (its new work is after its D2H), and
 * once the D2H retired anyone may.
 */
static int other_stream_waits_for_retire(void)
{
	accel_stream_t s1, s2;
	accel_event_t gate;
	unsigned char *h, *out;
	void *a, *b, *c;

	CHECK_OK(two_streams(&s1, &s2));
	CHECK_OK(accel_host_alloc(NULL, (void **)&h, CHUNK, 0));
	CHECK_OK(accel_host_alloc(NULL, (void **)&out, CHUNK, 0));
	CHECK_OK(accel_malloc_async(s1, &a, CHUNK));
	t_fill(h, CHUNK, 1);
	CHECK_OK(accel_memcpy_async(s1, a, h, CHUNK, ACCEL_MEMCPY_H2D));
	CHECK_OK(accel_stream_synchronize(s1, ACCEL_TIMEOUT_INFINITE));
	/* s2 reads a, behind a gate; s1 frees a and allocates again. */
	CHECK_OK(t_gate(s2, &gate));
	CHECK_OK(accel_memcpy_async(s2, out, a, CHUNK, ACCEL_MEMCPY_D2H));
	CHECK_OK(accel_free_async(s1, a));
	CHECK_OK(accel_malloc_async(s1, &b, CHUNK));
	CHECK(b != a);
	t_fill(h, CHUNK, 2);
	CHECK_OK(accel_memcpy_async(s1, b, h, CHUNK, ACCEL_MEMCPY_H2D));
	CHECK_OK(accel_stream_synchronize(s1, ACCEL_TIMEOUT_INFINITE));
	/* The free on s1 retired; what is left is s2's own D2H. */
	CHECK_OK(accel_malloc_async(s2, &c, CHUNK));
	CHECK(c == a);
	CHECK_OK(accel_memcpy_async(s2, c, h, CHUNK, ACCEL_MEMCPY_H2D));
	CHECK_OK(t_gate_open(gate));
	CHECK_OK(accel_stream_synchronize(s2, ACCEL_TIMEOUT_INFINITE));
	CHECK(t_check_fill(out, CHUNK, 1));
	/* Every point retired: s1 gets a back. */
	CHECK_OK(accel_free_async(s2, c));
	CHECK_OK(accel_stream_synchronize(s2, ACCEL_TIMEOUT_INFINITE));
	CHECK_OK(accel_malloc_async(s1, &c, CHUNK));
	CHECK(c == a);
	return T_PASS;
}

/* Another stream gets a block only once the free's stream passed it. */
static int other_stream_after_free_retired(void)
{
	accel_stream_t s1, s2;
	accel_event_t gate;
	void *a, *b, *c;

	CHECK_OK(two_streams(&s1, &s2));
	CHECK_OK(t_gate(s1, &gate));
	CHECK_OK(accel_malloc_async(s1, &a, CHUNK));
	CHECK_OK(accel_free_async(s1, a));
	CHECK_OK(accel_malloc_async(s2, &b, CHUNK));
	CHECK(b != a);
	CHECK_OK(accel_free_async(s2, b));
	CHECK_OK(t_gate_open(gate));
	CHECK_OK(accel_stream_synchronize(s1, ACCEL_TIMEOUT_INFINITE));
	/* b is s2's at once; a, freed on s1, retired: s2 may take it too. */
	CHECK_OK(accel_malloc_async(s2, &c, CHUNK));
	CHECK(c == b);
	CHECK_OK(accel_malloc_async(s2, &c, CHUNK));
	CHECK(c == a);
	return T_PASS;
}

/* accel_free() of an async block: reused once every copy naming it retired. */
static int accel_free_of_async_block(void)
{
	accel_stream_t s1, s2;
	accel_event_t gate;
	void *a, *b;

	CHECK_OK(two_streams(&s1, &s2));
	CHECK_OK(block_read_by_gated_copy(s1, s2, &gate, &a));
	CHECK_OK(accel_free(a));
	CHECK_RET(accel_free(a), -ENOENT);
	CHECK_RET(accel_free_async(s1, a), -ENOENT);
	CHECK_OK(accel_malloc_async(s1, &b, CHUNK));
	CHECK(b != a);
	/* Not even s2, whose own copy it is: accel_free() is no stream's. */
	CHECK_OK(t_gate_open(gate));
	CHECK_OK(accel_stream_synchronize(s2, ACCEL_TIMEOUT_INFINITE));
	CHECK_OK(accel_malloc_async(s1, &b, CHUNK));
	CHECK(b == a);
	return T_PASS;
}

/*
 * A stream destroyed with a copy of a freed block still queued: the block
 * waits for that copy, which still runs.
 */
static int destroyed_stream_keeps_block(void)
{
	accel_stream_t s1, s2;
	accel_event_t gate, end;
	void *a, *b;

	CHECK_OK(two_streams(&s1, &s2));
	CHECK_OK(accel_event_create(NULL, 0, &end));
	CHECK_OK(block_read_by_gated_copy(s1, s2, &gate, &a));
	CHECK_OK(accel_event_record(end, s2));
	CHECK_OK(accel_free_async(s1, a));
	CHECK_OK(accel_stream_destroy(s2));
	CHECK_OK(accel_malloc_async(s1, &b, CHUNK));
	CHECK(b != a);
	CHECK_OK(t_gate_open(gate));
	CHECK_OK(accel_event_synchronize(end, ACCEL_TIMEOUT_INFINITE));
	CHECK_OK(accel_malloc_async(s1, &b, CHUNK));
	CHECK(b == a);
	return T_PASS;
}

/* Threshold 0 (the default): idle chunks go back at a synchronization. */
static int threshold_and_trim(void)
{
	size_t res, used;
	accel_stream_t s;
	void *a, *b;

	CHECK_OK(t_stream(&s));
	CHECK_OK(accel_mem_pool_get_usage(NULL, &res, &used));
	CHECK(res == 0 && used == 0);
	CHECK_OK(accel_malloc_async(s, &a, 1000000));
	CHECK_OK(accel_malloc_async(s, &b, 3 * CHUNK));
	CHECK_OK(accel_mem_pool_get_usage(NULL, &res, &used));
	CHECK(res == 4 * (size_t)CHUNK);
	CHECK(used == 1000192 + 3 * (size_t)CHUNK);
	/* Allocated memory stays, whatever the threshold. */
	CHECK_OK(accel_stream_synchronize(s, ACCEL_TIMEOUT_INFINITE));
	CHECK_OK(accel_mem_pool_trim_to(NULL, 0));
	CHECK_OK(accel_mem_pool_get_usage(NULL, &res, &used));
	CHECK(res == 4 * (size_t)CHUNK);
	CHECK_OK(accel_free_async(s, b));
	CHECK_OK(accel_stream_synchronize(s, ACCEL_TIMEOUT_INFINITE));
	CHECK_OK(accel_mem_pool_get_usage(NULL, &res, &used));
	CHECK(res == CHUNK && used == 1000192);
	CHECK_OK(accel_free_async(s, a));
	CHECK_OK(accel_stream_synchronize(s, ACCEL_TIMEOUT_INFINITE));
	CHECK_OK(accel_mem_pool_get_usage(NULL, &res, &used));
	CHECK(res == 0 && used == 0);

	/* A threshold keeps that much across synchronizations. */
	CHECK_OK(accel_mem_pool_set_release_threshold(NULL, CHUNK));
	CHECK_OK(accel_malloc_async(s, &a, CHUNK));
	CHECK_OK(accel_malloc_async(s, &b, CHUNK));
	CHECK_OK(accel_free_async(s, a));
	CHECK_OK(accel_free_async(s, b));
	CHECK_OK(accel_stream_synchronize(s, ACCEL_TIMEOUT_INFINITE));
	CHECK_OK(accel_mem_pool_get_usage(NULL, &res, &used));
	CHECK(res == CHUNK && used == 0);
	CHECK_OK(accel_mem_pool_trim_to(NULL, CHUNK));
	CHECK_OK(accel_mem_pool_get_usage(NULL, &res, &used));
	CHECK(res == CHUNK);
	CHECK_OK(accel_mem_pool_trim_to(NULL, 0));
	CHECK_OK(accel_mem_pool_get_usage(NULL, &res, &used));
	CHECK(res == 0);
	return T_PASS;
}

/* A trim leaves memory whose free has not retired. */
static int trim_keeps_pending(void)
{
	accel_event_t gate;
	size_t res, used;
	accel_stream_t s;
	void *a;

	CHECK_OK(t_stream(&s));
	CHECK_OK(t_gate(s, &gate));
	CHECK_OK(accel_malloc_async(s, &a, 4096));
	CHECK_OK(accel_free_async(s, a));
	CHECK_OK(accel_mem_pool_trim_to(NULL, 0));
	CHECK_OK(accel_mem_pool_get_usage(NULL, &res, &used));
	CHECK(res == CHUNK && used == 0);
	CHECK_OK(t_gate_open(gate));
	CHECK_OK(accel_stream_synchronize(s, ACCEL_TIMEOUT_INFINITE));
	CHECK_OK(accel_mem_pool_get_usage(NULL, &res, &used));
	CHECK(res == 0);
	return T_PASS;
}

/* Bound: a queue of allocate/use/free on one stream reuses one chunk. */
static int bounded_by_reuse(void)
{
	accel_event_t gate;
	size_t res, used;
	unsigned char *h;
	accel_stream_t s;
	void *a;
	int i;

	CHECK_OK(t_stream(&s));
	CHECK_OK(accel_host_alloc(NULL, (void **)&h, 65536, 0));
	CHECK_OK(t_gate(s, &gate));
	for (i = 0; i < 200; i++) {
		CHECK_OK(accel_malloc_async(s, &a, 65536 + i));
		CHECK_OK(accel_memcpy_async(s, a, h, 65536, ACCEL_MEMCPY_H2D));
		CHECK_OK(accel_free_async(s, a));
	}
	CHECK_OK(accel_mem_pool_get_usage(NULL, &res, &used));
	CHECK(res == CHUNK && used == 0);
	CHECK_OK(t_gate_open(gate));
	CHECK_OK(accel_stream_synchronize(s, ACCEL_TIMEOUT_INFINITE));
	return T_PASS;
}

/*
 * A context whose device memory limit is 16 MiB: the inproc transport's
 * ACCEL_INPROC_MAX_DEVICE_MB, or the module's max_device_mb parameter
 * (read when a context opens), set around the creation only.
 */
#define SMALL_MB	16
#define MAX_DEVICE_MB	"/sys/module/accelstream/parameters/max_device_mb"

static accel_context *small_ctx(void)
{
	char old[32] = "";
	accel_context *ctx;
	FILE *f;

	setenv("ACCEL_INPROC_MAX_DEVICE_MB", "16", 1);
	f = fopen(MAX_DEVICE_MB, "r");
	if (f) {
		if (!fgets(old, sizeof(old), f))
			old[0] = 0;
		fclose(f);
		f = fopen(MAX_DEVICE_MB, "w");
		if (f) {
			fprintf(f, "%d\n", SMALL_MB);
			fclose(f);
		}
	}
	ctx = t_ctx();
	unsetenv("ACCEL_INPROC_MAX_DEVICE_MB");
	if (old[0]) {
		f = fopen(MAX_DEVICE_MB, "w");
		if (f) {
			fputs(old, f);
			fclose(f);
		}
	}
	return ctx;
}

/* The device memory limit: idle chunks go back before -ENOMEM. */
static int enomem_gives_back_idle(void)
{
	const size_t limit = (size_t)SMALL_MB << 20;
	struct accel_device_prop p;
	size_t res, used;
	accel_stream_t s;
	void *a, *m;

	CHECK(small_ctx());
	CHECK_OK(accel_device_get_properties(NULL, &p));
	/* The cuda backend's memory is the GPU's, not the transport's. */
	if (strcmp(p.backend, "cpu") || p.total_mem != limit)
		return T_SKIP;
	CHECK_OK(accel_stream_create(NULL, 0, 0, &s));
	CHECK_OK(accel_mem_pool_set_release_threshold(NULL, UINT64_MAX));
	CHECK_OK(accel_malloc_async(s, &a, limit - CHUNK));
	CHECK_RET(accel_malloc_async(s, &m, 2 * CHUNK), -ENOMEM);
	CHECK(strstr(accel_last_error_string(), "pool"));
	CHECK_OK(accel_free_async(s, a));
	CHECK_OK(accel_stream_synchronize(s, ACCEL_TIMEOUT_INFINITE));
	CHECK_OK(accel_mem_pool_get_usage(NULL, &res, &used));
	CHECK(res == limit - CHUNK && used == 0);
	/* accel_malloc() gets what the pool kept idle, and so does the pool. */
	CHECK_OK(accel_malloc(NULL, &m, 2 * CHUNK));
	CHECK_OK(accel_mem_pool_get_usage(NULL, &res, &used));
	CHECK(res == 0);
	CHECK_OK(accel_malloc_async(s, &a, limit - 3 * CHUNK));
	CHECK_OK(accel_free_async(s, a));
	CHECK_OK(accel_free(m));
	CHECK_OK(accel_malloc_async(s, &a, limit - CHUNK));
	return T_PASS;
}

/* A failed stream allocates and frees nothing: -EIO, the block stays. */
static int failed_stream_eio(void)
{
	accel_stream_t s, ok;
	accel_event_t gate;
	size_t res, used;
	void *a;

	CHECK(t_ctx());
	CHECK_OK(accel_stream_create(NULL, 0, 0, &ok));
	CHECK_OK(accel_malloc_async(ok, &a, 4096));
	CHECK_OK(accel_stream_create(NULL, 0, 0, &s));
	CHECK_OK(t_gate(s, &gate));
	CHECK_OK(accel_event_signal(gate, 1, ACCEL_EVENT_SIGNAL_ERROR));
	CHECK_RET(accel_stream_synchronize(s, ACCEL_TIMEOUT_INFINITE), -EIO);
	CHECK_RET(accel_malloc_async(s, &a, 64), -EIO);
	CHECK_RET(accel_free_async(s, a), -EIO);
	CHECK_OK(accel_mem_pool_get_usage(NULL, &res, &used));
	CHECK(used == 4096);
	CHECK_OK(accel_free(a));
	return T_PASS;
}

static const struct t_case cases[] = {
	T(errnos),
	T(errnos_no_context),
	T(roundtrip),
	T(use_after_free_efault),
	T(same_stream_reuse_at_once),
	T(other_stream_waits_for_retire),
	T(other_stream_after_free_retired),
	T(accel_free_of_async_block),
	T(destroyed_stream_keeps_block),
	T(threshold_and_trim),
	T(trim_keeps_pending),
	T(bounded_by_reuse),
	T(enomem_gives_back_idle),
	T(failed_stream_eio),
};

int main(void)
{
	return t_run(cases, sizeof(cases) / sizeof(cases[0]));
}
