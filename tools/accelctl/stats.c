// SPDX-License-Identifier: GPL-2.0
/*
 * accelctl stats: the streams and regions of one context, or one stream.
 *
 * Copyright (C) 2026 The accelstream authors
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "accelctl.h"
#include "out.h"

static const char usage[] = "stats [-J] [-o COLUMNS] [-n] [-r] [-b] CTX [STREAM]";

enum { S_STREAM, S_SUBMITTED, S_COMPLETED, S_QUEUED, S_PRIORITY, S_FLAGS,
       S_ERROR, S_STATE };

#define NUM	SCOLS_FL_RIGHT, SCOLS_JSON_NUMBER

static const struct accelctl_col stream_cols[] = {
	[S_STREAM] = { "STREAM", 0, NUM, true, "stream handle" },
	[S_SUBMITTED] = { "SUBMITTED", 0, NUM, true, "last submitted sequence number" },
	[S_COMPLETED] = { "COMPLETED", 0, NUM, true, "every descriptor up to it has retired" },
	[S_QUEUED] = { "QUEUED", 0, NUM, true, "descriptors not retired" },
	[S_PRIORITY] = { "PRIORITY", 0, NUM, true, "effective priority (lower is more urgent)" },
	[S_FLAGS] = { "FLAGS", 0, NUM, true, "creation flags" },
	[S_ERROR] = { "ERROR", 0, NUM, true, "0, or the failure's errno (negative in JSON)" },
	[S_STATE] = { "STATE", 0, 0, SCOLS_JSON_STRING, true, "live, destroyed (draining)" },
};

enum { R_REGION, R_KIND, R_SIZE, R_INFLIGHT, R_FLAGS, R_STATE };

static const struct accelctl_col region_cols[] = {
	[R_REGION] = { "REGION", 0, NUM, true, "region handle" },
	[R_KIND] = { "KIND", 0, 0, SCOLS_JSON_STRING, true, "host, host_alloc, device, external" },
	[R_SIZE] = { "SIZE", 0, NUM, true, "size (bytes in JSON and with -b)" },
	[R_INFLIGHT] = { "INFLIGHT", 0, NUM, true, "queued descriptors naming it" },
	[R_FLAGS] = { "FLAGS", 0, NUM, true, "region flags" },
	[R_STATE] = { "STATE", 0, 0, SCOLS_JSON_STRING, true, "live, released (deferred)" },
};

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

static void columns_help(FILE *out)
{
	fprintf(out, "\nStreams:");
	out_cols_help(out, stream_cols, ARRAY_SIZE(stream_cols));
	fprintf(out, "\nRegions:");
	out_cols_help(out, region_cols, ARRAY_SIZE(region_cols));
}

static int parse_id(const char *s, const char *prefix, uint64_t *v)
{
	char *end;

	if (!strncmp(s, prefix, strlen(prefix)))
		s += strlen(prefix);
	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	*v = strtoull(s, &end, 10);
	return errno || *end ? -EINVAL : 0;
}

static int stream_row(const struct accelctl *actl, struct accelctl_tab *t,
		      struct libscols_line *ln, const void *item)
{
	const struct accelctl_stream *s = item;
	int ret = 0;

	ret |= out_cell_u64(t, ln, S_STREAM, s->handle);
	ret |= out_cell_u64(t, ln, S_SUBMITTED, s->submitted);
	ret |= out_cell_u64(t, ln, S_COMPLETED, s->completed);
	ret |= out_cell_u64(t, ln, S_QUEUED, s->queued);
	ret |= out_cell(t, ln, S_PRIORITY, "%" PRId64, s->priority);
	if (actl->json)
		ret |= out_cell_u64(t, ln, S_FLAGS, s->flags);
	else
		ret |= out_cell(t, ln, S_FLAGS, "0x%" PRIx64, s->flags);
	if (actl->json || !s->error)
		ret |= out_cell(t, ln, S_ERROR, "%" PRId64, s->error);
	else
		ret |= out_cell(t, ln, S_ERROR, "%s (%" PRId64 ")",
				accelctl_errno_name((int)s->error), s->error);
	ret |= out_cell_text(t, ln, S_STATE, s->state);
	return ret;
}

static int region_row(const struct accelctl *actl, struct accelctl_tab *t,
		      struct libscols_line *ln, const void *item)
{
	const struct accelctl_region *r = item;
	int ret = 0;

	ret |= out_cell_u64(t, ln, R_REGION, r->handle);
	ret |= out_cell_text(t, ln, R_KIND, r->kind);
	ret |= out_cell_bytes(actl, t, ln, R_SIZE, r->size);
	ret |= out_cell_u64(t, ln, R_INFLIGHT, r->inflight);
	if (actl->json)
		ret |= out_cell_u64(t, ln, R_FLAGS, r->flags);
	else
		ret |= out_cell(t, ln, R_FLAGS, "0x%" PRIx64, r->flags);
	ret |= out_cell_text(t, ln, R_STATE, r->state);
	return ret;
}

/* -o names columns of either table; one that neither has is an error. */
static int check_columns(const char *list)
{
	char *copy, *name, *save = NULL;
	int ret = 0;

	if (!list)
		return 0;
	copy = strdup(list);
	if (!copy)
		return -ENOMEM;
	for (name = strtok_r(copy, ",", &save); name && !ret;
	     name = strtok_r(NULL, ",", &save)) {
		if (out_col_known(stream_cols, ARRAY_SIZE(stream_cols), name) ||
		    out_col_known(region_cols, ARRAY_SIZE(region_cols), name))
			continue;
		accelctl_err("unknown column '%s' (accelctl stats --help lists them)",
			     name);
		ret = -EINVAL;
	}
	free(copy);
	return ret;
}

