// SPDX-License-Identifier: MIT
/*
 * accel_stream_write_value(): a stream raises a host event's counter at a
 * point of its order, releasing another stream (accel_stream_wait_value())
 * and the host (accel_event_synchronize()); the counter never goes down;
 * every errno of its man page.
 */
#include <sys/wait.h>

#include "helpers.h"

#define T_MS	1000000ULL

/* One stream releases another: not before its own gate opens. */
static int releases_stream(void)
{
	accel_stream_t a, b;
	accel_event_t gate, ready, done;

	CHECK_OK(t_two_streams(&a, &b));
	CHECK_OK(accel_event_create(NULL, ACCEL_EVENT_HOST, &ready));
	CHECK_OK(accel_event_create(NULL, 0, &done));
	CHECK_OK(t_gate(a, &gate));
	CHECK_OK(accel_stream_write_value(a, ready, 1, 0));
	CHECK_OK(accel_stream_wait_value(b, ready, 1, 0));
	CHECK_OK(accel_event_record(done, b));
	/* a is gated, so the write has not happened, so b still waits. */
	CHECK_RET(accel_stream_synchronize(b, 20 * T_MS), -ETIME);
	CHECK_RET(accel_event_query(ready), -EAGAIN);
	CHECK_RET(accel_event_query(done), -EAGAIN);
	CHECK_OK(t_gate_open(gate));
	CHECK_OK(accel_stream_synchronize(b, ACCEL_TIMEOUT_INFINITE));
	CHECK_OK(accel_event_query(ready));
	CHECK_OK(accel_event_query(done));
	CHECK_OK(accel_stream_synchronize(a, ACCEL_TIMEOUT_INFINITE));
	return T_PASS;
}

/* The data a stream wrote before its write is there when a waiter goes on. */
static int orders_copies(void)
{
	enum { N = 256 * 1024 };
	accel_stream_t prod, cons;
	accel_event_t gate, ready;
	unsigned char *in, *out;
	void *dev;

	CHECK_OK(t_two_streams(&prod, &cons));
	CHECK_OK(accel_event_create(NULL, ACCEL_EVENT_HOST, &ready));
	CHECK_OK(accel_malloc(NULL, &dev, N));
	CHECK_OK(accel_host_alloc(NULL, (void **)&in, N, 0));
	CHECK_OK(accel_host_alloc(NULL, (void **)&out, N, 0));
	t_fill(in, N, 7);
	memset(out, 0, N);
	/* Queued first, and gated on the producer's write. */
	CHECK_OK(accel_stream_wait_value(cons, ready, 1, 0));
	CHECK_OK(accel_memcpy_async(cons, out, dev, N, ACCEL_MEMCPY_D2H));
	CHECK_OK(t_gate(prod, &gate));
	CHECK_OK(accel_memcpy_async(prod, dev, in, N, ACCEL_MEMCPY_H2D));
	CHECK_OK(accel_stream_write_value(prod, ready, 1, 0));
	CHECK_OK(t_gate_open(gate));
	CHECK_OK(accel_stream_synchronize(cons, ACCEL_TIMEOUT_INFINITE));
	CHECK(t_check_fill(out, N, 7));
	return T_PASS;
}

struct host_waiter {
	accel_event_t ev;
	int ret;
};

static void *host_wait(void *arg)
{
	struct host_waiter *w = arg;

	w->ret = accel_event_synchronize(w->ev, ACCEL_TIMEOUT_INFINITE);
	return NULL;
}

/* A host thread blocked on the event goes on when the stream writes it. */
static int releases_host(void)
{
	struct host_waiter w = { .ret = 1 };
	accel_event_t gate;
	accel_stream_t s;
	pthread_t t;

	CHECK_OK(t_stream(&s));
	CHECK_OK(accel_event_create(NULL, ACCEL_EVENT_HOST, &w.ev));
	CHECK_OK(t_gate(s, &gate));
	CHECK_OK(accel_stream_write_value(s, w.ev, 3, 0));
	CHECK_RET(accel_event_synchronize(w.ev, 20 * T_MS), -ETIME);
	CHECK(!pthread_create(&t, NULL, host_wait, &w));
	CHECK_OK(t_gate_open(gate));
	CHECK(!pthread_join(t, NULL));
	CHECK_OK(w.ret);
	CHECK_OK(accel_event_query(w.ev));
	return T_PASS;
}

