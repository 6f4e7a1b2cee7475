// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * core_fuzz: a libFuzzer target on the pure core (core/, compiled
 * unchanged in userspace): the whole ABI as both shells drive it.
 *
 * The input is a little program. Each step takes an opcode byte and its
 * operands from the input and drives the core the way the kernel shell
 * does: ABI checks on raw structures, regions, events and streams created
 * and released, descriptors validated and queued, queue heads retired
 * (with or without an error), user events signalled, host waits begun,
 * polled and finished, and an executor attached, fetching, completing and
 * detaching (core_fuzz_exec.c); every command's ABI checks and answers are
 * in core_fuzz_abi.c. The harness frees objects only when the core
 * reports their last reference gone (as the shell does), so AddressSanitizer
 * sees any use after free the core's reference counting would cause.
 *
 * Checked invariants, besides the sanitizers:
 *  - a validated COPY lies inside both regions (no overflow);
 *  - asc_check_desc() accepts exactly the shapes the uapi header documents;
 *  - completed <= submitted; completed only grows; queue counts match;
 *  - in-flight counts and reference counts never underflow;
 *  - a reported object really has no references left, and is reported once;
 *  - an event's destroy is refused (-EBUSY, nothing changed) exactly while
 *    a queued HOST_WAIT on it is not satisfied, and its list of queued
 *    HOST_WAITs is exactly those of every queue;
 *  - an export captures a pending point or says how a done one ended; an
 *    imported event's timeline is retired once, and freed when its last
 *    reference goes;
 *  - after retiring everything, killing every event, releasing every region
 *    and destroying every stream, every object has been freed: nothing
 *    leaks, every count is back to zero.
 */
#include "core_fuzz.h"

/* ---- the model's objects ------------------------------------------------ */

struct asc_region *reg[NREG];
bool reg_live[NREG];		/* handle still valid */
struct asc_event *ev[NEV];
bool ev_live[NEV];
struct stream *st[NSTR];

struct pending_wait {
	struct asc_wait_item it[WAITN];
	u32 n;
	bool all;
	bool used;
};

static struct pending_wait waits[NWAIT];
/* Imported events' one-point timelines (ACCEL_IOC_EVENT_IMPORT). */
#define NIMP	4
static struct asc_timeline *imp[NIMP];
static u64 now;
static unsigned long n_freed, n_alloced;

static int find_reg(const struct asc_region *r)
{
	int i;

	for (i = 0; i < NREG; i++)
		if (reg[i] == r)
			return i;
	return -1;
}

static int find_ev(const struct asc_event *e)
{
	int i;

	for (i = 0; i < NEV; i++)
		if (ev[i] == e)
			return i;
	return -1;
}

static int find_imp(const struct asc_timeline *tl)
{
	int i;

	for (i = 0; i < NIMP; i++)
		if (imp[i] == tl)
			return i;
	return -1;
}

static int find_tl(const struct asc_timeline *tl)
{
	int i;

	for (i = 0; i < NSTR; i++)
		if (st[i] && &st[i]->tl == tl)
			return i;
	return -1;
}

void free_stream_if_done(int i)
{
	struct stream *s = st[i];

	if (s && s->destroyed && !s->q.count && !s->tl.refs) {
		CHECK(!s->q.head && !s->q.tail);
		free(s);
		st[i] = NULL;
		n_freed++;
	}
}

