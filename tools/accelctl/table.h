/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Boxed human-readable tables (the nvidia-smi look): the widths come from
 * the cells, numbers align right.
 *
 * Copyright (C) 2026 The accelstream authors
 */
#ifndef ACCELCTL_TABLE_H
#define ACCELCTL_TABLE_H

#include <stdio.h>

#define TABLE_MAX_COLS	16

/**
 * struct table - rows of strings under a header
 * @title: printed in a box above the header, or NULL.
 * @ncols: columns.
 * @head: column titles.
 * @right: column i aligns right.
 * @cells: @nrows * @ncols strings, row-major, owned by the table.
 * @nrows: rows added.
 * @alloc: rows @cells has room for.
 */
struct table {
	const char *title;
	int ncols;
	const char *head[TABLE_MAX_COLS];
	int right[TABLE_MAX_COLS];
	char **cells;
	size_t nrows;
	size_t alloc;
};

/* @spec: "NAME" aligns left, ">NAME" aligns right; NULL ends the list. */
void table_init(struct table *t, const char *title, const char *const *spec);
/* Copies one string per column; NULL prints as "-". */
int table_row(struct table *t, const char *const *cells);
void table_print(const struct table *t, FILE *out);
void table_fini(struct table *t);

#endif /* ACCELCTL_TABLE_H */
