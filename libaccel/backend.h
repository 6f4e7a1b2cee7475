/* SPDX-License-Identifier: MIT */
/*
 * libaccel backends: who runs the context's queues.
 *
 *   cpu   the transport's own engine (the kernel's soft engine, or the
 *         inproc transport's worker threads); nothing to do here.
 *   cuda  libaccel attaches as the context's executor (ACCEL_IOC_EXEC_*)
 *         and turns fetched descriptors into CUDA stream work
 *         (backend/cuda/executor.c). libcudart is loaded at run time, so one
 *         libaccel binary serves machines with and without a GPU.
 *
 * The cuda backend also owns the memory the GPU must reach: device
 * allocations are cudaMalloc'ed and registered as ACCEL_MEM_EXTERNAL,
 * host regions are cudaHostRegister'ed, and regions released with queued
 * work are kept (CUDA memory and host mappings alike) until that work
 * retired, because the CUDA side cannot see the kernel's references.
 */
#ifndef LIBACCEL_BACKEND_H
#define LIBACCEL_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct accel_ctx;
struct accel_region;
struct accel_cuda;

/*
 * A context whose device hit a sticky CUDA error: every later call on it
 * fails with this, destroy excepted. accel_last_error_string() says why.
 */
#define ACCEL_ERR_LOST	ENOTRECOVERABLE

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

/* The CUDA backend (backend/cuda/executor.c; stubs when built without CUDA). */
int accel_cuda_start(struct accel_ctx *ctx, bool quiet);
void accel_cuda_stop(struct accel_ctx *ctx);
void accel_cuda_free_ctx(struct accel_ctx *ctx);
bool accel_cuda_lost(struct accel_ctx *ctx, const char **why);
int accel_cuda_malloc(struct accel_ctx *ctx, size_t size, void **ptr);
void accel_cuda_host_pin(struct accel_ctx *ctx, struct accel_region *r);
/* A HOST_ALLOC region the executor resolves by handle. */
int accel_cuda_map_add(struct accel_ctx *ctx, uint32_t handle, void *base,
		       size_t len);
/*
 * Release a region: at once when no queued work names it, else (with
 * @deferred) when that work retired; -EBUSY without @deferred.
 */
int accel_cuda_release(struct accel_ctx *ctx, const struct accel_region *r,
		       bool deferred);
/* Free what a torn-down context still holds (after the transport closed). */
void accel_cuda_region_teardown(struct accel_ctx *ctx,
				const struct accel_region *r);
void accel_cuda_stream_dead(struct accel_ctx *ctx, uint32_t kstream);
/* Retry the releases that waited for queued work. */
void accel_cuda_reap(struct accel_ctx *ctx);
/*
 * Fetch and enqueue what just became fetchable, from the calling thread
 * (after SUBMIT, EVENT_RECORD, EVENT_SIGNAL); ctx->cuda must be set.
 */
void accel_cuda_kick(struct accel_ctx *ctx);
/* ACCEL_TRACE: note the time of a submit (this thread). */
void accel_cuda_mark_submit(struct accel_ctx *ctx);
/*
 * Before a blocking wait: poll completions from this thread while work is
 * on the device (ACCEL_CUDA_SPIN_US, default 50, at most until
 * @deadline). @poll is the wait with a past deadline, -ETIME while not
 * satisfied; its last answer is returned.
 */
int accel_cuda_wait_fast(struct accel_ctx *ctx,
			 int (*poll)(struct accel_ctx *, void *), void *arg,
			 uint64_t deadline);
/* ACCEL_TRACE: a wait returned. */
void accel_cuda_trace_wait(struct accel_ctx *ctx);

#endif /* LIBACCEL_BACKEND_H */
