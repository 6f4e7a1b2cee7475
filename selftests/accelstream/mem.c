// SPDX-License-Identifier: GPL-2.0
/*
 * accelstream: regions. ACCEL_IOC_MEM_REGISTER, ACCEL_IOC_MEM_ALLOC and
 * ACCEL_IOC_MEM_RELEASE, pinning limits, host allocations mapped with
 * mmap(2) and device memory.
 */
#define _GNU_SOURCE
#include <glob.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <linux/capability.h>

#include "kselftest_harness.h"
#include "accel_helpers.h"

ACCEL_FIXTURE(mem);

/* Drop @cap from every capability set of this (test) process. */
static int drop_cap(int cap)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct data[2];
	uint32_t bit = 1u << (cap % 32);

	if (syscall(SYS_capget, &hdr, data))
		return -errno;
	data[cap / 32].effective &= ~bit;
	data[cap / 32].permitted &= ~bit;
	data[cap / 32].inheritable &= ~bit;
	return syscall(SYS_capset, &hdr, data) ? -errno : 0;
}

TEST_F(mem, register_any_alignment)
{
	long ps = page_size();
	uint8_t *buf = anon_map(4 * ps);
	static const struct { long off; uint64_t size; } cases[] = {
		{ 0, 1 }, { 13, 5000 }, { 4095, 2 }, { 1, 1 }, { 7, 3 * 4096 - 8 },
	};
	uint32_t h[ARRAY_SIZE(cases)];
	size_t i, j;

	ASSERT_NE(NULL, buf);
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		uint8_t *a = buf + cases[i].off % ps;

		h[i] = 0;
		ASSERT_EQ(0, accel_register(self->fd, a, cases[i].size, 0, &h[i])) {
			TH_LOG("register +%ld size %llu", cases[i].off,
			       (unsigned long long)cases[i].size);
		}
		EXPECT_NE(0u, h[i]);
		for (j = 0; j < i; j++)
			EXPECT_NE(h[j], h[i]);
		ASSERT_EQ(0, accel_release(self->fd, h[i], 0));
	}
	munmap(buf, 4 * ps);
}

/* Handles are distinct, never 0, and not reused while the file is open. */
TEST_F(mem, handles_not_reused)
{
	long ps = page_size();
	uint8_t *buf = anon_map(ps);
	uint32_t seen[32];
	int i, j;

	ASSERT_NE(NULL, buf);
	for (i = 0; i < 32; i++) {
		ASSERT_EQ(0, accel_register(self->fd, buf, 64, 0, &seen[i]));
		EXPECT_NE(0u, seen[i]);
		for (j = 0; j < i; j++)
			EXPECT_NE(seen[j], seen[i]);
		ASSERT_EQ(0, accel_release(self->fd, seen[i], 0));
	}
	munmap(buf, ps);
}

/* @handle is output only: whatever it holds on input is overwritten. */
TEST_F(mem, register_output_prefilled)
{
	long ps = page_size();
	uint8_t *buf = anon_map(ps);
	struct accel_mem_register r;

	ASSERT_NE(NULL, buf);
	memset(&r, 0xcc, sizeof(r));
	r.addr = (uintptr_t)buf;
	r.size = 100;
	r.flags = 0;
	ASSERT_EQ(0, ioctl(self->fd, ACCEL_IOC_MEM_REGISTER, &r));
	EXPECT_NE(0u, r.handle);
	EXPECT_NE(0xccccccccu, r.handle);
	EXPECT_EQ((uintptr_t)buf, r.addr);
	EXPECT_EQ(100ULL, r.size);
	EXPECT_EQ(0u, r.flags);
	EXPECT_EQ(0, accel_release(self->fd, r.handle, 0));
	munmap(buf, ps);
}

TEST_F(mem, register_zero_size)
{
	long ps = page_size();
	uint8_t *buf = anon_map(ps);
	struct accel_mem_register r = { .addr = (uintptr_t)buf, .size = 0 };

	ASSERT_NE(NULL, buf);
	EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_MEM_REGISTER, &r));
	EXPECT_EQ(EINVAL, errno);
	munmap(buf, ps);
}

TEST_F(mem, register_wrap)
{
	struct accel_mem_register r = {
		.addr = ~0ULL - 4095, .size = 8192,
	};

	EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_MEM_REGISTER, &r));
	EXPECT_EQ(EINVAL, errno);

	r.addr = 4096;
	r.size = ~0ULL;
	EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_MEM_REGISTER, &r));
	EXPECT_EQ(EINVAL, errno);
}

TEST_F(mem, register_unknown_flags)
{
	long ps = page_size();
	uint8_t *buf = anon_map(ps);
	static const uint32_t bad[] = {
		ACCEL_MEM_HOST, ACCEL_MEM_DEVICE, 1u << 4, 1u << 31,
		ACCEL_MEM_READONLY | (1u << 8),
	};
	size_t i;

	ASSERT_NE(NULL, buf);
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		struct accel_mem_register r = {
			.addr = (uintptr_t)buf, .size = 64, .flags = bad[i],
		};

		EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_MEM_REGISTER, &r));
		EXPECT_EQ(EINVAL, errno) {
			TH_LOG("flags %#x accepted", bad[i]);
		}
	}
	munmap(buf, ps);
}

