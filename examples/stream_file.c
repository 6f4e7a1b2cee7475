// SPDX-License-Identifier: MIT
/*
 * stream_file: load a file into device memory the way a model loader
 * does, copy it back, and check every byte.
 *
 * Two legs, timed apart:
 *
 *   file -> device  THREADS threads (-t), each with its own stream and two
 *                   pinned slots (accel_host_alloc): a thread pread()s a
 *                   piece of CHUNK bytes into one slot while the H2D copy
 *                   of its other slot is on the wire. Pieces are taken in
 *                   file order from a shared counter. Timed from the first
 *                   byte read to the last byte on the device (every stream
 *                   synchronized). With -m mmap the file is mapped instead
 *                   (MADV_SEQUENTIAL | MADV_WILLNEED) and each piece of the
 *                   mapping is handed to accel_memcpy_h2d_async() as a
 *                   pageable source, which libaccel stages through its
 *                   pinned pool; the mmap() is inside the timed leg.
 *   device -> host  the same threads and streams copy the device bytes
 *                   back, a piece each, into one malloc'd buffer
 *                   (accel_memcpy_d2h_async() into pageable memory,
 *                   through libaccel's staging pool).
 *
 * Then, outside the timed legs, what came back is compared byte for byte
 * with the file (read again), and written to standard output, so that
 * `stream_file FILE | sha256sum` can be compared with `sha256sum FILE` as
 * well. A file larger than the device memory accel_malloc() grants (or
 * than a quarter of RAM, for the copy that comes back) goes through in
 * windows of that size, each window both legs and then its check; the
 * legs' figures add the windows up.
 *
 * For reference, the same run first reads the file into the same malloc'd
 * buffer with read() in one thread, then with pread() in THREADS threads
 * (after an untimed read that brings it into the page cache): the file ->
 * device leg cannot beat the second, and a loader without threads gets
 * the first.
 *
 * Usage: stream_file [-c CHUNK_BYTES] [-t THREADS] [-m pread|mmap]
 *                    [-n NAME] [-p N:FD] FILE [SIZE]
 *   CHUNK_BYTES: the piece each copy moves (default 4 MiB).
 *   THREADS: copying threads, one stream each (default half the online
 *   CPUs, 2 to 8, as libaccel's staging pool).
 *   NAME: what to call the input in the figures (default: FILE).
 *   -p N:FD: once the copy of the Nth chunk to the device is queued,
 *   write "N\n" to file descriptor FD and wait for SIGINT or SIGTERM
 *   with that copy not yet synchronized, so that a runner interrupts the
 *   run in its middle, with work in flight, whatever the machine's speed.
 *   SIZE: bytes to stream (default: the file's size); lets a block device
 *   carry a file whose size is not a multiple of its sectors.
 * FILE: a regular file or a block device (not a pipe: its size must be
 * known). CHUNK_BYTES: 1 to 1 GiB; THREADS: 1 to 64.
 * Figures go to standard error; a byte that differs fails the run (exit 1),
 * and so does a file that gets shorter while it is streamed; SIGINT or
 * SIGTERM end it with 128 + the signal's number (130, 143).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <linux/fs.h>

#include "libaccel.h"

#define NSLOT		2
#define MAX_THREADS	64
#define MAX_CHUNK	(1ULL << 30)
#define SEC_NS		(30ULL * 1000000000ULL)

static volatile sig_atomic_t interrupted;

/* The signal that interrupts the run, or 0. */
static void on_signal(int sig)
{
	interrupted = sig;
}

/*
 * -p: say that the pause point is reached, then wait for the signal. Any
 * thread may take it (the handler only sets the flag), so the flag is
 * looked at every millisecond rather than waited for with sigsuspend().
 */
static int pause_point(int fd, uint64_t n)
{
	const struct timespec ms = { .tv_nsec = 1000000 };
	char line[32];
	int len;

	len = snprintf(line, sizeof(line), "%" PRIu64 "\n", n);
	if (write(fd, line, (size_t)len) != len)
		return -errno;
	while (!interrupted)
		nanosleep(&ms, NULL);
	return 0;
}

