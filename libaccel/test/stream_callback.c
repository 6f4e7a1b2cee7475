// SPDX-License-Identifier: MIT
/*
 * accel_stream_add_callback: the callback runs exactly once and learns the
 * stream's status (0, the sticky error, or -ECANCELED when the context
 * goes first), where accel_launch_host_func() would be skipped.
 */
#include <time.h>
#include <sys/wait.h>

#include "helpers.h"

struct seen {
	pthread_mutex_t m;
	pthread_cond_t c;
	int calls;
	int status;
	accel_stream_t stream;
	unsigned char *pinned;
	unsigned char value;
};

#define SEEN_INIT { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, \
		    0, 1, NULL, NULL, 0 }

static void record(accel_stream_t stream, int status, void *arg)
{
	struct seen *s = arg;

	pthread_mutex_lock(&s->m);
	if (s->pinned) {
		s->value = s->pinned[0];	/* the copy before us landed */
		s->pinned[0] = 42;		/* the copy after us sees this */
	}
	s->calls++;
	s->status = status;
	s->stream = stream;
	pthread_cond_broadcast(&s->c);
	pthread_mutex_unlock(&s->m);
}

/* Wait (bounded, as a hang guard only) for the callback to have run. */
static int wait_calls(struct seen *s, int want)
{
	struct timespec ts;
	int ok;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += 30;
	pthread_mutex_lock(&s->m);
	while (s->calls < want &&
	       pthread_cond_timedwait(&s->c, &s->m, &ts) == 0)
		;
	ok = s->calls == want;
	pthread_mutex_unlock(&s->m);
	return ok;
}

/* The callback ran once (waited for as above) on @stream with @status. */
static int called_once(struct seen *seen, accel_stream_t stream, int status)
{
	CHECK(wait_calls(seen, 1));
	CHECK_RET(seen->status, status);
	CHECK(seen->stream == stream);
	return T_PASS;
}

static void mark(void *arg)
{
	(*(int *)arg)++;
}

static int success_status_zero_in_order(void)
{
	struct seen seen = SEEN_INIT;
	struct t_byte_trip t;

	CHECK_OK(t_byte_trip_out(&t));
	seen.pinned = t.out;
	CHECK_OK(accel_stream_add_callback(t.s, record, &seen, 0));
	CHECK_OK(t_byte_trip_back(&t));
	CHECK_OK(called_once(&seen, t.s, 0));
	CHECK(seen.value == 7);
	CHECK(t.h[0] == 42);
	return T_PASS;
}

static int default_stream_named_as_given(void)
{
	struct seen seen = SEEN_INIT;

	CHECK(t_ctx());
	seen.stream = (accel_stream_t)&seen;
	CHECK_OK(accel_stream_add_callback(ACCEL_STREAM_DEFAULT, record,
					   &seen, 0));
	CHECK_OK(accel_stream_synchronize(ACCEL_STREAM_DEFAULT,
					  ACCEL_TIMEOUT_INFINITE));
	CHECK_OK(called_once(&seen, ACCEL_STREAM_DEFAULT, 0));
	return T_PASS;
}

/* The case accel_launch_host_func() skips: the callback learns -EIO. */
static int failed_stream_reports_error(void)
{
	struct seen seen = SEEN_INIT;
	accel_event_t gate;
	accel_stream_t s;
	int skipped = 0;

	CHECK_OK(t_gated_stream(NULL, &s, &gate));
	CHECK_OK(accel_launch_host_func(s, mark, &skipped));
	CHECK_OK(accel_stream_add_callback(s, record, &seen, 0));
	CHECK_OK(accel_event_signal(gate, 0, ACCEL_EVENT_SIGNAL_ERROR));
	CHECK_RET(accel_stream_synchronize(s, 30 * T_SEC), -EIO);
	CHECK_OK(called_once(&seen, s, -EIO));
	CHECK(skipped == 0);
	return T_PASS;
}

/*
 * A gated stream with record() queued on it into @seen, destroyed while
 * the gate holds the callback back: it has not run yet.
 */
static int destroyed_with_callback(struct seen *seen, accel_stream_t *s,
				   accel_event_t *gate)
{
	CHECK_OK(t_gated_stream(NULL, s, gate));
	CHECK_OK(accel_stream_add_callback(*s, record, seen, 0));
	CHECK_OK(accel_stream_destroy(*s));
	CHECK(seen->calls == 0);
	return T_PASS;
}

