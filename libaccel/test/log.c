// SPDX-License-Identifier: MIT
/*
 * The library never prints by itself: a failure's text is in
 * accel_last_error_string(), and reaches stderr or the log callback only
 * when asked (ACCEL_LOG, accel_set_log_fn()).
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

static int accel_log_prints_to_stderr(void)
{
	char out[512];

	CHECK_RET(fail_create("1", out, sizeof(out)), -EINVAL);
	CHECK(strstr(out, "libaccel: ") == out);
	CHECK(strstr(out, "no-such-backend"));
	/* An error is above what "err" asks for; nothing below it here. */
	CHECK_RET(fail_create("err", out, sizeof(out)), -EINVAL);
	CHECK(strstr(out, "no-such-backend"));
	CHECK_RET(fail_create("0", out, sizeof(out)), -EINVAL);
	CHECK(out[0] == '\0');
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
       { "accel_log_prints_to_stderr", accel_log_prints_to_stderr },
       { "callback_gets_the_message", callback_gets_the_message })
