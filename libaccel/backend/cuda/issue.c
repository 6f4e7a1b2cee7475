// SPDX-License-Identifier: MIT
/*
 * The cuda backend: the issue path. Fetch what the transport hands out
 * (from the thread that submitted, or the fetch thread), and turn it into
 * CUDA stream work: copies gathered, merged and batched, records and
 * waits as CUDA events, one range per stream and batch.
 */
#include "cuda.h"
#include "asc_core.h"

static struct cx_stream *cx_stream_get(struct accel_cuda *cx, uint32_t k,
				       bool create)
{
	struct cx_stream **pp = &cx->is.buckets[k % CX_BUCKETS], *s;

	for (s = *pp; s; s = s->hnext)
		if (s->kstream == k)
			return s;
	if (!create)
		return NULL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->kstream = k;
	s->hnext = *pp;
	*pp = s;
	s->lnext = cx->is.streams;
	cx->is.streams = s;
	return s;
}

/*
 * The CUDA priority of a transport priority: the transport's range
 * [greatest, least] maps linearly onto CUDA's (cudaDeviceGetStreamPriorityRange),
 * ends onto ends, rounded towards the least urgent; the same range (0 to -5
 * on current GPUs) maps one to one.
 */
int accel_cuda_priority(int prio, int least, int greatest, int cuda_least,
			int cuda_greatest)
{
	long span = (long)least - greatest;
	long cspan = (long)cuda_least - cuda_greatest;

	if (prio >= least || span <= 0)
		return cuda_least;
	if (prio <= greatest)
		return cuda_greatest;
	return cuda_least - (int)(((long)least - prio) * cspan / span);
}

/* Create the CUDA stream at the first device work, at its priority. */
static int cx_stream_cuda(struct accel_cuda *cx, struct cx_stream *s)
{
	struct accel_stream_query q;
	int prio = cx->cfg.prio_least;
	cudaError_t e;

	if (s->cs)
		return 0;
	memset(&q, 0, sizeof(q));
	q.handle = s->kstream;
	if (!accel_ioctl(cx->ctx, ACCEL_IOC_STREAM_QUERY, &q))
		prio = accel_cuda_priority(q.priority,
					   cx->ctx->info.least_priority,
					   cx->ctx->info.greatest_priority,
					   cx->cfg.prio_least,
					   cx->cfg.prio_greatest);
	e = cx_rt.cudaStreamCreateWithPriority(&s->cs, cudaStreamNonBlocking,
					    prio);
	if (e != cudaSuccess) {
		s->cs = NULL;
		return cx_error(cx, e, "cudaStreamCreateWithPriority");
	}
	/* No word: this stream's completions are seen through events. */
	if (cx->cfg.word)
		cx_word_get(cx, s);
	return 0;
}

