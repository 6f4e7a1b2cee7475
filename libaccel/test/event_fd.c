// SPDX-License-Identifier: MIT
/*
 * Descriptors other code waits on: accel_context_get_fd() (readable while
 * something retired since the last read), accel_event_export_fd() and
 * accel_event_import_fd() (an event's point as a descriptor, imported by
 * another context or process), in poll(2) and epoll(7) loops, and the
 * lifetimes: producer destroyed or killed first, descriptors closed in
 * any order.
 */
#include <stdbool.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include "helpers.h"
#include "../../selftests/accelstream/fd_pass.h"

/* A deadline for things that must happen: a hang guard, not a timing. */
#define HANG_MS		20000

static int readable(int fd, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	int n = poll(&p, 1, ms);

	return n == 1 && (p.revents & POLLIN);
}

static int inproc(void)
{
	const char *name = "";

	accel_context_get_transport(NULL, &name);
	return !strcmp(name, "inproc");
}

/* Read the completion count, 0 when nothing is pending (never blocks). */
static uint64_t drain(int fd)
{
	uint64_t n = 0;

	if (readable(fd, 0) && read(fd, &n, sizeof(n)) != sizeof(n))
		return UINT64_MAX;
	return n;
}

/* t_gate() on @ctx's stream @s, with the gate made in @ctx. */
static int gate_on(accel_context *ctx, accel_stream_t s, accel_event_t *gate)
{
	int ret = accel_event_create(ctx, ACCEL_EVENT_HOST, gate);

	return ret ? ret : accel_stream_wait_value(s, *gate, 1, 0);
}

/* The producer's context @a and the importer's @b. */
static bool two_ctxs(accel_context **a, accel_context **b)
{
	*a = t_ctx();
	*b = t_ctx();
	return *a && *b;
}

/*
 * A point to export, pending: in @ctx, an event *@ev recorded on a new
 * stream *@s behind the gate *@gate (gate_on()).
 */
static int pending_point(accel_context *ctx, accel_stream_t *s,
			 accel_event_t *gate, accel_event_t *ev)
{
	int ret = accel_stream_create(ctx, 0, 0, s);

	if (!ret)
		ret = accel_event_create(ctx, 0, ev);
	if (!ret)
		ret = gate_on(ctx, *s, gate);
	return ret ? ret : accel_event_record(*ev, *s);
}

static void noop(void *arg)
{
	(void)arg;
}

static int context_fd_counts_retirements(void)
{
	accel_event_t gate, ev;
	accel_stream_t s;
	unsigned char *host;
	uint64_t n, sum = 0;
	void *dev;
	int fd;

	CHECK_OK(t_copy_setup(4096, &s, &dev, &host));
	CHECK_OK(accel_event_create(NULL, 0, &ev));
	fd = accel_context_get_fd(NULL);
	CHECK(fd >= 0);
	CHECK_RET(accel_context_get_fd(NULL), fd);
	CHECK(drain(fd) != UINT64_MAX);
	CHECK_OK(t_gate(s, &gate));
	CHECK_OK(accel_memcpy_async(s, dev, host, 4096, ACCEL_MEMCPY_H2D));
	CHECK_OK(accel_event_record(ev, s));
	/* All three descriptors wait behind the gate: nothing retired. */
	CHECK(!readable(fd, 0));
	CHECK_OK(t_gate_open(gate));
	/* Nothing else is submitted: the reads add up to exactly three. */
	while (sum < 3) {
		CHECK(readable(fd, HANG_MS));
		CHECK(read(fd, &n, sizeof(n)) == sizeof(n));
		CHECK(n > 0);
		sum += n;
	}
	CHECK(sum == 3);
	CHECK_OK(accel_event_query(ev));
	/* The reads acknowledged them: level-triggered, now quiet. */
	CHECK(!readable(fd, 0));
	CHECK_OK(accel_event_destroy(gate));
	return T_PASS;
}

