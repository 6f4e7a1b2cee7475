// SPDX-License-Identifier: MIT
/*
 * accel_last_error_string() after a failed call: not empty, and naming
 * what was wrong (the argument, the numbers), for each failure libaccel(7)
 * says it explains: the bounds and kinds of copies, fills and 2D copies,
 * another context's memory, frees of interior pointers, the device memory
 * limit, a full queue, a failed stream, a pending export of another
 * process and the pinning limits.
 */
#include <signal.h>
#include <stdbool.h>
#include <sys/wait.h>

#include "helpers.h"

#define MB	(1024UL * 1024)

/* The call's errno, then each of the words in its message. */
#define CHECK_MSG(expr, want, ...) do {					\
	const char *const _words[] = { __VA_ARGS__ };		\
	const char *_m;							\
	unsigned int _i;						\
									\
	CHECK_RET(expr, want);						\
	_m = accel_last_error_string();					\
	for (_i = 0; _i < sizeof(_words) / sizeof(_words[0]); _i++) {	\
		if (!strstr(_m, _words[_i])) {				\
			printf("# %s:%d: \"%s\" not in \"%s\"\n",	\
			       __FILE__, __LINE__, _words[_i], _m);	\
			return T_FAIL;					\
		}							\
	}								\
} while (0)

/* The last message does not say @word. */
#define CHECK_NOT_SAID(word) do {					\
	if (strstr(accel_last_error_string(), word)) {			\
		printf("# %s:%d: \"%s\" in \"%s\"\n", __FILE__,		\
		       __LINE__, word, accel_last_error_string());	\
		return T_FAIL;						\
	}								\
} while (0)

static bool transport_is(const char *want)
{
	const char *name = "";

	accel_context_get_transport(NULL, &name);
	return !strcmp(name, want);
}

static bool backend_is(const char *want)
{
	const char *name = "";

	accel_context_get_backend(NULL, &name);
	return !strcmp(name, want);
}

/* "%zu" of @n, for CHECK_MSG. */
static const char *num(char *buf, size_t n)
{
	snprintf(buf, 32, "%zu", n);
	return buf;
}

static int copy_past_device_end(void)
{
	unsigned char *h;
	accel_stream_t s;
	char a[32], b[32];
	void *d;

	CHECK_OK(t_copy_setup(4096, &s, &d, &h));
	CHECK_MSG(accel_memcpy_async(s, (char *)d + 4000, h, 200,
				     ACCEL_MEMCPY_H2D), -EINVAL,
		  "destination", "runs past", num(a, 4096), num(b, 200),
		  "offset 4000");
	CHECK_MSG(accel_memcpy_async(s, h, (char *)d + 96, 4001,
				     ACCEL_MEMCPY_D2H), -EINVAL,
		  "source", "runs past", num(a, 4096), num(b, 4001));
	/* Pinned host memory has its bounds too. */
	CHECK_MSG(accel_memcpy_async(s, d, h + 1, 4096, ACCEL_MEMCPY_H2D),
		  -EINVAL, "source", "accel_host_alloc()", num(a, 4096));
	return T_PASS;
}

static int copy_kind_mismatch(void)
{
	unsigned char *h;
	accel_stream_t s;
	void *d, *d2;

	CHECK_OK(t_copy_setup(4096, &s, &d, &h));
	CHECK_OK(accel_malloc(NULL, &d2, 4096));
	CHECK_MSG(accel_memcpy_async(s, d2, d, 64, ACCEL_MEMCPY_H2D), -EINVAL,
		  "ACCEL_MEMCPY_H2D", "source", "device memory");
	CHECK_MSG(accel_memcpy_async(s, h, h, 64, ACCEL_MEMCPY_D2H), -EINVAL,
		  "ACCEL_MEMCPY_D2H", "source", "host memory");
	CHECK_MSG(accel_memcpy_async(s, h, d, 64, ACCEL_MEMCPY_D2D), -EINVAL,
		  "ACCEL_MEMCPY_D2D", "destination");
	CHECK_MSG(accel_memcpy_async(s, d, h, 64, (enum accel_memcpy_kind)9),
		  -EINVAL, "kind 9");
	return T_PASS;
}

