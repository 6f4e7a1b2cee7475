// SPDX-License-Identifier: MIT
/* accel_strerror() and accel_last_error_string(). */
#include <limits.h>

#include "helpers.h"

/* Every int has a text, INT_MIN (whose negation overflows) included. */
static int strerror_any_int(void)
{
	static const int v[] = { 0, -1, 1, -133, -134, 4095, -4096, 100000,
				 -100000, INT_MAX, INT_MIN + 1, INT_MIN };
	unsigned int i;

	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		const char *s = accel_strerror(v[i]);

		CHECK(s && *s);
	}
	CHECK(!strcmp(accel_strerror(INT_MIN), "Unknown error"));
	CHECK(!strcmp(accel_strerror(INT_MAX), "Unknown error"));
	CHECK(!strcmp(accel_strerror(-ENOENT), accel_strerror(ENOENT)));
	return T_PASS;
}

static int strerror_eagain_covers_queue_full(void)
{
	const char *s = accel_strerror(-EAGAIN);

	CHECK(strstr(s, "not ready") && strstr(s, "queue full"));
	CHECK(strstr(accel_strerror(-EDEADLK), "host function"));
	return T_PASS;
}

/* Set a variable for one context creation, then put it back. */
static int create_with(const char *name, const char *value,
		       accel_context **ctx)
{
	const char *old = getenv(name);
	char *saved = old ? strdup(old) : NULL;
	int ret;

	if (value)
		setenv(name, value, 1);
	else
		unsetenv(name);
	ret = accel_context_create(ctx, 0);
	if (saved) {
		setenv(name, saved, 1);
		free(saved);
	} else {
		unsetenv(name);
	}
	return ret;
}

/* The message belongs to the thread's last call, failed or not. */
static int last_error_is_the_last_calls(void)
{
	accel_context *ctx;
	accel_stream_t s;
	int ret;

	CHECK_RET(create_with("ACCEL_TRANSPORT", "bogus", &ctx), -EINVAL);
	CHECK(strstr(accel_last_error_string(), "ACCEL_TRANSPORT=bogus"));
	CHECK_RET(create_with("ACCEL_BACKEND", "bogus", &ctx), -EINVAL);
	CHECK(strstr(accel_last_error_string(), "ACCEL_BACKEND=bogus"));

	/* A successful create leaves nothing, even where auto fell back. */
	CHECK_OK(create_with("ACCEL_BACKEND", "auto", &ctx));
	CHECK(!*accel_last_error_string());
	CHECK_OK(accel_context_destroy(ctx));

	/* Without the module, -ENODEV says what to do, not only stderr. */
	ret = create_with("ACCEL_TRANSPORT", NULL, &ctx);
	if (ret == -ENODEV) {
		CHECK(strstr(accel_last_error_string(), "/dev/accelstream"));
		CHECK(strstr(accel_last_error_string(), "ACCEL_TRANSPORT=inproc"));
	} else if (!ret) {
		CHECK(!*accel_last_error_string());
		CHECK_OK(accel_context_destroy(ctx));
	}

	/* The next call on an object starts afresh. */
	CHECK_RET(create_with("ACCEL_TRANSPORT", "bogus", &ctx), -EINVAL);
	CHECK(*accel_last_error_string());
	CHECK(t_ctx());
	CHECK(!*accel_last_error_string());
	CHECK_RET(create_with("ACCEL_TRANSPORT", "bogus", &ctx), -EINVAL);
	CHECK_OK(accel_stream_create(NULL, 0, 0, &s));
	CHECK(!*accel_last_error_string());
	CHECK_RET(create_with("ACCEL_TRANSPORT", "bogus", &ctx), -EINVAL);
	CHECK_OK(accel_stream_query(s));
	CHECK(!*accel_last_error_string());
	return T_PASS;
}

/* Each thread has its own. */
static void *other_thread(void *arg)
{
	*(int *)arg = *accel_last_error_string() ? 1 : 0;
	return NULL;
}

static int last_error_per_thread(void)
{
	accel_context *ctx;
	pthread_t t;
	int nonempty = -1;

	CHECK_RET(create_with("ACCEL_TRANSPORT", "bogus", &ctx), -EINVAL);
	CHECK(pthread_create(&t, NULL, other_thread, &nonempty) == 0);
	pthread_join(t, NULL);
	CHECK(nonempty == 0);
	CHECK(*accel_last_error_string());
	return T_PASS;
}

T_MAIN(T(strerror_any_int), T(strerror_eagain_covers_queue_full),
       T(last_error_is_the_last_calls), T(last_error_per_thread))
