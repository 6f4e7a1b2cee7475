// SPDX-License-Identifier: MIT
/*
 * fork(): a child inherits no shared mapping of the library's pinned
 * memory, on either transport: not the in-process transport's own view of
 * an accel_host_alloc() block's memory file, not the staging chunks or
 * ring (a memory file in process, the device's pages over the module).
 * The child walks /proc/self/maps for any shared mapping named after
 * accelstream ("/memfd:accelstream-host", "/dev/accelstream") and writes
 * over what it finds: the parent's pinned allocation and a staged copy it
 * queued before the fork (its pageable source already freed) keep the
 * parent's bytes. Both with the default ACCEL_FORK_COPY_MAX_MB and with 0
 * (the user-visible range is then inaccessible in the child, as before).
 */
#include <fcntl.h>
#include <sys/wait.h>

#include "helpers.h"

#define PIN_LEN		(1U << 20)
#define STAGED_LEN	(8U << 20)
#define CHILD_ALARM_S	20

static char maps[1 << 20];

/*
 * In the child: the bytes of shared accelstream mappings, each written
 * over with 0xee, or -1 if the map cannot be read. Only system calls and
 * the string functions: the parent has the library's threads.
 */
static long child_overwrite_shared(void)
{
	size_t len = 0;
	long found = 0;
	char *line, *nl;
	ssize_t n;
	int fd;

	fd = open("/proc/self/maps", O_RDONLY);
	if (fd < 0)
		return -1;
	while (len < sizeof(maps) - 1 &&
	       (n = read(fd, maps + len, sizeof(maps) - 1 - len)) > 0)
		len += n;
	close(fd);
	maps[len] = '\0';
	for (line = maps; *line; line = nl + 1) {
		unsigned long a, b;
		char perm[5];

		nl = strchr(line, '\n');
		if (!nl)
			break;
		*nl = '\0';
		if (sscanf(line, "%lx-%lx %4s", &a, &b, perm) != 3)
			continue;
		if (perm[3] != 's' || !strstr(line, "accelstream"))
			continue;
		printf("# child inherited: %s\n", line);
		fflush(stdout);
		found += b - a;
		if (perm[1] == 'w')
			memset((void *)a, 0xee, b - a);
	}
	return found;
}

static int skip_cuda(void)
{
	const char *backend = "";

	accel_context_get_backend(NULL, &backend);
	return !strcmp(backend, "cuda");
}

static int fork_inherits_nothing_shared(const char *copy_max)
{
	unsigned char *pinned, *src, *out;
	accel_event_t gate;
	accel_stream_t s;
	int status, k;
	size_t i;
	pid_t pid;
	void *d;

	CHECK(t_ctx());
	if (skip_cuda())
		return T_SKIP;	/* the CUDA backend does not survive fork() */
	CHECK_OK(accel_stream_create(NULL, 0, 0, &s));
	CHECK_OK(accel_malloc(NULL, &d, STAGED_LEN));
	CHECK_OK(accel_host_alloc(NULL, (void **)&pinned, PIN_LEN, 0));
	memset(pinned, 0x11, PIN_LEN);
	src = malloc(STAGED_LEN);
	out = malloc(STAGED_LEN);
	CHECK(src && out);
	/* The staging pool's chunks exist before the fork. */
	memset(src, 0, STAGED_LEN);
	CHECK_OK(accel_memcpy_async(s, d, src, STAGED_LEN, ACCEL_MEMCPY_H2D));
	CHECK_OK(accel_stream_synchronize(s, ACCEL_TIMEOUT_INFINITE));
	/* Staged and held back: its source is read before the call returns. */
	CHECK_OK(t_gate(s, &gate));
	memset(src, 0xaa, STAGED_LEN);
	CHECK_OK(accel_memcpy_async(s, d, src, STAGED_LEN, ACCEL_MEMCPY_H2D));
	free(src);
	if (copy_max)
		CHECK(!setenv("ACCEL_FORK_COPY_MAX_MB", copy_max, 1));
	/* Twice: the first fork leaves nothing inheritable behind. */
	for (k = 0; k < 2; k++) {
		fflush(stdout);
		pid = fork();
		if (!pid) {
			alarm(CHILD_ALARM_S);
			_exit(child_overwrite_shared() ? 1 : 0);
		}
		CHECK(pid > 0);
		CHECK(waitpid(pid, &status, 0) == pid);
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			printf("# child: status %#x (1: shared mappings inherited)\n",
			       status);
		CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	}
	unsetenv("ACCEL_FORK_COPY_MAX_MB");
	for (i = 0; i < PIN_LEN; i++)
		CHECK(pinned[i] == 0x11);
	CHECK_OK(t_gate_open(gate));
	memset(out, 0, STAGED_LEN);
	CHECK_OK(accel_memcpy_async(s, out, d, STAGED_LEN, ACCEL_MEMCPY_D2H));
	CHECK_OK(accel_stream_synchronize(s, ACCEL_TIMEOUT_INFINITE));
	for (i = 0; i < STAGED_LEN; i++)
		if (out[i] != 0xaa)
			break;
	if (i < STAGED_LEN)
		printf("# staged copy: byte %zu is %#x, want 0xaa\n", i, out[i]);
	CHECK(i == STAGED_LEN);
	free(out);
	CHECK_OK(accel_host_free(pinned));
	CHECK_OK(accel_free(d));
	CHECK_OK(accel_stream_destroy(s));
	return T_PASS;
}

static int fork_default_copy(void)
{
	return fork_inherits_nothing_shared(NULL);
}

static int fork_copy_max_zero(void)
{
	return fork_inherits_nothing_shared("0");
}

T_MAIN(T(fork_default_copy), T(fork_copy_max_zero))
