// SPDX-License-Identifier: GPL-2.0
/*
 * accelstream: the MEMSET and COPY_2D descriptors. Byte-exact fills of
 * 8, 16 and 32-bit elements and 2D copies across pages, the bytes around
 * them untouched, and every errno ACCEL_IOC_SUBMIT gives them (with the
 * output pre-filled with 0xcc and left alone on error).
 */
#include "kselftest_harness.h"
#include "accel_helpers.h"

ACCEL_FIXTURE(fill2d);

static struct accel_desc d_memset(uint32_t dst, uint64_t off, uint64_t len,
				  uint32_t flags, uint64_t value)
{
	return (struct accel_desc){
		.op = ACCEL_OP_MEMSET, .flags = flags, .dst = dst,
		.dst_offset = off, .length = len, .value = value,
	};
}

static struct accel_desc d_2d(uint32_t dst, uint64_t doff, uint32_t dpitch,
			      uint32_t src, uint64_t soff, uint32_t spitch,
			      uint64_t width, uint64_t height)
{
	return (struct accel_desc){
		.op = ACCEL_OP_COPY_2D, .dst = dst, .src = src,
		.dst_offset = doff, .src_offset = soff, .width = width,
		.height = height, .dst_pitch = dpitch, .src_pitch = spitch,
	};
}

/* Submit one descriptor; the seq out field starts as 0xcc bytes. */
static int submit_cc(int fd, uint32_t stream, struct accel_desc d,
		     uint64_t *seq)
{
	struct accel_submit s;
	int ret;

	memset(&s, 0xcc, sizeof(s));
	s.stream = stream;
	s.count = 1;
	s.descs = (uintptr_t)&d;
	s.flags = 0;
	s.pad = 0;
	ret = ioctl(fd, ACCEL_IOC_SUBMIT, &s) ? -errno : 0;
	*seq = s.seq;
	return ret;
}

#define SEQ_CC	0xccccccccccccccccULL

TEST_F(fill2d, capability)
{
	EXPECT_NE(0ULL, self->info.caps & ACCEL_CAP_MEMSET_2D);
}

TEST_F(fill2d, memset_widths_exact)
{
	const size_t n = 4 * 4096;
	uint8_t *buf = anon_map(n);
	uint16_t v16;
	uint32_t h, s, v32;
	uint64_t seq;
	size_t i;

	ASSERT_NE(NULL, buf);
	memset(buf, 0xa5, n);
	ASSERT_EQ(0, accel_register(self->fd, buf, n, 0, &h));
	ASSERT_EQ(0, accel_stream(self->fd, 0, 0, &s));
	/* Bytes across a page, halfwords and words across the next ones. */
	ASSERT_EQ(0, submit_cc(self->fd, s, d_memset(h, 4090, 13, 0, 0x3c), &seq));
	EXPECT_EQ(1ULL, seq);
	ASSERT_EQ(0, accel_submit1(self->fd, s,
				   d_memset(h, 8190, 6, ACCEL_MEMSET_D16, 0xbeef),
				   NULL));
	ASSERT_EQ(0, accel_submit1(self->fd, s,
				   d_memset(h, 12284, 16, ACCEL_MEMSET_D32,
					    0x01020304), NULL));
	ASSERT_EQ(0, accel_drain(self->fd, s));
	for (i = 0; i < n; i++) {
		if (i >= 4090 && i < 4103) {
			EXPECT_EQ(0x3c, buf[i]);
		} else if (i >= 8190 && i < 8196) {
			memcpy(&v16, buf + i - (i - 8190) % 2, 2);
			EXPECT_EQ(0xbeef, v16);
		} else if (i >= 12284 && i < 12300) {
			memcpy(&v32, buf + i - (i - 12284) % 4, 4);
			EXPECT_EQ(0x01020304u, v32);
		} else if (buf[i] != 0xa5) {
			EXPECT_EQ(0xa5, buf[i]) {
				TH_LOG("byte %zu outside the fills changed", i);
			}
			break;
		}
	}
	EXPECT_EQ(0, accel_release(self->fd, h, 0));
	munmap(buf, n);
}

