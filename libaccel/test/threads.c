// SPDX-License-Identifier: MIT
/* Many threads: own streams in one context, own contexts, handle races. */
#include "helpers.h"

#define NTHREADS 6
#define ROUNDS 50

struct worker {
	accel_context *ctx;	/* NULL: make our own */
	int id;
	int ret;
};

static int work(struct worker *w)
{
	unsigned char *h, *out;
	accel_context *own = NULL;
	accel_stream_t s;
	accel_event_t ev;
	void *d;
	int i, ret;

	if (!w->ctx) {
		ret = accel_context_create(&own, 0);
		if (ret)
			return ret;
	}
	ret = accel_stream_create(w->ctx, 0, 0, &s);
	if (!ret)
		ret = accel_host_alloc(w->ctx, (void **)&h, 8192, 0);
	if (!ret)
		ret = accel_host_alloc(w->ctx, (void **)&out, 8192, 0);
	if (!ret)
		ret = accel_malloc(w->ctx, &d, 8192);
	if (!ret)
		ret = accel_event_create(w->ctx, 0, &ev);
	for (i = 0; !ret && i < ROUNDS; i++) {
		t_fill(h, 8192, (unsigned int)(w->id * 1000 + i));
		ret = accel_memcpy_async(s, d, h, 8192, ACCEL_MEMCPY_H2D);
		if (!ret)
			ret = accel_memcpy_async(s, out, d, 8192,
						 ACCEL_MEMCPY_D2H);
		if (!ret)
			ret = accel_event_record(ev, s);
		if (!ret)
			ret = accel_event_synchronize(ev, 10 * T_SEC);
		if (!ret && !t_check_fill(out, 8192,
					  (unsigned int)(w->id * 1000 + i)))
			ret = -EIO;
	}
	if (!ret)
		ret = accel_event_destroy(ev);
	if (!ret)
		ret = accel_stream_destroy(s);
	if (own)
		accel_context_destroy(own);
	return ret;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;

	w->ret = work(w);
	return NULL;
}

static int run_workers(accel_context *shared)
{
	struct worker w[NTHREADS];
	pthread_t t[NTHREADS];
	int i;

	for (i = 0; i < NTHREADS; i++) {
		w[i].ctx = shared;
		w[i].id = i;
		w[i].ret = 0;
		CHECK(pthread_create(&t[i], NULL, worker_main, &w[i]) == 0);
	}
	for (i = 0; i < NTHREADS; i++) {
		pthread_join(t[i], NULL);
		CHECK_OK(w[i].ret);
	}
	return T_PASS;
}

static int streams_in_one_context(void)
{
	accel_context *ctx = t_ctx();

	CHECK(ctx);
	return run_workers(ctx);
}

static int context_per_thread(void)
{
	return run_workers(NULL);
}

struct racer {
	accel_stream_t *slot;
	accel_context *ctx;
	int stop;
	int crashes;
};

static void *use_slot(void *arg)
{
	struct racer *r = arg;
	int ret;

	while (!__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE)) {
		accel_stream_t s = __atomic_load_n(r->slot, __ATOMIC_ACQUIRE);

		ret = accel_stream_query(s);
		if (ret && ret != -ENOENT && ret != -EAGAIN)
			r->crashes++;
	}
	return NULL;
}

/* Destroy and recreate while another thread uses the old handles. */
static int destroy_while_used(void)
{
	struct racer r = { 0 };
	accel_stream_t s;
	pthread_t t;
	int i;

	r.ctx = t_ctx();
	CHECK(r.ctx);
	CHECK_OK(accel_stream_create(r.ctx, 0, 0, &s));
	r.slot = &s;
	CHECK(pthread_create(&t, NULL, use_slot, &r) == 0);
	for (i = 0; i < 200; i++) {
		accel_stream_t old = s, n;

		CHECK_OK(accel_stream_create(r.ctx, 0, 0, &n));
		__atomic_store_n(&s, n, __ATOMIC_RELEASE);
		CHECK_OK(accel_stream_destroy(old));
	}
	__atomic_store_n(&r.stop, 1, __ATOMIC_RELEASE);
	pthread_join(t, NULL);
	CHECK(r.crashes == 0);
	return T_PASS;
}

T_MAIN(T(streams_in_one_context), T(context_per_thread),
       T(destroy_while_used))