static int do_stats(struct accelctl *actl, int argc, char *argv[])
{
	struct accelctl_tab st = { 0 }, rt = { 0 }, *tabs[2];
	struct accelctl_stream *s = NULL, *one = NULL;
	struct accelctl_region *r = NULL;
	int idx, err, ntabs = 0, ret = EXIT_FAILURE;
	uint64_t ctx, stream = 0;
	size_t ns = 0, nr = 0, i;

	idx = accelctl_cmd_opts(actl, &accelctl_cmd_stats, usage,
				ACCELCTL_OPT_TABLE, columns_help, argc, argv);
	if (idx < 0)
		return idx == -1 ? EXIT_SUCCESS : EXIT_FAILURE;
	if (idx >= argc) {
		accelctl_usage_error(usage, "stats needs a context id (see accelctl ps)");
		return EXIT_FAILURE;
	}
	if (argc - idx > 2) {
		accelctl_usage_error(usage, "stats takes CTX and at most one STREAM, not '%s' too",
				     argv[idx + 2]);
		return EXIT_FAILURE;
	}
	if (parse_id(argv[idx], "ctx-", &ctx)) {
		accelctl_err("'%s' is not a context id (see accelctl ps)", argv[idx]);
		return EXIT_FAILURE;
	}
	if (idx + 1 < argc && parse_id(argv[idx + 1], "", &stream)) {
		accelctl_err("'%s' is not a stream handle", argv[idx + 1]);
		return EXIT_FAILURE;
	}
	if (check_columns(actl->columns))
		return EXIT_FAILURE;
	if (!accelctl_require_live(actl))
		return EXIT_FAILURE;

	err = accelctl_list_streams(actl, ctx, &s, &ns);
	if (err == -ENOENT)
		accelctl_err("no context %" PRIu64 " (see accelctl ps)", ctx);
	if (err)
		goto out;
	if (idx + 1 < argc) {
		for (i = 0; i < ns; i++)
			if (s[i].handle == stream)
				one = &s[i];
		if (!one) {
			accelctl_err("context %" PRIu64 " has no stream %" PRIu64,
				     ctx, stream);
			goto out;
		}
	} else {
		err = accelctl_list_regions(actl, ctx, &r, &nr);
		if (err == -ENOENT)
			accelctl_err("context %" PRIu64 " is gone", ctx);
		if (err)
			goto out;
	}

	err = out_tab_init(&st, actl, "streams", stream_cols,
			   ARRAY_SIZE(stream_cols), false);
	if (!err && !one)
		err = out_tab_init(&rt, actl, "regions", region_cols,
				   ARRAY_SIZE(region_cols), false);
	if (err == -ENOMEM)
		accelctl_err("out of memory");
	if (!err && st.nsel) {
		tabs[ntabs++] = &st;
		err = out_rows(actl, &st, one ?: s, sizeof(*s), one ? 1 : ns,
			       stream_row);
	}
	if (!err && !one && rt.nsel) {
		tabs[ntabs++] = &rt;
		err = out_rows(actl, &rt, r, sizeof(*r), nr, region_row);
	}
	if (!err && ntabs)
		err = out_print(actl, tabs, ntabs);
	if (!err)
		ret = EXIT_SUCCESS;
out:
	out_tab_fini(&st);
	out_tab_fini(&rt);
	free(s);
	free(r);
	return ret;
}

const struct accelctl_cmd accelctl_cmd_stats = {
	.name = "stats",
	.run = do_stats,
	.help = "streams and regions of context CTX, or one STREAM of it",
};
