// SPDX-License-Identifier: GPL-2.0
/*
 * accelstream: exported and imported events (ACCEL_IOC_EVENT_EXPORT and
 * ACCEL_IOC_EVENT_IMPORT): every errno, outputs written in full, poll(2)
 * and epoll(7) on the exported file, waits from another context's streams
 * and host, another process over SCM_RIGHTS, and the producer closing,
 * detaching its executor or being killed with the point pending.
 */
#include <poll.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "accel_helpers.h"
#include "fd_pass.h"

#ifndef ACCEL_CAP_EVENT_FD
#error "accelstream.h lacks ACCEL_CAP_EVENT_FD"
#endif

static int xexport(int fd, uint32_t event, int *out)
{
	struct accel_event_export x = { .event = event };
	int ret = xioctl(fd, ACCEL_IOC_EVENT_EXPORT, &x);

	if (!ret)
		*out = x.fd;
	return ret;
}

static int ximport(int fd, int xfd, uint32_t *event)
{
	struct accel_event_import im = { .fd = xfd };
	int ret = xioctl(fd, ACCEL_IOC_EVENT_IMPORT, &im);

	if (!ret)
		*event = im.handle;
	return ret;
}

static int readable(int fd, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, ms) == 1 && (p.revents & POLLIN);
}

/* A deadline for what must happen: a hang guard, not a timing. */
#define SURE_MS		((int)(SURE_NS / NSEC_PER_MSEC))

FIXTURE(xevent) {
	int fd, fd2;
	struct accel_info info;
	struct gate g;
	uint32_t ev;		/* recorded behind the gate on fd */
};

FIXTURE_SETUP(xevent)
{
	self->fd2 = -1;
	self->fd = accel_open();
	if (self->fd < 0)
		SETUP_SKIP(ACCEL_SKIP_NODEV_MSG);
	ASSERT_EQ(0, accel_info(self->fd, &self->info));
	if (!(self->info.caps & ACCEL_CAP_EVENT_FD))
		SETUP_SKIP("driver lacks ACCEL_CAP_EVENT_FD");
	self->fd2 = accel_open();
	ASSERT_LE(0, self->fd2);
	ASSERT_EQ(0, gate_init(self->fd, &self->g));
	ASSERT_EQ(0, accel_event(self->fd, 0, &self->ev));
	ASSERT_EQ(0, accel_record(self->fd, self->ev, self->g.stream, NULL));
}

FIXTURE_TEARDOWN(xevent)
{
	if (self->fd2 >= 0)
		close(self->fd2);
	if (self->fd >= 0)
		close(self->fd);
}

TEST_F(xevent, export_output_prefilled)
{
	struct accel_event_export x;

	memset(&x, 0xcc, sizeof(x));
	x.event = self->ev;
	x.flags = 0;
	x.pad = 0;
	ASSERT_EQ(0, ioctl(self->fd, ACCEL_IOC_EVENT_EXPORT, &x));
	EXPECT_LE(0, x.fd);
	EXPECT_EQ(self->ev, x.event);
	EXPECT_EQ(0u, x.flags);
	EXPECT_EQ(0u, x.pad);
	EXPECT_EQ(FD_CLOEXEC, fcntl(x.fd, F_GETFD) & FD_CLOEXEC);
	/* Pending behind the gate. */
	EXPECT_EQ(0, readable(x.fd, 0));
	/* Nothing but poll and close. */
	{
		char c;

		EXPECT_EQ(-1, read(x.fd, &c, 1));
		EXPECT_EQ(-1, write(x.fd, &c, 1));
		EXPECT_EQ(-1, ioctl(x.fd, ACCEL_IOC_GET_INFO, &self->info));
		EXPECT_EQ(ENOTTY, errno);
	}
	EXPECT_EQ(0, close(x.fd));
}

