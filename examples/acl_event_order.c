// SPDX-License-Identifier: MIT
/*
 * AscendCL: two streams ordered with aclrtRecordEvent on the producer and
 * aclrtStreamWaitEvent on the consumer. The producer is held back by a
 * host event, so the consumer demonstrably waits for it.
 */
#include <errno.h>
#include "acl_common.h"

#define N 4096

int main(void)
{
	accel_stream_t producer, consumer;
	accel_event_t ready, gate;
	unsigned char *in, *out;
	accel_context *ctx;
	int i, ret, bad = 0;
	void *dev;

	TRY(accel_context_create(&ctx, 0));
	TRY(accel_stream_create(ctx, 0, 0, &producer));
	TRY(accel_stream_create(ctx, 0, 0, &consumer));
	TRY(accel_event_create(ctx, 0, &ready));
	TRY(accel_event_create(ctx, ACCEL_EVENT_HOST, &gate));
	TRY(accel_host_alloc(ctx, (void **)&in, N, 0));
	TRY(accel_host_alloc(ctx, (void **)&out, N, 0));
	TRY(accel_malloc(ctx, &dev, N));
	for (i = 0; i < N; i++)
		in[i] = (unsigned char)(i * 5);

	TRY(accel_stream_wait_value(producer, gate, 1, 0));
	TRY(accel_memcpy_async(producer, dev, in, N, ACCEL_MEMCPY_H2D));
	TRY(accel_event_record(ready, producer));
	TRY(accel_stream_wait_event(consumer, ready, 0));
	TRY(accel_memcpy_async(consumer, out, dev, N, ACCEL_MEMCPY_D2H));

	ret = accel_stream_query(consumer);
	if (ret != -EAGAIN)
		bad = 1;	/* the consumer must be waiting */
	TRY(accel_event_signal(gate, 1, 0));
	TRY(accel_stream_synchronize(consumer, ACCEL_TIMEOUT_INFINITE));
	for (i = 0; i < N; i++)
		if (out[i] != (unsigned char)(i * 5))
			bad = 1;
	TRY(accel_context_destroy(ctx));
	printf("record-event / stream-wait-event order: %s\n",
	       bad ? "MISMATCH" : "ok");
	return bad;
}
