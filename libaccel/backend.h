/* SPDX-License-Identifier: MIT */
/*
 * libaccel backends: who runs the context's queues, behind one ops table.
 *
 *   cpu   the transport's own engine (the kernel's soft engine, or the
 *         inproc transport's worker threads); its memory is the
 *         transport's (backend/cpu.c).
 *   cuda  libaccel attaches as the context's executor (ACCEL_IOC_EXEC_*)
 *         and turns fetched descriptors into CUDA stream work
 *         (backend/cuda/). libcudart is loaded at run time, so one libaccel
 *         binary serves machines with and without a GPU. Built only where
 *         the CUDA toolkit's headers are; elsewhere it is not registered.
 *
 * A backend owns the memory its device must reach: the cuda backend
 * cudaMalloc's device memory and registers it as ACCEL_MEM_EXTERNAL,
 * cudaHostRegister's host regions, and keeps regions released with queued
 * work (CUDA memory and host mappings alike) until that work retired,
 * because the CUDA side cannot see the transport's references.
 *
 * The API files call ctx->backend only; they never ask which one runs.
 * Adding a backend is adding a file and a line in backends[] (context.c).
 */
#ifndef LIBACCEL_BACKEND_H
#define LIBACCEL_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct accel_ctx;
struct accel_region;

/* What a backend says of the context's device (device.c). */
struct accel_backend_device {
	char name[256];
	uint64_t total_mem;	/* bytes (CUDA: cudaDeviceProp.totalGlobalMem) */
	unsigned int copy_engines;	/* CUDA: cudaDeviceProp.asyncEngineCount */
	int device;		/* the ordinal the context runs on */
	int count;		/* devices the backend can run on */
};

/*
 * A context whose device hit a sticky error: every later call on it fails
 * with this, destroy excepted. accel_last_error_string() says why.
 */
#define ACCEL_ERR_LOST	ENOTRECOVERABLE

/**
 * struct accel_backend_ops - what a backend does for a context
 * @name: what ACCEL_BACKEND names it by and accel_context_get_backend()
 *	reports.
 * @start: begin serving a new context whose transport is open; @quiet for
 *	ACCEL_BACKEND=auto (a failure is no error of the call). 0 or -errno.
 * @stop: drain what was handed to the device, stop the backend's threads.
 * @teardown: free what the backend holds, after the transport closed.
 * @lost: true (and why) once the device hit a sticky error.
 * @device_alloc: accel_malloc(): allocate @size bytes of device memory a
 *	descriptor can name; fills @r's base, size, map_len and handle.
 * @host_map: a HOST_ALLOC region just mapped at @base (@len bytes) under
 *	transport handle @handle; 0 or -errno.
 * @host_pin: a host region about to enter the context's table, outside
 *	ctx->lock: pin it for the device if the device needs that
 *	(cudaHostRegister). 0 when pinned or not needed, and when the device
 *	can do without (CUDA stages copies from unpinned memory); for a
 *	registered range whose pages cannot be faulted in (the transport of
 *	an executor only checked the mappings), -EFAULT, with nothing of the
 *	pin left. Memory the transport allocated always gets 0.
 * @host_import: another context's portable allocation, imported by the
 *	transport as shadow region @r over the owner's mapping, is about to
 *	enter the table: hold what the device needs of it (cuda: the owner's
 *	mapping and CUDA registration, shared, not registered again) until
 *	the region is cleaned up; under ctx->lock. 0, or -errno: the copy is
 *	staged instead.
 * @release: let a region's handle go, under ctx->lock: at once when no
 *	queued work names it, else with @deferred when that work retired;
 *	-EBUSY without @deferred. 0 or -errno.
 * @unmap: after @release and outside ctx->lock: drop libaccel's own
 *	mapping of the region, if the backend does not keep it.
 * @region_teardown: the context is going: free what a region still holds.
 * @reap: retry the releases that waited for queued work; true when
 *	something was given back (a failed allocation is worth retrying).
 * @stream_dead: a stream's handle was destroyed.
 * @kick: after SUBMIT, EVENT_RECORD or EVENT_SIGNAL succeeded: issue what
 *	became runnable, from the calling thread.
 * @poll: take what the device finished, from the calling thread; true
 *	when there was device work to look at.
 * @wait_fast: before a blocking wait until absolute @deadline: poll
 *	completions from this thread while work is on the device; @poll_fn
 *	is the transport's wait until an absolute CLOCK_MONOTONIC time in
 *	ns (0: a poll; -ETIME while not satisfied, -EINTR interrupted),
 *	called at least once, as a poll. Its last answer; -ETIME: the caller
 *	waits in the transport.
 * @mark_submit: ACCEL_TRACE: the time of a submit (this thread).
 * @trace_wait: ACCEL_TRACE: a wait returned.
 * @device_query: what the context's device is; 0 or -errno.
 * @mem_info: free and total bytes of the context's device memory; 0,
 *	-EOPNOTSUPP when the backend cannot tell, or -errno.
 * @set_device: make @device (checked against the count) the one new
 *	streams and device allocations go to; 0, or -errno (-EOPNOTSUPP:
 *	this backend runs a context on one device only).
 */
