/* SPDX-License-Identifier: MIT */
/*
 * libaccel internals: objects behind generation-checked handles, the
 * context's region table, host functions and checking mode.
 */
#ifndef LIBACCEL_INT_H
#define LIBACCEL_INT_H

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <linux/types.h>

/* The uapi first: libaccel.h defers to its ACCEL_TIMEOUT_INFINITE. */
#include "accelstream.h"
#include "libaccel.h"
#include "transport.h"
#include <syslog.h>

#include "backend.h"

#define ACCEL_EXPORT __attribute__((visibility("default")))

_Static_assert(ACCEL_TIMEOUT_INFINITE == (uint64_t)(~(__u64)0),
	       "public and uapi infinite timeouts agree");

/* ------------------------------------------------------------------ */
/* Handles                                                             */
/* ------------------------------------------------------------------ */

enum accel_obj_type {
	ACCEL_OBJ_CONTEXT = 1,
	ACCEL_OBJ_STREAM,
	ACCEL_OBJ_EVENT,
};

/*
 * Every object a user can name. The handle is (generation << 32 | slot + 1);
 * killing an object bumps its slot's generation, so a stale handle never
 * matches again. @refs (under the handle lock) counts the handle itself
 * and every call in progress.
 */
struct accel_obj {
	enum accel_obj_type type;
	uint32_t slot;
	uint32_t refs;
	bool killed;
	void (*release)(struct accel_obj *obj);
};

int accel_obj_publish(struct accel_obj *obj, enum accel_obj_type type,
		      void (*release)(struct accel_obj *), uint64_t *handle);
int accel_obj_get(uint64_t handle, enum accel_obj_type type,
		  struct accel_obj **obj);
/* As accel_obj_get(), for a handle the user passed: a failure says why. */
int accel_obj_get_user(uint64_t handle, enum accel_obj_type type,
		       struct accel_obj **obj);
void accel_obj_ref(struct accel_obj *obj);
void accel_obj_put(struct accel_obj *obj);
/* Make the handle stale and drop its reference; -ENOENT if already. */
int accel_obj_kill(struct accel_obj *obj);

/* ------------------------------------------------------------------ */
/* Contexts and regions                                                */
/* ------------------------------------------------------------------ */

enum accel_region_kind {
	LA_REGION_HOST_ALLOC,	/* accel_host_alloc(): mmapped, pinned */
	LA_REGION_REGISTERED,	/* accel_host_register() */
	LA_REGION_DEVICE,		/* accel_malloc(): PROT_NONE reservation */
};

struct accel_region {
	enum accel_region_kind kind;
	uintptr_t base;
	size_t size;		/* bytes the user asked for */
	size_t map_len;		/* HOST_ALLOC, DEVICE: our mapping's length */
	uint32_t handle;	/* the transport's region handle */
	unsigned int flags;
	bool cuda_pinned;	/* cuda backend: cudaHostRegister'ed */
	int device;		/* DEVICE: the device whose memory it is */
	/*
	 * DEVICE: a chunk of the stream-ordered pool (mempool.c), whose
	 * blocks accel_malloc_async() hands out; NULL for accel_malloc().
	 */
	struct accel_pool_chunk *pool;
	/*
	 * LA_REGION_REGISTERED: another context's ACCEL_HOST_ALLOC_PORTABLE
	 * allocation imported here at its first copy (accel_portable_import());
	 * never the user's to unregister, released with the allocation.
	 */
	bool shadow;
	/* HOST_ALLOC, between fork()'s handlers: the child's snapshot. */
	uintptr_t fork_copy;
};

struct accel_hostfn_job;
struct accel_staging;
struct accel_pool;

struct accel_ctx {
	struct accel_obj obj;
	uint64_t handle;
	const struct accel_transport_ops *ops;
	struct accel_transport *tp;
	struct accel_info info;
	long page_size;
	uint64_t created;	/* creation order, for the primary context */

	/* Protects the fields below. */
	pthread_mutex_t lock;
	struct accel_region *regions;	/* sorted by base, disjoint */
	unsigned int nregions, cap_regions;
	struct accel_child *children;	/* live streams and events */

