// SPDX-License-Identifier: MIT
/*
 * The CUDA executor (ACCEL_BACKEND=cuda, forced here): copies of every
 * kind and size through the device, batched small copies, dependent
 * copies that must not share a batch, cross-stream ordering on device
 * events, stream-ordered frees, CUDA errors as errnos. Skips, with the
 * reason, where no GPU is usable or libaccel was built without CUDA.
 */
#include <stdint.h>

#include "helpers.h"

/*
 * Pinned @a holding t_fill(@seed) and pinned @b, @n bytes each, and @dn
 * bytes of device memory @d.
 */
static int copy_bufs_dev(size_t n, size_t dn, unsigned int seed,
			 unsigned char **a, unsigned char **b, void **d)
{
	*a = t_host_buf(n);
	*b = t_host_buf(n);
	if (!*a || !*b)
		return -ENOMEM;
	t_fill(*a, n, seed);
	return accel_malloc(NULL, d, dn);
}

/* The same with @n bytes of device memory. */
static int copy_bufs(size_t n, unsigned int seed, unsigned char **a,
		     unsigned char **b, void **d)
{
	return copy_bufs_dev(n, n, seed, a, b, d);
}

static int backend_is_cuda(void)
{
	const char *name = NULL;

	CHECK(t_ctx());
	CHECK_OK(accel_context_get_backend(NULL, &name));
	CHECK(!strcmp(name, "cuda"));
	return T_PASS;
}

static int round_trip_sizes(void)
{
	static const size_t sizes[] = { 1, 64, 4096 + 3, (1 << 20) + 5,
					64 << 20 };
	unsigned char *a, *b;
	accel_stream_t s;
	unsigned int i;
	void *d;

	CHECK_OK(t_stream(&s));
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		size_t n = sizes[i];

		CHECK_OK(copy_bufs(n, i + 1, &a, &b, &d));
		CHECK_OK(accel_memcpy_async(s, d, a, n, ACCEL_MEMCPY_H2D));
		CHECK_OK(accel_memcpy_async(s, b, d, n, ACCEL_MEMCPY_D2H));
		CHECK_OK(accel_stream_synchronize(s, 60 * T_SEC));
		CHECK(t_check_fill(b, n, i + 1));
		CHECK_OK(accel_free(d));
		CHECK_OK(accel_host_free(a));
		CHECK_OK(accel_host_free(b));
	}
	return T_PASS;
}

static int registered_and_d2d(void)
{
	const size_t n = 3 << 20;
	unsigned char *a = malloc(n), *b = malloc(n);
	accel_stream_t s;
	void *d1, *d2;

	CHECK(a && b);
	CHECK_OK(t_stream(&s));
	CHECK_OK(accel_host_register(NULL, a, n, 0));
	CHECK_OK(accel_host_register(NULL, b, n, 0));
	CHECK_OK(accel_malloc(NULL, &d1, n));
	CHECK_OK(accel_malloc(NULL, &d2, n));
	t_fill(a, n, 9);
	memset(b, 0, n);
	CHECK_OK(accel_memcpy_async(s, d1, a, n, ACCEL_MEMCPY_DEFAULT));
	CHECK_OK(accel_memcpy_async(s, (char *)d2 + 1, (char *)d1 + 1, n - 1,
				    ACCEL_MEMCPY_D2D));
	CHECK_OK(accel_memcpy_async(s, d2, d1, 1, ACCEL_MEMCPY_D2D));
	CHECK_OK(accel_memcpy_async(s, b, d2, n, ACCEL_MEMCPY_D2H));
	CHECK_OK(accel_stream_synchronize(s, 60 * T_SEC));
	CHECK(memcmp(a, b, n) == 0);
	CHECK_OK(accel_host_unregister(a, 0));
	CHECK_OK(accel_host_unregister(b, 0));
	free(a);
	free(b);
	return T_PASS;
}

/*
 * The start of the fetch tests: a new stream held behind a gate, and
 * copy_bufs_dev()'s buffers.
 */
struct gated_bufs {
	accel_stream_t s;
	accel_event_t gate;
	unsigned char *a, *b;
	char *d;
};

static int gated_bufs(struct gated_bufs *g, size_t n, size_t dn,
		      unsigned int seed)
{
	int ret = t_stream(&g->s);

	if (!ret)
		ret = copy_bufs_dev(n, dn, seed, &g->a, &g->b, (void **)&g->d);
	if (!ret)
		ret = t_gate(g->s, &g->gate);
	return ret;
}

