// SPDX-License-Identifier: MIT
/*
 * Run 41 (2026-12-02): what one cudaMemcpyBatchAsync of 64 x 64 B H2D
 * costs (the call alone, and to the end of a cudaStreamSynchronize) with
 * the source in cudaMallocHost memory, in malloc'd memory registered with
 * cudaHostRegister, and in a shared memfd mapping registered the same way
 * (how libaccel's accel_host_alloc() memory reaches CUDA); medians of 2000.
 * gcc -O2 -I$CUDA_HOME/include h200-run41-batchsrc.c -L$CUDA_HOME/lib64 -lcudart
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <cuda_runtime_api.h>

#define N 64
#define SZ 64
#define IT 2000

static uint64_t ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ULL + (uint64_t)t.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void one(const char *what, unsigned char *h, unsigned char *d,
		cudaStream_t s, int order)
{
	static uint64_t tc[IT], tt[IT];
	void *dsts[N], *srcs[N];
	size_t sizes[N], idx = 0;
	struct cudaMemcpyAttributes a;
	int i, j;

	memset(&a, 0, sizeof(a));
	a.srcAccessOrder = order;
	for (j = 0; j < N; j++) {
		dsts[j] = d + j * SZ;
		srcs[j] = h + j * SZ;
		sizes[j] = SZ;
	}
	for (i = 0; i < IT; i++) {
		uint64_t t0 = ns(), t1;

		if (cudaMemcpyBatchAsync(dsts, (const void *const *)srcs, sizes,
					 N, &a, &idx, 1, s)) {
			printf("%s: batch failed\n", what);
			return;
		}
		t1 = ns();
		cudaStreamSynchronize(s);
		tc[i] = t1 - t0;
		tt[i] = ns() - t0;
	}
	qsort(tc, IT, sizeof(tc[0]), cmp);
	qsort(tt, IT, sizeof(tt[0]), cmp);
	printf("%-44s call %7.2f us, to sync %7.2f us\n", what,
	       tc[IT / 2] / 1e3, tt[IT / 2] / 1e3);
}

int main(void)
{
	unsigned char *pinned, *reg, *shm, *d;
	cudaStream_t s;
	int fd;

	cudaSetDevice(0);
	cudaStreamCreate(&s);
	cudaMalloc((void **)&d, 1 << 20);
	cudaMallocHost((void **)&pinned, 1 << 20);
	reg = aligned_alloc(4096, 1 << 20);
	memset(reg, 1, 1 << 20);
	cudaHostRegister(reg, 1 << 20, 0);
	fd = memfd_create("x", 0);
	if (ftruncate(fd, 1 << 20))
		return 1;
	shm = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	memset(shm, 1, 1 << 20);
	cudaHostRegister(shm, 1 << 20, cudaHostRegisterPortable);
	for (int r = 0; r < 2; r++) {
		one("cudaMallocHost, stream order", pinned, d, s, cudaMemcpySrcAccessOrderStream);
		one("malloc + cudaHostRegister, stream order", reg, d, s, cudaMemcpySrcAccessOrderStream);
		one("memfd mmap + cudaHostRegister, stream order", shm, d, s, cudaMemcpySrcAccessOrderStream);
		one("cudaMallocHost, order any", pinned, d, s, cudaMemcpySrcAccessOrderAny);
		one("memfd mmap + register, order any", shm, d, s, cudaMemcpySrcAccessOrderAny);
	}
	return 0;
}
