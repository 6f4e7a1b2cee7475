// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * fault_stress: accelstream under the faults a process can cause itself.
 *
 *  sigkill_mid_copy     a child with big copies queued and running is
 *                       SIGKILLed; again and again, at different moments
 *  sigkill_mid_wait     a child blocked in WAIT and STREAM_SYNC is SIGKILLed
 *  close_with_work      close() with copies running and more queued behind
 *                       a gate: the destination holds only whole, correct
 *                       bytes, and nothing writes to it once close returned
 *  munmap_queued_copy   both user ranges of a queued copy chain are unmapped
 *                       before it runs: the pinned pages carry the data
 *  memlock_mid_range    without CAP_IPC_LOCK, RLIMIT_MEMLOCK runs out part
 *                       way through a series of registrations and host
 *                       allocations: -ENOMEM, VmPin exact, nothing pinned
 *  fd_fork_scm_rights   the file reaches another process by fork and by
 *                       SCM_RIGHTS: -EACCES there; the last close happens
 *                       in that other process, with work queued
 *  threads64            64 threads over 8 streams, copies chained across
 *                       streams by events, every result checksummed
 * After each: the debugfs summary back to zero, FOLL_PIN counters equal.
 * Works on any kernel (stock, rt, debug).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/capability.h>

#include "fault_util.h"
#include "../../selftests/accelstream/fd_pass.h"

#define MB (1024ul * 1024ul)

static void fail_child(const char *msg)
{
	printf("#   child: %s (errno %d)\n", msg, errno);
	fflush(stdout);
	_exit(1);
}

static int wait_child(pid_t pid)
{
	int st;

	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	return st;
}

/* ---- SIGKILL with copies in flight ------------------------------------- */

static void copy_child(int ready_fd, bool wait_instead)
{
	size_t len = 4 * MB;
	char *a = map_anon(len), *b = map_anon(len);
	uint32_t ra, rb, dev, host, s1, s2, uev;
	struct accel_desc d[64];
	int fd = as_open_dev(), i;

	if (fd < 0 || !a || !b)
		fail_child("setup");
	fill(a, len, 1);
	if (as_register(fd, a, len, 0, &ra) || as_register(fd, b, len, 0, &rb) ||
	    as_alloc(fd, len, ACCEL_MEM_DEVICE, &dev, NULL) ||
	    as_alloc(fd, len, ACCEL_MEM_HOST, &host, NULL) ||
	    as_stream(fd, &s1) || as_stream(fd, &s2) ||
	    as_event(fd, ACCEL_EVENT_USER, &uev))
		fail_child("objects");
	for (i = 0; i < 64; i++) {
		static const int k[4][2] = { { 0, 1 }, { 1, 2 }, { 2, 3 }, { 3, 0 } };
		uint32_t h[4] = { ra, dev, host, rb };

		d[i] = as_copy_desc(h[k[i % 4][1]], 0, h[k[i % 4][0]], 0, len);
	}
	if (wait_instead)
		d[0] = as_ev_desc(ACCEL_OP_HOST_WAIT, uev, 1);
	for (i = 0; i < 4; i++) {
		if (as_submit(fd, s1, d, 64, NULL) || as_submit(fd, s2, d + 32, 32, NULL))
			fail_child("submit");
	}
	if (write(ready_fd, "r", 1) != 1)
		fail_child("ready");
	if (wait_instead) {
		/* a second thread would be nicer; a blocked call is enough */
		as_wait1(fd, uev, 1, ACCEL_TIMEOUT_INFINITE);
		fail_child("wait returned");
	}
	for (;;)
		as_sync(fd, s1, 0, ACCEL_TIMEOUT_INFINITE);
}

static void test_sigkill(bool mid_wait)
{
	const char *name = mid_wait ? "sigkill_mid_wait" : "sigkill_mid_copy";
	int round, bad = 0, rounds = mid_wait ? 4 : 8;

	for (round = 0; round < rounds; round++) {
		int p[2], st;
		char c;
		pid_t pid;

		if (pipe(p))
			return;
		pid = fork();
		if (pid == 0) {
			close(p[0]);
			copy_child(p[1], mid_wait);
		}
		close(p[1]);
		if (read(p[0], &c, 1) != 1) {
			bad++;
			printf("#   %s: child died before it was ready\n", name);
		}
		close(p[0]);
		sleep_ms(round * 3);	/* 0 ms: before the first copy ends */
		kill(pid, SIGKILL);
		st = wait_child(pid);
		if (!WIFSIGNALED(st) || WTERMSIG(st) != SIGKILL) {
			bad++;
			printf("#   %s: child status 0x%x\n", name, st);
		}
	}
	tap_result(!bad, name, "%d rounds", rounds);
	check_leftovers(name, 10000);
}