/* Act on what a core call reported, as the kernel shell does. */
void collect(struct asc_release *rel)
{
	unsigned int i;
	int k;

	CHECK(rel->ntl <= 2 && rel->nregion <= 2 && rel->nevent <= 1);
	for (i = 0; i < rel->ntl; i++) {
		if (rel->tl[i]->import) {
			/* Never recorded again: no reference comes back. */
			k = find_imp(rel->tl[i]);
			CHECK(k >= 0);
			CHECK(imp[k]->refs == 0);
			free(imp[k]);
			imp[k] = NULL;
			n_freed++;
			continue;
		}
		k = find_tl(rel->tl[i]);
		CHECK(k >= 0);			/* reported after being freed? */
		/*
		 * A hint, not a promise: a re-record on the same stream drops
		 * and retakes the timeline within one call. The shell checks
		 * (as_stream_freeable_locked); so does free_stream_if_done().
		 */
		free_stream_if_done(k);
	}
	for (i = 0; i < rel->nregion; i++) {
		k = find_reg(rel->region[i]);
		CHECK(k >= 0);
		CHECK(reg[k]->released && reg[k]->inflight == 0);
		free(reg[k]);
		reg[k] = NULL;
		n_freed++;
	}
	for (i = 0; i < rel->nevent; i++) {
		k = find_ev(rel->event[i]);
		CHECK(k >= 0);
		CHECK(ev[k]->dead && ev[k]->refs == 0);
		free(ev[k]);
		ev[k] = NULL;
		n_freed++;
	}
	if (rel->batch) {
		CHECK(rel->batch->remaining == 0);
		free(rel->batch);
	}
	memset(rel, 0, sizeof(*rel));
}

static void step_new_region(struct in *in)
{
	int i = rd8(in) % NREG;
	struct asc_region *r;

	if (reg[i])
		return;
	r = calloc(1, sizeof(*r));
	r->size = num(in);
	if (!r->size)
		r->size = 1;
	r->flags = (rd8(in) & 1) ? ACCEL_MEM_READONLY : 0;
	r->kind = rd8(in) % 4;		/* ACCEL_REGION_* */
	if (r->kind == ACCEL_REGION_HOST || r->kind == ACCEL_REGION_EXTERNAL)
		r->addr = num(in);
	reg[i] = r;
	reg_live[i] = true;
	n_alloced++;
}

static void step_release_region(struct in *in)
{
	int i = rd8(in) % NREG;
	u32 flags = (rd8(in) & 1) ? ACCEL_MEM_RELEASE_DEFERRED : 0;
	u64 inflight;
	int r;

	if (!reg[i] || !reg_live[i])
		return;
	inflight = reg[i]->inflight;
	r = asc_region_release(reg[i], flags);
	if (r == -EBUSY) {
		CHECK(inflight && !flags && !reg[i]->released);
		return;
	}
	CHECK(r == 0 || r == 1);
	CHECK(reg[i]->released);
	reg_live[i] = false;
	if (r == 1) {
		CHECK(!inflight);
		free(reg[i]);
		reg[i] = NULL;
		n_freed++;
	} else {
		CHECK(inflight && flags);
	}
}

static void step_new_event(struct in *in)
{
	int i = rd8(in) % NEV;
	static const u32 fl[] = { 0, ACCEL_EVENT_TIMING, ACCEL_EVENT_USER };
	struct asc_event *e;

	if (ev[i])
		return;
	e = calloc(1, sizeof(*e));
	asc_event_init(e, fl[rd8(in) % 3]);
	ev[i] = e;
	ev_live[i] = true;
	n_alloced++;
}

/*
 * Does a queued HOST_WAIT on @e wait for a value it has not reached? The
 * oracle walks every queue (the core walks the event's own list); it also
 * checks that list holds exactly the queued HOST_WAITs naming @e.
 */
static bool unsatisfied_wait_on(const struct asc_event *e)
{
	const struct asc_entry *x, *w;
	bool busy = false;
	u32 queued = 0, listed = 0;
	int k;

	for (k = 0; k < NSTR; k++) {
		if (!st[k])
			continue;
		for (x = st[k]->q.head; x; x = x->next) {
			if (x->desc.op != ACCEL_OP_HOST_WAIT || x->event != e)
				continue;
			queued++;
			for (w = e->waits; w && w != x; w = w->waiter.next)
				;
			CHECK(w == x);
			if (!asc_entry_ready(x))
				busy = true;
		}
	}
	for (w = e->waits; w; w = w->waiter.next) {
		CHECK(w->event == e && w->desc.op == ACCEL_OP_HOST_WAIT);
		CHECK(!w->waiter.next || w->waiter.next->waiter.prev == w);
		listed++;
	}
	CHECK(listed == queued);
	return busy;
}

