// SPDX-License-Identifier: MIT
/*
 * The in-process transport: the accelstream ioctl ABI served by a
 * userspace model of the driver, for machines where the module cannot be
 * loaded. The scheduling rules come from the driver's own core
 * (core/asc_core.c, compiled into libaccel unchanged); this file is only
 * the shell: mlock for pinning, a mutex and condition variable for
 * waiting, and one worker thread per stream as the copy engine (in order
 * per stream, concurrent across streams).
 *
 * It also serves the executor protocol (ACCEL_IOC_EXEC_*) the way
 * driver/as_exec.c does: while an executor is attached the workers run
 * nothing, and the executor fetches and completes instead.
 *
 * Lock order: there is one lock per context (ip_ctx.lock). Workers drop it
 * around the memcpy of a COPY; the entry's region references keep both
 * sides alive meanwhile.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>

#include "asc_core.h"
#include "transport.h"

#define container_of(ptr, type, member) \
	((type *)((char *)(ptr) - offsetof(type, member)))

/* The module's defaults (max_pinned_mb, max_device_mb), per context. */
#define IP_PINNED_MB		4096
#define IP_DEVICE_MB		1024
#define IP_MMAP_SHIFT		12

/* Where a region's memory is: core.kind, the executor protocol's values. */
enum ip_region_kind {
	IP_REGION_USER = ACCEL_REGION_HOST,	/* a registered user range */
	IP_REGION_HOST = ACCEL_REGION_HOST_ALLOC, /* a memfd the user maps */
	IP_REGION_DEVICE = ACCEL_REGION_DEVICE,	/* anonymous memory */
	IP_REGION_EXTERNAL = ACCEL_REGION_EXTERNAL, /* an executor's range */
};

struct ip_node {
	struct ip_node *prev, *next;
};

struct ip_region {
	struct asc_region core;
	struct ip_node node;
	u32 handle;
	/* Where the engine reads and writes: the user range or our view. */
	unsigned char *base;
	size_t map_len;		/* HOST, DEVICE: length of our mapping */
	int memfd;		/* HOST: backing file, mapped by the user */
	bool locked;
	u64 charged;		/* USER: bytes charged to pinned_bytes */
};

struct ip_stream {
	struct asc_timeline tl;
	struct asc_queue q;
	struct ip_node node;
	struct ip_ctx *ctx;
	u32 handle;
	u32 flags;
	s32 priority;
	pthread_t thread;
	bool dead;		/* handle destroyed */
	bool exited;		/* worker returned */
	bool reap;		/* on the reap list: join and free */
	bool copying;		/* the worker is in a memcpy, lock dropped */
};

struct ip_event {
	struct asc_event core;
	struct ip_node node;
	u32 handle;
};

struct ip_idr {
	void **slots;
	u32 used;		/* handles handed out; handle = index + 1 */
	u32 cap;
	u32 live;
};

struct ip_ctx {
	/* Protects everything below and every object of the context. */
	pthread_mutex_t lock;
	/* Broadcast on every retirement, signal, submission and destroy. */
	pthread_cond_t cond;
	/*
	 * The workers sleep here while an executor is attached (they run
	 * nothing then): broadcast on detach, close and stream destroy, so
	 * that the executor's traffic does not wake every worker.
	 */
	pthread_cond_t exec_cond;
	/* exec_done_locked() retires in bulk: one broadcast at the end. */
	bool quiet_retire;
	pid_t pid;
	unsigned int fork_gen;		/* ip_fork_gen when opened */
	/* Scratch for the copy-in/out of the hot calls, one of each idle. */
	_Atomic(void *) fetch_buf, done_buf, desc_buf;
	bool closing;
	/* A userspace executor is attached: the workers run nothing. */
	bool executor;
	struct ip_idr regions, streams, events;
	/* Every object until it is freed, live or waiting for references. */
	struct ip_node all_regions, all_streams, all_events;
	u64 pinned_bytes;
	u64 device_bytes;
	/* ACCEL_INPROC_MAX_PINNED_MB / _DEVICE_MB, taken at open. */
	u64 max_pinned_bytes;
	u64 max_device_bytes;
	long page_size;
};

/* The public transport type is our context. */
struct accel_transport {
	struct ip_ctx ctx;
};

static void node_init(struct ip_node *h)
{
	h->prev = h->next = h;
}

static void node_add(struct ip_node *h, struct ip_node *n)
{
	n->next = h;
	n->prev = h->prev;
	h->prev->next = n;
	h->prev = n;
}

static void node_del(struct ip_node *n)
{
	n->prev->next = n->next;
	n->next->prev = n->prev;
	n->prev = n->next = n;
}

static int idr_alloc(struct ip_idr *idr, void *p, u32 max_live, u32 *handle)
{
	if (idr->live >= max_live)
		return -ENOSPC;
	if (idr->used == UINT32_MAX)
		return -ENOSPC;
	if (idr->used == idr->cap) {
		u32 cap = idr->cap ? idr->cap * 2 : 64;
		void **s = realloc(idr->slots, cap * sizeof(*s));

		if (!s)
			return -ENOMEM;
		idr->slots = s;
		idr->cap = cap;
	}
	idr->slots[idr->used++] = p;
	idr->live++;
	*handle = idr->used;
	return 0;
}

static void *idr_find(const struct ip_idr *idr, u32 handle)
{
	if (!handle || handle > idr->used)
		return NULL;
	return idr->slots[handle - 1];
}

static void idr_remove(struct ip_idr *idr, u32 handle)
{
	idr->slots[handle - 1] = NULL;
	idr->live--;
}

static u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (u64)ts.tv_sec * 1000000000ULL + (u64)ts.tv_nsec;
}