TEST_F(mem, register_overlap)
{
	long ps = page_size();
	uint8_t *buf = anon_map(4 * ps);
	uint32_t a, b, c;
	struct accel_mem_register r = { .size = 2 };

	ASSERT_NE(NULL, buf);
	/* [100, 100 + 2 * ps) */
	ASSERT_EQ(0, accel_register(self->fd, buf + 100, 2 * ps, 0, &a));

	r.addr = (uintptr_t)buf + 100;	/* same start */
	r.size = 1;
	EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_MEM_REGISTER, &r));
	EXPECT_EQ(EEXIST, errno);
	r.addr = (uintptr_t)buf + 99;	/* straddles the start */
	r.size = 2;
	EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_MEM_REGISTER, &r));
	EXPECT_EQ(EEXIST, errno);
	r.addr = (uintptr_t)buf + 100 + 2 * ps - 1;	/* straddles the end */
	EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_MEM_REGISTER, &r));
	EXPECT_EQ(EEXIST, errno);
	r.addr = (uintptr_t)buf;	/* covers it */
	r.size = 4 * ps;
	EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_MEM_REGISTER, &r));
	EXPECT_EQ(EEXIST, errno);
	r.addr = (uintptr_t)buf + ps;	/* inside it */
	r.size = 8;
	EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_MEM_REGISTER, &r));
	EXPECT_EQ(EEXIST, errno);

	/* Byte-adjacent ranges do not overlap, even on a shared page. */
	EXPECT_EQ(0, accel_register(self->fd, buf, 100, 0, &b));
	EXPECT_EQ(0, accel_register(self->fd, buf + 100 + 2 * ps, 10, 0, &c));

	/* Once released, the range may be registered again. */
	EXPECT_EQ(0, accel_release(self->fd, a, 0));
	EXPECT_EQ(0, accel_register(self->fd, buf + 100, 2 * ps, 0, &a));
	EXPECT_EQ(0, accel_release(self->fd, a, 0));
	EXPECT_EQ(0, accel_release(self->fd, b, 0));
	EXPECT_EQ(0, accel_release(self->fd, c, 0));
	munmap(buf, 4 * ps);
}

/* Overlap is per context: another file may register the same range. */
TEST_F(mem, register_overlap_other_context)
{
	long ps = page_size();
	uint8_t *buf = anon_map(ps);
	int fd2 = accel_open();
	uint32_t a, b;

	ASSERT_NE(NULL, buf);
	ASSERT_LE(0, fd2);
	ASSERT_EQ(0, accel_register(self->fd, buf, ps, 0, &a));
	EXPECT_EQ(0, accel_register(fd2, buf, ps, 0, &b));
	close(fd2);
	EXPECT_EQ(0, accel_release(self->fd, a, 0));
	munmap(buf, ps);
}

TEST_F(mem, register_unmapped)
{
	long ps = page_size();
	long long before;
	uint8_t *buf = anon_map(3 * ps);
	struct accel_mem_register r = { .size = ps };

	ASSERT_NE(NULL, buf);
	ASSERT_EQ(0, munmap(buf + ps, ps));
	before = pins_held();

	/* Wholly unmapped. */
	r.addr = (uintptr_t)buf + ps;
	EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_MEM_REGISTER, &r));
	EXPECT_EQ(EFAULT, errno);
	/* Mapped, then a hole: the partial pin must be undone. */
	r.addr = (uintptr_t)buf + 10;
	r.size = 2 * ps;
	EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_MEM_REGISTER, &r));
	EXPECT_EQ(EFAULT, errno);
	/* A hole in the middle. */
	r.addr = (uintptr_t)buf;
	r.size = 3 * ps;
	EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_MEM_REGISTER, &r));
	EXPECT_EQ(EFAULT, errno);
	/* Null page. */
	r.addr = 0;
	r.size = 16;
	EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_MEM_REGISTER, &r));
	EXPECT_EQ(EFAULT, errno);

	EXPECT_EQ(before, wait_pins(before, 2000));
	munmap(buf, ps);
	munmap(buf + 2 * ps, ps);
}

/* Read-only memory pins only with ACCEL_MEM_READONLY. */
TEST_F(mem, register_readonly)
{
	long ps = page_size();
	uint8_t *buf = anon_map(2 * ps);
	struct accel_mem_register r = { .size = 2 * ps };
	uint32_t h;

	ASSERT_NE(NULL, buf);
	memset(buf, 0x5a, 2 * ps);
	ASSERT_EQ(0, mprotect(buf, 2 * ps, PROT_READ));
	r.addr = (uintptr_t)buf;
	EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_MEM_REGISTER, &r));
	EXPECT_EQ(EFAULT, errno);

	EXPECT_EQ(0, accel_register(self->fd, buf, 2 * ps, ACCEL_MEM_READONLY, &h));
	EXPECT_NE(0u, h);
	EXPECT_EQ(0, accel_release(self->fd, h, 0));

	/* One writable page and one read-only page: still not writable. */
	ASSERT_EQ(0, mprotect(buf, ps, PROT_READ | PROT_WRITE));
	EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_MEM_REGISTER, &r));
	EXPECT_EQ(EFAULT, errno);
	munmap(buf, 2 * ps);
}

