// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * ioctl_fuzz: a seeded, multi-threaded fuzzer of /dev/accelstream.
 *
 * Several worker threads share several open files. Each step picks a file
 * and an operation: every ACCEL_IOC_* command with arguments built from
 * live handles, stale (destroyed) handles or random numbers, valid-looking
 * descriptors with a mutation now and then, random sizes, offsets, flags
 * and reserved fields, and bad command numbers. Real memory is registered:
 * malloc'ed buffers, anonymous mappings (some read-only), and mappings of
 * the driver's own host allocations. User events gate streams and get
 * signalled later. Between calls the fuzzer closes and reopens files,
 * unmaps memory, forks children that must get EACCES on the inherited
 * file, and SIGKILLs child processes that keep their own context busy.
 *
 * Every errno is checked against the ones the uapi header documents for
 * the command, and a few invariants of the outputs are checked. When the
 * run ends every file is closed; the driver's debugfs summary must come
 * back to zero and the FOLL_PIN counters must balance.
 *
 * Usage: ioctl_fuzz [--seconds N] [--seed S] [--threads T] [--fds F]
 *                   [--no-fork] [--no-huge] [--verbose]
 * Output: "# fuzz: ioctls=N per_second=R seed=S" and TAP.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "accelstream.h"
#include "as_check.h"

#define MAX_FDS		8
#define MAX_OBJS	192
#define MAX_MAPS	48
#define MAX_STALE	64
#define PAGE		4096ul

/* ---- random numbers: one xorshift state per thread -------------------- */

struct rng {
	uint64_t s;
};

static inline uint64_t rnd(struct rng *r)
{
	uint64_t x = r->s;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	r->s = x;
	return x * 0x2545F4914F6CDD1Dull;
}

static inline uint32_t below(struct rng *r, uint32_t n)
{
	return n ? (uint32_t)(rnd(r) % n) : 0;
}

static inline bool chance(struct rng *r, unsigned int one_in)
{
	return below(r, one_in) == 0;
}

/* An "interesting" 64-bit number: edges, powers of two, small, random. */
static uint64_t interesting64(struct rng *r)
{
	static const uint64_t edge[] = {
		0, 1, 2, 7, 8, 63, 64, 4095, 4096, 4097, 65536, 1ull << 20,
		1ull << 31, 1ull << 32, (1ull << 32) - 1, 1ull << 46,
		(1ull << 46) + 1, 1ull << 47, 1ull << 63, ~0ull, ~0ull - 1,
		0x7fffffffffffffffull, 0xffff800000000000ull,
	};

	switch (below(r, 4)) {
	case 0:
		return edge[below(r, sizeof(edge) / sizeof(edge[0]))];
	case 1:
		return 1ull << below(r, 64);
	case 2:
		return below(r, 256);
	default:
		return rnd(r);
	}
}

/* ---- per-file state -------------------------------------------------- */

enum { O_REGION = 1, O_STREAM, O_EVENT, O_UEVENT };
enum { K_USER, K_HOST, K_DEVICE };

struct obj {
	uint32_t h;
	uint8_t type;
	uint8_t kind;		/* regions */
	uint32_t flags;
	uint64_t size;		/* regions */
	uint64_t mmap_off;	/* host allocations */
	uint64_t value;		/* user events: last value signalled */
};

enum { M_MALLOC, M_ANON, M_ANON_RO, M_HOST };

struct map {
	void *p;
	size_t len;
	int kind;
};

struct slot {
	pthread_rwlock_t rw;	/* read: using fd; write: close/reopen */
	int fd;
	pthread_mutex_t mu;	/* the pools below */
	struct obj objs[MAX_OBJS];
	int nobjs;
	uint32_t stale[MAX_STALE];
	int nstale;
	uint32_t maxh;
	struct map maps[MAX_MAPS];
	int nmaps;
	bool executor;
};

static struct slot slots[MAX_FDS];
static int nslots = 3;
static int nthreads = 4;
static unsigned int seconds = 10;
static uint64_t seed;
static bool no_fork, no_huge, verbose;
static atomic_bool stop;

/* Never freed before the end: safe to register at any offset at any time. */
#define NMALLOC 4
static void *malloc_buf[NMALLOC];
static size_t malloc_len[NMALLOC];

/* ---- statistics and checks ------------------------------------------ */

enum {
	C_GET_INFO, C_REGISTER, C_ALLOC, C_RELEASE, C_SCREATE, C_SDESTROY,
	C_SQUERY, C_SSYNC, C_SUBMIT, C_ECREATE, C_EDESTROY, C_ERECORD,
	C_EQUERY, C_ELAPSED, C_SIGNAL, C_WAIT, C_EXEC, C_BAD, C_READ, C_MMAP,
	C_QUERY, C_SETDEV, C_XEXPORT, C_XIMPORT, C_NR
};

static const char *const cname[C_NR] = {
	"GET_INFO", "MEM_REGISTER", "MEM_ALLOC", "MEM_RELEASE", "STREAM_CREATE",
	"STREAM_DESTROY", "STREAM_QUERY", "STREAM_SYNC", "SUBMIT",
	"EVENT_CREATE", "EVENT_DESTROY", "EVENT_RECORD", "EVENT_QUERY",
	"EVENT_ELAPSED", "EVENT_SIGNAL", "WAIT", "EXEC_*", "bad-cmd", "read",
	"mmap", "QUERY", "SET_DEVICE", "EVENT_EXPORT", "EVENT_IMPORT",
};

#define E(x) (1ull << (x))
/* The errnos the uapi header documents for each command (EFAULT always). */
static const uint64_t allowed[C_NR] = {
	[C_GET_INFO] = E(EINVAL),
	[C_REGISTER] = E(EINVAL) | E(EEXIST) | E(ENOMEM) | E(ENOSPC),
	[C_ALLOC] = E(EINVAL) | E(ENOMEM) | E(ENOSPC),
	[C_RELEASE] = E(ENOENT) | E(EINVAL) | E(EBUSY),
	[C_SCREATE] = E(EINVAL) | E(ENOSPC) | E(ENOMEM),
	[C_SDESTROY] = E(ENOENT) | E(EINVAL),
	[C_SQUERY] = E(ENOENT) | E(EINVAL),
	[C_SSYNC] = E(ENOENT) | E(EINVAL) | E(ETIME) | E(EIO),
	[C_SUBMIT] = E(ENOENT) | E(EINVAL) | E(EPERM) | E(EAGAIN) | E(EIO) |
		     E(ENOMEM) | E(ENXIO),
	[C_ECREATE] = E(EINVAL) | E(ENOSPC) | E(ENOMEM),
	[C_EDESTROY] = E(ENOENT) | E(EINVAL) | E(EBUSY),
	[C_ERECORD] = E(ENOENT) | E(EINVAL) | E(EPERM) | E(EAGAIN) | E(EIO) |
		      E(ENOMEM),
	[C_EQUERY] = E(ENOENT) | E(EINVAL),
	[C_ELAPSED] = E(ENOENT) | E(EINVAL) | E(EAGAIN) | E(EIO),
	[C_SIGNAL] = E(ENOENT) | E(EINVAL),
	[C_WAIT] = E(ENOENT) | E(EINVAL) | E(ETIME) | E(EIO) | E(ENOMEM),
	[C_EXEC] = E(ENXIO) | E(EBUSY) | E(EINVAL) | E(ETIME) | E(ENOENT) |
		   E(EIO) | E(ENOMEM) | E(ENOTTY),
	[C_BAD] = E(ENOTTY),
	[C_READ] = E(EAGAIN) | E(EINVAL),
	[C_MMAP] = E(EINVAL) | E(ENOENT) | E(ENOMEM) | E(EACCES) | E(EPERM) |
		   E(EBUSY),
	[C_QUERY] = E(EINVAL) | E(ENOENT) | E(ENOMEM),
	[C_SETDEV] = E(EINVAL) | E(ENODEV),
	[C_XEXPORT] = E(ENOENT) | E(EINVAL) | E(ENOSPC) | E(EMFILE) |
		      E(ENFILE) | E(ENOMEM),
	[C_XIMPORT] = E(EBADF) | E(EINVAL) | E(ENOSPC) | E(ENOMEM),
};

