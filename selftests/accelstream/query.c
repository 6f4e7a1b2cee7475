// SPDX-License-Identifier: GPL-2.0
/*
 * accelstream: ACCEL_IOC_QUERY, the interface of admin tools (accelctl ps
 * and stats): what a context, stream and region entry says, what is
 * written and what is not, who sees which context, and every errno.
 *
 * The visibility tests drop to uid 65534 keeping only CAP_DAC_OVERRIDE
 * (to open the root-owned device node): such a process is an ordinary
 * user to the driver. They need to start as root; elsewhere they skip.
 */
#define _GNU_SOURCE
#include <grp.h>
#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "accel_helpers.h"

#define NOBODY		65534
#define FAIL_NTH	"/proc/thread-self/fail-nth"
#define FAILSLAB_WAIT	"/sys/kernel/debug/failslab/ignore-gfp-wait"
#define FAILSLAB_VERB	"/sys/kernel/debug/failslab/verbose"

static int query(int fd, uint32_t kind, uint32_t ctx_id, uint32_t entry_size,
		 void *entries, uint32_t capacity, uint32_t *count)
{
	struct accel_query q = {
		.kind = kind, .ctx_id = ctx_id, .entry_size = entry_size,
		.capacity = capacity, .entries = (uintptr_t)entries,
		.count = 0xccccccccu,
	};
	int ret = xioctl(fd, ACCEL_IOC_QUERY, &q);

	if (!ret)
		*count = q.count;
	return ret;
}

/* The visible contexts, malloc'ed, room for 8 more than there were. */
static struct accel_ctx_info *contexts(int fd, uint32_t *n)
{
	struct accel_ctx_info *c;
	uint32_t room;

	if (query(fd, ACCEL_QUERY_CONTEXTS, 0, sizeof(*c), NULL, 0, n))
		return NULL;
	room = *n + 8;
	c = malloc(room * sizeof(*c));
	if (!c)
		return NULL;
	memset(c, 0xcc, room * sizeof(*c));
	if (query(fd, ACCEL_QUERY_CONTEXTS, 0, sizeof(*c), c, room, n) ||
	    *n > room) {
		free(c);
		return NULL;
	}
	return c;
}

static const struct accel_ctx_info *find_flags(const struct accel_ctx_info *c,
					       uint32_t n, uint32_t flag)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		if (c[i].flags & flag)
			return &c[i];
	return NULL;
}

static const struct accel_ctx_info *find_id(const struct accel_ctx_info *c,
					    uint32_t n, uint32_t id)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		if (c[i].id == id)
			return &c[i];
	return NULL;
}

/* The id of the context of @fd. */
static uint32_t self_id(int fd)
{
	const struct accel_ctx_info *me;
	struct accel_ctx_info *c;
	uint32_t n, id = 0;

	c = contexts(fd, &n);
	if (!c)
		return 0;
	me = find_flags(c, n, ACCEL_CTX_SELF);
	if (me)
		id = me->id;
	free(c);
	return id;
}

/*
 * Become uid/gid @uid with CAP_DAC_OVERRIDE alone (no CAP_SYS_ADMIN).
 * Returns 0, or -1 when this process may not (not root).
 */
static int become_user(uid_t uid)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct data[2] = {};

	if (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) || setgroups(0, NULL) ||
	    setresgid(uid, uid, uid) || setresuid(uid, uid, uid))
		return -1;
	data[0].effective = data[0].permitted = 1u << CAP_DAC_OVERRIDE;
	if (syscall(SYS_capset, &hdr, data))
		return -1;
	return 0;
}

ACCEL_FIXTURE(query);

TEST_F(query, capability)
{
	EXPECT_NE(0ULL, self->info.caps & ACCEL_CAP_QUERY);
}

