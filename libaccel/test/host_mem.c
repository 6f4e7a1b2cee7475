// SPDX-License-Identifier: MIT
/* Pinned host memory, registration and device memory: lifetimes, errnos. */
#include <sys/mman.h>

#include "memlock_helpers.h"

static int host_alloc_zeroed_and_free(void)
{
	unsigned char *p;
	size_t i;

	CHECK(t_ctx());
	CHECK_RET(accel_host_alloc(NULL, (void **)&p, 0, 0), -EINVAL);
	CHECK_RET(accel_host_alloc(NULL, NULL, 64, 0), -EINVAL);
	CHECK_RET(accel_host_alloc(NULL, (void **)&p, 64, 0x80), -EINVAL);
	CHECK_OK(accel_host_alloc(NULL, (void **)&p, 10000, 0));
	for (i = 0; i < 10000; i++)
		CHECK(p[i] == 0);
	memset(p, 0xab, 10000);
	CHECK_RET(accel_host_free(p + 1), -EINVAL);
	CHECK_RET(accel_free(p), -EINVAL);
	CHECK_RET(accel_host_unregister(p, 0), -EINVAL);
	CHECK_OK(accel_host_free(p));
	CHECK_RET(accel_host_free(p), -ENOENT);
	CHECK_RET(accel_host_free(NULL), -EINVAL);
	return T_PASS;
}

static int register_errnos(void)
{
	unsigned char *buf, *p;
	void *d;

	CHECK(t_ctx());
	buf = aligned_alloc(4096, 8 * 4096);
	CHECK(buf);
	CHECK_RET(accel_host_register(NULL, buf, 0, 0), -EINVAL);
	CHECK_RET(accel_host_register(NULL, NULL, 64, 0), -EINVAL);
	CHECK_RET(accel_host_register(NULL, buf, 64, 0x80), -EINVAL);
	CHECK_OK(accel_host_register(NULL, buf + 4096, 2 * 4096, 0));
	/* Overlaps: same range, head, tail, inside, around. */
	CHECK_RET(accel_host_register(NULL, buf + 4096, 2 * 4096, 0), -EEXIST);
	CHECK_RET(accel_host_register(NULL, buf, 4097, 0), -EEXIST);
	CHECK_RET(accel_host_register(NULL, buf + 3 * 4096 - 1, 10, 0), -EEXIST);
	CHECK_RET(accel_host_register(NULL, buf + 5000, 10, 0), -EEXIST);
	CHECK_RET(accel_host_register(NULL, buf, 8 * 4096, 0), -EEXIST);
	/* Adjacent ranges do not overlap. */
	CHECK_OK(accel_host_register(NULL, buf, 4096, 0));
	CHECK_OK(accel_host_register(NULL, buf + 3 * 4096, 100, 0));
	/* Unregister: interior pointer, unknown pointer, then the real one. */
	CHECK_RET(accel_host_unregister(buf + 4097, 0), -EINVAL);
	CHECK_RET(accel_host_unregister(buf + 7 * 4096, 0), -ENOENT);
	CHECK_RET(accel_host_unregister(NULL, 0), -EINVAL);
	CHECK_RET(accel_host_unregister(buf + 4096, 0x10), -EINVAL);
	CHECK_OK(accel_host_unregister(buf + 4096, 0));
	CHECK_RET(accel_host_unregister(buf + 4096, 0), -ENOENT);
	CHECK_OK(accel_host_unregister(buf, 0));
	CHECK_OK(accel_host_unregister(buf + 3 * 4096, 0));
	/* Memory libaccel handed out is already registered. */
	CHECK_OK(accel_host_alloc(NULL, (void **)&p, 4096, 0));
	CHECK_RET(accel_host_register(NULL, p, 4096, 0), -EEXIST);
	CHECK_OK(accel_malloc(NULL, &d, 4096));
	CHECK_RET(accel_host_register(NULL, d, 4096, 0), -EEXIST);
	free(buf);
	return T_PASS;
}

static int register_unmapped_efault(void)
{
	unsigned char *p;

	CHECK(t_ctx());
	CHECK_RET(t_register_over_hole(&p, 0), -EFAULT);
	munmap(p, 4096);
	munmap(p + 2 * 4096, 4096);
	return T_PASS;
}

