// SPDX-License-Identifier: MIT
/*
 * accel_event_destroy() of a host event that a stream's queued
 * accel_stream_wait_value() still waits on: -EBUSY, and nothing changed
 * (the handle, the counter, the waiting stream); once the value is
 * reached, the wait completes and the destroy succeeds. A write queued on
 * a stream does not make the destroy possible (it may never run); a
 * satisfied or failed wait does not hold it back; destroying the context
 * still tears the blocked stream down.
 */
#include "helpers.h"

/* The stream's wait and the work behind it have not run: nothing retired. */
static int stream_still_waits(accel_stream_t s)
{
	CHECK_RET(accel_stream_query(s), -EAGAIN);
	CHECK_RET(accel_stream_synchronize(s, 0), -ETIME);
	return T_PASS;
}

/* Refused while the wait is not satisfied; the signal releases both. */
static int busy_until_signalled(void)
{
	accel_event_t ev, done;
	accel_stream_t s;

	CHECK_OK(t_stream(&s));
	CHECK_OK(accel_event_create(NULL, ACCEL_EVENT_HOST, &ev));
	CHECK_OK(accel_event_create(NULL, 0, &done));
	CHECK_OK(accel_stream_wait_value(s, ev, 2, 0));
	CHECK_OK(accel_event_record(done, s));
	CHECK_RET(accel_event_destroy(ev), -EBUSY);
	CHECK(strstr(accel_last_error_string(), "accel_stream_wait_value"));
	/* Nothing changed: the handle works, the counter is 0, s waits. */
	CHECK_RET(accel_event_query(ev), -EAGAIN);
	CHECK_RET(accel_event_query(done), -EAGAIN);
	CHECK_RET(stream_still_waits(s), T_PASS);
	/* Below the value: still refused. */
	CHECK_OK(accel_event_signal(ev, 1, 0));
	CHECK_OK(accel_event_query(ev));
	CHECK_RET(accel_event_destroy(ev), -EBUSY);
	CHECK_RET(stream_still_waits(s), T_PASS);
	/* At the value: the wait completes, s drains, the destroy goes. */
	CHECK_OK(accel_event_signal(ev, 2, 0));
	CHECK_OK(accel_stream_synchronize(s, ACCEL_TIMEOUT_INFINITE));
	CHECK_OK(accel_event_query(done));
	CHECK_OK(accel_event_destroy(ev));
	CHECK_RET(accel_event_destroy(ev), -ENOENT);
	CHECK_RET(accel_event_signal(ev, 3, 0), -ENOENT);
	return T_PASS;
}

/*
 * A write queued on another stream would release the wait, but may never
 * run (its stream can fail first): still refused. So is a write queued
 * behind the wait on the waiting stream itself, which never can.
 */
static int busy_with_write_queued(void)
{
	accel_stream_t a, b;
	accel_event_t gate, ev;

	CHECK_OK(t_two_streams(&a, &b));
	CHECK_OK(accel_event_create(NULL, ACCEL_EVENT_HOST, &ev));
	CHECK_OK(t_gate(a, &gate));
	CHECK_OK(accel_stream_write_value(a, ev, 1, 0));
	CHECK_OK(accel_stream_wait_value(b, ev, 1, 0));
	CHECK_OK(accel_stream_write_value(b, ev, 2, 0));
	CHECK_RET(accel_event_destroy(ev), -EBUSY);
	CHECK_RET(stream_still_waits(b), T_PASS);
	/* a's write runs once its gate opens: b's wait completes. */
	CHECK_OK(t_gate_drain(a, gate, ACCEL_TIMEOUT_INFINITE));
	CHECK_OK(accel_stream_synchronize(b, ACCEL_TIMEOUT_INFINITE));
	CHECK_OK(accel_event_destroy(ev));
	return T_PASS;
}

/* Waits that are satisfied, or fail, do not hold the destroy back. */
static int satisfied_or_failed_waits_do_not(void)
{
	accel_event_t gate, ev, bad;
	accel_stream_t s, f, w;

	CHECK_OK(t_two_streams(&s, &f));
	/* Queued behind a gate, its value reached already. */
	CHECK_OK(accel_event_create(NULL, ACCEL_EVENT_HOST, &ev));
	CHECK_OK(accel_event_signal(ev, 5, 0));
	CHECK_OK(t_gate(s, &gate));
	CHECK_OK(accel_stream_wait_value(s, ev, 5, 0));
	CHECK_OK(accel_stream_wait_value(s, ev, 0, 0));
	CHECK_OK(accel_event_destroy(ev));
	CHECK_OK(t_gate_drain(s, gate, ACCEL_TIMEOUT_INFINITE));
	/* An event signalled with an error fails its waiters: no hang. */
	CHECK_OK(accel_event_create(NULL, ACCEL_EVENT_HOST, &bad));
	CHECK_OK(t_gate(f, &gate));
	CHECK_OK(accel_stream_wait_value(f, bad, 7, 0));
	CHECK_OK(accel_event_signal(bad, 1, ACCEL_EVENT_SIGNAL_ERROR));
	CHECK_OK(accel_event_destroy(bad));
	CHECK_OK(t_gate_open(gate));
	CHECK_RET(accel_stream_synchronize(f, ACCEL_TIMEOUT_INFINITE), -EIO);
	/* Plain events were never held back: a stream wait holds a point. */
	CHECK_OK(accel_event_create(NULL, 0, &ev));
	CHECK_OK(t_gate(s, &gate));
	CHECK_OK(accel_event_record(ev, s));
	CHECK_OK(accel_stream_create(NULL, 0, 0, &w));
	CHECK_OK(accel_stream_wait_event(w, ev, 0));
	CHECK_OK(accel_event_destroy(ev));
	CHECK_RET(stream_still_waits(w), T_PASS);
	CHECK_OK(t_gate_drain(s, gate, ACCEL_TIMEOUT_INFINITE));
	CHECK_OK(accel_stream_synchronize(w, ACCEL_TIMEOUT_INFINITE));
	return T_PASS;
}

/* The context goes with a stream blocked for good: no hang, no leak. */
static int context_destroy_with_wait(void)
{
	accel_context *ctx;
	accel_event_t ev;
	accel_stream_t s;

	CHECK_OK(accel_context_create(&ctx, 0));
	CHECK_OK(accel_stream_create(ctx, 0, 0, &s));
	CHECK_OK(accel_event_create(ctx, ACCEL_EVENT_HOST, &ev));
	CHECK_OK(accel_stream_wait_value(s, ev, 1, 0));
	CHECK_RET(accel_event_destroy(ev), -EBUSY);
	CHECK_OK(accel_context_destroy(ctx));
	CHECK_RET(accel_event_query(ev), -ENOENT);
	CHECK_RET(accel_stream_query(s), -ENOENT);
	return T_PASS;
}

T_MAIN(T(busy_until_signalled), T(busy_with_write_queued),
       T(satisfied_or_failed_waits_do_not), T(context_destroy_with_wait))
