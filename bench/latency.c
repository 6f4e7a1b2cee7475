// SPDX-License-Identifier: MIT
/*
 * Latency: one 64-byte copy from submit to completion seen by the host,
 * and small-copy throughput in batches, libaccel next to a baseline
 * measured in the same run.
 *
 *   GPU (ACCEL_BACKEND=cuda): accel_memcpy_async + accel_stream_synchronize
 *   against raw cudaMemcpyAsync + cudaEventRecord polled with
 *   cudaEventQuery, + cuStreamWriteValue32 into mapped pinned memory with
 *   the host polling the word, and + cudaStreamSynchronize; batches of 64 copies
 *   against 64 cudaMemcpyAsync calls and one cudaMemcpyBatchAsync.
 *
 *   CPU (ACCEL_BACKEND=cpu): the same through the transport's engine
 *   against memcpy(3), plus the cost of one transport call
 *   (accel_stream_query) next to a null ioctl on /dev/accelstream
 *   (ACCEL_IOC_GET_INFO) or, without the device, a null system call.
 *
 * BENCH_ITERS round trips (default 2000); medians in microseconds.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <linux/types.h>

#include "accelstream.h"
#include "bench.h"

#define BATCH	64
#define SMALL	64

static unsigned int iters;

static void row(const char *what, double lib_us, double raw_us,
		const char *raw_what)
{
	printf("%-34s %10.2f %10.2f %8.2fx  (%s)\n", what, lib_us, raw_us,
	       raw_us > 0 ? lib_us / raw_us : 0.0, raw_what);
	fflush(stdout);
	bench_csv_row(what, SMALL, 1, lib_us, raw_us, "us", raw_what);
}

static double med_us(uint64_t *v)
{
	return (double)median_ns(v, iters) / 1e3;
}

/*
 * Each libaccel measurement runs in a context of its own, so that with
 * ACCEL_TRACE=1 the breakdown libaccel prints when the context is
 * destroyed (stderr) belongs to that measurement alone.
 */
struct lib {
	accel_context *ctx;
	accel_stream_t s;
	unsigned char *h, *d;
};

static void lib_open(struct lib *l)
{
	AC(accel_context_create(&l->ctx, 0));
	AC(accel_stream_create(l->ctx, ACCEL_STREAM_NON_BLOCKING, 0, &l->s));
	AC(accel_host_alloc(l->ctx, (void **)&l->h, BATCH * SMALL, 0));
	AC(accel_malloc(l->ctx, (void **)&l->d, BATCH * SMALL));
	memset(l->h, 3, BATCH * SMALL);
}

static void lib_close(struct lib *l, const char *what)
{
	const char *tr = getenv("ACCEL_TRACE");

	if (tr && *tr && strcmp(tr, "0")) {
		fflush(stdout);
		fprintf(stderr, "# ACCEL_TRACE of: %s\n", what);
	}
	accel_context_destroy(l->ctx);
	fflush(stderr);
}

/* libaccel: one small copy, submit to synchronize returning. */
static double accel_round_trip_in(accel_stream_t s, void *dst, void *src,
				  uint64_t *t)
{
	unsigned int i;

	for (i = 0; i < iters; i++) {
		uint64_t t0 = bench_ns();

		AC(accel_memcpy_async(s, dst, src, SMALL, ACCEL_MEMCPY_DEFAULT));
		AC(accel_stream_synchronize(s, ACCEL_TIMEOUT_INFINITE));
		t[i] = bench_ns() - t0;
	}
	return med_us(t);
}

/* libaccel: BATCH small copies in one accel_memcpy_batch_async; per copy. */
static double accel_batch_api_in(accel_stream_t s, unsigned char *dst,
				 unsigned char *src, uint64_t *t)
{
	void *dsts[BATCH];
	const void *srcs[BATCH];
	size_t sizes[BATCH];
	unsigned int i, j;

	for (j = 0; j < BATCH; j++) {
		dsts[j] = dst + j * SMALL;
		srcs[j] = src + j * SMALL;
		sizes[j] = SMALL;
	}
	for (i = 0; i < iters; i++) {
		uint64_t t0 = bench_ns();

		AC(accel_memcpy_batch_async(s, dsts, srcs, sizes, BATCH,
					    ACCEL_MEMCPY_DEFAULT));
		AC(accel_stream_synchronize(s, ACCEL_TIMEOUT_INFINITE));
		t[i] = (bench_ns() - t0) / BATCH;
	}
	return med_us(t);
}