/* ACCEL_IOC_EVENT_DESTROY: refused exactly while a wait could hang. */
static void step_kill_event(struct in *in)
{
	struct asc_release rel = { 0 };
	int i = rd8(in) % NEV, ret;
	u32 refs;
	bool busy;

	if (!ev[i] || !ev_live[i])
		return;
	busy = unsatisfied_wait_on(ev[i]);
	refs = ev[i]->refs;
	ret = asc_event_destroy(ev[i], &rel);
	CHECK(ret == (busy ? -EBUSY : 0));
	if (ret) {
		CHECK(!ev[i]->dead && ev[i]->refs == refs);
		CHECK(!rel.ntl && !rel.nevent);
		return;
	}
	ev_live[i] = false;
	CHECK(ev[i]->dead && !ev[i]->point.tl);
	CHECK(rel.nevent == (refs ? 0u : 1u));
	collect(&rel);
}

/* ACCEL_IOC_EVENT_IMPORT: an event holding a one-point timeline. */
static void step_import(struct in *in)
{
	int i = rd8(in) % NEV, k = find_imp(NULL);
	uint8_t how = rd8(in);

	if (ev[i] || k < 0)
		return;
	ev[i] = calloc(1, sizeof(*ev[i]));
	imp[k] = calloc(1, sizeof(*imp[k]));
	asc_import_init(imp[k], ev[i]);
	CHECK(ev[i]->flags == ACCEL_EVENT_IMPORTED && imp[k]->refs == 1);
	CHECK(asc_point_state(&ev[i]->point) == 0);
	ev_live[i] = true;
	n_alloced += 2;
	/* Imported after the export was done. */
	if (how & 1)
		CHECK(asc_import_done(imp[k], (how & 2) ? -EIO : 0));
}

/* The exported point of an import is done. */
static void step_import_done(struct in *in)
{
	int k = rd8(in) % NIMP;
	int status = (rd8(in) & 1) ? -EIO : 0;
	struct asc_point p;
	bool was;

	if (!imp[k])
		return;
	was = imp[k]->completed || imp[k]->error;
	CHECK(asc_import_done(imp[k], status) == !was);
	p.tl = imp[k];
	p.seq = 1;
	CHECK(asc_point_state(&p) == 1 || asc_point_state(&p) == -EIO);
	CHECK(!asc_import_done(imp[k], 0));
}

/* ACCEL_IOC_EVENT_EXPORT's core answer. */
static void step_export(struct in *in)
{
	struct asc_event *e = lookup_ev(rd8(in) % (NEV + 1));
	u32 npending = (rd8(in) & 1) ? ASC_EXPORT_MAX_PENDING : 0;
	struct asc_point p = { (struct asc_timeline *)1, 7 };
	int status = 7, r, st;

	r = asc_event_export(e, npending, &p, &status);
	if (!e || e->dead) {
		CHECK(r == -ENOENT);
		return;
	}
	if (e->flags & (ACCEL_EVENT_USER | ACCEL_EVENT_IMPORTED)) {
		CHECK(r == -EINVAL);
		return;
	}
	st = asc_point_state(&e->point);
	if (!st && npending) {
		CHECK(r == -ENOSPC);
		return;
	}
	CHECK(r == 0);
	if (st) {
		CHECK(!p.tl && status == (st < 0 ? -EIO : 0));
	} else {
		CHECK(p.tl == e->point.tl && p.seq == e->point.seq);
		CHECK(asc_export_state(p.tl, p.seq) == -EAGAIN);
	}
}

static void step_new_stream(struct in *in)
{
	int i = rd8(in) % NSTR;

	if (st[i])
		return;
	st[i] = calloc(1, sizeof(*st[i]));
	st[i]->tl.id = i + 1;
	n_alloced++;
}

static void step_destroy_stream(struct in *in)
{
	int i = rd8(in) % NSTR;

	if (!st[i] || st[i]->destroyed)
		return;
	st[i]->destroyed = true;
	free_stream_if_done(i);
}

/* Handle byte -> object, as a lookup of a live handle would resolve it. */
struct asc_region *lookup_reg(u32 h)
{
	if (!h)
		return NULL;
	h = (h - 1) % NREG;
	return reg_live[h] ? reg[h] : NULL;
}

