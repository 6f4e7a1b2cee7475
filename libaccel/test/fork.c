// SPDX-License-Identifier: MIT
/*
 * fork() while other threads are inside libaccel: the child gets none of
 * the library's locks held (pthread_atfork handlers), so it can always
 * make the calls libaccel(7) allows it: calls on the parent's objects
 * return -EACCES at once, destroying an inherited context returns
 * -EACCES without joining the parent's threads, and its own context works.
 */
#include <signal.h>
#include <sys/wait.h>

#include "helpers.h"

#define BUSY_THREADS	4
#define FORKS		150	/* ACCEL_TEST_FORKS overrides it */
#define CHILD_ALARM_S	20

struct shared {
	accel_context *ctx;
	accel_stream_t parent_stream;
	void *dev;
	char *pinned;
	int stop;
	int failed;
	int next;		/* each thread copies into its own device range */
};

static void hostfn_noop(void *arg)
{
	(void)arg;
}

/* Pinned and pageable copies both ways, host functions, a synchronize. */
static void *busy(void *arg)
{
	struct shared *sh = arg;
	char page[8192], src[8192];
	accel_stream_t s;
	char *dev = (char *)sh->dev +
		    (size_t)__atomic_add_fetch(&sh->next, 1, __ATOMIC_RELAXED) *
		    (128 << 10);

	if (accel_stream_create(sh->ctx, 0, 0, &s)) {
		sh->failed = 1;
		return NULL;
	}
	memset(src, 7, sizeof(src));
	while (!__atomic_load_n(&sh->stop, __ATOMIC_RELAXED)) {
		if (accel_memcpy_async(s, dev, sh->pinned, 65536,
				       ACCEL_MEMCPY_H2D) ||
		    accel_memcpy_async(s, page, dev, sizeof(page),
				       ACCEL_MEMCPY_D2H) ||
		    accel_memcpy_async(s, dev, src, sizeof(src),
				       ACCEL_MEMCPY_H2D) ||
		    accel_launch_host_func(s, hostfn_noop, NULL) ||
		    accel_stream_synchronize(s, ACCEL_TIMEOUT_INFINITE))
			sh->failed = 1;
	}
	accel_stream_destroy(s);
	return NULL;
}

/* The child: exit status 0, or which step went wrong. */
static int child(struct shared *sh)
{
	char buf[4096], back[4096];
	accel_context *c;
	accel_stream_t s;
	const char *name;
	void *d;
	int n;

	alarm(CHILD_ALARM_S);	/* a hang is a failure, not a stuck suite */
	/* The parent's objects: refused at once, whatever its threads held. */
	if (accel_memcpy_async(sh->parent_stream, sh->dev, sh->pinned, 64,
			       ACCEL_MEMCPY_H2D) != -EACCES)
		return 10;
	if (accel_memcpy_async(sh->parent_stream, sh->dev, buf, sizeof(buf),
			       ACCEL_MEMCPY_H2D) != -EACCES)
		return 11;
	if (accel_stream_synchronize(sh->parent_stream, 0) != -EACCES)
		return 12;
	/* Context-wide calls and queries on it too. */
	if (accel_context_set_current(sh->ctx) != -EACCES)
		return 13;
	if (accel_device_get_count(sh->ctx, &n) != -EACCES)
		return 14;
	if (accel_context_get_backend(sh->ctx, &name) != -EACCES)
		return 15;
	/* Its own context: create, copy both ways through staging, destroy. */
	if (accel_context_create(&c, 0))
		return 20;
	if (accel_stream_create(c, 0, 0, &s) || accel_malloc(c, &d, 4096))
		return 21;
	t_fill(buf, sizeof(buf), 5);
	memset(back, 0, sizeof(back));
	if (accel_memcpy_async(s, d, buf, sizeof(buf), ACCEL_MEMCPY_H2D) ||
	    accel_memcpy_async(s, back, d, sizeof(back), ACCEL_MEMCPY_D2H) ||
	    accel_stream_synchronize(s, ACCEL_TIMEOUT_INFINITE))
		return 22;
	if (!t_check_fill(back, sizeof(back), 5))
		return 23;
	if (accel_context_destroy(c))
		return 24;
	/* The inherited context: -EACCES, no join of the parent's threads. */
	if (accel_context_destroy(sh->ctx) != -EACCES)
		return 30;
	return 0;
}