/* ---- close with work running and queued -------------------------------- */

static void test_close_with_work(void)
{
	size_t len = 8 * MB;
	char *src = map_anon(len), *dst = map_anon(len), *snap;
	uint32_t rs, rd, s, uev;
	struct accel_desc d[3];
	long long bad_at = -1;
	size_t i;
	int fd = as_open_dev(), ok = 1;

	snap = malloc(len);
	if (fd < 0 || !src || !dst || !snap) {
		tap_result(0, "close_with_work", "setup");
		return;
	}
	fill(src, len, 7);
	memset(dst, 0xee, len);
	if (as_register(fd, src, len, ACCEL_MEM_READONLY, &rs) ||
	    as_register(fd, dst, len, 0, &rd) || as_stream(fd, &s) ||
	    as_event(fd, ACCEL_EVENT_USER, &uev)) {
		tap_result(0, "close_with_work", "objects");
		return;
	}
	d[0] = as_copy_desc(rd, 0, rs, 0, len / 2);
	d[1] = as_ev_desc(ACCEL_OP_HOST_WAIT, uev, 1);	/* never signalled */
	d[2] = as_copy_desc(rd, len / 2, rs, len / 2, len / 2);
	if (as_submit(fd, s, d, 3, NULL)) {
		tap_result(0, "close_with_work", "submit");
		return;
	}
	close(fd);	/* the first copy may be running right now */
	memcpy(snap, dst, len);
	/* The first half is either all old or all copied; the second is old. */
	for (i = 0; i < len / 2 && bad_at < 0; i++)
		if ((uint8_t)dst[i] != 0xee && (uint8_t)dst[i] != pat(7, i))
			bad_at = (long long)i;
	for (i = len / 2; i < len && bad_at < 0; i++)
		if ((uint8_t)dst[i] != 0xee)
			bad_at = (long long)i;
	if (bad_at >= 0)
		ok = 0;
	sleep_ms(100);
	if (memcmp(snap, dst, len)) {
		ok = 0;
		printf("#   close_with_work: destination changed after close returned\n");
	}
	tap_result(ok, "close_with_work", bad_at >= 0 ?
		   "wrong byte at offset %lld" : "destination consistent", bad_at);
	munmap(src, len);
	munmap(dst, len);
	free(snap);
	check_leftovers("close_with_work", 10000);
}

/* ---- munmap under a queued copy -------------------------------------- */

static void test_munmap_queued(void)
{
	size_t len = 2 * MB;
	char *a = map_anon(len), *b = map_anon(len), *c;
	uint32_t ra, rb, host, s, uev;
	uint64_t off;
	struct accel_desc d[3];
	long long bad = -2;
	int fd = as_open_dev();

	if (fd < 0 || !a || !b) {
		tap_result(0, "munmap_queued_copy", "setup");
		return;
	}
	fill(a, len, 3);
	if (as_register(fd, a, len, ACCEL_MEM_READONLY, &ra) ||
	    as_register(fd, b, len, 0, &rb) ||
	    as_alloc(fd, len, ACCEL_MEM_HOST, &host, &off) ||
	    as_stream(fd, &s) || as_event(fd, ACCEL_EVENT_USER, &uev)) {
		tap_result(0, "munmap_queued_copy", "objects");
		return;
	}
	c = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)off);
	d[0] = as_ev_desc(ACCEL_OP_HOST_WAIT, uev, 1);
	d[1] = as_copy_desc(rb, 0, ra, 0, len);
	d[2] = as_copy_desc(host, 0, rb, 0, len);
	if (c == MAP_FAILED || as_submit(fd, s, d, 3, NULL)) {
		tap_result(0, "munmap_queued_copy", "submit/mmap");
		return;
	}
	/* both user ranges go away; the regions' handles go too (deferred) */
	munmap(a, len);
	munmap(b, len);
	as_release_mem(fd, ra, ACCEL_MEM_RELEASE_DEFERRED);
	as_release_mem(fd, rb, ACCEL_MEM_RELEASE_DEFERRED);
	/* a new mapping may well reuse the address: it must not be touched */
	a = map_anon(len);
	memset(a, 0x5a, len);
	as_signal(fd, uev, 1);
	if (!as_sync(fd, s, 0, deadline_ms(20000)))
		bad = check_pat(c, len, 3, 0);
	tap_result(bad == -1, "munmap_queued_copy", bad == -2 ? "sync failed" :
		   bad >= 0 ? "wrong byte at %lld" : "data intact", bad);
	tap_result(check_pat(a, 0, 0, 0) == -1 && (uint8_t)a[0] == 0x5a &&
		   (uint8_t)a[len - 1] == 0x5a, "munmap_queued_copy: new mapping untouched",
		   NULL);
	munmap(a, len);
	munmap(c, len);
	close(fd);
	check_leftovers("munmap_queued_copy", 10000);
}

