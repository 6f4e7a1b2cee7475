// SPDX-License-Identifier: MIT
/*
 * Several devices: accel_context_create_on_device, accel_context_set/
 * get_device, accel_stream_get_device, accel_device_can_access_peer and
 * accel_memcpy_peer_async; copies across devices (integrity, both
 * directions at once), events across devices (a gated stream of one
 * device orders a stream of another; wait-all over devices), freeing both
 * sides of a queued peer copy, and destroying one device's context while
 * another's runs.
 *
 * Over inproc it asks for 3 devices (ACCEL_INPROC_DEVICES, unless set);
 * over the kernel it uses the module's devices parameter. Tests that need
 * two devices skip with one, and with the cuda backend (a context per GPU).
 */
#include "helpers.h"

#define BIG	((size_t)1 << 20)

__attribute__((constructor)) static void ask_devices(void)
{
	setenv("ACCEL_INPROC_DEVICES", "3", 0);
}

static int is_inproc(void)
{
	const char *tp = "";

	accel_context_get_transport(NULL, &tp);
	return !strcmp(tp, "inproc");
}

static int is_cpu(void)
{
	const char *b = "";

	accel_context_get_backend(NULL, &b);
	return !strcmp(b, "cpu");
}

/* What the transport was asked for: the env, or the module parameter. */
static int want_devices(void)
{
	const char *v;
	FILE *f;
	int n = -1;

	if (!is_cpu())
		return -1;
	if (is_inproc()) {
		v = getenv("ACCEL_INPROC_DEVICES");
		return v ? atoi(v) : 1;
	}
	f = fopen("/sys/module/accelstream/parameters/devices", "re");
	if (!f)
		return -1;
	if (fscanf(f, "%d", &n) != 1)
		n = -1;
	fclose(f);
	return n;
}

/* The device count of a fresh current context; 0 on failure. */
static int ndev(void)
{
	int n = 0;

	if (!t_ctx() || accel_device_get_count(NULL, &n))
		return 0;
	return n;
}

#define NEED_PEERS(n) do {						\
	if (!is_cpu() || (n) < 2) {					\
		printf("# %d device(s), %s backend: needs two soft devices\n", \
		       (n), is_cpu() ? "cpu" : "cuda");			\
		return T_SKIP;						\
	}								\
} while (0)

static int count(void)
{
	int n = ndev(), want = want_devices();

	CHECK(n >= 1);
	if (want > 0)
		CHECK(n == want);
	return T_PASS;
}

static int create_on_device(void)
{
	int n = ndev(), d, got;
	accel_context *c, *keep = (accel_context *)&got;
	accel_stream_t s;
	void *p;

	CHECK(n >= 1);
	for (d = 0; d < n; d++) {
		CHECK_OK(accel_context_create_on_device(&c, d, 0));
		got = -1;
		CHECK_OK(accel_context_get_device(c, &got));
		CHECK(got == d);
		CHECK_OK(accel_stream_create(c, 0, 0, &s));
		got = -1;
		CHECK_OK(accel_stream_get_device(s, &got));
		CHECK(got == d);
		CHECK_OK(accel_malloc(c, &p, 4096));
		CHECK_OK(accel_free(p));
		CHECK_OK(accel_context_destroy(c));
	}
	/* Bad arguments: -errno, and *ctx untouched. */
	c = keep;
	CHECK_RET(accel_context_create_on_device(&c, n, 0), -ENODEV);
	CHECK(c == keep);
	CHECK_RET(accel_context_create_on_device(&c, -1, 0), -ENODEV);
	CHECK(c == keep);
	CHECK_RET(accel_context_create_on_device(&c, 0, 1), -EINVAL);
	CHECK_RET(accel_context_create_on_device(NULL, 0, 0), -EINVAL);
	CHECK(c == keep);
	return T_PASS;
}

