// SPDX-License-Identifier: MIT
/* accel_memcpy_async: kinds, pointer resolution, exact results. */
#include "helpers.h"

/* The CUDA tutorial: 100 floats, H2D, D2H into pinned memory, sync. */
static int pinned_result_exact(void)
{
	accel_stream_t s;
	float *h, *out;
	void *d;
	int i;

	CHECK_OK(t_stream(&s));
	CHECK_OK(accel_host_alloc(NULL, (void **)&h, 100 * sizeof(float), 0));
	CHECK_OK(accel_host_alloc(NULL, (void **)&out, 100 * sizeof(float), 0));
	CHECK_OK(accel_malloc(NULL, &d, 100 * sizeof(float)));
	for (i = 0; i < 100; i++)
		h[i] = (float)i;
	h[2] = 520.5f;
	CHECK_OK(accel_memcpy_async(s, d, h, 100 * sizeof(float),
				    ACCEL_MEMCPY_H2D));
	CHECK_OK(accel_memcpy_async(s, out, d, 100 * sizeof(float),
				    ACCEL_MEMCPY_D2H));
	CHECK_OK(accel_stream_synchronize(s, ACCEL_TIMEOUT_INFINITE));
	CHECK(out[2] == 520.5f);
	for (i = 0; i < 100; i++)
		CHECK(i == 2 || out[i] == (float)i);
	CHECK_OK(accel_free(d));
	CHECK_OK(accel_host_free(h));
	CHECK_OK(accel_host_free(out));
	CHECK_OK(accel_stream_destroy(s));
	return T_PASS;
}

static int all_kinds_round_trip(void)
{
	const size_t n = 3 * 4096 + 123;
	unsigned char *a, *b, *reg;
	void *d1, *d2;
	accel_stream_t s;

	CHECK_OK(t_stream(&s));
	CHECK_OK(accel_host_alloc(NULL, (void **)&a, n, 0));
	CHECK_OK(accel_host_alloc(NULL, (void **)&b, n, 0));
	reg = malloc(n);
	CHECK(reg);
	CHECK_OK(accel_host_register(NULL, reg, n, 0));
	CHECK_OK(accel_malloc(NULL, &d1, n));
	CHECK_OK(accel_malloc(NULL, &d2, n));
	t_fill(a, n, 1);
	CHECK_OK(accel_memcpy_async(s, d1, a, n, ACCEL_MEMCPY_H2D));
	CHECK_OK(accel_memcpy_async(s, d2, d1, n, ACCEL_MEMCPY_D2D));
	CHECK_OK(accel_memcpy_async(s, reg, d2, n, ACCEL_MEMCPY_D2H));
	CHECK_OK(accel_memcpy_async(s, b, reg, n, ACCEL_MEMCPY_H2H));
	CHECK_OK(accel_stream_synchronize(s, ACCEL_TIMEOUT_INFINITE));
	CHECK(t_check_fill(reg, n, 1));
	CHECK(t_check_fill(b, n, 1));
	CHECK_OK(accel_host_unregister(reg, 0));
	free(reg);
	return T_PASS;
}

static int default_kind_inferred(void)
{
	const size_t n = 8192;
	unsigned char *a, *b;
	void *d;

	CHECK(t_ctx());
	CHECK_OK(accel_host_alloc(NULL, (void **)&a, n, 0));
	CHECK_OK(accel_host_alloc(NULL, (void **)&b, n, 0));
	CHECK_OK(accel_malloc(NULL, &d, n));
	t_fill(a, n, 2);
	CHECK_OK(accel_memcpy_async(ACCEL_STREAM_DEFAULT, d, a, n,
				    ACCEL_MEMCPY_DEFAULT));
	CHECK_OK(accel_memcpy_async(ACCEL_STREAM_DEFAULT, b, d, n,
				    ACCEL_MEMCPY_DEFAULT));
	CHECK_OK(accel_stream_synchronize(ACCEL_STREAM_DEFAULT,
					  ACCEL_TIMEOUT_INFINITE));
	CHECK(t_check_fill(b, n, 2));
	return T_PASS;
}

