// SPDX-License-Identifier: MIT
/*
 * accel_host_register() holds no lock of the context while it looks at
 * and pins the range (the inproc transport's fault-in, the cuda backend's
 * cudaHostRegister): the context's other threads go on meanwhile. The
 * range is registered with userfaultfd(2) for its missing pages, so that
 * the registration blocks on a page until the test serves it: the fault
 * message proves the call is in progress, and it cannot return before
 * the test answers. No timing: a copy that waited for the registration
 * never completes before the deadline, which ends the wait.
 */
#include <fcntl.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <linux/userfaultfd.h>

#include "helpers.h"

static long ps;

struct uffd_range {
	int fd;
	unsigned char *p;
	size_t n;
	unsigned char *src;	/* what the served pages hold */
};

/*
 * An anonymous range whose missing pages wait for the test, for
 * registrations in @ctx; T_* status. The module's pin cannot wait for one
 * before Linux 6.3 (a FOLL_LONGTERM pin_user_pages_fast() may not retry a
 * fault, so userfaultfd fails it, and says so in the kernel log under
 * CONFIG_DEBUG_VM): the kernel transport skips.
 */
static int uffd_range_open(struct uffd_range *u, accel_context *ctx,
			   size_t pages)
{
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg;
	const char *tp = NULL;

	memset(u, 0, sizeof(*u));
	u->fd = -1;
	CHECK_OK(accel_context_get_transport(ctx, &tp));
	if (!strcmp(tp, "kernel")) {
		printf("# the module's long-term pin fails a userfaultfd fault instead of waiting for it (before Linux 6.3)\n");
		return T_SKIP;
	}
	u->n = pages * ps;
	u->fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	if (u->fd < 0) {
		printf("# userfaultfd: %s: nothing can hold a registration in the call here\n",
		       strerror(errno));
		return T_SKIP;
	}
	CHECK(!ioctl(u->fd, UFFDIO_API, &api));
	u->p = mmap(NULL, u->n, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(u->p != MAP_FAILED);
	u->src = malloc(u->n);
	CHECK(u->src);
	t_fill(u->src, u->n, 9);
	memset(&reg, 0, sizeof(reg));
	reg.range.start = (uintptr_t)u->p;
	reg.range.len = u->n;
	reg.mode = UFFDIO_REGISTER_MODE_MISSING;
	CHECK(!ioctl(u->fd, UFFDIO_REGISTER, &reg));
	return T_PASS;
}

static void uffd_range_close(struct uffd_range *u)
{
	if (u->fd >= 0)
		close(u->fd);
	if (u->p && u->p != MAP_FAILED)
		munmap(u->p, u->n);
	free(u->src);
}

/* The page a fault waits on now, or NULL when none came by the deadline. */
static unsigned char *uffd_next_fault(struct uffd_range *u)
{
	struct pollfd pfd = { .fd = u->fd, .events = POLLIN };
	struct uffd_msg msg;

	if (poll(&pfd, 1, 10 * 1000) != 1)
		return NULL;
	if (read(u->fd, &msg, sizeof(msg)) != sizeof(msg) ||
	    msg.event != UFFD_EVENT_PAGEFAULT)
		return NULL;
	return (unsigned char *)(uintptr_t)(msg.arg.pagefault.address &
					     ~(uint64_t)(ps - 1));
}

/* Map [at, at + len) of the range (missing pages only), waking the faults. */
static int uffd_serve(struct uffd_range *u, unsigned char *at, size_t len)
{
	struct uffdio_copy c = {
		.dst = (uintptr_t)at,
		.src = (uintptr_t)(u->src + (at - u->p)),
		.len = len,
	};

	return ioctl(u->fd, UFFDIO_COPY, &c) ? -errno : 0;
}

struct reg_call {
	accel_context *ctx;
	void *p;
	size_t n;
	int ret;
	atomic_bool returned;
};

static void *register_thread(void *arg)
{
	struct reg_call *c = arg;

	c->ret = accel_host_register(c->ctx, c->p, c->n, 0);
	atomic_store(&c->returned, true);
	return NULL;
}

struct copy_call {
	accel_stream_t s;
	unsigned char *h, *out;
	void *d;
	int ret;
};

/* H2D then D2H of a page on @s, synchronized: T_* status. */
static int copy_round(struct copy_call *c)
{
	t_fill(c->h, ps, 5);
	memset(c->out, 0, ps);
	CHECK_OK(accel_memcpy_async(c->s, c->d, c->h, ps, ACCEL_MEMCPY_H2D));
	CHECK_OK(accel_memcpy_async(c->s, c->out, c->d, ps, ACCEL_MEMCPY_D2H));
	CHECK_OK(accel_stream_synchronize(c->s, 10 * T_SEC));
	CHECK(t_check_fill(c->out, ps, 5));
	return T_PASS;
}

static void *copy_thread(void *arg)
{
	struct copy_call *c = arg;

	c->ret = copy_round(c);
	return NULL;
}

/*
 * While a registration waits on a page of its range, another thread
 * copies on the same context and synchronizes: it finishes, and the
 * registration is still in the call, then completes once served.
 */
static int copies_run_while_registering(void)
{
	struct reg_call rc = { 0 };
	struct copy_call cc = { 0 };
	struct uffd_range u;
	pthread_t reg, cp;
	struct timespec dl;
	bool copied = false, held = false, started = false;
	int ret;

	CHECK(rc.ctx = t_ctx());
	ret = uffd_range_open(&u, rc.ctx, 16);
	if (ret) {
		uffd_range_close(&u);
		return ret;
	}
	CHECK_OK(accel_stream_create(rc.ctx, 0, 0, &cc.s));
	CHECK_OK(accel_host_alloc(rc.ctx, (void **)&cc.h, ps, 0));
	CHECK_OK(accel_host_alloc(rc.ctx, (void **)&cc.out, ps, 0));
	CHECK_OK(accel_malloc(rc.ctx, &cc.d, ps));
	rc.p = u.p;
	rc.n = u.n;
	CHECK(!pthread_create(&reg, NULL, register_thread, &rc));

	/* From here on the registration is unblocked whatever happens. */
	if (uffd_next_fault(&u) && !atomic_load(&rc.returned)) {
		started = !pthread_create(&cp, NULL, copy_thread, &cc);
		if (started) {
			clock_gettime(CLOCK_REALTIME, &dl);
			dl.tv_sec += 10;
			copied = !pthread_timedjoin_np(cp, NULL, &dl);
			if (!copied)
				printf("# the copy waited for the registration\n");
		}
		/* It cannot have returned: its page is still missing. */
		held = !atomic_load(&rc.returned);
	} else {
		printf("# the registration did not fault on its range\n");
	}
	uffd_serve(&u, u.p, u.n);
	if (started && !copied)
		pthread_join(cp, NULL);
	pthread_join(reg, NULL);

	CHECK(held);
	CHECK(copied);
	CHECK_OK(cc.ret);
	CHECK_OK(rc.ret);
	/* The registration is whole: its bytes are the served ones. */
	CHECK_OK(accel_memcpy_async(cc.s, cc.out, u.p + u.n - ps, ps,
				    ACCEL_MEMCPY_H2H));
	CHECK_OK(accel_stream_synchronize(cc.s, 10 * T_SEC));
	CHECK(!memcmp(cc.out, u.src + u.n - ps, ps));
	CHECK_OK(accel_host_unregister(u.p, 0));
	uffd_range_close(&u);
	return T_PASS;
}

/*
 * Two overlapping registrations in flight at once: one wins, the other
 * fails with -EEXIST and leaves nothing behind. The first waits on the
 * second page of its range; a second registration of its first page,
 * already there, runs meanwhile. Which one wins depends on where the
 * first one waits: before it is published (the transport faulting the
 * range in) the second wins; after (the cuda backend's
 * cudaHostRegister, once the transport checked the mappings) it does.
 */
static int overlapping_registrations_race(void)
{
	struct reg_call rc = { 0 }, rc2 = { 0 };
	struct uffd_range u;
	pthread_t reg, reg2;
	struct timespec dl;
	bool held = false, started = false, second = false;
	int ret;

	CHECK(rc.ctx = t_ctx());
	ret = uffd_range_open(&u, rc.ctx, 4);
	if (ret) {
		uffd_range_close(&u);
		return ret;
	}
	rc.p = u.p;
	rc.n = u.n;
	rc2.ctx = rc.ctx;
	rc2.p = u.p;
	rc2.n = 100;
	CHECK(!pthread_create(&reg, NULL, register_thread, &rc));

	if (uffd_next_fault(&u) == u.p && !uffd_serve(&u, u.p, ps) &&
	    uffd_next_fault(&u) == u.p + ps && !atomic_load(&rc.returned)) {
		started = !pthread_create(&reg2, NULL, register_thread, &rc2);
		if (started) {
			clock_gettime(CLOCK_REALTIME, &dl);
			dl.tv_sec += 10;
			second = !pthread_timedjoin_np(reg2, NULL, &dl);
			if (!second)
				printf("# the second registration waited for the first\n");
		}
		held = !atomic_load(&rc.returned);
	} else {
		printf("# the registration did not fault on its first two pages in order\n");
	}
	uffd_serve(&u, u.p + ps, u.n - ps);
	if (started && !second)
		pthread_join(reg2, NULL);
	pthread_join(reg, NULL);

	CHECK(held);
	CHECK(second);
	if (rc2.ret == 0) {
		CHECK_RET(rc.ret, -EEXIST);
	} else {
		CHECK_RET(rc2.ret, -EEXIST);
		CHECK_OK(rc.ret);
	}
	CHECK_OK(accel_host_unregister(u.p, 0));
	/* Nothing of the loser stayed: the whole range registers again. */
	CHECK_OK(accel_host_register(rc.ctx, u.p, u.n, 0));
	CHECK_RET(accel_host_register(rc.ctx, u.p + u.n - 1, 1, 0), -EEXIST);
	CHECK_OK(accel_host_unregister(u.p, 0));
	uffd_range_close(&u);
	return T_PASS;
}

int main(void)
{
	static const struct t_case cases[] = {
		T(copies_run_while_registering),
		T(overlapping_registrations_race),
	};

	ps = sysconf(_SC_PAGESIZE);
	return t_run(cases, sizeof(cases) / sizeof(cases[0]));
}