/* libaccel: BATCH small copies then one synchronize; per copy. */
static double accel_batch_in(accel_stream_t s, unsigned char *dst,
			     unsigned char *src, uint64_t *t)
{
	unsigned int i, j;

	for (i = 0; i < iters; i++) {
		uint64_t t0 = bench_ns();

		for (j = 0; j < BATCH; j++)
			AC(accel_memcpy_async(s, dst + j * SMALL, src + j * SMALL,
					      SMALL, ACCEL_MEMCPY_DEFAULT));
		AC(accel_stream_synchronize(s, ACCEL_TIMEOUT_INFINITE));
		t[i] = (bench_ns() - t0) / BATCH;
	}
	return med_us(t);
}

/*
 * libaccel: the submission alone, one copy per call (@batch 1) or @batch
 * copies in one accel_memcpy_batch_async (per descriptor); the stream is
 * synchronized after each, untimed.
 */
static double accel_submit_in(accel_stream_t s, unsigned char *dst,
			      unsigned char *src, unsigned int batch,
			      uint64_t *t)
{
	void *dsts[BATCH];
	const void *srcs[BATCH];
	size_t sizes[BATCH];
	unsigned int i, j;

	for (j = 0; j < batch; j++) {
		dsts[j] = dst + j * SMALL;
		srcs[j] = src + j * SMALL;
		sizes[j] = SMALL;
	}
	for (i = 0; i < iters; i++) {
		uint64_t t0 = bench_ns();

		if (batch == 1)
			AC(accel_memcpy_async(s, dst, src, SMALL,
					      ACCEL_MEMCPY_DEFAULT));
		else
			AC(accel_memcpy_batch_async(s, dsts, srcs, sizes, batch,
						    ACCEL_MEMCPY_DEFAULT));
		t[i] = (bench_ns() - t0) / batch;
		AC(accel_stream_synchronize(s, ACCEL_TIMEOUT_INFINITE));
	}
	return med_us(t);
}

enum lib_measure {
	LIB_ROUND_TRIP, LIB_PER_CALL, LIB_BATCH_API, LIB_SUBMIT1, LIB_SUBMIT64,
};

static double lib_run(enum lib_measure m, uint64_t *t)
{
	static const char *const what[] = {
		"64 B round trip", "64 B copies, 64 calls per sync",
		"64 B copies, one accel_memcpy_batch_async of 64 per sync",
		"submit one 64 B copy", "submit a batch of 64 x 64 B",
	};
	struct lib l;
	double v;

	lib_open(&l);
	switch (m) {
	case LIB_ROUND_TRIP:
		v = accel_round_trip_in(l.s, l.d, l.h, t);
		break;
	case LIB_PER_CALL:
		v = accel_batch_in(l.s, l.d, l.h, t);
		break;
	case LIB_SUBMIT1:
		v = accel_submit_in(l.s, l.d, l.h, 1, t);
		break;
	case LIB_SUBMIT64:
		v = accel_submit_in(l.s, l.d, l.h, BATCH, t);
		break;
	default:
		v = accel_batch_api_in(l.s, l.d, l.h, t);
		break;
	}
	lib_close(&l, what[m]);
	return v;
}

#ifdef HAVE_CUDA
/* The driver's cuStreamWriteValue32, reached through the runtime. */
typedef int (*write32_fn)(cudaStream_t stream, unsigned long long addr,
			  unsigned int value, unsigned int flags);

/*
 * Raw CUDA, completion seen on a host word: cudaMemcpyAsync, then
 * cuStreamWriteValue32 of the iteration's number into mapped pinned
 * memory, the host spinning on the word (what ACCEL_CUDA_COMPLETION=word
 * does).
 */
static void raw_word_round_trip(unsigned char *d, unsigned char *h,
				cudaStream_t cs, double lib, uint64_t *t)
{
	enum cudaDriverEntryPointQueryResult st;
	unsigned int *word = NULL, i;
	void *fn = NULL, *dword = NULL;
	write32_fn w32;

	if (cudaGetDriverEntryPointByVersion("cuStreamWriteValue32", &fn, 12000,
					     cudaEnableDefault, &st) != cudaSuccess ||
	    st != cudaDriverEntryPointSuccess ||
	    cudaHostAlloc((void **)&word, 64, cudaHostAllocMapped) != cudaSuccess ||
	    cudaHostGetDevicePointer(&dword, word, 0) != cudaSuccess) {
		cudaGetLastError();
		printf("# no cuStreamWriteValue32 into mapped memory: no host-word baseline\n");
		return;
	}
	w32 = (write32_fn)fn;
	__atomic_store_n(word, 0, __ATOMIC_RELAXED);
	for (i = 0; i < iters; i++) {
		uint64_t t0 = bench_ns();

		CU(cudaMemcpyAsync(d, h, SMALL, cudaMemcpyHostToDevice, cs));
		if (w32(cs, (unsigned long long)(uintptr_t)dword, i + 1, 0)) {
			printf("# cuStreamWriteValue32 failed: no host-word baseline\n");
			CU(cudaStreamSynchronize(cs));
			cudaFreeHost(word);
			return;
		}
		while (__atomic_load_n(word, __ATOMIC_ACQUIRE) != i + 1)
			;
		t[i] = bench_ns() - t0;
	}
	row("64 B H2D round trip (us)", lib, med_us(t),
	    "cudaMemcpyAsync + cuStreamWriteValue32, host word polled");
	CU(cudaStreamSynchronize(cs));
	cudaFreeHost(word);
}