/* Still called, once, when the stream is destroyed with it queued. */
static int destroyed_stream_still_reports(void)
{
	struct seen seen = SEEN_INIT;
	accel_event_t gate;
	accel_stream_t s;

	CHECK_OK(destroyed_with_callback(&seen, &s, &gate));
	CHECK_OK(accel_event_signal(gate, 0, ACCEL_EVENT_SIGNAL_ERROR));
	CHECK_OK(called_once(&seen, s, -EIO));
	return T_PASS;
}

/*
 * A stream destroyed with a callback pending completes its work, as
 * CUDA's does: the callback runs once, with 0 when nothing failed.
 */
static int destroyed_stream_completes(void)
{
	struct seen seen = SEEN_INIT;
	accel_event_t gate;
	accel_stream_t s;

	CHECK_OK(destroyed_with_callback(&seen, &s, &gate));
	CHECK_OK(t_gate_open(gate));
	CHECK_OK(called_once(&seen, s, 0));
	return T_PASS;
}

/* The context goes first: called from the destroy with -ECANCELED. */
static int context_destroy_cancels(void)
{
	struct seen seen = SEEN_INIT;
	accel_context *ctx;
	accel_event_t gate;
	accel_stream_t s;

	CHECK_OK(accel_context_create(&ctx, 0));
	CHECK_OK(t_gated_stream(ctx, &s, &gate));
	CHECK_OK(accel_stream_add_callback(s, record, &seen, 0));
	CHECK(seen.calls == 0);
	CHECK_OK(accel_context_destroy(ctx));
	CHECK(seen.calls == 1);
	CHECK_RET(seen.status, -ECANCELED);
	CHECK(seen.stream == s);
	return T_PASS;
}

/*
 * Calls a callback run from accel_context_destroy() makes on its stream:
 * the destroy has begun, so a wait ends at once (-ENOENT, as for a
 * destroyed context), nothing more is queued (-ENOENT: its context is
 * being destroyed: a callback, a copy, an event record, a stream wait),
 * the stream is the destroy's to end (-ENOENT), and the not-yet-cancelled
 * work is still pending.
 */
struct in_destroy {
	int sync0, sync_inf, add, query;
	int copy, record, wait_value, launch, destroy;
	int other_sync, other_destroy;
	accel_context *other;		/* a live context, gated stream */
	accel_stream_t other_s;
	accel_event_t ev;
	void *h, *d;
	int calls;
};

static void nothing(void *arg)
{
	(void)arg;
}

static void calls_in_destroy(accel_stream_t stream, int status, void *arg)
{
	struct in_destroy *r = arg;

	(void)status;
	r->calls++;
	r->sync0 = accel_stream_synchronize(stream, 0);
	r->sync_inf = accel_stream_synchronize(stream, ACCEL_TIMEOUT_INFINITE);
	r->add = accel_stream_add_callback(stream, record, NULL, 0);
	r->copy = accel_memcpy_async(stream, r->d, r->h, 16, ACCEL_MEMCPY_H2D);
	r->record = accel_event_record(r->ev, stream);
	r->wait_value = accel_stream_wait_value(stream, r->ev, 1, 0);
	r->launch = accel_launch_host_func(stream, nothing, NULL);
	r->destroy = accel_stream_destroy(stream);
	r->query = accel_stream_query(stream);
	/* Another context's gated stream: it would end only by the timeout. */
	r->other_sync = accel_stream_synchronize(r->other_s, 2 * T_SEC);
	r->other_destroy = accel_context_destroy(r->other);
}