/* Wait on the context's condition until @deadline; -ETIME once past it. */
static int ctx_wait(struct ip_ctx *c, u64 deadline)
{
	struct timespec ts;

	if (deadline == ACCEL_TIMEOUT_INFINITE) {
		pthread_cond_wait(&c->cond, &c->lock);
		return 0;
	}
	if (now_ns() >= deadline)
		return -ETIME;
	ts.tv_sec = (time_t)(deadline / 1000000000ULL);
	ts.tv_nsec = (long)(deadline % 1000000000ULL);
	pthread_cond_timedwait(&c->cond, &c->lock, &ts);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Releasing what the core says lost its last reference                */
/* ------------------------------------------------------------------ */

static void region_free_locked(struct ip_ctx *c, struct ip_region *r)
{
	long ps = c->page_size;

	switch (r->core.kind) {
	case IP_REGION_USER: {
		u64 start = r->core.addr & ~(u64)(ps - 1);
		u64 end = (r->core.addr + r->core.size + ps - 1) & ~(u64)(ps - 1);
		struct ip_node *n;

		/* Pages shared with another registered range stay locked. */
		for (n = c->all_regions.next; n != &c->all_regions; n = n->next) {
			struct ip_region *o = container_of(n, struct ip_region, node);

			if (o == r || o->core.kind != IP_REGION_USER || !o->locked)
				continue;
			if (asc_ranges_overlap(start, ps, o->core.addr, o->core.size))
				start += ps;
			if (end > start &&
			    asc_ranges_overlap(end - ps, ps, o->core.addr, o->core.size))
				end -= ps;
		}
		if (r->locked && end > start)
			munlock((void *)(uintptr_t)start, end - start);
		c->pinned_bytes -= r->charged;
		break;
	}
	case IP_REGION_HOST:
		munmap(r->base, r->map_len);
		close(r->memfd);
		c->pinned_bytes -= r->map_len;
		break;
	case IP_REGION_DEVICE:
		munmap(r->base, r->map_len);
		c->device_bytes -= r->map_len;
		break;
	case IP_REGION_EXTERNAL:
		break;
	}
	node_del(&r->node);
	free(r);
}

static void stream_reap_locked(struct ip_ctx *c)
{
	struct ip_node *n, *next;

	for (n = c->all_streams.next; n != &c->all_streams; n = next) {
		struct ip_stream *s = container_of(n, struct ip_stream, node);

		next = n->next;
		if (!s->reap)
			continue;
		/* The worker set ->exited under the lock and only returns. */
		pthread_join(s->thread, NULL);
		node_del(&s->node);
		free(s);
	}
}

static void stream_maybe_free_locked(struct ip_stream *s)
{
	if (s->dead && s->exited && !s->tl.refs)
		s->reap = true;
}

static void process_release(struct ip_ctx *c, struct asc_release *rel)
{
	unsigned int i;

	for (i = 0; i < rel->ntl; i++)
		stream_maybe_free_locked(container_of(rel->tl[i],
						      struct ip_stream, tl));
	for (i = 0; i < rel->nregion; i++)
		region_free_locked(c, container_of(rel->region[i],
						   struct ip_region, core));
	for (i = 0; i < rel->nevent; i++) {
		struct ip_event *ev = container_of(rel->event[i],
						   struct ip_event, core);

		node_del(&ev->node);
		free(ev);
	}
	free(rel->batch);
	memset(rel, 0, sizeof(*rel));
}

/* ------------------------------------------------------------------ */
/* The copy engine                                                     */
/* ------------------------------------------------------------------ */

static void retire_locked(struct ip_stream *s, int status)
{
	struct ip_ctx *c = s->ctx;
	struct asc_release rel = { 0 };

	asc_retire_head(&s->tl, &s->q, status, now_ns(), &rel);
	process_release(c, &rel);
	if (s->dead && !s->q.count)
		pthread_cond_broadcast(&c->exec_cond);
	if (!c->quiet_retire)
		pthread_cond_broadcast(&c->cond);
}

static void *stream_worker(void *arg)
{
	struct ip_stream *s = arg;
	struct ip_ctx *c = s->ctx;
	int status, step;

	pthread_mutex_lock(&c->lock);
	for (;;) {
		step = asc_engine_next(&s->tl, &s->q, c->closing, c->executor,
				       &status);
		if (step == ASC_STEP_IDLE) {
			if (!s->q.count && (s->dead || c->closing))
				break;
			/* The executor fetches and completes; we only wait. */
			pthread_cond_wait(c->executor ? &c->exec_cond : &c->cond,
					  &c->lock);
			continue;
		}
		if (step == ASC_STEP_BLOCKED) {
			pthread_cond_wait(&c->cond, &c->lock);
			continue;
		}
		if (step == ASC_STEP_COPY) {
			struct asc_entry *e = asc_queue_peek(&s->q);
			struct ip_region *dst = container_of(e->dst,
							     struct ip_region, core);
			struct ip_region *src = container_of(e->src,
							     struct ip_region, core);

			s->copying = true;
			pthread_mutex_unlock(&c->lock);
			memmove(dst->base + e->desc.dst_offset,
				src->base + e->desc.src_offset, e->desc.length);
			pthread_mutex_lock(&c->lock);
			s->copying = false;
		}
		retire_locked(s, status);
	}
	s->exited = true;
	stream_maybe_free_locked(s);
	pthread_cond_broadcast(&c->cond);
	pthread_mutex_unlock(&c->lock);
	return NULL;
}

/* ------------------------------------------------------------------ */
/* Device-level and memory commands                                    */
/* ------------------------------------------------------------------ */

static int ip_get_info(struct ip_ctx *c, void *arg)
{
	struct accel_info *info = arg;
	int ret = asc_check_info(info);

	if (ret)
		return ret;
	asc_info_fill(info, ASC_CAPS, c->max_pinned_bytes, c->max_device_bytes,
		      (u32)c->page_size);
	return 0;
}

/* An executor's address range: bounds only, nothing locked or charged. */
static int ip_mem_register_external(struct ip_ctx *c,
				    struct accel_mem_register *r)
{
	struct ip_region *reg;
	struct ip_node *n;
	int ret;

	reg = calloc(1, sizeof(*reg));
	if (!reg)
		return -ENOMEM;
	node_init(&reg->node);
	reg->core.kind = IP_REGION_EXTERNAL;
	reg->core.addr = r->addr;
	reg->core.size = r->size;
	reg->core.flags = r->flags;
	reg->memfd = -1;

	pthread_mutex_lock(&c->lock);
	for (n = c->all_regions.next; n != &c->all_regions; n = n->next) {
		struct ip_region *o = container_of(n, struct ip_region, node);

		if (asc_region_conflicts(&o->core, IP_REGION_EXTERNAL, r->addr,
					 r->size)) {
			ret = -EEXIST;
			goto err_unlock;
		}
	}
	ret = idr_alloc(&c->regions, reg, ASC_MAX_REGIONS, &reg->handle);
	if (ret)
		goto err_unlock;
	node_add(&c->all_regions, &reg->node);
	r->handle = reg->handle;
	pthread_mutex_unlock(&c->lock);
	return 0;

err_unlock:
	pthread_mutex_unlock(&c->lock);
	free(reg);
	return ret;
}

static int ip_mem_register(struct ip_ctx *c, void *arg)
{
	struct accel_mem_register *r = arg;
	long ps = c->page_size;
	struct ip_region *reg;
	struct ip_node *n;
	u64 start, end;
	int ret;

	ret = asc_check_mem_register(r);
	if (ret)
		return ret;
	if (r->flags & ACCEL_MEM_EXTERNAL)
		return ip_mem_register_external(c, r);
	start = r->addr & ~(u64)(ps - 1);
	if (r->addr + r->size > UINT64_MAX - ps)
		return -EINVAL;
	end = (r->addr + r->size + ps - 1) & ~(u64)(ps - 1);

	reg = calloc(1, sizeof(*reg));
	if (!reg)
		return -ENOMEM;
	node_init(&reg->node);
	reg->core.kind = IP_REGION_USER;
	reg->core.addr = r->addr;
	reg->base = (unsigned char *)(uintptr_t)r->addr;
	reg->core.size = r->size;
	reg->core.flags = r->flags;
	reg->memfd = -1;

	pthread_mutex_lock(&c->lock);
	for (n = c->all_regions.next; n != &c->all_regions; n = n->next) {
		struct ip_region *o = container_of(n, struct ip_region, node);

		if (asc_region_conflicts(&o->core, IP_REGION_USER, r->addr,
					 r->size)) {
			ret = -EEXIST;
			goto err_unlock;
		}
	}
	/* Whole pages are charged, as the driver pins them. */
	reg->charged = end - start;
	if (reg->charged > c->max_pinned_bytes - c->pinned_bytes) {
		ret = -ENOMEM;
		goto err_unlock;
	}
	/* Every page mapped, and writable unless read-only, as GUP wants. */
	ret = accel_range_check(r->addr, r->size,
				!(r->flags & ACCEL_MEM_READONLY));
	if (ret)
		goto err_unlock;
	if (mlock((void *)(uintptr_t)start, end - start)) {
		ret = -ENOMEM;
		goto err_unlock;
	}
	reg->locked = true;
	ret = idr_alloc(&c->regions, reg, ASC_MAX_REGIONS, &reg->handle);
	if (ret)
		goto err_unlock_pages;
	node_add(&c->all_regions, &reg->node);
	c->pinned_bytes += reg->charged;
	r->handle = reg->handle;
	pthread_mutex_unlock(&c->lock);
	return 0;

err_unlock_pages:
	munlock((void *)(uintptr_t)start, end - start);
err_unlock:
	pthread_mutex_unlock(&c->lock);
	free(reg);
	return ret;
}

static int ip_mem_alloc(struct ip_ctx *c, void *arg)
{
	struct accel_mem_alloc *a = arg;
	struct ip_region *reg;
	size_t len;
	int ret;

	ret = asc_check_mem_alloc(a);
	if (ret)
		return ret;
	len = (a->size + c->page_size - 1) & ~(u64)(c->page_size - 1);
	/* Past the limit whatever else is allocated: before any memory. */
	if (len > ((a->flags & ACCEL_MEM_HOST) ? c->max_pinned_bytes :
		   c->max_device_bytes))
		return -ENOMEM;

	reg = calloc(1, sizeof(*reg));
	if (!reg)
		return -ENOMEM;
	node_init(&reg->node);
	reg->core.size = a->size;
	reg->core.flags = a->flags;
	reg->map_len = len;
	reg->memfd = -1;

	if (a->flags & ACCEL_MEM_HOST) {
		reg->core.kind = IP_REGION_HOST;
		reg->memfd = memfd_create("accelstream-host", MFD_CLOEXEC);
		if (reg->memfd < 0) {
			ret = -ENOMEM;
			goto err_free;
		}
		if (ftruncate(reg->memfd, (off_t)len)) {
			ret = -ENOMEM;
			goto err_close;
		}
		reg->base = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED,
				 reg->memfd, 0);
		if (reg->base == MAP_FAILED) {
			ret = -ENOMEM;
			goto err_close;
		}
		if (mlock(reg->base, len)) {
			ret = -ENOMEM;
			goto err_unmap;
		}
		reg->locked = true;
	} else {
		reg->core.kind = IP_REGION_DEVICE;
		reg->base = mmap(NULL, len, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
				 -1, 0);
		if (reg->base == MAP_FAILED) {
			ret = -ENOMEM;
			goto err_free;
		}
	}

	pthread_mutex_lock(&c->lock);
	if (reg->core.kind == IP_REGION_HOST ?
	    len > c->max_pinned_bytes - c->pinned_bytes :
	    len > c->max_device_bytes - c->device_bytes) {
		ret = -ENOMEM;
		goto err_unlock;
	}
	ret = idr_alloc(&c->regions, reg, ASC_MAX_REGIONS, &reg->handle);
	if (ret)
		goto err_unlock;
	node_add(&c->all_regions, &reg->node);
	if (reg->core.kind == IP_REGION_HOST)
		c->pinned_bytes += len;
	else
		c->device_bytes += len;
	a->handle = reg->handle;
	a->mmap_offset = reg->core.kind == IP_REGION_HOST ?
			 (u64)reg->handle << IP_MMAP_SHIFT : 0;
	pthread_mutex_unlock(&c->lock);
	return 0;

err_unlock:
	pthread_mutex_unlock(&c->lock);
err_unmap:
	munmap(reg->base, len);
err_close:
	if (reg->memfd >= 0)
		close(reg->memfd);
err_free:
	free(reg);
	return ret;
}