static cudaEvent_t cx_record_find(struct cx_stream *s, uint64_t seq)
{
	unsigned int lo = 0, hi = s->nrec;

	while (lo < hi) {
		unsigned int mid = lo + (hi - lo) / 2;

		if (s->rec[mid].seq < seq)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < s->nrec && s->rec[lo].seq == seq ? s->rec[lo].ev : NULL;
}

void cx_stream_free(struct accel_cuda *cx, struct cx_stream *s)
{
	unsigned int i;

	for (i = 0; i < s->nrec; i++)
		cx_event_put(cx, s->rec[i].ev);
	if (s->cs)
		cx_rt.cudaStreamDestroy(s->cs);
	cx_word_put(cx, s);
	free(s->rec);
	free(s->copies);
	free(s);
}

static void cx_stream_unhash(struct accel_cuda *cx, struct cx_stream *s)
{
	struct cx_stream **pp;

	for (pp = &cx->is.buckets[s->kstream % CX_BUCKETS]; *pp; pp = &(*pp)->hnext)
		if (*pp == s) {
			*pp = s->hnext;
			break;
		}
}

/*
 * Before each fetch, under exec_lock: drop record events whose point was
 * reported (no wait fetched from now on can name them: the transport
 * hands out (stream, seq) only for points that had not retired), and free
 * the streams that were destroyed and have nothing left in flight.
 */
static void cx_gc(struct accel_cuda *cx)
{
	struct cx_stream **pp, *s;
	uint32_t *dead = NULL;
	unsigned int ndead, i, j;

	for (s = cx->is.streams; s; s = s->lnext) {
		uint64_t rep;

		if (!s->nrec)
			continue;
		rep = atomic_load(&s->reported);
		for (j = 0; j < s->nrec && s->rec[j].seq <= rep; j++)
			cx_event_put(cx, s->rec[j].ev);
		if (j) {
			memmove(s->rec, s->rec + j,
				(s->nrec - j) * sizeof(*s->rec));
			s->nrec -= j;
		}
	}

	ndead = 0;
	if (atomic_load_explicit(&cx->is.ndead_hint, memory_order_acquire)) {
		pthread_mutex_lock(&cx->lock);
		ndead = cx->is.ndead;
		if (ndead) {
			dead = cx->is.dead_streams;
			cx->is.dead_streams = NULL;
			cx->is.ndead = cx->is.capdead = 0;
			atomic_store(&cx->is.ndead_hint, 0);
		}
		pthread_mutex_unlock(&cx->lock);
	}
	for (i = 0; i < ndead; i++) {
		s = cx_stream_get(cx, dead[i], false);
		if (s) {
			s->dead = true;
			cx->is.any_dead = true;
		}
	}
	free(dead);
	if (!cx->is.any_dead)
		return;

	cx->is.any_dead = false;
	pp = &cx->is.streams;
	while ((s = *pp)) {
		bool idle;

		if (!s->dead) {
			pp = &s->lnext;
			continue;
		}
		pthread_mutex_lock(&cx->lock);
		idle = !s->npending;
		pthread_mutex_unlock(&cx->lock);
		if (idle && atomic_load(&s->reported) >= s->last_fetched) {
			*pp = s->lnext;
			cx_stream_unhash(cx, s);
			cx_stream_free(cx, s);
		} else {
			cx->is.any_dead = true;
			pp = &s->lnext;
		}
	}
}

void cx_range_fail(struct cx_range *r, uint64_t seq, int status)
{
	if (!r->fail_seq) {
		r->fail_seq = seq;
		r->fail_status = status;
	}
}

static bool overlaps(const void *a, size_t alen, const void *b, size_t blen)
{
	uintptr_t x = (uintptr_t)a, y = (uintptr_t)b;

	return x < y + blen && y < x + alen;
}

/* May copy @c join @batch[0..n) without depending on one of them? */
static bool independent(const struct cx_copy *batch, unsigned int n,
			const struct cx_copy *c)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		if (overlaps(c->dst, c->len, batch[i].dst, batch[i].len) ||
		    overlaps(c->dst, c->len, batch[i].src, batch[i].len) ||
		    overlaps(c->src, c->len, batch[i].dst, batch[i].len))
			return false;
	}
	return true;
}

/*
 * Bounds of a batch's destinations and of all its bytes: a copy that
 * writes outside all of them and reads outside the destinations is
 * independent of the batch without comparing it with every member
 * (the common case: consecutive buffers).
 */
struct cx_box {
	uintptr_t dlo, dhi;	/* destinations */
	uintptr_t alo, ahi;	/* destinations and sources */
};

static void box_init(struct cx_box *b, const struct cx_copy *c)
{
	uintptr_t d = (uintptr_t)c->dst, s = (uintptr_t)c->src;

	b->dlo = d;
	b->dhi = d + c->len;
	b->alo = d < s ? d : s;
	b->ahi = d + c->len > s + c->len ? d + c->len : s + c->len;
}

static void box_add(struct cx_box *b, const struct cx_copy *c)
{
	struct cx_box n;

	box_init(&n, c);
	if (n.dlo < b->dlo)
		b->dlo = n.dlo;
	if (n.dhi > b->dhi)
		b->dhi = n.dhi;
	if (n.alo < b->alo)
		b->alo = n.alo;
	if (n.ahi > b->ahi)
		b->ahi = n.ahi;
}

static bool box_clear(const struct cx_box *b, const struct cx_copy *c)
{
	uintptr_t d = (uintptr_t)c->dst, s = (uintptr_t)c->src;

	return (d + c->len <= b->alo || d >= b->ahi) &&
	       (s + c->len <= b->dlo || s >= b->dhi);
}

