// SPDX-License-Identifier: MIT
/*
 * Contexts: one transport connection each, the current context of a
 * thread, and the environment that picks the transport and backend.
 * What fork() does to them (the atfork handlers, the child's snapshot of
 * pinned memory, ACCEL_FORK_COPY_MAX_MB) is fork.c.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "accel_int.h"
#include "staging.h"

/*
 * Lock order (every lock of libaccel outside the transports and the cuda
 * backend; the fork() handlers, fork.c, take them in this order):
 *
 *   accel_ctx_list_lock  the lists of contexts (here and fork.c)
 *     ctx->lock            one context at a time, never two
 *       pool->lock         staging/stage.h; never held while taking ctx->lock
 *         handle_lock      handle.c, a leaf
 *         check_lock       check.c, a leaf
 *         log_lock         log.c, a leaf (held only to read the callback)
 *
 * A transport's and the cuda backend's locks nest inside ctx->lock and
 * pool->lock (a submit or an event ioctl under them) and take none of the
 * above. The handlers leave those alone: a forked child's calls on an
 * inherited context are refused (-EACCES) before the transport locks
 * anything, and its own contexts have locks of their own.
 */

/* Protects ctx_list, ctx_seq and fork.c's list of every context. */
pthread_mutex_t accel_ctx_list_lock = PTHREAD_MUTEX_INITIALIZER;
static struct accel_ctx *ctx_list;	/* live, for the primary context */
static uint64_t ctx_seq;

static __thread uint64_t current_ctx;

bool accel_env_flag(const char *name)
{
	const char *v = getenv(name);

	return v && *v && strcmp(v, "0") != 0;
}

/* CLOCK_MONOTONIC now, in ns: the clock every deadline is read on. */
static uint64_t monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

uint64_t accel_deadline(uint64_t timeout_ns)
{
	uint64_t now;

	if (timeout_ns == ACCEL_TIMEOUT_INFINITE)
		return ACCEL_TIMEOUT_INFINITE;
	now = monotonic_ns();
	if (timeout_ns >= ACCEL_TIMEOUT_INFINITE - now)
		return ACCEL_TIMEOUT_INFINITE - 1;
	return now + timeout_ns;
}

uint64_t accel_deadline_left(uint64_t deadline)
{
	uint64_t now;

	if (deadline == ACCEL_TIMEOUT_INFINITE)
		return ACCEL_TIMEOUT_INFINITE;
	now = monotonic_ns();
	return deadline > now ? deadline - now : 0;
}

/*
 * The backends this build has, cpu first; ACCEL_BACKEND=auto takes the
 * first other one that starts, else cpu. A backend the build lacks is not
 * here: naming it is -ENODEV with a message saying so.
 */
static const struct accel_backend_ops *const backends[] = {
	&accel_backend_cpu,
#ifdef ACCEL_HAVE_CUDA
	&accel_backend_cuda,
#endif
};
#define NBACKENDS	(sizeof(backends) / sizeof(backends[0]))

/*
 * Which backend ACCEL_BACKEND asks for: NULL with *auto_ for "auto", NULL
 * alone for one this build lacks (start_backend() says so).
 */
static int pick_backend(const struct accel_backend_ops **out, bool *auto_)
{
	const char *b = getenv("ACCEL_BACKEND");
	unsigned int i;

	*out = &accel_backend_cpu;
	*auto_ = false;
	if (!b || !*b)
		return 0;
	if (!strcmp(b, "auto")) {
		*out = NULL;
		*auto_ = true;
		return 0;
	}
	for (i = 0; i < NBACKENDS; i++) {
		if (!strcmp(b, backends[i]->name)) {
			*out = backends[i];
			return 0;
		}
	}
	if (!strcmp(b, "cuda")) {
		*out = NULL;
		return 0;
	}
	accel_error("ACCEL_BACKEND=%s: unknown backend (cpu, cuda or auto)", b);
	return -EINVAL;
}

/* The backend asked for, or with auto the first device backend that starts. */
static int start_backend(struct accel_ctx *ctx,
			 const struct accel_backend_ops *b, bool auto_)
{
	unsigned int i;

	if (!b && !auto_) {
		accel_error("ACCEL_BACKEND=cuda: libaccel was built without CUDA (no cuda_runtime_api.h at build time); rebuild it where the CUDA toolkit is installed");
		return -ENODEV;
	}
	if (!auto_) {
		ctx->backend = b;
		return b->start(ctx, false);
	}
	for (i = 1; i < NBACKENDS; i++) {
		ctx->backend = backends[i];
		if (!backends[i]->start(ctx, true))
			return 0;
	}
	ctx->backend = &accel_backend_cpu;
	return ctx->backend->start(ctx, false);
}

