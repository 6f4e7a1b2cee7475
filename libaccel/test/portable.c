// SPDX-License-Identifier: MIT
/*
 * Portable pinned memory (ACCEL_HOST_ALLOC_PORTABLE, cudaHostAllocPortable):
 * a copy in another context than the owner's is asynchronous (read when it
 * runs, not staged at enqueue), and the lifetime promise holds there too:
 * the owner's free or destroy with that context's copies queued leaves
 * them their bytes.
 */
#include <stdbool.h>

#include "helpers.h"

#define N	(256 * 1024)

static int on_cpu_backend(void)
{
	const char *name = "";

	if (accel_context_get_backend(NULL, &name) || strcmp(name, "cpu")) {
		printf("# the %s backend stages copies of another context's memory\n",
		       name);
		return 0;
	}
	return 1;
}

static int staged(void)
{
	return strstr(accel_last_error_string(), "staged") != NULL;
}

static int flags(void)
{
	void *p;

	CHECK(t_ctx());
	CHECK_RET(accel_host_alloc(NULL, &p, 4096, 0x2), -EINVAL);
	CHECK_RET(accel_host_alloc(NULL, &p, 4096,
				   ACCEL_HOST_ALLOC_PORTABLE | 0x100), -EINVAL);
	CHECK_OK(accel_host_alloc(NULL, &p, 4096, ACCEL_HOST_ALLOC_PORTABLE));
	CHECK_OK(accel_host_free(p));
	return T_PASS;
}

/*
 * Context b copies from context a's memory while its stream is gated, and
 * the source changes before the gate opens: portable memory is read when
 * the copy runs (the new bytes arrive), memory of a's alone is staged at
 * enqueue (the old bytes arrive).
 */
static int read_when_run(unsigned int flag, unsigned int want_seed)
{
	accel_context *a, *b;
	unsigned char *src, *out;
	accel_event_t gate;
	accel_stream_t s;
	void *dev;

	a = t_ctx();
	CHECK(a);
	CHECK_OK(accel_host_alloc(a, (void **)&src, N, flag));
	b = t_ctx();
	CHECK(b);
	if (!on_cpu_backend())
		return T_SKIP;
	CHECK_OK(accel_stream_create(b, 0, 0, &s));
	CHECK_OK(accel_malloc(b, &dev, N));
	CHECK_OK(accel_host_alloc(b, (void **)&out, N, 0));
	t_fill(src, N, 1);
	CHECK_OK(t_gate(s, &gate));
	CHECK_OK(accel_memcpy_async(s, dev, src, N, ACCEL_MEMCPY_H2D));
	CHECK(staged() == !flag);
	CHECK_OK(accel_memcpy_async(s, out, dev, N, ACCEL_MEMCPY_D2H));
	t_fill(src, N, 2);
	CHECK_OK(t_gate_open(gate));
	CHECK_OK(accel_stream_synchronize(s, ACCEL_TIMEOUT_INFINITE));
	CHECK(t_check_fill(out, N, want_seed));
	return T_PASS;
}

static int async_in_other_context(void)
{
	return read_when_run(ACCEL_HOST_ALLOC_PORTABLE, 2);
}

static int not_portable_is_staged(void)
{
	return read_when_run(0, 1);
}

/* A copy from another context into portable memory lands there. */
static int written_from_other_context(void)
{
	accel_context *a, *b;
	unsigned char *in, *dst;
	accel_stream_t s;
	void *dev;

	a = t_ctx();
	CHECK(a);
	CHECK_OK(accel_host_alloc(a, (void **)&dst, N,
				  ACCEL_HOST_ALLOC_PORTABLE));
	memset(dst, 0, N);
	b = t_ctx();
	CHECK(b);
	if (!on_cpu_backend())
		return T_SKIP;
	CHECK_OK(accel_stream_create(b, 0, 0, &s));
	CHECK_OK(accel_malloc(b, &dev, N));
	CHECK_OK(accel_host_alloc(b, (void **)&in, N, 0));
	t_fill(in, N, 5);
	CHECK_OK(accel_memcpy_async(s, dev, in, N, ACCEL_MEMCPY_H2D));
	CHECK_OK(accel_memcpy_async(s, dst, dev, N, ACCEL_MEMCPY_D2H));
	CHECK(!staged());
	CHECK_OK(accel_stream_synchronize(s, ACCEL_TIMEOUT_INFINITE));
	CHECK(t_check_fill(dst, N, 5));
	/* The import is not the user's registration to drop. */
	CHECK_RET(accel_host_unregister(dst, 0), -EINVAL);
	CHECK_OK(accel_host_free(dst));
	return T_PASS;
}

/*
 * The lifetime promise in the importing context: the owner frees the
 * memory (or is destroyed) while b's gated copy from it is queued; the
 * copy still reads the bytes it was given, and the import is gone after.
 */
static int survives_owner(bool destroy)
{
	accel_context *a, *b;
	unsigned char *src, *out;
	accel_event_t gate;
	accel_stream_t s;
	void *dev;

	a = t_ctx();
	CHECK(a);
	CHECK_OK(accel_host_alloc(a, (void **)&src, N,
				  ACCEL_HOST_ALLOC_PORTABLE));
	b = t_ctx();
	CHECK(b);
	if (!on_cpu_backend())
		return T_SKIP;
	CHECK_OK(accel_stream_create(b, 0, 0, &s));
	CHECK_OK(accel_malloc(b, &dev, N));
	CHECK_OK(accel_host_alloc(b, (void **)&out, N, 0));
	t_fill(src, N, 9);
	CHECK_OK(t_gate(s, &gate));
	CHECK_OK(accel_memcpy_async(s, dev, src, N, ACCEL_MEMCPY_H2D));
	CHECK(!staged());
	CHECK_OK(accel_memcpy_async(s, out, dev, N, ACCEL_MEMCPY_D2H));
	if (destroy)
		CHECK_OK(accel_context_destroy(a));
	else
		CHECK_OK(accel_host_free(src));
	CHECK_OK(t_gate_open(gate));
	CHECK_OK(accel_stream_synchronize(s, ACCEL_TIMEOUT_INFINITE));
	CHECK(t_check_fill(out, N, 9));
	/* Unmapped now: no stale import answers for the address. */
	CHECK_RET(accel_memcpy_async(s, dev, src, N, ACCEL_MEMCPY_H2D), -EFAULT);
	return T_PASS;
}

static int survives_owner_free(void)
{
	return survives_owner(false);
}

static int survives_owner_destroy(void)
{
	return survives_owner(true);
}

T_MAIN(T(flags), T(async_in_other_context), T(not_portable_is_staged),
       T(written_from_other_context), T(survives_owner_free),
       T(survives_owner_destroy))