static int calls_from_destroy(void)
{
	struct in_destroy r = { 0 };
	accel_event_t gate, other_gate;
	accel_context *ctx;
	accel_stream_t s;

	CHECK_OK(accel_context_create(&ctx, 0));
	CHECK_OK(t_gated_stream(ctx, &s, &gate));
	CHECK_OK(accel_host_alloc(ctx, &r.h, 16, 0));
	CHECK_OK(accel_malloc(ctx, &r.d, 16));
	CHECK_OK(accel_event_create(ctx, ACCEL_EVENT_HOST, &r.ev));
	CHECK_OK(accel_context_create(&r.other, 0));
	CHECK_OK(t_gated_stream(r.other, &r.other_s, &other_gate));
	CHECK_OK(accel_stream_add_callback(s, calls_in_destroy, &r, 0));
	CHECK_OK(accel_context_destroy(ctx));
	CHECK_RET(r.calls, 1);
	CHECK_RET(accel_stream_synchronize(s, 0), -ENOENT);
	/* A callback follows the host-function rules on this path too. */
	CHECK_FN_WAITS(r.sync_inf, r.other_sync, r.sync0);
	CHECK_RET(r.other_destroy, -EDEADLK);
	CHECK_RET(r.add, -ENOENT);
	CHECK_RET(r.copy, -ENOENT);
	CHECK_RET(r.record, -ENOENT);
	CHECK_RET(r.wait_value, -ENOENT);
	CHECK_RET(r.launch, -ENOENT);
	CHECK_RET(r.destroy, -ENOENT);
	CHECK_RET(r.query, -EAGAIN);
	CHECK_OK(t_gate_open(other_gate));
	CHECK_OK(accel_context_destroy(r.other));
	return T_PASS;
}

static int errnos(void)
{
	struct seen seen = SEEN_INIT;
	accel_stream_t s;

	CHECK_RET(accel_stream_add_callback(ACCEL_STREAM_DEFAULT, record,
					    &seen, 0), -ENODEV);
	CHECK_OK(t_stream(&s));
	CHECK_RET(accel_stream_add_callback(s, NULL, NULL, 0), -EINVAL);
	CHECK_RET(accel_stream_add_callback(s, record, &seen, 1), -EINVAL);
	CHECK_OK(accel_stream_destroy(s));
	CHECK_RET(accel_stream_add_callback(s, record, &seen, 0), -ENOENT);
	CHECK(seen.calls == 0);
	return T_PASS;
}

static int failed_before_the_call(void)
{
	struct seen seen = SEEN_INIT;
	accel_stream_t s;

	CHECK_OK(t_stream(&s));
	CHECK_RET(t_fail_stream(s), -EIO);
	CHECK_RET(accel_stream_add_callback(s, record, &seen, 0), -EIO);
	CHECK(seen.calls == 0);
	return T_PASS;
}

static int queue_full(void)
{
	struct seen seen = SEEN_INIT;
	accel_event_t gate;
	unsigned char *h;
	accel_stream_t s;
	int i, ret = 0;
	void *d;

	CHECK_OK(t_stream(&s));
	CHECK_OK(accel_host_alloc(NULL, (void **)&h, 1, 0));
	CHECK_OK(accel_malloc(NULL, &d, 1));
	CHECK_OK(t_gate(s, &gate));
	for (i = 0; i < 1 << 20 && !ret; i++)
		ret = accel_memcpy_async(s, d, h, 1, ACCEL_MEMCPY_H2D);
	CHECK_RET(ret, -EAGAIN);
	CHECK_RET(accel_stream_add_callback(s, record, &seen, 0), -EAGAIN);
	CHECK_OK(t_gate_open(gate));
	CHECK_OK(accel_stream_synchronize(s, ACCEL_TIMEOUT_INFINITE));
	CHECK(seen.calls == 0);
	return T_PASS;
}

static int other_process(void)
{
	struct seen seen = SEEN_INIT;
	accel_stream_t s;
	int status;
	pid_t pid;

	if (getenv("ACCEL_BACKEND") && strcmp(getenv("ACCEL_BACKEND"), "cpu"))
		return T_SKIP;		/* a CUDA backend does not survive fork */
	CHECK_OK(t_stream(&s));
	pid = fork();
	CHECK(pid >= 0);
	if (!pid)
		_exit(accel_stream_add_callback(s, record, &seen, 0) ==
		      -EACCES ? 0 : 1);
	CHECK(waitpid(pid, &status, 0) == pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	CHECK(seen.calls == 0);
	return T_PASS;
}

T_MAIN(T(failed_before_the_call), T(queue_full), T(other_process),
       T(success_status_zero_in_order), T(default_stream_named_as_given),
       T(failed_stream_reports_error), T(destroyed_stream_still_reports),
       T(destroyed_stream_completes),
       T(context_destroy_cancels), T(calls_from_destroy), T(errnos))
