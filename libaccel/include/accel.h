/* SPDX-License-Identifier: MIT */
/*
 * libaccel: streams, events and asynchronous copies over accelstream.
 *
 * The whole public surface of the library. Every call returns 0 or a
 * negative errno value and never sets errno; accel_strerror() turns the
 * value into text. Sizes are in bytes, timeouts in nanoseconds relative to
 * the call (ACCEL_TIMEOUT_INFINITE blocks, 0 polls).
 *
 * The promise libaccel makes on top of CUDA/AscendCL semantics: a buffer
 * handed to an asynchronous copy is never freed or reused underneath it.
 * Pageable (unregistered) sources are staged at enqueue; pinned buffers that
 * are freed with work queued are released when that work retires.
 */
#ifndef LIBACCEL_ACCEL_H
#define LIBACCEL_ACCEL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Small wrappers are inline so that picking a copy kind costs no call;
 * everything with state lives out of line, behind the versioned ABI.
 */
#ifndef ACCELINLINE
#define ACCELINLINE static inline
#endif

#define LIBACCEL_VERSION_MAJOR	1
#define LIBACCEL_VERSION_MINOR	1

/* ------------------------------------------------------------------ */
/* Handles and constants                                              */
/* ------------------------------------------------------------------ */

/*
 * Handles are opaque values, never pointers to live memory: a destroyed
 * handle is recognised by its generation and gives -ENOENT, never a crash,
 * even after new objects have been created.
 */
typedef struct accel_context accel_context;
typedef struct accel_stream *accel_stream_t;
typedef struct accel_event *accel_event_t;

/* Wait forever (stream/event synchronize, accel_event_wait). */
#ifndef ACCEL_TIMEOUT_INFINITE
#define ACCEL_TIMEOUT_INFINITE		(~(uint64_t)0)
#endif

/*
 * The calling thread's default stream of the stream's context: created
 * lazily per thread and per context (cudaStreamPerThread), destroyed when
 * the thread exits. Usable wherever a stream is expected.
 */
#define ACCEL_STREAM_DEFAULT		((accel_stream_t)0)

/* ------------------------------------------------------------------ */
/* Contexts                                                           */
/* ------------------------------------------------------------------ */

/*
 * A context is one open accelstream device (or one in-process model of
 * it): every stream, event and memory region belongs to one context.
 * Creating a context makes it the calling thread's current context
 * (aclrtCreateContext). Calls that take a context accept NULL for "the
 * current context": the thread's current one if it is alive, else the
 * oldest live context of the process (the primary context of CUDA).
 *
 * Environment: ACCEL_TRANSPORT=kernel|inproc (inproc limits:
 * ACCEL_INPROC_MAX_PINNED_MB, default 4096, ACCEL_INPROC_MAX_DEVICE_MB,
 * default 1024, as the module's), ACCEL_BACKEND=cpu|cuda|auto,
 * ACCEL_CHECK=1 (write-protect in-flight sources), ACCEL_SYNC_DEBUG=1
 * (warn when a copy is staged synchronously). See libaccel(7).
 *
 * Backends: "cpu" (the default) lets the transport's engine run the
 * queues. "cuda" makes libaccel the context's executor: copies run as CUDA
 * stream work on device ACCEL_CUDA_DEVICE (default 0), accel_malloc() is
 * cudaMalloc, host buffers are also cudaHostRegister'ed. Without a usable
 * GPU, or in a libaccel built without CUDA, creation fails with -ENODEV
 * and accel_last_error_string() says why. "auto" is cuda when a GPU is
 * usable, else cpu. Tuning: ACCEL_CUDA_NO_BATCH=1 (no
 * cudaMemcpyBatchAsync), ACCEL_CUDA_BATCH_MAX (bytes, largest copy to
 * batch, default 262144), ACCEL_CUDA_SPIN_US (how long completion is
 * polled before sleeping, default 50), ACCEL_CUDART (libcudart to load).
 */
