/* SPDX-License-Identifier: MIT */
/*
 * The in-process transport: the accelstream ioctl ABI served by a
 * userspace model of the driver, for machines where the module cannot be
 * loaded. The rules come from the pure core (core/, compiled into libaccel
 * unchanged); these files are only the shell, each the twin of its driver
 * file: a RLIMIT_MEMLOCK charge for pinning (ip_mem.c ~ as_mem.c), a
 * mutex and condition variables for waiting, one worker thread per stream
 * as the copy engine (ip_engine.c ~ as_engine.c), streams and submission
 * (ip_stream.c ~ as_stream.c), events and host waits (ip_event.c ~
 * as_event.c), the executor protocol (ip_exec.c ~ as_exec.c) and the
 * context with its command table (ip_ctx.c ~ as_drv.c).
 *
 * Lock order: there is one lock per context (ip_ctx.lock), taken by every
 * command and by the workers, never nested with another lock of this
 * transport. Workers drop it around the memcpy of a COPY; the entry's
 * region references keep both sides alive meanwhile. MEM_REGISTER looks
 * at the user's range (faulting it in) without it, between two checks
 * under it, as the module pins outside its lock. The fetch, done and
 * desc scratch slots are lock-free (one atomic exchange each). Exported
 * events add one process-wide lock, ip_xlock, taken under a context's
 * lock and never the other way round (ip_export.c).
 */
#ifndef ACCEL_IP_H
#define ACCEL_IP_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "asc_core.h"
#include "transport.h"

#define container_of(ptr, type, member) \
	((type *)((char *)(ptr) - offsetof(type, member)))

/* The module's default max_device_mb; max_pinned_mb follows RAM. */
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
	u64 charged;		/* USER: bytes charged to pinned_bytes */
	u64 memlock;		/* USER, HOST: bytes charged to ip_memlock */
	u32 dev;		/* DEVICE: the device whose memory it is */
};

struct ip_stream {
	struct asc_timeline tl;
	struct asc_queue q;
	struct ip_node node;
	struct ip_ctx *ctx;
	u32 handle;
	u32 flags;
	s32 priority;
	u32 dev;		/* the device it runs on, fixed at creation */
	pthread_t thread;
	bool dead;		/* handle destroyed */
	bool exited;		/* worker returned */
	bool reap;		/* on the reap list: join and free */
	bool copying;		/* the worker is in a memcpy, lock dropped */
	struct ip_node exports;	/* pending ip_xevent, by seq (ip_export.c) */
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
	/*
	 * A stream of another priority than the least was created: the
	 * workers check asc_engine_outranked() before each step.
	 */
	bool priorities;
	struct ip_idr regions, streams, events;
	/* Every object until it is freed, live or waiting for references. */
	struct ip_node all_regions, all_streams, all_events;
	u64 pinned_bytes;
	u64 device_bytes;		/* on all devices */
	/* ACCEL_INPROC_MAX_PINNED_MB / _DEVICE_MB, taken at open. */
	u64 max_pinned_bytes;
	u64 max_device_bytes;		/* on each device */
	/* ACCEL_INPROC_DEVICES (taken at open) and the current device. */
	u32 ndevices;
	u32 device;
	u64 dev_bytes[ASC_MAX_DEVICES];	/* device memory on each device */
	long page_size;
	/* Exported points pending on this context's streams. */
	u32 nexports;
	/* Imported events' ip_import (ip_export.c). */
	struct ip_node imports;
	/*
	 * Imports whose exported point is done, for the notifier thread to
	 * retire; @xq and @xstop under ip_export.c's ip_xlock, with @xcond.
	 */
	struct ip_node xq;
	pthread_cond_t xcond;
	bool xstop;
	bool xthread_started;
	pthread_t xthread;
	/* The completion eventfd, -1 until asked for (ip_ctx_get_fd()). */
	int efd;
};

/* The public transport type is our context. */
struct accel_transport {
	struct ip_ctx ctx;
};

static inline void node_init(struct ip_node *h)
{
	h->prev = h->next = h;
}

static inline void node_add(struct ip_node *h, struct ip_node *n)
{
	n->next = h;
	n->prev = h->prev;
	h->prev->next = n;
	h->prev = n;
}

