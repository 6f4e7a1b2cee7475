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

enum ip_region_kind {
	IP_REGION_USER,		/* a registered user range */
	IP_REGION_HOST,		/* ACCEL_MEM_HOST, a memfd the user maps */
	IP_REGION_DEVICE,	/* ACCEL_MEM_DEVICE, anonymous memory */
	IP_REGION_EXTERNAL,	/* ACCEL_MEM_EXTERNAL: an executor's range */
};

struct ip_node {
	struct ip_node *prev, *next;
};

struct ip_region {
	struct asc_region core;
	struct ip_node node;
	u32 handle;
	enum ip_region_kind kind;
	/* Where the engine reads and writes: the user range or our view. */
	unsigned char *base;
	u64 addr;		/* USER, EXTERNAL: the registered address */
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
	/*
	 * The entry last handed to the executor (seq fcur_seq): the next
	 * fetch starts after it instead of walking every in-flight entry.
	 * Valid while tl.fetched == fcur_seq > tl.completed (entries leave
	 * the queue only by retiring at its head).
	 */
	struct asc_entry *fcur;
	u64 fcur_seq;
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

	switch (r->kind) {
	case IP_REGION_USER: {
		u64 start = r->addr & ~(u64)(ps - 1);
		u64 end = (r->addr + r->core.size + ps - 1) & ~(u64)(ps - 1);
		struct ip_node *n;

		/* Pages shared with another registered range stay locked. */
		for (n = c->all_regions.next; n != &c->all_regions; n = n->next) {
			struct ip_region *o = container_of(n, struct ip_region, node);

			if (o == r || o->kind != IP_REGION_USER || !o->locked)
				continue;
			if (asc_ranges_overlap(start, ps, o->addr, o->core.size))
				start += ps;
			if (end > start &&
			    asc_ranges_overlap(end - ps, ps, o->addr, o->core.size))
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
	memset(rel, 0, sizeof(*rel));
}

/* ------------------------------------------------------------------ */
/* The copy engine                                                     */
/* ------------------------------------------------------------------ */

static void retire_locked(struct ip_stream *s, int status)
{
	struct ip_ctx *c = s->ctx;
	struct asc_release rel = { 0 };
	struct asc_entry *e;

	e = asc_retire_head(&s->tl, &s->q, status, now_ns(), &rel);
	if (s->tl.fetched < s->tl.completed)
		s->tl.fetched = s->tl.completed;
	free(e);
	process_release(c, &rel);
	if (s->dead && !s->q.count)
		pthread_cond_broadcast(&c->exec_cond);
	if (!c->quiet_retire)
		pthread_cond_broadcast(&c->cond);
}

static bool entry_external(const struct asc_entry *e)
{
	return e->desc.op == ACCEL_OP_COPY &&
	       (container_of(e->dst, struct ip_region, core)->kind ==
		IP_REGION_EXTERNAL ||
		container_of(e->src, struct ip_region, core)->kind ==
		IP_REGION_EXTERNAL);
}

static void *stream_worker(void *arg)
{
	struct ip_stream *s = arg;
	struct ip_ctx *c = s->ctx;
	struct asc_entry *e;
	int ready;

	pthread_mutex_lock(&c->lock);
	for (;;) {
		e = asc_queue_peek(&s->q);
		if (!e) {
			if (s->dead || c->closing)
				break;
			pthread_cond_wait(c->executor ? &c->exec_cond : &c->cond,
					  &c->lock);
			continue;
		}
		if (c->closing) {
			retire_locked(s, -ECANCELED);
			continue;
		}
		/* The executor fetches and completes; we only wait. */
		if (c->executor) {
			pthread_cond_wait(&c->exec_cond, &c->lock);
			continue;
		}
		/* Behind a failure, descriptors retire without running. */
		if (s->tl.error) {
			retire_locked(s, s->tl.error);
			continue;
		}
		ready = asc_entry_ready(e);
		if (ready == 0) {
			pthread_cond_wait(&c->cond, &c->lock);
			continue;
		}
		if (ready < 0) {
			retire_locked(s, ready);
			continue;
		}
		if (entry_external(e)) {
			/* Only an executor can reach its memory. */
			retire_locked(s, -ENXIO);
			continue;
		}
		if (e->desc.op == ACCEL_OP_COPY && e->desc.length) {
			struct ip_region *dst = container_of(e->dst,
							     struct ip_region, core);
			struct ip_region *src = container_of(e->src,
							     struct ip_region, core);
			unsigned char *d = dst->base + e->desc.dst_offset;
			const unsigned char *from = src->base + e->desc.src_offset;

			s->copying = true;
			pthread_mutex_unlock(&c->lock);
			memmove(d, from, e->desc.length);
			pthread_mutex_lock(&c->lock);
			s->copying = false;
		} else {
			asc_entry_execute(e);
		}
		retire_locked(s, 0);
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

static int ip_get_info(struct ip_ctx *c, struct accel_info *info)
{
	int ret = asc_check_info(info);

	if (ret)
		return ret;
	memset(info, 0, sizeof(*info));
	info->abi_version = ACCEL_ABI_VERSION;
	info->caps = ACCEL_CAP_SOFT_ENGINE | ACCEL_CAP_HOST_ALLOC |
		     ACCEL_CAP_DEVICE_MEM | ACCEL_CAP_USER_EVENTS |
		     ACCEL_CAP_EVENT_TIMING | ACCEL_CAP_DEFERRED_RELEASE |
		     ACCEL_CAP_EXECUTOR;
	info->max_streams = ASC_MAX_STREAMS;
	info->max_events = ASC_MAX_EVENTS;
	info->max_regions = ASC_MAX_REGIONS;
	info->max_submit = ASC_MAX_SUBMIT;
	info->queue_depth = ASC_QUEUE_DEPTH;
	info->max_wait = ASC_MAX_WAIT;
	info->greatest_priority = ASC_GREATEST_PRIORITY;
	info->least_priority = ASC_LEAST_PRIORITY;
	info->max_pinned_bytes = c->max_pinned_bytes;
	info->max_device_bytes = c->max_device_bytes;
	info->page_size = (u32)c->page_size;
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
	reg->kind = IP_REGION_EXTERNAL;
	reg->addr = r->addr;
	reg->core.size = r->size;
	reg->core.flags = r->flags;
	reg->memfd = -1;

	pthread_mutex_lock(&c->lock);
	for (n = c->all_regions.next; n != &c->all_regions; n = n->next) {
		struct ip_region *o = container_of(n, struct ip_region, node);

		if (o->kind == IP_REGION_EXTERNAL && !o->core.released &&
		    asc_ranges_overlap(r->addr, r->size, o->addr, o->core.size)) {
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

static int ip_mem_register(struct ip_ctx *c, struct accel_mem_register *r)
{
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
	reg->kind = IP_REGION_USER;
	reg->addr = r->addr;
	reg->base = (unsigned char *)(uintptr_t)r->addr;
	reg->core.size = r->size;
	reg->core.flags = r->flags;
	reg->memfd = -1;

	pthread_mutex_lock(&c->lock);
	for (n = c->all_regions.next; n != &c->all_regions; n = n->next) {
		struct ip_region *o = container_of(n, struct ip_region, node);

		if (o->kind == IP_REGION_USER && !o->core.released &&
		    asc_ranges_overlap(r->addr, r->size, o->addr, o->core.size)) {
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

static int ip_mem_alloc(struct ip_ctx *c, struct accel_mem_alloc *a)
{
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
		reg->kind = IP_REGION_HOST;
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
		reg->kind = IP_REGION_DEVICE;
		reg->base = mmap(NULL, len, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
				 -1, 0);
		if (reg->base == MAP_FAILED) {
			ret = -ENOMEM;
			goto err_free;
		}
	}

	pthread_mutex_lock(&c->lock);
	if (reg->kind == IP_REGION_HOST ?
	    len > c->max_pinned_bytes - c->pinned_bytes :
	    len > c->max_device_bytes - c->device_bytes) {
		ret = -ENOMEM;
		goto err_unlock;
	}
	ret = idr_alloc(&c->regions, reg, ASC_MAX_REGIONS, &reg->handle);
	if (ret)
		goto err_unlock;
	node_add(&c->all_regions, &reg->node);
	if (reg->kind == IP_REGION_HOST)
		c->pinned_bytes += len;
	else
		c->device_bytes += len;
	a->handle = reg->handle;
	a->mmap_offset = reg->kind == IP_REGION_HOST ?
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

static int ip_mem_release(struct ip_ctx *c, struct accel_mem_release *r)
{
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

static int ip_stream_create(struct ip_ctx *c, struct accel_stream_create *sc)
{
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
	sc->handle = s->handle;
	pthread_mutex_unlock(&c->lock);
	return 0;

err_unlock:
	pthread_mutex_unlock(&c->lock);
	free(s);
	return ret;
}

static int ip_stream_destroy(struct ip_ctx *c, struct accel_handle *h)
{
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

static int ip_stream_query(struct ip_ctx *c, struct accel_stream_query *q)
{
	struct ip_stream *s;
	int ret = 0;

	if (q->pad)
		return -EINVAL;
	pthread_mutex_lock(&c->lock);
	s = idr_find(&c->streams, q->handle);
	if (!s) {
		ret = -ENOENT;
	} else {
		q->submitted = s->tl.submitted;
		q->completed = s->tl.completed;
		q->error = s->tl.error;
		q->flags = s->flags;
		q->priority = s->priority;
		q->queued = s->q.count;
	}
	pthread_mutex_unlock(&c->lock);
	return ret;
}

static int ip_stream_sync(struct ip_ctx *c, struct accel_stream_sync *ss)
{
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
	seq = ss->seq ? ss->seq : s->tl.submitted;
	if (seq > s->tl.submitted) {
		ret = -EINVAL;
		goto out;
	}
	if (!seq)
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

static int resolve_desc(struct ip_ctx *c, const struct accel_desc *d,
			struct asc_entry *e)
{
	struct ip_region *dst = NULL, *src = NULL;
	struct ip_event *ev = NULL;

	e->desc = *d;
	e->dst = e->src = NULL;
	e->event = NULL;
	switch (d->op) {
	case ACCEL_OP_COPY:
		dst = idr_find(&c->regions, d->dst);
		src = idr_find(&c->regions, d->src);
		if (!dst || !src)
			return -ENOENT;
		e->dst = &dst->core;
		e->src = &src->core;
		break;
	case ACCEL_OP_EVENT_RECORD:
	case ACCEL_OP_STREAM_WAIT:
	case ACCEL_OP_HOST_WAIT:
	case ACCEL_OP_HOST_SIGNAL:
		ev = idr_find(&c->events, d->event);
		if (!ev)
			return -ENOENT;
		e->event = &ev->core;
		break;
	default:
		break;
	}
	return asc_validate_desc(d, e->dst, e->src, e->event);
}

static int submit_locked(struct ip_ctx *c, u32 stream,
			 const struct accel_desc *descs, u32 count,
			 struct asc_entry **entries, u64 *seq)
{
	struct asc_release rel = { 0 };
	struct ip_stream *s;
	u32 i;
	int ret;

	s = idr_find(&c->streams, stream);
	if (!s)
		return -ENOENT;
	if (s->tl.error)
		return -EIO;
	if (s->q.count + count > ASC_QUEUE_DEPTH)
		return -EAGAIN;
	for (i = 0; i < count; i++) {
		ret = resolve_desc(c, &descs[i], entries[i]);
		if (ret)
			return ret;
	}
	for (i = 0; i < count && !c->executor; i++) {
		if (entry_external(entries[i]))
			return -ENXIO;
	}
	for (i = 0; i < count; i++) {
		asc_enqueue(&s->tl, &s->q, entries[i], &rel);
		process_release(c, &rel);
	}
	*seq = s->tl.submitted;
	pthread_cond_broadcast(&c->cond);
	return 0;
}

static int do_submit(struct ip_ctx *c, u32 stream,
		     const struct accel_desc *descs, u32 count, u64 *seq)
{
	struct asc_entry **entries, *few[64];
	u32 i;
	int ret = 0;

	/* Cheap checks and allocation before the lock, as an ioctl does. */
	for (i = 0; i < count; i++) {
		ret = asc_check_desc(&descs[i]);
		if (ret)
			return ret;
	}
	if (count <= 64) {
		entries = few;
		memset(few, 0, count * sizeof(*few));
	} else {
		entries = calloc(count, sizeof(*entries));
	}
	if (!entries)
		return -ENOMEM;
	for (i = 0; i < count; i++) {
		entries[i] = calloc(1, sizeof(**entries));
		if (!entries[i]) {
			ret = -ENOMEM;
			goto out;
		}
	}
	pthread_mutex_lock(&c->lock);
	ret = submit_locked(c, stream, descs, count, entries, seq);
	pthread_mutex_unlock(&c->lock);
out:
	if (ret) {
		for (i = 0; i < count; i++)
			free(entries[i]);
	}
	if (entries != few)
		free(entries);
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

static int ip_submit(struct ip_ctx *c, struct accel_submit *s)
{
	struct accel_desc *descs;
	u64 seq = 0;
	int ret;

	ret = asc_check_submit(s, ASC_MAX_SUBMIT);
	if (ret)
		return ret;
	/* "Copy in", so that the caller's array may change under us. */
	descs = buf_get(&c->desc_buf, s->count, sizeof(*descs),
			IP_BUF_CACHE);
	if (!descs)
		return -ENOMEM;
	memcpy(descs, (const void *)(uintptr_t)s->descs,
	       s->count * sizeof(*descs));
	ret = do_submit(c, s->stream, descs, s->count, &seq);
	buf_put(&c->desc_buf, descs, s->count, IP_BUF_CACHE);
	if (!ret)
		s->seq = seq;
	return ret;
}

/* ------------------------------------------------------------------ */
/* Events and waits                                                    */
/* ------------------------------------------------------------------ */

static int ip_event_create(struct ip_ctx *c, struct accel_event_create *ec)
{
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

static int ip_event_destroy(struct ip_ctx *c, struct accel_handle *h)
{
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

static int ip_event_record(struct ip_ctx *c, struct accel_event_record *r)
{
	struct accel_desc d = {
		.op = ACCEL_OP_EVENT_RECORD,
		.event = r->event,
	};

	u64 seq = 0;
	int ret;

	ret = do_submit(c, r->stream, &d, 1, &seq);
	if (!ret)
		r->seq = seq;
	return ret;
}

static int ip_event_query(struct ip_ctx *c, struct accel_event_query *q)
{
	struct ip_event *ev;
	int error;

	if (q->pad)
		return -EINVAL;
	pthread_mutex_lock(&c->lock);
	ev = idr_find(&c->events, q->handle);
	if (!ev) {
		pthread_mutex_unlock(&c->lock);
		return -ENOENT;
	}
	q->state = (u32)asc_event_state(&ev->core, &error);
	q->error = error;
	q->stream = 0;
	if (ev->core.point.tl) {
		struct ip_stream *s = container_of(ev->core.point.tl,
						   struct ip_stream, tl);

		q->stream = s->dead ? 0 : s->handle;
	}
	q->flags = ev->core.flags;
	q->seq = ev->core.point.seq;
	q->value = ev->core.value;
	q->timestamp_ns = ev->core.timestamp_ns;
	pthread_mutex_unlock(&c->lock);
	return 0;
}

static int ip_event_elapsed(struct ip_ctx *c, struct accel_event_elapsed *el)
{
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

static int ip_event_signal(struct ip_ctx *c, struct accel_event_signal *sg)
{
	struct ip_event *ev;
	int ret;

	ret = asc_check_event_signal(sg);
	if (ret)
		return ret;
	pthread_mutex_lock(&c->lock);
	ev = idr_find(&c->events, sg->handle);
	if (!ev) {
		ret = -ENOENT;
	} else if (!(ev->core.flags & ACCEL_EVENT_USER)) {
		ret = -EINVAL;
	} else if (asc_event_signal(&ev->core, sg->value,
				   sg->flags & ACCEL_SIGNAL_ERROR)) {
		pthread_cond_broadcast(&c->cond);
	}
	pthread_mutex_unlock(&c->lock);
	return ret;
}

static int ip_wait(struct ip_ctx *c, struct accel_wait *w)
{
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
	memcpy(ents, (const void *)(uintptr_t)w->entries,
	       w->count * sizeof(*ents));
	for (i = 0; i < w->count; i++) {
		ret = asc_check_wait_entry(&ents[i]);
		if (ret)
			goto out_free;
	}

	pthread_mutex_lock(&c->lock);
	for (i = 0; i < w->count; i++) {
		struct ip_event *ev = idr_find(&c->events, ents[i].event);

		if (!ev) {
			ret = -ENOENT;
			goto out_fini;
		}
		if (!(ev->core.flags & ACCEL_EVENT_USER) && ents[i].value) {
			ret = -EINVAL;
			goto out_fini;
		}
	}
	/* Capture every point now: later records do not move the target. */
	for (n = 0; n < w->count; n++)
		asc_wait_item_init(&items[n],
				  &((struct ip_event *)idr_find(&c->events,
					ents[n].event))->core, ents[n].value);
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

static int ip_exec_attach(struct ip_ctx *c, struct accel_exec_attach *a)
{
	struct ip_node *n;

	if (a->flags || a->pad)
		return -EINVAL;
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

		s->tl.fetched = s->tl.completed;
	}
	pthread_mutex_unlock(&c->lock);
	return 0;
}

static int ip_exec_detach(struct ip_ctx *c, struct accel_exec_attach *a)
{
	struct ip_node *n;

	if (a->flags || a->pad)
		return -EINVAL;
	pthread_mutex_lock(&c->lock);
	if (!c->executor) {
		pthread_mutex_unlock(&c->lock);
		return -ENXIO;
	}
	/* What was handed out and not completed fails; the rest runs here. */
	for (n = c->all_streams.next; n != &c->all_streams; n = n->next) {
		struct ip_stream *s = container_of(n, struct ip_stream, node);

		while (s->q.count && s->tl.fetched > s->tl.completed)
			retire_locked(s, -EIO);
	}
	c->executor = false;
	pthread_cond_broadcast(&c->cond);
	pthread_cond_broadcast(&c->exec_cond);
	pthread_mutex_unlock(&c->lock);
	return 0;
}

static void exec_fill(const struct ip_stream *s, const struct asc_entry *e,
		      struct accel_exec_item *it)
{
	struct asc_timeline *wait = asc_exec_item_init(e, it);

	it->stream = s->handle;
	if (wait)
		it->wait_stream = container_of(wait, struct ip_stream, tl)->handle;
	if (e->desc.op == ACCEL_OP_COPY) {
		const struct ip_region *d = container_of(e->dst, struct ip_region,
							 core);
		const struct ip_region *r = container_of(e->src, struct ip_region,
							 core);
		static const u32 kinds[] = {
			[IP_REGION_USER] = ACCEL_REGION_HOST,
			[IP_REGION_HOST] = ACCEL_REGION_HOST_ALLOC,
			[IP_REGION_DEVICE] = ACCEL_REGION_DEVICE,
			[IP_REGION_EXTERNAL] = ACCEL_REGION_EXTERNAL,
		};

		it->dst_kind = kinds[d->kind];
		it->src_kind = kinds[r->kind];
		if (d->kind == IP_REGION_USER || d->kind == IP_REGION_EXTERNAL)
			it->dst_addr = d->addr + e->desc.dst_offset;
		if (r->kind == IP_REGION_USER || r->kind == IP_REGION_EXTERNAL)
			it->src_addr = r->addr + e->desc.src_offset;
	}
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
			struct asc_entry *e;

			if (s->tl.error)
				continue;
			e = asc_queue_peek(&s->q);
			if (s->fcur && s->fcur_seq == s->tl.fetched &&
			    s->tl.completed < s->fcur_seq)
				e = s->fcur->next;
			for (; e; e = e->next) {
				if (e->seq <= s->tl.fetched)
					continue;
				if (count == max || !asc_entry_fetchable(e))
					break;
				exec_fill(s, e, &items[count++]);
				s->tl.fetched = e->seq;
				s->fcur = e;
				s->fcur_seq = e->seq;
				progress = true;
			}
		}
	}
	return count;
}

static int ip_exec_fetch(struct ip_ctx *c, struct accel_exec_fetch *f)
{
	struct accel_exec_item *items;
	u32 count = 0;
	int ret;

	if (f->flags || f->pad || !f->items || !f->max_items ||
	    f->max_items > ASC_MAX_SUBMIT)
		return -EINVAL;
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
	/* "Copy out", outside the lock as the driver does. */
	if (!ret)
		memcpy((void *)(uintptr_t)f->items, items,
		       count * sizeof(*items));
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
	int ret;

	if (!s)
		return -ENOENT;
	ret = asc_exec_check_done(&s->tl, d);
	if (ret)
		return ret;
	while (s->tl.completed < d->seq)
		retire_locked(s, asc_exec_done_status(&s->tl, asc_queue_peek(&s->q),
						     d));
	/* A failed stream runs nothing more: what was not handed out goes. */
	if (asc_exec_cancel_rest(&s->tl)) {
		while (s->q.count)
			retire_locked(s, -ECANCELED);
	}
	return 0;
}

static int ip_exec_complete(struct ip_ctx *c, struct accel_exec_complete *cm)
{
	struct accel_exec_done *done;
	u32 i;
	int ret = 0;

	if (cm->pad || !cm->entries || !cm->count || cm->count > ASC_MAX_SUBMIT)
		return -EINVAL;
	/* "Copy in": a bad pointer is -EFAULT, as from the driver. */
	if (cm->entries < 4096)
		return -EFAULT;
	done = buf_get(&c->done_buf, cm->count, sizeof(*done), 4 * IP_BUF_CACHE);
	if (!done)
		return -ENOMEM;
	memcpy(done, (const void *)(uintptr_t)cm->entries,
	       cm->count * sizeof(*done));
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

static int inproc_ioctl(struct accel_transport *tp, unsigned long cmd,
			void *arg)
{
	struct ip_ctx *c = &tp->ctx;

	/*
	 * A forked child shares no threads with us: as the driver, refuse.
	 * (A fork generation, not getpid(): no system call per call.)
	 */
	if (atomic_load_explicit(&ip_fork_gen, memory_order_relaxed) !=
	    c->fork_gen)
		return -EACCES;
	if (!arg)
		return -EFAULT;

	switch (cmd) {
	case ACCEL_IOC_GET_INFO:
		return ip_get_info(c, arg);
	case ACCEL_IOC_MEM_REGISTER:
		return ip_mem_register(c, arg);
	case ACCEL_IOC_MEM_ALLOC:
		return ip_mem_alloc(c, arg);
	case ACCEL_IOC_MEM_RELEASE:
		return ip_mem_release(c, arg);
	case ACCEL_IOC_STREAM_CREATE:
		return ip_stream_create(c, arg);
	case ACCEL_IOC_STREAM_DESTROY:
		return ip_stream_destroy(c, arg);
	case ACCEL_IOC_STREAM_QUERY:
		return ip_stream_query(c, arg);
	case ACCEL_IOC_STREAM_SYNC:
		return ip_stream_sync(c, arg);
	case ACCEL_IOC_SUBMIT:
		return ip_submit(c, arg);
	case ACCEL_IOC_EVENT_CREATE:
		return ip_event_create(c, arg);
	case ACCEL_IOC_EVENT_DESTROY:
		return ip_event_destroy(c, arg);
	case ACCEL_IOC_EVENT_RECORD:
		return ip_event_record(c, arg);
	case ACCEL_IOC_EVENT_QUERY:
		return ip_event_query(c, arg);
	case ACCEL_IOC_EVENT_ELAPSED:
		return ip_event_elapsed(c, arg);
	case ACCEL_IOC_EVENT_SIGNAL:
		return ip_event_signal(c, arg);
	case ACCEL_IOC_WAIT:
		return ip_wait(c, arg);
	case ACCEL_IOC_EXEC_ATTACH:
		return ip_exec_attach(c, arg);
	case ACCEL_IOC_EXEC_DETACH:
		return ip_exec_detach(c, arg);
	case ACCEL_IOC_EXEC_FETCH:
		return ip_exec_fetch(c, arg);
	case ACCEL_IOC_EXEC_COMPLETE:
		return ip_exec_complete(c, arg);
	default:
		return -ENOTTY;
	}
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
	if (!reg || reg->kind != IP_REGION_HOST) {
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
