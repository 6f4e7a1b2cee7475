// SPDX-License-Identifier: GPL-2.0
/*
 * The driver's debugfs files, read when ACCELCTL_DEBUGFS_ROOT names a
 * directory in their layout (the fixture trees of the tests, or a copy of
 * /sys/kernel/debug taken for debugging). accelctl otherwise asks the
 * driver through ACCEL_IOC_QUERY: debugfs is no ABI, needs root, and may
 * be absent.
 *
 * The row files start with a header naming the columns; columns are found
 * by name, so that the driver may add some without breaking accelctl, and
 * a missing column is a format error rather than a wrong number.
 *
 * Copyright (C) 2026 The accelstream authors
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "accelctl.h"

#define MAX_COLS	32

static int parse_u64(const char *s, uint64_t *v)
{
	char *end;

	if (!isdigit((unsigned char)*s))
		return -EBADMSG;
	errno = 0;
	*v = strtoull(s, &end, 10);
	if (errno || *end)
		return -EBADMSG;
	return 0;
}

static int parse_i64(const char *s, int64_t *v)
{
	char *end;

	if (!isdigit((unsigned char)*s) && *s != '-')
		return -EBADMSG;
	errno = 0;
	*v = strtoll(s, &end, 10);
	if (errno || *end || end == s)
		return -EBADMSG;
	return 0;
}

static int copy_word(char *dst, size_t len, const char *src)
{
	if (strlen(src) >= len)
		return -EBADMSG;
	strcpy(dst, src);
	return 0;
}

/* Splits @line in place into at most @max words; returns how many. */
static int split_words(char *line, char **word, int max)
{
	int n = 0;

	while (*line && n < max) {
		while (isspace((unsigned char)*line))
			line++;
		if (!*line)
			break;
		word[n++] = line;
		while (*line && !isspace((unsigned char)*line))
			line++;
		if (*line)
			*line++ = '\0';
	}
	return n;
}

/* The next line of *@pos, newline removed; NULL at the end. */
static char *next_line(char **pos)
{
	char *line = *pos, *nl;

	if (!line || !*line)
		return NULL;
	nl = strchr(line, '\n');
	if (nl) {
		*nl = '\0';
		*pos = nl + 1;
	} else {
		*pos = line + strlen(line);
	}
	return line;
}

static bool blank(const char *s)
{
	while (isspace((unsigned char)*s))
		s++;
	return !*s;
}

/**
 * struct row_parser - a header-and-rows file
 * @names: the columns accelctl needs, NULL-terminated.
 * @rest: the last needed column is the header's last and takes the rest of
 *	the line (the comm of contexts, which may contain spaces).
 * @row: fills one element from the needed columns' words, in @names order.
 * @size: element size.
 */
struct row_parser {
	const char *const *names;
	bool rest;
	int (*row)(void *elem, char *const *val);
	size_t size;
};

static int parse_rows(const char *text, const struct row_parser *p,
		      void **out, size_t *n, int *badline)
{
	char *buf, *pos, *line, *word[MAX_COLS], *val[MAX_COLS];
	int idx[MAX_COLS], nhead, nwords, nneed, i, k, lineno = 0, ret;
	size_t alloc = 0;
	char *elems = NULL;

	*out = NULL;
	*n = 0;
	*badline = 0;
	buf = strdup(text);
	if (!buf)
		return -ENOMEM;
	pos = buf;

	/* The header. */
	do {
		line = next_line(&pos);
		lineno++;
	} while (line && blank(line));
	ret = -EBADMSG;
	*badline = lineno;
	if (!line)
		goto out;
	nhead = split_words(line, word, MAX_COLS);
	for (nneed = 0; p->names[nneed]; nneed++) {
		idx[nneed] = -1;
		for (k = 0; k < nhead; k++)
			if (!strcmp(word[k], p->names[nneed]))
				idx[nneed] = k;
		if (idx[nneed] < 0)
			goto out;
	}
	if (p->rest && idx[nneed - 1] != nhead - 1)
		goto out;

	while ((line = next_line(&pos))) {
		lineno++;
		*badline = lineno;
		if (blank(line))
			continue;
		if (p->rest) {
			/* All but the last column are words; the rest is one. */
			char *s = line;

			for (nwords = 0; nwords < nhead - 1; nwords++) {
				while (isspace((unsigned char)*s))
					s++;
				if (!*s)
					break;
				word[nwords] = s;
				while (*s && !isspace((unsigned char)*s))
					s++;
				if (*s)
					*s++ = '\0';
			}
			if (nwords < nhead - 1)
				goto out;
			while (*s == ' ' || *s == '\t')
				s++;
			word[nwords++] = s;
		} else {
			nwords = split_words(line, word, MAX_COLS);
			if (nwords != nhead)
				goto out;
		}
		for (i = 0; i < nneed; i++)
			val[i] = word[idx[i]];
		if (*n == alloc) {
			size_t na = alloc ? alloc * 2 : 8;
			char *e = realloc(elems, na * p->size);

			ret = -ENOMEM;
			if (!e)
				goto out;
			elems = e;
			alloc = na;
			ret = -EBADMSG;
		}
		memset(elems + *n * p->size, 0, p->size);
		if (p->row(elems + *n * p->size, val))
			goto out;
		(*n)++;
	}
	*badline = 0;
	*out = elems;
	elems = NULL;
	ret = 0;
out:
	if (ret) {
		*n = 0;
		free(elems);
	}
	free(buf);
	return ret;
}

