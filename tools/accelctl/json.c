// SPDX-License-Identifier: GPL-2.0
/*
 * accelctl --json output.
 *
 * Copyright (C) 2026 The accelstream authors
 */
#include <inttypes.h>
#include <string.h>

#include "json.h"

void json_init(struct json *j, FILE *out)
{
	memset(j, 0, sizeof(*j));
	j->out = out;
}

/* Length of the valid UTF-8 sequence at @s, 0 if it is not one. */
static size_t utf8_seq_len(const unsigned char *s)
{
	size_t len, i;
	uint32_t cp;

	if (s[0] < 0x80)
		return 1;
	if ((s[0] & 0xe0) == 0xc0) {
		len = 2;
		cp = s[0] & 0x1f;
	} else if ((s[0] & 0xf0) == 0xe0) {
		len = 3;
		cp = s[0] & 0x0f;
	} else if ((s[0] & 0xf8) == 0xf0) {
		len = 4;
		cp = s[0] & 0x07;
	} else {
		return 0;
	}
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	/* Overlong forms, surrogates and values past U+10FFFF are invalid. */
	if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) ||
	    (len == 4 && cp < 0x10000) || cp > 0x10ffff ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

void json_escape(FILE *out, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t len;

	fputc('"', out);
	while (*s) {
		switch (*s) {
		case '"':
			fputs("\\\"", out);
			break;
		case '\\':
			fputs("\\\\", out);
			break;
		case '\n':
			fputs("\\n", out);
			break;
		case '\r':
			fputs("\\r", out);
			break;
		case '\t':
			fputs("\\t", out);
			break;
		case '\b':
			fputs("\\b", out);
			break;
		case '\f':
			fputs("\\f", out);
			break;
		default:
			if (*s < 0x20 || *s == 0x7f) {
				fprintf(out, "\\u%04x", *s);
				break;
			}
			len = utf8_seq_len(s);
			if (!len) {
				fputs("\\ufffd", out);
				break;
			}
			fwrite(s, 1, len, out);
			s += len;
			continue;
		}
		s++;
	}
	fputc('"', out);
}

/* Comma, newline, indentation and "key": before every value. */
static void json_prefix(struct json *j, const char *key)
{
	int i;

	if (j->depth > 0) {
		if (j->count[j->depth - 1]++)
			fputc(',', j->out);
		fputc('\n', j->out);
		for (i = 0; i < j->depth; i++)
			fputs("  ", j->out);
	}
	if (key) {
		json_escape(j->out, key);
		fputs(": ", j->out);
	}
}

static void json_open(struct json *j, const char *key, char c)
{
	json_prefix(j, key);
	fputc(c, j->out);
	if (j->depth < JSON_MAX_DEPTH)
		j->count[j->depth] = 0;
	j->depth++;
}

static void json_close(struct json *j, char c)
{
	int i;

	j->depth--;
	if (j->depth < JSON_MAX_DEPTH && j->count[j->depth]) {
		fputc('\n', j->out);
		for (i = 0; i < j->depth; i++)
			fputs("  ", j->out);
	}
	fputc(c, j->out);
}

void json_object_begin(struct json *j, const char *key)
{
	json_open(j, key, '{');
}

void json_object_end(struct json *j)
{
	json_close(j, '}');
}

void json_array_begin(struct json *j, const char *key)
{
	json_open(j, key, '[');
}

void json_array_end(struct json *j)
{
	json_close(j, ']');
}

void json_string(struct json *j, const char *key, const char *val)
{
	json_prefix(j, key);
	if (val)
		json_escape(j->out, val);
	else
		fputs("null", j->out);
}

void json_u64(struct json *j, const char *key, uint64_t val)
{
	json_prefix(j, key);
	fprintf(j->out, "%" PRIu64, val);
}

void json_i64(struct json *j, const char *key, int64_t val)
{
	json_prefix(j, key);
	fprintf(j->out, "%" PRId64, val);
}

void json_bool(struct json *j, const char *key, bool val)
{
	json_prefix(j, key);
	fputs(val ? "true" : "false", j->out);
}

void json_null(struct json *j, const char *key)
{
	json_prefix(j, key);
	fputs("null", j->out);
}

void json_finish(struct json *j)
{
	fputc('\n', j->out);
	fflush(j->out);
}
