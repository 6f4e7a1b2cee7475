// SPDX-License-Identifier: MIT
/* Pageable (unregistered) memory: staged, so the caller may free it. */
#include "helpers.h"

/* A stream, device and pinned memory (t_copy_setup()) and a gate. */
struct gated_copy {
	accel_stream_t s;
	accel_event_t gate;
	unsigned char *pinned;
	void *d;
};

/*
 * The start of both tests: t_copy_setup() of @n bytes, then the H2D copy
 * of @src (the pinned memory when NULL), filled with t_fill(@seed), into
 * the device memory, queued behind a new gate (t_gated_h2d()).
 */
static int gated_copy_in(struct gated_copy *c, size_t n, unsigned char *src,
			 unsigned int seed)
{
	int ret = t_copy_setup(n, &c->s, &c->d, &c->pinned);

	if (!ret)
		ret = t_gated_h2d(c->s, c->d, src ? src : c->pinned, n, seed,
				  &c->gate);
	return ret;
}

/* Bug report: a pageable source freed right after enqueue delivers. */
static int pageable_source_freed_after_enqueue(void)
{
	const size_t n = 300000;
	struct gated_copy c;
	unsigned char *src;

	CHECK((src = malloc(n)));
	CHECK_OK(gated_copy_in(&c, n, src, 11));
	memset(src, 0, n);
	free(src);
	CHECK_OK(accel_memcpy_async(c.s, c.pinned, c.d, n, ACCEL_MEMCPY_D2H));
	CHECK_OK(t_gate_drain(c.s, c.gate, ACCEL_TIMEOUT_INFINITE));
	CHECK(t_check_fill(c.pinned, n, 11));
	return T_PASS;
}

static int pageable_destination(void)
{
	const size_t n = 70000;
	struct gated_copy c;
	unsigned char *dst;

	CHECK((dst = calloc(1, n)));
	CHECK_OK(gated_copy_in(&c, n, NULL, 12));
	CHECK_OK(accel_memcpy_async(c.s, dst, c.d, n, ACCEL_MEMCPY_D2H));
	CHECK(dst[1] == 0);	/* nothing copied out while gated */
	CHECK_OK(t_gate_drain(c.s, c.gate, ACCEL_TIMEOUT_INFINITE));
	CHECK(t_check_fill(dst, n, 12));
	free(dst);
	return T_PASS;
}

static int pageable_to_pageable(void)
{
	const size_t n = 5000;
	unsigned char *a, *b;

	CHECK(t_ctx());
	a = malloc(n);
	b = calloc(1, n);
	CHECK(a && b);
	t_fill(a, n, 13);
	CHECK_OK(accel_memcpy_async(ACCEL_STREAM_DEFAULT, b, a, n,
				    ACCEL_MEMCPY_H2H));
	free(a);
	CHECK_OK(accel_stream_synchronize(ACCEL_STREAM_DEFAULT,
					  ACCEL_TIMEOUT_INFINITE));
	CHECK(t_check_fill(b, n, 13));
	free(b);
	return T_PASS;
}

static int many_staged_copies(void)
{
	unsigned char *out;
	accel_stream_t s;
	unsigned char *d;
	int i;

	CHECK_OK(t_stream(&s));
	CHECK_OK(accel_malloc(NULL, (void **)&d, 1000));
	CHECK_OK(accel_host_alloc(NULL, (void **)&out, 1000, 0));
	for (i = 0; i < 1000; i++) {
		unsigned char v = (unsigned char)(i * 3);

		CHECK_OK(accel_memcpy_async(s, d + i, &v, 1, ACCEL_MEMCPY_H2D));
	}
	CHECK_OK(accel_memcpy_async(s, out, d, 1000, ACCEL_MEMCPY_D2H));
	CHECK_OK(accel_stream_synchronize(s, ACCEL_TIMEOUT_INFINITE));
	for (i = 0; i < 1000; i++)
		CHECK(out[i] == (unsigned char)(i * 3));
	return T_PASS;
}

T_MAIN(T(pageable_source_freed_after_enqueue), T(pageable_destination),
       T(pageable_to_pageable), T(many_staged_copies))