	/* Host functions: one library thread per context, started lazily. */
	pthread_t hf_thread;
	bool hf_started, hf_stopping;
	uint32_t hf_doorbell;		/* user event raised on every launch */
	uint64_t hf_bell;
	struct accel_hostfn_job *hf_head, *hf_tail;

	struct accel_ctx *next_ctx;	/* live, under accel_ctx_list_lock */
	struct accel_ctx *next_all;	/* until released, same lock (fork.c) */
	bool dead;
	/*
	 * accel_context_destroy() has begun (atomic): nothing more may be
	 * queued on the context (accel_ctx_queueing(): -ENOENT).
	 */
	bool destroying;
	/*
	 * Inherited across fork(): this process has none of the context's
	 * threads (host functions, staging workers), so nothing joins them.
	 */
	bool forked;
	/*
	 * A user event at 1 that every user's wait also waits on, failed by
	 * accel_context_destroy(): a thread blocked in a wait then returns.
	 */
	uint32_t doom;

	/* Who runs the queues (backend.h), and that backend's own state. */
	const struct accel_backend_ops *backend;
	void *backend_data;

	/* Pageable copies' pinned chunks (staging/), made on first use. */
	struct accel_staging *staging;

	/*
	 * The current device (accel_context_set_device()): new streams and
	 * device allocations go there. The transport has the same current
	 * device; @dev_lock keeps the two equal between a change and the
	 * creation that reads it, so that what libaccel records of an
	 * object's device is the transport's. Lock order: @dev_lock, then
	 * @lock. Before the backend starts, -1 asks for its default.
	 */
	pthread_mutex_t dev_lock;
	int device;
	/* The stream-ordered pool (mempool.c), under @lock; made on first use. */
	struct accel_pool *pool;
};

/* Streams and events of a context, so that destroying it kills them. */
struct accel_child {
	struct accel_obj obj;
	uint64_t handle;
	struct accel_ctx *ctx;		/* holds a reference */
	struct accel_child *prev, *next;
};

struct accel_stream_impl {
	struct accel_child child;
	uint32_t kstream;
	unsigned int flags;
	int priority;
	int device;		/* the device it runs on */
	bool is_default;
};

struct accel_event_impl {
	struct accel_child child;
	uint32_t kevent;
	unsigned int flags;
};

static inline int accel_ioctl(struct accel_ctx *ctx, unsigned long cmd,
			      void *arg)
{
	int ret = ctx->ops->ioctl(ctx->tp, cmd, arg);

	/*
	 * Work an executor backend may fetch now: it is issued from this
	 * thread (inline), not by waking the executor's thread.
	 */
	if (!ret && (cmd == ACCEL_IOC_SUBMIT || cmd == ACCEL_IOC_EVENT_RECORD ||
		     cmd == ACCEL_IOC_EVENT_SIGNAL))
		ctx->backend->kick(ctx);
	return ret;
}

/* -EACCES (and says why) for a forked child's copy of a context. */
int accel_ctx_inherited(struct accel_ctx *ctx);

/* The context named by @ctx, or the current one for NULL; referenced. */
int accel_ctx_get(accel_context *ctx, struct accel_ctx **out);
/*
 * The preamble of a call on a context: -EINVAL when @args_ok, the call's
 * own checks of its arguments, is false (before any lookup, so bad input
 * changes nothing), else accel_ctx_get().
 */
int accel_ctx_get_checked(accel_context *ctx, bool args_ok,
			  struct accel_ctx **out);
void accel_ctx_put(struct accel_ctx *ctx);
/* The calling thread's current context (or the primary), lost or not. */
int accel_ctx_get_current(struct accel_ctx **out);
/* Call @fn on every live context until it returns nonzero. */
int accel_ctx_foreach(int (*fn)(struct accel_ctx *, void *), void *arg);
/*
 * 0 while work may be queued on @ctx; -ENOENT once its destroy has begun
 * (a callback run by the destroy queues nothing), with the error string.
 */
int accel_ctx_queueing(struct accel_ctx *ctx);
/* Make @ctx the calling thread's current context (a host function's). */
void accel_ctx_make_current(struct accel_ctx *ctx);
int accel_child_link(struct accel_ctx *ctx, struct accel_child *child);
void accel_child_unlink(struct accel_child *child);
/*
 * A stream or event just looked up, referenced: 0 when its context serves
 * calls, else its reference is dropped and the error returned (-EACCES in
 * a forked child, the backend's lost-context error).
 */