static cudaError_t cx_memcpy_batch(struct accel_cuda *cx, cudaStream_t cs,
				   const struct cx_copy *c, unsigned int n)
{
	void *dsts[CX_BATCH_MAX];
	void *srcs[CX_BATCH_MAX];
	size_t sizes[CX_BATCH_MAX], idx = 0, fail = 0;
	struct cudaMemcpyAttributes attr;
	unsigned int i;

	(void)cx;
	for (i = 0; i < n; i++) {
		dsts[i] = c[i].dst;
		srcs[i] = (void *)c[i].src;
		sizes[i] = c[i].len;
	}
	memset(&attr, 0, sizeof(attr));
	/* Sources may be written by earlier work of the stream. */
	attr.srcAccessOrder = cudaMemcpySrcAccessOrderStream;
	if (cx_rt.batch13)
		return cx_rt.batch13(dsts, (const void *const *)srcs, sizes, n,
				  &attr, &idx, 1, cs);
	return cx_rt.batch12(dsts, srcs, sizes, n, &attr, &idx, 1, &fail, cs);
}

/*
 * Coalesce the copies of an independent run @c[0..n) that continue the
 * previous one (destination and source, within the same regions) into
 * @m; returns how many remain.
 */
static unsigned int cx_merge(const struct accel_cuda *cx,
			     const struct cx_copy *c, unsigned int n,
			     struct cx_copy *m)
{
	unsigned int i, nm = 0;

	for (i = 0; i < n; i++) {
		struct cx_copy *p = nm ? &m[nm - 1] : NULL;

		if (cx->cfg.merge_ok && p && p->dreg == c[i].dreg &&
		    p->sreg == c[i].sreg &&
		    (char *)p->dst + p->len == (char *)c[i].dst &&
		    (const char *)p->src + p->len == (const char *)c[i].src) {
			p->len += c[i].len;
			continue;
		}
		m[nm++] = c[i];
	}
	return nm;
}

/* Enqueue one copy at a time; on an error, fail that descriptor. */
static void cx_copies_single(struct accel_cuda *cx, struct cx_stream *s,
			     const struct cx_copy *c, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		cudaError_t e = cx_rt.cudaMemcpyAsync(c[i].dst, c[i].src, c[i].len,
						   cudaMemcpyDefault, s->cs);

		if (e != cudaSuccess) {
			cx_range_fail(s->open, c[i].seq,
				   cx_error(cx, e, "cudaMemcpyAsync"));
			atomic_store(&s->failed, true);
			return;
		}
		s->open->device_work = true;
	}
}

/* Issue the gathered copies of @s, in order. */
static void cx_flush_copies(struct accel_cuda *cx, struct cx_stream *s)
{
	struct cx_copy *c = s->copies;
	unsigned int n = s->ncopies, i = 0;

	s->ncopies = 0;
	if (!n || atomic_load(&s->failed))
		return;
	if (cx_stream_cuda(cx, s)) {
		cx_range_fail(s->open, c[0].seq, -EIO);
		atomic_store(&s->failed, true);
		return;
	}
	while (i < n && !atomic_load(&s->failed)) {
		unsigned int j = i + 1;

		/*
		 * Small independent copies in a row go as one batch call, and
		 * those that continue the previous one in both source and
		 * destination (same regions) as one copy: with no overlap
		 * among them, order within the run does not matter.
		 */
		if ((cx->cfg.batch_ok || cx->cfg.merge_ok) &&
		    c[i].len <= cx->cfg.batch_max_bytes) {
			struct cx_box b;

			box_init(&b, &c[i]);
			while (j < n && j - i < CX_BATCH_MAX &&
			       c[j].len <= cx->cfg.batch_max_bytes &&
			       (box_clear(&b, &c[j]) ||
				independent(&c[i], j - i, &c[j]))) {
				box_add(&b, &c[j]);
				j++;
			}
		}
		if (j - i >= 2) {
			struct cx_copy m[CX_BATCH_MAX];
			unsigned int nm = cx_merge(cx, &c[i], j - i, m);
			cudaError_t e;

			if (nm == 1 || !cx->cfg.batch_ok) {
				if (nm < j - i) {
					unsigned int k;

					for (k = 0, e = cudaSuccess;
					     k < nm && e == cudaSuccess; k++)
						e = cx_rt.cudaMemcpyAsync(
							m[k].dst, m[k].src,
							m[k].len,
							cudaMemcpyDefault,
							s->cs);
					if (k > 1 || e == cudaSuccess)
						s->open->device_work = true;
					if (e == cudaSuccess) {
						i = j;
						continue;
					}
					/*
					 * From the group that failed on, one
					 * by one: the error finds its owner.
					 */
					cx_rt.cudaGetLastError();
					while (c[i].seq != m[k - 1].seq)
						i++;
				}
			} else {
				e = cx_memcpy_batch(cx, s->cs, m, nm);
				if (e == cudaSuccess) {
					s->open->device_work = true;
					i = j;
					continue;
				}
				/*
				 * Not for this device or driver: do without
				 * it. Any other error: this group one by one,
				 * so that the error finds its descriptor (the
				 * batch enqueued nothing; with no overlap in
				 * the group, a copy made twice is the same).
				 */
				cx_rt.cudaGetLastError();
				if (e == cudaErrorNotSupported ||
				    e == cudaErrorCallRequiresNewerDriver)
					cx->cfg.batch_ok = false;
			}
		}
		cx_copies_single(cx, s, &c[i], j - i);
		i = j;
	}
}

