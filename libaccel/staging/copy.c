// SPDX-License-Identifier: MIT
/*
 * The staging pool (stage.h): how one copy goes through it. The path a
 * copy takes (both sides pageable: out.c; small: the ring, ring.c; the
 * rest through the chunks of pool.c), the room check, and the chunks'
 * paths: a large H2D filled in parallel, a D2H on an idle stream finished
 * in the call, and otherwise piece by piece, each piece handed a chunk
 * and submitted.
 */
#include "stage.h"

static void job_queue_locked(struct accel_staging *p, struct stage_chunk *c,
			     struct stage_job *job)
{
	if (c->tail)
		c->tail->next = job;
	else
		c->head = job;
	c->tail = job;
	pthread_cond_broadcast(&p->cond);
}

void stage_desc_copy(struct accel_desc *d, uint32_t dst, uint64_t doff,
		     uint32_t src, uint64_t soff, size_t len)
{
	memset(d, 0, sizeof(*d));
	d->op = ACCEL_OP_COPY;
	d->dst = dst;
	d->dst_offset = doff;
	d->src = src;
	d->src_offset = soff;
	d->length = len;
}

/*
 * Every chunk is busy: wait, the pool lock dropped, until the oldest one
 * holding only a copy on the wire has retired it. false when none did
 * within STAGING_WAIT_MS: its stream is gated or behind other work.
 */
static bool chunk_wait_unlocked(struct accel_staging *p, uint32_t kstream)
{
	struct accel_wait_entry ents[3];
	uint32_t first = 0, point = 0;
	unsigned int i;
	bool passed;
	int ret;

	/* Its last wait timed out, and that chunk is still not free: spill. */
	if (p->behind_point && p->behind_stream == kstream) {
		if (!stage_point_passed(p->ctx, p->behind_point))
			return false;
		p->behind_point = 0;
	}
	for (i = 0; i < p->nchunks && !point; i++) {
		struct stage_chunk *c = &p->chunks[(p->next + i) % p->nchunks];

		if (c->point && !c->head && !c->running)
			point = c->point;
	}
	if (!point)
		return false;
	pthread_mutex_unlock(&p->lock);
	memset(ents, 0, sizeof(ents));
	ents[0].event = p->doorbell;
	ents[0].value = 1;
	ents[1].event = point;
	ret = accel_kwait_user(p->ctx, ents, 2, 0,
			       STAGING_WAIT_MS * 1000000ULL, &first);
	pthread_mutex_lock(&p->lock);
	passed = !ret && first == 1;
	if (!passed) {
		p->behind_stream = kstream;
		p->behind_point = point;
	}
	return passed;
}

/*
 * One piece of at most *@lenp bytes (set to what it took, at most a
 * chunk): @src or @dst pageable (not both), already advanced to it.
 * *@behind: a chunk did not come free in time during this call, so the
 * call's remaining pieces spill rather than wait.
 */