static atomic_ullong n_calls, n_ok;
static atomic_ullong n_per[C_NR], n_err[C_NR][160];
static atomic_uint n_unexpected, n_invariant, n_child_bad, n_children,
	n_killed, n_reopen, n_munmap;
static pthread_mutex_t log_mu = PTHREAD_MUTEX_INITIALIZER;

static void note(const char *kind, const char *fmt, ...)
{
	static int printed;
	va_list ap;

	pthread_mutex_lock(&log_mu);
	if (printed++ < 40) {
		printf("# %s: ", kind);
		va_start(ap, fmt);
		vprintf(fmt, ap);
		va_end(ap);
		printf("\n");
		fflush(stdout);
	}
	pthread_mutex_unlock(&log_mu);
}

/* Account one call's result; return it (0 or -errno). */
static int account(int c, long ret, int err)
{
	atomic_fetch_add(&n_calls, 1);
	atomic_fetch_add(&n_per[c], 1);
	if (ret >= 0) {
		atomic_fetch_add(&n_ok, 1);
		return 0;
	}
	if (err > 0 && err < 160)
		atomic_fetch_add(&n_err[c][err], 1);
	if (err != EFAULT && !(err > 0 && err < 64 && (allowed[c] & E(err)))) {
		atomic_fetch_add(&n_unexpected, 1);
		note("unexpected errno", "%s -> %d (%s)", cname[c], err,
		     strerror(err));
	}
	return -err;
}

static int xioctl(int c, int fd, unsigned long cmd, void *arg)
{
	long r = ioctl(fd, cmd, arg);

	return account(c, r, r < 0 ? errno : 0);
}

/* ---- pools ---------------------------------------------------------- */

static void pool_add(struct slot *s, const struct obj *o)
{
	pthread_mutex_lock(&s->mu);
	if (o->h > s->maxh)
		s->maxh = o->h;
	if (s->nobjs < MAX_OBJS)
		s->objs[s->nobjs++] = *o;
	pthread_mutex_unlock(&s->mu);
}

/* Copy out a random object of @type (0: any); false when none. */
static bool pool_pick(struct slot *s, struct rng *r, int type, struct obj *out)
{
	int i, n = 0, idx[MAX_OBJS];

	pthread_mutex_lock(&s->mu);
	for (i = 0; i < s->nobjs; i++)
		if (!type || s->objs[i].type == type)
			idx[n++] = i;
	if (n)
		*out = s->objs[idx[below(r, n)]];
	pthread_mutex_unlock(&s->mu);
	return n > 0;
}

/* Forget handle @h (now stale). */
static void pool_kill(struct slot *s, uint32_t h)
{
	int i;

	pthread_mutex_lock(&s->mu);
	for (i = 0; i < s->nobjs; i++) {
		if (s->objs[i].h == h) {
			s->objs[i] = s->objs[--s->nobjs];
			break;
		}
	}
	if (s->nstale < MAX_STALE)
		s->stale[s->nstale++] = h;
	else
		s->stale[h % MAX_STALE] = h;
	pthread_mutex_unlock(&s->mu);
}

static void pool_set_value(struct slot *s, uint32_t h, uint64_t v)
{
	int i;

	pthread_mutex_lock(&s->mu);
	for (i = 0; i < s->nobjs; i++)
		if (s->objs[i].h == h && s->objs[i].value < v)
			s->objs[i].value = v;
	pthread_mutex_unlock(&s->mu);
}

/*
 * A handle to use where an object of @type is expected: mostly a live one,
 * sometimes a stale one, one of another type, 0, or a random number.
 */
static uint32_t any_handle(struct slot *s, struct rng *r, int type,
			   struct obj *o)
{
	struct obj tmp;
	uint32_t h = 0;

	if (!o)
		o = &tmp;
	memset(o, 0, sizeof(*o));
	switch (below(r, 16)) {
	case 0:
		pthread_mutex_lock(&s->mu);
		if (s->nstale)
			h = s->stale[below(r, s->nstale)];
		pthread_mutex_unlock(&s->mu);
		return h;
	case 1:
		if (pool_pick(s, r, 0, o))
			return o->h;
		return 0;
	case 2:
		return chance(r, 2) ? 0 : (uint32_t)interesting64(r);
	case 3:
		return s->maxh + 1 + below(r, 3);
	default:
		if (pool_pick(s, r, type, o))
			return o->h;
		if (type == O_EVENT && pool_pick(s, r, O_UEVENT, o))
			return o->h;
		return below(r, 64);
	}
}

/* ---- memory to register --------------------------------------------- */

static void map_add(struct slot *s, void *p, size_t len, int kind)
{
	void *drop = NULL;
	size_t dlen = 0;

	pthread_mutex_lock(&s->mu);
	if (s->nmaps < MAX_MAPS) {
		s->maps[s->nmaps++] = (struct map){ p, len, kind };
	} else {
		drop = p;
		dlen = len;
	}
	pthread_mutex_unlock(&s->mu);
	if (drop)
		munmap(drop, dlen);
}

/* A range of real memory: [*addr, *addr + *len). */
static void pick_range(struct slot *s, struct rng *r, __u64 *addr,
		       __u64 *len, int *kind)
{
	uint64_t base, blen;
	int k;

	pthread_mutex_lock(&s->mu);
	if (s->nmaps && !chance(r, 3)) {
		struct map *m = &s->maps[below(r, s->nmaps)];

		base = (uint64_t)(uintptr_t)m->p;
		blen = m->len;
		k = m->kind;
	} else {
		int i = below(r, NMALLOC);

		base = (uint64_t)(uintptr_t)malloc_buf[i];
		blen = malloc_len[i];
		k = M_MALLOC;
	}
	pthread_mutex_unlock(&s->mu);

	*kind = k;
	switch (below(r, 8)) {
	case 0:		/* the whole thing */
		*addr = base;
		*len = blen;
		break;
	case 1:		/* unaligned, crossing pages */
		*addr = base + below(r, (uint32_t)blen);
		*len = 1 + below(r, (uint32_t)(base + blen - *addr));
		break;
	case 2:		/* running off the end */
		*addr = base + below(r, (uint32_t)blen);
		*len = blen + below(r, 3 * PAGE);
		break;
	default:	/* some pages inside */
		*addr = base + PAGE * below(r, (uint32_t)(blen / PAGE));
		*len = PAGE * (1 + below(r, 4)) - below(r, 2) * below(r, PAGE);
		if (*addr + *len > base + blen)
			*len = base + blen - *addr;
		if (!*len)
			*len = 1;
		break;
	}
}

static void op_new_map(struct slot *s, struct rng *r)
{
	size_t len = PAGE * (1 + below(r, 32));
	int ro = chance(r, 3);
	char *p;

	p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return;
	if (chance(r, 2))
		memset(p, (int)below(r, 256), len);	/* else zero pages */
	if (ro)
		mprotect(p, len, PROT_READ);
	map_add(s, p, len, ro ? M_ANON_RO : M_ANON);
}