TEST_F(xevent, export_errors)
{
	struct accel_event_export x;
	uint32_t user, imp;
	int xfd;

	memset(&x, 0, sizeof(x));
	x.event = BAD_HANDLE;
	x.fd = -2;
	EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_EVENT_EXPORT, &x));
	EXPECT_EQ(ENOENT, errno);
	EXPECT_EQ(-2, x.fd);	/* not written on error */
	x.event = self->g.stream;	/* a handle of another kind */
	EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_EVENT_EXPORT, &x));
	EXPECT_EQ(ENOENT, errno);

	x.event = self->ev;
	x.flags = 1;
	EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_EVENT_EXPORT, &x));
	EXPECT_EQ(EINVAL, errno);
	x.flags = 0;
	x.pad = 1;
	EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_EVENT_EXPORT, &x));
	EXPECT_EQ(EINVAL, errno);
	x.pad = 0;

	ASSERT_EQ(0, accel_event(self->fd, ACCEL_EVENT_USER, &user));
	x.event = user;
	EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_EVENT_EXPORT, &x));
	EXPECT_EQ(EINVAL, errno);

	ASSERT_EQ(0, xexport(self->fd, self->ev, &xfd));
	ASSERT_EQ(0, ximport(self->fd, xfd, &imp));
	x.event = imp;
	EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_EVENT_EXPORT, &x));
	EXPECT_EQ(EINVAL, errno);

	EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_EVENT_EXPORT, (void *)8));
	EXPECT_EQ(EFAULT, errno);
	close(xfd);
}

TEST_F(xevent, export_emfile_changes_nothing)
{
	struct rlimit rl, low;
	int xfd, first;

	/* The lowest free descriptor number: the limit below it. */
	first = dup(0);
	ASSERT_LE(0, first);
	close(first);
	ASSERT_EQ(0, getrlimit(RLIMIT_NOFILE, &rl));
	low = rl;
	low.rlim_cur = first;
	ASSERT_EQ(0, setrlimit(RLIMIT_NOFILE, &low));
	EXPECT_EQ(-EMFILE, xexport(self->fd, self->ev, &xfd));
	ASSERT_EQ(0, setrlimit(RLIMIT_NOFILE, &rl));
	/* Nothing was left pending: the point still exports and completes. */
	ASSERT_EQ(0, xexport(self->fd, self->ev, &xfd));
	ASSERT_EQ(0, gate_open(self->fd, &self->g));
	EXPECT_EQ(1, readable(xfd, SURE_MS));
	close(xfd);
}

#define FILE_MAX	"/proc/sys/fs/file-max"

static int file_max_write(const char *val)
{
	int fd = open(FILE_MAX, O_WRONLY | O_CLOEXEC);
	ssize_t n = -1;

	if (fd >= 0) {
		n = write(fd, val, strlen(val));
		close(fd);
	}
	return n == (ssize_t)strlen(val) ? 0 : -1;
}

/*
 * The child's half of export_enfile_changes_nothing: its own context
 * (ioctls come from the opener's process), a point pending behind a
 * gate, then no CAP_SYS_ADMIN (setuid to nobody): the file-max limit
 * applies to it. Exit status: 0, or the step that went wrong.
 */
static int enfile_child(int ready, int go)
{
	struct gate g;
	uint32_t ev;
	char c;
	int fd, xfd, r;

	alarm(60);
	fd = accel_open();
	if (fd < 0 || gate_init(fd, &g) || accel_event(fd, 0, &ev) ||
	    accel_record(fd, ev, g.stream, NULL))
		return 2;
	if (setgid(65534) || setuid(65534))
		return 3;
	if (write(ready, "r", 1) != 1 || read(go, &c, 1) != 1)
		return 4;
	/* file-max is 0 now, below the files in use. */
	r = xexport(fd, ev, &xfd);
	if (write(ready, "d", 1) != 1)
		return 5;
	if (r != -ENFILE)
		return 10 + (r < 0 ? -r : 99) % 100;
	if (read(go, &c, 1) != 1)
		return 7;
	/* Restored: the point exports, pending, and completes. */
	if (xexport(fd, ev, &xfd) || readable(xfd, 0))
		return 8;
	if (gate_open(fd, &g) || !readable(xfd, SURE_MS))
		return 9;
	return 0;
}

/*
 * -ENFILE: the system's file table is full. As root (the VM run), lower
 * fs.file-max to 0, below the files in use, for a child that dropped
 * CAP_SYS_ADMIN; the limit is restored as soon as the child tried. (0,
 * not just below the count: the kernel first compares the limit with an
 * approximate per-CPU count, which may lag below the true one.)
 */
