// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * api_replay: run libaccel call sequences (api_seq.c) from files, or from
 * a seeded generator, each in a child process, and print TAP.
 *
 * Usage: api_replay [options] [FILE|DIR]...
 *   FILE|DIR        inputs (a corpus directory, libFuzzer crash files)
 *   --seed S        also run generated inputs from seeds S, S+1, ...
 *   --count N       that many (default 100), or
 *   --seconds T     as many as fit in T seconds
 *   --len L         bytes per generated input (default 512)
 *   --save DIR      write each failing generated input to DIR/seed-S
 *   --timeout T     seconds one input may take (default 120)
 *   --trace         print every call of every input (to stderr)
 *   --no-fork       skip the fork steps
 *   --chunk A[,B]   staging pool chunk sizes to aim at (bytes)
 *   --pool-bytes N  pinned bytes an idle context may keep (staging pool)
 * The transport is libaccel's: ACCEL_TRANSPORT=inproc|kernel.
 * A failing input prints "not ok" with the child's report as "#" lines
 * and the command that reproduces it; the exit status is 1 then.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "api_seq.h"

#define REPORT_MAX	(256 * 1024)

static struct api_opts opts;
static unsigned int timeout_s = 120;
static unsigned int ntests, nfailed;

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static void generate(uint64_t seed, uint8_t *buf, size_t len)
{
	uint64_t x = seed, v = 0;
	size_t i;

	for (i = 0; i < len; i++) {
		if (!(i % 8))
			v = splitmix64(&x);
		buf[i] = (uint8_t)(v >> (8 * (i % 8)));
	}
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Lines of a child's report worth showing in TAP. */
static bool interesting(const char *l)
{
	static const char *const keys[] = {
		"VIOLATION", "ERROR:", "SUMMARY:", "runtime error", "    #",
		"signal", "exited", "hung", NULL,
	};
	int i;

	for (i = 0; keys[i]; i++)
		if (strstr(l, keys[i]))
			return true;
	return false;
}

static void show_report(char *rep)
{
	char *l, *save = NULL;
	int shown = 0, frames = 0;

	for (l = strtok_r(rep, "\n", &save); l && shown < 40;
	     l = strtok_r(NULL, "\n", &save)) {
		if (!interesting(l))
			continue;
		if (!strncmp(l, "    #", 5) && ++frames > 12)
			continue;
		printf("#   %s\n", l);
		shown++;
	}
}

/*
 * Run one input in a child. Returns 0 when it passed; else prints the
 * report and returns 1.
 */
static int run_one(const uint8_t *data, size_t len, const char *name,
		   const char *repro)
{
	char *rep = malloc(REPORT_MAX + 1);
	size_t got = 0;
	int pfd[2], status = 0, bad = 0;
	double deadline = now_s() + timeout_s;
	bool timed_out = false;
	pid_t pid;

	if (!rep || pipe(pfd))
		return 1;
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0)
		return 1;
	if (!pid) {
		close(pfd[0]);
		if (!opts.trace)
			dup2(pfd[1], 2);
		close(pfd[1]);
		api_seq_run(data, len, &opts);
		fflush(stderr);
		_exit(0);
	}
	close(pfd[1]);
	for (;;) {
		struct pollfd p = { .fd = pfd[0], .events = POLLIN };
		int left = (int)((deadline - now_s()) * 1000);
		ssize_t n;

		if (left <= 0) {
			timed_out = true;
			kill(pid, SIGKILL);
			break;
		}
		if (poll(&p, 1, left) <= 0)
			continue;
		n = read(pfd[0], rep + got, got < REPORT_MAX ? REPORT_MAX - got : 0);
		if (n <= 0) {
			char sink[4096];

			/* Full: keep draining so the child can finish. */
			if (n < 0 || got < REPORT_MAX ||
			    read(pfd[0], sink, sizeof(sink)) <= 0)
				break;
			continue;
		}
		got += n;
	}
	close(pfd[0]);
	rep[got] = 0;
	waitpid(pid, &status, 0);
	ntests++;
	if (timed_out) {
		printf("not ok %u - %s # hung for %u s\n", ntests, name, timeout_s);
		bad = 1;
	} else if (WIFSIGNALED(status)) {
		printf("not ok %u - %s # signal %d (%s)\n", ntests, name,
		       WTERMSIG(status), strsignal(WTERMSIG(status)));
		bad = 1;
	} else if (WEXITSTATUS(status)) {
		printf("not ok %u - %s # exit status %d\n", ntests, name,
		       WEXITSTATUS(status));
		bad = 1;
	}
	if (bad) {
		show_report(rep);
		printf("#   reproduce: %s\n", repro);
		nfailed++;
	}
	free(rep);
	return bad;
}

static int read_file(const char *path, uint8_t **data, size_t *len)
{
	FILE *f = fopen(path, "rb");
	long n;

	if (!f)
		return -errno;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	*data = malloc(n > 0 ? n : 1);
	*len = *data ? fread(*data, 1, n, f) : 0;
	fclose(f);
	return *data ? 0 : -ENOMEM;
}

static const char *transport(void)
{
	const char *t = getenv("ACCEL_TRANSPORT");

	return t ? t : "kernel";
}

