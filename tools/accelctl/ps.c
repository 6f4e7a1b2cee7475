// SPDX-License-Identifier: GPL-2.0
/*
 * accelctl ps: one row per context (open file of the device), the
 * nvidia-smi process table of accelstream; -l N refreshes it every N
 * seconds, as nvidia-smi -l does.
 *
 * Copyright (C) 2026 The accelstream authors
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "accelctl.h"
#include "out.h"

static const char usage[] =
	"ps [-J] [-o COLUMNS] [-n] [-r] [-b] [-l SECONDS | --watch] [-c COUNT]";

enum { C_CTX, C_PID, C_UID, C_COMMAND, C_STREAMS, C_EVENTS, C_REGIONS,
       C_QUEUED, C_PINNED, C_DEVICE, C_EXECUTOR, C_FAILED };

#define NUM	SCOLS_FL_RIGHT, SCOLS_JSON_NUMBER

static const struct accelctl_col cols[] = {
	[C_CTX] = { "CTX", 0, NUM, true, "context id (accelctl stats CTX)" },
	[C_PID] = { "PID", 0, NUM, true, "process that opened the device" },
	[C_UID] = { "UID", 0, NUM, true, "its effective user id" },
	[C_COMMAND] = { "COMMAND", 0, 0, SCOLS_JSON_STRING, true,
			"its command name when it opened the device" },
	[C_STREAMS] = { "STREAMS", 0, NUM, true, "live streams" },
	[C_EVENTS] = { "EVENTS", 0, NUM, true, "live events" },
	[C_REGIONS] = { "REGIONS", 0, NUM, true, "live regions" },
	[C_QUEUED] = { "QUEUED", 0, NUM, true, "descriptors not yet retired" },
	[C_PINNED] = { "PINNED", 0, NUM, true, "host memory pinned (bytes in JSON and with -b)" },
	[C_DEVICE] = { "DEVICE", 0, NUM, true, "device memory allocated (bytes in JSON and with -b)" },
	[C_EXECUTOR] = { "EXECUTOR", 0, 0, SCOLS_JSON_STRING, true,
			 "soft (in-kernel engine) or user:PID (userspace executor)" },
	[C_FAILED] = { "FAILED", 0, NUM, true, "streams in the sticky error state" },
};

#define NCOLS	(sizeof(cols) / sizeof(cols[0]))

static void columns_help(FILE *out)
{
	out_cols_help(out, cols, NCOLS);
}

static int context_row(const struct accelctl *actl, struct accelctl_tab *t,
		       struct libscols_line *ln, const void *item)
{
	const struct accelctl_context *c = item;
	int ret = 0;

	ret |= out_cell_u64(t, ln, C_CTX, c->id);
	ret |= out_cell(t, ln, C_PID, "%" PRId64, c->pid);
	if (c->uid >= 0)
		ret |= out_cell(t, ln, C_UID, "%" PRId64, c->uid);
	ret |= out_cell_text(t, ln, C_COMMAND, c->comm);
	ret |= out_cell_u64(t, ln, C_STREAMS, c->streams);
	ret |= out_cell_u64(t, ln, C_EVENTS, c->events);
	ret |= out_cell_u64(t, ln, C_REGIONS, c->regions);
	ret |= out_cell_u64(t, ln, C_QUEUED, c->queued);
	ret |= out_cell_bytes(actl, t, ln, C_PINNED, c->pinned_bytes);
	ret |= out_cell_bytes(actl, t, ln, C_DEVICE, c->device_bytes);
	ret |= out_cell_text(t, ln, C_EXECUTOR, c->executor);
	ret |= out_cell_u64(t, ln, C_FAILED, c->failed_streams);
	return ret;
}

/* The summary line of nvidia-smi, above the table. */
static int set_title(const struct accelctl *actl, struct accelctl_tab *t,
		     const struct accelctl_context *c, size_t n)
{
	char title[128], pinned[32], device[32];
	uint64_t tp = 0, td = 0;
	size_t i;

	if (actl->json || actl->raw || actl->noheadings)
		return 0;
	for (i = 0; i < n; i++) {
		tp += c[i].pinned_bytes;
		td += c[i].device_bytes;
	}
	accelctl_human_bytes(pinned, sizeof(pinned), tp);
	accelctl_human_bytes(device, sizeof(device), td);
	snprintf(title, sizeof(title),
		 "accelstream  contexts: %zu  pinned: %s  device: %s",
		 n, pinned, device);
	if (scols_cell_set_data(scols_table_get_title(t->tb), title)) {
		accelctl_err("out of memory");
		return -ENOMEM;
	}
	return 0;
}

/* One listing's rows; 0 or -errno (said). */
static int fill(const struct accelctl *actl, struct accelctl_tab *t)
{
	struct accelctl_context *c = NULL;
	size_t n = 0;
	int ret;

	ret = accelctl_list_contexts(actl, &c, &n);
	if (!ret)
		ret = out_rows(actl, t, c, sizeof(*c), n, context_row);
	if (!ret)
		ret = set_title(actl, t, c, n);
	free(c);
	return ret;
}

/* One listing; 0 or -errno (said). */
static int show(const struct accelctl *actl)
{
	return out_show(actl, "contexts", cols, NCOLS, fill);
}

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	stop = 1;
}

static int do_ps(struct accelctl *actl, int argc, char *argv[])
{
	struct sigaction sa = { .sa_handler = on_signal };
	unsigned int done;
	struct timespec ts;
	char when[64];
	time_t now;

	if (!accelctl_require_live(actl))
		return EXIT_FAILURE;
	if (!actl->interval)
		return show(actl) ? EXIT_FAILURE : EXIT_SUCCESS;

	/* Refresh until interrupted (or -c COUNT times); ^C ends it cleanly. */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	for (done = 0; !stop; done++) {
		if (!actl->json) {
			now = time(NULL);
			strftime(when, sizeof(when), "%a %b %e %H:%M:%S %Y",
				 localtime(&now));
			printf("%s%s\n", done ? "\n" : "", when);
		}
		if (show(actl))
			return EXIT_FAILURE;
		if (actl->count && done + 1 >= actl->count)
			break;
		ts.tv_sec = actl->interval;
		ts.tv_nsec = 0;
		while (!stop && nanosleep(&ts, &ts) && errno == EINTR)
			;
	}
	return EXIT_SUCCESS;
}

static int run_ps(struct accelctl *actl, int argc, char *argv[])
{
	int idx;

	idx = accelctl_cmd_opts(actl, &accelctl_cmd_ps, usage,
				ACCELCTL_OPT_TABLE | ACCELCTL_OPT_LOOP,
				columns_help, argc, argv);
	if (idx < 0)
		return idx == -1 ? EXIT_SUCCESS : EXIT_FAILURE;
	if (idx < argc) {
		accelctl_usage_error(usage, "ps takes no arguments, not '%s'",
				     argv[idx]);
		return EXIT_FAILURE;
	}
	return do_ps(actl, argc, argv);
}

const struct accelctl_cmd accelctl_cmd_ps = {
	.name = "ps",
	.run = run_ps,
	.help = "list contexts: pid, command, streams, queued, pinned, executor, errors",
};
