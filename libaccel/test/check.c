// SPDX-License-Identifier: MIT
/* ACCEL_CHECK=1: a write into an in-flight source is caught and reported. */
#include <signal.h>
#include <stdbool.h>
#include <sys/wait.h>
#include "helpers.h"

/* Run @fn in a child with stderr captured; return its wait status. */
static int in_child(int (*fn)(void), char *err, size_t len)
{
	int pipefd[2], status;
	ssize_t n, got = 0;
	pid_t pid;

	if (pipe(pipefd))
		return -1;
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		close(pipefd[0]);
		dup2(pipefd[1], STDERR_FILENO);
		_exit(fn());
	}
	close(pipefd[1]);
	while ((n = read(pipefd[0], err + got, len - 1 - (size_t)got)) > 0)
		got += n;
	err[got] = 0;
	close(pipefd[0]);
	waitpid(pid, &status, 0);
	return status;
}

/*
 * In a fresh context, queue behind a closed gate an H2D of @len bytes at
 * @off into three pinned pages, then write the byte at @poke: a write the
 * check must stop (it does not return).
 */
static int write_watched(size_t off, size_t len, size_t poke)
{
	accel_context *ctx;
	accel_stream_t s;
	accel_event_t gate;
	unsigned char *h;
	void *d;

	if (accel_context_create(&ctx, 0) ||
	    accel_stream_create(ctx, 0, 0, &s) ||
	    accel_host_alloc(ctx, (void **)&h, 3 * 4096, 0) ||
	    accel_malloc(ctx, &d, 3 * 4096) || t_gate(s, &gate) ||
	    accel_memcpy_async(s, d, h + off, len, ACCEL_MEMCPY_H2D))
		return 2;
	h[poke] = 1;	/* must not return */
	return 3;
}

static int write_in_flight(void)
{
	return write_watched(0, 3 * 4096, 4096 + 5);
}

/* A write 95 bytes before a source that starts inside a watched page. */
static int write_before_source(void)
{
	return write_watched(200, 2 * 4096, 105);
}

static int write_after_sync(void)
{
	accel_context *ctx;
	accel_stream_t s;
	unsigned char *h, *reg;
	void *d;

	reg = aligned_alloc(4096, 4 * 4096);
	if (!reg || accel_context_create(&ctx, 0) ||
	    accel_stream_create(ctx, 0, 0, &s) ||
	    accel_host_alloc(ctx, (void **)&h, 4096, 0) ||
	    accel_host_register(ctx, reg, 4 * 4096, 0) ||
	    accel_malloc(ctx, &d, 4 * 4096) ||
	    accel_memcpy_async(s, d, h, 4096, ACCEL_MEMCPY_H2D) ||
	    accel_memcpy_async(s, d, reg, 4 * 4096, ACCEL_MEMCPY_H2D) ||
	    accel_memcpy_async(s, reg, d, 4096, ACCEL_MEMCPY_D2H) ||
	    accel_stream_synchronize(s, ACCEL_TIMEOUT_INFINITE))
		return 2;
	h[0] = 1;
	reg[3 * 4096] = 1;
	/* Unregistering with a watched copy in flight unwatches it. */
	if (accel_memcpy_async(s, d, reg, 4 * 4096, ACCEL_MEMCPY_H2D) ||
	    accel_host_unregister(reg, ACCEL_HOST_UNREGISTER_DEFERRED))
		return 2;
	reg[0] = 2;
	if (accel_stream_synchronize(s, ACCEL_TIMEOUT_INFINITE))
		return 2;
	return 0;
}

/* Run @fn in a child that the check stops with SIGABRT and a report. */
static bool stopped_with_report(int (*fn)(void), char *err, size_t len)
{
	int st = in_child(fn, err, len);

	printf("# child stderr: %s", err);
	return WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT &&
	       strstr(err, "ACCEL_CHECK");
}

static int caught_and_reported(void)
{
	char err[4096];

	CHECK(stopped_with_report(write_in_flight, err, sizeof(err)));
	CHECK(strstr(err, "stream"));
	CHECK(strstr(err, "seq"));
	CHECK(strstr(err, "offset 4101"));
	return T_PASS;
}

/* Outside the buffer but in one of its pages: said so, offset signed. */
static int outside_buffer_reported_as_such(void)
{
	char err[4096];

	CHECK(stopped_with_report(write_before_source, err, sizeof(err)));
	CHECK(strstr(err, "outside the source buffer"));
	CHECK(strstr(err, "offset -95"));
	CHECK(!strstr(err, "inside the source buffer"));
	return T_PASS;
}

static int no_false_reports(void)
{
	char err[4096];
	int st;

	st = in_child(write_after_sync, err, sizeof(err));
	if (err[0])
		printf("# child stderr: %s", err);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	return T_PASS;
}

static int probe(void)
{
	accel_context *ctx;
	int ret = accel_context_create(&ctx, 0);

	if (ret) {
		fprintf(stderr, "%s %s\n", accel_strerror(ret),
			accel_last_error_string());
		return 4;
	}
	accel_context_destroy(ctx);
	return 0;
}

int main(void)
{
	static const struct t_case cases[] = {
		T(caught_and_reported), T(outside_buffer_reported_as_such),
		T(no_false_reports),
	};

	setenv("ACCEL_CHECK", "1", 1);
	/* Probe in a child: the children below create their own contexts. */
	{
		char err[4096];
		int st = in_child(probe, err, sizeof(err));

		if (!WIFEXITED(st) || WEXITSTATUS(st)) {
			printf("TAP version 13\n1..1\nok 1 transport # SKIP no accelstream transport or backend: %s",
			       err);
			return T_SKIP;
		}
	}
	t_no_probe = 1;
	return t_run(cases, sizeof(cases) / sizeof(cases[0]));
}
