// SPDX-License-Identifier: MIT
/*
 * ACCEL_EVENT_BLOCKING_SYNC (cudaEventBlockingSync): accepted on plain and
 * host events, and a host waiting on such an event sleeps: the CPU time
 * of the waiting thread (getrusage(RUSAGE_THREAD)) stays far below the
 * time it waited on a gated stream. A behaviour check with a generous
 * bound, not a timing assertion: a waiter that spun would use about as
 * much CPU as it waited.
 */
#include <sys/resource.h>
#include <time.h>

#include "helpers.h"

#define WAIT_MS		300

static int flags_accepted(void)
{
	accel_event_t a, b, c;
	accel_stream_t s;

	CHECK_OK(t_stream(&s));
	CHECK_OK(accel_event_create(NULL, ACCEL_EVENT_BLOCKING_SYNC, &a));
	CHECK_OK(accel_event_create(NULL, ACCEL_EVENT_BLOCKING_SYNC |
				    ACCEL_EVENT_DISABLE_TIMING, &b));
	CHECK_OK(accel_event_create(NULL, ACCEL_EVENT_BLOCKING_SYNC |
				    ACCEL_EVENT_HOST, &c));
	CHECK_RET(accel_event_create(NULL, ACCEL_EVENT_BLOCKING_SYNC | 0x80,
				     &a), -EINVAL);
	/* Otherwise events like any other. */
	CHECK_OK(accel_event_record(a, s));
	CHECK_OK(accel_event_record(b, s));
	CHECK_RET(accel_event_record(c, s), -EINVAL);
	CHECK_OK(accel_event_synchronize(a, ACCEL_TIMEOUT_INFINITE));
	CHECK_OK(accel_event_synchronize(b, ACCEL_TIMEOUT_INFINITE));
	CHECK_RET(accel_event_synchronize(c, 0), -ETIME);
	CHECK_OK(accel_event_signal(c, 1, 0));
	CHECK_OK(accel_event_synchronize(c, ACCEL_TIMEOUT_INFINITE));
	return T_PASS;
}

static uint64_t thread_cpu_ns(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_THREAD, &ru))
		return 0;
	return (uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * T_SEC +
	       (uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * T_SEC + (uint64_t)ts.tv_nsec;
}

struct waiter {
	accel_event_t ev[2];
	unsigned int n;		/* 1: accel_event_synchronize, 2: _wait */
	int ret;
	uint64_t cpu_ns, wall_ns;
};

static void *waiter_main(void *arg)
{
	struct waiter *w = arg;
	uint64_t cpu = thread_cpu_ns(), t0 = mono_ns();

	if (w->n == 1)
		w->ret = accel_event_synchronize(w->ev[0],
						 ACCEL_TIMEOUT_INFINITE);
	else
		w->ret = accel_event_wait(w->ev, w->n, ACCEL_WAIT_ALL,
					  ACCEL_TIMEOUT_INFINITE, NULL);
	w->cpu_ns = thread_cpu_ns() - cpu;
	w->wall_ns = mono_ns() - t0;
	return NULL;
}

/* The waiter on a gated stream's blocking-sync event uses little CPU. */
static int sleep_while_gated(unsigned int n, unsigned int extra)
{
	struct waiter w = { .n = n, .ret = 1 };
	struct timespec nap = { 0, WAIT_MS * 1000000L };
	accel_event_t gate;
	accel_stream_t s;
	pthread_t t;
	unsigned int i;

	CHECK_OK(t_stream(&s));
	CHECK_OK(t_gate(s, &gate));
	for (i = 0; i < n; i++) {
		CHECK_OK(accel_event_create(NULL, ACCEL_EVENT_BLOCKING_SYNC |
					    extra, &w.ev[i]));
		CHECK_OK(accel_event_record(w.ev[i], s));
	}
	CHECK(!pthread_create(&t, NULL, waiter_main, &w));
	nanosleep(&nap, NULL);
	/* Still gated: the waiter has been waiting all along. */
	CHECK_RET(accel_event_query(w.ev[n - 1]), -EAGAIN);
	CHECK_OK(t_gate_open(gate));
	CHECK(!pthread_join(t, NULL));
	CHECK_OK(w.ret);
	printf("# waited %llu ms, used %llu us of CPU\n",
	       (unsigned long long)(w.wall_ns / 1000000),
	       (unsigned long long)(w.cpu_ns / 1000));
	/* Generous: a third of the nap, which alone the waiter waited. */
	CHECK(w.cpu_ns < WAIT_MS * 1000000ULL / 3);
	return T_PASS;
}

static int synchronize_sleeps(void)
{
	return sleep_while_gated(1, 0);
}

static int wait_all_sleeps(void)
{
	return sleep_while_gated(2, ACCEL_EVENT_DISABLE_TIMING);
}

T_MAIN(T(flags_accepted), T(synchronize_sleeps), T(wait_all_sleeps))
