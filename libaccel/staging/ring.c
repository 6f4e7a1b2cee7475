// SPDX-License-Identifier: MIT
/*
 * The staging pool (stage.h): the ring, the cheapest path of a small
 * pageable H2D copy.
 *
 * One pinned chunk of the pool is cut into slots as a ring: a copy of at
 * most ring.max bytes (ACCEL_STAGING_SMALL_KB, at most a quarter of a
 * chunk) takes the next free slot, the calling thread copies the source
 * into it and submits the one COPY slot -> destination at once: no worker,
 * no user event, no EVENT_RECORD (which would cost a cudaEventRecord and
 * break a burst's batch on the cuda backend). A slot is free again once
 * the stream's timeline passed its COPY (STREAM_QUERY's completed), looked
 * at only when the ring is full, oldest first, so that a burst of small
 * copies waits for no completion while the ring has room.
 *
 * A slot's stream that is destroyed with the copy queued is handed to an
 * event recorded at its tail first (accel_staging_stream_dead()): the
 * handle dies at once, the queued work still runs.
 *
 * The ring full and its oldest copy not retired within STAGING_WAIT_MS
 * (the stream is gated, or behind other work): the copy, and the next
 * ones until the oldest slot retired, take the chunks' path (copy.c),
 * which keeps a queue of any length in unpinned memory.
 *
 * A small D2H copy into pageable memory on a stream with nothing queued
 * is finished in the call, as CUDA's own pageable D2H is: one COPY into a
 * slot, a wait for it as a user's synchronize (polling the device first
 * where the backend does, the fill threads kept awake meanwhile when the
 * copy-out is theirs too), the copy out, and nothing more on the stream:
 * no worker, no EVENT_RECORD, no HOST_WAIT holding the stream until a
 * thread was woken. The destination is written before the call returns,
 * so before anything queued after it runs. Behind other work it stays
 * asynchronous and takes the chunks' path. The slot is not reused while
 * it is being copied out (@reading).
 */
#include "stage.h"

/* Slots start on a page: the device reads whole pages. */
#define RING_ALIGN	4096

static int ring_make_locked(struct accel_staging *p)
{
	struct accel_ctx *ctx = p->ctx;
	struct stage_ring *g = &p->ring;
	void *ptr;
	int ret;

	g->cap = (unsigned int)(p->chunk_size / RING_ALIGN);
	g->slot = calloc(g->cap, sizeof(*g->slot));
	if (!g->slot)
		return -ENOMEM;
	g->r.kind = LA_REGION_HOST_ALLOC;
	ret = accel_bounce_alloc(ctx, p->chunk_size, &g->r.handle, &ptr,
				 &g->r.map_len);
	if (ret) {
		free(g->slot);
		g->slot = NULL;
		return ret;
	}
	g->r.base = (uintptr_t)ptr;
	g->r.size = p->chunk_size;
	__atomic_add_fetch(&p->pinned, g->r.map_len, __ATOMIC_RELAXED);
	ctx->backend->host_pin(ctx, &g->r);
	/* The chunks may have come out smaller than asked (a pinning limit). */
	if (g->max > g->r.size / 4)
		g->max = g->r.size / 4;
	return 0;
}

/*
 * The call that pinned the ring failed before a slot was queued (its
 * stream failed, or its queue is full): unpin it again, so that the
 * failed call leaves nothing pinned or charged (libaccel(7): a call that
 * fails changes nothing). The next small copy pins it anew.
 */
static void ring_unmake_locked(struct accel_staging *p)
{
	struct stage_ring *g = &p->ring;

	accel_bounce_release(p->ctx, g->r.handle, (void *)g->r.base,
			     g->r.map_len);
	__atomic_sub_fetch(&p->pinned, g->r.map_len, __ATOMIC_RELAXED);
	free(g->slot);
	g->slot = NULL;
	memset(&g->r, 0, sizeof(g->r));
	g->first = g->n = 0;
	g->head = 0;
}

/* Whether the copy that read @s has retired; @q caches one stream's answer. */
static bool slot_retired_locked(struct accel_staging *p,
				const struct stage_slot *s,
				struct accel_stream_query *q, bool *have)
{
	if (s->reading)
		return false;
	if (s->point)
		return stage_point_passed(p->ctx, s->point);
	if (!*have || q->handle != s->kstream) {
		/*
		 * -ENOENT: destroyed between its submit and the hook (a
		 * destroy racing a copy on the same stream). Its work may
		 * still run: the slot stays, the chunks serve meanwhile.
		 */
		if (accel_kstream_query(p->ctx, s->kstream, q))
			return false;
		*have = true;
	}
	return q->completed >= s->seq;
}

