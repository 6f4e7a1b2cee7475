// SPDX-License-Identifier: MIT
/*
 * Logging. libaccel never writes to stderr by itself: what goes wrong is
 * in the return value and accel_last_error_string(). A message is passed
 * on only when the user asks for it: to the callback of accel_set_log_fn()
 * (as libkmod's kmod_set_log_fn), or, without one, to stderr when ACCEL_LOG
 * names a priority at or above the message's. A diagnostic the user turned
 * on by name (ACCEL_TRACE=1, ACCEL_SYNC_DEBUG=1) is asked for by that.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "accel_int.h"

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

/* The most verbose priority ACCEL_LOG asks for on stderr; -1 for none. */
static int env_priority(void)
{
	static const struct {
		const char *name;
		int prio;
	} names[] = {
		{ "1", LOG_ERR }, { "err", LOG_ERR }, { "warning", LOG_WARNING },
		{ "info", LOG_INFO }, { "debug", LOG_DEBUG },
	};
	const char *v = getenv("ACCEL_LOG");
	unsigned int i;

	if (!v || !*v)
		return -1;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(v, names[i].name))
			return names[i].prio;
	return -1;
}

static void vlog(int prio, bool asked, const char *fmt, va_list ap)
{
	accel_log_fn fn;
	char msg[1024];
	void *data;

	pthread_mutex_lock(&log_lock);
	fn = log_fn;
	data = log_data;
	pthread_mutex_unlock(&log_lock);
	if (!fn && !asked && prio > env_priority())
		return;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	if (fn)
		fn(data, prio, msg);
	else
		fprintf(stderr, "libaccel: %s\n", msg);
}

void accel_log(int prio, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(prio, false, fmt, ap);
	va_end(ap);
}

void accel_log_asked(int prio, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(prio, true, fmt, ap);
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