/* A read-only file mapping (never writable) pins with READONLY only. */
TEST_F(mem, register_readonly_file)
{
	long ps = page_size();
	char path[] = "/tmp/accel-mem-XXXXXX";
	int tfd = mkstemp(path);
	struct accel_mem_register r = { .size = ps };
	uint8_t *p;
	uint32_t h;

	ASSERT_LE(0, tfd);
	unlink(path);
	ASSERT_EQ(0, ftruncate(tfd, ps));
	p = mmap(NULL, ps, PROT_READ, MAP_SHARED, tfd, 0);
	ASSERT_NE(MAP_FAILED, p);
	r.addr = (uintptr_t)p;
	EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_MEM_REGISTER, &r));
	EXPECT_EQ(EFAULT, errno);
	EXPECT_EQ(0, accel_register(self->fd, p, ps, ACCEL_MEM_READONLY, &h));
	EXPECT_EQ(0, accel_release(self->fd, h, 0));
	munmap(p, ps);
	close(tfd);
}

/*
 * A VM_IO | VM_PFNMAP mapping: /dev/mem's legacy ISA hole, or a PCI BAR
 * through sysfs. Returns the mapping (PROT_READ) or NULL.
 */
static void *map_pfnmap(long ps, const char **what)
{
	static const off_t devmem_off[] = { 0xa0000, 0xc0000, 0xf0000 };
	static char name[256];
	glob_t g;
	size_t i;
	void *p;
	int fd;

	fd = open("/dev/mem", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		for (i = 0; i < ARRAY_SIZE(devmem_off); i++) {
			p = mmap(NULL, ps, PROT_READ, MAP_SHARED, fd, devmem_off[i]);
			if (p != MAP_FAILED) {
				close(fd);
				*what = "/dev/mem";
				return p;
			}
		}
		close(fd);
	}
	if (glob("/sys/bus/pci/devices/*/resource[0-5]", 0, NULL, &g))
		return NULL;
	for (i = 0; i < g.gl_pathc; i++) {
		fd = open(g.gl_pathv[i], O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		p = mmap(NULL, ps, PROT_READ, MAP_SHARED, fd, 0);
		close(fd);
		if (p != MAP_FAILED) {
			snprintf(name, sizeof(name), "%s", g.gl_pathv[i]);
			*what = name;
			globfree(&g);
			return p;
		}
	}
	globfree(&g);
	return NULL;
}

TEST_F(mem, register_pfnmap)
{
	long ps = page_size();
	const char *what = NULL;
	struct accel_mem_register r = {
		.size = ps, .flags = ACCEL_MEM_READONLY,
	};
	void *p = map_pfnmap(ps, &what);

	if (!p)
		SKIP(return, "no VM_PFNMAP mapping available (/dev/mem, PCI BARs)");
	TH_LOG("VM_PFNMAP source: %s", what);
	r.addr = (uintptr_t)p;
	EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_MEM_REGISTER, &r));
	EXPECT_EQ(EFAULT, errno);
	munmap(p, ps);
}

/*
 * A range larger than the context may ever pin fails before anything is
 * sized by it (no allocation warning, no huge page array), even as root.
 */
TEST_F(mem, register_huge_range)
{
	struct accel_info info;
	long ps = page_size();
	uint8_t *buf = anon_map(ps);
	struct accel_mem_register r = { .size = 1ULL << 41 };

	REQUIRE_SUMMARY();
	ASSERT_NE(NULL, buf);
	ASSERT_EQ(0, accel_info(self->fd, &info));
	ASSERT_LT(info.max_pinned_bytes, r.size);
	/* Low and unmapped: -ENOMEM shows nothing was even tried to pin. */
	r.addr = 1 << 20;
	EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_MEM_REGISTER, &r));
	EXPECT_EQ(ENOMEM, errno);
	r.addr = (uintptr_t)buf;
	r.size = info.max_pinned_bytes + ps;
	EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_MEM_REGISTER, &r));
	EXPECT_EQ(ENOMEM, errno);
	EXPECT_EQ(0, summary_get("regions"));
}

