/* SPDX-License-Identifier: MIT */
/*
 * Shared helpers of the libaccel tests: a tiny TAP harness (kselftest
 * format and exit codes: 0 pass, 1 fail, 4 skip), per-test contexts that
 * are torn down after each test, and deterministic stream gates.
 */
#ifndef LIBACCEL_TEST_HELPERS_H
#define LIBACCEL_TEST_HELPERS_H

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "libaccel.h"

#define T_PASS	0
#define T_FAIL	1
#define T_SKIP	77	/* liburing's skip status; see runtests.sh */

struct t_case {
	const char *name;
	int (*fn)(void);
};

#define T(fn)	{ #fn, fn }

#define CHECK(cond) do {						\
	if (!(cond)) {							\
		printf("# %s:%d: check failed: %s\n", __FILE__,	\
		       __LINE__, #cond);				\
		return T_FAIL;						\
	}								\
} while (0)

#define CHECK_RET(expr, want) do {					\
	int _r = (expr), _w = (want);					\
	if (_r != _w) {							\
		printf("# %s:%d: %s = %d (%s), want %d (%s)\n",		\
		       __FILE__, __LINE__, #expr, _r,			\
		       accel_strerror(_r), _w, accel_strerror(_w));	\
		return T_FAIL;						\
	}								\
} while (0)

#define CHECK_OK(expr)	CHECK_RET(expr, 0)

/*
 * The rule for the waits of a host function or a stream callback (they
 * run on the thread that runs the stream's queue): the waits @wait_a and
 * @wait_b, which would block (on its own stream, or on work that can only
 * end after it), returned -EDEADLK, and the poll @poll (timeout 0) -ETIME.
 */
#define CHECK_FN_WAITS(wait_a, wait_b, poll) do {			\
	CHECK_RET(wait_a, -EDEADLK);					\
	CHECK_RET(wait_b, -EDEADLK);					\
	CHECK_RET(poll, -ETIME);					\
} while (0)

#define T_SEC	1000000000ULL

/* Contexts a test opened; destroyed after it, whatever its outcome. */
static accel_context *t_ctxs[16];
static int t_nctx;

static inline accel_context *t_ctx(void)
{
	accel_context *ctx = NULL;
	int ret = accel_context_create(&ctx, 0);

	if (ret) {
		printf("# accel_context_create: %s\n", accel_strerror(ret));
		return NULL;
	}
	if (t_nctx < 16)
		t_ctxs[t_nctx++] = ctx;
	return ctx;
}

static inline void t_ctx_cleanup(void)
{
	while (t_nctx)
		accel_context_destroy(t_ctxs[--t_nctx]);
}

/*
 * The number @fmt (one %ld conversion) reads from the first line of the
 * file @path it fits (a /proc, sysfs or debugfs file), or -1.
 */
static inline long t_read_long(const char *path, const char *fmt)
{
	char line[256];
	long v = -1;
	FILE *f = fopen(path, "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, fmt, &v) == 1)
			break;
	fclose(f);
	return v;
}

/* @n bytes of pinned host memory of the current context, or NULL. */
static inline unsigned char *t_host_buf(size_t n)
{
	void *p = NULL;

	if (accel_host_alloc(NULL, &p, n, 0))
		return NULL;
	return p;
}

/*
 * Unmap @len bytes at @p, atomically replaced by an inaccessible mapping
 * so that nothing else (a sanitizer's allocator, another thread's mmap)
 * lands there meanwhile: to the pages, the same as munmap. 0 or -1.
 */
static inline int t_punch(void *p, size_t len)
{
	return mmap(p, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
		    -1, 0) == p ? 0 : -1;
}

/*
 * The hook @name of the stand-in libcudart (test/fake) that ACCEL_CUDART
 * names, or NULL. @load: load the library if it is not loaded yet; else
 * only a library already loaded (by libaccel's cuda backend) answers.
 */
static inline void *t_fake_hook(const char *name, int load)
{
	const char *lib = getenv("ACCEL_CUDART");
	void *h = lib ? dlopen(lib, load ? RTLD_NOW : RTLD_NOW | RTLD_NOLOAD) :
			NULL;

	return h ? dlsym(h, name) : NULL;
}

/*
 * Run @fn(@arg) in a forked child; its exit status, or -1 if it crashed
 * (a status other than 0 is printed as a TAP comment).
 */
static inline int t_in_child(int (*fn)(void *), void *arg)
{
	int status;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		int ret = fn(arg);

		fflush(stdout);
		_exit(ret);
	}
	if (waitpid(pid, &status, 0) != pid)
		return -1;
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		printf("# child: status %#x\n", status);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* Whether this process's backend survives fork() (CUDA's does not). */
static inline bool t_backend_forks(accel_context *ctx)
{
	const char *backend = "";

	return !accel_context_get_backend(ctx, &backend) &&
	       strcmp(backend, "cuda");
}