TEST_F(xevent, export_enfile_changes_nothing)
{
	char saved[64] = "", c;
	int ready[2], go[2], status, fd, lowered = 0, restored = 0;
	ssize_t n;
	pid_t pid;

	if (geteuid())
		SKIP(return, "needs root to lower fs.file-max");
	fd = open(FILE_MAX, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, fd);
	n = read(fd, saved, sizeof(saved) - 1);
	close(fd);
	ASSERT_LT(0, n);
	saved[n] = 0;
	ASSERT_EQ(0, pipe(ready));
	ASSERT_EQ(0, pipe(go));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		close(ready[0]);
		close(go[1]);
		_exit(enfile_child(ready[1], go[0]));
	}
	close(ready[1]);
	close(go[0]);
	if (read(ready[0], &c, 1) == 1 && !file_max_write("0")) {
		lowered = 1;
		if (write(go[1], "g", 1) == 1)
			n = read(ready[0], &c, 1);
		restored = file_max_write(saved);
		n = write(go[1], "g", 1);
	}
	close(go[1]);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	close(ready[0]);
	EXPECT_EQ(1, lowered);
	EXPECT_EQ(0, restored) {
		TH_LOG("fs.file-max not restored to %s", saved);
	}
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status)) {
		TH_LOG("child failed at step %d (10 + errno: the export's)",
		       WEXITSTATUS(status));
	}
}

TEST_F_TIMEOUT(xevent, export_enospc, 120)
{
	static int fds[ACCEL_EXPORT_MAX_PENDING + 1];
	struct rlimit rl;
	int i, n, ret = 0;

	ASSERT_EQ(0, getrlimit(RLIMIT_NOFILE, &rl));
	if (rl.rlim_max != RLIM_INFINITY &&
	    rl.rlim_max < ACCEL_EXPORT_MAX_PENDING + 64) {
		if (geteuid())
			SKIP(return, "RLIMIT_NOFILE too low to hold the exports");
		rl.rlim_max = ACCEL_EXPORT_MAX_PENDING + 64;
	}
	rl.rlim_cur = rl.rlim_max;
	ASSERT_EQ(0, setrlimit(RLIMIT_NOFILE, &rl));
	for (n = 0; n < ACCEL_EXPORT_MAX_PENDING; n++) {
		ret = xexport(self->fd, self->ev, &fds[n]);
		if (ret)
			break;
	}
	ASSERT_EQ(0, ret);
	EXPECT_EQ(-ENOSPC, xexport(self->fd, self->ev, &fds[n]));
	ASSERT_EQ(0, gate_open(self->fd, &self->g));
	for (i = 0; i < n; i++) {
		EXPECT_EQ(1, readable(fds[i], SURE_MS));
		close(fds[i]);
	}
	/* Done exports no longer count; a done point is never refused. */
	ASSERT_EQ(0, xexport(self->fd, self->ev, &fds[0]));
	EXPECT_EQ(1, readable(fds[0], 0));
	close(fds[0]);
}

TEST_F(xevent, import_output_prefilled)
{
	struct accel_event_import im;
	struct accel_event_query q;
	int xfd;

	ASSERT_EQ(0, xexport(self->fd, self->ev, &xfd));
	memset(&im, 0xcc, sizeof(im));
	im.fd = xfd;
	im.flags = 0;
	im.pad = 0;
	ASSERT_EQ(0, ioctl(self->fd2, ACCEL_IOC_EVENT_IMPORT, &im));
	EXPECT_EQ(xfd, im.fd);
	EXPECT_NE(0u, im.handle);
	EXPECT_NE(0xccccccccu, im.handle);
	EXPECT_EQ(0u, im.flags);
	EXPECT_EQ(0u, im.pad);

	memset(&q, 0xcc, sizeof(q));
	q.handle = im.handle;
	q.pad = 0;
	ASSERT_EQ(0, ioctl(self->fd2, ACCEL_IOC_EVENT_QUERY, &q));
	EXPECT_EQ((uint32_t)ACCEL_EVENT_STATE_PENDING, q.state);
	EXPECT_EQ(0, q.error);
	EXPECT_EQ(0u, q.stream);	/* another context's: no handle here */
	EXPECT_EQ((uint32_t)ACCEL_EVENT_IMPORTED, q.flags);
	EXPECT_EQ(1ULL, q.seq);
	EXPECT_EQ(0ULL, q.value);
	EXPECT_EQ(0ULL, q.timestamp_ns);
	close(xfd);
}