/* The caller's own context: every field, and nothing past count written. */
TEST_F(query, own_context)
{
	size_t size = 3 * page_size();
	struct accel_ctx_info c[4];
	const struct accel_ctx_info *me;
	uint32_t n, s1, s2, ev, reg, i;
	char comm[16] = {};
	void *buf;

	ASSERT_EQ(0, prctl(PR_GET_NAME, comm, 0, 0, 0));
	buf = anon_map(size);
	ASSERT_NE(NULL, buf);
	ASSERT_EQ(0, accel_stream(self->fd, 0, 0, &s1));
	ASSERT_EQ(0, accel_stream(self->fd, 0, self->info.greatest_priority,
				  &s2));
	ASSERT_EQ(0, accel_event(self->fd, 0, &ev));
	ASSERT_EQ(0, accel_register(self->fd, buf, size, 0, &reg));

	memset(c, 0xcc, sizeof(c));
	ASSERT_EQ(0, query(self->fd, ACCEL_QUERY_CONTEXTS, 0, sizeof(c[0]),
			   c, 3, &n));
	ASSERT_LE(1u, n);
	me = find_flags(c, n < 3 ? n : 3, ACCEL_CTX_SELF);
	ASSERT_NE(NULL, me) {
		TH_LOG("no entry with ACCEL_CTX_SELF among %u", n);
	}
	EXPECT_NE(0u, me->id);
	EXPECT_NE(0xccccccccu, me->id);
	EXPECT_EQ(ACCEL_CTX_SELF, me->flags);
	EXPECT_EQ((uint32_t)getpid(), me->pid);
	EXPECT_EQ((uint32_t)geteuid(), me->uid);
	EXPECT_EQ(0u, me->executor_pid);
	EXPECT_EQ(2u, me->streams);
	EXPECT_EQ(1u, me->events);
	EXPECT_EQ(1u, me->regions);
	EXPECT_EQ(0u, me->failed_streams);
	EXPECT_EQ(0u, me->device);	/* opened on device 0 */
	EXPECT_EQ(0ULL, me->queued);
	EXPECT_EQ((uint64_t)size, me->pinned_bytes);
	EXPECT_EQ(0ULL, me->device_bytes);
	EXPECT_EQ(self->info.max_pinned_bytes, me->max_pinned_bytes);
	EXPECT_EQ(self->info.max_device_bytes, me->max_device_bytes);
	EXPECT_EQ(0, memcmp(comm, me->comm, sizeof(comm)));
	/* Entries past min(capacity, count) are left alone. */
	for (i = n < 3 ? n : 3; i < 4; i++)
		EXPECT_TRUE(all_bytes(&c[i], sizeof(c[i]), 0xcc));
	munmap(buf, size);
}

/* A sizing call writes count and no entry. */
TEST_F(query, sizing_call)
{
	struct accel_query q = {
		.kind = ACCEL_QUERY_CONTEXTS,
		.entry_size = sizeof(struct accel_ctx_info),
		.count = 0xccccccccu,
	};

	ASSERT_EQ(0, ioctl(self->fd, ACCEL_IOC_QUERY, &q));
	EXPECT_LE(1u, q.count);
	EXPECT_NE(0xccccccccu, q.count);
	EXPECT_EQ(0u, q.capacity);
	EXPECT_EQ(0ULL, q.entries);
}

/* Another file is another context, listed without ACCEL_CTX_SELF. */
TEST_F(query, second_context)
{
	const struct accel_ctx_info *a, *b;
	struct accel_ctx_info *c;
	uint32_t n, id1, id2, s;
	int fd2 = accel_open();

	ASSERT_LE(0, fd2);
	ASSERT_EQ(0, accel_stream(fd2, 0, 0, &s));
	id1 = self_id(self->fd);
	id2 = self_id(fd2);
	ASSERT_NE(0u, id1);
	ASSERT_NE(0u, id2);
	EXPECT_NE(id1, id2);

	c = contexts(self->fd, &n);
	ASSERT_NE(NULL, c);
	a = find_id(c, n, id1);
	b = find_id(c, n, id2);
	ASSERT_NE(NULL, a);
	ASSERT_NE(NULL, b);
	EXPECT_EQ(ACCEL_CTX_SELF, a->flags);
	EXPECT_EQ(0u, b->flags);
	EXPECT_EQ(0u, a->streams);
	EXPECT_EQ(1u, b->streams);
	EXPECT_EQ((uint32_t)getpid(), b->pid);
	free(c);

	/* A short buffer: count says how many exist, one entry is written. */
	c = calloc(2, sizeof(*c));
	ASSERT_NE(NULL, c);
	memset(c, 0xcc, 2 * sizeof(*c));
	ASSERT_EQ(0, query(self->fd, ACCEL_QUERY_CONTEXTS, 0, sizeof(*c), c, 1, &n));
	EXPECT_LE(2u, n);
	EXPECT_FALSE(all_bytes(&c[0], sizeof(c[0]), 0xcc));
	EXPECT_TRUE(all_bytes(&c[1], sizeof(c[1]), 0xcc));
	free(c);

	/* A closed context is gone. */
	close(fd2);
	ASSERT_EQ(-ENOENT, query(self->fd, ACCEL_QUERY_STREAMS, id2,
				 sizeof(struct accel_stream_info), NULL, 0, &n));
}