TEST_F(mem, register_memlock_limit)
{
	long ps = page_size();
	struct rlimit rl = { .rlim_cur = 8 * ps, .rlim_max = 8 * ps };
	uint8_t *buf = anon_map(32 * ps);
	struct accel_mem_register r = { .size = 8 * ps };
	struct accel_mem_alloc a = { .size = 16 * ps, .flags = ACCEL_MEM_HOST };
	uint32_t h;

	ASSERT_NE(NULL, buf);
	ASSERT_EQ(0, drop_cap(CAP_IPC_LOCK));
	ASSERT_EQ(0, setrlimit(RLIMIT_MEMLOCK, &rl));

	ASSERT_EQ(0, accel_register(self->fd, buf, 4 * ps, 0, &h));
	/* 4 pinned + 8 more > 8 */
	r.addr = (uintptr_t)buf + 8 * ps;
	EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_MEM_REGISTER, &r));
	EXPECT_EQ(ENOMEM, errno);
	/* Releasing uncharges: now 6 pages fit. */
	EXPECT_EQ(0, accel_release(self->fd, h, 0));
	r.size = 6 * ps;
	EXPECT_EQ(0, ioctl(self->fd, ACCEL_IOC_MEM_REGISTER, &r));
	EXPECT_EQ(0, accel_release(self->fd, r.handle, 0));
	/* Far past the limit. */
	r.addr = (uintptr_t)buf;
	r.size = 32 * ps;
	r.handle = 0;
	EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_MEM_REGISTER, &r));
	EXPECT_EQ(ENOMEM, errno);

	/* Host allocations count against RLIMIT_MEMLOCK too. */
	if (self->info.caps & ACCEL_CAP_HOST_ALLOC) {
		EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_MEM_ALLOC, &a));
		EXPECT_EQ(ENOMEM, errno);
	}
	munmap(buf, 32 * ps);
}

/* With CAP_IPC_LOCK, RLIMIT_MEMLOCK does not apply. */
TEST_F(mem, register_memlock_cap)
{
	long ps = page_size();
	struct rlimit rl = { .rlim_cur = 0, .rlim_max = 0 };
	uint8_t *buf = anon_map(16 * ps);
	uint32_t h;

	ASSERT_NE(NULL, buf);
	if (geteuid() != 0)
		SKIP(return, "needs root (CAP_IPC_LOCK)");
	ASSERT_EQ(0, setrlimit(RLIMIT_MEMLOCK, &rl));
	EXPECT_EQ(0, accel_register(self->fd, buf, 16 * ps, 0, &h));
	EXPECT_EQ(0, accel_release(self->fd, h, 0));
	munmap(buf, 16 * ps);
}

TEST_F(mem, host_alloc_pinned_limit)
{
	uint64_t max = self->info.max_pinned_bytes;
	struct accel_mem_alloc a = { .flags = ACCEL_MEM_HOST };

	REQUIRE_CAP(ACCEL_CAP_HOST_ALLOC);
	if (max >= (1ULL << 46))
		SKIP(return, "max_pinned_bytes too large to exceed");
	a.size = max + page_size();
	EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_MEM_ALLOC, &a));
	EXPECT_EQ(ENOMEM, errno);
}

TEST_F(mem, device_alloc_limit)
{
	uint64_t max = self->info.max_device_bytes;
	struct accel_mem_alloc a = { .flags = ACCEL_MEM_DEVICE };

	REQUIRE_CAP(ACCEL_CAP_DEVICE_MEM);
	if (max >= (1ULL << 46))
		SKIP(return, "max_device_bytes too large to exceed");
	a.size = max + page_size();
	EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_MEM_ALLOC, &a));
	EXPECT_EQ(ENOMEM, errno);
}

/*
 * ENOSPC past max_regions, with one-byte registrations of distinct bytes
 * (cheap: the same few pages pinned many times).
 */
TEST_F_TIMEOUT(mem, too_many_regions, 60)
{
	long ps = page_size();
	uint32_t n = self->info.max_regions;
	size_t bytes = ((size_t)n + 1 + ps - 1) / ps * ps;
	uint8_t *buf;
	uint32_t i, h;
	struct accel_mem_register r = { .size = 1 };

	/* Each registration checks overlap against all: quadratic. */
	if (n > 8192 || (uint64_t)n * ps > self->info.max_pinned_bytes)
		SKIP(return, "max_regions %u too large to reach in time", n);
	buf = anon_map(bytes);
	ASSERT_NE(NULL, buf);
	for (i = 0; i < n; i++)
		ASSERT_EQ(0, accel_register(self->fd, buf + i, 1, 0, &h)) {
			TH_LOG("registration %u of %u failed", i, n);
		}
	r.addr = (uintptr_t)buf + n;
	EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_MEM_REGISTER, &r));
	EXPECT_EQ(ENOSPC, errno);
	EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_MEM_REGISTER, &r));
	EXPECT_EQ(ENOSPC, errno);
	/* One released makes room for one. */
	EXPECT_EQ(0, accel_release(self->fd, h, 0));
	EXPECT_EQ(0, ioctl(self->fd, ACCEL_IOC_MEM_REGISTER, &r));
	close(self->fd);
	self->fd = -1;
	munmap(buf, bytes);
}

