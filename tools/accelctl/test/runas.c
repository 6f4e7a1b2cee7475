// SPDX-License-Identifier: GPL-2.0
/*
 * runas: drop to an unprivileged uid/gid and exec a command, for tests in
 * an initramfs that has no /etc/passwd for su(1).
 *
 * Usage: runas UID COMMAND [ARGS...]
 *
 * Copyright (C) 2026 The accelstream authors
 */
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <unistd.h>

int main(int argc, char *argv[])
{
	uid_t id;

	if (argc < 3) {
		fprintf(stderr, "usage: runas UID COMMAND [ARGS...]\n");
		return 2;
	}
	id = strtoul(argv[1], NULL, 10);
	if (setgroups(0, NULL) || setgid(id) || setuid(id)) {
		fprintf(stderr, "runas: %s\n", strerror(errno));
		return 2;
	}
	execvp(argv[2], argv + 2);
	fprintf(stderr, "runas: %s: %s\n", argv[2], strerror(errno));
	return 127;
}
