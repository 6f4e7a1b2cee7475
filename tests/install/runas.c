// SPDX-License-Identifier: GPL-2.0
/*
 * runas-open: become an unprivileged user, then open the accelstream
 * device, as the udev rule's permission test needs (the guest initramfs
 * has neither su(1) nor a passwd database). Static, so that it runs in a
 * libc-less initramfs.
 *
 * Usage: runas-open UID GID GROUPS [DEVICE]
 *   GROUPS  comma-separated supplementary group ids, or "-" for none
 *   DEVICE  default /dev/accelstream
 *
 * Prints one line, "open=<errno name> get_info=<errno name> abi=<n>", and
 * exits 0 whenever it could change identity (the caller judges the line);
 * 2 on a usage or identity error.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "accelstream.h"

static const char *errname(int err)
{
	switch (err) {
	case 0:		return "0";
	case EACCES:	return "EACCES";
	case EPERM:	return "EPERM";
	case ENOENT:	return "ENOENT";
	case ENXIO:	return "ENXIO";
	case ENODEV:	return "ENODEV";
	default:	return strerror(err);
	}
}

int main(int argc, char *argv[])
{
	const char *dev = argc > 4 ? argv[4] : "/dev/accelstream";
	gid_t groups[32];
	size_t ngroups = 0;
	struct accel_info info;
	uid_t uid;
	gid_t gid;
	int fd, open_err, info_err = -1;
	char *p;

	if (argc < 4 || argc > 5) {
		fprintf(stderr, "usage: runas-open UID GID GROUPS [DEVICE]\n");
		return 2;
	}
	uid = strtoul(argv[1], NULL, 10);
	gid = strtoul(argv[2], NULL, 10);
	if (strcmp(argv[3], "-")) {
		for (p = strtok(argv[3], ","); p && ngroups < 32; p = strtok(NULL, ","))
			groups[ngroups++] = strtoul(p, NULL, 10);
	}
	/* Groups first: once the uid is dropped they cannot be changed. */
	if (setgroups(ngroups, groups) || setgid(gid) || setuid(uid)) {
		fprintf(stderr, "runas-open: cannot become %u:%u: %s\n",
			(unsigned int)uid, (unsigned int)gid, strerror(errno));
		return 2;
	}

	fd = open(dev, O_RDWR | O_CLOEXEC);
	open_err = fd < 0 ? errno : 0;
	memset(&info, 0, sizeof(info));
	if (fd >= 0) {
		info_err = ioctl(fd, ACCEL_IOC_GET_INFO, &info) ? errno : 0;
		close(fd);
	}
	printf("open=%s get_info=%s abi=%u\n", errname(open_err),
	       info_err < 0 ? "-" : errname(info_err),
	       info_err ? 0 : info.abi_version);
	return 0;
}