int accel_child_check(struct accel_child *child);

/* A stream handle, ACCEL_STREAM_DEFAULT included; referenced. */
int accel_stream_get(accel_stream_t stream, struct accel_stream_impl **out);
/* As accel_ctx_get_checked(), for a call on a stream. */
int accel_stream_get_checked(accel_stream_t stream, bool args_ok,
			     struct accel_stream_impl **out);
void accel_stream_put(struct accel_stream_impl *s);
/*
 * A failed stream fails every call on it: the calls that queue nothing
 * (0 bytes, a getter) ask for its sticky -EIO here.
 */
/*
 * A failed stream's or point's error as calls return it: -EIO, whatever
 * failed it (a fault, a cancel), which accel_last_error_string() names.
 */
int accel_failed_errno(int error);
int accel_stream_error(struct accel_stream_impl *s);
int accel_submit(struct accel_ctx *ctx, uint32_t kstream,
		 const struct accel_desc *descs, uint32_t count, uint64_t *seq);

/* A descriptor @op on the event @ev (with @value), the rest zero. */
static inline void accel_desc_event(struct accel_desc *d, uint32_t op,
				    uint32_t ev, uint64_t value)
{
	memset(d, 0, sizeof(*d));
	d->op = op;
	d->event = ev;
	d->value = value;
}

int accel_kevent_create(struct accel_ctx *ctx, uint32_t flags,
			uint32_t *handle);
int accel_kevent_destroy(struct accel_ctx *ctx, uint32_t handle);
/*
 * ACCEL_IOC_STREAM_QUERY of @kstream, ACCEL_IOC_EVENT_QUERY of @kevent:
 * @q zeroed but for the handle, then the transport's answer; 0 or -errno.
 */
int accel_kstream_query(struct accel_ctx *ctx, uint32_t kstream,
			struct accel_stream_query *q);
int accel_kevent_query(struct accel_ctx *ctx, uint32_t kevent,
		       struct accel_event_query *q);
int accel_kwait(struct accel_ctx *ctx, struct accel_wait_entry *ents,
		uint32_t count, uint32_t flags, uint64_t timeout_ns,
		uint32_t *first);
/*
 * A user's wait: @ents has room for @count + 1 entries, the last one the
 * context's doom event; -ENOENT once the context is destroyed.
 */
int accel_kwait_user(struct accel_ctx *ctx, struct accel_wait_entry *ents,
		     uint32_t count, uint32_t flags, uint64_t timeout_ns,
		     uint32_t *first);
/*
 * Internal bit of @flags of the two calls above: the waiter sleeps in the
 * transport at once, without the backend's polling first (an event created
 * with ACCEL_EVENT_BLOCKING_SYNC). Never passed to the transport.
 */
#define ACCEL_KWAIT_BLOCKING	(1U << 31)
/* The same with an absolute CLOCK_MONOTONIC deadline. */
int accel_kwait_user_until(struct accel_ctx *ctx,
			   struct accel_wait_entry *ents, uint32_t count,
			   uint32_t flags, uint64_t deadline, uint32_t *first);
/* The most events one accel_event_wait() takes: the doom entry is ours. */
#define ACCEL_USER_WAIT_MAX(ctx)	((ctx)->info.max_wait - 1)
/* The absolute CLOCK_MONOTONIC deadline @timeout_ns (ns) from now. */
uint64_t accel_deadline(uint64_t timeout_ns);
/* The ns left until @deadline, 0 once past; ACCEL_TIMEOUT_INFINITE stays. */
uint64_t accel_deadline_left(uint64_t deadline);
int accel_doom_init(struct accel_ctx *ctx);
void accel_doom(struct accel_ctx *ctx);

/* Region lookup under ctx->lock: the region holding [ptr, ptr + len). */
struct accel_region *accel_region_find_locked(struct accel_ctx *ctx,
					      uintptr_t ptr);
struct accel_region *accel_region_after_locked(struct accel_ctx *ctx,
					       uintptr_t ptr);
/*
 * @ptr is in a region of another context than @self: that region and the
 * context's handle. Memory belongs to the context that pinned it.
 */