/* Many small copies queued behind a gate go out in one fetch: batched. */
static int small_copies_batched(void)
{
	const unsigned int n = 512;
	struct gated_bufs g;
	unsigned int i;

	CHECK_OK(gated_bufs(&g, n * 64, n * 64, 4));
	for (i = 0; i < n; i++)
		CHECK_OK(accel_memcpy_async(g.s, g.d + i * 64, g.a + i * 64,
					    64, ACCEL_MEMCPY_H2D));
	for (i = 0; i < n; i++)
		CHECK_OK(accel_memcpy_async(g.s, g.b + i * 64, g.d + i * 64,
					    64, ACCEL_MEMCPY_D2H));
	CHECK_OK(t_gate_drain(g.s, g.gate, 60 * T_SEC));
	CHECK(t_check_fill(g.b, n * 64, 4));
	return T_PASS;
}

/* A chain d0 -> d1 -> d2 -> ... fetched at once: order must hold. */
static int dependent_copies_in_one_fetch(void)
{
	const unsigned int links = 16;
	const size_t n = 256;
	struct gated_bufs g;
	unsigned int i;

	CHECK_OK(gated_bufs(&g, n, n * (links + 1), 5));
	CHECK_OK(accel_memcpy_async(g.s, g.d, g.a, n, ACCEL_MEMCPY_H2D));
	for (i = 0; i < links; i++)
		CHECK_OK(accel_memcpy_async(g.s, g.d + (i + 1) * n, g.d + i * n,
					    n, ACCEL_MEMCPY_D2D));
	CHECK_OK(accel_memcpy_async(g.s, g.b, g.d + links * n, n,
				    ACCEL_MEMCPY_D2H));
	CHECK_OK(t_gate_drain(g.s, g.gate, 60 * T_SEC));
	CHECK(t_check_fill(g.b, n, 5));
	return T_PASS;
}

/* s2 reads what s1 wrote, ordered by an event on the device. */
static int cross_stream_event(void)
{
	const size_t n = 32 << 20;
	unsigned char *a, *b;
	accel_stream_t s1, s2;
	accel_event_t ev;
	void *d;

	CHECK_OK(t_two_streams(&s1, &s2));
	CHECK_OK(accel_event_create(NULL, ACCEL_EVENT_DISABLE_TIMING, &ev));
	CHECK_OK(copy_bufs(n, 8, &a, &b, &d));
	CHECK_OK(accel_memcpy_async(s1, d, a, n, ACCEL_MEMCPY_H2D));
	CHECK_OK(accel_event_record(ev, s1));
	CHECK_OK(accel_stream_wait_event(s2, ev, 0));
	CHECK_OK(accel_memcpy_async(s2, b, d, n, ACCEL_MEMCPY_D2H));
	CHECK_OK(accel_stream_synchronize(s2, 60 * T_SEC));
	CHECK(t_check_fill(b, n, 8));
	CHECK_OK(accel_event_query(ev));
	return T_PASS;
}

static int pageable_both_sides(void)
{
	const size_t n = (1 << 20) + 17;
	unsigned char *a = malloc(n), *b = malloc(n);
	accel_stream_t s;
	void *d;

	CHECK(a && b);
	CHECK_OK(t_dev_setup(n, &s, &d));
	t_fill(a, n, 2);
	CHECK_OK(accel_memcpy_async(s, d, a, n, ACCEL_MEMCPY_H2D));
	memset(a, 0, n);	/* staged: the caller may reuse it at once */
	CHECK_OK(accel_memcpy_async(s, b, d, n, ACCEL_MEMCPY_D2H));
	CHECK_OK(accel_stream_synchronize(s, 60 * T_SEC));
	CHECK(t_check_fill(b, n, 2));
	free(a);
	free(b);
	return T_PASS;
}

/* Freed with work queued: the memory lives until that work retired. */
static int stream_ordered_free(void)
{
	const size_t n = 1 << 20;
	unsigned char *a, *b;
	accel_event_t gate;
	accel_stream_t s;
	void *d;

	CHECK_OK(t_stream(&s));
	CHECK_OK(copy_bufs(n, 6, &a, &b, &d));
	CHECK_OK(t_gate(s, &gate));
	CHECK_OK(accel_memcpy_async(s, d, a, n, ACCEL_MEMCPY_H2D));
	CHECK_OK(accel_memcpy_async(s, b, d, n, ACCEL_MEMCPY_D2H));
	CHECK_OK(accel_free(d));
	CHECK_OK(accel_host_free(a));
	CHECK_RET(accel_free(d), -ENOENT);
	CHECK_OK(t_gate_open(gate));
	CHECK_OK(accel_stream_synchronize(s, 60 * T_SEC));
	CHECK(t_check_fill(b, n, 6));
	return T_PASS;
}