static int cx_resolve(struct accel_cuda *cx, uint32_t kind, uint64_t addr,
		      uint32_t handle, uint64_t off, uint64_t len, void **p)
{
	switch (kind) {
	case ACCEL_REGION_HOST:
	case ACCEL_REGION_EXTERNAL:
		*p = (void *)(uintptr_t)addr;
		return 0;
	case ACCEL_REGION_HOST_ALLOC:
		*p = cx_map_addr(cx, handle, off, len);
		return *p ? 0 : -ENXIO;
	default:
		/* Soft-engine device memory: not reachable from CUDA. */
		return -ENXIO;
	}
}

static bool on_device(uint32_t kind)
{
	return kind == ACCEL_REGION_EXTERNAL || kind == ACCEL_REGION_DEVICE;
}

/* What a copy adds to its range's bytes, and in which direction. */
static void cx_range_count(struct cx_range *r, const struct accel_exec_item *it)
{
	static const unsigned int dir[2][2] = {
		{ CX_H2H, CX_H2D },	/* from host: to host, to device */
		{ CX_D2H, CX_D2D },	/* from device */
	};
	unsigned int d = dir[on_device(it->src_kind)][on_device(it->dst_kind)];

	if (!r->bytes)
		r->dir = d;
	else if (r->dir != d)
		r->dir = CX_MIXED;
	r->bytes += it->desc.length;
}

/* MEMSET: cudaMemsetAsync, or the driver's 16 and 32-bit fills. 0 or -errno. */
static int cx_memset(struct accel_cuda *cx, struct cx_stream *s,
		     const struct accel_exec_item *it)
{
	const struct accel_desc *d = &it->desc;
	uint32_t width = asc_memset_width(d);
	CUresult cr;
	void *p;
	int ret;

	ret = cx_resolve(cx, it->dst_kind, it->dst_addr, d->dst, d->dst_offset,
			 d->length, &p);
	if (ret)
		return ret;
	if (width == 1)
		return cx_error(cx, cx_rt.cudaMemsetAsync(p, (int)d->value,
							  d->length, s->cs),
				"cudaMemsetAsync");
	cx_rt_driver();
	if ((width == 2 && !cx_rt.memset_d16) ||
	    (width == 4 && !cx_rt.memset_d32)) {
		accel_set_error("libcudart gives no cuMemsetD%uAsync (cudaGetDriverEntryPointByVersion, CUDA 12.5 or later)",
				width * 8);
		return -EOPNOTSUPP;
	}
	if (width == 2)
		cr = cx_rt.memset_d16((CUdeviceptr)(uintptr_t)p,
				      (unsigned short)d->value, d->length / 2,
				      s->cs);
	else
		cr = cx_rt.memset_d32((CUdeviceptr)(uintptr_t)p,
				      (unsigned int)d->value, d->length / 4,
				      s->cs);
	/*
	 * The driver's codes are the runtime's for what a fill can return
	 * (CUDA_ERROR_INVALID_VALUE is cudaErrorInvalidValue, and so on).
	 */
	return cx_error(cx, (cudaError_t)cr,
			width == 2 ? "cuMemsetD16Async" : "cuMemsetD32Async");
}

