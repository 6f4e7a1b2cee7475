// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * fault_inject: take every allocation failure path of accelstream.
 *
 * For each operation (open, register, alloc host/device, mmap of a host
 * allocation, stream and event creation, submit, event record, wait,
 * event export and import) the
 * test sweeps /proc/thread-self/fail-nth: with N = 1, 2, ... the N-th
 * allocation the calling task makes inside the operation fails, until an
 * operation runs without reaching its N-th allocation. failslab covers
 * kmalloc/kvmalloc/xarray/slab caches; a second sweep with fail_page_alloc
 * covers the driver's own page allocations (host and device memory).
 * Every injected failure must make the call fail with the documented errno
 * (-ENOMEM) or succeed (an allocation with a fallback), must leave the
 * context's counts and the process's open descriptors as they were
 * (nothing half-built stays behind, no descriptor leaks), and the same
 * call without injection must then work (the event still exports). A last pass uses the
 * classic probability/times/task-filter knobs with make-it-fail.
 * After each operation: the file is closed, the debugfs summary is back to
 * zero and the FOLL_PIN counters balance.
 *
 * Fault attributes get verbose=0: no "FAULT_INJECTION: forcing a failure"
 * lines or stack dumps in dmesg. Needs CONFIG_FAULT_INJECTION_DEBUG_FS,
 * FAILSLAB and FAIL_PAGE_ALLOC (the debug kernel); skips elsewhere.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fault_util.h"

#define FS	"/sys/kernel/debug/failslab"
#define FP	"/sys/kernel/debug/fail_page_alloc"
#define MAX_NTH	400

static int nth_fd = -1;
static long total_taken;

static void attr(const char *dir, const char *name, const char *val)
{
	char p[256];

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	if (write_file(p, val))
		printf("# cannot write %s to %s\n", val, p);
}

static void nth_arm(unsigned int n)
{
	char b[16];
	int len = snprintf(b, sizeof(b), "%u", n);

	if (pwrite(nth_fd, b, len, 0) != len)
		printf("# fail-nth write: %s\n", strerror(errno));
}

/* Disarm; return whether the armed fault fired. */
static bool nth_disarm(void)
{
	char b[16] = "";
	bool fired;

	if (pread(nth_fd, b, sizeof(b) - 1, 0) < 0)
		return false;
	fired = atoi(b) == 0;
	if (pwrite(nth_fd, "0", 1, 0) != 1)
		printf("# fail-nth reset: %s\n", strerror(errno));
	return fired;
}

/* Sweep targets slab allocations only, or page allocations only. */
static void mode_slab(void)
{
	attr(FS, "ignore-gfp-wait", "N");
	attr(FP, "ignore-gfp-wait", "Y");
	attr(FP, "min-order", "11");	/* no page allocation qualifies */
}

static void mode_page(void)
{
	attr(FS, "ignore-gfp-wait", "Y");	/* GFP_KERNEL slab ignored */
	attr(FP, "ignore-gfp-wait", "N");
	attr(FP, "ignore-gfp-highmem", "N");
	attr(FP, "min-order", "0");
}

/* ---- context counts from debugfs ------------------------------------- */

struct counts {
	long long streams, events, regions, queued, pinned, device;
};

/* The line of /sys/kernel/debug/accelstream/contexts for our pid. */
static int ctx_counts(struct counts *c)
{
	char buf[8192], *line;
	int pid = getpid();

	if (read_file("/sys/kernel/debug/accelstream/contexts", buf, sizeof(buf)) <= 0)
		return -1;
	for (line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
		int id, p;

		if (sscanf(line, "%d %d %lld %lld %lld %lld %lld %lld", &id, &p,
			   &c->streams, &c->events, &c->regions, &c->queued,
			   &c->pinned, &c->device) == 8 && p == pid)
			return 0;
	}
	return -1;
}

