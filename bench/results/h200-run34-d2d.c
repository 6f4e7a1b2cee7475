/* Experiment: a burst of D2D copies on one stream, libaccel and raw CUDA, medians of rounds. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <libaccel.h>
#include <cuda_runtime_api.h>
static void lg(void *d, int p, const char *m) { (void)d; (void)p; fprintf(stderr, "libaccel: %s\n", m); }
static double ns(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e9 + t.tv_nsec; }
static int cmp(const void *a, const void *b) { double x = *(double *)a, y = *(double *)b; return x < y ? -1 : x > y; }
#define R 40
int main(int argc, char **argv)
{
	size_t n = argc > 1 ? strtoull(argv[1], 0, 0) : 16 << 20;
	int reps = argc > 2 ? atoi(argv[2]) : 32, r, k;
	double tl[R], tr[R], sub[R];
	accel_context *ctx; accel_stream_t s; void *a, *b, *ra, *rb; cudaStream_t cs;
	accel_set_log_fn(lg, NULL);
	if (accel_context_create(&ctx, 0)) { printf("ctx: %s\n", accel_last_error_string()); return 1; }
	accel_stream_create(ctx, ACCEL_STREAM_NON_BLOCKING, 0, &s);
	accel_malloc(ctx, &a, n); accel_malloc(ctx, &b, n);
	cudaMalloc(&ra, n); cudaMalloc(&rb, n); cudaStreamCreateWithFlags(&cs, cudaStreamNonBlocking);
	for (k = 0; k < R; k++) {
		double t0 = ns(), t1;
		for (r = 0; r < reps; r++)
			accel_memcpy_async(s, b, a, n, ACCEL_MEMCPY_D2D);
		t1 = ns();
		accel_stream_synchronize(s, ACCEL_TIMEOUT_INFINITE);
		tl[k] = ns() - t0; sub[k] = t1 - t0;
		t0 = ns();
		for (r = 0; r < reps; r++)
			cudaMemcpyAsync(rb, ra, n, cudaMemcpyDefault, cs);
		cudaStreamSynchronize(cs);
		tr[k] = ns() - t0;
	}
	qsort(tl, R, sizeof(double), cmp); qsort(tr, R, sizeof(double), cmp); qsort(sub, R, sizeof(double), cmp);
	printf("D2D %zu B x %d, median of %d rounds: libaccel %.1f us (%.0f GB/s; submit calls %.1f us), raw %.1f us (%.0f GB/s), ratio %.3f\n",
	       n, reps, R, tl[R/2] / 1e3, n * reps / tl[R/2], sub[R/2] / 1e3, tr[R/2] / 1e3, n * reps / tr[R/2], tr[R/2] / tl[R/2]);
	accel_context_destroy(ctx);
	return 0;
}
