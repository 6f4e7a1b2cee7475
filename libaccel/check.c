// SPDX-License-Identifier: MIT
/*
 * ACCEL_CHECK=1: catch writes into the source of a copy still in flight.
 *
 * While a copy from a pinned host buffer (accel_host_alloc or a writable
 * registered range) is queued, the whole pages of its source that lie
 * inside the region are made read-only. A write to one raises SIGSEGV; the
 * handler reports the buffer, the stream and the descriptor's sequence
 * number on stderr (write(2), the one text libaccel writes itself: the
 * process is aborting in a signal handler), then aborts. The pages become writable again when the copy
 * retires (a host function queued after it).
 *
 * Limits: page granularity (a write elsewhere in a protected page is
 * reported too, as outside the buffer with its signed offset, and a
 * source's partial first/last page outside the region is not protected);
 * pages that are also the destination of a queued copy are left writable;
 * at most CHECK_SLOTS copies are watched at once; a program that installs
 * its own SIGSEGV handler afterwards disables it; the kernel writing into
 * a watched page (read(2), recv(2) and the like) raises no signal: that
 * system call fails with EFAULT, unreported (libaccel(7)).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <syslog.h>
#include <sys/mman.h>

#include "accel_int.h"

#define CHECK_SLOTS	256

enum check_kind { CHECK_FREE, CHECK_SRC, CHECK_DST };

struct check_entry {
	volatile int kind;
	uint32_t gen;
	uintptr_t start, end;	/* pages watched (SRC) or kept writable (DST) */
	uintptr_t buf;
	size_t len;
	uintptr_t rbase;
	size_t rsize;
	uint64_t stream;
	uint64_t seq;
};

/* Protects entries (the signal handler reads them without it). */
static pthread_mutex_t check_lock = PTHREAD_MUTEX_INITIALIZER;
static struct check_entry entries[CHECK_SLOTS];
static struct sigaction old_segv;
static pthread_once_t check_once = PTHREAD_ONCE_INIT;
static int check_state = -1;
static long page_size;

void accel_check_lock(void)
{
	pthread_mutex_lock(&check_lock);
}

void accel_check_unlock(void)
{
	pthread_mutex_unlock(&check_lock);
}

bool accel_check_enabled(void)
{
	/* Racing first calls all read the same environment. */
	int state = __atomic_load_n(&check_state, __ATOMIC_RELAXED);

	if (state < 0) {
		state = accel_env_flag("ACCEL_CHECK");
		__atomic_store_n(&check_state, state, __ATOMIC_RELAXED);
	}
	return state > 0;
}

/* The watched source buffer (not page) that holds @addr, if any. */
static const struct check_entry *watched_buffer(uintptr_t addr)
{
	int i;

	for (i = 0; i < CHECK_SLOTS; i++)
		if (entries[i].kind == CHECK_SRC && addr >= entries[i].buf &&
		    addr - entries[i].buf < entries[i].len)
			return &entries[i];
	return NULL;
}

static void segv_handler(int sig, siginfo_t *si, void *uc)
{
	uintptr_t addr = (uintptr_t)si->si_addr;
	char msg[512];
	int i, n;

	(void)uc;
	for (i = 0; si->si_code == SEGV_ACCERR && i < CHECK_SLOTS; i++) {
		const struct check_entry *e = &entries[i], *in;

		if (e->kind != CHECK_SRC || addr < e->start || addr >= e->end)
			continue;
		/* A buffer that holds the address is the better report. */
		in = watched_buffer(addr);
		if (in) {
			e = in;
			n = snprintf(msg, sizeof(msg),
				     "libaccel: ACCEL_CHECK: write to %p, inside the source buffer %p (%zu bytes, offset %zu) of a copy still in flight: stream %#llx, descriptor seq %llu, pinned region %p (%zu bytes)\n",
				     (void *)addr, (void *)e->buf, e->len,
				     (size_t)(addr - e->buf),
				     (unsigned long long)e->stream,
				     (unsigned long long)e->seq,
				     (void *)e->rbase, e->rsize);
		} else {
			n = snprintf(msg, sizeof(msg),
				     "libaccel: ACCEL_CHECK: write to %p, outside the source buffer %p (%zu bytes, offset %+lld) but in a page watched for it (pages are write-protected whole; this write is not to the copy's bytes, keep other data out of an in-flight source's pages): stream %#llx, descriptor seq %llu, pinned region %p (%zu bytes)\n",
				     (void *)addr, (void *)e->buf, e->len,
				     (long long)((intptr_t)addr -
						 (intptr_t)e->buf),
				     (unsigned long long)e->stream,
				     (unsigned long long)e->seq,
				     (void *)e->rbase, e->rsize);
		}
		/*
		 * The one text libaccel writes itself: the process is about
		 * to abort() in a signal handler, where the log callback
		 * (any code of the program's) cannot be called, and the
		 * user asked for this by setting ACCEL_CHECK=1.
		 */
		if (n > 0)
			(void)!write(STDERR_FILENO, msg, (size_t)n);
		abort();
	}
	/* Not ours: put the previous handler back and fault again. */
	sigaction(sig, &old_segv, NULL);
}

static void install_handler(void)
{
	struct sigaction sa;

	page_size = sysconf(_SC_PAGESIZE);
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = segv_handler;
	sa.sa_flags = SA_SIGINFO | SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGSEGV, &sa, &old_segv);
}

