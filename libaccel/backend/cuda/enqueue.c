// SPDX-License-Identifier: MIT
/*
 * The cuda backend: the enqueue, one fetched item at a time. Turn it into
 * CUDA stream work: copies gathered, merged and batched, fills and 2D
 * copies, records and waits as CUDA events, one range per stream and
 * batch.
 */
#include "cuda.h"
#include "asc_core.h"

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
	if (!accel_kstream_query(cx->ctx, s->kstream, &q))
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
		cudaError_t e;

		CX_COUNT(cx, s->open, issue_calls);
		e = cx_rt.cudaMemcpyAsync(c[i].dst, c[i].src, c[i].len,
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
void cx_flush_copies(struct accel_cuda *cx, struct cx_stream *s)
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
	CX_STAMP(cx, s->open, CX_T_CALL);
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
					     k < nm && e == cudaSuccess; k++) {
						CX_COUNT(cx, s->open, issue_calls);
						e = cx_rt.cudaMemcpyAsync(
							m[k].dst, m[k].src,
							m[k].len,
							cudaMemcpyDefault,
							s->cs);
					}
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
				CX_COUNT(cx, s->open, issue_calls);
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

void cx_item(struct accel_cuda *cx, const struct accel_exec_item *it,
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
		if (cx->cfg.trace) {
			/* Issued by a thread that did not submit: handed over. */
			r->smp.t[CX_T_SUBMIT] = t_submit ? t_submit :
				atomic_exchange(&cx->tr.handoff, 0);
			r->smp.t[CX_T_FETCHED] = t_fetch;
		}
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
		CX_STAMP(cx, r, CX_T_CALL);
		CX_COUNT(cx, r, issue_calls);
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
		CX_STAMP(cx, r, CX_T_CALL);
		CX_COUNT(cx, r, issue_calls);
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
		CX_STAMP(cx, r, CX_T_CALL);
		CX_COUNT(cx, r, issue_calls);
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
	case ACCEL_OP_HOST_SIGNAL:
		/* Its user event is raised when the range is reported. */
		r->host_signal = true;
		return;
	default:
		/* NOP, HOST_WAIT (already satisfied): in order. */
		return;
	}
}