/*
 * The counter never goes down: a write of 3 after one of 5 leaves 5 (a
 * wait for 5 still passes), a host signal of 2 too, and a wait for 6 waits.
 */
static int never_lowers(void)
{
	accel_stream_t s, b;
	accel_event_t ev;

	CHECK_OK(t_two_streams(&s, &b));
	CHECK_OK(accel_event_create(NULL, ACCEL_EVENT_HOST, &ev));
	CHECK_OK(accel_stream_write_value(s, ev, 5, 0));
	CHECK_OK(accel_stream_write_value(s, ev, 3, 0));
	CHECK_OK(accel_stream_write_value(s, ev, 0, 0));
	CHECK_OK(accel_stream_synchronize(s, ACCEL_TIMEOUT_INFINITE));
	CHECK_OK(accel_event_signal(ev, 2, 0));
	CHECK_OK(accel_stream_wait_value(b, ev, 5, 0));
	CHECK_OK(accel_stream_synchronize(b, 10 * T_SEC));
	CHECK_OK(accel_stream_wait_value(b, ev, 6, 0));
	CHECK_RET(accel_stream_synchronize(b, 20 * T_MS), -ETIME);
	CHECK_OK(accel_stream_write_value(s, ev, 6, 0));
	CHECK_OK(accel_stream_synchronize(b, ACCEL_TIMEOUT_INFINITE));
	return T_PASS;
}

/* A stream that fails before its write never makes it. */
static int failed_stream_does_not_write(void)
{
	accel_stream_t s, b;
	accel_event_t gate, ev;

	CHECK_OK(t_two_streams(&s, &b));
	CHECK_OK(accel_event_create(NULL, ACCEL_EVENT_HOST, &ev));
	CHECK_OK(t_gate(s, &gate));
	CHECK_OK(accel_stream_write_value(s, ev, 1, 0));
	CHECK_OK(accel_event_signal(gate, 1, ACCEL_EVENT_SIGNAL_ERROR));
	CHECK_RET(accel_stream_synchronize(s, ACCEL_TIMEOUT_INFINITE), -EIO);
	CHECK_RET(accel_event_query(ev), -EAGAIN);
	/* Sticky: a later write on the failed stream is refused. */
	CHECK_RET(accel_stream_write_value(s, ev, 1, 0), -EIO);
	CHECK_OK(accel_stream_write_value(b, ev, 1, 0));
	CHECK_OK(accel_stream_synchronize(b, ACCEL_TIMEOUT_INFINITE));
	CHECK_OK(accel_event_query(ev));
	return T_PASS;
}

