// SPDX-License-Identifier: MIT
/*
 * A thread blocked in a wait on a context another thread destroys
 * returns -ENOENT (stream synchronize, event synchronize, event wait in
 * both modes); the work that had not started is cancelled.
 */
#include <dirent.h>
#include <sys/syscall.h>

#include "helpers.h"

enum wait_kind { W_STREAM_SYNC, W_EVENT_SYNC, W_WAIT_ANY, W_WAIT_ALL };

struct waiter {
	enum wait_kind kind;
	accel_stream_t s;
	accel_event_t ev[2];
	pid_t tid;
	int ret;
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
	}
	return NULL;
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
       T(waits_unchanged_while_alive))