/* ---- RLIMIT_MEMLOCK without CAP_IPC_LOCK ------------------------------ */

/* Pinned pages show as VmPin (mm->pinned_vm), as io_uring's buffers do. */
static long vmlck_kb(void)
{
	char buf[4096], *p;

	if (read_file("/proc/self/status", buf, sizeof(buf)) <= 0)
		return -1;
	p = strstr(buf, "VmPin:");
	return p ? strtol(p + 6, NULL, 10) : -1;
}

static int drop_ipc_lock(void)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];

	if (syscall(SYS_capget, &h, d))
		return -1;
	d[CAP_IPC_LOCK / 32].effective &= ~(1u << (CAP_IPC_LOCK % 32));
	d[CAP_IPC_LOCK / 32].permitted &= ~(1u << (CAP_IPC_LOCK % 32));
	d[CAP_IPC_LOCK / 32].inheritable &= ~(1u << (CAP_IPC_LOCK % 32));
	return (int)syscall(SYS_capset, &h, d);
}

static void memlock_child(void)
{
	struct rlimit rl = { 256 * PG, 256 * PG };	/* 1 MiB */
	size_t len = 512 * PG;
	char *buf = map_anon(len);
	uint32_t h[8], hh, s;
	int fd, r;
	long lck;

	if (!buf || drop_ipc_lock() || setrlimit(RLIMIT_MEMLOCK, &rl))
		fail_child("caps/rlimit");
	fd = as_open_dev();
	if (fd < 0)
		fail_child("open");
	/* a range over the limit as a whole */
	r = as_register(fd, buf, len, 0, &hh);
	if (r != -ENOMEM)
		fail_child("2 MiB register did not fail with ENOMEM");
	if (vmlck_kb() != 0)
		fail_child("VmPin not 0 after the failed register");
	/* 100 + 100 pages fit; the third 100 runs over in its middle */
	if (as_register(fd, buf, 100 * PG, 0, &h[0]) ||
	    as_register(fd, buf + 100 * PG, 100 * PG, 0, &h[1]))
		fail_child("registers under the limit");
	r = as_register(fd, buf + 200 * PG, 100 * PG, 0, &h[2]);
	if (r != -ENOMEM)
		fail_child("register across the limit did not fail with ENOMEM");
	lck = vmlck_kb();
	if (lck != 200 * 4)
		fail_child("VmPin not 800 kB");
	/* host memory is charged the same way */
	r = as_alloc(fd, 100 * PG, ACCEL_MEM_HOST, &hh, NULL);
	if (r != -ENOMEM)
		fail_child("host alloc across the limit did not fail with ENOMEM");
	if (as_alloc(fd, 56 * PG, ACCEL_MEM_HOST, &h[3], NULL))
		fail_child("host alloc up to the limit");
	if (vmlck_kb() != 256 * 4)
		fail_child("VmPin not at the limit");
	/* device memory is not */
	if (as_alloc(fd, 64 * PG, ACCEL_MEM_DEVICE, &h[4], NULL))
		fail_child("device alloc");
	/* a copy through all of it still works */
	{
		struct accel_desc d = as_copy_desc(h[1], 0, h[0], 0, 100 * PG);

		fill(buf, 100 * PG, 9);
		if (as_stream(fd, &s) || as_submit(fd, s, &d, 1, NULL) ||
		    as_sync(fd, s, 0, deadline_ms(20000)) ||
		    check_pat(buf + 100 * PG, 100 * PG, 9, 0) != -1)
			fail_child("copy at the limit");
	}
	/* released: the charge goes, and the limit can be used again */
	if (as_release_mem(fd, h[0], 0) || as_release_mem(fd, h[3], 0))
		fail_child("release");
	if (vmlck_kb() != 100 * 4)
		fail_child("VmPin not back to 400 kB");
	if (as_register(fd, buf + 200 * PG, 150 * PG, 0, &h[2]))
		fail_child("register after release");
	close(fd);
	if (vmlck_kb() != 0)
		fail_child("VmPin not 0 after close");
	_exit(0);
}