/* Device memory filled, then read back: only the filled bytes change. */
TEST_F(fill2d, memset_device)
{
	const size_t n = 3 * 4096;
	uint8_t *buf = anon_map(n);
	uint32_t h, dv, s;

	REQUIRE_CAP(ACCEL_CAP_DEVICE_MEM);
	ASSERT_NE(NULL, buf);
	memset(buf, 0xa5, n);
	ASSERT_EQ(0, accel_register(self->fd, buf, n, 0, &h));
	ASSERT_EQ(0, accel_alloc(self->fd, n, ACCEL_MEM_DEVICE, &dv, NULL));
	ASSERT_EQ(0, accel_stream(self->fd, 0, 0, &s));
	ASSERT_EQ(0, accel_submit1(self->fd, s, d_memset(dv, 0, n, 0, 0x11), NULL));
	ASSERT_EQ(0, accel_submit1(self->fd, s, d_memset(dv, 100, 8000, 0, 0x77),
				   NULL));
	ASSERT_EQ(0, accel_submit1(self->fd, s, d_copy(h, 0, dv, 0, n), NULL));
	ASSERT_EQ(0, accel_drain(self->fd, s));
	EXPECT_TRUE(all_bytes(buf, 100, 0x11));
	EXPECT_TRUE(all_bytes(buf + 100, 8000, 0x77));
	EXPECT_TRUE(all_bytes(buf + 8100, n - 8100, 0x11));
	munmap(buf, n);
}

TEST_F(fill2d, copy_2d_exact)
{
	const size_t n = 5 * 4096, w = 1500, height = 7;
	const uint32_t spitch = 2001, dpitch = 1601, hpitch = 1777;
	uint8_t *src = anon_map(n), *dst = anon_map(n);
	uint32_t hs, hd, dv, s;
	size_t i, row;

	REQUIRE_CAP(ACCEL_CAP_DEVICE_MEM);
	ASSERT_NE(NULL, src);
	ASSERT_NE(NULL, dst);
	fill_random(src, n, 5);
	memset(dst, 0xa5, n);
	ASSERT_EQ(0, accel_register(self->fd, src, n, ACCEL_MEM_READONLY, &hs));
	ASSERT_EQ(0, accel_register(self->fd, dst, n, 0, &hd));
	ASSERT_EQ(0, accel_alloc(self->fd, n, ACCEL_MEM_DEVICE, &dv, NULL));
	ASSERT_EQ(0, accel_stream(self->fd, 0, 0, &s));
	/* Host -> device at one pitch, device -> host at another. */
	ASSERT_EQ(0, accel_submit1(self->fd, s,
				   d_2d(dv, 3, dpitch, hs, 7, spitch, w, height),
				   NULL));
	ASSERT_EQ(0, accel_submit1(self->fd, s,
				   d_2d(hd, 9, hpitch, dv, 3, dpitch, w, height),
				   NULL));
	ASSERT_EQ(0, accel_drain(self->fd, s));
	for (i = 0; i < n; i++) {
		uint8_t want = 0xa5;

		row = (i - 9) / hpitch;
		if (i >= 9 && row < height && (i - 9) % hpitch < w)
			want = src[7 + row * spitch + (i - 9) % hpitch];
		if (dst[i] != want) {
			EXPECT_EQ(want, dst[i]) {
				TH_LOG("byte %zu", i);
			}
			break;
		}
	}
	munmap(src, n);
	munmap(dst, n);
}

