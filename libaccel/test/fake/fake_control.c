// SPDX-License-Identifier: MIT
/*
 * The stand-in libcudart's controls (see fake_cudart.c for the whole):
 * the call counters (FAKE_CUDA_CALL_NS, FAKE_CUDA_STATS, fake_cuda_count()
 * and friends), the gate every copy call passes (fake_cuda_hold(),
 * fake_cuda_fail_dst(), fake_cuda_fail_nth()), the one cudaSetDevice
 * passes (fake_cuda_hold_threads()) and the modelled device
 * (fake_cuda_rate(), fake_cuda_busy(), FAKE_CUDA_RATE_PS, FAKE_CUDA_LINK,
 * FAKE_CUDA_NO_DATA).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fake_cudart.h"

static const char *const c_name[C_N] = {
	"cudaMemcpyAsync", "cudaMemcpyBatchAsync", "  (copies in batches)",
	"cudaEventRecord", "cudaEventQuery", "cudaEventSynchronize",
	"cudaStreamWaitEvent", "cudaGetDevice", "cudaSetDevice",
	"cudaEventCreateWithFlags", "cuStreamWriteValue32", "cudaMemsetAsync",
	"cuMemsetD16Async", "cuMemsetD32Async", "cudaMemcpy2DAsync",
};
unsigned long fake_counts[C_N];
static __thread unsigned long thread_counts[C_N];
static long call_ns = -1;

static void stats_print(void)
{
	int i;

	fprintf(stderr, "fakecudart: calls:");
	for (i = 0; i < C_N; i++)
		fprintf(stderr, " %s %lu%s", c_name[i],
			__atomic_load_n(&fake_counts[i], __ATOMIC_RELAXED),
			i + 1 < C_N ? "," : "\n");
}

/* How many times the call @name was made (dlsym fake_cuda_calls), -1: unknown. */
long fake_cuda_calls(const char *name);
long fake_cuda_calls(const char *name)
{
	int i;

	for (i = 0; i < C_N; i++)
		if (!strcmp(name, c_name[i]))
			return (long)__atomic_load_n(&fake_counts[i],
						     __ATOMIC_RELAXED);
	return -1;
}

void fake_call(int what)
{
	long ns = __atomic_load_n(&call_ns, __ATOMIC_RELAXED);

	__atomic_add_fetch(&fake_counts[what], 1, __ATOMIC_RELAXED);
	thread_counts[what]++;
	if (ns < 0) {
		const char *v = getenv("FAKE_CUDA_CALL_NS");
		const char *st = getenv("FAKE_CUDA_STATS");

		ns = v ? atol(v) : 0;
		if (__atomic_exchange_n(&call_ns, ns, __ATOMIC_RELAXED) < 0 &&
		    st && !strcmp(st, "1"))
			atexit(stats_print);
	}
	if (ns > 0 && what != C_GETDEV) {
		struct timespec a, b;

		clock_gettime(CLOCK_MONOTONIC, &a);
		do
			clock_gettime(CLOCK_MONOTONIC, &b);
		while ((b.tv_sec - a.tv_sec) * 1000000000L +
		       (b.tv_nsec - a.tv_nsec) < ns);
	}
}

long fake_cuda_count(const char *name);
long fake_cuda_count(const char *name)
{
	int i;

	for (i = 0; i < C_N; i++)
		if (!strcmp(c_name[i], name))
			return (long)__atomic_load_n(&fake_counts[i],
						     __ATOMIC_RELAXED);
	if (!strcmp(name, "batch_items"))
		return (long)__atomic_load_n(&fake_counts[C_BATCH_ITEMS],
					     __ATOMIC_RELAXED);
	return -1;
}

/* How many times the calling thread made the call @name; -1: unknown. */
long fake_cuda_thread_count(const char *name);
long fake_cuda_thread_count(const char *name)
{
	int i;

	for (i = 0; i < C_N; i++)
		if (!strcmp(c_name[i], name))
			return (long)thread_counts[i];
	return -1;
}

/* Copy calls blocked on entry while held; a test releases them. */
static pthread_mutex_t hold_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t hold_cond = PTHREAD_COND_INITIALIZER;
static bool hold_on;
static long hold_waiting;
static void *fail_dst;

void fake_cuda_hold(int on);
void fake_cuda_hold(int on)
{
	pthread_mutex_lock(&hold_lock);
	hold_on = on;
	pthread_cond_broadcast(&hold_cond);
	pthread_mutex_unlock(&hold_lock);
}

long fake_cuda_held(void);
long fake_cuda_held(void)
{
	long n;

	pthread_mutex_lock(&hold_lock);
	n = hold_waiting;
	pthread_mutex_unlock(&hold_lock);
	return n;
}

void fake_cuda_fail_dst(void *p);
void fake_cuda_fail_dst(void *p)
{
	pthread_mutex_lock(&hold_lock);
	fail_dst = p;
	pthread_mutex_unlock(&hold_lock);
}

/* The copy calls left before the one that fails, or 0: none fails. */
static long fail_nth;

void fake_cuda_fail_nth(long n);
void fake_cuda_fail_nth(long n)
{
	pthread_mutex_lock(&hold_lock);
	fail_nth = n;
	pthread_mutex_unlock(&hold_lock);
}