static int batch_kind_mismatch(void)
{
	unsigned char *h;
	accel_stream_t s;
	void *d, *dsts[2], *srcs[2];
	size_t sizes[2] = { 64, 64 };

	CHECK_OK(t_copy_setup(4096, &s, &d, &h));
	dsts[0] = d;
	srcs[0] = h;
	dsts[1] = (char *)d + 64;
	srcs[1] = (char *)d + 128;
	CHECK_MSG(accel_memcpy_batch_async(s, dsts, (const void *const *)srcs,
					   sizes, 2, ACCEL_MEMCPY_H2D),
		  -EINVAL, "ACCEL_MEMCPY_H2D", "source");
	CHECK_MSG(accel_memcpy_batch_async(s, dsts, (const void *const *)srcs,
					   sizes, 1 << 30, ACCEL_MEMCPY_H2D),
		  -EINVAL, "1073741824 copies", "at most");
	CHECK_MSG(accel_memcpy_batch_async(s, NULL, (const void *const *)srcs,
					   sizes, 2, ACCEL_MEMCPY_H2D),
		  -EINVAL, "destination array");
	return T_PASS;
}

static int memset_past_device_end(void)
{
	accel_stream_t s;
	char a[32];
	void *d;

	CHECK_OK(t_dev_setup(4096, &s, &d));
	CHECK_MSG(accel_memset_async(s, (char *)d + 4000, 0, 200), -EINVAL,
		  "runs past", num(a, 4096), "offset 4000");
	CHECK_MSG(accel_memset_d32_async(s, (char *)d + 2, 0, 4), -EINVAL,
		  "4-byte aligned");
	return T_PASS;
}

static int copy_2d_errors(void)
{
	unsigned char *h;
	accel_stream_t s;
	char a[32];
	void *d;

	CHECK_OK(t_copy_setup(4096, &s, &d, &h));
	/* 100 rows of 64 bytes span 6400 bytes of the 4096. */
	CHECK_MSG(accel_memcpy_2d_async(s, d, 64, h, 64, 64, 100,
					ACCEL_MEMCPY_H2D), -EINVAL,
		  "runs past", "6400", num(a, 4096));
	CHECK_MSG(accel_memcpy_2d_async(s, d, 32, h, 64, 64, 2,
					ACCEL_MEMCPY_H2D), -EINVAL,
		  "dpitch 32", "width 64");
	CHECK_MSG(accel_memcpy_2d_async(s, d, 64, d, 64, 64, 2,
					ACCEL_MEMCPY_H2D), -EINVAL,
		  "ACCEL_MEMCPY_H2D", "source");
	return T_PASS;
}

/* Device memory of context b named on a stream of context a. */
static int other_contexts_device_memory(void)
{
	accel_context *a = t_ctx(), *b = t_ctx();
	unsigned char pg[64], *ha;
	accel_stream_t sa;
	void *da, *db;
	int ret;

	CHECK(a && b);
	CHECK_OK(accel_stream_create(a, 0, 0, &sa));
	CHECK_OK(accel_malloc(a, &da, 4096));
	CHECK_OK(accel_host_alloc(a, (void **)&ha, 4096, 0));
	CHECK_OK(accel_malloc(b, &db, 4096));
	CHECK_MSG(accel_memcpy_async(sa, pg, db, 64, ACCEL_MEMCPY_D2H),
		  -EINVAL, "source", "another context", "accel_malloc()");
	CHECK_MSG(accel_memcpy_async(sa, da, db, 64, ACCEL_MEMCPY_D2D),
		  -EINVAL, "source", "another context");
	CHECK_MSG(accel_memcpy_async(sa, db, ha, 64, ACCEL_MEMCPY_H2D),
		  -EINVAL, "destination", "another context");
	/*
	 * Without a kind, the memory is taken for pageable: staged where the
	 * mapping can be read (the message says it was), -EFAULT naming the
	 * other context where it cannot.
	 */
	ret = accel_memcpy_async(sa, ha, db, 64, ACCEL_MEMCPY_DEFAULT);
	if (ret) {
		CHECK_MSG(ret, -EFAULT, "source", "another context");
	} else {
		CHECK(strstr(accel_last_error_string(), "another context"));
		CHECK(strstr(accel_last_error_string(), "staged"));
		CHECK_OK(accel_stream_synchronize(sa, ACCEL_TIMEOUT_INFINITE));
	}
	CHECK_MSG(accel_memset_async(sa, db, 0, 64), -EOPNOTSUPP,
		  "another context");
	return T_PASS;
}