static int offsets_inside_allocations(void)
{
	const size_t n = 65536;
	unsigned char *a, *b;
	unsigned char *d;
	accel_stream_t s;

	CHECK_OK(t_stream(&s));
	CHECK_OK(accel_host_alloc(NULL, (void **)&a, n, 0));
	CHECK_OK(accel_host_alloc(NULL, (void **)&b, n, 0));
	CHECK_OK(accel_malloc(NULL, (void **)&d, n));
	t_fill(a, n, 3);
	/* Two halves, swapped on the device, through interior pointers. */
	CHECK_OK(accel_memcpy_async(s, d + n / 2, a, n / 2, ACCEL_MEMCPY_H2D));
	CHECK_OK(accel_memcpy_async(s, d, a + n / 2, n / 2, ACCEL_MEMCPY_H2D));
	CHECK_OK(accel_memcpy_async(s, b + n / 2, d, n / 2, ACCEL_MEMCPY_D2H));
	CHECK_OK(accel_memcpy_async(s, b, d + n / 2, n / 2, ACCEL_MEMCPY_D2H));
	CHECK_OK(accel_stream_synchronize(s, ACCEL_TIMEOUT_INFINITE));
	CHECK(memcmp(a, b, n) == 0);
	return T_PASS;
}

/*
 * A pointer one past the end of an allocation reaches no memory: every
 * allocation's mapping (a host allocation's view, a device pointer's
 * reserved range) is followed by a guard page of its own, so a copy to
 * or from there is -EFAULT and the allocation keeps its bytes. (Without
 * the guard, the next mapping could be the transport's own view of the
 * same memory, or the cuda backend's completion words.)
 */
static int one_past_the_end(void)
{
	const size_t n = 65536, k = 64;
	unsigned char *a, *h, *back, *d;
	const char *backend = NULL;
	accel_stream_t s;
	bool dev_guard;

	CHECK_OK(t_stream(&s));
	CHECK_OK(accel_context_get_backend(NULL, &backend));
	CHECK_OK(accel_host_alloc(NULL, (void **)&a, n, 0));
	CHECK_OK(accel_host_alloc(NULL, (void **)&h, n, 0));
	CHECK_OK(accel_host_alloc(NULL, (void **)&back, n, 0));
	CHECK_OK(accel_malloc(NULL, (void **)&d, n));
	t_fill(a, n, 5);
	t_fill(h, n, 6);
	CHECK_OK(accel_memcpy_async(s, d, h, n, ACCEL_MEMCPY_H2D));
	CHECK_OK(accel_stream_synchronize(s, ACCEL_TIMEOUT_INFINITE));
	t_fill(h, n, 7);

	/*
	 * Device pointers are libaccel's reservations with the cpu backend;
	 * with cuda they are CUDA's (d + n may be another allocation, and the
	 * stand-in libcudart's are the test's own heap).
	 */
	dev_guard = !strcmp(backend, "cpu");
	/* Into a + n, d + n: refused, the allocations keep their bytes. */
	CHECK_RET(accel_memcpy_async(s, a + n, h, k, ACCEL_MEMCPY_DEFAULT),
		  -EFAULT);
	if (dev_guard)
		CHECK_RET(accel_memcpy_async(s, d + n, h, k,
					     ACCEL_MEMCPY_DEFAULT), -EFAULT);
	accel_stream_synchronize(s, ACCEL_TIMEOUT_INFINITE);
	CHECK(t_check_fill(a, n, 5));
	CHECK_OK(accel_stream_create(NULL, 0, 0, &s));
	CHECK_OK(accel_memcpy_async(s, back, d, n, ACCEL_MEMCPY_D2H));
	CHECK_OK(accel_stream_synchronize(s, ACCEL_TIMEOUT_INFINITE));
	t_fill(h, n, 6);
	CHECK(!memcmp(back, h, n));

	/* From a + n, d + n: refused. */
	CHECK_RET(accel_memcpy_async(s, back, a + n, k, ACCEL_MEMCPY_DEFAULT),
		  -EFAULT);
	if (dev_guard)
		CHECK_RET(accel_memcpy_async(s, back, d + n, k,
					     ACCEL_MEMCPY_DEFAULT), -EFAULT);
	CHECK_OK(accel_stream_synchronize(s, ACCEL_TIMEOUT_INFINITE));
	return T_PASS;
}

