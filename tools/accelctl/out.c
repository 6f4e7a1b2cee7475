// SPDX-License-Identifier: GPL-2.0
/*
 * accelctl's tables and JSON, drawn by libsmartcols.
 *
 * Copyright (C) 2026 The accelstream authors
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "out.h"

bool out_col_known(const struct accelctl_col *cols, size_t ncols,
		   const char *name)
{
	size_t i;

	for (i = 0; i < ncols; i++)
		if (!strcasecmp(cols[i].name, name))
			return true;
	return false;
}

/* Adds the columns named in @list (comma-separated) that @cols has. */
static int select_list(struct accelctl_tab *t, const char *list, bool strict)
{
	char *copy, *name, *save = NULL;
	int ret = 0;
	size_t i;

	copy = strdup(list);
	if (!copy)
		return -ENOMEM;
	for (name = strtok_r(copy, ",", &save); name;
	     name = strtok_r(NULL, ",", &save)) {
		for (i = 0; i < t->ncols; i++)
			if (!strcasecmp(t->cols[i].name, name))
				break;
		if (i == t->ncols) {
			if (!strict)
				continue;
			accelctl_err("unknown column '%s' (--help lists them)",
				     name);
			ret = -EINVAL;
			break;
		}
		if (t->nsel == OUT_MAX_COLS) {
			accelctl_err("too many columns (at most %d)",
				     OUT_MAX_COLS);
			ret = -EINVAL;
			break;
		}
		t->sel[t->nsel++] = i;
	}
	free(copy);
	return ret;
}

int out_tab_init(struct accelctl_tab *t, const struct accelctl *actl,
		 const char *name, const struct accelctl_col *cols,
		 size_t ncols, bool strict)
{
	size_t i;
	int ret;

	memset(t, 0, sizeof(*t));
	t->cols = cols;
	t->ncols = ncols;
	if (actl->columns) {
		ret = select_list(t, actl->columns, strict);
		if (ret)
			return ret;
	} else {
		for (i = 0; i < ncols && t->nsel < OUT_MAX_COLS; i++)
			if (cols[i].dflt)
				t->sel[t->nsel++] = i;
	}

	t->tb = scols_new_table();
	if (!t->tb)
		return -ENOMEM;
	scols_table_set_name(t->tb, name);
	scols_table_enable_json(t->tb, actl->json);
	scols_table_enable_raw(t->tb, actl->raw);
	scols_table_enable_noheadings(t->tb, actl->noheadings);
	for (i = 0; i < t->nsel; i++) {
		const struct accelctl_col *c = &cols[t->sel[i]];
		struct libscols_column *cl;

		cl = scols_table_new_column(t->tb, c->name, c->whint, c->flags);
		if (!cl)
			goto err_free;
		if (scols_column_set_json_type(cl, c->json))
			goto err_free;
	}
	return 0;

err_free:
	out_tab_fini(t);
	return -ENOMEM;
}

void out_tab_fini(struct accelctl_tab *t)
{
	scols_unref_table(t->tb);
	t->tb = NULL;
}

void out_cols_help(FILE *out, const struct accelctl_col *cols, size_t ncols)
{
	size_t i;

	fprintf(out, "\nColumns (-o; * = default):\n");
	for (i = 0; i < ncols; i++)
		fprintf(out, " %c%-10s %s\n", cols[i].dflt ? '*' : ' ',
			cols[i].name, cols[i].help);
}

struct libscols_line *out_row(struct accelctl_tab *t)
{
	return scols_table_new_line(t->tb, NULL);
}

int out_rows(const struct accelctl *actl, struct accelctl_tab *t,
	     const void *items, size_t size, size_t n, out_row_fn *row)
{
	const char *item = items;
	size_t i;

	for (i = 0; i < n; i++, item += size) {
		struct libscols_line *ln = out_row(t);

		if (!ln || row(actl, t, ln, item)) {
			accelctl_err("out of memory");
			return -ENOMEM;
		}
	}
	return 0;
}

int out_show(const struct accelctl *actl, const char *name,
	     const struct accelctl_col *cols, size_t ncols,
	     int (*fill)(const struct accelctl *actl, struct accelctl_tab *t))
{
	struct accelctl_tab t, *tabs[1] = { &t };
	int ret;

	ret = out_tab_init(&t, actl, name, cols, ncols, true);
	if (ret == -ENOMEM)
		accelctl_err("out of memory");
	if (!ret)
		ret = fill(actl, &t);
	if (!ret)
		ret = out_print(actl, tabs, 1);
	out_tab_fini(&t);
	return ret;
}