const char *accel_backend_name(const struct accel_ctx *ctx)
{
	return ctx->backend->name;
}

int accel_backend_check(struct accel_ctx *ctx)
{
	const char *why;

	if (!ctx->backend->lost(ctx, &why))
		return 0;
	accel_set_error("context lost: %s", why);
	return -ACCEL_ERR_LOST;
}

void accel_backend_stop(struct accel_ctx *ctx)
{
	ctx->backend->stop(ctx);
}

/* The context's descriptor (/dev/accelstream) could not be opened. */
static void open_fd_error(int err)
{
	accel_error("cannot open /dev/accelstream: %s: %s", strerror(-err),
		    err == -EMFILE ?
		    "the process is at RLIMIT_NOFILE (raise it with ulimit -n, LimitNOFILE= or limits.conf nofile, or close descriptors)" :
		    "the system is at fs.file-max");
}

static int pick_transport(const struct accel_transport_ops **ops,
			  struct accel_transport **tp)
{
	const char *t = getenv("ACCEL_TRANSPORT");
	int ret;

	if (t && *t) {
		if (!strcmp(t, "kernel")) {
			*ops = &accel_transport_kernel;
		} else if (!strcmp(t, "inproc")) {
			*ops = &accel_transport_inproc;
		} else {
			accel_error("ACCEL_TRANSPORT=%s: unknown transport (kernel or inproc)",
				    t);
			return -EINVAL;
		}
		ret = (*ops)->open(tp);
		if (ret == -EMFILE || ret == -ENFILE) {
			open_fd_error(ret);
		} else if (ret && *ops == &accel_transport_kernel) {
			accel_error("cannot open /dev/accelstream: %s; load the module (accelctl load, or modprobe accelstream)",
				    strerror(-ret));
		} else if (ret) {
			accel_error("%s transport: %s", (*ops)->name,
				    strerror(-ret));
		}
		return ret;
	}
	*ops = &accel_transport_kernel;
	ret = (*ops)->open(tp);
	if (ret == -EMFILE || ret == -ENFILE) {
		open_fd_error(ret);
		return ret;
	}
	if (ret) {
		accel_error("cannot open /dev/accelstream: %s; load the module (accelctl load, or modprobe accelstream), or set ACCEL_TRANSPORT=inproc to run the in-process model",
			    strerror(-ret));
		return -ENODEV;
	}
	return 0;
}

static int check_abi(struct accel_ctx *ctx)
{
	int ret;

	memset(&ctx->info, 0, sizeof(ctx->info));
	ret = accel_ioctl(ctx, ACCEL_IOC_GET_INFO, &ctx->info);
	if (ret) {
		accel_error("%s transport: GET_INFO failed: %s",
			    ctx->ops->name, strerror(-ret));
		return ret;
	}
	if (ctx->info.abi_version != ACCEL_ABI_VERSION) {
		accel_error("the accelstream driver speaks ABI %u, this libaccel speaks ABI %u: upgrade %s",
			    ctx->info.abi_version, ACCEL_ABI_VERSION,
			    ctx->info.abi_version > ACCEL_ABI_VERSION ?
			    "libaccel" : "the accelstream module");
		return -EPROTO;
	}
	return 0;
}

static void ctx_release(struct accel_obj *obj)
{
	struct accel_ctx *ctx = (struct accel_ctx *)obj;

	/* Out of the fork handlers' reach before anything is freed. */
	accel_ctx_all_unlink(ctx);

	/* The device finishes what it was handed before memory goes. */
	accel_backend_stop(ctx);
	accel_staging_stop(ctx);
	accel_regions_teardown(ctx);
	accel_pool_teardown(ctx);
	accel_staging_teardown(ctx);
	ctx->ops->close(ctx->tp);
	ctx->backend->teardown(ctx);
	pthread_mutex_destroy(&ctx->dev_lock);
	pthread_mutex_destroy(&ctx->lock);
	free(ctx->regions);
	free(ctx);
}

/*
 * A context whose current device is @device, or the backend's default
 * for -1 (device 0, or ACCEL_CUDA_DEVICE for the cuda backend).
 */
