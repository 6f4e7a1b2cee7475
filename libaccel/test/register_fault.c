// SPDX-License-Identifier: MIT
/*
 * accel_host_register() of ranges the driver could not pin: -EFAULT, on
 * every transport, where a page is unmapped, inaccessible, or read-only
 * without ACCEL_HOST_REGISTER_READONLY.
 */
#include <sys/mman.h>

#include "helpers.h"

static long ps;

static void *map(size_t pages, int prot)
{
	void *p = mmap(NULL, pages * ps, prot, MAP_PRIVATE | MAP_ANONYMOUS,
		       -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static int read_only_needs_flag(void)
{
	accel_stream_t s;
	unsigned char *ro, *h;

	CHECK_OK(t_stream(&s));
	CHECK_OK(accel_host_alloc(NULL, (void **)&h, ps, 0));
	CHECK(ro = map(1, PROT_READ));
	CHECK_RET(accel_host_register(NULL, ro, ps, 0), -EFAULT);
	CHECK_RET(accel_host_register(NULL, ro + 100, 10, 0), -EFAULT);
	/* Read-only, as asked: copies from it work, copies into it fail. */
	CHECK_OK(accel_host_register(NULL, ro, ps, ACCEL_HOST_REGISTER_READONLY));
	CHECK_RET(accel_memcpy_async(s, ro, h, 16, ACCEL_MEMCPY_H2H), -EPERM);
	CHECK_OK(accel_memcpy_async(s, h, ro, 16, ACCEL_MEMCPY_H2H));
	CHECK_OK(accel_stream_synchronize(s, 10 * T_SEC));
	CHECK_OK(accel_host_unregister(ro, 0));
	munmap(ro, ps);
	return T_PASS;
}

static int partly_read_only(void)
{
	unsigned char *p;

	CHECK(t_ctx());
	CHECK(p = map(3, PROT_READ | PROT_WRITE));
	CHECK(!mprotect(p + ps, ps, PROT_READ));
	/* Only the middle page is read-only: any range touching it fails. */
	CHECK_RET(accel_host_register(NULL, p, 3 * ps, 0), -EFAULT);
	CHECK_RET(accel_host_register(NULL, p + ps - 1, 2, 0), -EFAULT);
	CHECK_RET(accel_host_register(NULL, p + 2 * ps - 1, 2, 0), -EFAULT);
	CHECK_OK(accel_host_register(NULL, p, ps, 0));
	CHECK_OK(accel_host_register(NULL, p + 2 * ps, ps, 0));
	CHECK_OK(accel_host_register(NULL, p + ps, ps,
				     ACCEL_HOST_REGISTER_READONLY));
	CHECK_OK(accel_host_unregister(p, 0));
	CHECK_OK(accel_host_unregister(p + ps, 0));
	CHECK_OK(accel_host_unregister(p + 2 * ps, 0));
	munmap(p, 3 * ps);
	return T_PASS;
}

static int unmapped_or_inaccessible(void)
{
	unsigned char *p, *q;

	CHECK(t_ctx());
	/* A hole in the middle. */
	CHECK_RET(t_register_over_hole(&p, 0), -EFAULT);
	CHECK_RET(t_register_over_hole(&q, ACCEL_HOST_REGISTER_READONLY),
		  -EFAULT);
	munmap(q, ps);
	munmap(q + 2 * ps, ps);
	/* PROT_NONE cannot be pinned even for reading. */
	CHECK(!mprotect(p + 2 * ps, ps, PROT_NONE));
	CHECK_RET(accel_host_register(NULL, p + 2 * ps, ps,
				      ACCEL_HOST_REGISTER_READONLY), -EFAULT);
	CHECK_OK(accel_host_register(NULL, p, ps, 0));
	CHECK_OK(accel_host_unregister(p, 0));
	munmap(p, ps);
	munmap(p + 2 * ps, ps);
	return T_PASS;
}

/* Writable memory with nothing faulted in yet registers fine. */
static int untouched_memory(void)
{
	const size_t n = 64;
	accel_stream_t s;
	unsigned char *p, *h;

	CHECK_OK(t_stream(&s));
	CHECK_OK(accel_host_alloc(NULL, (void **)&h, ps, 0));
	CHECK(p = map(n, PROT_READ | PROT_WRITE));
	CHECK_OK(accel_host_register(NULL, p + 1, n * ps - 2, 0));
	t_fill(h, ps, 3);
	CHECK_OK(accel_memcpy_async(s, p + (n - 1) * ps, h, ps - 1,
				    ACCEL_MEMCPY_H2H));
	CHECK_OK(accel_stream_synchronize(s, 10 * T_SEC));
	CHECK(t_check_fill(p + (n - 1) * ps, ps - 1, 3));
	CHECK_OK(accel_host_unregister(p + 1, 0));
	munmap(p, n * ps);
	return T_PASS;
}

int main(void)
{
	static const struct t_case cases[] = {
		T(read_only_needs_flag), T(partly_read_only),
		T(unmapped_or_inaccessible), T(untouched_memory),
	};

	ps = sysconf(_SC_PAGESIZE);
	return t_run(cases, sizeof(cases) / sizeof(cases[0]));
}
