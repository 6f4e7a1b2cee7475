// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * core_fuzz: the executor protocol as both shells serve it. Attach starts
 * every stream at its oldest entry; a fetch walks the streams with the
 * core's cursor; a completion retires what the core says with the status
 * it says; detach fails what was handed out and not completed.
 *
 * Checked: fetched items come in order per stream, between completed and
 * submitted, name their stream and wait stream by handle, carry their
 * region kinds and addresses; a completion the core accepts retires up to
 * its sequence number; what the core refuses changes nothing.
 */
#include "core_fuzz.h"

bool executor;

void exec_reset(void)
{
	executor = false;
}

void step_exec_attach(struct in *in)
{
	int k;

	(void)in;
	if (executor)
		return;
	executor = true;
	for (k = 0; k < NSTR; k++) {
		if (!st[k])
			continue;
		asc_exec_attach_stream(&st[k]->tl, &st[k]->q);
		CHECK(st[k]->tl.fetched == st[k]->tl.completed);
		CHECK(!st[k]->q.fetch_last);
	}
}

void step_exec_detach(struct in *in)
{
	int k;

	(void)in;
	if (!executor)
		return;
	for (k = 0; k < NSTR; k++) {
		while (st[k] && asc_exec_detach_next(&st[k]->tl, &st[k]->q))
			retire_head(k, -EIO);
		if (st[k])
			CHECK(st[k]->tl.fetched == st[k]->tl.completed);
	}
	executor = false;
}

static void check_item(const struct accel_exec_item *it, u64 *last_seq)
{
	const struct stream *s;
	u32 k = it->stream - 1;

	CHECK(it->stream >= 1 && it->stream <= NSTR && st[k]);
	s = st[k];
	CHECK(it->seq > s->tl.completed && it->seq <= s->tl.fetched);
	CHECK(it->seq > last_seq[k]);		/* in order per stream */
	last_seq[k] = it->seq;
	CHECK(it->status == 0 || it->status == -EIO);
	if (it->desc.op == ACCEL_OP_MEMSET) {
		CHECK(!it->src_kind && !it->src_addr);
		if (it->dst_kind == ACCEL_REGION_HOST_ALLOC ||
		    it->dst_kind == ACCEL_REGION_DEVICE)
			CHECK(!it->dst_addr);
	}
	if (it->desc.op == ACCEL_OP_COPY || it->desc.op == ACCEL_OP_COPY_2D) {
		CHECK(it->dst_kind <= ACCEL_REGION_EXTERNAL &&
		      it->src_kind <= ACCEL_REGION_EXTERNAL);
		if (it->dst_kind == ACCEL_REGION_HOST_ALLOC ||
		    it->dst_kind == ACCEL_REGION_DEVICE)
			CHECK(!it->dst_addr);
	}
	if (it->wait_stream) {
		CHECK(it->desc.op == ACCEL_OP_STREAM_WAIT);
		CHECK(it->wait_stream >= 1 && it->wait_stream <= NSTR);
		CHECK(it->wait_seq);
	}
}

void step_exec_fetch(struct in *in)
{
	struct accel_exec_item items[16];
	u64 last_seq[NSTR] = { 0 };
	u32 max = 1 + rd8(in) % 16, count = 0, i;
	bool progress = true;
	int k;

	if (!executor)
		return;
	while (progress && count < max) {
		progress = false;
		for (k = 0; k < NSTR; k++)
			if (st[k])
				progress |= asc_fetch_stream(&st[k]->tl,
							     &st[k]->q, items,
							     max, &count);
	}
	CHECK(count <= max);
	for (i = 0; i < count; i++)
		check_item(&items[i], last_seq);
	for (k = 0; k < NSTR; k++) {
		const struct stream *s = st[k];

		if (!s)
			continue;
		CHECK(s->tl.fetched >= s->tl.completed &&
		      s->tl.fetched <= s->tl.submitted);
		if (s->q.fetch_last)
			CHECK(s->q.fetch_last->seq == s->tl.fetched);
	}
}

void step_exec_complete(struct in *in)
{
	static const s32 statuses[] = { 0, 0, 0, -EIO, -ENOMEM, 1 };
	struct accel_exec_done d;
	struct stream *s;
	int k = rd8(in) % NSTR, ret, status;
	bool want;

	s = st[k];
	if (!s || !executor)
		return;
	d.stream = s->tl.id;
	d.seq = s->tl.completed + rd8(in) % 6;	/* around what is pending */
	if (rd8(in) < 16)
		d.seq = num(in);
	d.status = statuses[rd8(in) % 6];
	want = d.status <= 0 && d.seq > s->tl.completed &&
	       d.seq <= s->tl.fetched;
	ret = asc_exec_check_done(&s->tl, &d);
	CHECK(!ret == want);
	if (ret) {
		CHECK(ret == -EINVAL);
		return;
	}
	while (st[k] && asc_exec_done_next(&st[k]->tl, &st[k]->q, &d, &status))
		retire_head(k, status);
	if (st[k]) {
		CHECK(st[k]->tl.completed >= d.seq);
		if (d.status)
			CHECK(st[k]->tl.error);
	}
}
