// SPDX-License-Identifier: MIT
/* The smallest complete libaccel program (README.md shows it). */
#include <stdio.h>
#include <string.h>
#include <libaccel.h>

/* Every call returns 0 or a negative errno value. */
#define CHECK(call) do {							\
	int err_ = (call);							\
	if (err_) {								\
		fprintf(stderr, "%s: %s %s\n", #call, accel_strerror(err_),	\
			accel_last_error_string());				\
		return 1;							\
	}									\
} while (0)

int main(void)
{
	accel_context *ctx;
	accel_stream_t s;
	const char *transport;
	char *host, out[64] = "";
	void *dev;

	CHECK(accel_context_create(&ctx, 0));
	CHECK(accel_context_get_transport(ctx, &transport));
	CHECK(accel_stream_create(ctx, 0, 0, &s));
	CHECK(accel_host_alloc(ctx, (void **)&host, sizeof(out), 0));	/* pinned */
	CHECK(accel_malloc(ctx, &dev, sizeof(out)));			/* device */

	strcpy(host, "hello through a stream");
	CHECK(accel_memcpy_async(s, dev, host, sizeof(out), ACCEL_MEMCPY_H2D));
	CHECK(accel_memcpy_async(s, out, dev, sizeof(out), ACCEL_MEMCPY_D2H));
	/* out is written by the stream: read it only after synchronizing. */
	CHECK(accel_stream_synchronize(s, ACCEL_TIMEOUT_INFINITE));
	printf("\"%s\" came back over the %s transport\n", out, transport);

	CHECK(accel_free(dev));
	CHECK(accel_host_free(host));
	CHECK(accel_stream_destroy(s));
	CHECK(accel_context_destroy(ctx));
	return 0;
}