static int ip_mem_release(struct ip_ctx *c, void *arg)
{
	struct accel_mem_release *r = arg;
	struct ip_region *reg;
	int ret;

	ret = asc_check_mem_release(r);
	if (ret)
		return ret;
	pthread_mutex_lock(&c->lock);
	reg = idr_find(&c->regions, r->handle);
	if (!reg) {
		ret = -ENOENT;
		goto out;
	}
	ret = asc_region_release(&reg->core, r->flags);
	if (ret < 0)
		goto out;
	idr_remove(&c->regions, r->handle);
	if (ret == 1)
		region_free_locked(c, reg);
	ret = 0;
out:
	pthread_mutex_unlock(&c->lock);
	return ret;
}

/* ------------------------------------------------------------------ */
/* Streams and submission                                              */
/* ------------------------------------------------------------------ */

static int ip_stream_create(struct ip_ctx *c, void *arg)
{
	struct accel_stream_create *sc = arg;
	struct ip_stream *s;
	int ret;

	ret = asc_check_stream_create(sc);
	if (ret)
		return ret;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	node_init(&s->node);
	s->ctx = c;
	s->flags = sc->flags;
	s->priority = asc_clamp_priority(sc->priority);

	pthread_mutex_lock(&c->lock);
	stream_reap_locked(c);
	ret = idr_alloc(&c->streams, s, ASC_MAX_STREAMS, &s->handle);
	if (ret)
		goto err_unlock;
	if (pthread_create(&s->thread, NULL, stream_worker, s)) {
		idr_remove(&c->streams, s->handle);
		ret = -ENOMEM;
		goto err_unlock;
	}
	node_add(&c->all_streams, &s->node);
	s->tl.id = s->handle;
	sc->handle = s->handle;
	pthread_mutex_unlock(&c->lock);
	return 0;

err_unlock:
	pthread_mutex_unlock(&c->lock);
	free(s);
	return ret;
}

