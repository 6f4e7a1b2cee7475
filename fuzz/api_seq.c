// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * api_seq: a byte string read as a sequence of libaccel calls, with the
 * oracles that judge it. Only the public API (libaccel.h) is used.
 *
 * Each step takes an opcode byte and its operands from the input: contexts,
 * streams and events created and destroyed (handles kept after destroy, so
 * that stale ones are used too), pinned host buffers, device buffers,
 * pageable buffers (heap, anonymous mappings with a guard page, read-only
 * and PROT_NONE mappings), registration with and without READONLY and
 * unregistration with and without DEFERRED, copies of every kind (single
 * and batched) between valid, interior, foreign-context, stale, unmapped,
 * PROT_NONE and read-only pointers with sizes around pages and the
 * staging pool's chunks, event record/query/synchronize/wait, host-event
 * gates, host functions, stream synchronize, and fork (the child runs a
 * few steps of its own, then _exit()s).
 *
 * Oracles, besides the sanitizers and "no crash":
 *  - a call that fails changes nothing: a buffer whose release failed is
 *    still mapped, readable and writable with its bytes intact; a copy
 *    that failed left its destination's bytes as they were, then and
 *    after the next synchronize;
 *  - a call given a pointer no copy could use (unmapped, PROT_NONE, a
 *    read-only mapping or read-only registration as a destination,
 *    another context's device memory, a range past a region's end) or a
 *    destroyed handle does not succeed;
 *  - every byte copied is exact after synchronize: the interpreter keeps
 *    a shadow of every buffer (device buffers are read back with a D2H
 *    copy), updated in stream order; ranges whose final bytes depend on
 *    how concurrent streams interleave are marked unknown, never guessed;
 *  - a pageable source may be modified or unmapped as soon as the copy
 *    returned (the copy still delivers the old bytes);
 *  - every host function runs exactly once before its stream's
 *    synchronize returns 0; a stream that failed keeps failing;
 *  - pins: once idle, the process's pinned total is what its live pinned
 *    buffers and registrations account for (plus the staging pool, see
 *    api_opts.pool_bytes), and exactly the starting value once every
 *    context is destroyed. Over inproc the total is VmLck of
 *    /proc/self/status (inproc mlock()s its own mappings of pinned
 *    buffers; registrations are charged, not locked), over the module the
 *    driver's debugfs summary.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "libaccel.h"
#include "api_seq.h"

#define NCTX	3
#define NSTR	6
/* Streams NSTR + c are context c's per-thread default stream. */
#define NSTRX	(NSTR + NCTX)
#define NEV	6
#define NBUF	12
#define NSTALE	8
#define NPEND	64
#define NFN	128
#define MAXSTEPS 256
#define MS	1000000ull

/* ---- the input ---------------------------------------------------------- */

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

static uint32_t rd32(struct in *in)
{
	uint32_t v = 0;
	int i;

	for (i = 0; i < 4; i++)
		v |= (uint32_t)rd8(in) << (8 * i);
	return v;
}

/* ---- the model ---------------------------------------------------------- */

struct xctx {
	accel_context *h;
	bool used, live;
	unsigned int born;		/* creation order, for "oldest live" */
};

struct xstr {
	accel_stream_t h;
	int ctx;
	bool used, live, failed;
};

struct xev {
	accel_event_t h;
	int ctx;
	bool used, live, host;
};

enum bk {
	BK_NONE,
	BK_PINNED,		/* accel_host_alloc() */
	BK_DEVICE,		/* accel_malloc(): never dereferenced */
	BK_HEAP,		/* malloc() */
	BK_MMAP,		/* anonymous mapping, guard page after */
	BK_RO,			/* PROT_READ mapping, guard page after */
	BK_PROTNONE,		/* PROT_NONE mapping */
};

static const char *const bk_name[] = {
	"none", "pinned", "device", "heap", "mmap", "ro", "protnone",
};

struct xreg {
	bool live;
	int ctx;
	size_t off, len;
	bool ro;
};

struct xbuf {
	enum bk kind;
	unsigned char *p;
	size_t len, map_len;
	int ctx;			/* PINNED, DEVICE: the owner */
	/*
	 * PINNED with ACCEL_HOST_ALLOC_PORTABLE: another context's copies
	 * use it as pinned memory (imported, read when they run), not staged.
	 */
	bool portable;
	struct xreg reg[2];
	unsigned char *shadow;		/* map_len bytes, or NULL */
	bool tainted;			/* shadow unknown */
	/*
	 * Step of a copy that staged this buffer's source while an earlier
	 * copy on its stream had still to write that source: the shadow
	 * holds the stream-order bytes, which libaccel may not deliver.
	 */
	unsigned int order_step;
	/*
	 * DEVICE from accel_malloc_async() on stream @astr. Copies on another
	 * stream are the caller's to order after the allocation (the pool
	 * may have handed back a block the allocating stream still uses):
	 * the interpreter does not, so such a buffer's bytes are unknown.
	 */
	bool async, racy;
	int astr;
};

/*
 * A registration that outlived the buffer under it (another context's
 * pinned buffer, freed with that context): the module keeps its pages
 * pinned until it is unregistered or its own context goes.
 */
struct xorphan {
	bool live;
	int ctx;
	unsigned char *start;
	size_t span;
};

struct xstale {
	void *p;
	size_t len;
	/* A PROT_NONE mapping holding the hole, so that nothing reuses it. */
	void *hold;
	size_t hold_len;
};

/* A copy queued and not yet known to be retired. */
struct xpend {
	int str;			/* -1: its stream was destroyed */
	int ctx;
	int dbuf, sbuf;			/* -1: not a tracked buffer */
	size_t doff, soff, len;
	bool src_staged, dst_staged;	/* pageable for the stream's ctx */
};

struct xfn {
	int str, ctx;
	bool live;
	atomic_int ran;
	atomic_int status;	/* accel_stream_add_callback: what it learnt */
};

enum cls { C_OK, C_UNSURE, C_BAD };

struct opnd {
	int buf;			/* -1: not a tracked buffer */
	size_t off;
	void *p;
	size_t safe;			/* bytes that may be touched at all */
	bool stale_unmapped;
	const char *what;
};

static struct {
	const struct api_opts *o;
	long page;
	bool in_child, kernel;
	unsigned int born;
	struct xctx ctx[NCTX];
	struct xstr str[NSTRX];
	struct xev ev[NEV];
	struct xbuf buf[NBUF];
	struct xstale stale[NSTALE];
	struct xorphan orphan[NBUF * 2];
	unsigned int nstale;
	struct xpend pend[NPEND];
	unsigned int npend;
	struct xfn fn[NFN];
	unsigned int nfn;
	size_t live_bytes;
	long long pin_base;
	unsigned char *protnone;	/* one PROT_NONE page for the run */
	unsigned int step;
} st;

/* ---- reporting ---------------------------------------------------------- */

static void violation(const char *fmt, ...)
	__attribute__((format(printf, 1, 2), noreturn));

static void violation(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "api_seq: VIOLATION at step %u%s: ", st.step,
		st.in_child ? " (forked child)" : "");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	fflush(stderr);
	abort();
}

