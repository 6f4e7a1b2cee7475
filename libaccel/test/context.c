// SPDX-License-Identifier: MIT
/* Contexts, transports and the environment. */
#include "helpers.h"

static int create_destroy(void)
{
	accel_context *ctx, *old;
	const char *name;
	accel_stream_t s;

	CHECK_RET(accel_context_create(NULL, 0), -EINVAL);
	CHECK_RET(accel_context_create(&ctx, 1), -EINVAL);
	CHECK_OK(accel_context_create(&ctx, 0));
	CHECK_OK(accel_context_get_transport(ctx, &name));
	CHECK(!strcmp(name, "kernel") || !strcmp(name, "inproc"));
	CHECK_OK(accel_stream_create(ctx, 0, 0, &s));
	CHECK_OK(accel_context_destroy(ctx));
	/* Everything it held is gone; stale handles, no crash. */
	CHECK_RET(accel_stream_query(s), -ENOENT);
	CHECK_RET(accel_context_destroy(ctx), -ENOENT);
	old = ctx;
	CHECK_OK(accel_context_create(&ctx, 0));
	CHECK_RET(accel_context_destroy(old), -ENOENT);
	CHECK_RET(accel_context_set_current(old), -ENOENT);
	CHECK_OK(accel_context_destroy(ctx));
	return T_PASS;
}

static int destroy_with_work_queued(void)
{
	accel_context *ctx;
	accel_stream_t s;
	accel_event_t gate;
	unsigned char *h;
	void *d;

	CHECK_OK(accel_context_create(&ctx, 0));
	CHECK_OK(accel_stream_create(ctx, 0, 0, &s));
	CHECK_OK(accel_host_alloc(ctx, (void **)&h, 1 << 16, 0));
	CHECK_OK(accel_malloc(ctx, &d, 1 << 16));
	CHECK_OK(t_gate(s, &gate));
	CHECK_OK(accel_memcpy_async(s, d, h, 1 << 16, ACCEL_MEMCPY_H2D));
	/* Never opened: destroy cancels the queued work, no hang. */
	CHECK_OK(accel_context_destroy(ctx));
	return T_PASS;
}

static int with_env(const char *name, const char *value, int want)
{
	const char *old = getenv(name);
	char *saved = old ? strdup(old) : NULL;
	accel_context *ctx;
	int ret;

	setenv(name, value, 1);
	ret = accel_context_create(&ctx, 0);
	if (!ret)
		accel_context_destroy(ctx);
	if (saved)
		setenv(name, saved, 1);
	else
		unsetenv(name);
	free(saved);
	CHECK_RET(ret, want);
	return T_PASS;
}

static int environment(void)
{
	const char *t = getenv("ACCEL_TRANSPORT");

	/* cuda: a CUDA context where a GPU is usable, else a clear -ENODEV. */
	{
		const char *old = getenv("ACCEL_BACKEND");
		char *saved = old ? strdup(old) : NULL;
		const char *name = NULL;
		accel_context *ctx;
		int ret;

		setenv("ACCEL_BACKEND", "cuda", 1);
		ret = accel_context_create(&ctx, 0);
		if (saved)
			setenv("ACCEL_BACKEND", saved, 1);
		else
			unsetenv("ACCEL_BACKEND");
		free(saved);
		if (!ret) {
			CHECK_OK(accel_context_get_backend(ctx, &name));
			accel_context_destroy(ctx);
			CHECK(!strcmp(name, "cuda"));
		} else {
			CHECK_RET(ret, -ENODEV);
			printf("# ACCEL_BACKEND=cuda: %s\n",
			       accel_last_error_string());
			CHECK(*accel_last_error_string());
		}
	}
	if (with_env("ACCEL_BACKEND", "bogus", -EINVAL))
		return T_FAIL;
	if (with_env("ACCEL_BACKEND", "cpu", 0))
		return T_FAIL;
	if (with_env("ACCEL_BACKEND", "auto", 0))
		return T_FAIL;
	if (with_env("ACCEL_TRANSPORT", "bogus", -EINVAL))
		return T_FAIL;
	if (with_env("ACCEL_TRANSPORT", "inproc", 0))
		return T_FAIL;
	(void)t;
	return T_PASS;
}

static int strerror_texts(void)
{
	static const int errs[] = { EPERM, ENOENT, EIO, EAGAIN, ENOMEM,
				    EACCES, EFAULT, EBUSY, EEXIST, ENODEV,
				    EINVAL, ENOSPC, ENOTTY, ETIME, EPROTO };
	size_t i;

	CHECK(!strcmp(accel_strerror(0), "Success"));
	for (i = 0; i < sizeof(errs) / sizeof(errs[0]); i++) {
		CHECK(strcmp(accel_strerror(-errs[i]), "Unknown error"));
		CHECK(!strcmp(accel_strerror(-errs[i]),
			      accel_strerror(errs[i])));
	}
	CHECK(!strcmp(accel_strerror(-4000), "Unknown error"));
	return T_PASS;
}

T_MAIN(T(create_destroy), T(destroy_with_work_queued), T(environment),
       T(strerror_texts))