static int piece_locked(struct accel_staging *p, uint32_t kstream,
			const struct accel_stage_side *dst,
			const struct accel_stage_side *src, size_t *lenp,
			uint64_t *seq, bool *behind, uint64_t *drains)
{
	struct stage_patch *patch = NULL;
	struct stage_job *job = NULL;
	unsigned int npatch = 0;
	struct accel_desc d[STAGE_DESCS];
	struct stage_chunk *c;
	uint64_t assigned, dep = 0;
	uint32_t point, n = 0;
	bool now, late;
	size_t len;
	int ret;

	for (;;) {
		ret = stage_chunk_pick_locked(p, kstream, &c, &now);
		if (ret)
			return ret;
		if (now || *behind || !src->pageable)
			break;
		p->tr.chunk_waits++;
		if (!chunk_wait_unlocked(p, kstream))
			*behind = true;
		if (p->stopping)
			return -ENOENT;
	}
	/* The pool's first chunk may have come out smaller than asked. */
	len = *lenp < c->r.size ? *lenp : c->r.size;
	*lenp = len;
	if (src->pageable) {
		ret = stage_outs_overlap_locked(p, kstream, src->ptr, len,
						&patch, &npatch, &dep);
		if (ret)
			return ret;
	}
	/* Part of the source is yet to be written: the worker reads it. */
	late = npatch != 0;
	ret = stage_point_get_locked(p, &point);
	if (ret)
		goto err_patch;
	assigned = c->assigned;
	if (!now || late || dst->pageable) {
		job = calloc(1, sizeof(*job));
		if (!job)
			goto err_nomem;
		job->len = len;
		job->kstream = kstream;
		job->src = src->ptr;
		job->dep = dep;
		job->patch = patch;
		job->npatch = npatch;
		patch = NULL;
	}
	if (!now || late) {
		job->prev_point = now ? 0 : c->point;
		job->ready = ++c->assigned;
		accel_desc_event(&d[n++], ACCEL_OP_HOST_WAIT, c->counter,
				 job->ready);
	}
	if (src->pageable) {
		if (now) {
			/* The chunk is ours alone: fill it in place. */
			stage_par_copy(p, (void *)c->r.base, src->ptr, len,
				       false);
			p->tr.filled++;
		} else {
			p->tr.spills++;
			job->spill = malloc(len);
			if (!job->spill)
				goto err_nomem;
			stage_par_copy(p, job->spill, src->ptr, len, false);
		}
		stage_desc_copy(&d[n++], dst->handle, dst->offset,
				c->r.handle, 0, len);
	} else {
		stage_desc_copy(&d[n++], c->r.handle, 0, src->handle,
				src->offset, len);
	}
	accel_desc_event(&d[n++], ACCEL_OP_EVENT_RECORD, point, 0);
	if (dst->pageable) {
		job->out = stage_out_add_locked(p, kstream, dst->ptr, len);
		if (!job->out)
			goto err_nomem;
		job->point = point;
		job->dst = dst->ptr;
		job->drained = ++c->assigned;
	}
	ret = accel_submit(p->ctx, kstream, d, n, seq);
	if (ret)
		goto err_job;
	if (dst->pageable) {
		/* The worker waits for the point: free once it drained. */
		c->point = 0;
		drains[c - p->chunks] = job->drained;
	} else {
		c->point = point;
	}
	c->kstream = kstream;
	if (job) {
		job_queue_locked(p, c, job);
		p->tr.handoffs++;
	}
	return 0;

err_nomem:
	ret = -ENOMEM;
err_job:
	c->assigned = assigned;
	if (job) {
		if (job->out)
			stage_out_done_locked(p, job->out);
		stage_job_free(job);
	}
	stage_point_put_locked(p, point);
err_patch:
	free(patch);
	return ret;
}

/* Whether an unfinished write of @kstream overlaps [@src, @src + @len). */
static bool outs_overlap_any_locked(struct accel_staging *p, uint32_t kstream,
				    const void *src, size_t len)
{
	uintptr_t a = (uintptr_t)src, b = a + len;
	struct stage_out *o;

	for (o = p->outs; o; o = o->next)
		if (o->kstream == kstream && o->end > a && o->start < b)
			return true;
	return false;
}

/*
 * A call pinned @n chunks for its pieces: pin as many again (while the
 * pool may grow), now that its pieces are on the wire, so that the next
 * call fills those while these are still being copied, instead of
 * pinning them then. Best effort: a pinning limit leaves the pool as it
 * is (and at that size from then on).
 */
static void pool_grow_locked(struct accel_staging *p, unsigned int n)
{
	while (n-- && p->nchunks < p->max_chunks && !p->full)
		if (stage_chunk_add_locked(p))
			p->full = true;
}

/* One piece of a parallel fill: its chunk, and the task filling it. */
struct par_piece {
	struct stage_chunk *c;
	struct fill_task t;
};

/*
 * H2D from a pageable source no unfinished write overlaps, in pieces of
 * a chunk, several filled at once: every free chunk gets a piece, the
 * fill threads (and this thread, for the piece it waits for) copy them,
 * and each is submitted, in order, as soon as it is full, while later
 * ones are still being filled and earlier ones are on the wire. With no
 * chunk free and none of its own in flight, it waits for a chunk's copy
 * to retire, as long as the stream moves. *@donep: the bytes submitted,
 * from the start; the rest (a chunk did not come free in time) is the
 * caller's, piece by piece.
 */