int accel_context_create(accel_context **ctx, unsigned int flags);
int accel_context_destroy(accel_context *ctx);
int accel_context_set_current(accel_context *ctx);
int accel_context_get_current(accel_context **ctx);
/* Name of the transport a context runs over: "kernel" or "inproc". */
int accel_context_get_transport(accel_context *ctx, const char **name);
/* Name of the backend that runs its queues: "cpu" or "cuda". */
int accel_context_get_backend(accel_context *ctx, const char **name);

/* ------------------------------------------------------------------ */
/* Streams                                                            */
/* ------------------------------------------------------------------ */

/* Stream flags (cudaStreamNonBlocking: recorded, reported). */
#define ACCEL_STREAM_NON_BLOCKING	(1U << 0)

int accel_stream_create(accel_context *ctx, unsigned int flags, int priority,
			accel_stream_t *stream);
int accel_stream_destroy(accel_stream_t stream);
/* 0 when everything queued has retired, -EAGAIN while work is pending. */
int accel_stream_query(accel_stream_t stream);
/* Block until everything queued so far retired (cudaStreamSynchronize). */
int accel_stream_synchronize(accel_stream_t stream, uint64_t timeout_ns);
int accel_stream_get_priority(accel_stream_t stream, int *priority);
int accel_stream_get_flags(accel_stream_t stream, unsigned int *flags);
int accel_stream_priority_range(accel_context *ctx, int *least,
				int *greatest);

/* ------------------------------------------------------------------ */
/* Memory                                                             */
/* ------------------------------------------------------------------ */

/* accel_host_register() flags. */
#define ACCEL_HOST_REGISTER_READONLY	(1U << 0)
/* accel_host_unregister() flags: release when queued copies retire. */
#define ACCEL_HOST_UNREGISTER_DEFERRED	(1U << 0)

/* Pinned host memory, zeroed (cudaMallocHost / aclrtMallocHost). */
int accel_host_alloc(accel_context *ctx, void **ptr, size_t size,
		     unsigned int flags);
/* Stream-ordered: returns at once, pages go when queued copies retire. */
int accel_host_free(void *ptr);
/* Pin an existing range (cudaHostRegister). */
int accel_host_register(accel_context *ctx, void *ptr, size_t size,
			unsigned int flags);
int accel_host_unregister(void *ptr, unsigned int flags);

/*
 * Device memory (cudaMalloc / aclrtMalloc). The pointer is an opaque
 * device address: it must never be dereferenced on the host.
 */
int accel_malloc(accel_context *ctx, void **dev_ptr, size_t size);
/* Stream-ordered like accel_host_free(). */
int accel_free(void *dev_ptr);

/* ------------------------------------------------------------------ */
/* Copies                                                             */
/* ------------------------------------------------------------------ */

enum accel_memcpy_kind {
	ACCEL_MEMCPY_H2H = 0,
	ACCEL_MEMCPY_H2D = 1,
	ACCEL_MEMCPY_D2H = 2,
	ACCEL_MEMCPY_D2D = 3,
	ACCEL_MEMCPY_DEFAULT = 4,	/* inferred from the pointers */
};

/*
 * Queue a copy of @bytes on @stream (cudaMemcpyAsync). Pinned (host
 * alloc or registered) host memory is copied asynchronously. A pageable
 * source is copied into a library bounce buffer before the call returns,
 * so the caller may free it at once (that part is synchronous). A pageable
 * destination is filled after the copy retires, by a host function on the
 * stream.
 */
int accel_memcpy_async(accel_stream_t stream, void *dst, const void *src,
		       size_t bytes, enum accel_memcpy_kind kind);

/*
 * Queue @count copies on @stream as one submission (cudaMemcpyBatchAsync):
 * copy i moves @sizes[i] bytes from @srcs[i] to @dsts[i], in order after
 * the copies before it, as @count calls of accel_memcpy_async() would,
 * but all queued or none. @count is at most the transport's submit limit
 * (4096). With pageable memory on a side, or ACCEL_CHECK, the copies are
 * queued one by one instead: an error leaves the earlier ones queued.
 */
