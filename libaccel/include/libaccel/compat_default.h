/* SPDX-License-Identifier: MIT */
/*
 * libaccel/compat_default.h - the default context of the compatibility
 * headers (CUDA's primary context in cuda_compat.h, AscendCL's default
 * context in acl_compat.h): made once, whichever header's call needs it
 * first. Included by those two headers, not by programs; nothing here is
 * part of libaccel's ABI.
 */
#ifndef LIBACCEL_COMPAT_DEFAULT_H
#define LIBACCEL_COMPAT_DEFAULT_H

#include <pthread.h>

#include "libaccel.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Serializes making the default context. Weak, so that every translation
 * unit of the program that includes either header shares one lock:
 * threads whose first calls race make one context between them.
 */
__attribute__((weak)) pthread_mutex_t accel_compat_default_lock =
	PTHREAD_MUTEX_INITIALIZER;

/* Make the default context if the process has none; 0 or -errno. */
static inline int accel_compat_default_context(void)
{
	accel_context *ctx;
	int r;

	pthread_mutex_lock(&accel_compat_default_lock);
	r = accel_context_get_current(&ctx);
	if (r)
		r = accel_context_create(&ctx, 0);
	pthread_mutex_unlock(&accel_compat_default_lock);
	return r;
}

#ifdef __cplusplus
}
#endif

#endif /* LIBACCEL_COMPAT_DEFAULT_H */