static void test_memlock(void)
{
	pid_t pid = fork();
	int st;

	if (pid == 0)
		memlock_child();
	st = wait_child(pid);
	tap_result(WIFEXITED(st) && !WEXITSTATUS(st), "memlock_mid_range",
		   "child status 0x%x", st);
	check_leftovers("memlock_mid_range", 10000);
}

/* ---- the file in another process --------------------------------------- */

static int foreign_checks(int fd)
{
	struct accel_info info;
	struct accel_stream_create sc;
	struct accel_handle h = { .handle = 1 };
	uint64_t v;
	void *p;
	int bad = 0;

	memset(&info, 0, sizeof(info));
	memset(&sc, 0, sizeof(sc));
	if (as_ioctl(fd, ACCEL_IOC_GET_INFO, &info) != -EACCES)
		bad |= 1;
	if (as_ioctl(fd, ACCEL_IOC_STREAM_CREATE, &sc) != -EACCES)
		bad |= 2;
	if (as_ioctl(fd, ACCEL_IOC_STREAM_DESTROY, &h) != -EACCES)
		bad |= 4;
	if (read(fd, &v, 8) != -1 || errno != EACCES)
		bad |= 8;
	p = mmap(NULL, PG, PROT_READ, MAP_SHARED, fd, PG);
	if (p != MAP_FAILED || errno != EACCES)
		bad |= 16;
	return bad;
}

static void test_fd_passing(void)
{
	int sv[2], fd, st, bad;
	size_t len = 4 * MB;
	char *a = map_anon(len);
	uint32_t ra, dev, s, uev;
	struct accel_desc d[3];
	pid_t pid;
	char c;

	/* 1. fork: the child inherits the file and gets EACCES */
	fd = as_open_dev();
	if (fd < 0 || !a) {
		tap_result(0, "fd_fork", "setup");
		return;
	}
	pid = fork();
	if (pid == 0)
		_exit(foreign_checks(fd));
	st = wait_child(pid);
	tap_result(WIFEXITED(st) && !WEXITSTATUS(st), "fd_fork: EACCES in the child",
		   "mask 0x%x", WIFEXITED(st) ? WEXITSTATUS(st) : -1);

	/* 2. SCM_RIGHTS to a process that already existed; it closes last */
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv)) {
		tap_result(0, "fd_scm_rights", "socketpair");
		return;
	}
	close(fd);
	pid = fork();
	if (pid == 0) {
		int rfd;

		close(sv[0]);
		rfd = recv_fd(sv[1]);
		if (rfd < 0)
			_exit(100);
		bad = foreign_checks(rfd);
		if (write(sv[1], "c", 1) != 1)
			_exit(101);
		if (read(sv[1], &c, 1) != 1)	/* the parent closed its fd */
			_exit(102);
		close(rfd);	/* the last reference: release() runs here */
		_exit(bad);
	}
	close(sv[1]);
	fd = as_open_dev();
	fill(a, len, 5);
	if (fd < 0 || as_register(fd, a, len, 0, &ra) ||
	    as_alloc(fd, len, ACCEL_MEM_DEVICE, &dev, NULL) ||
	    as_stream(fd, &s) || as_event(fd, ACCEL_EVENT_USER, &uev)) {
		tap_result(0, "fd_scm_rights", "objects");
		return;
	}
	d[0] = as_copy_desc(dev, 0, ra, 0, len);
	d[1] = as_ev_desc(ACCEL_OP_HOST_WAIT, uev, 1);
	d[2] = as_copy_desc(ra, 0, dev, 0, len);
	as_submit(fd, s, d, 3, NULL);
	send_fd(sv[0], fd);
	if (read(sv[0], &c, 1) != 1)
		printf("#   fd_scm_rights: no answer from the child\n");
	close(fd);		/* the child still holds the file */
	if (write(sv[0], "x", 1) != 1)
		printf("#   fd_scm_rights: cannot wake the child\n");
	st = wait_child(pid);
	close(sv[0]);
	tap_result(WIFEXITED(st) && !WEXITSTATUS(st),
		   "fd_scm_rights: EACCES in the receiver, last close there",
		   "status 0x%x", st);
	munmap(a, len);
	check_leftovers("fd_fork_scm_rights", 10000);
}

