// SPDX-License-Identifier: MIT
/*
 * The in-process transport: exported and imported events, and the
 * context's completion descriptor (the twin of driver/as_export.c and of
 * the read/poll half of driver/as_drv.c).
 *
 * An exported point is one end of an AF_UNIX stream socket pair; the
 * producer keeps the other end while the point is pending. When the point
 * is done the producer writes a 9-byte record (a marker and the status)
 * and closes its end: the exported descriptor then polls readable, in
 * this process or in any other it was passed to. If the producing process
 * dies first, the kernel closes its end and the descriptor polls readable
 * too (end of file): a pending export never outlives its producer, as the
 * module's do not. An eventfd could not say that: it stays unsignalled
 * forever when its writer is killed.
 *
 * In this process the export is also in a registry (by the socket's
 * inode), so that a context importing it while pending is told when it is
 * done: the producer queues the import on its context's list and wakes
 * that context's notifier thread, which retires the import's timeline
 * under its own context's lock. Imports of a descriptor that is done read
 * the record (MSG_PEEK: it stays for every other reader).
 *
 * Lock order: ip_ctx.lock -> ip_xlock. The producer holds its context's
 * lock and takes ip_xlock; a notifier takes its own context's lock, then
 * ip_xlock; no one takes a context lock under ip_xlock, nor two contexts'
 * locks at once.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <poll.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include "backend.h"
#include "ip.h"

/* The record a producer writes when its exported point is done. */
#define IP_XREC_MAGIC	"accelev"	/* 8 bytes with its NUL */
#define IP_XREC_LEN	9

/* Protects every ip_xevent's @done, @status, @importers, @refs, the
 * registry, and every context's @xq and @xstop. */
static pthread_mutex_t ip_xlock = PTHREAD_MUTEX_INITIALIZER;
static struct ip_node ip_xreg = { &ip_xreg, &ip_xreg };

struct ip_xevent {
	struct ip_node reg;		/* in ip_xreg */
	dev_t dev;
	ino_t ino;			/* of the exported socket end */
	int wfd;			/* the producer's end; -1 once done */
	pid_t pid;			/* the producing process */
	u32 refs;			/* the pending list, each import */
	bool done;
	int status;
	struct ip_node importers;	/* ip_import.xnode */
	/* While pending, under the producer's lock: */
	struct ip_node node;		/* in ip_stream.exports, by seq */
	u64 seq;
};

struct ip_import {
	struct asc_timeline tl;		/* core; tl.import set */
	struct ip_ctx *ctx;
	struct ip_xevent *xev;		/* NULL when done at import */
	int status;			/* what the producer said */
	bool queued;			/* on ctx->xq */
	struct ip_node xnode;		/* in xev->importers */
	struct ip_node qnode;		/* in ctx->xq */
	struct ip_node node;		/* in ctx->imports */
};

static void xevent_put_xlocked(struct ip_xevent *x)
{
	if (--x->refs)
		return;
	node_del(&x->reg);
	free(x);
}

