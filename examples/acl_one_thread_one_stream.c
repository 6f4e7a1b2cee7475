// SPDX-License-Identifier: MIT
/* AscendCL: one thread, one stream (aclrtCreateStream / Synchronize). */
#include "acl_common.h"

int main(void)
{
	accel_context *ctx;
	accel_stream_t s;
	int bad;

	TRY(accel_context_create(&ctx, 0));
	TRY(accel_stream_create(ctx, 0, 0, &s));
	bad = round_trip(ctx, s, 1 << 20, 1);
	TRY(accel_stream_destroy(s));
	TRY(accel_context_destroy(ctx));
	printf("one thread, one stream: %s\n", bad ? "MISMATCH" : "ok");
	return bad;
}
