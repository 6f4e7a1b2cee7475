// SPDX-License-Identifier: MIT
/*
 * Fills (accel_memset_async and its 16 and 32-bit forms) and 2D copies
 * (accel_memcpy_2d_async): exact bytes written, the bytes just outside the
 * written area untouched, stream order with copies, and every errno the
 * calls document.
 */
#include <stdbool.h>
#include <stdint.h>

#include "helpers.h"

#define GUARD	0xcc

static unsigned char *pinned(size_t n)
{
	void *p = NULL;

	if (accel_host_alloc(NULL, &p, n, 0))
		return NULL;
	memset(p, GUARD, n);
	return p;
}

/* Device memory of @n bytes holding t_fill(@seed), through @stage. */
static int dev_filled(accel_stream_t s, size_t n, unsigned int seed,
		      unsigned char *stage, void **dev)
{
	int ret = accel_malloc(NULL, dev, n);

	if (ret)
		return ret;
	t_fill(stage, n, seed);
	ret = accel_memcpy_async(s, *dev, stage, n, ACCEL_MEMCPY_H2D);
	if (!ret)
		ret = accel_stream_synchronize(s, 60 * T_SEC);
	return ret;
}

/* Bytes [@from, @to) of @b against t_fill(@seed); -1 when all match. */
static long first_fill_mismatch(const unsigned char *b, size_t from, size_t to,
				unsigned int seed)
{
	size_t i;

	for (i = from; i < to; i++)
		if (b[i] != (unsigned char)(seed * 131 + i * 7 + (i >> 8)))
			return (long)i;
	return -1;
}

static int memset_device_exact(void)
{
	const size_t n = 3 * 4096 + 100, off = 4093, len = 4096 + 9;
	unsigned char *h;
	accel_stream_t s;
	void *d;
	size_t i;

	CHECK_OK(t_stream(&s));
	CHECK((h = pinned(n)));
	CHECK_OK(dev_filled(s, n, 3, h, &d));
	memset(h, GUARD, n);
	/* In stream order between two copies; the int is taken as a byte. */
	CHECK_OK(accel_memset_async(s, (char *)d + off, 0x15a, len));
	CHECK_OK(accel_memcpy_async(s, h, d, n, ACCEL_MEMCPY_D2H));
	CHECK_OK(accel_stream_synchronize(s, 60 * T_SEC));
	CHECK(first_fill_mismatch(h, 0, off, 3) == -1);
	for (i = off; i < off + len; i++)
		CHECK(h[i] == 0x5a);
	CHECK(first_fill_mismatch(h, off + len, n, 3) == -1);
	CHECK_OK(accel_free(d));
	CHECK_OK(accel_host_free(h));
	return T_PASS;
}

static int memset_d16_d32_device(void)
{
	const size_t n = 8192;
	unsigned char *h;
	accel_stream_t s;
	uint16_t v16;
	uint32_t v32;
	void *d;
	size_t i;

	CHECK_OK(t_stream(&s));
	CHECK((h = pinned(n)));
	CHECK_OK(dev_filled(s, n, 5, h, &d));
	memset(h, GUARD, n);
	/* 1001 halfwords from byte 2, then 700 words from byte 4096 - 8. */
	CHECK_OK(accel_memset_d16_async(s, (char *)d + 2, 0xbeef, 1001));
	CHECK_OK(accel_memset_d32_async(s, (char *)d + 4088, 0x01020304, 700));
	CHECK_OK(accel_memcpy_async(s, h, d, n, ACCEL_MEMCPY_D2H));
	CHECK_OK(accel_stream_synchronize(s, 60 * T_SEC));
	CHECK(first_fill_mismatch(h, 0, 2, 5) == -1);
	for (i = 0; i < 1001; i++) {
		memcpy(&v16, h + 2 + 2 * i, 2);
		CHECK(v16 == 0xbeef);
	}
	CHECK(first_fill_mismatch(h, 2 + 2002, 4088, 5) == -1);
	for (i = 0; i < 700; i++) {
		memcpy(&v32, h + 4088 + 4 * i, 4);
		CHECK(v32 == 0x01020304);
	}
	CHECK(first_fill_mismatch(h, 4088 + 2800, n, 5) == -1);
	CHECK_OK(accel_free(d));
	CHECK_OK(accel_host_free(h));
	return T_PASS;
}

/*
 * Pinned host memory, and a registered range at an odd address: a 16-bit
 * fill is judged by the address of its first element, not its offset.
 */