TEST_F(mem, release_unknown)
{
	long ps = page_size();
	uint8_t *buf = anon_map(ps);
	struct accel_mem_release rel = { .handle = BAD_HANDLE };
	uint32_t h;

	ASSERT_NE(NULL, buf);
	EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_MEM_RELEASE, &rel));
	EXPECT_EQ(ENOENT, errno);
	rel.handle = 0;
	EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_MEM_RELEASE, &rel));
	EXPECT_EQ(ENOENT, errno);

	ASSERT_EQ(0, accel_register(self->fd, buf, 10, 0, &h));
	rel.handle = h;
	EXPECT_EQ(0, ioctl(self->fd, ACCEL_IOC_MEM_RELEASE, &rel));
	EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_MEM_RELEASE, &rel));
	EXPECT_EQ(ENOENT, errno);
	rel.flags = ACCEL_MEM_RELEASE_DEFERRED;
	EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_MEM_RELEASE, &rel));
	EXPECT_EQ(ENOENT, errno);
	munmap(buf, ps);
}

/* Handles are per context: another file's handle is unknown here. */
TEST_F(mem, release_other_context)
{
	long ps = page_size();
	uint8_t *buf = anon_map(ps);
	int fd2 = accel_open();
	struct accel_mem_release rel = { 0 };
	uint32_t h0, h, mine;

	ASSERT_NE(NULL, buf);
	ASSERT_LE(0, fd2);
	ASSERT_EQ(0, accel_register(fd2, buf + 200, 10, 0, &h0));
	ASSERT_EQ(0, accel_register(fd2, buf, 10, 0, &h));
	ASSERT_EQ(0, accel_register(self->fd, buf + 100, 10, 0, &mine));
	if (h != mine) {
		rel.handle = h;
		EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_MEM_RELEASE, &rel));
		EXPECT_EQ(ENOENT, errno);
	}
	EXPECT_EQ(0, accel_release(self->fd, mine, 0));
	/* fd2's region survived whatever happened on self->fd. */
	EXPECT_EQ(0, accel_release(fd2, h, 0));
	EXPECT_EQ(0, accel_release(fd2, h0, 0));
	close(fd2);
	munmap(buf, ps);
}

TEST_F(mem, release_bad_flags)
{
	long ps = page_size();
	uint8_t *buf = anon_map(ps);
	struct accel_mem_release rel = { .flags = 2 };
	uint32_t h;

	ASSERT_NE(NULL, buf);
	ASSERT_EQ(0, accel_register(self->fd, buf, 10, 0, &h));
	rel.handle = h;
	EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_MEM_RELEASE, &rel));
	EXPECT_EQ(EINVAL, errno);
	rel.flags = 1u << 31;
	EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_MEM_RELEASE, &rel));
	EXPECT_EQ(EINVAL, errno);
	/* Nothing was released. */
	EXPECT_EQ(0, accel_release(self->fd, h, 0));
	munmap(buf, ps);
}

TEST_F(mem, release_busy)
{
	long ps = page_size();
	uint8_t *src = anon_map(ps), *dst = anon_map(ps);
	struct accel_mem_release rel = { 0 };
	struct gate g;
	uint32_t hs, hd;

	ASSERT_NE(NULL, src);
	ASSERT_NE(NULL, dst);
	fill_random(src, ps, 1);
	memset(dst, 0, ps);
	ASSERT_EQ(0, accel_register(self->fd, src, ps, 0, &hs));
	ASSERT_EQ(0, accel_register(self->fd, dst, ps, 0, &hd));
	ASSERT_EQ(0, gate_init(self->fd, &g));
	ASSERT_EQ(0, accel_submit1(self->fd, g.stream, d_copy(hd, 0, hs, 0, ps), NULL));

	rel.handle = hs;
	EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_MEM_RELEASE, &rel));
	EXPECT_EQ(EBUSY, errno);
	rel.handle = hd;
	EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_MEM_RELEASE, &rel));
	EXPECT_EQ(EBUSY, errno);

	/* The failed release changed nothing: the copy still runs. */
	ASSERT_EQ(0, gate_open(self->fd, &g));
	ASSERT_EQ(0, accel_drain(self->fd, g.stream));
	EXPECT_EQ(-1, first_diff(src, dst, ps));
	EXPECT_EQ(0, accel_release(self->fd, hs, 0));
	EXPECT_EQ(0, accel_release(self->fd, hd, 0));
	munmap(src, ps);
	munmap(dst, ps);
}

