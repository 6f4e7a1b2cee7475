// SPDX-License-Identifier: MIT
/*
 * The stand-in libcudart's controls (see fake_cudart.c for the whole):
 * the call counters (FAKE_CUDA_CALL_NS, FAKE_CUDA_STATS, fake_cuda_count()
 * and friends), the gate every copy call passes (fake_cuda_hold(),
 * fake_cuda_fail_dst(), fake_cuda_fail_nth()), the one cudaSetDevice
 * passes (fake_cuda_hold_threads()) and the modelled device
 * (fake_cuda_rate(), fake_cuda_busy(), fake_cuda_busy_ns(),
 * FAKE_CUDA_RATE_PS, FAKE_CUDA_LINK, FAKE_CUDA_NO_DATA), with its host
 * word writes in stream order (fake_cuda_late_writes()).
 */
#include <pthread.h>
#include <signal.h>
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

/* Set a gate (@flag) to @on and wake whoever waits at it. */
static void gate_set(bool *flag, int on)
{
	pthread_mutex_lock(&hold_lock);
	*flag = on;
	pthread_cond_broadcast(&hold_cond);
	pthread_mutex_unlock(&hold_lock);
}

/* How many wait at a gate (@n, under hold_lock). */
static long gate_waiting(const long *n)
{
	long v;

	pthread_mutex_lock(&hold_lock);
	v = *n;
	pthread_mutex_unlock(&hold_lock);
	return v;
}

void fake_cuda_hold(int on);
void fake_cuda_hold(int on)
{
	gate_set(&hold_on, on);
}

long fake_cuda_held(void);
long fake_cuda_held(void)
{
	return gate_waiting(&hold_waiting);
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
	/* The owner is read under hold_lock, after the flag: set it first. */
	pthread_mutex_lock(&hold_lock);
	park_owner = pthread_self();
	pthread_mutex_unlock(&hold_lock);
	gate_set(&park_on, on);
}

long fake_cuda_threads_held(void);
long fake_cuda_threads_held(void)
{
	return gate_waiting(&park_waiting);
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
	uint64_t now = fake_mono_ns();

	/* Idle: every host word written too, as a test that asks expects. */
	fake_writes_flush(now);
	return __atomic_load_n(&busy_max, __ATOMIC_ACQUIRE) > now;
}

/* How long, in ns, until no stream's modelled work is running (0: idle). */
long fake_cuda_busy_ns(void);
long fake_cuda_busy_ns(void)
{
	uint64_t end = __atomic_load_n(&busy_max, __ATOMIC_ACQUIRE);
	uint64_t now = fake_mono_ns();

	return end > now ? (long)(end - now) : 0;
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

/*
 * Host word writes (cuStreamWriteValue32) in stream order: a write takes
 * effect when the modelled work queued before it on its stream is done,
 * at the stream's end when it was made (the moment an event recorded
 * there completes). One due already is made in the call; a later one
 * waits in the queue, by due time and in call order among equals (so a
 * stream's writes land in its order: its end never goes back), for the
 * writer thread, the modelled device writing host memory. A call that
 * tells the host the device got past a moment (an event seen done,
 * cudaEventSynchronize, fake_cuda_busy()) first makes the writes due by
 * then: a write is done before what follows it on its stream.
 */
struct fake_write {
	struct fake_write *next;
	uint64_t due;
	uint32_t *addr;
	uint32_t value;
};

static pthread_once_t write_once = PTHREAD_ONCE_INIT;
/* Protects write_head, writer_on and writes_late; a leaf. */
static pthread_mutex_t write_lock = PTHREAD_MUTEX_INITIALIZER;
/* Signalled when a write is queued (the writer and a drain look again). */
static pthread_cond_t write_cond;
static struct fake_write *write_head;
static bool writer_on;
static long writes_late;
/* Writes queued: a call finds none without the lock. */
static long writes_queued;

static void fake_write_cond_init(void)
{
	pthread_condattr_t ca;

	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&write_cond, &ca);
	pthread_condattr_destroy(&ca);
}

static void fake_write_prepare(void)
{
	pthread_mutex_lock(&write_lock);
}

static void fake_write_parent(void)
{
	pthread_mutex_unlock(&write_lock);
}

