/* SPDX-License-Identifier: GPL-2.0 */
/*
 * accelctl's output: tables and JSON through libsmartcols, with lsblk's
 * conventions (-o columns, -n, -r, -J; numbers as numbers in JSON).
 *
 * Copyright (C) 2026 The accelstream authors
 */
#ifndef ACCELCTL_OUT_H
#define ACCELCTL_OUT_H

#include <libsmartcols.h>

#include "accelctl.h"

/* The "version" member of every JSON document; accelctl(8) has the schema. */
#define ACCELCTL_JSON_VERSION	1

#define OUT_MAX_COLS		32

/**
 * struct accelctl_col - a column a command can show
 * @name: its header, upper case; the JSON key is the same in lower case,
 *	and -o takes either.
 * @whint: libsmartcols' width hint.
 * @flags: SCOLS_FL_* (SCOLS_FL_RIGHT for numbers).
 * @json: SCOLS_JSON_STRING, SCOLS_JSON_NUMBER or SCOLS_JSON_BOOLEAN.
 * @dflt: shown without -o.
 * @help: one line for --help.
 */
struct accelctl_col {
	const char *name;
	double whint;
	int flags;
	int json;
	bool dflt;
	const char *help;
};

/**
 * struct accelctl_tab - a table being filled
 * @tb: the libsmartcols table.
 * @cols: the command's columns.
 * @ncols: entries of @cols.
 * @sel: indexes in @cols of the columns shown, in order.
 * @nsel: entries of @sel.
 */
struct accelctl_tab {
	struct libscols_table *tb;
	const struct accelctl_col *cols;
	size_t ncols;
	int sel[OUT_MAX_COLS];
	size_t nsel;
};

/* Whether @name (either case) is one of @cols. */
bool out_col_known(const struct accelctl_col *cols, size_t ncols,
		   const char *name);
/*
 * Sets up @t named @name (the JSON key) with the columns of actl->columns
 * that @cols has (all unknown names are errors when @strict) or the
 * defaults. Returns 0, -EINVAL after saying which column is unknown, or
 * -ENOMEM.
 */
int out_tab_init(struct accelctl_tab *t, const struct accelctl *actl,
		 const char *name, const struct accelctl_col *cols,
		 size_t ncols, bool strict);
void out_tab_fini(struct accelctl_tab *t);
/* --help's list of @cols. */
void out_cols_help(FILE *out, const struct accelctl_col *cols, size_t ncols);

/* A new row; NULL when out of memory. */
struct libscols_line *out_row(struct accelctl_tab *t);
/* Sets the cell of column @col (an index in @cols) if it is shown. */
int out_cell(struct accelctl_tab *t, struct libscols_line *ln, int col,
	     const char *fmt, ...) __attribute__((format(printf, 4, 5)));
int out_cell_u64(struct accelctl_tab *t, struct libscols_line *ln, int col,
		 uint64_t v);
/* Bytes: a number in JSON and with -b, else "1.5 MiB". */
int out_cell_bytes(const struct accelctl *actl, struct accelctl_tab *t,
		   struct libscols_line *ln, int col, uint64_t v);
/* A string from the kernel or the user: invalid UTF-8 becomes U+FFFD. */
int out_cell_text(struct accelctl_tab *t, struct libscols_line *ln, int col,
		  const char *s);

/*
 * Writes a row of @t for each of the @n items at @items, @size bytes
 * apart: @row sets the cells of @ln from @item (0, or nonzero when out of
 * memory). Returns 0, or -ENOMEM after saying so.
 */
typedef int out_row_fn(const struct accelctl *actl, struct accelctl_tab *t,
		       struct libscols_line *ln, const void *item);
int out_rows(const struct accelctl *actl, struct accelctl_tab *t,
	     const void *items, size_t size, size_t n, out_row_fn *row);

/*
 * Prints one table @name of @cols (unknown -o columns are errors) with the
 * rows @fill writes into @t: the listing of a command that shows one
 * table. @fill returns 0 or -errno after saying why; so does out_show().
 */
int out_show(const struct accelctl *actl, const char *name,
	     const struct accelctl_col *cols, size_t ncols,
	     int (*fill)(const struct accelctl *actl, struct accelctl_tab *t));

/*
 * Prints the tables: one after the other, or with --json one document
 * {"version": ACCELCTL_JSON_VERSION, "<name>": [rows], ...}.
 */
int out_print(const struct accelctl *actl, struct accelctl_tab *const *tabs,
	      size_t n);

/* load and unload --json: {"version": 1, "<what>": [{module, path, ...}]}. */
int out_module_json(const struct accelctl *actl, const char *what,
		    const char *name, const char *path, const char *opts,
		    bool loaded);

#endif /* ACCELCTL_OUT_H */
