/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared helpers of the accelstream selftests: thin ioctl wrappers that
 * return 0 or -errno, descriptor builders, deadlines, and readers for
 * /proc/vmstat and the accelstream debugfs summary.
 *
 * The ioctl whose errno a test checks is always issued directly, as
 * EXPECT_EQ(-1, ioctl(...)); EXPECT_EQ(E..., errno); the wrappers are for
 * the setup around it.
 */
#ifndef _ACCEL_SELFTEST_HELPERS_H
#define _ACCEL_SELFTEST_HELPERS_H

#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>

#include "accelstream.h"	/* the uapi header: -iquote $(ACCEL_UAPI) */

#define ACCEL_DEV		"/dev/accelstream"
#define ACCEL_DEBUGFS		"/sys/kernel/debug/accelstream"
#define ACCEL_SUMMARY		ACCEL_DEBUGFS "/summary"

/* A handle no test ever gets: handles are small counters per context. */
#define BAD_HANDLE		0x7ffffff1u

#define NSEC_PER_SEC		1000000000ULL
#define NSEC_PER_MSEC		1000000ULL

/* How long a wait that must succeed may take before it counts as a bug. */
#define SURE_NS			(30 * NSEC_PER_SEC)

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a)		(sizeof(a) / sizeof((a)[0]))
#endif

static inline uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

/* An absolute CLOCK_MONOTONIC deadline @ns from now. */
static inline uint64_t deadline_in(uint64_t ns)
{
	return now_ns() + ns;
}

static inline int xioctl(int fd, unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) ? -errno : 0;
}

static inline int accel_open(void)
{
	return open(ACCEL_DEV, O_RDWR | O_CLOEXEC);
}

static inline int accel_info(int fd, struct accel_info *info)
{
	memset(info, 0, sizeof(*info));
	return xioctl(fd, ACCEL_IOC_GET_INFO, info);
}

/* --- memory */

static inline int accel_register(int fd, const void *addr, uint64_t size,
				 uint32_t flags, uint32_t *handle)
{
	struct accel_mem_register r = {
		.addr = (uintptr_t)addr, .size = size, .flags = flags,
	};
	int ret = xioctl(fd, ACCEL_IOC_MEM_REGISTER, &r);

	if (!ret)
		*handle = r.handle;
	return ret;
}

static inline int accel_alloc(int fd, uint64_t size, uint32_t flags,
			      uint32_t *handle, uint64_t *mmap_offset)
{
	struct accel_mem_alloc a = { .size = size, .flags = flags };
	int ret = xioctl(fd, ACCEL_IOC_MEM_ALLOC, &a);

	if (!ret) {
		*handle = a.handle;
		if (mmap_offset)
			*mmap_offset = a.mmap_offset;
	}
	return ret;
}

static inline int accel_release(int fd, uint32_t handle, uint32_t flags)
{
	struct accel_mem_release r = { .handle = handle, .flags = flags };

	return xioctl(fd, ACCEL_IOC_MEM_RELEASE, &r);
}

/* --- streams */

static inline int accel_stream(int fd, uint32_t flags, int32_t prio,
			       uint32_t *handle)
{
	struct accel_stream_create c = { .flags = flags, .priority = prio };
	int ret = xioctl(fd, ACCEL_IOC_STREAM_CREATE, &c);

	if (!ret)
		*handle = c.handle;
	return ret;
}

static inline int accel_stream_destroy(int fd, uint32_t handle)
{
	struct accel_handle h = { .handle = handle };

	return xioctl(fd, ACCEL_IOC_STREAM_DESTROY, &h);
}

static inline int accel_query(int fd, uint32_t stream,
			      struct accel_stream_query *q)
{
	memset(q, 0, sizeof(*q));
	q->handle = stream;
	return xioctl(fd, ACCEL_IOC_STREAM_QUERY, q);
}

static inline int accel_sync(int fd, uint32_t stream, uint64_t seq,
			     uint64_t timeout_ns)
{
	struct accel_stream_sync s = {
		.handle = stream, .seq = seq, .timeout_ns = timeout_ns,
	};

	return xioctl(fd, ACCEL_IOC_STREAM_SYNC, &s);
}

/* Wait for everything submitted on @stream, failing after SURE_NS. */
static inline int accel_drain(int fd, uint32_t stream)
{
	return accel_sync(fd, stream, 0, deadline_in(SURE_NS));
}