static int freed_memory(void)
{
	unsigned char *h, *pg;
	accel_stream_t s;
	void *d;

	CHECK_OK(t_copy_setup(4096, &s, &d, &h));
	pg = malloc(64);
	CHECK(pg);
	CHECK_OK(accel_free(d));
	/*
	 * Freed device memory is no longer mapped in the process; with the
	 * stand-in libcudart it is heap memory again, pageable indeed.
	 */
	if (backend_is("cpu")) {
		CHECK_MSG(accel_memset_async(s, d, 0, 64), -EOPNOTSUPP,
			  "freed");
		CHECK_NOT_SAID("is pageable");
	}
	/* Plain pageable memory is still called that. */
	CHECK_MSG(accel_memset_async(s, pg, 0, 64), -EOPNOTSUPP,
		  "is pageable memory");
	CHECK_MSG(accel_memcpy_async(s, d, h, 64, ACCEL_MEMCPY_H2D), -EINVAL,
		  "ACCEL_MEMCPY_H2D", "destination", "pageable");
	free(pg);
	return T_PASS;
}

static int free_interior_pointer(void)
{
	unsigned char *h;
	accel_stream_t s;
	void *d;

	CHECK_OK(t_copy_setup(4096, &s, &d, &h));
	CHECK_MSG(accel_free((char *)d + 64), -EINVAL, "accel_free()",
		  "64 bytes into", "4096");
	CHECK_MSG(accel_host_free(h + 16), -EINVAL, "accel_host_free()",
		  "16 bytes into", "4096");
	CHECK_MSG(accel_free(h), -EINVAL, "accel_host_alloc()",
		  "accel_free()");
	CHECK_MSG(accel_host_free(d), -EINVAL, "accel_malloc()",
		  "accel_host_free()");
	/* Nothing was released. */
	CHECK_OK(accel_free(d));
	CHECK_OK(accel_host_free(h));
	return T_PASS;
}

static int malloc_past_device_limit(void)
{
	struct accel_device_prop prop;
	char a[32], b[32];
	void *d;

	CHECK(t_ctx());
	/* CUDA's cudaMalloc decides there (the stand-in really allocates). */
	if (backend_is("cuda"))
		return T_SKIP;
	CHECK_OK(accel_device_get_properties(NULL, &prop));
	/* Past the limit: refused before anything is allocated. */
	CHECK_MSG(accel_malloc(NULL, &d, prop.total_mem + 1), -ENOMEM,
		  "accel_malloc()", num(a, prop.total_mem + 1),
		  num(b, prop.total_mem));
	return T_PASS;
}

static int queue_full(void)
{
	accel_event_t gate;
	accel_stream_t s;
	unsigned char *h;
	void *d;
	int n = 0;

	CHECK_OK(t_copy_setup(64, &s, &d, &h));
	CHECK_OK(t_gate(s, &gate));
	while (!accel_memcpy_async(s, d, h, 4, ACCEL_MEMCPY_H2D))
		n++;
	CHECK(n > 0);
	CHECK_MSG(accel_memcpy_async(s, d, h, 4, ACCEL_MEMCPY_H2D), -EAGAIN,
		  "queue is full", "synchronize");
	CHECK_MSG(accel_memset_async(s, d, 0, 4), -EAGAIN, "queue is full");
	CHECK_OK(t_gate_drain(s, gate, ACCEL_TIMEOUT_INFINITE));
	return T_PASS;
}