static int ip_stream_destroy(struct ip_ctx *c, void *arg)
{
	struct accel_handle *h = arg;
	struct ip_stream *s;
	int ret;

	ret = asc_check_handle(h);
	if (ret)
		return ret;
	pthread_mutex_lock(&c->lock);
	s = idr_find(&c->streams, h->handle);
	if (!s) {
		ret = -ENOENT;
	} else {
		idr_remove(&c->streams, h->handle);
		s->dead = true;
		pthread_cond_broadcast(&c->cond);
		pthread_cond_broadcast(&c->exec_cond);
	}
	pthread_mutex_unlock(&c->lock);
	return ret;
}

static int ip_stream_query(struct ip_ctx *c, void *arg)
{
	struct accel_stream_query *q = arg;
	struct ip_stream *s;
	int ret;

	ret = asc_check_stream_query(q);
	if (ret)
		return ret;
	pthread_mutex_lock(&c->lock);
	s = idr_find(&c->streams, q->handle);
	if (!s)
		ret = -ENOENT;
	else
		asc_stream_query_fill(q, q->handle, &s->tl, &s->q, s->flags,
				      s->priority);
	pthread_mutex_unlock(&c->lock);
	return ret;
}

static int ip_stream_sync(struct ip_ctx *c, void *arg)
{
	struct accel_stream_sync *ss = arg;
	struct asc_release rel = { 0 };
	struct ip_stream *s;
	u64 seq;
	int ret;

	ret = asc_check_stream_sync(ss);
	if (ret)
		return ret;
	pthread_mutex_lock(&c->lock);
	s = idr_find(&c->streams, ss->handle);
	if (!s) {
		ret = -ENOENT;
		goto out;
	}
	ret = asc_sync_target(&s->tl, ss->seq, &seq);
	if (ret || !seq)
		goto out;
	/* Keep the timeline while we sleep, even if the handle dies. */
	s->tl.refs++;
	for (;;) {
		ret = asc_timeline_check_sync(&s->tl, seq);
		if (ret != -EAGAIN)
			break;
		ret = ctx_wait(c, ss->timeout_ns);
		if (ret)
			break;
	}
	if (--s->tl.refs == 0)
		stream_maybe_free_locked(s);
	process_release(c, &rel);
out:
	pthread_mutex_unlock(&c->lock);
	return ret;
}