struct accel_backend_ops {
	const char *name;
	int (*start)(struct accel_ctx *ctx, bool quiet);
	void (*stop)(struct accel_ctx *ctx);
	void (*teardown)(struct accel_ctx *ctx);
	bool (*lost)(struct accel_ctx *ctx, const char **why);
	int (*device_alloc)(struct accel_ctx *ctx, size_t size,
			    struct accel_region *r);
	int (*host_map)(struct accel_ctx *ctx, uint32_t handle, void *base,
			size_t len);
	int (*host_pin)(struct accel_ctx *ctx, struct accel_region *r);
	int (*host_import)(struct accel_ctx *ctx, struct accel_region *r);
	int (*release)(struct accel_ctx *ctx, const struct accel_region *r,
		       bool deferred);
	void (*unmap)(struct accel_ctx *ctx, const struct accel_region *r);
	void (*region_teardown)(struct accel_ctx *ctx,
				const struct accel_region *r);
	bool (*reap)(struct accel_ctx *ctx);
	void (*stream_dead)(struct accel_ctx *ctx, uint32_t kstream);
	void (*kick)(struct accel_ctx *ctx);
	bool (*poll)(struct accel_ctx *ctx);
	int (*wait_fast)(struct accel_ctx *ctx,
			 int (*poll_fn)(struct accel_ctx *, void *, uint64_t),
			 void *arg, uint64_t deadline);
	void (*mark_submit)(struct accel_ctx *ctx);
	void (*trace_wait)(struct accel_ctx *ctx);
	int (*device_query)(struct accel_ctx *ctx,
			    struct accel_backend_device *out);
	int (*mem_info)(struct accel_ctx *ctx, size_t *free_bytes,
			size_t *total_bytes);
	int (*set_device)(struct accel_ctx *ctx, int device);
};

/* The backends this libaccel was built with. */
extern const struct accel_backend_ops accel_backend_cpu;
#ifdef ACCEL_HAVE_CUDA
extern const struct accel_backend_ops accel_backend_cuda;
#endif

/* Start the backend ACCEL_BACKEND names on a new context; 0 or -errno. */
int accel_backend_start(struct accel_ctx *ctx);
/* Stop it: drain what was handed to the device, stop its threads. */
void accel_backend_stop(struct accel_ctx *ctx);
/* "cpu" or "cuda". */
const char *accel_backend_name(const struct accel_ctx *ctx);
/* 0, or -ACCEL_ERR_LOST (and the thread's error string) when lost. */
int accel_backend_check(struct accel_ctx *ctx);

/* Set the calling thread's accel_last_error_string(). */
void accel_set_error(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

#endif /* LIBACCEL_BACKEND_H */
