// SPDX-License-Identifier: MIT
/*
 * fork(): the atfork handlers that take every lock of the library in the
 * lock order (context.c's opening comment) so that a child never inherits
 * one held, the child's private snapshot of pinned allocations, bounded
 * by ACCEL_FORK_COPY_MAX_MB, and the list of every context until released
 * that the handlers walk.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "accel_int.h"
#include "staging.h"

/* Every context until released, under accel_ctx_list_lock. */
static struct accel_ctx *ctx_all;
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

void accel_ctx_all_link(struct accel_ctx *ctx)
{
	pthread_mutex_lock(&accel_ctx_list_lock);
	ctx->next_all = ctx_all;
	ctx_all = ctx;
	pthread_mutex_unlock(&accel_ctx_list_lock);
}

void accel_ctx_all_unlink(struct accel_ctx *ctx)
{
	struct accel_ctx **pp;

	pthread_mutex_lock(&accel_ctx_list_lock);
	for (pp = &ctx_all; *pp; pp = &(*pp)->next_all) {
		if (*pp == ctx) {
			*pp = ctx->next_all;
			break;
		}
	}
	pthread_mutex_unlock(&accel_ctx_list_lock);
}

/*
 * Pinned host allocations are MAP_SHARED mappings (a memory file inproc,
 * the device's pages over the module): a child would share them with the
 * parent, its writes reaching the parent's buffers and the sources of the
 * parent's queued copies. Every mapping of pinned memory the library
 * makes is MADV_DONTFORK from the start (accel_bounce_alloc(), and the
 * in-process transport's own view of each memory file), so no child ever
 * inherits one, whichever way it was forked. fork() gives the child a
 * private snapshot of each allocation instead. Before the fork, the parent
 * copies each allocation into a private anonymous mapping; the child,
 * which has the copy (copy-on-write) and not the shared mapping, moves the
 * copy to the allocation's address (mremap() only: the child of a
 * multithreaded parent may not call malloc()); the parent unmaps its
 * copy. Where the copy cannot be
 * made (no memory, or the user unmapped some of it), the child gets an
 * inaccessible range at that address instead: touching it raises SIGSEGV,
 * the parent's memory is never reachable from the child. The same when
 * the process has more pinned allocations than fork_copy_max. Under
 * fork_prepare()'s locks, so every context's region table stays as it is
 * until the handlers are done.
 */
/*
 * How many bytes of pinned allocations fork() copies at most
 * (ACCEL_FORK_COPY_MAX_MB, read at each fork, 64 by default; 0: none). Past it, no allocation
 * is copied and the child gets every one without access (CUDA's choice for
 * all of them): a process with gigabytes pinned that forks workers must not
 * pay a copy of them per fork.
 */
static size_t fork_copy_max(void)
{
	const char *v = getenv("ACCEL_FORK_COPY_MAX_MB");
	unsigned long long mb;
	char *end;

	if (!v || !*v)
		return (size_t)64 << 20;
	errno = 0;
	mb = strtoull(v, &end, 10);
	if (errno || *end || mb > (SIZE_MAX >> 20))
		return (size_t)64 << 20;
	return (size_t)mb << 20;
}

/* In the parent, before the fork: whether the allocations may be copied. */
static bool fork_snapshot_fits(void)
{
	size_t total = 0, max = fork_copy_max();
	struct accel_ctx *ctx;
	unsigned int i;

	for (ctx = ctx_all; ctx; ctx = ctx->next_all) {
		if (ctx->forked)
			continue;
		for (i = 0; i < ctx->nregions; i++)
			if (ctx->regions[i].kind == LA_REGION_HOST_ALLOC)
				total += ctx->regions[i].map_len;
	}
	return total <= max;
}

static void fork_snapshot_prepare(void)
{
	bool copy = fork_snapshot_fits();
	struct accel_ctx *ctx;
	unsigned int i;
	void *p;

	for (ctx = ctx_all; ctx; ctx = ctx->next_all) {
		for (i = 0; i < ctx->nregions; i++) {
			struct accel_region *r = &ctx->regions[i];

			r->fork_copy = 0;
			/* Inherited by this process: private already. */
			if (r->kind != LA_REGION_HOST_ALLOC || ctx->forked)
				continue;
			p = copy ? mmap(NULL, r->map_len, PROT_READ | PROT_WRITE,
					MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) :
				   MAP_FAILED;
			if (p != MAP_FAILED) {
				/* Checked: the user may have unmapped some. */
				if (accel_copy_checked(p, (void *)r->base,
						       r->map_len))
					munmap(p, r->map_len);
				else
					r->fork_copy = (uintptr_t)p;
			}
		}
	}
}

static void fork_snapshot_done(bool child)
{
	struct accel_ctx *ctx;
	unsigned int i;

	for (ctx = ctx_all; ctx; ctx = ctx->next_all) {
		for (i = 0; i < ctx->nregions; i++) {
			struct accel_region *r = &ctx->regions[i];
			void *addr = (void *)r->base;

			if (r->kind != LA_REGION_HOST_ALLOC || ctx->forked)
				continue;
			if (!child) {
				if (r->fork_copy)
					munmap((void *)r->fork_copy,
					       r->map_len);
			} else if (!r->fork_copy ||
				   mremap((void *)r->fork_copy, r->map_len,
					  r->map_len,
					  MREMAP_MAYMOVE | MREMAP_FIXED,
					  addr) == MAP_FAILED) {
				mmap(addr, r->map_len, PROT_NONE,
				     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED |
				     MAP_NORESERVE, -1, 0);
			}
			r->fork_copy = 0;
		}
	}
}

/*
 * fork() while other threads are inside libaccel: the child has only the
 * forking thread, so a lock another thread held would stay held forever
 * there. Prepare takes every lock in the lock order (so none is held by
 * anyone else at the fork); parent and child release them. The child
 * also marks every inherited context as forked: its threads are the
 * parent's, and nothing in the child may join them.
 */
static void fork_prepare(void)
{
	struct accel_ctx *ctx;

	pthread_mutex_lock(&accel_ctx_list_lock);
	for (ctx = ctx_all; ctx; ctx = ctx->next_all) {
		pthread_mutex_lock(&ctx->dev_lock);
		pthread_mutex_lock(&ctx->lock);
		accel_staging_lock(ctx);
	}
	accel_handles_lock();
	accel_check_lock();
	accel_log_lock();
	fork_snapshot_prepare();
}

static void fork_release(bool child)
{
	struct accel_ctx *ctx;

	fork_snapshot_done(child);
	accel_log_unlock();
	accel_check_unlock();
	accel_handles_unlock();
	for (ctx = ctx_all; ctx; ctx = ctx->next_all) {
		if (child)
			ctx->forked = true;
		accel_staging_unlock(ctx);
		pthread_mutex_unlock(&ctx->lock);
		pthread_mutex_unlock(&ctx->dev_lock);
	}
	pthread_mutex_unlock(&accel_ctx_list_lock);
}

static void fork_parent(void)
{
	fork_release(false);
}

static void fork_child(void)
{
	fork_release(true);
}

static void atfork_init(void)
{
	pthread_atfork(fork_prepare, fork_parent, fork_child);
}

/* Installs the handlers, once per process; before the first context. */
void accel_fork_init(void)
{
	pthread_once(&atfork_once, atfork_init);
}