/*
 * Look up the handles of one descriptor (handle 0 finds nothing: the
 * fields an op does not use are zero); the core judges what was found.
 */
static void resolve_locked(struct ip_ctx *c, struct asc_entry *e)
{
	struct ip_region *dst = idr_find(&c->regions, e->desc.dst);
	struct ip_region *src = idr_find(&c->regions, e->desc.src);
	struct ip_event *ev = idr_find(&c->events, e->desc.event);

	e->dst = dst ? &dst->core : NULL;
	e->src = src ? &src->core : NULL;
	e->event = ev ? &ev->core : NULL;
}

static int submit_locked(struct ip_ctx *c, u32 stream, struct asc_batch *b,
			 u64 *seq)
{
	struct asc_release rel = { 0 };
	struct ip_stream *s = idr_find(&c->streams, stream);
	u32 i;
	int ret;

	for (i = 0; i < b->count; i++)
		resolve_locked(c, &b->ents[i]);
	ret = asc_submit_admit(s ? &s->tl : NULL, s ? &s->q : NULL, b,
			       c->executor);
	if (ret)
		return ret;
	for (i = 0; i < b->count; i++) {
		asc_enqueue(&s->tl, &s->q, &b->ents[i], &rel);
		process_release(c, &rel);
	}
	*seq = s->tl.submitted;
	pthread_cond_broadcast(&c->cond);
	return 0;
}

/* Queue @count shape-checked descriptors (in our memory) on @stream. */
static int do_submit(struct ip_ctx *c, u32 stream,
		     const struct accel_desc *descs, u32 count, u64 *seq)
{
	struct asc_batch *b;
	int ret;

	b = malloc(sizeof(*b) + count * sizeof(b->ents[0]));
	if (!b)
		return -ENOMEM;
	asc_batch_init(b, descs, count);
	pthread_mutex_lock(&c->lock);
	ret = submit_locked(c, stream, b, seq);
	pthread_mutex_unlock(&c->lock);
	if (ret)
		free(b);
	return ret;
}

/*
 * "Copy in" and "copy out" of a user array: the caller's memory may change
 * under us afterwards. A pointer the kernel's access_ok() refuses (the
 * first page, a range that wraps or leaves the user half) is -EFAULT, as
 * copy_{from,to}_user makes it; an unmapped page inside the user half
 * cannot be caught in process and faults as the caller's own access would.
 */
#define IP_USER_TOP	0x00007ffffffff000ULL

static int user_range_ok(u64 uptr, size_t len)
{
	if (uptr < 4096 || uptr + len < uptr || uptr + len > IP_USER_TOP)
		return -EFAULT;
	return 0;
}

static int copy_from_user(void *dst, u64 uptr, size_t len)
{
	int ret = user_range_ok(uptr, len);

	if (!ret)
		memcpy(dst, (const void *)(uintptr_t)uptr, len);
	return ret;
}

static int copy_to_user(u64 uptr, const void *src, size_t len)
{
	int ret = user_range_ok(uptr, len);

	if (!ret)
		memcpy((void *)(uintptr_t)uptr, src, len);
	return ret;
}

/*
 * Scratch of @n elements of @size: the idle one kept in @slot when
 * @n <= @cache (then it has room for @cache), else a fresh one.
 */
static void *buf_get(_Atomic(void *) *slot, size_t n, size_t size,
		     size_t cache)
{
	void *p;

	if (n > cache)
		return malloc(n * size);
	p = atomic_exchange(slot, NULL);
	return p ? p : malloc(cache * size);
}

static void buf_put(_Atomic(void *) *slot, void *p, size_t n, size_t cache)
{
	void *none = NULL;

	if (n <= cache && atomic_compare_exchange_strong(slot, &none, p))
		return;
	free(p);
}

#define IP_BUF_CACHE	256

static int ip_submit(struct ip_ctx *c, void *arg)
{
	struct accel_submit *s = arg;
	struct accel_desc *descs;
	u64 seq = 0;
	u32 i;
	int ret;

	ret = asc_check_submit(s, ASC_MAX_SUBMIT);
	if (ret)
		return ret;
	descs = buf_get(&c->desc_buf, s->count, sizeof(*descs),
			IP_BUF_CACHE);
	if (!descs)
		return -ENOMEM;
	ret = copy_from_user(descs, s->descs, s->count * sizeof(*descs));
	for (i = 0; !ret && i < s->count; i++)
		ret = asc_check_desc(&descs[i]);
	if (!ret)
		ret = do_submit(c, s->stream, descs, s->count, &seq);
	buf_put(&c->desc_buf, descs, s->count, IP_BUF_CACHE);
	if (!ret)
		s->seq = seq;
	return ret;
}

/* ------------------------------------------------------------------ */
/* Events and waits                                                    */
/* ------------------------------------------------------------------ */

static int ip_event_create(struct ip_ctx *c, void *arg)
{
	struct accel_event_create *ec = arg;
	struct ip_event *ev;
	int ret;

	ret = asc_check_event_create(ec);
	if (ret)
		return ret;
	ev = calloc(1, sizeof(*ev));
	if (!ev)
		return -ENOMEM;
	node_init(&ev->node);
	asc_event_init(&ev->core, ec->flags);
	pthread_mutex_lock(&c->lock);
	ret = idr_alloc(&c->events, ev, ASC_MAX_EVENTS, &ev->handle);
	if (!ret) {
		node_add(&c->all_events, &ev->node);
		ec->handle = ev->handle;
	}
	pthread_mutex_unlock(&c->lock);
	if (ret)
		free(ev);
	return ret;
}