struct asc_event *lookup_ev(u32 h)
{
	if (!h)
		return NULL;
	h = (h - 1) % NEV;
	return ev_live[h] ? ev[h] : NULL;
}

static void step_submit(struct in *in)
{
	struct asc_release rel = { 0 };
	struct accel_desc descs[8];
	struct asc_batch *b;
	struct stream *s;
	u32 i, n = 1 + rd8(in) % 8;
	int k = rd8(in) % NSTR, ret = 0;
	u64 sub0, end;

	s = st[k];
	if (!s || s->destroyed)
		return;
	memset(descs, 0, sizeof(descs));
	for (i = 0; i < n; i++) {
		struct accel_desc *d = &descs[i];

		d->op = rd8(in) % 9;
		if (rd8(in) < 16) {
			bytes(in, d, sizeof(*d));	/* raw */
		} else {
			switch (d->op) {
			case ACCEL_OP_COPY:
				d->dst = rd8(in) % (NREG + 1);
				d->src = rd8(in) % (NREG + 1);
				d->dst_offset = num(in);
				d->src_offset = num(in);
				d->length = num(in);
				break;
			case ACCEL_OP_MEMSET:
				d->flags = rd8(in) % 4;
				d->dst = rd8(in) % (NREG + 1);
				d->dst_offset = num(in);
				d->length = num(in);
				d->value = num(in);
				break;
			case ACCEL_OP_COPY_2D:
				d->dst = rd8(in) % (NREG + 1);
				d->src = rd8(in) % (NREG + 1);
				d->dst_offset = num(in);
				d->src_offset = num(in);
				d->width = num(in);
				d->height = num(in);
				d->dst_pitch = (u32)num(in);
				d->src_pitch = (u32)num(in);
				break;
			case ACCEL_OP_EVENT_RECORD:
			case ACCEL_OP_STREAM_WAIT:
				d->event = rd8(in) % (NEV + 1);
				break;
			case ACCEL_OP_HOST_WAIT:
			case ACCEL_OP_HOST_SIGNAL:
				d->event = rd8(in) % (NEV + 1);
				d->value = num(in);
				break;
			default:
				break;
			}
			d->user_data = num(in);
		}
		ret = asc_check_desc(d);
		CHECK(!ret == ref_desc_ok(d));
		if (ret)
			return;
	}
	/* As a shell does: one batch, every handle looked up, then admitted. */
	b = malloc(sizeof(*b) + n * sizeof(b->ents[0]));
	asc_batch_init(b, descs, n);
	for (i = 0; i < n; i++) {
		struct asc_entry *e = &b->ents[i];

		e->dst = lookup_reg(e->desc.dst);
		e->src = lookup_reg(e->desc.src);
		e->event = lookup_ev(asc_desc_event(&e->desc));
	}
	ret = asc_submit_admit(&s->tl, &s->q, b, executor);
	CHECK(ret == 0 || ret == -EIO || ret == -EAGAIN || ret == -ENOENT ||
	      ret == -EINVAL || ret == -EPERM || ret == -ENXIO);
	if (s->tl.error)
		CHECK(ret == -EIO);
	if (ret) {
		free(b);
		return;
	}
	for (i = 0; i < n; i++) {
		const struct asc_entry *e = &b->ents[i];
		const struct accel_desc *d = &e->desc;

		if (d->op == ACCEL_OP_COPY) {
			/* validated copies are in bounds, without overflow */
			CHECK(!__builtin_add_overflow(d->dst_offset, d->length, &end) &&
			      end <= e->dst->size);
			CHECK(!__builtin_add_overflow(d->src_offset, d->length, &end) &&
			      end <= e->src->size);
			CHECK(!(e->dst->flags & ACCEL_MEM_READONLY));
			CHECK(executor || !asc_entry_external(e));
		}
		if (d->op == ACCEL_OP_MEMSET) {
			u32 w = ref_memset_width(d->flags);

			CHECK(!__builtin_add_overflow(d->dst_offset, d->length, &end) &&
			      end <= e->dst->size);
			CHECK((e->dst->addr + d->dst_offset) % w == 0);
			CHECK(!(e->dst->flags & ACCEL_MEM_READONLY));
			CHECK(executor || !asc_entry_external(e));
		}
		if (d->op == ACCEL_OP_COPY_2D && d->width && d->height) {
			/* every row of both sides is in bounds, no overflow */
			u64 span;

			CHECK(!__builtin_mul_overflow(d->height - 1, (u64)d->dst_pitch,
						      &span) &&
			      !__builtin_add_overflow(span, d->width, &span) &&
			      !__builtin_add_overflow(d->dst_offset, span, &end) &&
			      end <= e->dst->size);
			CHECK(!__builtin_mul_overflow(d->height - 1, (u64)d->src_pitch,
						      &span) &&
			      !__builtin_add_overflow(span, d->width, &span) &&
			      !__builtin_add_overflow(d->src_offset, span, &end) &&
			      end <= e->src->size);
			CHECK(asc_desc_bytes(d) <= e->dst->size);
			CHECK(!(e->dst->flags & ACCEL_MEM_READONLY));
			CHECK(executor || !asc_entry_external(e));
		}
		if (d->op == ACCEL_OP_HOST_WAIT || d->op == ACCEL_OP_HOST_SIGNAL)
			CHECK(e->event->flags & ACCEL_EVENT_USER);
		if (d->op == ACCEL_OP_EVENT_RECORD || d->op == ACCEL_OP_STREAM_WAIT)
			CHECK(!(e->event->flags & ACCEL_EVENT_USER));
	}
	sub0 = s->tl.submitted;
	for (i = 0; i < n; i++) {
		struct asc_entry *e = &b->ents[i];
		u64 dinf = e->dst ? e->dst->inflight : 0;

		asc_enqueue(&s->tl, &s->q, e, &rel);
		CHECK(e->seq == sub0 + i + 1);
		if (asc_desc_writes(&e->desc))
			CHECK(e->dst->inflight > dinf || e->dst == e->src);
		if (e->desc.op == ACCEL_OP_MEMSET)
			CHECK(!e->src && e->dst->inflight == dinf + 1);
		collect(&rel);
	}
	CHECK(s->tl.submitted == sub0 + n);
	CHECK(s->tl.completed <= s->tl.submitted);
}