static void op_munmap(struct slot *s, struct rng *r)
{
	struct map m = { 0 };
	int i;

	pthread_mutex_lock(&s->mu);
	if (s->nmaps) {
		i = below(r, s->nmaps);
		m = s->maps[i];
		if (chance(r, 3) && m.len > PAGE) {
			/*
			 * Punch a hole and keep the rest listed: ranges across
			 * the hole must fail with EFAULT, and the final munmap
			 * of the whole range drops what is left (a host
			 * allocation's mapping holds its file open). The hole
			 * is an inaccessible page put in place atomically, not
			 * an unmapped one: another thread's mmap must not land
			 * in it, or the final munmap would take that mapping.
			 */
			mmap((char *)m.p + PAGE * below(r, m.len / PAGE), PAGE,
			     PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
			     -1, 0);
			pthread_mutex_unlock(&s->mu);
			return;
		}
		s->maps[i] = s->maps[--s->nmaps];
	}
	pthread_mutex_unlock(&s->mu);
	if (!m.p)
		return;
	munmap(m.p, m.len);
	atomic_fetch_add(&n_munmap, 1);
}

/* ---- the operations ------------------------------------------------- */

static void op_get_info(struct slot *s, struct rng *r)
{
	struct accel_info in;

	memset(&in, 0, sizeof(in));
	if (chance(r, 4))
		((uint8_t *)&in)[below(r, sizeof(in))] = (uint8_t)rnd(r);
	if (chance(r, 32)) {
		xioctl(C_GET_INFO, s->fd, ACCEL_IOC_GET_INFO,
		       (void *)(uintptr_t)interesting64(r));
		return;
	}
	if (!xioctl(C_GET_INFO, s->fd, ACCEL_IOC_GET_INFO, &in)) {
		if (in.abi_version != ACCEL_ABI_VERSION || in.flags ||
		    !in.max_submit || in.page_size != PAGE) {
			atomic_fetch_add(&n_invariant, 1);
			note("invariant", "GET_INFO abi %u flags %u page %u",
			     in.abi_version, in.flags, in.page_size);
		}
	}
}

#ifdef ACCEL_IOC_SET_DEVICE
/* ACCEL_IOC_SET_DEVICE: later streams and device memory go elsewhere. */
static void op_set_device(struct slot *s, struct rng *r)
{
	struct accel_device_select sel = { 0 };

	sel.device = chance(r, 8) ? (uint32_t)interesting64(r) : below(r, 4);
	if (chance(r, 32))
		sel.flags = 1u << below(r, 32);
	if (chance(r, 64)) {
		xioctl(C_SETDEV, s->fd, ACCEL_IOC_SET_DEVICE,
		       (void *)(uintptr_t)interesting64(r));
		return;
	}
	xioctl(C_SETDEV, s->fd, ACCEL_IOC_SET_DEVICE, &sel);
}
#endif

#ifdef ACCEL_IOC_QUERY
/* Context ids seen in answers, to name other files' contexts. */
static _Atomic uint32_t seen_ctx[8];

/* ACCEL_IOC_QUERY: the answer writes no more than it says, once SELF. */
static void op_query(struct slot *s, struct rng *r)
{
	static const uint32_t size[] = {
		0, sizeof(struct accel_ctx_info),
		sizeof(struct accel_stream_info),
		sizeof(struct accel_region_info),
		sizeof(struct accel_device_info),
	};
	uint8_t buf[8 * sizeof(struct accel_ctx_info) + 64];
	struct accel_query q = { 0 };
	uint32_t written, i, self = 0;

	q.kind = chance(r, 16) ? (uint32_t)interesting64(r) : 1 + below(r, 4);
	q.entry_size = q.kind >= 1 && q.kind <= 4 ? size[q.kind] : 96;
	if (chance(r, 16))
		q.entry_size = below(r, 128);
	if ((q.kind != ACCEL_QUERY_CONTEXTS && q.kind != ACCEL_QUERY_DEVICES) ||
	    chance(r, 16))
		q.ctx_id = chance(r, 4) ? 0 : chance(r, 8) ?
			   (uint32_t)interesting64(r) :
			   atomic_load(&seen_ctx[below(r, 8)]);
	if (chance(r, 32))
		q.flags = 1u << below(r, 32);
	q.capacity = chance(r, 16) ? (uint32_t)interesting64(r) : below(r, 9);
	/* buf holds 8 entries; a larger capacity must be refused unwritten. */
	if (q.capacity > 8 && q.capacity <= ACCEL_QUERY_MAX_ENTRIES)
		q.capacity = 8;
	q.entries = (uintptr_t)buf;
	if (chance(r, 32))
		q.entries = interesting64(r);
	memset(buf, 0xcc, sizeof(buf));
	if (chance(r, 64)) {
		xioctl(C_QUERY, s->fd, ACCEL_IOC_QUERY,
		       (void *)(uintptr_t)interesting64(r));
		return;
	}
	if (xioctl(C_QUERY, s->fd, ACCEL_IOC_QUERY, &q) ||
	    q.entries != (uintptr_t)buf)
		return;
	written = q.count < q.capacity ? q.count : q.capacity;
	if ((size_t)written * q.entry_size > sizeof(buf) ||
	    buf[written * q.entry_size] != 0xcc) {
		atomic_fetch_add(&n_invariant, 1);
		note("invariant", "QUERY kind %u wrote past %u entries",
		     q.kind, written);
		return;
	}
	if (q.kind != ACCEL_QUERY_CONTEXTS)
		return;
	for (i = 0; i < written; i++) {
		struct accel_ctx_info c;

		memcpy(&c, buf + i * sizeof(c), sizeof(c));
		atomic_store(&seen_ctx[below(r, 8)], c.id);
		if (c.flags & ACCEL_CTX_SELF)
			self++;
		if (c.device >= 64 ||
		    (c.flags & ~(ACCEL_CTX_SELF | ACCEL_CTX_EXECUTOR)))
			self = 99;
	}
	if (self > 1 || (written == q.count && self != 1)) {
		atomic_fetch_add(&n_invariant, 1);
		note("invariant", "QUERY contexts: %u entries marked SELF of %u",
		     self, written);
	}
}
#endif

static void op_register(struct slot *s, struct rng *r)
{
	struct accel_mem_register req = { 0 };
	struct obj o = { 0 };
	int kind;

	pick_range(s, r, &req.addr, &req.size, &kind);
	if (kind == M_ANON_RO || chance(r, 5))
		req.flags = ACCEL_MEM_READONLY;
	if (chance(r, 12))
		req.flags = (uint32_t)interesting64(r);
	if (chance(r, 16))
		req.handle = (uint32_t)rnd(r);
	if (chance(r, 16))
		req.addr = interesting64(r);
	if (chance(r, 16)) {
		req.size = interesting64(r);
		/*
		 * Sizes past max_pinned_bytes make the driver allocate a
		 * page array of size/512 bytes before it checks the limit
		 * (see the report): --no-huge keeps them below 1 GiB.
		 */
		if (no_huge)
			req.size &= (1ull << 30) - 1;
	}
	if (xioctl(C_REGISTER, s->fd, ACCEL_IOC_MEM_REGISTER, &req))
		return;
	if (!req.handle) {
		atomic_fetch_add(&n_invariant, 1);
		note("invariant", "MEM_REGISTER returned handle 0");
		return;
	}
	o.h = req.handle;
	o.type = O_REGION;
	o.kind = K_USER;
	o.flags = req.flags;
	o.size = req.size;
	pool_add(s, &o);
}

static void op_alloc(struct slot *s, struct rng *r)
{
	struct accel_mem_alloc req = { 0 };
	struct obj o = { 0 };

	req.flags = chance(r, 2) ? ACCEL_MEM_HOST : ACCEL_MEM_DEVICE;
	req.size = 1 + below(r, 16 * PAGE);
	if (chance(r, 12))
		req.flags = (uint32_t)interesting64(r);
	if (chance(r, 12))
		req.size = interesting64(r);
	if (chance(r, 20))
		req.handle = (uint32_t)rnd(r);
	if (chance(r, 20))
		req.mmap_offset = rnd(r);
	if (xioctl(C_ALLOC, s->fd, ACCEL_IOC_MEM_ALLOC, &req))
		return;
	o.h = req.handle;
	o.type = O_REGION;
	o.kind = req.flags == ACCEL_MEM_HOST ? K_HOST : K_DEVICE;
	o.flags = req.flags;
	o.size = (req.size + PAGE - 1) & ~(PAGE - 1);
	o.mmap_off = req.mmap_offset;
	if (!o.h || (o.kind == K_HOST) != (o.mmap_off != 0)) {
		atomic_fetch_add(&n_invariant, 1);
		note("invariant", "MEM_ALLOC handle %u mmap_offset %llu",
		     o.h, (unsigned long long)o.mmap_off);
	}
	pool_add(s, &o);
}

