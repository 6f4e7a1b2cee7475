// SPDX-License-Identifier: MIT
/*
 * Errors and logging. libaccel writes nothing, to stderr or anywhere else:
 * what goes wrong is in the return value, accel_strerror() and the thread's
 * accel_last_error_string(). Its messages (and the diagnostics turned on by
 * name, ACCEL_TRACE=1, ACCEL_SYNC_DEBUG=1) go to the callback of
 * accel_set_log_fn(), as liburing's users and libkmod's kmod_set_log_fn()
 * would set one; without a callback they are dropped.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "accel_int.h"

/* accel_last_error_string(): why the calling thread's last call failed. */
static __thread char last_error[384];

void accel_set_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(last_error, sizeof(last_error), fmt, ap);
	va_end(ap);
}

void accel_clear_error(void)
{
	last_error[0] = '\0';
}

ACCEL_EXPORT
const char *accel_last_error_string(void)
{
	return last_error;
}

/* Protects log_fn and log_data; a leaf, taken by the fork() handlers too. */
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static accel_log_fn log_fn;
static void *log_data;

void accel_log_lock(void)
{
	pthread_mutex_lock(&log_lock);
}

void accel_log_unlock(void)
{
	pthread_mutex_unlock(&log_lock);
}

ACCEL_EXPORT
void accel_set_log_fn(accel_log_fn fn, void *data)
{
	pthread_mutex_lock(&log_lock);
	log_fn = fn;
	log_data = data;
	pthread_mutex_unlock(&log_lock);
}

static void vlog(int prio, const char *fmt, va_list ap)
{
	accel_log_fn fn;
	char msg[1024];
	void *data;

	pthread_mutex_lock(&log_lock);
	fn = log_fn;
	data = log_data;
	pthread_mutex_unlock(&log_lock);
	if (!fn)
		return;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	fn(data, prio, msg);
}

void accel_log(int prio, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(prio, fmt, ap);
	va_end(ap);
}

void accel_error(const char *fmt, ...)
{
	char msg[384];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	accel_set_error("%s", msg);
	accel_log(LOG_ERR, "%s", msg);
}

ACCEL_EXPORT
const char *accel_strerror(int err)
{
	/* -INT_MIN does not exist: no errno is that large anyway. */
	if (err == INT_MIN)
		return "Unknown error";
	if (err < 0)
		err = -err;
	switch (err) {
	case 0:		return "Success";
	case EPERM:	return "Operation not permitted (write into a read-only region)";
	case ENOENT:	return "No such object (unknown or destroyed handle or pointer)";
	case EINTR:	return "Interrupted";
	case EIO:	return "Input/output error (the stream failed)";
	case EBADF:	return "Bad file descriptor";
	case EAGAIN:	return "Resource temporarily unavailable: not ready, or queue full";
	case ENOMEM:	return "Out of memory, or past a pinning limit";
	case EACCES:	return "Permission denied (context opened by another process)";
	case EFAULT:	return "Bad address (range not mapped, or not writable)";
	case EBUSY:	return "Busy (queued work names the buffer, or waits on the event)";
	case EEXIST:	return "Already registered (range overlaps a region)";
	case ENODEV:	return "No device (transport or backend unavailable)";
	case EINVAL:	return "Invalid argument";
	case ENOSPC:	return "Too many objects";
	case ENOTTY:	return "Unknown command (driver too old?)";
	case ETIME:	return "Timed out";
	case EPROTO:	return "Driver ABI mismatch";
	case ECANCELED:	return "Cancelled";
	case EDEADLK:	return "Would deadlock (a host function may not wait or destroy a context)";
	case EOPNOTSUPP: return "Not supported";
	case ENOTRECOVERABLE: return "Context lost (sticky device error; destroy the context, see accel_last_error_string)";
	case ENXIO:	return "No executor can reach this memory";
	case EMFILE:	return "Too many open files (the process's RLIMIT_NOFILE)";
	case ENFILE:	return "Too many open files in the system";
	default:	return "Unknown error";
	}
}