/* The child has no writer (and, as with CUDA, no device to write). */
static void fake_write_child(void)
{
	struct fake_write *w;

	while ((w = write_head)) {
		write_head = w->next;
		free(w);
	}
	writer_on = false;
	__atomic_store_n(&writes_queued, 0, __ATOMIC_RELAXED);
	fake_write_cond_init();
	pthread_mutex_unlock(&write_lock);
}

static void fake_write_init(void)
{
	fake_write_cond_init();
	pthread_atfork(fake_write_prepare, fake_write_parent, fake_write_child);
}

/* Make the queued writes due by @now; under write_lock. */
static void fake_writes_flush_locked(uint64_t now)
{
	struct fake_write *w;

	while ((w = write_head) && w->due <= now) {
		write_head = w->next;
		/* The host reads the word with acquire: what came before shows. */
		__atomic_store_n(w->addr, w->value, __ATOMIC_RELEASE);
		writes_late++;
		__atomic_sub_fetch(&writes_queued, 1, __ATOMIC_RELAXED);
		free(w);
	}
}

void fake_writes_flush(uint64_t now)
{
	if (!__atomic_load_n(&writes_queued, __ATOMIC_RELAXED))
		return;
	pthread_mutex_lock(&write_lock);
	fake_writes_flush_locked(now);
	pthread_mutex_unlock(&write_lock);
}

/* Sleep on write_cond until @until (mono ns) at most; under write_lock. */
static void fake_write_wait_locked(uint64_t until)
{
	struct timespec ts = {
		.tv_sec = (time_t)(until / 1000000000ULL),
		.tv_nsec = (long)(until % 1000000000ULL),
	};

	pthread_cond_timedwait(&write_cond, &write_lock, &ts);
}

static void *fake_writer_main(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&write_lock);
	for (;;) {
		fake_writes_flush_locked(fake_mono_ns());
		if (write_head)
			fake_write_wait_locked(write_head->due);
		else
			pthread_cond_wait(&write_cond, &write_lock);
	}
	return NULL;
}

/* Under write_lock: the writer thread, started once; 0 or -1. */
static int fake_writer_start_locked(void)
{
	sigset_t all, old;
	pthread_attr_t a;
	pthread_t t;
	int ret;

	if (writer_on)
		return 0;
	/* The device's thread takes none of the program's signals. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_attr_init(&a);
	pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	ret = pthread_create(&t, &a, fake_writer_main, NULL);
	pthread_attr_destroy(&a);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (ret)
		return -1;
	writer_on = true;
	return 0;
}

int fake_model_write32(cudaStream_t s, uint32_t *addr, uint32_t value)
{
	uint64_t due = s ? fake_obj_end(s) : 0, now = fake_mono_ns();
	struct fake_write *w, **pp;

	pthread_once(&write_once, fake_write_init);
	pthread_mutex_lock(&write_lock);
	/* Those before it first: a stream's end never goes back. */
	fake_writes_flush_locked(now);
	if (due <= now) {
		__atomic_store_n(addr, value, __ATOMIC_RELEASE);
		pthread_mutex_unlock(&write_lock);
		return 0;
	}
	w = malloc(sizeof(*w));
	if (!w || fake_writer_start_locked()) {
		pthread_mutex_unlock(&write_lock);
		free(w);
		return -1;
	}
	w->due = due;
	w->addr = addr;
	w->value = value;
	for (pp = &write_head; *pp && (*pp)->due <= due; pp = &(*pp)->next)
		;
	w->next = *pp;
	*pp = w;
	__atomic_add_fetch(&writes_queued, 1, __ATOMIC_RELAXED);
	pthread_cond_broadcast(&write_cond);
	pthread_mutex_unlock(&write_lock);
	return 0;
}

void fake_writes_drain(void)
{
	if (!__atomic_load_n(&writes_queued, __ATOMIC_RELAXED))
		return;
	pthread_mutex_lock(&write_lock);
	for (;;) {
		fake_writes_flush_locked(fake_mono_ns());
		if (!write_head)
			break;
		fake_write_wait_locked(write_head->due);
	}
	pthread_mutex_unlock(&write_lock);
}

/* How many host word writes were made after their call returned. */
long fake_cuda_late_writes(void);
long fake_cuda_late_writes(void)
{
	long n;

	pthread_mutex_lock(&write_lock);
	n = writes_late;
	pthread_mutex_unlock(&write_lock);
	return n;
}