static void op_mmap(struct slot *s, struct rng *r)
{
	struct obj o;
	size_t len;
	off_t off;
	int flags = MAP_SHARED, prot = PROT_READ | PROT_WRITE;
	void *p;

	if (!pool_pick(s, r, O_REGION, &o) || o.kind != K_HOST) {
		o.size = PAGE;
		o.mmap_off = (uint64_t)any_handle(s, r, O_REGION, NULL) * PAGE;
	}
	len = o.size;
	off = (off_t)o.mmap_off;
	if (chance(r, 6))
		len = PAGE * (1 + below(r, 20));
	if (chance(r, 10))
		flags = MAP_PRIVATE;
	if (chance(r, 8))
		prot = PROT_READ;
	if (chance(r, 16))
		off += PAGE * (1 + below(r, 4));
	p = mmap(NULL, len, prot, flags, s->fd, off);
	if (p == MAP_FAILED) {
		account(C_MMAP, -1, errno);
		return;
	}
	account(C_MMAP, 0, 0);
	if (prot & PROT_WRITE && chance(r, 2))
		memset(p, (int)below(r, 256), len);
	map_add(s, p, len, prot & PROT_WRITE ? M_HOST : M_ANON_RO);
}

static void op_release(struct slot *s, struct rng *r)
{
	struct accel_mem_release req = { 0 };
	struct obj o;

	req.handle = any_handle(s, r, O_REGION, &o);
	req.flags = chance(r, 2) ? ACCEL_MEM_RELEASE_DEFERRED : 0;
	if (chance(r, 12))
		req.flags = (uint32_t)interesting64(r);
	if (!xioctl(C_RELEASE, s->fd, ACCEL_IOC_MEM_RELEASE, &req))
		pool_kill(s, req.handle);
}

/*
 * The driver's priority range (struct accel_info), read once: effective
 * priorities must lie in it, every level of it included.
 */
static _Atomic int prio_known;
static _Atomic int32_t prio_greatest, prio_least;

static bool prio_ok(int fd, int32_t p)
{
	if (!atomic_load(&prio_known)) {
		struct accel_info in;

		memset(&in, 0, sizeof(in));
		if (ioctl(fd, ACCEL_IOC_GET_INFO, &in))
			return true;
		atomic_store(&prio_greatest, in.greatest_priority);
		atomic_store(&prio_least, in.least_priority);
		atomic_store(&prio_known, 1);
	}
	return p >= atomic_load(&prio_greatest) && p <= atomic_load(&prio_least);
}

static void op_stream_create(struct slot *s, struct rng *r)
{
	struct accel_stream_create req = { 0 };
	struct obj o = { 0 };

	req.flags = chance(r, 3) ? ACCEL_STREAM_NON_BLOCKING : 0;
	req.priority = chance(r, 2) ? -(int)below(r, 8) : (int32_t)rnd(r);
	if (chance(r, 12))
		req.flags = (uint32_t)interesting64(r);
	if (chance(r, 16))
		req.pad = (uint32_t)rnd(r) | 1;
	if (chance(r, 16))
		req.handle = (uint32_t)rnd(r) | 1;
	if (xioctl(C_SCREATE, s->fd, ACCEL_IOC_STREAM_CREATE, &req))
		return;
	if (!req.handle || !prio_ok(s->fd, req.priority)) {
		atomic_fetch_add(&n_invariant, 1);
		note("invariant", "STREAM_CREATE handle %u priority %d",
		     req.handle, req.priority);
	}
	o.h = req.handle;
	o.type = O_STREAM;
	pool_add(s, &o);
}

static void op_destroy(struct slot *s, struct rng *r, bool stream)
{
	struct accel_handle req = { 0 };
	int c = stream ? C_SDESTROY : C_EDESTROY;

	req.handle = any_handle(s, r, stream ? O_STREAM :
				(chance(r, 2) ? O_EVENT : O_UEVENT), NULL);
	if (chance(r, 16))
		req.pad = (uint32_t)rnd(r) | 1;
	if (!xioctl(c, s->fd, stream ? ACCEL_IOC_STREAM_DESTROY :
		    ACCEL_IOC_EVENT_DESTROY, &req))
		pool_kill(s, req.handle);
}

static void op_stream_query(struct slot *s, struct rng *r)
{
	struct accel_stream_query q;

	memset(&q, 0, sizeof(q));
	if (chance(r, 4))
		memset(&q, (int)below(r, 256), sizeof(q));
	q.handle = any_handle(s, r, O_STREAM, NULL);
	q.pad = chance(r, 16) ? 1 : 0;
	if (xioctl(C_SQUERY, s->fd, ACCEL_IOC_STREAM_QUERY, &q))
		return;
	if (q.completed > q.submitted ||
	    q.submitted - q.completed != q.queued ||
	    q.error > 0 || !prio_ok(s->fd, q.priority)) {
		atomic_fetch_add(&n_invariant, 1);
		note("invariant", "STREAM_QUERY submitted %llu completed %llu queued %u error %d",
		     (unsigned long long)q.submitted,
		     (unsigned long long)q.completed, q.queued, q.error);
	}
}

static uint64_t pick_timeout(struct rng *r)
{
	switch (below(r, 4)) {
	case 0:
		return 0;			/* poll */
	case 1:
		return now_ns() - below(r, 1000000);	/* past */
	default:
		return deadline_ms(1 + below(r, 20));
	}
}

static void op_stream_sync(struct slot *s, struct rng *r)
{
	struct accel_stream_sync req = { 0 };

	req.handle = any_handle(s, r, O_STREAM, NULL);
	req.seq = chance(r, 2) ? 0 : below(r, 64);
	if (chance(r, 16))
		req.seq = interesting64(r);
	if (chance(r, 16))
		req.flags = (uint32_t)rnd(r);
	req.timeout_ns = pick_timeout(r);
	xioctl(C_SSYNC, s->fd, ACCEL_IOC_STREAM_SYNC, &req);
}