static int context_create(accel_context **out, int device)
{
	const struct accel_backend_ops *backend;
	struct accel_ctx *ctx;
	bool auto_;
	int ret;

	accel_fork_init();
	ret = pick_backend(&backend, &auto_);
	if (ret)
		return ret;
	ctx = calloc(1, sizeof(*ctx));
	if (!ctx)
		return -ENOMEM;
	pthread_mutex_init(&ctx->lock, NULL);
	pthread_mutex_init(&ctx->dev_lock, NULL);
	ctx->device = device;
	ctx->page_size = sysconf(_SC_PAGESIZE);
	accel_ctx_all_link(ctx);
	ctx->backend = &accel_backend_cpu;
	ret = pick_transport(&ctx->ops, &ctx->tp);
	if (ret)
		goto err_free;
	ret = check_abi(ctx);
	if (!ret)
		ret = accel_doom_init(ctx);
	if (ret)
		goto err_close;
	ret = start_backend(ctx, backend, auto_);
	if (ret)
		goto err_close;
	/* The cpu backend starts on device 0; the cuda one on its GPU. */
	if (ctx->backend == &accel_backend_cpu) {
		ctx->device = 0;
		if (device > 0) {
			pthread_mutex_lock(&ctx->dev_lock);
			ret = accel_ctx_set_device_locked(ctx, device);
			pthread_mutex_unlock(&ctx->dev_lock);
			if (ret)
				goto err_backend;
		}
	}
	ret = accel_obj_publish(&ctx->obj, ACCEL_OBJ_CONTEXT, ctx_release,
				&ctx->handle);
	if (ret)
		goto err_backend;

	pthread_mutex_lock(&accel_ctx_list_lock);
	ctx->created = ++ctx_seq;
	ctx->next_ctx = ctx_list;
	ctx_list = ctx;
	pthread_mutex_unlock(&accel_ctx_list_lock);

	current_ctx = ctx->handle;
	*out = (accel_context *)(uintptr_t)ctx->handle;
	/* auto may have tried cuda first: that is no failure of this call. */
	accel_clear_error();
	return 0;

err_backend:
	accel_backend_stop(ctx);
err_close:
	ctx->ops->close(ctx->tp);
	ctx->backend->teardown(ctx);
err_free:
	accel_ctx_all_unlink(ctx);
	pthread_mutex_destroy(&ctx->dev_lock);
	pthread_mutex_destroy(&ctx->lock);
	free(ctx);
	return ret;
}

ACCEL_EXPORT
int accel_context_create(accel_context **out, unsigned int flags)
{
	ACCEL_API_ENTER();

	if (!out || flags)
		return -EINVAL;
	return context_create(out, -1);
}

ACCEL_EXPORT
int accel_context_create_on_device(accel_context **out, int device,
				   unsigned int flags)
{
	ACCEL_API_ENTER();

	if (!out || flags)
		return -EINVAL;
	if (device < 0)
		return -ENODEV;
	return context_create(out, device);
}

static int ctx_lookup(accel_context *handle, struct accel_ctx **out)
{
	struct accel_obj *obj;
	int ret;

	ret = accel_obj_get((uint64_t)(uintptr_t)handle, ACCEL_OBJ_CONTEXT,
			    &obj);
	if (ret)
		return ret;
	*out = (struct accel_ctx *)obj;
	return 0;
}

/* As ctx_lookup(), for a handle the caller passed: a failure says why. */
static int ctx_lookup_user(accel_context *handle, struct accel_ctx **out)
{
	struct accel_obj *obj;
	int ret;

	ret = accel_obj_get_user((uint64_t)(uintptr_t)handle,
				 ACCEL_OBJ_CONTEXT, &obj);
	if (!ret)
		*out = (struct accel_ctx *)obj;
	return ret;
}

/* 0 if the driver still serves this process on @ctx, else its errno. */
static int ctx_probe(struct accel_ctx *ctx)
{
	struct accel_info info;

	memset(&info, 0, sizeof(info));
	return ctx->ops->ioctl(ctx->tp, ACCEL_IOC_GET_INFO, &info);
}

