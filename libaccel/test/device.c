// SPDX-License-Identifier: MIT
/*
 * Device queries and device-wide synchronization: accel_device_get_count,
 * accel_device_get_properties, accel_mem_get_info and
 * accel_context_synchronize, over the cpu backend (values from GET_INFO)
 * and the cuda backend (values from CUDA; the stand-in libcudart reports
 * "Fake CUDA Device", 80 GiB, 3 copy engines, and what is allocated).
 */
#include <sys/wait.h>

#include "memlock_helpers.h"

#define FAKE_TOTAL	((uint64_t)80 << 30)

static int is_cuda(void)
{
	const char *name = "";

	accel_context_get_backend(NULL, &name);
	return !strcmp(name, "cuda");
}

static int is_fake_cuda(void)
{
	const char *rt = getenv("ACCEL_CUDART");

	return is_cuda() && rt && strstr(rt, "fake");
}

/* The limit each transport applies by default (the module's defaults). */
static uint64_t env_mb(const char *name, uint64_t def)
{
	const char *v = getenv(name);
	const char *tp = "";

	accel_context_get_transport(NULL, &tp);
	if (!strcmp(tp, "inproc") && v && *v)
		return strtoull(v, NULL, 0) << 20;
	return def << 20;
}

/* ACCEL_INPROC_DEVICES, or the module's devices parameter; 1 unset. */
static int soft_devices(void)
{
	const char *tp = "", *v = getenv("ACCEL_INPROC_DEVICES");
	FILE *f;
	int n = 1;

	accel_context_get_transport(NULL, &tp);
	if (!strcmp(tp, "inproc"))
		return v && *v ? atoi(v) : 1;
	f = fopen("/sys/module/accelstream/parameters/devices", "re");
	if (f) {
		if (fscanf(f, "%d", &n) != 1)
			n = -1;
		fclose(f);
	}
	return n;
}

static int count(void)
{
	int n = -1;

	CHECK(t_ctx());
	CHECK_OK(accel_device_get_count(NULL, &n));
	if (is_cuda()) {
		/* The fake has FAKE_CUDA_DEVICES GPUs, 1 by default. */
		CHECK(!is_fake_cuda() || n == (getenv("FAKE_CUDA_DEVICES") ?
					       atoi(getenv("FAKE_CUDA_DEVICES")) : 1));
		return T_PASS;
	}
	/* The soft devices the transport serves (test/multidev.c asks more). */
	CHECK(n == soft_devices());
	return T_PASS;
}

static int properties(void)
{
	struct accel_device_prop p;
	const char *tp = NULL;
	size_t f, t;

	CHECK(t_ctx());
	CHECK_OK(accel_context_get_transport(NULL, &tp));
	memset(&p, 0xcc, sizeof(p));
	CHECK_OK(accel_device_get_properties(NULL, &p));
	CHECK(memchr(p.name, '\0', sizeof(p.name)));
	CHECK(!strcmp(p.transport, tp));
	CHECK(p.device == 0);
	CHECK(!p.reserved[0] && !p.reserved[1] && !p.reserved[2] &&
	      !p.reserved[3]);
	if (!is_cuda()) {
		char want[64];

		snprintf(want, sizeof(want), "accelstream soft engine (%s)", tp);
		CHECK(!strcmp(p.name, want));
		CHECK(!strcmp(p.backend, "cpu"));
		CHECK(p.total_mem == env_mb("ACCEL_INPROC_MAX_DEVICE_MB", 1024));
		CHECK(p.free_mem == ACCEL_MEM_UNKNOWN);
		CHECK(p.copy_engines == 0);
		return T_PASS;
	}
	CHECK(!strcmp(p.backend, "cuda"));
	CHECK_OK(accel_mem_get_info(NULL, &f, &t));
	CHECK(p.total_mem == t);
	if (is_fake_cuda()) {
		CHECK(!strcmp(p.name, "Fake CUDA Device"));
		CHECK(p.total_mem == FAKE_TOTAL);
		CHECK(p.copy_engines == 3);
		CHECK(p.free_mem == f);
	}
	return T_PASS;
}

/* The default pin limit: a quarter of RAM in MiB, at least 1 (the core's). */
static uint64_t default_pinned_mb(void)
{
	uint64_t mb = ((uint64_t)sysconf(_SC_PHYS_PAGES) *
		       (uint64_t)sysconf(_SC_PAGESIZE) / 4) >> 20;

	return mb ? (mb > UINT32_MAX ? UINT32_MAX : mb) : 1;
}