static int memset_host_pinned_and_registered(void)
{
	const size_t n = 3 * 4096;
	unsigned char *h, *raw;
	accel_stream_t s;
	uint16_t v;
	size_t i;

	CHECK_OK(t_stream(&s));
	CHECK((h = pinned(n)));
	CHECK_OK(accel_memset_async(s, h + 1, 0, n - 2));
	CHECK_OK(accel_stream_synchronize(s, 10 * T_SEC));
	CHECK(h[0] == GUARD && h[n - 1] == GUARD);
	for (i = 1; i < n - 1; i++)
		CHECK(h[i] == 0);
	CHECK_OK(accel_host_free(h));

	CHECK((raw = aligned_alloc(4096, n)));
	memset(raw, GUARD, n);
	CHECK_OK(accel_host_register(NULL, raw + 1, n - 1, 0));
	CHECK_RET(accel_memset_d16_async(s, raw + 3, 1, 4), -EINVAL);
	CHECK_OK(accel_memset_d16_async(s, raw + 4098, 0x7f01, 5));
	CHECK_OK(accel_stream_synchronize(s, 10 * T_SEC));
	for (i = 0; i < n; i++) {
		if (i >= 4098 && i < 4108)
			continue;
		CHECK(raw[i] == GUARD);
	}
	for (i = 0; i < 5; i++) {
		memcpy(&v, raw + 4098 + 2 * i, 2);
		CHECK(v == 0x7f01);
	}
	CHECK_OK(accel_host_unregister(raw + 1, 0));
	free(raw);
	return T_PASS;
}

/* The error tests: a stream, ERR_BYTES of pinned GUARD, as many of device. */
#define ERR_BYTES	8192

static int errors_setup(accel_stream_t *s, unsigned char **h, void **d)
{
	int ret = t_stream(s);

	if (!ret && !(*h = pinned(ERR_BYTES)))
		ret = -ENOMEM;
	if (!ret)
		ret = accel_malloc(NULL, d, ERR_BYTES);
	return ret;
}

/* Their end: no refused call touched @h; both buffers freed. */
static int errors_done(unsigned char *h, void *d)
{
	size_t i;

	for (i = 0; i < ERR_BYTES; i++)
		CHECK(h[i] == GUARD);
	CHECK_OK(accel_free(d));
	CHECK_OK(accel_host_free(h));
	return T_PASS;
}

/* A page of GUARD registered read-only. */
static unsigned char *ro_page(void)
{
	unsigned char *ro = aligned_alloc(4096, 4096);

	if (!ro)
		return NULL;
	memset(ro, GUARD, 4096);
	if (accel_host_register(NULL, ro, 4096, ACCEL_HOST_REGISTER_READONLY)) {
		free(ro);
		return NULL;
	}
	return ro;
}

/* Unregister and free it: true when nothing wrote into it. */
static bool ro_page_done(unsigned char *ro)
{
	bool intact = !accel_host_unregister(ro, 0);
	size_t i;

	for (i = 0; i < 4096; i++)
		intact = intact && ro[i] == GUARD;
	free(ro);
	return intact;
}

static int memset_errors(void)
{
	const size_t n = ERR_BYTES;
	unsigned char *h, *ro, pageable[64];
	accel_stream_t s;
	void *d;
	size_t i;

	CHECK_OK(errors_setup(&s, &h, &d));
	CHECK_RET(accel_memset_async(s, NULL, 1, 1), -EINVAL);
	CHECK_RET(accel_memset_d16_async(s, (char *)d + 1, 1, 1), -EINVAL);
	CHECK_RET(accel_memset_d32_async(s, (char *)d + 2, 1, 1), -EINVAL);
	CHECK_RET(accel_memset_async(s, h, 1, n + 1), -EINVAL);
	CHECK_RET(accel_memset_d32_async(s, h + 4, 1, n / 4), -EINVAL);
	CHECK_RET(accel_memset_d32_async(s, h, 1, SIZE_MAX / 2), -EINVAL);
	CHECK_RET(accel_memset_async(s, pageable, 1, sizeof(pageable)),
		  -EOPNOTSUPP);
	CHECK(strstr(accel_last_error_string(), "pageable"));
	CHECK_RET(accel_memset_async((accel_stream_t)(uintptr_t)0x7777777, h, 1,
				     1), -ENOENT);
	/* Nothing above touched the memory. */
	for (i = 0; i < n; i++)
		CHECK(h[i] == GUARD);

	CHECK((ro = ro_page()));
	CHECK_RET(accel_memset_async(s, ro, 0, 16), -EPERM);
	CHECK(ro_page_done(ro));

	/* A failed stream fails every later fill, one of 0 bytes too. */
	CHECK_RET(t_fail_stream(s), -EIO);
	CHECK_RET(accel_memset_async(s, h, 0, 0), -EIO);
	CHECK_RET(accel_memset_d16_async(s, h, 0, 4), -EIO);
	return errors_done(h, d);
}