ACCEL_EXPORT
int accel_context_destroy(accel_context *handle)
{
	ACCEL_API_ENTER();
	struct accel_ctx *ctx, **pp;
	struct accel_child *c;
	int ret;

	ret = ctx_lookup_user(handle, &ctx);
	if (ret)
		return ret;
	/* It would join the thread we run on, or wait for one that may. */
	if (accel_in_host_fn()) {
		accel_ctx_put(ctx);
		return -EDEADLK;
	}
	/*
	 * A context the driver refuses us (a forked child's copy: -EACCES)
	 * is left as it was, handles, mappings and threads included.
	 */
	ret = ctx_probe(ctx);
	if (ret) {
		accel_ctx_inherited(ctx);
		accel_ctx_put(ctx);
		return ret;
	}
	ret = accel_obj_kill(&ctx->obj);
	if (ret) {
		accel_ctx_put(ctx);
		return ret;
	}
	__atomic_store_n(&ctx->destroying, true, __ATOMIC_RELEASE);
	pthread_mutex_lock(&accel_ctx_list_lock);
	for (pp = &ctx_list; *pp; pp = &(*pp)->next_ctx) {
		if (*pp == ctx) {
			*pp = ctx->next_ctx;
			break;
		}
	}
	pthread_mutex_unlock(&accel_ctx_list_lock);

	/* Out of the list, its portable memory is imported nowhere again. */
	accel_portable_forget(ctx, 0);
	/*
	 * The library's writes into user memory end first: host functions
	 * (pageable-to-pageable copies among them) and the staging workers'
	 * copies into pageable destinations are finished or cancelled, so
	 * that a waiter released below finds its buffers left alone.
	 */
	accel_hostfn_stop(ctx);
	accel_staging_stop(ctx);
	/* Threads blocked in a wait on it return (-ENOENT). */
	accel_doom(ctx);
	/* Callbacks not reached run now, their waits ending at once. */
	accel_hostfn_cancel(ctx);

	/* Kill every stream and event handle; each holds a context ref. */
	for (;;) {
		pthread_mutex_lock(&ctx->lock);
		ctx->dead = true;
		c = ctx->children;
		if (c)
			accel_obj_ref(&c->obj);
		pthread_mutex_unlock(&ctx->lock);
		if (!c)
			break;
		accel_child_unlink(c);
		accel_obj_kill(&c->obj);
		accel_obj_put(&c->obj);
	}
	accel_ctx_put(ctx);
	return 0;
}

int accel_child_link(struct accel_ctx *ctx, struct accel_child *child)
{
	child->ctx = ctx;
	pthread_mutex_lock(&ctx->lock);
	if (ctx->dead) {
		pthread_mutex_unlock(&ctx->lock);
		return -ENOENT;
	}
	child->prev = NULL;
	child->next = ctx->children;
	if (ctx->children)
		ctx->children->prev = child;
	ctx->children = child;
	pthread_mutex_unlock(&ctx->lock);
	return 0;
}

void accel_child_unlink(struct accel_child *child)
{
	struct accel_ctx *ctx = child->ctx;

	pthread_mutex_lock(&ctx->lock);
	if (child->prev || ctx->children == child) {
		if (child->prev)
			child->prev->next = child->next;
		else
			ctx->children = child->next;
		if (child->next)
			child->next->prev = child->prev;
	}
	child->prev = child->next = NULL;
	pthread_mutex_unlock(&ctx->lock);
}

static int ctx_get_any(accel_context *handle, struct accel_ctx **out);

/* Every call but the destroys: a lost context reports it. */
/* A forked child's copy of its parent's context serves it nothing. */
int accel_ctx_inherited(struct accel_ctx *ctx)
{
	if (!ctx->forked)
		return 0;
	accel_set_error("context %#llx was created by the parent process: a forked child cannot use it (create its own context)",
			(unsigned long long)ctx->handle);
	return -EACCES;
}

/* As ctx_get_any(), for a context this process created: lost or not. */
static int ctx_get_own(accel_context *handle, struct accel_ctx **out)
{
	int ret = ctx_get_any(handle, out);

	if (ret)
		return ret;
	ret = accel_ctx_inherited(*out);
	if (ret)
		accel_ctx_put(*out);
	return ret;
}

int accel_ctx_get(accel_context *handle, struct accel_ctx **out)
{
	int ret = ctx_get_own(handle, out);

	if (ret)
		return ret;
	ret = accel_backend_check(*out);
	if (ret)
		accel_ctx_put(*out);
	return ret;
}

int accel_ctx_get_checked(accel_context *handle, bool args_ok,
			  struct accel_ctx **out)
{
	if (!args_ok)
		return -EINVAL;
	return accel_ctx_get(handle, out);
}

int accel_child_check(struct accel_child *child)
{
	/*
	 * Before anything touches the context: in a forked child the
	 * staging memory of the parent's context is not mapped.
	 */
	int ret = accel_ctx_inherited(child->ctx);

	if (!ret)
		ret = accel_backend_check(child->ctx);
	if (ret)
		accel_obj_put(&child->obj);
	return ret;
}

static int ctx_get_any(accel_context *handle, struct accel_ctx **out)
{
	struct accel_ctx *ctx, *oldest = NULL;
	uint64_t h = 0;

	if (handle)
		return ctx_lookup_user(handle, out);
	if (current_ctx && !ctx_lookup((accel_context *)(uintptr_t)current_ctx,
				       out))
		return 0;
	/* No live current context: the oldest one, CUDA's primary. */
	pthread_mutex_lock(&accel_ctx_list_lock);
	for (ctx = ctx_list; ctx; ctx = ctx->next_ctx)
		if (!oldest || ctx->created < oldest->created)
			oldest = ctx;
	if (oldest)
		h = oldest->handle;
	pthread_mutex_unlock(&accel_ctx_list_lock);
	if (!h)
		return -ENODEV;
	return ctx_lookup((accel_context *)(uintptr_t)h, out);
}

