// SPDX-License-Identifier: MIT
/*
 * The kernel transport: ioctls on /dev/accelstream.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>

#include "accelstream.h"
#include "transport.h"

struct accel_transport {
	int fd;
};

static int kernel_open(struct accel_transport **tpp)
{
	struct accel_transport *tp;
	int fd;

	fd = open("/dev/accelstream", O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	tp = malloc(sizeof(*tp));
	if (!tp) {
		close(fd);
		return -ENOMEM;
	}
	tp->fd = fd;
	*tpp = tp;
	return 0;
}

static void kernel_close(struct accel_transport *tp)
{
	close(tp->fd);
	free(tp);
}

static int kernel_ioctl(struct accel_transport *tp, unsigned long cmd,
			void *arg)
{
	int saved = errno, ret;

	ret = ioctl(tp->fd, cmd, arg);
	ret = ret < 0 ? -errno : 0;
	errno = saved;
	return ret;
}

static int kernel_mmap(struct accel_transport *tp, uint64_t offset,
		       size_t len, void **addr)
{
	int saved = errno;
	void *p;

	p = accel_map_guarded(len, PROT_READ | PROT_WRITE, MAP_SHARED, tp->fd,
			      (off_t)offset);
	if (p == MAP_FAILED) {
		int ret = -errno;

		errno = saved;
		return ret;
	}
	*addr = p;
	return 0;
}

static int kernel_get_fd(struct accel_transport *tp)
{
	return tp->fd;
}

/*
 * A registration of the owner's mapping pins its pages in this context
 * too (FOLL_LONGTERM): they outlive the owner's release and munmap until
 * the last descriptor of this context naming them retires.
 */
static int kernel_import_host(struct accel_transport *tp,
			      struct accel_transport *owner,
			      uint32_t owner_handle, uint64_t addr,
			      uint64_t len, uint32_t *handle)
{
	struct accel_mem_register reg = { .addr = addr, .size = len };
	int ret;

	(void)owner;
	(void)owner_handle;
	ret = kernel_ioctl(tp, ACCEL_IOC_MEM_REGISTER, &reg);
	if (!ret)
		*handle = reg.handle;
	return ret;
}

const struct accel_transport_ops accel_transport_kernel = {
	.name = "kernel",
	.open = kernel_open,
	.close = kernel_close,
	.ioctl = kernel_ioctl,
	.mmap = kernel_mmap,
	.get_fd = kernel_get_fd,
	.import_host = kernel_import_host,
};