static int h2d_parallel_locked(struct accel_staging *p, uint32_t kstream,
			       const struct accel_stage_side *dst,
			       const char *src, size_t bytes, uint64_t *seq,
			       size_t *donep)
{
	struct par_piece q[STAGING_MAX_CHUNKS];
	unsigned int first = 0, n = 0, had = p->nchunks;
	size_t launched = 0, done = 0, piece;
	struct accel_desc d[2];
	int ret = 0;

	/*
	 * A piece per copying thread at least, so that a copy of a few
	 * chunks is filled by all of them too; no piece below PAR_PIECE_MIN
	 * (the hand-off and the submit would cost more than they save).
	 */
	piece = bytes / (p->nfill + 1);
	piece = (piece + 4095) & ~(size_t)4095;
	if (piece < PAR_PIECE_MIN)
		piece = PAR_PIECE_MIN;

	while (done < bytes) {
		while (!ret && launched < bytes && n < STAGING_MAX_CHUNKS) {
			struct par_piece *pc = &q[(first + n) % STAGING_MAX_CHUNKS];
			struct stage_chunk *c;

			ret = stage_chunk_now_locked(p, &c);
			if (ret || !c)
				break;
			c->filling = true;
			pc->c = c;
			memset(&pc->t, 0, sizeof(pc->t));
			pc->t.dst = (char *)c->r.base;
			pc->t.src = src + launched;
			pc->t.len = bytes - launched;
			if (pc->t.len > piece)
				pc->t.len = piece;
			if (pc->t.len > c->r.size)
				pc->t.len = c->r.size;
			stage_fill_queue(p, &pc->t);
			launched += pc->t.len;
			n++;
		}
		if (!n) {
			if (ret || p->stopping)
				break;
			/* Every chunk busy: wait for one, if the stream moves. */
			p->tr.chunk_waits++;
			if (!chunk_wait_unlocked(p, kstream))
				break;
			continue;
		}
		/* The oldest piece, filled: on the wire, in order. */
		struct par_piece *pc = &q[first];
		uint32_t point;

		stage_fill_wait(p, &pc->t);
		if (!ret)
			ret = stage_point_get_locked(p, &point);
		if (!ret) {
			stage_desc_copy(&d[0], dst->handle, dst->offset + done,
					pc->c->r.handle, 0, pc->t.len);
			accel_desc_event(&d[1], ACCEL_OP_EVENT_RECORD, point,
					 0);
			ret = accel_submit(p->ctx, kstream, d, 2, seq);
			if (ret) {
				stage_point_put_locked(p, point);
			} else {
				pc->c->point = point;
				pc->c->kstream = kstream;
				done += pc->t.len;
				p->tr.par_fills++;
			}
		}
		pc->c->filling = false;
		first = (first + 1) % STAGING_MAX_CHUNKS;
		n--;
	}
	*donep = done;
	if (!ret)
		pool_grow_locked(p, p->nchunks - had);
	return ret;
}

/* Whether a chunk other than @c is not held by a call (filling). */
static bool chunk_spare_locked(struct accel_staging *p,
			       const struct stage_chunk *c)
{
	unsigned int i;

	for (i = 0; i < p->nchunks; i++)
		if (&p->chunks[i] != c && !p->chunks[i].filling)
			return true;
	return false;
}

/* One piece of a D2H finished in the call: its chunk, its COPY, its copy-out. */
struct d2h_piece {
	struct stage_chunk *c;
	size_t off, len;
	uint64_t seq;
	struct fill_task t;	/* posted once the piece landed */
};

/*
 * Launch the next piece of a D2H finished in the call into a free chunk
 * (one left spare for the other streams' pieces: the pool lock is
 * dropped while this call waits, stage_chunk_pick_locked()): 0 and
 * @pc set, 1 when no chunk is to be had, or -errno from the submit.
 */
static int d2h_launch_locked(struct accel_staging *p, uint32_t kstream,
			     const struct accel_stage_side *src, size_t off,
			     size_t len, struct d2h_piece *pc)
{
	struct stage_chunk *c;
	struct accel_desc d;
	int ret;

	for (;;) {
		if (stage_chunk_now_locked(p, &c) || !c)
			return 1;
		if (chunk_spare_locked(p, c))
			break;
		if (p->nchunks >= p->max_chunks || p->full)
			return 1;
		if (stage_chunk_add_locked(p)) {
			p->full = true;
			return 1;
		}
	}
	if (len > c->r.size)
		len = c->r.size;
	stage_desc_copy(&d, c->r.handle, 0, src->handle, src->offset + off,
			len);
	ret = accel_submit(p->ctx, kstream, &d, 1, &pc->seq);
	if (ret)
		return ret;
	c->filling = true;
	c->kstream = kstream;
	pc->c = c;
	pc->off = off;
	pc->len = len;
	return 0;
}