/* Free the retired slots at the ring's tail; true if any. */
static bool ring_reclaim_locked(struct accel_staging *p)
{
	struct stage_ring *g = &p->ring;
	struct accel_stream_query q;
	bool have = false, any = false;

	while (g->n) {
		struct stage_slot *s = &g->slot[g->first];

		if (!slot_retired_locked(p, s, &q, &have))
			break;
		if (s->own_point)
			stage_point_put_locked(p, s->point);
		g->first = (g->first + 1) % g->cap;
		g->n--;
		any = true;
	}
	if (!g->n)
		g->head = 0;
	return any;
}

/* Where @len bytes fit at the ring's head: 0 and *@off, or -ENOSPC. */
static int ring_alloc_locked(struct stage_ring *g, size_t len, size_t *off)
{
	size_t tail, need = (len + RING_ALIGN - 1) & ~(size_t)(RING_ALIGN - 1);
	const struct stage_slot *newest;

	if (g->n == g->cap)
		return -ENOSPC;
	if (!g->n) {
		*off = 0;
		return need <= g->r.size ? 0 : -ENOSPC;
	}
	tail = g->slot[g->first].off;
	newest = &g->slot[(g->first + g->n - 1) % g->cap];
	if (newest->off >= tail) {
		/* Not wrapped: room after the head, else at the start. */
		if (g->r.size - g->head >= need) {
			*off = g->head;
			return 0;
		}
		if (tail >= need) {
			*off = 0;
			return 0;
		}
		return -ENOSPC;
	}
	if (tail - g->head >= need) {
		*off = g->head;
		return 0;
	}
	return -ENOSPC;
}

static int ring_sync_poll(struct accel_ctx *ctx, void *arg, uint64_t until)
{
	struct accel_stream_sync ss = *(struct accel_stream_sync *)arg;

	ss.timeout_ns = until;
	return accel_ioctl(ctx, ACCEL_IOC_STREAM_SYNC, &ss);
}

/*
 * The ring is full: wait, the pool lock dropped, at most STAGING_WAIT_MS
 * for its oldest copy (polling the device first where the backend does,
 * as accel_stream_synchronize() does). true when slots came free.
 */
static bool ring_wait_unlocked(struct accel_staging *p)
{
	struct accel_ctx *ctx = p->ctx;
	struct stage_slot s = p->ring.slot[p->ring.first];
	uint64_t deadline = accel_deadline(STAGING_WAIT_MS * 1000000ULL);
	int ret;

	p->tr.ring_waits++;
	pthread_mutex_unlock(&p->lock);
	if (s.point) {
		struct accel_wait_entry ents[3];

		memset(ents, 0, sizeof(ents));
		ents[0].event = s.point;
		accel_kwait_user_until(ctx, ents, 1, 0, deadline, NULL);
	} else {
		struct accel_stream_sync ss;

		memset(&ss, 0, sizeof(ss));
		ss.handle = s.kstream;
		ss.seq = s.seq;
		ss.timeout_ns = deadline;
		ret = ctx->backend->wait_fast(ctx, ring_sync_poll, &ss,
					      deadline);
		while (ret == -ETIME || ret == -EINTR) {
			ret = accel_ioctl(ctx, ACCEL_IOC_STREAM_SYNC, &ss);
			if (ret != -EINTR)
				break;
		}
	}
	pthread_mutex_lock(&p->lock);
	return ring_reclaim_locked(p);
}

/*
 * Room for @len bytes in the ring, pinned on first use: 0 and *@off, 1:
 * not taken (too large, no ring, its oldest copy did not retire in time),
 * or -ENOENT (the pool stops).
 */
static int ring_take_locked(struct accel_staging *p, size_t len, size_t *off)
{
	struct stage_ring *g = &p->ring;

	if (len > g->max || g->failed)
		return 1;
	if (!g->r.base) {
		if (ring_make_locked(p)) {
			/* A pinning limit: the chunks' path says so, or copes. */
			g->failed = true;
			return 1;
		}
		if (len > g->max)
			return 1;
	}
	while (ring_alloc_locked(g, len, off)) {
		if (ring_reclaim_locked(p))
			continue;
		/* Its oldest copy did not retire in time: not again until it has. */
		if (g->behind || !ring_wait_unlocked(p)) {
			g->behind = true;
			return 1;
		}
		if (p->stopping)
			return -ENOENT;
	}
	g->behind = false;
	return 0;
}