/* COPY_2D: one cudaMemcpy2DAsync, the direction from the pointers. 0 or -errno. */
static int cx_copy_2d(struct accel_cuda *cx, struct cx_stream *s,
		      const struct accel_exec_item *it)
{
	const struct accel_desc *d = &it->desc;
	/* Validated by the transport: the spans neither overflow nor leave. */
	uint64_t dspan = (d->height - 1) * d->dst_pitch + d->width;
	uint64_t sspan = (d->height - 1) * d->src_pitch + d->width;
	void *dst, *src;
	int ret;

	ret = cx_resolve(cx, it->dst_kind, it->dst_addr, d->dst, d->dst_offset,
			 dspan, &dst);
	if (!ret)
		ret = cx_resolve(cx, it->src_kind, it->src_addr, d->src,
				 d->src_offset, sspan, &src);
	if (ret)
		return ret;
	return cx_error(cx, cx_rt.cudaMemcpy2DAsync(dst, d->dst_pitch, src,
						    d->src_pitch, d->width,
						    d->height,
						    cudaMemcpyDefault, s->cs),
			"cudaMemcpy2DAsync");
}

static void cx_item(struct accel_cuda *cx, const struct accel_exec_item *it,
		    uint64_t t_submit, uint64_t t_fetch)
{
	struct cx_stream *s = cx_stream_get(cx, it->stream, true);
	struct cx_range *r;
	cudaError_t e;
	int ret;

	if (!s) {
		/* Out of memory: the item cannot even be tracked. */
		cx_set_lost(cx, cudaErrorMemoryAllocation, "libaccel executor");
		return;
	}
	s->last_fetched = it->seq;
	if (!s->open) {
		r = cx->is.rcache;
		if (r) {
			cx->is.rcache = r->next;
			memset(r, 0, sizeof(*r));
		} else {
			r = calloc(1, sizeof(*r));
		}
		if (!r) {
			cx_set_lost(cx, cudaErrorMemoryAllocation,
				    "libaccel executor");
			return;
		}
		r->s = s;
		r->first = it->seq;
		r->t_submit = t_submit ? t_submit : t_fetch;
		r->t_fetch = t_fetch;
		s->open = r;
	}
	r = s->open;
	r->last = it->seq;

	if (atomic_load(&cx->lost)) {
		cx_range_fail(r, it->seq, -EIO);
		return;
	}
	if (atomic_load(&s->failed))
		return;
	if (it->status) {
		cx_flush_copies(cx, s);
		cx_range_fail(r, it->seq, it->status);
		atomic_store(&s->failed, true);
		return;
	}

	switch (it->desc.op) {
	case ACCEL_OP_COPY: {
		struct cx_copy *c;
		void *dst, *src;

		if (!it->desc.length)
			return;
		ret = cx_resolve(cx, it->dst_kind, it->dst_addr, it->desc.dst,
				 it->desc.dst_offset, it->desc.length, &dst);
		if (!ret)
			ret = cx_resolve(cx, it->src_kind, it->src_addr,
					 it->desc.src, it->desc.src_offset,
					 it->desc.length, &src);
		if (ret) {
			cx_flush_copies(cx, s);
			cx_range_fail(r, it->seq, ret);
			atomic_store(&s->failed, true);
			return;
		}
		cx_range_count(r, it);
		c = cx_grow(s->copies, &s->capcopies, s->ncopies + 1, sizeof(*c));
		if (!c) {
			cx_flush_copies(cx, s);
			cx_range_fail(r, it->seq, -ENOMEM);
			atomic_store(&s->failed, true);
			return;
		}
		s->copies = c;
		c[s->ncopies].dst = dst;
		c[s->ncopies].src = src;
		c[s->ncopies].len = it->desc.length;
		c[s->ncopies].seq = it->seq;
		c[s->ncopies].dreg = it->desc.dst;
		c[s->ncopies].sreg = it->desc.src;
		s->ncopies++;
		return;
	}
	case ACCEL_OP_MEMSET:
	case ACCEL_OP_COPY_2D:
		if (!asc_desc_bytes(&it->desc))
			return;
		/* After the copies gathered before it, in stream order. */
		cx_flush_copies(cx, s);
		if (atomic_load(&s->failed))
			return;
		ret = cx_stream_cuda(cx, s);
		if (!ret)
			ret = it->desc.op == ACCEL_OP_MEMSET ?
			      cx_memset(cx, s, it) : cx_copy_2d(cx, s, it);
		if (ret) {
			cx_range_fail(r, it->seq, ret);
			atomic_store(&s->failed, true);
			return;
		}
		r->device_work = true;
		return;
	case ACCEL_OP_EVENT_RECORD: {
		struct cx_record *rec;
		cudaEvent_t ev;

		cx_flush_copies(cx, s);
		if (atomic_load(&s->failed))
			return;
		ret = cx_stream_cuda(cx, s);
		if (!ret)
			ret = cx_event_get(cx, &ev);
		if (ret) {
			cx_range_fail(r, it->seq, ret);
			atomic_store(&s->failed, true);
			return;
		}
		rec = cx_grow(s->rec, &s->caprec, s->nrec + 1, sizeof(*rec));
		if (!rec) {
			cx_event_put(cx, ev);
			cx_range_fail(r, it->seq, -ENOMEM);
			atomic_store(&s->failed, true);
			return;
		}
		s->rec = rec;
		e = cx_rt.cudaEventRecord(ev, s->cs);
		if (e != cudaSuccess) {
			cx_event_put(cx, ev);
			cx_range_fail(r, it->seq, cx_error(cx, e, "cudaEventRecord"));
			atomic_store(&s->failed, true);
			return;
		}
		rec[s->nrec].seq = it->seq;
		rec[s->nrec].ev = ev;
		s->nrec++;
		r->device_work = true;
		return;
	}
	case ACCEL_OP_STREAM_WAIT: {
		struct cx_stream *ws;
		cudaEvent_t ev = NULL;

		cx_flush_copies(cx, s);
		if (atomic_load(&s->failed) || !it->wait_stream)
			return;
		ws = cx_stream_get(cx, it->wait_stream, false);
		if (ws)
			ev = cx_record_find(ws, it->wait_seq);
		/* No event: the record already completed on the device. */
		if (!ev || ws == s)
			return;
		ret = cx_stream_cuda(cx, s);
		if (ret) {
			cx_range_fail(r, it->seq, ret);
			atomic_store(&s->failed, true);
			return;
		}
		e = cx_rt.cudaStreamWaitEvent(s->cs, ev, 0);
		if (e != cudaSuccess) {
			cx_range_fail(r, it->seq,
				   cx_error(cx, e, "cudaStreamWaitEvent"));
			atomic_store(&s->failed, true);
			return;
		}
		r->device_work = true;
		return;
	}
	default:
		/* NOP, HOST_WAIT (already satisfied), HOST_SIGNAL: in order. */
		return;
	}
}