void check_stream(struct stream *s)
{
	u32 cnt = 0;
	struct asc_entry *e, *last = NULL;
	u64 prev = s->tl.completed;

	for (e = s->q.head; e; e = e->next) {
		CHECK(e->seq > prev);		/* in order, after completed */
		prev = e->seq;
		last = e;
		cnt++;
	}
	CHECK(cnt == s->q.count);
	CHECK(last == s->q.tail);
	CHECK(s->tl.completed <= s->tl.submitted);
	CHECK(s->tl.completed >= s->last_completed);
	CHECK(s->tl.submitted - s->tl.completed == s->q.count);
	s->last_completed = s->tl.completed;
}

/* Retire the head of stream @k with @status, as every shell path does. */
void retire_head(int k, int status)
{
	struct asc_release rel = { 0 };
	struct stream *s = st[k];
	struct asc_entry *e = asc_queue_peek(&s->q);
	u64 seq = e->seq;

	CHECK(asc_retire_head(&s->tl, &s->q, status, ++now, &rel) == e);
	CHECK(s->tl.completed == seq);
	CHECK(s->tl.fetched >= s->tl.completed);
	CHECK(s->q.fetch_last != e);
	if (status)
		CHECK(s->tl.error && s->tl.error_seq <= seq);
	collect(&rel);
	if (st[k])
		check_stream(st[k]);
	free_stream_if_done(k);
}

/*
 * Run the head like the soft engine (a copy may fail with @status); with
 * @closing, everything left retires unrun, as release() makes it.
 */