static int unregister_busy_then_deferred(void)
{
	accel_stream_t s;
	accel_event_t gate;
	unsigned char *buf, *out;
	void *d;

	CHECK_OK(t_stream(&s));
	buf = malloc(65536);
	CHECK(buf);
	CHECK_OK(accel_host_register(NULL, buf, 65536, 0));
	CHECK_OK(accel_host_alloc(NULL, (void **)&out, 65536, 0));
	CHECK_OK(accel_malloc(NULL, &d, 65536));
	CHECK_OK(t_gated_h2d(s, d, buf, 65536, 6, &gate));
	CHECK_OK(accel_memcpy_async(s, out, d, 65536, ACCEL_MEMCPY_D2H));
	/* Queued work names it: refused, nothing changes. */
	CHECK_RET(accel_host_unregister(buf, 0), -EBUSY);
	CHECK_OK(accel_host_unregister(buf, ACCEL_HOST_UNREGISTER_DEFERRED));
	CHECK_RET(accel_host_unregister(buf, 0), -ENOENT);
	CHECK_OK(t_gate_open(gate));
	CHECK_OK(accel_stream_synchronize(s, ACCEL_TIMEOUT_INFINITE));
	CHECK(t_check_fill(out, 65536, 6));
	/* The range may be registered again. */
	CHECK_OK(accel_host_register(NULL, buf, 65536, 0));
	CHECK_OK(accel_host_unregister(buf, 0));
	free(buf);
	return T_PASS;
}

/*
 * Bug report: a host buffer refilled right after its async H2D must still
 * deliver the original bytes when it came from accel_host_alloc and was
 * freed (stream-ordered free), even when the next allocation reuses it.
 */
static int host_free_deferred_delivers_original(void)
{
	const size_t n = 1 << 20;
	unsigned char *h, *h2, *out;
	accel_stream_t s;
	accel_event_t gate;
	void *d;

	CHECK_OK(t_copy_setup(n, &s, &d, &out));
	CHECK_OK(accel_host_alloc(NULL, (void **)&h, n, 0));
	CHECK_OK(t_gated_h2d(s, d, h, n, 7, &gate));
	CHECK_OK(accel_host_free(h));
	/* Refill: a new pinned buffer, quite possibly at the same address. */
	CHECK_OK(accel_host_alloc(NULL, (void **)&h2, n, 0));
	t_fill(h2, n, 8);
	CHECK_OK(accel_memcpy_async(s, out, d, n, ACCEL_MEMCPY_D2H));
	CHECK_OK(t_gate_open(gate));
	CHECK_OK(accel_stream_synchronize(s, ACCEL_TIMEOUT_INFINITE));
	CHECK(t_check_fill(out, n, 7));
	CHECK_OK(accel_host_free(h2));
	return T_PASS;
}

static int device_malloc_free(void)
{
	unsigned char *h, *out;
	accel_stream_t s;
	accel_event_t gate;
	void *d, *d2;

	CHECK(t_ctx());
	CHECK_RET(accel_malloc(NULL, &d, 0), -EINVAL);
	CHECK_RET(accel_malloc(NULL, NULL, 64), -EINVAL);
	CHECK_OK(accel_stream_create(NULL, 0, 0, &s));
	CHECK_OK(accel_host_alloc(NULL, (void **)&h, 4096, 0));
	CHECK_OK(accel_host_alloc(NULL, (void **)&out, 4096, 0));
	CHECK_OK(accel_malloc(NULL, &d, 4096));
	CHECK_OK(accel_malloc(NULL, &d2, 4096));
	CHECK(d != d2);
	CHECK_RET(accel_free((char *)d + 8), -EINVAL);
	CHECK_RET(accel_host_free(d), -EINVAL);
	/* Device memory starts zeroed. */
	CHECK_OK(accel_memcpy_async(s, out, d, 4096, ACCEL_MEMCPY_D2H));
	CHECK_OK(accel_stream_synchronize(s, ACCEL_TIMEOUT_INFINITE));
	for (int i = 0; i < 4096; i++)
		CHECK(out[i] == 0);
	/* Freed with copies queued: stream-ordered, the copies complete. */
	CHECK_OK(t_gated_h2d(s, d, h, 4096, 10, &gate));
	CHECK_OK(accel_memcpy_async(s, out, d, 4096, ACCEL_MEMCPY_D2H));
	CHECK_OK(accel_free(d));
	CHECK_RET(accel_free(d), -ENOENT);
	CHECK_RET(accel_memcpy_async(s, out, d, 16, ACCEL_MEMCPY_D2H), -EINVAL);
	CHECK_OK(t_gate_open(gate));
	CHECK_OK(accel_stream_synchronize(s, ACCEL_TIMEOUT_INFINITE));
	CHECK(t_check_fill(out, 4096, 10));
	CHECK_OK(accel_free(d2));
	return T_PASS;
}

/* Locked memory of this process, bytes (VmLck); -1 unknown. */
static long vmlck(void)
{
	long kb = t_read_long("/proc/self/status", "VmLck: %ld kB");

	return kb < 0 ? -1 : kb * 1024;
}

/*
 * A registration leaves the program's own locks alone: a range the
 * program mlock()ed stays locked after it is registered and unregistered,
 * once in one context and once in two.
 */