static int export_pending_then_done(void)
{
	accel_context *a, *b;
	accel_stream_t s, sb;
	accel_event_t gate, ev, imp;
	int fd;

	CHECK(two_ctxs(&a, &b));
	CHECK_OK(pending_point(a, &s, &gate, &ev));
	CHECK_OK(accel_stream_create(b, 0, 0, &sb));
	CHECK_OK(accel_event_export_fd(ev, &fd));
	CHECK(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	CHECK(!readable(fd, 0));

	/* Another context imports it and waits, from a stream and the host. */
	CHECK_OK(accel_event_import_fd(b, fd, &imp));
	CHECK_RET(accel_event_query(imp), -EAGAIN);
	CHECK_OK(accel_stream_wait_event(sb, imp, 0));
	CHECK_OK(accel_launch_host_func(sb, noop, NULL));
	CHECK_RET(accel_stream_query(sb), -EAGAIN);
	CHECK_RET(accel_event_synchronize(imp, 0), -ETIME);

	/* A later record does not move the exported point. */
	CHECK_OK(t_gate_open(gate));
	CHECK_OK(accel_event_synchronize(imp, ACCEL_TIMEOUT_INFINITE));
	CHECK_OK(accel_event_query(imp));
	CHECK_OK(accel_stream_synchronize(sb, ACCEL_TIMEOUT_INFINITE));
	CHECK(readable(fd, HANG_MS));

	/* An imported event is read-only. */
	CHECK_RET(accel_event_record(imp, sb), -EINVAL);
	CHECK_RET(accel_event_export_fd(imp, &fd), -EINVAL);
	CHECK(close(fd) == 0);
	CHECK_OK(accel_event_destroy(imp));
	CHECK_OK(accel_event_destroy(ev));
	CHECK_OK(accel_event_destroy(gate));
	return T_PASS;
}

static int export_done_at_once(void)
{
	accel_event_t ev, imp;
	accel_stream_t s;
	int fd;

	CHECK_OK(t_stream(&s));
	CHECK_OK(accel_event_create(NULL, 0, &ev));
	/* Never recorded: complete, as CUDA's. */
	CHECK_OK(accel_event_export_fd(ev, &fd));
	CHECK(readable(fd, 0));
	CHECK_OK(accel_event_import_fd(NULL, fd, &imp));
	CHECK_OK(accel_event_query(imp));
	CHECK(close(fd) == 0);
	CHECK_OK(accel_event_destroy(imp));
	/* Recorded and retired. */
	CHECK_OK(accel_event_record(ev, s));
	CHECK_OK(accel_event_synchronize(ev, ACCEL_TIMEOUT_INFINITE));
	CHECK_OK(accel_event_export_fd(ev, &fd));
	CHECK(readable(fd, 0));
	CHECK_OK(accel_event_import_fd(NULL, fd, &imp));
	CHECK_OK(accel_event_synchronize(imp, 0));
	CHECK(close(fd) == 0);
	return T_PASS;
}

static int export_failed_point(void)
{
	accel_event_t gate, ev, imp;
	accel_stream_t s;
	int fd;

	CHECK(t_ctx());
	CHECK_OK(pending_point(NULL, &s, &gate, &ev));
	CHECK_OK(accel_event_export_fd(ev, &fd));
	CHECK_OK(accel_event_import_fd(NULL, fd, &imp));
	/* The gate fails: so does the stream, and with it the export. */
	CHECK_OK(accel_event_signal(gate, 1, ACCEL_EVENT_SIGNAL_ERROR));
	CHECK(readable(fd, HANG_MS));
	CHECK_RET(accel_event_synchronize(imp, ACCEL_TIMEOUT_INFINITE), -EIO);
	CHECK_RET(accel_event_query(imp), -EIO);
	CHECK(close(fd) == 0);
	return T_PASS;
}

/* The producing context is destroyed with the point pending. */
static int producer_destroyed(void)
{
	accel_context *a, *b;
	accel_event_t gate, ev, before, after;
	accel_stream_t s;
	int fd;

	CHECK(two_ctxs(&a, &b));
	CHECK_OK(pending_point(a, &s, &gate, &ev));
	CHECK_OK(accel_event_export_fd(ev, &fd));
	CHECK_OK(accel_event_import_fd(b, fd, &before));
	CHECK_OK(accel_context_destroy(a));
	t_ctxs[0] = b;		/* @a is gone: not destroyed again */
	t_nctx = 1;
	CHECK(readable(fd, HANG_MS));
	CHECK_RET(accel_event_synchronize(before, ACCEL_TIMEOUT_INFINITE), -EIO);
	CHECK_OK(accel_event_import_fd(b, fd, &after));
	CHECK_RET(accel_event_query(after), -EIO);
	CHECK(close(fd) == 0);
	return T_PASS;
}

/* Close and destroy in every order while the point is pending. */
static int close_orders(void)
{
	accel_context *a, *b;
	accel_event_t gate, ev, imp, imp2;
	accel_stream_t s, sb;
	int fd, fd2, fd3;

	CHECK(two_ctxs(&a, &b));
	CHECK_OK(pending_point(a, &s, &gate, &ev));
	CHECK_OK(accel_stream_create(b, 0, 0, &sb));
	/* Closed at once: nobody waits. */
	CHECK_OK(accel_event_export_fd(ev, &fd));
	CHECK(close(fd) == 0);
	/* Imported, descriptor closed, imported event destroyed. */
	CHECK_OK(accel_event_export_fd(ev, &fd2));
	CHECK_OK(accel_event_import_fd(b, fd2, &imp));
	CHECK(close(fd2) == 0);
	CHECK_OK(accel_stream_wait_event(sb, imp, 0));
	CHECK_OK(accel_event_destroy(imp));
	/* Imported, producer's event destroyed, descriptor kept. */
	CHECK_OK(accel_event_export_fd(ev, &fd3));
	CHECK_OK(accel_event_import_fd(b, fd3, &imp2));
	CHECK_OK(accel_event_destroy(ev));
	CHECK(!readable(fd3, 0));
	CHECK_OK(t_gate_open(gate));
	CHECK_OK(accel_event_synchronize(imp2, ACCEL_TIMEOUT_INFINITE));
	CHECK_OK(accel_stream_synchronize(sb, ACCEL_TIMEOUT_INFINITE));
	CHECK(readable(fd3, HANG_MS));
	CHECK(close(fd3) == 0);
	/* The importer goes first, its import still pending elsewhere. */
	CHECK_OK(accel_event_create(a, 0, &ev));
	CHECK_OK(gate_on(a, s, &gate));
	CHECK_OK(accel_event_record(ev, s));
	CHECK_OK(accel_event_export_fd(ev, &fd));
	CHECK_OK(accel_event_import_fd(b, fd, &imp));
	CHECK_OK(accel_stream_wait_event(sb, imp, 0));
	CHECK_OK(accel_context_destroy(b));
	t_nctx = 1;
	CHECK_OK(t_gate_open(gate));
	CHECK(readable(fd, HANG_MS));
	CHECK(close(fd) == 0);
	return T_PASS;
}

static int epoll_loop(void)
{
	struct epoll_event evs[4], e = { .events = EPOLLIN };
	accel_event_t gate, ev;
	accel_stream_t s;
	unsigned char *host;
	int ep, cfd, xfd, i, n;
	bool seen_ctx = false, seen_x = false;
	void *dev;

	CHECK_OK(t_copy_setup(4096, &s, &dev, &host));
	CHECK_OK(accel_event_create(NULL, 0, &ev));
	cfd = accel_context_get_fd(NULL);
	CHECK(cfd >= 0);
	CHECK(drain(cfd) != UINT64_MAX);
	CHECK_OK(t_gate(s, &gate));
	CHECK_OK(accel_memcpy_async(s, dev, host, 4096, ACCEL_MEMCPY_H2D));
	CHECK_OK(accel_event_record(ev, s));
	CHECK_OK(accel_event_export_fd(ev, &xfd));
	ep = epoll_create1(EPOLL_CLOEXEC);
	CHECK(ep >= 0);
	e.data.fd = cfd;
	CHECK(epoll_ctl(ep, EPOLL_CTL_ADD, cfd, &e) == 0);
	e.data.fd = xfd;
	CHECK(epoll_ctl(ep, EPOLL_CTL_ADD, xfd, &e) == 0);
	CHECK(epoll_wait(ep, evs, 4, 0) == 0);
	CHECK_OK(t_gate_open(gate));
	while (!seen_ctx || !seen_x) {
		n = epoll_wait(ep, evs, 4, HANG_MS);
		CHECK(n > 0);
		for (i = 0; i < n; i++) {
			CHECK(evs[i].events & EPOLLIN);
			if (evs[i].data.fd == cfd) {
				CHECK(drain(cfd) >= 1);
				seen_ctx = true;
			} else {
				CHECK(evs[i].data.fd == xfd);
				seen_x = true;
				CHECK(epoll_ctl(ep, EPOLL_CTL_DEL, xfd, NULL) == 0);
			}
		}
	}
	close(ep);
	close(xfd);
	return T_PASS;
}

static int errors(void)
{
	accel_event_t ev, host, imp;
	int fd, p[2];

	CHECK(t_ctx());
	CHECK_OK(accel_event_create(NULL, 0, &ev));
	CHECK_OK(accel_event_create(NULL, ACCEL_EVENT_HOST, &host));
	CHECK_RET(accel_event_export_fd(ev, NULL), -EINVAL);
	CHECK_RET(accel_event_export_fd(host, &fd), -EINVAL);
	CHECK_RET(accel_event_import_fd(NULL, -1, &imp), -EBADF);
	CHECK(pipe(p) == 0);
	CHECK_RET(accel_event_import_fd(NULL, p[0], &imp), -EINVAL);
	close(p[0]);
	close(p[1]);
	/* A descriptor number no longer open. */
	CHECK_RET(accel_event_import_fd(NULL, p[0], &imp), -EBADF);
	CHECK_OK(accel_event_export_fd(ev, &fd));
	CHECK_RET(accel_event_import_fd(NULL, fd, NULL), -EINVAL);
	CHECK(close(fd) == 0);
	CHECK_OK(accel_event_destroy(ev));
	CHECK_RET(accel_event_export_fd(ev, &fd), -ENOENT);
	return T_PASS;
}

/* ACCEL_EXPORT_MAX_PENDING (4096) pending exports, then -ENOSPC. */
static int too_many_pending(void)
{
	static int fds[4097];
	accel_event_t gate, ev;
	accel_stream_t s;
	struct rlimit rl;
	int i, n = 0, ret = 0;

	/* In process each pending export holds two descriptors. */
	CHECK(getrlimit(RLIMIT_NOFILE, &rl) == 0);
	if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < 10000)
		rl.rlim_max = 10000;	/* root (CAP_SYS_RESOURCE) may */
	if (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur < 10000)
		rl.rlim_cur = 10000;
	if (setrlimit(RLIMIT_NOFILE, &rl)) {
		printf("# RLIMIT_NOFILE cannot rise to 10000: no room for 4096 exports\n");
		return T_SKIP;
	}
	CHECK_OK(t_stream(&s));
	CHECK_OK(accel_event_create(NULL, 0, &ev));
	CHECK_OK(t_gate(s, &gate));
	CHECK_OK(accel_event_record(ev, s));
	for (n = 0; n < 4096; n++) {
		ret = accel_event_export_fd(ev, &fds[n]);
		if (ret)
			break;
	}
	CHECK_RET(ret, 0);
	CHECK_RET(accel_event_export_fd(ev, &fds[4096]), -ENOSPC);
	CHECK_OK(t_gate_open(gate));
	CHECK_OK(accel_stream_synchronize(s, ACCEL_TIMEOUT_INFINITE));
	for (i = 0; i < n; i++) {
		CHECK(readable(fds[i], HANG_MS));
		close(fds[i]);
	}
	/* Done ones no longer count. */
	CHECK_OK(accel_event_export_fd(ev, &fds[0]));
	close(fds[0]);
	return T_PASS;
}

