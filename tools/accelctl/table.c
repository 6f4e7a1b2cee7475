// SPDX-License-Identifier: GPL-2.0
/*
 * accelctl's human output.
 *
 * Copyright (C) 2026 The accelstream authors
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "table.h"

void table_init(struct table *t, const char *title, const char *const *spec)
{
	memset(t, 0, sizeof(*t));
	t->title = title;
	for (; *spec && t->ncols < TABLE_MAX_COLS; spec++, t->ncols++) {
		const char *s = *spec;

		t->right[t->ncols] = s[0] == '>';
		t->head[t->ncols] = s + (s[0] == '>');
	}
}

int table_row(struct table *t, const char *const *cells)
{
	char **row;
	int i;

	if (t->nrows == t->alloc) {
		size_t alloc = t->alloc ? t->alloc * 2 : 16;
		char **c = realloc(t->cells, alloc * t->ncols * sizeof(*c));

		if (!c)
			return -ENOMEM;
		t->cells = c;
		t->alloc = alloc;
	}
	row = t->cells + t->nrows * t->ncols;
	for (i = 0; i < t->ncols; i++) {
		row[i] = strdup(cells[i] ? cells[i] : "-");
		if (!row[i]) {
			while (i--)
				free(row[i]);
			return -ENOMEM;
		}
	}
	t->nrows++;
	return 0;
}

static void table_rule(const size_t *width, int ncols, char c, FILE *out)
{
	size_t k;
	int i;

	for (i = 0; i < ncols; i++) {
		fputc('+', out);
		for (k = 0; k < width[i] + 2; k++)
			fputc(c, out);
	}
	fputs("+\n", out);
}

static void table_line(const struct table *t, const size_t *width,
		       const char *const *cells, FILE *out)
{
	int i;

	for (i = 0; i < t->ncols; i++)
		fprintf(out, "| %*s%-*s ", t->right[i] ? (int)width[i] : 0,
			t->right[i] ? cells[i] : "",
			t->right[i] ? 0 : (int)width[i],
			t->right[i] ? "" : cells[i]);
	fputs("|\n", out);
}

void table_print(const struct table *t, FILE *out)
{
	size_t width[TABLE_MAX_COLS], total = 0, len, r;
	int i;

	for (i = 0; i < t->ncols; i++) {
		width[i] = strlen(t->head[i]);
		for (r = 0; r < t->nrows; r++) {
			len = strlen(t->cells[r * t->ncols + i]);
			if (len > width[i])
				width[i] = len;
		}
		total += width[i] + 3;
	}
	if (t->title) {
		/* Widen the last column if the title needs more room. */
		len = strlen(t->title);
		if (len + 3 > total)
			width[t->ncols - 1] += len + 3 - total;
		total = 0;
		for (i = 0; i < t->ncols; i++)
			total += width[i] + 3;
		fputc('+', out);
		for (r = 0; r + 1 < total; r++)
			fputc('-', out);
		fputs("+\n", out);
		fprintf(out, "| %-*s |\n", (int)(total - 3), t->title);
	}
	table_rule(width, t->ncols, '-', out);
	table_line(t, width, t->head, out);
	table_rule(width, t->ncols, '=', out);
	for (r = 0; r < t->nrows; r++)
		table_line(t, width, (const char *const *)t->cells + r * t->ncols, out);
	if (!t->nrows)
		fprintf(out, "| %-*s |\n", (int)(total - 3), "(none)");
	table_rule(width, t->ncols, '-', out);
}

void table_fini(struct table *t)
{
	size_t k;

	for (k = 0; k < t->nrows * t->ncols; k++)
		free(t->cells[k]);
	free(t->cells);
	t->cells = NULL;
	t->nrows = t->alloc = 0;
}
