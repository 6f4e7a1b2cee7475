// SPDX-License-Identifier: GPL-2.0
/*
 * accelstream: many threads, many streams. 8 threads x 8 streams; each
 * chunk goes host -> device on one stream and device -> host on the next,
 * ordered by an event; every round is checked byte for byte and by
 * checksum. All threads start behind one user event so that they contend.
 */
#include "kselftest_harness.h"
#include "accel_helpers.h"

#define NTHREADS	8
#define NSTREAMS	8
#define CHUNK		(256 * 1024 + 24)
#define ROUNDS		4

struct worker {
	pthread_t th;
	int fd;			/* shared or own context */
	int idx;
	uint32_t start;		/* user event all round-0 work waits on */
	pthread_barrier_t *submitted;
	char err[160];		/* first failure, empty when fine */
};

static uint64_t fnv1a(const uint8_t *p, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	size_t i;

	for (i = 0; i < n; i++)
		h = (h ^ p[i]) * 0x100000001b3ULL;
	return h;
}

#define WFAIL(w, ...) do {						\
	if (!(w)->err[0])						\
		snprintf((w)->err, sizeof((w)->err), __VA_ARGS__);	\
	goto out;							\
} while (0)

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	const size_t n = (size_t)NSTREAMS * CHUNK;
	uint8_t *src = anon_map(n), *dst = anon_map(n);
	uint32_t hs, hd, dev, s[NSTREAMS], ev[NSTREAMS];
	int round, j, ret, waited = 0;

	if (!src || !dst)
		WFAIL(w, "mmap failed");
	if ((ret = accel_register(w->fd, src, n, 0, &hs)) ||
	    (ret = accel_register(w->fd, dst, n, 0, &hd)) ||
	    (ret = accel_alloc(w->fd, n, ACCEL_MEM_DEVICE, &dev, NULL)))
		WFAIL(w, "region setup: %d", ret);
	for (j = 0; j < NSTREAMS; j++) {
		if ((ret = accel_stream(w->fd, 0, j % 2 ? -1 : 0, &s[j])) ||
		    (ret = accel_event(w->fd, 0, &ev[j])))
			WFAIL(w, "stream/event setup: %d", ret);
	}

	for (round = 0; round < ROUNDS; round++) {
		fill_random(src, n, 1000 * w->idx + round);
		memset(dst, 0, n);
		/* Phase 1: chunk j host -> device on stream j, then record. */
		for (j = 0; j < NSTREAMS; j++) {
			struct accel_desc d[3];
			int k = 0;

			if (round == 0)
				d[k++] = d_host_wait(w->start, 1);
			d[k++] = d_copy(dev, (uint64_t)j * CHUNK, hs,
					(uint64_t)j * CHUNK, CHUNK);
			d[k++] = d_record(ev[j]);
			if ((ret = accel_submit(w->fd, s[j], d, k, NULL)))
				WFAIL(w, "round %d phase 1 stream %d: %d", round, j, ret);
		}
		/* Phase 2: stream j+1 waits for it, then device -> host. */
		for (j = 0; j < NSTREAMS; j++) {
			struct accel_desc d[2] = {
				d_stream_wait(ev[j]),
				d_copy(hd, (uint64_t)j * CHUNK, dev,
				       (uint64_t)j * CHUNK, CHUNK),
			};

			if ((ret = accel_submit(w->fd, s[(j + 1) % NSTREAMS], d, 2, NULL)))
				WFAIL(w, "round %d phase 2 stream %d: %d", round, j, ret);
		}
		if (round == 0 && !waited) {
			waited = 1;
			pthread_barrier_wait(w->submitted);
		}
		for (j = 0; j < NSTREAMS; j++)
			if ((ret = accel_drain(w->fd, s[j])))
				WFAIL(w, "round %d sync stream %d: %d", round, j, ret);
		for (j = 0; j < NSTREAMS; j++) {
			const uint8_t *a = src + (size_t)j * CHUNK;
			const uint8_t *b = dst + (size_t)j * CHUNK;
			long diff = first_diff(a, b, CHUNK);

			if (fnv1a(a, CHUNK) != fnv1a(b, CHUNK) || diff != -1)
				WFAIL(w, "round %d chunk %d: checksum differs, first bad byte %ld",
				      round, j, diff);
		}
	}
