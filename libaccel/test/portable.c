// SPDX-License-Identifier: MIT
/*
 * Portable pinned memory (ACCEL_HOST_ALLOC_PORTABLE, cudaHostAllocPortable):
 * a copy in another context than the owner's is asynchronous (read when it
 * runs, not staged at enqueue), and the lifetime promise holds there too:
 * the owner's free or destroy with that context's copies queued leaves
 * them their bytes; with the cuda backend (over the stand-in libcudart)
 * such a copy is one cudaMemcpyAsync straight from the owner's
 * cudaHostRegisterPortable'd pages.
 */
#include <stdbool.h>
#include <sys/mman.h>

#include "helpers.h"

#define N	(256 * 1024)

static bool on_backend(const char *want)
{
	const char *name = "";

	return !accel_context_get_backend(NULL, &name) && !strcmp(name, want);
}

struct two {
	accel_context *a, *b;
	accel_stream_t s;	/* of b */
	void *dev;		/* N bytes of b's */
	unsigned char *own;	/* N pinned bytes of b's */
	unsigned char *mem;	/* N bytes of a's, with @flag */
};

/* Context a owns @mem; b has a stream, device and pinned memory. */
static int two_contexts(struct two *t, unsigned int flag)
{
	memset(t, 0, sizeof(*t));
	t->a = t_ctx();
	if (!t->a || accel_host_alloc(t->a, (void **)&t->mem, N, flag))
		return T_FAIL;
	t->b = t_ctx();
	if (!t->b)
		return T_FAIL;
	if (accel_stream_create(t->b, 0, 0, &t->s) ||
	    accel_malloc(t->b, &t->dev, N) ||
	    accel_host_alloc(t->b, (void **)&t->own, N, 0))
		return T_FAIL;
	return T_PASS;
}

static int staged(void)
{
	return strstr(accel_last_error_string(), "staged") != NULL;
}

static int flags(void)
{
	void *p;

	CHECK(t_ctx());
	CHECK_RET(accel_host_alloc(NULL, &p, 4096, 0x2), -EINVAL);
	CHECK_RET(accel_host_alloc(NULL, &p, 4096,
				   ACCEL_HOST_ALLOC_PORTABLE | 0x100), -EINVAL);
	CHECK_OK(accel_host_alloc(NULL, &p, 4096, ACCEL_HOST_ALLOC_PORTABLE));
	CHECK_OK(accel_host_free(p));
	return T_PASS;
}

/*
 * On b's stream, held back by *@gate: a's memory, filled with @seed, to b's
 * device memory (staged at enqueue or not, as @want_staged says), then
 * that to b's pinned memory.
 */
static int gated_trip(struct two *t, unsigned int seed, bool want_staged,
		      accel_event_t *gate)
{
	t_fill(t->mem, N, seed);
	CHECK_OK(t_gate(t->s, gate));
	CHECK_OK(accel_memcpy_async(t->s, t->dev, t->mem, N, ACCEL_MEMCPY_H2D));
	CHECK(staged() == want_staged);
	CHECK_OK(accel_memcpy_async(t->s, t->own, t->dev, N, ACCEL_MEMCPY_D2H));
	return T_PASS;
}

/*
 * Context b copies from context a's memory while its stream is gated, and
 * the source changes before the gate opens: portable memory is read when
 * the copy runs (the new bytes arrive), memory of a's alone is staged at
 * enqueue (the old bytes arrive).
 */
static int read_when_run(unsigned int flag, unsigned int want_seed)
{
	accel_event_t gate;
	struct two t;
	int ret = two_contexts(&t, flag);

	if (ret)
		return ret;
	CHECK_OK(gated_trip(&t, 1, !flag, &gate));
	t_fill(t.mem, N, 2);
	CHECK_OK(t_gate_open(gate));
	CHECK_OK(accel_stream_synchronize(t.s, ACCEL_TIMEOUT_INFINITE));
	CHECK(t_check_fill(t.own, N, want_seed));
	return T_PASS;
}

static int async_in_other_context(void)
{
	return read_when_run(ACCEL_HOST_ALLOC_PORTABLE, 2);
}

static int not_portable_is_staged(void)
{
	return read_when_run(0, 1);
}

/* A copy from another context into portable memory lands there. */
static int written_from_other_context(void)
{
	struct two t;
	int ret = two_contexts(&t, ACCEL_HOST_ALLOC_PORTABLE);

	if (ret)
		return ret;
	memset(t.mem, 0, N);
	t_fill(t.own, N, 5);
	CHECK_OK(accel_memcpy_async(t.s, t.dev, t.own, N, ACCEL_MEMCPY_H2D));
	CHECK_OK(accel_memcpy_async(t.s, t.mem, t.dev, N, ACCEL_MEMCPY_D2H));
	CHECK(!staged());
	CHECK_OK(accel_stream_synchronize(t.s, ACCEL_TIMEOUT_INFINITE));
	CHECK(t_check_fill(t.mem, N, 5));
	/* The import is not the user's registration to drop. */
	CHECK_RET(accel_host_unregister(t.mem, 0), -EINVAL);
	CHECK_OK(accel_host_free(t.mem));
	return T_PASS;
}

/*
 * A pageable range that runs on into another context's portable memory
 * is -EINVAL, as one running into this context's own allocation, whether
 * or not this context named that memory in a copy yet (imported it); the
 * memory is left as it was.
 */