/*
 * A registered range unmapped under a queued copy: the module keeps the
 * pages (the copy lands); in process the copy faults and the stream
 * fails, which every later call says.
 */
static int stream_failed_on_unmapped_range(void)
{
	long ps = sysconf(_SC_PAGESIZE);
	accel_event_t gate;
	accel_stream_t s;
	unsigned char *q;
	bool inproc;
	void *d;
	int ret;

	CHECK_OK(t_dev_setup(2 * ps, &s, &d));
	if (!backend_is("cpu"))
		return T_SKIP;	/* CUDA's own pin keeps the pages */
	q = mmap(NULL, 2 * ps, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(q != MAP_FAILED);
	CHECK_OK(accel_host_register(NULL, q, 2 * ps, 0));
	CHECK_OK(t_gate(s, &gate));
	CHECK_OK(accel_memcpy_async(s, d, q, 2 * ps, ACCEL_MEMCPY_H2D));
	CHECK_OK(accel_host_unregister(q, ACCEL_HOST_UNREGISTER_DEFERRED));
	/* Replaced at once: nothing else lands there meanwhile. */
	CHECK(mmap(q, 2 * ps, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS |
		   MAP_FIXED, -1, 0) == q);
	inproc = transport_is("inproc");
	CHECK_OK(t_gate_open(gate));
	ret = accel_stream_synchronize(s, 30 * T_SEC);
	if (!inproc) {
		munmap(q, 2 * ps);
		CHECK_OK(ret);
		return T_PASS;
	}
	CHECK_MSG(ret, -EIO, "failed", "memory");
	munmap(q, 2 * ps);
	CHECK_MSG(accel_stream_query(s), -EIO, "failed");
	CHECK_MSG(accel_memcpy_async(s, d, d, 0, ACCEL_MEMCPY_D2D), -EIO,
		  "failed");
	return T_PASS;
}

static int stream_failed_by_error_signal(void)
{
	accel_stream_t s;

	CHECK_OK(t_stream(&s));
	CHECK_MSG(t_fail_stream(s), -EIO, "stream failed");
	CHECK_MSG(accel_stream_synchronize(s, ACCEL_TIMEOUT_INFINITE), -EIO,
		  "stream failed");
	return T_PASS;
}

static int import_not_an_export(void)
{
	int p[2];

	CHECK(t_ctx());
	CHECK(pipe(p) == 0);
	{
		accel_event_t imp;
		char fd[32];

		snprintf(fd, sizeof(fd), "fd %d ", p[0]);
		CHECK_MSG(accel_event_import_fd(NULL, p[0], &imp), -EINVAL,
			  fd, "not an exported");
	}
	close(p[0]);
	close(p[1]);
	return T_PASS;
}

/*
 * A child imports its parent's pending export: over the module it may;
 * in process it cannot yet (-EINVAL), and the message says it is pending,
 * not that the descriptor is no export.
 */
static int import_other_process_pending(void)
{
	accel_event_t gate, ev;
	accel_stream_t s;
	int fd, status;
	bool inproc;
	pid_t pid;

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
	return T_SKIP;	/* the sanitizers' children hang after a threaded fork */
#endif
	CHECK(t_ctx());
	if (backend_is("cuda"))
		return T_SKIP;	/* CUDA does not survive fork() */
	CHECK_OK(accel_stream_create(NULL, 0, 0, &s));
	CHECK_OK(accel_event_create(NULL, 0, &ev));
	CHECK_OK(t_gate(s, &gate));
	CHECK_OK(accel_event_record(ev, s));
	CHECK_OK(accel_event_export_fd(ev, &fd));
	inproc = transport_is("inproc");
	fflush(stdout);
	pid = fork();
	CHECK(pid >= 0);
	if (!pid) {
		const char *m;
		accel_context *c;
		accel_event_t imp;
		int ret;

		alarm(30);
		if (accel_context_create(&c, 0))
			_exit(2);
		ret = accel_event_import_fd(c, fd, &imp);
		m = accel_last_error_string();
		if (!inproc)
			_exit(ret ? 3 : 0);
		if (ret != -EINVAL)
			_exit(4);
		if (!strstr(m, "pending") || !strstr(m, "another process") ||
		    strstr(m, "not an exported"))
			_exit(5);
		_exit(0);
	}
	CHECK(waitpid(pid, &status, 0) == pid);
	CHECK_OK(t_gate_drain(s, gate, ACCEL_TIMEOUT_INFINITE));
	close(fd);
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		printf("# child: %s %d\n", WIFEXITED(status) ? "step" : "signal",
		       WIFEXITED(status) ? WEXITSTATUS(status) :
		       WTERMSIG(status));
		return T_FAIL;
	}
	return T_PASS;
}

