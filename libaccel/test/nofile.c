// SPDX-License-Identifier: MIT
/*
 * Out of file descriptors (RLIMIT_NOFILE lowered in a child, every
 * descriptor under it taken): each call that needs one fails as its page
 * says and its message names descriptors, not a pinning limit. In process
 * a pinned allocation or staging chunk is a memory file (-ENOMEM, the
 * module's errno, with a message saying descriptors ran out); over the
 * module they need none and succeed. An exported event is a descriptor on
 * both (-EMFILE), and so is a context over the module. accel_strerror()
 * knows EMFILE and ENFILE.
 */
#include <fcntl.h>
#include <stdbool.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "helpers.h"

#define CHILD_ALARM_S	20
#define COPY_LEN	(1U << 20)

static bool transport_is(const char *want)
{
	const char *name = "";

	accel_context_get_transport(NULL, &name);
	return !strcmp(name, want);
}

/* The last message names descriptors and gives no pinning advice. */
static bool said_descriptors(void)
{
	const char *m = accel_last_error_string();

	if (strstr(m, "RLIMIT_NOFILE") && !strstr(m, "MAX_PINNED") &&
	    !strstr(m, "max_pinned_mb") && !strstr(m, "RLIMIT_MEMLOCK"))
		return true;
	printf("# message: \"%s\"\n", m);
	return false;
}

static void use_up_descriptors(void)
{
	while (open("/dev/null", O_RDONLY | O_CLOEXEC) >= 0)
		;
}

/* The child: 0, or the step that went wrong. */
static int nofile_child(void *unused __attribute__((unused)))
{
	accel_context *ctx, *c2;
	struct rlimit rl;
	accel_stream_t s;
	accel_event_t e;
	bool inproc;
	char *src;
	void *d, *p;
	int ret, fd;

	alarm(CHILD_ALARM_S);
	if (accel_context_create(&ctx, 0) ||
	    accel_stream_create(ctx, 0, 0, &s) ||
	    accel_event_create(ctx, 0, &e) || accel_malloc(ctx, &d, COPY_LEN))
		return 10;
	inproc = transport_is("inproc");
	src = calloc(1, COPY_LEN);
	if (!src)
		return 11;
	/* Few enough that taking them all is quick. */
	rl.rlim_cur = 64;
	rl.rlim_max = 64;
	if (setrlimit(RLIMIT_NOFILE, &rl))
		return 12;
	use_up_descriptors();

	/* The first pageable copy pins the staging pool's first chunk. */
	ret = accel_memcpy_async(s, d, src, COPY_LEN, ACCEL_MEMCPY_H2D);
	if (inproc) {
		if (ret != -ENOMEM)
			return 20;
		if (!said_descriptors())
			return 21;
	} else if (ret) {
		return 22;
	}
	ret = accel_host_alloc(ctx, &p, 4096, 0);
	if (inproc) {
		if (ret != -ENOMEM)
			return 30;
		if (!said_descriptors())
			return 31;
	} else if (ret) {
		return 32;
	}
	if (accel_event_record(e, s) ||
	    accel_event_export_fd(e, &fd) != -EMFILE)
		return 40;
	ret = accel_context_create(&c2, 0);
	if (inproc ? ret != 0 : ret != -EMFILE)
		return 50;
	if (!inproc && !said_descriptors())
		return 51;
	if (!ret)
		accel_context_destroy(c2);
	/* A descriptor back: the copy goes through. */
	close(63);
	if (accel_memcpy_async(s, d, src, COPY_LEN, ACCEL_MEMCPY_H2D) ||
	    accel_stream_synchronize(s, ACCEL_TIMEOUT_INFINITE))
		return 60;
	if (accel_context_destroy(ctx))
		return 61;
	return 0;
}

static int nofile_errors(void)
{
	CHECK(t_ctx());
	if (!t_backend_forks(NULL))
		return T_SKIP;
	t_ctx_cleanup();
	CHECK(t_in_child(nofile_child, NULL) == 0);
	return T_PASS;
}

static int strerror_knows_fd_errnos(void)
{
	CHECK(strcmp(accel_strerror(-EMFILE), "Unknown error"));
	CHECK(strcmp(accel_strerror(-ENFILE), "Unknown error"));
	CHECK(strstr(accel_strerror(-EMFILE), "open files"));
	CHECK(strstr(accel_strerror(-ENFILE), "open files"));
	return T_PASS;
}

T_MAIN(T(nofile_errors), T(strerror_knows_fd_errnos))