int accel_memcpy_batch_async(accel_stream_t stream, void *const *dsts,
			     const void *const *srcs, const size_t *sizes,
			     size_t count, enum accel_memcpy_kind kind);

ACCELINLINE int accel_memcpy_h2d_async(accel_stream_t stream, void *dst,
				       const void *src, size_t bytes)
{
	return accel_memcpy_async(stream, dst, src, bytes, ACCEL_MEMCPY_H2D);
}

ACCELINLINE int accel_memcpy_d2h_async(accel_stream_t stream, void *dst,
				       const void *src, size_t bytes)
{
	return accel_memcpy_async(stream, dst, src, bytes, ACCEL_MEMCPY_D2H);
}

/* ------------------------------------------------------------------ */
/* Events                                                             */
/* ------------------------------------------------------------------ */

/* Event flags. Events keep timestamps unless timing is disabled. */
#define ACCEL_EVENT_DEFAULT		0U
#define ACCEL_EVENT_DISABLE_TIMING	(1U << 0)
/*
 * A host event: a 64-bit counter raised by accel_event_signal() rather
 * than a recorded point; streams wait on it with accel_stream_wait_value()
 * (cuStreamWaitValue64). Complete once its value is not zero.
 */
#define ACCEL_EVENT_HOST		(1U << 1)

/* accel_event_signal() flags: fail the event's waiters with -EIO. */
#define ACCEL_EVENT_SIGNAL_ERROR	(1U << 0)

/* accel_event_wait() modes. */
#define ACCEL_WAIT_ANY			0U
#define ACCEL_WAIT_ALL			(1U << 0)

int accel_event_create(accel_context *ctx, unsigned int flags,
		       accel_event_t *event);
int accel_event_destroy(accel_event_t event);
int accel_event_record(accel_event_t event, accel_stream_t stream);
/* 0 complete (or never recorded), -EAGAIN pending, -EIO failed. */
int accel_event_query(accel_event_t event);
int accel_event_synchronize(accel_event_t event, uint64_t timeout_ns);
/* Milliseconds from @start to @end (cudaEventElapsedTime). */
int accel_event_elapsed_time(float *ms, accel_event_t start,
			     accel_event_t end);
/* Later work on @stream waits for @event's current point. */
int accel_stream_wait_event(accel_stream_t stream, accel_event_t event,
			    unsigned int flags);
int accel_event_wait(const accel_event_t *events, unsigned int count,
		     unsigned int mode, uint64_t timeout_ns,
		     unsigned int *first);
/* Raise a host event's counter to @value (never lowers it). */
int accel_event_signal(accel_event_t event, uint64_t value,
		       unsigned int flags);
/* Later work on @stream waits until host event @event reaches @value. */
int accel_stream_wait_value(accel_stream_t stream, accel_event_t event,
			    uint64_t value, unsigned int flags);

/* ------------------------------------------------------------------ */
/* Host functions                                                     */
/* ------------------------------------------------------------------ */

typedef void (*accel_host_fn)(void *arg);

/*
 * Run @fn(@arg) on a library thread once prior work on @stream retired;
 * later work on @stream waits for it (cudaLaunchHostFunc). @fn may queue
 * work but must not wait or destroy a context: called from a host
 * function, the synchronize and wait calls with a nonzero timeout and
 * accel_context_destroy() return -EDEADLK.
 */
int accel_launch_host_func(accel_stream_t stream, accel_host_fn fn,
			   void *arg);

/* ------------------------------------------------------------------ */
/* Errors                                                             */
/* ------------------------------------------------------------------ */

/* Text for a value returned by libaccel (negative or positive errno). */
const char *accel_strerror(int err);

