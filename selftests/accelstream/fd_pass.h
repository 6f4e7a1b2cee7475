/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Passing a file descriptor over a Unix socket (SCM_RIGHTS), for the tests
 * that hand an accelstream fd or an exported event to another process:
 * these kselftests, and libaccel's and the fault tests, which include it
 * from here.
 */
#ifndef ACCEL_FD_PASS_H
#define ACCEL_FD_PASS_H

#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>

/* Send @fd with one byte over @sock: 0, or -1 with errno set. */
static inline int send_fd(int sock, int fd)
{
	char c = 'x', cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { .iov_base = &c, .iov_len = 1 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1,
			    .msg_control = cbuf,
			    .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *cm = CMSG_FIRSTHDR(&m);

	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	return sendmsg(sock, &m, 0) == 1 ? 0 : -1;
}

/* The descriptor send_fd() passed over @sock (close-on-exec), or -1. */
static inline int recv_fd(int sock)
{
	char c, cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { .iov_base = &c, .iov_len = 1 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1,
			    .msg_control = cbuf,
			    .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *cm;
	int fd;

	if (recvmsg(sock, &m, MSG_CMSG_CLOEXEC) != 1)
		return -1;
	cm = CMSG_FIRSTHDR(&m);
	if (!cm || cm->cmsg_type != SCM_RIGHTS)
		return -1;
	memcpy(&fd, CMSG_DATA(cm), sizeof(int));
	return fd;
}

#endif /* ACCEL_FD_PASS_H */
