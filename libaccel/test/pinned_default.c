// SPDX-License-Identifier: MIT
/*
 * The module's default per-context pin limit follows the machine: a
 * quarter of RAM (max_pinned_mb, read back from sysfs when the module was
 * loaded without it), not a fixed 4 GiB that a small machine does not
 * have. Over inproc the same default is checked by inproc_limits.
 */
#include "helpers.h"

static int default_follows_ram(void)
{
	const char *tp = getenv("ACCEL_TRANSPORT");
	long mb, total_kb;

	if (!tp || strcmp(tp, "kernel")) {
		printf("# the module's parameter (inproc: see inproc_limits)\n");
		return T_SKIP;
	}
	mb = t_read_long("/sys/module/accelstream/parameters/max_pinned_mb",
			 "%ld");
	total_kb = t_read_long("/proc/meminfo", "MemTotal: %ld kB");
	CHECK(mb > 0 && total_kb > 0);
	printf("# max_pinned_mb %ld, MemTotal %ld kB\n", mb, total_kb);
	/* totalram_pages() is MemTotal: a quarter of it, in MiB. */
	CHECK(mb == total_kb / 4 / 1024);
	return T_PASS;
}

T_MAIN(T(default_follows_ram))