static bool covered_locked(uintptr_t page, enum check_kind kind)
{
	int i;

	for (i = 0; i < CHECK_SLOTS; i++)
		if (entries[i].kind == (int)kind && page >= entries[i].start &&
		    page < entries[i].end)
			return true;
	return false;
}

/*
 * Make the pages of [start, end) read-only where a queued copy reads them
 * and none writes them, writable elsewhere. With !@all, pages no source
 * covers were never ours to change and are left alone.
 */
static void reprotect_locked(uintptr_t start, uintptr_t end, bool all)
{
	uintptr_t p, run = start;
	int state = -2, want;

	for (p = start; p <= end; p += page_size) {
		if (p == end) {
			want = -2;
		} else if (covered_locked(p, CHECK_SRC)) {
			want = !covered_locked(p, CHECK_DST);
		} else {
			want = all ? 0 : -1;
		}
		if (want != state) {
			if (state >= 0 && p > run)
				mprotect((void *)run, p - run, state ?
					 PROT_READ : PROT_READ | PROT_WRITE);
			run = p;
			state = want;
		}
	}
}

static int slot_get_locked(void)
{
	int i;

	for (i = 0; i < CHECK_SLOTS; i++)
		if (entries[i].kind == CHECK_FREE)
			return i;
	return -1;
}

static void *token_of(int i)
{
	return (void *)(((uintptr_t)entries[i].gen << 16) | (uintptr_t)(i + 1));
}

void accel_check_dst(struct accel_ctx *ctx, uintptr_t ptr, size_t len,
		     const struct accel_region *r, void **token)
{
	uintptr_t ps;
	int i;

	(void)r;
	*token = NULL;
	pthread_once(&check_once, install_handler);
	ps = (uintptr_t)ctx->page_size;
	pthread_mutex_lock(&check_lock);
	i = slot_get_locked();
	if (i >= 0) {
		struct check_entry *e = &entries[i];

		e->start = ptr & ~(ps - 1);
		e->end = (ptr + len + ps - 1) & ~(ps - 1);
		e->gen++;
		e->kind = CHECK_DST;
		reprotect_locked(e->start, e->end, false);
		*token = token_of(i);
	}
	pthread_mutex_unlock(&check_lock);
}

int accel_check_src(struct accel_ctx *ctx, accel_stream_t stream,
		    uint64_t seq, uintptr_t ptr, size_t len,
		    const struct accel_region *r, void **token)
{
	uintptr_t ps = (uintptr_t)ctx->page_size, start, end, rs, re;
	int i;

	*token = NULL;
	if (r->kind == LA_REGION_REGISTERED &&
	    (r->flags & ACCEL_HOST_REGISTER_READONLY))
		return 0;
	/* Whole pages of the region only: its neighbours are not ours. */
	rs = (r->base + ps - 1) & ~(ps - 1);
	re = (r->base + r->size) & ~(ps - 1);
	if (r->kind == LA_REGION_HOST_ALLOC)
		re = r->base + r->map_len;
	start = ptr & ~(ps - 1);
	end = (ptr + len + ps - 1) & ~(ps - 1);
	if (start < rs)
		start = rs;
	if (end > re)
		end = re;
	if (start >= end)
		return 0;

	pthread_once(&check_once, install_handler);
	pthread_mutex_lock(&check_lock);
	i = slot_get_locked();
	if (i >= 0) {
		struct check_entry *e = &entries[i];

		e->start = start;
		e->end = end;
		e->buf = ptr;
		e->len = len;
		e->rbase = r->base;
		e->rsize = r->size;
		e->stream = (uint64_t)(uintptr_t)stream;
		e->seq = seq;
		e->gen++;
		e->kind = CHECK_SRC;
		reprotect_locked(start, end, true);
		*token = token_of(i);
	}
	pthread_mutex_unlock(&check_lock);
	return 0;
}

void accel_check_done(void *token)
{
	uintptr_t t = (uintptr_t)token;
	int i = (int)(t & 0xffff) - 1;
	struct check_entry *e;

	if (!token || i < 0 || i >= CHECK_SLOTS)
		return;
	pthread_mutex_lock(&check_lock);
	e = &entries[i];
	if (e->kind != CHECK_FREE && (uint32_t)(t >> 16) == e->gen) {
		bool src = e->kind == CHECK_SRC;

		e->kind = CHECK_FREE;
		reprotect_locked(e->start, e->end, src);
	}
	pthread_mutex_unlock(&check_lock);
}

void accel_check_forget(uintptr_t base, size_t len)
{
	int i;

	if (__atomic_load_n(&check_state, __ATOMIC_RELAXED) <= 0)
		return;
	pthread_mutex_lock(&check_lock);
	for (i = 0; i < CHECK_SLOTS; i++) {
		struct check_entry *e = &entries[i];

		if (e->kind == CHECK_FREE || e->end <= base ||
		    e->start >= base + len)
			continue;
		bool src = e->kind == CHECK_SRC;

		e->kind = CHECK_FREE;
		reprotect_locked(e->start, e->end, src);
	}
	pthread_mutex_unlock(&check_lock);
}

void accel_check_dst_gone(void *dst, size_t len, uint32_t kstream)
{
	if (!accel_check_enabled())
		return;
	/* Not fatal: to the log callback, as every other message. */
	accel_log(LOG_WARNING,
		  "ACCEL_CHECK: the pageable destination %p (%zu bytes) of a copy on stream %u was freed or unmapped before the copy finished: nothing written there",
		  dst, len, kstream);
}
