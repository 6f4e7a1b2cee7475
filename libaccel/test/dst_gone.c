// SPDX-License-Identifier: MIT
/*
 * A pageable destination freed (unmapped) before the copy into it
 * finished. libaccel's promise covers sources only (CUDA calls this
 * undefined): nothing is written, the library's threads do not crash, and
 * under ACCEL_CHECK=1 the check mode reports it to the log callback (and
 * prints nothing itself).
 */
#include <fcntl.h>
#include <sys/mman.h>
#include <syslog.h>

#include "helpers.h"

struct report {
	pthread_mutex_t lock;
	int priority;
	char text[1024];
};

/* The check's report arrives from one of libaccel's threads. */
static void catch_report(void *data, int priority, const char *msg)
{
	struct report *r = data;

	pthread_mutex_lock(&r->lock);
	if (strstr(msg, "ACCEL_CHECK")) {
		r->priority = priority;
		snprintf(r->text, sizeof(r->text), "%s", msg);
	}
	pthread_mutex_unlock(&r->lock);
}

static int freed_destination(int h2h)
{
	const size_t n = 256 * 1024;
	unsigned char *dst, *src, *h;
	struct report r = { .lock = PTHREAD_MUTEX_INITIALIZER };
	char report[1024];
	accel_event_t gate;
	accel_stream_t s;
	int fds[2], saved;
	ssize_t got;
	void *d;

	CHECK_OK(t_dev_setup(n, &s, &d));
	CHECK_OK(accel_host_alloc(NULL, (void **)&h, n, 0));
	src = malloc(n);
	CHECK(src);
	dst = mmap(NULL, n, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(dst != MAP_FAILED);
	CHECK_OK(t_gate(s, &gate));
	if (h2h)
		CHECK_OK(accel_memcpy_async(s, dst, src, n, ACCEL_MEMCPY_H2H));
	else
		CHECK_OK(accel_memcpy_async(s, dst, d, n, ACCEL_MEMCPY_D2H));
	CHECK(!t_punch(dst, n));
	/*
	 * The report goes to the log callback; standard error, caught in a
	 * pipe, stays empty.
	 */
	accel_set_log_fn(catch_report, &r);
	fflush(stderr);
	CHECK(!pipe2(fds, O_NONBLOCK));
	saved = dup(STDERR_FILENO);
	CHECK(saved >= 0 && dup2(fds[1], STDERR_FILENO) == STDERR_FILENO);
	CHECK_OK(t_gate_open(gate));
	CHECK_OK(accel_stream_synchronize(s, 30 * T_SEC));
	/* The stream goes on: a later copy works. */
	t_fill(src, n, 9);
	CHECK_OK(accel_memcpy_async(s, h, src, n, ACCEL_MEMCPY_H2H));
	CHECK_OK(accel_stream_synchronize(s, 30 * T_SEC));
	CHECK(t_check_fill(h, n, 9));
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	close(fds[1]);
	got = read(fds[0], report, sizeof(report) - 1);
	close(fds[0]);
	accel_set_log_fn(NULL, NULL);
	CHECK(got <= 0);			/* nothing printed */
	printf("# %s\n", r.text);
	CHECK(r.priority == LOG_WARNING);
	CHECK(strstr(r.text, "ACCEL_CHECK: the pageable destination"));
	CHECK(strstr(r.text, "freed or unmapped before the copy finished"));
	free(src);
	return T_PASS;
}

static int freed_d2h_destination(void)
{
	return freed_destination(0);
}

static int freed_h2h_destination(void)
{
	return freed_destination(1);
}

int main(void)
{
	static const struct t_case cases[] = {
		T(freed_d2h_destination), T(freed_h2h_destination),
	};

	/* Before the first call: the mode is read once. */
	setenv("ACCEL_CHECK", "1", 1);
	return t_run(cases, sizeof(cases) / sizeof(cases[0]));
}