static int in_order_per_stream(void)
{
	unsigned char *h, *out;
	unsigned char *d;
	accel_stream_t s;
	int i;

	CHECK_OK(t_stream(&s));
	CHECK_OK(accel_host_alloc(NULL, (void **)&h, 256, 0));
	CHECK_OK(accel_host_alloc(NULL, (void **)&out, 1, 0));
	CHECK_OK(accel_malloc(NULL, (void **)&d, 1));
	for (i = 0; i < 256; i++)
		h[i] = (unsigned char)i;
	/* 256 copies into one byte: the last one queued must win. */
	for (i = 0; i < 256; i++)
		CHECK_OK(accel_memcpy_async(s, d, h + i, 1, ACCEL_MEMCPY_H2D));
	CHECK_OK(accel_memcpy_async(s, out, d, 1, ACCEL_MEMCPY_D2H));
	CHECK_OK(accel_stream_synchronize(s, ACCEL_TIMEOUT_INFINITE));
	CHECK(out[0] == 255);
	return T_PASS;
}

static int large_copy(void)
{
	const size_t n = 16 << 20;
	unsigned char *a, *b;
	void *d;
	accel_stream_t s;

	CHECK_OK(t_stream(&s));
	CHECK_OK(accel_host_alloc(NULL, (void **)&a, n, 0));
	CHECK_OK(accel_host_alloc(NULL, (void **)&b, n, 0));
	CHECK_OK(accel_malloc(NULL, &d, n));
	t_fill(a, n, 4);
	CHECK_OK(accel_memcpy_async(s, d, a, n, ACCEL_MEMCPY_H2D));
	CHECK_OK(accel_memcpy_async(s, b, d, n, ACCEL_MEMCPY_D2H));
	CHECK_OK(accel_stream_synchronize(s, ACCEL_TIMEOUT_INFINITE));
	CHECK(t_check_fill(b, n, 4));
	return T_PASS;
}

static int errnos(void)
{
	unsigned char *h, *ro;
	unsigned char *d;
	accel_stream_t s;

	CHECK_OK(t_stream(&s));
	CHECK_OK(accel_host_alloc(NULL, (void **)&h, 4096, 0));
	CHECK_OK(accel_malloc(NULL, (void **)&d, 4096));
	/* NULL pointers and unknown kinds. */
	CHECK_RET(accel_memcpy_async(s, NULL, h, 1, ACCEL_MEMCPY_H2D), -EINVAL);
	CHECK_RET(accel_memcpy_async(s, d, NULL, 1, ACCEL_MEMCPY_H2D), -EINVAL);
	CHECK_RET(accel_memcpy_async(s, d, h, 1, (enum accel_memcpy_kind)9),
		  -EINVAL);
	/* Kinds that contradict the pointers. */
	CHECK_RET(accel_memcpy_async(s, h, d, 1, ACCEL_MEMCPY_H2D), -EINVAL);
	CHECK_RET(accel_memcpy_async(s, d, h, 1, ACCEL_MEMCPY_D2H), -EINVAL);
	CHECK_RET(accel_memcpy_async(s, d, h, 1, ACCEL_MEMCPY_D2D), -EINVAL);
	CHECK_RET(accel_memcpy_async(s, d, h, 1, ACCEL_MEMCPY_H2H), -EINVAL);
	/* Past the end of a device allocation or a pinned buffer. */
	CHECK_RET(accel_memcpy_async(s, d + 1, h, 4096, ACCEL_MEMCPY_H2D),
		  -EINVAL);
	CHECK_RET(accel_memcpy_async(s, d, h + 1, 4096, ACCEL_MEMCPY_H2D),
		  -EINVAL);
	/* Wrapping ranges. */
	CHECK_RET(accel_memcpy_async(s, d, h, (size_t)-1, ACCEL_MEMCPY_H2D),
		  -EINVAL);
	/* Zero bytes: nothing to do, success. */
	CHECK_OK(accel_memcpy_async(s, d, h, 0, ACCEL_MEMCPY_H2D));
	/* Into a read-only registration: the driver refuses. */
	ro = aligned_alloc(4096, 4096);
	CHECK(ro);
	CHECK_OK(accel_host_register(NULL, ro, 4096,
				     ACCEL_HOST_REGISTER_READONLY));
	CHECK_RET(accel_memcpy_async(s, ro, d, 16, ACCEL_MEMCPY_D2H), -EPERM);
	CHECK_OK(accel_memcpy_async(s, d, ro, 16, ACCEL_MEMCPY_H2D));
	CHECK_OK(accel_stream_synchronize(s, ACCEL_TIMEOUT_INFINITE));
	CHECK_OK(accel_host_unregister(ro, 0));
	free(ro);
	return T_PASS;
}

