// SPDX-License-Identifier: MIT
/*
 * A thread blocked in a wait on a context another thread destroys
 * returns -ENOENT (stream synchronize, a full stream's too, event
 * synchronize, event wait in both modes, context synchronize); the work
 * that had not started is cancelled, and once the wait returned nothing
 * of the context writes the caller's memory.
 */
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <time.h>
#include <linux/userfaultfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "helpers.h"

enum wait_kind { W_STREAM_SYNC, W_EVENT_SYNC, W_WAIT_ANY, W_WAIT_ALL,
		 W_CONTEXT_SYNC };

struct waiter {
	enum wait_kind kind;
	accel_context *ctx;
	accel_stream_t s;
	accel_event_t ev[2];
	pid_t tid;
	int ret;
	int done;
};

static void *waiter_fn(void *arg)
{
	struct waiter *w = arg;
	unsigned int first;

	__atomic_store_n(&w->tid, (pid_t)syscall(SYS_gettid), __ATOMIC_RELEASE);
	switch (w->kind) {
	case W_STREAM_SYNC:
		w->ret = accel_stream_synchronize(w->s, ACCEL_TIMEOUT_INFINITE);
		break;
	case W_EVENT_SYNC:
		w->ret = accel_event_synchronize(w->ev[0],
						 ACCEL_TIMEOUT_INFINITE);
		break;
	case W_WAIT_ANY:
		w->ret = accel_event_wait(w->ev, 2, 0, ACCEL_TIMEOUT_INFINITE,
					  &first);
		break;
	case W_WAIT_ALL:
		w->ret = accel_event_wait(w->ev, 2, ACCEL_WAIT_ALL,
					  ACCEL_TIMEOUT_INFINITE, &first);
		break;
	case W_CONTEXT_SYNC:
		w->ret = accel_context_synchronize(w->ctx,
						   ACCEL_TIMEOUT_INFINITE);
		break;
	}
	__atomic_store_n(&w->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* Join @th, or give up after 30 s (a hang guard, not a timing check). */
static int join_guarded(pthread_t th)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += 30;
	return pthread_timedjoin_np(th, NULL, &ts);
}

/* The thread sleeps (state S in /proc): blocked in its wait, most likely. */
static int thread_sleeping(pid_t tid)
{
	char path[64], buf[256], *p;
	FILE *f;
	int sleeping = 0;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)tid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	if (fgets(buf, sizeof(buf), f)) {
		p = strrchr(buf, ')');
		sleeping = p && p[1] == ' ' && p[2] == 'S';
	}
	fclose(f);
	return sleeping;
}

/*
 * Queue work behind a gate that never opens, block a thread on it, then
 * destroy the context from here: the thread returns -ENOENT. Whether the
 * destroy lands before the thread's call starts (a stale handle) or while
 * it sleeps, the answer is the same; the test waits until the thread
 * sleeps so that it is the second case that runs.
 */
static int destroy_wakes(enum wait_kind kind)
{
	accel_context *ctx;
	accel_event_t gate;
	struct waiter w;
	pthread_t th;
	char *h;
	void *d;
	int i;

	memset(&w, 0, sizeof(w));
	w.kind = kind;
	CHECK_OK(accel_context_create(&ctx, 0));
	w.ctx = ctx;
	CHECK_OK(accel_stream_create(ctx, 0, 0, &w.s));
	CHECK_OK(accel_host_alloc(ctx, (void **)&h, 4096, 0));
	CHECK_OK(accel_malloc(ctx, &d, 4096));
	CHECK_OK(t_gate(w.s, &gate));
	CHECK_OK(accel_memcpy_async(w.s, d, h, 4096, ACCEL_MEMCPY_H2D));
	CHECK_OK(accel_event_create(ctx, 0, &w.ev[0]));
	CHECK_OK(accel_event_create(ctx, 0, &w.ev[1]));
	CHECK_OK(accel_event_record(w.ev[0], w.s));
	CHECK_OK(accel_event_record(w.ev[1], w.s));
	CHECK(!pthread_create(&th, NULL, waiter_fn, &w));
	while (!__atomic_load_n(&w.tid, __ATOMIC_ACQUIRE))
		sched_yield();
	/* Several looks in a row: not a passing sleep on a lock. */
	for (i = 0; i < 3; i++) {
		while (!thread_sleeping(w.tid))
			sched_yield();
		usleep(1000);
	}
	CHECK_OK(accel_context_destroy(ctx));
	CHECK(!pthread_join(th, NULL));
	CHECK_RET(w.ret, -ENOENT);
	/* Everything of the context is gone, the waiter's objects too. */
	CHECK_RET(accel_stream_query(w.s), -ENOENT);
	CHECK_RET(accel_event_query(w.ev[0]), -ENOENT);
	CHECK_RET(accel_host_free(h), -ENOENT);
	return T_PASS;
}