bool fake_copy_gate(void *const *dsts, size_t n)
{
	bool fail = false;
	size_t i;

	pthread_mutex_lock(&hold_lock);
	if (hold_on) {
		hold_waiting++;
		while (hold_on)
			pthread_cond_wait(&hold_cond, &hold_lock);
		hold_waiting--;
	}
	if (fail_nth && !--fail_nth)
		fail = true;
	for (i = 0; i < n && fail_dst; i++)
		fail = fail || dsts[i] == fail_dst;
	pthread_mutex_unlock(&hold_lock);
	return fail;
}

/*
 * Threads held at their start: while fake_cuda_hold_threads(1) is on,
 * cudaSetDevice from any thread but the one that turned it on blocks on
 * entry (libaccel's threads call it first, holding nothing), until
 * fake_cuda_hold_threads(0); fake_cuda_threads_held() says how many are.
 */
static bool park_on;
static pthread_t park_owner;
static long park_waiting;

void fake_cuda_hold_threads(int on);
void fake_cuda_hold_threads(int on)
{
	pthread_mutex_lock(&hold_lock);
	park_on = on;
	park_owner = pthread_self();
	pthread_cond_broadcast(&hold_cond);
	pthread_mutex_unlock(&hold_lock);
}

long fake_cuda_threads_held(void);
long fake_cuda_threads_held(void)
{
	long n;

	pthread_mutex_lock(&hold_lock);
	n = park_waiting;
	pthread_mutex_unlock(&hold_lock);
	return n;
}

void fake_thread_gate(void)
{
	pthread_mutex_lock(&hold_lock);
	if (park_on && !pthread_equal(park_owner, pthread_self())) {
		park_waiting++;
		while (park_on)
			pthread_cond_wait(&hold_cond, &hold_lock);
		park_waiting--;
	}
	pthread_mutex_unlock(&hold_lock);
}

/* The modelled device: ps per byte, and each stream's end (mono ns). */
static long rate_ps;
static uint64_t busy_max;

uint64_t fake_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

void fake_cuda_rate(long ps);
void fake_cuda_rate(long ps)
{
	__atomic_store_n(&rate_ps, ps, __ATOMIC_RELAXED);
}

int fake_cuda_busy(void);
int fake_cuda_busy(void)
{
	return __atomic_load_n(&busy_max, __ATOMIC_ACQUIRE) > fake_mono_ns();
}

uint64_t fake_obj_end(const void *o)
{
	return __atomic_load_n(&((const struct fake_obj *)o)->end,
			       __ATOMIC_RELAXED);
}

/*
 * FAKE_CUDA_RATE_PS=N: the rate from the start (for a benchmark over the
 * stand-in); FAKE_CUDA_LINK=1: every stream shares one link, so copies of
 * several streams take turns instead of running side by side.
 */
static struct fake_obj link_obj;
static int link_shared = -1;
static int no_data;

void fake_data_copy(void *dst, const void *src, size_t n)
{
	if (!__atomic_load_n(&no_data, __ATOMIC_RELAXED))
		memmove(dst, src, n);
}

void fake_model_env_once(void)
{
	const char *r, *l, *nd;

	if (__atomic_load_n(&link_shared, __ATOMIC_RELAXED) >= 0)
		return;
	r = getenv("FAKE_CUDA_RATE_PS");
	l = getenv("FAKE_CUDA_LINK");
	nd = getenv("FAKE_CUDA_NO_DATA");
	if (r)
		__atomic_store_n(&rate_ps, atol(r), __ATOMIC_RELAXED);
	__atomic_store_n(&no_data, nd && !strcmp(nd, "1"), __ATOMIC_RELAXED);
	__atomic_store_n(&link_shared, l && !strcmp(l, "1"), __ATOMIC_RELAXED);
}

void fake_model_copy(cudaStream_t s, size_t n)
{
	struct fake_obj *o = (struct fake_obj *)s;
	long ps = __atomic_load_n(&rate_ps, __ATOMIC_RELAXED);
	uint64_t now, end, max;

	if (ps <= 0 || !o)
		return;
	if (__atomic_load_n(&link_shared, __ATOMIC_RELAXED) == 1) {
		/* The stream's work ends when the link is done with it. */
		static pthread_mutex_t link_lock = PTHREAD_MUTEX_INITIALIZER;

		pthread_mutex_lock(&link_lock);
		now = fake_mono_ns();
		end = __atomic_load_n(&link_obj.end, __ATOMIC_RELAXED);
		if (fake_obj_end(o) > end)
			end = fake_obj_end(o);
		end = (end > now ? end : now) +
		      (uint64_t)((double)n * (double)ps / 1000.0);
		__atomic_store_n(&link_obj.end, end, __ATOMIC_RELAXED);
		__atomic_store_n(&o->end, end, __ATOMIC_RELAXED);
		pthread_mutex_unlock(&link_lock);
		goto busy;
	}
	now = fake_mono_ns();
	end = __atomic_load_n(&o->end, __ATOMIC_RELAXED);
	end = (end > now ? end : now) + (uint64_t)((double)n * (double)ps / 1000.0);
	__atomic_store_n(&o->end, end, __ATOMIC_RELAXED);
busy:
	max = __atomic_load_n(&busy_max, __ATOMIC_RELAXED);
	while (max < end &&
	       !__atomic_compare_exchange_n(&busy_max, &max, end, false,
					    __ATOMIC_RELEASE, __ATOMIC_RELAXED))
		;
}