/*
 * The child: its own context, a gated record exported and sent to the
 * parent; then, on the parent's word, it opens the gate ('o') and waits,
 * or it just waits to be killed ('k').
 */
static void producer_child(int sock)
{
	accel_context *ctx = NULL;
	accel_event_t gate, ev;
	accel_stream_t s;
	char cmd = 0;
	int fd;

	if (accel_context_create(&ctx, 0) ||
	    accel_stream_create(ctx, 0, 0, &s) ||
	    accel_event_create(ctx, 0, &ev) ||
	    accel_event_create(ctx, ACCEL_EVENT_HOST, &gate) ||
	    accel_stream_wait_value(s, gate, 1, 0) ||
	    accel_event_record(ev, s) || accel_event_export_fd(ev, &fd) ||
	    send_fd(sock, fd))
		_exit(2);
	if (read(sock, &cmd, 1) != 1)
		_exit(3);
	if (cmd == 'o') {
		if (accel_event_signal(gate, 1, 0) ||
		    accel_stream_synchronize(s, ACCEL_TIMEOUT_INFINITE))
			_exit(4);
		/* Stay until the parent saw it. */
		if (read(sock, &cmd, 1) < 0)
			_exit(5);
		_exit(0);
	}
	pause();
	_exit(6);
}

/*
 * The current context of a test that forks: T_PASS, or T_SKIP under the
 * sanitizers whose children hang after a threaded fork (see fork.c) and
 * with the CUDA backend, which does not survive fork().
 */
