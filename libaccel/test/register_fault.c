// SPDX-License-Identifier: MIT
/*
 * accel_host_register() of ranges the driver could not pin: -EFAULT, on
 * every transport, where a page is unmapped, inaccessible, or read-only
 * without ACCEL_HOST_REGISTER_READONLY, or mapped but not there to fault
 * in (a file mapping past the file's end).
 */
#include <fcntl.h>
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

/*
 * A range that starts in pageable memory and runs on into a registration
 * (here a read-only one, or one that a queued copy writes) is refused
 * with -EINVAL, changing nothing: the registration's bytes stay as they
 * are and its queued copy keeps its order, either side of the copy.
 */
static int pageable_running_into_a_registration(void)
{
	unsigned char *p, *h, before[64];
	accel_event_t gate;
	accel_stream_t s;
	void *d;

	CHECK_OK(t_stream(&s));
	CHECK_OK(accel_malloc(NULL, &d, 2 * ps));
	CHECK_OK(accel_host_alloc(NULL, (void **)&h, 2 * ps, 0));
	CHECK(p = map(3, PROT_READ | PROT_WRITE));
	memset(p, 'o', 3 * ps);
	memset(h, 'D', 2 * ps);
	CHECK_OK(accel_memcpy_async(s, d, h, 2 * ps, ACCEL_MEMCPY_H2D));
	CHECK_OK(accel_stream_synchronize(s, 10 * T_SEC));
	/* Registered read-only (the memory itself stays writable). */
	CHECK_OK(accel_host_register(NULL, p + ps, ps,
				     ACCEL_HOST_REGISTER_READONLY));
	/* Into it from below: D2H and H2H, straddling or covering it. */
	CHECK_RET(accel_memcpy_async(s, p + ps - 96, d, 200,
				     ACCEL_MEMCPY_D2H), -EINVAL);
	CHECK(strstr(accel_last_error_string(), "runs on into"));
	CHECK_RET(accel_memcpy_async(s, p + ps - 1, d, ps + 2,
				     ACCEL_MEMCPY_D2H), -EINVAL);
	CHECK_RET(accel_memcpy_async(s, p + ps - 1, h, 2,
				     ACCEL_MEMCPY_H2H), -EINVAL);
	CHECK_RET(accel_memset_async(s, p + ps - 8, 0, 16), -EINVAL);
	CHECK_OK(accel_stream_synchronize(s, 10 * T_SEC));
	memset(before, 'o', sizeof(before));
	CHECK(!memcmp(p + ps, before, sizeof(before)));
	CHECK(!memcmp(p + 2 * ps - 64, before, sizeof(before)));
	CHECK_OK(accel_host_unregister(p + ps, 0));

	/* A writable one with a copy into it queued behind a gate. */
	CHECK_OK(accel_host_register(NULL, p + ps, ps, 0));
	CHECK_OK(t_gate(s, &gate));
	CHECK_OK(accel_memcpy_async(s, p + ps, d, ps, ACCEL_MEMCPY_D2H));
	CHECK_RET(accel_memcpy_async(s, d, p + ps - 100, 200,
				     ACCEL_MEMCPY_H2D), -EINVAL);
	CHECK_OK(t_gate_open(gate));
	CHECK_OK(accel_stream_synchronize(s, 10 * T_SEC));
	memset(before, 'D', sizeof(before));
	CHECK(!memcmp(p + ps, before, sizeof(before)));
	/* Below and up to it, not into it: pageable, and fine. */
	CHECK_OK(accel_memcpy_async(s, p + ps - 64, d, 64, ACCEL_MEMCPY_D2H));
	CHECK_OK(accel_stream_synchronize(s, 10 * T_SEC));
	CHECK(!memcmp(p + ps - 64, before, 64));
	CHECK_OK(accel_host_unregister(p + ps, 0));
	munmap(p, 3 * ps);
	CHECK_OK(accel_free(d));
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

/*
 * A shared file mapping whose last page lies past the file's end: the
 * mappings say read-write, but no access can fault that page in (SIGBUS),
 * so no pin can: -EFAULT, whoever finds out (the inproc transport faulting
 * the range in; with the cuda backend cudaHostRegister, the transport
 * having checked the mappings only; the module's pin). The failed call
 * leaves nothing: once the file covers the range, the same range
 * registers, under a pinning limit (inproc: ACCEL_INPROC_MAX_PINNED_MB=1)
 * too small for the failed call's charge and this one's together.
 */
static int past_end_of_file(void)
{
	const size_t n = 768 << 10;
	accel_context *ctx;
	accel_stream_t s;
	unsigned char *p, *h;
	int fd;

	setenv("ACCEL_INPROC_MAX_PINNED_MB", "1", 1);
	ctx = t_ctx();
	unsetenv("ACCEL_INPROC_MAX_PINNED_MB");
	CHECK(ctx);
	CHECK_OK(accel_stream_create(ctx, 0, 0, &s));
	fd = memfd_create("register_fault", MFD_CLOEXEC);
	CHECK(fd >= 0);
	CHECK(!ftruncate(fd, (off_t)(n - ps)));
	p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	CHECK(p != MAP_FAILED);
	CHECK_RET(accel_host_register(ctx, p, n, 0), -EFAULT);
	CHECK_RET(accel_host_register(ctx, p + n - 10, 10,
				      ACCEL_HOST_REGISTER_READONLY), -EFAULT);
	CHECK_RET(accel_host_register(ctx, p, n, 0), -EFAULT);
	CHECK(!ftruncate(fd, (off_t)n));
	CHECK_OK(accel_host_register(ctx, p, n, 0));
	/* A registration like any other: copies reach its last page. */
	CHECK_OK(accel_host_alloc(ctx, (void **)&h, ps, 0));
	t_fill(h, ps, 8);
	CHECK_OK(accel_memcpy_async(s, p + n - ps, h, ps, ACCEL_MEMCPY_H2H));
	CHECK_OK(accel_stream_synchronize(s, 10 * T_SEC));
	CHECK(t_check_fill(p + n - ps, ps, 8));
	CHECK_OK(accel_host_unregister(p, 0));
	munmap(p, n);
	close(fd);
	return T_PASS;
}

int main(void)
{
	static const struct t_case cases[] = {
		T(read_only_needs_flag), T(partly_read_only),
		T(pageable_running_into_a_registration),
		T(unmapped_or_inaccessible), T(untouched_memory),
		T(past_end_of_file),
	};

	ps = sysconf(_SC_PAGESIZE);
	return t_run(cases, sizeof(cases) / sizeof(cases[0]));
}
