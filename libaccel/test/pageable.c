// SPDX-License-Identifier: MIT
/* Pageable (unregistered) memory: staged, so the caller may free it. */
#include "helpers.h"

/* Bug report: a pageable source freed right after enqueue delivers. */
static int pageable_source_freed_after_enqueue(void)
{
	const size_t n = 300000;
	unsigned char *src, *out;
	accel_stream_t s;
	accel_event_t gate;
	void *d;

	CHECK_OK(t_copy_setup(n, &s, &d, &out));
	CHECK((src = malloc(n)));
	CHECK_OK(t_gated_h2d(s, d, src, n, 11, &gate));
	memset(src, 0, n);
	free(src);
	CHECK_OK(accel_memcpy_async(s, out, d, n, ACCEL_MEMCPY_D2H));
	CHECK_OK(t_gate_open(gate));
	CHECK_OK(accel_stream_synchronize(s, ACCEL_TIMEOUT_INFINITE));
	CHECK(t_check_fill(out, n, 11));
	return T_PASS;
}

static int pageable_destination(void)
{
	const size_t n = 70000;
	unsigned char *h, *dst;
	accel_stream_t s;
	accel_event_t gate;
	void *d;

	CHECK_OK(t_copy_setup(n, &s, &d, &h));
	CHECK((dst = calloc(1, n)));
	CHECK_OK(t_gated_h2d(s, d, h, n, 12, &gate));
	CHECK_OK(accel_memcpy_async(s, dst, d, n, ACCEL_MEMCPY_D2H));
	CHECK(dst[1] == 0);	/* nothing copied out while gated */
	CHECK_OK(t_gate_open(gate));
	CHECK_OK(accel_stream_synchronize(s, ACCEL_TIMEOUT_INFINITE));
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