TEST_F(query, streams)
{
	struct accel_stream_info st[4];
	uint32_t n, s1, s2, s3, id;
	int fd2;

	ASSERT_EQ(0, accel_stream(self->fd, 0, 0, &s1));
	ASSERT_EQ(0, accel_stream(self->fd, 0, self->info.greatest_priority,
				  &s2));
	ASSERT_EQ(0, accel_stream(self->fd, 0, 0, &s3));
	ASSERT_EQ(0, accel_submit1(self->fd, s1, d_nop(), NULL));
	ASSERT_EQ(0, accel_drain(self->fd, s1));
	ASSERT_EQ(0, accel_stream_destroy(self->fd, s3));

	memset(st, 0xcc, sizeof(st));
	ASSERT_EQ(0, query(self->fd, ACCEL_QUERY_STREAMS, 0, sizeof(st[0]),
			   st, 4, &n));
	ASSERT_EQ(2u, n);
	EXPECT_EQ(s1, st[0].handle);
	EXPECT_EQ(0u, st[0].flags);
	EXPECT_EQ(0, st[0].priority);
	EXPECT_EQ(0, st[0].error);
	EXPECT_EQ(0u, st[0].queued);
	EXPECT_EQ((uint32_t)ACCEL_OBJ_LIVE, st[0].state);
	EXPECT_EQ(1ULL, st[0].submitted);
	EXPECT_EQ(1ULL, st[0].completed);
	EXPECT_EQ(s2, st[1].handle);
	EXPECT_EQ(self->info.greatest_priority, st[1].priority);
	EXPECT_EQ(0ULL, st[1].submitted);
	EXPECT_EQ(0ULL, st[1].completed);
	EXPECT_TRUE(all_bytes(&st[2], 2 * sizeof(st[0]), 0xcc));

	/* The same by id, from another context of the same user. */
	id = self_id(self->fd);
	fd2 = accel_open();
	ASSERT_LE(0, fd2);
	memset(st, 0xcc, sizeof(st));
	ASSERT_EQ(0, query(fd2, ACCEL_QUERY_STREAMS, id, sizeof(st[0]), st, 4, &n));
	EXPECT_EQ(2u, n);
	EXPECT_EQ(s1, st[0].handle);
	EXPECT_EQ(s2, st[1].handle);
	close(fd2);
}

TEST_F(query, regions)
{
	size_t size = 2 * page_size();
	struct accel_region_info r[3];
	uint32_t n, h1, h2;
	void *buf = anon_map(size);

	ASSERT_NE(NULL, buf);
	REQUIRE_CAP(ACCEL_CAP_DEVICE_MEM);
	ASSERT_EQ(0, accel_register(self->fd, buf, size, ACCEL_MEM_READONLY, &h1));
	ASSERT_EQ(0, accel_alloc(self->fd, 4096, ACCEL_MEM_DEVICE, &h2, NULL));

	memset(r, 0xcc, sizeof(r));
	ASSERT_EQ(0, query(self->fd, ACCEL_QUERY_REGIONS, 0, sizeof(r[0]),
			   r, 3, &n));
	ASSERT_EQ(2u, n);
	EXPECT_EQ(h1, r[0].handle);
	EXPECT_EQ((uint32_t)ACCEL_REGION_HOST, r[0].kind);
	EXPECT_EQ(ACCEL_MEM_READONLY, r[0].flags);
	EXPECT_EQ((uint32_t)ACCEL_OBJ_LIVE, r[0].state);
	EXPECT_EQ((uint64_t)size, r[0].size);
	EXPECT_EQ(0ULL, r[0].inflight);
	EXPECT_EQ(h2, r[1].handle);
	EXPECT_EQ((uint32_t)ACCEL_REGION_DEVICE, r[1].kind);
	EXPECT_EQ(4096ULL, r[1].size);
	EXPECT_TRUE(all_bytes(&r[2], sizeof(r[2]), 0xcc));
	munmap(buf, size);
}