static int die(const char *what, int err)
{
	const char *why = accel_last_error_string();

	fprintf(stderr, "stream_file: %s: %s%s%s\n", what, accel_strerror(err),
		*why ? ": " : "", why);
	return 1;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Read exactly @n bytes at @off: 0, -EIO if the file ends first, or -errno. */
static int pread_full(int fd, void *buf, size_t n, uint64_t off)
{
	size_t done = 0;

	while (done < n) {
		ssize_t r = pread(fd, (char *)buf + done, n - done,
				  (off_t)(off + done));

		if (r < 0 && errno == EINTR) {
			if (interrupted)
				return -EINTR;
			continue;
		}
		if (r < 0)
			return -errno;
		if (r == 0)
			return -EIO;
		done += r;
	}
	return 0;
}

static int write_full(int fd, const void *buf, size_t n)
{
	size_t done = 0;

	while (done < n) {
		ssize_t w = write(fd, (const char *)buf + done, n - done);

		if (w < 0 && errno == EINTR && !interrupted)
			continue;
		if (w < 0)
			return -errno;
		done += w;
	}
	return 0;
}

static int file_size(int fd, const char *path, uint64_t *size)
{
	struct stat st;

	if (fstat(fd, &st))
		return -errno;
	if (S_ISDIR(st.st_mode)) {
		fprintf(stderr, "stream_file: %s: is a directory\n", path);
		return -EISDIR;
	}
	if (S_ISBLK(st.st_mode))
		return ioctl(fd, BLKGETSIZE64, size) ? -errno : 0;
	if (!S_ISREG(st.st_mode)) {
		fprintf(stderr, "stream_file: %s: not a regular file or block device\n",
			path);
		return -EINVAL;
	}
	*size = st.st_size;
	return 0;
}

/*
 * One leg over one window: the threads take pieces of CHUNK bytes from
 * @next until the window is done, each with its own stream and slots.
 */
struct worker;
typedef int piece_fn(struct worker *w, uint64_t off, size_t n);

struct leg {
	int fd;
	const unsigned char *map;	/* -m mmap: the file, mapped */
	unsigned char *dev;		/* the device window */
	unsigned char *host;		/* what came back (malloc'd) */
	uint64_t base;			/* the window's offset in the file */
	uint64_t len;			/* the window's bytes */
	size_t chunk;
	piece_fn *piece;
	atomic_uint_fast64_t next;	/* the next piece to take */
	atomic_int err;			/* the first error, or 0 */
	uint64_t pause_at;		/* -p: the chunk to pause after, 1-based */
	int pause_fd;
};

struct worker {
	struct leg *leg;
	accel_stream_t stream;
	void *slot[NSLOT];
	accel_event_t h2d_done[NSLOT];
	unsigned int turn;		/* the slot the next piece takes */
	pthread_t tid;
};

/* file -> device: pread() into a pinned slot, H2D from it. */
static int h2d_pread(struct worker *w, uint64_t off, size_t n)
{
	struct leg *l = w->leg;
	unsigned int k = w->turn++ % NSLOT;
	int ret;

	/* The slot is refilled once its previous H2D copy ran. */
	ret = accel_event_synchronize(w->h2d_done[k], SEC_NS);
	if (!ret)
		ret = pread_full(l->fd, w->slot[k], n, l->base + off);
	if (!ret)
		ret = accel_memcpy_h2d_async(w->stream, l->dev + off,
					     w->slot[k], n);
	if (!ret)
		ret = accel_event_record(w->h2d_done[k], w->stream);
	return ret;
}

/* file -> device: the mapping as a pageable source. */
static int h2d_mmap(struct worker *w, uint64_t off, size_t n)
{
	struct leg *l = w->leg;

	return accel_memcpy_h2d_async(w->stream, l->dev + off,
				      l->map + l->base + off, n);
}

/* device -> host: into the malloc'd buffer, a pageable destination. */
static int d2h_pageable(struct worker *w, uint64_t off, size_t n)
{
	struct leg *l = w->leg;

	return accel_memcpy_d2h_async(w->stream, l->host + off, l->dev + off, n);
}

/* The baseline: pread() into the malloc'd buffer, no device. */
static int read_host(struct worker *w, uint64_t off, size_t n)
{
	struct leg *l = w->leg;

	return pread_full(l->fd, l->host + off, n, l->base + off);
}

static void *worker_run(void *arg)
{
	struct worker *w = arg;
	struct leg *l = w->leg;
	int ret = 0;

	while (!ret && !interrupted && !atomic_load(&l->err)) {
		uint64_t off = atomic_fetch_add(&l->next, 1) * l->chunk;

		if (off >= l->len)
			break;
		ret = l->piece(w, off, l->len - off < l->chunk ?
				       l->len - off : l->chunk);
		/* -p: on the way in, this piece's copy queued on our stream. */
		if (!ret && l->pause_at && l->piece != d2h_pageable &&
		    l->piece != read_host &&
		    (l->base + off) / l->chunk + 1 == l->pause_at)
			ret = pause_point(l->pause_fd, l->pause_at);
	}
	/* The leg ends with the last byte where it goes. */
	if (!ret)
		ret = accel_stream_synchronize(w->stream, SEC_NS);
	if (ret) {
		int none = 0;

		atomic_compare_exchange_strong(&l->err, &none, ret);
	}
	return NULL;
}

/* Run @piece over the window with @nthreads workers; 0 or the first error. */
static int run_leg(struct leg *l, piece_fn *piece, struct worker *w,
		   int nthreads)
{
	int t, started, ret;

	l->piece = piece;
	atomic_store(&l->next, 0);
	atomic_store(&l->err, 0);
	for (started = 0; started < nthreads; started++) {
		ret = pthread_create(&w[started].tid, NULL, worker_run,
				     &w[started]);
		if (ret) {
			atomic_store(&l->err, -ret);
			break;
		}
	}
	for (t = 0; t < started; t++)
		pthread_join(w[t].tid, NULL);
	if (interrupted && !atomic_load(&l->err))
		return -EINTR;
	return atomic_load(&l->err);
}

/*
 * The check, outside the timed legs: the window's bytes that came back
 * against the file's, piece by piece, each then written to standard
 * output. *@back counts the chunks checked.
 */
static int check_window(struct leg *l, void *scratch, uint64_t *back)
{
	uint64_t off;
	int ret;

	for (off = 0; off < l->len && !interrupted; off += l->chunk) {
		size_t n = l->len - off < l->chunk ? l->len - off : l->chunk;
		const unsigned char *got = l->host + off;

		ret = pread_full(l->fd, scratch, n, l->base + off);
		if (ret)
			return ret;
		if (memcmp(got, scratch, n)) {
			size_t i = 0;

			while (got[i] == ((unsigned char *)scratch)[i])
				i++;
			fprintf(stderr, "stream_file: byte %" PRIu64 " came back as 0x%02x, the file has 0x%02x\n",
				l->base + off + i, got[i],
				((unsigned char *)scratch)[i]);
			return -EILSEQ;
		}
		ret = write_full(STDOUT_FILENO, got, n);
		if (ret)
			return ret;
		++*back;
	}
	return 0;
}

/*
 * As much device memory as accel_malloc() grants, up to the whole file:
 * halved, in whole chunks, while it says -ENOMEM.
 */
static int alloc_window(accel_context *ctx, void **dev, uint64_t *window,
			size_t chunk)
{
	int ret;

	while ((ret = accel_malloc(ctx, dev, *window)) == -ENOMEM &&
	       *window > chunk)
		*window = (*window / 2 + chunk - 1) / chunk * chunk;
	return ret;
}

static int default_threads(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN) / 2;

	return n < 2 ? 2 : n > 8 ? 8 : (int)n;
}

