// SPDX-License-Identifier: MIT
/*
 * The inproc transport enforces the driver's per-context limits: pinned
 * memory (max_pinned_mb, by default a quarter of RAM) and device memory
 * (max_device_mb, 1024), overridable by ACCEL_INPROC_MAX_PINNED_MB and
 * ACCEL_INPROC_MAX_DEVICE_MB, with -ENOMEM past them.
 */
#include <stdlib.h>
#include <sys/mman.h>

#include "helpers.h"

#define MB	(1UL << 20)

static long ps;

/* A context on the inproc transport, or NULL (the test is skipped). */
static accel_context *inproc_ctx(void)
{
	accel_context *ctx = t_ctx();
	const char *name;

	if (!ctx || accel_context_get_transport(ctx, &name) ||
	    strcmp(name, "inproc"))
		return NULL;
	return ctx;
}

/* Device memory is the transport's only with the cpu backend. */
static int cpu_backend(void)
{
	const char *name;

	return !accel_context_get_backend(NULL, &name) && !strcmp(name, "cpu");
}

static int default_device_limit(void)
{
	void *a, *b;

	unsetenv("ACCEL_INPROC_MAX_DEVICE_MB");
	if (!inproc_ctx() || !cpu_backend())
		return T_SKIP;
	/* Device memory is a reservation here: 1 GiB costs nothing. */
	CHECK_OK(accel_malloc(NULL, &a, 1024 * MB - ps));
	CHECK_RET(accel_malloc(NULL, &b, ps + 1), -ENOMEM);
	CHECK_OK(accel_malloc(NULL, &b, ps));
	CHECK_RET(accel_malloc(NULL, &b, 1), -ENOMEM);
	CHECK_OK(accel_free(a));
	CHECK_OK(accel_malloc(NULL, &a, 512 * MB));
	return T_PASS;
}

static int default_pinned_limit(void)
{
	/* A quarter of RAM, in whole MiB, as the module's default. */
	const size_t big = (size_t)(((unsigned long long)sysconf(_SC_PHYS_PAGES) *
				     (unsigned long long)ps / 4) >> 20) * MB;
	unsigned char *p;

	unsetenv("ACCEL_INPROC_MAX_PINNED_MB");
	if (!inproc_ctx())
		return T_SKIP;
	p = mmap(NULL, big + ps, PROT_NONE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	CHECK(p != MAP_FAILED);
	/* Past the limit: refused before the pages are looked at. */
	CHECK_RET(accel_host_register(NULL, p, big + 1, 0), -ENOMEM);
	CHECK_RET(accel_host_register(NULL, p + 1, big,
				      ACCEL_HOST_REGISTER_READONLY), -ENOMEM);
	/* Within it, the (inaccessible) pages decide. */
	CHECK_RET(accel_host_register(NULL, p, big,
				      ACCEL_HOST_REGISTER_READONLY), -EFAULT);
	munmap(p, big + ps);
	CHECK_RET(accel_host_alloc(NULL, (void **)&p, big + 1, 0), -ENOMEM);
	return T_PASS;
}

static int env_limits(void)
{
	unsigned char *h, *h2, *r, page[64];
	accel_stream_t s;
	void *d, *d2;
	int ret = T_FAIL;

	setenv("ACCEL_INPROC_MAX_PINNED_MB", "2", 1);
	setenv("ACCEL_INPROC_MAX_DEVICE_MB", "1", 1);
	if (!inproc_ctx()) {
		ret = T_SKIP;
		goto out;
	}
	unsetenv("ACCEL_INPROC_MAX_PINNED_MB");
	unsetenv("ACCEL_INPROC_MAX_DEVICE_MB");
	CHECK_OK(accel_stream_create(NULL, 0, 0, &s));

	if (cpu_backend()) {
		CHECK_RET(accel_malloc(NULL, &d, MB + 1), -ENOMEM);
		CHECK_OK(accel_malloc(NULL, &d2, MB / 2));
		CHECK_OK(accel_malloc(NULL, &d, MB / 2));
		CHECK_RET(accel_malloc(NULL, &d2, 1), -ENOMEM);
	} else {
		CHECK_OK(accel_malloc(NULL, &d, MB / 2));
	}

	CHECK_OK(accel_host_alloc(NULL, (void **)&h, MB, 0));
	CHECK_OK(accel_host_alloc(NULL, (void **)&h2, MB - ps, 0));
	/* One page left: a registered byte is charged a whole page. */
	r = mmap(NULL, 2 * ps, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(r != MAP_FAILED);
	CHECK_RET(accel_host_register(NULL, r + ps - 1, 2, 0), -ENOMEM);
	CHECK(strstr(accel_last_error_string(), "accel_host_register()"));
	CHECK(strstr(accel_last_error_string(), "2 MiB pinned per context"));
	CHECK_OK(accel_host_register(NULL, r + 1, 1, 0));
	CHECK_RET(accel_host_register(NULL, r + ps, 1, 0), -ENOMEM);
	/* Nothing left for a staging chunk either, not even of a page. */
	CHECK_RET(accel_memcpy_async(s, d, page, sizeof(page),
				     ACCEL_MEMCPY_H2D), -ENOMEM);
	/* The error names the limit, its value and how to raise it. */
	CHECK(strstr(accel_last_error_string(), "2 MiB pinned per context"));
	CHECK(strstr(accel_last_error_string(), "ACCEL_INPROC_MAX_PINNED_MB"));
	/* What is released is given back. */
	CHECK_OK(accel_host_unregister(r + 1, 0));
	CHECK_OK(accel_host_register(NULL, r + ps, 1, 0));
	CHECK_OK(accel_host_unregister(r + ps, 0));
	CHECK_OK(accel_memcpy_async(s, d, page, sizeof(page),
				     ACCEL_MEMCPY_H2D));
	CHECK_OK(accel_stream_synchronize(s, 10 * T_SEC));
	CHECK_OK(accel_host_free(h2));
	/* The staging chunk (one page here) stays pinned for reuse. */
	CHECK_RET(accel_host_alloc(NULL, (void **)&h2, MB, 0), -ENOMEM);
	CHECK_OK(accel_host_alloc(NULL, (void **)&h2, MB - ps, 0));
	munmap(r, 2 * ps);
	ret = T_PASS;
out:
	unsetenv("ACCEL_INPROC_MAX_PINNED_MB");
	unsetenv("ACCEL_INPROC_MAX_DEVICE_MB");
	return ret;
}

int main(void)
{
	static const struct t_case cases[] = {
		T(default_device_limit), T(default_pinned_limit),
		T(env_limits),
	};

	ps = sysconf(_SC_PAGESIZE);
	return t_run(cases, sizeof(cases) / sizeof(cases[0]));
}