static int set_device(void)
{
	int n = ndev(), got = -1;
	accel_stream_t s0, s1;

	CHECK(n >= 1);
	CHECK_OK(accel_context_get_device(NULL, &got));
	if (!is_cpu()) {
		/* A context per GPU (cuda_context_per_gpu): no other device. */
		CHECK_OK(accel_context_set_device(NULL, got));
		if (n > 1)
			CHECK_RET(accel_context_set_device(NULL, got ? 0 : 1),
				  -EOPNOTSUPP);
		CHECK_RET(accel_context_set_device(NULL, n), -ENODEV);
		return T_PASS;
	}
	CHECK(got == 0);
	CHECK_OK(accel_stream_create(NULL, 0, 0, &s0));
	CHECK_OK(accel_context_set_device(NULL, n - 1));
	CHECK_OK(accel_stream_create(NULL, 0, 0, &s1));
	/* A failed call changes nothing. */
	CHECK_RET(accel_context_set_device(NULL, n), -ENODEV);
	CHECK_RET(accel_context_set_device(NULL, -1), -ENODEV);
	CHECK(*accel_last_error_string());
	CHECK_OK(accel_context_get_device(NULL, &got));
	CHECK(got == n - 1);
	CHECK_RET(accel_context_get_device(NULL, NULL), -EINVAL);
	CHECK_RET(accel_stream_get_device(s0, NULL), -EINVAL);
	/* Streams stay where they were made. */
	CHECK_OK(accel_stream_get_device(s0, &got));
	CHECK(got == 0);
	CHECK_OK(accel_stream_get_device(s1, &got));
	CHECK(got == n - 1);
	CHECK_OK(accel_stream_destroy(s1));
	CHECK_RET(accel_stream_get_device(s1, &got), -ENOENT);
	return T_PASS;
}

static int can_access_peer(void)
{
	int n = ndev(), can = -1;

	CHECK(n >= 1);
	CHECK_OK(accel_device_can_access_peer(NULL, &can, 0, 0));
	CHECK(can == 0);
	CHECK_RET(accel_device_can_access_peer(NULL, &can, 0, n), -ENODEV);
	CHECK_RET(accel_device_can_access_peer(NULL, &can, -1, 0), -ENODEV);
	CHECK_RET(accel_device_can_access_peer(NULL, NULL, 0, 0), -EINVAL);
	if (n < 2 || !is_cpu())
		return T_PASS;
	CHECK_OK(accel_device_can_access_peer(NULL, &can, 0, n - 1));
	CHECK(can == 1);
	CHECK_OK(accel_device_can_access_peer(NULL, &can, n - 1, 0));
	CHECK(can == 1);
	return T_PASS;
}

/* Device memory of @n bytes on @dev, the current device unchanged. */
static int malloc_on(int dev, void **p, size_t n)
{
	int cur = 0, ret;

	ret = accel_context_get_device(NULL, &cur);
	if (!ret)
		ret = accel_context_set_device(NULL, dev);
	if (!ret)
		ret = accel_malloc(NULL, p, n);
	if (!ret)
		ret = accel_context_set_device(NULL, cur);
	return ret;
}

static int stream_on(int dev, accel_stream_t *s)
{
	int ret = accel_context_set_device(NULL, dev);

	if (!ret)
		ret = accel_stream_create(NULL, 0, 0, s);
	return ret;
}

/* host -> dev 0 -> (peer) dev N-1 -> host, on a stream of either side. */
static int peer_copy(void)
{
	static const size_t sizes[] = { 1, 4095, 4096, 65537, BIG };
	int n = ndev(), last;
	unsigned char *in, *out;
	accel_stream_t s[2];
	void *a, *b;
	unsigned int i;

	NEED_PEERS(n);
	last = n - 1;
	CHECK_OK(accel_host_alloc(NULL, (void **)&in, BIG + 64, 0));
	CHECK_OK(accel_host_alloc(NULL, (void **)&out, BIG + 64, 0));
	CHECK_OK(malloc_on(0, &a, BIG + 64));
	CHECK_OK(malloc_on(last, &b, BIG + 64));
	CHECK_OK(stream_on(0, &s[0]));
	CHECK_OK(stream_on(last, &s[1]));
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		accel_stream_t st = s[i & 1];
		size_t len = sizes[i];

		t_fill(in, BIG + 64, i + 1);
		memset(out, 0, BIG + 64);
		CHECK_OK(accel_memcpy_h2d_async(st, (char *)a + 3, in, len));
		CHECK_OK(accel_memcpy_peer_async(st, (char *)b + 5, last,
						 (char *)a + 3, 0, len));
		CHECK_OK(accel_memcpy_d2h_async(st, out, (char *)b + 5, len));
		CHECK_OK(accel_stream_synchronize(st, 30 * T_SEC));
		CHECK(t_check_fill(out, len, i + 1));
	}
	return T_PASS;
}