/*
 * D2H into pageable memory on a stream with nothing queued, finished in
 * the call (as CUDA's pageable D2H is), as a pipeline: pieces go on the
 * wire into every free chunk, one after the other, each polled for once
 * as it is queued (a backend that learns of completions lazily, cuda
 * with one completion marker after a stream's newest work when someone
 * looks, then sees each piece land on its own, rather than the first only
 * once the last of them has); as each piece lands, in order, its copy-out
 * is posted to the fill threads in slices and the calling thread goes on
 * at once to the next piece, copying slices itself while it polls for
 * one, and sleeping in a wait (the fill threads kept awake) only with
 * no slice left to copy; a chunk whose copy-out is done takes the next
 * piece. So the fill threads copy out back to back while the wire stays
 * busy, with no barrier per piece. No worker, no event, no HOST_WAIT: the
 * stream is never held by a thread's wake-up, and the destination holds
 * the bytes when the call returns, before anything queued after it runs.
 * The copy-out is a plain one (the call checked the destination writable
 * when it began: libaccel(7)). 1: not taken (the stream has work queued,
 * or no chunk is free), the asynchronous path is to serve it. Drops and
 * retakes the pool lock.
 */
static int d2h_direct_locked(struct accel_staging *p, uint32_t kstream,
			     void *dst, const struct accel_stage_side *src,
			     size_t bytes, uint64_t *seq)
{
	struct d2h_piece q[STAGING_MAX_CHUNKS];
	/* q[first], the oldest, up to n of them; the first @landed posted. */
	unsigned int first = 0, n = 0, landed = 0;
	size_t launched = 0, piece;
	bool failed = false, stopped = false;
	uint64_t t0 = 0, t_call = 0, t_wait = 0, t_out = 0;
	int ret = 0, err;

	/* A host function does not wait for the device (-EDEADLK's rule). */
	if (accel_in_host_fn())
		return 1;
	if (!stage_stream_idle_locked(p, kstream))
		return 1;
	if (p->trace)
		t_call = stage_mono_ns();
	/* Pieces small enough that the first lands soon, at most a chunk. */
	piece = bytes / 8;
	if (piece < PAR_PIECE_MIN)
		piece = PAR_PIECE_MIN;
	piece = (piece + 4095) & ~(size_t)4095;
	for (;;) {
		struct d2h_piece *pc;

		/* The oldest piece is in the destination: its chunk is free. */
		if (landed && stage_fill_done(p, &q[first].t)) {
			q[first].c->filling = false;
			first = (first + 1) % STAGING_MAX_CHUNKS;
			n--;
			landed--;
			continue;
		}
		/* Keep the wire busy: the next piece into a free chunk. */
		if (!ret && !failed && !stopped && launched < bytes &&
		    n < STAGING_MAX_CHUNKS) {
			size_t len = bytes - launched < piece ? bytes - launched :
								 piece;

			pc = &q[(first + n) % STAGING_MAX_CHUNKS];
			err = d2h_launch_locked(p, kstream, src, launched, len,
						pc);
			if (err <= 0)
				ret = err;
			if (!err) {
				*seq = pc->seq;
				launched += pc->len;
				n++;
				pthread_mutex_unlock(&p->lock);
				p->ctx->backend->poll(p->ctx);
				pthread_mutex_lock(&p->lock);
				continue;
			}
		}
		if (landed < n && !stopped) {
			/* The next piece on the wire: landed yet? */
			pc = &q[(first + landed) % STAGING_MAX_CHUNKS];
			pthread_mutex_unlock(&p->lock);
			err = failed ? -EIO :
			      stage_seq_poll_unlocked(p, kstream, pc->seq);
			if (err == -ETIME && !stage_fill_help(p)) {
				/* Nothing to copy meanwhile: wait for it. */
				if (p->trace)
					t0 = stage_mono_ns();
				if (pc->len >= 2 * FILL_SLICE_MIN)
					stage_fill_warm(p);
				err = stage_seq_wait_unlocked(p, kstream,
							      pc->seq);
				if (p->trace)
					t_wait += stage_mono_ns() - t0;
			}
			pthread_mutex_lock(&p->lock);
			if (err == -ETIME)
				continue;
			memset(&pc->t, 0, sizeof(pc->t));
			if (!err) {
				pc->t.dst = (char *)dst + pc->off;
				pc->t.src = (const char *)pc->c->r.base;
				pc->t.len = pc->len;
				p->tr.d2h_pieces++;
			} else if (err == -EIO) {
				/* It and the later pieces never land (the stream failed). */
				failed = true;
			} else {
				/*
				 * -ENOENT, -ECANCELED: destroyed under the
				 * call, or the pool stops. When the pieces
				 * still on the wire land cannot be told: their
				 * chunks stay out of use.
				 */
				stopped = true;
				n = landed;
				continue;
			}
			stage_fill_post(p, &pc->t);
			landed++;
			continue;
		}
		if (!landed)
			break;
		/* Every piece launched has landed: copy out the oldest. */
		pthread_mutex_unlock(&p->lock);
		if (p->trace)
			t0 = stage_mono_ns();
		stage_fill_wait(p, &q[first].t);
		if (p->trace)
			t_out += stage_mono_ns() - t0;
		pthread_mutex_lock(&p->lock);
	}
	if (!launched)
		return ret ? ret : 1;
	/*
	 * Destroyed under the call: pieces that had not landed are not in
	 * the destination, so the call did not do what 0 would say.
	 */
	if (stopped)
		return -ENOENT;
	if (p->trace) {
		p->tr.d2h_ns += stage_mono_ns() - t_call;
		p->tr.d2h_wait_ns += t_wait;
		p->tr.d2h_out_ns += t_out;
	}
	/* The stream's failure is the synchronize's to report, as for any copy. */
	p->tr.d2h_direct++;
	return ret;
}