static int destroy_wakes_stream_synchronize(void)
{
	return destroy_wakes(W_STREAM_SYNC);
}

static int destroy_wakes_event_synchronize(void)
{
	return destroy_wakes(W_EVENT_SYNC);
}

static int destroy_wakes_event_wait_any(void)
{
	return destroy_wakes(W_WAIT_ANY);
}

static int destroy_wakes_event_wait_all(void)
{
	return destroy_wakes(W_WAIT_ALL);
}

static int destroy_wakes_context_synchronize(void)
{
	return destroy_wakes(W_CONTEXT_SYNC);
}

/* Until @tid has looked asleep several times in a row. */
static void wait_sleeping(pid_t tid)
{
	int i;

	for (i = 0; i < 3; i++) {
		while (!thread_sleeping(tid))
			sched_yield();
		usleep(1000);
	}
}

/*
 * A stream too full for another descriptor (behind a gate, filled until
 * -EAGAIN): its synchronize cannot wait on an event recorded at its tail,
 * and the destroy still releases it.
 */
static int destroy_wakes_full_stream_synchronize(void)
{
	accel_context *ctx;
	accel_event_t gate;
	struct waiter w;
	pthread_t th;
	int i, ret = 0;
	char *h;
	void *d;

	memset(&w, 0, sizeof(w));
	w.kind = W_STREAM_SYNC;
	CHECK_OK(accel_context_create(&ctx, 0));
	CHECK_OK(accel_stream_create(ctx, 0, 0, &w.s));
	CHECK_OK(accel_host_alloc(ctx, (void **)&h, 64, 0));
	CHECK_OK(accel_malloc(ctx, &d, 64));
	CHECK_OK(t_gate(w.s, &gate));
	for (i = 0; i < 1 << 20 && !ret; i++)
		ret = accel_memcpy_async(w.s, d, h, 8, ACCEL_MEMCPY_H2D);
	CHECK_RET(ret, -EAGAIN);
	CHECK(!pthread_create(&th, NULL, waiter_fn, &w));
	while (!__atomic_load_n(&w.tid, __ATOMIC_ACQUIRE))
		sched_yield();
	wait_sleeping(w.tid);
	CHECK_OK(accel_context_destroy(ctx));
	if (join_guarded(th)) {
		printf("# the synchronize of the full stream is still blocked 30 s after the destroy\n");
		return T_FAIL;
	}
	CHECK_RET(w.ret, -ENOENT);
	return T_PASS;
}

struct destroyer {
	accel_context *ctx;
	pid_t tid;
	int ret;
};

static void *destroyer_fn(void *arg)
{
	struct destroyer *x = arg;

	__atomic_store_n(&x->tid, (pid_t)syscall(SYS_gettid), __ATOMIC_RELEASE);
	x->ret = accel_context_destroy(x->ctx);
	return NULL;
}

/*
 * The library's write into a pageable D2H destination (the staging
 * worker's copy out of its pinned chunk) is held in the middle by a
 * userfaultfd on the destination's page while another thread destroys
 * the context. The waiter may return only once that write is over: it
 * must still be blocked when the destroy has gone to sleep (waiting for
 * the worker) and the waiter looks asleep too; then the page is given,
 * the write lands, and the waiter returns.
 */