/* Both directions at once, on four streams (two per device). */
static int peer_both_directions(void)
{
	int n = ndev(), last, i;
	unsigned char *in, *out;
	accel_stream_t s[4];
	void *a, *b;
	size_t q = BIG / 4;

	NEED_PEERS(n);
	last = n - 1;
	CHECK_OK(accel_host_alloc(NULL, (void **)&in, BIG, 0));
	CHECK_OK(accel_host_alloc(NULL, (void **)&out, BIG, 0));
	CHECK_OK(malloc_on(0, &a, BIG));
	CHECK_OK(malloc_on(last, &b, BIG));
	t_fill(in, BIG, 9);
	CHECK_OK(stream_on(0, &s[0]));
	CHECK_OK(stream_on(0, &s[1]));
	CHECK_OK(stream_on(last, &s[2]));
	CHECK_OK(stream_on(last, &s[3]));
	/* Halves 0 and 1 start on device 0, halves 2 and 3 on device N-1. */
	CHECK_OK(accel_memcpy_h2d_async(s[0], a, in, 2 * q));
	CHECK_OK(accel_memcpy_h2d_async(s[2], (char *)b + 2 * q, in + 2 * q,
					2 * q));
	CHECK_OK(accel_context_synchronize(NULL, 30 * T_SEC));
	for (i = 0; i < 2; i++) {
		CHECK_OK(accel_memcpy_peer_async(s[i], (char *)b + i * q, last,
						 (char *)a + i * q, 0, q));
		CHECK_OK(accel_memcpy_peer_async(s[2 + i],
						 (char *)a + (2 + i) * q, 0,
						 (char *)b + (2 + i) * q, last,
						 q));
	}
	CHECK_OK(accel_context_synchronize(NULL, 30 * T_SEC));
	memset(out, 0, BIG);
	CHECK_OK(accel_memcpy_d2h_async(s[1], out, b, 2 * q));
	CHECK_OK(accel_memcpy_d2h_async(s[3], out + 2 * q, (char *)a + 2 * q,
					2 * q));
	CHECK_OK(accel_context_synchronize(NULL, 30 * T_SEC));
	CHECK(t_check_fill(out, BIG, 9));
	return T_PASS;
}

static int peer_errnos(void)
{
	int n = ndev(), last;
	accel_stream_t s;
	void *a, *b, *h;

	NEED_PEERS(n);
	last = n - 1;
	CHECK_OK(malloc_on(0, &a, 8192));
	CHECK_OK(malloc_on(last, &b, 8192));
	CHECK_OK(accel_host_alloc(NULL, &h, 8192, 0));
	CHECK_OK(accel_stream_create(NULL, 0, 0, &s));
	CHECK_RET(accel_memcpy_peer_async(s, b, 0, a, 0, 64), -EINVAL);
	CHECK(*accel_last_error_string());
	CHECK_RET(accel_memcpy_peer_async(s, b, last, a, last, 64), -EINVAL);
	CHECK_RET(accel_memcpy_peer_async(s, h, last, a, 0, 64), -EINVAL);
	CHECK_RET(accel_memcpy_peer_async(s, b, n, a, 0, 64), -ENODEV);
	CHECK_RET(accel_memcpy_peer_async(s, b, last, a, -1, 64), -ENODEV);
	CHECK_RET(accel_memcpy_peer_async(s, NULL, last, a, 0, 64), -EINVAL);
	CHECK_RET(accel_memcpy_peer_async(s, b, last, a, 0, 8193), -EINVAL);
	CHECK_RET(accel_memcpy_peer_async(s, (char *)b + 8000, last, a, 0, 200),
		  -EINVAL);
	/* Nothing was queued. */
	CHECK_OK(accel_stream_query(s));
	CHECK_OK(accel_memcpy_peer_async(s, b, last, a, 0, 8192));
	CHECK_OK(accel_stream_synchronize(s, 30 * T_SEC));
	return T_PASS;
}

/*
 * A stream of device N-1 waits on an event recorded on a gated stream of
 * device 0, then copies what device 0 wrote.
 */
static int event_across_devices(void)
{
	int n = ndev(), last;
	accel_stream_t s0, s1;
	accel_event_t gate, ev;
	unsigned char *in, *out;
	void *a, *b;

	NEED_PEERS(n);
	last = n - 1;
	CHECK_OK(accel_host_alloc(NULL, (void **)&in, BIG, 0));
	CHECK_OK(accel_host_alloc(NULL, (void **)&out, BIG, 0));
	t_fill(in, BIG, 4);
	memset(out, 0, BIG);
	CHECK_OK(malloc_on(0, &a, BIG));
	CHECK_OK(malloc_on(last, &b, BIG));
	CHECK_OK(stream_on(0, &s0));
	CHECK_OK(t_gate(s0, &gate));
	CHECK_OK(accel_memcpy_h2d_async(s0, a, in, BIG));
	CHECK_OK(accel_event_create(NULL, 0, &ev));
	CHECK_OK(accel_event_record(ev, s0));

	CHECK_OK(stream_on(last, &s1));
	CHECK_OK(accel_stream_wait_event(s1, ev, 0));
	CHECK_OK(accel_memcpy_peer_async(s1, b, last, a, 0, BIG));
	CHECK_OK(accel_memcpy_d2h_async(s1, out, b, BIG));
	CHECK_RET(accel_stream_query(s1), -EAGAIN);
	CHECK_RET(accel_stream_synchronize(s1, 0), -ETIME);
	CHECK(out[0] == 0 && out[BIG - 1] == 0);
	CHECK_OK(t_gate_open(gate));
	CHECK_OK(accel_stream_synchronize(s1, 30 * T_SEC));
	CHECK(t_check_fill(out, BIG, 4));
	return T_PASS;
}

