// SPDX-License-Identifier: MIT
/*
 * The library never prints: a failure's text is in
 * accel_last_error_string(), and its messages reach the log callback of
 * accel_set_log_fn() only, whatever the environment asks for.
 */
#include <sys/mman.h>
#include <syslog.h>

#include "helpers.h"

struct seen {
	int calls;
	int priority;
	char msg[256];
};

static void catch_log(void *data, int priority, const char *msg)
{
	struct seen *s = data;

	s->calls++;
	s->priority = priority;
	snprintf(s->msg, sizeof(s->msg), "%s", msg);
}

/* Fail a context creation (an unknown backend) with stderr in a file. */
static int fail_create(const char *log_env, char *out, size_t len)
{
	int fd = memfd_create("accel-log", 0), saved = dup(STDERR_FILENO), ret;
	accel_context *ctx;
	ssize_t n;

	if (fd < 0 || saved < 0)
		return -errno;
	if (log_env)
		setenv("ACCEL_LOG", log_env, 1);
	else
		unsetenv("ACCEL_LOG");
	setenv("ACCEL_BACKEND", "no-such-backend", 1);
	fflush(stderr);
	dup2(fd, STDERR_FILENO);
	ret = accel_context_create(&ctx, 0);
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	unsetenv("ACCEL_BACKEND");
	unsetenv("ACCEL_LOG");
	n = pread(fd, out, len - 1, 0);
	out[n > 0 ? n : 0] = '\0';
	close(fd);
	return ret;
}

static int silent_by_default(void)
{
	char out[512];

	CHECK_RET(fail_create(NULL, out, sizeof(out)), -EINVAL);
	CHECK(out[0] == '\0');				/* nothing printed */
	CHECK(strstr(accel_last_error_string(), "no-such-backend"));
	return T_PASS;
}

/*
 * Every diagnostic turned on, and the variable that once sent messages to
 * stderr: a failed creation, a staged pageable copy (ACCEL_SYNC_DEBUG's
 * note) and a context destroyed (ACCEL_TRACE's line) still print nothing.
 */
static int diagnostics_print_nothing(void)
{
	static const char *const vars[] = {
		"ACCEL_LOG", "ACCEL_TRACE", "ACCEL_SYNC_DEBUG",
	};
	struct seen s = { 0 };
	char out[512], src[256], dst[256];
	int fd, saved;
	accel_stream_t st;
	accel_context *ctx;
	void *dev;
	unsigned int i;
	ssize_t n;

	for (i = 0; i < 3; i++)
		setenv(vars[i], i ? "1" : "debug", 1);
	CHECK_RET(fail_create("debug", out, sizeof(out)), -EINVAL);
	CHECK(out[0] == '\0');
	fd = memfd_create("accel-log", 0);
	saved = dup(STDERR_FILENO);
	CHECK(fd >= 0 && saved >= 0);
	fflush(stderr);
	dup2(fd, STDERR_FILENO);
	memset(src, 5, sizeof(src));
	if (!accel_context_create(&ctx, 0)) {
		if (!accel_stream_create(ctx, 0, 0, &st) &&
		    !accel_malloc(ctx, &dev, sizeof(src))) {
			s.calls = accel_memcpy_async(st, dev, src, sizeof(src),
						     ACCEL_MEMCPY_H2D) ||
				  accel_memcpy_async(st, dst, dev, sizeof(dst),
						     ACCEL_MEMCPY_D2H) ||
				  accel_stream_synchronize(st, 30 * T_SEC);
			accel_free(dev);
			accel_stream_destroy(st);
		} else {
			s.calls = -1;
		}
		accel_context_destroy(ctx);
	} else {
		s.calls = -1;
	}
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	for (i = 0; i < 3; i++)
		unsetenv(vars[i]);
	n = pread(fd, out, sizeof(out) - 1, 0);
	close(fd);
	CHECK(s.calls == 0);			/* the calls worked */
	CHECK(!memcmp(dst, src, sizeof(src)));
	CHECK(n == 0);				/* and printed nothing */
	return T_PASS;
}

/* What ACCEL_TRACE and ACCEL_SYNC_DEBUG produce goes to the callback. */
static void count_log(void *data, int priority, const char *msg)
{
	struct seen *s = data;

	(void)priority;
	if (strstr(msg, "ACCEL_SYNC_DEBUG") || strstr(msg, "trace: staging"))
		s->calls++;
}

static int diagnostics_reach_the_callback(void)
{
	char src[256], dst[256];
	struct seen s = { 0 };
	accel_stream_t st;
	accel_context *ctx;
	void *dev;

	setenv("ACCEL_TRACE", "1", 1);
	setenv("ACCEL_SYNC_DEBUG", "1", 1);
	accel_set_log_fn(count_log, &s);
	memset(src, 6, sizeof(src));
	CHECK_OK(accel_context_create(&ctx, 0));
	CHECK_OK(accel_stream_create(ctx, 0, 0, &st));
	CHECK_OK(accel_malloc(ctx, &dev, sizeof(src)));
	CHECK_OK(accel_memcpy_async(st, dev, src, sizeof(src),
				    ACCEL_MEMCPY_H2D));
	CHECK_OK(accel_memcpy_async(st, dst, dev, sizeof(dst),
				    ACCEL_MEMCPY_D2H));
	CHECK_OK(accel_stream_synchronize(st, 30 * T_SEC));
	CHECK_OK(accel_free(dev));
	CHECK_OK(accel_stream_destroy(st));
	CHECK_OK(accel_context_destroy(ctx));
	accel_set_log_fn(NULL, NULL);
	unsetenv("ACCEL_TRACE");
	unsetenv("ACCEL_SYNC_DEBUG");
	CHECK(!memcmp(dst, src, sizeof(src)));
	/* At least the staging note (once per cause) and the trace line. */
	CHECK(s.calls >= 2);
	return T_PASS;
}

static int callback_gets_the_message(void)
{
	struct seen s = { 0 };
	char out[512];

	accel_set_log_fn(catch_log, &s);
	CHECK_RET(fail_create(NULL, out, sizeof(out)), -EINVAL);
	accel_set_log_fn(NULL, NULL);
	CHECK(out[0] == '\0');			/* the callback, not stderr */
	CHECK(s.calls == 1);
	CHECK(s.priority == LOG_ERR);
	CHECK(strstr(s.msg, "no-such-backend"));
	CHECK(!strcmp(s.msg, accel_last_error_string()));
	/* Restored: silent again. */
	CHECK_RET(fail_create(NULL, out, sizeof(out)), -EINVAL);
	CHECK(out[0] == '\0' && s.calls == 1);
	return T_PASS;
}

T_MAIN({ "silent_by_default", silent_by_default },
       { "diagnostics_print_nothing", diagnostics_print_nothing },
       { "diagnostics_reach_the_callback", diagnostics_reach_the_callback },
       { "callback_gets_the_message", callback_gets_the_message })
