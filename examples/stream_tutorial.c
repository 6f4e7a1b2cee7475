// SPDX-License-Identifier: MIT
/*
 * The CUDA stream tutorial on libaccel: 100 floats, element 2 set to
 * 520.5, H2D on a created stream, D2H into pinned memory, synchronize,
 * print the element. Then its two pitfalls, made visible:
 *  1. reading the result before synchronizing: a host event gate keeps
 *     the copies queued, so "not ready" is deterministic;
 *  2. freeing the host buffer right after the enqueue: libaccel keeps the
 *     copy correct (the pages stay until the copy retires).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "libaccel.h"

#define N 100

#define TRY(call) do {							\
	int _r = (call);						\
	if (_r) {							\
		fprintf(stderr, "%s: %s\n", #call, accel_strerror(_r));	\
		exit(1);						\
	}								\
} while (0)

int main(void)
{
	accel_context *ctx;
	accel_stream_t stream;
	accel_event_t gate;
	float *host, *result, *dev;
	int i, ret, bad = 0;

	TRY(accel_context_create(&ctx, 0));
	TRY(accel_stream_create(ctx, 0, 0, &stream));
	TRY(accel_host_alloc(ctx, (void **)&host, N * sizeof(float), 0));
	TRY(accel_host_alloc(ctx, (void **)&result, N * sizeof(float), 0));
	TRY(accel_malloc(ctx, (void **)&dev, N * sizeof(float)));

	/* The tutorial itself. */
	for (i = 0; i < N; i++)
		host[i] = 0.0f;
	host[2] = 520.5f;
	TRY(accel_memcpy_async(stream, dev, host, N * sizeof(float),
			       ACCEL_MEMCPY_H2D));
	TRY(accel_memcpy_async(stream, result, dev, N * sizeof(float),
			       ACCEL_MEMCPY_D2H));
	TRY(accel_stream_synchronize(stream, ACCEL_TIMEOUT_INFINITE));
	printf("%f\n", result[2]);
	if (result[2] != 520.5f)
		bad = 1;

	/* Pitfall 1: the result read before the synchronize. */
	TRY(accel_event_create(ctx, ACCEL_EVENT_HOST, &gate));
	TRY(accel_stream_wait_value(stream, gate, 1, 0));
	result[2] = 0.0f;
	host[2] = 1234.5f;
	TRY(accel_memcpy_async(stream, dev, host, N * sizeof(float),
			       ACCEL_MEMCPY_H2D));
	TRY(accel_memcpy_async(stream, result, dev, N * sizeof(float),
			       ACCEL_MEMCPY_D2H));
	ret = accel_stream_query(stream);
	printf("pitfall 1: before synchronize, query says \"%s\" and result[2] = %f (stale)\n",
	       accel_strerror(ret), result[2]);
	if (ret != -EAGAIN || result[2] != 0.0f)
		bad = 1;

	/* Pitfall 2: the host buffer freed while its copy is queued. */
	TRY(accel_host_free(host));
	host = NULL;
	TRY(accel_event_signal(gate, 1, 0));
	TRY(accel_stream_synchronize(stream, ACCEL_TIMEOUT_INFINITE));
	printf("pitfall 2: host buffer freed right after the enqueue, after synchronize result[2] = %f\n",
	       result[2]);
	if (result[2] != 1234.5f)
		bad = 1;

	TRY(accel_event_destroy(gate));
	TRY(accel_free(dev));
	TRY(accel_host_free(result));
	TRY(accel_stream_destroy(stream));
	TRY(accel_context_destroy(ctx));
	if (bad)
		fprintf(stderr, "stream_tutorial: MISMATCH\n");
	return bad;
}