static int pinned_limit_child(void)
{
	struct accel_device_prop p;
	struct rlimit rl;
	uint64_t max_pinned = env_mb("ACCEL_INPROC_MAX_PINNED_MB",
				     default_pinned_mb());

	CHECK(t_ctx());
	/* With CAP_IPC_LOCK (root here), the context's limit alone. */
	CHECK_OK(accel_device_get_properties(NULL, &p));
	CHECK(getrlimit(RLIMIT_MEMLOCK, &rl) == 0);
	if (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur >= max_pinned ||
	    geteuid() == 0)
		CHECK(p.pinned_limit == max_pinned);
	/* Lowering a soft limit needs no privilege. */
	rl.rlim_cur = 8 << 20;
	CHECK(setrlimit(RLIMIT_MEMLOCK, &rl) == 0);
	CHECK(t_drop_ipc_lock() == 0);
	CHECK_OK(accel_device_get_properties(NULL, &p));
	CHECK(p.pinned_limit == (8 << 20));
	return T_PASS;
}

static int pinned_limit(void)
{
	CHECK_RET(t_cpu_child(pinned_limit_child), T_PASS);
	return T_PASS;
}

static int mem_get_info(void)
{
	size_t f = 1, t = 2, f2, t2;
	void *d;

	CHECK(t_ctx());
	if (!is_cuda()) {
		/* The ABI has the limit, not the use: said, not guessed. */
		CHECK_RET(accel_mem_get_info(NULL, &f, &t), -EOPNOTSUPP);
		CHECK(f == 1 && t == 2);
		CHECK(strstr(accel_last_error_string(), "ABI"));
		return T_PASS;
	}
	CHECK_OK(accel_mem_get_info(NULL, &f, &t));
	CHECK(f <= t);
	if (!is_fake_cuda())
		return T_PASS;
	CHECK(t == FAKE_TOTAL);
	CHECK_OK(accel_malloc(NULL, &d, 1 << 20));
	CHECK_OK(accel_mem_get_info(NULL, &f2, &t2));
	CHECK(t2 == t && f2 == f - (1 << 20));
	CHECK_OK(accel_free(d));
	CHECK_OK(accel_mem_get_info(NULL, &f2, &t2));
	CHECK(f2 == f);
	return T_PASS;
}

static int errnos(void)
{
	struct accel_device_prop p;
	accel_context *ctx;
	accel_stream_t s;
	size_t f, t;
	int n;

	/* No context at all. */
	CHECK_RET(accel_device_get_count(NULL, &n), -ENODEV);
	CHECK_RET(accel_device_get_properties(NULL, &p), -ENODEV);
	CHECK_RET(accel_mem_get_info(NULL, &f, &t), -ENODEV);
	CHECK_RET(accel_context_synchronize(NULL, 0), -ENODEV);
	CHECK_OK(accel_context_create(&ctx, 0));
	CHECK_RET(accel_device_get_count(ctx, NULL), -EINVAL);
	CHECK_RET(accel_device_get_properties(ctx, NULL), -EINVAL);
	CHECK_RET(accel_mem_get_info(ctx, NULL, &t), -EINVAL);
	CHECK_RET(accel_mem_get_info(ctx, &f, NULL), -EINVAL);
	CHECK_OK(accel_stream_create(ctx, 0, 0, &s));
	/* A stream is not a context. */
	CHECK_RET(accel_device_get_count((accel_context *)s, &n), -EINVAL);
	CHECK_RET(accel_device_get_properties((accel_context *)s, &p),
		  -EINVAL);
	CHECK_RET(accel_mem_get_info((accel_context *)s, &f, &t), -EINVAL);
	CHECK_RET(accel_context_synchronize((accel_context *)s, 0), -EINVAL);
	CHECK_OK(accel_context_destroy(ctx));
	CHECK_RET(accel_device_get_count(ctx, &n), -ENOENT);
	CHECK_RET(accel_device_get_properties(ctx, &p), -ENOENT);
	CHECK_RET(accel_mem_get_info(ctx, &f, &t), -ENOENT);
	CHECK_RET(accel_context_synchronize(ctx, 0), -ENOENT);
	return T_PASS;
}

/* A stream whose copy waits behind a gate. */
static int gated_copy(accel_stream_t s, accel_event_t *gate,
		      unsigned char **out, unsigned char seed)
{
	unsigned char *in;
	void *d;

	if (accel_host_alloc(NULL, (void **)&in, 4096, 0) ||
	    accel_host_alloc(NULL, (void **)out, 4096, 0) ||
	    accel_malloc(NULL, &d, 4096) || t_gate(s, gate))
		return -1;
	t_fill(in, 4096, seed);
	if (accel_memcpy_async(s, d, in, 4096, ACCEL_MEMCPY_H2D) ||
	    accel_memcpy_async(s, *out, d, 4096, ACCEL_MEMCPY_D2H))
		return -1;
	return 0;
}

struct dflt {
	pthread_barrier_t queued, release;
	accel_event_t gate;
	unsigned char *out;
	int ret;
};

/* Queue on this thread's default stream, and keep it alive till told. */
static void *queue_on_default(void *arg)
{
	struct dflt *d = arg;

	d->ret = gated_copy(ACCEL_STREAM_DEFAULT, &d->gate, &d->out, 9);
	pthread_barrier_wait(&d->queued);
	pthread_barrier_wait(&d->release);
	return NULL;
}