int accel_ctx_queueing(struct accel_ctx *ctx)
{
	if (!__atomic_load_n(&ctx->destroying, __ATOMIC_ACQUIRE))
		return 0;
	accel_set_error("context %#llx is being destroyed: nothing more is queued on it",
			(unsigned long long)ctx->handle);
	return -ENOENT;
}

void accel_ctx_make_current(struct accel_ctx *ctx)
{
	current_ctx = ctx->handle;
}

int accel_ctx_get_current(struct accel_ctx **out)
{
	return ctx_get_any(NULL, out);
}

int accel_ctx_foreach(int (*fn)(struct accel_ctx *, void *), void *arg)
{
	uint64_t *handles = NULL;
	struct accel_ctx *ctx;
	unsigned int n = 0, i;
	int ret = 0;

	pthread_mutex_lock(&accel_ctx_list_lock);
	for (ctx = ctx_list; ctx; ctx = ctx->next_ctx)
		n++;
	if (n)
		handles = calloc(n, sizeof(*handles));
	n = 0;
	for (ctx = ctx_list; ctx && handles; ctx = ctx->next_ctx)
		handles[n++] = ctx->handle;
	pthread_mutex_unlock(&accel_ctx_list_lock);

	for (i = 0; i < n && !ret; i++) {
		if (ctx_lookup((accel_context *)(uintptr_t)handles[i], &ctx))
			continue;
		ret = fn(ctx, arg);
		accel_ctx_put(ctx);
	}
	free(handles);
	return ret;
}

void accel_ctx_put(struct accel_ctx *ctx)
{
	accel_obj_put(&ctx->obj);
}

ACCEL_EXPORT
int accel_context_set_current(accel_context *handle)
{
	ACCEL_API_ENTER();
	struct accel_ctx *ctx;
	int ret;

	if (!handle) {
		current_ctx = 0;
		return 0;
	}
	ret = ctx_lookup_user(handle, &ctx);
	if (ret)
		return ret;
	ret = accel_ctx_inherited(ctx);
	if (!ret)
		current_ctx = ctx->handle;
	accel_ctx_put(ctx);
	return ret;
}

ACCEL_EXPORT
int accel_context_get_current(accel_context **out)
{
	ACCEL_API_ENTER();
	struct accel_ctx *ctx;
	int ret;

	ret = accel_ctx_get_checked(NULL, out, &ctx);
	if (ret)
		return ret;
	*out = (accel_context *)(uintptr_t)ctx->handle;
	accel_ctx_put(ctx);
	return 0;
}

ACCEL_EXPORT
int accel_context_get_transport(accel_context *handle, const char **name)
{
	ACCEL_API_ENTER();
	struct accel_ctx *ctx;
	int ret;

	ret = accel_ctx_get_checked(handle, name, &ctx);
	if (ret)
		return ret;
	*name = ctx->ops->name;
	accel_ctx_put(ctx);
	return 0;
}

ACCEL_EXPORT
int accel_context_get_backend(accel_context *handle, const char **name)
{
	ACCEL_API_ENTER();
	struct accel_ctx *ctx;
	int ret;

	if (!name)
		return -EINVAL;
	ret = ctx_get_own(handle, &ctx);
	if (ret)
		return ret;
	*name = accel_backend_name(ctx);
	accel_ctx_put(ctx);
	return 0;
}

ACCEL_EXPORT
int accel_context_get_fd(accel_context *handle)
{
	ACCEL_API_ENTER();
	struct accel_ctx *ctx;
	int ret;

	ret = accel_ctx_get(handle, &ctx);
	if (ret)
		return ret;
	ret = ctx->ops->get_fd(ctx->tp);
	accel_ctx_put(ctx);
	return ret;
}

ACCEL_EXPORT
int accel_stream_priority_range(accel_context *handle, int *least,
				int *greatest)
{
	ACCEL_API_ENTER();
	struct accel_ctx *ctx;
	int ret;

	ret = accel_ctx_get_checked(handle, least && greatest, &ctx);
	if (ret)
		return ret;
	*least = ctx->info.least_priority;
	*greatest = ctx->info.greatest_priority;
	accel_ctx_put(ctx);
	return 0;
}