TEST_F(fill2d, errnos)
{
	const size_t n = 2 * 4096;
	uint8_t *buf = anon_map(n + 4096), *ro = anon_map(4096);
	uint32_t h, hodd, hro, s, ev;
	struct accel_desc d;
	uint64_t seq;
	struct gate g;

	ASSERT_NE(NULL, buf);
	ASSERT_NE(NULL, ro);
	memset(buf, 0xa5, n + 4096);
	memset(ro, 0xa5, 4096);
	ASSERT_EQ(0, accel_register(self->fd, buf, n, 0, &h));
	/* A range at an odd address: offset 1 is the even address. */
	ASSERT_EQ(0, accel_register(self->fd, buf + n + 1, 4000, 0, &hodd));
	ASSERT_EQ(0, accel_register(self->fd, ro, 4096, ACCEL_MEM_READONLY, &hro));
	ASSERT_EQ(0, accel_stream(self->fd, 0, 0, &s));
	ASSERT_EQ(0, accel_event(self->fd, 0, &ev));

	/* Shape: element size flags, value width, length, unused fields. */
	EXPECT_EQ(-EINVAL, submit_cc(self->fd, s, d_memset(h, 0, 8,
			ACCEL_MEMSET_D16 | ACCEL_MEMSET_D32, 0), &seq));
	EXPECT_EQ(SEQ_CC, seq);
	EXPECT_EQ(-EINVAL, submit_cc(self->fd, s, d_memset(h, 0, 8, 4, 0), &seq));
	EXPECT_EQ(-EINVAL, submit_cc(self->fd, s, d_memset(h, 0, 8, 0, 0x100), &seq));
	EXPECT_EQ(-EINVAL, submit_cc(self->fd, s,
			d_memset(h, 0, 8, ACCEL_MEMSET_D16, 0x10000), &seq));
	EXPECT_EQ(-EINVAL, submit_cc(self->fd, s,
			d_memset(h, 0, 8, ACCEL_MEMSET_D32, 1ULL << 32), &seq));
	EXPECT_EQ(-EINVAL, submit_cc(self->fd, s,
			d_memset(h, 0, 6, ACCEL_MEMSET_D32, 0), &seq));
	EXPECT_EQ(-EINVAL, submit_cc(self->fd, s,
			d_memset(h, 2, 8, ACCEL_MEMSET_D32, 0), &seq));
	EXPECT_EQ(-EINVAL, submit_cc(self->fd, s,
			d_memset(hodd, 0, 8, ACCEL_MEMSET_D16, 0), &seq));
	d = d_memset(h, 0, 8, 0, 0);
	d.src = h;
	EXPECT_EQ(-EINVAL, submit_cc(self->fd, s, d, &seq));
	d = d_memset(h, 0, 8, 0, 0);
	d.src_offset = 1;
	EXPECT_EQ(-EINVAL, submit_cc(self->fd, s, d, &seq));
	d = d_memset(h, 0, 8, 0, 0);
	d.event = ev;
	EXPECT_EQ(-EINVAL, submit_cc(self->fd, s, d, &seq));
	d = d_memset(h, 0, 8, 0, 0);
	d.reserved = 1;
	EXPECT_EQ(-EINVAL, submit_cc(self->fd, s, d, &seq));
	EXPECT_EQ(-EINVAL, submit_cc(self->fd, s, d_memset(0, 0, 8, 0, 0), &seq));
	/* Bounds, with overflow. */
	EXPECT_EQ(-EINVAL, submit_cc(self->fd, s, d_memset(h, n - 7, 8, 0, 0), &seq));
	EXPECT_EQ(-EINVAL, submit_cc(self->fd, s, d_memset(h, ~0ULL - 3, 8, 0, 0),
				     &seq));
	EXPECT_EQ(SEQ_CC, seq);
	/* The odd range's offset 1 is an even address: fine. */
	EXPECT_EQ(0, submit_cc(self->fd, s,
			d_memset(hodd, 1, 8, ACCEL_MEMSET_D16, 0x0102), &seq));
	EXPECT_EQ(1ULL, seq);

	/* COPY_2D: pitches below the width, rows out of bounds, overflow. */
	EXPECT_EQ(-EINVAL, submit_cc(self->fd, s, d_2d(h, 0, 15, h, 4096, 16, 16, 2),
				     &seq));
	EXPECT_EQ(-EINVAL, submit_cc(self->fd, s, d_2d(h, 0, 16, h, 4096, 15, 16, 2),
				     &seq));
	d = d_2d(h, 0, 16, h, 4096, 16, 16, 2);
	d.flags = ACCEL_MEMSET_D16;
	EXPECT_EQ(-EINVAL, submit_cc(self->fd, s, d, &seq));
	EXPECT_EQ(-EINVAL, submit_cc(self->fd, s, d_2d(0, 0, 16, h, 0, 16, 16, 2),
				     &seq));
	EXPECT_EQ(-EINVAL, submit_cc(self->fd, s, d_2d(h, 0, 16, 0, 0, 16, 16, 2),
				     &seq));
	/* Last row ends one byte past the region, on either side. */
	EXPECT_EQ(-EINVAL, submit_cc(self->fd, s,
			d_2d(h, n - 16 * 3 - 15, 16, h, 0, 16, 16, 4), &seq));
	EXPECT_EQ(-EINVAL, submit_cc(self->fd, s,
			d_2d(h, 0, 16, h, n - 16 * 3 - 15, 16, 16, 4), &seq));
	EXPECT_EQ(-EINVAL, submit_cc(self->fd, s,
			d_2d(h, 0, 4096, h, 0, 4096, 16, 1ULL << 60), &seq));
	EXPECT_EQ(-EINVAL, submit_cc(self->fd, s,
			d_2d(h, ~0ULL, 16, h, 0, 16, 16, 1), &seq));
	EXPECT_EQ(SEQ_CC, seq);
	/* The last row may end on the last byte. */
	EXPECT_EQ(0, submit_cc(self->fd, s,
			d_2d(h, n - 16 * 3 - 16, 16, h, 0, 16, 16, 4), &seq));
	EXPECT_EQ(2ULL, seq);

	/* Unknown regions, read-only destinations. */
	EXPECT_EQ(-ENOENT, submit_cc(self->fd, s, d_memset(BAD_HANDLE, 0, 8, 0, 0),
				     &seq));
	EXPECT_EQ(-ENOENT, submit_cc(self->fd, s,
			d_2d(h, 0, 16, BAD_HANDLE, 0, 16, 16, 1), &seq));
	EXPECT_EQ(-EPERM, submit_cc(self->fd, s, d_memset(hro, 0, 8, 0, 0), &seq));
	EXPECT_EQ(-EPERM, submit_cc(self->fd, s, d_2d(hro, 0, 16, h, 0, 16, 16, 1),
				    &seq));
	EXPECT_EQ(SEQ_CC, seq);
	ASSERT_EQ(0, accel_drain(self->fd, s));
	EXPECT_TRUE(all_bytes(ro, 4096, 0xa5));

	/* A failed stream takes neither. */
	ASSERT_EQ(0, gate_init(self->fd, &g));
	ASSERT_EQ(0, accel_submit1(self->fd, s, d_host_wait(g.event, 1), NULL));
	ASSERT_EQ(0, accel_signal(self->fd, g.event, ACCEL_SIGNAL_ERROR, 1));
	ASSERT_EQ(-EIO, accel_drain(self->fd, s));
	EXPECT_EQ(-EIO, submit_cc(self->fd, s, d_memset(h, 0, 8, 0, 0), &seq));
	EXPECT_EQ(-EIO, submit_cc(self->fd, s, d_2d(h, 0, 16, h, 32, 16, 16, 1),
				  &seq));
	EXPECT_EQ(SEQ_CC, seq);
	munmap(buf, n + 4096);
	munmap(ro, 4096);
}