static int cuda_errors_are_errnos(void)
{
	void *d = NULL;

	CHECK(t_ctx());
	/* 1 PiB: the device says no; the text names the CUDA error. */
	CHECK_RET(accel_malloc(NULL, &d, (size_t)1 << 50), -ENOMEM);
	printf("# %s\n", accel_last_error_string());
	CHECK(strstr(accel_last_error_string(), "cudaMalloc"));
	/* And the context is still usable: not a sticky error. */
	CHECK_OK(accel_malloc(NULL, &d, 4096));
	CHECK_OK(accel_free(d));
	return T_PASS;
}

static int many_streams_and_destroy(void)
{
	const size_t n = 4096;
	accel_stream_t s[32];
	unsigned char *a, *b;
	unsigned int i;
	void *d;

	CHECK(t_ctx());
	CHECK_OK(copy_bufs(n * 32, 3, &a, &b, &d));
	for (i = 0; i < 32; i++) {
		CHECK_OK(accel_stream_create(NULL, 0, i & 1 ? -1 : 0, &s[i]));
		CHECK_OK(accel_memcpy_async(s[i], (char *)d + i * n, a + i * n,
					    n, ACCEL_MEMCPY_H2D));
		CHECK_OK(accel_memcpy_async(s[i], b + i * n, (char *)d + i * n,
					    n, ACCEL_MEMCPY_D2H));
	}
	/* Destroyed with work queued: it still runs. */
	for (i = 0; i < 32; i += 2)
		CHECK_OK(accel_stream_destroy(s[i]));
	for (i = 1; i < 32; i += 2)
		CHECK_OK(accel_stream_synchronize(s[i], 60 * T_SEC));
	for (i = 0; i < 1000; i++) {
		if (t_check_fill(b, n * 32, 3))
			break;
		usleep(10000);
	}
	CHECK(t_check_fill(b, n * 32, 3));
	return T_PASS;
}

/*
 * Nobody synchronizes: the work still retires (completion events are
 * recorded lazily, when the stream goes quiet), an event query turns
 * true, and contiguous runs (coalesced into one copy each) land intact,
 * one of them split between two destination buffers.
 */
static int retires_without_waiter(void)
{
	const size_t n = 64, k = 32;
	unsigned char *a, *b, *c;
	accel_event_t ev;
	accel_stream_t s;
	unsigned int i, tries;
	char *d;

	CHECK_OK(t_stream(&s));
	CHECK_OK(accel_event_create(NULL, ACCEL_EVENT_DISABLE_TIMING, &ev));
	a = t_host_buf(n * k);
	b = t_host_buf(n * k);
	c = t_host_buf(n * k);
	CHECK(a && b && c);
	CHECK_OK(accel_malloc(NULL, (void **)&d, n * k));
	t_fill(a, n * k, 11);
	memset(b, 0, n * k);
	for (i = 0; i < k; i++)
		CHECK_OK(accel_memcpy_async(s, d + i * n, a + i * n, n,
					    ACCEL_MEMCPY_H2D));
	/* Back out in halves, each half from its own buffer's start. */
	for (i = 0; i < k; i++)
		CHECK_OK(accel_memcpy_async(s, (i < k / 2 ? b : c) + i * n,
					    d + i * n, n, ACCEL_MEMCPY_D2H));
	CHECK_OK(accel_event_record(ev, s));
	for (tries = 0; tries < 6000; tries++) {
		int ret = accel_event_query(ev);

		if (ret != -EAGAIN) {
			CHECK_OK(ret);
			break;
		}
		usleep(1000);
	}
	CHECK(tries < 6000);
	CHECK(t_check_fill(b, n * k / 2, 11));
	CHECK(!memcmp(c + n * k / 2, a + n * k / 2, n * k / 2));
	return T_PASS;
}

/*
 * MEMSET and COPY_2D go to the device as cudaMemsetAsync, cuMemsetD16Async,
 * cuMemsetD32Async and cudaMemcpy2DAsync, one call each, with exact bytes;
 * the counts are read from the stand-in libcudart when it is the one
 * loaded.
 */
