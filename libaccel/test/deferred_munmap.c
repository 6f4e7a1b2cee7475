// SPDX-License-Identifier: MIT
/*
 * A registered range unregistered with ACCEL_HOST_UNREGISTER_DEFERRED and
 * then unmapped while a copy naming it is still queued. The module keeps
 * the pages pinned until the copy retired: the bytes arrive. The inproc
 * transport cannot hold pages past munmap: the copy fails with -EFAULT
 * (the stream fails, waits return -EIO), never a crash (libaccel(7)).
 */
#include <sys/mman.h>

#include "helpers.h"

/*
 * A stream of the current context, whose backend must be cpu: these are
 * tests of its engines. T_PASS, T_SKIP or T_FAIL.
 */
static int cpu_stream(accel_stream_t *s)
{
	const char *backend = "";

	CHECK(t_ctx());
	CHECK_OK(accel_context_get_backend(NULL, &backend));
	if (strcmp(backend, "cpu")) {
		/* CUDA's own pin keeps the pages; the stand-in only memcpys. */
		printf("# the cpu backend's engines only\n");
		return T_SKIP;
	}
	CHECK_OK(accel_stream_create(NULL, 0, 0, s));
	return T_PASS;
}

static int unmapped_after_deferred_unregister(void)
{
	const char *tp = getenv("ACCEL_TRANSPORT");
	long ps = sysconf(_SC_PAGESIZE);
	unsigned char *q, *out;
	accel_event_t gate;
	accel_stream_t s;
	void *d;
	int ret;

	ret = cpu_stream(&s);
	if (ret)
		return ret;
	CHECK_OK(accel_malloc(NULL, &d, 2 * ps));
	CHECK_OK(accel_host_alloc(NULL, (void **)&out, 2 * ps, 0));
	q = mmap(NULL, 2 * ps, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(q != MAP_FAILED);
	t_fill(q, 2 * ps, 31);
	CHECK_OK(accel_host_register(NULL, q, 2 * ps, 0));
	CHECK_OK(t_gate(s, &gate));
	CHECK_OK(accel_memcpy_async(s, d, q, 2 * ps, ACCEL_MEMCPY_H2D));
	CHECK_OK(accel_host_unregister(q, ACCEL_HOST_UNREGISTER_DEFERRED));
	CHECK(!t_punch(q, 2 * ps));
	CHECK_OK(accel_memcpy_async(s, out, d, 2 * ps, ACCEL_MEMCPY_D2H));
	CHECK_OK(t_gate_open(gate));
	ret = accel_stream_synchronize(s, 30 * T_SEC);
	if (tp && !strcmp(tp, "inproc")) {
		int prio;

		CHECK_RET(ret, -EIO);
		/* The fault is the stream's sticky error: -EIO everywhere. */
		CHECK_RET(accel_stream_query(s), -EIO);
		CHECK_RET(accel_stream_get_priority(s, &prio), -EIO);
		CHECK_RET(accel_memcpy_async(s, d, out, 0, ACCEL_MEMCPY_H2D),
			  -EIO);
		return T_PASS;
	}
	CHECK_OK(ret);
	CHECK(t_check_fill(out, 2 * ps, 31));
	return T_PASS;
}

/* The same with the range as the destination of a queued D2H. */
static int unmapped_destination_after_deferred_unregister(void)
{
	const char *tp = getenv("ACCEL_TRANSPORT");
	long ps = sysconf(_SC_PAGESIZE);
	accel_event_t gate;
	accel_stream_t s;
	unsigned char *q;
	void *d;
	int ret;

	ret = cpu_stream(&s);
	if (ret)
		return ret;
	CHECK_OK(accel_malloc(NULL, &d, ps));
	q = mmap(NULL, ps, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(q != MAP_FAILED);
	CHECK_OK(accel_host_register(NULL, q, ps, 0));
	CHECK_OK(t_gate(s, &gate));
	CHECK_OK(accel_memcpy_async(s, q, d, ps, ACCEL_MEMCPY_D2H));
	CHECK_OK(accel_host_unregister(q, ACCEL_HOST_UNREGISTER_DEFERRED));
	CHECK(!t_punch(q, ps));
	CHECK_OK(t_gate_open(gate));
	ret = accel_stream_synchronize(s, 30 * T_SEC);
	CHECK_RET(ret, tp && !strcmp(tp, "inproc") ? -EIO : 0);
	return T_PASS;
}

T_MAIN(T(unmapped_after_deferred_unregister),
       T(unmapped_destination_after_deferred_unregister))
