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
 * are freed with work queued are released when that work retires. A
 * pageable destination is written when its copy completes: it must stay
 * allocated until then (accel_memcpy_async(3)).
 */
#ifndef LIBACCEL_H
#define LIBACCEL_H

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
#define LIBACCEL_VERSION_MINOR	4

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

/*
 * The interface, by topic. Each header is part of this one and is
 * included only through it (their order is the order of dependence).
 */
#include <libaccel/error.h>
#include <libaccel/context.h>
#include <libaccel/memory.h>
#include <libaccel/stream.h>
#include <libaccel/copy.h>
#include <libaccel/event.h>

#ifdef __cplusplus
}
#endif

#endif /* LIBACCEL_H */