static int memset_and_2d_mapping(void)
{
	const size_t n = 4096;
	long (*calls)(const char *);
	long m8 = 0, m16 = 0, m32 = 0, c2d = 0;
	unsigned char *h, *o;
	accel_stream_t s;
	uint16_t v16;
	uint32_t v32;
	void *d;
	size_t i;

	calls = (long (*)(const char *))t_fake_hook("fake_cuda_calls", 0);
	CHECK_OK(t_stream(&s));
	CHECK((h = t_host_buf(n)) && (o = t_host_buf(n)));
	CHECK_OK(accel_malloc(NULL, &d, n));
	if (calls) {
		m8 = calls("cudaMemsetAsync");
		m16 = calls("cuMemsetD16Async");
		m32 = calls("cuMemsetD32Async");
		c2d = calls("cudaMemcpy2DAsync");
	}
	CHECK_OK(accel_memset_async(s, d, 0xab, n));
	CHECK_OK(accel_memset_d16_async(s, (char *)d + 10, 0x1234, 3));
	CHECK_OK(accel_memset_d32_async(s, (char *)d + 20, 0xdeadbeef, 2));
	t_fill(h, n, 4);
	memset(o, 0x11, n);
	CHECK_OK(accel_memcpy_2d_async(s, (char *)d + 100, 50, h, 70, 30, 4,
				       ACCEL_MEMCPY_H2D));
	CHECK_OK(accel_memcpy_async(s, o, d, n, ACCEL_MEMCPY_D2H));
	CHECK_OK(accel_stream_synchronize(s, 60 * T_SEC));
	for (i = 0; i < n; i++) {
		size_t r = (i - 100) / 50, c = (i - 100) % 50;

		if (i >= 10 && i < 16) {
			memcpy(&v16, o + i - (i - 10) % 2, 2);
			CHECK(v16 == 0x1234);
		} else if (i >= 20 && i < 28) {
			memcpy(&v32, o + i - (i - 20) % 4, 4);
			CHECK(v32 == 0xdeadbeef);
		} else if (i >= 100 && r < 4 && c < 30) {
			size_t j = r * 70 + c;

			CHECK(o[i] == (unsigned char)(4 * 131 + j * 7 + (j >> 8)));
		} else {
			CHECK(o[i] == 0xab);
		}
	}
	if (calls) {
		CHECK(calls("cudaMemsetAsync") == m8 + 1);
		CHECK(calls("cuMemsetD16Async") == m16 + 1);
		CHECK(calls("cuMemsetD32Async") == m32 + 1);
		CHECK(calls("cudaMemcpy2DAsync") == c2d + 1);
	}
	CHECK_OK(accel_free(d));
	CHECK_OK(accel_host_free(h));
	CHECK_OK(accel_host_free(o));
	return T_PASS;
}

/*
 * A range cudaHostRegister refuses although its pages are there (the
 * stand-in fails it as CUDA fails a range sharing a page with a
 * registered one) is still registered: CUDA stages its copies, which
 * deliver; only a range that cannot be faulted in fails the call
 * (register_fault.past_end_of_file). The stand-in only: a real GPU
 * refuses no such range on demand.
 */
static int register_refused_by_cuda_stages(void)
{
	const char *lib = getenv("ACCEL_CUDART");
	void (*fail)(int) = NULL;
	int (*registered)(const void *) = NULL;
	const size_t n = 64 << 10;
	unsigned char *p, *o;
	accel_stream_t s;
	void *d, *dl;
	int ret;

	dl = lib ? dlopen(lib, RTLD_NOW | RTLD_NOLOAD) : NULL;
	if (dl) {
		fail = (void (*)(int))dlsym(dl, "fake_cuda_host_register_fail");
		registered = (int (*)(const void *))
			     dlsym(dl, "fake_cuda_registered");
	}
	if (!fail || !registered) {
		printf("# not the stand-in libcudart: CUDA refuses no range on demand\n");
		return T_SKIP;
	}
	CHECK_OK(t_stream(&s));
	CHECK((o = t_host_buf(n)));
	CHECK_OK(accel_malloc(NULL, &d, n));
	p = malloc(n);
	CHECK(p);
	t_fill(p, n, 3);
	fail(712);	/* cudaErrorHostMemoryAlreadyRegistered */
	ret = accel_host_register(NULL, p, n, 0);
	fail(0);
	CHECK_OK(ret);
	CHECK(registered(p) < 0);
	CHECK_RET(accel_host_register(NULL, p + 1, 1, 0), -EEXIST);
	CHECK_OK(accel_memcpy_async(s, d, p, n, ACCEL_MEMCPY_H2D));
	CHECK_OK(accel_memcpy_async(s, o, d, n, ACCEL_MEMCPY_D2H));
	CHECK_OK(accel_stream_synchronize(s, 60 * T_SEC));
	CHECK(t_check_fill(o, n, 3));
	CHECK_OK(accel_host_unregister(p, 0));
	free(p);
	return T_PASS;
}

int main(void)
{
	static const struct t_case cases[] = {
		T(backend_is_cuda), T(round_trip_sizes), T(registered_and_d2d),
		T(small_copies_batched), T(dependent_copies_in_one_fetch),
		T(cross_stream_event), T(pageable_both_sides),
		T(stream_ordered_free), T(cuda_errors_are_errnos),
		T(many_streams_and_destroy), T(retires_without_waiter),
		T(memset_and_2d_mapping), T(register_refused_by_cuda_stages),
	};

	/* This program is about the CUDA backend, whatever the caller says. */
	setenv("ACCEL_BACKEND", "cuda", 1);
	return t_run(cases, sizeof(cases) / sizeof(cases[0]));
}