/* Close every range this batch opened and hand them to the completer. */
static void cx_close_ranges(struct accel_cuda *cx, struct cx_stream **touched,
			    unsigned int n)
{
	struct cx_range *first = NULL, *last = NULL, **tail = &first;
	unsigned int i, count = 0;
	uint64_t now = 0;

	struct cx_range *r;

	for (i = 0; i < n; i++) {
		struct cx_stream *s = touched[i];

		r = s->open;

		cx_flush_copies(cx, s);
		s->open = NULL;
		s->touched = false;
		/* Its completion event comes later, when it is needed. */
		r->need_ev = r->device_work && s->cs;
		if (!now)
			now = cx_mono_ns();
		r->t_close = now;
		if (cx->cfg.trace)
			r->t_enq = now;
		*tail = r;
		tail = &r->next;
		last = r;
		count++;
	}
	if (!first)
		return;
	pthread_mutex_lock(&cx->lock);
	for (r = first; r; r = r->next) {
		cx_range_plan_locked(cx, r, now);
		r->s->npending++;
		r->s->tail_r = r;
	}
	if (!cx->is.rcache) {
		cx->is.rcache = cx->cmp.rfree;
		cx->cmp.rfree = NULL;
	}
	if (cx->cmp.tail)
		cx->cmp.tail->next = first;
	else
		cx->cmp.head = first;
	cx->cmp.tail = last;
	atomic_fetch_add(&cx->cmp.npending, count);
	pthread_cond_signal(&cx->cmp.cond);
	pthread_mutex_unlock(&cx->lock);
}