static bool retire_one(int k, int status, bool closing)
{
	struct stream *s = st[k];
	int step, st_status;

	if (!s || !s->q.head)
		return false;
	step = asc_engine_next(&s->tl, &s->q, closing, executor, &st_status);
	CHECK(step >= ASC_STEP_IDLE && step <= ASC_STEP_RETIRE);
	if (step == ASC_STEP_IDLE || step == ASC_STEP_BLOCKED) {
		CHECK(!closing);
		CHECK(!asc_engine_runnable(&s->tl, &s->q, closing, executor));
		return false;
	}
	if (step == ASC_STEP_COPY) {
		CHECK(asc_desc_writes(&s->q.head->desc));
		CHECK(asc_desc_bytes(&s->q.head->desc));
		CHECK(!asc_entry_external(s->q.head));
		st_status = status;
	}
	if (closing)
		CHECK(st_status == -ECANCELED);
	retire_head(k, st_status);
	return true;
}

static void step_retire(struct in *in)
{
	static const int statuses[] = { 0, 0, 0, -EIO, -ENOMEM, -ECANCELED };
	int k = rd8(in) % NSTR;
	int n = 1 + rd8(in) % 8;
	int status = statuses[rd8(in) % 6];

	while (n-- && retire_one(k, status, false))
		status = 0;
}

static void step_signal(struct in *in)
{
	int i = rd8(in) % NEV;
	u64 v = num(in);
	bool err = rd8(in) < 8;
	u64 old;
	bool changed;

	if (!ev[i] || !ev_live[i] || !(ev[i]->flags & ACCEL_EVENT_USER))
		return;
	old = ev[i]->value;
	changed = asc_event_signal(ev[i], v, err);
	CHECK(ev[i]->value == (v > old ? v : old));	/* never lowers */
	if (v > old)
		CHECK(changed);
}

static void step_wait_begin(struct in *in)
{
	int w = rd8(in) % NWAIT;
	struct pending_wait *pw = &waits[w];
	u32 i, n = 1 + rd8(in) % WAITN;

	if (pw->used)
		return;
	pw->n = 0;
	pw->all = rd8(in) & 1;
	for (i = 0; i < n; i++) {
		struct asc_event *e = lookup_ev(rd8(in) % (NEV + 1));
		u64 v = num(in);
		u32 refs;

		if (!e)
			continue;
		if (!(e->flags & ACCEL_EVENT_USER))
			v = 0;
		refs = e->refs;
		asc_wait_item_init(&pw->it[pw->n], e, v);
		CHECK(e->refs == refs + 1);
		CHECK(pw->it[pw->n].value >= 1);
		pw->n++;
	}
	pw->used = pw->n > 0;
}

static void wait_finish(struct pending_wait *pw)
{
	struct asc_release rel = { 0 };
	u32 i;

	for (i = 0; i < pw->n; i++) {
		asc_wait_item_fini(&pw->it[i], &rel);
		collect(&rel);
	}
	pw->used = false;
	pw->n = 0;
}

static void step_wait_poll(struct in *in)
{
	struct pending_wait *pw = &waits[rd8(in) % NWAIT];
	u32 first = 12345, i;
	int r;

	if (!pw->used)
		return;
	r = asc_wait_check(pw->it, pw->n, pw->all, &first);
	CHECK(r == 0 || r == -EAGAIN || r == -EIO);
	if (r == 0 || r == -EIO)
		CHECK(first < pw->n);
	if (r == 0 && pw->all) {
		/* every entry complete: no user event short of its value */
		for (i = 0; i < pw->n; i++) {
			const struct asc_wait_item *it = &pw->it[i];

			if (it->event->flags & ACCEL_EVENT_USER)
				CHECK(it->event->value >= it->value);
			else
				CHECK(asc_point_state(&it->point) == 1);
		}
	}
	if (rd8(in) & 1)
		wait_finish(pw);
}