/* Queue the COPY @d, which reads or writes the slot at @off: its index. */
static int ring_push_locked(struct accel_staging *p, uint32_t kstream,
			    const struct accel_desc *d, size_t off,
			    uint64_t *seq, unsigned int *idx)
{
	struct stage_ring *g = &p->ring;
	struct stage_slot *s;
	int ret;

	ret = accel_submit(p->ctx, kstream, d, 1, seq);
	if (ret)
		return ret;
	*idx = (g->first + g->n) % g->cap;
	s = &g->slot[*idx];
	memset(s, 0, sizeof(*s));
	s->off = off;
	s->len = d->length;
	s->kstream = kstream;
	s->seq = *seq;
	g->n++;
	g->head = off + ((d->length + RING_ALIGN - 1) &
			 ~(size_t)(RING_ALIGN - 1));
	return 0;
}

int stage_ring_copy_locked(struct accel_staging *p, uint32_t kstream,
			   const struct accel_stage_side *dst,
			   const void *src, size_t len, uint64_t *seq)
{
	struct stage_ring *g = &p->ring;
	struct accel_desc d;
	unsigned int idx;
	size_t off = 0;
	bool made;
	int ret;

	if (len > g->max || g->failed)
		return 1;
	/* Bytes an unfinished pageable write will write: read late. */
	if (p->outs) {
		struct stage_patch *patch;
		unsigned int npatch;
		uint64_t dep;

		ret = stage_outs_overlap_locked(p, kstream, src, len, &patch,
						&npatch, &dep);
		free(patch);
		if (ret || npatch)
			return ret ? ret : 1;
	}
	made = !g->r.base;
	ret = ring_take_locked(p, len, &off);
	if (ret)
		return ret;
	stage_par_copy(p, (char *)g->r.base + off, src, len, false);
	stage_desc_copy(&d, dst->handle, dst->offset, g->r.handle, off, len);
	ret = ring_push_locked(p, kstream, &d, off, seq, &idx);
	if (!ret)
		p->tr.ring++;
	else if (made && !g->n)
		ring_unmake_locked(p);
	return ret;
}

int stage_seq_wait_unlocked(struct accel_staging *p, uint32_t kstream,
			    uint64_t seq)
{
	struct accel_ctx *ctx = p->ctx;
	struct accel_stream_sync ss;
	uint64_t deadline;
	bool stop;
	int ret;

	memset(&ss, 0, sizeof(ss));
	ss.handle = kstream;
	ss.seq = seq;
	ss.timeout_ns = accel_deadline(STAGING_WAIT_MS * 1000000ULL);
	ret = ctx->backend->wait_fast(ctx, ring_sync_poll, &ss,
				      ss.timeout_ns);
	for (;;) {
		if (ret != -ETIME && ret != -EINTR)
			return ret;
		pthread_mutex_lock(&p->lock);
		stop = p->stopping;
		pthread_mutex_unlock(&p->lock);
		if (stop)
			return -ECANCELED;
		if (ret == -ETIME) {
			deadline = accel_deadline(STAGING_WAIT_MS * 1000000ULL);
			ss.timeout_ns = deadline;
		}
		ret = accel_ioctl(ctx, ACCEL_IOC_STREAM_SYNC, &ss);
	}
}

int stage_seq_poll_unlocked(struct accel_staging *p, uint32_t kstream,
			    uint64_t seq)
{
	struct accel_ctx *ctx = p->ctx;
	struct accel_stream_sync ss;
	int ret;

	memset(&ss, 0, sizeof(ss));
	ss.handle = kstream;
	ss.seq = seq;
	ret = ctx->backend->wait_fast(ctx, ring_sync_poll, &ss, 0);
	return ret == -EINTR ? -ETIME : ret;
}

/* The slot's stream was destroyed during the wait: its tail event. */
static int ring_d2h_wait_point(struct accel_staging *p, unsigned int idx)
{
	struct accel_wait_entry ents[3];
	uint32_t first = 0, point;
	int ret;

	pthread_mutex_lock(&p->lock);
	point = p->ring.slot[idx].point;
	pthread_mutex_unlock(&p->lock);
	/* No event to be had: when the copy ran cannot be told. */
	if (!point)
		return -ENOENT;
	memset(ents, 0, sizeof(ents));
	ents[0].event = p->doorbell;
	ents[0].value = 1;
	ents[1].event = point;
	ret = accel_kwait_user(p->ctx, ents, 2, 0, ACCEL_TIMEOUT_INFINITE,
			       &first);
	if (ret == -ENOENT || ((!ret || ret == -EIO) && first == 0))
		return -ECANCELED;
	return ret;
}