/*
 * Poll EXEC_FETCH until nothing more is fetchable and enqueue what came,
 * under exec_lock: fetch order is enqueue order.
 */
static void cx_fetch_locked(struct accel_cuda *cx, uint64_t t_submit)
{
	struct accel_exec_fetch f;

	for (;;) {
		uint64_t t_fetch = 0;
		unsigned int i, n = 0;
		int ret;

		cx_gc(cx);
		memset(&f, 0, sizeof(f));
		f.items = (uint64_t)(uintptr_t)cx->is.items;
		f.max_items = cx->is.fetch_max;
		f.timeout_ns = 0;	/* a past deadline: poll */
		ret = accel_ioctl(cx->ctx, ACCEL_IOC_EXEC_FETCH, &f);
		if (ret) {
			if (ret != -ETIME && ret != -EINTR && ret != -ENXIO)
				accel_log(LOG_ERR, "cuda: EXEC_FETCH: %s",
					  strerror(-ret));
			return;
		}
		if (cx->cfg.trace)
			t_fetch = cx_mono_ns();
		for (i = 0; i < f.count; i++) {
			struct cx_stream *s;

			cx_item(cx, &cx->is.items[i], t_submit, t_fetch);
			s = cx_stream_get(cx, cx->is.items[i].stream, false);
			/* Each stream listed once; close clears ->touched. */
			if (s && s->open && !s->touched) {
				s->touched = true;
				cx->is.touched[n++] = s;
			}
		}
		cx_close_ranges(cx, cx->is.touched, n);
		if (f.count < f.max_items)
			return;
	}
}

/*
 * Fetch and enqueue what became fetchable, from the calling thread
 * (inline: the thread that submitted issues its own CUDA work, no thread
 * hand-off). Whoever holds exec_lock already fetches on our behalf: the
 * kick flag makes it poll once more after the work we just made
 * fetchable, so none is left behind.
 */
void cx_kick(struct accel_cuda *cx, uint64_t t_submit, bool inline_)
{
	bool passed = false;
	int dev = -1;

	atomic_store(&cx->is.kick, 1);
	/*
	 * The issuer is hot: it sees the flag within a pause and issues this
	 * with whatever else came meanwhile. Paired with the issuer storing
	 * hot = false before its last look at the flag (both seq_cst): one of
	 * the two sees the other's store, so no kick is left unserved.
	 */
	if (inline_ && atomic_load(&cx->is.hot))
		return;
	while (atomic_load(&cx->is.kick)) {
		if (pthread_mutex_trylock(&cx->is.exec_lock))
			return;
		/*
		 * Counted before the kick is cleared, and until the ranges
		 * are pending: a waiter always sees work coming (cx_busy()).
		 */
		atomic_fetch_add(&cx->is.issuing, 1);
		atomic_store(&cx->is.kick, 0);
		if (!cx->is.stopped) {
			if (cx->cfg.multi_dev && dev < 0 &&
			    cx_rt.cudaGetDevice(&dev) == cudaSuccess &&
			    dev != cx->cfg.device)
				cx_rt.cudaSetDevice(cx->cfg.device);
			if (cx->cfg.trace)
				atomic_fetch_add(inline_ ? &cx->tr.passes_inline :
						 &cx->tr.passes_thread, 1);
			cx_fetch_locked(cx, t_submit);
			passed = true;
		}
		atomic_fetch_sub(&cx->is.issuing, 1);
		pthread_mutex_unlock(&cx->is.exec_lock);
	}
	/* The caller's current device is its own business. */
	if (dev >= 0 && dev != cx->cfg.device)
		cx_rt.cudaSetDevice(dev);
	/*
	 * An isolated copy went down from this thread; what follows it (a
	 * burst) is the issuer's, so that this thread returns from its
	 * next submissions as soon as the transport has them. The wake is
	 * made after the issue: it overlaps the device's work.
	 */
	if (passed && inline_ && cx->cfg.issuer && !atomic_load(&cx->is.hot)) {
		pthread_mutex_lock(&cx->lock);
		if (!atomic_load(&cx->is.hot)) {
			atomic_store(&cx->is.hot, true);
			pthread_cond_signal(&cx->is.fetch_cond);
		}
		pthread_mutex_unlock(&cx->lock);
	}
}

