// SPDX-License-Identifier: MIT
/* AscendCL: two threads, each with its own context and stream. */
#include <pthread.h>
#include "acl_common.h"

static void *thread_main(void *arg)
{
	int *bad = arg;
	accel_context *ctx;
	accel_stream_t s;

	TRY(accel_context_create(&ctx, 0));	/* current for this thread */
	TRY(accel_stream_create(NULL, 0, 0, &s));
	*bad = round_trip(ctx, s, 1 << 18, (unsigned char)(*bad + 10));
	TRY(accel_stream_destroy(s));
	TRY(accel_context_destroy(ctx));
	return NULL;
}

int main(void)
{
	pthread_t t[2];
	int bad[2] = { 0, 1 }, i;

	for (i = 0; i < 2; i++)
		if (pthread_create(&t[i], NULL, thread_main, &bad[i]))
			return 1;
	for (i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	printf("two threads, own context and stream each: %s\n",
	       bad[0] || bad[1] ? "MISMATCH" : "ok");
	return bad[0] || bad[1];
}