TEST_F(mem, release_deferred)
{
	long ps = page_size();
	size_t size = 4 * ps;
	uint8_t *src = anon_map(size), *dst = anon_map(size);
	struct accel_mem_release rel = { .flags = ACCEL_MEM_RELEASE_DEFERRED };
	struct accel_desc d;
	struct accel_stream_query q;
	long long pins0, pins_with_dst;
	struct gate g;
	uint32_t hs, hd;

	REQUIRE_CAP(ACCEL_CAP_DEFERRED_RELEASE);
	ASSERT_NE(NULL, src);
	ASSERT_NE(NULL, dst);
	fill_random(src, size, 2);
	memset(dst, 0, size);
	pins0 = pins_held();
	ASSERT_EQ(0, accel_register(self->fd, dst, size, 0, &hd));
	pins_with_dst = pins_held();
	ASSERT_EQ(0, accel_register(self->fd, src, size, 0, &hs));
	ASSERT_EQ(0, gate_init(self->fd, &g));
	ASSERT_EQ(0, accel_submit1(self->fd, g.stream, d_copy(hd, 0, hs, 0, size), NULL));

	rel.handle = hs;
	EXPECT_EQ(0, ioctl(self->fd, ACCEL_IOC_MEM_RELEASE, &rel));
	/* The handle is dead at once... */
	EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_MEM_RELEASE, &rel));
	EXPECT_EQ(ENOENT, errno);
	rel.flags = 0;
	EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_MEM_RELEASE, &rel));
	EXPECT_EQ(ENOENT, errno);
	d = d_copy(hd, 0, hs, 0, 1);
	EXPECT_EQ(-ENOENT, accel_submit(self->fd, g.stream, &d, 1, NULL));
	/* ...the range may be registered anew... */
	{
		uint32_t again;

		EXPECT_EQ(0, accel_register(self->fd, src, size, 0, &again));
		EXPECT_NE(hs, again);
		EXPECT_EQ(0, accel_release(self->fd, again, 0));
	}
	/* ...and the pages stay pinned until the copy retires. */
	ASSERT_EQ(0, accel_query(self->fd, g.stream, &q));
	EXPECT_EQ(2ULL, q.submitted);
	EXPECT_EQ(0ULL, q.completed);
	ASSERT_EQ(0, gate_open(self->fd, &g));
	ASSERT_EQ(0, accel_drain(self->fd, g.stream));
	EXPECT_EQ(-1, first_diff(src, dst, size));
	EXPECT_EQ(pins_with_dst, wait_pins(pins_with_dst, 5000));

	EXPECT_EQ(0, accel_release(self->fd, hd, ACCEL_MEM_RELEASE_DEFERRED));
	EXPECT_EQ(pins0, wait_pins(pins0, 5000));
	munmap(src, size);
	munmap(dst, size);
}

/* DEFERRED on an idle region releases at once. */
TEST_F(mem, release_deferred_idle)
{
	long ps = page_size();
	uint8_t *buf = anon_map(2 * ps);
	long long pins0;
	uint32_t h;

	REQUIRE_CAP(ACCEL_CAP_DEFERRED_RELEASE);
	ASSERT_NE(NULL, buf);
	pins0 = pins_held();
	ASSERT_EQ(0, accel_register(self->fd, buf, 2 * ps, 0, &h));
	EXPECT_EQ(pins0 + 2, pins_held());
	EXPECT_EQ(0, accel_release(self->fd, h, ACCEL_MEM_RELEASE_DEFERRED));
	EXPECT_EQ(pins0, wait_pins(pins0, 5000));
	munmap(buf, 2 * ps);
}

/* Each page a registration touches is pinned once; released, unpinned. */
TEST_F(mem, register_pins_pages)
{
	long ps = page_size();
	uint8_t *buf = anon_map(4 * ps);
	long long pins0;
	uint32_t h;

	ASSERT_NE(NULL, buf);
	pins0 = pins_held();
	/* [ps - 1, 2 * ps + 1) touches three pages. */
	ASSERT_EQ(0, accel_register(self->fd, buf + ps - 1, ps + 2, 0, &h));
	EXPECT_EQ(pins0 + 3, pins_held());
	EXPECT_EQ(0, accel_release(self->fd, h, 0));
	EXPECT_EQ(pins0, pins_held());
	munmap(buf, 4 * ps);
}

TEST_F(mem, alloc_bad)
{
	static const uint32_t bad_flags[] = {
		0, ACCEL_MEM_HOST | ACCEL_MEM_DEVICE, ACCEL_MEM_READONLY,
		ACCEL_MEM_HOST | ACCEL_MEM_READONLY, 1u << 3, 1u << 31,
	};
	struct accel_mem_alloc a = { .size = 0, .flags = ACCEL_MEM_HOST };
	size_t i;

	EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_MEM_ALLOC, &a));
	EXPECT_EQ(EINVAL, errno);
	a.flags = ACCEL_MEM_DEVICE;
	EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_MEM_ALLOC, &a));
	EXPECT_EQ(EINVAL, errno);
	for (i = 0; i < ARRAY_SIZE(bad_flags); i++) {
		memset(&a, 0, sizeof(a));
		a.size = 4096;
		a.flags = bad_flags[i];
		EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_MEM_ALLOC, &a));
		EXPECT_EQ(EINVAL, errno) {
			TH_LOG("alloc flags %#x accepted", bad_flags[i]);
		}
	}
}

