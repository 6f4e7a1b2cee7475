// SPDX-License-Identifier: MIT
/*
 * A copy into pageable memory the process cannot write (never registered:
 * filled by a host function after the copy) is -EFAULT at enqueue, not a
 * SIGSEGV on the library's thread later.
 */
#include <sys/mman.h>

#include "helpers.h"

static int read_only_destination(void)
{
	long ps = sysconf(_SC_PAGESIZE);
	unsigned char *ro, *rw, *h;
	accel_stream_t s;
	void *d;

	CHECK_OK(t_stream(&s));
	CHECK_OK(accel_host_alloc(NULL, (void **)&h, ps, 0));
	CHECK_OK(accel_malloc(NULL, &d, ps));
	ro = mmap(NULL, 2 * ps, PROT_READ | PROT_WRITE,
		  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(ro != MAP_FAILED);
	rw = ro;
	CHECK(!mprotect(ro + ps, ps, PROT_READ));
	t_fill(h, ps, 5);
	CHECK_RET(accel_memcpy_async(s, ro + ps, h, 16, ACCEL_MEMCPY_H2H),
		  -EFAULT);
	CHECK_RET(accel_memcpy_async(s, ro + ps, d, 16, ACCEL_MEMCPY_D2H),
		  -EFAULT);
	/* Straddling into the read-only page. */
	CHECK_RET(accel_memcpy_async(s, rw + ps - 8, h, 16, ACCEL_MEMCPY_H2H),
		  -EFAULT);
	/* Unmapped. */
	CHECK(!munmap(ro + ps, ps));
	CHECK_RET(accel_memcpy_async(s, ro + ps, h, 16, ACCEL_MEMCPY_H2H),
		  -EFAULT);
	/* The writable page still works, and the stream is fine. */
	CHECK_OK(accel_memcpy_async(s, rw, h, ps, ACCEL_MEMCPY_H2H));
	CHECK_OK(accel_stream_synchronize(s, 10 * T_SEC));
	CHECK(t_check_fill(rw, ps, 5));
	munmap(rw, ps);
	return T_PASS;
}

T_MAIN(T(read_only_destination))
