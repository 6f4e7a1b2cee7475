// SPDX-License-Identifier: MIT
/*
 * The executor protocol over libaccel's transport ops, driven by a CPU
 * executor: attach, fetch in order per stream with regions resolved,
 * complete, detach, external regions and the -ENXIO rules. The same cases
 * as selftests/accelstream/executor.c, so that the in-process model and
 * the driver are held to one behaviour (ACCEL_TRANSPORT=inproc|kernel).
 *
 * Internal test: it links libaccel's archive to reach the transports.
 */
#include <sys/mman.h>
#include <time.h>

/* The uapi header first: libaccel.h defers to its ACCEL_TIMEOUT_INFINITE. */
#include "accel_int.h"
#include "helpers.h"

struct fx {
	const struct accel_transport_ops *ops;
	struct accel_transport *tp;
	long pg;
	uint8_t *a, *b;
	uint32_t ra, rb, s1, s2;
};

static struct fx fx;

#define SURE_NS		(30 * T_SEC)
#define BAD_HANDLE	0x7ffffff1u

static uint64_t deadline_in(uint64_t ns)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * T_SEC + (uint64_t)ts.tv_nsec + ns;
}

static int xio(unsigned long cmd, void *arg)
{
	return fx.ops->ioctl(fx.tp, cmd, arg);
}

static int reg(void *p, uint64_t size, uint32_t flags, uint32_t *h)
{
	struct accel_mem_register r = { .addr = (uintptr_t)p, .size = size,
					.flags = flags };
	int ret = xio(ACCEL_IOC_MEM_REGISTER, &r);

	if (!ret)
		*h = r.handle;
	return ret;
}

static int release(uint32_t h)
{
	struct accel_mem_release r = { .handle = h };

	return xio(ACCEL_IOC_MEM_RELEASE, &r);
}

static int stream_new(uint32_t *h)
{
	struct accel_stream_create c = { 0 };
	int ret = xio(ACCEL_IOC_STREAM_CREATE, &c);

	if (!ret)
		*h = c.handle;
	return ret;
}

static int event_new(uint32_t flags, uint32_t *h)
{
	struct accel_event_create c = { .flags = flags };
	int ret = xio(ACCEL_IOC_EVENT_CREATE, &c);

	if (!ret)
		*h = c.handle;
	return ret;
}

static int submit1(uint32_t stream, struct accel_desc d, uint64_t *seq)
{
	struct accel_submit s = { .stream = stream, .count = 1,
				  .descs = (uintptr_t)&d };
	int ret = xio(ACCEL_IOC_SUBMIT, &s);

	if (!ret && seq)
		*seq = s.seq;
	return ret;
}

static int query(uint32_t stream, struct accel_stream_query *q)
{
	memset(q, 0, sizeof(*q));
	q->handle = stream;
	return xio(ACCEL_IOC_STREAM_QUERY, q);
}

static int drain(uint32_t stream)
{
	struct accel_stream_sync s = { .handle = stream,
				       .timeout_ns = deadline_in(SURE_NS) };

	return xio(ACCEL_IOC_STREAM_SYNC, &s);
}

static struct accel_desc d_nop(void)
{
	return (struct accel_desc){ .op = ACCEL_OP_NOP };
}

static struct accel_desc d_copy(uint32_t dst, uint64_t doff, uint32_t src,
				uint64_t soff, uint64_t len)
{
	return (struct accel_desc){ .op = ACCEL_OP_COPY, .dst = dst, .src = src,
				    .dst_offset = doff, .src_offset = soff,
				    .length = len };
}

static struct accel_desc d_ev(uint32_t op, uint32_t ev, uint64_t value)
{
	return (struct accel_desc){ .op = op, .event = ev, .value = value };
}

static int attach(void)
{
	struct accel_exec_attach a = { 0 };

	return xio(ACCEL_IOC_EXEC_ATTACH, &a);
}