/* Position of column @col among the shown ones, -1 if hidden. */
static int shown_at(const struct accelctl_tab *t, int col)
{
	size_t i;

	for (i = 0; i < t->nsel; i++)
		if (t->sel[i] == col)
			return i;
	return -1;
}

static int set(struct accelctl_tab *t, struct libscols_line *ln, int col,
	       const char *s)
{
	int at = shown_at(t, col);

	if (at < 0)
		return 0;
	return scols_line_set_data(ln, at, s) ? -ENOMEM : 0;
}

int out_cell(struct accelctl_tab *t, struct libscols_line *ln, int col,
	     const char *fmt, ...)
{
	char buf[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	return set(t, ln, col, buf);
}

int out_cell_u64(struct accelctl_tab *t, struct libscols_line *ln, int col,
		 uint64_t v)
{
	return out_cell(t, ln, col, "%" PRIu64, v);
}

int out_cell_bytes(const struct accelctl *actl, struct accelctl_tab *t,
		   struct libscols_line *ln, int col, uint64_t v)
{
	char buf[32];

	if (actl->json || actl->bytes)
		return out_cell_u64(t, ln, col, v);
	accelctl_human_bytes(buf, sizeof(buf), v);
	return set(t, ln, col, buf);
}

int out_cell_text(struct accelctl_tab *t, struct libscols_line *ln, int col,
		  const char *s)
{
	char buf[256];

	return set(t, ln, col, accelctl_utf8_clean(buf, sizeof(buf), s));
}

/* The members of libsmartcols' {"name": [...]}: between the outer braces. */
static int print_members(struct libscols_table *tb)
{
	char *s = NULL, *open, *close;
	int ret;

	ret = scols_print_table_to_string(tb, &s);
	if (ret)
		return ret < 0 ? ret : -ENOMEM;
	open = strchr(s, '{');
	close = strrchr(s, '}');
	if (!open || !close || close < open) {
		free(s);
		return -EBADMSG;
	}
	for (open++; *open == '\n'; open++)
		;
	while (close > open && (close[-1] == '\n' || close[-1] == ' '))
		close--;
	printf(",\n%.*s", (int)(close - open), open);
	free(s);
	return 0;
}

int out_print(const struct accelctl *actl, struct accelctl_tab *const *tabs,
	      size_t n)
{
	size_t i;
	int ret = 0;

	if (actl->json) {
		printf("{\n   \"version\": %d", ACCELCTL_JSON_VERSION);
		for (i = 0; i < n && !ret; i++)
			ret = print_members(tabs[i]->tb);
		printf("\n}\n");
	} else {
		for (i = 0; i < n && !ret; i++) {
			if (i)
				putchar('\n');
			ret = scols_print_table(tabs[i]->tb);
		}
	}
	fflush(stdout);
	if (ret)
		accelctl_err("cannot print the table: %s", strerror(-ret));
	return ret;
}

int out_module_json(const struct accelctl *actl, const char *what,
		    const char *name, const char *path, const char *opts,
		    bool loaded)
{
	static const struct accelctl_col cols[] = {
		{ "MODULE", 0, 0, SCOLS_JSON_STRING, true, "" },
		{ "PATH", 0, 0, SCOLS_JSON_STRING, true, "" },
		{ "OPTIONS", 0, 0, SCOLS_JSON_STRING, true, "" },
		{ "LOADED", 0, 0, SCOLS_JSON_BOOLEAN, true, "" },
	};
	struct accelctl_tab t, *tabs[1] = { &t };
	struct libscols_line *ln;
	int ret;

	ret = out_tab_init(&t, actl, what, cols, 4, true);
	if (!ret) {
		ln = out_row(&t);
		ret = !ln || out_cell_text(&t, ln, 0, name) ||
		      (path && out_cell_text(&t, ln, 1, path)) ||
		      (opts && out_cell_text(&t, ln, 2, opts)) ||
		      out_cell(&t, ln, 3, "%d", loaded) ? -ENOMEM : 0;
		if (ret)
			accelctl_err("out of memory");
	}
	if (!ret)
		ret = out_print(actl, tabs, 1);
	out_tab_fini(&t);
	return ret;
}
