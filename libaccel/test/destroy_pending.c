// SPDX-License-Identifier: MIT
/*
 * A context destroyed while a pageable-destination copy (or a failed one)
 * still waits for its host function releases what that copy held: the
 * ASan build's leak check fails otherwise.
 */
#include "helpers.h"

/* A new context whose stream copies device memory into @page behind a gate. */
static int gated_copy_out(accel_context **ctx, accel_stream_t *s,
			  accel_event_t *gate, char *page)
{
	void *d;
	int ret;

	ret = accel_context_create(ctx, 0);
	if (ret)
		return ret;
	ret = accel_stream_create(*ctx, 0, 0, s);
	if (!ret)
		ret = accel_event_create(*ctx, ACCEL_EVENT_HOST, gate);
	if (!ret)
		ret = accel_malloc(*ctx, &d, 1 << 16);
	if (!ret)
		ret = accel_stream_wait_value(*s, *gate, 1, 0);
	if (!ret)
		ret = accel_memcpy_async(*s, page, d, 1 << 16, ACCEL_MEMCPY_D2H);
	return ret;
}

static int destroy_with_copy_out_pending(void)
{
	accel_context *ctx;
	accel_stream_t s;
	accel_event_t gate;
	char *page = malloc(1 << 16);

	CHECK(page != NULL);
	/* Held back forever: the copy-out host function never runs. */
	CHECK_OK(gated_copy_out(&ctx, &s, &gate, page));
	CHECK_OK(accel_context_destroy(ctx));
	free(page);
	return T_PASS;
}

static int copy_out_after_failure(void)
{
	accel_context *ctx;
	accel_stream_t s;
	accel_event_t gate;
	char *page = malloc(1 << 16);

	CHECK(page != NULL);
	memset(page, 7, 1 << 16);
	CHECK_OK(gated_copy_out(&ctx, &s, &gate, page));
	/* The gate fails: the copy never runs, nothing is delivered. */
	CHECK_OK(accel_event_signal(gate, 1, ACCEL_EVENT_SIGNAL_ERROR));
	CHECK_RET(accel_stream_synchronize(s, 10 * T_SEC), -EIO);
	CHECK(page[0] == 7 && page[(1 << 16) - 1] == 7);
	CHECK_OK(accel_context_destroy(ctx));
	free(page);
	return T_PASS;
}

T_MAIN(T(destroy_with_copy_out_pending), T(copy_out_after_failure))