static int context_row(void *elem, char *const *v)
{
	struct accelctl_context *c = elem;

	if (parse_u64(v[0], &c->id) || parse_i64(v[1], &c->pid) ||
	    parse_u64(v[2], &c->streams) || parse_u64(v[3], &c->events) ||
	    parse_u64(v[4], &c->regions) || parse_u64(v[5], &c->queued) ||
	    parse_u64(v[6], &c->pinned_bytes) ||
	    parse_u64(v[7], &c->device_bytes) ||
	    copy_word(c->executor, sizeof(c->executor), v[8]) ||
	    parse_u64(v[9], &c->failed_streams))
		return -EBADMSG;
	c->uid = -1;
	/* comm is at most TASK_COMM_LEN; cut anything longer. */
	snprintf(c->comm, sizeof(c->comm), "%s", v[10]);
	return 0;
}

int accelctl_parse_contexts(const char *text, struct accelctl_context **out,
			    size_t *n, int *badline)
{
	static const char *const names[] = {
		"id", "pid", "streams", "events", "regions", "queued",
		"pinned_bytes", "device_bytes", "executor", "failed_streams",
		"comm", NULL,
	};
	static const struct row_parser p = {
		.names = names, .rest = true, .row = context_row,
		.size = sizeof(struct accelctl_context),
	};

	return parse_rows(text, &p, (void **)out, n, badline);
}

static int stream_row(void *elem, char *const *v)
{
	struct accelctl_stream *s = elem;

	if (parse_u64(v[0], &s->handle) || parse_u64(v[1], &s->submitted) ||
	    parse_u64(v[2], &s->completed) || parse_u64(v[3], &s->queued) ||
	    parse_i64(v[4], &s->priority) || parse_u64(v[5], &s->flags) ||
	    parse_i64(v[6], &s->error) ||
	    copy_word(s->state, sizeof(s->state), v[7]))
		return -EBADMSG;
	return 0;
}

int accelctl_parse_streams(const char *text, struct accelctl_stream **out,
			   size_t *n, int *badline)
{
	static const char *const names[] = {
		"handle", "submitted", "completed", "queued", "priority",
		"flags", "error", "state", NULL,
	};
	static const struct row_parser p = {
		.names = names, .row = stream_row,
		.size = sizeof(struct accelctl_stream),
	};

	return parse_rows(text, &p, (void **)out, n, badline);
}

static int region_row(void *elem, char *const *v)
{
	struct accelctl_region *r = elem;

	if (parse_u64(v[0], &r->handle) ||
	    copy_word(r->kind, sizeof(r->kind), v[1]) ||
	    parse_u64(v[2], &r->size) || parse_u64(v[3], &r->inflight) ||
	    parse_u64(v[4], &r->flags) ||
	    copy_word(r->state, sizeof(r->state), v[5]))
		return -EBADMSG;
	return 0;
}

int accelctl_parse_regions(const char *text, struct accelctl_region **out,
			   size_t *n, int *badline)
{
	static const char *const names[] = {
		"handle", "kind", "size", "inflight", "flags", "state", NULL,
	};
	static const struct row_parser p = {
		.names = names, .row = region_row,
		.size = sizeof(struct accelctl_region),
	};

	return parse_rows(text, &p, (void **)out, n, badline);
}

/* Reads and parses accelstream/<name>; says on stderr why it could not. */
static int debugfs_rows(const struct accelctl_roots *roots, const char *name,
			int (*parse)(const char *, void **, size_t *, int *),
			void **out, size_t *n)
{
	char path[4096], *text = NULL;
	int ret, badline = 0;

	ret = accelctl_path(path, sizeof(path), roots->debugfs,
			    "/" ACCELCTL_MODULE "/%s", name);
	if (!ret)
		ret = accelctl_read_file(path, &text, 16 << 20);
	if (!ret)
		ret = parse(text, out, n, &badline);
	free(text);
	if (ret == -EBADMSG)
		accelctl_err("%s line %d: unexpected format (accelctl %s reads the layout in Documentation/admin-guide/accelstream.rst)",
			     path, badline, ACCELCTL_VERSION);
	else if (ret && ret != -ENOENT)
		accelctl_err("cannot read %s: %s", path, strerror(-ret));
	return ret;
}

static int parse_contexts(const char *t, void **o, size_t *n, int *bad)
{
	return accelctl_parse_contexts(t, (struct accelctl_context **)o, n, bad);
}

static int parse_streams(const char *t, void **o, size_t *n, int *bad)
{
	return accelctl_parse_streams(t, (struct accelctl_stream **)o, n, bad);
}

static int parse_regions(const char *t, void **o, size_t *n, int *bad)
{
	return accelctl_parse_regions(t, (struct accelctl_region **)o, n, bad);
}

int accelctl_debugfs_contexts(const struct accelctl_roots *roots,
			      struct accelctl_context **out, size_t *n)
{
	int ret = debugfs_rows(roots, "contexts", parse_contexts,
			       (void **)out, n);

	if (ret == -ENOENT)
		accelctl_err("%s/%s/contexts does not exist", roots->debugfs,
			     ACCELCTL_MODULE);
	return ret;
}

int accelctl_debugfs_streams(const struct accelctl_roots *roots, uint64_t ctx,
			     struct accelctl_stream **out, size_t *n)
{
	char name[64];

	snprintf(name, sizeof(name), "ctx-%" PRIu64 "/streams", ctx);
	return debugfs_rows(roots, name, parse_streams, (void **)out, n);
}

int accelctl_debugfs_regions(const struct accelctl_roots *roots, uint64_t ctx,
			     struct accelctl_region **out, size_t *n)
{
	char name[64];

	snprintf(name, sizeof(name), "ctx-%" PRIu64 "/regions", ctx);
	return debugfs_rows(roots, name, parse_regions, (void **)out, n);
}