static int ip_event_destroy(struct ip_ctx *c, void *arg)
{
	struct accel_handle *h = arg;
	struct asc_release rel = { 0 };
	struct ip_event *ev;
	int ret;

	ret = asc_check_handle(h);
	if (ret)
		return ret;
	pthread_mutex_lock(&c->lock);
	ev = idr_find(&c->events, h->handle);
	if (!ev) {
		ret = -ENOENT;
		goto out;
	}
	idr_remove(&c->events, h->handle);
	asc_event_kill(&ev->core, &rel);
	process_release(c, &rel);
	if (!ev->core.refs) {
		node_del(&ev->node);
		free(ev);
	}
out:
	pthread_mutex_unlock(&c->lock);
	return ret;
}

static int ip_event_record(struct ip_ctx *c, void *arg)
{
	struct accel_event_record *r = arg;
	struct accel_desc d;
	u64 seq = 0;
	int ret;

	ret = asc_check_event_record(r, &d);
	if (!ret)
		ret = do_submit(c, r->stream, &d, 1, &seq);
	if (!ret)
		r->seq = seq;
	return ret;
}

static int ip_event_query(struct ip_ctx *c, void *arg)
{
	struct accel_event_query *q = arg;
	struct ip_event *ev;
	u32 stream = 0;
	int ret;

	ret = asc_check_event_query(q);
	if (ret)
		return ret;
	pthread_mutex_lock(&c->lock);
	ev = idr_find(&c->events, q->handle);
	if (!ev) {
		pthread_mutex_unlock(&c->lock);
		return -ENOENT;
	}
	if (ev->core.point.tl) {
		struct ip_stream *s = container_of(ev->core.point.tl,
						   struct ip_stream, tl);

		stream = s->dead ? 0 : s->handle;
	}
	asc_event_query_fill(q, q->handle, &ev->core, stream);
	pthread_mutex_unlock(&c->lock);
	return 0;
}

static int ip_event_elapsed(struct ip_ctx *c, void *arg)
{
	struct accel_event_elapsed *el = arg;
	struct ip_event *a, *b;
	s64 ns = 0;
	int ret;

	pthread_mutex_lock(&c->lock);
	a = idr_find(&c->events, el->start);
	b = idr_find(&c->events, el->end);
	if (!a || !b) {
		ret = -ENOENT;
	} else {
		ret = asc_event_elapsed(&a->core, &b->core, &ns);
		if (!ret)
			el->elapsed_ns = ns;
	}
	pthread_mutex_unlock(&c->lock);
	return ret;
}

static int ip_event_signal(struct ip_ctx *c, void *arg)
{
	struct accel_event_signal *sg = arg;
	struct ip_event *ev;
	bool wake;
	int ret;

	ret = asc_check_event_signal(sg);
	if (ret)
		return ret;
	pthread_mutex_lock(&c->lock);
	ev = idr_find(&c->events, sg->handle);
	ret = asc_event_signal_user(ev ? &ev->core : NULL, sg, &wake);
	if (wake)
		pthread_cond_broadcast(&c->cond);
	pthread_mutex_unlock(&c->lock);
	return ret;
}

static int ip_wait(struct ip_ctx *c, void *arg)
{
	struct accel_wait *w = arg;
	struct accel_wait_entry *ents;
	struct asc_wait_item *items;
	struct asc_release rel = { 0 };
	u32 i, n = 0, first = 0;
	int ret;

	ret = asc_check_wait(w, ASC_MAX_WAIT);
	if (ret)
		return ret;
	ents = malloc(w->count * sizeof(*ents));
	items = calloc(w->count, sizeof(*items));
	if (!ents || !items) {
		ret = -ENOMEM;
		goto out_free;
	}
	ret = copy_from_user(ents, w->entries, w->count * sizeof(*ents));
	for (i = 0; !ret && i < w->count; i++)
		ret = asc_check_wait_entry(&ents[i]);
	if (ret)
		goto out_free;

	/* Capture every point now: later records do not move the target. */
	pthread_mutex_lock(&c->lock);
	for (n = 0; n < w->count; n++) {
		struct ip_event *ev = idr_find(&c->events, ents[n].event);

		ret = asc_wait_entry_validate(ev ? &ev->core : NULL, &ents[n]);
		if (ret)
			goto out_fini;
		asc_wait_item_init(&items[n], &ev->core, ents[n].value);
	}
	for (;;) {
		ret = asc_wait_check(items, n, w->flags & ACCEL_WAIT_ALL, &first);
		if (ret != -EAGAIN)
			break;
		ret = ctx_wait(c, w->timeout_ns);
		if (ret)
			break;
	}
	if (!ret || ret == -EIO)
		w->first_signaled = first;
out_fini:
	for (i = 0; i < n; i++) {
		asc_wait_item_fini(&items[i], &rel);
		process_release(c, &rel);
	}
	pthread_mutex_unlock(&c->lock);
out_free:
	free(items);
	free(ents);
	return ret;
}

/* ------------------------------------------------------------------ */
/* The executor protocol (driver/as_exec.c is the reference)           */
/* ------------------------------------------------------------------ */

static bool any_worker_copying_locked(struct ip_ctx *c)
{
	struct ip_node *n;

	for (n = c->all_streams.next; n != &c->all_streams; n = n->next)
		if (container_of(n, struct ip_stream, node)->copying)
			return true;
	return false;
}