static inline void node_del(struct ip_node *n)
{
	n->prev->next = n->next;
	n->next->prev = n->prev;
	n->prev = n->next = n;
}

static inline u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (u64)ts.tv_sec * 1000000000ULL + (u64)ts.tv_nsec;
}

/* Scratch kept per context for the copy-in/out of the hot calls. */
#define IP_BUF_CACHE	256

/* ip_ctx.c: handles, waiting, copying user arrays, freeing what the core released. */
int ip_idr_alloc(struct ip_idr *idr, void *p, u32 max_live, u32 *handle);
void *ip_idr_find(const struct ip_idr *idr, u32 handle);
void ip_idr_remove(struct ip_idr *idr, u32 handle);
int ip_ctx_wait(struct ip_ctx *c, u64 deadline);
int ip_copy_from_user(void *dst, u64 uptr, size_t len);
int ip_copy_to_user(u64 uptr, const void *src, size_t len);
void *ip_buf_get(_Atomic(void *) *slot, size_t n, size_t size,
		 size_t cache);
void ip_buf_put(_Atomic(void *) *slot, void *p, size_t n, size_t cache);
void ip_process_release(struct ip_ctx *c, struct asc_release *rel);

/* ACCEL_INPROC_DEVICES, the module's devices parameter; 1 when unset. */
u32 ip_devices_env(void);

/* ip_mem.c */
/* In a child of fork(): it holds none of the parent's pins. */
void ip_mem_forked(void);
int ip_mem_register(struct ip_ctx *c, void *arg);
int ip_mem_alloc(struct ip_ctx *c, void *arg);
int ip_mem_release(struct ip_ctx *c, void *arg);
int ip_mem_mmap(struct accel_transport *tp, uint64_t offset,
		size_t len, void **addr);
void ip_region_free_locked(struct ip_ctx *c, struct ip_region *r);
int ip_mem_import_host(struct accel_transport *tp,
		       struct accel_transport *owner, uint32_t owner_handle,
		       uint64_t addr, uint64_t len, uint32_t *handle);

/* ip_stream.c */
int ip_stream_create(struct ip_ctx *c, void *arg);
int ip_stream_destroy(struct ip_ctx *c, void *arg);
int ip_stream_query(struct ip_ctx *c, void *arg);
int ip_stream_sync(struct ip_ctx *c, void *arg);
int ip_submit(struct ip_ctx *c, void *arg);
int ip_submit_descs(struct ip_ctx *c, u32 stream,
		    const struct accel_desc *descs, u32 count, u64 *seq);
void ip_stream_reap_locked(struct ip_ctx *c);
void ip_stream_maybe_free_locked(struct ip_stream *s);

/* ip_event.c */
int ip_event_create(struct ip_ctx *c, void *arg);
int ip_event_destroy(struct ip_ctx *c, void *arg);
int ip_event_record(struct ip_ctx *c, void *arg);
int ip_event_query(struct ip_ctx *c, void *arg);
int ip_event_elapsed(struct ip_ctx *c, void *arg);
int ip_event_signal(struct ip_ctx *c, void *arg);
int ip_wait(struct ip_ctx *c, void *arg);

/* ip_engine.c */
void ip_retire_locked(struct ip_stream *s, int status);
void *ip_stream_worker(void *arg);

/* ip_export.c */
int ip_event_export(struct ip_ctx *c, void *arg);
int ip_event_import(struct ip_ctx *c, void *arg);
void ip_export_retired_locked(struct ip_stream *s);
void ip_export_ctx_close(struct ip_ctx *c);
void ip_import_free_locked(struct asc_timeline *tl);
void ip_import_ctx_close(struct ip_ctx *c);
int ip_ctx_get_fd(struct accel_transport *tp);
void ip_ctx_count_retired_locked(struct ip_ctx *c, u64 n);

/* ip_exec.c */
int ip_exec_attach(struct ip_ctx *c, void *arg);
int ip_exec_detach(struct ip_ctx *c, void *arg);
int ip_exec_fetch(struct ip_ctx *c, void *arg);
int ip_exec_complete(struct ip_ctx *c, void *arg);

#endif /* ACCEL_IP_H */