/*
 * Poll until @stream has nothing queued (a failed stream's error shows
 * before the descriptors behind it retire); fills *@q. -ETIME after SURE_NS.
 */
static inline int accel_wait_idle(int fd, uint32_t stream,
				  struct accel_stream_query *q)
{
	uint64_t end = deadline_in(SURE_NS);
	int ret;

	while (!(ret = accel_query(fd, stream, q)) && q->queued) {
		if (now_ns() > end)
			return -ETIME;
		usleep(1000);
	}
	return ret;
}

static inline int accel_submit(int fd, uint32_t stream,
			       const struct accel_desc *descs, uint32_t count,
			       uint64_t *seq)
{
	struct accel_submit s = {
		.stream = stream, .count = count, .descs = (uintptr_t)descs,
	};
	int ret = xioctl(fd, ACCEL_IOC_SUBMIT, &s);

	if (!ret && seq)
		*seq = s.seq;
	return ret;
}

static inline int accel_submit1(int fd, uint32_t stream, struct accel_desc d,
				uint64_t *seq)
{
	return accel_submit(fd, stream, &d, 1, seq);
}

/* --- descriptors */

static inline struct accel_desc d_nop(void)
{
	return (struct accel_desc){ .op = ACCEL_OP_NOP };
}

static inline struct accel_desc d_copy(uint32_t dst, uint64_t dst_off,
				       uint32_t src, uint64_t src_off,
				       uint64_t len)
{
	return (struct accel_desc){
		.op = ACCEL_OP_COPY, .dst = dst, .src = src,
		.dst_offset = dst_off, .src_offset = src_off, .length = len,
	};
}

static inline struct accel_desc d_record(uint32_t event)
{
	return (struct accel_desc){ .op = ACCEL_OP_EVENT_RECORD, .event = event };
}

static inline struct accel_desc d_stream_wait(uint32_t event)
{
	return (struct accel_desc){ .op = ACCEL_OP_STREAM_WAIT, .event = event };
}

static inline struct accel_desc d_host_wait(uint32_t event, uint64_t value)
{
	return (struct accel_desc){
		.op = ACCEL_OP_HOST_WAIT, .event = event, .value = value,
	};
}

static inline struct accel_desc d_host_signal(uint32_t event, uint64_t value)
{
	return (struct accel_desc){
		.op = ACCEL_OP_HOST_SIGNAL, .event = event, .value = value,
	};
}

/* --- events */

static inline int accel_event(int fd, uint32_t flags, uint32_t *handle)
{
	struct accel_event_create c = { .flags = flags };
	int ret = xioctl(fd, ACCEL_IOC_EVENT_CREATE, &c);

	if (!ret)
		*handle = c.handle;
	return ret;
}

static inline int accel_event_destroy(int fd, uint32_t handle)
{
	struct accel_handle h = { .handle = handle };

	return xioctl(fd, ACCEL_IOC_EVENT_DESTROY, &h);
}

static inline int accel_record(int fd, uint32_t event, uint32_t stream,
			       uint64_t *seq)
{
	struct accel_event_record r = { .event = event, .stream = stream };
	int ret = xioctl(fd, ACCEL_IOC_EVENT_RECORD, &r);

	if (!ret && seq)
		*seq = r.seq;
	return ret;
}

static inline int accel_event_query(int fd, uint32_t event,
				    struct accel_event_query *q)
{
	memset(q, 0, sizeof(*q));
	q->handle = event;
	return xioctl(fd, ACCEL_IOC_EVENT_QUERY, q);
}

static inline int accel_signal(int fd, uint32_t event, uint32_t flags,
			       uint64_t value)
{
	struct accel_event_signal s = {
		.handle = event, .flags = flags, .value = value,
	};

	return xioctl(fd, ACCEL_IOC_EVENT_SIGNAL, &s);
}

static inline int accel_wait(int fd, const struct accel_wait_entry *e,
			     uint32_t count, uint32_t flags,
			     uint64_t timeout_ns, uint32_t *first)
{
	struct accel_wait w = {
		.entries = (uintptr_t)e, .count = count, .flags = flags,
		.timeout_ns = timeout_ns,
	};
	int ret = xioctl(fd, ACCEL_IOC_WAIT, &w);

	if ((!ret || ret == -EIO) && first)
		*first = w.first_signaled;
	return ret;
}

/* Wait for one plain event (value 0) or user event (value >= 1). */
static inline int accel_wait1(int fd, uint32_t event, uint64_t value,
			      uint64_t timeout_ns)
{
	struct accel_wait_entry e = { .event = event, .value = value };

	return accel_wait(fd, &e, 1, 0, timeout_ns, NULL);
}