static void run_path(const char *path);

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void run_dir(const char *dir)
{
	char **names = NULL;
	size_t n = 0, i;
	struct dirent *de;
	DIR *d = opendir(dir);

	if (!d)
		return;
	while ((de = readdir(d))) {
		char **nn;

		if (de->d_name[0] == '.')
			continue;
		nn = realloc(names, (n + 1) * sizeof(*names));
		if (!nn)
			break;
		names = nn;
		if (asprintf(&names[n], "%s/%s", dir, de->d_name) < 0)
			break;
		n++;
	}
	closedir(d);
	qsort(names, n, sizeof(*names), name_cmp);
	for (i = 0; i < n; i++) {
		run_path(names[i]);
		free(names[i]);
	}
	free(names);
}

static void run_path(const char *path)
{
	struct stat sb;
	uint8_t *data = NULL;
	size_t len = 0;
	char *repro;

	if (stat(path, &sb)) {
		ntests++;
		nfailed++;
		printf("not ok %u - %s # %s\n", ntests, path, strerror(errno));
		return;
	}
	if (S_ISDIR(sb.st_mode)) {
		run_dir(path);
		return;
	}
	if (read_file(path, &data, &len))
		return;
	if (asprintf(&repro, "ACCEL_TRANSPORT=%s api_replay --trace %s",
		     transport(), path) < 0)
		repro = NULL;
	if (!run_one(data, len, path, repro ? repro : path))
		printf("ok %u - %s\n", ntests, path);
	free(repro);
	free(data);
}

static void save(const char *dir, uint64_t seed, const uint8_t *d, size_t n)
{
	char *path;
	FILE *f;

	mkdir(dir, 0755);
	if (asprintf(&path, "%s/seed-%" PRIu64, dir, seed) < 0)
		return;
	f = fopen(path, "wb");
	if (f) {
		fwrite(d, 1, n, f);
		fclose(f);
		printf("#   saved as %s\n", path);
	}
	free(path);
}

static void usage(void)
{
	fprintf(stderr,
		"usage: api_replay [--seed S [--count N | --seconds T] [--len L] [--save DIR]]\n"
		"                  [--timeout T] [--trace] [--no-fork] [--chunk A[,B]]\n"
		"                  [--pool-bytes N] [FILE|DIR]...\n");
	exit(2);
}

int main(int argc, char **argv)
{
	uint64_t seed = 0, count = 100, i;
	unsigned int seconds = 0;
	size_t len = 512;
	const char *save_dir = NULL;
	bool seeded = false;
	int a, npaths = 0;
	char **paths = calloc(argc, sizeof(*paths));

	api_opts_init(&opts);
	for (a = 1; a < argc; a++) {
		const char *v = a + 1 < argc ? argv[a + 1] : NULL;

		if (!strcmp(argv[a], "--trace")) {
			opts.trace = 1;
		} else if (!strcmp(argv[a], "--no-fork")) {
			opts.no_fork = 1;
		} else if (argv[a][0] == '-' && argv[a][1] == '-' && !v) {
			usage();
		} else if (!strcmp(argv[a], "--seed")) {
			seed = strtoull(v, NULL, 0);
			seeded = true;
			a++;
		} else if (!strcmp(argv[a], "--count")) {
			count = strtoull(v, NULL, 0);
			a++;
		} else if (!strcmp(argv[a], "--seconds")) {
			seconds = strtoul(v, NULL, 0);
			a++;
		} else if (!strcmp(argv[a], "--len")) {
			len = strtoull(v, NULL, 0);
			a++;
		} else if (!strcmp(argv[a], "--save")) {
			save_dir = v;
			a++;
		} else if (!strcmp(argv[a], "--timeout")) {
			timeout_s = strtoul(v, NULL, 0);
			a++;
		} else if (!strcmp(argv[a], "--chunk")) {
			char *end;

			opts.chunk[0] = strtoull(v, &end, 0);
			opts.chunk[1] = *end == ',' ? strtoull(end + 1, NULL, 0) :
					opts.chunk[0];
			a++;
		} else if (!strcmp(argv[a], "--pool-bytes")) {
			opts.pool_bytes = strtoull(v, NULL, 0);
			a++;
		} else if (argv[a][0] == '-') {
			usage();
		} else {
			paths[npaths++] = argv[a];
		}
	}
	if (!seeded && !npaths)
		usage();
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("TAP version 13\n");
	printf("# api_replay: transport=%s chunks=%zu,%zu pool_bytes=%zu\n",
	       transport(), opts.chunk[0], opts.chunk[1], opts.pool_bytes);
	for (a = 0; a < npaths; a++)
		run_path(paths[a]);
	if (seeded) {
		uint8_t *buf = malloc(len ? len : 1);
		double end = now_s() + seconds;
		unsigned int failed0 = nfailed;

		for (i = 0; seconds ? now_s() < end : i < count; i++) {
			char name[64], repro[160];

			generate(seed + i, buf, len);
			snprintf(name, sizeof(name), "seed %" PRIu64, seed + i);
			snprintf(repro, sizeof(repro),
				 "ACCEL_TRANSPORT=%s api_replay --trace --len %zu --seed %" PRIu64 " --count 1",
				 transport(), len, seed + i);
			if (run_one(buf, len, name, repro)) {
				if (save_dir)
					save(save_dir, seed + i, buf, len);
			} else {
				ntests--;
			}
		}
		printf("%s %u - seeds %" PRIu64 "..%" PRIu64 " (%" PRIu64 " inputs of %zu bytes, %u failed)\n",
		       nfailed == failed0 ? "ok" : "not ok", ++ntests, seed,
		       seed + i - 1, i, len, nfailed - failed0);
		free(buf);
	}
	printf("1..%u\n", ntests);
	printf("# api_replay: %u tests, %u failed\n", ntests, nfailed);
	free(paths);
	return nfailed ? 1 : 0;
}
