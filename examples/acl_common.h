/* SPDX-License-Identifier: MIT */
/* Shared bits of the AscendCL-pattern examples. */
#ifndef ACL_COMMON_H
#define ACL_COMMON_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libaccel.h"

#define TRY(call) do {							\
	int _r = (call);						\
	if (_r) {							\
		fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__,	\
			#call, accel_strerror(_r));			\
		exit(1);						\
	}								\
} while (0)

/* aclrtMallocHost + fill, aclrtMalloc, copy in and out, check. */
static inline int round_trip(accel_context *ctx, accel_stream_t s,
			     size_t n, unsigned char seed)
{
	unsigned char *in, *out;
	void *dev;
	size_t i;
	int bad = 0;

	TRY(accel_host_alloc(ctx, (void **)&in, n, 0));
	TRY(accel_host_alloc(ctx, (void **)&out, n, 0));
	TRY(accel_malloc(ctx, &dev, n));
	for (i = 0; i < n; i++)
		in[i] = (unsigned char)(seed + i);
	TRY(accel_memcpy_async(s, dev, in, n, ACCEL_MEMCPY_H2D));
	TRY(accel_memcpy_async(s, out, dev, n, ACCEL_MEMCPY_D2H));
	TRY(accel_stream_synchronize(s, ACCEL_TIMEOUT_INFINITE));
	for (i = 0; i < n; i++)
		if (out[i] != (unsigned char)(seed + i))
			bad = 1;
	TRY(accel_free(dev));
	TRY(accel_host_free(in));
	TRY(accel_host_free(out));
	return bad;
}

#endif