static int pageable_running_into_portable(void)
{
	struct two t;
	int ret = two_contexts(&t, ACCEL_HOST_ALLOC_PORTABLE), i;

	if (ret)
		return ret;
	memset(t.mem, 'H', N);
	for (i = 0; i < 2; i++) {
		CHECK_RET(accel_memcpy_async(t.s, t.mem - 64, t.dev, 128,
					     ACCEL_MEMCPY_D2H), -EINVAL);
		CHECK(strstr(accel_last_error_string(), "accel_host_alloc()"));
		CHECK_RET(accel_memcpy_async(t.s, t.dev, t.mem - 64, 128,
					     ACCEL_MEMCPY_H2D), -EINVAL);
		/* Named in a copy: imported; the rule holds the same. */
		CHECK_OK(accel_memcpy_async(t.s, t.dev, t.mem, N,
					    ACCEL_MEMCPY_H2D));
		CHECK_OK(accel_stream_synchronize(t.s, ACCEL_TIMEOUT_INFINITE));
	}
	for (i = 0; i < (int)N; i++)
		CHECK(t.mem[i] == 'H');
	CHECK_OK(accel_host_free(t.mem));
	return T_PASS;
}

/*
 * The lifetime promise in the importing context: the owner frees the
 * memory (or is destroyed) while b's gated copy from it is queued; the
 * copy still reads the bytes it was given, and the import is gone after.
 */
static int survives_owner(bool destroy)
{
	accel_event_t gate;
	struct two t;
	int ret = two_contexts(&t, ACCEL_HOST_ALLOC_PORTABLE);

	if (ret)
		return ret;
	CHECK_OK(gated_trip(&t, 9, false, &gate));
	if (destroy)
		CHECK_OK(accel_context_destroy(t.a));
	else
		CHECK_OK(accel_host_free(t.mem));
	CHECK_OK(t_gate_open(gate));
	CHECK_OK(accel_stream_synchronize(t.s, ACCEL_TIMEOUT_INFINITE));
	CHECK(t_check_fill(t.own, N, 9));
	if (on_backend("cuda")) {
		/*
		 * The importer's executor copied from the owner's mapping: it
		 * goes with the import, which is released once the copy's
		 * completion is reported; the importer's end makes that now.
		 */
		CHECK_OK(accel_context_destroy(t.b));
		CHECK(msync(t.mem, N, MS_ASYNC) == -1 && errno == ENOMEM);
		return T_PASS;
	}
	/* Unmapped now: no stale import answers for the address. */
	CHECK_RET(accel_memcpy_async(t.s, t.dev, t.mem, N, ACCEL_MEMCPY_H2D),
		  -EFAULT);
	return T_PASS;
}

static int survives_owner_free(void)
{
	return survives_owner(false);
}

static int survives_owner_destroy(void)
{
	return survives_owner(true);
}

/*
 * The cuda backend over the stand-in libcudart: the owner registers the
 * memory with cudaHostRegisterPortable (every CUDA context takes it as
 * pinned); another context's copy from it is one cudaMemcpyAsync straight
 * from the buffer (no staging chunk), from registered pages, and the
 * bytes are exact. The owner frees with that copy queued: the pages stay
 * mapped and registered until the importer is done with them, then go.
 */
static int cuda_straight_from_buffer(void)
{
	void (*watch)(const void *, size_t);
	long (*watched)(long *, long *);
	int (*registered)(const void *);
	long batched, unpinned;
	accel_event_t gate;
	struct two t;
	int ret;

	watch = (void (*)(const void *, size_t))t_fake_hook("fake_cuda_watch", 1);
	watched = (long (*)(long *, long *))t_fake_hook("fake_cuda_watched", 1);
	registered = (int (*)(const void *))t_fake_hook("fake_cuda_registered",
							  1);
	if (!watch || !watched || !registered) {
		printf("# not over the stand-in libcudart\n");
		return T_SKIP;
	}
	ret = two_contexts(&t, ACCEL_HOST_ALLOC_PORTABLE);
	if (ret)
		return ret;
	if (!on_backend("cuda"))
		return T_SKIP;
	CHECK(registered(t.mem) == 0x01);	/* cudaHostRegisterPortable */
	t_fill(t.mem, N, 4);
	watch(t.mem, N);
	CHECK_OK(t_gate(t.s, &gate));
	CHECK_OK(accel_memcpy_async(t.s, t.dev, t.mem, N, ACCEL_MEMCPY_H2D));
	CHECK(!staged());
	CHECK_OK(accel_memcpy_async(t.s, t.own, t.dev, N, ACCEL_MEMCPY_D2H));
	CHECK_OK(accel_host_free(t.mem));
	/* Still mapped and registered for the importer's queued copy. */
	CHECK(registered(t.mem) == 0x01);
	CHECK_OK(t_gate_open(gate));
	CHECK_OK(accel_stream_synchronize(t.s, ACCEL_TIMEOUT_INFINITE));
	CHECK(t_check_fill(t.own, N, 4));
	CHECK(watched(&batched, &unpinned) == 1);
	CHECK(batched == 0 && unpinned == 0);
	/* The importer done: registration and mapping gone. */
	CHECK_OK(accel_context_destroy(t.b));
	CHECK(registered(t.mem) < 0);
	CHECK(msync(t.mem, N, MS_ASYNC) == -1 && errno == ENOMEM);
	watch(NULL, 0);
	return T_PASS;
}

T_MAIN(T(flags), T(async_in_other_context), T(not_portable_is_staged),
       T(pageable_running_into_portable),
       T(written_from_other_context), T(survives_owner_free),
       T(survives_owner_destroy), T(cuda_straight_from_buffer))
