// SPDX-License-Identifier: MIT
/*
 * The in-process transport: the context, its handles and waiting, the
 * copy-in/out of user arrays, freeing what the core released, and the
 * command table built from the core's list (the twin of driver/as_drv.c).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <unistd.h>

#include "ip.h"
#include "accel_int.h"

int ip_idr_alloc(struct ip_idr *idr, void *p, u32 max_live, u32 *handle)
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

void *ip_idr_find(const struct ip_idr *idr, u32 handle)
{
	if (!handle || handle > idr->used)
		return NULL;
	return idr->slots[handle - 1];
}

void ip_idr_remove(struct ip_idr *idr, u32 handle)
{
	idr->slots[handle - 1] = NULL;
	idr->live--;
}

/* Wait on the context's condition until @deadline; -ETIME once past it. */
int ip_ctx_wait(struct ip_ctx *c, u64 deadline)
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

int ip_copy_from_user(void *dst, u64 uptr, size_t len)
{
	int ret = user_range_ok(uptr, len);

	if (!ret)
		memcpy(dst, (const void *)(uintptr_t)uptr, len);
	return ret;
}

int ip_copy_to_user(u64 uptr, const void *src, size_t len)
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
void *ip_buf_get(_Atomic(void *) *slot, size_t n, size_t size,
		 size_t cache)
{
	void *p;

	if (n > cache)
		return malloc(n * size);
	p = atomic_exchange(slot, NULL);
	return p ? p : malloc(cache * size);
}

void ip_buf_put(_Atomic(void *) *slot, void *p, size_t n, size_t cache)
{
	void *none = NULL;

	if (n <= cache && atomic_compare_exchange_strong(slot, &none, p))
		return;
	free(p);
}

void ip_process_release(struct ip_ctx *c, struct asc_release *rel)
{
	unsigned int i;

	for (i = 0; i < rel->ntl; i++) {
		if (rel->tl[i]->import && !rel->tl[i]->refs)
			ip_import_free_locked(rel->tl[i]);
		else if (rel->tl[i]->import)
			continue;
		else
			ip_stream_maybe_free_locked(container_of(rel->tl[i],
							struct ip_stream, tl));
	}
	for (i = 0; i < rel->nregion; i++)
		ip_region_free_locked(c, container_of(rel->region[i],
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

/*
 * ACCEL_IOC_QUERY lists the contexts of a machine for admin tools; the
 * in-process model has only its own and does not advertise
 * ACCEL_CAP_QUERY: the command is unknown here, as before it existed.
 */
static int ip_query(struct ip_ctx *c, void *arg)
{
	(void)c;
	(void)arg;
	return -ENOTTY;
}

static int ip_get_info(struct ip_ctx *c, void *arg)
{
	struct accel_info *info = arg;
	int ret = asc_check_info(info);

	if (ret)
		return ret;
	asc_info_fill(info, ASC_CAPS,
		      c->max_pinned_bytes, c->max_device_bytes,
		      (u32)c->page_size);
	info->devices = c->ndevices;
	return 0;
}

static int ip_set_device(struct ip_ctx *c, void *arg)
{
	struct accel_device_select *sel = arg;
	int ret = asc_check_set_device(sel, c->ndevices);

	if (ret)
		return ret;
	pthread_mutex_lock(&c->lock);
	c->device = sel->device;
	pthread_mutex_unlock(&c->lock);
	return 0;
}

u32 ip_devices_env(void)
{
	const char *v = getenv("ACCEL_INPROC_DEVICES");
	unsigned long n;
	char *end;

	if (!v || !*v)
		return 1;
	errno = 0;
	n = strtoul(v, &end, 10);
	if (errno || *end || *v == '-' || n > UINT32_MAX ||
	    asc_devices_param((u32)n)) {
		accel_log(LOG_WARNING,
			  "ACCEL_INPROC_DEVICES=%s: not 1 to %u; using 1", v,
			  ASC_MAX_DEVICES);
		return 1;
	}
	return (u32)n;
}

/* Bumped in every child of fork(): contexts opened before are not ours. */
static atomic_uint ip_fork_gen;

static pthread_once_t ip_atfork_once = PTHREAD_ONCE_INIT;

static void ip_forked(void)
{
	atomic_fetch_add(&ip_fork_gen, 1);
	ip_mem_forked();
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
		accel_log(LOG_WARNING, "%s=%s: not a size in MiB; using %llu",
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
	pthread_cond_init(&c->xcond, &attr);
	pthread_condattr_destroy(&attr);
	pthread_once(&ip_atfork_once, ip_atfork_init);
	c->fork_gen = atomic_load(&ip_fork_gen);
	c->pid = getpid();
	c->page_size = sysconf(_SC_PAGESIZE);
	c->max_pinned_bytes = env_limit_mb("ACCEL_INPROC_MAX_PINNED_MB",
		asc_default_pinned_mb((u64)sysconf(_SC_PHYS_PAGES) *
				      (u64)c->page_size));
	c->max_device_bytes = env_limit_mb("ACCEL_INPROC_MAX_DEVICE_MB",
					   IP_DEVICE_MB);
	c->ndevices = ip_devices_env();
	node_init(&c->all_regions);
	node_init(&c->all_streams);
	node_init(&c->all_events);
	node_init(&c->imports);
	node_init(&c->xq);
	c->efd = -1;
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
	/* Nothing retires any more: imports go, pending exports fail. */
	ip_import_ctx_close(c);
	pthread_mutex_lock(&c->lock);
	ip_export_ctx_close(c);
	pthread_mutex_unlock(&c->lock);
	if (c->efd >= 0)
		close(c->efd);
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
		ip_region_free_locked(c, container_of(c->all_regions.next,
						   struct ip_region, node));
	free(c->regions.slots);
	free(c->streams.slots);
	free(c->events.slots);
	free(atomic_load(&c->fetch_buf));
	free(atomic_load(&c->done_buf));
	free(atomic_load(&c->desc_buf));
	pthread_cond_destroy(&c->xcond);
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
	.mmap = ip_mem_mmap,
	.get_fd = ip_ctx_get_fd,
	.import_host = ip_mem_import_host,
};