/* A descriptor built from the pools, mutated now and then. */
static void gen_desc(struct slot *s, struct rng *r, struct accel_desc *d)
{
	struct obj a, b;

	memset(d, 0, sizeof(*d));
	d->op = below(r, 8);
	switch (d->op) {
	case ACCEL_OP_MEMSET: {
		uint32_t w;

		d->dst = any_handle(s, r, O_REGION, &a);
		if (!a.size)
			a.size = 1 + below(r, 3 * PAGE);
		d->flags = chance(r, 16) ? (uint32_t)rnd(r) : below(r, 3);
		w = d->flags == ACCEL_MEMSET_D16 ? 2 :
		    d->flags == ACCEL_MEMSET_D32 ? 4 : 1;
		d->length = chance(r, 8) ? 0 : (1 + rnd(r) % a.size) / w * w;
		d->dst_offset = rnd(r) % (a.size - d->length + 1) / w * w;
		d->value = rnd(r) & (w == 4 ? 0xffffffffULL : (1ULL << (8 * w)) - 1);
		if (chance(r, 10))
			d->length = interesting64(r);
		if (chance(r, 10))
			d->dst_offset = interesting64(r);
		if (chance(r, 16))
			d->value = interesting64(r);
		break;
	}
	case ACCEL_OP_COPY_2D: {
		uint64_t rows, width, span;

		d->dst = any_handle(s, r, O_REGION, &a);
		d->src = any_handle(s, r, O_REGION, &b);
		if (!a.size)
			a.size = 1 + below(r, 3 * PAGE);
		if (!b.size)
			b.size = 1 + below(r, 3 * PAGE);
		width = 1 + below(r, 64);
		rows = chance(r, 8) ? 0 : 1 + below(r, 16);
		d->width = width;
		d->height = rows;
		d->dst_pitch = (uint32_t)(width + below(r, 64));
		d->src_pitch = (uint32_t)(width + below(r, 64));
		span = rows ? (rows - 1) * d->dst_pitch + width : 0;
		d->dst_offset = span < a.size ? rnd(r) % (a.size - span + 1) : 0;
		span = rows ? (rows - 1) * d->src_pitch + width : 0;
		d->src_offset = span < b.size ? rnd(r) % (b.size - span + 1) : 0;
		if (chance(r, 10))
			d->height = interesting64(r);
		if (chance(r, 10))
			d->width = interesting64(r);
		if (chance(r, 10))
			d->dst_pitch = (uint32_t)interesting64(r);
		if (chance(r, 10))
			d->src_offset = interesting64(r);
		break;
	}
	case ACCEL_OP_COPY: {
		uint64_t n;

		d->dst = any_handle(s, r, O_REGION, &a);
		d->src = any_handle(s, r, O_REGION, &b);
		if (!a.size)
			a.size = 1 + below(r, 3 * PAGE);
		if (!b.size)
			b.size = 1 + below(r, 3 * PAGE);
		n = a.size < b.size ? a.size : b.size;
		d->length = chance(r, 8) ? 0 : 1 + rnd(r) % n;
		d->dst_offset = rnd(r) % (a.size - d->length + 1);
		d->src_offset = rnd(r) % (b.size - d->length + 1);
		if (chance(r, 10))
			d->length = interesting64(r);
		if (chance(r, 10))
			d->dst_offset = interesting64(r);
		if (chance(r, 10))
			d->src_offset = interesting64(r);
		break;
	}
	case ACCEL_OP_EVENT_RECORD:
	case ACCEL_OP_STREAM_WAIT:
		d->event = any_handle(s, r, O_EVENT, NULL);
		break;
	case ACCEL_OP_HOST_WAIT:
	case ACCEL_OP_HOST_SIGNAL:
		d->event = any_handle(s, r, O_UEVENT, &a);
		d->value = a.value + below(r, 3);
		if (chance(r, 16))
			d->value = interesting64(r);
		break;
	default:
		break;
	}
	d->user_data = rnd(r);
	if (chance(r, 8))	/* one random byte anywhere */
		((uint8_t *)d)[below(r, sizeof(*d))] = (uint8_t)rnd(r);
	if (chance(r, 32))
		d->op = (uint32_t)interesting64(r);
}

static void op_submit(struct slot *s, struct rng *r)
{
	static __thread struct accel_desc descs[80];
	struct accel_submit req = { 0 };
	struct obj st;
	uint32_t i, n = 1 + below(r, chance(r, 4) ? 64 : 6);

	for (i = 0; i < n; i++)
		gen_desc(s, r, &descs[i]);
	req.stream = any_handle(s, r, O_STREAM, &st);
	req.count = n;
	req.descs = (uint64_t)(uintptr_t)descs;
	if (chance(r, 24))
		req.count = (uint32_t)interesting64(r) % 5000;
	if (req.count > 80 && !chance(r, 4))
		req.count = 80;
	if (chance(r, 24))
		req.descs = interesting64(r);
	if (chance(r, 32))
		req.flags = (uint32_t)rnd(r);
	if (chance(r, 32))
		req.pad = (uint32_t)rnd(r);
	xioctl(C_SUBMIT, s->fd, ACCEL_IOC_SUBMIT, &req);
}

static void op_event_create(struct slot *s, struct rng *r)
{
	struct accel_event_create req = { 0 };
	struct obj o = { 0 };
	static const uint32_t fl[] = { 0, ACCEL_EVENT_TIMING, ACCEL_EVENT_USER,
				       ACCEL_EVENT_USER };

	req.flags = fl[below(r, 4)];
	if (chance(r, 12))
		req.flags = (uint32_t)interesting64(r);
	if (chance(r, 16))
		req.handle = (uint32_t)rnd(r) | 1;
	if (xioctl(C_ECREATE, s->fd, ACCEL_IOC_EVENT_CREATE, &req))
		return;
	o.h = req.handle;
	o.type = (req.flags & ACCEL_EVENT_USER) ? O_UEVENT : O_EVENT;
	o.flags = req.flags;
	pool_add(s, &o);
}

static void op_event_record(struct slot *s, struct rng *r)
{
	struct accel_event_record req = { 0 };

	req.event = any_handle(s, r, O_EVENT, NULL);
	req.stream = any_handle(s, r, O_STREAM, NULL);
	req.seq = rnd(r);
	xioctl(C_ERECORD, s->fd, ACCEL_IOC_EVENT_RECORD, &req);
}

static void op_event_query(struct slot *s, struct rng *r)
{
	struct accel_event_query q;

	memset(&q, chance(r, 4) ? 0xa5 : 0, sizeof(q));
	q.handle = any_handle(s, r, chance(r, 2) ? O_EVENT : O_UEVENT, NULL);
	q.pad = chance(r, 16);
	if (xioctl(C_EQUERY, s->fd, ACCEL_IOC_EVENT_QUERY, &q))
		return;
	if (q.state > 1 || (q.error && q.error != -EIO) || q.pad) {
		atomic_fetch_add(&n_invariant, 1);
		note("invariant", "EVENT_QUERY state %u error %d", q.state,
		     q.error);
	}
}

static void op_elapsed(struct slot *s, struct rng *r)
{
	struct accel_event_elapsed req = { 0 };

	req.start = any_handle(s, r, O_EVENT, NULL);
	req.end = any_handle(s, r, O_EVENT, NULL);
	req.elapsed_ns = (int64_t)rnd(r);
	xioctl(C_ELAPSED, s->fd, ACCEL_IOC_EVENT_ELAPSED, &req);
}

static void op_signal(struct slot *s, struct rng *r)
{
	struct accel_event_signal req = { 0 };
	struct obj o;

	req.handle = any_handle(s, r, O_UEVENT, &o);
	req.value = o.value + 1 + below(r, 2);
	if (chance(r, 40))
		req.flags = ACCEL_SIGNAL_ERROR;
	if (chance(r, 24))
		req.flags = (uint32_t)interesting64(r);
	if (chance(r, 24))
		req.value = interesting64(r);
	if (!xioctl(C_SIGNAL, s->fd, ACCEL_IOC_EVENT_SIGNAL, &req))
		pool_set_value(s, req.handle, req.value);
}

static void op_wait(struct slot *s, struct rng *r)
{
	struct accel_wait_entry ents[300];
	struct accel_wait req = { 0 };
	uint32_t i, n = 1 + below(r, 4);
	struct obj o;

	for (i = 0; i < n; i++) {
		memset(&ents[i], 0, sizeof(ents[i]));
		ents[i].event = any_handle(s, r, chance(r, 2) ? O_EVENT :
					   O_UEVENT, &o);
		if (o.type == O_UEVENT)
			ents[i].value = o.value + below(r, 2);
		if (chance(r, 24))
			ents[i].pad = 1;
		if (chance(r, 24))
			ents[i].value = interesting64(r);
	}
	req.entries = (uint64_t)(uintptr_t)ents;
	req.count = n;
	req.flags = chance(r, 2) ? ACCEL_WAIT_ALL : 0;
	req.timeout_ns = pick_timeout(r);
	if (chance(r, 24))
		req.count = (uint32_t)interesting64(r) % 300;
	for (i = n; i < req.count && i < 300; i++)
		memset(&ents[i], 0, sizeof(ents[i]));
	if (chance(r, 24))
		req.entries = interesting64(r);
	if (chance(r, 24))
		req.flags = (uint32_t)rnd(r);
	if (chance(r, 24))
		req.pad = 1;
	if (chance(r, 32))
		req.first_signaled = (uint32_t)rnd(r);
	if (!xioctl(C_WAIT, s->fd, ACCEL_IOC_WAIT, &req) &&
	    req.first_signaled >= req.count) {
		atomic_fetch_add(&n_invariant, 1);
		note("invariant", "WAIT first_signaled %u of %u",
		     req.first_signaled, req.count);
	}
}