static int fork_while_threads_copy(void)
{
	struct shared sh = { 0 };
	pthread_t th[BUSY_THREADS];
	int i, status, bad = 0;
	char page[256];
	pid_t pid;
	const char *backend = "";
	const char *env = getenv("ACCEL_TEST_FORKS");
	int forks = env && atoi(env) > 0 ? atoi(env) : FORKS;

#ifdef __SANITIZE_THREAD__
	/* TSan cannot run a child that starts threads after such a fork. */
	printf("# ThreadSanitizer does not support threads in a child of a multithreaded fork()\n");
	return T_SKIP;
#endif
#ifdef __SANITIZE_ADDRESS__
	/*
	 * Debian 12's libasan does not hold its allocator's lock across
	 * fork(): a child forked while another thread is in malloc hangs
	 * in ASan's own allocator (seen: every child thread waits in
	 * SizeClassAllocator64::GetFromAllocator). The plain build runs
	 * this test on the host and in the VM.
	 */
	printf("# AddressSanitizer's allocator is not fork-safe with threads\n");
	return T_SKIP;
#endif

	sh.ctx = t_ctx();
	CHECK(sh.ctx);
	CHECK_OK(accel_context_get_backend(sh.ctx, &backend));
	if (!strcmp(backend, "cuda"))
		return T_SKIP;	/* the CUDA backend does not survive fork() */
	CHECK_OK(accel_stream_create(sh.ctx, 0, 0, &sh.parent_stream));
	CHECK_OK(accel_malloc(sh.ctx, &sh.dev, 1 << 20));
	CHECK_OK(accel_host_alloc(sh.ctx, (void **)&sh.pinned, 1 << 20, 0));
	/* The staging pool and the host-function thread exist before forks. */
	CHECK_OK(accel_memcpy_async(sh.parent_stream, sh.dev, page,
				    sizeof(page), ACCEL_MEMCPY_H2D));
	CHECK_OK(accel_launch_host_func(sh.parent_stream, hostfn_noop, NULL));
	CHECK_OK(accel_stream_synchronize(sh.parent_stream,
					  ACCEL_TIMEOUT_INFINITE));
	for (i = 0; i < BUSY_THREADS; i++)
		CHECK(pthread_create(&th[i], NULL, busy, &sh) == 0);
	for (i = 0; i < forks; i++) {
		fflush(stdout);
		pid = fork();
		if (pid < 0) {
			bad++;
			break;
		}
		if (!pid)
			_exit(child(&sh));
		if (waitpid(pid, &status, 0) != pid) {
			bad++;
			continue;
		}
		if (WIFSIGNALED(status)) {
			printf("# fork %d: child killed by signal %d%s\n", i,
			       WTERMSIG(status),
			       WTERMSIG(status) == SIGALRM ? " (hung)" : "");
			bad++;
		} else if (WEXITSTATUS(status)) {
			printf("# fork %d: child failed at step %d\n", i,
			       WEXITSTATUS(status));
			bad++;
		}
	}
	__atomic_store_n(&sh.stop, 1, __ATOMIC_RELAXED);
	for (i = 0; i < BUSY_THREADS; i++)
		pthread_join(th[i], NULL);
	CHECK(!sh.failed);
	CHECK_RET(bad, 0);
	/* The parent's context still works, its threads included. */
	CHECK_OK(accel_memcpy_async(sh.parent_stream, sh.dev, page,
				    sizeof(page), ACCEL_MEMCPY_H2D));
	CHECK_OK(accel_launch_host_func(sh.parent_stream, hostfn_noop, NULL));
	CHECK_OK(accel_stream_synchronize(sh.parent_stream,
					  ACCEL_TIMEOUT_INFINITE));
	return T_PASS;
}

/*
 * Pinned host memory after fork(): the child has a private snapshot of
 * it. The child's writes reach neither the parent's buffer nor the copy
 * the parent queued from it, and the parent's writes after the fork do
 * not reach the child.
 */
#define SNAP_LEN	(64 << 10)

static int snapshot_child(unsigned char *h, int go)
{
	char c;

	alarm(CHILD_ALARM_S);
	/* The parent has changed its buffer's first byte by now. */
	if (read(go, &c, 1) != 1)
		return 40;
	if (!t_check_fill(h, SNAP_LEN, 3))
		return 41;	/* not the snapshot taken at fork() */
	memset(h, 0xee, SNAP_LEN);
	if (h[0] != 0xee || h[SNAP_LEN - 1] != 0xee)
		return 42;
	return 0;
}