TEST_F(xevent, import_errors)
{
	struct accel_event_import im;
	int p[2], xfd;

	memset(&im, 0, sizeof(im));
	im.fd = -1;
	im.handle = 0xcc;
	EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_EVENT_IMPORT, &im));
	EXPECT_EQ(EBADF, errno);
	EXPECT_EQ(0xccu, im.handle);	/* not written on error */
	ASSERT_EQ(0, pipe(p));
	im.fd = p[0];
	EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_EVENT_IMPORT, &im));
	EXPECT_EQ(EINVAL, errno);
	close(p[0]);
	close(p[1]);
	/* A closed descriptor number. */
	EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_EVENT_IMPORT, &im));
	EXPECT_EQ(EBADF, errno);
	/* The device file is no exported event. */
	im.fd = self->fd;
	EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_EVENT_IMPORT, &im));
	EXPECT_EQ(EINVAL, errno);

	ASSERT_EQ(0, xexport(self->fd, self->ev, &xfd));
	im.fd = xfd;
	im.flags = 1;
	EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_EVENT_IMPORT, &im));
	EXPECT_EQ(EINVAL, errno);
	im.flags = 0;
	im.pad = 1;
	EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_EVENT_IMPORT, &im));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_EVENT_IMPORT, (void *)8));
	EXPECT_EQ(EFAULT, errno);
	close(xfd);
}

TEST_F_TIMEOUT(xevent, import_enospc, 120)
{
	uint32_t e, first = 0;
	int xfd, ret = 0;
	uint32_t n;

	ASSERT_EQ(0, xexport(self->fd, self->ev, &xfd));
	for (n = 0; n <= self->info.max_events; n++) {
		ret = accel_event(self->fd2, 0, &e);
		if (ret)
			break;
		if (!first)
			first = e;
	}
	ASSERT_EQ(-ENOSPC, ret);
	EXPECT_EQ(-ENOSPC, ximport(self->fd2, xfd, &e));
	/* One destroyed: the import fits. */
	ASSERT_EQ(0, accel_event_destroy(self->fd2, first));
	EXPECT_EQ(0, ximport(self->fd2, xfd, &e));
	close(xfd);
}

TEST_F(xevent, imported_is_read_only)
{
	struct accel_event_elapsed el;
	struct accel_event_signal sg;
	uint32_t imp, s;
	int xfd;

	ASSERT_EQ(0, xexport(self->fd, self->ev, &xfd));
	ASSERT_EQ(0, ximport(self->fd2, xfd, &imp));
	ASSERT_EQ(0, accel_stream(self->fd2, 0, 0, &s));
	EXPECT_EQ(-EINVAL, accel_record(self->fd2, imp, s, NULL));
	EXPECT_EQ(-EINVAL, accel_submit1(self->fd2, s, d_record(imp), NULL));
	EXPECT_EQ(-EINVAL, accel_submit1(self->fd2, s,
					 d_host_wait(imp, 1), NULL));
	memset(&el, 0, sizeof(el));
	el.start = imp;
	el.end = imp;
	EXPECT_EQ(-1, ioctl(self->fd2, ACCEL_IOC_EVENT_ELAPSED, &el));
	EXPECT_EQ(EINVAL, errno);
	memset(&sg, 0, sizeof(sg));
	sg.handle = imp;
	sg.value = 1;
	EXPECT_EQ(-1, ioctl(self->fd2, ACCEL_IOC_EVENT_SIGNAL, &sg));
	EXPECT_EQ(EINVAL, errno);
	close(xfd);
}

TEST_F(xevent, done_at_once)
{
	uint32_t e, imp, s;
	int xfd;

	/* Never recorded: complete. */
	ASSERT_EQ(0, accel_event(self->fd, 0, &e));
	ASSERT_EQ(0, xexport(self->fd, e, &xfd));
	EXPECT_EQ(1, readable(xfd, 0));
	ASSERT_EQ(0, ximport(self->fd2, xfd, &imp));
	EXPECT_EQ(0, accel_wait1(self->fd2, imp, 0, 0));
	close(xfd);
	/* Recorded and retired. */
	ASSERT_EQ(0, accel_stream(self->fd, 0, 0, &s));
	ASSERT_EQ(0, accel_record(self->fd, e, s, NULL));
	ASSERT_EQ(0, accel_drain(self->fd, s));
	ASSERT_EQ(0, xexport(self->fd, e, &xfd));
	EXPECT_EQ(1, readable(xfd, 0));
	close(xfd);
}