#ifdef ACCEL_IOC_EVENT_EXPORT
/*
 * Exported events: files shared by every slot (so that imports cross
 * contexts), closed at random, while pending or done; imports of them,
 * of random descriptors and of the device file itself.
 */
#define MAX_XFDS	32
static pthread_mutex_t xfd_mu = PTHREAD_MUTEX_INITIALIZER;
static int xfds[MAX_XFDS];
static int nxfds;

static void op_xevent(struct slot *s, struct rng *r)
{
	struct accel_event_export x = { 0 };
	struct accel_event_import im = { 0 };
	struct obj o = { 0 };
	struct pollfd p;
	int fd = -1;

	switch (below(r, 4)) {
	case 0:
		x.event = any_handle(s, r, chance(r, 8) ? O_UEVENT : O_EVENT,
				     NULL);
		if (chance(r, 24))
			x.flags = (uint32_t)rnd(r);
		if (chance(r, 24))
			x.pad = 1;
		x.fd = (int)rnd(r);
		if (xioctl(C_XEXPORT, s->fd, ACCEL_IOC_EVENT_EXPORT, &x))
			return;
		if (fcntl(x.fd, F_GETFD) < 0) {
			atomic_fetch_add(&n_invariant, 1);
			note("invariant", "EVENT_EXPORT fd %d not open", x.fd);
			return;
		}
		pthread_mutex_lock(&xfd_mu);
		if (nxfds < MAX_XFDS)
			xfds[nxfds++] = x.fd;
		else
			close(x.fd);
		pthread_mutex_unlock(&xfd_mu);
		return;
	case 1:
		/* Close one, pending or not; polling it first. */
		pthread_mutex_lock(&xfd_mu);
		if (nxfds) {
			int i = (int)below(r, (uint32_t)nxfds);

			fd = xfds[i];
			xfds[i] = xfds[--nxfds];
		}
		pthread_mutex_unlock(&xfd_mu);
		if (fd >= 0) {
			p = (struct pollfd){ .fd = fd, .events = POLLIN };
			if (poll(&p, 1, 0) < 0 || (p.revents & ~POLLIN)) {
				atomic_fetch_add(&n_invariant, 1);
				note("invariant", "exported fd polls %#x",
				     p.revents);
			}
			close(fd);
		}
		return;
	default:
		break;
	}
	pthread_mutex_lock(&xfd_mu);
	im.fd = nxfds ? xfds[below(r, (uint32_t)nxfds)] : -1;
	if (chance(r, 12))
		im.fd = chance(r, 2) ? s->fd : (int)below(r, 64);
	if (chance(r, 24))
		im.flags = (uint32_t)rnd(r);
	if (chance(r, 24))
		im.pad = 1;
	im.handle = (uint32_t)rnd(r);
	/* Under the lock: the descriptor may not be closed meanwhile. */
	if (!xioctl(C_XIMPORT, s->fd, ACCEL_IOC_EVENT_IMPORT, &im)) {
		o.h = im.handle;
		o.type = O_EVENT;
		o.flags = ACCEL_EVENT_IMPORTED;
		pool_add(s, &o);
	}
	pthread_mutex_unlock(&xfd_mu);
}

static void xfds_close_all(void)
{
	while (nxfds)
		close(xfds[--nxfds]);
}
#endif

#ifdef ACCEL_IOC_EXEC_ATTACH
/* The userspace executor protocol, when the header has it. */
static void op_exec(struct slot *s, struct rng *r)
{
	static __thread struct accel_exec_item items[16];
	struct accel_exec_attach at = { 0 };
	struct accel_exec_fetch f = { 0 };
	struct accel_exec_done done[16];
	struct accel_exec_complete c = { 0 };
	uint32_t i;
	int ret;

	switch (below(r, 6)) {
	case 0:
		if (chance(r, 8))
			at.flags = (uint32_t)rnd(r);
		if (!xioctl(C_EXEC, s->fd, ACCEL_IOC_EXEC_ATTACH, &at))
			s->executor = true;
		return;
	case 1:
		if (chance(r, 8))
			at.pad = 1;
		if (!xioctl(C_EXEC, s->fd, ACCEL_IOC_EXEC_DETACH, &at))
			s->executor = false;
		return;
	default:
		break;
	}
	f.items = (uint64_t)(uintptr_t)items;
	f.max_items = 1 + below(r, 16);
	f.timeout_ns = pick_timeout(r);
	if (chance(r, 24))
		f.items = interesting64(r);
	if (chance(r, 24))
		f.max_items = (uint32_t)interesting64(r) % 20;
	if (chance(r, 32))
		f.flags = 1;
	ret = xioctl(C_EXEC, s->fd, ACCEL_IOC_EXEC_FETCH, &f);
	if (ret || !f.count || f.count > 16)
		return;
	/* Complete what was fetched, in order, sometimes with an error. */
	for (i = 0; i < f.count; i++) {
		done[i].stream = items[i].stream;
		done[i].status = items[i].status ? items[i].status :
				 (chance(r, 30) ? -EIO : 0);
		done[i].seq = items[i].seq;
		if (chance(r, 30))
			done[i].seq = interesting64(r);
	}
	c.entries = (uint64_t)(uintptr_t)done;
	c.count = f.count;
	if (chance(r, 30))
		c.count = below(r, 20);
	xioctl(C_EXEC, s->fd, ACCEL_IOC_EXEC_COMPLETE, &c);
}
#endif

/* Command numbers the driver must refuse with ENOTTY. */
static void op_bad_cmd(struct slot *s, struct rng *r)
{
	static const unsigned long good[] = {
		ACCEL_IOC_GET_INFO, ACCEL_IOC_MEM_REGISTER, ACCEL_IOC_MEM_ALLOC,
		ACCEL_IOC_MEM_RELEASE, ACCEL_IOC_STREAM_CREATE,
		ACCEL_IOC_STREAM_DESTROY, ACCEL_IOC_STREAM_QUERY,
		ACCEL_IOC_STREAM_SYNC, ACCEL_IOC_SUBMIT, ACCEL_IOC_EVENT_CREATE,
		ACCEL_IOC_EVENT_DESTROY, ACCEL_IOC_EVENT_RECORD,
		ACCEL_IOC_EVENT_QUERY, ACCEL_IOC_EVENT_ELAPSED,
		ACCEL_IOC_EVENT_SIGNAL, ACCEL_IOC_WAIT,
#ifdef ACCEL_IOC_QUERY
		ACCEL_IOC_QUERY,
#endif
#ifdef ACCEL_IOC_SET_DEVICE
		ACCEL_IOC_SET_DEVICE,
#endif
#ifdef ACCEL_IOC_EXEC_ATTACH
		ACCEL_IOC_EXEC_ATTACH, ACCEL_IOC_EXEC_DETACH,
		ACCEL_IOC_EXEC_FETCH, ACCEL_IOC_EXEC_COMPLETE,
#endif
#ifdef ACCEL_IOC_EVENT_EXPORT
		ACCEL_IOC_EVENT_EXPORT, ACCEL_IOC_EVENT_IMPORT,
#endif
	};
	uint64_t buf[64] = { 0 };
	unsigned long cmd;
	size_t i;

	do {
		switch (below(r, 3)) {
		case 0:	/* a good one with another size or direction */
			cmd = good[below(r, sizeof(good) / sizeof(good[0]))];
			cmd ^= chance(r, 2) ? (1ul << (16 + below(r, 14))) :
					      (1ul << (30 + below(r, 2)));
			break;
		case 1:	/* our magic, another number */
			cmd = _IOC(below(r, 4), ACCEL_IOC_MAGIC, below(r, 256),
				   below(r, 512));
			break;
		default:	/* a neighbouring magic */
			cmd = _IOC(below(r, 4), ACCEL_IOC_MAGIC + 1 -
				   2 * below(r, 2), below(r, 0x50), below(r, 128));
			break;
		}
		for (i = 0; i < sizeof(good) / sizeof(good[0]); i++)
			if (cmd == good[i])
				cmd = 0;
	} while (!cmd);
	xioctl(C_BAD, s->fd, cmd, chance(r, 4) ? (void *)(uintptr_t)rnd(r) :
	       (void *)buf);
}

