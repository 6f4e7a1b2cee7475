// SPDX-License-Identifier: GPL-2.0
/*
 * accelstream: several devices. ACCEL_IOC_SET_DEVICE, GET_INFO's devices,
 * ACCEL_QUERY_DEVICES, per-device memory accounts, peer copies between
 * two devices' memory (integrity, lifetime of both regions), events across
 * devices (ordering with host-gated streams, wait-all over several
 * devices), and closing one device's context while another's runs.
 *
 * Tests that need two devices skip when the module was loaded with
 * devices=1 (the VM run loads it with more).
 */
#include "kselftest_harness.h"
#include "accel_helpers.h"

#define NDEV_MAX	64

static int set_dev(int fd, uint32_t device)
{
	struct accel_device_select s = { .device = device };

	return xioctl(fd, ACCEL_IOC_SET_DEVICE, &s);
}

static int query_devs(int fd, struct accel_device_info *buf, uint32_t cap,
		      uint32_t *count)
{
	struct accel_query q = {
		.kind = ACCEL_QUERY_DEVICES,
		.entry_size = sizeof(*buf),
		.capacity = cap,
		.entries = (uintptr_t)buf,
	};
	int ret = xioctl(fd, ACCEL_IOC_QUERY, &q);

	if (!ret && count)
		*count = q.count;
	return ret;
}

/* One device's entry, or a zeroed one on failure. */
static struct accel_device_info dev_info(int fd, uint32_t device)
{
	struct accel_device_info buf[NDEV_MAX];
	uint32_t n = 0;

	memset(buf, 0, sizeof(buf));
	if (query_devs(fd, buf, NDEV_MAX, &n) || device >= n)
		memset(&buf[0], 0, sizeof(buf[0]));
	else
		buf[0] = buf[device];
	return buf[0];
}

static uint32_t ctx_device(int fd)
{
	struct accel_ctx_info ci[64];
	struct accel_query q = {
		.kind = ACCEL_QUERY_CONTEXTS,
		.entry_size = sizeof(ci[0]),
		.capacity = 64,
		.entries = (uintptr_t)ci,
	};
	uint32_t i;

	if (xioctl(fd, ACCEL_IOC_QUERY, &q))
		return 0xdeadu;
	for (i = 0; i < q.count && i < 64; i++)
		if (ci[i].flags & ACCEL_CTX_SELF)
			return ci[i].device;
	return 0xdeadu;
}