/* accel_memcpy_batch_async: in order, dependent copies included, errnos. */
static int batch(void)
{
	unsigned char *h, *out, *d, pageable[64];
	void *dsts[65];
	const void *srcs[65];
	size_t sizes[65];
	accel_stream_t s;
	int i;

	CHECK_OK(t_stream(&s));
	CHECK_OK(accel_host_alloc(NULL, (void **)&h, 64 * 16, 0));
	CHECK_OK(accel_host_alloc(NULL, (void **)&out, 64 * 16 + 1, 0));
	CHECK_OK(accel_malloc(NULL, (void **)&d, 64 * 16 + 1));
	for (i = 0; i < 64 * 16; i++)
		h[i] = (unsigned char)(i * 7);
	/* 64 independent copies, then one that reads what they wrote. */
	for (i = 0; i < 64; i++) {
		dsts[i] = d + i * 16;
		srcs[i] = h + i * 16;
		sizes[i] = 16;
	}
	dsts[64] = d + 64 * 16;
	srcs[64] = d + 5 * 16 + 3;
	sizes[64] = 1;
	CHECK_OK(accel_memcpy_batch_async(s, dsts, srcs, sizes, 64,
					  ACCEL_MEMCPY_H2D));
	CHECK_OK(accel_memcpy_batch_async(s, dsts + 64, srcs + 64, sizes + 64,
					  1, ACCEL_MEMCPY_D2D));
	CHECK_OK(accel_memcpy_async(s, out, d, 64 * 16 + 1, ACCEL_MEMCPY_D2H));
	CHECK_OK(accel_stream_synchronize(s, ACCEL_TIMEOUT_INFINITE));
	CHECK(!memcmp(out, h, 64 * 16));
	CHECK(out[64 * 16] == h[5 * 16 + 3]);
	/* Mixed with a pageable source: staged, same result. */
	memset(pageable, 0x5a, sizeof(pageable));
	srcs[0] = pageable;
	sizes[0] = sizeof(pageable);
	CHECK_OK(accel_memcpy_batch_async(s, dsts, srcs, sizes, 2,
					  ACCEL_MEMCPY_DEFAULT));
	memset(pageable, 0, sizeof(pageable));
	CHECK_OK(accel_memcpy_async(s, out, d, 64, ACCEL_MEMCPY_D2H));
	CHECK_OK(accel_stream_synchronize(s, ACCEL_TIMEOUT_INFINITE));
	for (i = 0; i < 64; i++)
		CHECK(out[i] == (i >= 16 && i < 32 ? h[i] : 0x5a));
	CHECK_RET(accel_memcpy_batch_async(s, NULL, srcs, sizes, 1,
					   ACCEL_MEMCPY_H2D), -EINVAL);
	CHECK_RET(accel_memcpy_batch_async(s, dsts, srcs, sizes, 1,
					   ACCEL_MEMCPY_D2H), -EINVAL);
	CHECK_OK(accel_memcpy_batch_async(s, dsts, srcs, sizes, 0,
					  ACCEL_MEMCPY_H2D));
	/*
	 * A pageable batch with a bad copy last: refused whole, the good
	 * copies before it not queued either.
	 */
	memset(out, 0, 64);
	CHECK_OK(accel_memcpy_async(s, d, out, 64, ACCEL_MEMCPY_H2D));
	memset(pageable, 0x77, sizeof(pageable));
	for (i = 0; i < 3; i++) {
		dsts[i] = d + i * 16;
		srcs[i] = pageable;
		sizes[i] = 16;
	}
	srcs[2] = (void *)0x1000;
	CHECK_RET(accel_memcpy_batch_async(s, dsts, srcs, sizes, 3,
					   ACCEL_MEMCPY_H2D), -EFAULT);
	CHECK_OK(accel_memcpy_async(s, out, d, 64, ACCEL_MEMCPY_D2H));
	CHECK_OK(accel_stream_synchronize(s, ACCEL_TIMEOUT_INFINITE));
	for (i = 0; i < 64; i++)
		CHECK(out[i] == 0);
	return T_PASS;
}

T_MAIN(T(pinned_result_exact), T(all_kinds_round_trip),
       T(default_kind_inferred), T(offsets_inside_allocations),
       T(one_past_the_end),
       T(in_order_per_stream), T(large_copy), T(errnos), T(batch))
