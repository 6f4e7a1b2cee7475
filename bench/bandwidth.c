// SPDX-License-Identifier: MIT
/*
 * Copy bandwidth: libaccel next to a baseline measured in the same run.
 *
 *   GPU (ACCEL_BACKEND=cuda): H2D, D2H, D2D from pinned memory, 4 KiB to
 *   1 GiB, 1, 2 and 4 streams, H2D+D2H at once, and pageable H2D;
 *   libaccel (accel_memcpy_async + accel_stream_synchronize) against raw
 *   cudaMemcpyAsync + cudaStreamSynchronize on cudaMallocHost/cudaMalloc;
 *   device fills (1 MiB to 1 GiB) against cudaMemsetAsync and D2D 2D
 *   copies against cudaMemcpy2DAsync.
 *
 *   CPU (ACCEL_BACKEND=cpu): the same copies run by the transport's
 *   engine (the kernel's soft engine or the inproc workers) against
 *   memcpy(3) in as many threads as streams.
 *
 *   Peer rows (P2P): device 0 to device 1, 1 to 0, and both at once, 4 KiB
 *   to 1 GiB on 1 and 4 streams: libaccel's accel_memcpy_peer_async on the
 *   cpu backend's soft devices (ACCEL_INPROC_DEVICES, asked to be 2 here,
 *   or the module's devices) against memcpy; on a GPU machine with two
 *   GPUs, raw cudaMemcpyPeerAsync (peer access enabled where
 *   cudaDeviceCanAccessPeer says so) in the same run. Skipped, with the
 *   reason printed, with one device.
 *
 * Each cell moves about BENCH_BYTES (default 512 MiB) in at least
 * BENCH_REPS (default 3) rounds; BENCH_MAX (default 1 GiB) caps the size;
 * BENCH_PINNED_ONLY=1 stops after the pinned and duplex rows;
 * BENCH_PAGEABLE_ONLY=1 runs the pageable rows alone (a comparison pass
 * of the staging pool's settings).
 * The ratio is libaccel / raw, in percent of the raw bandwidth.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sys/mman.h>

#include "bench.h"

#define MAX_STREAMS	4

enum dir { H2D, D2H, D2D, NDIR };
static const char *const dir_name[] = { "H2D", "D2H", "D2D" };

static size_t max_size, target_bytes;
static const char *base_name;
static unsigned int min_reps;

struct bufs {
	unsigned char *host[2];		/* pinned */
	unsigned char *dev[2];
};

static unsigned int reps_for(size_t size)
{
	size_t r = target_bytes / size;

	if (r < min_reps)
		r = min_reps;
	if (r > 2000)
		r = 2000;
	return (unsigned int)r;
}

/* Where stream @i copies: its own slice while they fit, else shared. */
static size_t slice(size_t size, unsigned int i)
{
	return (size_t)i * size + size <= max_size ? (size_t)i * size : 0;
}

static void pick(const struct bufs *b, enum dir d, size_t off,
		 void **dst, void **src)
{
	switch (d) {
	case H2D: *dst = b->dev[0] + off; *src = b->host[0] + off; break;
	case D2H: *dst = b->host[1] + off; *src = b->dev[0] + off; break;
	default:  *dst = b->dev[1] + off; *src = b->dev[0] + off; break;
	}
}

static double gbps(size_t bytes, uint64_t ns)
{
	return ns ? (double)bytes / (double)ns : 0.0;
}

/*
 * BENCH_ORDER: how the two sides of a pinned cell take turns. "abba"
 * (the default): libaccel, baseline, baseline, libaccel, each side's
 * bandwidth over its two runs, so that neither side gains from going
 * second (a device that raised its clocks for the first) or from drift;
 * "lib": libaccel once, then the baseline once (the method before
 * 2026-12-02); "raw": the baseline first.
 */
enum { ORDER_LIB_FIRST, ORDER_RAW_FIRST, ORDER_ABBA };
static int order;

/* The bandwidth of two runs of the same bytes at @a and @b GB/s. */
static double over_two(double a, double b)
{
	return a > 0 && b > 0 ? 2.0 / (1.0 / a + 1.0 / b) : 0;
}