bool stage_stream_idle_locked(struct accel_staging *p, uint32_t kstream)
{
	struct accel_stream_query q;

	return !accel_kstream_query(p->ctx, kstream, &q) && !q.queued &&
	       !q.error;
}

int stage_ring_d2h_locked(struct accel_staging *p, uint32_t kstream,
			  void *dst, const struct accel_stage_side *src,
			  size_t len, uint64_t *seq)
{
	struct stage_ring *g = &p->ring;
	struct accel_desc d;
	uint64_t waits, t0 = 0, t1 = 0;
	unsigned int idx;
	size_t off = 0;
	bool made;
	int ret;

	/* A host function does not wait for the device (-EDEADLK's rule). */
	if (len > g->max || g->failed || accel_in_host_fn())
		return 1;
	/* Behind other work (or failed): asynchronous, through the chunks. */
	if (!stage_stream_idle_locked(p, kstream))
		return 1;
	waits = p->tr.ring_waits;
	made = !g->r.base;
	ret = ring_take_locked(p, len, &off);
	if (ret)
		return ret;
	/* It waited for a slot, the pool lock dropped: look again. */
	if (p->tr.ring_waits != waits && !stage_stream_idle_locked(p, kstream))
		return 1;
	stage_desc_copy(&d, g->r.handle, off, src->handle, src->offset, len);
	ret = ring_push_locked(p, kstream, &d, off, seq, &idx);
	if (ret) {
		if (made && !g->n)
			ring_unmake_locked(p);
		return ret;
	}
	g->slot[idx].reading = true;
	p->tr.ring_d2h++;
	pthread_mutex_unlock(&p->lock);
	if (p->trace)
		t0 = stage_mono_ns();
	if (len >= 2 * FILL_SLICE_MIN)
		stage_fill_warm(p);
	ret = stage_seq_wait_unlocked(p, kstream, *seq);
	if (ret == -ENOENT)
		ret = ring_d2h_wait_point(p, idx);
	if (p->trace)
		t1 = stage_mono_ns();
	/*
	 * -EIO: the copy failed, the stream's synchronize says so, as for
	 * any queued copy; the destination is left alone. A plain copy: the
	 * call checked the destination writable when it began, and another
	 * thread unmapping it while the call still writes it is that
	 * program's race, as a free() during memcpy(3) is (libaccel(7)).
	 */
	if (!ret)
		stage_par_copy(p, dst, (char *)g->r.base + off, len, false);
	pthread_mutex_lock(&p->lock);
	if (p->trace) {
		p->tr.ring_d2h_wait_ns += t1 - t0;
		p->tr.ring_d2h_out_ns += stage_mono_ns() - t1;
	}
	g->slot[idx].reading = false;
	/* Destroyed before the copy landed: the destination was not written. */
	return ret && ret != -EIO ? -ENOENT : 0;
}

void stage_ring_stream_dead_locked(struct accel_staging *p, uint32_t kstream)
{
	struct stage_ring *g = &p->ring;
	struct accel_event_record rec;
	struct stage_slot *last;
	unsigned int i;
	bool any = false;

	for (i = 0; i < g->n && !any; i++)
		any = g->slot[(g->first + i) % g->cap].kstream == kstream &&
		      !g->slot[(g->first + i) % g->cap].point;
	if (!any)
		return;
	memset(&rec, 0, sizeof(rec));
	rec.stream = kstream;
	/* No event to be had: its slots stay until the context goes. */
	if (stage_point_get_locked(p, &rec.event))
		return;
	if (accel_ioctl(p->ctx, ACCEL_IOC_EVENT_RECORD, &rec)) {
		stage_point_put_locked(p, rec.event);
		return;
	}
	/*
	 * One event covers them all; the newest of them gives it back, the
	 * last of them to be reclaimed (oldest first).
	 */
	last = NULL;
	for (i = 0; i < g->n; i++) {
		struct stage_slot *s = &g->slot[(g->first + i) % g->cap];

		if (s->kstream == kstream && !s->point) {
			s->point = rec.event;
			s->kstream = 0;
			last = s;
		}
	}
	last->own_point = true;
}
