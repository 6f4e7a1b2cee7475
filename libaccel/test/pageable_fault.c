// SPDX-License-Identifier: MIT
/*
 * A copy into pageable memory the process cannot write (never registered:
 * filled by a host function after the copy) is -EFAULT at enqueue, not a
 * SIGSEGV on the library's thread later; so is one into a mapping of
 * device memory (VM_PFNMAP, as a GPU runtime maps its memory), whatever
 * its protections say.
 */
#include <linux/io_uring.h>
#include <sys/mman.h>
#include <sys/syscall.h>

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

/*
 * A mapping whose pages are VM_IO | VM_PFNMAP: an io_uring's SQ ring where
 * the kernel maps it with remap_pfn_range() (before Linux 6.10 or so). It
 * is mapped read-write, yet no CPU copy may take it for ordinary memory:
 * the copy is -EFAULT and the ring is left alone. T_SKIP where io_uring
 * is off or maps its rings as ordinary pages.
 */
static int pfnmap_destination(void)
{
	struct io_uring_params p;
	unsigned char *ring, *h;
	accel_stream_t s;
	size_t len;
	int fd;

	memset(&p, 0, sizeof(p));
	fd = (int)syscall(__NR_io_uring_setup, 4, &p);
	if (fd < 0) {
		printf("# io_uring_setup: %s\n", strerror(errno));
		return T_SKIP;
	}
	len = p.sq_off.array + p.sq_entries * sizeof(unsigned int);
	ring = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE,
		    fd, IORING_OFF_SQ_RING);
	CHECK(ring != MAP_FAILED);
	if (!madvise(ring, 1, MADV_POPULATE_WRITE) || errno != EINVAL) {
		printf("# this kernel maps io_uring rings as ordinary pages\n");
		munmap(ring, len);
		close(fd);
		return T_SKIP;
	}
	CHECK_OK(t_stream(&s));
	CHECK_OK(accel_host_alloc(NULL, (void **)&h, 64, 0));
	t_fill(h, 64, 8);
	CHECK_RET(accel_memcpy_async(s, ring, h, 64, ACCEL_MEMCPY_H2H),
		  -EFAULT);
	CHECK_OK(accel_stream_synchronize(s, 10 * T_SEC));
	munmap(ring, len);
	close(fd);
	return T_PASS;
}

T_MAIN(T(read_only_destination), T(pfnmap_destination))
