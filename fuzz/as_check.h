/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Helpers shared by the accelstream ioctl fuzzer and the fault tests:
 * TAP output, the debugfs summary, the FOLL_PIN counters of /proc/vmstat
 * and CLOCK_MONOTONIC deadlines. Header-only so that every program stays
 * one static binary built from one file.
 */
#ifndef ACCEL_FUZZ_AS_CHECK_H
#define ACCEL_FUZZ_AS_CHECK_H

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define AS_DEV		"/dev/accelstream"
#define AS_SUMMARY	"/sys/kernel/debug/accelstream/summary"

/* ---- TAP ---------------------------------------------------------------- */

static int tap_pass, tap_fail, tap_skip, tap_num;

static inline void tap_header(int plan)
{
	printf("TAP version 13\n1..%d\n", plan);
	fflush(stdout);
}

static inline void tap_result(int ok, const char *name, const char *fmt, ...)
{
	char why[512] = "";
	va_list ap;

	if (fmt) {
		va_start(ap, fmt);
		vsnprintf(why, sizeof(why), fmt, ap);
		va_end(ap);
	}
	tap_num++;
	if (ok)
		tap_pass++;
	else
		tap_fail++;
	printf("%s %d %s%s%s\n", ok ? "ok" : "not ok", tap_num, name,
	       why[0] ? " # " : "", why);
	fflush(stdout);
}

static inline void tap_skip_result(const char *name, const char *why)
{
	tap_num++;
	tap_skip++;
	printf("ok %d %s # SKIP %s\n", tap_num, name, why);
	fflush(stdout);
}

static inline int tap_totals(void)
{
	printf("# Totals: pass:%d fail:%d xfail:0 xpass:0 skip:%d error:0\n",
	       tap_pass, tap_fail, tap_skip);
	fflush(stdout);
	return tap_fail ? 1 : 0;
}

/* ---- time --------------------------------------------------------------- */

static inline uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline uint64_t deadline_ms(unsigned int ms)
{
	return now_ns() + (uint64_t)ms * 1000000ull;
}

static inline void sleep_ms(unsigned int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* ---- small files --------------------------------------------------------- */

static inline int read_file(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n, got = 0;

	if (fd < 0)
		return -errno;
	while ((size_t)got < len - 1) {
		n = read(fd, buf + got, len - 1 - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += n;
	}
	buf[got] = 0;
	close(fd);
	return (int)got;
}

static inline int write_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, s, strlen(s));
	close(fd);
	return n == (ssize_t)strlen(s) ? 0 : -EIO;
}

/* Value of "key N" (one pair a line) in @text, or -1 when absent. */
static inline long long kv_get(const char *text, const char *key)
{
	size_t kl = strlen(key);
	const char *p = text;

	while (p && *p) {
		if (!strncmp(p, key, kl) && p[kl] == ' ')
			return strtoll(p + kl + 1, NULL, 10);
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return -1;
}

/* ---- the driver's debugfs summary ------------------------------------- */

struct as_summary {
	long long contexts, streams, events, regions, queued, pinned, device;
	long long submitted, retired;
};

static inline int summary_read(struct as_summary *s)
{
	char buf[2048];

	if (read_file(AS_SUMMARY, buf, sizeof(buf)) <= 0)
		return -1;
	s->contexts = kv_get(buf, "contexts");
	s->streams = kv_get(buf, "streams");
	s->events = kv_get(buf, "events");
	s->regions = kv_get(buf, "regions");
	s->queued = kv_get(buf, "queued");
	s->pinned = kv_get(buf, "pinned_bytes");
	s->device = kv_get(buf, "device_bytes");
	s->submitted = kv_get(buf, "submitted_total");
	s->retired = kv_get(buf, "retired_total");
	return 0;
}

static inline int summary_zero(const struct as_summary *s)
{
	return !s->contexts && !s->streams && !s->events && !s->regions &&
	       !s->queued && !s->pinned && !s->device;
}

static inline void summary_fmt(const struct as_summary *s, char *buf, size_t n)
{
	snprintf(buf, n, "contexts %lld streams %lld events %lld regions %lld "
		 "queued %lld pinned_bytes %lld device_bytes %lld",
		 s->contexts, s->streams, s->events, s->regions, s->queued,
		 s->pinned, s->device);
}

/*
 * Poll the summary until every count is zero (workers of closed contexts
 * may still be draining) or @ms pass. Return 1 zero, 0 not zero, -1 no
 * debugfs. @out gets the last summary read.
 */
static inline int summary_wait_zero(unsigned int ms, struct as_summary *out)
{
	uint64_t end = deadline_ms(ms);

	for (;;) {
		if (summary_read(out))
			return -1;
		if (summary_zero(out))
			return 1;
		if (now_ns() > end)
			return 0;
		sleep_ms(20);
	}
}

/* ---- FOLL_PIN balance ------------------------------------------------- */

/* Fold per-CPU deltas, then read the two counters. 0 or -1. */
static inline int pins_read(long long *acq, long long *rel)
{
	char buf[16384];

	write_file("/proc/sys/vm/stat_refresh", "1");
	if (read_file("/proc/vmstat", buf, sizeof(buf)) <= 0)
		return -1;
	*acq = kv_get(buf, "nr_foll_pin_acquired");
	*rel = kv_get(buf, "nr_foll_pin_released");
	if (*acq < 0 || *rel < 0)
		return -1;
	return 0;
}

/* Wait up to @ms for acquired == released. 1 balanced, 0 not, -1 n/a. */
static inline int pins_wait_balanced(unsigned int ms, long long *acq,
				     long long *rel)
{
	uint64_t end = deadline_ms(ms);

	for (;;) {
		if (pins_read(acq, rel))
			return -1;
		if (*acq == *rel)
			return 1;
		if (now_ns() > end)
			return 0;
		sleep_ms(20);
	}
}

/* The TAP lines every program ends with: leftovers and pins. */
static inline void check_leftovers(const char *tag, unsigned int ms)
{
	struct as_summary s;
	long long acq, rel;
	char name[128], buf[256];
	int r;

	snprintf(name, sizeof(name), "%s: summary back to zero", tag);
	r = summary_wait_zero(ms, &s);
	if (r < 0) {
		tap_skip_result(name, "no " AS_SUMMARY);
	} else {
		summary_fmt(&s, buf, sizeof(buf));
		tap_result(r == 1, name, "%s", buf);
	}
	snprintf(name, sizeof(name), "%s: nr_foll_pin_acquired == nr_foll_pin_released", tag);
	r = pins_wait_balanced(ms, &acq, &rel);
	if (r < 0)
		tap_skip_result(name, "no foll_pin counters in /proc/vmstat");
	else
		tap_result(r == 1, name, "acquired=%lld released=%lld", acq, rel);
}

#endif /* ACCEL_FUZZ_AS_CHECK_H */