/* libaccel: @n streams, each copying @size per round. */
static double run_accel(accel_stream_t *s, unsigned int n,
			const struct bufs *b, enum dir d, size_t size,
			unsigned int reps)
{
	uint64_t t0, t1;
	unsigned int r, i;
	void *dst, *src;

	/* Warm-up round, not timed. */
	for (i = 0; i < n; i++) {
		pick(b, d, slice(size, i), &dst, &src);
		AC(accel_memcpy_async(s[i], dst, src, size, ACCEL_MEMCPY_DEFAULT));
	}
	for (i = 0; i < n; i++)
		AC(accel_stream_synchronize(s[i], ACCEL_TIMEOUT_INFINITE));
	t0 = bench_ns();
	for (r = 0; r < reps; r++) {
		for (i = 0; i < n; i++) {
			pick(b, d, slice(size, i), &dst, &src);
			AC(accel_memcpy_async(s[i], dst, src, size,
					      ACCEL_MEMCPY_DEFAULT));
		}
	}
	for (i = 0; i < n; i++)
		AC(accel_stream_synchronize(s[i], ACCEL_TIMEOUT_INFINITE));
	t1 = bench_ns();
	return gbps((size_t)reps * n * size, t1 - t0);
}

#ifdef HAVE_CUDA
static double run_cuda(cudaStream_t *s, unsigned int n, const struct bufs *b,
		       enum dir d, size_t size, unsigned int reps)
{
	uint64_t t0, t1;
	unsigned int r, i;
	void *dst, *src;

	for (i = 0; i < n; i++) {
		pick(b, d, slice(size, i), &dst, &src);
		CU(cudaMemcpyAsync(dst, src, size, cudaMemcpyDefault, s[i]));
	}
	for (i = 0; i < n; i++)
		CU(cudaStreamSynchronize(s[i]));
	t0 = bench_ns();
	for (r = 0; r < reps; r++) {
		for (i = 0; i < n; i++) {
			pick(b, d, slice(size, i), &dst, &src);
			CU(cudaMemcpyAsync(dst, src, size, cudaMemcpyDefault,
					   s[i]));
		}
	}
	for (i = 0; i < n; i++)
		CU(cudaStreamSynchronize(s[i]));
	t1 = bench_ns();
	return gbps((size_t)reps * n * size, t1 - t0);
}
#endif

/* The CPU baseline: memcpy in @n threads. */
struct cpu_job {
	void *dst;
	const void *src;
	size_t size;
	unsigned int reps;
};

static void *cpu_worker(void *arg)
{
	struct cpu_job *j = arg;
	unsigned int r;

	for (r = 0; r < j->reps; r++)
		memcpy(j->dst, j->src, j->size);
	return NULL;
}