static int ip_exec_attach(struct ip_ctx *c, void *arg)
{
	struct accel_exec_attach *a = arg;
	struct ip_node *n;
	int ret;

	ret = asc_check_exec_attach(a);
	if (ret)
		return ret;
	pthread_mutex_lock(&c->lock);
	if (c->executor) {
		pthread_mutex_unlock(&c->lock);
		return -EBUSY;
	}
	c->executor = true;
	/* A copy in progress finishes first: the executor starts after it. */
	while (any_worker_copying_locked(c))
		pthread_cond_wait(&c->cond, &c->lock);
	for (n = c->all_streams.next; n != &c->all_streams; n = n->next) {
		struct ip_stream *s = container_of(n, struct ip_stream, node);

		asc_exec_attach_stream(&s->tl, &s->q);
	}
	pthread_mutex_unlock(&c->lock);
	return 0;
}

static int ip_exec_detach(struct ip_ctx *c, void *arg)
{
	struct accel_exec_attach *a = arg;
	struct ip_node *n;
	int ret;

	ret = asc_check_exec_attach(a);
	if (ret)
		return ret;
	pthread_mutex_lock(&c->lock);
	if (!c->executor) {
		pthread_mutex_unlock(&c->lock);
		return -ENXIO;
	}
	/* What was handed out and not completed fails; the rest runs here. */
	for (n = c->all_streams.next; n != &c->all_streams; n = n->next) {
		struct ip_stream *s = container_of(n, struct ip_stream, node);

		while (asc_exec_detach_next(&s->tl, &s->q))
			retire_locked(s, -EIO);
	}
	c->executor = false;
	pthread_cond_broadcast(&c->cond);
	pthread_cond_broadcast(&c->exec_cond);
	pthread_mutex_unlock(&c->lock);
	return 0;
}

/*
 * Hand out what is fetchable, stream by stream in creation order,
 * repeating while a pass made progress: a wait on another stream's record
 * becomes fetchable once that record went out.
 */
static u32 fetch_locked(struct ip_ctx *c, struct accel_exec_item *items,
			u32 max)
{
	bool progress = true;
	u32 count = 0;

	while (progress && count < max) {
		struct ip_node *n;

		progress = false;
		for (n = c->all_streams.next; n != &c->all_streams; n = n->next) {
			struct ip_stream *s = container_of(n, struct ip_stream,
							   node);

			progress |= asc_fetch_stream(&s->tl, &s->q, items, max,
						     &count);
		}
	}
	return count;
}

static int ip_exec_fetch(struct ip_ctx *c, void *arg)
{
	struct accel_exec_fetch *f = arg;
	struct accel_exec_item *items;
	u32 count = 0;
	int ret;

	ret = asc_check_exec_fetch(f, ASC_MAX_SUBMIT);
	if (ret)
		return ret;
	items = buf_get(&c->fetch_buf, f->max_items, sizeof(*items),
			IP_BUF_CACHE);
	if (!items)
		return -ENOMEM;
	pthread_mutex_lock(&c->lock);
	for (;;) {
		if (!c->executor || c->closing) {
			ret = -ENXIO;
			break;
		}
		count = fetch_locked(c, items, f->max_items);
		if (count) {
			ret = 0;
			break;
		}
		ret = ctx_wait(c, f->timeout_ns);
		if (ret)
			break;
	}
	pthread_mutex_unlock(&c->lock);
	/* Copied out after unlocking, as the driver does. */
	if (!ret)
		ret = copy_to_user(f->items, items, count * sizeof(*items));
	if (!ret || ret == -ETIME)
		f->count = count;
	buf_put(&c->fetch_buf, items, f->max_items, IP_BUF_CACHE);
	return ret;
}

static struct ip_stream *exec_stream_locked(struct ip_ctx *c, u32 handle)
{
	struct ip_node *n;

	/* Destroyed streams still drain through the executor. */
	for (n = c->all_streams.next; n != &c->all_streams; n = n->next) {
		struct ip_stream *s = container_of(n, struct ip_stream, node);

		if (s->handle == handle)
			return s;
	}
	return NULL;
}

static int exec_done_locked(struct ip_ctx *c, const struct accel_exec_done *d)
{
	struct ip_stream *s = exec_stream_locked(c, d->stream);
	int ret, status;

	if (!s)
		return -ENOENT;
	ret = asc_exec_check_done(&s->tl, d);
	if (ret)
		return ret;
	while (asc_exec_done_next(&s->tl, &s->q, d, &status))
		retire_locked(s, status);
	return 0;
}

static int ip_exec_complete(struct ip_ctx *c, void *arg)
{
	struct accel_exec_complete *cm = arg;
	struct accel_exec_done *done;
	u32 i;
	int ret = 0;

	ret = asc_check_exec_complete(cm, ASC_MAX_SUBMIT);
	if (ret)
		return ret;
	done = buf_get(&c->done_buf, cm->count, sizeof(*done), 4 * IP_BUF_CACHE);
	if (!done)
		return -ENOMEM;
	ret = copy_from_user(done, cm->entries, cm->count * sizeof(*done));
	if (ret) {
		buf_put(&c->done_buf, done, cm->count, 4 * IP_BUF_CACHE);
		return ret;
	}
	pthread_mutex_lock(&c->lock);
	if (!c->executor)
		ret = -ENXIO;
	c->quiet_retire = true;
	for (i = 0; !ret && i < cm->count; i++)
		ret = exec_done_locked(c, &done[i]);
	c->quiet_retire = false;
	pthread_cond_broadcast(&c->cond);
	pthread_mutex_unlock(&c->lock);
	buf_put(&c->done_buf, done, cm->count, 4 * IP_BUF_CACHE);
	return ret;
}

/* ------------------------------------------------------------------ */
/* The transport                                                       */
/* ------------------------------------------------------------------ */

/* Bumped in every child of fork(): contexts opened before are not ours. */
static atomic_uint ip_fork_gen;
static pthread_once_t ip_atfork_once = PTHREAD_ONCE_INIT;