static int register_keeps_program_mlock(void)
{
	const size_t n = 64 << 10;
	accel_context *c1, *c2;
	long before;
	char *p;

	p = mmap(NULL, n, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(p != MAP_FAILED);
	memset(p, 1, n);
	before = vmlck();
	if (mlock(p, n) || vmlck() < before + (long)n) {
		/* The sanitizers intercept mlock() and do nothing. */
		printf("# mlock does not show in VmLck here\n");
		munmap(p, n);
		return T_SKIP;
	}
	before = vmlck();
	c1 = t_ctx();
	CHECK(c1);
	CHECK_OK(accel_host_register(c1, p, n, 0));
	CHECK_OK(accel_context_set_current(c1));
	CHECK_OK(accel_host_unregister(p, 0));
	CHECK(vmlck() == before);
	CHECK_OK(accel_context_create(&c2, 0));
	CHECK_OK(accel_host_register(c1, p, n, 0));
	CHECK_OK(accel_host_register(c2, p + 100, 8000, 0));
	CHECK_OK(accel_context_set_current(c2));
	CHECK_OK(accel_host_unregister(p + 100, 0));
	CHECK_OK(accel_context_set_current(c1));
	CHECK_OK(accel_host_unregister(p, 0));
	CHECK(vmlck() == before);
	CHECK_OK(accel_context_destroy(c2));
	CHECK(vmlck() == before);
	munlock(p, n);
	munmap(p, n);
	return T_PASS;
}

/*
 * RLIMIT_MEMLOCK of 8 pages: every registration is charged its pages
 * until it is released, whoever else holds the same pages: a range
 * registered in two contexts is charged twice, unregistering it in one
 * leaves the other's charge, and a deferred unregister's charge goes when
 * its copy retires, not the charge of the range registered again since.
 * A range past the limit fails with -ENOMEM whatever it holds: the charge
 * comes before the pages are looked at, as the module charges before it
 * pins.
 */
static int memlock_child(void)
{
	long ps = sysconf(_SC_PAGESIZE);
	struct rlimit rl = { 8 * ps, 8 * ps };
	accel_context *c1, *c2;
	accel_event_t gate;
	accel_stream_t s;
	char *m, *holed;
	void *d;

	CHECK(setrlimit(RLIMIT_MEMLOCK, &rl) == 0);
	CHECK(t_drop_ipc_lock() == 0);
	m = mmap(NULL, 16 * ps, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(m != MAP_FAILED);
	memset(m, 1, 16 * ps);
	CHECK_OK(accel_context_create(&c1, 0));
	CHECK_OK(accel_context_create(&c2, 0));
	holed = mmap(NULL, 16 * ps, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(holed != MAP_FAILED);
	CHECK(!munmap(holed + 12 * ps, ps));
	CHECK_RET(accel_host_register(c1, holed, 16 * ps, 0), -ENOMEM);
	CHECK_RET(accel_host_register(c1, holed + 8 * ps, 8 * ps, 0), -EFAULT);
	CHECK_OK(accel_host_register(c1, m, 4 * ps, 0));
	CHECK_OK(accel_host_register(c2, m, 4 * ps, 0));
	CHECK_RET(accel_host_register(c1, m + 4 * ps, ps, 0), -ENOMEM);
	/* c2's release leaves c1's 4 pages charged. */
	CHECK_OK(accel_context_set_current(c2));
	CHECK_OK(accel_host_unregister(m, 0));
	CHECK_OK(accel_context_set_current(c1));
	CHECK_RET(accel_host_register(c1, m + 4 * ps, 5 * ps, 0), -ENOMEM);
	CHECK_OK(accel_host_register(c1, m + 4 * ps, 4 * ps, 0));
	CHECK_OK(accel_host_unregister(m + 4 * ps, 0));
	/* Deferred, then registered again: 8 pages until the copy retires. */
	CHECK_OK(accel_malloc(c1, &d, 4 * ps));
	CHECK_OK(t_gated_stream(c1, &s, &gate));
	CHECK_OK(accel_memcpy_async(s, d, m, 4 * ps, ACCEL_MEMCPY_H2D));
	CHECK_OK(accel_host_unregister(m, ACCEL_HOST_UNREGISTER_DEFERRED));
	CHECK_OK(accel_host_register(c1, m, 4 * ps, 0));
	CHECK_RET(accel_host_register(c1, m + 4 * ps, ps, 0), -ENOMEM);
	CHECK_OK(t_gate_open(gate));
	CHECK_OK(accel_stream_synchronize(s, ACCEL_TIMEOUT_INFINITE));
	/* The retired copy's charge went; the registration's stays. */
	CHECK_RET(accel_host_register(c1, m + 4 * ps, 5 * ps, 0), -ENOMEM);
	CHECK_OK(accel_host_register(c1, m + 4 * ps, 4 * ps, 0));
	CHECK_OK(accel_context_destroy(c2));
	CHECK_OK(accel_context_destroy(c1));
	return T_PASS;
}

static int memlock_charged_per_registration(void)
{
	CHECK_RET(t_cpu_child(memlock_child), T_PASS);
	return T_PASS;
}

T_MAIN(T(host_alloc_zeroed_and_free), T(register_errnos),
       T(register_unmapped_efault), T(unregister_busy_then_deferred),
       T(host_free_deferred_delivers_original), T(device_malloc_free),
       T(register_keeps_program_mlock), T(memlock_charged_per_registration))
