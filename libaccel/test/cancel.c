// SPDX-License-Identifier: MIT
/*
 * pthread_cancel() of a thread blocked in a libaccel call (libaccel(7)
 * CANCELLATION): no call is a cancellation point, so the thread is not
 * cancelled inside the library holding one of its locks. While it stays
 * blocked the context keeps working for every other thread; once the call
 * returns (its wait satisfied), the pending cancel ends the thread at its
 * next cancellation point. Each kind of blocking call runs in a child
 * process of its own, so a context left locked is a child killed by its
 * alarm, not a hung suite.
 */
#include <signal.h>
#include <sys/wait.h>

#include "helpers.h"

#define CHILD_ALARM_S	20
#define STAGED_LEN	(1U << 20)

enum kind {
	K_STREAM_SYNC,
	K_STREAM_SYNC_TIMED,
	K_EVENT_SYNC,
	K_CONTEXT_SYNC,
	K_EVENT_WAIT,
	K_STAGED_D2H_SYNC,	/* the staging copy-out's wait */
	K_HOSTFN_SYNC,		/* a running host function's wait */
	K_CONTEXT_DESTROY,	/* waits for the running host function */
};

static struct {
	enum kind kind;
	accel_context *ctx;
	accel_stream_t s;
	accel_event_t gate, ev;
	void *dev;
	char *out;
	pthread_barrier_t entered;
	int hostfn_go;		/* the host function returns once set */
	int hostfn_running;
	int ret;		/* what the blocked call returned */
} b;

static void hostfn_block(void *arg)
{
	(void)arg;
	__atomic_store_n(&b.hostfn_running, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&b.hostfn_go, __ATOMIC_ACQUIRE))
		usleep(1000);
}

static void *blocker(void *arg)
{
	accel_event_t w[1] = { b.ev };

	(void)arg;
	pthread_barrier_wait(&b.entered);
	switch (b.kind) {
	case K_STREAM_SYNC:
	case K_STAGED_D2H_SYNC:
	case K_HOSTFN_SYNC:
		b.ret = accel_stream_synchronize(b.s, ACCEL_TIMEOUT_INFINITE);
		break;
	case K_STREAM_SYNC_TIMED:
		b.ret = accel_stream_synchronize(b.s, 60 * T_SEC);
		break;
	case K_EVENT_SYNC:
		b.ret = accel_event_synchronize(b.ev, ACCEL_TIMEOUT_INFINITE);
		break;
	case K_CONTEXT_SYNC:
		b.ret = accel_context_synchronize(b.ctx,
						  ACCEL_TIMEOUT_INFINITE);
		break;
	case K_EVENT_WAIT:
		b.ret = accel_event_wait(w, 1, ACCEL_WAIT_ALL,
					 ACCEL_TIMEOUT_INFINITE, NULL);
		break;
	case K_CONTEXT_DESTROY:
		b.ret = accel_context_destroy(b.ctx);
		break;
	}
	/* The call returned: the pending cancel acts here. */
	pthread_testcancel();
	return NULL;
}

