// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * core_fuzz: a libFuzzer target on the pure scheduling core
 * (core/asc_core.c, compiled unchanged in userspace).
 *
 * The input is a little program. Each step takes an opcode byte and its
 * operands from the input and drives the core the way the kernel shell
 * does: ABI checks on raw structures, regions, events and streams created
 * and released, descriptors validated and queued, queue heads retired
 * (with or without an error), user events signalled, host waits begun,
 * polled and finished. The harness frees objects only when the core
 * reports their last reference gone (as the shell does), so AddressSanitizer
 * sees any use after free the core's reference counting would cause.
 *
 * Checked invariants, besides the sanitizers:
 *  - a validated COPY lies inside both regions (no overflow);
 *  - asc_check_desc() accepts exactly the shapes the uapi header documents;
 *  - completed <= submitted; completed only grows; queue counts match;
 *  - in-flight counts and reference counts never underflow;
 *  - a reported object really has no references left, and is reported once;
 *  - after retiring everything, killing every event, releasing every region
 *    and destroying every stream, every object has been freed: nothing
 *    leaks, every count is back to zero.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "asc_core.h"

#define CHECK(c)							\
	do {								\
		if (!(c)) {						\
			fprintf(stderr, "core_fuzz: %s:%d: check failed: %s\n", \
				__FILE__, __LINE__, #c);		\
			abort();					\
		}							\
	} while (0)

#define NREG	6
#define NEV	8
#define NSTR	4
#define NWAIT	4
#define WAITN	4

/* ---- input reader ------------------------------------------------------ */

struct in {
	const uint8_t *p;
	size_t n;
};

static uint8_t rd8(struct in *in)
{
	uint8_t v;

	if (!in->n)
		return 0;
	v = *in->p++;
	in->n--;
	return v;
}

static void bytes(struct in *in, void *dst, size_t len)
{
	size_t k = len < in->n ? len : in->n;

	memset(dst, 0, len);
	memcpy(dst, in->p, k);
	in->p += k;
	in->n -= k;
}

/* A small number most of the time, a wide one sometimes. */
static uint64_t num(struct in *in)
{
	uint8_t t = rd8(in);
	uint64_t v = 0;

	switch (t >> 6) {
	case 0:
		return t & 63;
	case 1:
		return (uint64_t)(t & 63) << 12 | rd8(in);
	case 2:
		bytes(in, &v, 4);
		return v;
	default:
		bytes(in, &v, 8);
		return v;
	}
}

/* ---- the model's objects ------------------------------------------------ */

struct stream {
	struct asc_timeline tl;
	struct asc_queue q;
	bool destroyed;
	u64 last_completed;
};

static struct asc_region *reg[NREG];
static bool reg_live[NREG];		/* handle still valid */
static struct asc_event *ev[NEV];
static bool ev_live[NEV];
static struct stream *st[NSTR];

struct pending_wait {
	struct asc_wait_item it[WAITN];
	u32 n;
	bool all;
	bool used;
};

static struct pending_wait waits[NWAIT];
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

static int find_tl(const struct asc_timeline *tl)
{
	int i;

	for (i = 0; i < NSTR; i++)
		if (st[i] && &st[i]->tl == tl)
			return i;
	return -1;
}

static void free_stream_if_done(int i)
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
static void collect(struct asc_release *rel)
{
	unsigned int i;
	int k;

	CHECK(rel->ntl <= 2 && rel->nregion <= 2 && rel->nevent <= 1);
	for (i = 0; i < rel->ntl; i++) {
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
	memset(rel, 0, sizeof(*rel));
}

/* ---- reference predicates from the uapi header ------------------------- */

static bool ref_desc_ok(const struct accel_desc *d)
{
	bool copy = d->dst || d->src || d->dst_offset || d->src_offset ||
		    d->length;

	if (d->flags || d->reserved)
		return false;
	switch (d->op) {
	case ACCEL_OP_NOP:
		return !copy && !d->event && !d->value;
	case ACCEL_OP_COPY:
		return !d->event && !d->value && d->dst && d->src;
	case ACCEL_OP_EVENT_RECORD:
	case ACCEL_OP_STREAM_WAIT:
		return !copy && !d->value && d->event;
	case ACCEL_OP_HOST_WAIT:
	case ACCEL_OP_HOST_SIGNAL:
		return !copy && d->event;
	default:
		return false;
	}
}

/* ---- steps -------------------------------------------------------------- */

static void step_abi(struct in *in)
{
	union {
		struct accel_info info;
		struct accel_mem_register reg;
		struct accel_mem_alloc alloc;
		struct accel_mem_release rel;
		struct accel_stream_create sc;
		struct accel_handle h;
		struct accel_stream_sync sync;
		struct accel_submit sub;
		struct accel_event_create ec;
		struct accel_event_signal sig;
		struct accel_wait w;
		struct accel_wait_entry we;
		struct accel_desc d;
	} u;
	uint8_t which = rd8(in) % 13;
	u64 end;
	int r;

	bytes(in, &u, sizeof(u));
	switch (which) {
	case 0:
		r = asc_check_info(&u.info);
		CHECK(r == 0 || r == -EINVAL);
		if (!r)
			CHECK(!u.info.flags);
		break;
	case 1:
		r = asc_check_mem_register(&u.reg);
		if (!r)
			CHECK(u.reg.size &&
			      !__builtin_add_overflow(u.reg.addr, u.reg.size, &end));
		break;
	case 2:
		r = asc_check_mem_alloc(&u.alloc);
		if (!r)
			CHECK(u.alloc.size && (u.alloc.flags == ACCEL_MEM_HOST ||
					       u.alloc.flags == ACCEL_MEM_DEVICE));
		break;
	case 3:
		r = asc_check_mem_release(&u.rel);
		CHECK(!r == !(u.rel.flags & ~ACCEL_MEM_RELEASE_DEFERRED));
		break;
	case 4:
		r = asc_check_stream_create(&u.sc);
		if (!r)
			CHECK(!(u.sc.flags & ~ACCEL_STREAM_NON_BLOCKING) && !u.sc.pad);
		break;
	case 5:
		r = asc_check_handle(&u.h);
		CHECK(!r == !u.h.pad);
		break;
	case 6:
		r = asc_check_stream_sync(&u.sync);
		CHECK(!r == !u.sync.flags);
		break;
	case 7:
		r = asc_check_submit(&u.sub, ASC_MAX_SUBMIT);
		if (!r)
			CHECK(u.sub.count >= 1 && u.sub.count <= ASC_MAX_SUBMIT &&
			      u.sub.descs && !u.sub.flags && !u.sub.pad);
		break;
	case 8:
		r = asc_check_event_create(&u.ec);
		if (!r)
			CHECK(!(u.ec.flags & ~(ACCEL_EVENT_TIMING | ACCEL_EVENT_USER)) &&
			      u.ec.flags != (ACCEL_EVENT_TIMING | ACCEL_EVENT_USER));
		break;
	case 9:
		r = asc_check_event_signal(&u.sig);
		CHECK(!r == !(u.sig.flags & ~ACCEL_SIGNAL_ERROR));
		break;
	case 10:
		r = asc_check_wait(&u.w, ASC_MAX_WAIT);
		if (!r)
			CHECK(u.w.count >= 1 && u.w.count <= ASC_MAX_WAIT &&
			      u.w.entries && !(u.w.flags & ~ACCEL_WAIT_ALL) && !u.w.pad);
		break;
	case 11:
		r = asc_check_wait_entry(&u.we);
		CHECK(!r == !u.we.pad);
		break;
	default:
		r = asc_check_desc(&u.d);
		CHECK(r == 0 || r == -EINVAL);
		CHECK(!r == ref_desc_ok(&u.d));
		break;
	}
	{
		s32 p = (s32)num(in);
		s32 c = asc_clamp_priority(p);

		CHECK(c >= ASC_GREATEST_PRIORITY && c <= ASC_LEAST_PRIORITY);
		if (p >= ASC_GREATEST_PRIORITY && p <= ASC_LEAST_PRIORITY)
			CHECK(c == p);
	}
	{
		u64 a = num(in), al = num(in) + 1, b = num(in), bl = num(in) + 1;
		u64 ae, be;

		if (!__builtin_add_overflow(a, al, &ae) &&
		    !__builtin_add_overflow(b, bl, &be))
			CHECK(asc_ranges_overlap(a, al, b, bl) == (a < be && b < ae));
	}
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

static void step_kill_event(struct in *in)
{
	struct asc_release rel = { 0 };
	int i = rd8(in) % NEV;

	if (!ev[i] || !ev_live[i])
		return;
	ev_live[i] = false;
	asc_event_kill(ev[i], &rel);
	CHECK(ev[i]->dead && !ev[i]->point.tl);
	if (!ev[i]->refs)
		rel.event[rel.nevent++] = ev[i];
	collect(&rel);
}

static void step_new_stream(struct in *in)
{
	int i = rd8(in) % NSTR;

	if (st[i])
		return;
	st[i] = calloc(1, sizeof(*st[i]));
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
static struct asc_region *lookup_reg(u32 h)
{
	if (!h)
		return NULL;
	h = (h - 1) % NREG;
	return reg_live[h] ? reg[h] : NULL;
}

static struct asc_event *lookup_ev(u32 h)
{
	if (!h)
		return NULL;
	h = (h - 1) % NEV;
	return ev_live[h] ? ev[h] : NULL;
}

static void step_submit(struct in *in)
{
	struct asc_release rel = { 0 };
	struct asc_entry *e[8];
	struct stream *s;
	u32 i, n = 1 + rd8(in) % 8;
	int k = rd8(in) % NSTR, ret = 0;
	u64 sub0;

	s = st[k];
	if (!s || s->destroyed || s->tl.error)
		return;
	for (i = 0; i < n; i++) {
		struct accel_desc *d;
		u64 end;

		e[i] = calloc(1, sizeof(*e[i]));
		d = &e[i]->desc;
		d->op = rd8(in) % 7;
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
			break;
		e[i]->dst = e[i]->src = NULL;
		e[i]->event = NULL;
		if (d->op == ACCEL_OP_COPY) {
			e[i]->dst = lookup_reg(d->dst);
			e[i]->src = lookup_reg(d->src);
			if (!e[i]->dst || !e[i]->src) {
				ret = -ENOENT;
				break;
			}
		} else if (d->op != ACCEL_OP_NOP) {
			e[i]->event = lookup_ev(d->event);
			if (!e[i]->event) {
				ret = -ENOENT;
				break;
			}
		}
		ret = asc_validate_desc(d, e[i]->dst, e[i]->src, e[i]->event);
		CHECK(ret == 0 || ret == -EINVAL || ret == -EPERM || ret == -ENOENT);
		if (ret)
			break;
		if (d->op == ACCEL_OP_COPY) {
			/* validated copies are in bounds, without overflow */
			CHECK(!__builtin_add_overflow(d->dst_offset, d->length, &end) &&
			      end <= e[i]->dst->size);
			CHECK(!__builtin_add_overflow(d->src_offset, d->length, &end) &&
			      end <= e[i]->src->size);
			CHECK(!(e[i]->dst->flags & ACCEL_MEM_READONLY));
		}
		if (d->op == ACCEL_OP_HOST_WAIT || d->op == ACCEL_OP_HOST_SIGNAL)
			CHECK(e[i]->event->flags & ACCEL_EVENT_USER);
		if (d->op == ACCEL_OP_EVENT_RECORD || d->op == ACCEL_OP_STREAM_WAIT)
			CHECK(!(e[i]->event->flags & ACCEL_EVENT_USER));
	}
	if (ret || s->q.count + n > ASC_QUEUE_DEPTH) {
		u32 j;

		for (j = 0; j < n && j <= i; j++)
			free(e[j]);
		return;
	}
	sub0 = s->tl.submitted;
	for (i = 0; i < n; i++) {
		u64 dinf = e[i]->dst ? e[i]->dst->inflight : 0;

		asc_enqueue(&s->tl, &s->q, e[i], &rel);
		CHECK(e[i]->seq == sub0 + i + 1);
		if (e[i]->desc.op == ACCEL_OP_COPY)
			CHECK(e[i]->dst->inflight > dinf || e[i]->dst == e[i]->src);
		collect(&rel);
	}
	CHECK(s->tl.submitted == sub0 + n);
	CHECK(s->tl.completed <= s->tl.submitted);
}

static void check_stream(struct stream *s)
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

/* Run the head like the soft engine; force retirement when @force. */
static bool retire_one(int k, int status, bool force)
{
	struct asc_release rel = { 0 };
	struct stream *s = st[k];
	struct asc_entry *e;
	u64 seq;
	int ready;

	if (!s || !(e = asc_queue_peek(&s->q)))
		return false;
	if (s->tl.error) {
		status = -ECANCELED;
	} else {
		ready = asc_entry_ready(e);
		CHECK(ready == 0 || ready == 1 || ready == -EIO);
		if (!ready && !force)
			return false;
		if (ready < 0)
			status = ready;
		else if (ready && !status)
			asc_entry_execute(e);
		if (!ready)
			status = -ECANCELED;	/* the shell is closing */
	}
	seq = e->seq;
	CHECK(asc_retire_head(&s->tl, &s->q, status, ++now, &rel) == e);
	CHECK(s->tl.completed == seq);
	if (status)
		CHECK(s->tl.error && s->tl.error_seq <= seq);
	free(e);
	collect(&rel);
	if (st[k])
		check_stream(st[k]);
	free_stream_if_done(k);
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
	now = 0;
	n_freed = n_alloced = 0;

	while (in.n && steps++ < 4096) {
		switch (rd8(&in) % 15) {
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
		default: step_query(&in); break;
		}
	}
	teardown();
	return 0;
}