static double gbps(uint64_t bytes, double s)
{
	return s > 0 ? bytes / s / 1e9 : 0;
}

int main(int argc, char **argv)
{
	size_t chunk = 4 << 20;
	struct worker w[MAX_THREADS] = { 0 };
	struct leg l = { 0 };
	uint64_t size, window, base, back = 0, nchunks;
	accel_context *ctx;
	struct sigaction sa_int = { .sa_handler = on_signal };
	const char *path, *name = NULL, *transport, *backend;
	static const char usage[] =
		"usage: %s [-c CHUNK_BYTES] [-t THREADS] [-m pread|mmap] [-n NAME] [-p N:FD] FILE [SIZE]\n"
		"  CHUNK_BYTES: 1 to 1073741824; THREADS: 1 to 64\n";
	uint64_t pause_at = 0;
	int pause_fd = -1, nthreads = default_threads(), use_mmap = 0;
	double t, t_read1 = 0, t_readn = 0, t_h2d = 0, t_d2h = 0;
	void *map = MAP_FAILED, *dev = NULL, *host = NULL, *scratch = NULL;
	int opt, fd, ret, i, s, nwin = 0;
	char *end;

	while ((opt = getopt(argc, argv, "c:m:n:p:t:")) != -1) {
		if (opt == 'n') {
			name = optarg;
		} else if (opt == 'p') {
			pause_at = strtoull(optarg, &end, 0);
			if (!pause_at || *end != ':' ||
			    (pause_fd = (int)strtol(end + 1, &end, 0)) < 0 ||
			    *end) {
				fprintf(stderr, usage, argv[0]);
				return 2;
			}
		} else if (opt == 't') {
			nthreads = (int)strtol(optarg, &end, 0);
			if (nthreads < 1 || nthreads > MAX_THREADS || *end) {
				fprintf(stderr, usage, argv[0]);
				return 2;
			}
		} else if (opt == 'm' && (!strcmp(optarg, "pread") ||
					  !strcmp(optarg, "mmap"))) {
			use_mmap = !strcmp(optarg, "mmap");
		} else if (opt != 'c' || optarg[0] == '-' ||
			   !(chunk = strtoull(optarg, &end, 0)) || *end ||
			   chunk > MAX_CHUNK) {
			fprintf(stderr, usage, argv[0]);
			return 2;
		}
	}
	if (optind >= argc || argc - optind > 2) {
		fprintf(stderr, usage, argv[0]);
		return 2;
	}
	path = argv[optind];
	if (!name)
		name = path;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "stream_file: %s: %s\n", path, strerror(errno));
		return 1;
	}
	ret = file_size(fd, path, &size);
	if (ret == -EISDIR || ret == -EINVAL)
		return 1;
	if (ret)
		return die(path, ret);
	if (argc - optind == 2) {
		uint64_t want = strtoull(argv[optind + 1], NULL, 0);

		if (want > size) {
			fprintf(stderr, "stream_file: %s: has %" PRIu64 " bytes, not %" PRIu64 "\n",
				path, size, want);
			return 1;
		}
		size = want;
	}
	if (!size) {
		fprintf(stderr, "stream_file: %s: is empty, nothing to stream\n", path);
		return 1;
	}
	nchunks = (size + chunk - 1) / chunk;

	sigaction(SIGINT, &sa_int, NULL);
	sigaction(SIGTERM, &sa_int, NULL);

	ret = accel_context_create(&ctx, 0);
	if (ret)
		return die("context", ret);
	if (accel_context_get_transport(ctx, &transport) ||
	    accel_context_get_backend(ctx, &backend)) {
		transport = "?";
		backend = "?";
	}
	for (i = 0; !ret && i < nthreads; i++) {
		w[i].leg = &l;
		ret = accel_stream_create(ctx, ACCEL_STREAM_NON_BLOCKING, 0,
					  &w[i].stream);
		for (s = 0; !ret && !use_mmap && s < NSLOT; s++) {
			ret = accel_host_alloc(ctx, &w[i].slot[s], chunk, 0);
			if (!ret)
				ret = accel_event_create(ctx, ACCEL_EVENT_DISABLE_TIMING,
							 &w[i].h2d_done[s]);
		}
	}
	/* What came back is kept whole per window: at most a quarter of RAM. */
	window = (uint64_t)sysconf(_SC_PHYS_PAGES) * sysconf(_SC_PAGESIZE) / 4;
	window = window < chunk ? chunk : window / chunk * chunk;
	if (window > size)
		window = size;
	if (!ret)
		ret = alloc_window(ctx, &dev, &window, chunk);
	if (!ret && (!(host = malloc(window)) || !(scratch = malloc(chunk))))
		ret = -ENOMEM;
	if (ret) {
		accel_context_destroy(ctx);
		return die("setting up streams and buffers", ret);
	}
	l.fd = fd;
	l.dev = dev;
	l.host = host;
	l.chunk = chunk;
	l.pause_at = pause_at;
	l.pause_fd = pause_fd;

	/*
	 * The baselines. An untimed read first brings the file into the page
	 * cache and faults the buffer in, so that every figure below is of
	 * the same cached file.
	 */
	for (base = 0; !ret && base < size; base += window)
		ret = pread_full(fd, host, size - base < window ? size - base : window,
				 base);
	t = now_s();
	for (base = 0; !ret && base < size; base += window)
		ret = pread_full(fd, host, size - base < window ? size - base : window,
				 base);
	t_read1 = now_s() - t;
	for (base = 0; !ret && base < size; base += window) {
		l.base = base;
		l.len = size - base < window ? size - base : window;
		t = now_s();
		ret = run_leg(&l, read_host, w, nthreads);
		t_readn += now_s() - t;
	}

	for (base = 0; !ret && !interrupted && base < size;
	     base += window, nwin++) {
		l.base = base;
		l.len = size - base < window ? size - base : window;
		t = now_s();
		if (use_mmap && map == MAP_FAILED) {
			map = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
			if (map == MAP_FAILED) {
				ret = -errno;
				break;
			}
			madvise(map, size, MADV_SEQUENTIAL);
			madvise(map, size, MADV_WILLNEED);
			l.map = map;
		}
		ret = run_leg(&l, use_mmap ? h2d_mmap : h2d_pread, w, nthreads);
		t_h2d += now_s() - t;
		if (ret)
			break;
		t = now_s();
		ret = run_leg(&l, d2h_pageable, w, nthreads);
		t_d2h += now_s() - t;
		if (!ret)
			ret = check_window(&l, scratch, &back);
	}

	if (interrupted) {
		fprintf(stderr, "stream_file: interrupted; %" PRIu64 " of %" PRIu64 " chunks had come back\n",
			back, nchunks);
		accel_context_destroy(ctx);
		return 128 + interrupted;
	}
	accel_context_destroy(ctx);
	if (map != MAP_FAILED)
		munmap(map, size);
	free(host);
	free(scratch);
	if (ret == -EILSEQ)
		return 1;
	if (ret) {
		struct stat st;

		if (!fstat(fd, &st) && S_ISREG(st.st_mode) &&
		    (uint64_t)st.st_size < size) {
			fprintf(stderr, "stream_file: %s: the file got shorter while it was streamed (%" PRIu64 " bytes, now %lld)\n",
				path, size, (long long)st.st_size);
			return 1;
		}
		return die("streaming", ret);
	}
	/* A signal that came once everything was done still ends the run. */
	if (interrupted)
		return 128 + interrupted;

	fprintf(stderr, "stream_file: file            %s, %" PRIu64 " bytes\n", name, size);
	fprintf(stderr, "stream_file: engine          %s transport, %s backend; %d thread%s, a stream each; %" PRIu64 " chunks of %zu bytes; %d window%s of %" PRIu64 " bytes of device memory\n",
		transport, backend, nthreads, nthreads == 1 ? "" : "s",
		nchunks, chunk, nwin,
		nwin == 1 ? "" : "s", window);
	fprintf(stderr, "stream_file: file -> device  %.2f GB/s (%.4f s; %s)\n",
		gbps(size, t_h2d), t_h2d, use_mmap ?
		"mmap, pieces of the mapping as pageable H2D sources" :
		"pread() into 2 pinned slots per thread, H2D from the slots");
	fprintf(stderr, "stream_file: device -> host  %.2f GB/s (%.4f s; D2H into malloc'd memory)\n",
		gbps(size, t_d2h), t_d2h);
	fprintf(stderr, "stream_file: baseline        read() in 1 thread %.2f GB/s, pread() in %d thread%s %.2f GB/s (the file into malloc'd memory, no device)\n",
		gbps(size, t_read1), nthreads, nthreads == 1 ? "" : "s",
		gbps(size, t_readn));
	fprintf(stderr, "stream_file: check           every byte came back (compared with the file outside the timed legs)\n");
	return 0;
}