static int fork_pinned_private(void)
{
	unsigned char *h, *out;
	accel_event_t gate;
	accel_stream_t s;
	int status, go[2];
	const char *backend = "";
	pid_t pid;
	void *d;

	CHECK(t_ctx());
	CHECK_OK(accel_context_get_backend(NULL, &backend));
	if (!strcmp(backend, "cuda"))
		return T_SKIP;	/* the CUDA backend does not survive fork() */
	CHECK_OK(t_gated_stream(NULL, &s, &gate));
	CHECK_OK(accel_malloc(NULL, &d, SNAP_LEN));
	CHECK_OK(accel_host_alloc(NULL, (void **)&h, SNAP_LEN, 0));
	CHECK_OK(accel_host_alloc(NULL, (void **)&out, SNAP_LEN, 0));
	memset(out, 0, SNAP_LEN);
	t_fill(h, SNAP_LEN, 3);
	/* Held back by the gate: they run after the child has written h. */
	CHECK_OK(accel_memcpy_async(s, d, h, SNAP_LEN, ACCEL_MEMCPY_H2D));
	CHECK_OK(accel_memcpy_async(s, out, d, SNAP_LEN, ACCEL_MEMCPY_D2H));
	CHECK(pipe(go) == 0);
	fflush(stdout);
	pid = fork();
	CHECK(pid >= 0);
	if (!pid)
		_exit(snapshot_child(h, go[0]));
	/* Written after the fork: the child's snapshot must not see it. */
	h[0] = ~h[0];
	CHECK(write(go[1], "g", 1) == 1);
	CHECK(waitpid(pid, &status, 0) == pid);
	h[0] = ~h[0];
	close(go[0]);
	close(go[1]);
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		printf("# child: status %#x\n", status);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	/* The parent's buffer and its queued copy keep the parent's bytes. */
	CHECK(t_check_fill(h, SNAP_LEN, 3));
	CHECK_OK(t_gate_open(gate));
	CHECK_OK(accel_stream_synchronize(s, ACCEL_TIMEOUT_INFINITE));
	CHECK(t_check_fill(out, SNAP_LEN, 3));
	CHECK_OK(accel_host_free(out));
	CHECK_OK(accel_host_free(h));
	CHECK_OK(accel_free(d));
	CHECK_OK(accel_stream_destroy(s));
	return T_PASS;
}

/*
 * Past ACCEL_FORK_COPY_MAX_MB nothing is copied: the child has the range
 * without access (its first touch is a SIGSEGV), the parent keeps its bytes.
 */
static int fork_pinned_over_limit(void)
{
	const char *backend = "";
	unsigned char *h;
	int status;
	pid_t pid;

	CHECK(t_ctx());
	CHECK_OK(accel_context_get_backend(NULL, &backend));
	if (!strcmp(backend, "cuda"))
		return T_SKIP;	/* the CUDA backend does not survive fork() */
	CHECK_OK(accel_host_alloc(NULL, (void **)&h, SNAP_LEN, 0));
	t_fill(h, SNAP_LEN, 5);
	CHECK(!setenv("ACCEL_FORK_COPY_MAX_MB", "0", 1));
	fflush(stdout);
	pid = fork();
	if (!pid) {
		alarm(CHILD_ALARM_S);
		/* The kernel's default action, not a sanitizer's handler. */
		signal(SIGSEGV, SIG_DFL);
		/* Must not be reached: the read faults. */
		_exit(h[SNAP_LEN / 2] == 0x55 ? 43 : 44);
	}
	unsetenv("ACCEL_FORK_COPY_MAX_MB");
	CHECK(pid > 0);
	CHECK(waitpid(pid, &status, 0) == pid);
	if (!WIFSIGNALED(status))
		printf("# child: status %#x\n", status);
	CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV);
	CHECK(t_check_fill(h, SNAP_LEN, 5));
	CHECK_OK(accel_host_free(h));
	return T_PASS;
}

T_MAIN(T(fork_while_threads_copy), T(fork_pinned_private),
       T(fork_pinned_over_limit))