TEST_F(xevent, waits_from_another_context)
{
	struct accel_event_query q;
	uint32_t imp, s;
	uint64_t seq;
	int xfd;

	ASSERT_EQ(0, xexport(self->fd, self->ev, &xfd));
	ASSERT_EQ(0, ximport(self->fd2, xfd, &imp));
	ASSERT_EQ(0, close(xfd));	/* the import holds what it needs */
	ASSERT_EQ(0, accel_stream(self->fd2, 0, 0, &s));
	ASSERT_EQ(0, accel_submit1(self->fd2, s, d_stream_wait(imp), NULL));
	ASSERT_EQ(0, accel_submit1(self->fd2, s, d_nop(), &seq));
	EXPECT_EQ(-ETIME, accel_sync(self->fd2, s, seq, 0));
	EXPECT_EQ(-ETIME, accel_wait1(self->fd2, imp, 0, 0));

	/* A later record on the producer does not move the exported point. */
	ASSERT_EQ(0, gate_open(self->fd, &self->g));
	EXPECT_EQ(0, accel_wait1(self->fd2, imp, 0, deadline_in(SURE_NS)));
	EXPECT_EQ(0, accel_sync(self->fd2, s, seq, deadline_in(SURE_NS)));
	ASSERT_EQ(0, accel_event_query(self->fd2, imp, &q));
	EXPECT_EQ((uint32_t)ACCEL_EVENT_STATE_COMPLETE, q.state);
	EXPECT_EQ(0, q.error);
	EXPECT_EQ(0, accel_event_destroy(self->fd2, imp));
}

TEST_F(xevent, poll_and_epoll)
{
	struct epoll_event e = { .events = EPOLLIN }, out[2];
	int xfd, xfd2, ep;

	ASSERT_EQ(0, xexport(self->fd, self->ev, &xfd));
	ASSERT_EQ(0, xexport(self->fd, self->ev, &xfd2));
	ep = epoll_create1(EPOLL_CLOEXEC);
	ASSERT_LE(0, ep);
	e.data.fd = xfd;
	ASSERT_EQ(0, epoll_ctl(ep, EPOLL_CTL_ADD, xfd, &e));
	e.events = EPOLLIN | EPOLLET;
	e.data.fd = xfd2;
	ASSERT_EQ(0, epoll_ctl(ep, EPOLL_CTL_ADD, xfd2, &e));
	EXPECT_EQ(0, epoll_wait(ep, out, 2, 0));
	ASSERT_EQ(0, gate_open(self->fd, &self->g));
	/* Both report, however the wake-ups fall. */
	{
		int seen = 0, n, i;

		while (seen != 3) {
			n = epoll_wait(ep, out, 2, SURE_MS);
			ASSERT_LT(0, n);
			for (i = 0; i < n; i++) {
				EXPECT_EQ(EPOLLIN, out[i].events);
				seen |= out[i].data.fd == xfd ? 1 : 2;
			}
		}
	}
	/* Level-triggered: still ready; edge-triggered: told once. */
	ASSERT_EQ(1, epoll_wait(ep, out, 2, 0));
	EXPECT_EQ(xfd, out[0].data.fd);
	EXPECT_EQ(1, readable(xfd2, 0));
	close(ep);
	close(xfd);
	close(xfd2);
}

TEST_F(xevent, failed_point)
{
	struct accel_event_signal sg = { .flags = ACCEL_SIGNAL_ERROR };
	uint32_t imp, s;
	uint64_t seq;
	int xfd;

	ASSERT_EQ(0, xexport(self->fd, self->ev, &xfd));
	ASSERT_EQ(0, ximport(self->fd2, xfd, &imp));
	ASSERT_EQ(0, accel_stream(self->fd2, 0, 0, &s));
	ASSERT_EQ(0, accel_submit1(self->fd2, s, d_stream_wait(imp), NULL));
	ASSERT_EQ(0, accel_submit1(self->fd2, s, d_nop(), &seq));
	sg.handle = self->g.event;
	ASSERT_EQ(0, ioctl(self->fd, ACCEL_IOC_EVENT_SIGNAL, &sg));
	EXPECT_EQ(1, readable(xfd, SURE_MS));
	EXPECT_EQ(-EIO, accel_wait1(self->fd2, imp, 0, deadline_in(SURE_NS)));
	/* The waiting stream fails, sticky, as on a failed stream's point. */
	EXPECT_EQ(-EIO, accel_sync(self->fd2, s, seq, deadline_in(SURE_NS)));
	close(xfd);
}

