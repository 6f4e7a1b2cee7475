/* SPDX-License-Identifier: MIT */
/*
 * libaccel: errors and the log.
 *
 * Part of libaccel's public interface; include <libaccel.h>, which
 * includes this header with the types and constants it needs.
 */
#ifndef LIBACCEL_ERROR_H
#define LIBACCEL_ERROR_H

#ifndef LIBACCEL_H
#error "include <libaccel.h>, not <libaccel/error.h>"
#endif

/* ------------------------------------------------------------------ */
/* Errors                                                             */
/* ------------------------------------------------------------------ */

/**
 * accel_strerror() - describe an error value
 * @err: a value a libaccel call returned (negative or positive errno)
 *
 * Returns a static string for @err, a negative (or positive) errno value
 * returned by libaccel, with the library's meaning (for example -EAGAIN reads
 * "Resource temporarily unavailable: not ready, or queue full", -EACCES
 * "context opened by another process"). Any int has a text: values libaccel
 * never returns, INT_MIN included, read "Unknown error". Never NULL,
 * thread-safe. For what a call ran into beyond its errno value, see
 * accel_last_error_string(3).
 *
 * CUDA / AscendCL: cudaGetErrorString, aclGetRecentErrMsg
 *
 * Return: A pointer to a static string.
 */
const char *accel_strerror(int err);

/**
 * accel_last_error_string() - what the calling thread's last call ran into
 * Context: any thread; the string belongs to the calling thread.
 *
 * Returns the details of the calling thread's last failing call, beyond its
 * errno value: why a context could not be created (an unknown ACCEL_TRANSPORT
 * or ACCEL_BACKEND, /dev/accelstream missing and what to do about it, an ABI
 * mismatch, why the cuda backend could not start, with the CUDA error), the
 * CUDA error name and text of a failed CUDA call ("cudaMalloc:
 * cudaErrorMemoryAllocation (out of memory)"), or why a context is lost
 * (-ENOTRECOVERABLE). The messages libaccel logs for a call (see
 * accel_set_log_fn(3)) are here too.
 *
 * The string is per thread and about the last call only: every call but
 * accel_last_error_string() and accel_strerror() clears it when it starts,
 * argument checks included. It is empty after a call that succeeded, but
 * for a copy staged through the pinned staging pool, which leaves a note
 * saying what was staged and why (pageable memory, or pinned memory of
 * another context; a staged destination's note begins "the copy into ");
 * and after one that failed with nothing to add (the errno value says it
 * all; see accel_strerror(3)). It is never NULL, and stays valid and
 * unchanged until the thread's next libaccel call other than
 * accel_strerror().
 *
 * CUDA / AscendCL: cudaGetErrorString(cudaGetLastError()), aclGetRecentErrMsg
 *
 * Return: A pointer to a thread-local string, possibly empty.
 */
const char *accel_last_error_string(void);

/**
 * typedef accel_log_fn - receives libaccel's log messages
 * @data: what accel_set_log_fn() was given.
 * @priority: the message's syslog(3) priority (LOG_ERR 3 ... LOG_DEBUG 7).
 * @msg: the text, one line without a newline.
 */
typedef void (*accel_log_fn)(void *data, int priority, const char *msg);

/**
 * accel_set_log_fn() - where libaccel's messages go
 * @fn: receives every message; NULL drops them again (the default).
 * @data: passed to @fn.
 * Context: any thread; process-wide. @fn may be called from any thread,
 * libaccel's own included, and must not call libaccel.
 *
 * libaccel writes nothing, to stderr or anywhere else: a failure is in the
 * return value and its details in accel_last_error_string(3). Its messages
 * (why a context could not be created, a device context lost, a failure of
 * one of its own threads, the ACCEL_TRACE=1 breakdown, the
 * ACCEL_SYNC_DEBUG=1 note, ACCEL_CHECK=1's report of a destination freed
 * under its copy) go to @fn, with their syslog(3) priority; without a
 * callback (the default) they are dropped. The one exception is
 * ACCEL_CHECK=1's report of a write into an in-flight source, written to
 * stderr just before the process aborts (libaccel(7)).
 *
 * CUDA / AscendCL: none in CUDA (the runtime does not log);
 * aclInitCallbackRegister is the nearest in AscendCL.
 */
void accel_set_log_fn(accel_log_fn fn, void *data);

/*
 * A lost context: -ENOTRECOVERABLE. The context's device hit a sticky
 * error (an illegal address, say): its streams failed with -EIO, and every
 * later call on the context returns -ENOTRECOVERABLE, except the destroy,
 * free and unregister calls, which still work. Destroy it and create one.
 */

#endif /* LIBACCEL_ERROR_H */
