// SPDX-License-Identifier: MIT
/*
 * The staging pool's pinned memory: bounded whatever the queue (behind a
 * gate), grown ahead and reused, each chunk registered with CUDA once,
 * within RLIMIT_MEMLOCK for an unprivileged user, and every pin given back
 * when the process is killed mid-pipeline.
 */
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "staging_helpers.h"

static long ps;

/* Pinned and locked memory of this process, bytes (VmPin + VmLck). */
static long pinned_now(void)
{
	char line[256];
	long kb, sum = -1;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "VmPin: %ld kB", &kb) == 1 ||
		    sscanf(line, "VmLck: %ld kB", &kb) == 1)
			sum = (sum < 0 ? 0 : sum) + kb * 1024;
	}
	fclose(f);
	return sum;
}

/*
 * Whether mlock(2) shows in VmLck: the sanitizers intercept mlock and do
 * nothing, so over inproc under ASan or TSan nothing pinned can be seen
 * (nor a memlock limit hit). The module's pins show in VmPin regardless.
 */
static int pins_observable(void)
{
	const char *tp = getenv("ACCEL_TRANSPORT");
	long before, after;
	void *p;
	int ok;

	if (tp && !strcmp(tp, "kernel"))
		return 1;
	p = mmap(NULL, ps, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return 0;
	before = pinned_now();
	ok = !mlock(p, ps);
	after = pinned_now();
	munlock(p, ps);
	munmap(p, ps);
	return ok && after > before;
}

static long mem_available(void)
{
	long kb = t_read_long("/proc/meminfo", "MemAvailable: %ld kB");

	return kb < 0 ? -1 : kb * 1024;
}

/*
 * Bounded: pageable copies queued behind a gate pin no more than the pool
 * (4 chunks of 4 MiB and the ring of small copies, one chunk more),
 * however many; the queue's bytes wait in ordinary memory. Read from what
 * the process has pinned and locked (VmPin over the module, VmLck over
 * inproc).
 */
static int pinned_bounded_behind_gate(void)
{
	const size_t pool = (4 + 1) * 4 * MB;
	long avail = mem_available(), before, after, count = 4000;
	unsigned char *src, *out;
	accel_event_t gate;
	accel_stream_t s;
	unsigned char *dev;
	long i;

	if (!pins_observable()) {
		printf("# mlock does not show in VmLck here (a sanitizer)\n");
		return T_SKIP;
	}
	CHECK(!staging_env("4096", "4"));
	/* 4000 as asked where memory allows; the queue's bytes are real. */
	if (avail > 0 && count > avail / 4 / (long)MB)
		count = avail / 4 / (long)MB;
	CHECK(count >= 64);
	printf("# %ld queued 1 MiB copies\n", count);
	CHECK_OK(t_stream(&s));
	CHECK_OK(accel_malloc(NULL, (void **)&dev, MB));
	CHECK_OK(accel_host_alloc(NULL, (void **)&out, MB, 0));
	src = malloc(MB);
	CHECK(src);
	before = pinned_now();
	CHECK(before >= 0);
	CHECK_OK(t_gate(s, &gate));
	for (i = 0; i < count; i++) {
		*(long *)src = i;
		t_fill(src + sizeof(long), 64, (unsigned int)i);
		CHECK_OK(accel_memcpy_async(s, dev, src, MB, ACCEL_MEMCPY_H2D));
	}
	after = pinned_now();
	printf("# pinned before %ld, after queueing %ld bytes\n", before, after);
	CHECK(after - before <= (long)pool);
	CHECK_OK(t_gate_open(gate));
	CHECK_OK(accel_memcpy_async(s, out, dev, MB, ACCEL_MEMCPY_D2H));
	CHECK_OK(accel_stream_synchronize(s, 300 * T_SEC));
	CHECK(*(long *)out == count - 1);
	CHECK(t_check_fill(out + sizeof(long), 64, (unsigned int)(count - 1)));
	CHECK(pinned_now() - before <= (long)pool);
	free(src);
	return T_PASS;
}

/*
 * A parallel H2D that pinned chunks for its pieces pins as many again
 * before it returns (for the next call to fill while its pieces are on
 * the wire), within ACCEL_STAGING_CHUNKS: 64 KiB chunks, 3 copying
 * threads, a copy of three chunks pins 6 chunks, the pool's most, and the
 * next calls pin nothing.
 */
static int pool_grows_ahead(void)
{
	const size_t chunk = 64 * KB, n = 3 * chunk;
	unsigned char *src, *dev, *out;
	long base, after;
	accel_stream_t s;
	int round;

	if (!pins_observable()) {
		printf("# mlock does not show in VmLck here (a sanitizer)\n");
		return T_SKIP;
	}
	CHECK(!staging_env("64", "6"));
	CHECK(!setenv("ACCEL_STAGING_THREADS", "3", 1));
	CHECK(t_ctx());
	CHECK_OK(accel_stream_create(NULL, 0, 0, &s));
	CHECK_OK(accel_malloc(NULL, (void **)&dev, n));
	CHECK_OK(accel_host_alloc(NULL, (void **)&out, n, 0));
	src = malloc(n);
	CHECK(src);
	base = pinned_now();
	t_fill(src, n, 3);
	CHECK_OK(accel_memcpy_async(s, dev, src, n, ACCEL_MEMCPY_H2D));
	after = pinned_now();
	printf("# pinned %ld bytes by the first copy\n", after - base);
	CHECK(after - base == (long)(6 * chunk));
	for (round = 0; round < 4; round++) {
		t_fill(src, n, (unsigned int)round + 4);
		CHECK_OK(accel_memcpy_async(s, dev, src, n, ACCEL_MEMCPY_H2D));
		memset(src, 0xee, n);
	}
	CHECK(pinned_now() == after);
	CHECK_OK(accel_memcpy_async(s, out, dev, n, ACCEL_MEMCPY_D2H));
	CHECK_OK(accel_stream_synchronize(s, 60 * T_SEC));
	CHECK(t_check_fill(out, n, 7));
	free(src);
	return T_PASS;
}

/* Reuse: round after round of large pageable copies pins nothing more. */
static int pool_reused(void)
{
	const size_t n = 5 * 64 * KB + 3;
	unsigned char *src, *dst, *dev;
	long base, first = -1, now;
	accel_stream_t s;
	int round, ret = T_FAIL;

	if (!pins_observable()) {
		printf("# mlock does not show in VmLck here (a sanitizer)\n");
		return T_SKIP;
	}
	if (staging_env("64", "2"))
		return T_FAIL;
	src = malloc(n);
	dst = malloc(n);
	if (!src || !dst || !t_ctx() || accel_stream_create(NULL, 0, 0, &s) ||
	    accel_malloc(NULL, (void **)&dev, n))
		goto out;
	base = pinned_now();
	for (round = 0; round < 6; round++) {
		t_fill(src, n, (unsigned int)round);
		if (accel_memcpy_async(s, dev, src, n, ACCEL_MEMCPY_H2D) ||
		    accel_memcpy_async(s, dst, dev, n, ACCEL_MEMCPY_D2H) ||
		    accel_stream_synchronize(s, 60 * T_SEC))
			goto out;
		if (!t_check_fill(dst, n, (unsigned int)round))
			goto out;
		now = pinned_now();
		/* Pinned once, kept: the chunks outlive the copies. */
		if (first < 0 && now <= base) {
			printf("# nothing kept pinned after the first round\n");
			goto out;
		}
		if (first < 0)
			first = now;
		if (now != first) {
			printf("# round %d: pinned %ld, after the first %ld\n",
			       round, now, first);
			goto out;
		}
	}
	ret = T_PASS;
out:
	free(src);
	free(dst);
	return ret;
}

/*
 * The cuda backend registers each chunk with CUDA once (the stand-in
 * libcudart counts): not once per copy, and not never (the bounce buffers
 * before the pool were never registered).
 */
static int chunks_cuda_registered_once(void)
{
	const size_t n = 5 * 64 * KB;
	long (*regs)(long *);
	unsigned char *src, *dev;
	long r0, r1, r2;
	accel_stream_t s;
	int i;

	regs = (long (*)(long *))t_fake_hook("fake_cuda_host_registrations", 0);
	if (!regs) {
		printf("# not over the stand-in libcudart\n");
		return T_SKIP;
	}
	CHECK(!staging_env("64", "3"));
	const char *backend = "";

	CHECK(t_ctx());
	CHECK_OK(accel_context_get_backend(NULL, &backend));
	if (strcmp(backend, "cuda"))
		return T_SKIP;
	CHECK_OK(accel_stream_create(NULL, 0, 0, &s));
	CHECK_OK(accel_malloc(NULL, (void **)&dev, n));
	src = malloc(n);
	CHECK(src);
	r0 = regs(NULL);
	for (i = 0; i < 3; i++)
		CHECK_OK(accel_memcpy_async(s, dev, src, n, ACCEL_MEMCPY_H2D));
	CHECK_OK(accel_stream_synchronize(s, 60 * T_SEC));
	r1 = regs(NULL);
	for (i = 0; i < 5; i++)
		CHECK_OK(accel_memcpy_async(s, dev, src, n, ACCEL_MEMCPY_H2D));
	CHECK_OK(accel_stream_synchronize(s, 60 * T_SEC));
	r2 = regs(NULL);
	printf("# cudaHostRegister calls: %ld, then %ld, for 40 pieces\n",
	       r1 - r0, r2 - r1);
	/* Chunks are pinned lazily, at most 3 of them, each once. */
	CHECK(r1 - r0 >= 1);
	CHECK(r2 - r0 <= 3);
	free(src);
	return T_PASS;
}

/*
 * As an unprivileged user with RLIMIT_MEMLOCK at Debian's default of
 * 8192 KiB, a 16 MiB pageable round trip succeeds; with no memlock
 * allowance at all, the error names the limit, its value and the fix.
 */
static int child_memlock(void)
{
	const size_t n = 16 * MB + 3;
	unsigned char *src, *dst, *dev;
	struct rlimit rl = { 8192 * KB, 8192 * KB };
	accel_context *ctx, *ctx2;
	accel_stream_t s;
	int ret;

	/*
	 * CUDA does not survive fork (earlier tests initialised it in the
	 * parent): the limits are the transport's, tested over the cpu
	 * backend. The contexts first: the device node may be root's only.
	 * Pins are charged when made, against the caller's limit and
	 * capabilities.
	 */
	if (setenv("ACCEL_BACKEND", "cpu", 1))
		return 9;
	if (accel_context_create(&ctx, 0) || accel_context_create(&ctx2, 0))
		return 10;
	if (setrlimit(RLIMIT_MEMLOCK, &rl))
		return 11;
	if (!geteuid() && (setgid(65534) || setuid(65534)))
		return 12;
	if (accel_stream_create(ctx, 0, 0, &s) ||
	    accel_malloc(ctx, (void **)&dev, n))
		return 13;
	src = malloc(n);
	dst = malloc(n);
	if (!src || !dst)
		return 14;
	t_fill(src, n, 77);
	ret = accel_memcpy_async(s, dev, src, n, ACCEL_MEMCPY_H2D);
	if (ret) {
		printf("# 16 MiB H2D: %s: %s\n", accel_strerror(ret),
		       accel_last_error_string());
		return 15;
	}
	free(src);
	if (accel_memcpy_async(s, dst, dev, n, ACCEL_MEMCPY_D2H) ||
	    accel_stream_synchronize(s, 120 * T_SEC))
		return 16;
	if (!t_check_fill(dst, n, 77))
		return 17;
	accel_context_destroy(ctx);

	/* No allowance: the other context cannot pin even a page. */
	if (!pins_observable())
		return 0;
	rl.rlim_cur = 0;
	if (setrlimit(RLIMIT_MEMLOCK, &rl))
		return 18;
	ctx = ctx2;
	if (accel_stream_create(ctx, 0, 0, &s) ||
	    accel_malloc(ctx, (void **)&dev, 64))
		return 19;
	ret = accel_memcpy_async(s, dev, dst, 64, ACCEL_MEMCPY_H2D);
	if (ret != -ENOMEM) {
		printf("# with RLIMIT_MEMLOCK 0: %s\n", accel_strerror(ret));
		return 20;
	}
	printf("# %s\n", accel_last_error_string());
	if (!strstr(accel_last_error_string(), "RLIMIT_MEMLOCK is 0 KiB") ||
	    !strstr(accel_last_error_string(), "ulimit -l"))
		return 21;
	accel_context_destroy(ctx);
	return 0;
}

static int memlock_unprivileged(void)
{
	int st;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	CHECK(pid >= 0);
	if (!pid)
		_exit(child_memlock());
	CHECK(waitpid(pid, &st, 0) == pid);
	if (!WIFEXITED(st) || WEXITSTATUS(st)) {
		printf("# child: %s %d\n", WIFEXITED(st) ? "exit" : "signal",
		       WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
		return T_FAIL;
	}
	return T_PASS;
}

/* debugfs's total of pinned bytes over every context, or -1. */
static long module_pinned(void)
{
	return t_read_long("/sys/kernel/debug/accelstream/summary",
			   "pinned_bytes %ld");
}

/*
 * SIGKILL while pieces wait in the pool and on the wire: once the process
 * is gone, the module holds no pin of it.
 */
static int sigkill_mid_pipeline(void)
{
	const char *tp = getenv("ACCEL_TRANSPORT");
	int fds[2], st;
	long base;
	char c;
	pid_t pid;

	if (!tp || strcmp(tp, "kernel")) {
		printf("# over the module only (inproc pins die with the process)\n");
		return T_SKIP;
	}
	base = module_pinned();
	if (base < 0) {
		printf("# no /sys/kernel/debug/accelstream/summary\n");
		return T_SKIP;
	}
	CHECK(!pipe(fds));
	fflush(stdout);
	pid = fork();
	CHECK(pid >= 0);
	if (!pid) {
		accel_stream_t s;
		accel_event_t gate;
		unsigned char *src = malloc(8 * MB), *dev;
		int i;

		close(fds[0]);
		if (!src || !t_ctx() || accel_stream_create(NULL, 0, 0, &s) ||
		    accel_malloc(NULL, (void **)&dev, 8 * MB) ||
		    accel_memcpy_async(s, dev, src, 8 * MB, ACCEL_MEMCPY_H2D) ||
		    t_gate(s, &gate))
			_exit(1);
		for (i = 0; i < 16; i++)
			if (accel_memcpy_async(s, dev, src, 8 * MB,
					       ACCEL_MEMCPY_H2D))
				_exit(2);
		(void)!write(fds[1], "x", 1);
		pause();
		_exit(0);
	}
	close(fds[1]);
	CHECK(read(fds[0], &c, 1) == 1);
	CHECK(module_pinned() > base);
	kill(pid, SIGKILL);
	CHECK(waitpid(pid, &st, 0) == pid);
	close(fds[0]);
	CHECK(WIFSIGNALED(st));
	CHECK(module_pinned() == base);
	return T_PASS;
}

int main(void)
{
	static const struct t_case cases[] = {
		T(pinned_bounded_behind_gate), T(pool_grows_ahead),
		T(pool_reused), T(chunks_cuda_registered_once),
		T(memlock_unprivileged), T(sigkill_mid_pipeline),
	};

	ps = sysconf(_SC_PAGESIZE);
	/* Children open their own contexts (a CUDA backend does not fork). */
	t_no_probe = 1;
	return staging_run(cases, sizeof(cases) / sizeof(cases[0]));
}