/* Wait-any / wait-all over events recorded on streams of every device. */
static int wait_over_devices(void)
{
	int n = ndev(), i, m;
	accel_event_t gate[8], ev[8];
	accel_stream_t s[8];
	unsigned int first = 99;

	NEED_PEERS(n);
	m = n < 8 ? n : 8;
	for (i = 0; i < m; i++) {
		CHECK_OK(stream_on(i, &s[i]));
		CHECK_OK(t_gate(s[i], &gate[i]));
		CHECK_OK(accel_event_create(NULL, 0, &ev[i]));
		CHECK_OK(accel_event_record(ev[i], s[i]));
	}
	CHECK_RET(accel_event_wait(ev, m, ACCEL_WAIT_ANY, 0, &first), -ETIME);
	CHECK_OK(t_gate_open(gate[m - 1]));
	CHECK_OK(accel_event_wait(ev, m, ACCEL_WAIT_ANY, 30 * T_SEC, &first));
	CHECK(first == (unsigned int)m - 1);
	CHECK_RET(accel_event_wait(ev, m, ACCEL_WAIT_ALL, 0, NULL), -ETIME);
	for (i = 0; i < m - 1; i++)
		CHECK_OK(t_gate_open(gate[i]));
	CHECK_OK(accel_event_wait(ev, m, ACCEL_WAIT_ALL, 30 * T_SEC, NULL));
	return T_PASS;
}

/* Both sides of a queued peer copy freed at once: the copy still runs. */
static int peer_free_queued(void)
{
	int n = ndev(), last;
	unsigned char *in, *out;
	accel_event_t gate;
	accel_stream_t s;
	void *a, *b;

	NEED_PEERS(n);
	last = n - 1;
	CHECK_OK(accel_host_alloc(NULL, (void **)&in, BIG, 0));
	CHECK_OK(accel_host_alloc(NULL, (void **)&out, BIG, 0));
	t_fill(in, BIG, 6);
	memset(out, 0, BIG);
	CHECK_OK(malloc_on(0, &a, BIG));
	CHECK_OK(malloc_on(last, &b, BIG));
	CHECK_OK(stream_on(last, &s));
	CHECK_OK(t_gate(s, &gate));
	CHECK_OK(accel_memcpy_h2d_async(s, a, in, BIG));
	CHECK_OK(accel_memcpy_peer_async(s, b, last, a, 0, BIG));
	CHECK_OK(accel_memcpy_d2h_async(s, out, b, BIG));
	CHECK_OK(accel_free(a));
	CHECK_OK(accel_free(b));
	CHECK_RET(accel_free(a), -ENOENT);
	CHECK_OK(t_gate_open(gate));
	CHECK_OK(accel_stream_synchronize(s, 30 * T_SEC));
	CHECK(t_check_fill(out, BIG, 6));
	return T_PASS;
}

/*
 * Destroying a context of device 0 with work queued leaves a context of
 * device N-1, gated meanwhile, running to the right bytes.
 */
static int destroy_one_device(void)
{
	int n = ndev(), i;
	accel_context *c0, *c1;
	accel_event_t g0, g1;
	accel_stream_t s0, s1;
	unsigned char *in, *out;
	void *d0, *d1;

	NEED_PEERS(n);
	CHECK_OK(accel_context_create_on_device(&c1, n - 1, 0));
	CHECK_OK(accel_stream_create(c1, 0, 0, &s1));
	CHECK_OK(accel_host_alloc(c1, (void **)&in, BIG, 0));
	CHECK_OK(accel_host_alloc(c1, (void **)&out, BIG, 0));
	CHECK_OK(accel_malloc(c1, &d1, BIG));
	t_fill(in, BIG, 8);
	memset(out, 0, BIG);
	CHECK_OK(t_gate(s1, &g1));
	for (i = 0; i < 16; i++)
		CHECK_OK(accel_memcpy_h2d_async(s1, d1, in, BIG));
	CHECK_OK(accel_memcpy_d2h_async(s1, out, d1, BIG));

	CHECK_OK(accel_context_create_on_device(&c0, 0, 0));
	CHECK_OK(accel_stream_create(c0, 0, 0, &s0));
	CHECK_OK(accel_malloc(c0, &d0, BIG));
	CHECK_OK(accel_context_set_current(c0));
	CHECK_OK(t_gate(s0, &g0));
	for (i = 0; i < 64; i++)
		CHECK_OK(accel_memcpy_async(s0, d0, d0, 4096, ACCEL_MEMCPY_D2D));
	CHECK_OK(accel_context_destroy(c0));

	CHECK_OK(accel_context_set_current(c1));
	CHECK_RET(accel_stream_query(s1), -EAGAIN);
	CHECK_OK(t_gate_open(g1));
	CHECK_OK(accel_stream_synchronize(s1, 30 * T_SEC));
	CHECK(t_check_fill(out, BIG, 8));
	CHECK_OK(accel_context_destroy(c1));
	return T_PASS;
}

