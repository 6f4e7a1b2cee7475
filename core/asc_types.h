/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Types of the pure scheduling core, so that the very same core/asc_*.c build
 * in the kernel module and in userspace (libaccel's in-process transport and
 * the unit tests).
 */
#ifndef _ASC_TYPES_H
#define _ASC_TYPES_H

#ifdef __KERNEL__
#include <linux/types.h>
#include <linux/errno.h>
#include <linux/stddef.h>
#include <linux/overflow.h>
#include <linux/build_bug.h>
#include <linux/string.h>
#include "accelstream.h"
#else
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <assert.h>
#include <string.h>
#include <linux/types.h>
#include "accelstream.h"

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int32_t s32;
typedef int64_t s64;

#define check_add_overflow(a, b, d)	__builtin_add_overflow(a, b, d)
#define check_mul_overflow(a, b, d)	__builtin_mul_overflow(a, b, d)
#endif

#endif /* _ASC_TYPES_H */
