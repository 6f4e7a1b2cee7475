// SPDX-License-Identifier: MIT
/*
 * A context destroyed while a pageable-destination copy (or a failed one)
 * still waits for its host function releases what that copy held: the
 * ASan build's leak check fails otherwise.
 */
#include "helpers.h"

#define PAGE	(1 << 16)

/* A new context whose stream copies device memory into @page behind @gate. */
struct copy_out {
	accel_context *ctx;
	accel_stream_t s;
	accel_event_t gate;
	char *page;		/* PAGE bytes of @fill, pageable */
};

static int gated_copy_out(struct copy_out *c, int fill)
{
	void *d;
	int ret;

	c->page = malloc(PAGE);
	if (!c->page)
		return -ENOMEM;
	memset(c->page, fill, PAGE);
	ret = accel_context_create(&c->ctx, 0);
	if (ret) {
		free(c->page);
		return ret;
	}
	ret = accel_stream_create(c->ctx, 0, 0, &c->s);
	if (!ret)
		ret = accel_event_create(c->ctx, ACCEL_EVENT_HOST, &c->gate);
	if (!ret)
		ret = accel_malloc(c->ctx, &d, PAGE);
	if (!ret)
		ret = accel_stream_wait_value(c->s, c->gate, 1, 0);
	if (!ret)
		ret = accel_memcpy_async(c->s, c->page, d, PAGE,
					 ACCEL_MEMCPY_D2H);
	return ret;
}

/* Destroy the context with the copy still waiting, then free the page. */
static int destroy_and_free(struct copy_out *c)
{
	int ret = accel_context_destroy(c->ctx);

	free(c->page);
	return ret;
}

static int destroy_with_copy_out_pending(void)
{
	struct copy_out c;

	/* Held back forever: the copy-out host function never runs. */
	CHECK_OK(gated_copy_out(&c, 0));
	CHECK_OK(destroy_and_free(&c));
	return T_PASS;
}

static int copy_out_after_failure(void)
{
	struct copy_out c;

	CHECK_OK(gated_copy_out(&c, 7));
	/* The gate fails: the copy never runs, nothing is delivered. */
	CHECK_OK(accel_event_signal(c.gate, 1, ACCEL_EVENT_SIGNAL_ERROR));
	CHECK_RET(accel_stream_synchronize(c.s, 10 * T_SEC), -EIO);
	CHECK(c.page[0] == 7 && c.page[PAGE - 1] == 7);
	CHECK_OK(destroy_and_free(&c));
	return T_PASS;
}

T_MAIN(T(destroy_with_copy_out_pending), T(copy_out_after_failure))