/* A stream gated by a user event: nothing behind it runs until released. */
struct gate {
	uint32_t stream;
	uint32_t event;
};

static inline int gate_init(int fd, struct gate *g)
{
	int ret = accel_stream(fd, 0, 0, &g->stream);

	if (!ret)
		ret = accel_event(fd, ACCEL_EVENT_USER, &g->event);
	if (!ret)
		ret = accel_submit1(fd, g->stream, d_host_wait(g->event, 1), NULL);
	return ret;
}

static inline int gate_open(int fd, struct gate *g)
{
	return accel_signal(fd, g->event, 0, 1);
}

/* A gate on an existing stream (the HOST_WAIT is its next descriptor). */
static inline int gate_on(int fd, struct gate *g, uint32_t stream)
{
	int ret = accel_event(fd, ACCEL_EVENT_USER, &g->event);

	g->stream = stream;
	if (!ret)
		ret = accel_submit1(fd, stream, d_host_wait(g->event, 1), NULL);
	return ret;
}

/* --- memory helpers */

/* Anonymous private memory, pre-faulted; NULL on failure. */
static inline void *anon_map(size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/* xorshift64*: reproducible pseudo-random bytes. */
static inline void fill_random(void *buf, size_t size, uint64_t seed)
{
	uint8_t *p = buf;
	uint64_t x = seed * 0x9e3779b97f4a7c15ULL + 1;
	size_t i = 0;

	while (i < size) {
		uint64_t r;
		size_t n;

		x ^= x >> 12;
		x ^= x << 25;
		x ^= x >> 27;
		r = x * 0x2545f4914f6cdd1dULL;
		n = size - i < 8 ? size - i : 8;
		memcpy(p + i, &r, n);
		i += n;
	}
}

/* Index of the first byte that differs, or -1 when equal. */
static inline long first_diff(const void *a, const void *b, size_t size)
{
	const uint8_t *x = a, *y = b;
	size_t i;

	if (!memcmp(a, b, size))
		return -1;
	for (i = 0; i < size; i++)
		if (x[i] != y[i])
			return (long)i;
	return -1;
}

/* True when every byte of @buf is @c. */
static inline int all_bytes(const void *buf, size_t size, uint8_t c)
{
	const uint8_t *p = buf;
	size_t i;

	for (i = 0; i < size; i++)
		if (p[i] != c)
			return 0;
	return 1;
}

/* --- /proc/vmstat and debugfs */

/* Value of @key in a "key value" file, or -1 when absent. */
static inline long long kv_get(const char *path, const char *key)
{
	char line[256], k[128];
	long long v, ret = -1;
	FILE *f = fopen(path, "re");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%127s %lld", k, &v) == 2 && !strcmp(k, key)) {
			ret = v;
			break;
		}
	}
	fclose(f);
	return ret;
}

static inline long long vmstat_get(const char *key)
{
	return kv_get("/proc/vmstat", key);
}

/*
 * nr_foll_pin_acquired - nr_foll_pin_released: pins held system-wide.
 * The counters are batched per CPU; vm.stat_refresh folds them first.
 */
static inline long long pins_held(void)
{
	int fd = open("/proc/sys/vm/stat_refresh", O_WRONLY | O_CLOEXEC);

	if (fd >= 0) {
		/* Best effort: without it the counters only lag. */
		ssize_t n = write(fd, "1\n", 2);

		(void)n;
		close(fd);
	}
	return vmstat_get("nr_foll_pin_acquired") -
	       vmstat_get("nr_foll_pin_released");
}

static inline long long summary_get(const char *key)
{
	return kv_get(ACCEL_SUMMARY, key);
}

/* The debugfs summary is there (module loaded, debugfs mounted). */
static inline int summary_readable(void)
{
	return access(ACCEL_SUMMARY, R_OK) == 0;
}

static const char *const summary_object_keys[] = {
	"contexts", "streams", "events", "regions", "queued",
	"pinned_bytes", "device_bytes",
};

/*
 * Poll until no pins are held and the debugfs object counts are zero, for
 * up to @ms milliseconds (teardown after close may finish on a worker).
 * Return: NULL when clean, else the name of the first counter not at zero
 * (with its value in *@val).
 */
