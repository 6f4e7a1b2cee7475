// SPDX-License-Identifier: GPL-2.0
/*
 * accelstream: ACCEL_IOC_GET_INFO and the generic ioctl rules (unknown
 * commands, reserved fields, output written in full).
 */
#include "kselftest_harness.h"
#include "accel_helpers.h"

#ifdef ACCEL_CAP_EXECUTOR
#define CAP_EXECUTOR ACCEL_CAP_EXECUTOR
#else
#define CAP_EXECUTOR 0
#endif
#ifdef ACCEL_CAP_QUERY
#define CAP_QUERY ACCEL_CAP_QUERY
#else
#define CAP_QUERY 0
#endif
#ifdef ACCEL_CAP_EVENT_FD
#define CAP_EVENT_FD ACCEL_CAP_EVENT_FD
#else
#define CAP_EVENT_FD 0
#endif

#ifdef ACCEL_CAP_MEMSET_2D
#define CAP_MEMSET_2D ACCEL_CAP_MEMSET_2D
#else
#define CAP_MEMSET_2D 0
#endif

#define KNOWN_CAPS (ACCEL_CAP_SOFT_ENGINE | ACCEL_CAP_HOST_ALLOC | \
		    ACCEL_CAP_DEVICE_MEM | ACCEL_CAP_USER_EVENTS | \
		    ACCEL_CAP_EVENT_TIMING | ACCEL_CAP_POLL | \
		    ACCEL_CAP_DEFERRED_RELEASE | CAP_EXECUTOR | \
		    CAP_QUERY | ACCEL_CAP_DEVICES | CAP_EVENT_FD | \
		    CAP_MEMSET_2D)

/* The most devices a driver serves (the core's ASC_MAX_DEVICES). */
#define ASC_MAX_DEVICES_SEEN	64u

#define NRESERVED	(int)(sizeof(((struct accel_info *)0)->reserved) / 4)

/* A module parameter in MiB, as bytes; -1 when it cannot be read. */
static long long param_bytes(const char *name)
{
	char path[128];
	long long v;
	FILE *f;
	int n;

	snprintf(path, sizeof(path), "/sys/module/accelstream/parameters/%s",
		 name);
	f = fopen(path, "re");
	if (!f)
		return -1;
	n = fscanf(f, "%lld", &v);
	fclose(f);
	return n == 1 ? v << 20 : -1;
}

ACCEL_FIXTURE(info);

TEST_F(info, fields)
{
	struct accel_info info;
	long long limit;
	int i;

	memset(&info, 0xcc, sizeof(info));
	info.flags = 0;
	memset(info.reserved, 0, sizeof(info.reserved));
	ASSERT_EQ(0, ioctl(self->fd, ACCEL_IOC_GET_INFO, &info));

	EXPECT_EQ(ACCEL_ABI_VERSION, info.abi_version);
	EXPECT_EQ(0u, info.flags);
	EXPECT_EQ(0ULL, info.caps & ~KNOWN_CAPS);
	EXPECT_NE(0ULL, info.caps & ACCEL_CAP_SOFT_ENGINE);
	EXPECT_EQ((uint32_t)page_size(), info.page_size);
	for (i = 0; i < NRESERVED; i++)
		EXPECT_EQ(0u, info.reserved[i]);
	EXPECT_NE(0ULL, info.caps & ACCEL_CAP_DEVICES);
	EXPECT_LE(1u, info.devices);
	EXPECT_NE(0xccccccccu, info.devices);

	EXPECT_NE(0u, info.max_streams);
	EXPECT_NE(0xccccccccu, info.max_streams);
	EXPECT_NE(0u, info.max_events);
	EXPECT_NE(0xccccccccu, info.max_events);
	EXPECT_NE(0u, info.max_regions);
	EXPECT_NE(0xccccccccu, info.max_regions);
	EXPECT_NE(0u, info.max_submit);
	EXPECT_NE(0xccccccccu, info.max_submit);
	EXPECT_NE(0u, info.queue_depth);
	EXPECT_NE(0xccccccccu, info.queue_depth);
	EXPECT_LE(info.max_submit, info.queue_depth);
	EXPECT_NE(0u, info.max_wait);
	EXPECT_NE(0xccccccccu, info.max_wait);
	EXPECT_LE(info.greatest_priority, info.least_priority);
	EXPECT_NE((int32_t)0xcccccccc, info.greatest_priority);
	EXPECT_NE((int32_t)0xcccccccc, info.least_priority);

	/* The byte limits are the module parameters, where they are visible. */
	limit = param_bytes("max_pinned_mb");
	if (limit >= 0) {
		EXPECT_EQ((uint64_t)limit, info.max_pinned_bytes);
	} else {
		EXPECT_NE(0xccccccccccccccccULL, info.max_pinned_bytes);
	}
	limit = param_bytes("max_device_mb");
	if (limit >= 0) {
		EXPECT_EQ((uint64_t)limit, info.max_device_bytes);
	} else {
		EXPECT_NE(0xccccccccccccccccULL, info.max_device_bytes);
	}
}