static void ip_forked(void)
{
	atomic_fetch_add(&ip_fork_gen, 1);
}

static void ip_atfork_init(void)
{
	pthread_atfork(NULL, NULL, ip_forked);
}

typedef int (*ip_ioctl_fn)(struct ip_ctx *c, void *arg);

/* The handler of every command, from the core's one list of them. */
#define ASC_IOCTL(cmd, name) \
	[ASC_IOC_##cmd] = ip_##name,
static const ip_ioctl_fn ip_ioctls[ASC_NR_IOCTLS] = {
#include "asc_ioctls.h"
#undef ASC_IOCTL
};

static int inproc_ioctl(struct accel_transport *tp, unsigned long cmd,
			void *arg)
{
	struct ip_ctx *c = &tp->ctx;
	int nr;

	/*
	 * A forked child shares no threads with us: as the driver, refuse.
	 * (A fork generation, not getpid(): no system call per call.)
	 */
	if (atomic_load_explicit(&ip_fork_gen, memory_order_relaxed) !=
	    c->fork_gen)
		return -EACCES;
	if (!arg)
		return -EFAULT;

	nr = asc_ioctl_index((unsigned int)cmd);
	if (nr < 0)
		return nr;
	return ip_ioctls[nr](c, arg);
}

static int inproc_mmap(struct accel_transport *tp, uint64_t offset,
		       size_t len, void **addr)
{
	struct ip_ctx *c = &tp->ctx;
	struct ip_region *reg;
	void *p;
	int ret = 0;

	if (offset & ((1ULL << IP_MMAP_SHIFT) - 1))
		return -EINVAL;
	pthread_mutex_lock(&c->lock);
	reg = idr_find(&c->regions, (u32)(offset >> IP_MMAP_SHIFT));
	if (!reg || reg->core.kind != IP_REGION_HOST) {
		ret = -EINVAL;
	} else if (!len || len > reg->map_len) {
		ret = -EINVAL;
	} else {
		/* A second mapping of the same pages: the user may unmap it. */
		p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED,
			 reg->memfd, 0);
		if (p == MAP_FAILED)
			ret = -ENOMEM;
		else
			*addr = p;
	}
	pthread_mutex_unlock(&c->lock);
	return ret;
}

/* A limit in MiB from the environment, else the module's default. */
static u64 env_limit_mb(const char *name, u64 def)
{
	const char *v = getenv(name);
	unsigned long long mb;
	char *end;

	if (!v || !*v)
		return def << 20;
	errno = 0;
	mb = strtoull(v, &end, 10);
	if (errno || *end || *v == '-' || mb > (UINT64_MAX >> 20)) {
		fprintf(stderr,
			"libaccel: %s=%s: not a size in MiB; using %llu\n",
			name, v, (unsigned long long)def);
		return def << 20;
	}
	return (u64)mb << 20;
}

static int inproc_open(struct accel_transport **tpp)
{
	struct accel_transport *tp;
	struct ip_ctx *c;
	pthread_condattr_t attr;

	tp = calloc(1, sizeof(*tp));
	if (!tp)
		return -ENOMEM;
	c = &tp->ctx;
	pthread_mutex_init(&c->lock, NULL);
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&c->cond, &attr);
	pthread_cond_init(&c->exec_cond, &attr);
	pthread_condattr_destroy(&attr);
	pthread_once(&ip_atfork_once, ip_atfork_init);
	c->fork_gen = atomic_load(&ip_fork_gen);
	c->pid = getpid();
	c->page_size = sysconf(_SC_PAGESIZE);
	c->max_pinned_bytes = env_limit_mb("ACCEL_INPROC_MAX_PINNED_MB",
					   IP_PINNED_MB);
	c->max_device_bytes = env_limit_mb("ACCEL_INPROC_MAX_DEVICE_MB",
					   IP_DEVICE_MB);
	node_init(&c->all_regions);
	node_init(&c->all_streams);
	node_init(&c->all_events);
	*tpp = tp;
	return 0;
}

static void inproc_close(struct accel_transport *tp)
{
	struct ip_ctx *c = &tp->ctx;
	struct ip_node *n;

	/* Cancel what has not started; running copies finish first. */
	pthread_mutex_lock(&c->lock);
	c->closing = true;
	pthread_cond_broadcast(&c->cond);
	pthread_cond_broadcast(&c->exec_cond);
	pthread_mutex_unlock(&c->lock);

	for (n = c->all_streams.next; n != &c->all_streams; n = n->next) {
		struct ip_stream *s = container_of(n, struct ip_stream, node);

		pthread_join(s->thread, NULL);
	}
	while (c->all_streams.next != &c->all_streams) {
		n = c->all_streams.next;
		node_del(n);
		free(container_of(n, struct ip_stream, node));
	}
	while (c->all_events.next != &c->all_events) {
		n = c->all_events.next;
		node_del(n);
		free(container_of(n, struct ip_event, node));
	}
	while (c->all_regions.next != &c->all_regions)
		region_free_locked(c, container_of(c->all_regions.next,
						   struct ip_region, node));
	free(c->regions.slots);
	free(c->streams.slots);
	free(c->events.slots);
	free(atomic_load(&c->fetch_buf));
	free(atomic_load(&c->done_buf));
	free(atomic_load(&c->desc_buf));
	pthread_cond_destroy(&c->exec_cond);
	pthread_cond_destroy(&c->cond);
	pthread_mutex_destroy(&c->lock);
	free(tp);
}

const struct accel_transport_ops accel_transport_inproc = {
	.name = "inproc",
	.open = inproc_open,
	.close = inproc_close,
	.ioctl = inproc_ioctl,
	.mmap = inproc_mmap,
};
