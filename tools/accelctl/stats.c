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
#include "json.h"
#include "table.h"

static const char usage[] = "stats [--json] CTX [STREAM]";

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

static const char *errno_str(char *buf, size_t len, int64_t err)
{
	if (!err)
		snprintf(buf, len, "0");
	else
		snprintf(buf, len, "%s (%" PRId64 ")",
			 err < 0 ? accelctl_errno_name((int)err) : "?", err);
	return buf;
}

static void json_stream(struct json *j, const char *key,
			const struct accelctl_stream *s)
{
	json_object_begin(j, key);
	json_u64(j, "handle", s->handle);
	json_u64(j, "submitted", s->submitted);
	json_u64(j, "completed", s->completed);
	json_u64(j, "queued", s->queued);
	json_i64(j, "priority", s->priority);
	json_u64(j, "flags", s->flags);
	json_i64(j, "error", s->error);
	json_string(j, "state", s->state);
	json_object_end(j);
}

static void print_json(uint64_t ctx, const struct accelctl_stream *s,
		       size_t ns, const struct accelctl_region *r, size_t nr,
		       bool one)
{
	struct json j;
	size_t i;

	json_init(&j, stdout);
	json_object_begin(&j, NULL);
	json_u64(&j, "context", ctx);
	if (one) {
		json_stream(&j, "stream", s);
		goto done;
	}
	json_array_begin(&j, "streams");
	for (i = 0; i < ns; i++)
		json_stream(&j, NULL, &s[i]);
	json_array_end(&j);
	json_array_begin(&j, "regions");
	for (i = 0; i < nr; i++) {
		json_object_begin(&j, NULL);
		json_u64(&j, "handle", r[i].handle);
		json_string(&j, "kind", r[i].kind);
		json_u64(&j, "size", r[i].size);
		json_u64(&j, "inflight", r[i].inflight);
		json_u64(&j, "flags", r[i].flags);
		json_string(&j, "state", r[i].state);
		json_object_end(&j);
	}
	json_array_end(&j);
done:
	json_object_end(&j);
	json_finish(&j);
}

static int print_streams(uint64_t ctx, const struct accelctl_stream *s,
			 size_t n)
{
	static const char *const spec[] = {
		">STREAM", ">SUBMITTED", ">COMPLETED", ">QUEUED", ">PRIORITY",
		">FLAGS", "ERROR", "STATE", NULL,
	};
	char f[8][64], title[64];
	const char *cell[8];
	struct table t;
	size_t i;
	int k, ret = 0;

	snprintf(title, sizeof(title), "context %" PRIu64 ": streams", ctx);
	table_init(&t, title, spec);
	for (k = 0; k < 8; k++)
		cell[k] = f[k];
	for (i = 0; i < n && !ret; i++) {
		snprintf(f[0], 64, "%" PRIu64, s[i].handle);
		snprintf(f[1], 64, "%" PRIu64, s[i].submitted);
		snprintf(f[2], 64, "%" PRIu64, s[i].completed);
		snprintf(f[3], 64, "%" PRIu64, s[i].queued);
		snprintf(f[4], 64, "%" PRId64, s[i].priority);
		snprintf(f[5], 64, "0x%" PRIx64, s[i].flags);
		errno_str(f[6], 64, s[i].error);
		snprintf(f[7], 64, "%s", s[i].state);
		ret = table_row(&t, cell);
	}
	if (!ret)
		table_print(&t, stdout);
	table_fini(&t);
	return ret;
}

static int print_regions(uint64_t ctx, const struct accelctl_region *r,
			 size_t n)
{
	static const char *const spec[] = {
		">REGION", "KIND", ">BYTES", ">SIZE", ">INFLIGHT", ">FLAGS",
		"STATE", NULL,
	};
	char f[7][64], title[64];
	const char *cell[7];
	struct table t;
	size_t i;
	int k, ret = 0;

	snprintf(title, sizeof(title), "context %" PRIu64 ": regions", ctx);
	table_init(&t, title, spec);
	for (k = 0; k < 7; k++)
		cell[k] = f[k];
	for (i = 0; i < n && !ret; i++) {
		snprintf(f[0], 64, "%" PRIu64, r[i].handle);
		snprintf(f[1], 64, "%s", r[i].kind);
		snprintf(f[2], 64, "%" PRIu64, r[i].size);
		accelctl_human_bytes(f[3], 64, r[i].size);
		snprintf(f[4], 64, "%" PRIu64, r[i].inflight);
		snprintf(f[5], 64, "0x%" PRIx64, r[i].flags);
		snprintf(f[6], 64, "%s", r[i].state);
		ret = table_row(&t, cell);
	}
	if (!ret)
		table_print(&t, stdout);
	table_fini(&t);
	return ret;
}

static int do_stats(struct accelctl *actl, int argc, char *argv[])
{
	struct accelctl_stream *s = NULL, *one = NULL;
	struct accelctl_region *r = NULL;
	char name[64], *stext = NULL, *rtext = NULL;
	int idx, err, badline = 0, ret = EXIT_FAILURE;
	uint64_t ctx, stream = 0;
	size_t ns = 0, nr = 0, i;

	idx = accelctl_cmd_opts(actl, &accelctl_cmd_stats, usage, argc, argv);
	if (idx < 0)
		return idx == -1 ? EXIT_SUCCESS : EXIT_FAILURE;
	if (idx >= argc || argc - idx > 2) {
		fprintf(stderr, "Usage: accelctl %s\n", usage);
		return EXIT_FAILURE;
	}
	if (parse_id(argv[idx], "ctx-", &ctx)) {
		accelctl_err("'%s' is not a context id (see accelctl ps)", argv[idx]);
		goto out;
	}
	if (idx + 1 < argc && parse_id(argv[idx + 1], "", &stream)) {
		accelctl_err("'%s' is not a stream handle", argv[idx + 1]);
		goto out;
	}

	snprintf(name, sizeof(name), "ctx-%" PRIu64 "/streams", ctx);
	err = accelctl_debugfs_read(&actl->roots, name, &stext);
	if (err == -ENOENT) {
		accelctl_err("no context %" PRIu64 " (see accelctl ps)", ctx);
		goto out;
	}
	if (!err)
		err = accelctl_parse_streams(stext, &s, &ns, &badline);
	if (err) {
		accelctl_debugfs_error(&actl->roots, name, err, badline);
		goto out;
	}
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
		snprintf(name, sizeof(name), "ctx-%" PRIu64 "/regions", ctx);
		err = accelctl_debugfs_read(&actl->roots, name, &rtext);
		if (!err)
			err = accelctl_parse_regions(rtext, &r, &nr, &badline);
		if (err) {
			accelctl_debugfs_error(&actl->roots, name, err, badline);
			goto out;
		}
	}

	if (actl->json) {
		print_json(ctx, one ?: s, one ? 1 : ns, r, nr, one);
	} else if (one) {
		if (print_streams(ctx, one, 1))
			goto out;
	} else {
		if (print_streams(ctx, s, ns))
			goto out;
		if (print_regions(ctx, r, nr))
			goto out;
	}
	ret = EXIT_SUCCESS;
out:
	free(s);
	free(r);
	free(stext);
	free(rtext);
	return ret;
}

const struct accelctl_cmd accelctl_cmd_stats = {
	.name = "stats",
	.run = do_stats,
	.help = "streams and regions of context CTX, or one STREAM of it",
};
