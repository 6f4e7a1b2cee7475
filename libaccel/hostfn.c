// SPDX-License-Identifier: MIT
/*
 * Host functions (cudaLaunchHostFunc), built from the ABI's events alone.
 *
 * A launch queues two descriptors on the stream: EVENT_RECORD of a plain
 * event P, then HOST_WAIT on a user event B. The context's library thread
 * waits for P (so for everything queued before it), runs the function,
 * and signals B, which releases the stream's later work.
 *
 * P is a recorded point rather than a HOST_SIGNAL of a user event: when
 * the stream fails ahead of the launch, its descriptors retire without
 * running, so a HOST_SIGNAL would never come and the thread would wait
 * forever, while a wait on P returns -EIO at once. The function is then
 * skipped (as CUDA skips host functions of a failed stream).
 *
 * The thread waits on every pending launch at once (wait-any), plus a
 * "doorbell" user event raised on each launch, so that host functions of
 * different streams run in the order their streams reach them.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "accel_int.h"

/* Set on the library's host-function threads: they must not block. */
static __thread bool hf_self;

bool accel_in_host_fn(void)
{
	return hf_self;
}

struct accel_hostfn_job {
	struct accel_hostfn_job *next;
	uint32_t point;		/* plain event recorded before the gate */
	uint32_t gate;		/* user event the stream waits on */
	accel_host_fn fn;
	accel_host_fn drop;	/* instead of fn when it never runs, or NULL */
	void *arg;
	/* accel_stream_add_callback(): called instead of fn, whatever. */
	accel_stream_callback_t cb;
	accel_stream_t stream;	/* as the caller named it */
	uint32_t kstream;
};

static void signal_event(struct accel_ctx *ctx, uint32_t handle,
			 uint64_t value)
{
	struct accel_event_signal sg = { .handle = handle, .value = value };

	accel_ioctl(ctx, ACCEL_IOC_EVENT_SIGNAL, &sg);
}

/*
 * A job that never runs: its callback learns -ECANCELED (or its drop is
 * called), on whichever thread cancels it (the destroying one), under the
 * rules of host functions all the same: waits and destroys return
 * -EDEADLK from it, so that it cannot hang the destroy that called it.
 */
static void job_drop(struct accel_hostfn_job *job)
{
	bool was = hf_self;

	hf_self = true;
	if (job->cb)
		job->cb(job->stream, -ECANCELED, job->arg);
	else if (job->drop)
		job->drop(job->arg);
	hf_self = was;
}

static void job_finish(struct accel_ctx *ctx, struct accel_hostfn_job *job)
{
	signal_event(ctx, job->gate, 1);
	accel_kevent_destroy(ctx, job->point);
	accel_kevent_destroy(ctx, job->gate);
	free(job);
}

static void job_unlink_locked(struct accel_ctx *ctx,
			      struct accel_hostfn_job *job)
{
	struct accel_hostfn_job **pp, *prev = NULL;

	for (pp = &ctx->hf_head; *pp; prev = *pp, pp = &(*pp)->next) {
		if (*pp == job) {
			*pp = job->next;
			if (ctx->hf_tail == job)
				ctx->hf_tail = prev;
			return;
		}
	}
}

static void hostfn_report(struct accel_ctx *ctx, struct accel_hostfn_job *job,
			  int error);

/* Run the launches whose point retired; 0 when some job ran. */
static void run_ready(struct accel_ctx *ctx, struct accel_hostfn_job **jobs,
		      unsigned int n)
{
	struct accel_event_query q;
	unsigned int i;

	for (i = 0; i < n; i++) {
		if (accel_kevent_query(ctx, jobs[i]->point, &q))
			continue;
		if (q.state != ACCEL_EVENT_STATE_COMPLETE)
			continue;
		/*
		 * It runs in its context, as a CUDA host function does: the
		 * current context there (NULL, ACCEL_STREAM_DEFAULT) is this
		 * one, whatever an earlier function made current.
		 */
		accel_ctx_make_current(ctx);
		if (jobs[i]->cb)
			hostfn_report(ctx, jobs[i], q.error);
		else if (!q.error)
			jobs[i]->fn(jobs[i]->arg);
		else
			job_drop(jobs[i]);
		pthread_mutex_lock(&ctx->lock);
		job_unlink_locked(ctx, jobs[i]);
		pthread_mutex_unlock(&ctx->lock);
		job_finish(ctx, jobs[i]);
	}
}

static void *hostfn_thread(void *arg)
{
	struct accel_ctx *ctx = arg;
	unsigned int max = ctx->info.max_wait, n;
	struct accel_hostfn_job **jobs, *job;
	struct accel_wait_entry *ents;

	hf_self = true;
	jobs = calloc(max, sizeof(*jobs));
	ents = calloc(max, sizeof(*ents));
	while (jobs && ents) {
		pthread_mutex_lock(&ctx->lock);
		if (ctx->hf_stopping) {
			pthread_mutex_unlock(&ctx->lock);
			break;
		}
		memset(ents, 0, max * sizeof(*ents));
		ents[0].event = ctx->hf_doorbell;
		ents[0].value = ctx->hf_bell + 1;
		n = 0;
		for (job = ctx->hf_head; job && n + 1 < max; job = job->next) {
			jobs[n] = job;
			ents[n + 1].event = job->point;
			n++;
		}
		pthread_mutex_unlock(&ctx->lock);

		accel_kwait(ctx, ents, n + 1, 0, ACCEL_TIMEOUT_INFINITE, NULL);
		run_ready(ctx, jobs, n);
	}
	free(jobs);
	free(ents);
	return NULL;
}