TEST_F(xevent, producer_closes)
{
	uint32_t before, after, s;
	uint64_t seq;
	int xfd;

	ASSERT_EQ(0, xexport(self->fd, self->ev, &xfd));
	ASSERT_EQ(0, ximport(self->fd2, xfd, &before));
	ASSERT_EQ(0, accel_stream(self->fd2, 0, 0, &s));
	ASSERT_EQ(0, accel_submit1(self->fd2, s, d_stream_wait(before), NULL));
	ASSERT_EQ(0, accel_submit1(self->fd2, s, d_nop(), &seq));
	ASSERT_EQ(0, close(self->fd));
	self->fd = -1;
	EXPECT_EQ(1, readable(xfd, SURE_MS));
	EXPECT_EQ(-EIO, accel_wait1(self->fd2, before, 0,
				    deadline_in(SURE_NS)));
	EXPECT_EQ(-EIO, accel_sync(self->fd2, s, seq, deadline_in(SURE_NS)));
	/* Imported after the producer went: done with -EIO at once. */
	ASSERT_EQ(0, ximport(self->fd2, xfd, &after));
	EXPECT_EQ(-EIO, accel_wait1(self->fd2, after, 0, 0));
	close(xfd);
}

TEST_F(xevent, importer_closes_first)
{
	uint32_t imp, s;
	int xfd;

	ASSERT_EQ(0, xexport(self->fd, self->ev, &xfd));
	ASSERT_EQ(0, ximport(self->fd2, xfd, &imp));
	ASSERT_EQ(0, accel_stream(self->fd2, 0, 0, &s));
	ASSERT_EQ(0, accel_submit1(self->fd2, s, d_stream_wait(imp), NULL));
	ASSERT_EQ(0, close(self->fd2));
	self->fd2 = -1;
	ASSERT_EQ(0, gate_open(self->fd, &self->g));
	EXPECT_EQ(1, readable(xfd, SURE_MS));
	close(xfd);
}

/* The file outlives its context, its event and every import. */
TEST_F(xevent, file_outlives_everything)
{
	uint32_t imp;
	int xfd;

	ASSERT_EQ(0, xexport(self->fd, self->ev, &xfd));
	ASSERT_EQ(0, ximport(self->fd2, xfd, &imp));
	ASSERT_EQ(0, accel_event_destroy(self->fd, self->ev));
	ASSERT_EQ(0, accel_event_destroy(self->fd2, imp));
	ASSERT_EQ(0, gate_open(self->fd, &self->g));
	EXPECT_EQ(1, readable(xfd, SURE_MS));
	close(self->fd);
	close(self->fd2);
	self->fd = self->fd2 = -1;
	EXPECT_EQ(1, readable(xfd, 0));
	EXPECT_EQ(0, close(xfd));
}

static int exec_attach(int fd)
{
	struct accel_exec_attach a = { 0 };

	return xioctl(fd, ACCEL_IOC_EXEC_ATTACH, &a);
}

static int exec_fetch(int fd, struct accel_exec_item *items, uint32_t max,
		      uint64_t timeout_ns, uint32_t *count)
{
	struct accel_exec_fetch f = {
		.items = (uintptr_t)items, .max_items = max,
		.timeout_ns = timeout_ns,
	};
	int ret = xioctl(fd, ACCEL_IOC_EXEC_FETCH, &f);

	*count = f.count;
	return ret;
}

/* An executor gets a wait on an imported event once it is done: host-ordered. */
TEST_F(xevent, executor_fetches_when_done)
{
	struct accel_exec_item it[4];
	uint32_t imp, s, n = 0;
	int xfd;

	ASSERT_EQ(0, xexport(self->fd, self->ev, &xfd));
	ASSERT_EQ(0, ximport(self->fd2, xfd, &imp));
	ASSERT_EQ(0, accel_stream(self->fd2, 0, 0, &s));
	ASSERT_EQ(0, exec_attach(self->fd2));
	ASSERT_EQ(0, accel_submit1(self->fd2, s, d_stream_wait(imp), NULL));
	EXPECT_EQ(-ETIME, exec_fetch(self->fd2, it, 4, 0, &n));
	EXPECT_EQ(0u, n);
	ASSERT_EQ(0, gate_open(self->fd, &self->g));
	memset(it, 0xcc, sizeof(it));
	ASSERT_EQ(0, exec_fetch(self->fd2, it, 4, deadline_in(SURE_NS), &n));
	ASSERT_EQ(1u, n);
	EXPECT_EQ((uint32_t)ACCEL_OP_STREAM_WAIT, it[0].desc.op);
	EXPECT_EQ(0, it[0].status);
	EXPECT_EQ(0u, it[0].wait_stream);	/* nothing left for the device */
	EXPECT_EQ(0ULL, it[0].wait_seq);
	close(xfd);
}