static void trace(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void trace(const char *fmt, ...)
{
	va_list ap;

	if (!st.o->trace)
		return;
	fprintf(stderr, "api_seq: %3u%s ", st.step, st.in_child ? " child" : "");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* ---- memory probes that never fault ----------------------------------- */

static size_t page_floor(uintptr_t a)
{
	return a & ~(uintptr_t)(st.page - 1);
}

static size_t page_ceil(uintptr_t a)
{
	return (a + st.page - 1) & ~(uintptr_t)(st.page - 1);
}

/* Every page of [p, p + len) mapped (whatever its protection). */
static bool mapped(const void *p, size_t len)
{
	uintptr_t a = page_floor((uintptr_t)p);
	size_t n = page_ceil((uintptr_t)p + (len ? len : 1)) - a;
	unsigned char vec[64];

	while (n) {
		size_t k = n < 64 * (size_t)st.page ? n : 64 * (size_t)st.page;

		if (mincore((void *)a, k, vec))
			return false;
		a += k;
		n -= k;
	}
	return true;
}

/*
 * The same copy through a pipe, for kernels without process_vm_readv
 * (CONFIG_CROSS_MEMORY_ATTACH off, as in the debug kernel): write(2) from
 * an unreadable source and read(2) into an unwritable destination fail
 * with EFAULT instead of faulting.
 */
static bool pipe_copy(void *dst, const void *src, size_t len)
{
	static int fd[2] = { -1, -1 };
	static pid_t owner;
	char scratch[4096];
	size_t done = 0;

	/* One pipe per process: a forked child must not share the parent's. */
	if (owner != getpid()) {
		if (pipe(fd))
			return false;
		owner = getpid();
	}
	while (done < len) {
		size_t n = len - done < sizeof(scratch) ? len - done : sizeof(scratch);
		ssize_t w = write(fd[1], (const char *)src + done, n);
		ssize_t r;

		if (w != (ssize_t)n) {
			if (w > 0 && read(fd[0], scratch, w) < 0)
				owner = 0;	/* a new pipe next time */
			return false;
		}
		r = read(fd[0], (char *)dst + done, n);
		if (r != (ssize_t)n) {
			/* Drain what the faulting read left in the pipe. */
			if (read(fd[0], scratch, n - (r > 0 ? r : 0)) < 0)
				owner = 0;
			return false;
		}
		done += n;
	}
	return true;
}

/* Copy out of our own address space; false where it would fault. */
static bool peek(void *dst, const void *src, size_t len)
{
	struct iovec l = { dst, len }, r = { (void *)src, len };
	ssize_t n;

	if (!len)
		return true;
	n = process_vm_readv(getpid(), &l, 1, &r, 1, 0);
	if (n < 0 && errno == ENOSYS)
		return pipe_copy(dst, src, len);
	return n == (ssize_t)len;
}

static bool poke(void *dst, const void *src, size_t len)
{
	struct iovec l = { (void *)src, len }, r = { dst, len };
	ssize_t n;

	if (!len)
		return true;
	n = process_vm_writev(getpid(), &l, 1, &r, 1, 0);
	if (n < 0 && errno == ENOSYS)
		return pipe_copy(dst, src, len);
	return n == (ssize_t)len;
}

/* ---- pinned totals ------------------------------------------------------ */

static long long pinned_now(void)
{
	char line[256];
	long long v = -1;
	FILE *f;

	if (st.kernel) {
		f = fopen("/sys/kernel/debug/accelstream/summary", "r");
		if (!f)
			return -1;
		while (fgets(line, sizeof(line), f))
			if (sscanf(line, "pinned_bytes %lld", &v) == 1)
				break;
	} else {
		f = fopen("/proc/self/status", "r");
		if (!f)
			return -1;
		while (fgets(line, sizeof(line), f))
			if (sscanf(line, "VmLck: %lld kB", &v) == 1) {
				v *= 1024;
				break;
			}
	}
	fclose(f);
	return v;
}

/*
 * What the live pinned buffers and registrations account for: over the
 * module the sum of their pinned pages (each region pins its own). Over
 * inproc, a pinned buffer is locked in the transport's own mapping of its
 * memfd, apart from the caller's; registrations are charged to
 * RLIMIT_MEMLOCK without locking the caller's pages (a release must not
 * unlock what the caller or another registration holds): they are not
 * in VmLck.
 */
static long long pinned_expected(void)
{
	long long sum = 0, host = 0;
	int i, j;

	for (i = 0; i < NBUF; i++) {
		struct xbuf *b = &st.buf[i];

		if (b->kind == BK_PINNED)
			host += b->map_len;
		for (j = 0; j < 2; j++) {
			struct xreg *r = &b->reg[j];

			if (r->live)
				sum += page_ceil((uintptr_t)b->p + r->off +
						 r->len) -
				       page_floor((uintptr_t)b->p + r->off);
		}
	}
	if (!st.kernel)
		return host;
	for (i = 0; i < NBUF * 2; i++)
		if (st.orphan[i].live)
			sum += st.orphan[i].span;
	return host + sum;
}

static int live_contexts(void)
{
	int i, n = 0;

	for (i = 0; i < NCTX; i++)
		n += st.ctx[i].live;
	return n;
}

static void check_pins(const char *when)
{
	long long now, exp, slack;
	int i;

	if (st.in_child || st.pin_base < 0)
		return;
	now = pinned_now();
	if (now < 0)
		return;
	now -= st.pin_base;
	exp = pinned_expected();
	trace("pins %s: %lld pinned, %lld expected", when, now, exp);
	slack = (long long)st.o->pool_bytes * live_contexts();
	/* Each other live context may have imported a portable buffer. */
	for (i = 0; i < NBUF; i++)
		if (st.buf[i].kind == BK_PINNED && st.buf[i].portable)
			slack += (long long)st.buf[i].map_len *
				 (live_contexts() - 1);
	if (now > exp + slack)
		violation("%s: %lld bytes pinned, the live buffers and registrations account for %lld (+ %lld of staging pool allowed): pinned memory leaked",
			  when, now, exp, slack);
	/* Over inproc, munlock() of a page shared by two ranges unlocks it. */
	if (st.kernel && now < exp)
		violation("%s: %lld bytes pinned, less than the %lld the live buffers and registrations need",
			  when, now, exp);
}

/* ---- shadows ------------------------------------------------------------ */

static void fill(unsigned char *p, size_t n, uint8_t seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (uint8_t)(seed + i * 7 + (i >> 12));
}

static bool host_visible(const struct xbuf *b)
{
	return b->kind == BK_PINNED || b->kind == BK_HEAP ||
	       b->kind == BK_MMAP || b->kind == BK_RO;
}

static bool ranges_overlap(size_t a, size_t al, size_t b, size_t bl)
{
	return al && bl && a < b + bl && b < a + al;
}

/* Does any queued copy (of any stream, destroyed ones too) touch @b? */
static bool pending_on(int b, bool dst_only)
{
	unsigned int i;

	for (i = 0; i < st.npend; i++) {
		if (st.pend[i].dbuf == b)
			return true;
		if (!dst_only && st.pend[i].sbuf == b)
			return true;
	}
	return false;
}

static void pend_remove(unsigned int i)
{
	st.pend[i] = st.pend[--st.npend];
}

/* A stream's copies retired or were cancelled: what it wrote is unknown. */
static void pend_drop_stream(int s, bool done)
{
	unsigned int i = 0;

	while (i < st.npend) {
		struct xpend *p = &st.pend[i];

		if (p->str != s) {
			i++;
			continue;
		}
		if (!done && p->dbuf >= 0)
			st.buf[p->dbuf].tainted = true;
		if (done) {
			pend_remove(i);
		} else {
			/* Still possibly running: keep it, on no stream. */
			p->str = -1;
			i++;
		}
	}
}

/* ---- helpers on handles ------------------------------------------------- */

static accel_context *ctx_handle(struct in *in, int *idx)
{
	uint8_t v = rd8(in);
	int c = v % (NCTX + 1);

	*idx = -1;
	if (c == NCTX)
		return NULL;	/* the current context */
	*idx = c;
	return st.ctx[c].used ? st.ctx[c].h : NULL;
}

static int ctx_of(accel_context *h)
{
	int i;

	for (i = 0; i < NCTX; i++)
		if (st.ctx[i].live && st.ctx[i].h == h)
			return i;
	return -1;
}

static int current_ctx(void)
{
	accel_context *h = NULL;

	if (accel_context_get_current(&h))
		return -1;
	return ctx_of(h);
}

/* A stream: a slot (live or stale), the default one, or a made-up value. */
static accel_stream_t str_handle(struct in *in, int *idx)
{
	uint8_t v = rd8(in);

	*idx = -1;
	if (v < 200) {
		int s = v % NSTR;

		if (!st.str[s].used)
			return (accel_stream_t)(uintptr_t)0x5a5a5a5a;
		*idx = s;
		return st.str[s].h;
	}
	if (v < 240) {
		int c = current_ctx();

		if (c >= 0)
			*idx = NSTR + c;
		return ACCEL_STREAM_DEFAULT;
	}
	/* Never 0, which is the default stream. */
	return (accel_stream_t)(uintptr_t)(v == 255 ? UINTPTR_MAX :
					   0x100000000ull | rd32(in));
}

static int str_ctx(int s)
{
	if (s < 0)
		return -1;
	if (s >= NSTR)
		return st.ctx[s - NSTR].live ? s - NSTR : -1;
	return st.str[s].live ? st.str[s].ctx : -1;
}

static accel_event_t ev_handle(struct in *in, int *idx)
{
	uint8_t v = rd8(in);

	*idx = -1;
	if (v < 230) {
		int e = v % NEV;

		if (!st.ev[e].used)
			return (accel_event_t)(uintptr_t)0x6b6b6b6b;
		*idx = e;
		return st.ev[e].h;
	}
	return (accel_event_t)(uintptr_t)(v == 255 ? 0 : rd32(in));
}

static const char *err(int r)
{
	static char b[32];

	if (!r)
		return "0";
	snprintf(b, sizeof(b), "%d", r);
	return b;
}

/* ---- sizes -------------------------------------------------------------- */

static size_t pick_size(struct in *in, size_t remaining)
{
	uint8_t v = rd8(in);
	size_t ch = st.o->chunk[v >> 7];
	size_t p = st.page;

	switch (v % 14) {
	case 0:	return 0;
	case 1:	return 1;
	case 2:	return 1 + rd8(in);
	case 3:	return p - 1;
	case 4:	return p;
	case 5:	return p + 1;
	case 6:	return 2 * p + rd8(in);
	case 7:	return remaining;
	case 8:	return remaining + 1;
	case 9:	return remaining ? remaining - 1 : 0;
	case 10: return ch - 1;
	case 11: return ch;
	case 12: return ch + 1;
	default: return 2 * ch + p + 1;
	}
}

static size_t pick_alloc_size(struct in *in)
{
	size_t s = pick_size(in, 64 * 1024);

	if (s > st.o->max_buf)
		s = st.o->max_buf;
	return s;
}

static size_t pick_off(struct in *in, size_t len)
{
	uint8_t v = rd8(in);
	size_t p = st.page;

	switch (v % 8) {
	case 0:	return 0;
	case 1:	return 1;
	case 2:	return p - 1;
	case 3:	return p;
	case 4:	return len ? len - 1 : 0;
	case 5:	return len;
	case 6:	return len ? rd32(in) % len : 0;
	default: return 0;
	}
}

/* ---- buffers ------------------------------------------------------------ */

static int free_buf_slot(void)
{
	int i;

	for (i = 0; i < NBUF; i++)
		if (st.buf[i].kind == BK_NONE)
			return i;
	return -1;
}

static void stale_drop(struct xstale *s)
{
	if (s->hold)
		munmap(s->hold, s->hold_len);
	memset(s, 0, sizeof(*s));
}

/*
 * Remember freed memory for stale-pointer calls, and hold its hole with a
 * PROT_NONE mapping: an mmap() of the library's own (a thread stack, a
 * bounce buffer) must not land there and make the stale pointer valid.
 */
static void stale_push(void *p, size_t len)
{
	struct xstale *s = &st.stale[st.nstale % NSTALE];
	uintptr_t a = page_floor((uintptr_t)p);
	size_t n = page_ceil((uintptr_t)p + (len ? len : 1)) - a;
	void *q;

	stale_drop(s);
	s->p = p;
	s->len = len;
	q = mmap((void *)a, n, PROT_NONE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (q == (void *)a) {
		s->hold = q;
		s->hold_len = n;
	} else if (q != MAP_FAILED) {
		munmap(q, n);
	}
	st.nstale++;
}

static bool has_reg(const struct xbuf *b)
{
	return b->reg[0].live || b->reg[1].live;
}

/* Forget a buffer whose memory is gone (released, unmapped, torn down). */
static void buf_forget(int i, bool push_stale)
{
	struct xbuf *b = &st.buf[i];
	unsigned int k;

	for (k = 0; k < st.npend; k++) {
		if (st.pend[k].dbuf == i)
			st.pend[k].dbuf = -1;
		if (st.pend[k].sbuf == i)
			st.pend[k].sbuf = -1;
	}
	for (k = 0; k < 2; k++) {
		struct xreg *r = &b->reg[k];
		unsigned int o;

		if (!r->live)
			continue;
		for (o = 0; o < NBUF * 2 && st.orphan[o].live; o++)
			;
		if (o == NBUF * 2)
			continue;
		st.orphan[o] = (struct xorphan){
			.live = true, .ctx = r->ctx, .start = b->p + r->off,
			.span = page_ceil((uintptr_t)b->p + r->off + r->len) -
				page_floor((uintptr_t)b->p + r->off) };
	}
	if (push_stale)
		stale_push(b->p, b->len);
	free(b->shadow);
	st.live_bytes -= b->map_len;
	memset(b, 0, sizeof(*b));
}

static bool buf_new(int i, enum bk kind, unsigned char *p, size_t len,
		    size_t map_len, int ctx, uint8_t seed)
{
	struct xbuf *b = &st.buf[i];

	memset(b, 0, sizeof(*b));
	b->kind = kind;
	b->p = p;
	b->len = len;
	b->map_len = map_len;
	b->ctx = ctx;
	st.live_bytes += map_len;
	if (kind == BK_PROTNONE)
		return true;
	b->shadow = calloc(1, map_len ? map_len : 1);
	if (!b->shadow) {
		b->tainted = true;
		return true;
	}
	if (kind == BK_MMAP || kind == BK_HEAP || kind == BK_RO) {
		fill(b->shadow, map_len, seed);
		memcpy(p, b->shadow, map_len);
	}
	return true;
}

/* A buffer whose release failed must be as it was: mapped, bytes intact. */
static void check_intact(int i, const char *call, int r)
{
	struct xbuf *b = &st.buf[i];
	unsigned char *tmp;

	if (!mapped(b->p, b->map_len ? b->map_len : 1))
		violation("%s(%s buffer %d, %p) returned %d, but the buffer is no longer mapped: a call that fails must change nothing",
			  call, bk_name[b->kind], i, (void *)b->p, r);
	if (!host_visible(b) || !b->shadow || b->tainted || pending_on(i, true))
		return;
	tmp = malloc(b->map_len);
	if (!tmp)
		return;
	if (!peek(tmp, b->p, b->map_len))
		violation("%s(%s buffer %d) returned %d, but the buffer is no longer readable",
			  call, bk_name[b->kind], i, r);
	if (memcmp(tmp, b->shadow, b->map_len))
		violation("%s(%s buffer %d) returned %d, but the buffer's bytes changed",
			  call, bk_name[b->kind], i, r);
	if (b->kind != BK_RO && !poke(b->p, tmp, b->map_len))
		violation("%s(%s buffer %d) returned %d, but the buffer is no longer writable",
			  call, bk_name[b->kind], i, r);
	free(tmp);
}

static void op_host_alloc(struct in *in)
{
	int c, i = free_buf_slot();
	accel_context *h = ctx_handle(in, &c);
	size_t len = pick_alloc_size(in);
	uint8_t fv = rd8(in);
	const char *be = getenv("ACCEL_BACKEND");
	/* Portable only where it is imported (the cpu backend). */
	unsigned int flags = fv == 0xff ? 0x80 :
			     (fv & 1) && (!be || !strcmp(be, "cpu")) ?
			     ACCEL_HOST_ALLOC_PORTABLE : 0;
	void *p = NULL;
	int r;

	if (i < 0 || st.live_bytes + len > 4 * st.o->max_buf)
		return;
	r = accel_host_alloc(h, &p, len, flags);
	trace("accel_host_alloc(ctx%d, %zu, %#x) = %s -> buf%d %p", c, len,
	      flags, err(r), i, p);
	if (r)
		return;
	if (!h)
		c = current_ctx();
	if (c < 0 || !st.ctx[c].live || !len)
		violation("accel_host_alloc on a dead context or of 0 bytes returned 0");
	buf_new(i, BK_PINNED, p, len, page_ceil(len), c, 0);
	st.buf[i].portable = flags & ACCEL_HOST_ALLOC_PORTABLE;
	/* Zeroed, and the tail of the last page too. */
	if (st.buf[i].shadow && memcmp(p, st.buf[i].shadow, st.buf[i].map_len))
		violation("accel_host_alloc(%zu) memory is not zeroed", len);
}

static void op_malloc(struct in *in)
{
	int c, i = free_buf_slot();
	accel_context *h = ctx_handle(in, &c);
	size_t len = pick_alloc_size(in);
	void *p = NULL;
	int r;

	if (i < 0 || st.live_bytes + len > 4 * st.o->max_buf)
		return;
	r = accel_malloc(h, &p, len);
	trace("accel_malloc(ctx%d, %zu) = %s -> buf%d %p", c, len, err(r), i, p);
	if (r)
		return;
	if (!h)
		c = current_ctx();
	if (c < 0 || !len)
		violation("accel_malloc on a dead context or of 0 bytes returned 0");
	buf_new(i, BK_DEVICE, p, len, page_ceil(len), c, 0);
	/* Device memory is not promised to be zeroed. */
	st.buf[i].tainted = true;
}

static void op_pageable(struct in *in)
{
	int i = free_buf_slot();
	uint8_t k = rd8(in), seed = rd8(in);
	size_t len = pick_alloc_size(in), map;
	unsigned char *p;

	if (!len)
		len = 1;
	if (i < 0 || st.live_bytes + len > 4 * st.o->max_buf)
		return;
	map = page_ceil(len);
	switch (k % 4) {
	case 0:
		p = malloc(len);
		if (!p)
			return;
		buf_new(i, BK_HEAP, p, len, len, -1, seed);
		break;
	default:
		/* A guard page after: an overrun faults instead of landing
		 * in a neighbour.
		 */
		p = mmap(NULL, map + st.page, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			return;
		mprotect(p + map, st.page, PROT_NONE);
		if (k % 4 == 1) {
			buf_new(i, BK_MMAP, p, len, map, -1, seed);
		} else if (k % 4 == 2) {
			buf_new(i, BK_RO, p, len, map, -1, seed);
			mprotect(p, map, PROT_READ);
		} else {
			mprotect(p, map, PROT_NONE);
			buf_new(i, BK_PROTNONE, p, len, map, -1, seed);
		}
	}
	trace("new %s buffer buf%d %p %zu", bk_name[st.buf[i].kind], i, (void *)p, len);
}

/*
 * Unmap or free a pageable buffer. Legal once no registration is left and
 * no copy may still write it through a bounce buffer (that destination is
 * the caller's to keep); a queued copy may still read it (it was staged) or
 * write it through a deferred-unregistered pin (the pages stay pinned).
 */
static bool staged_dst_pending(int i)
{
	unsigned int k;

	for (k = 0; k < st.npend; k++)
		if (st.pend[k].dbuf == i && st.pend[k].dst_staged)
			return true;
	return false;
}

static void op_pageable_release(struct in *in)
{
	int i = rd8(in) % NBUF;
	struct xbuf *b = &st.buf[i];

	if (b->kind != BK_HEAP && b->kind != BK_MMAP && b->kind != BK_RO &&
	    b->kind != BK_PROTNONE)
		return;
	if (has_reg(b) || staged_dst_pending(i))
		return;
	trace("release %s buffer buf%d %p", bk_name[b->kind], i, (void *)b->p);
	if (b->kind == BK_HEAP) {
		free(b->p);
		buf_forget(i, false);
	} else {
		munmap(b->p, b->map_len + st.page);
		buf_forget(i, true);
	}
}

/*
 * Pinned host buffers are shared mappings: a forked child writing one
 * would change the parent's bytes behind its shadow.
 */
static bool child_shared(int i)
{
	return st.in_child && i >= 0 && st.buf[i].kind == BK_PINNED;
}

/* Host-side writes, where the caller may make them. */
static void op_scribble(struct in *in)
{
	int i = rd8(in) % NBUF;
	struct xbuf *b = &st.buf[i];
	size_t off = pick_off(in, b->map_len), len;
	uint8_t seed = rd8(in);
	unsigned int k;

	if (b->kind != BK_PINNED && b->kind != BK_HEAP && b->kind != BK_MMAP)
		return;
	if (child_shared(i))
		return;
	for (k = 0; k < st.npend; k++) {
		if (st.pend[k].dbuf == i)
			return;
		if (st.pend[k].sbuf == i && !st.pend[k].src_staged)
			return;
	}
	if (off > b->map_len)
		off = b->map_len;
	len = pick_size(in, b->map_len - off);
	if (len > b->map_len - off)
		len = b->map_len - off;
	trace("scribble buf%d [%zu, +%zu) seed %u", i, off, len, seed);
	if (!b->shadow)
		return;
	fill(b->shadow + off, len, seed);
	memcpy(b->p + off, b->shadow + off, len);
	if (!off && len == b->map_len) {
		b->tainted = false;
		b->order_step = 0;
	}
}

/* A pointer for a release call: a base, an interior, another kind, junk. */
static void *release_ptr(struct in *in, int *idx)
{
	uint8_t v = rd8(in);
	int i = v % NBUF;

	*idx = -1;
	switch (v >> 5) {
	case 0: case 1: case 2: case 3: case 4:
		if (st.buf[i].kind == BK_NONE)
			return st.nstale ? st.stale[v % (st.nstale < NSTALE ? st.nstale : NSTALE)].p : NULL;
		*idx = i;
		return st.buf[i].p;
	case 5:
		if (st.buf[i].kind == BK_NONE)
			return NULL;
		*idx = i;
		return st.buf[i].p + 1 + rd8(in) % (st.buf[i].map_len ? st.buf[i].map_len : 1);
	case 6:
		return st.nstale ? st.stale[v % (st.nstale < NSTALE ? st.nstale : NSTALE)].p : (void *)0x1000;
	default:
		return v & 1 ? NULL : (void *)st.protnone;
	}
}

/* The tracked buffer holding @p (a stale pointer may be reused memory). */
static int buf_at(const void *p)
{
	const unsigned char *q = p;
	int i;

	for (i = 0; i < NBUF; i++) {
		const struct xbuf *b = &st.buf[i];

		if (b->kind != BK_NONE && q >= b->p &&
		    q < b->p + (b->map_len ? b->map_len : 1))
			return i;
	}
	return -1;
}

static void op_release(struct in *in, enum bk kind)
{
	const char *call = kind == BK_PINNED ? "accel_host_free" : "accel_free";
	int i, r;
	void *p = release_ptr(in, &i);
	struct xbuf *b;
	bool base;

	if (i < 0)
		i = buf_at(p);
	b = i >= 0 ? &st.buf[i] : NULL;
	base = b && p == b->p && b->kind == kind;

	/*
	 * Freeing memory one has registered, or that another context's copy
	 * still fills through a bounce buffer, is the caller's bug.
	 */
	if (b && (has_reg(b) || staged_dst_pending(i)))
		return;
	if (st.in_child && st.o->skip_child_release)
		return;
	r = kind == BK_PINNED ? accel_host_free(p) : accel_free(p);
	trace("%s(%p%s) = %s", call, p, b ? (base ? " base" : " other") : "",
	      err(r));
	if (!r) {
		if (!base)
			violation("%s(%p) returned 0, but it is no %s buffer's base",
				  call, p, bk_name[kind]);
		buf_forget(i, true);
		return;
	}
	if (b)
		check_intact(i, call, r);
}

/* accel_malloc_async() or accel_free_async() on a stream. */
static void op_pool(struct in *in)
{
	uint8_t v = rd8(in);
	int s, c, i, r;
	accel_stream_t h = str_handle(in, &s);
	struct xbuf *b;
	void *p = NULL;
	size_t len;
	bool base;

	c = str_ctx(s);
	if (!(v & 1)) {
		i = free_buf_slot();
		len = pick_alloc_size(in);
		if (i < 0 || st.live_bytes + len > 4 * st.o->max_buf)
			return;
		r = accel_malloc_async(h, &p, len);
		trace("accel_malloc_async(str%d, %zu) = %s -> buf%d %p", s, len,
		      err(r), i, p);
		if (r)
			return;
		if (c < 0 || !len)
			violation("accel_malloc_async on a dead stream or of 0 bytes returned 0");
		if (s < NSTR && st.str[s].failed)
			violation("accel_malloc_async on failed stream %d returned 0 (errors are sticky)", s);
		if (buf_at(p) >= 0)
			violation("accel_malloc_async returned %p, inside live buffer %d",
				  p, buf_at(p));
		buf_new(i, BK_DEVICE, p, len, (len + 255) & ~(size_t)255, c, 0);
		st.buf[i].tainted = true;
		st.buf[i].async = true;
		st.buf[i].astr = s;
		return;
	}
	p = release_ptr(in, &i);
	if (i < 0)
		i = buf_at(p);
	b = i >= 0 ? &st.buf[i] : NULL;
	base = b && p == b->p && b->async && b->ctx == c;
	if (b && staged_dst_pending(i))
		return;
	r = accel_free_async(h, p);
	trace("accel_free_async(str%d, %p%s) = %s", s, p,
	      b ? (base ? " base" : " other") : "", err(r));
	if (!r) {
		if (!base)
			violation("accel_free_async(%p) returned 0, but it is no accel_malloc_async() buffer's base in the stream's context",
				  p);
		if (s < NSTR && st.str[s].failed)
			violation("accel_free_async on failed stream %d returned 0 (errors are sticky)", s);
		/* Its address is the pool's, handed out again: not stale. */
		buf_forget(i, false);
		return;
	}
	if (b)
		check_intact(i, "accel_free_async", r);
}

/* ---- registration ------------------------------------------------------- */

static bool reg_start_taken(const void *p)
{
	int i, j;

	for (i = 0; i < NBUF; i++)
		for (j = 0; j < 2; j++)
			if (st.buf[i].reg[j].live &&
			    st.buf[i].p + st.buf[i].reg[j].off == p)
				return true;
	for (i = 0; i < NBUF * 2; i++)
		if (st.orphan[i].live && st.orphan[i].start == p)
			return true;
	return false;
}

static void op_register(struct in *in)
{
	int c, i = rd8(in) % NBUF, j, r;
	accel_context *h = ctx_handle(in, &c);
	struct xbuf *b = &st.buf[i];
	uint8_t fv = rd8(in);
	unsigned int flags = fv % 4 == 1 ? ACCEL_HOST_REGISTER_READONLY :
			     fv % 4 == 3 ? fv : 0;
	size_t off, len;
	void *p;
	bool must_fail;

	if (b->kind == BK_NONE)
		return;
	off = pick_off(in, b->map_len);
	if (off > b->map_len)
		off = b->map_len;
	len = pick_size(in, b->map_len - off);
	/* Past a heap buffer's end is someone else's memory. */
	if (b->kind == BK_HEAP && len > b->len - (off < b->len ? off : b->len))
		len = off < b->len ? b->len - off : 0;
	/* Past a guard page is a neighbour's memory; no guard after others. */
	if ((b->kind == BK_MMAP || b->kind == BK_RO || b->kind == BK_PROTNONE) &&
	    len > b->map_len - off + st.page)
		len = b->map_len - off + st.page;
	else if (b->kind == BK_PINNED || b->kind == BK_DEVICE)
		len = len > b->map_len - off ? b->map_len - off : len;
	p = b->p + off;
	if (reg_start_taken(p))
		return;
	for (j = 0; j < 2 && b->reg[j].live; j++)
		;
	if (j == 2)
		return;
	r = accel_host_register(h, p, len, flags);
	trace("accel_host_register(ctx%d, buf%d+%zu %p, %zu, %#x) = %s", c, i,
	      off, p, len, flags, err(r));
	must_fail = b->kind == BK_PROTNONE || b->kind == BK_DEVICE ||
		    (b->kind == BK_RO && !(flags & ACCEL_HOST_REGISTER_READONLY)) ||
		    ((b->kind == BK_MMAP || b->kind == BK_RO) &&
		     off + len > b->map_len) ||
		    (flags & ~ACCEL_HOST_REGISTER_READONLY);
	if (!r && len && must_fail)
		violation("accel_host_register(%s buffer %d + %zu, %zu bytes, flags %#x) returned 0 for memory that cannot be pinned so",
			  bk_name[b->kind], i, off, len, flags);
	if (r)
		return;
	if (!h)
		c = current_ctx();
	b->reg[j] = (struct xreg){ .live = true, .ctx = c, .off = off,
				   .len = len,
				   .ro = flags & ACCEL_HOST_REGISTER_READONLY };
}

static void op_unregister(struct in *in)
{
	uint8_t fv = rd8(in);
	unsigned int flags = fv % 3 == 1 ? ACCEL_HOST_UNREGISTER_DEFERRED :
			     fv % 3 == 2 && fv > 0xf0 ? fv : 0;
	int i, j, r, bi = -1, bj = -1;
	void *p;
	uint8_t v = rd8(in);

	/* Mostly a registered range's start. */
	p = NULL;
	for (i = 0; i < NBUF * 2; i++) {
		int k = (v + i) % (NBUF * 2);

		if (st.buf[k / 2].reg[k % 2].live) {
			p = st.buf[k / 2].p + st.buf[k / 2].reg[k % 2].off;
			break;
		}
	}
	if (!p || v >= 200)
		p = release_ptr(in, &i);
	for (i = 0; i < NBUF; i++)
		for (j = 0; j < 2; j++)
			if (st.buf[i].reg[j].live &&
			    st.buf[i].p + st.buf[i].reg[j].off == p) {
				bi = i;
				bj = j;
			}
	if (st.in_child && st.o->skip_child_release)
		return;
	r = accel_host_unregister(p, flags);
	trace("accel_host_unregister(%p, %#x) = %s%s", p, flags, err(r),
	      bi >= 0 ? "" : " (not a registered start)");
	if (!r && bi < 0) {
		for (i = 0; i < NBUF * 2; i++)
			if (st.orphan[i].live && st.orphan[i].start == p) {
				st.orphan[i].live = false;
				return;
			}
	}
	if (!r) {
		if (bi < 0)
			violation("accel_host_unregister(%p) returned 0, but no range starts there", p);
		st.buf[bi].reg[bj].live = false;
		return;
	}
	if (bi >= 0)
		check_intact(bi, "accel_host_unregister", r);
}

/* ---- copies ------------------------------------------------------------- */

/*
 * An offset inside the buffer: past a pinned, device or heap buffer's end
 * is some other memory; an anonymous mapping's page tail and its guard
 * page are still its own.
 */
static size_t clamp_off(const struct xbuf *b, size_t off)
{
	if (b->kind == BK_PINNED || b->kind == BK_DEVICE || b->kind == BK_HEAP)
		return off < b->len ? off : b->len - 1;
	return off < b->map_len ? off : b->map_len;
}

static void pick_opnd(struct in *in, struct opnd *o, const struct opnd *other,
		      int c)
{
	uint8_t v = rd8(in);
	int i;

	memset(o, 0, sizeof(*o));
	o->buf = -1;
	o->safe = SIZE_MAX;
	if (v < 190) {
		i = v % NBUF;
		if (st.buf[i].kind != BK_NONE) {
			struct xbuf *b = &st.buf[i];

			o->buf = i;
			o->off = pick_off(in, b->map_len);
			o->off = clamp_off(b, o->off);
			o->p = b->p + o->off;
			/* A region's bounds are the library's to check. */
			if (b->kind == BK_HEAP ||
			    (b->kind == BK_PINNED && b->ctx != c))
				o->safe = b->len > o->off ? b->len - o->off : 0;
			else if (b->kind != BK_DEVICE && b->kind != BK_PINNED)
				o->safe = b->map_len + st.page - o->off;
			o->what = bk_name[b->kind];
			return;
		}
	}
	if (v >= 250 && other && other->buf >= 0) {
		/* The other operand's buffer: overlap, or a neighbour range. */
		*o = *other;
		o->off = pick_off(in, st.buf[o->buf].map_len);
		o->off = clamp_off(&st.buf[o->buf], o->off);
		o->p = st.buf[o->buf].p + o->off;
		o->safe = other->safe == SIZE_MAX ? SIZE_MAX :
			  other->safe + other->off > o->off ?
			  other->safe + other->off - o->off : 0;
		return;
	}
	switch (v % 5) {
	case 0:
		if (st.nstale) {
			struct xstale *s = &st.stale[v % (st.nstale < NSTALE ? st.nstale : NSTALE)];

			o->p = s->p;
			o->stale_unmapped = !mapped(s->p, s->len);
			/* Reused memory is someone's: never write it. */
			o->safe = o->stale_unmapped ? s->len : 0;
			o->what = "stale";
			break;
		}
		/* fall through */
	case 1:
		o->p = (void *)0x1000;
		o->what = "unmapped";
		break;
	case 2:
		o->p = st.protnone;
		o->what = "protnone";
		break;
	case 3:
		o->p = (void *)(uintptr_t)0xdead000000000000ull;
		o->what = "noncanonical";
		break;
	default:
		o->p = NULL;
		o->what = "null";
	}
}

static const struct xreg *reg_in(const struct xbuf *b, int c, size_t off)
{
	int j;

	for (j = 0; j < 2; j++)
		if (b->reg[j].live && b->reg[j].ctx == c && off >= b->reg[j].off &&
		    off < b->reg[j].off + b->reg[j].len)
			return &b->reg[j];
	return NULL;
}

/*
 * How a copy on context @c must treat @o: C_BAD a pointer no copy may use,
 * C_OK memory the copy may use; *staged: pageable for @c (bounced).
 */
static enum cls classify(const struct opnd *o, int c, size_t n, bool write,
			 bool *staged)
{
	const struct xbuf *b;
	const struct xreg *rg;

	*staged = false;
	if (o->buf < 0)
		return o->stale_unmapped || !o->what || strcmp(o->what, "stale") ?
		       C_BAD : C_UNSURE;
	b = &st.buf[o->buf];
	if ((b->kind == BK_PINNED || b->kind == BK_DEVICE) && b->ctx == c)
		return o->off + n <= b->len ? C_OK : C_BAD;
	/*
	 * Another context's portable memory: imported, so read when the
	 * copy runs (if the import falls back to staging, the bytes are only
	 * known sooner). Its bounds are the allocation's.
	 */
	if (b->kind == BK_PINNED && b->portable)
		return o->off + n <= b->len ? C_OK : C_BAD;
	if (b->kind == BK_DEVICE || b->kind == BK_PROTNONE)
		return C_BAD;
	rg = reg_in(b, c, o->off);
	if (rg) {
		if (o->off + n > rg->off + rg->len)
			return C_BAD;
		if (write && (rg->ro || b->kind == BK_RO))
			return C_BAD;
		return C_OK;
	}
	*staged = true;
	if (write && b->kind == BK_RO)
		return C_BAD;
	if (b->kind == BK_MMAP || b->kind == BK_RO)
		return o->off + n <= b->map_len ? C_OK : C_BAD;
	return C_OK;
}

/* The bytes a buffer's copies and readback cover. */
static size_t cover_len(const struct xbuf *b)
{
	return b->kind == BK_MMAP || b->kind == BK_RO ? b->map_len : b->len;
}

static size_t opnd_len(const struct opnd *o)
{
	return o->buf >= 0 ? st.buf[o->buf].map_len - o->off : 0;
}

struct copy {
	int s, c;
	struct opnd d, sr;
	size_t n;
	enum accel_memcpy_kind kind;
	enum cls dc, sc;
	bool dstaged, sstaged;
	unsigned char *before;
};

static void copy_pick(struct in *in, struct copy *cp)
{
	uint8_t k;

	cp->c = str_ctx(cp->s);
	pick_opnd(in, &cp->d, NULL, cp->c);
	pick_opnd(in, &cp->sr, &cp->d, cp->c);
	cp->n = pick_size(in, opnd_len(&cp->d) < opnd_len(&cp->sr) ?
			  opnd_len(&cp->d) : opnd_len(&cp->sr));
	if (cp->n > cp->d.safe)
		cp->n = cp->d.safe;
	if (cp->n > cp->sr.safe)
		cp->n = cp->sr.safe;
	k = rd8(in);
	cp->kind = k < 250 ? (enum accel_memcpy_kind)(k % 5) :
		   (enum accel_memcpy_kind)(k == 255 ? -1 : k);
}

static void copy_classify(struct copy *cp)
{
	cp->c = str_ctx(cp->s);
	cp->dc = classify(&cp->d, cp->c, cp->n, true, &cp->dstaged);
	cp->sc = classify(&cp->sr, cp->c, cp->n, false, &cp->sstaged);
}

/* Snapshot the destination's bytes, to see that a failed copy left them. */
static void copy_before(struct copy *cp)
{
	struct xbuf *b;
	size_t n;

	cp->before = NULL;
	if (cp->d.buf < 0)
		return;
	b = &st.buf[cp->d.buf];
	n = cp->n < b->map_len - cp->d.off ? cp->n : b->map_len - cp->d.off;
	if (!host_visible(b) || !n || b->tainted || pending_on(cp->d.buf, true))
		return;
	cp->before = malloc(n);
	if (cp->before && !peek(cp->before, cp->d.p, n)) {
		free(cp->before);
		cp->before = NULL;
	}
}

static void copy_failed(struct copy *cp, int r, const char *call)
{
	struct xbuf *b;
	unsigned char *now;
	size_t n;

	if (!cp->before)
		return;
	b = &st.buf[cp->d.buf];
	n = cp->n < b->map_len - cp->d.off ? cp->n : b->map_len - cp->d.off;
	now = malloc(n);
	if (now && peek(now, cp->d.p, n) && memcmp(now, cp->before, n))
		violation("%s into %s buffer %d returned %d, but its destination bytes changed",
			  call, bk_name[b->kind], cp->d.buf, r);
	free(now);
	free(cp->before);
	cp->before = NULL;
}

/* A copy was queued: update the shadows in stream order, or give up. */
static void copy_queued(struct copy *cp, const char *call, bool check)
{
	struct xbuf *db, *sb;
	struct xpend *p;
	unsigned int k, order = 0;
	bool taint = false;

	free(cp->before);
	cp->before = NULL;
	if (check && cp->n && (cp->dc == C_BAD || cp->sc == C_BAD))
		violation("%s(stream %d, dst %s %p, src %s %p, %zu, kind %d) returned 0 for a pointer no copy may use (%s)",
			  call, cp->s, cp->d.what, cp->d.p, cp->sr.what,
			  cp->sr.p, cp->n, (int)cp->kind,
			  cp->dc == C_BAD ? "destination" : "source");
	if (check && cp->s >= 0 && cp->s < NSTR && st.str[cp->s].failed)
		violation("%s on stream %d returned 0 after the stream failed (errors are sticky)",
			  call, cp->s);
	if (cp->c < 0 && check)
		violation("%s on a destroyed stream or context returned 0", call);
	if (!cp->n || cp->d.buf < 0)
		return;
	db = &st.buf[cp->d.buf];
	sb = cp->sr.buf >= 0 ? &st.buf[cp->sr.buf] : NULL;
	if (!sb || !sb->shadow || sb->tainted || !db->shadow)
		taint = true;
	if (sb == db && ranges_overlap(cp->d.off, cp->n, cp->sr.off, cp->n))
		taint = true;
	/* Unordered against another stream's queued copy: order unknown. */
	for (k = 0; k < st.npend; k++) {
		struct xpend *q = &st.pend[k];

		if (q->str == cp->s) {
			/* Staged now, though written by earlier work later. */
			if (cp->sstaged && sb && q->dbuf == cp->sr.buf &&
			    ranges_overlap(q->doff, q->len, cp->sr.off, cp->n)) {
				if (st.o->skip_staged_order)
					taint = true;
				else
					order = st.step;
			}
			continue;
		}
		if ((q->dbuf == cp->d.buf &&
		     ranges_overlap(q->doff, q->len, cp->d.off, cp->n)) ||
		    (q->sbuf == cp->d.buf &&
		     ranges_overlap(q->soff, q->len, cp->d.off, cp->n)) ||
		    (sb && q->dbuf == cp->sr.buf &&
		     ranges_overlap(q->doff, q->len, cp->sr.off, cp->n))) {
			taint = true;
			if (q->dbuf >= 0)
				st.buf[q->dbuf].tainted = true;
		}
	}
	if (db->async && (db->racy || cp->s != db->astr)) {
		db->racy = true;
		taint = true;
	}
	if (sb && sb->async && cp->s != sb->astr)
		taint = true;
	if (!taint && (cp->d.off + cp->n > db->map_len ||
		       cp->sr.off + cp->n > sb->map_len))
		taint = true;
	if (taint) {
		db->tainted = true;
	} else {
		if (order || (sb && sb->order_step))
			db->order_step = order ? order : sb->order_step;
		memmove(db->shadow + cp->d.off, sb->shadow + cp->sr.off, cp->n);
		/* Written whole, in stream order after anything before. */
		if (!cp->d.off && cp->n >= cover_len(db)) {
			db->tainted = false;
			if (!order && !(sb && sb->order_step))
				db->order_step = 0;
		}
	}
	if (st.npend == NPEND) {
		/* Too much to follow: forget the oldest, unknown now. */
		if (st.pend[0].dbuf >= 0)
			st.buf[st.pend[0].dbuf].tainted = true;
		pend_remove(0);
	}
	p = &st.pend[st.npend++];
	*p = (struct xpend){ .str = cp->s, .ctx = cp->c, .dbuf = cp->d.buf,
			     .sbuf = cp->sr.buf, .doff = cp->d.off,
			     .soff = cp->sr.off, .len = cp->n,
			     .src_staged = cp->sstaged,
			     .dst_staged = cp->dstaged };
}

/*
 * ACCEL_FUZZ_SKIP=unreadable-src: never hand a copy a source it cannot
 * read (issue 11 item 1), to look past that bug while it is open.
 */
static bool skip_known(const struct copy *cp)
{
	return st.o->skip_unreadable_src && cp->n && cp->sc == C_BAD;
}

static void op_copy(struct in *in)
{
	struct copy cp;
	accel_stream_t s = str_handle(in, &cp.s);
	int r;

	copy_pick(in, &cp);
	if (child_shared(cp.d.buf))
		return;
	copy_classify(&cp);
	if (skip_known(&cp))
		return;
	copy_before(&cp);
	trace("accel_memcpy_async(str%d %p, %s%d+%zu %p, %s%d+%zu %p, %zu, %d) ...",
	      cp.s, (void *)s, cp.d.what ? cp.d.what : "?", cp.d.buf, cp.d.off, cp.d.p,
	      cp.sr.what ? cp.sr.what : "?", cp.sr.buf, cp.sr.off, cp.sr.p,
	      cp.n, (int)cp.kind);
	r = accel_memcpy_async(s, cp.d.p, cp.sr.p, cp.n, cp.kind);
	trace("  = %s (dst %s, src %s)", err(r),
	      cp.dc == C_BAD ? "bad" : cp.dc == C_OK ? "ok" : "unsure",
	      cp.sc == C_BAD ? "bad" : cp.sc == C_OK ? "ok" : "unsure");
	if (r) {
		copy_failed(&cp, r, "accel_memcpy_async");
		return;
	}
	copy_queued(&cp, "accel_memcpy_async", true);
}

/*
 * accel_memset_async() (8, 16, 32-bit) or accel_memcpy_2d_async() on the
 * operands a copy would take. A fill's bytes, and a 2D copy's when its
 * rows have gaps, are not modelled: the destination becomes unknown. A 2D
 * copy without gaps is a contiguous copy, and its bytes are checked.
 */
static void op_fill_2d(struct in *in)
{
	struct copy cp;
	accel_stream_t s = str_handle(in, &cp.s);
	uint8_t how = rd8(in);
	size_t h = 1 + how % 4, w, pitch;
	uint32_t v = (uint32_t)rd8(in) * 0x01010101u;
	const char *call;
	int r;

	copy_pick(in, &cp);
	if (child_shared(cp.d.buf))
		return;
	if (how & 0x30) {
		/* 2D: @h rows of @w bytes inside the first cp.n bytes. */
		if (cp.n < h)
			h = 1;
		w = cp.n / h;
		pitch = (how & 0x40) && h > 1 ? w + (cp.n - w * h) / (h - 1) : w;
		cp.n = w ? (h - 1) * pitch + w : 0;
		copy_classify(&cp);
		if (skip_known(&cp))
			return;
		copy_before(&cp);
		call = "accel_memcpy_2d_async";
		trace("%s(str%d, %p, %zu, %p, %zu, %zu, %zu, %d) ...", call, cp.s,
		      cp.d.p, pitch, cp.sr.p, pitch, w, h, (int)cp.kind);
		r = accel_memcpy_2d_async(s, cp.d.p, pitch, cp.sr.p, pitch, w, h,
					  cp.kind);
		if (pitch != w && !r)
			cp.sr.buf = -1;		/* gaps: not modelled */
	} else {
		unsigned int width = 1u << (how >> 6 & 3);

		if (width == 8)
			width = 1;
		cp.n -= cp.n % width;
		copy_classify(&cp);
		cp.sc = C_OK;			/* no source */
		copy_before(&cp);
		call = "accel_memset_async";
		trace("%s(str%d, %p, %#x, %zu, width %u) ...", call, cp.s, cp.d.p,
		      v, cp.n, width);
		if (width == 1)
			r = accel_memset_async(s, cp.d.p, (int)(v & 0xff), cp.n);
		else if (width == 2)
			r = accel_memset_d16_async(s, cp.d.p, (uint16_t)v, cp.n / 2);
		else
			r = accel_memset_d32_async(s, cp.d.p, v, cp.n / 4);
		if (!r)
			cp.sr.buf = -1;		/* a fill: not modelled */
	}
	trace("  = %s", err(r));
	if (r) {
		copy_failed(&cp, r, call);
		return;
	}
	copy_queued(&cp, call, true);
}

static void op_batch(struct in *in)
{
	struct copy cp[3];
	void *dsts[3];
	const void *srcs[3];
	size_t sizes[3];
	accel_stream_t s;
	int si, i, n = 1 + rd8(in) % 3, r;
	enum accel_memcpy_kind kind;

	s = str_handle(in, &si);
	for (i = 0; i < n; i++) {
		cp[i].s = si;
		copy_pick(in, &cp[i]);
		if (child_shared(cp[i].d.buf))
			return;
		copy_classify(&cp[i]);
		if (skip_known(&cp[i]))
			return;
		trace("  batch[%d]: %s%d+%zu %p <- %s%d+%zu %p, %zu", i,
		      cp[i].d.what ? cp[i].d.what : "?", cp[i].d.buf, cp[i].d.off,
		      cp[i].d.p, cp[i].sr.what ? cp[i].sr.what : "?",
		      cp[i].sr.buf, cp[i].sr.off, cp[i].sr.p, cp[i].n);
		cp[i].before = NULL;
		dsts[i] = cp[i].d.p;
		srcs[i] = cp[i].sr.p;
		sizes[i] = cp[i].n;
	}
	kind = cp[0].kind;
	r = accel_memcpy_batch_async(s, dsts, srcs, sizes, n, kind);
	trace("accel_memcpy_batch_async(str%d, %d copies, kind %d) = %s", si,
	      n, (int)kind, err(r));
	for (i = 0; i < n; i++) {
		cp[i].kind = kind;
		if (r) {
			/* Some may be queued (pageable ones go one by one). */
			copy_queued(&cp[i], "accel_memcpy_batch_async", false);
			if (cp[i].d.buf >= 0 && cp[i].n)
				st.buf[cp[i].d.buf].tainted = true;
		} else {
			copy_queued(&cp[i], "accel_memcpy_batch_async", true);
		}
	}
}

/* ---- contexts and streams ---------------------------------------------- */

/* Everything of context @c died with it. */
static void ctx_gone(int c)
{
	int i, j;

	for (i = 0; i < NSTRX; i++)
		if (str_ctx(i) == c || (i < NSTR && st.str[i].live &&
					st.str[i].ctx == c)) {
			pend_drop_stream(i, false);
			if (i < NSTR)
				st.str[i].live = false;
		}
	/* Destroyed with the context: nothing of it runs any more. */
	for (i = 0; i < (int)st.npend;) {
		if (st.pend[i].ctx == c)
			pend_remove(i);
		else
			i++;
	}
	for (i = 0; i < NEV; i++)
		if (st.ev[i].live && st.ev[i].ctx == c)
			st.ev[i].live = false;
	for (i = 0; i < NBUF * 2; i++)
		if (st.orphan[i].live && st.orphan[i].ctx == c)
			st.orphan[i].live = false;
	for (i = 0; i < NFN; i++)
		if (st.fn[i].ctx == c)
			st.fn[i].live = false;
	for (i = 0; i < NBUF; i++) {
		struct xbuf *b = &st.buf[i];

		for (j = 0; j < 2; j++)
			if (b->reg[j].live && b->reg[j].ctx == c)
				b->reg[j].live = false;
		if ((b->kind == BK_PINNED || b->kind == BK_DEVICE) &&
		    b->ctx == c)
			buf_forget(i, true);
	}
}

static void op_ctx_create(struct in *in)
{
	int c = rd8(in) % NCTX;
	unsigned int flags = rd8(in) == 0xff ? 0x4 : 0;
	accel_context *h = NULL;
	int r;

	if (st.ctx[c].live)
		return;
	r = accel_context_create(&h, flags);
	trace("accel_context_create(ctx%d, %#x) = %s", c, flags, err(r));
	if (r) {
		if (!flags && r != -EPERM && r != -EMFILE && r != -ENOMEM)
			violation("accel_context_create() = %d", r);
		return;
	}
	st.ctx[c] = (struct xctx){ .h = h, .used = true, .live = true,
				   .born = st.born++ };
	st.str[NSTR + c] = (struct xstr){ .used = true, .live = true, .ctx = c };
}

/*
 * Destroying a context frees its pinned buffers at once; another
 * context's copy still filling one through a bounce buffer would write
 * freed memory, the caller's bug as with any freed destination.
 */
static bool ctx_buffers_filled(int c)
{
	int i;

	for (i = 0; i < NBUF; i++)
		if (st.buf[i].kind == BK_PINNED && st.buf[i].ctx == c &&
		    staged_dst_pending(i))
			return true;
	return false;
}

static void op_ctx_destroy(struct in *in)
{
	int c, r;
	accel_context *h = ctx_handle(in, &c);

	if (c < 0 || !st.ctx[c].used)
		return;
	if (st.in_child && st.o->skip_child_destroy)
		return;
	if (ctx_buffers_filled(c))
		return;
	r = accel_context_destroy(h);
	trace("accel_context_destroy(ctx%d) = %s", c, err(r));
	if (!r && !st.ctx[c].live)
		violation("accel_context_destroy() of a destroyed context returned 0");
	if (!r) {
		ctx_gone(c);
		st.ctx[c].live = false;
		st.str[NSTR + c].live = false;
	} else if (st.ctx[c].live && !st.in_child) {
		violation("accel_context_destroy() of a live context = %d", r);
	}
}

static void op_set_current(struct in *in)
{
	int c, r;
	accel_context *h = ctx_handle(in, &c), *g = NULL;

	r = accel_context_set_current(h);
	trace("accel_context_set_current(ctx%d) = %s", c, err(r));
	if (!r && c >= 0 && st.ctx[c].used && !st.ctx[c].live)
		violation("accel_context_set_current() of a destroyed context returned 0");
	r = accel_context_get_current(&g);
	if (!r && g && ctx_of(g) < 0)
		violation("accel_context_get_current() gave a context that is not live");
}

static void op_stream_create(struct in *in)
{
	int c, s, r, prio;
	accel_context *h = ctx_handle(in, &c);
	uint8_t fv = rd8(in), pv = rd8(in);
	unsigned int flags = fv % 3 == 1 ? ACCEL_STREAM_NON_BLOCKING :
			     fv % 3 == 2 && fv > 0xf0 ? fv : 0;
	accel_stream_t sh = NULL;

	prio = pv % 4 == 0 ? 0 : pv % 4 == 1 ? -1 : pv % 4 == 2 ? 1 :
	       (pv & 0x80 ? INT32_MIN : INT32_MAX);
	for (s = 0; s < NSTR && st.str[s].live; s++)
		;
	if (s == NSTR)
		return;
	r = accel_stream_create(h, flags, prio, &sh);
	trace("accel_stream_create(ctx%d, %#x, %d) = %s -> str%d", c, flags,
	      prio, err(r), s);
	if (r)
		return;
	if (!h)
		c = current_ctx();
	if (c < 0 || !st.ctx[c].live)
		violation("accel_stream_create() on a dead context returned 0");
	if (flags & ~ACCEL_STREAM_NON_BLOCKING)
		violation("accel_stream_create() with unknown flags %#x returned 0", flags);
	st.str[s] = (struct xstr){ .h = sh, .ctx = c, .used = true,
				   .live = true };
}

static void op_stream_destroy(struct in *in)
{
	int s, r;
	accel_stream_t h = str_handle(in, &s);

	if (s >= NSTR)
		return;
	r = accel_stream_destroy(h);
	trace("accel_stream_destroy(str%d) = %s", s, err(r));
	if (!r && (s < 0 || !st.str[s].live))
		violation("accel_stream_destroy() of a destroyed stream returned 0");
	if (!r) {
		int i;

		pend_drop_stream(s, false);
		for (i = 0; i < NFN; i++)
			if (st.fn[i].live && st.fn[i].str == s)
				st.fn[i].live = false;
		st.str[s].live = false;
	}
}

/* Host functions ran exactly once, for a stream that synchronized. */
static void fns_done(int s)
{
	int i;

	for (i = 0; i < NFN; i++) {
		if (!st.fn[i].live || st.fn[i].str != s)
			continue;
		if (atomic_load(&st.fn[i].ran) != 1)
			violation("stream %d synchronized, but host function %d ran %d times",
				  s, i, atomic_load(&st.fn[i].ran));
		if (atomic_load(&st.fn[i].status))
			violation("stream %d synchronized, but callback %d learnt status %d",
				  s, i, atomic_load(&st.fn[i].status));
		st.fn[i].live = false;
	}
}

static void sync_result(int s, int r)
{
	if (s < 0 || str_ctx(s) < 0)
		return;
	if (!r) {
		pend_drop_stream(s, true);
		fns_done(s);
	} else if (r == -EIO) {
		pend_drop_stream(s, false);
		st.str[s].failed = true;
	}
}

static void op_stream_sync(struct in *in)
{
	int s, r;
	accel_stream_t h = str_handle(in, &s);
	uint8_t t = rd8(in);

	if (t & 1) {
		r = accel_stream_query(h);
		trace("accel_stream_query(str%d) = %s", s, err(r));
		if (!r)
			sync_result(s, 0);
		else if (r == -EIO)
			sync_result(s, r);
	} else {
		r = accel_stream_synchronize(h, t & 2 ? 0 : MS);
		trace("accel_stream_synchronize(str%d) = %s", s, err(r));
		sync_result(s, r);
	}
	if (!r && str_ctx(s) < 0 && h != ACCEL_STREAM_DEFAULT)
		violation("stream query/synchronize of a destroyed stream returned 0");
}

static void host_fn(void *arg)
{
	atomic_fetch_add(&((struct xfn *)arg)->ran, 1);
}

static void host_cb(accel_stream_t stream, int status, void *arg)
{
	struct xfn *f = arg;

	(void)stream;
	atomic_store(&f->status, status);
	atomic_fetch_add(&f->ran, 1);
}

/* accel_launch_host_func, or (odd byte) accel_stream_add_callback. */
static void op_host_func(struct in *in)
{
	int s, r, f = st.nfn;
	accel_stream_t h = str_handle(in, &s);
	uint8_t b = rd8(in);
	bool null_fn = b >= 0xfe, cb = b & 1;

	if (f >= NFN)
		return;
	st.fn[f].str = s;
	st.fn[f].ctx = str_ctx(s);
	atomic_store(&st.fn[f].ran, 0);
	atomic_store(&st.fn[f].status, 0);
	if (cb)
		r = accel_stream_add_callback(h, null_fn ? NULL : host_cb,
					      &st.fn[f], 0);
	else
		r = accel_launch_host_func(h, null_fn ? NULL : host_fn,
					   &st.fn[f]);
	trace("%s(str%d%s) = %s", cb ? "accel_stream_add_callback" :
	      "accel_launch_host_func", s, null_fn ? ", NULL" : "", err(r));
	if (r)
		return;
	if (null_fn)
		violation("accel_launch_host_func() with no function returned 0");
	if (str_ctx(s) < 0)
		violation("accel_launch_host_func() on a destroyed stream returned 0");
	if (s >= 0 && s < NSTR && st.str[s].failed)
		violation("accel_launch_host_func() on a failed stream returned 0");
	st.fn[f].live = true;
	st.nfn++;
}

/* ---- events ------------------------------------------------------------- */

static void op_event_create(struct in *in)
{
	int c, e, r;
	accel_context *h = ctx_handle(in, &c);
	uint8_t fv = rd8(in);
	unsigned int flags = fv % 4 == 1 ? ACCEL_EVENT_DISABLE_TIMING :
			     fv % 4 == 2 ? ACCEL_EVENT_HOST :
			     fv % 4 == 3 && fv > 0xf0 ? fv : 0;
	accel_event_t eh = NULL;

	/* Waiters on it sleep at once: any kind of event may ask. */
	if (fv % 4 != 3 && (fv & 0x40))
		flags |= ACCEL_EVENT_BLOCKING_SYNC;

	for (e = 0; e < NEV && st.ev[e].live; e++)
		;
	if (e == NEV)
		return;
	r = accel_event_create(h, flags, &eh);
	trace("accel_event_create(ctx%d, %#x) = %s -> ev%d", c, flags, err(r), e);
	if (r)
		return;
	if (!h)
		c = current_ctx();
	if (c < 0)
		violation("accel_event_create() on a dead context returned 0");
	st.ev[e] = (struct xev){ .h = eh, .ctx = c, .used = true, .live = true,
				 .host = flags & ACCEL_EVENT_HOST };
}

static void op_event_destroy(struct in *in)
{
	int e, r;
	accel_event_t h = ev_handle(in, &e);

	r = accel_event_destroy(h);
	trace("accel_event_destroy(ev%d) = %s", e, err(r));
	if (!r && (e < 0 || !st.ev[e].live))
		violation("accel_event_destroy() of a destroyed event returned 0");
	if (!r)
		st.ev[e].live = false;
}

/*
 * An event's point out as a descriptor and into a context again
 * (accel_event_export_fd, accel_event_import_fd): the import is waited on
 * briefly and destroyed, the descriptor closed.
 */
static void op_event_fd(struct in *in, accel_event_t h, int e, uint8_t v)
{
	accel_event_t imp;
	accel_context *ch;
	int c, r, fd = -1;

	ch = ctx_handle(in, &c);
	r = accel_event_export_fd(h, &fd);
	trace("accel_event_export_fd(ev%d) = %s", e, err(r));
	if (r)
		return;
	if (e < 0 || !st.ev[e].live)
		violation("accel_event_export_fd() of a destroyed event returned 0");
	if (fd < 0)
		violation("accel_event_export_fd() returned 0 and descriptor %d", fd);
	r = accel_event_import_fd(ch, fd, &imp);
	trace("accel_event_import_fd(ctx%d) = %s", c, err(r));
	if (!r) {
		r = accel_event_synchronize(imp, v & 0x80 ? 0 : MS);
		trace("accel_event_synchronize(import) = %s", err(r));
		r = accel_event_destroy(imp);
		if (r)
			violation("accel_event_destroy() of a fresh import returned %d", r);
	}
	close(fd);
}

/*
 * Context-wide calls: the completion descriptor (the same one each time),
 * context synchronize, the device and pool queries, a pool trim.
 */
static void op_context_misc(struct in *in, uint8_t v)
{
	struct accel_device_prop prop;
	size_t a, b;
	accel_context *ch;
	int c, r, fd;

	ch = ctx_handle(in, &c);
	fd = accel_context_get_fd(ch);
	trace("accel_context_get_fd(ctx%d) = %d", c, fd);
	if (fd >= 0 && accel_context_get_fd(ch) != fd)
		violation("accel_context_get_fd() gave another descriptor than %d",
			  fd);
	r = accel_context_synchronize(ch, v & 0x80 ? 0 : MS);
	trace("accel_context_synchronize(ctx%d) = %s", c, err(r));
	r = accel_device_get_properties(ch, &prop);
	trace("accel_device_get_properties(ctx%d) = %s", c, err(r));
	r = accel_mem_get_info(ch, &a, &b);
	trace("accel_mem_get_info(ctx%d) = %s", c, err(r));
	if (!r && a > b)
		violation("accel_mem_get_info(): %zu bytes free of %zu", a, b);
	r = accel_mem_pool_get_usage(ch, &a, &b);
	trace("accel_mem_pool_get_usage(ctx%d) = %s", c, err(r));
	if (!r && b > a)
		violation("accel_mem_pool_get_usage(): %zu bytes used of %zu reserved",
			  b, a);
	if (v & 0x40) {
		r = accel_mem_pool_trim_to(ch, 0);
		trace("accel_mem_pool_trim_to(ctx%d, 0) = %s", c, err(r));
	}
}

static void op_event_misc(struct in *in)
{
	int e, e2, s, r;
	accel_event_t h = ev_handle(in, &e), h2;
	accel_stream_t sh;
	uint8_t v = rd8(in);
	float ms;

	switch (v % 7) {
	case 0:
		sh = str_handle(in, &s);
		r = accel_event_record(h, sh);
		trace("accel_event_record(ev%d, str%d) = %s", e, s, err(r));
		if (!r && (e < 0 || !st.ev[e].live || str_ctx(s) < 0))
			violation("accel_event_record() with a destroyed event or stream returned 0");
		break;
	case 1:
		r = accel_event_query(h);
		trace("accel_event_query(ev%d) = %s", e, err(r));
		break;
	case 2:
		r = accel_event_synchronize(h, v & 0x80 ? 0 : MS);
		trace("accel_event_synchronize(ev%d) = %s", e, err(r));
		break;
	case 3:
		sh = str_handle(in, &s);
		r = accel_stream_wait_event(sh, h, v > 0xf0 ? v : 0);
		trace("accel_stream_wait_event(str%d, ev%d) = %s", s, e, err(r));
		if (!r && (str_ctx(s) < 0 || e < 0 || !st.ev[e].live))
			violation("accel_stream_wait_event() with a destroyed event or stream returned 0");
		break;
	case 4:
		h2 = ev_handle(in, &e2);
		r = accel_event_elapsed_time(v & 0x80 ? NULL : &ms, h, h2);
		trace("accel_event_elapsed_time(ev%d, ev%d) = %s", e, e2, err(r));
		break;
	case 5:
		op_event_fd(in, h, e, v);
		break;
	default:
		op_context_misc(in, v);
	}
}

static void op_event_wait(struct in *in)
{
	unsigned int k = 1 + rd8(in) % 4, i, first = 0, count;
	accel_event_t *arr = malloc(k * sizeof(*arr));
	uint8_t v = rd8(in);
	int idx, r;

	if (!arr)
		return;
	for (i = 0; i < k; i++)
		arr[i] = ev_handle(in, &idx);
	/* Never more than the array, but counts past any limit. */
	count = v % 8 == 6 ? 0 : v >= 0xfe ? (v & 1 ? UINT32_MAX : 1u << 20) : k;
	if (count > k && st.o->skip_huge_wait)
		count = k;
	r = accel_event_wait(arr, count, v & 1 ? ACCEL_WAIT_ALL : ACCEL_WAIT_ANY,
			     v & 2 ? 0 : MS, v & 4 ? NULL : &first);
	trace("accel_event_wait(%u events, count %u) = %s", k, count, err(r));
	if (!r && (count > k || !count))
		violation("accel_event_wait(count %u) returned 0", count);
	free(arr);
}

static void op_signal(struct in *in)
{
	int e, r;
	accel_event_t h = ev_handle(in, &e);
	uint8_t v = rd8(in);
	uint64_t val = v % 4 == 0 ? 1 : v % 4 == 1 ? 2 : v % 4 == 2 ? UINT64_MAX : rd8(in);
	unsigned int flags = v == 0xff ? ACCEL_EVENT_SIGNAL_ERROR :
			     v == 0xfe ? 0x40 : 0;

	r = accel_event_signal(h, val, flags);
	trace("accel_event_signal(ev%d, %" PRIu64 ", %#x) = %s", e, val, flags,
	      err(r));
}

static void op_wait_value(struct in *in)
{
	int e, s, r;
	accel_stream_t sh = str_handle(in, &s);
	accel_event_t h = ev_handle(in, &e);
	uint64_t val = 1 + rd8(in) % 3;

	r = accel_stream_wait_value(sh, h, val, 0);
	trace("accel_stream_wait_value(str%d, ev%d, %" PRIu64 ") = %s", s, e,
	      val, err(r));
	if (!r && (str_ctx(s) < 0 || e < 0 || !st.ev[e].live))
		violation("accel_stream_wait_value() with a destroyed event or stream returned 0");
}

/*
 * A stream-ordered write: raises the counter when the stream reaches it,
 * which may open the gates of other streams; a plain event is -EINVAL.
 */
static void op_write_value(struct in *in)
{
	int e, s, r;
	accel_stream_t sh = str_handle(in, &s);
	accel_event_t h = ev_handle(in, &e);
	uint8_t v = rd8(in);
	uint64_t val = v % 4 == 3 ? UINT64_MAX : v % 4;
	unsigned int flags = v == 0xfe ? 0x2 : 0;

	r = accel_stream_write_value(sh, h, val, flags);
	trace("accel_stream_write_value(str%d, ev%d, %" PRIu64 ", %#x) = %s",
	      s, e, val, flags, err(r));
	if (!r && (str_ctx(s) < 0 || e < 0 || !st.ev[e].live))
		violation("accel_stream_write_value() with a destroyed event or stream returned 0");
	if (!r && flags)
		violation("accel_stream_write_value() with unknown flags returned 0");
	if (!r && e >= 0 && !st.ev[e].host)
		violation("accel_stream_write_value() on a plain event returned 0");
}

/* ---- verify: quiesce, then every shadow and the pins ------------------- */

static void open_gates(void)
{
	int e;

	for (e = 0; e < NEV; e++)
		if (st.ev[e].live && st.ev[e].host)
			accel_event_signal(st.ev[e].h, UINT64_MAX, 0);
}

static void check_device(int i)
{
	struct xbuf *b = &st.buf[i];
	accel_stream_t s;
	unsigned char *tmp;
	int r;

	if (!st.ctx[b->ctx].live ||
	    accel_stream_create(st.ctx[b->ctx].h, 0, 0, &s))
		return;
	tmp = malloc(b->len);
	if (tmp) {
		memset(tmp, 0, b->len);
		r = accel_memcpy_async(s, tmp, b->p, b->len, ACCEL_MEMCPY_D2H);
		if (!r)
			r = accel_stream_synchronize(s, 10000 * MS);
		if (!r && memcmp(tmp, b->shadow, b->len)) {
			size_t k = 0;

			while (tmp[k] == b->shadow[k])
				k++;
			violation("device buffer %d (%zu bytes): byte %zu is %#x after synchronize, copies put %#x there",
				  i, b->len, k, tmp[k], b->shadow[k]);
		}
		free(tmp);
	}
	accel_stream_destroy(s);
}

static void verify(void)
{
	bool quiet = true;
	int s, i, cur;

	open_gates();
	cur = current_ctx();
	for (s = 0; s < NSTRX; s++) {
		int r;

		if (str_ctx(s) < 0)
			continue;
		if (s < NSTR) {
			r = accel_stream_synchronize(st.str[s].h, 10000 * MS);
		} else {
			if (accel_context_set_current(st.ctx[s - NSTR].h))
				continue;
			r = accel_stream_synchronize(ACCEL_STREAM_DEFAULT,
						     10000 * MS);
		}
		trace("verify: synchronize str%d = %s", s, err(r));
		if (r && r != -EIO)
			quiet = false;
		sync_result(s, r);
		if (r == -EIO && s >= NSTR)
			quiet = false;
	}
	if (cur >= 0)
		accel_context_set_current(st.ctx[cur].h);
	for (i = 0; i < NBUF; i++) {
		struct xbuf *b = &st.buf[i];

		if (!b->shadow || b->tainted || pending_on(i, true))
			continue;
		if (b->kind == BK_DEVICE) {
			check_device(i);
			continue;
		}
		if (!host_visible(b))
			continue;
		if (memcmp(b->p, b->shadow, b->map_len)) {
			size_t k = 0;

			while (b->p[k] == b->shadow[k])
				k++;
			if (b->order_step)
				violation("%s buffer %d (%zu bytes): byte %zu is %#x after synchronize, stream order puts %#x there: the copy at step %u staged its pageable source before an earlier copy on the same stream wrote it",
					  bk_name[b->kind], i, b->len, k,
					  b->p[k], b->shadow[k], b->order_step);
			violation("%s buffer %d (%zu bytes): byte %zu is %#x after synchronize, copies and writes put %#x there",
				  bk_name[b->kind], i, b->len, k, b->p[k],
				  b->shadow[k]);
		}
	}
	if (quiet && !st.npend)
		check_pins("idle after synchronize");
}

/* ---- fork ---------------------------------------------------------------- */

static void run_steps(struct in *in);

static void op_fork(struct in *in)
{
	size_t n = 1 + rd8(in) % 48;
	struct in sub = { in->p, n < in->n ? n : in->n };
	int status, waited = 0;
	pid_t pid;

	in->p += sub.n;
	in->n -= sub.n;
	if (st.o->no_fork || st.in_child)
		return;
	fflush(stderr);
	pid = fork();
	if (pid < 0)
		return;
	if (!pid) {
		st.in_child = true;
		run_steps(&sub);
		fflush(stderr);
		_exit(0);
	}
	trace("fork() -> child %d, %zu bytes of steps", (int)pid, sub.n);
	while (waitpid(pid, &status, WNOHANG) == 0) {
		if (++waited > 10000) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			violation("the forked child hung for 10 s in libaccel calls");
		}
		usleep(1000);
	}
	if (WIFSIGNALED(status))
		violation("the forked child died of signal %d (%s) in libaccel calls",
			  WTERMSIG(status), strsignal(WTERMSIG(status)));
	if (WEXITSTATUS(status))
		violation("the forked child exited %d (a sanitizer report or a violation above)",
			  WEXITSTATUS(status));
}

/* ---- the interpreter ----------------------------------------------------- */

static const char *const op_name[32] = {
	"context_create", "context_create", "context_destroy",
	"stream_create", "stream_create", "stream_destroy", "host_alloc",
	"host_alloc", "host_free", "malloc", "free", "pageable",
	"pageable", "pageable_release", "host_register", "host_unregister",
	"memcpy_async", "memcpy_async", "memcpy_async", "memset/2d_async",
	"memcpy_batch_async", "event_create", "event_destroy",
	"event/event_fd/context", "event/event_fd/context", "event_wait", "event_signal", "stream_wait_value",
	"launch_host_func", "stream_sync", "malloc_async/free_async",
	"verify/fork/current/write_value",
};

static void step(struct in *in)
{
	uint8_t op = rd8(in);

	trace("> %s", op_name[op % 32]);

	switch (op % 32) {
	case 0: case 1:		op_ctx_create(in); break;
	case 2:			op_ctx_destroy(in); break;
	case 3: case 4:		op_stream_create(in); break;
	case 5:			op_stream_destroy(in); break;
	case 6: case 7:		op_host_alloc(in); break;
	case 8:			op_release(in, BK_PINNED); break;
	case 9:			op_malloc(in); break;
	case 10:		op_release(in, BK_DEVICE); break;
	case 11: case 12:	op_pageable(in); break;
	case 13:		op_pageable_release(in); break;
	case 14:		op_register(in); break;
	case 15:		op_unregister(in); break;
	case 16: case 17: case 18: op_copy(in); break;
	case 19:		op_fill_2d(in); break;
	case 20:		op_batch(in); break;
	case 21:		op_event_create(in); break;
	case 22:		op_event_destroy(in); break;
	case 23: case 24:	op_event_misc(in); break;
	case 25:		op_event_wait(in); break;
	case 26:		op_signal(in); break;
	case 27:		op_wait_value(in); break;
	case 28:		op_host_func(in); break;
	case 29:		op_stream_sync(in); break;
	case 30:		op_pool(in); break;
	default:
		switch (op >> 5) {
		case 0: case 1: case 2: verify(); break;
		case 3: case 4:	op_fork(in); break;
		case 5:		op_set_current(in); break;
		default:	op_write_value(in);
		}
	}
}

static void run_steps(struct in *in)
{
	unsigned int n;

	for (n = 0; in->n && n < MAXSTEPS; n++) {
		st.step++;
		step(in);
	}
}

static void teardown(void)
{
	int c, i;

	open_gates();
	verify();
	for (c = 0; c < NCTX; c++) {
		int r;

		if (!st.ctx[c].live)
			continue;
		r = accel_context_destroy(st.ctx[c].h);
		if (r)
			violation("teardown: accel_context_destroy(ctx%d) = %d", c, r);
		ctx_gone(c);
		st.ctx[c].live = false;
	}
	for (i = 0; i < NBUF; i++) {
		struct xbuf *b = &st.buf[i];

		b->reg[0].live = b->reg[1].live = false;
		if (b->kind == BK_HEAP)
			free(b->p);
		else if (b->kind != BK_NONE)
			munmap(b->p, b->map_len + st.page);
		if (b->kind != BK_NONE)
			buf_forget(i, false);
	}
	check_pins("every context destroyed");
	for (i = 0; i < NSTALE; i++)
		stale_drop(&st.stale[i]);
	munmap(st.protnone, st.page);
}

static size_t env_size(const char *name, size_t def)
{
	const char *v = getenv(name);

	return v && *v ? strtoull(v, NULL, 0) : def;
}

void api_opts_init(struct api_opts *o)
{
	const char *skip;

	memset(o, 0, sizeof(*o));
	o->chunk[0] = env_size("ACCEL_FUZZ_CHUNK", 4u << 20);
	o->chunk[1] = env_size("ACCEL_FUZZ_CHUNK2", 8u << 20);
	o->pool_bytes = env_size("ACCEL_FUZZ_POOL_BYTES", 0);
	o->max_buf = env_size("ACCEL_FUZZ_MAX_BUF", 2 * o->chunk[1] + 2 * 4096);
	o->trace = !!env_size("ACCEL_FUZZ_TRACE", 0);
	o->no_fork = !!env_size("ACCEL_FUZZ_NO_FORK", 0);
	skip = getenv("ACCEL_FUZZ_SKIP");
	if (skip) {
		o->skip_unreadable_src = !!strstr(skip, "unreadable-src");
		o->skip_child_release = !!strstr(skip, "child-release");
		o->skip_child_destroy = !!strstr(skip, "child-destroy");
		o->skip_huge_wait = !!strstr(skip, "huge-wait");
		o->skip_staged_order = !!strstr(skip, "staged-order");
	}
}

int api_seq_run(const uint8_t *data, size_t size, const struct api_opts *o)
{
	struct in in = { data, size };
	const char *t = getenv("ACCEL_TRANSPORT");

	memset(&st, 0, sizeof(st));
	st.o = o;
	st.page = sysconf(_SC_PAGESIZE);
	st.kernel = !t || strcmp(t, "inproc");
	st.protnone = mmap(NULL, st.page, PROT_NONE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (st.protnone == MAP_FAILED)
		return 0;
	st.pin_base = pinned_now();
	run_steps(&in);
	teardown();
	return 0;
}