/* Two calls, from zeroed and from 0xcc-filled output, report the same. */
TEST_F(info, stable)
{
	struct accel_info a, b;

	memset(&a, 0, sizeof(a));
	memset(&b, 0xcc, sizeof(b));
	b.flags = 0;
	memset(b.reserved, 0, sizeof(b.reserved));
	ASSERT_EQ(0, ioctl(self->fd, ACCEL_IOC_GET_INFO, &a));
	ASSERT_EQ(0, ioctl(self->fd, ACCEL_IOC_GET_INFO, &b));
	EXPECT_EQ(0, memcmp(&a, &b, sizeof(a)));
	EXPECT_EQ(0, memcmp(&a, &self->info, sizeof(a)));
}

/* Each open file is its own context, with the same limits. */
TEST_F(info, second_context)
{
	struct accel_info b;
	int fd2 = accel_open();

	ASSERT_LE(0, fd2);
	ASSERT_EQ(0, accel_info(fd2, &b));
	EXPECT_EQ(0, memcmp(&b, &self->info, sizeof(b)));
	close(fd2);
}

TEST_F(info, flags_nonzero)
{
	struct accel_info info;

	memset(&info, 0, sizeof(info));
	info.flags = 1;
	EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_GET_INFO, &info));
	EXPECT_EQ(EINVAL, errno);
	info.flags = 0x80000000u;
	EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_GET_INFO, &info));
	EXPECT_EQ(EINVAL, errno);
}

TEST_F(info, reserved_nonzero)
{
	struct accel_info info;
	int i;

	for (i = 0; i < NRESERVED; i++) {
		memset(&info, 0, sizeof(info));
		info.reserved[i] = 1;
		EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_GET_INFO, &info));
		EXPECT_EQ(EINVAL, errno) {
			TH_LOG("reserved[%d] = 1 accepted", i);
		}
	}
	/* @devices is an output, like the limits: its input is ignored. */
	memset(&info, 0, sizeof(info));
	info.devices = 0xccccccccu;
	EXPECT_EQ(0, ioctl(self->fd, ACCEL_IOC_GET_INFO, &info));
	EXPECT_GE(ASC_MAX_DEVICES_SEEN, info.devices);
}

TEST_F(info, bad_pointer)
{
	EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_GET_INFO, NULL));
	EXPECT_EQ(EFAULT, errno);
	EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_GET_INFO, (void *)8));
	EXPECT_EQ(EFAULT, errno);
}

TEST_F(info, unknown_ioctl)
{
	char buf[256];

	memset(buf, 0, sizeof(buf));
	/* An unused number of our type, and the right number with a bad size. */
	EXPECT_EQ(-1, ioctl(self->fd, _IOWR(ACCEL_IOC_MAGIC, 0x7f, __u64), buf));
	EXPECT_EQ(ENOTTY, errno);
	EXPECT_EQ(-1, ioctl(self->fd, _IOWR(ACCEL_IOC_MAGIC, 0x01, struct accel_info), buf));
	EXPECT_EQ(ENOTTY, errno);
	EXPECT_EQ(-1, ioctl(self->fd, _IOWR(ACCEL_IOC_MAGIC, 0x00, __u64), buf));
	EXPECT_EQ(ENOTTY, errno);
	/* Another driver's type. */
	EXPECT_EQ(-1, ioctl(self->fd, _IOWR('T', 0x00, struct accel_info), buf));
	EXPECT_EQ(ENOTTY, errno);
	/* Direction bits changed. */
	EXPECT_EQ(-1, ioctl(self->fd, _IOR(ACCEL_IOC_MAGIC, 0x00, struct accel_info), buf));
	EXPECT_EQ(ENOTTY, errno);
	EXPECT_EQ(-1, ioctl(self->fd, _IO(ACCEL_IOC_MAGIC, 0x00), buf));
	EXPECT_EQ(ENOTTY, errno);
}

/* Not seekable: a misc device of queues has no file position. */
TEST_F(info, not_seekable)
{
	EXPECT_EQ(-1, lseek(self->fd, 0, SEEK_SET));
	EXPECT_EQ(ESPIPE, errno);
}

ACCEL_HARNESS_MAIN