/* -EINVAL, and the structure is not written. */
TEST_F(query, bad_arguments)
{
	static const struct {
		uint32_t kind, flags, ctx_id, entry_size, capacity;
		const char *what;
	} bad[] = {
		{ ACCEL_QUERY_CONTEXTS, 1, 0, 96, 0, "flags bit 0" },
		{ ACCEL_QUERY_CONTEXTS, 0x80000000u, 0, 96, 0, "flags bit 31" },
		{ 0, 0, 0, 96, 0, "kind 0" },
		{ 4, 0, 0, 96, 0, "kind 4" },
		{ 0xffffffffu, 0, 0, 96, 0, "kind ~0" },
		{ ACCEL_QUERY_CONTEXTS, 0, 0, 88, 0, "contexts, entry 88" },
		{ ACCEL_QUERY_CONTEXTS, 0, 0, 104, 0, "contexts, entry 104" },
		{ ACCEL_QUERY_CONTEXTS, 0, 0, 0, 0, "contexts, entry 0" },
		{ ACCEL_QUERY_STREAMS, 0, 0, 96, 0, "streams, entry 96" },
		{ ACCEL_QUERY_REGIONS, 0, 0, 40, 0, "regions, entry 40" },
		{ ACCEL_QUERY_CONTEXTS, 0, 1, 96, 0, "contexts with ctx_id" },
		{ ACCEL_QUERY_CONTEXTS, 0, 0, 96, ACCEL_QUERY_MAX_ENTRIES + 1,
		  "capacity above the limit" },
		{ ACCEL_QUERY_STREAMS, 0, 0, 40, 0xffffffffu, "capacity ~0" },
	};
	struct accel_query q, before;
	size_t i;

	ASSERT_EQ(96u, sizeof(struct accel_ctx_info));
	ASSERT_EQ(40u, sizeof(struct accel_stream_info));
	ASSERT_EQ(32u, sizeof(struct accel_region_info));
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		memset(&q, 0, sizeof(q));
		q.kind = bad[i].kind;
		q.flags = bad[i].flags;
		q.ctx_id = bad[i].ctx_id;
		q.entry_size = bad[i].entry_size;
		q.capacity = bad[i].capacity;
		q.count = 0xccccccccu;
		before = q;
		EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_QUERY, &q));
		EXPECT_EQ(EINVAL, errno) {
			TH_LOG("%s: accepted", bad[i].what);
		}
		EXPECT_EQ(0, memcmp(&before, &q, sizeof(q))) {
			TH_LOG("%s: the structure was written", bad[i].what);
		}
	}
}

TEST_F(query, unknown_context)
{
	struct accel_query q = {
		.kind = ACCEL_QUERY_STREAMS, .ctx_id = BAD_HANDLE,
		.entry_size = sizeof(struct accel_stream_info),
		.count = 0xccccccccu,
	};

	EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_QUERY, &q));
	EXPECT_EQ(ENOENT, errno);
	EXPECT_EQ(0xccccccccu, q.count);
	q.kind = ACCEL_QUERY_REGIONS;
	q.entry_size = sizeof(struct accel_region_info);
	EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_QUERY, &q));
	EXPECT_EQ(ENOENT, errno);
}