/*
 * A gate: a host event the stream waits on, so that work queued behind it
 * is deterministically pending until t_gate_open().
 */
static inline int t_gate(accel_stream_t s, accel_event_t *gate)
{
	int ret = accel_event_create(NULL, ACCEL_EVENT_HOST, gate);

	if (ret)
		return ret;
	return accel_stream_wait_value(s, *gate, 1, 0);
}

static inline int t_gate_open(accel_event_t gate)
{
	return accel_event_signal(gate, 1, 0);
}

/* Open @gate and synchronize @s, @timeout_ns at most: 0 or -errno. */
static inline int t_gate_drain(accel_stream_t s, accel_event_t gate,
			       uint64_t timeout_ns)
{
	int ret = t_gate_open(gate);

	return ret ? ret : accel_stream_synchronize(s, timeout_ns);
}

/*
 * Fail @s: a gate on it signalled with an error. Returns what synchronizing
 * @s then reports, -EIO once the stream failed (or the -errno of a step).
 */
static inline int t_fail_stream(accel_stream_t s)
{
	accel_event_t gate;
	int ret = t_gate(s, &gate);

	if (!ret)
		ret = accel_event_signal(gate, 1, ACCEL_EVENT_SIGNAL_ERROR);
	if (!ret)
		ret = accel_stream_synchronize(s, 10 * T_SEC);
	return ret;
}

/*
 * A stream held back by a gate (t_gate), in @ctx or, when NULL, in a new
 * context of t_ctx(). 0 or -errno.
 */
static inline int t_gated_stream(accel_context *ctx, accel_stream_t *s,
				 accel_event_t *gate)
{
	int ret;

	if (!ctx && !t_ctx())
		return -ENODEV;
	ret = accel_stream_create(ctx, 0, 0, s);
	if (!ret)
		ret = t_gate(*s, gate);
	return ret;
}

static inline void t_fill(void *p, size_t n, unsigned int seed)
{
	unsigned char *b = p;
	size_t i;

	for (i = 0; i < n; i++)
		b[i] = (unsigned char)(seed * 131 + i * 7 + (i >> 8));
}

static inline int t_check_fill(const void *p, size_t n, unsigned int seed)
{
	const unsigned char *b = p;
	size_t i;

	for (i = 0; i < n; i++)
		if (b[i] != (unsigned char)(seed * 131 + i * 7 + (i >> 8)))
			return 0;
	return 1;
}

/*
 * The start of a lifetime test: @n bytes of @src filled with t_fill(@seed),
 * then their H2D copy into @dev queued on @s behind a new gate. 0 or -errno.
 */
static inline int t_gated_h2d(accel_stream_t s, void *dev, void *src,
			      size_t n, unsigned int seed, accel_event_t *gate)
{
	int ret;

	t_fill(src, n, seed);
	ret = t_gate(s, gate);
	if (!ret)
		ret = accel_memcpy_async(s, dev, src, n, ACCEL_MEMCPY_H2D);
	return ret;
}

/*
 * accel_host_register(NULL, p, 3 pages, @flags) over a fresh mapping whose
 * middle page is a hole; *@pp is its start (the two outer pages are the
 * caller's to unmap). Another thread of the process (the library's own,
 * say) may map a page into the hole between the munmap and the call; then
 * the call proved nothing, msync(2) tells (it fails with ENOMEM on a
 * hole), and it is made again over a fresh hole. -EAGAIN if that kept
 * happening.
 */
static inline int t_register_over_hole(unsigned char **pp, unsigned int flags)
{
	long ps = sysconf(_SC_PAGESIZE);
	unsigned char *p;
	int tries, ret;

	for (tries = 0; tries < 20; tries++) {
		p = mmap(NULL, 3 * ps, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED || munmap(p + ps, ps))
			return -EINVAL;
		ret = accel_host_register(NULL, p, 3 * ps, flags);
		if (msync(p + ps, ps, MS_ASYNC) && errno == ENOMEM) {
			*pp = p;
			return ret;
		}
		/* Not ours to unmap: only our two pages go. */
		if (!ret)
			accel_host_unregister(p, 0);
		munmap(p, ps);
		munmap(p + 2 * ps, ps);
	}
	return -EAGAIN;
}

/* A stream on a new context of t_ctx(), its current one. 0 or -errno. */
static inline int t_stream(accel_stream_t *s)
{
	if (!t_ctx())
		return -ENODEV;
	return accel_stream_create(NULL, 0, 0, s);
}

/* Two streams of one new context, as t_stream(). 0 or -errno. */
static inline int t_two_streams(accel_stream_t *a, accel_stream_t *b)
{
	int ret = t_stream(a);

	return ret ? ret : accel_stream_create(NULL, 0, 0, b);
}