static void op_read(struct slot *s, struct rng *r)
{
	uint64_t v[2];
	struct pollfd pfd = { .fd = s->fd, .events = POLLIN };
	size_t len = chance(r, 8) ? below(r, 8) : 8 + 8 * below(r, 2);
	ssize_t n;

	poll(&pfd, 1, 0);
	n = read(s->fd, v, len);
	account(C_READ, n < 0 ? -1 : 0, n < 0 ? errno : 0);
}

/* ---- files: open, close, reopen ------------------------------------ */

static int open_dev(void)
{
	int fd = open(AS_DEV, O_RDWR | O_NONBLOCK | O_CLOEXEC);

	return fd;
}

static void slot_reset_pools(struct slot *s)
{
	pthread_mutex_lock(&s->mu);
	s->nobjs = 0;
	s->nstale = 0;
	s->maxh = 0;
	s->executor = false;
	pthread_mutex_unlock(&s->mu);
}

static void op_reopen(struct slot *s)
{
	pthread_rwlock_wrlock(&s->rw);
	if (s->fd >= 0)
		close(s->fd);
	slot_reset_pools(s);	/* the maps stay: they outlive the file */
	s->fd = open_dev();
	pthread_rwlock_unlock(&s->rw);
	atomic_fetch_add(&n_reopen, 1);
}

/* ---- processes ------------------------------------------------------ */

/* A child must not be able to use its parent's context. */
static void op_fork_child(struct slot *s, struct rng *r)
{
	struct accel_info info;
	struct accel_stream_create sc;
	struct accel_event_create ec;
	struct accel_mem_alloc ma;
	pid_t pid;
	int st;

	pid = fork();
	if (pid < 0)
		return;
	if (pid == 0) {
		int bad = 0;
		uint64_t v;
		struct pollfd pfd = { .fd = s->fd, .events = POLLIN };
		void *p;

		memset(&info, 0, sizeof(info));
		memset(&sc, 0, sizeof(sc));
		memset(&ec, 0, sizeof(ec));
		memset(&ma, 0, sizeof(ma));
		ma.size = PAGE;
		ma.flags = ACCEL_MEM_HOST;
		if (ioctl(s->fd, ACCEL_IOC_GET_INFO, &info) != -1 || errno != EACCES)
			bad |= 1;
		if (ioctl(s->fd, ACCEL_IOC_STREAM_CREATE, &sc) != -1 || errno != EACCES)
			bad |= 2;
		if (ioctl(s->fd, ACCEL_IOC_EVENT_CREATE, &ec) != -1 || errno != EACCES)
			bad |= 4;
		if (ioctl(s->fd, ACCEL_IOC_MEM_ALLOC, &ma) != -1 || errno != EACCES)
			bad |= 8;
		if (read(s->fd, &v, 8) != -1 || errno != EACCES)
			bad |= 16;
		p = mmap(NULL, PAGE, PROT_READ, MAP_SHARED, s->fd, PAGE);
		if (p != MAP_FAILED || errno != EACCES)
			bad |= 32;
		if (poll(&pfd, 1, 0) != 1 || !(pfd.revents & POLLERR))
			bad |= 64;
		(void)r;
		_exit(bad);
	}
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	atomic_fetch_add(&n_children, 1);
	if (!WIFEXITED(st) || WEXITSTATUS(st)) {
		atomic_fetch_add(&n_child_bad, 1);
		note("child", "forked child saw a non-EACCES result: status 0x%x",
		     st);
	}
}

/*
 * A child with its own context and real work in flight, SIGKILLed at a
 * random moment. Only raw system calls after fork (the parent has threads).
 */
