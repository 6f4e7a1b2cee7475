/* SPDX-License-Identifier: MIT */
/*
 * Shared bits of the benchmarks: clocks, statistics, the libaccel context
 * and, when built with CUDA (HAVE_CUDA), checked raw CUDA calls for the
 * baseline measured in the same run.
 */
#ifndef BENCH_H
#define BENCH_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "libaccel.h"

#ifdef HAVE_CUDA
#include <cuda_runtime_api.h>
#define CU(call) do {							\
	cudaError_t _e = (call);					\
	if (_e != cudaSuccess) {					\
		fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__,	\
			#call, cudaGetErrorString(_e));			\
		exit(1);						\
	}								\
} while (0)
#endif

#define AC(call) do {							\
	int _r = (call);						\
	if (_r) {							\
		fprintf(stderr, "%s:%d: %s: %s %s\n", __FILE__, __LINE__,\
			#call, accel_strerror(_r),			\
			accel_last_error_string());			\
		exit(1);						\
	}								\
} while (0)

static inline uint64_t bench_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static inline uint64_t median_ns(uint64_t *v, unsigned int n)
{
	qsort(v, n, sizeof(*v), cmp_u64);
	return v[n / 2];
}

/* One context; GPU mode when its backend is cuda (and CUDA was built in). */
static inline accel_context *bench_ctx(int *gpu)
{
	const char *backend = "cpu", *transport = "?";
	accel_context *ctx;

	AC(accel_context_create(&ctx, 0));
	accel_context_get_backend(ctx, &backend);
	accel_context_get_transport(ctx, &transport);
	*gpu = !strcmp(backend, "cuda");
#ifndef HAVE_CUDA
	if (*gpu) {
		fprintf(stderr, "bench: built without CUDA: no raw baseline for the cuda backend; rebuild with the toolkit\n");
		exit(1);
	}
#endif
	printf("# libaccel transport %s, backend %s\n", transport, backend);
	return ctx;
}

/*
 * Machine-readable output: with --csv FILE (or BENCH_CSV=FILE) every row
 * printed is also appended to FILE as
 *   program,row,size_bytes,streams,libaccel,baseline,ratio,unit,baseline_name
 * (a header line is written when the file is empty; a comma inside a name
 * becomes a semicolon, so that a plain split on commas reads it). Bandwidth
 * rows are in
 * GB/s and their ratio is libaccel / baseline; latency rows are in us and
 * their ratio is libaccel / baseline as well (lower is better there).
 * --trace sets ACCEL_TRACE=1: libaccel's cuda backend then logs, as each
 * context goes, the median time of every phase of its copies; the programs
 * print libaccel's messages on stderr through a log callback.
 */
static FILE *bench_csv;
static const char *bench_prog;

/* libaccel prints nothing: its messages (the trace among them) come here. */
static void bench_log(void *data, int priority, const char *msg)
{
	(void)data;
	(void)priority;
	fprintf(stderr, "libaccel: %s\n", msg);
}

static inline void bench_csv_open(const char *prog, int argc, char **argv)
{
	const char *path = getenv("BENCH_CSV");
	int i;

	bench_prog = prog;
	accel_set_log_fn(bench_log, NULL);
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--csv") && i + 1 < argc) {
			path = argv[++i];
		} else if (!strcmp(argv[i], "--trace")) {
			/* Before any context: libaccel reads it at creation. */
			setenv("ACCEL_TRACE", "1", 1);
		} else {
			fprintf(stderr, "usage: %s [--csv FILE] [--trace]\n", prog);
			exit(2);
		}
	}
	if (!path || !*path)
		return;
	bench_csv = fopen(path, "a");
	if (!bench_csv) {
		perror(path);
		exit(1);
	}
	if (ftell(bench_csv) == 0)
		fprintf(bench_csv, "program,row,size_bytes,streams,libaccel,baseline,ratio,unit,baseline_name\n");
}

static inline void bench_csv_str(const char *v)
{
	fputc('"', bench_csv);
	for (; *v; v++)
		fputc(*v == ',' ? ';' : *v == '"' ? '\'' : *v, bench_csv);
	fputc('"', bench_csv);
}

static inline void bench_csv_row(const char *row, size_t size,
				 unsigned int streams, double lib, double base,
				 const char *unit, const char *base_name)
{
	if (!bench_csv)
		return;
	fprintf(bench_csv, "%s,", bench_prog);
	bench_csv_str(row);
	fprintf(bench_csv, ",%zu,%u,%.4f,%.4f,%.4f,%s,", size, streams, lib,
		base, base > 0 ? lib / base : 0.0, unit);
	bench_csv_str(base_name);
	fputc('\n', bench_csv);
	fflush(bench_csv);
}

static inline size_t env_size(const char *name, size_t def)
{
	const char *v = getenv(name);

	return v && *v ? (size_t)strtoull(v, NULL, 0) : def;
}

#endif /* BENCH_H */