static long long sys_value(const char *path)
{
	long long v = -1;
	FILE *f = fopen(path, "re");

	if (!f)
		return -1;
	if (fscanf(f, "%lld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

/* Device memory of @size bytes on @device; the fd's current device after. */
static int alloc_on(int fd, uint32_t device, uint64_t size, uint32_t *h)
{
	int ret = set_dev(fd, device);

	if (!ret)
		ret = accel_alloc(fd, size, ACCEL_MEM_DEVICE, h, NULL);
	return ret;
}

static int stream_on(int fd, uint32_t device, uint32_t *s)
{
	int ret = set_dev(fd, device);

	if (!ret)
		ret = accel_stream(fd, 0, 0, s);
	return ret;
}

#define REQUIRE_DEVICES(n)						\
	do {								\
		REQUIRE_CAP(ACCEL_CAP_DEVICES);				\
		if (self->info.devices < (n))				\
			SKIP(return, "module loaded with devices=%u, need %u", \
			     self->info.devices, (unsigned int)(n));	\
	} while (0)

ACCEL_FIXTURE(devices);

TEST_F(devices, count_reported)
{
	long long param = sys_value("/sys/module/accelstream/parameters/devices");
	long long attr = sys_value("/sys/class/misc/accelstream/devices");
	struct accel_device_info buf[NDEV_MAX];
	uint32_t n = 0, i;

	REQUIRE_CAP(ACCEL_CAP_DEVICES);
	ASSERT_LE(1u, self->info.devices);
	ASSERT_GE(NDEV_MAX, self->info.devices);
	if (param >= 0)
		EXPECT_EQ(param, (long long)self->info.devices);
	EXPECT_EQ((long long)self->info.devices, attr);

	memset(buf, 0xcc, sizeof(buf));
	ASSERT_EQ(0, query_devs(self->fd, buf, NDEV_MAX, &n));
	ASSERT_EQ(self->info.devices, n);
	for (i = 0; i < n; i++) {
		EXPECT_EQ(i, buf[i].index);
		EXPECT_EQ(0u, buf[i].flags);
		EXPECT_EQ(self->info.max_device_bytes, buf[i].max_device_bytes);
		EXPECT_NE(0xccccccccccccccccULL, buf[i].queued);
		EXPECT_NE(0xccccccccccccccccULL, buf[i].retired);
	}
	/* Past the count: untouched. */
	EXPECT_EQ(0xccccccccu, buf[n].index);
	/* Our context is on device 0 when opened. */
	EXPECT_EQ(0u, ctx_device(self->fd));
	EXPECT_LE(1u, buf[0].contexts);
}

TEST_F(devices, set_device_errnos)
{
	struct accel_device_select s = { 0 };
	uint32_t last = self->info.devices - 1;

	REQUIRE_CAP(ACCEL_CAP_DEVICES);
	ASSERT_EQ(0, set_dev(self->fd, last));
	EXPECT_EQ(last, ctx_device(self->fd));

	/* A failed call changes nothing. */
	EXPECT_EQ(-ENODEV, set_dev(self->fd, self->info.devices));
	EXPECT_EQ(-ENODEV, set_dev(self->fd, UINT32_MAX));
	EXPECT_EQ(last, ctx_device(self->fd));
	s.flags = 1;
	EXPECT_EQ(-EINVAL, xioctl(self->fd, ACCEL_IOC_SET_DEVICE, &s));
	EXPECT_EQ(last, ctx_device(self->fd));
	EXPECT_EQ(-EFAULT, xioctl(self->fd, ACCEL_IOC_SET_DEVICE, NULL));
	EXPECT_EQ(last, ctx_device(self->fd));
	ASSERT_EQ(0, set_dev(self->fd, 0));
	EXPECT_EQ(0u, ctx_device(self->fd));
}

TEST_F(devices, query_errnos)
{
	struct accel_device_info buf[2];
	struct accel_query q = {
		.kind = ACCEL_QUERY_DEVICES,
		.entry_size = sizeof(buf[0]),
		.capacity = 2,
		.entries = (uintptr_t)buf,
	};

	REQUIRE_CAP(ACCEL_CAP_DEVICES);
	q.ctx_id = 1;
	EXPECT_EQ(-EINVAL, xioctl(self->fd, ACCEL_IOC_QUERY, &q));
	q.ctx_id = 0;
	q.entry_size = sizeof(buf[0]) - 8;
	EXPECT_EQ(-EINVAL, xioctl(self->fd, ACCEL_IOC_QUERY, &q));
	q.entry_size = sizeof(buf[0]);
	q.entries = 8;
	EXPECT_EQ(-EFAULT, xioctl(self->fd, ACCEL_IOC_QUERY, &q));
	/* Sizing call: capacity 0, no buffer. */
	q.entries = 0;
	q.capacity = 0;
	q.count = 0;
	EXPECT_EQ(0, xioctl(self->fd, ACCEL_IOC_QUERY, &q));
	EXPECT_EQ(self->info.devices, q.count);
}

/* Streams and memory stay on the device they were made on. */
TEST_F(devices, objects_stay_on_their_device)
{
	uint32_t d = self->info.devices - 1, s, m;
	struct accel_device_info before, after, other;
	struct gate g;

	REQUIRE_DEVICES(2);
	before = dev_info(self->fd, d);
	ASSERT_EQ(0, stream_on(self->fd, d, &s));
	ASSERT_EQ(0, accel_alloc(self->fd, 3 * page_size(), ACCEL_MEM_DEVICE,
				 &m, NULL));
	ASSERT_EQ(0, gate_on(self->fd, &g, s));
	ASSERT_EQ(0, accel_submit1(self->fd, s, d_nop(), NULL));
	/* Changing the current device moves nothing made before. */
	ASSERT_EQ(0, set_dev(self->fd, 0));
	after = dev_info(self->fd, d);
	EXPECT_EQ(before.streams + 1, after.streams);
	EXPECT_EQ(before.queued + 2, after.queued);
	EXPECT_EQ(before.device_bytes + 3 * page_size(), after.device_bytes);
	EXPECT_EQ(before.contexts, after.contexts);
	other = dev_info(self->fd, 0);
	EXPECT_LE(1u, other.contexts);

	ASSERT_EQ(0, gate_open(self->fd, &g));
	ASSERT_EQ(0, accel_drain(self->fd, s));
	after = dev_info(self->fd, d);
	EXPECT_EQ(before.queued, after.queued);
	EXPECT_EQ(before.retired + 2, after.retired);
	ASSERT_EQ(0, accel_release(self->fd, m, 0));
	after = dev_info(self->fd, d);
	EXPECT_EQ(before.device_bytes, after.device_bytes);
}

/*
 * A region of each device, a pinned host buffer in and out: host -> dev
 * 0 -> dev N-1 (peer) -> host, at unaligned offsets, on a stream of either
 * side, and both directions at once.
 */
TEST_F(devices, peer_copy_integrity)
{
	const size_t sizes[] = { 1, 4095, 4096, 65537, 1 << 20 };
	size_t big = (1 << 20) + 2 * page_size();
	uint32_t last = self->info.devices - 1, a, b, hin, hout, s0, s1;
	unsigned char *in, *out;
	unsigned int i;

	REQUIRE_DEVICES(2);
	in = anon_map(big);
	out = anon_map(big);
	ASSERT_NE(NULL, in);
	ASSERT_NE(NULL, out);
	ASSERT_EQ(0, accel_register(self->fd, in, big, 0, &hin));
	ASSERT_EQ(0, accel_register(self->fd, out, big, 0, &hout));
	ASSERT_EQ(0, alloc_on(self->fd, 0, big, &a));
	ASSERT_EQ(0, alloc_on(self->fd, last, big, &b));
	ASSERT_EQ(0, stream_on(self->fd, 0, &s0));
	ASSERT_EQ(0, stream_on(self->fd, last, &s1));

	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		size_t n = sizes[i];
		uint32_t s = (i & 1) ? s1 : s0;
		struct accel_desc d[3] = {
			d_copy(a, 3, hin, 5, n),
			d_copy(b, 7, a, 3, n),		/* dev 0 -> dev N-1 */
			d_copy(hout, 1, b, 7, n),
		};

		fill_random(in, big, 100 + i);
		memset(out, 0, big);
		ASSERT_EQ(0, accel_submit(self->fd, s, d, 3, NULL));
		ASSERT_EQ(0, accel_drain(self->fd, s));
		EXPECT_EQ(-1, first_diff(out + 1, in + 5, n)) {
			TH_LOG("size %zu on the stream of device %u", n,
			       s == s0 ? 0 : last);
		}
	}

	/* Both directions at once, each on a stream of its source device. */
	fill_random(in, big, 7);
	{
		struct accel_desc up[2] = {
			d_copy(a, 0, hin, 0, big / 2),
			d_copy(b, big / 2, a, 0, big / 2),
		};
		struct accel_desc down[2] = {
			d_copy(b, 0, hin, big / 2, big / 2),
			d_copy(a, big / 2, b, 0, big / 2),
		};

		ASSERT_EQ(0, accel_submit(self->fd, s0, up, 2, NULL));
		ASSERT_EQ(0, accel_submit(self->fd, s1, down, 2, NULL));
		ASSERT_EQ(0, accel_drain(self->fd, s0));
		ASSERT_EQ(0, accel_drain(self->fd, s1));
		memset(out, 0, big);
		ASSERT_EQ(0, accel_submit1(self->fd, s0,
					   d_copy(hout, 0, b, big / 2, big / 2),
					   NULL));
		ASSERT_EQ(0, accel_submit1(self->fd, s0,
					   d_copy(hout, big / 2, a, big / 2,
						  big / 2), NULL));
		ASSERT_EQ(0, accel_drain(self->fd, s0));
		EXPECT_EQ(-1, first_diff(out, in, big));
	}
	munmap(in, big);
	munmap(out, big);
}

/*
 * A stream of device N-1 waits on an event recorded on a gated stream of
 * device 0: nothing of it runs before the gate opens, and it then reads
 * what device 0 wrote.
 */
TEST_F(devices, event_across_devices_orders)
{
	uint32_t last = self->info.devices - 1, a, b, hin, hout, ev, s1;
	struct accel_stream_query q;
	size_t n = 8 * page_size();
	unsigned char *in, *out;
	struct gate g;
	uint64_t seq;

	REQUIRE_DEVICES(2);
	in = anon_map(n);
	out = anon_map(n);
	ASSERT_NE(NULL, in);
	ASSERT_NE(NULL, out);
	fill_random(in, n, 3);
	memset(out, 0, n);
	ASSERT_EQ(0, accel_register(self->fd, in, n, 0, &hin));
	ASSERT_EQ(0, accel_register(self->fd, out, n, 0, &hout));
	ASSERT_EQ(0, alloc_on(self->fd, 0, n, &a));
	ASSERT_EQ(0, alloc_on(self->fd, last, n, &b));
	ASSERT_EQ(0, accel_event(self->fd, 0, &ev));

	ASSERT_EQ(0, set_dev(self->fd, 0));
	ASSERT_EQ(0, gate_init(self->fd, &g));
	ASSERT_EQ(0, accel_submit1(self->fd, g.stream, d_copy(a, 0, hin, 0, n),
				   NULL));
	ASSERT_EQ(0, accel_submit1(self->fd, g.stream, d_record(ev), NULL));

	ASSERT_EQ(0, stream_on(self->fd, last, &s1));
	ASSERT_EQ(0, accel_submit1(self->fd, s1, d_stream_wait(ev), NULL));
	ASSERT_EQ(0, accel_submit1(self->fd, s1, d_copy(b, 0, a, 0, n), NULL));
	ASSERT_EQ(0, accel_submit1(self->fd, s1, d_copy(hout, 0, b, 0, n),
				   &seq));

	/* Gated: the other device's stream has not moved. */
	EXPECT_EQ(-ETIME, accel_sync(self->fd, s1, seq, 0));
	ASSERT_EQ(0, accel_query(self->fd, s1, &q));
	EXPECT_EQ(0u, q.completed);
	EXPECT_EQ(1, all_bytes(out, n, 0));

	ASSERT_EQ(0, gate_open(self->fd, &g));
	ASSERT_EQ(0, accel_sync(self->fd, s1, seq, deadline_in(SURE_NS)));
	EXPECT_EQ(-1, first_diff(out, in, n));
	munmap(in, n);
	munmap(out, n);
}

/* Wait-all and wait-any over events of streams of every device. */
TEST_F(devices, wait_over_devices)
{
	uint32_t ndev = self->info.devices < 8 ? self->info.devices : 8;
	struct accel_wait_entry e[8];
	struct gate g[8];
	uint32_t i, first = 99;

	REQUIRE_DEVICES(2);
	memset(e, 0, sizeof(e));
	for (i = 0; i < ndev; i++) {
		ASSERT_EQ(0, set_dev(self->fd, i));
		ASSERT_EQ(0, gate_init(self->fd, &g[i]));
		ASSERT_EQ(0, accel_event(self->fd, 0, &e[i].event));
		ASSERT_EQ(0, accel_submit1(self->fd, g[i].stream,
					   d_record(e[i].event), NULL));
	}
	EXPECT_EQ(-ETIME, accel_wait(self->fd, e, ndev, 0, 0, &first));
	/* The last device's gate: any is satisfied, by that entry. */
	ASSERT_EQ(0, gate_open(self->fd, &g[ndev - 1]));
	ASSERT_EQ(0, accel_wait(self->fd, e, ndev, 0, deadline_in(SURE_NS),
				&first));
	EXPECT_EQ(ndev - 1, first);
	EXPECT_EQ(-ETIME, accel_wait(self->fd, e, ndev, ACCEL_WAIT_ALL, 0,
				     NULL));
	for (i = 0; i + 1 < ndev; i++)
		ASSERT_EQ(0, gate_open(self->fd, &g[i]));
	EXPECT_EQ(0, accel_wait(self->fd, e, ndev, ACCEL_WAIT_ALL,
				deadline_in(SURE_NS), NULL));
}

/*
 * A queued peer copy holds both regions: neither may be released under it
 * (-EBUSY), a deferred release of both waits for it, and then each
 * device's memory account is given back.
 */
TEST_F(devices, peer_copy_lifetime)
{
	uint32_t last = self->info.devices - 1, a, b, hout;
	struct accel_device_info d0, dl, now;
	size_t n = 4 * page_size();
	unsigned char *out;
	struct gate g;

	REQUIRE_DEVICES(2);
	d0 = dev_info(self->fd, 0);
	dl = dev_info(self->fd, last);
	out = anon_map(n);
	ASSERT_NE(NULL, out);
	memset(out, 0x55, n);
	ASSERT_EQ(0, accel_register(self->fd, out, n, 0, &hout));
	ASSERT_EQ(0, alloc_on(self->fd, 0, n, &a));
	ASSERT_EQ(0, alloc_on(self->fd, last, n, &b));
	now = dev_info(self->fd, 0);
	EXPECT_EQ(d0.device_bytes + n, now.device_bytes);
	now = dev_info(self->fd, last);
	EXPECT_EQ(dl.device_bytes + n, now.device_bytes);

	ASSERT_EQ(0, gate_init(self->fd, &g));	/* on device N-1 */
	ASSERT_EQ(0, accel_submit1(self->fd, g.stream, d_copy(b, 0, a, 0, n),
				   NULL));
	ASSERT_EQ(0, accel_submit1(self->fd, g.stream, d_copy(hout, 0, b, 0, n),
				   NULL));
	EXPECT_EQ(-EBUSY, accel_release(self->fd, a, 0));
	EXPECT_EQ(-EBUSY, accel_release(self->fd, b, 0));
	ASSERT_EQ(0, accel_release(self->fd, a, ACCEL_MEM_RELEASE_DEFERRED));
	ASSERT_EQ(0, accel_release(self->fd, b, ACCEL_MEM_RELEASE_DEFERRED));
	/* The handles died; the memory is still held by the queued copies. */
	EXPECT_EQ(-ENOENT, accel_release(self->fd, a, 0));
	now = dev_info(self->fd, 0);
	EXPECT_EQ(d0.device_bytes + n, now.device_bytes);

	ASSERT_EQ(0, gate_open(self->fd, &g));
	ASSERT_EQ(0, accel_drain(self->fd, g.stream));
	/* Device memory is zeroed: the copies ran on live memory. */
	EXPECT_EQ(1, all_bytes(out, n, 0));
	now = dev_info(self->fd, 0);
	EXPECT_EQ(d0.device_bytes, now.device_bytes);
	now = dev_info(self->fd, last);
	EXPECT_EQ(dl.device_bytes, now.device_bytes);
	munmap(out, n);
}

/* Bad peer copies are refused whole and change nothing. */
TEST_F(devices, peer_copy_faults)
{
	uint32_t last = self->info.devices - 1, a, b, s;
	size_t n = 2 * page_size();
	struct accel_stream_query q;
	struct accel_desc d[2];

	REQUIRE_DEVICES(2);
	ASSERT_EQ(0, alloc_on(self->fd, 0, n, &a));
	ASSERT_EQ(0, alloc_on(self->fd, last, n, &b));
	ASSERT_EQ(0, accel_stream(self->fd, 0, 0, &s));

	d[0] = d_copy(b, 0, a, 0, n);
	d[1] = d_copy(b, 1, a, 0, n);		/* one byte past the peer's end */
	EXPECT_EQ(-EINVAL, accel_submit(self->fd, s, d, 2, NULL));
	d[1] = d_copy(b, 0, a, n - 1, 2);	/* past the source's end */
	EXPECT_EQ(-EINVAL, accel_submit(self->fd, s, d, 2, NULL));
	ASSERT_EQ(0, accel_query(self->fd, s, &q));
	EXPECT_EQ(0u, q.submitted);

	/* Memory is named by this context's handles only. */
	d[0] = d_copy(BAD_HANDLE, 0, a, 0, n);
	EXPECT_EQ(-ENOENT, accel_submit(self->fd, s, d, 1, NULL));
	ASSERT_EQ(0, accel_query(self->fd, s, &q));
	EXPECT_EQ(0u, q.submitted);
}

/*
 * Closing the context of one device with work queued cancels that work;
 * a context of another device, gated meanwhile, then runs to the end with
 * the right bytes.
 */
TEST_F(devices, close_one_device_while_other_runs)
{
	uint32_t last = self->info.devices - 1, a0, a1, b1, h, hout, i;
	size_t n = 16 * page_size();
	struct accel_device_info d0;
	unsigned char *in, *out;
	struct gate g0, g1;
	uint64_t seq;
	int fd0;

	REQUIRE_DEVICES(2);
	in = anon_map(n);
	out = anon_map(n);
	ASSERT_NE(NULL, in);
	ASSERT_NE(NULL, out);
	fill_random(in, n, 11);
	memset(out, 0, n);

	/* This fixture's context works on the last device, gated. */
	ASSERT_EQ(0, set_dev(self->fd, last));
	ASSERT_EQ(0, accel_register(self->fd, in, n, 0, &h));
	ASSERT_EQ(0, accel_register(self->fd, out, n, 0, &hout));
	ASSERT_EQ(0, accel_alloc(self->fd, n, ACCEL_MEM_DEVICE, &b1, NULL));
	ASSERT_EQ(0, accel_alloc(self->fd, n, ACCEL_MEM_DEVICE, &a1, NULL));
	ASSERT_EQ(0, gate_init(self->fd, &g1));
	for (i = 0; i < 64; i++)
		ASSERT_EQ(0, accel_submit1(self->fd, g1.stream,
					   d_copy(i & 1 ? a1 : b1, 0,
						  i & 1 ? b1 : h, 0, n), NULL));
	ASSERT_EQ(0, accel_submit1(self->fd, g1.stream, d_copy(hout, 0, a1, 0, n),
				   &seq));

	/* Another context on device 0, with a gated queue, then closed. */
	fd0 = accel_open();
	ASSERT_LE(0, fd0);
	ASSERT_EQ(0, set_dev(fd0, 0));
	ASSERT_EQ(0, accel_alloc(fd0, n, ACCEL_MEM_DEVICE, &a0, NULL));
	ASSERT_EQ(0, gate_init(fd0, &g0));
	for (i = 0; i < 256; i++)
		ASSERT_EQ(0, accel_submit1(fd0, g0.stream, d_nop(), NULL));
	d0 = dev_info(self->fd, 0);
	EXPECT_LE(257u, d0.queued);
	close(fd0);
	d0 = dev_info(self->fd, 0);
	EXPECT_EQ(0u, d0.queued);

	EXPECT_EQ(-ETIME, accel_sync(self->fd, g1.stream, seq, 0));
	ASSERT_EQ(0, gate_open(self->fd, &g1));
	ASSERT_EQ(0, accel_sync(self->fd, g1.stream, seq, deadline_in(SURE_NS)));
	EXPECT_EQ(-1, first_diff(out, in, n));
	munmap(in, n);
	munmap(out, n);
}

/* Each device keeps its own account against the per-context limit. */
TEST_F(devices, memory_account_per_device)
{
	uint32_t last = self->info.devices - 1, h;
	struct accel_device_info before[NDEV_MAX], after[NDEV_MAX];
	uint32_t n = 0, i;

	REQUIRE_DEVICES(2);
	ASSERT_EQ(0, query_devs(self->fd, before, NDEV_MAX, &n));
	ASSERT_EQ(0, alloc_on(self->fd, last, 5 * page_size(), &h));
	ASSERT_EQ(0, query_devs(self->fd, after, NDEV_MAX, &n));
	for (i = 0; i < n; i++)
		EXPECT_EQ(before[i].device_bytes +
			  (i == last ? 5 * page_size() : 0),
			  after[i].device_bytes);
	/* Past the limit on one device: -ENOMEM, and nothing changed. */
	EXPECT_EQ(-ENOMEM, accel_alloc(self->fd, self->info.max_device_bytes,
				       ACCEL_MEM_DEVICE, &h, NULL));
	ASSERT_EQ(0, query_devs(self->fd, before, NDEV_MAX, &n));
	EXPECT_EQ(after[last].device_bytes, before[last].device_bytes);
}

ACCEL_HARNESS_MAIN
