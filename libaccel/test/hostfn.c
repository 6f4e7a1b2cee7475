// SPDX-License-Identifier: MIT
/* accel_launch_host_func: ordering against the stream's work. */
#include "helpers.h"

struct seen {
	unsigned char *pinned;
	unsigned char value;
	int calls;
};

static void read_then_write(void *arg)
{
	struct seen *s = arg;

	s->value = s->pinned[0];	/* the copy before us has landed */
	s->pinned[0] = 42;		/* the copy after us must see this */
	s->calls++;
}

static int runs_after_prior_before_later(void)
{
	struct seen seen = { 0 };
	struct t_byte_trip t;

	CHECK_OK(t_byte_trip_out(&t));
	seen.pinned = t.out;
	CHECK_OK(accel_launch_host_func(t.s, read_then_write, &seen));
	CHECK_OK(t_byte_trip_back(&t));
	CHECK(seen.calls == 1);
	CHECK(seen.value == 7);
	CHECK(t.h[0] == 42);
	return T_PASS;
}

struct order {
	pthread_mutex_t m;
	int next;
	int bad;
};

struct step {
	struct order *o;
	int idx;
};

static void check_order(void *arg)
{
	struct step *st = arg;

	pthread_mutex_lock(&st->o->m);
	if (st->o->next != st->idx)
		st->o->bad = 1;
	st->o->next++;
	pthread_mutex_unlock(&st->o->m);
}

static int many_in_order(void)
{
	struct order o = { .m = PTHREAD_MUTEX_INITIALIZER };
	static struct step steps[300];
	accel_stream_t s;
	int i;

	CHECK_OK(t_stream(&s));
	for (i = 0; i < 300; i++) {
		steps[i].o = &o;
		steps[i].idx = i;
		CHECK_OK(accel_launch_host_func(s, check_order, &steps[i]));
	}
	CHECK_OK(accel_stream_synchronize(s, ACCEL_TIMEOUT_INFINITE));
	CHECK(o.next == 300);
	CHECK(!o.bad);
	return T_PASS;
}

static void mark(void *arg)
{
	*(int *)arg += 1;
}

/*
 * Host functions of different streams do not block each other: x's
 * function is queued first but waits (through an event) for y's.
 */
static int across_streams_no_false_dependency(void)
{
	accel_stream_t x, y;
	accel_event_t ev;
	int fx = 0, fy = 0;

	CHECK_OK(t_two_streams(&x, &y));
	CHECK_OK(accel_event_create(NULL, 0, &ev));
	CHECK_OK(accel_event_record(ev, y));	/* placeholder point */
	CHECK_OK(accel_stream_synchronize(y, ACCEL_TIMEOUT_INFINITE));
	{
		accel_event_t gate;

		CHECK_OK(t_gate(y, &gate));
		CHECK_OK(accel_launch_host_func(y, mark, &fy));
		CHECK_OK(accel_event_record(ev, y));
		CHECK_OK(accel_stream_wait_event(x, ev, 0));
		CHECK_OK(accel_launch_host_func(x, mark, &fx));
		CHECK_OK(t_gate_open(gate));
	}
	CHECK_OK(accel_stream_synchronize(x, 10 * T_SEC));
	CHECK(fx == 1 && fy == 1);
	return T_PASS;
}

static int failed_stream_skips_function(void)
{
	accel_stream_t s;
	accel_event_t gate;
	int calls = 0;

	CHECK_OK(t_gated_stream(NULL, &s, &gate));
	CHECK_OK(accel_launch_host_func(s, mark, &calls));
	CHECK_OK(accel_event_signal(gate, 0, ACCEL_EVENT_SIGNAL_ERROR));
	CHECK_RET(accel_stream_synchronize(s, 10 * T_SEC), -EIO);
	CHECK(calls == 0);
	return T_PASS;
}

static int errnos(void)
{
	accel_stream_t s;

	CHECK_OK(t_stream(&s));
	CHECK_RET(accel_launch_host_func(s, NULL, NULL), -EINVAL);
	CHECK_OK(accel_stream_destroy(s));
	CHECK_RET(accel_launch_host_func(s, mark, NULL), -ENOENT);
	return T_PASS;
}

T_MAIN(T(runs_after_prior_before_later), T(many_in_order),
       T(across_streams_no_false_dependency),
       T(failed_stream_skips_function), T(errnos))