/* The producer's executor detaches with the record fetched: -EIO. */
TEST_F(xevent, producer_executor_detaches)
{
	struct accel_exec_item it[4];
	struct accel_exec_attach a = { 0 };
	uint32_t e, s, imp, n = 0;
	int xfd;

	ASSERT_EQ(0, accel_stream(self->fd2, 0, 0, &s));
	ASSERT_EQ(0, accel_event(self->fd2, 0, &e));
	ASSERT_EQ(0, exec_attach(self->fd2));
	ASSERT_EQ(0, accel_record(self->fd2, e, s, NULL));
	ASSERT_EQ(0, xexport(self->fd2, e, &xfd));
	ASSERT_EQ(0, ximport(self->fd, xfd, &imp));
	ASSERT_EQ(0, exec_fetch(self->fd2, it, 4, deadline_in(SURE_NS), &n));
	ASSERT_EQ(1u, n);
	EXPECT_EQ(0, readable(xfd, 0));
	ASSERT_EQ(0, ioctl(self->fd2, ACCEL_IOC_EXEC_DETACH, &a));
	EXPECT_EQ(1, readable(xfd, SURE_MS));
	EXPECT_EQ(-EIO, accel_wait1(self->fd, imp, 0, deadline_in(SURE_NS)));
	close(xfd);
}

/*
 * A process exports a gated point and passes it over SCM_RIGHTS; on the
 * word 'o' it opens the gate; on none it waits to be killed.
 */
static void producer(int sock)
{
	struct gate g;
	uint32_t e;
	char cmd;
	int fd = accel_open(), xfd;

	if (fd < 0 || gate_init(fd, &g) || accel_event(fd, 0, &e) ||
	    accel_record(fd, e, g.stream, NULL) || xexport(fd, e, &xfd) ||
	    send_fd(sock, xfd))
		_exit(2);
	close(xfd);
	if (read(sock, &cmd, 1) != 1)
		_exit(3);
	if (gate_open(fd, &g) || accel_drain(fd, g.stream))
		_exit(4);
	if (read(sock, &cmd, 1) < 0)
		_exit(5);
	_exit(0);
}

static void cross_process(struct __test_metadata *_metadata, int fd, bool kill_it)
{
	uint32_t imp, s;
	uint64_t seq;
	int sv[2], xfd, status;
	pid_t pid;

	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		close(sv[0]);
		producer(sv[1]);
	}
	close(sv[1]);
	xfd = recv_fd(sv[0]);
	ASSERT_LE(0, xfd);
	EXPECT_EQ(0, readable(xfd, 0));
	ASSERT_EQ(0, ximport(fd, xfd, &imp));
	ASSERT_EQ(0, accel_stream(fd, 0, 0, &s));
	ASSERT_EQ(0, accel_submit1(fd, s, d_stream_wait(imp), NULL));
	ASSERT_EQ(0, accel_submit1(fd, s, d_nop(), &seq));
	if (kill_it) {
		ASSERT_EQ(0, kill(pid, SIGKILL));
	} else {
		ASSERT_EQ(1, write(sv[0], "o", 1));
	}
	EXPECT_EQ(1, readable(xfd, SURE_MS));
	EXPECT_EQ(kill_it ? -EIO : 0,
		  accel_wait1(fd, imp, 0, deadline_in(SURE_NS)));
	EXPECT_EQ(kill_it ? -EIO : 0,
		  accel_sync(fd, s, seq, deadline_in(SURE_NS)));
	if (!kill_it) {
		ASSERT_EQ(1, write(sv[0], "d", 1));
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	if (kill_it) {
		EXPECT_TRUE(WIFSIGNALED(status));
	} else {
		EXPECT_EQ(0, WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	}
	close(xfd);
	close(sv[0]);
}

TEST_F(xevent, other_process_completes)
{
	cross_process(_metadata, self->fd2, false);
}

TEST_F(xevent, other_process_killed)
{
	cross_process(_metadata, self->fd2, true);
}

ACCEL_HARNESS_MAIN