/*
 * A copy of several pieces is queued whole or not at all: with less room
 * on the stream than its pieces may take (STAGE_DESCS each), -EAGAIN
 * before the first; -EINVAL when they would not fit even an empty queue. Another thread submitting to the same stream at the
 * same time can still take the room (libaccel(7) LIMITS).
 */
static int room_check_locked(struct accel_staging *p, uint32_t kstream,
			     size_t bytes)
{
	struct accel_ctx *ctx = p->ctx;
	/* A parallel fill cuts up to one piece more per copying thread. */
	uint64_t pieces = (bytes + p->chunk_size - 1) / p->chunk_size +
			  p->nfill + 1;
	struct accel_stream_query q;

	if (accel_kstream_query(ctx, kstream, &q))
		return 0;	/* the submit says what is wrong */
	if (q.queued + pieces * STAGE_DESCS <= ctx->info.queue_depth)
		return 0;
	/* No synchronize can make room for it: not a reason to try again. */
	if (pieces * STAGE_DESCS > ctx->info.queue_depth) {
		accel_set_error("a staged copy of %zu bytes takes up to %llu descriptors (%llu pieces of at most %zu bytes), more than a stream's queue holds (%u): copy less at a time, or raise ACCEL_STAGING_CHUNK_KB",
				bytes, (unsigned long long)(pieces * STAGE_DESCS),
				(unsigned long long)pieces, p->chunk_size,
				ctx->info.queue_depth);
		return -EINVAL;
	}
	accel_set_error("a staged copy of %zu bytes takes up to %llu descriptors (%llu pieces of at most %zu bytes); the stream has %llu queued of at most %u: synchronize it, or copy less at a time",
			bytes, (unsigned long long)(pieces * STAGE_DESCS),
			(unsigned long long)pieces, p->chunk_size,
			(unsigned long long)q.queued, ctx->info.queue_depth);
	return -EAGAIN;
}

/*
 * D2H into pageable memory: the stream goes on only once every piece of
 * the call is in the destination. Each chunk's worker copies its pieces
 * out as each lands, while the later pieces are still on the wire; one
 * HOST_WAIT per chunk used, on the value its worker raises after the
 * call's last piece in it, ends the call. (A HOST_WAIT after each piece
 * would have held the stream, and the next piece's copy, until then.)
 * room_check_locked() left room for them.
 */
static int drains_submit_locked(struct accel_staging *p, uint32_t kstream,
				const uint64_t *drains, uint64_t *seq)
{
	struct accel_desc d[STAGING_MAX_CHUNKS];
	uint32_t i, n = 0;

	for (i = 0; i < p->nchunks; i++)
		if (drains[i])
			accel_desc_event(&d[n++], ACCEL_OP_HOST_WAIT,
					 p->chunks[i].counter, drains[i]);
	return n ? accel_submit(p->ctx, kstream, d, n, seq) : 0;
}