bool accel_region_foreign(struct accel_ctx *self, uintptr_t ptr,
			  struct accel_region *r, uint64_t *owner);
/* Library-owned pinned buffers, for staging pageable memory. */
int accel_bounce_alloc(struct accel_ctx *ctx, size_t size, uint32_t *handle,
		       void **ptr, size_t *map_len);
void accel_bounce_release(struct accel_ctx *ctx, uint32_t handle, void *ptr,
			  size_t map_len);
void accel_regions_teardown(struct accel_ctx *ctx);
/* Enter @r in the table (-ENOMEM), or take it out; under ctx->lock. */
int accel_region_insert_locked(struct accel_ctx *ctx,
			       const struct accel_region *r);
void accel_region_remove_locked(struct accel_ctx *ctx, struct accel_region *r);

/*
 * The stream-ordered pool (mempool.c). Every call that queues work naming
 * device memory resolves a pool chunk's pointer with
 * accel_pool_resolve_locked() (-EFAULT: not allocated, -EINVAL: past the
 * allocation), marks the block with accel_pool_use_begin_locked() under
 * the same hold of ctx->lock, and after its submit (done or not) calls
 * accel_pool_use_end() with the stream and the last sequence number
 * queued: a freed block is never reused before that work retired.
 */
struct pool_block;
int accel_pool_resolve_locked(struct accel_ctx *ctx,
			      const struct accel_region *r, uintptr_t ptr,
			      size_t bytes, uint64_t *offset,
			      struct pool_block **blk);
int accel_pool_use_begin_locked(struct pool_block *b);
void accel_pool_use_end(struct accel_ctx *ctx, struct pool_block *b,
			uint32_t kstream, uint64_t seq, bool queued);
/* accel_free() of a pool block (@kstream 0) or accel_free_async(). */
int accel_pool_free_locked(struct accel_ctx *ctx,
			   const struct accel_region *r, uintptr_t ptr,
			   uint32_t kstream, uint64_t seq);
/* A stream's handle is about to go: its points move to a tomb event. */
void accel_pool_stream_dead(struct accel_ctx *ctx, uint32_t kstream);
/* A synchronization returned: give back what is above the threshold. */
void accel_pool_sync(struct accel_ctx *ctx);
/* Reap and trim to @keep bytes (an allocation hit the memory limit). */
void accel_pool_trim(struct accel_ctx *ctx, size_t keep);
void accel_pool_teardown(struct accel_ctx *ctx);
/*
 * Portable pinned memory: make the ACCEL_HOST_ALLOC_PORTABLE allocation of
 * another context that holds @ptr a region of @ctx (0), or -ENOENT when
 * none does; accel_portable_forget() drops the imports of @ctx's portable
 * allocations (all of them, or the one at @base) from every other context.
 */
int accel_portable_import(struct accel_ctx *ctx, uintptr_t ptr);
bool accel_portable_within(struct accel_ctx *self, uintptr_t ptr, size_t len,
			   struct accel_region *r);
void accel_portable_forget(struct accel_ctx *owner, uintptr_t base);
/* The transport's own region calls (memory.c), for the backends. */
int accel_kregion_alloc(struct accel_ctx *ctx, size_t size, uint32_t flags,
			uint32_t *handle, uint64_t *offset);
int accel_kregion_release(struct accel_ctx *ctx, uint32_t handle,
			  uint32_t flags);
size_t accel_page_round(const struct accel_ctx *ctx, size_t size);

/* Host functions (hostfn.c). */
int accel_hostfn_launch(struct accel_ctx *ctx, uint32_t kstream,
			accel_host_fn fn, void *arg);
/*
 * The same, for the library's own jobs: @drop runs instead of @fn when
 * @fn never will (the work before it failed, or the context is destroyed
 * first), so that what @arg holds is released.
 */
int accel_hostfn_launch_drop(struct accel_ctx *ctx, uint32_t kstream,
			     accel_host_fn fn, accel_host_fn drop, void *arg);
/*
 * Context destroy: stop() ends the host-function thread (no function runs
 * after it returns); cancel() then drops the launches it never reached
 * (callbacks learn -ECANCELED, on the calling thread) and lets their
 * streams go on.
 */