static void gpu_rows(uint64_t *t)
{
	unsigned char *h, *d;
	cudaStream_t cs;
	cudaEvent_t ev;
	unsigned int i, j;
	double lib, raw, raw_per_call;

	int ndev = 0;

	if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev <= 0) {
		/* A stand-in libcudart (ACCEL_CUDART): libaccel's side only. */
		printf("# no GPU for the raw CUDA baseline: libaccel side only\n");
		row("64 B H2D round trip (us)", lib_run(LIB_ROUND_TRIP, t), 0,
		    "no raw baseline");
		row("64 B copies, 64 per sync (us/copy)",
		    lib_run(LIB_PER_CALL, t), 0, "64 calls; no raw baseline");
		row("64 B copies, 64 per sync (us/copy)",
		    lib_run(LIB_BATCH_API, t), 0,
		    "one batch call; no raw baseline");
		return;
	}
	CU(cudaMallocHost((void **)&h, BATCH * SMALL));
	CU(cudaMalloc((void **)&d, BATCH * SMALL));
	CU(cudaStreamCreateWithFlags(&cs, cudaStreamNonBlocking));
	CU(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));

	/*
	 * Warm the GPU up first (clocks, the runtime's first use), untimed,
	 * so that the first timed row, libaccel's, does not pay for it.
	 */
	for (i = 0; i < iters; i++) {
		CU(cudaMemcpyAsync(d, h, SMALL, cudaMemcpyHostToDevice, cs));
		CU(cudaStreamSynchronize(cs));
	}
	lib = lib_run(LIB_ROUND_TRIP, t);
	for (i = 0; i < iters; i++) {
		uint64_t t0 = bench_ns();

		CU(cudaMemcpyAsync(d, h, SMALL, cudaMemcpyHostToDevice, cs));
		CU(cudaEventRecord(ev, cs));
		while (cudaEventQuery(ev) == cudaErrorNotReady)
			;
		t[i] = bench_ns() - t0;
	}
	raw = med_us(t);
	row("64 B H2D round trip (us)", lib, raw,
	    "cudaMemcpyAsync + event polled");
	raw_word_round_trip(d, h, cs, lib, t);
	for (i = 0; i < iters; i++) {
		uint64_t t0 = bench_ns();

		CU(cudaMemcpyAsync(d, h, SMALL, cudaMemcpyHostToDevice, cs));
		CU(cudaStreamSynchronize(cs));
		t[i] = bench_ns() - t0;
	}
	raw = med_us(t);
	row("64 B H2D round trip (us)", lib, raw,
	    "cudaMemcpyAsync + cudaStreamSynchronize");

	lib = lib_run(LIB_PER_CALL, t);
	for (i = 0; i < iters; i++) {
		uint64_t t0 = bench_ns();

		for (j = 0; j < BATCH; j++)
			CU(cudaMemcpyAsync(d + j * SMALL, h + j * SMALL, SMALL,
					   cudaMemcpyHostToDevice, cs));
		CU(cudaStreamSynchronize(cs));
		t[i] = (bench_ns() - t0) / BATCH;
	}
	raw = med_us(t);
	row("64 B copies, 64 per sync (us/copy)", lib, raw,
	    "64 x cudaMemcpyAsync");
	raw_per_call = raw;
	lib = lib_run(LIB_BATCH_API, t);
	{
		void *dsts[BATCH], *srcs[BATCH];
		size_t sizes[BATCH], idx = 0;
		struct cudaMemcpyAttributes attr;

		memset(&attr, 0, sizeof(attr));
		attr.srcAccessOrder = cudaMemcpySrcAccessOrderStream;
		for (j = 0; j < BATCH; j++) {
			dsts[j] = d + j * SMALL;
			srcs[j] = h + j * SMALL;
			sizes[j] = SMALL;
		}
		for (i = 0; i < iters; i++) {
			uint64_t t0 = bench_ns();

			CU(cudaMemcpyBatchAsync(dsts, (const void *const *)srcs,
						sizes, BATCH, &attr, &idx, 1, cs));
			CU(cudaStreamSynchronize(cs));
			t[i] = (bench_ns() - t0) / BATCH;
		}
		raw = med_us(t);
		row("64 B batch of 64, one call (us/copy)", lib, raw,
		    "one cudaMemcpyBatchAsync of 64");
		row("64 B batch of 64, one call (us/copy)", lib, raw_per_call,
		    "64 x cudaMemcpyAsync");
	}
	cudaEventDestroy(ev);
	cudaStreamDestroy(cs);
	cudaFree(d);
	cudaFreeHost(h);
}
#endif

