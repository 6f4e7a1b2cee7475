// SPDX-License-Identifier: GPL-2.0
/*
 * Messages, paths and file reading shared by the commands.
 *
 * Copyright (C) 2026 The accelstream authors
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "accelctl.h"

static const char *env_or(const char *name, const char *def)
{
	const char *v = getenv(name);

	return v && *v ? v : def;
}

void accelctl_roots_init(struct accelctl_roots *roots)
{
	roots->sysfs = env_or("ACCELCTL_SYSFS_ROOT", "/sys");
	roots->debugfs = env_or("ACCELCTL_DEBUGFS_ROOT", NULL);
	roots->proc = env_or("ACCELCTL_PROC_ROOT", "/proc");
	roots->dev = env_or("ACCELCTL_DEV", "/dev/" ACCELCTL_MODULE);
	roots->real_sysfs = !strcmp(roots->sysfs, "/sys");
}

static void vmsg(const char *what, const char *fmt, va_list ap)
{
	fflush(stdout);
	fprintf(stderr, "accelctl: %s", what);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void accelctl_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg("error: ", fmt, ap);
	va_end(ap);
}

void accelctl_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg("warning: ", fmt, ap);
	va_end(ap);
}

/* The errno's symbolic name (glibc's strerrorname_np), "E?" if it has none. */
const char *accelctl_errno_name(int err)
{
	const char *name = strerrorname_np(err < 0 ? -err : err);

	return name ? name : "E?";
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

/*
 * Command names are any bytes but NUL; libsmartcols escapes what the
 * locale cannot print in tables, but JSON must be valid UTF-8.
 */
const char *accelctl_utf8_clean(char *buf, size_t len, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t o = 0, n;

	while (*s && o + 4 < len) {
		n = utf8_seq_len(s);
		if (n) {
			memcpy(buf + o, s, n);
			s += n;
			o += n;
		} else {
			memcpy(buf + o, "\xef\xbf\xbd", 3);
			s++;
			o += 3;
		}
	}
	buf[o] = '\0';
	return buf;
}

int accelctl_path(char *buf, size_t len, const char *root, const char *fmt, ...)
{
	va_list ap;
	int n, m;

	n = snprintf(buf, len, "%s", root);
	if (n < 0 || (size_t)n >= len)
		return -ENAMETOOLONG;
	va_start(ap, fmt);
	m = vsnprintf(buf + n, len - n, fmt, ap);
	va_end(ap);
	if (m < 0 || (size_t)m >= len - n)
		return -ENAMETOOLONG;
	return 0;
}

/*
 * Reads a whole (sysfs, debugfs: size unknown up front) file into a NUL
 * terminated buffer. Returns 0 or -errno; -EFBIG past @max bytes.
 */
int accelctl_read_file(const char *path, char **text, size_t max)
{
	size_t len = 0, alloc = 4096;
	char *buf, *nb;
	ssize_t r;
	int fd, ret;

	*text = NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	buf = malloc(alloc);
	ret = -ENOMEM;
	if (!buf)
		goto out;
	for (;;) {
		if (len + 1 >= alloc) {
			ret = -EFBIG;
			if (alloc >= max)
				goto out;
			alloc *= 2;
			nb = realloc(buf, alloc);
			ret = -ENOMEM;
			if (!nb)
				goto out;
			buf = nb;
		}
		r = read(fd, buf + len, alloc - len - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			ret = -errno;
			goto out;
		}
		if (r == 0)
			break;
		len += r;
	}
	buf[len] = '\0';
	*text = buf;
	buf = NULL;
	ret = 0;
out:
	free(buf);
	close(fd);
	return ret;
}

void accelctl_human_bytes(char *buf, size_t len, uint64_t bytes)
{
	static const char *const unit[] = { "KiB", "MiB", "GiB", "TiB", "PiB" };
	double v = bytes;
	int u = -1;

	if (bytes < 1024) {
		snprintf(buf, len, "%" PRIu64 " B", bytes);
		return;
	}
	while (v >= 1024 && u < 4) {
		v /= 1024;
		u++;
	}
	snprintf(buf, len, "%.1f %s", v, unit[u]);
}