/* Every stream, another thread's default stream included. */
static int synchronize_waits_every_stream(void)
{
	unsigned char *o1, *o2;
	accel_event_t g1, g2;
	accel_stream_t s1, s2;
	struct dflt dt = { 0 };
	pthread_t th;

	CHECK(t_ctx());
	CHECK_OK(accel_context_synchronize(NULL, 0));	/* nothing queued */
	CHECK_OK(accel_stream_create(NULL, 0, 0, &s1));
	CHECK_OK(accel_stream_create(NULL, 0, 0, &s2));
	CHECK(gated_copy(s1, &g1, &o1, 1) == 0);
	CHECK(gated_copy(s2, &g2, &o2, 2) == 0);
	pthread_barrier_init(&dt.queued, NULL, 2);
	pthread_barrier_init(&dt.release, NULL, 2);
	CHECK(pthread_create(&th, NULL, queue_on_default, &dt) == 0);
	pthread_barrier_wait(&dt.queued);
	CHECK(dt.ret == 0);
	CHECK_RET(accel_context_synchronize(NULL, 0), -ETIME);
	CHECK_RET(accel_context_synchronize(NULL, 1000000), -ETIME);
	/* Newest first, then oldest: any stream left out shows here. */
	CHECK_OK(t_gate_open(dt.gate));
	CHECK_RET(accel_context_synchronize(NULL, 1000000), -ETIME);
	CHECK_OK(t_gate_open(g1));
	CHECK_RET(accel_context_synchronize(NULL, 1000000), -ETIME);
	CHECK_OK(t_gate_open(g2));
	CHECK_OK(accel_context_synchronize(NULL, ACCEL_TIMEOUT_INFINITE));
	CHECK(t_check_fill(o1, 4096, 1));
	CHECK(t_check_fill(o2, 4096, 2));
	CHECK(t_check_fill(dt.out, 4096, 9));
	pthread_barrier_wait(&dt.release);
	pthread_join(th, NULL);
	return T_PASS;
}

static int synchronize_reports_failed_stream(void)
{
	unsigned char *o1;
	accel_event_t g1, bad;
	accel_stream_t s1, s2;

	CHECK_OK(t_two_streams(&s1, &s2));
	CHECK_OK(t_gate(s2, &bad));
	CHECK(gated_copy(s1, &g1, &o1, 3) == 0);
	CHECK_OK(accel_event_signal(bad, 0, ACCEL_EVENT_SIGNAL_ERROR));
	/* The failed stream does not cut the wait for the others short. */
	CHECK_RET(accel_context_synchronize(NULL, 1000000), -ETIME);
	CHECK_OK(t_gate_open(g1));
	CHECK_RET(accel_context_synchronize(NULL, ACCEL_TIMEOUT_INFINITE),
		  -EIO);
	CHECK(t_check_fill(o1, 4096, 3));
	/* The error is the stream's: gone with it. */
	CHECK_OK(accel_stream_destroy(s2));
	CHECK_OK(accel_context_synchronize(NULL, ACCEL_TIMEOUT_INFINITE));
	return T_PASS;
}

struct in_fn {
	int poll, wait;
	volatile int done;
};

static void sync_from_host_fn(void *arg)
{
	struct in_fn *r = arg;

	r->poll = accel_context_synchronize(NULL, 0);
	r->wait = accel_context_synchronize(NULL, T_SEC);
	__atomic_store_n(&r->done, 1, __ATOMIC_RELEASE);
}

static int synchronize_in_host_fn(void)
{
	struct in_fn r = { 1, 1, 0 };
	accel_stream_t s;

	CHECK_OK(t_stream(&s));
	CHECK_OK(accel_launch_host_func(s, sync_from_host_fn, &r));
	CHECK_OK(accel_stream_synchronize(s, ACCEL_TIMEOUT_INFINITE));
	CHECK(__atomic_load_n(&r.done, __ATOMIC_ACQUIRE));
	CHECK_RET(r.wait, -EDEADLK);
	/* Polling is allowed; the host function's own stream is pending. */
	CHECK_RET(r.poll, -ETIME);
	return T_PASS;
}

static int synchronize_other_process(void)
{
	accel_stream_t s;
	int status;
	pid_t pid;

	if (is_cuda())
		return T_SKIP;		/* the CUDA backend does not survive fork */
	CHECK_OK(t_stream(&s));
	pid = fork();
	CHECK(pid >= 0);
	if (!pid)
		_exit(accel_context_synchronize(NULL, 0) == -EACCES ? 0 : 1);
	CHECK(waitpid(pid, &status, 0) == pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	return T_PASS;
}

T_MAIN(T(synchronize_other_process), T(count), T(properties), T(pinned_limit), T(mem_get_info),
       T(errnos), T(synchronize_waits_every_stream),
       T(synchronize_reports_failed_stream), T(synchronize_in_host_fn))