/* The cheapest kernel entry there is: a null ioctl, else a null syscall. */
static double null_call_us(uint64_t *t, const char **what)
{
	unsigned int i;
	int fd;

	fd = open("/dev/accelstream", O_RDWR | O_CLOEXEC);
	for (i = 0; i < iters; i++) {
		struct accel_info info;
		uint64_t t0;

		memset(&info, 0, sizeof(info));
		t0 = bench_ns();
		if (fd >= 0)
			ioctl(fd, ACCEL_IOC_GET_INFO, &info);
		else
			syscall(SYS_getppid);
		t[i] = bench_ns() - t0;
	}
	*what = fd >= 0 ? "null ioctl GET_INFO" : "null syscall getppid";
	if (fd >= 0)
		close(fd);
	return med_us(t);
}

static void cpu_rows(accel_stream_t s, const char *transport, uint64_t *t)
{
	unsigned char src[BATCH * SMALL], dst[BATCH * SMALL];
	volatile unsigned char sink;
	const char *null_what;
	double lib, raw, null_us;
	unsigned int i, j;

	memset(src, 1, sizeof(src));
	null_us = null_call_us(t, &null_what);
	row("null call (us)", null_us, null_us, null_what);

	/* One transport call against the null call. */
	for (i = 0; i < iters; i++) {
		uint64_t t0 = bench_ns();

		accel_stream_query(s);
		t[i] = bench_ns() - t0;
	}
	row("one transport call (us)", med_us(t), null_us, null_what);
	row("submit 1 x 64 B (us)", lib_run(LIB_SUBMIT1, t), null_us,
	    null_what);
	row("submit 64 x 64 B (us/desc)", lib_run(LIB_SUBMIT64, t), null_us,
	    null_what);

	lib = lib_run(LIB_ROUND_TRIP, t);
	for (i = 0; i < iters; i++) {
		uint64_t t0 = bench_ns();

		memcpy(dst, src, SMALL);
		sink = dst[i % SMALL];
		t[i] = bench_ns() - t0;
	}
	(void)sink;
	raw = med_us(t);
	row("64 B copy round trip (us)", lib, raw, "memcpy");

	lib = lib_run(LIB_PER_CALL, t);
	for (i = 0; i < iters; i++) {
		uint64_t t0 = bench_ns();

		for (j = 0; j < BATCH; j++)
			memcpy(dst + j * SMALL, src + j * SMALL, SMALL);
		sink = dst[i % sizeof(dst)];
		t[i] = (bench_ns() - t0) / BATCH;
	}
	raw = med_us(t);
	row("64 B copies, 64 per sync (us/copy)", lib, raw, "memcpy");
	if (!strcmp(transport, "kernel")) {
		/* The same calls over the in-process transport, same machine. */
		const char *old = getenv("ACCEL_TRANSPORT");
		char *saved = old ? strdup(old) : NULL;
		double inproc;

		setenv("ACCEL_TRANSPORT", "inproc", 1);
		inproc = lib_run(LIB_PER_CALL, t);
		if (saved)
			setenv("ACCEL_TRANSPORT", saved, 1);
		else
			unsetenv("ACCEL_TRANSPORT");
		free(saved);
		row("64 B copies, 64 per sync (us/copy)", lib, inproc,
		    "the same over inproc");
	}
	row("64 B batch of 64, one call (us/copy)", lib_run(LIB_BATCH_API, t),
	    raw, "memcpy");
}

int main(int argc, char **argv)
{
	const char *transport = "?";
	accel_context *ctx;
	accel_stream_t s;
	uint64_t *t;
	int gpu;

	bench_csv_open("latency", argc, argv);
	iters = (unsigned int)env_size("BENCH_ITERS", 2000);
	t = calloc(iters, sizeof(*t));
	if (!t)
		return 1;
	ctx = bench_ctx(&gpu);
	accel_context_get_transport(ctx, &transport);
	AC(accel_stream_create(ctx, ACCEL_STREAM_NON_BLOCKING, 0, &s));

	printf("# medians of %u runs; ratio = libaccel / baseline (1.00x is parity)\n",
	       iters);
	printf("%-34s %10s %10s %9s\n", "measure", "libaccel", "baseline",
	       "ratio");
#ifdef HAVE_CUDA
	if (gpu)
		gpu_rows(t);
	else
#endif
		cpu_rows(s, transport, t);
	/* The header's context ran only the transport-call row. */
	accel_context_destroy(ctx);
	free(t);
	return 0;
}
