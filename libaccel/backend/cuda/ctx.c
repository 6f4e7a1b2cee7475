// SPDX-License-Identifier: MIT
/*
 * The cuda backend: starting and stopping it on a context, and its ops
 * table.
 */
#include "cuda.h"

static unsigned int env_uint(const char *name, unsigned int def)
{
	const char *v = getenv(name);
	char *end;
	unsigned long n;

	if (!v || !*v)
		return def;
	n = strtoul(v, &end, 0);
	return *end ? def : (unsigned int)n;
}

static int cx_fail_start(bool quiet, int ret, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int cx_fail_start(bool quiet, int ret, const char *fmt, ...)
{
	char buf[384];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	accel_set_error("%s", buf);
	/* auto mode tries cuda quietly: no GPU there is no error. */
	accel_log(quiet ? LOG_DEBUG : LOG_ERR, "ACCEL_BACKEND=cuda: %s", buf);
	return ret;
}

static void cx_free_arrays(struct accel_cuda *cx)
{
	cx_trace_fini(cx);
	free(cx->is.items);
	free(cx->is.touched);
	free(cx->cmp.done);
	free(cx->cmp.ents);
}

static void cx_destroy_sync(struct accel_cuda *cx)
{
	pthread_cond_destroy(&cx->is.fetch_cond);
	pthread_cond_destroy(&cx->cmp.cond);
	pthread_mutex_destroy(&cx->cmp.report_lock);
	pthread_mutex_destroy(&cx->is.exec_lock);
	pthread_mutex_destroy(&cx->mem.map_lock);
	pthread_mutex_destroy(&cx->lock);
}

static int accel_cuda_start(struct accel_ctx *ctx, bool quiet)
{
	struct accel_exec_attach at = { 0 };
	struct accel_stream_create sc = { 0 };
	struct accel_cuda *cx;
	cudaError_t e;
	int ndev = 0, ret;

	pthread_once(&cx_rt_once, cx_rt_load);
	if (cx_rt.load_error)
		return cx_fail_start(quiet, cx_rt.load_error, "%s", cx_rt.why);
	e = cx_rt.cudaGetDeviceCount(&ndev);
	if (e != cudaSuccess)
		return cx_fail_start(quiet, -ENODEV,
				     "no usable GPU: cudaGetDeviceCount: %s: %s",
				     cx_rt.cudaGetErrorName(e),
				     cx_rt.cudaGetErrorString(e));
	if (ndev <= 0)
		return cx_fail_start(quiet, -ENODEV, "no CUDA device");
	if (!(ctx->info.caps & ACCEL_CAP_EXECUTOR))
		return cx_fail_start(quiet, -ENODEV,
				     "the %s transport has no executor protocol (ACCEL_CAP_EXECUTOR): upgrade the accelstream module",
				     ctx->ops->name);

	cx = calloc(1, sizeof(*cx));
	if (!cx)
		return -ENOMEM;
	cx->ctx = ctx;
	/* accel_context_create_on_device()'s, else ACCEL_CUDA_DEVICE. */
	cx->cfg.device = ctx->device >= 0 ? ctx->device :
			 (int)env_uint("ACCEL_CUDA_DEVICE", 0);
	if (cx->cfg.device >= ndev) {
		ret = cx_fail_start(quiet, -ENODEV,
				    "ACCEL_CUDA_DEVICE=%d: only %d device(s)",
				    cx->cfg.device, ndev);
		free(cx);
		return ret;
	}
	cx->cfg.batch_ok = (cx_rt.batch13 || cx_rt.batch12) &&
		       !accel_env_flag("ACCEL_CUDA_NO_BATCH");
	cx->cfg.batch_max_bytes = env_uint("ACCEL_CUDA_BATCH_MAX", 256 * 1024);
	cx->cfg.spin_ns = env_uint("ACCEL_CUDA_SPIN_US", 50) * 1000U;
	cx->cfg.lazy_ns = env_uint("ACCEL_CUDA_LAZY_US", 10) * 1000ULL;
	cx->cfg.lazy_max_ns = env_uint("ACCEL_CUDA_LAZY_MAX_US", 500) * 1000ULL;
	cx->cfg.quiet_max_ns = env_uint("ACCEL_CUDA_QUIET_MAX_US", 1000) * 1000ULL;
	cx->cfg.multi_dev = ndev > 1;
	cx->cfg.merge_ok = !accel_env_flag("ACCEL_CUDA_NO_MERGE");
	cx->cfg.trace = accel_env_flag("ACCEL_TRACE");
	/* The executor pipeline's switches (cuda.h), to compare on and off. */
	cx->cfg.issuer = env_uint("ACCEL_CUDA_ISSUER", 1) != 0;
	cx->cfg.issue_spin_ns = env_uint("ACCEL_CUDA_ISSUE_SPIN_US", 50) * 1000ULL;
	cx->cfg.hybrid = env_uint("ACCEL_CUDA_HYBRID", 1) != 0;
	cx->cfg.wake_ns = env_uint("ACCEL_CUDA_WAKE_US", 20) * 1000ULL;
	{
		const char *c = getenv("ACCEL_CUDA_COMPLETION");

		/* Measured faster on the round trip (bench/README.md). */
		cx->cfg.word = !(c && !strcmp(c, "event")) && cx_rt.write32 &&
			       cx_rt.cudaHostAlloc && cx_rt.cudaFreeHost &&
			       cx_rt.cudaHostGetDevicePointer;
	}
	if (cx_trace_init(cx)) {
		free(cx);
		return -ENOMEM;
	}
	cx->is.fetch_max = CX_FETCH_MAX;
	if (cx->is.fetch_max > ctx->info.max_submit)
		cx->is.fetch_max = ctx->info.max_submit;
	cx->cmp.done_max = CX_FETCH_MAX * 4;
	cx->is.items = calloc(cx->is.fetch_max, sizeof(*cx->is.items));
	cx->is.touched = calloc(cx->is.fetch_max, sizeof(*cx->is.touched));
	cx->cmp.done = calloc(cx->cmp.done_max, sizeof(*cx->cmp.done));
	cx->cmp.ents = calloc(2 * (size_t)cx->cmp.done_max, sizeof(*cx->cmp.ents));
	if (!cx->is.items || !cx->is.touched || !cx->cmp.done || !cx->cmp.ents) {
		cx_free_arrays(cx);
		free(cx);
		return -ENOMEM;
	}
	pthread_mutex_init(&cx->lock, NULL);
	pthread_mutex_init(&cx->mem.map_lock, NULL);
	pthread_mutex_init(&cx->is.exec_lock, NULL);
	pthread_mutex_init(&cx->cmp.report_lock, NULL);
	{
		pthread_condattr_t ca;

		pthread_condattr_init(&ca);
		pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
		pthread_cond_init(&cx->is.fetch_cond, &ca);
		pthread_cond_init(&cx->cmp.cond, &ca);
		pthread_condattr_destroy(&ca);
	}

	e = cx_rt.cudaSetDevice(cx->cfg.device);
	if (e == cudaSuccess)
		e = cx_rt.cudaFree(NULL);	/* create the device context now */
	if (e == cudaSuccess)
		e = cx_rt.cudaDeviceGetStreamPriorityRange(&cx->cfg.prio_least,
							&cx->cfg.prio_greatest);
	if (e != cudaSuccess) {
		ret = cx_fail_start(quiet, -ENODEV, "device %d: %s: %s",
				    cx->cfg.device, cx_rt.cudaGetErrorName(e),
				    cx_rt.cudaGetErrorString(e));
		goto err_free;
	}
	ret = accel_ioctl(ctx, ACCEL_IOC_STREAM_CREATE, &sc);
	if (ret)
		goto err_free;
	cx->cfg.ctl_stream = sc.handle;
	ret = accel_ioctl(ctx, ACCEL_IOC_EXEC_ATTACH, &at);
	if (ret) {
		cx_fail_start(quiet, ret, "EXEC_ATTACH: %s", strerror(-ret));
		goto err_stream;
	}
	ctx->backend_data = cx;
	ctx->device = cx->cfg.device;
	if (pthread_create(&cx->done_thread, NULL, cx_done_main, cx)) {
		ret = -ENOMEM;
		goto err_detach;
	}
	if (pthread_create(&cx->fetch_thread, NULL, cx_fetch_main, cx)) {
		pthread_mutex_lock(&cx->lock);
		cx->cmp.stop_done = cx->is.fetch_exited = true;
		pthread_cond_signal(&cx->cmp.cond);
		pthread_mutex_unlock(&cx->lock);
		pthread_join(cx->done_thread, NULL);
		ret = -ENOMEM;
		goto err_detach;
	}
	return 0;

err_detach:
	ctx->backend_data = NULL;
	accel_ioctl(ctx, ACCEL_IOC_EXEC_DETACH, &at);
err_stream:
	{
		struct accel_handle h = { .handle = cx->cfg.ctl_stream };

		accel_ioctl(ctx, ACCEL_IOC_STREAM_DESTROY, &h);
	}
err_free:
	cx_destroy_sync(cx);
	cx_free_arrays(cx);
	free(cx);
	return ret;
}

static void accel_cuda_stop(struct accel_ctx *ctx)
{
	struct accel_cuda *cx = cx_of(ctx);

	if (!cx)
		return;
	atomic_store(&cx->is.stopping, true);
	pthread_mutex_lock(&cx->lock);
	cx->is.stop_fetch = true;
	pthread_cond_signal(&cx->is.fetch_cond);
	pthread_mutex_unlock(&cx->lock);
	pthread_join(cx->fetch_thread, NULL);
	/* What went to the device completes and is reported. */
	pthread_mutex_lock(&cx->lock);
	cx->cmp.stop_done = true;
	pthread_cond_signal(&cx->cmp.cond);
	pthread_mutex_unlock(&cx->lock);
	pthread_join(cx->done_thread, NULL);
	if (cx->cfg.trace)
		cx_trace_print(cx);
	/*
	 * Stay attached: closing the transport cancels what was never
	 * fetched, where a detach would let the CPU engine run it.
	 */
}

static void accel_cuda_free_ctx(struct accel_ctx *ctx)
{
	struct accel_cuda *cx = cx_of(ctx);
	struct cx_zombie *z;
	unsigned int i;

	if (!cx)
		return;
	cx_rt.cudaSetDevice(cx->cfg.device);
	for (i = 0; i < CX_BUCKETS; i++) {
		struct cx_stream *s;

		while ((s = cx->is.buckets[i])) {
			cx->is.buckets[i] = s->hnext;
			free(s->open);
			cx_stream_free(cx, s);
		}
	}
	while ((z = cx->mem.zombies)) {
		cx->mem.zombies = z->next;
		cx_region_cleanup(cx, &z->r);
		free(z);
	}
	while (cx->cmp.head) {
		struct cx_range *r = cx->cmp.head;

		cx->cmp.head = r->next;
		if (r->ev)
			cx_rt.cudaEventDestroy(r->ev);
		free(r);
	}
	while (cx->is.rcache) {
		struct cx_range *r = cx->is.rcache;

		cx->is.rcache = r->next;
		free(r);
	}
	while (cx->cmp.rfree) {
		struct cx_range *r = cx->cmp.rfree;

		cx->cmp.rfree = r->next;
		free(r);
	}
	for (i = 0; i < cx->cmp.npool; i++)
		cx_rt.cudaEventDestroy(cx->cmp.pool[i]);
	cx_words_free(cx);
	free(cx->cmp.pool);
	free(cx->mem.map);
	free(cx->is.dead_streams);
	cx_destroy_sync(cx);
	cx_free_arrays(cx);
	free(cx);
	ctx->backend_data = NULL;
}

/* cudaGetDeviceProperties of the context's device, and the device count. */
static int accel_cuda_device_query(struct accel_ctx *ctx,
				   struct accel_backend_device *out)
{
	struct accel_cuda *cx = cx_of(ctx);
	struct cudaDeviceProp prop;
	cudaError_t e;

	memset(&prop, 0, sizeof(prop));
	cx_rt.cudaSetDevice(cx->cfg.device);
	e = cx_rt.cudaGetDeviceProperties(&prop, cx->cfg.device);
	if (e != cudaSuccess)
		return cx_error(cx, e, "cudaGetDeviceProperties");
	e = cx_rt.cudaGetDeviceCount(&out->count);
	if (e != cudaSuccess)
		return cx_error(cx, e, "cudaGetDeviceCount");
	memcpy(out->name, prop.name, sizeof(out->name) - 1);
	out->name[sizeof(out->name) - 1] = '\0';
	out->total_mem = prop.totalGlobalMem;
	out->copy_engines = prop.asyncEngineCount > 0 ?
			    (unsigned int)prop.asyncEngineCount : 0;
	out->device = cx->cfg.device;
	return 0;
}

/* cudaMemGetInfo on the context's device; bytes. */
static int accel_cuda_mem_info(struct accel_ctx *ctx, size_t *free_bytes,
			       size_t *total_bytes)
{
	struct accel_cuda *cx = cx_of(ctx);

	cx_rt.cudaSetDevice(cx->cfg.device);
	return cx_error(cx, cx_rt.cudaMemGetInfo(free_bytes, total_bytes),
			"cudaMemGetInfo");
}

/*
 * The cuda backend runs a context on the one GPU it started on: streams
 * and memory of other GPUs need a context of their own (as AscendCL's
 * contexts are), created with accel_context_create_on_device().
 */
static int accel_cuda_set_device(struct accel_ctx *ctx, int device)
{
	struct accel_cuda *cx = cx_of(ctx);

	if (device == cx->cfg.device)
		return 0;
	accel_set_error("the cuda backend runs this context on GPU %d only; create a context on GPU %d with accel_context_create_on_device()",
			cx->cfg.device, device);
	return -EOPNOTSUPP;
}

const struct accel_backend_ops accel_backend_cuda = {
	.name = "cuda",
	.start = accel_cuda_start,
	.stop = accel_cuda_stop,
	.teardown = accel_cuda_free_ctx,
	.lost = accel_cuda_lost,
	.device_alloc = accel_cuda_device_alloc,
	.host_map = accel_cuda_map_add,
	.host_pin = accel_cuda_host_pin,
	.host_import = accel_cuda_host_import,
	.release = accel_cuda_release,
	.unmap = accel_cuda_unmap,
	.region_teardown = accel_cuda_region_teardown,
	.reap = accel_cuda_reap,
	.stream_dead = accel_cuda_stream_dead,
	.kick = accel_cuda_kick,
	.poll = accel_cuda_poll,
	.wait_fast = accel_cuda_wait_fast,
	.mark_submit = accel_cuda_mark_submit,
	.trace_wait = accel_cuda_trace_wait,
	.device_query = accel_cuda_device_query,
	.mem_info = accel_cuda_mem_info,
	.set_device = accel_cuda_set_device,
};