static int detach(void)
{
	struct accel_exec_attach a = { 0 };

	return xio(ACCEL_IOC_EXEC_DETACH, &a);
}

static int fetch(struct accel_exec_item *items, uint32_t max,
		 uint64_t timeout_ns, uint32_t *count)
{
	struct accel_exec_fetch f = { .items = (uintptr_t)items,
				      .max_items = max,
				      .timeout_ns = timeout_ns };
	int ret = xio(ACCEL_IOC_EXEC_FETCH, &f);

	*count = f.count;
	return ret;
}

static int done(uint32_t stream, uint64_t seq, int32_t status)
{
	struct accel_exec_done d = { .stream = stream, .seq = seq,
				     .status = status };
	struct accel_exec_complete c = { .entries = (uintptr_t)&d, .count = 1 };

	return xio(ACCEL_IOC_EXEC_COMPLETE, &c);
}

/* Per case: a fresh context, two registered ranges, two streams. */
static int setup(void)
{
	const char *t = getenv("ACCEL_TRANSPORT");
	size_t len;
	int ret;

	memset(&fx, 0, sizeof(fx));
	fx.ops = (t && !strcmp(t, "inproc")) ? &accel_transport_inproc :
					       &accel_transport_kernel;
	ret = fx.ops->open(&fx.tp);
	if (ret) {
		printf("# %s transport: %s\n", fx.ops->name, accel_strerror(ret));
		fx.tp = NULL;
		return T_SKIP;
	}
	fx.pg = sysconf(_SC_PAGESIZE);
	len = 4 * (size_t)fx.pg;
	fx.a = mmap(NULL, len, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	fx.b = mmap(NULL, len, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(fx.a != MAP_FAILED && fx.b != MAP_FAILED);
	t_fill(fx.a, len, 7);
	memset(fx.b, 0, len);
	CHECK_OK(reg(fx.a + 5, 3 * fx.pg, 0, &fx.ra));
	CHECK_OK(reg(fx.b + 9, 3 * fx.pg, 0, &fx.rb));
	CHECK_OK(stream_new(&fx.s1));
	CHECK_OK(stream_new(&fx.s2));
	return T_PASS;
}

static void teardown(void)
{
	if (fx.tp)
		fx.ops->close(fx.tp);
	if (fx.a && fx.a != MAP_FAILED)
		munmap(fx.a, 4 * fx.pg);
	if (fx.b && fx.b != MAP_FAILED)
		munmap(fx.b, 4 * fx.pg);
	memset(&fx, 0, sizeof(fx));
}

static int caps_advertise_executor(void)
{
	struct accel_info info;

	memset(&info, 0, sizeof(info));
	CHECK_OK(xio(ACCEL_IOC_GET_INFO, &info));
	CHECK(info.caps & ACCEL_CAP_EXECUTOR);
	return T_PASS;
}

static int attach_detach_errnos(void)
{
	struct accel_exec_attach bad = { .flags = 1 };
	struct accel_exec_item it;
	uint32_t n = 99;

	CHECK_RET(detach(), -ENXIO);
	CHECK_RET(fetch(&it, 1, 0, &n), -ENXIO);
	CHECK_RET(done(fx.s1, 1, 0), -ENXIO);
	CHECK_RET(xio(ACCEL_IOC_EXEC_ATTACH, &bad), -EINVAL);
	CHECK_OK(attach());
	CHECK_RET(attach(), -EBUSY);
	/* Nothing queued: a poll times out with nothing written. */
	CHECK_RET(fetch(&it, 1, 0, &n), -ETIME);
	CHECK(n == 0);
	CHECK_RET(fetch(&it, 0, 0, &n), -EINVAL);
	CHECK_OK(detach());
	CHECK_RET(detach(), -ENXIO);
	return T_PASS;
}

static int cpu_executor_copies(void)
{
	struct accel_exec_item it[4];
	struct accel_stream_query q;
	uint32_t n = 0;
	uint64_t seq;

	CHECK_OK(attach());
	CHECK_OK(submit1(fx.s1, d_copy(fx.rb, 3, fx.ra, 1, 2 * fx.pg), &seq));
	CHECK(seq == 1);
	/* The engine runs nothing while an executor is attached. */
	CHECK_OK(query(fx.s1, &q));
	CHECK(q.completed == 0);
	CHECK_RET(release(fx.ra), -EBUSY);

	memset(it, 0xcc, sizeof(it));
	CHECK_OK(fetch(it, 4, deadline_in(SURE_NS), &n));
	CHECK(n == 1);
	CHECK(it[0].stream == fx.s1);
	CHECK(it[0].status == 0);
	CHECK(it[0].seq == 1);
	CHECK(it[0].desc.op == ACCEL_OP_COPY);
	CHECK(it[0].dst_kind == ACCEL_REGION_HOST);
	CHECK(it[0].src_kind == ACCEL_REGION_HOST);
	CHECK(it[0].dst_addr == (uintptr_t)(fx.b + 9 + 3));
	CHECK(it[0].src_addr == (uintptr_t)(fx.a + 5 + 1));
	CHECK(it[0].wait_stream == 0 && it[0].pad == 0 && it[0].wait_seq == 0);
	/* Handed out once only. */
	CHECK_RET(fetch(it, 4, 0, &n), -ETIME);

	memcpy((void *)(uintptr_t)it[0].dst_addr,
	       (void *)(uintptr_t)it[0].src_addr, it[0].desc.length);
	CHECK_OK(done(fx.s1, 1, 0));
	CHECK_OK(drain(fx.s1));
	CHECK(memcmp(fx.b + 12, fx.a + 6, 2 * fx.pg) == 0);
	CHECK_OK(release(fx.ra));
	/* Retired work cannot be completed twice. */
	CHECK_RET(done(fx.s1, 1, 0), -EINVAL);
	return T_PASS;
}

static int complete_errnos(void)
{
	struct accel_exec_done d = { .stream = fx.s1, .seq = 1, .status = 1 };
	struct accel_exec_complete c = { .entries = (uintptr_t)&d, .count = 1 };
	struct accel_exec_item it[4];
	uint32_t n;

	CHECK_OK(attach());
	CHECK_OK(submit1(fx.s1, d_nop(), NULL));
	CHECK_OK(submit1(fx.s1, d_nop(), NULL));
	/* Not fetched yet. */
	CHECK_RET(done(fx.s1, 1, 0), -EINVAL);
	CHECK_OK(fetch(it, 1, deadline_in(SURE_NS), &n));
	CHECK(n == 1);
	CHECK_RET(done(fx.s1, 2, 0), -EINVAL);
	CHECK_RET(done(BAD_HANDLE, 1, 0), -ENOENT);
	CHECK_RET(xio(ACCEL_IOC_EXEC_COMPLETE, &c), -EINVAL); /* status > 0 */
	c.count = 0;
	CHECK_RET(xio(ACCEL_IOC_EXEC_COMPLETE, &c), -EINVAL);
	c.count = 1;
	c.entries = 8;
	CHECK_RET(xio(ACCEL_IOC_EXEC_COMPLETE, &c), -EFAULT);
	CHECK_OK(done(fx.s1, 1, 0));
	return T_PASS;
}

/*
 * A user array the kernel's copy_{from,to}_user refuses (the first page, the
 * kernel half) is -EFAULT from both transports, and changes nothing.
 */
static int bad_user_arrays_are_efault(void)
{
	static const uint64_t bad[] = { 8, 0xffff800000000000ULL };
	struct accel_stream_query q;
	struct accel_exec_fetch f = { .max_items = 1 };
	uint32_t ev, i;

	CHECK_OK(event_new(0, &ev));
	for (i = 0; i < 2; i++) {
		struct accel_submit s = { .stream = fx.s1, .count = 1,
					  .descs = bad[i] };
		struct accel_wait w = { .entries = bad[i], .count = 1 };

		CHECK_RET(xio(ACCEL_IOC_SUBMIT, &s), -EFAULT);
		CHECK_RET(xio(ACCEL_IOC_WAIT, &w), -EFAULT);
	}
	CHECK_OK(query(fx.s1, &q));
	CHECK(q.submitted == 0 && q.queued == 0);
	CHECK_OK(attach());
	for (i = 0; i < 2; i++) {
		/* What a fetch took is handed out even when the copy-out fails. */
		CHECK_OK(submit1(fx.s1, d_nop(), NULL));
		f.items = bad[i];
		f.timeout_ns = deadline_in(SURE_NS);
		CHECK_RET(xio(ACCEL_IOC_EXEC_FETCH, &f), -EFAULT);
	}
	return T_PASS;
}

static int stream_wait_after_its_record(void)
{
	struct accel_exec_item it[8];
	uint32_t ev, n, i, rec_at = 99, wait_at = 99;
	uint64_t rec_seq, wait_seq;

	CHECK_OK(event_new(0, &ev));
	CHECK_OK(attach());
	CHECK_OK(submit1(fx.s1, d_nop(), NULL));
	CHECK_OK(submit1(fx.s1, d_ev(ACCEL_OP_EVENT_RECORD, ev, 0), &rec_seq));
	CHECK_OK(submit1(fx.s2, d_ev(ACCEL_OP_STREAM_WAIT, ev, 0), &wait_seq));
	CHECK_OK(fetch(it, 8, deadline_in(SURE_NS), &n));
	CHECK(n == 3);
	for (i = 0; i < n; i++) {
		if (it[i].desc.op == ACCEL_OP_EVENT_RECORD)
			rec_at = i;
		if (it[i].desc.op == ACCEL_OP_STREAM_WAIT)
			wait_at = i;
	}
	CHECK(rec_at < wait_at && wait_at < n);
	CHECK(it[wait_at].wait_stream == fx.s1);
	CHECK(it[wait_at].wait_seq == rec_seq);
	CHECK(it[wait_at].stream == fx.s2);
	CHECK(it[wait_at].seq == wait_seq);
	/* The executor may complete the wait first: ordering is its job. */
	CHECK_OK(done(fx.s1, rec_seq, 0));
	CHECK_OK(done(fx.s2, wait_seq, 0));
	CHECK_OK(drain(fx.s1));
	CHECK_OK(drain(fx.s2));
	return T_PASS;
}

static int wait_on_unfetched_record_is_held_back(void)
{
	struct accel_event_signal sg = { .value = 1 };
	struct accel_exec_item it[4];
	uint32_t ev, gate, n;

	CHECK_OK(event_new(0, &ev));
	CHECK_OK(event_new(ACCEL_EVENT_USER, &gate));
	/* s1: gate, then record; s2 waits on that record. */
	CHECK_OK(submit1(fx.s1, d_ev(ACCEL_OP_HOST_WAIT, gate, 1), NULL));
	CHECK_OK(submit1(fx.s1, d_ev(ACCEL_OP_EVENT_RECORD, ev, 0), NULL));
	CHECK_OK(submit1(fx.s2, d_ev(ACCEL_OP_STREAM_WAIT, ev, 0), NULL));
	CHECK_OK(attach());
	/* The gate is shut: neither the record nor the wait goes out. */
	CHECK_RET(fetch(it, 4, 0, &n), -ETIME);
	sg.handle = gate;
	CHECK_OK(xio(ACCEL_IOC_EVENT_SIGNAL, &sg));
	CHECK_OK(fetch(it, 4, deadline_in(SURE_NS), &n));
	CHECK(n == 3);
	CHECK(it[0].desc.op == ACCEL_OP_HOST_WAIT);
	CHECK(it[1].desc.op == ACCEL_OP_EVENT_RECORD);
	CHECK(it[2].desc.op == ACCEL_OP_STREAM_WAIT);
	CHECK_OK(done(fx.s1, it[1].seq, 0));
	CHECK_OK(done(fx.s2, it[2].seq, 0));
	return T_PASS;
}

static int host_signal_on_complete(void)
{
	struct accel_event_query eq;
	struct accel_exec_item it[2];
	uint32_t u, n;

	CHECK_OK(event_new(ACCEL_EVENT_USER, &u));
	CHECK_OK(attach());
	CHECK_OK(submit1(fx.s1, d_ev(ACCEL_OP_HOST_SIGNAL, u, 4), NULL));
	CHECK_OK(fetch(it, 2, deadline_in(SURE_NS), &n));
	CHECK(n == 1);
	memset(&eq, 0, sizeof(eq));
	eq.handle = u;
	CHECK_OK(xio(ACCEL_IOC_EVENT_QUERY, &eq));
	CHECK(eq.value == 0);		/* fetched is not done */
	CHECK_OK(done(fx.s1, it[0].seq, 0));
	memset(&eq, 0, sizeof(eq));
	eq.handle = u;
	CHECK_OK(xio(ACCEL_IOC_EVENT_QUERY, &eq));
	CHECK(eq.value == 4);
	return T_PASS;
}

/* Attach, queue a NOP on s1 and fetch it: one item in @it. */
static int attach_fetch_one(struct accel_exec_item *it, uint32_t max)
{
	uint32_t n = 0;
	int ret = attach();

	if (!ret)
		ret = submit1(fx.s1, d_nop(), NULL);
	if (!ret)
		ret = fetch(it, max, deadline_in(SURE_NS), &n);
	return ret ? ret : (n == 1 ? 0 : -EPROTO);
}

static int failure_is_sticky_and_cancels_the_rest(void)
{
	struct accel_stream_sync ss = { 0 };
	struct accel_exec_item it[4];
	struct accel_stream_query q;

	CHECK_OK(attach_fetch_one(it, 4));
	CHECK_OK(submit1(fx.s1, d_nop(), NULL));
	CHECK_OK(done(fx.s1, 1, -EIO));
	CHECK_OK(query(fx.s1, &q));
	CHECK(q.error == -EIO);
	CHECK(q.completed == 2);	/* the unfetched one went too */
	ss.handle = fx.s1;
	ss.timeout_ns = deadline_in(SURE_NS);
	CHECK_RET(xio(ACCEL_IOC_STREAM_SYNC, &ss), -EIO);
	CHECK_RET(submit1(fx.s1, d_nop(), NULL), -EIO);
	return T_PASS;
}

static int detach_fails_fetched_work_and_resumes_the_engine(void)
{
	struct accel_exec_item it[4];
	struct accel_stream_query q;

	CHECK_OK(attach_fetch_one(it, 4));
	CHECK_OK(submit1(fx.s2, d_copy(fx.rb, 0, fx.ra, 0, fx.pg), NULL));
	CHECK_OK(detach());
	CHECK_RET(drain(fx.s1), -EIO);
	/* s2's copy was never fetched: the engine runs it. */
	CHECK_OK(drain(fx.s2));
	CHECK_OK(query(fx.s2, &q));
	CHECK(q.error == 0);
	CHECK(memcmp(fx.b + 9, fx.a + 5, fx.pg) == 0);
	return T_PASS;
}

static int external_regions(void)
{
	const uint64_t dev = 0x7f0000000000ULL;
	struct accel_exec_item it[2];
	uint32_t ext, ext2, n, s3;

	CHECK_OK(reg((void *)(uintptr_t)dev, 1 << 20, ACCEL_MEM_EXTERNAL, &ext));
	CHECK_RET(reg((void *)(uintptr_t)(dev + 4096), 4096,
		      ACCEL_MEM_EXTERNAL, &ext2), -EEXIST);
	/* No executor, nobody can reach it. */
	CHECK_RET(submit1(fx.s1, d_copy(ext, 0, fx.ra, 0, 64), NULL), -ENXIO);
	CHECK_OK(attach());
	CHECK_RET(submit1(fx.s1, d_copy(ext, (1 << 20) - 8, fx.ra, 0, 64), NULL),
		  -EINVAL);
	CHECK_OK(submit1(fx.s1, d_copy(ext, 100, fx.ra, 2, 64), NULL));
	CHECK_OK(fetch(it, 2, deadline_in(SURE_NS), &n));
	CHECK(n == 1);
	CHECK(it[0].dst_kind == ACCEL_REGION_EXTERNAL);
	CHECK(it[0].dst_addr == dev + 100);
	CHECK(it[0].src_kind == ACCEL_REGION_HOST);
	CHECK_OK(done(fx.s1, it[0].seq, 0));
	/* Left to the engine after a detach, such a copy fails with -ENXIO. */
	CHECK_OK(stream_new(&s3));
	CHECK_OK(submit1(s3, d_copy(fx.rb, 0, ext, 0, 64), NULL));
	CHECK_OK(detach());
	CHECK_RET(drain(s3), -EIO);
	{
		struct accel_stream_query q;

		CHECK_OK(query(s3, &q));
		CHECK(q.error == -ENXIO);
	}
	CHECK_OK(release(ext));
	return T_PASS;
}

static int destroyed_stream_drains_through_the_executor(void)
{
	struct accel_handle h = { 0 };
	struct accel_exec_item it[2];
	uint32_t n;

	CHECK_OK(attach());
	CHECK_OK(submit1(fx.s1, d_copy(fx.rb, 0, fx.ra, 0, 64), NULL));
	h.handle = fx.s1;
	CHECK_OK(xio(ACCEL_IOC_STREAM_DESTROY, &h));
	CHECK_OK(fetch(it, 2, deadline_in(SURE_NS), &n));
	CHECK(n == 1 && it[0].stream == fx.s1);
	CHECK_RET(release(fx.ra), -EBUSY);
	CHECK_OK(done(fx.s1, it[0].seq, 0));
	CHECK_OK(release(fx.ra));
	return T_PASS;
}

#define X(fn)								\
static int x_##fn(void)							\
{									\
	int ret = setup();						\
									\
	if (ret == T_PASS)						\
		ret = fn();						\
	teardown();							\
	return ret;							\
}
X(caps_advertise_executor)
X(attach_detach_errnos)
X(cpu_executor_copies)
X(complete_errnos)
X(bad_user_arrays_are_efault)
X(stream_wait_after_its_record)
X(wait_on_unfetched_record_is_held_back)
X(host_signal_on_complete)
X(failure_is_sticky_and_cancels_the_rest)
X(detach_fails_fetched_work_and_resumes_the_engine)
X(external_regions)
X(destroyed_stream_drains_through_the_executor)

T_MAIN({ "caps_advertise_executor", x_caps_advertise_executor },
       { "attach_detach_errnos", x_attach_detach_errnos },
       { "cpu_executor_copies", x_cpu_executor_copies },
       { "complete_errnos", x_complete_errnos },
       { "bad_user_arrays_are_efault", x_bad_user_arrays_are_efault },
       { "stream_wait_after_its_record", x_stream_wait_after_its_record },
       { "wait_on_unfetched_record_is_held_back",
	 x_wait_on_unfetched_record_is_held_back },
       { "host_signal_on_complete", x_host_signal_on_complete },
       { "failure_is_sticky_and_cancels_the_rest",
	 x_failure_is_sticky_and_cancels_the_rest },
       { "detach_fails_fetched_work_and_resumes_the_engine",
	 x_detach_fails_fetched_work_and_resumes_the_engine },
       { "external_regions", x_external_regions },
       { "destroyed_stream_drains_through_the_executor",
	 x_destroyed_stream_drains_through_the_executor })
