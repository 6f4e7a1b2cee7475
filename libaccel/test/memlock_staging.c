// SPDX-License-Identifier: MIT
/*
 * A small RLIMIT_MEMLOCK (64 KiB, CAP_IPC_LOCK given up) that the staging
 * pool of the first pageable copies takes whole: a pinned allocation past
 * it fails with -ENOMEM, and accel_last_error_string() names the limit,
 * what holds it (the staging pool's bytes) and the settings that make the
 * pool smaller, so the user is not left to guess where the limit went.
 */
#include <sys/resource.h>
#include <sys/wait.h>

#include "helpers.h"

#define LIMIT		(64U << 10)
#define COPY_LEN	(1U << 20)
#define NOBODY		65534

static int said(const char *word)
{
	if (strstr(accel_last_error_string(), word))
		return 1;
	printf("# \"%s\" not in \"%s\"\n", word, accel_last_error_string());
	return 0;
}

/* The child: 0, or the step that went wrong. */
static int memlock_child(void *unused __attribute__((unused)))
{
	struct rlimit rl = { LIMIT, LIMIT };
	accel_context *ctx;
	accel_stream_t s;
	char *src;
	void *d, *p;
	int ret;

	alarm(20);
	/* Opened first: the device node may not be nobody's to open. */
	if (accel_context_create(&ctx, 0) ||
	    accel_stream_create(ctx, 0, 0, &s) ||
	    accel_malloc(ctx, &d, COPY_LEN))
		return 10;
	src = calloc(1, COPY_LEN);
	if (!src)
		return 11;
	/* An unprivileged process: the limit binds it. */
	if (setrlimit(RLIMIT_MEMLOCK, &rl) ||
	    setresgid(NOBODY, NOBODY, NOBODY) ||
	    setresuid(NOBODY, NOBODY, NOBODY))
		return 12;
	/* The staging pool pins what it can get: all of the limit. */
	if (accel_memcpy_async(s, d, src, COPY_LEN, ACCEL_MEMCPY_H2D) ||
	    accel_memcpy_async(s, d, src, 4096, ACCEL_MEMCPY_H2D) ||
	    accel_stream_synchronize(s, ACCEL_TIMEOUT_INFINITE))
		return 20;
	ret = accel_host_alloc(ctx, &p, 4096, 0);
	if (ret != -ENOMEM) {
		printf("# accel_host_alloc: %d\n", ret);
		return 30;
	}
	if (!said("RLIMIT_MEMLOCK is 64 KiB") ||
	    !said("the staging pool holds ") ||
	    !said("ACCEL_STAGING_CHUNKS") || !said("ACCEL_STAGING_CHUNK_KB"))
		return 31;
	if (accel_context_destroy(ctx))
		return 40;
	return 0;
}

static int staging_pool_named_when_it_holds_the_limit(void)
{
	CHECK(t_ctx());
	if (!t_backend_forks(NULL))
		return T_SKIP;
	if (geteuid()) {
		printf("# needs root to become nobody with a limit it cannot raise\n");
		return T_SKIP;
	}
	t_ctx_cleanup();
	CHECK(t_in_child(memlock_child, NULL) == 0);
	return T_PASS;
}

T_MAIN(T(staging_pool_named_when_it_holds_the_limit))
