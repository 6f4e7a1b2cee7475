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
	roots->debugfs = env_or("ACCELCTL_DEBUGFS_ROOT", "/sys/kernel/debug");
	roots->proc = env_or("ACCELCTL_PROC_ROOT", "/proc");
	roots->dev = env_or("ACCELCTL_DEV", "/dev/" ACCELCTL_MODULE);
	roots->real_sysfs = !strcmp(roots->sysfs, "/sys");
	roots->real_debugfs = !strcmp(roots->debugfs, "/sys/kernel/debug");
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

const char *accelctl_errno_name(int err)
{
	static const struct {
		int err;
		const char *name;
	} names[] = {
		{ EPERM, "EPERM" }, { ENOENT, "ENOENT" }, { EIO, "EIO" },
		{ ENOEXEC, "ENOEXEC" }, { ENOMEM, "ENOMEM" },
		{ EACCES, "EACCES" }, { EFAULT, "EFAULT" }, { EBUSY, "EBUSY" },
		{ EEXIST, "EEXIST" }, { ENODEV, "ENODEV" },
		{ EINVAL, "EINVAL" }, { ENOSPC, "ENOSPC" },
		{ ENOSYS, "ENOSYS" }, { EKEYREJECTED, "EKEYREJECTED" },
		{ EBADMSG, "EBADMSG" }, { ETXTBSY, "ETXTBSY" },
		{ EAGAIN, "EAGAIN" }, { EINTR, "EINTR" },
	};
	size_t i;

	if (err < 0)
		err = -err;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].err == err)
			return names[i].name;
	return "E?";
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