static int destroy_waiter_outlives_staged_write(void)
{
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg;
	struct uffdio_zeropage zp;
	struct uffd_msg msg;
	accel_event_t gate;
	struct destroyer x;
	struct pollfd pfd;
	struct waiter w;
	pthread_t th, dt;
	unsigned char *dst;
	long ps = sysconf(_SC_PAGESIZE);
	int uffd, early;
	void *d;

	uffd = (int)syscall(SYS_userfaultfd, O_CLOEXEC);
	if (uffd < 0) {
		printf("# userfaultfd: %s: nothing can hold the write\n",
		       strerror(errno));
		return T_SKIP;
	}
	CHECK(!ioctl(uffd, UFFDIO_API, &api));
	dst = mmap(NULL, (size_t)ps, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(dst != MAP_FAILED);

	memset(&w, 0, sizeof(w));
	w.kind = W_STREAM_SYNC;
	memset(&x, 0, sizeof(x));
	CHECK_OK(accel_context_create(&x.ctx, 0));
	CHECK_OK(accel_stream_create(x.ctx, 0, 0, &w.s));
	CHECK_OK(accel_malloc(x.ctx, &d, (size_t)ps));
	CHECK_OK(accel_memset_async(w.s, d, 0xab, (size_t)ps));
	CHECK_OK(t_gate(w.s, &gate));
	/* Checked writable at enqueue: the page goes only after that. */
	CHECK_OK(accel_memcpy_async(w.s, dst, d, (size_t)ps,
				    ACCEL_MEMCPY_D2H));
	CHECK(!madvise(dst, (size_t)ps, MADV_DONTNEED));
	memset(&reg, 0, sizeof(reg));
	reg.range.start = (uintptr_t)dst;
	reg.range.len = (uint64_t)ps;
	reg.mode = UFFDIO_REGISTER_MODE_MISSING;
	CHECK(!ioctl(uffd, UFFDIO_REGISTER, &reg));
	CHECK(!pthread_create(&th, NULL, waiter_fn, &w));
	CHECK_OK(t_gate_open(gate));
	/* The worker's copy out faults on the page: the write is held. */
	pfd.fd = uffd;
	pfd.events = POLLIN;
	CHECK(poll(&pfd, 1, 30000) == 1);
	CHECK(read(uffd, &msg, sizeof(msg)) == (ssize_t)sizeof(msg));
	CHECK(msg.event == UFFD_EVENT_PAGEFAULT);
	while (!__atomic_load_n(&w.tid, __ATOMIC_ACQUIRE))
		sched_yield();
	wait_sleeping(w.tid);

	CHECK(!pthread_create(&dt, NULL, destroyer_fn, &x));
	while (!__atomic_load_n(&x.tid, __ATOMIC_ACQUIRE))
		sched_yield();
	/* The destroy sleeps, and so does the waiter, or it returned. */
	for (;;) {
		if (__atomic_load_n(&w.done, __ATOMIC_ACQUIRE))
			break;
		if (thread_sleeping(x.tid) && thread_sleeping(w.tid)) {
			usleep(1000);
			if (thread_sleeping(x.tid) && thread_sleeping(w.tid))
				break;
		}
		sched_yield();
	}
	early = __atomic_load_n(&w.done, __ATOMIC_ACQUIRE);

	memset(&zp, 0, sizeof(zp));
	zp.range.start = (uintptr_t)dst;
	zp.range.len = (uint64_t)ps;
	CHECK(!ioctl(uffd, UFFDIO_ZEROPAGE, &zp));
	CHECK(!join_guarded(dt));
	CHECK(!join_guarded(th));
	close(uffd);
	CHECK_OK(x.ret);
	if (early)
		printf("# the waiter returned %d while the library's write into its buffer was still pending\n",
		       w.ret);
	CHECK(!early);
	CHECK(w.ret == 0 || w.ret == -ENOENT);
	/* The write the waiter outlived is whole. */
	CHECK(dst[0] == 0xab && dst[ps - 1] == 0xab);
	munmap(dst, (size_t)ps);
	return T_PASS;
}

/* Before the destroy, the waits still wait: the doom event is silent. */
static int waits_unchanged_while_alive(void)
{
	accel_context *ctx = t_ctx();
	accel_stream_t s;
	accel_event_t gate, ev[2];
	unsigned int first = 99;

	CHECK(ctx);
	CHECK_OK(t_gated_stream(ctx, &s, &gate));
	CHECK_OK(accel_event_create(ctx, 0, &ev[0]));
	CHECK_OK(accel_event_create(ctx, 0, &ev[1]));
	CHECK_OK(accel_event_record(ev[1], s));
	CHECK_RET(accel_stream_synchronize(s, 1000000), -ETIME);
	CHECK_RET(accel_event_synchronize(ev[1], 1000000), -ETIME);
	CHECK_RET(accel_event_wait(ev, 2, ACCEL_WAIT_ALL, 1000000, &first),
		  -ETIME);
	/* ev[0] was never recorded: complete, the first one. */
	CHECK_OK(accel_event_wait(ev, 2, 0, 1000000, &first));
	CHECK_RET(first, 0);
	CHECK_RET(accel_event_wait(&ev[1], 1, 0, 1000000, &first), -ETIME);
	CHECK_OK(t_gate_open(gate));
	CHECK_OK(accel_event_wait(ev, 2, ACCEL_WAIT_ALL,
				  ACCEL_TIMEOUT_INFINITE, &first));
	CHECK_OK(accel_stream_synchronize(s, ACCEL_TIMEOUT_INFINITE));
	return T_PASS;
}

T_MAIN(T(destroy_wakes_stream_synchronize),
       T(destroy_wakes_event_synchronize),
       T(destroy_wakes_event_wait_any),
       T(destroy_wakes_event_wait_all),
       T(destroy_wakes_context_synchronize),
       T(destroy_wakes_full_stream_synchronize),
       T(destroy_waiter_outlives_staged_write),
       T(waits_unchanged_while_alive))
