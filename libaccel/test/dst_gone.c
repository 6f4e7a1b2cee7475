// SPDX-License-Identifier: MIT
/*
 * A pageable destination freed (unmapped) before the copy into it
 * finished. libaccel's promise covers sources only (CUDA calls this
 * undefined): nothing is written, the library's threads do not crash, and
 * under ACCEL_CHECK=1 the check mode reports it on standard error.
 */
#include <fcntl.h>
#include <sys/mman.h>

#include "helpers.h"

static int freed_destination(int h2h)
{
	const size_t n = 256 * 1024;
	unsigned char *dst, *src, *h;
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
	/* The report goes to standard error: catch it in a pipe. */
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
	dup2(saved, STDERR_FILENO);
	close(saved);
	close(fds[1]);
	got = read(fds[0], report, sizeof(report) - 1);
	close(fds[0]);
	CHECK(got > 0);
	report[got] = '\0';
	printf("# %s", report);
	CHECK(strstr(report, "ACCEL_CHECK: the pageable destination"));
	CHECK(strstr(report, "freed or unmapped before the copy finished"));
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