/* @handle and @mmap_offset are output only. */
TEST_F(mem, alloc_output_prefilled)
{
	struct accel_mem_alloc a;

	REQUIRE_CAP(ACCEL_CAP_HOST_ALLOC);
	REQUIRE_CAP(ACCEL_CAP_DEVICE_MEM);
	memset(&a, 0xcc, sizeof(a));
	a.size = 100;
	a.flags = ACCEL_MEM_DEVICE;
	ASSERT_EQ(0, ioctl(self->fd, ACCEL_IOC_MEM_ALLOC, &a));
	EXPECT_NE(0u, a.handle);
	EXPECT_NE(0xccccccccu, a.handle);
	EXPECT_EQ(0ULL, a.mmap_offset);
	EXPECT_EQ(0, accel_release(self->fd, a.handle, 0));

	memset(&a, 0xcc, sizeof(a));
	a.size = 100;
	a.flags = ACCEL_MEM_HOST;
	ASSERT_EQ(0, ioctl(self->fd, ACCEL_IOC_MEM_ALLOC, &a));
	EXPECT_NE(0u, a.handle);
	EXPECT_NE(0xccccccccu, a.handle);
	EXPECT_EQ(0ULL, a.mmap_offset % self->info.page_size);
	EXPECT_NE(0xccccccccccccccccULL, a.mmap_offset);
	EXPECT_EQ(0, accel_release(self->fd, a.handle, 0));
}

TEST_F(mem, host_alloc_mmap_copy)
{
	long ps = page_size();
	size_t size = 3 * ps + 1, rounded = 4 * ps;
	uint8_t *buf = anon_map(rounded), *ref = malloc(rounded);
	uint32_t hh, hr, s;
	uint64_t off;
	uint8_t *map;

	REQUIRE_CAP(ACCEL_CAP_HOST_ALLOC);
	ASSERT_NE(NULL, buf);
	ASSERT_NE(NULL, ref);
	ASSERT_EQ(0, accel_alloc(self->fd, size, ACCEL_MEM_HOST, &hh, &off));
	EXPECT_NE(0u, hh);
	EXPECT_EQ(0ULL, off % ps);
	map = mmap(NULL, rounded, PROT_READ | PROT_WRITE, MAP_SHARED, self->fd, off);
	ASSERT_NE(MAP_FAILED, map);
	/* Zeroed, the rounded-up tail too. */
	EXPECT_TRUE(all_bytes(map, rounded, 0));

	/* Host alloc -> registered memory. */
	fill_random(map, rounded, 3);
	memcpy(ref, map, rounded);
	memset(buf, 0xee, rounded);
	ASSERT_EQ(0, accel_register(self->fd, buf, rounded, 0, &hr));
	ASSERT_EQ(0, accel_stream(self->fd, 0, 0, &s));
	ASSERT_EQ(0, accel_submit1(self->fd, s, d_copy(hr, 0, hh, 0, rounded), NULL));
	ASSERT_EQ(0, accel_drain(self->fd, s));
	EXPECT_EQ(-1, first_diff(ref, buf, rounded));

	/* Registered memory -> host alloc, at odd offsets. */
	fill_random(buf, rounded, 4);
	ASSERT_EQ(0, accel_submit1(self->fd, s, d_copy(hh, 7, hr, 3, size - 7), NULL));
	ASSERT_EQ(0, accel_drain(self->fd, s));
	memcpy(ref + 7, buf + 3, size - 7);
	EXPECT_EQ(-1, first_diff(ref, map, rounded));

	munmap(map, rounded);
	EXPECT_EQ(0, accel_release(self->fd, hh, 0));
	EXPECT_EQ(0, accel_release(self->fd, hr, 0));
	munmap(buf, rounded);
	free(ref);
}

/* Distinct allocations map distinct memory; a mapping is bounded. */
TEST_F(mem, host_alloc_mmap_bounds)
{
	long ps = page_size();
	uint32_t a, b;
	uint64_t oa, ob;
	uint8_t *ma, *mb, *p;

	REQUIRE_CAP(ACCEL_CAP_HOST_ALLOC);
	ASSERT_EQ(0, accel_alloc(self->fd, 2 * ps, ACCEL_MEM_HOST, &a, &oa));
	ASSERT_EQ(0, accel_alloc(self->fd, 2 * ps, ACCEL_MEM_HOST, &b, &ob));
	EXPECT_NE(a, b);
	EXPECT_NE(oa, ob);

	/* Longer than the rounded size. */
	p = mmap(NULL, 3 * ps, PROT_READ | PROT_WRITE, MAP_SHARED, self->fd, oa);
	EXPECT_EQ(MAP_FAILED, p);
	if (p != MAP_FAILED)
		munmap(p, 3 * ps);
	/* An offset no allocation has. */
	p = mmap(NULL, ps, PROT_READ | PROT_WRITE, MAP_SHARED, self->fd,
		 (oa > ob ? oa : ob) + (64ULL << 30));
	EXPECT_EQ(MAP_FAILED, p);
	if (p != MAP_FAILED)
		munmap(p, ps);

	ma = mmap(NULL, 2 * ps, PROT_READ | PROT_WRITE, MAP_SHARED, self->fd, oa);
	ASSERT_NE(MAP_FAILED, ma);
	mb = mmap(NULL, 2 * ps, PROT_READ | PROT_WRITE, MAP_SHARED, self->fd, ob);
	ASSERT_NE(MAP_FAILED, mb);
	memset(ma, 0x11, 2 * ps);
	EXPECT_TRUE(all_bytes(mb, 2 * ps, 0));
	/* A second mapping of the same allocation shares its pages. */
	p = mmap(NULL, ps, PROT_READ, MAP_SHARED, self->fd, oa);
	ASSERT_NE(MAP_FAILED, p);
	EXPECT_TRUE(all_bytes(p, ps, 0x11));
	munmap(p, ps);
	munmap(ma, 2 * ps);
	munmap(mb, 2 * ps);
	EXPECT_EQ(0, accel_release(self->fd, a, 0));
	EXPECT_EQ(0, accel_release(self->fd, b, 0));
}