static int hostfn_start_locked(struct accel_ctx *ctx)
{
	int ret;

	if (ctx->hf_started)
		return 0;
	ret = accel_kevent_create(ctx, ACCEL_EVENT_USER, &ctx->hf_doorbell);
	if (ret)
		return ret;
	if (pthread_create(&ctx->hf_thread, NULL, hostfn_thread, ctx)) {
		accel_kevent_destroy(ctx, ctx->hf_doorbell);
		return -ENOMEM;
	}
	ctx->hf_started = true;
	return 0;
}

static int hostfn_launch(struct accel_ctx *ctx, uint32_t kstream,
			 accel_host_fn fn, accel_host_fn drop,
			 accel_stream_callback_t cb, accel_stream_t stream,
			 void *arg)
{
	struct accel_hostfn_job *job;
	struct accel_desc d[2];
	uint64_t bell;
	int ret;

	job = calloc(1, sizeof(*job));
	if (!job)
		return -ENOMEM;
	job->fn = fn;
	job->drop = drop;
	job->arg = arg;
	job->cb = cb;
	job->stream = stream;
	job->kstream = kstream;
	ret = accel_kevent_create(ctx, 0, &job->point);
	if (ret)
		goto err_free;
	ret = accel_kevent_create(ctx, ACCEL_EVENT_USER, &job->gate);
	if (ret)
		goto err_point;

	pthread_mutex_lock(&ctx->lock);
	if (ctx->hf_stopping) {
		ret = -ENOENT;
		goto err_unlock;
	}
	ret = hostfn_start_locked(ctx);
	if (ret)
		goto err_unlock;
	accel_desc_event(&d[0], ACCEL_OP_EVENT_RECORD, job->point, 0);
	accel_desc_event(&d[1], ACCEL_OP_HOST_WAIT, job->gate, 1);
	ret = accel_submit(ctx, kstream, d, 2, NULL);
	if (ret)
		goto err_unlock;
	if (ctx->hf_tail)
		ctx->hf_tail->next = job;
	else
		ctx->hf_head = job;
	ctx->hf_tail = job;
	bell = ++ctx->hf_bell;
	pthread_mutex_unlock(&ctx->lock);

	signal_event(ctx, ctx->hf_doorbell, bell);
	return 0;

err_unlock:
	pthread_mutex_unlock(&ctx->lock);
	accel_kevent_destroy(ctx, job->gate);
err_point:
	accel_kevent_destroy(ctx, job->point);
err_free:
	free(job);
	return ret;
}

int accel_hostfn_launch_drop(struct accel_ctx *ctx, uint32_t kstream,
			     accel_host_fn fn, accel_host_fn drop, void *arg)
{
	return hostfn_launch(ctx, kstream, fn, drop, NULL, NULL, arg);
}

int accel_hostfn_launch(struct accel_ctx *ctx, uint32_t kstream,
			accel_host_fn fn, void *arg)
{
	return accel_hostfn_launch_drop(ctx, kstream, fn, NULL, arg);
}

void accel_hostfn_stop(struct accel_ctx *ctx)
{
	bool started;
	uint64_t bell;

	pthread_mutex_lock(&ctx->lock);
	ctx->hf_stopping = true;
	started = ctx->hf_started;
	bell = ++ctx->hf_bell;
	pthread_mutex_unlock(&ctx->lock);
	/* Inherited across fork(): the thread is the parent's. */
	if (!started || ctx->forked)
		return;
	signal_event(ctx, ctx->hf_doorbell, bell);
	pthread_join(ctx->hf_thread, NULL);
}

void accel_hostfn_cancel(struct accel_ctx *ctx)
{
	struct accel_hostfn_job *job;

	if (!ctx->hf_started || ctx->forked)
		return;
	/* Launches not reached: their functions are dropped, streams drain. */
	while ((job = ctx->hf_head)) {
		ctx->hf_head = job->next;
		job_drop(job);
		job_finish(ctx, job);
	}
	ctx->hf_tail = NULL;
	accel_kevent_destroy(ctx, ctx->hf_doorbell);
}

ACCEL_EXPORT
int accel_launch_host_func(accel_stream_t stream, accel_host_fn fn, void *arg)
{
	ACCEL_API_ENTER();
	struct accel_stream_impl *s;
	int ret;

	ret = accel_stream_get_checked(stream, fn, &s);
	if (ret)
		return ret;
	ret = accel_hostfn_launch(s->child.ctx, s->kstream, fn, arg);
	accel_stream_put(s);
	return ret;
}

/* ------------------------------------------------------------------ */
/* Callbacks that learn the stream's status (cudaStreamAddCallback)    */
/* ------------------------------------------------------------------ */

/*
 * @error is the point's: 0, or -EIO when the stream failed at or before
 * it. The stream's own sticky errno says more, while its handle lives
 * (a destroyed stream's work still runs, its handle is gone).
 */
static void hostfn_report(struct accel_ctx *ctx, struct accel_hostfn_job *job,
			  int error)
{
	struct accel_stream_query sq;

	if (error && !accel_kstream_query(ctx, job->kstream, &sq) && sq.error)
		error = sq.error;
	job->cb(job->stream, error, job->arg);
}

ACCEL_EXPORT
int accel_stream_add_callback(accel_stream_t stream,
			      accel_stream_callback_t fn, void *arg,
			      unsigned int flags)
{
	ACCEL_API_ENTER();
	struct accel_stream_impl *s;
	int ret;

	ret = accel_stream_get_checked(stream, fn && !flags, &s);
	if (ret)
		return ret;
	ret = hostfn_launch(s->child.ctx, s->kstream, NULL, NULL, fn, stream,
			    arg);
	accel_stream_put(s);
	return ret;
}