static void step_query(struct in *in)
{
	int i = rd8(in) % NEV, j = rd8(in) % NEV, k = rd8(in) % NSTR;
	s64 el = 0;
	int err = 1, r;

	if (ev[i]) {
		r = asc_event_state(ev[i], &err);
		CHECK(r == ACCEL_EVENT_STATE_COMPLETE || r == ACCEL_EVENT_STATE_PENDING);
		CHECK(err == 0 || err == -EIO);
		if (ev[j]) {
			r = asc_event_elapsed(ev[i], ev[j], &el);
			CHECK(r == 0 || r == -EINVAL || r == -EAGAIN || r == -EIO);
		}
	}
	if (st[k]) {
		u64 seq = st[k]->tl.submitted ? num(in) % (st[k]->tl.submitted + 1) : 0;

		r = asc_timeline_check_sync(&st[k]->tl, seq);
		CHECK(r == 0 || r == -EAGAIN || r == -EIO);
		if (r == 0)
			CHECK(st[k]->tl.completed >= seq);
		check_stream(st[k]);
	}
}

/* Tear everything down the way release() does and check nothing is left. */
static void teardown(void)
{
	struct asc_release rel = { 0 };
	bool progress;
	int i;

	for (i = 0; i < NWAIT; i++)
		if (waits[i].used)
			wait_finish(&waits[i]);
	/* closing: every queue is cancelled, in order */
	do {
		progress = false;
		for (i = 0; i < NSTR; i++)
			while (retire_one(i, 0, true))
				progress = true;
	} while (progress);
	for (i = 0; i < NSTR; i++)
		if (st[i])
			CHECK(!st[i]->q.count && !st[i]->q.head);
	for (i = 0; i < NREG; i++)
		if (reg[i])
			CHECK(reg[i]->inflight == 0);
	for (i = 0; i < NEV; i++) {
		if (!ev[i])
			continue;
		CHECK(ev[i]->refs == 0);
		/* a dead event whose last reference went is already freed */
		CHECK(ev_live[i]);
		ev_live[i] = false;
		asc_event_kill(ev[i], &rel);
		rel.event[rel.nevent++] = ev[i];
		collect(&rel);
	}
	for (i = 0; i < NIMP; i++)
		CHECK(!imp[i]);		/* freed with their last event */
	for (i = 0; i < NSTR; i++) {
		if (!st[i])
			continue;
		CHECK(st[i]->tl.refs == 0);	/* no point names it now */
		st[i]->destroyed = true;
		free_stream_if_done(i);
		CHECK(!st[i]);
	}
	for (i = 0; i < NREG; i++) {
		if (!reg[i])
			continue;
		CHECK(reg_live[i]);	/* a released region would be freed */
		CHECK(asc_region_release(reg[i], 0) == 1);
		free(reg[i]);
		reg[i] = NULL;
		reg_live[i] = false;
		n_freed++;
	}
	CHECK(n_freed == n_alloced);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct in in = { data, size };
	int steps = 0;

	memset(reg, 0, sizeof(reg));
	memset(reg_live, 0, sizeof(reg_live));
	memset(ev, 0, sizeof(ev));
	memset(ev_live, 0, sizeof(ev_live));
	memset(st, 0, sizeof(st));
	memset(waits, 0, sizeof(waits));
	memset(imp, 0, sizeof(imp));
	now = 0;
	n_freed = n_alloced = 0;
	exec_reset();

	while (in.n && steps++ < 4096) {
		switch (rd8(&in) % 24) {
		case 0: step_abi(&in); break;
		case 1: step_new_region(&in); break;
		case 2: step_release_region(&in); break;
		case 3: step_new_event(&in); break;
		case 4: step_kill_event(&in); break;
		case 5: step_new_stream(&in); break;
		case 6: step_destroy_stream(&in); break;
		case 7:
		case 8: step_submit(&in); break;
		case 9:
		case 10: step_retire(&in); break;
		case 11: step_signal(&in); break;
		case 12: step_wait_begin(&in); break;
		case 13: step_wait_poll(&in); break;
		case 14: step_exec_attach(&in); break;
		case 15: step_exec_detach(&in); break;
		case 16:
		case 17: step_exec_fetch(&in); break;
		case 18:
		case 19: step_exec_complete(&in); break;
		case 20: step_import(&in); break;
		case 21: step_import_done(&in); break;
		case 22: step_export(&in); break;
		default: step_query(&in); break;
		}
	}
	teardown();
	return 0;
}