static void op_kill_child(struct rng *r)
{
	unsigned int delay = below(r, 30);
	pid_t pid;
	int st;

	pid = fork();
	if (pid < 0)
		return;
	if (pid == 0) {
		struct accel_mem_alloc ma = { .size = 64 * PAGE, .flags = ACCEL_MEM_HOST };
		struct accel_mem_alloc md = { .size = 64 * PAGE, .flags = ACCEL_MEM_DEVICE };
		struct accel_mem_register mr = { 0 };
		struct accel_stream_create sc = { 0 };
		struct accel_event_create ue = { .flags = ACCEL_EVENT_USER };
		struct accel_desc d[32];
		struct accel_submit sub = { 0 };
		struct accel_stream_sync sy = { 0 };
		size_t len = 64 * PAGE;
		char *buf;
		int fd, i;

		fd = open(AS_DEV, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			_exit(0);
		buf = mmap(NULL, len, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
		if (buf == MAP_FAILED)
			_exit(0);
		mr.addr = (uintptr_t)buf;
		mr.size = len;
		if (ioctl(fd, ACCEL_IOC_MEM_REGISTER, &mr) ||
		    ioctl(fd, ACCEL_IOC_MEM_ALLOC, &ma) ||
		    ioctl(fd, ACCEL_IOC_MEM_ALLOC, &md) ||
		    ioctl(fd, ACCEL_IOC_STREAM_CREATE, &sc) ||
		    ioctl(fd, ACCEL_IOC_EVENT_CREATE, &ue))
			_exit(0);
		mmap(NULL, 64 * PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		     (off_t)ma.mmap_offset);
		memset(d, 0, sizeof(d));
		for (i = 0; i < 32; i++) {
			d[i].op = ACCEL_OP_COPY;
			d[i].dst = (i & 1) ? md.handle : ma.handle;
			d[i].src = (i & 1) ? mr.handle : md.handle;
			d[i].length = len;
		}
		d[31].op = ACCEL_OP_HOST_WAIT;	/* gate the tail */
		d[31].dst = d[31].src = 0;
		d[31].length = 0;
		d[31].event = ue.handle;
		d[31].value = 1;
		sub.stream = sc.handle;
		sub.descs = (uintptr_t)d;
		sub.count = 32;
		sy.handle = sc.handle;
		sy.timeout_ns = ACCEL_TIMEOUT_INFINITE;
		for (i = 0; i < 4; i++)
			ioctl(fd, ACCEL_IOC_SUBMIT, &sub);
		for (;;) {
			ioctl(fd, ACCEL_IOC_SUBMIT, &sub);
			ioctl(fd, ACCEL_IOC_STREAM_SYNC, &sy);	/* blocks */
		}
	}
	if (delay)
		sleep_ms(delay);
	kill(pid, SIGKILL);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	atomic_fetch_add(&n_killed, 1);
}

/* ---- the worker loop ------------------------------------------------ */

struct worker {
	pthread_t t;
	int id;
	struct rng r;
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct rng *r = &w->r;
	uint64_t end = now_ns() + (uint64_t)seconds * 1000000000ull;

	while (!atomic_load(&stop) && now_ns() < end) {
		struct slot *s = &slots[below(r, nslots)];
		uint32_t op = below(r, 1000);

		if (op < 3) {
			op_reopen(s);
			continue;
		}
		if (op < 5 && !no_fork) {
			if (w->id == 0)
				op_kill_child(r);
			continue;
		}
		pthread_rwlock_rdlock(&s->rw);
		if (s->fd < 0) {
			pthread_rwlock_unlock(&s->rw);
			continue;
		}
		if (op < 7) {
			if (!no_fork)
				op_fork_child(s, r);
		} else if (op < 30) {
			op_new_map(s, r);
		} else if (op < 40) {
			op_munmap(s, r);
		} else if (op < 45) {
			op_get_info(s, r);
		} else if (op < 50) {
#ifdef ACCEL_IOC_SET_DEVICE
			op_set_device(s, r);
#else
			op_get_info(s, r);
#endif
		} else if (op < 60) {
#ifdef ACCEL_IOC_QUERY
			op_query(s, r);
#else
			op_get_info(s, r);
#endif
		} else if (op < 140) {
			op_register(s, r);
		} else if (op < 220) {
			op_alloc(s, r);
		} else if (op < 250) {
			op_mmap(s, r);
		} else if (op < 300) {
			op_release(s, r);
		} else if (op < 350) {
			op_stream_create(s, r);
		} else if (op < 375) {
			op_destroy(s, r, true);
		} else if (op < 400) {
			op_stream_query(s, r);
		} else if (op < 430) {
			op_stream_sync(s, r);
		} else if (op < 600) {
			op_submit(s, r);
		} else if (op < 660) {
			op_event_create(s, r);
		} else if (op < 685) {
			op_destroy(s, r, false);
		} else if (op < 730) {
			op_event_record(s, r);
		} else if (op < 760) {
			op_event_query(s, r);
		} else if (op < 775) {
			op_elapsed(s, r);
		} else if (op < 860) {
			op_signal(s, r);
		} else if (op < 900) {
			op_wait(s, r);
		} else if (op < 930) {
#ifdef ACCEL_IOC_EXEC_ATTACH
			op_exec(s, r);
#else
			op_bad_cmd(s, r);
#endif
		} else if (op < 950) {
			op_bad_cmd(s, r);
		} else if (op < 975) {
#ifdef ACCEL_IOC_EVENT_EXPORT
			op_xevent(s, r);
#else
			op_bad_cmd(s, r);
#endif
		} else {
			op_read(s, r);
		}
		pthread_rwlock_unlock(&s->rw);
	}
	return NULL;
}

/* ---- main ------------------------------------------------------------ */

static void usage(const char *argv0)
{
	fprintf(stderr, "usage: %s [--seconds N] [--seed S] [--threads T] "
		"[--fds F] [--no-fork] [--no-huge] [--verbose]\n", argv0);
	exit(2);
}

int main(int argc, char **argv)
{
	struct worker w[64];
	pthread_rwlockattr_t ra;
	uint64_t t0, t1;
	double secs;
	int i, j, err_lines = 0;

	seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 16);
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--seconds") && i + 1 < argc)
			seconds = (unsigned int)strtoul(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--seed") && i + 1 < argc)
			seed = strtoull(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--threads") && i + 1 < argc)
			nthreads = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--fds") && i + 1 < argc)
			nslots = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--no-fork"))
			no_fork = true;
		else if (!strcmp(argv[i], "--no-huge"))
			no_huge = true;
		else if (!strcmp(argv[i], "--verbose"))
			verbose = true;
		else
			usage(argv[0]);
	}
	if (nthreads < 1)
		nthreads = 1;
	if (nthreads > 64)
		nthreads = 64;
	if (nslots < 1)
		nslots = 1;
	if (nslots > MAX_FDS)
		nslots = MAX_FDS;

	tap_header(7);
	printf("# ioctl_fuzz seed=%" PRIu64 " seconds=%u threads=%d fds=%d%s%s\n",
	       seed, seconds, nthreads, nslots, no_fork ? " no-fork" : "",
	       no_huge ? " no-huge" : "");
	fflush(stdout);
	signal(SIGPIPE, SIG_IGN);

	for (i = 0; i < NMALLOC; i++) {
		malloc_len[i] = PAGE * (1 + i * 7) + 123 * i;
		malloc_buf[i] = malloc(malloc_len[i]);
		memset(malloc_buf[i], i, malloc_len[i]);
	}
	pthread_rwlockattr_init(&ra);
	pthread_rwlockattr_setkind_np(&ra, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	for (i = 0; i < nslots; i++) {
		pthread_rwlock_init(&slots[i].rw, &ra);
		pthread_mutex_init(&slots[i].mu, NULL);
		slots[i].fd = open_dev();
		if (slots[i].fd < 0) {
			printf("# cannot open %s: %s\n", AS_DEV, strerror(errno));
			tap_result(0, "open " AS_DEV, "%s", strerror(errno));
			for (j = 1; j < 7; j++)
				tap_skip_result("fuzz", "no device");
			return tap_totals();
		}
	}

	t0 = now_ns();
	for (i = 0; i < nthreads; i++) {
		w[i].id = i;
		w[i].r.s = (seed + 1) * 0x9E3779B97F4A7C15ull + (uint64_t)i * 0xD1B54A32D192ED03ull;
		if (!w[i].r.s)
			w[i].r.s = 1;
		pthread_create(&w[i].t, NULL, worker_main, &w[i]);
	}
	for (i = 0; i < nthreads; i++)
		pthread_join(w[i].t, NULL);
	t1 = now_ns();
	secs = (double)(t1 - t0) / 1e9;

#ifdef ACCEL_IOC_EVENT_EXPORT
	xfds_close_all();
#endif
	for (i = 0; i < nslots; i++) {
		if (slots[i].fd >= 0)
			close(slots[i].fd);
		slots[i].fd = -1;
		for (j = 0; j < slots[i].nmaps; j++)
			munmap(slots[i].maps[j].p, slots[i].maps[j].len);
		slots[i].nmaps = 0;
	}

	printf("# fuzz: ioctls=%llu per_second=%.0f seed=%" PRIu64 "\n",
	       (unsigned long long)n_calls, secs > 0 ? (double)n_calls / secs : 0.0,
	       seed);
	printf("# fuzz: ok=%llu reopen=%u munmap=%u forked=%u killed=%u\n",
	       (unsigned long long)n_ok, n_reopen, n_munmap, n_children, n_killed);
	for (i = 0; i < C_NR; i++) {
		char line[1024];
		int len = snprintf(line, sizeof(line), "# %-14s %8llu calls:",
				   cname[i], (unsigned long long)n_per[i]);

		for (j = 1; j < 160; j++)
			if (n_err[i][j])
				len += snprintf(line + len, sizeof(line) - len,
						" %s=%llu", strerrorname_np(j) ?
						strerrorname_np(j) : "?",
						(unsigned long long)n_err[i][j]);
		if (verbose || err_lines++ < C_NR)
			printf("%s\n", line);
	}
	fflush(stdout);

	tap_result(n_calls > 0, "fuzz: ioctls executed", "%llu",
		   (unsigned long long)n_calls);
	tap_result(n_unexpected == 0, "fuzz: only documented errnos",
		   "%u unexpected", n_unexpected);
	tap_result(n_invariant == 0, "fuzz: output invariants", "%u violations",
		   n_invariant);
	if (no_fork)
		tap_skip_result("fuzz: forked children get EACCES", "--no-fork");
	else
		tap_result(n_child_bad == 0 && n_children > 0,
			   "fuzz: forked children get EACCES",
			   "%u of %u children saw something else", n_child_bad,
			   n_children);
	tap_result(1, "fuzz: every file closed", "%d files", nslots);
	check_leftovers("fuzz", 10000);
	return tap_totals();
}