/*
 * The issuer, hot: serve every kick until none came for issue_spin_ns,
 * issuing what accumulated since its previous pass as one pass. Returns
 * with hot cleared and no kick left behind.
 */
static void cx_issuer_hot(struct accel_cuda *cx)
{
	uint64_t until = cx_mono_ns() + cx->cfg.issue_spin_ns;

	for (;;) {
		if (atomic_load(&cx->is.kick)) {
			if (cx->cfg.trace)
				atomic_fetch_add(&cx->tr.passes_issuer, 1);
			cx_kick(cx, 0, false);
			until = cx_mono_ns() + cx->cfg.issue_spin_ns;
			continue;
		}
		if (cx_mono_ns() >= until || atomic_load(&cx->is.stopping)) {
			atomic_store(&cx->is.hot, false);
			/* A kick that saw hot still set: ours to serve. */
			if (!atomic_load(&cx->is.kick))
				return;
			atomic_store(&cx->is.hot, true);
			continue;
		}
		cx_pause();
	}
}

void accel_cuda_kick(struct accel_ctx *ctx)
{
	uint64_t t = cx_tl_submit_ns;

	cx_tl_submit_ns = 0;
	cx_kick(cx_of(ctx), t, true);
}

/*
 * The fetch thread is the issuer: woken hot by a submitter's inline pass,
 * it takes the submissions that follow (cx_issuer_hot). Cold, it is a
 * safety net: every call that can make work fetchable (SUBMIT,
 * EVENT_RECORD, EVENT_SIGNAL, EXEC_COMPLETE) kicks the executor from the
 * thread that made it; it polls every CX_IDLE_NS.
 */
void *cx_fetch_main(void *arg)
{
	struct accel_cuda *cx = arg;

	cx_rt.cudaSetDevice(cx->cfg.device);
	pthread_mutex_lock(&cx->lock);
	while (!cx->is.stop_fetch) {
		struct timespec ts;
		uint64_t until = cx_mono_ns() + CX_IDLE_NS;

		ts.tv_sec = (time_t)(until / 1000000000ULL);
		ts.tv_nsec = (long)(until % 1000000000ULL);
		if (!atomic_load(&cx->is.hot))
			pthread_cond_timedwait(&cx->is.fetch_cond, &cx->lock, &ts);
		if (cx->is.stop_fetch)
			break;
		pthread_mutex_unlock(&cx->lock);
		if (atomic_load(&cx->is.hot))
			cx_issuer_hot(cx);
		else
			cx_kick(cx, 0, false);
		pthread_mutex_lock(&cx->lock);
	}
	atomic_store(&cx->is.hot, false);
	pthread_mutex_unlock(&cx->lock);
	/* Last pass: what is fetchable now goes to the device. */
	cx_kick(cx, 0, false);
	pthread_mutex_lock(&cx->is.exec_lock);
	cx->is.stopped = true;
	pthread_mutex_unlock(&cx->is.exec_lock);
	pthread_mutex_lock(&cx->lock);
	cx->is.fetch_exited = true;
	pthread_cond_signal(&cx->cmp.cond);
	pthread_mutex_unlock(&cx->lock);
	return NULL;
}

void accel_cuda_stream_dead(struct accel_ctx *ctx, uint32_t kstream)
{
	struct accel_cuda *cx = cx_of(ctx);
	uint32_t *d;

	if (!cx)
		return;
	pthread_mutex_lock(&cx->lock);
	d = cx_grow(cx->is.dead_streams, &cx->is.capdead, cx->is.ndead + 1, sizeof(*d));
	if (d) {
		cx->is.dead_streams = d;
		d[cx->is.ndead++] = kstream;
		atomic_store(&cx->is.ndead_hint, cx->is.ndead);
	}
	pthread_mutex_unlock(&cx->lock);
}