void accel_hostfn_stop(struct accel_ctx *ctx);
void accel_hostfn_cancel(struct accel_ctx *ctx);
/*
 * True on a host-function thread: a call there that would block (a wait
 * with a nonzero timeout, a context destroy, which joins that very
 * thread) returns -EDEADLK instead (CUDA: cudaErrorNotPermitted).
 */
bool accel_in_host_fn(void);

/* ACCEL_CHECK (check.c). */
bool accel_check_enabled(void);
void accel_check_dst(struct accel_ctx *ctx, uintptr_t ptr, size_t len,
		     const struct accel_region *r, void **token);
int accel_check_src(struct accel_ctx *ctx, accel_stream_t stream,
		    uint64_t seq, uintptr_t ptr, size_t len,
		    const struct accel_region *r, void **token);
void accel_check_done(void *token);
void accel_check_forget(uintptr_t base, size_t len);
/*
 * A pageable destination that can no longer be written when its copy
 * finished (freed or unmapped before the synchronize): nothing is
 * written; under ACCEL_CHECK the mode's report says so.
 */
void accel_check_dst_gone(void *dst, size_t len, uint32_t kstream);

/*
 * accel_last_error_string() is about the thread's last call only: every
 * call clears it when it starts (ACCEL_API_ENTER).
 */
void accel_clear_error(void);

/*
 * The entry of every public call but accel_last_error_string() and
 * accel_strerror() (which report on the call before them): the thread's
 * error string starts empty, and when the call returns errno is what the
 * caller had, whatever system calls the library made on the way (every
 * page says errno is never set). The cleanup runs after the return value
 * is computed, on every return path.
 */
struct accel_api_scope {
	int saved_errno;
	int cancel_state;
};

/*
 * No public call is a cancellation point (libaccel(7) CANCELLATION): the
 * library's waits are condition waits under its locks, and a thread
 * cancelled in one would end holding the lock (and halfway through the
 * call). Cancellation is disabled for the whole call, and a pending
 * cancel acts at the caller's next cancellation point after it returns.
 */
static inline struct accel_api_scope accel_api_enter(void)
{
	struct accel_api_scope sc = { .saved_errno = errno };

	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &sc.cancel_state);
	accel_clear_error();
	return sc;
}

static inline void accel_api_leave(struct accel_api_scope *sc)
{
	pthread_setcancelstate(sc->cancel_state, NULL);
	errno = sc->saved_errno;
}

#define ACCEL_API_ENTER()						\
	struct accel_api_scope accel_api_scope_				\
		__attribute__((cleanup(accel_api_leave), unused)) =	\
		accel_api_enter()

/*
 * fork() (fork.c): the library's locks, taken in the lock order by the
 * prepare handler and released in the parent and the child, so that a
 * child never inherits one held by a thread it does not have.
 */
void accel_handles_lock(void);
void accel_handles_unlock(void);
void accel_check_lock(void);
void accel_check_unlock(void);
void accel_log_lock(void);
void accel_log_unlock(void);
void accel_staging_lock(struct accel_ctx *ctx);
void accel_staging_unlock(struct accel_ctx *ctx);
/* Protects the lists of contexts (context.c, fork.c). */
extern pthread_mutex_t accel_ctx_list_lock;
/* fork.c: the handlers, installed once; the list of every context. */
void accel_fork_init(void);
void accel_ctx_all_link(struct accel_ctx *ctx);
void accel_ctx_all_unlink(struct accel_ctx *ctx);

/* Devices (device.c): the device count of @ctx's backend. */
int accel_ctx_device_count(struct accel_ctx *ctx, int *count);
/* Make @device the current one (@ctx->dev_lock held); 0 or -errno. */
int accel_ctx_set_device_locked(struct accel_ctx *ctx, int device);

/* Environment (context.c). */
bool accel_env_flag(const char *name);

/*
 * Logging (log.c): libaccel writes nothing itself. accel_log() passes a
 * message (syslog priority) to the callback of accel_set_log_fn(), and
 * drops it without one; accel_error() sets the thread's
 * accel_last_error_string() and logs it.
 */
void accel_log(int prio, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void accel_error(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

#endif /* LIBACCEL_INT_H */