TEST_F(query, bad_pointers)
{
	struct accel_query q = {
		.kind = ACCEL_QUERY_CONTEXTS,
		.entry_size = sizeof(struct accel_ctx_info),
		.capacity = 1, .entries = 8,
	};

	EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_QUERY, NULL));
	EXPECT_EQ(EFAULT, errno);
	EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_QUERY, (void *)8));
	EXPECT_EQ(EFAULT, errno);
	/* Entries the caller cannot write. */
	EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_QUERY, &q));
	EXPECT_EQ(EFAULT, errno);
	q.entries = 0;
	EXPECT_EQ(-1, ioctl(self->fd, ACCEL_IOC_QUERY, &q));
	EXPECT_EQ(EFAULT, errno);
	q.kind = ACCEL_QUERY_STREAMS;
	q.entry_size = sizeof(struct accel_stream_info);
	q.entries = 8;
	/* No stream: nothing to write, so no fault. */
	EXPECT_EQ(0, ioctl(self->fd, ACCEL_IOC_QUERY, &q));
	EXPECT_EQ(0u, q.count);
}

/* Through an inherited file, from another process: -EACCES. */
TEST_F(query, other_process)
{
	int status;
	pid_t pid = fork();

	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct accel_query q = {
			.kind = ACCEL_QUERY_CONTEXTS,
			.entry_size = sizeof(struct accel_ctx_info),
		};

		if (ioctl(self->fd, ACCEL_IOC_QUERY, &q) != -1)
			_exit(1);
		_exit(errno == EACCES ? 0 : 2);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
}

/*
 * The allocation of the answer fails: -ENOMEM (fault-injection kernels;
 * elsewhere the test skips).
 */
TEST_F(query, no_memory)
{
	struct accel_ctx_info c[2];
	struct accel_query q = {
		.kind = ACCEL_QUERY_CONTEXTS, .entry_size = sizeof(c[0]),
		.capacity = 2, .entries = (uintptr_t)c, .count = 0xccccccccu,
	};
	char old[8] = "Y";
	int nth, wait, verb, ret, err;

	nth = open(FAIL_NTH, O_WRONLY | O_CLOEXEC);
	wait = open(FAILSLAB_WAIT, O_RDWR | O_CLOEXEC);
	verb = open(FAILSLAB_VERB, O_WRONLY | O_CLOEXEC);
	if (nth < 0 || wait < 0 || verb < 0) {
		if (nth >= 0)
			close(nth);
		if (wait >= 0)
			close(wait);
		if (verb >= 0)
			close(verb);
		SKIP(return, "no fail-nth or failslab (not a fault-injection kernel)");
	}
	ASSERT_LT(0, read(wait, old, sizeof(old) - 1));
	ASSERT_EQ(1, pwrite(wait, "N", 1, 0));
	ASSERT_EQ(1, write(verb, "0", 1));

	memset(c, 0xcc, sizeof(c));
	/* The first allocation of this task in the ioctl is the answer's. */
	ASSERT_EQ(1, write(nth, "1", 1));
	ret = ioctl(self->fd, ACCEL_IOC_QUERY, &q);
	err = errno;
	(void)!write(nth, "0", 1);
	(void)!pwrite(wait, old, 1, 0);
	close(nth);
	close(wait);
	close(verb);
	EXPECT_EQ(-1, ret);
	EXPECT_EQ(ENOMEM, err);
	EXPECT_EQ(0xccccccccu, q.count);
	EXPECT_TRUE(all_bytes(c, sizeof(c), 0xcc));
	/* And the same call works afterwards. */
	EXPECT_EQ(0, ioctl(self->fd, ACCEL_IOC_QUERY, &q));
}