out:
	if (!waited)
		pthread_barrier_wait(w->submitted);
	if (src)
		munmap(src, n);
	if (dst)
		munmap(dst, n);
	return NULL;
}

ACCEL_FIXTURE(threads);

static void run_workers(struct __test_metadata *_metadata, int shared_fd,
			bool own_contexts)
{
	struct worker w[NTHREADS];
	pthread_barrier_t submitted;
	int fds[NTHREADS], i;
	uint32_t start[NTHREADS];

	memset(w, 0, sizeof(w));
	ASSERT_EQ(0, pthread_barrier_init(&submitted, NULL, NTHREADS + 1));
	for (i = 0; i < NTHREADS; i++) {
		fds[i] = own_contexts ? accel_open() : shared_fd;
		ASSERT_LE(0, fds[i]);
		if (own_contexts || i == 0) {
			ASSERT_EQ(0, accel_event(fds[i], ACCEL_EVENT_USER, &start[i]));
		} else {
			start[i] = start[0];
		}
		w[i].fd = fds[i];
		w[i].idx = i;
		w[i].start = start[i];
		w[i].submitted = &submitted;
		ASSERT_EQ(0, pthread_create(&w[i].th, NULL, worker_main, &w[i]));
	}
	/* Everyone's round 0 is queued behind the start event: release all. */
	pthread_barrier_wait(&submitted);
	for (i = 0; i < NTHREADS; i++) {
		if (own_contexts || i == 0)
			EXPECT_EQ(0, accel_signal(fds[i], start[i], 0, 1));
	}
	for (i = 0; i < NTHREADS; i++) {
		pthread_join(w[i].th, NULL);
		EXPECT_EQ('\0', w[i].err[0]) {
			TH_LOG("thread %d: %s", i, w[i].err);
		}
		if (own_contexts)
			close(fds[i]);
	}
	pthread_barrier_destroy(&submitted);
}

/* 8 threads sharing one context. */
TEST_F_TIMEOUT(threads, shared_context, 240)
{
	REQUIRE_CAP(ACCEL_CAP_DEVICE_MEM);
	REQUIRE_CAP(ACCEL_CAP_USER_EVENTS);
	run_workers(_metadata, self->fd, false);
}

/* 8 threads, each with its own context. */
TEST_F_TIMEOUT(threads, own_contexts, 240)
{
	REQUIRE_CAP(ACCEL_CAP_DEVICE_MEM);
	REQUIRE_CAP(ACCEL_CAP_USER_EVENTS);
	run_workers(_metadata, self->fd, true);
}

/* Threads hammering one stream's queue with NOPs keep one timeline. */
struct nop_arg {
	int fd;
	uint32_t s;
	int err;
};

static void *nop_main(void *arg)
{
	struct nop_arg *a = arg;
	struct accel_desc d[16];
	int i;

	for (i = 0; i < 16; i++)
		d[i] = d_nop();
	for (i = 0; i < 500; i++)
		if (accel_submit(a->fd, a->s, d, 16, NULL))
			a->err++;
	return NULL;
}

TEST_F_TIMEOUT(threads, one_stream_many_submitters, 120)
{
	struct nop_arg a[NTHREADS];
	struct accel_stream_query q;
	pthread_t th[NTHREADS];
	uint32_t s;
	int i;

	ASSERT_EQ(0, accel_stream(self->fd, 0, 0, &s));
	for (i = 0; i < NTHREADS; i++) {
		a[i] = (struct nop_arg){ .fd = self->fd, .s = s };
		ASSERT_EQ(0, pthread_create(&th[i], NULL, nop_main, &a[i]));
	}
	for (i = 0; i < NTHREADS; i++) {
		pthread_join(th[i], NULL);
		EXPECT_EQ(0, a[i].err);
	}
	ASSERT_EQ(0, accel_drain(self->fd, s));
	ASSERT_EQ(0, accel_query(self->fd, s, &q));
	EXPECT_EQ((uint64_t)NTHREADS * 500 * 16, q.submitted);
	EXPECT_EQ(q.submitted, q.completed);
	EXPECT_EQ(0u, q.queued);
}

ACCEL_HARNESS_MAIN
