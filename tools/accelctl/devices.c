// SPDX-License-Identifier: GPL-2.0
/*
 * accelctl devices: one row per soft device, the per-GPU table of
 * nvidia-smi: the contexts whose current device it is, its streams and
 * their queued work, the host memory those contexts pin and the device
 * memory allocated on it (ACCEL_QUERY_DEVICES).
 *
 * Copyright (C) 2026 The accelstream authors
 */
#include <errno.h>
#include <stdlib.h>

#include "accelctl.h"
#include "out.h"

static const char usage[] = "devices [-J] [-o COLUMNS] [-n] [-r] [-b]";

enum { C_DEV, C_CONTEXTS, C_STREAMS, C_QUEUED, C_PINNED, C_MEMORY,
       C_LIMIT, C_RETIRED };

#define NUM	SCOLS_FL_RIGHT, SCOLS_JSON_NUMBER

static const struct accelctl_col cols[] = {
	[C_DEV] = { "DEVICE", 0, NUM, true, "device number (ACCEL_IOC_SET_DEVICE)" },
	[C_CONTEXTS] = { "CONTEXTS", 0, NUM, true, "contexts whose current device it is" },
	[C_STREAMS] = { "STREAMS", 0, NUM, true, "streams that run on it" },
	[C_QUEUED] = { "QUEUED", 0, NUM, true, "descriptors queued on them, not yet retired" },
	[C_PINNED] = { "PINNED", 0, NUM, true, "host memory its contexts pin (bytes in JSON and with -b)" },
	[C_MEMORY] = { "MEMORY", 0, NUM, true, "its memory allocated, every context (bytes in JSON and with -b)" },
	[C_LIMIT] = { "LIMIT", 0, NUM, true, "the most of it one context may allocate" },
	[C_RETIRED] = { "RETIRED", 0, NUM, true, "descriptors retired on it since load" },
};

#define NCOLS	(sizeof(cols) / sizeof(cols[0]))

static void columns_help(FILE *out)
{
	out_cols_help(out, cols, NCOLS);
}

static int device_row(const struct accelctl *actl, struct accelctl_tab *t,
		      struct libscols_line *ln, const void *item)
{
	const struct accelctl_device *d = item;

	return out_cell_u64(t, ln, C_DEV, d->index) |
	       out_cell_u64(t, ln, C_CONTEXTS, d->contexts) |
	       out_cell_u64(t, ln, C_STREAMS, d->streams) |
	       out_cell_u64(t, ln, C_QUEUED, d->queued) |
	       out_cell_bytes(actl, t, ln, C_PINNED, d->pinned_bytes) |
	       out_cell_bytes(actl, t, ln, C_MEMORY, d->device_bytes) |
	       out_cell_bytes(actl, t, ln, C_LIMIT, d->max_device_bytes) |
	       out_cell_u64(t, ln, C_RETIRED, d->retired);
}

static int fill(const struct accelctl *actl, struct accelctl_tab *t)
{
	struct accelctl_device *d = NULL;
	size_t n = 0;
	int ret;

	ret = accelctl_list_devices(actl, &d, &n);
	if (!ret)
		ret = out_rows(actl, t, d, sizeof(*d), n, device_row);
	free(d);
	return ret;
}

static int run_devices(struct accelctl *actl, int argc, char *argv[])
{
	int idx;

	idx = accelctl_cmd_opts(actl, &accelctl_cmd_devices, usage,
				ACCELCTL_OPT_TABLE, columns_help, argc, argv);
	if (idx < 0)
		return idx == -1 ? EXIT_SUCCESS : EXIT_FAILURE;
	if (idx < argc) {
		accelctl_usage_error(usage, "devices takes no arguments, not '%s'",
				     argv[idx]);
		return EXIT_FAILURE;
	}
	if (!accelctl_require_live(actl))
		return EXIT_FAILURE;
	if (out_show(actl, "devices", cols, NCOLS, fill))
		return EXIT_FAILURE;
	return EXIT_SUCCESS;
}

const struct accelctl_cmd accelctl_cmd_devices = {
	.name = "devices",
	.run = run_devices,
	.help = "list devices: contexts, streams, queued, pinned, device memory",
};
