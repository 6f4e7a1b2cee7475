// SPDX-License-Identifier: GPL-2.0
/*
 * accelctl ps: one row per context (open file of the device), the
 * nvidia-smi process table of accelstream.
 *
 * Copyright (C) 2026 The accelstream authors
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "accelctl.h"
#include "json.h"
#include "table.h"

static const char usage[] = "ps [--json]";

static void print_json(const struct accelctl_context *c, size_t n)
{
	struct json j;
	size_t i;

	json_init(&j, stdout);
	json_object_begin(&j, NULL);
	json_array_begin(&j, "contexts");
	for (i = 0; i < n; i++) {
		json_object_begin(&j, NULL);
		json_u64(&j, "id", c[i].id);
		json_i64(&j, "pid", c[i].pid);
		json_string(&j, "comm", c[i].comm);
		json_u64(&j, "streams", c[i].streams);
		json_u64(&j, "events", c[i].events);
		json_u64(&j, "regions", c[i].regions);
		json_u64(&j, "queued", c[i].queued);
		json_u64(&j, "pinned_bytes", c[i].pinned_bytes);
		json_u64(&j, "device_bytes", c[i].device_bytes);
		json_string(&j, "executor", c[i].executor);
		json_u64(&j, "failed_streams", c[i].failed_streams);
		json_object_end(&j);
	}
	json_array_end(&j);
	json_object_end(&j);
	json_finish(&j);
}

static int print_table(const struct accelctl_context *c, size_t n)
{
	static const char *const spec[] = {
		">CTX", ">PID", "COMMAND", ">STREAMS", ">EVENTS", ">REGIONS",
		">QUEUED", ">PINNED", ">DEVICE", "EXECUTOR", "ERROR", NULL,
	};
	char f[11][64], title[128], pinned[32], device[32];
	const char *cell[11];
	uint64_t tp = 0, td = 0;
	struct table t;
	size_t i;
	int k, ret = 0;

	for (i = 0; i < n; i++) {
		tp += c[i].pinned_bytes;
		td += c[i].device_bytes;
	}
	accelctl_human_bytes(pinned, sizeof(pinned), tp);
	accelctl_human_bytes(device, sizeof(device), td);
	snprintf(title, sizeof(title),
		 "accelstream  contexts: %zu  pinned: %s  device: %s", n,
		 pinned, device);
	table_init(&t, title, spec);
	for (k = 0; k < 11; k++)
		cell[k] = f[k];
	for (i = 0; i < n && !ret; i++) {
		snprintf(f[0], 64, "%" PRIu64, c[i].id);
		snprintf(f[1], 64, "%" PRId64, c[i].pid);
		snprintf(f[2], 64, "%s", c[i].comm);
		snprintf(f[3], 64, "%" PRIu64, c[i].streams);
		snprintf(f[4], 64, "%" PRIu64, c[i].events);
		snprintf(f[5], 64, "%" PRIu64, c[i].regions);
		snprintf(f[6], 64, "%" PRIu64, c[i].queued);
		accelctl_human_bytes(f[7], 64, c[i].pinned_bytes);
		accelctl_human_bytes(f[8], 64, c[i].device_bytes);
		snprintf(f[9], 64, "%s", c[i].executor);
		if (c[i].failed_streams)
			snprintf(f[10], 64, "%" PRIu64 " failed", c[i].failed_streams);
		else
			snprintf(f[10], 64, "ok");
		ret = table_row(&t, cell);
	}
	if (!ret)
		table_print(&t, stdout);
	table_fini(&t);
	return ret;
}

static int do_ps(struct accelctl *actl, int argc, char *argv[])
{
	struct accelctl_context *c = NULL;
	int idx, err, badline = 0, ret = EXIT_FAILURE;
	char *text = NULL;
	size_t n = 0;

	idx = accelctl_cmd_opts(actl, &accelctl_cmd_ps, usage, argc, argv);
	if (idx < 0)
		return idx == -1 ? EXIT_SUCCESS : EXIT_FAILURE;
	if (idx < argc) {
		fprintf(stderr, "Usage: accelctl %s\n", usage);
		return EXIT_FAILURE;
	}
	err = accelctl_debugfs_read(&actl->roots, "contexts", &text);
	if (!err)
		err = accelctl_parse_contexts(text, &c, &n, &badline);
	if (err) {
		accelctl_debugfs_error(&actl->roots, "contexts", err, badline);
		goto out;
	}
	if (actl->json) {
		print_json(c, n);
	} else if (print_table(c, n)) {
		accelctl_err("out of memory");
		goto out;
	}
	ret = EXIT_SUCCESS;
out:
	free(c);
	free(text);
	return ret;
}

const struct accelctl_cmd accelctl_cmd_ps = {
	.name = "ps",
	.run = do_ps,
	.help = "list contexts: pid, command, streams, queued, pinned, executor, errors",
};