/* t_stream() and @n bytes of device memory. 0 or -errno. */
static inline int t_dev_setup(size_t n, accel_stream_t *s, void **dev)
{
	int ret = t_stream(s);

	if (!ret)
		ret = accel_malloc(NULL, dev, n);
	return ret;
}

/*
 * The usual copy setup on the current context: a stream, @n bytes of
 * device memory and @n bytes of pinned host memory. 0 or -errno.
 */
static inline int t_copy_setup(size_t n, accel_stream_t *s, void **dev,
			       unsigned char **host)
{
	int ret = t_dev_setup(n, s, dev);

	if (!ret)
		ret = accel_host_alloc(NULL, (void **)host, n, 0);
	return ret;
}

/*
 * A host function's ordering test, around the function under test: on a
 * new stream of a new context, t_byte_trip_out() copies 7 from pinned
 * h[0] H2D into device d[0] and D2H into pinned out[0]; the test queues
 * its function, which must see that 7 in out[0] and may write there;
 * t_byte_trip_back() copies out[0] H2D and D2H back into h[0] and
 * synchronizes, so that h[0] is what the function wrote. 0 or -errno.
 */
struct t_byte_trip {
	accel_stream_t s;
	unsigned char *h, *out, *d;
};

static inline int t_byte_trip_out(struct t_byte_trip *t)
{
	int ret = t_copy_setup(1, &t->s, (void **)&t->d, &t->h);

	if (!ret)
		ret = accel_host_alloc(NULL, (void **)&t->out, 1, 0);
	if (ret)
		return ret;
	t->h[0] = 7;
	ret = accel_memcpy_async(t->s, t->d, t->h, 1, ACCEL_MEMCPY_H2D);
	if (!ret)
		ret = accel_memcpy_async(t->s, t->out, t->d, 1,
					 ACCEL_MEMCPY_D2H);
	return ret;
}

static inline int t_byte_trip_back(struct t_byte_trip *t)
{
	int ret = accel_memcpy_async(t->s, t->d, t->out, 1, ACCEL_MEMCPY_H2D);

	if (!ret)
		ret = accel_memcpy_async(t->s, t->h, t->d, 1, ACCEL_MEMCPY_D2H);
	if (!ret)
		ret = accel_stream_synchronize(t->s, ACCEL_TIMEOUT_INFINITE);
	return ret;
}

/*
 * Set by tests that fork children which create their own contexts: the
 * parent must not probe, as a CUDA backend does not survive fork().
 */
static int t_no_probe;

/*
 * Set by a program whose cases make settings that must not outlive a case
 * (the staging programs: the pool's environment, staging_case_reset()):
 * t_run() calls it after each case, whatever the case's outcome.
 */
static void (*t_case_reset)(void);

static inline int t_run(const struct t_case *cases, size_t n)
{
	accel_context *probe = NULL;
	int pass = 0, fail = 0, skip = 0, ret = 0;
	size_t i;

	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("TAP version 13\n");
	if (!t_no_probe)
		ret = accel_context_create(&probe, 0);
	if (ret == -ENODEV || ret == -ENOENT || ret == -EPROTO) {
		printf("1..1\nok 1 transport # SKIP no accelstream transport or backend: %s%s%s\n",
		       accel_strerror(ret),
		       *accel_last_error_string() ? ": " : "",
		       accel_last_error_string());
		printf("# Totals: pass:0 fail:0 xfail:0 xpass:0 skip:1 error:0\n");
		return T_SKIP;
	}
	if (!ret && probe)
		accel_context_destroy(probe);
	printf("1..%zu\n", n);
	for (i = 0; i < n; i++) {
		ret = cases[i].fn();
		/*
		 * A log callback the case installed may point into its stack
		 * (staging_trace_begin()): gone before anything else logs,
		 * even when the case failed before removing it.
		 */
		accel_set_log_fn(NULL, NULL);
		if (t_case_reset)
			t_case_reset();
		t_ctx_cleanup();
		if (ret == T_PASS) {
			pass++;
			printf("ok %zu %s\n", i + 1, cases[i].name);
		} else if (ret == T_SKIP) {
			skip++;
			printf("ok %zu %s # SKIP\n", i + 1, cases[i].name);
		} else {
			fail++;
			printf("not ok %zu %s\n", i + 1, cases[i].name);
		}
	}
	printf("# Totals: pass:%d fail:%d xfail:0 xpass:0 skip:%d error:0\n",
	       pass, fail, skip);
	if (fail)
		return T_FAIL;
	return pass ? T_PASS : T_SKIP;
}

/* A program's main(): the cases, run by @run (t_run() or one around it). */
#define T_MAIN_RUN(run, ...)						\
int main(void)								\
{									\
	static const struct t_case cases[] = { __VA_ARGS__ };		\
	return run(cases, sizeof(cases) / sizeof(cases[0]));		\
}

#define T_MAIN(...)	T_MAIN_RUN(t_run, __VA_ARGS__)

#endif /* LIBACCEL_TEST_HELPERS_H */