static int errnos(void)
{
	accel_stream_t s, s2, dead_s;
	accel_event_t ev, hev, hev2, dead_ev;
	accel_context *c1, *c2;

	c1 = t_ctx();
	CHECK(c1);
	CHECK_OK(accel_stream_create(NULL, 0, 0, &s));
	CHECK_OK(accel_event_create(NULL, 0, &ev));
	CHECK_OK(accel_event_create(NULL, ACCEL_EVENT_HOST, &hev));
	/* A plain (recorded) event has no counter. */
	CHECK_RET(accel_stream_write_value(s, ev, 1, 0), -EINVAL);
	CHECK_RET(accel_stream_write_value(s, hev, 1, 1), -EINVAL);
	CHECK_RET(accel_stream_write_value(s, hev, 1, 0x80000000U), -EINVAL);
	/* Handles of the wrong type. */
	CHECK_RET(accel_stream_write_value(s, (accel_event_t)s, 1, 0), -EINVAL);
	CHECK_RET(accel_stream_write_value((accel_stream_t)hev, hev, 1, 0),
		  -EINVAL);
	/* Different contexts. */
	c2 = t_ctx();
	CHECK(c2);
	CHECK_OK(accel_stream_create(c2, 0, 0, &s2));
	CHECK_OK(accel_event_create(c2, ACCEL_EVENT_HOST, &hev2));
	CHECK_RET(accel_stream_write_value(s, hev2, 1, 0), -EINVAL);
	CHECK_RET(accel_stream_write_value(s2, hev, 1, 0), -EINVAL);
	/* Stale handles. */
	CHECK_OK(accel_event_create(NULL, ACCEL_EVENT_HOST, &dead_ev));
	CHECK_OK(accel_event_destroy(dead_ev));
	CHECK_RET(accel_stream_write_value(s, dead_ev, 1, 0), -ENOENT);
	CHECK_OK(accel_stream_create(NULL, 0, 0, &dead_s));
	CHECK_OK(accel_stream_destroy(dead_s));
	CHECK_RET(accel_stream_write_value(dead_s, hev, 1, 0), -ENOENT);
	/* Nothing of the failed calls happened. */
	CHECK_RET(accel_event_query(hev), -EAGAIN);
	CHECK_RET(accel_event_query(hev2), -EAGAIN);
	/* The default stream works too: the current context's. */
	CHECK_RET(accel_stream_write_value(ACCEL_STREAM_DEFAULT, hev, 1, 0),
		  -EINVAL);
	CHECK_OK(accel_context_set_current(c1));
	CHECK_OK(accel_stream_write_value(ACCEL_STREAM_DEFAULT, hev, 1, 0));
	CHECK_OK(accel_stream_synchronize(ACCEL_STREAM_DEFAULT,
					  ACCEL_TIMEOUT_INFINITE));
	CHECK_OK(accel_event_query(hev));
	return T_PASS;
}

static int queue_full_eagain(void)
{
	accel_event_t gate, ev;
	accel_stream_t s;
	int n = 0;

	CHECK_OK(t_stream(&s));
	CHECK_OK(accel_event_create(NULL, ACCEL_EVENT_HOST, &ev));
	CHECK_OK(t_gate(s, &gate));
	while (!accel_stream_write_value(s, ev, (uint64_t)n + 1, 0))
		n++;
	CHECK_RET(n, 65535);
	CHECK_RET(accel_stream_write_value(s, ev, 1, 0), -EAGAIN);
	CHECK_OK(t_gate_open(gate));
	CHECK_OK(accel_stream_synchronize(s, ACCEL_TIMEOUT_INFINITE));
	/* Every write happened, in order: the counter is at the last one. */
	CHECK_OK(accel_stream_wait_value(s, ev, 65535, 0));
	CHECK_OK(accel_stream_synchronize(s, 10 * T_SEC));
	return T_PASS;
}

struct parent_objs {
	accel_stream_t s;
	accel_event_t ev;
};

/* In a forked child, the parent's context answers -EACCES. */
static int eacces_in_child(void)
{
	struct parent_objs o;
	int status;
	pid_t pid;

	CHECK(t_ctx());
	CHECK_OK(accel_stream_create(NULL, 0, 0, &o.s));
	CHECK_OK(accel_event_create(NULL, ACCEL_EVENT_HOST, &o.ev));
	fflush(stdout);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0)
		_exit(accel_stream_write_value(o.s, o.ev, 1, 0) == -EACCES ?
		      0 : 1);
	CHECK(waitpid(pid, &status, 0) == pid);
	CHECK(WIFEXITED(status));
	CHECK_RET(WEXITSTATUS(status), 0);
	/* The child's attempt changed nothing. */
	CHECK_RET(accel_event_query(o.ev), -EAGAIN);
	return T_PASS;
}

T_MAIN(T(releases_stream), T(orders_copies), T(releases_host),
       T(never_lowers), T(failed_stream_does_not_write), T(errnos),
       T(queue_full_eagain), T(eacces_in_child))