TEST_F(mem, device_alloc)
{
	long ps = page_size();
	size_t size = 2 * ps + 123;
	uint8_t *buf = anon_map(3 * ps), *ref = malloc(size);
	uint32_t hd, hr, s;
	uint64_t off = 0xccccccccccccccccULL;

	REQUIRE_CAP(ACCEL_CAP_DEVICE_MEM);
	ASSERT_NE(NULL, buf);
	ASSERT_NE(NULL, ref);
	ASSERT_EQ(0, accel_alloc(self->fd, size, ACCEL_MEM_DEVICE, &hd, &off));
	EXPECT_NE(0u, hd);
	EXPECT_EQ(0ULL, off);
	ASSERT_EQ(0, accel_register(self->fd, buf, 3 * ps, 0, &hr));
	ASSERT_EQ(0, accel_stream(self->fd, 0, 0, &s));

	/* Zeroed: read the rounded size back. */
	memset(buf, 0xee, 3 * ps);
	ASSERT_EQ(0, accel_submit1(self->fd, s, d_copy(hr, 0, hd, 0, 3 * ps), NULL));
	ASSERT_EQ(0, accel_drain(self->fd, s));
	EXPECT_TRUE(all_bytes(buf, 3 * ps, 0));

	/* Round trip. */
	fill_random(buf, size, 5);
	memcpy(ref, buf, size);
	ASSERT_EQ(0, accel_submit1(self->fd, s, d_copy(hd, 0, hr, 0, size), NULL));
	ASSERT_EQ(0, accel_drain(self->fd, s));
	memset(buf, 0, 3 * ps);
	ASSERT_EQ(0, accel_submit1(self->fd, s, d_copy(hr, 0, hd, 0, size), NULL));
	ASSERT_EQ(0, accel_drain(self->fd, s));
	EXPECT_EQ(-1, first_diff(ref, buf, size));

	EXPECT_EQ(0, accel_release(self->fd, hd, 0));
	EXPECT_EQ(0, accel_release(self->fd, hr, 0));
	munmap(buf, 3 * ps);
	free(ref);
}

/* Device memory has no mapping offset: nothing to mmap at 0. */
TEST_F(mem, device_alloc_not_mappable)
{
	long ps = page_size();
	uint32_t hd;
	uint64_t off;
	void *p;

	REQUIRE_CAP(ACCEL_CAP_DEVICE_MEM);
	ASSERT_EQ(0, accel_alloc(self->fd, ps, ACCEL_MEM_DEVICE, &hd, &off));
	ASSERT_EQ(0ULL, off);
	p = mmap(NULL, ps, PROT_READ | PROT_WRITE, MAP_SHARED, self->fd, 0);
	EXPECT_EQ(MAP_FAILED, p);
	if (p != MAP_FAILED)
		munmap(p, ps);
	EXPECT_EQ(0, accel_release(self->fd, hd, 0));
}

#ifdef ACCEL_MEM_EXTERNAL
/* External ranges: nothing pinned; no executor, so copies naming them fail. */
TEST_F(mem, register_external)
{
	struct accel_mem_register r = {
		.addr = 0x7f0000000000ULL, .size = 1 << 20,
		.flags = ACCEL_MEM_EXTERNAL,
	};
	long ps = page_size();
	uint8_t *buf = anon_map(ps);
	long long pins0 = pins_held();
	uint32_t hx, hr, s;
	struct accel_desc d;

	REQUIRE_CAP(ACCEL_CAP_EXECUTOR);
	ASSERT_NE(NULL, buf);
	ASSERT_EQ(0, ioctl(self->fd, ACCEL_IOC_MEM_REGISTER, &r));
	hx = r.handle;
	EXPECT_NE(0u, hx);
	EXPECT_EQ(pins0, pins_held());
	/* Overlapping another external range. */
	r.handle = 0;
	r.addr += 4096;
	EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_MEM_REGISTER, &r));
	EXPECT_EQ(EEXIST, errno);

	ASSERT_EQ(0, accel_register(self->fd, buf, ps, 0, &hr));
	ASSERT_EQ(0, accel_stream(self->fd, 0, 0, &s));
	d = d_copy(hr, 0, hx, 0, 16);
	EXPECT_EQ(-ENXIO, accel_submit(self->fd, s, &d, 1, NULL));
	d = d_copy(hx, 0, hr, 0, 16);
	EXPECT_EQ(-ENXIO, accel_submit(self->fd, s, &d, 1, NULL));
	EXPECT_EQ(0, accel_release(self->fd, hx, 0));
	EXPECT_EQ(0, accel_release(self->fd, hr, 0));
	munmap(buf, ps);
}
#endif

ACCEL_HARNESS_MAIN
