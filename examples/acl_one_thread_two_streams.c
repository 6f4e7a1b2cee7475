// SPDX-License-Identifier: MIT
/*
 * AscendCL: one thread, two streams in an explicit context
 * (aclrtCreateContext, aclrtSetCurrentContext, two aclrtCreateStream).
 */
#include "acl_common.h"

int main(void)
{
	accel_context *ctx, *cur;
	accel_stream_t s1, s2;
	int bad = 0;

	TRY(accel_context_create(&ctx, 0));
	TRY(accel_context_set_current(ctx));
	TRY(accel_context_get_current(&cur));
	if (cur != ctx)
		bad = 1;
	/* NULL means the current context, as ACL's implicit context. */
	TRY(accel_stream_create(NULL, 0, 0, &s1));
	TRY(accel_stream_create(ctx, 0, 0, &s2));
	bad |= round_trip(ctx, s1, 65536, 2);
	bad |= round_trip(ctx, s2, 65536, 3);
	TRY(accel_stream_destroy(s1));
	TRY(accel_stream_destroy(s2));
	TRY(accel_context_destroy(ctx));
	printf("one thread, two streams: %s\n", bad ? "MISMATCH" : "ok");
	return bad;
}