static int fork_ctx(void)
{
	const char *backend = "";

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
	printf("# the sanitizer's allocator is not fork-safe with threads\n");
	return T_SKIP;
#endif
	CHECK(t_ctx());
	CHECK_OK(accel_context_get_backend(NULL, &backend));
	return strcmp(backend, "cuda") ? T_PASS : T_SKIP;
}

static int cross_process(bool kill_it)
{
	accel_event_t imp = NULL;
	accel_stream_t s;
	int sv[2], fd, status, ret;
	bool early;
	pid_t pid;

	ret = fork_ctx();
	if (ret != T_PASS)
		return ret;
	CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0);
	pid = fork();
	CHECK(pid >= 0);
	if (!pid) {
		close(sv[0]);
		producer_child(sv[1]);
	}
	close(sv[1]);
	fd = recv_fd(sv[0]);
	CHECK(fd >= 0);
	CHECK(!readable(fd, 0));
	CHECK_OK(accel_stream_create(NULL, 0, 0, &s));
	/*
	 * Over the module any process imports a pending export; in process
	 * only this process's (another's is polled, then imported done).
	 */
	early = !inproc();
	if (early) {
		CHECK_OK(accel_event_import_fd(NULL, fd, &imp));
		CHECK_OK(accel_stream_wait_event(s, imp, 0));
		CHECK_RET(accel_event_query(imp), -EAGAIN);
	} else {
		CHECK_RET(accel_event_import_fd(NULL, fd, &imp), -EINVAL);
	}
	if (kill_it) {
		CHECK(kill(pid, SIGKILL) == 0);
		CHECK(waitpid(pid, &status, 0) == pid);
		CHECK(WIFSIGNALED(status));
	} else {
		CHECK(write(sv[0], "o", 1) == 1);
	}
	CHECK(readable(fd, HANG_MS));
	if (!early)
		CHECK_OK(accel_event_import_fd(NULL, fd, &imp));
	if (kill_it) {
		CHECK_RET(accel_event_synchronize(imp, ACCEL_TIMEOUT_INFINITE),
			  -EIO);
		if (early)
			CHECK_RET(accel_stream_synchronize(s,
						ACCEL_TIMEOUT_INFINITE), -EIO);
	} else {
		CHECK_OK(accel_event_synchronize(imp, ACCEL_TIMEOUT_INFINITE));
		CHECK_OK(accel_stream_synchronize(s, ACCEL_TIMEOUT_INFINITE));
		CHECK(write(sv[0], "d", 1) == 1);
		CHECK(waitpid(pid, &status, 0) == pid);
		CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	}
	close(fd);
	close(sv[0]);
	return T_PASS;
}