/* Child: report on @out what uid NOBODY sees; see the visibility test. */
static int nobody_child(int root_fd, uint32_t root_id, int out)
{
	int ready[2], go[2], fd, status, ret = 10;
	const struct accel_ctx_info *me, *sib;
	struct accel_ctx_info *c;
	uint32_t n, sib_id, s;
	char byte;
	pid_t sibling;

	close(root_fd);
	if (become_user(NOBODY))
		return 99;
	if (pipe(ready) || pipe(go))
		return 11;
	/* A second process of the same user with a context of its own. */
	sibling = fork();
	if (sibling < 0)
		return 12;
	if (sibling == 0) {
		fd = accel_open();
		if (fd < 0 || accel_stream(fd, 0, 0, &s))
			_exit(1);
		(void)!write(ready[1], "r", 1);
		(void)!read(go[0], &byte, 1);
		_exit(0);
	}
	if (read(ready[0], &byte, 1) != 1)
		goto out;
	fd = accel_open();
	ret = 13;
	if (fd < 0)
		goto out;
	c = contexts(fd, &n);
	ret = 14;
	if (!c)
		goto out;
	ret = 15;
	me = find_flags(c, n, ACCEL_CTX_SELF);
	if (!me || me->uid != NOBODY)
		goto out;
	ret = 16;	/* root's context is not listed */
	if (find_id(c, n, root_id))
		goto out;
	ret = 17;	/* the sibling's is */
	sib = NULL;
	for (s = 0; s < n; s++)
		if (c[s].pid == (uint32_t)sibling)
			sib = &c[s];
	if (!sib || sib->uid != NOBODY || sib->streams != 1 || sib->flags)
		goto out;
	sib_id = sib->id;
	ret = 18;	/* ... nor named */
	if (query(fd, ACCEL_QUERY_STREAMS, root_id,
		  sizeof(struct accel_stream_info), NULL, 0, &n) != -ENOENT ||
	    query(fd, ACCEL_QUERY_REGIONS, root_id,
		  sizeof(struct accel_region_info), NULL, 0, &n) != -ENOENT)
		goto out;
	ret = 19;	/* the sibling's streams are */
	if (query(fd, ACCEL_QUERY_STREAMS, sib_id,
		  sizeof(struct accel_stream_info), NULL, 0, &n) || n != 1)
		goto out;
	ret = 0;
	/* Tell the parent our pid's context id is visible to root. */
	(void)!write(out, &me->id, sizeof(me->id));
out:
	(void)!write(go[1], "g", 1);
	waitpid(sibling, &status, 0);
	return ret;
}

/*
 * An ordinary user sees their own processes' contexts and no other;
 * CAP_SYS_ADMIN sees everyone's.
 */
TEST_F(query, visibility)
{
	const struct accel_ctx_info *e;
	struct accel_ctx_info *c;
	uint32_t root_id, child_id = 0, n;
	int status, out[2];
	ssize_t got;
	pid_t pid;

	if (geteuid() != 0)
		SKIP(return, "needs root to drop to uid %d", NOBODY);
	root_id = self_id(self->fd);
	ASSERT_NE(0u, root_id);
	ASSERT_EQ(0, pipe(out));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		close(out[0]);
		_exit(nobody_child(self->fd, root_id, out[1]));
	}
	close(out[1]);
	got = read(out[0], &child_id, sizeof(child_id));
	close(out[0]);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(0, WEXITSTATUS(status)) {
		TH_LOG("the uid %d child failed at step %d", NOBODY,
		       WEXITSTATUS(status));
	}
	ASSERT_EQ((ssize_t)sizeof(child_id), got);
	EXPECT_NE(0u, child_id);

	/* Root sees a context of another user while it is open. */
	ASSERT_EQ(0, pipe(out));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		int fd;

		close(self->fd);
		close(out[0]);
		if (become_user(NOBODY))
			_exit(1);
		fd = accel_open();
		if (fd < 0)
			_exit(2);
		(void)!write(out[1], "r", 1);
		pause();
		_exit(0);
	}
	close(out[1]);
	ASSERT_EQ(1, read(out[0], &status, 1));
	close(out[0]);
	c = contexts(self->fd, &n);
	e = NULL;
	if (c) {
		uint32_t i;

		for (i = 0; i < n; i++)
			if (c[i].pid == (uint32_t)pid && c[i].uid == NOBODY)
				e = &c[i];
	}
	EXPECT_NE(NULL, e) {
		TH_LOG("root does not see uid %d's context", NOBODY);
	}
	if (e)
		EXPECT_EQ(0u, e->flags);
	free(c);
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
}

ACCEL_HARNESS_MAIN