/* ---- 64 threads, 8 streams, cross-stream events ----------------------- */

#define NT	64
#define NS	8
#define TLEN	(64 * 1024)

struct tctx {
	int fd;
	uint32_t streams[NS];
	uint32_t dev;		/* device region shared by all: TLEN per thread */
	atomic_int failures;
	atomic_long copies;
};

struct targ {
	struct tctx *c;
	int id;
};

static void *thread_main(void *p)
{
	struct targ *ta = p;
	struct tctx *c = ta->c;
	char *src = malloc(TLEN + 17), *dst = malloc(TLEN + 33);
	uint32_t rs, rd, ev;
	int round, fd = c->fd;
	struct accel_desc d[2];

	if (!src || !dst || as_register(fd, src + 17, TLEN, 0, &rs) ||
	    as_register(fd, dst + 33, TLEN, 0, &rd) ||
	    as_event(fd, 0, &ev)) {
		atomic_fetch_add(&c->failures, 1);
		return NULL;
	}
	for (round = 0; round < 12; round++) {
		uint32_t tag = (uint32_t)(ta->id * 100 + round);
		uint32_t s1 = c->streams[(ta->id + round) % NS];
		uint32_t s2 = c->streams[(ta->id + round + 3) % NS];
		long long bad;

		fill(src + 17, TLEN, tag);
		memset(dst + 33, 0, TLEN);
		/* stream 1: src -> dev slice, record; stream 2: wait, dev -> dst */
		d[0] = as_copy_desc(c->dev, (uint64_t)ta->id * TLEN, rs, 0, TLEN);
		d[1] = as_ev_desc(ACCEL_OP_EVENT_RECORD, ev, 0);
		if (as_submit(fd, s1, d, 2, NULL)) {
			atomic_fetch_add(&c->failures, 1);
			break;
		}
		d[0] = as_ev_desc(ACCEL_OP_STREAM_WAIT, ev, 0);
		d[1] = as_copy_desc(rd, 0, c->dev, (uint64_t)ta->id * TLEN, TLEN);
		if (as_submit(fd, s2, d, 2, NULL) ||
		    as_wait1(fd, ev, 0, deadline_ms(30000)) ||
		    as_sync(fd, s2, 0, deadline_ms(30000))) {
			atomic_fetch_add(&c->failures, 1);
			break;
		}
		bad = check_pat(dst + 33, TLEN, tag, 0);
		if (bad >= 0) {
			atomic_fetch_add(&c->failures, 1);
			printf("#   threads64: thread %d round %d: byte %lld wrong\n",
			       ta->id, round, bad);
			break;
		}
		atomic_fetch_add(&c->copies, 2);
	}
	as_release_mem(fd, rs, ACCEL_MEM_RELEASE_DEFERRED);
	as_release_mem(fd, rd, ACCEL_MEM_RELEASE_DEFERRED);
	as_event_destroy(fd, ev);
	/* the buffers stay allocated: a deferred release may still be pending */
	return NULL;
}

static void test_threads64(void)
{
	static struct tctx c;
	struct targ ta[NT];
	pthread_t t[NT];
	int i;

	memset(&c, 0, sizeof(c));
	c.fd = as_open_dev();
	if (c.fd < 0 || as_alloc(c.fd, (uint64_t)NT * TLEN, ACCEL_MEM_DEVICE, &c.dev, NULL)) {
		tap_result(0, "threads64", "setup");
		return;
	}
	for (i = 0; i < NS; i++)
		if (as_stream(c.fd, &c.streams[i])) {
			tap_result(0, "threads64", "streams");
			return;
		}
	for (i = 0; i < NT; i++) {
		ta[i].c = &c;
		ta[i].id = i;
		pthread_create(&t[i], NULL, thread_main, &ta[i]);
	}
	for (i = 0; i < NT; i++)
		pthread_join(t[i], NULL);
	tap_result(!c.failures, "threads64: cross-stream copies checksummed",
		   "%ld copies, %d failures", (long)c.copies, (int)c.failures);
	close(c.fd);
	check_leftovers("threads64", 10000);
}

int main(void)
{
	/* 9 results, and 2 leftover checks after each of 7 groups */
	tap_header(9 + 14);
	signal(SIGPIPE, SIG_IGN);
	test_sigkill(false);
	test_sigkill(true);
	test_close_with_work();
	test_munmap_queued();
	test_memlock();
	test_fd_passing();
	test_threads64();
	return tap_totals();
}