/* External memory is the executor's: none attached, none of it is named. */
TEST_F(fill2d, external_without_executor)
{
	uint8_t *buf = anon_map(4096);
	uint32_t h, ext, s;
	uint64_t seq;

	REQUIRE_CAP(ACCEL_CAP_EXECUTOR);
	ASSERT_NE(NULL, buf);
	ASSERT_EQ(0, accel_register(self->fd, buf, 4096, 0, &h));
	ASSERT_EQ(0, accel_register(self->fd, (void *)(uintptr_t)0x7f0000000000ULL,
				    1 << 20, ACCEL_MEM_EXTERNAL, &ext));
	ASSERT_EQ(0, accel_stream(self->fd, 0, 0, &s));
	EXPECT_EQ(-ENXIO, submit_cc(self->fd, s, d_memset(ext, 0, 64, 0, 1), &seq));
	EXPECT_EQ(-ENXIO, submit_cc(self->fd, s, d_2d(h, 0, 64, ext, 0, 64, 64, 4),
				    &seq));
	EXPECT_EQ(-ENXIO, submit_cc(self->fd, s, d_2d(ext, 0, 64, h, 0, 64, 64, 4),
				    &seq));
	EXPECT_EQ(SEQ_CC, seq);
	munmap(buf, 4096);
}

ACCEL_HARNESS_MAIN