/* Registering past the pinning limit: no staging chunk is concerned. */
static int register_past_pin_limit(void)
{
	long ps = sysconf(_SC_PAGESIZE);
	struct accel_device_prop prop;
	unsigned char *p;
	size_t big;

	CHECK(t_ctx());
	CHECK_OK(accel_device_get_properties(NULL, &prop));
	big = ((size_t)prop.pinned_limit + ps) & ~((size_t)ps - 1);
	p = mmap(NULL, big, PROT_NONE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	CHECK(p != MAP_FAILED);
	/* Past the limit: refused before the pages are looked at. */
	CHECK_MSG(accel_host_register(NULL, p, big, 0), -ENOMEM,
		  "accel_host_register()", "cannot pin");
	CHECK_NOT_SAID("ACCEL_STAGING_CHUNK_KB");
	munmap(p, big);
	return T_PASS;
}

/*
 * A staging chunk past the pinning limit: the pool halves its chunk down
 * to one page before it gives up, so the message names that page and no
 * smaller ACCEL_STAGING_CHUNK_KB to try. In process, where the limit is
 * set per context (ACCEL_INPROC_MAX_PINNED_MB).
 */
static int staging_chunk_past_pin_limit(void)
{
	long ps = sysconf(_SC_PAGESIZE);
	unsigned char *h, pg[64];
	accel_stream_t s;
	char a[32];
	void *d;

	setenv("ACCEL_INPROC_MAX_PINNED_MB", "1", 1);
	setenv("ACCEL_STAGING_CHUNK_KB", "64", 1);
	if (!t_ctx())
		return T_FAIL;
	unsetenv("ACCEL_INPROC_MAX_PINNED_MB");
	if (!transport_is("inproc")) {
		unsetenv("ACCEL_STAGING_CHUNK_KB");
		return T_SKIP;
	}
	CHECK_OK(accel_stream_create(NULL, 0, 0, &s));
	CHECK_OK(accel_malloc(NULL, &d, 64));
	/* All the context may pin. */
	CHECK_OK(accel_host_alloc(NULL, (void **)&h, MB, 0));
	memset(pg, 1, sizeof(pg));
	CHECK_MSG(accel_memcpy_async(s, d, pg, sizeof(pg), ACCEL_MEMCPY_H2D),
		  -ENOMEM, "staging chunk", "cannot pin", num(a, ps),
		  "one page", "1 MiB");
	unsetenv("ACCEL_STAGING_CHUNK_KB");
	CHECK_NOT_SAID("ACCEL_STAGING_CHUNK_KB");
	return T_PASS;
}

T_MAIN(T(copy_past_device_end), T(copy_kind_mismatch),
       T(batch_kind_mismatch), T(memset_past_device_end), T(copy_2d_errors),
       T(other_contexts_device_memory), T(freed_memory),
       T(free_interior_pointer), T(malloc_past_device_limit), T(queue_full),
       T(stream_failed_on_unmapped_range), T(stream_failed_by_error_signal),
       T(import_not_an_export), T(import_other_process_pending),
       T(register_past_pin_limit), T(staging_chunk_past_pin_limit))
