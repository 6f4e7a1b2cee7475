// SPDX-License-Identifier: MIT
/* accel_strerror() and accel_last_error_string(). */
#include <limits.h>

#include "helpers.h"

/* Every int has a text, INT_MIN (whose negation overflows) included. */
static int strerror_any_int(void)
{
	static const int v[] = { 0, -1, 1, -133, -134, 4095, -4096, 100000,
				 -100000, INT_MAX, INT_MIN + 1, INT_MIN };
	unsigned int i;

	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		const char *s = accel_strerror(v[i]);

		CHECK(s && *s);
	}
	CHECK(!strcmp(accel_strerror(INT_MIN), "Unknown error"));
	CHECK(!strcmp(accel_strerror(INT_MAX), "Unknown error"));
	CHECK(!strcmp(accel_strerror(-ENOENT), accel_strerror(ENOENT)));
	return T_PASS;
}

T_MAIN(T(strerror_any_int))
