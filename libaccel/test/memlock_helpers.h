/* SPDX-License-Identifier: MIT */
/*
 * What the tests of the pinning limits share (device.c, host_mem.c):
 * dropping CAP_IPC_LOCK so that RLIMIT_MEMLOCK applies, in a child
 * process whose limits the test may lower.
 */
#ifndef LIBACCEL_TEST_MEMLOCK_HELPERS_H
#define LIBACCEL_TEST_MEMLOCK_HELPERS_H

#include <sys/resource.h>
#include <sys/syscall.h>
#include <linux/capability.h>

#include "helpers.h"

/* Drop CAP_IPC_LOCK from the effective set, so RLIMIT_MEMLOCK applies. */
static inline int t_drop_ipc_lock(void)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3];

	if (syscall(SYS_capget, &hdr, d))
		return -1;
	d[CAP_TO_INDEX(CAP_IPC_LOCK)].effective &= ~CAP_TO_MASK(CAP_IPC_LOCK);
	return syscall(SYS_capset, &hdr, d) ? -1 : 0;
}

struct t_cpu_child {
	int (*fn)(void);
};

static inline int t_cpu_child_run(void *arg)
{
	const struct t_cpu_child *c = arg;
	int r = T_FAIL;

	if (!setenv("ACCEL_BACKEND", "cpu", 1))
		r = c->fn();
	t_ctx_cleanup();
	return r;
}

/*
 * Run the test @fn in a forked child over the cpu backend (CUDA does not
 * survive fork(), and the limits under test are the transport's), so that
 * what it does to its limits and capabilities stays there. The child's
 * exit status (T_PASS...), or -1 when it crashed.
 */
static inline int t_cpu_child(int (*fn)(void))
{
	struct t_cpu_child c = { fn };

	return t_in_child(t_cpu_child_run, &c);
}

#endif /* LIBACCEL_TEST_MEMLOCK_HELPERS_H */