/* Each device has its own account against the context's limit (inproc). */
static int memory_per_device(void)
{
	accel_context *c;
	void *p[3];
	int n;

	if (!t_ctx() || accel_device_get_count(NULL, &n))
		return T_FAIL;
	NEED_PEERS(n);
	if (!is_inproc()) {
		printf("# the module's limit is max_device_mb, too large to fill here\n");
		return T_SKIP;
	}
	setenv("ACCEL_INPROC_MAX_DEVICE_MB", "1", 1);
	n = accel_context_create_on_device(&c, 0, 0);
	unsetenv("ACCEL_INPROC_MAX_DEVICE_MB");
	CHECK_OK(n);
	CHECK_OK(accel_malloc(c, &p[0], BIG));
	CHECK_RET(accel_malloc(c, &p[1], 4096), -ENOMEM);
	CHECK_OK(accel_context_set_device(c, 1));
	CHECK_OK(accel_malloc(c, &p[1], BIG));
	CHECK_RET(accel_malloc(c, &p[2], 4096), -ENOMEM);
	CHECK_OK(accel_free(p[0]));
	CHECK_OK(accel_context_set_device(c, 0));
	CHECK_OK(accel_malloc(c, &p[0], BIG));
	CHECK_OK(accel_context_destroy(c));
	return T_PASS;
}

/*
 * The cuda backend runs a context on one GPU: the one it was created on
 * (FAKE_CUDA_DEVICES=2 with the stand-in libcudart, or two real GPUs).
 */
static int cuda_context_per_gpu(void)
{
	struct accel_device_prop p;
	unsigned char *h;
	accel_context *c;
	accel_stream_t s;
	int n = ndev(), got = -1, can = -1;
	void *d;

	if (is_cpu()) {
		printf("# the cpu backend: see the other tests\n");
		return T_SKIP;
	}
	if (n < 2) {
		printf("# %d GPU(s): needs two\n", n);
		return T_SKIP;
	}
	CHECK_OK(accel_context_create_on_device(&c, 1, 0));
	CHECK_OK(accel_context_get_device(c, &got));
	CHECK(got == 1);
	CHECK_OK(accel_device_get_properties(c, &p));
	CHECK(p.device == 1);
	CHECK_OK(accel_stream_create(c, 0, 0, &s));
	CHECK_OK(accel_stream_get_device(s, &got));
	CHECK(got == 1);
	CHECK_RET(accel_context_set_device(c, 0), -EOPNOTSUPP);
	CHECK(*accel_last_error_string());
	CHECK_OK(accel_context_set_device(c, 1));
	CHECK_OK(accel_device_can_access_peer(c, &can, 1, 0));
	CHECK(can == 0);
	CHECK_OK(accel_host_alloc(c, (void **)&h, 8192, 0));
	CHECK_OK(accel_malloc(c, &d, 8192));
	t_fill(h, 4096, 12);
	CHECK_OK(accel_memcpy_h2d_async(s, d, h, 4096));
	CHECK_OK(accel_memcpy_d2h_async(s, h + 4096, d, 4096));
	CHECK_OK(accel_stream_synchronize(s, 30 * T_SEC));
	CHECK(t_check_fill(h + 4096, 4096, 12));
	CHECK_OK(accel_context_destroy(c));
	return T_PASS;
}

T_MAIN(T(count), T(cuda_context_per_gpu), T(create_on_device), T(set_device), T(can_access_peer),
       T(peer_copy), T(peer_both_directions), T(peer_errnos),
       T(event_across_devices), T(wait_over_devices), T(peer_free_queued),
       T(destroy_one_device), T(memory_per_device))
