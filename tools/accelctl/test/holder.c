// SPDX-License-Identifier: GPL-2.0
/*
 * holder: keep /dev/accelstream open with known contents, for accelctl's
 * tests. Creates STREAMS streams and registers BYTES bytes of anonymous
 * memory, prints "ready <pid>" and sleeps until killed. With -n, it first
 * renames itself (its comm, which the driver records at open) to NAME,
 * which may be UTF-8: at most 15 bytes.
 *
 * Usage: holder [-d DEV] [-n NAME] STREAMS BYTES
 *
 * Copyright (C) 2026 The accelstream authors
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "../../../uapi/accelstream.h"

static void die(const char *what)
{
	fprintf(stderr, "holder: %s: %s\n", what, strerror(errno));
	exit(EXIT_FAILURE);
}

int main(int argc, char *argv[])
{
	const char *dev = "/dev/accelstream";
	unsigned long streams, bytes, i;
	struct accel_mem_register reg;
	void *buf;
	int fd;

	if (argc > 2 && !strcmp(argv[1], "-d")) {
		dev = argv[2];
		argv += 2;
		argc -= 2;
	}
	if (argc > 2 && !strcmp(argv[1], "-n")) {
		if (prctl(PR_SET_NAME, argv[2], 0, 0, 0))
			die("PR_SET_NAME");
		argv += 2;
		argc -= 2;
	}
	if (argc != 3) {
		fprintf(stderr, "usage: holder [-d DEV] [-n NAME] STREAMS BYTES\n");
		return EXIT_FAILURE;
	}
	streams = strtoul(argv[1], NULL, 0);
	bytes = strtoul(argv[2], NULL, 0);

	fd = open(dev, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		die(dev);
	for (i = 0; i < streams; i++) {
		struct accel_stream_create sc = { 0 };

		if (ioctl(fd, ACCEL_IOC_STREAM_CREATE, &sc))
			die("ACCEL_IOC_STREAM_CREATE");
	}
	if (bytes) {
		buf = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (buf == MAP_FAILED)
			die("mmap");
		memset(buf, 0x5a, bytes);
		memset(&reg, 0, sizeof(reg));
		reg.addr = (uintptr_t)buf;
		reg.size = bytes;
		if (ioctl(fd, ACCEL_IOC_MEM_REGISTER, &reg))
			die("ACCEL_IOC_MEM_REGISTER");
	}
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	for (;;)
		pause();
}