/* Producer's lock held: the point is done; tell importers and pollers. */
static void export_finish_locked(struct ip_xevent *x, int status)
{
	unsigned char rec[IP_XREC_LEN];
	struct ip_node *n;

	node_del(&x->node);
	pthread_mutex_lock(&ip_xlock);
	x->done = true;
	x->status = status;
	while ((n = x->importers.next) != &x->importers) {
		struct ip_import *imp = container_of(n, struct ip_import, xnode);

		node_del(n);
		imp->status = status;
		imp->queued = true;
		node_add(&imp->ctx->xq, &imp->qnode);
		pthread_cond_signal(&imp->ctx->xcond);
	}
	memcpy(rec, IP_XREC_MAGIC, 8);
	rec[8] = (unsigned char)-status;
	/* A fresh socket's buffer takes 9 bytes without blocking. */
	if (send(x->wfd, rec, sizeof(rec), MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
		(void)0;	/* the exported end was closed: no reader */
	close(x->wfd);
	x->wfd = -1;
	xevent_put_xlocked(x);
	pthread_mutex_unlock(&ip_xlock);
}

void ip_export_retired_locked(struct ip_stream *s)
{
	while (s->exports.next != &s->exports) {
		struct ip_xevent *x = container_of(s->exports.next,
						   struct ip_xevent, node);
		int st = asc_export_state(&s->tl, x->seq);

		if (st == -EAGAIN)
			break;
		s->ctx->nexports--;
		export_finish_locked(x, st);
	}
}

void ip_export_ctx_close(struct ip_ctx *c)
{
	struct ip_node *n;

	for (n = c->all_streams.next; n != &c->all_streams; n = n->next) {
		struct ip_stream *s = container_of(n, struct ip_stream, node);

		while (s->exports.next != &s->exports) {
			c->nexports--;
			export_finish_locked(container_of(s->exports.next,
							  struct ip_xevent,
							  node), -EIO);
		}
	}
}

static void export_link_locked(struct ip_stream *s, struct ip_xevent *x)
{
	struct ip_node *pos = s->exports.prev;

	while (pos != &s->exports &&
	       container_of(pos, struct ip_xevent, node)->seq > x->seq)
		pos = pos->prev;
	/* Insert after @pos. */
	x->node.prev = pos;
	x->node.next = pos->next;
	pos->next->prev = &x->node;
	pos->next = &x->node;
}

int ip_event_export(struct ip_ctx *c, void *arg)
{
	struct accel_event_export *req = arg;
	struct asc_point point;
	struct ip_xevent *x;
	struct ip_event *ev;
	struct stat st;
	int sv[2], status, ret;

	ret = asc_check_event_export(req);
	if (ret)
		return ret;
	x = calloc(1, sizeof(*x));
	if (!x)
		return -ENOMEM;
	node_init(&x->importers);
	node_init(&x->node);
	node_init(&x->reg);
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0) {
		ret = -errno;
		free(x);
		return ret;
	}
	/* The exported end only reads: a write there is the user's bug. */
	shutdown(sv[0], SHUT_WR);
	if (fstat(sv[0], &st) < 0) {
		ret = -errno;
		goto err_close;
	}
	x->dev = st.st_dev;
	x->ino = st.st_ino;
	x->wfd = sv[1];
	x->pid = getpid();

	pthread_mutex_lock(&c->lock);
	ev = ip_idr_find(&c->events, req->event);
	ret = asc_event_export(ev ? &ev->core : NULL, c->nexports, &point,
			       &status);
	if (ret) {
		pthread_mutex_unlock(&c->lock);
		goto err_close;
	}
	x->refs = 1;	/* the pending list's */
	if (point.tl) {
		x->seq = point.seq;
		pthread_mutex_lock(&ip_xlock);
		node_add(&ip_xreg, &x->reg);
		pthread_mutex_unlock(&ip_xlock);
		export_link_locked(container_of(point.tl, struct ip_stream, tl),
				   x);
		c->nexports++;
	} else {
		/* Done at once: write the record, drop our end, free it. */
		export_finish_locked(x, status);
	}
	pthread_mutex_unlock(&c->lock);
	req->fd = sv[0];
	return 0;

err_close:
	close(sv[0]);
	close(sv[1]);
	free(x);
	return ret;
}

/* The notifier of a context with imports: retires them as told. */
static void *import_notifier(void *arg)
{
	struct ip_ctx *c = arg;
	bool stop = false;

	while (!stop) {
		bool changed = false;
		struct ip_node *n;

		pthread_mutex_lock(&c->lock);
		pthread_mutex_lock(&ip_xlock);
		while ((n = c->xq.next) != &c->xq) {
			struct ip_import *imp = container_of(n, struct ip_import,
							     qnode);

			node_del(n);
			imp->queued = false;
			changed |= asc_import_done(&imp->tl, imp->status);
		}
		pthread_mutex_unlock(&ip_xlock);
		if (changed)
			pthread_cond_broadcast(&c->cond);
		pthread_mutex_unlock(&c->lock);

		pthread_mutex_lock(&ip_xlock);
		while (c->xq.next == &c->xq && !c->xstop)
			pthread_cond_wait(&c->xcond, &ip_xlock);
		stop = c->xstop && c->xq.next == &c->xq;
		pthread_mutex_unlock(&ip_xlock);
	}
	return NULL;
}

/* The status a done export's record says, or -EAGAIN while pending. */
static int export_peek(int fd, int *status)
{
	unsigned char rec[IP_XREC_LEN];
	ssize_t n;

	n = recv(fd, rec, sizeof(rec), MSG_PEEK | MSG_DONTWAIT);
	if (n < 0)
		return errno == EAGAIN ? -EAGAIN : -EINVAL;
	if (n == 0) {
		/* End of file, no record: the producer died first. */
		*status = -EIO;
		return 0;
	}
	if (n != IP_XREC_LEN || memcmp(rec, IP_XREC_MAGIC, 8))
		return -EINVAL;
	*status = rec[8] ? -(int)rec[8] : 0;
	return 0;
}

/*
 * A forked child inherits its parent's registry and the producers' ends
 * of its pending exports, which no thread of the child will ever write:
 * forget those exports here (an import of one then reads the record the
 * parent writes, or the end of file once the parent is gone), and close
 * the child's copies of their ends so that the parent's death shows.
 */
static void xevent_forget_inherited_xlocked(void)
{
	pid_t self = getpid();
	struct ip_node *n, *prev;

	for (n = ip_xreg.prev; n != &ip_xreg; n = prev) {
		struct ip_xevent *x = container_of(n, struct ip_xevent, reg);

		prev = n->prev;
		if (x->pid == self)
			continue;
		if (x->wfd >= 0)
			close(x->wfd);
		x->wfd = -1;
		/* The parent's memory image keeps it; nothing here frees it. */
		node_del(&x->reg);
		node_init(&x->reg);
	}
}

static struct ip_xevent *xevent_find_xlocked(dev_t dev, ino_t ino)
{
	struct ip_node *n;

	xevent_forget_inherited_xlocked();

	/* Newest first: an inode number is reused once its socket closed. */
	for (n = ip_xreg.prev; n != &ip_xreg; n = n->prev) {
		struct ip_xevent *x = container_of(n, struct ip_xevent, reg);

		if (x->dev == dev && x->ino == ino)
			return x;
	}
	return NULL;
}

int ip_event_import(struct ip_ctx *c, void *arg)
{
	struct accel_event_import *req = arg;
	struct ip_import *imp;
	struct ip_xevent *x;
	struct ip_event *ev;
	struct stat st;
	int status = 0, ret;

	ret = asc_check_event_import(req);
	if (ret)
		return ret;
	if (fstat(req->fd, &st) < 0)
		return errno == EBADF ? -EBADF : -EINVAL;
	if (!S_ISSOCK(st.st_mode))
		return -EINVAL;
	imp = calloc(1, sizeof(*imp));
	ev = calloc(1, sizeof(*ev));
	if (!imp || !ev) {
		ret = -ENOMEM;
		goto err_free;
	}
	node_init(&imp->xnode);
	node_init(&imp->qnode);
	node_init(&imp->node);
	node_init(&ev->node);
	imp->ctx = c;
	asc_import_init(&imp->tl, &ev->core);

	pthread_mutex_lock(&c->lock);
	if (!c->xthread_started) {
		ret = -pthread_create(&c->xthread, NULL, import_notifier, c);
		if (ret)
			goto err_unlock;
		c->xthread_started = true;
	}
	ret = ip_idr_alloc(&c->events, ev, ASC_MAX_EVENTS, &ev->handle);
	if (ret)
		goto err_unlock;
	pthread_mutex_lock(&ip_xlock);
	x = xevent_find_xlocked(st.st_dev, st.st_ino);
	if (x && !x->done) {
		x->refs++;
		imp->xev = x;
		node_add(&x->importers, &imp->xnode);
	} else {
		if (x)
			status = x->status;
		else
			ret = export_peek(req->fd, &status);
		/* Pending and not ours: another process's inproc export. */
		if (ret == -EAGAIN) {
			accel_set_error("fd %d is another process's export that is still pending: in process (ACCEL_TRANSPORT=inproc) it can be imported only once done; poll(2) it for POLLIN, then import it",
					req->fd);
			ret = -EINVAL;
		}
		if (!ret)
			asc_import_done(&imp->tl, status);
	}
	pthread_mutex_unlock(&ip_xlock);
	if (ret) {
		ip_idr_remove(&c->events, ev->handle);
		goto err_unlock;
	}
	node_add(&c->all_events, &ev->node);
	node_add(&c->imports, &imp->node);
	req->handle = ev->handle;
	pthread_mutex_unlock(&c->lock);
	return 0;

err_unlock:
	pthread_mutex_unlock(&c->lock);
err_free:
	free(ev);
	free(imp);
	return ret;
}

/* Context lock held: no point names the import's timeline any more. */
void ip_import_free_locked(struct asc_timeline *tl)
{
	struct ip_import *imp = container_of(tl, struct ip_import, tl);

	node_del(&imp->node);
	pthread_mutex_lock(&ip_xlock);
	node_del(&imp->xnode);
	if (imp->queued)
		node_del(&imp->qnode);
	if (imp->xev)
		xevent_put_xlocked(imp->xev);
	pthread_mutex_unlock(&ip_xlock);
	free(imp);
}

/* Close: stop the notifier, then free every import (no lock held). */
void ip_import_ctx_close(struct ip_ctx *c)
{
	if (c->xthread_started) {
		pthread_mutex_lock(&ip_xlock);
		c->xstop = true;
		pthread_cond_signal(&c->xcond);
		pthread_mutex_unlock(&ip_xlock);
		pthread_join(c->xthread, NULL);
	}
	while (c->imports.next != &c->imports)
		ip_import_free_locked(&container_of(c->imports.next,
						    struct ip_import, node)->tl);
}

/*
 * The context's completion descriptor: an eventfd the retirements count
 * into once asked for, read(2) and poll(2) as the module's device file.
 */
int ip_ctx_get_fd(struct accel_transport *tp)
{
	struct ip_ctx *c = &tp->ctx;
	int fd;

	pthread_mutex_lock(&c->lock);
	if (c->efd < 0) {
		fd = eventfd(0, EFD_CLOEXEC);
		if (fd < 0) {
			fd = -errno;
			pthread_mutex_unlock(&c->lock);
			return fd;
		}
		c->efd = fd;
	}
	fd = c->efd;
	pthread_mutex_unlock(&c->lock);
	return fd;
}

void ip_ctx_count_retired_locked(struct ip_ctx *c, u64 n)
{
	ssize_t r;

	if (c->efd < 0 || !n)
		return;
	/* Never blocks short of 2^64 - 2 unread retirements. */
	r = write(c->efd, &n, sizeof(n));
	(void)r;
}