/* @height rows of @w bytes of @img, @pitch apart, hold t_fill(@seed)'s rows
 * taken @spitch apart; the bytes between and around them are GUARD. */
static int check_2d(const unsigned char *img, size_t n, size_t off,
		    size_t pitch, size_t w, size_t height, size_t soff,
		    size_t spitch, unsigned int seed)
{
	size_t i, row, col;

	for (i = 0; i < n; i++) {
		unsigned char want = GUARD;

		if (i >= off && (i - off) / pitch < height &&
		    (i - off) % pitch < w) {
			row = (i - off) / pitch;
			col = (i - off) % pitch;
			size_t j = soff + row * spitch + col;

			want = (unsigned char)(seed * 131 + j * 7 + (j >> 8));
		}
		if (img[i] != want) {
			printf("# byte %zu: %#x, want %#x\n", i, img[i], want);
			return 0;
		}
	}
	return 1;
}

static int copy_2d_h2d_d2h_exact(void)
{
	/* Rows of 700 bytes, crossing pages on both sides. */
	const size_t w = 700, height = 9, spitch = 1001, dpitch = 768;
	const size_t hpitch = 703, n = 16384;
	unsigned char *src, *out;
	accel_stream_t s;
	void *d;

	CHECK_OK(t_stream(&s));
	CHECK((src = pinned(n)) && (out = pinned(n)));
	t_fill(src, n, 8);
	CHECK_OK(accel_malloc(NULL, &d, n));
	/* The device starts GUARD everywhere, so its gaps can be checked. */
	CHECK_OK(accel_memset_async(s, d, GUARD, n));
	CHECK_OK(accel_memcpy_2d_async(s, (char *)d + 5, dpitch, src + 3, spitch,
				       w, height, ACCEL_MEMCPY_H2D));
	CHECK_OK(accel_memcpy_async(s, out, d, n, ACCEL_MEMCPY_D2H));
	CHECK_OK(accel_stream_synchronize(s, 60 * T_SEC));
	CHECK(check_2d(out, n, 5, dpitch, w, height, 3, spitch, 8));

	/* Back out, to yet another pitch (DEFAULT infers D2H). */
	memset(out, GUARD, n);
	CHECK_OK(accel_memcpy_2d_async(s, out + 1, hpitch, (char *)d + 5, dpitch,
				       w, height, ACCEL_MEMCPY_DEFAULT));
	CHECK_OK(accel_stream_synchronize(s, 60 * T_SEC));
	CHECK(check_2d(out, n, 1, hpitch, w, height, 3, spitch, 8));
	CHECK_OK(accel_free(d));
	CHECK_OK(accel_host_free(src));
	CHECK_OK(accel_host_free(out));
	return T_PASS;
}

/* The last row may end on the region's last byte: the span, not height * pitch. */
static int copy_2d_span_to_the_end(void)
{
	const size_t w = 10, height = 4, pitch = 100;
	const size_t n = (height - 1) * pitch + w;
	unsigned char *src, *dst;
	accel_stream_t s;

	CHECK_OK(t_stream(&s));
	CHECK((src = pinned(4096)) && (dst = pinned(4096)));
	t_fill(src, 4096, 2);
	CHECK_OK(accel_memcpy_2d_async(s, dst + 4096 - n, pitch, src, pitch, w,
				       height, ACCEL_MEMCPY_H2H));
	CHECK_RET(accel_memcpy_2d_async(s, dst + 4096 - n + 1, pitch, src, pitch,
					w, height, ACCEL_MEMCPY_H2H), -EINVAL);
	CHECK_OK(accel_stream_synchronize(s, 10 * T_SEC));
	CHECK(check_2d(dst, 4096, 4096 - n, pitch, w, height, 0, pitch, 2));
	CHECK_OK(accel_host_free(src));
	CHECK_OK(accel_host_free(dst));
	return T_PASS;
}

/* The lifetime promise: a pinned source freed with the copy queued. */
static int copy_2d_source_freed_while_queued(void)
{
	const size_t n = 8192;
	unsigned char *src, *out;
	accel_event_t gate;
	accel_stream_t s;
	void *d;

	CHECK_OK(t_stream(&s));
	CHECK((src = pinned(n)) && (out = pinned(n)));
	t_fill(src, n, 6);
	CHECK_OK(accel_malloc(NULL, &d, n));
	CHECK_OK(accel_memset_async(s, d, GUARD, n));
	CHECK_OK(t_gate(s, &gate));
	CHECK_OK(accel_memcpy_2d_async(s, d, 64, src, 128, 60, 50,
				       ACCEL_MEMCPY_H2D));
	CHECK_OK(accel_host_free(src));
	CHECK_OK(t_gate_open(gate));
	CHECK_OK(accel_memcpy_async(s, out, d, n, ACCEL_MEMCPY_D2H));
	CHECK_OK(accel_stream_synchronize(s, 60 * T_SEC));
	CHECK(check_2d(out, n, 0, 64, 60, 50, 0, 128, 6));
	CHECK_OK(accel_free(d));
	CHECK_OK(accel_host_free(out));
	return T_PASS;
}