static inline const char *wait_quiescent(unsigned int ms, long long *val)
{
	const char *bad = NULL;
	unsigned int waited = 0;
	size_t i;

	for (;;) {
		long long v;

		bad = NULL;
		v = pins_held();
		if (v != 0) {
			bad = "nr_foll_pin_acquired-released";
			*val = v;
		}
		for (i = 0; !bad && i < ARRAY_SIZE(summary_object_keys); i++) {
			v = summary_get(summary_object_keys[i]);
			if (v > 0) {
				bad = summary_object_keys[i];
				*val = v;
			}
		}
		if (!bad || waited >= ms)
			return bad;
		usleep(10 * 1000);
		waited += 10;
	}
}

/* Poll up to @ms milliseconds for pins_held() == @want; return the last value. */
static inline long long wait_pins(long long want, unsigned int ms)
{
	unsigned int waited = 0;
	long long v;

	while ((v = pins_held()) != want && waited < ms) {
		usleep(10 * 1000);
		waited += 10;
	}
	return v;
}

static inline long page_size(void)
{
	return sysconf(_SC_PAGESIZE);
}

/*
 * The device check and the fixture every program uses. Include after
 * kselftest_harness.h. A missing device skips the whole program with exit
 * status 4 (KSFT_SKIP); the fixture also SKIP()s each test, for the case
 * where the device goes away between the check and the test.
 */
#ifdef __KSELFTEST_HARNESS_H

#define ACCEL_SKIP_NODEV_MSG	ACCEL_DEV " not present (accelstream.ko not loaded?)"
#define ACCEL_SKIP_NODEBUGFS_MSG ACCEL_SUMMARY " not readable (debugfs not " \
				"mounted? mount -t debugfs none /sys/kernel/debug)"

/*
 * SKIP() in a FIXTURE_SETUP, stopping the test there. The harness of v6.10
 * and later (the one with XFAIL_ADD) never runs the body after a SKIP in
 * setup. Older ones (v6.1) run it unless setup failed, and report a test
 * that set skip as skipped whatever else it set: so setup sets both.
 */
#ifdef XFAIL_ADD
#define SETUP_SKIP(fmt, ...)	SKIP(return, fmt, ##__VA_ARGS__)
#else
#define SETUP_SKIP(fmt, ...)						\
	SKIP({ _metadata->passed = 0; return; }, fmt, ##__VA_ARGS__)
#endif

/*
 * The fixture of most programs: the device opened and its GET_INFO. With
 * @summary, tests also need the debugfs summary and skip without it.
 */
#define __ACCEL_FIXTURE(name, summary)					\
FIXTURE(name) {								\
	int fd;								\
	struct accel_info info;						\
};									\
FIXTURE_SETUP(name)							\
{									\
	self->fd = accel_open();					\
	if (self->fd < 0)						\
		SETUP_SKIP(ACCEL_SKIP_NODEV_MSG);			\
	ASSERT_EQ(0, accel_info(self->fd, &self->info));		\
	if ((summary) && !summary_readable())				\
		SETUP_SKIP(ACCEL_SKIP_NODEBUGFS_MSG);			\
}									\
FIXTURE_TEARDOWN(name)							\
{									\
	if (self->fd >= 0)						\
		close(self->fd);					\
}

#define ACCEL_FIXTURE(name)		__ACCEL_FIXTURE(name, 0)
#define ACCEL_FIXTURE_SUMMARY(name)	__ACCEL_FIXTURE(name, 1)

/* SKIP the test (at its top) unless the debugfs summary can be read. */
#define REQUIRE_SUMMARY()						\
	do {								\
		if (!summary_readable())				\
			SKIP(return, ACCEL_SKIP_NODEBUGFS_MSG);		\
	} while (0)

/* SKIP the test unless the driver reports capability @cap. */
#define REQUIRE_CAP(cap)						\
	do {								\
		if (!(self->info.caps & (cap)))				\
			SKIP(return, "driver lacks " #cap);		\
	} while (0)

#define ACCEL_HARNESS_MAIN						\
int main(int argc, char **argv)						\
{									\
	int fd = accel_open();						\
									\
	if (fd < 0) {							\
		ksft_print_header();					\
		ksft_exit_skip(ACCEL_SKIP_NODEV_MSG ": %s\n",		\
			       strerror(errno));			\
	}								\
	close(fd);							\
	return test_harness_run(argc, argv);				\
}

#endif /* __KSELFTEST_HARNESS_H */

#endif /* _ACCEL_SELFTEST_HELPERS_H */
