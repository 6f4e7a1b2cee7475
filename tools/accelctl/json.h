/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A small streaming JSON writer: objects and arrays nest, commas and
 * indentation are the writer's business, strings are escaped (control
 * characters as \u00XX, invalid UTF-8 as U+FFFD) so the output always
 * parses.
 *
 * Copyright (C) 2026 The accelstream authors
 */
#ifndef ACCELCTL_JSON_H
#define ACCELCTL_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define JSON_MAX_DEPTH	16

/**
 * struct json - writer state
 * @out: where the text goes.
 * @depth: open containers.
 * @count: values written so far in each open container.
 */
struct json {
	FILE *out;
	int depth;
	unsigned int count[JSON_MAX_DEPTH];
};

void json_init(struct json *j, FILE *out);
/* @key is NULL inside arrays and at the top level. */
void json_object_begin(struct json *j, const char *key);
void json_object_end(struct json *j);
void json_array_begin(struct json *j, const char *key);
void json_array_end(struct json *j);
void json_string(struct json *j, const char *key, const char *val);
void json_u64(struct json *j, const char *key, uint64_t val);
void json_i64(struct json *j, const char *key, int64_t val);
void json_bool(struct json *j, const char *key, bool val);
void json_null(struct json *j, const char *key);
/* Ends the document with a newline. */
void json_finish(struct json *j);
void json_escape(FILE *out, const char *s);

#endif /* ACCELCTL_JSON_H */