static int copy_2d_errors(void)
{
	const size_t n = ERR_BYTES;
	unsigned char *h, *ro, pageable[256];
	accel_stream_t s;
	void *d;
	size_t i;

	CHECK_OK(errors_setup(&s, &h, &d));
	CHECK_RET(accel_memcpy_2d_async(s, NULL, 8, h, 8, 8, 1,
					ACCEL_MEMCPY_H2D), -EINVAL);
	CHECK_RET(accel_memcpy_2d_async(s, d, 8, NULL, 8, 8, 1,
					ACCEL_MEMCPY_H2D), -EINVAL);
	CHECK_RET(accel_memcpy_2d_async(s, d, 8, h, 8, 8, 1,
					(enum accel_memcpy_kind)9), -EINVAL);
	CHECK_RET(accel_memcpy_2d_async(s, d, 8, h, 8, 8, 1,
					ACCEL_MEMCPY_D2H), -EINVAL);
	CHECK_RET(accel_memcpy_2d_async(s, d, 7, h, 8, 8, 1,
					ACCEL_MEMCPY_H2D), -EINVAL);
	CHECK_RET(accel_memcpy_2d_async(s, d, 8, h, 7, 8, 1,
					ACCEL_MEMCPY_H2D), -EINVAL);
	CHECK_RET(accel_memcpy_2d_async(s, d, (size_t)1 << 32, h, 8, 8, 1,
					ACCEL_MEMCPY_H2D), -EINVAL);
	/* One row too many, and a height whose span overflows. */
	CHECK_RET(accel_memcpy_2d_async(s, d, 1024, h, 1024, 1024, 9,
					ACCEL_MEMCPY_H2D), -EINVAL);
	CHECK_RET(accel_memcpy_2d_async(s, d, 1024, h, 1024, 16, SIZE_MAX,
					ACCEL_MEMCPY_H2D), -EINVAL);
	CHECK_RET(accel_memcpy_2d_async(s, d, 16, pageable, 16, 16, 4,
					ACCEL_MEMCPY_H2D), -EOPNOTSUPP);
	CHECK_RET(accel_memcpy_2d_async(s, pageable, 16, d, 16, 16, 4,
					ACCEL_MEMCPY_D2H), -EOPNOTSUPP);
	CHECK_RET(accel_memcpy_2d_async((accel_stream_t)(uintptr_t)0x7777777, h,
					8, h + 4096, 8, 8, 1,
					ACCEL_MEMCPY_H2H), -ENOENT);
	/* Empty areas do nothing. */
	CHECK_OK(accel_memcpy_2d_async(s, h, 8, h + 4096, 8, 0, 3,
				       ACCEL_MEMCPY_H2H));
	CHECK_OK(accel_memcpy_2d_async(s, h, 8, h + 4096, 8, 8, 0,
				       ACCEL_MEMCPY_H2H));
	CHECK_OK(accel_stream_synchronize(s, 10 * T_SEC));
	for (i = 0; i < n; i++)
		CHECK(h[i] == GUARD);

	CHECK((ro = ro_page()));
	CHECK_RET(accel_memcpy_2d_async(s, ro, 16, h, 16, 16, 2,
					ACCEL_MEMCPY_H2H), -EPERM);
	/* A read-only source is fine. */
	CHECK_OK(accel_memcpy_2d_async(s, h, 32, ro, 16, 16, 2,
				       ACCEL_MEMCPY_H2H));
	CHECK_OK(accel_stream_synchronize(s, 10 * T_SEC));
	CHECK(ro_page_done(ro));

	CHECK_RET(t_fail_stream(s), -EIO);
	CHECK_RET(accel_memcpy_2d_async(s, d, 16, h, 16, 16, 2,
					ACCEL_MEMCPY_H2D), -EIO);
	/* The read-only source's copy wrote its GUARD bytes into h. */
	return errors_done(h, d);
}

int main(void)
{
	static const struct t_case cases[] = {
		T(memset_device_exact),
		T(memset_d16_d32_device),
		T(memset_host_pinned_and_registered),
		T(memset_errors),
		T(copy_2d_h2d_d2h_exact),
		T(copy_2d_span_to_the_end),
		T(copy_2d_source_freed_while_queued),
		T(copy_2d_errors),
	};

	return t_run(cases, sizeof(cases) / sizeof(cases[0]));
}