static double run_memcpy(unsigned int n, const struct bufs *b, enum dir d,
			 size_t size, unsigned int reps)
{
	struct cpu_job jobs[MAX_STREAMS];
	pthread_t th[MAX_STREAMS];
	uint64_t t0, t1;
	unsigned int i;

	for (i = 0; i < n; i++) {
		void *dst, *src;

		pick(b, d, slice(size, i), &dst, &src);
		jobs[i] = (struct cpu_job){ dst, src, size, reps };
	}
	t0 = bench_ns();
	for (i = 0; i < n; i++)
		pthread_create(&th[i], NULL, cpu_worker, &jobs[i]);
	for (i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	t1 = bench_ns();
	return gbps((size_t)reps * n * size, t1 - t0);
}

static void row(const char *what, size_t size, unsigned int n, double lib,
		double raw)
{
	char sz[32];

	if (size >= (1 << 30))
		snprintf(sz, sizeof(sz), "%zu GiB", size >> 30);
	else if (size >= (1 << 20))
		snprintf(sz, sizeof(sz), "%zu MiB", size >> 20);
	else
		snprintf(sz, sizeof(sz), "%zu KiB", size >> 10);
	printf("%-10s %8s %7u %12.2f %12.2f %8.1f%%\n", what, sz, n, lib, raw,
	       raw > 0 ? 100.0 * lib / raw : 0.0);
	fflush(stdout);
	bench_csv_row(what, size, n, lib, raw, "GB/s", base_name);
}

/*
 * Pageable memory (malloc'd, not registered) on the host side, @d H2D or
 * D2H, one stream: libaccel stages it, CUDA stages it internally, the CPU
 * baseline is memcpy from or into the same malloc'd buffer.
 */
static void pageable_row(accel_stream_t s, const struct bufs *lb,
			 const struct bufs *rb, int gpu, enum dir d,
			 size_t size, void *stream)
{
	unsigned int reps = reps_for(size), r;
	unsigned char *p = malloc(size);
	void *ldev = lb->dev[0], *rdev = rb->dev[0];
	uint64_t t0;
	double lib, raw = 0;

	if (!p) {
		printf("# pageable %s %zu B: no memory\n", dir_name[d], size);
		return;
	}
	memset(p, 7, size);
	(void)stream;
	/* Warm-up, untimed. */
	AC(accel_memcpy_async(s, d == H2D ? ldev : (void *)p,
			      d == H2D ? (void *)p : ldev, size,
			      d == H2D ? ACCEL_MEMCPY_H2D : ACCEL_MEMCPY_D2H));
	AC(accel_stream_synchronize(s, ACCEL_TIMEOUT_INFINITE));
	t0 = bench_ns();
	for (r = 0; r < reps; r++)
		AC(accel_memcpy_async(s, d == H2D ? ldev : (void *)p,
				      d == H2D ? (void *)p : ldev, size,
				      d == H2D ? ACCEL_MEMCPY_H2D :
						 ACCEL_MEMCPY_D2H));
	AC(accel_stream_synchronize(s, ACCEL_TIMEOUT_INFINITE));
	lib = gbps((size_t)reps * size, bench_ns() - t0);
#ifdef HAVE_CUDA
	if (gpu) {
		cudaStream_t cs = *(cudaStream_t *)stream;
		enum cudaMemcpyKind k = d == H2D ? cudaMemcpyHostToDevice :
					cudaMemcpyDeviceToHost;

		CU(cudaMemcpyAsync(d == H2D ? rdev : (void *)p,
				   d == H2D ? (void *)p : rdev, size, k, cs));
		CU(cudaStreamSynchronize(cs));
		t0 = bench_ns();
		for (r = 0; r < reps; r++)
			CU(cudaMemcpyAsync(d == H2D ? rdev : (void *)p,
					   d == H2D ? (void *)p : rdev, size, k,
					   cs));
		CU(cudaStreamSynchronize(cs));
		raw = gbps((size_t)reps * size, bench_ns() - t0);
	}
#endif
	if (!gpu) {
		struct cpu_job j = { d == H2D ? rdev : (void *)p,
				     d == H2D ? (void *)p : rdev, size, reps };

		t0 = bench_ns();
		cpu_worker(&j);
		raw = gbps((size_t)reps * size, bench_ns() - t0);
	}
	row(d == H2D ? "H2D-pgbl" : "D2H-pgbl", size, 1, lib, raw);
	free(p);
}

/*
 * Registration: accel_host_register of @size bytes of malloc'd, touched
 * memory, next to cudaHostRegister alone of another such buffer (GPU), or
 * mlock(2) (CPU: the kernel's own pinning of the same pages). In GB/s of
 * memory registered; only the registering call is timed, each is undone
 * before the next. BENCH_REPS rounds (at least 3), the two sides taking
 * turns, so that neither always goes first; the bytes of every round over
 * the time of every round.
 */
static void register_row(accel_context *ctx, int gpu, size_t size)
{
	unsigned char *a = malloc(size), *b = malloc(size);
	uint64_t t0, t1, lib_ns = 0, raw_ns = 0;
	unsigned int r, reps = min_reps < 3 ? 3 : min_reps;
	double lib = 0, raw = 0;
	int ret = 0;

	if (!a || !b) {
		printf("# register %zu B: no memory\n", size);
		free(a);
		free(b);
		return;
	}
	memset(a, 1, size);
	memset(b, 2, size);
	for (r = 0; r < reps && !ret; r++) {
		t0 = bench_ns();
		ret = accel_host_register(ctx, a, size, 0);
		t1 = bench_ns();
		if (ret) {
			printf("# accel_host_register %zu B: %s %s\n", size,
			       accel_strerror(ret), accel_last_error_string());
			break;
		}
		lib_ns += t1 - t0;
		AC(accel_host_unregister(a, 0));
#ifdef HAVE_CUDA
		if (gpu) {
			t0 = bench_ns();
			CU(cudaHostRegister(b, size, cudaHostRegisterDefault));
			t1 = bench_ns();
			raw_ns += t1 - t0;
			CU(cudaHostUnregister(b));
		}
#endif
		if (!gpu) {
			t0 = bench_ns();
			ret = mlock(b, size);
			t1 = bench_ns();
			if (ret) {
				printf("# mlock %zu B: %s\n", size,
				       strerror(errno));
				break;
			}
			raw_ns += t1 - t0;
			munlock(b, size);
		}
	}
	if (!ret) {
		lib = gbps((size_t)reps * size, lib_ns);
		raw = gbps((size_t)reps * size, raw_ns);
	}
	row("register", size, 1, lib, raw);
	free(a);
	free(b);
}

/* ---- peer copies ------------------------------------------------------ */

enum pdir { P01, P10, PBOTH, NPDIR };
static const char *const pdir_name[] = { "P2P 0>1", "P2P 1>0", "P2P both" };

/*
 * Stream i of @n copies @size bytes per round: from the side of @d (both
 * at once: even streams 0 to 1, odd ones 1 to 0), its own slice.
 */
static void peer_pick(unsigned char *const *dev, enum pdir d, unsigned int i,
		      size_t size, void **dst, void **src, int *dd, int *sd)
{
	int fwd = d == P01 || (d == PBOTH && !(i & 1));
	size_t off = slice(size, i);

	*sd = fwd ? 0 : 1;
	*dd = fwd ? 1 : 0;
	*src = dev[*sd] + off;
	*dst = dev[*dd] + off;
}

static double run_accel_peer(accel_stream_t *s, unsigned int n,
			     unsigned char *const *dev, enum pdir d,
			     size_t size, unsigned int reps)
{
	uint64_t t0 = 0;
	unsigned int r, i;
	void *dst, *src;
	int dd, sd;

	for (r = 0; r <= reps; r++) {
		if (r == 1)
			t0 = bench_ns();	/* round 0 warms up */
		for (i = 0; i < n; i++) {
			peer_pick(dev, d, i, size, &dst, &src, &dd, &sd);
			AC(accel_memcpy_peer_async(s[i], dst, dd, src, sd, size));
		}
		if (r == 0)
			for (i = 0; i < n; i++)
				AC(accel_stream_synchronize(s[i],
							    ACCEL_TIMEOUT_INFINITE));
	}
	for (i = 0; i < n; i++)
		AC(accel_stream_synchronize(s[i], ACCEL_TIMEOUT_INFINITE));
	return gbps((size_t)reps * n * size, bench_ns() - t0);
}

static double run_memcpy_peer(unsigned int n, unsigned char *const *dev,
			      enum pdir d, size_t size, unsigned int reps)
{
	struct cpu_job jobs[MAX_STREAMS];
	pthread_t th[MAX_STREAMS];
	uint64_t t0;
	unsigned int i;
	int dd, sd;

	for (i = 0; i < n; i++) {
		void *dst, *src;

		peer_pick(dev, d, i, size, &dst, &src, &dd, &sd);
		jobs[i] = (struct cpu_job){ dst, src, size, reps };
	}
	t0 = bench_ns();
	for (i = 0; i < n; i++)
		pthread_create(&th[i], NULL, cpu_worker, &jobs[i]);
	for (i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	return gbps((size_t)reps * n * size, bench_ns() - t0);
}

#ifdef HAVE_CUDA
static double run_cuda_peer(cudaStream_t (*cs)[MAX_STREAMS], unsigned int n,
			    unsigned char *const *dev, enum pdir d,
			    size_t size, unsigned int reps)
{
	uint64_t t0 = 0;
	unsigned int r, i;
	void *dst, *src;
	int dd, sd;

	for (r = 0; r <= reps; r++) {
		if (r == 1)
			t0 = bench_ns();
		for (i = 0; i < n; i++) {
			peer_pick(dev, d, i, size, &dst, &src, &dd, &sd);
			/* On a stream of the source's device. */
			CU(cudaMemcpyPeerAsync(dst, dd, src, sd, size,
					       cs[sd][i]));
		}
		if (r == 0 || r == reps)
			for (i = 0; i < n; i++) {
				CU(cudaStreamSynchronize(cs[0][i]));
				CU(cudaStreamSynchronize(cs[1][i]));
			}
	}
	return gbps((size_t)reps * n * size, bench_ns() - t0);
}

/* Two GPUs: buffers and streams on each, peer access where it exists. */
static int cuda_peer_setup(unsigned char **dev, cudaStream_t (*cs)[MAX_STREAMS],
			   int *access)
{
	int ndev = 0, g, other, can;
	unsigned int i;

	if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev < 2) {
		printf("# P2P raw cudaMemcpyPeerAsync rows skipped: %d GPU(s), need 2\n",
		       ndev);
		return -1;
	}
	for (g = 0; g < 2; g++) {
		other = 1 - g;
		CU(cudaSetDevice(g));
		CU(cudaMalloc((void **)&dev[g], max_size));
		for (i = 0; i < MAX_STREAMS; i++)
			CU(cudaStreamCreateWithFlags(&cs[g][i],
						     cudaStreamNonBlocking));
		CU(cudaDeviceCanAccessPeer(&can, g, other));
		access[g] = can;
		if (can)
			CU(cudaDeviceEnablePeerAccess(other, 0));
	}
	CU(cudaSetDevice(0));
	printf("# P2P raw: peer access 0->1 %s, 1->0 %s (else staged by CUDA)\n",
	       access[0] ? "on" : "off", access[1] ? "on" : "off");
	return 0;
}
#endif

/*
 * The peer rows. libaccel's column needs two devices in one context: the
 * cpu backend's soft devices; the cuda backend runs a context on one GPU.
 */
static void peer_rows(accel_context *ctx, int gpu, const size_t *sizes,
		      size_t nsizes)
{
	static const unsigned int nstreams[] = { 1, 4 };
	unsigned char *ldev[2] = { NULL, NULL }, *rdev[2] = { NULL, NULL };
	accel_stream_t as[MAX_STREAMS];
	int ndev = 0, have_lib = 0, have_raw = !gpu;
	const char *saved = base_name;
	unsigned int i, k, j;
	enum pdir d;
#ifdef HAVE_CUDA
	cudaStream_t cs[2][MAX_STREAMS];
	int access[2] = { 0, 0 };
#endif

	AC(accel_device_get_count(ctx, &ndev));
	if (gpu)
		printf("# P2P libaccel rows skipped: the cuda backend runs a context on one GPU\n");
	else if (ndev < 2)
		printf("# P2P rows skipped: %d soft device(s) (ACCEL_INPROC_DEVICES, or the module's devices parameter), need 2\n",
		       ndev);
	else
		have_lib = 1;
	if (have_lib) {
		for (i = 0; i < 2; i++) {
			AC(accel_context_set_device(ctx, (int)i));
			AC(accel_malloc(ctx, (void **)&ldev[i], max_size));
		}
		/* Half the streams on each device. */
		for (i = 0; i < MAX_STREAMS; i++) {
			AC(accel_context_set_device(ctx, (int)(i & 1)));
			AC(accel_stream_create(ctx, ACCEL_STREAM_NON_BLOCKING, 0,
					       &as[i]));
		}
		AC(accel_context_set_device(ctx, 0));
		if (!gpu)
			for (i = 0; i < 2; i++) {
				rdev[i] = malloc(max_size);
				if (!rdev[i])
					exit(1);
				memset(rdev[i], (int)i + 5, max_size);
			}
	}
#ifdef HAVE_CUDA
	if (gpu)
		have_raw = !cuda_peer_setup(rdev, cs, access);
#endif
	if (!have_lib && !have_raw)
		return;
	base_name = gpu ? "raw cudaMemcpyPeerAsync" : "memcpy, one thread per stream";
	for (d = P01; d < NPDIR; d++) {
		for (k = 0; k < nsizes; k++) {
			size_t size = sizes[k];

			if (size > max_size)
				continue;
			for (j = 0; j < 2; j++) {
				/* Both directions at once take two streams. */
				unsigned int n = d == PBOTH && nstreams[j] == 1 ?
						 2 : nstreams[j];
				unsigned int reps = reps_for(size * n);
				double lib = 0, raw = 0;

				if (n > 1 && size > ((size_t)256 << 20))
					continue;
				if (have_lib)
					lib = run_accel_peer(as, n, ldev, d, size,
							     reps);
#ifdef HAVE_CUDA
				if (gpu && have_raw)
					raw = run_cuda_peer(cs, n, rdev, d, size,
							    reps);
#endif
				if (!gpu)
					raw = run_memcpy_peer(n, rdev, d, size,
							      reps);
				row(pdir_name[d], size, n, lib, raw);
			}
		}
	}
	base_name = saved;
	for (i = 0; i < 2; i++)
		if (!gpu)
			free(rdev[i]);
}

/*
 * Stream-ordered fills of device memory (accel_memset_async against
 * cudaMemsetAsync, or memset(3) on the CPU), 1 MiB to 1 GiB, and D2D 2D
 * copies of rows of 4 KiB at a pitch of 8 KiB (accel_memcpy_2d_async
 * against cudaMemcpy2DAsync, or a memcpy(3) per row): GB/s of bytes
 * written, one stream.
 */
static void fill_2d_rows(accel_stream_t s, const struct bufs *lb,
			 const struct bufs *rb, int gpu, void *stream)
{
	static const size_t sizes[] = { 1 << 20, 16 << 20, 256 << 20,
					(size_t)1 << 30 };
	const size_t w = 4096, pitch = 8192;
	unsigned int k, r;

	(void)stream;	/* a cudaStream_t, where CUDA is built in */
	for (k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		size_t size = sizes[k], rows = size / pitch, y;
		unsigned int reps = reps_for(size);
		double lib, raw = 0;
		uint64_t t0;

		if (size > max_size)
			continue;
		t0 = bench_ns();
		for (r = 0; r < reps; r++)
			AC(accel_memset_async(s, lb->dev[0], (int)r, size));
		AC(accel_stream_synchronize(s, ACCEL_TIMEOUT_INFINITE));
		lib = gbps((size_t)reps * size, bench_ns() - t0);
		t0 = bench_ns();
#ifdef HAVE_CUDA
		if (gpu) {
			cudaStream_t cs = *(cudaStream_t *)stream;

			for (r = 0; r < reps; r++)
				CU(cudaMemsetAsync(rb->dev[0], (int)r, size, cs));
			CU(cudaStreamSynchronize(cs));
		}
#endif
		if (!gpu)
			for (r = 0; r < reps; r++)
				memset(rb->dev[0], (int)r, size);
		raw = gbps((size_t)reps * size, bench_ns() - t0);
		row("memset", size, 1, lib, raw);

		t0 = bench_ns();
		for (r = 0; r < reps; r++)
			AC(accel_memcpy_2d_async(s, lb->dev[1], pitch, lb->dev[0],
						 pitch, w, rows, ACCEL_MEMCPY_D2D));
		AC(accel_stream_synchronize(s, ACCEL_TIMEOUT_INFINITE));
		lib = gbps((size_t)reps * rows * w, bench_ns() - t0);
		t0 = bench_ns();
#ifdef HAVE_CUDA
		if (gpu) {
			cudaStream_t cs = *(cudaStream_t *)stream;

			for (r = 0; r < reps; r++)
				CU(cudaMemcpy2DAsync(rb->dev[1], pitch, rb->dev[0],
						     pitch, w, rows,
						     cudaMemcpyDeviceToDevice, cs));
			CU(cudaStreamSynchronize(cs));
		}
#endif
		if (!gpu)
			for (r = 0; r < reps; r++)
				for (y = 0; y < rows; y++)
					memcpy(rb->dev[1] + y * pitch,
					       rb->dev[0] + y * pitch, w);
		raw = gbps((size_t)reps * rows * w, bench_ns() - t0);
		row("D2D-2D", size, 1, lib, raw);
	}
}

int main(int argc, char **argv)
{
	static const size_t sizes[] = { 4 << 10, 64 << 10, 1 << 20, 16 << 20,
					256 << 20, (size_t)1 << 30 };
	static const unsigned int nstreams[] = { 1, 2, 4 };
	accel_stream_t as[MAX_STREAMS];
	struct bufs lb, rb;
	static const size_t reg_sizes[] = { (size_t)1 << 30, (size_t)4 << 30 };
	accel_context *ctx;
	unsigned int i, k;
	size_t reg_max, reg_only;
	int gpu;
	enum dir d;
#ifdef HAVE_CUDA
	cudaStream_t cs[MAX_STREAMS];
#endif

	/* Two soft devices for the peer rows, unless the caller chose. */
	setenv("ACCEL_INPROC_DEVICES", "2", 0);
	bench_csv_open("bandwidth", argc, argv);
	max_size = env_size("BENCH_MAX", (size_t)1 << 30);
	reg_max = env_size("BENCH_REG_MAX", (size_t)4 << 30);
	target_bytes = env_size("BENCH_BYTES", (size_t)512 << 20);
	min_reps = (unsigned int)env_size("BENCH_REPS", 3);
	{
		const char *o = getenv("BENCH_ORDER");

		order = o && !strcmp(o, "lib") ? ORDER_LIB_FIRST :
			o && !strcmp(o, "raw") ? ORDER_RAW_FIRST : ORDER_ABBA;
	}
	/* BENCH_REGISTER_ONLY=1: the registration rows alone (tiny buffers). */
	reg_only = env_size("BENCH_REGISTER_ONLY", 0);
	if (reg_only)
		max_size = 4096;
	ctx = bench_ctx(&gpu);
	for (i = 0; i < MAX_STREAMS; i++)
		AC(accel_stream_create(ctx, ACCEL_STREAM_NON_BLOCKING, 0, &as[i]));

	/* libaccel's buffers, and the baseline's own. */
	for (i = 0; i < 2; i++) {
		AC(accel_host_alloc(ctx, (void **)&lb.host[i], max_size, 0));
		AC(accel_malloc(ctx, (void **)&lb.dev[i], max_size));
		memset(lb.host[i], i + 1, max_size);
	}
	if (gpu) {
#ifdef HAVE_CUDA
		for (i = 0; i < 2; i++) {
			CU(cudaMallocHost((void **)&rb.host[i], max_size));
			CU(cudaMalloc((void **)&rb.dev[i], max_size));
			memset(rb.host[i], i + 1, max_size);
		}
		for (i = 0; i < MAX_STREAMS; i++)
			CU(cudaStreamCreateWithFlags(&cs[i], cudaStreamNonBlocking));
#endif
	} else {
		for (i = 0; i < 2; i++) {
			rb.host[i] = malloc(max_size);
			rb.dev[i] = malloc(max_size);
			if (!rb.host[i] || !rb.dev[i])
				return 1;
			memset(rb.host[i], i + 1, max_size);
			memset(rb.dev[i], i + 3, max_size);
		}
	}
	base_name = gpu ? "raw cudaMemcpyAsync" : "memcpy, one thread per stream";
	if (reg_only)
		base_name = gpu ? "cudaHostRegister" : "mlock";
	printf("# bandwidth in GB/s (1e9 bytes/s); ratio = libaccel / %s\n",
	       base_name);
	printf("%-10s %8s %7s %12s %12s %9s\n", "copy", "size", "streams",
	       "libaccel", gpu ? "raw-cuda" : "memcpy", "ratio");
	if (reg_only)
		goto registration;

	if (env_size("BENCH_PAGEABLE_ONLY", 0))
		goto pageable;
	for (d = H2D; d < NDIR; d++) {
		for (k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
			size_t size = sizes[k];

			if (size > max_size)
				continue;
			for (i = 0; i < sizeof(nstreams) / sizeof(nstreams[0]); i++) {
				unsigned int n = nstreams[i];
				unsigned int reps = reps_for(size * n);
				double lib, raw;

				/* Big copies on many streams say nothing more. */
				if (n > 1 && size > ((size_t)256 << 20))
					continue;
#ifdef HAVE_CUDA
#define RAW() (gpu ? run_cuda(cs, n, &rb, d, size, reps) :		\
		     run_memcpy(n, &rb, d, size, reps))
#else
#define RAW() run_memcpy(n, &rb, d, size, reps)
#endif
#define LIB() run_accel(as, n, &lb, d, size, reps)
				if (order == ORDER_RAW_FIRST) {
					raw = RAW();
					lib = LIB();
				} else {
					lib = LIB();
					raw = RAW();
				}
				if (order == ORDER_ABBA) {
					raw = over_two(raw, RAW());
					lib = over_two(lib, LIB());
				}
#undef RAW
#undef LIB
				row(dir_name[d], size, n, lib, raw);
			}
		}
	}

	/* H2D and D2H at once, on two streams: both directions of the link. */
	{
		size_t size = max_size < ((size_t)256 << 20) ? max_size :
			      (size_t)256 << 20;
		unsigned int reps = reps_for(size), r;
		uint64_t t0;
		double lib, raw = 0;

		t0 = bench_ns();
		for (r = 0; r < reps; r++) {
			AC(accel_memcpy_async(as[0], lb.dev[0], lb.host[0], size,
					      ACCEL_MEMCPY_H2D));
			AC(accel_memcpy_async(as[1], lb.host[1], lb.dev[1], size,
					      ACCEL_MEMCPY_D2H));
		}
		AC(accel_stream_synchronize(as[0], ACCEL_TIMEOUT_INFINITE));
		AC(accel_stream_synchronize(as[1], ACCEL_TIMEOUT_INFINITE));
		lib = gbps(2 * (size_t)reps * size, bench_ns() - t0);
#ifdef HAVE_CUDA
		if (gpu) {
			t0 = bench_ns();
			for (r = 0; r < reps; r++) {
				CU(cudaMemcpyAsync(rb.dev[0], rb.host[0], size,
						   cudaMemcpyHostToDevice, cs[0]));
				CU(cudaMemcpyAsync(rb.host[1], rb.dev[1], size,
						   cudaMemcpyDeviceToHost, cs[1]));
			}
			CU(cudaStreamSynchronize(cs[0]));
			CU(cudaStreamSynchronize(cs[1]));
			raw = gbps(2 * (size_t)reps * size, bench_ns() - t0);
		}
#endif
		if (!gpu) {
			struct cpu_job j[2] = {
				{ rb.dev[0], rb.host[0], size, reps },
				{ rb.host[1], rb.dev[1], size, reps },
			};
			pthread_t th[2];

			t0 = bench_ns();
			for (i = 0; i < 2; i++)
				pthread_create(&th[i], NULL, cpu_worker, &j[i]);
			for (i = 0; i < 2; i++)
				pthread_join(th[i], NULL);
			raw = gbps(2 * (size_t)reps * size, bench_ns() - t0);
		}
		row("H2D+D2H", size, 2, lib, raw);
	}

	/* BENCH_PINNED_ONLY=1: the rows above only (a comparison pass). */
	if (env_size("BENCH_PINNED_ONLY", 0)) {
		accel_context_destroy(ctx);
		return 0;
	}
pageable:
	/* Pageable memory on the host side, both ways, every size. */
	for (d = H2D; d <= D2H; d++)
		for (k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++)
			if (sizes[k] <= max_size)
				pageable_row(as[0], &lb, &rb, gpu, d, sizes[k],
#ifdef HAVE_CUDA
					     gpu ? (void *)&cs[0] : NULL
#else
					     NULL
#endif
					     );
	if (env_size("BENCH_PAGEABLE_ONLY", 0)) {
		accel_context_destroy(ctx);
		return 0;
	}

	/* Between two devices' memory, when there are two. */
	peer_rows(ctx, gpu, sizes, sizeof(sizes) / sizeof(sizes[0]));

	/* Fills and 2D copies next to cudaMemsetAsync / cudaMemcpy2DAsync. */
	base_name = gpu ? "raw cudaMemsetAsync / cudaMemcpy2DAsync" :
			  "memset / memcpy per row";
	fill_2d_rows(as[0], &lb, &rb, gpu,
#ifdef HAVE_CUDA
		     gpu ? (void *)&cs[0] : NULL
#else
		     NULL
#endif
		     );

registration:
	/* Registration: 1 GiB and 4 GiB, up to BENCH_REG_MAX. */
	base_name = gpu ? "cudaHostRegister" : "mlock";
	for (k = 0; k < sizeof(reg_sizes) / sizeof(reg_sizes[0]); k++)
		if (reg_sizes[k] <= reg_max)
			register_row(ctx, gpu, reg_sizes[k]);
	if (reg_max < reg_sizes[0])
		register_row(ctx, gpu, reg_max);
	accel_context_destroy(ctx);
	return 0;
}