static int cross_process_done(void)
{
	return cross_process(false);
}

static int cross_process_killed(void)
{
	return cross_process(true);
}

/*
 * An export inherited by fork(): the child (with a context of its own)
 * waits until the descriptor is readable, imports it and finds the point
 * done once the parent's stream passed it, never pending forever.
 */
static int inherited_by_fork(void)
{
	accel_event_t gate, ev;
	accel_stream_t s;
	int fd, status, ret;
	pid_t pid;

	ret = fork_ctx();
	if (ret != T_PASS)
		return ret;
	CHECK_OK(pending_point(NULL, &s, &gate, &ev));
	CHECK_OK(accel_event_export_fd(ev, &fd));
	fflush(stdout);
	pid = fork();
	CHECK(pid >= 0);
	if (!pid) {
		accel_context *c;
		accel_event_t imp;

		alarm(30);
		if (accel_context_create(&c, 0))
			_exit(2);
		if (!readable(fd, HANG_MS))
			_exit(3);
		if (accel_event_import_fd(c, fd, &imp))
			_exit(4);
		if (accel_event_synchronize(imp, 10ULL * T_SEC))
			_exit(5);
		_exit(0);
	}
	CHECK_OK(accel_event_signal(gate, 1, 0));
	CHECK_OK(accel_stream_synchronize(s, ACCEL_TIMEOUT_INFINITE));
	CHECK(waitpid(pid, &status, 0) == pid);
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		printf("# child: %s %d\n", WIFEXITED(status) ? "step" : "signal",
		       WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
		return T_FAIL;
	}
	close(fd);
	return T_PASS;
}

/*
 * -ENFILE: the system's file table is full. Only in the test VM
 * (ACCEL_TEST_VM=1, as root): a child makes a context over the transport
 * under test and one in process, each with a point pending, drops
 * CAP_SYS_ADMIN (setuid to nobody), and the parent lowers fs.file-max
 * to 0, below the files in use (the kernel's first check reads an
 * approximate count), until the child tried; then the exports and the
 * in-process eventfd work as if nothing happened. On any other machine a
 * test must not change a system setting: skipped.
 */
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

