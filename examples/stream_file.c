// SPDX-License-Identifier: MIT
/*
 * stream_file: stream a file through device memory and back.
 *
 * Chunks go through double-buffered pinned staging on two streams: stream
 * A copies host -> device, stream B device -> host, ordered by events both
 * ways (B waits for A's copy of a chunk; A waits until B has drained the
 * device slot it is about to overwrite). What comes back is written to
 * standard output, so that `stream_file FILE | sha256sum` can be compared
 * with `sha256sum FILE`. The figures go to standard error.
 *
 * Usage: stream_file [-c CHUNK_BYTES] [-n NAME] [-p N:FD] FILE [SIZE]
 *   NAME: what to call the input in the figures (default: FILE).
 *   -p N:FD: once N chunks came back, write "N\n" to file descriptor FD
 *   and wait for SIGINT or SIGTERM, so that a runner interrupts the run in
 *   its middle for certain, whatever the machine's speed.
 *   SIZE: bytes to stream (default: the file's size); lets a block device
 *   carry a file whose size is not a multiple of its sectors.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <linux/fs.h>

#include "libaccel.h"

#define NSLOT		2
#define SEC_NS		(30ULL * 1000000000ULL)

static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
	(void)sig;
	interrupted = 1;
}

/* -p: say that the pause point is reached, then wait for the signal. */
static int pause_point(int fd, uint64_t n)
{
	sigset_t block, old;
	char line[32];
	int len;

	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	/* Blocked first: a signal sent as soon as the line is read waits. */
	sigprocmask(SIG_BLOCK, &block, &old);
	len = snprintf(line, sizeof(line), "%" PRIu64 "\n", n);
	if (write(fd, line, (size_t)len) != len) {
		sigprocmask(SIG_SETMASK, &old, NULL);
		return -errno;
	}
	while (!interrupted)
		sigsuspend(&old);
	sigprocmask(SIG_SETMASK, &old, NULL);
	return 0;
}

static int die(const char *what, int err)
{
	fprintf(stderr, "stream_file: %s: %s\n", what, accel_strerror(err));
	return 1;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Read exactly @n bytes unless the file ends; returns bytes read or -errno. */
static ssize_t read_full(int fd, void *buf, size_t n)
{
	size_t done = 0;

	while (done < n) {
		ssize_t r = read(fd, (char *)buf + done, n - done);

		if (r < 0 && errno == EINTR) {
			if (interrupted)
				return -EINTR;
			continue;
		}
		if (r < 0)
			return -errno;
		if (r == 0)
			break;
		done += r;
	}
	return done;
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

int main(int argc, char **argv)
{
	size_t chunk = 4 << 20;
	void *hin[NSLOT], *hout[NSLOT], *dev[NSLOT];
	accel_event_t h2d_done[NSLOT], d2h_done[NSLOT];
	uint64_t size, off = 0, nchunks, i;
	accel_stream_t sa, sb;
	accel_context *ctx;
	struct sigaction sa_int = { .sa_handler = on_signal };
	const char *path, *name = NULL, *transport, *backend;
	static const char usage[] =
		"usage: %s [-c CHUNK_BYTES] [-n NAME] [-p N:FD] FILE [SIZE]\n";
	uint64_t pause_at = 0;
	int pause_fd = -1;
	double t0, t1;
	int opt, fd, ret, s;
	char *end;

	while ((opt = getopt(argc, argv, "c:n:p:")) != -1) {
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
		} else if (opt != 'c' || !(chunk = strtoull(optarg, NULL, 0))) {
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
	ret = accel_stream_create(ctx, ACCEL_STREAM_NON_BLOCKING, 0, &sa);
	if (!ret)
		ret = accel_stream_create(ctx, ACCEL_STREAM_NON_BLOCKING, 0, &sb);
	for (s = 0; !ret && s < NSLOT; s++) {
		ret = accel_host_alloc(ctx, &hin[s], chunk, 0);
		if (!ret)
			ret = accel_host_alloc(ctx, &hout[s], chunk, 0);
		if (!ret)
			ret = accel_malloc(ctx, &dev[s], chunk);
		if (!ret)
			ret = accel_event_create(ctx, ACCEL_EVENT_DISABLE_TIMING,
						 &h2d_done[s]);
		if (!ret)
			ret = accel_event_create(ctx, ACCEL_EVENT_DISABLE_TIMING,
						 &d2h_done[s]);
	}
	if (ret) {
		accel_context_destroy(ctx);
		return die("setting up streams and buffers", ret);
	}

	t0 = now_s();
	for (i = 0; i <= nchunks && !ret; i++) {
		if (interrupted)
			break;
		if (i < nchunks) {
			size_t n = size - off < chunk ? size - off : chunk;
			ssize_t r;

			s = i % NSLOT;
			/* The host refills a staging slot once its H2D ran. */
			ret = accel_event_synchronize(h2d_done[s], SEC_NS);
			if (ret)
				break;
			r = read_full(fd, hin[s], n);
			if (r < 0 || (size_t)r != n) {
				ret = r < 0 ? (int)r : -EIO;
				break;
			}
			/* Device slot s is free once B copied chunk i - 2 out. */
			ret = accel_stream_wait_event(sa, d2h_done[s], 0);
			if (!ret)
				ret = accel_memcpy_h2d_async(sa, dev[s], hin[s], n);
			if (!ret)
				ret = accel_event_record(h2d_done[s], sa);
			if (!ret)
				ret = accel_stream_wait_event(sb, h2d_done[s], 0);
			if (!ret)
				ret = accel_memcpy_d2h_async(sb, hout[s], dev[s], n);
			if (!ret)
				ret = accel_event_record(d2h_done[s], sb);
			off += n;
		}
		/* Chunk i - 1 is on its way back; drain it while i flies. */
		if (!ret && i > 0) {
			uint64_t prev = i - 1;
			size_t n = prev == nchunks - 1 ? size - prev * chunk : chunk;

			s = prev % NSLOT;
			ret = accel_event_synchronize(d2h_done[s], SEC_NS);
			if (!ret)
				ret = write_full(STDOUT_FILENO, hout[s], n);
			if (!ret && pause_at && i == pause_at)
				ret = pause_point(pause_fd, i);
		}
	}
	t1 = now_s();

	if (interrupted) {
		fprintf(stderr, "stream_file: interrupted after %" PRIu64 " of %" PRIu64 " chunks\n",
			i ? i - 1 : 0, nchunks);
		accel_context_destroy(ctx);
		return 130;
	}
	if (ret) {
		accel_context_destroy(ctx);
		return die("streaming", ret);
	}
	ret = accel_stream_synchronize(sa, SEC_NS);
	if (!ret)
		ret = accel_stream_synchronize(sb, SEC_NS);
	accel_context_destroy(ctx);
	if (ret)
		return die("synchronize", ret);

	fprintf(stderr, "stream_file: file      %s\n", name);
	fprintf(stderr, "stream_file: bytes     %" PRIu64 "\n", size);
	fprintf(stderr, "stream_file: chunks    %" PRIu64 " of %zu bytes, %d staging slots\n",
		nchunks, chunk, NSLOT);
	fprintf(stderr, "stream_file: streams   2 (H2D, D2H), ordered by events\n");
	fprintf(stderr, "stream_file: engine    %s transport, %s backend\n",
		transport, backend);
	fprintf(stderr, "stream_file: time      %.3f s\n", t1 - t0);
	fprintf(stderr, "stream_file: bandwidth %.1f MB/s each way (%.1f MB/s H2D+D2H)\n",
		size / (t1 - t0) / 1e6, 2 * size / (t1 - t0) / 1e6);
	return 0;
}