int accel_staging_copy(struct accel_ctx *ctx, uint32_t kstream,
		       const struct accel_stage_side *dst,
		       const struct accel_stage_side *src, size_t bytes,
		       uint64_t *seq)
{
	struct accel_stage_side d = *dst, s = *src;
	uint64_t drains[STAGING_MAX_CHUNKS] = { 0 };
	struct accel_staging *p;
	size_t done = 0, len;
	bool behind = false, parallel = false, finish = false;
	int ret = 0;

	ret = stage_pool_get(ctx, &p);
	if (ret)
		return ret;
	if (dst->pageable && src->pageable)
		return stage_h2h_copy(p, kstream, dst->ptr, src->ptr, bytes);
	pthread_mutex_lock(&p->lock);
	/*
	 * A D2H into pageable memory on a stream with nothing queued is
	 * finished in the call (libaccel(7)), whichever path serves it: the
	 * ring and d2h_direct_locked() do it themselves; where neither can
	 * (one chunk, all chunks taken), the pieces below are waited for.
	 */
	/*
	 * A failed stream fails the call before any staging (no chunk
	 * pinned for it, nothing changed): -EIO, as its submit would. Asked
	 * of a D2H into pageable memory (which needs the answer anyway) and
	 * of a copy past the ring (one transport call is nothing beside
	 * it); the ring's own copies undo their pin (ring.c).
	 */
	if ((dst->pageable && !src->pageable) || bytes > p->ring.max) {
		struct accel_stream_query q;

		if (!accel_kstream_query(ctx, kstream, &q)) {
			if (q.error) {
				pthread_mutex_unlock(&p->lock);
				return accel_failed_errno(q.error);
			}
			finish = dst->pageable && !src->pageable &&
				 !accel_in_host_fn() && !q.queued;
		}
	}
	if (p->stopping) {
		ret = -ENOENT;
	} else if (bytes <= p->ring.max) {
		ret = dst->pageable ?
		      stage_ring_d2h_locked(p, kstream, dst->ptr, src, bytes,
					    seq) :
		      stage_ring_copy_locked(p, kstream, dst, src->ptr, bytes,
					     seq);
		if (ret <= 0) {
			pthread_mutex_unlock(&p->lock);
			return ret;
		}
		ret = 0;
	}
	if (!ret && dst->pageable && !src->pageable) {
		ret = d2h_direct_locked(p, kstream, dst->ptr, src, bytes, seq);
		if (ret <= 0) {
			pthread_mutex_unlock(&p->lock);
			return ret;
		}
		ret = 0;
	}
	if (!ret)
		ret = room_check_locked(p, kstream, bytes);
	if (!ret && src->pageable && !dst->pageable &&
	    !outs_overlap_any_locked(p, kstream, src->ptr, bytes))
		parallel = true;
	while (!ret && done < bytes) {
		if (parallel) {
			s.ptr = (char *)src->ptr + done;
			d.offset = dst->offset + done;
			ret = h2d_parallel_locked(p, kstream, &d, s.ptr,
						  bytes - done, seq, &len);
			done += len;
			if (ret || done == bytes)
				break;
		}
		len = bytes - done < p->chunk_size ? bytes - done :
						     p->chunk_size;
		if (d.pageable)
			d.ptr = (char *)dst->ptr + done;
		else
			d.offset = dst->offset + done;
		if (s.pageable)
			s.ptr = (char *)src->ptr + done;
		else
			s.offset = src->offset + done;
		ret = piece_locked(p, kstream, &d, &s, &len, seq, &behind,
				   drains);
		if (!ret)
			done += len;
	}
	if (dst->pageable && done) {
		int err = drains_submit_locked(p, kstream, drains, seq);

		if (!ret)
			ret = err;
	}
	pthread_mutex_unlock(&p->lock);
	/*
	 * The stream's failure is the synchronize's to report, as for any
	 * copy; destroyed under the wait, the destination may lack pieces.
	 */
	if (!ret && finish && done &&
	    stage_seq_wait_unlocked(p, kstream, *seq) == -ENOENT)
		ret = -ENOENT;
	return ret;
}