/* The descriptors this process has open, or -1. */
static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	int n = 0;

	if (!d)
		return -1;
	while ((de = readdir(d)))
		if (de->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

/* ---- the operations under test ------------------------------------------ */

struct env {
	int fd;
	void *user;		/* prefaulted user memory to register */
	size_t user_len;
	uint32_t stream, ev, uev, host, dev;
	uint64_t host_off;
	uint32_t made;		/* handle created by the op, to undo */
	int xfd;		/* e->ev exported, for the import op */
	int made_fd;		/* descriptor created by the op, to undo */
	void *map;
	void *pending[64];	/* munmap failed under injection: retry */
	int npending, lost_maps;
};

/* Each returns 0 or -errno; on success it records what to undo. */
typedef int (*op_fn)(struct env *e);

static int op_open(struct env *e)
{
	int fd = as_open_dev();

	if (fd >= 0)
		close(fd);
	return fd < 0 ? fd : 0;
}

static int op_register(struct env *e)
{
	return as_register(e->fd, e->user, e->user_len, 0, &e->made);
}

static int op_register_ro(struct env *e)
{
	return as_register(e->fd, (char *)e->user + 100, e->user_len - 200,
			   ACCEL_MEM_READONLY, &e->made);
}

static int op_alloc_host(struct env *e)
{
	return as_alloc(e->fd, 16 * PG, ACCEL_MEM_HOST, &e->made, NULL);
}

static int op_alloc_dev(struct env *e)
{
	return as_alloc(e->fd, 16 * PG, ACCEL_MEM_DEVICE, &e->made, NULL);
}

/* Device memory on the last device (its own account), when there are two. */
static int op_alloc_dev_peer(struct env *e)
{
	struct accel_info info;
	struct accel_device_select sel = { 0 };
	int r;

	memset(&info, 0, sizeof(info));
	r = as_ioctl(e->fd, ACCEL_IOC_GET_INFO, &info);
	if (r)
		return r;
	if (info.devices > 1)
		sel.device = info.devices - 1;
	r = as_ioctl(e->fd, ACCEL_IOC_SET_DEVICE, &sel);
	if (!r)
		r = as_alloc(e->fd, 16 * PG, ACCEL_MEM_DEVICE, &e->made, NULL);
	sel.device = 0;
	as_ioctl(e->fd, ACCEL_IOC_SET_DEVICE, &sel);
	return r;
}

static int op_stream(struct env *e)
{
	return as_stream(e->fd, &e->made);
}

static int op_event(struct env *e)
{
	return as_event(e->fd, ACCEL_EVENT_TIMING, &e->made);
}

static int op_uevent(struct env *e)
{
	return as_event(e->fd, ACCEL_EVENT_USER, &e->made);
}

static int op_submit(struct env *e)
{
	struct accel_desc d[6];
	uint64_t seq;
	int r;

	d[0] = as_copy_desc(e->host, 0, e->dev, 0, 8 * PG);
	d[1] = as_copy_desc(e->dev, 8 * PG, e->host, 0, 8 * PG);
	d[2] = as_ev_desc(ACCEL_OP_EVENT_RECORD, e->ev, 0);
	d[3] = as_ev_desc(ACCEL_OP_STREAM_WAIT, e->ev, 0);
	d[4] = as_ev_desc(ACCEL_OP_HOST_SIGNAL, e->uev, 1);
	d[5] = as_ev_desc(ACCEL_OP_NOP, 0, 0);
	r = as_submit(e->fd, e->stream, d, 6, &seq);
	return r;
}

static int op_record(struct env *e)
{
	struct accel_event_record rec = { .event = e->ev, .stream = e->stream };

	return as_ioctl(e->fd, ACCEL_IOC_EVENT_RECORD, &rec);
}

static int op_wait(struct env *e)
{
	struct accel_wait_entry ent[2] = {
		{ .event = e->ev }, { .event = e->uev, .value = 0 },
	};
	struct accel_wait w = {
		.entries = (uintptr_t)ent, .count = 2, .flags = ACCEL_WAIT_ALL,
		.timeout_ns = deadline_ms(1000),
	};

	return as_ioctl(e->fd, ACCEL_IOC_WAIT, &w);
}

static int op_export(struct env *e)
{
	struct accel_event_export x = { .event = e->ev };
	int r = as_ioctl(e->fd, ACCEL_IOC_EVENT_EXPORT, &x);

	if (!r)
		e->made_fd = x.fd;
	return r;
}

static int op_import(struct env *e)
{
	struct accel_event_import im = { .fd = e->xfd };
	int r = as_ioctl(e->fd, ACCEL_IOC_EVENT_IMPORT, &im);

	if (!r)
		e->made = im.handle;
	return r;
}

static int op_mmap(struct env *e)
{
	void *p = mmap(NULL, 16 * PG, PROT_READ | PROT_WRITE, MAP_SHARED,
		       e->fd, (off_t)e->host_off);

	if (p == MAP_FAILED)
		return -errno;
	e->map = p;
	return 0;
}

static void undo(struct env *e, int which)
{
	switch (which) {
	case 1: case 2: case 3: case 4:
		as_release_mem(e->fd, e->made, 0);
		break;
	case 5:
		as_stream_destroy(e->fd, e->made);
		break;
	case 6: case 7:
		as_event_destroy(e->fd, e->made);
		break;
	case 8: case 9:
		as_sync(e->fd, e->stream, 0, deadline_ms(5000));
		break;
	case 12:
		as_release_mem(e->fd, e->made, 0);
		break;
	case 13:
		close(e->made_fd);
		e->made_fd = -1;
		break;
	case 14:
		as_event_destroy(e->fd, e->made);
		break;
	case 11:
		/* munmap itself allocates: retry once the faults are off */
		while (munmap(e->map, 16 * PG)) {
			if (!e->lost_maps++)
				printf("# munmap of the host mapping failed: %s\n",
				       strerror(errno));
			if (errno != ENOMEM)
				break;
			if (e->npending < 64)
				e->pending[e->npending++] = e->map;
			break;
		}
		break;
	}
	e->made = 0;
	e->map = NULL;
}

static const struct {
	const char *name;
	op_fn fn;
	bool page_sweep;	/* also sweep fail_page_alloc */
	/*
	 * Warm, it may allocate nothing: the driver reuses the stream's
	 * last retired batch for a one-descriptor submission, so every call
	 * of the sweep must then succeed instead.
	 */
	bool may_not_allocate;
	/* Has no fallback: some injected fault must come back as -ENOMEM. */
	bool must_enomem;
} ops[] = {
	{ "open", op_open, false, false, false },
	{ "mem_register", op_register, false, false, false },
	{ "mem_register_ro", op_register_ro, false, false, false },
	{ "mem_alloc_host", op_alloc_host, true, false, false },
	{ "mem_alloc_device", op_alloc_dev, true, false, false },
	{ "stream_create", op_stream, false, false, false },
	{ "event_create", op_event, false, false, false },
	{ "event_create_user", op_uevent, false, false, false },
	{ "submit", op_submit, false, false, false },
	{ "event_record", op_record, false, true, false },
	{ "wait", op_wait, false, false, false },
	{ "mmap_host", op_mmap, false, false, false },
	{ "mem_alloc_device_peer", op_alloc_dev_peer, true, false, false },
	{ "event_export", op_export, false, false, true },
	{ "event_import", op_import, false, false, true },
};
#define NOPS (int)(sizeof(ops) / sizeof(ops[0]))

static int env_setup(struct env *e)
{
	struct accel_event_export x = { 0 };

	memset(e, 0, sizeof(*e));
	e->xfd = e->made_fd = -1;
	e->fd = as_open_dev();
	if (e->fd < 0)
		return e->fd;
	e->user_len = 64 * PG;
	e->user = map_anon(e->user_len);
	if (!e->user)
		return -ENOMEM;
	if (as_stream(e->fd, &e->stream) || as_event(e->fd, ACCEL_EVENT_TIMING, &e->ev) ||
	    as_event(e->fd, ACCEL_EVENT_USER, &e->uev) ||
	    as_alloc(e->fd, 16 * PG, ACCEL_MEM_HOST, &e->host, &e->host_off) ||
	    as_alloc(e->fd, 16 * PG, ACCEL_MEM_DEVICE, &e->dev, NULL) ||
	    as_signal(e->fd, e->uev, 1))
		return -EIO;
	x.event = e->ev;
	if (as_ioctl(e->fd, ACCEL_IOC_EVENT_EXPORT, &x))
		return -EIO;
	e->xfd = x.fd;
	return 0;
}

static void env_teardown(struct env *e)
{
	while (e->npending)
		if (munmap(e->pending[--e->npending], 16 * PG))
			printf("# munmap retry failed: %s\n", strerror(errno));
	if (e->xfd >= 0)
		close(e->xfd);
	if (e->fd >= 0)
		close(e->fd);
	if (e->user)
		munmap(e->user, e->user_len);
	e->fd = e->xfd = -1;
	e->user = NULL;
}

/*
 * Sweep fail-nth over op @i. Returns the number of injected faults taken;
 * *bad counts calls that broke a rule.
 */
static int sweep(int i, bool page, int *bad, int *enomem, int *passed)
{
	struct env e;
	struct counts before, after;
	unsigned int n;
	int taken = 0, r, warm, fds;

	*bad = *enomem = *passed = 0;
	if (env_setup(&e)) {
		printf("# %s: setup failed\n", ops[i].name);
		env_teardown(&e);
		(*bad)++;
		return 0;
	}
	/* Warm the slab caches the op uses, so refills are rare. */
	for (warm = 0; warm < 4; warm++)
		if (!ops[i].fn(&e))
			undo(&e, i);
	for (n = 1; n <= MAX_NTH; n++) {
		bool fired, have = !ctx_counts(&before);

		fds = count_fds();
		nth_arm(n);
		r = ops[i].fn(&e);
		fired = nth_disarm();
		if (fired)
			taken++;
		if (r == -ENOMEM)
			(*enomem)++;
		else if (!r)
			(*passed)++;
		if (r && r != -ENOMEM) {
			(*bad)++;
			printf("# %s: fail-nth %u (%s): returned %d (%s), not -ENOMEM\n",
			       ops[i].name, n, page ? "page" : "slab", r, strerror(-r));
		}
		if (r && !fired) {
			(*bad)++;
			printf("# %s: fail-nth %u: failed %d without a fault\n",
			       ops[i].name, n, r);
		}
		if (!r)
			undo(&e, i);
		if (i == 8 || i == 9)	/* let queued work retire */
			as_sync(e.fd, e.stream, 0, deadline_ms(5000));
		if (have && !ctx_counts(&after) &&
		    memcmp(&before, &after, sizeof(before))) {
			(*bad)++;
			printf("# %s: fail-nth %u: context counts changed: streams %lld->%lld "
			       "events %lld->%lld regions %lld->%lld queued %lld->%lld "
			       "pinned %lld->%lld device %lld->%lld\n", ops[i].name, n,
			       before.streams, after.streams, before.events, after.events,
			       before.regions, after.regions, before.queued, after.queued,
			       before.pinned, after.pinned, before.device, after.device);
		}
		if (fds != count_fds()) {
			(*bad)++;
			printf("# %s: fail-nth %u: open descriptors %d -> %d\n",
			       ops[i].name, n, fds, count_fds());
		}
		/* the same call without a fault works */
		r = ops[i].fn(&e);
		if (r) {
			(*bad)++;
			printf("# %s: after fail-nth %u the plain call failed: %d\n",
			       ops[i].name, n, r);
		} else {
			undo(&e, i);
		}
		if (!fired)
			break;		/* fewer than n allocations: done */
	}
	env_teardown(&e);
	return taken;
}

/*
 * fail_function on the driver's own error-injectable helpers: the pin, the
 * RLIMIT_MEMLOCK charge and the handle publication return the injected
 * errno; the ioctl must return the documented one and unwind completely.
 *
 * Armed for one call (times=1) without the task filter: on x86 the
 * kprobe runs from the int3 handler, which counts as NMI context, so a
 * task filter never matches. Nothing else in the VM calls these helpers.
 */
#define FF	"/sys/kernel/debug/fail_function"

static const struct {
	const char *fn;
	int retval;		/* injected; also what the ioctl must return */
	int op;			/* index into ops[] */
} ff_cases[] = {
	{ "as_mem_pin", -EFAULT, 1 },
	{ "as_mem_pin", -ENOMEM, 2 },
	{ "as_mem_charge", -ENOMEM, 1 },
	{ "as_mem_charge", -ENOMEM, 3 },
	{ "as_handle_reserve", -ENOMEM, 1 },
	{ "as_handle_reserve", -ENOMEM, 4 },
	{ "as_handle_reserve", -ENOSPC, 5 },
	{ "as_handle_reserve", -ENOMEM, 6 },
	{ "as_handle_reserve", -ENOMEM, 14 },
};
#define NFF (int)(sizeof(ff_cases) / sizeof(ff_cases[0]))

static int ff_case(int c, char *why, size_t len)
{
	char path[160], val[32];
	struct counts before, after;
	struct env e;
	int r, i = ff_cases[c].op, bad = 0;

	if (env_setup(&e)) {
		env_teardown(&e);
		snprintf(why, len, "setup failed");
		return -1;
	}
	if (ctx_counts(&before)) {
		env_teardown(&e);
		snprintf(why, len, "no context counts");
		return -1;
	}
	attr(FF, "inject", ff_cases[c].fn);
	snprintf(path, sizeof(path), FF "/%s", ff_cases[c].fn);
	/* The attribute is a u64: a negative errno in two's complement. */
	snprintf(val, sizeof(val), "%llu",
		 (unsigned long long)(long long)ff_cases[c].retval);
	attr(path, "retval", val);
	attr(FF, "task-filter", "N");
	attr(FF, "verbose", "0");
	attr(FF, "probability", "100");
	attr(FF, "interval", "1");
	attr(FF, "times", "1");
	r = ops[i].fn(&e);
	attr(FF, "times", "0");
	attr(FF, "inject", "");
	if (r != ff_cases[c].retval) {
		snprintf(why, len, "%s returned %d, not %d", ops[i].name, r,
			 ff_cases[c].retval);
		bad++;
		if (!r)
			undo(&e, i);
	}
	if (!ctx_counts(&after) && memcmp(&before, &after, sizeof(before))) {
		snprintf(why, len, "context counts changed (regions %lld->%lld, pinned %lld->%lld)",
			 before.regions, after.regions, before.pinned, after.pinned);
		bad++;
	}
	r = ops[i].fn(&e);
	if (r) {
		snprintf(why, len, "the plain %s then failed: %d", ops[i].name, r);
		bad++;
	} else {
		undo(&e, i);
	}
	env_teardown(&e);
	return bad ? -1 : 0;
}

/* The classic knobs: task filter, make-it-fail, probability, times. */
static int random_pass(int first, int last, int *bad, long *calls)
{
	struct env e;
	int k, r, taken, mif;
	char b[32] = "";

	*bad = 0;
	*calls = 0;
	if (env_setup(&e)) {
		env_teardown(&e);
		(*bad)++;
		return 0;
	}
	mode_slab();
	attr(FS, "task-filter", "Y");
	attr(FS, "probability", "25");
	attr(FS, "interval", "1");
	attr(FS, "space", "0");
	attr(FS, "times", "100");
	mif = open("/proc/thread-self/make-it-fail", O_WRONLY | O_CLOEXEC);
	if (mif < 0 || pwrite(mif, "1", 1, 0) != 1)
		(*bad)++;
	for (k = 0; k < 2000; k++) {
		int which = first + k % (last - first + 1);

		r = ops[which].fn(&e);
		(*calls)++;
		if (r && r != -ENOMEM) {
			(*bad)++;
			printf("# random: %s returned %d\n", ops[which].name, r);
		}
		if (!r)
			undo(&e, which);
		if (which == 8 || which == 9)
			as_sync(e.fd, e.stream, 0, deadline_ms(5000));
	}
	if (mif >= 0 && pwrite(mif, "0", 1, 0) != 1)
		(*bad)++;
	if (mif >= 0)
		close(mif);
	read_file(FS "/times", b, sizeof(b));
	taken = 100 - atoi(b);
	attr(FS, "probability", "0");
	attr(FS, "times", "1");
	attr(FS, "task-filter", "N");
	env_teardown(&e);
	return taken;
}

/*
 * Handle reservation (xa_insert) only allocates when a handle crosses into
 * a new xarray node, and it retries a failed GFP_NOWAIT allocation with
 * GFP_KERNEL: one failure never reaches the driver's unwinding after
 * as_handle_reserve(). So: move the context's next handle to the last slot
 * of a node, then fail two consecutive allocations (times=2) after
 * skipping a swept number of bytes (space), with the task filter.
 * Returns faults taken; *bad counts rule violations; *enomem the calls
 * that failed.
 */
static int xa_pass(int *bad, int *enomem, int *calls)
{
	static const int which[] = { 1, 3, 4, 5, 6 };
	struct counts before, after;
	struct env e;
	uint32_t h = 0;
	int k, space, taken = 0, r, mif = -1;
	char b[32];

	*bad = *enomem = *calls = 0;
	if (env_setup(&e)) {
		env_teardown(&e);
		(*bad)++;
		return 0;
	}
	/*
	 * Opened before any fault is armed: once make-it-fail is set, an
	 * open() of our own would be the next allocation to fail.
	 */
	mif = open("/proc/thread-self/make-it-fail", O_WRONLY | O_CLOEXEC);
	if (mif < 0) {
		(*bad)++;
		goto out;
	}
	mode_slab();
	attr(FS, "task-filter", "Y");
	attr(FS, "probability", "100");
	attr(FS, "interval", "1");
	for (space = 1; space <= 2049; space += 128) {
		for (k = 0; k < (int)(sizeof(which) / sizeof(which[0])); k++) {
			/* burn handles up to the last slot of a node */
			do {
				if (as_event(e.fd, 0, &h)) {
					(*bad)++;
					goto out;
				}
			} while ((h + 1) % 64);
			ctx_counts(&before);
			snprintf(b, sizeof(b), "%d", space);
			attr(FS, "space", b);
			attr(FS, "times", "2");
			if (pwrite(mif, "1", 1, 0) != 1) {
				(*bad)++;
				printf("# xa: make-it-fail=1: %s\n", strerror(errno));
			}
			r = ops[which[k]].fn(&e);
			if (pwrite(mif, "0", 1, 0) != 1) {
				(*bad)++;
				printf("# xa: make-it-fail=0: %s\n", strerror(errno));
			}
			/* immune again (task filter): plain file I/O is safe */
			read_file(FS "/times", b, sizeof(b));
			taken += 2 - atoi(b);
			attr(FS, "times", "0");
			(*calls)++;
			if (r == -ENOMEM)
				(*enomem)++;
			else if (r) {
				(*bad)++;
				printf("# xa: %s space %d: %d\n", ops[which[k]].name, space, r);
			}
			if (!r)
				undo(&e, which[k]);
			if (!ctx_counts(&after) && r && memcmp(&before, &after, sizeof(before))) {
				(*bad)++;
				printf("# xa: %s space %d: counts changed (regions %lld->%lld "
				       "streams %lld->%lld events %lld->%lld pinned %lld->%lld)\n",
				       ops[which[k]].name, space, before.regions, after.regions,
				       before.streams, after.streams, before.events, after.events,
				       before.pinned, after.pinned);
			}
			if (ops[which[k]].fn(&e)) {
				(*bad)++;
				printf("# xa: %s: plain call failed after the fault\n",
				       ops[which[k]].name);
			} else {
				undo(&e, which[k]);
			}
		}
	}
out:
	if (mif >= 0)
		close(mif);
	attr(FS, "space", "0");
	attr(FS, "times", "1");
	attr(FS, "probability", "0");
	attr(FS, "task-filter", "N");
	env_teardown(&e);
	{
		char maps[65536], *l;

		if (read_file("/proc/self/maps", maps, sizeof(maps)) > 0)
			for (l = strtok(maps, "\n"); l; l = strtok(NULL, "\n"))
				if (strstr(l, "accelstream"))
					printf("# random: still mapped: %s\n", l);
	}
	return taken;
}

int main(void)
{
	int i, bad, enomem, passed, taken, plan;
	char name[128];
	long calls;

	plan = 2 * NOPS + 12 + NFF + 2;
	tap_header(plan);
	nth_fd = open("/proc/thread-self/fail-nth", O_RDWR | O_CLOEXEC);
	if (nth_fd < 0 || access(FS "/probability", W_OK) ||
	    access(FP "/probability", W_OK)) {
		printf("# no fail-nth or failslab/fail_page_alloc debugfs: not a fault-injection kernel\n");
		for (i = 0; i < plan; i++)
			tap_skip_result("fault_inject", "needs CONFIG_FAILSLAB, CONFIG_FAIL_PAGE_ALLOC, debugfs");
		tap_totals();
		return 4;
	}
	/* Quiet: no dmesg lines, no stack dumps. */
	attr(FS, "verbose", "0");
	attr(FP, "verbose", "0");
	attr(FS, "probability", "0");
	attr(FP, "probability", "0");
	attr(FS, "task-filter", "N");
	attr(FP, "task-filter", "N");
	{
		struct as_summary s0;

		if (summary_read(&s0) || !summary_zero(&s0))
			printf("# summary not zero at start\n");
	}

	for (i = 0; i < NOPS; i++) {
		mode_slab();
		taken = sweep(i, false, &bad, &enomem, &passed);
		total_taken += taken;
		printf("# fault: %s slab: taken=%d enomem=%d succeeded=%d\n",
		       ops[i].name, taken, enomem, passed);
		snprintf(name, sizeof(name), "failslab %s", ops[i].name);
		tap_result(!bad && (taken > 0 ||
				    (ops[i].may_not_allocate && passed > 0)) &&
			   (!ops[i].must_enomem || enomem > 0),
			   name, "%d faults taken, %d -ENOMEM, %d problems%s",
			   taken, enomem, bad,
			   taken ? "" : " (allocates nothing: the kept batch)");
		if (!ops[i].page_sweep) {
			snprintf(name, sizeof(name), "fail_page_alloc %s", ops[i].name);
			tap_skip_result(name, "no page allocation of its own");
			continue;
		}
		mode_page();
		taken = sweep(i, true, &bad, &enomem, &passed);
		total_taken += taken;
		printf("# fault: %s page: taken=%d enomem=%d succeeded=%d\n",
		       ops[i].name, taken, enomem, passed);
		snprintf(name, sizeof(name), "fail_page_alloc %s", ops[i].name);
		tap_result(!bad && taken >= 16, name,
			   "%d faults taken, %d -ENOMEM, %d problems", taken, enomem, bad);
	}
	mode_slab();
	attr(FP, "min-order", "1");
	attr(FP, "ignore-gfp-wait", "Y");
	attr(FP, "ignore-gfp-highmem", "Y");
	attr(FS, "ignore-gfp-wait", "Y");
	check_leftovers("after the fail-nth sweeps", 5000);

	{
		int xbad, xenomem, xcalls;

		taken = xa_pass(&xbad, &xenomem, &xcalls);
		total_taken += taken;
		printf("# fault: xarray double-fault pass: calls=%d taken=%d enomem=%d\n",
		       xcalls, taken, xenomem);
		tap_result(!xbad && xenomem > 0, "failslab times=2 at handle-node boundaries",
			   "%d calls, %d faults taken, %d -ENOMEM, %d problems",
			   xcalls, taken, xenomem, xbad);
		check_leftovers("after the xarray pass", 5000);
	}
	/* the ioctls, then mmap(2) alone */
	taken = random_pass(1, 10, &bad, &calls);
	total_taken += taken;
	printf("# fault: random pass (ioctls): calls=%ld taken=%d\n", calls, taken);
	tap_result(!bad && taken > 0, "failslab probability/times/task-filter pass, ioctls",
		   "%ld calls, %d faults taken, %d problems", calls, taken, bad);
	check_leftovers("after the random ioctl pass", 5000);
	taken = random_pass(11, 11, &bad, &calls);
	total_taken += taken;
	printf("# fault: random pass (mmap): calls=%ld taken=%d\n", calls, taken);
	tap_result(!bad && taken > 0, "failslab probability/times/task-filter pass, mmap",
		   "%ld calls, %d faults taken, %d problems", calls, taken, bad);
	attr(FS, "ignore-gfp-wait", "Y");
	check_leftovers("after the random mmap pass", 5000);
	if (access(FF "/inject", W_OK)) {
		for (i = 0; i < NFF + 2; i++)
			tap_skip_result("fail_function", "needs CONFIG_FAIL_FUNCTION");
	} else {
		for (i = 0; i < NFF; i++) {
			char why[160] = "";
			int ok = !ff_case(i, why, sizeof(why));

			if (ok)
				total_taken++;
			snprintf(name, sizeof(name), "fail_function %s=%d: %s gives %s",
				 ff_cases[i].fn, ff_cases[i].retval,
				 ops[ff_cases[i].op].name, strerror(-ff_cases[i].retval));
			tap_result(ok, name, "%s", why);
		}
		check_leftovers("after the fail_function pass", 5000);
	}
	printf("# fault: injected faults taken=%ld\n", total_taken);
	tap_result(total_taken > 0, "faults were injected", "%ld", total_taken);
	return tap_totals();
}
