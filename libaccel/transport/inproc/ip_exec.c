// SPDX-License-Identifier: MIT
/*
 * The in-process transport: the userspace executor protocol. While an
 * executor is attached the workers run nothing; it fetches and completes
 * instead (the twin of driver/as_exec.c).
 */
#define _GNU_SOURCE
#include "ip.h"

static bool any_worker_copying_locked(struct ip_ctx *c)
{
	struct ip_node *n;

	for (n = c->all_streams.next; n != &c->all_streams; n = n->next)
		if (container_of(n, struct ip_stream, node)->copying)
			return true;
	return false;
}

/*
 * Check an attach or detach request and take the lock, with an executor
 * attached as @attached says; else @err, unlocked.
 */
static int exec_lock_as(struct ip_ctx *c, void *arg, bool attached, int err)
{
	int ret = asc_check_exec_attach(arg);

	if (ret)
		return ret;
	pthread_mutex_lock(&c->lock);
	if (c->executor != attached) {
		pthread_mutex_unlock(&c->lock);
		return err;
	}
	return 0;
}

int ip_exec_attach(struct ip_ctx *c, void *arg)
{
	struct ip_node *n;
	int ret;

	ret = exec_lock_as(c, arg, false, -EBUSY);
	if (ret)
		return ret;
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

int ip_exec_detach(struct ip_ctx *c, void *arg)
{
	struct ip_node *n;
	int ret;

	ret = exec_lock_as(c, arg, true, -ENXIO);
	if (ret)
		return ret;
	/* What was handed out and not completed fails; the rest runs here. */
	for (n = c->all_streams.next; n != &c->all_streams; n = n->next) {
		struct ip_stream *s = container_of(n, struct ip_stream, node);

		while (asc_exec_detach_next(&s->tl, &s->q))
			ip_retire_locked(s, -EIO);
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

int ip_exec_fetch(struct ip_ctx *c, void *arg)
{
	struct accel_exec_fetch *f = arg;
	struct accel_exec_item *items;
	u32 count = 0;
	int ret;

	ret = asc_check_exec_fetch(f, ASC_MAX_SUBMIT);
	if (ret)
		return ret;
	items = ip_buf_get(&c->fetch_buf, f->max_items, sizeof(*items),
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
		ret = ip_ctx_wait(c, f->timeout_ns);
		if (ret)
			break;
	}
	pthread_mutex_unlock(&c->lock);
	/* Copied out after unlocking, as the driver does. */
	if (!ret)
		ret = ip_copy_to_user(f->items, items, count * sizeof(*items));
	if (!ret || ret == -ETIME)
		f->count = count;
	ip_buf_put(&c->fetch_buf, items, f->max_items, IP_BUF_CACHE);
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

int ip_exec_complete(struct ip_ctx *c, void *arg)
{
	struct accel_exec_complete *cm = arg;
	struct accel_exec_done *done;
	int ret, status;
	u32 i;

	ret = asc_check_exec_complete(cm, ASC_MAX_SUBMIT);
	if (ret)
		return ret;
	done = ip_buf_get(&c->done_buf, cm->count, sizeof(*done), 4 * IP_BUF_CACHE);
	if (!done)
		return -ENOMEM;
	ret = ip_copy_from_user(done, cm->entries, cm->count * sizeof(*done));
	if (ret) {
		ip_buf_put(&c->done_buf, done, cm->count, 4 * IP_BUF_CACHE);
		return ret;
	}
	pthread_mutex_lock(&c->lock);
	if (!c->executor)
		ret = -ENXIO;
	/* Retiring in bulk: one broadcast at the end. */
	c->quiet_retire = true;
	for (i = 0; !ret && i < cm->count; i++) {
		struct ip_stream *s = exec_stream_locked(c, done[i].stream);

		ret = asc_exec_check_done(s ? &s->tl : NULL, &done[i]);
		while (!ret && asc_exec_done_next(&s->tl, &s->q, &done[i], &status))
			ip_retire_locked(s, status);
	}
	c->quiet_retire = false;
	pthread_cond_broadcast(&c->cond);
	pthread_mutex_unlock(&c->lock);
	ip_buf_put(&c->done_buf, done, cm->count, 4 * IP_BUF_CACHE);
	return ret;
}