struct enfile_side {
	accel_context *ctx;
	accel_stream_t s;
	accel_event_t gate, ev;
	int xfd;
};

static int enfile_side_init(struct enfile_side *e)
{
	int ret = accel_context_create(&e->ctx, 0);

	if (!ret)
		ret = accel_stream_create(e->ctx, 0, 0, &e->s);
	if (!ret)
		ret = gate_on(e->ctx, e->s, &e->gate);
	if (!ret)
		ret = accel_event_create(e->ctx, 0, &e->ev);
	if (!ret)
		ret = accel_event_record(e->ev, e->s);
	return ret;
}

/* Exit status: 0, or the step that went wrong. */
static int enfile_child(int ready, int go)
{
	struct enfile_side k, ip;
	char c;
	int fd;

	alarm(60);
	/* k: the transport under test; ip: in process. */
	if (enfile_side_init(&k))
		return 2;
	setenv("ACCEL_TRANSPORT", "inproc", 1);
	if (enfile_side_init(&ip))
		return 3;
	if (setgid(65534) || setuid(65534))
		return 4;
	if (write(ready, "r", 1) != 1 || read(go, &c, 1) != 1)
		return 5;
	/* fs.file-max is 0, below the files in use (the parent restores it). */
	if (accel_event_export_fd(k.ev, &k.xfd) != -ENFILE)
		return 10;
	if (accel_event_export_fd(ip.ev, &ip.xfd) != -ENFILE)
		return 11;
	if (accel_context_get_fd(ip.ctx) != -ENFILE)
		return 12;
	if (write(ready, "d", 1) != 1 || read(go, &c, 1) != 1)
		return 6;
	/* Restored: nothing was left behind, everything works. */
	if (accel_event_export_fd(k.ev, &k.xfd) ||
	    accel_event_export_fd(ip.ev, &ip.xfd) || readable(k.xfd, 0) ||
	    readable(ip.xfd, 0))
		return 13;
	fd = accel_context_get_fd(ip.ctx);
	if (fd < 0 || accel_context_get_fd(ip.ctx) != fd)
		return 14;
	if (accel_event_signal(k.gate, 1, 0) ||
	    accel_event_signal(ip.gate, 1, 0) || !readable(k.xfd, HANG_MS) ||
	    !readable(ip.xfd, HANG_MS) || !readable(fd, HANG_MS))
		return 15;
	return 0;
}

static int enfile(void)
{
	char saved[64] = "", c;
	int ready[2], go[2], status, fd, lowered = 0, restored = 0;
	const char *vm = getenv("ACCEL_TEST_VM");
	ssize_t n;
	pid_t pid;

	if (!vm || strcmp(vm, "1") || geteuid()) {
		printf("# lowers fs.file-max: only as root in the test VM (ACCEL_TEST_VM=1)\n");
		return T_SKIP;
	}
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
	printf("# the sanitizer's allocator is not fork-safe with threads\n");
	return T_SKIP;
#endif
	fd = open(FILE_MAX, O_RDONLY | O_CLOEXEC);
	CHECK(fd >= 0);
	n = read(fd, saved, sizeof(saved) - 1);
	close(fd);
	CHECK(n > 0);
	saved[n] = 0;
	CHECK(pipe(ready) == 0);
	CHECK(pipe(go) == 0);
	fflush(stdout);
	pid = fork();
	CHECK(pid >= 0);
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
	CHECK(waitpid(pid, &status, 0) == pid);
	close(ready[0]);
	if (restored) {
		printf("# fs.file-max not restored to %s", saved);
		return T_FAIL;
	}
	CHECK(lowered);
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		printf("# child: %s %d\n", WIFEXITED(status) ? "step" : "signal",
		       WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
		return T_FAIL;
	}
	return T_PASS;
}

static const struct t_case cases[] = {
	T(context_fd_counts_retirements),
	T(export_pending_then_done),
	T(export_done_at_once),
	T(export_failed_point),
	T(producer_destroyed),
	T(close_orders),
	T(epoll_loop),
	T(errors),
	T(too_many_pending),
	T(cross_process_done),
	T(cross_process_killed),
	T(inherited_by_fork),
	T(enfile),
};

int main(void)
{
	return t_run(cases, sizeof(cases) / sizeof(cases[0]));
}
