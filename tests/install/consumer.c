// SPDX-License-Identifier: MIT
/*
 * A program outside the tree, built against an installed libaccel with
 * "pkg-config --cflags --libs libaccel": pinned host memory, device
 * memory, an H2D and a D2H copy on a stream, a synchronize, a check.
 *
 * Prints one line and exits 0 when the data came back intact.
 */
#include <stdio.h>
#include <string.h>

/* The kernel ABI, installed with libaccel in its own directory; before
 * libaccel.h, whose ACCEL_TIMEOUT_INFINITE defers to it. */
#include <libaccel/accelstream.h>
#include <libaccel.h>

#define SIZE	(64 * 1024)

static int fail(const char *what, int err)
{
	fprintf(stderr, "consumer: %s: %s\n", what, accel_strerror(err));
	return 1;
}

int main(void)
{
	accel_context *ctx;
	accel_stream_t s;
	const char *transport;
	unsigned char *src, *dst;
	void *dev;
	int err, i;

	err = accel_context_create(&ctx, 0);
	if (err)
		return fail("accel_context_create", err);
	err = accel_context_get_transport(ctx, &transport);
	if (err)
		return fail("accel_context_get_transport", err);
	err = accel_stream_create(ctx, 0, 0, &s);
	if (err)
		return fail("accel_stream_create", err);
	err = accel_host_alloc(ctx, (void **)&src, SIZE, 0);
	if (!err)
		err = accel_host_alloc(ctx, (void **)&dst, SIZE, 0);
	if (err)
		return fail("accel_host_alloc", err);
	err = accel_malloc(ctx, &dev, SIZE);
	if (err)
		return fail("accel_malloc", err);

	for (i = 0; i < SIZE; i++)
		src[i] = (unsigned char)(i * 7 + 3);
	err = accel_memcpy_async(s, dev, src, SIZE, ACCEL_MEMCPY_H2D);
	if (!err)
		err = accel_memcpy_async(s, dst, dev, SIZE, ACCEL_MEMCPY_D2H);
	if (err)
		return fail("accel_memcpy_async", err);
	err = accel_stream_synchronize(s, ACCEL_TIMEOUT_INFINITE);
	if (err)
		return fail("accel_stream_synchronize", err);
	if (memcmp(src, dst, SIZE)) {
		fprintf(stderr, "consumer: the data did not survive H2D + D2H\n");
		return 1;
	}

	accel_free(dev);
	accel_host_free(dst);
	accel_host_free(src);
	accel_stream_destroy(s);
	accel_context_destroy(ctx);
	printf("consumer: %d bytes H2D + D2H over the %s transport, ABI %d: intact\n",
	       SIZE, transport, ACCEL_ABI_VERSION);
	return 0;
}