/* The child: 0, or the step that went wrong. */
static int cancel_child(enum kind kind)
{
	accel_context *other;
	accel_stream_t s2;
	pthread_t t;
	void *res;
	char *src;

	alarm(CHILD_ALARM_S);	/* a context left locked hangs here */
	b.kind = kind;
	if (accel_context_create(&b.ctx, 0) ||
	    accel_stream_create(b.ctx, 0, 0, &b.s) ||
	    accel_event_create(b.ctx, ACCEL_EVENT_HOST, &b.gate) ||
	    accel_event_create(b.ctx, 0, &b.ev) ||
	    accel_malloc(b.ctx, &b.dev, STAGED_LEN))
		return 10;
	b.out = malloc(STAGED_LEN);
	src = calloc(1, STAGED_LEN);
	if (!b.out || !src)
		return 11;
	if (kind == K_HOSTFN_SYNC || kind == K_CONTEXT_DESTROY) {
		if (accel_launch_host_func(b.s, hostfn_block, NULL))
			return 12;
		while (!__atomic_load_n(&b.hostfn_running, __ATOMIC_ACQUIRE))
			usleep(1000);
	} else if (accel_stream_wait_value(b.s, b.gate, 1, 0)) {
		return 13;
	}
	if (kind == K_STAGED_D2H_SYNC &&
	    (accel_memcpy_async(b.s, b.dev, src, STAGED_LEN,
				ACCEL_MEMCPY_H2D) ||
	     accel_memcpy_async(b.s, b.out, b.dev, STAGED_LEN,
				ACCEL_MEMCPY_D2H)))
		return 14;
	if (accel_event_record(b.ev, b.s))
		return 15;
	if (pthread_barrier_init(&b.entered, NULL, 2) ||
	    pthread_create(&t, NULL, blocker, NULL))
		return 16;
	pthread_barrier_wait(&b.entered);
	/*
	 * Most likely inside its wait by now; cancelled before it, the
	 * cancel is pending when the call starts: the same rule either way.
	 */
	usleep(100 * 1000);
	if (pthread_cancel(t))
		return 17;
	if (kind == K_CONTEXT_DESTROY) {
		/* The library, another context included, still works. */
		if (accel_context_create(&other, 0) ||
		    accel_stream_create(other, 0, 0, &s2) ||
		    accel_stream_synchronize(s2, ACCEL_TIMEOUT_INFINITE) ||
		    accel_context_destroy(other))
			return 20;
	} else {
		/* The context works for this thread: its lock is free. */
		if (accel_stream_query(b.s) != -EAGAIN)
			return 21;
		if (accel_stream_create(b.ctx, 0, 0, &s2) ||
		    accel_stream_synchronize(s2, ACCEL_TIMEOUT_INFINITE) ||
		    accel_stream_destroy(s2))
			return 22;
	}
	/* Satisfy the wait: the call returns and the thread ends. */
	__atomic_store_n(&b.hostfn_go, 1, __ATOMIC_RELEASE);
	if (kind != K_HOSTFN_SYNC && kind != K_CONTEXT_DESTROY &&
	    accel_event_signal(b.gate, 1, 0))
		return 23;
	if (pthread_join(t, &res))
		return 24;
	if (res != PTHREAD_CANCELED)
		return 25;
	if (b.ret) {
		printf("# the blocked call returned %d (%s)\n", b.ret,
		       accel_strerror(b.ret));
		return 26;
	}
	if (kind == K_CONTEXT_DESTROY)
		return 0;
	if (accel_stream_synchronize(b.s, ACCEL_TIMEOUT_INFINITE) ||
	    accel_stream_query(b.s) || accel_context_destroy(b.ctx))
		return 27;
	return 0;
}

static int cancel_kind(enum kind kind)
{
	int status;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	CHECK(pid >= 0);
	if (!pid) {
		int ret = cancel_child(kind);

		fflush(stdout);
		_exit(ret);
	}
	CHECK(waitpid(pid, &status, 0) == pid);
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		printf("# child: status %#x (signal %d: the context stayed locked)\n",
		       status, WIFSIGNALED(status) ? WTERMSIG(status) : 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	return T_PASS;
}

static int cancel_stream_synchronize(void)
{
	return cancel_kind(K_STREAM_SYNC);
}

static int cancel_stream_synchronize_timed(void)
{
	return cancel_kind(K_STREAM_SYNC_TIMED);
}

static int cancel_event_synchronize(void)
{
	return cancel_kind(K_EVENT_SYNC);
}

static int cancel_context_synchronize(void)
{
	return cancel_kind(K_CONTEXT_SYNC);
}

static int cancel_event_wait(void)
{
	return cancel_kind(K_EVENT_WAIT);
}

static int cancel_staged_d2h_synchronize(void)
{
	return cancel_kind(K_STAGED_D2H_SYNC);
}

static int cancel_hostfn_synchronize(void)
{
	return cancel_kind(K_HOSTFN_SYNC);
}

static int cancel_context_destroy(void)
{
	return cancel_kind(K_CONTEXT_DESTROY);
}

int main(void)
{
	static const struct t_case cases[] = {
		T(cancel_stream_synchronize),
		T(cancel_stream_synchronize_timed),
		T(cancel_event_synchronize),
		T(cancel_context_synchronize),
		T(cancel_event_wait),
		T(cancel_staged_d2h_synchronize),
		T(cancel_hostfn_synchronize),
		T(cancel_context_destroy),
	};

	/* The children create contexts: the CUDA backend needs none before. */
	t_no_probe = 1;
	return t_run(cases, sizeof(cases) / sizeof(cases[0]));
}