/*
 * What the calling thread's last call ran into, beyond its errno: the
 * CUDA error name and text ("cudaMalloc: cudaErrorMemoryAllocation (out
 * of memory)"), why a context could not be created or a backend start,
 * why a context is lost. Cleared when a call starts, so empty after a
 * call that succeeded or had nothing to add; valid until the thread's
 * next libaccel call.
 */
const char *accel_last_error_string(void);

/*
 * Logging, as libkmod's kmod_set_log_fn(): libaccel never writes to stderr
 * by itself. @fn receives every message libaccel has (a failed context
 * creation's reason, a device lost, a background thread's failure, the
 * ACCEL_TRACE breakdown), with its syslog(3) priority (LOG_ERR 3 ...
 * LOG_DEBUG 7); NULL restores the default: nothing, or stderr for the
 * priorities ACCEL_LOG asks (1 or err, warning, info, debug). Process-wide;
 * @fn may be called from libaccel's own threads.
 */
typedef void (*accel_log_fn)(void *data, int priority, const char *msg);
void accel_set_log_fn(accel_log_fn fn, void *data);

/*
 * A lost context: -ENOTRECOVERABLE. The context's device hit a sticky
 * error (an illegal address, say): its streams failed with -EIO, and every
 * later call on the context returns -ENOTRECOVERABLE, except the destroy,
 * free and unregister calls, which still work. Destroy it and create one.
 */

/* ------------------------------------------------------------------ */
/* Devices                                                            */
/* ------------------------------------------------------------------ */

/* accel_device_prop.free_mem when the transport cannot tell. */
#define ACCEL_MEM_UNKNOWN		(~(uint64_t)0)

/*
 * What a context's device is (cudaGetDeviceProperties, aclrtGetDeviceInfo).
 * Sizes in bytes. See accel_device_get_properties(3).
 */
struct accel_device_prop {
	char name[256];		/* NUL-terminated */
	uint64_t total_mem;	/* device memory (cpu: the context's limit) */
	uint64_t free_mem;	/* free now, or ACCEL_MEM_UNKNOWN */
	uint64_t pinned_limit;	/* most the context may pin, in force now */
	unsigned int copy_engines;	/* concurrent copy engines; 0 unknown */
	int device;		/* ordinal of the device the context runs on */
	const char *backend;	/* "cpu" or "cuda", static storage */
	const char *transport;	/* "kernel" or "inproc", static storage */
	uint64_t reserved[4];	/* zero */
};

/* Devices the context's backend can see (cudaGetDeviceCount). */
int accel_device_get_count(accel_context *ctx, int *count);
int accel_device_get_properties(accel_context *ctx,
				struct accel_device_prop *prop);
/* Free and total device memory in bytes (cudaMemGetInfo). */
int accel_mem_get_info(accel_context *ctx, size_t *free_bytes,
		       size_t *total_bytes);
/*
 * Block until everything queued on every stream of the context when the
 * call started retired (cudaDeviceSynchronize, aclrtSynchronizeDevice).
 */
int accel_context_synchronize(accel_context *ctx, uint64_t timeout_ns);

/* ------------------------------------------------------------------ */
/* Callbacks that learn the stream's status                           */
/* ------------------------------------------------------------------ */

/*
 * @status: 0, the stream's sticky error (a negative errno, -EIO say) when
 * it failed before the callback, or -ECANCELED when the context was
 * destroyed before the stream reached it.
 */
typedef void (*accel_stream_callback_t)(accel_stream_t stream, int status,
					void *arg);

/*
 * Like accel_launch_host_func(), but @fn always runs, exactly once, and
 * learns the stream's status instead of being skipped on a failed stream
 * (cudaStreamAddCallback). @flags must be 0.
 */
int accel_stream_add_callback(accel_stream_t stream,
			      accel_stream_callback_t fn, void *arg,
			      unsigned int flags);

#ifdef __cplusplus
}
#endif

#endif /* LIBACCEL_ACCEL_H */
