// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * core_fuzz: the ABI checks of every command against reference predicates
 * written from the uapi header, and the answers the shells copy out.
 */
#include "core_fuzz.h"

/* ---- reference predicates from the uapi header ------------------------- */

/* MEMSET's element size from its flags, 0 for flags the header forbids. */
u32 ref_memset_width(u32 flags)
{
	return flags == 0 ? 1 : flags == ACCEL_MEMSET_D16 ? 2 :
	       flags == ACCEL_MEMSET_D32 ? 4 : 0;
}

bool ref_desc_ok(const struct accel_desc *d)
{
	bool copy = d->dst || d->src || d->dst_offset || d->src_offset ||
		    d->length;
	u32 w;

	if (d->op == ACCEL_OP_MEMSET) {
		w = ref_memset_width(d->flags);
		return w && d->dst && !d->src && !d->src_offset && !d->event &&
		       !d->reserved && d->length % w == 0 &&
		       (w == 4 ? d->value <= 0xffffffffULL :
			d->value < (1ULL << (8 * w)));
	}
	if (d->op == ACCEL_OP_COPY_2D)
		return !d->flags && d->dst && d->src && d->dst_pitch >= d->width &&
		       d->src_pitch >= d->width;
	if (d->flags || d->reserved)
		return false;
	switch (d->op) {
	case ACCEL_OP_NOP:
		return !copy && !d->event && !d->value;
	case ACCEL_OP_COPY:
		return !d->event && !d->value && d->dst && d->src;
	case ACCEL_OP_EVENT_RECORD:
	case ACCEL_OP_STREAM_WAIT:
		return !copy && !d->value && d->event;
	case ACCEL_OP_HOST_WAIT:
	case ACCEL_OP_HOST_SIGNAL:
		return !copy && d->event;
	default:
		return false;
	}
}

/* ---- steps -------------------------------------------------------------- */

void step_abi(struct in *in)
{
	union {
		struct accel_info info;
		struct accel_mem_register reg;
		struct accel_mem_alloc alloc;
		struct accel_mem_release rel;
		struct accel_stream_create sc;
		struct accel_handle h;
		struct accel_stream_sync sync;
		struct accel_submit sub;
		struct accel_event_create ec;
		struct accel_event_signal sig;
		struct accel_wait w;
		struct accel_wait_entry we;
		struct accel_desc d;
		struct accel_stream_query sq;
		struct accel_event_query eq;
		struct accel_event_record rec;
		struct accel_exec_attach att;
		struct accel_exec_fetch f;
		struct accel_exec_complete cm;
		struct accel_event_export xe;
		struct accel_event_import xi;
	} u;
	struct accel_desc rd;
	uint8_t which = rd8(in) % 22;
	u64 end;
	int r;

	bytes(in, &u, sizeof(u));
	switch (which) {
	case 0:
		r = asc_check_info(&u.info);
		CHECK(r == 0 || r == -EINVAL);
		if (!r)
			CHECK(!u.info.flags);
		break;
	case 1:
		r = asc_check_mem_register(&u.reg);
		if (!r)
			CHECK(u.reg.size &&
			      !__builtin_add_overflow(u.reg.addr, u.reg.size, &end));
		break;
	case 2:
		r = asc_check_mem_alloc(&u.alloc);
		if (!r)
			CHECK(u.alloc.size && (u.alloc.flags == ACCEL_MEM_HOST ||
					       u.alloc.flags == ACCEL_MEM_DEVICE));
		break;
	case 3:
		r = asc_check_mem_release(&u.rel);
		CHECK(!r == !(u.rel.flags & ~ACCEL_MEM_RELEASE_DEFERRED));
		break;
	case 4:
		r = asc_check_stream_create(&u.sc);
		if (!r)
			CHECK(!(u.sc.flags & ~ACCEL_STREAM_NON_BLOCKING) && !u.sc.pad);
		break;
	case 5:
		r = asc_check_handle(&u.h);
		CHECK(!r == !u.h.pad);
		break;
	case 6:
		r = asc_check_stream_sync(&u.sync);
		CHECK(!r == !u.sync.flags);
		break;
	case 7:
		r = asc_check_submit(&u.sub, ASC_MAX_SUBMIT);
		if (!r)
			CHECK(u.sub.count >= 1 && u.sub.count <= ASC_MAX_SUBMIT &&
			      u.sub.descs && !u.sub.flags && !u.sub.pad);
		break;
	case 8:
		r = asc_check_event_create(&u.ec);
		if (!r)
			CHECK(!(u.ec.flags & ~(ACCEL_EVENT_TIMING | ACCEL_EVENT_USER)) &&
			      u.ec.flags != (ACCEL_EVENT_TIMING | ACCEL_EVENT_USER));
		break;
	case 9:
		r = asc_check_event_signal(&u.sig);
		CHECK(!r == !(u.sig.flags & ~ACCEL_SIGNAL_ERROR));
		break;
	case 10:
		r = asc_check_wait(&u.w, ASC_MAX_WAIT);
		if (!r)
			CHECK(u.w.count >= 1 && u.w.count <= ASC_MAX_WAIT &&
			      u.w.entries && !(u.w.flags & ~ACCEL_WAIT_ALL) && !u.w.pad);
		break;
	case 11:
		r = asc_check_wait_entry(&u.we);
		CHECK(!r == !u.we.pad);
		break;
	case 12:
		r = asc_check_stream_query(&u.sq);
		CHECK(!r == !u.sq.pad);
		break;
	case 13:
		r = asc_check_event_query(&u.eq);
		CHECK(!r == !u.eq.pad);
		break;
	case 14:
		r = asc_check_event_record(&u.rec, &rd);
		CHECK(rd.op == ACCEL_OP_EVENT_RECORD && rd.event == u.rec.event);
		CHECK(!r == ref_desc_ok(&rd));
		break;
	case 15:
		r = asc_check_exec_attach(&u.att);
		CHECK(!r == (!u.att.flags && !u.att.pad));
		break;
	case 16:
		r = asc_check_exec_fetch(&u.f, ASC_MAX_SUBMIT);
		CHECK(!r == (!u.f.flags && !u.f.pad && u.f.items &&
			     u.f.max_items >= 1 && u.f.max_items <= ASC_MAX_SUBMIT));
		break;
	case 17:
		r = asc_check_exec_complete(&u.cm, ASC_MAX_SUBMIT);
		CHECK(!r == (!u.cm.pad && u.cm.entries && u.cm.count >= 1 &&
			     u.cm.count <= ASC_MAX_SUBMIT));
		break;
	case 18:
		/* Every command is found, anything else is -ENOTTY. */
		r = asc_ioctl_index((unsigned int)num(in));
		CHECK(r == -ENOTTY || (r >= 0 && r < ASC_NR_IOCTLS));
		CHECK(asc_ioctl_index(ACCEL_IOC_SUBMIT) == ASC_IOC_SUBMIT);
		CHECK(asc_ioctl_index(ACCEL_IOC_EXEC_COMPLETE) ==
		      ASC_IOC_EXEC_COMPLETE);
		CHECK(asc_ioctl_index(ACCEL_IOC_EVENT_EXPORT) ==
		      ASC_IOC_EVENT_EXPORT);
		CHECK(asc_ioctl_index(ACCEL_IOC_EVENT_IMPORT) ==
		      ASC_IOC_EVENT_IMPORT);
		break;
	case 19:
		r = asc_check_event_export(&u.xe);
		CHECK(!r == (!u.xe.flags && !u.xe.pad));
		break;
	case 20:
		r = asc_check_event_import(&u.xi);
		CHECK(!r == (!u.xi.flags && !u.xi.pad));
		break;
	default:
		r = asc_check_desc(&u.d);
		CHECK(r == 0 || r == -EINVAL);
		CHECK(!r == ref_desc_ok(&u.d));
		break;
	}
	{
		/* The GET_INFO answer: every field written, the limits the core's. */
		memset(&u.info, 0xcc, sizeof(u.info));
		asc_info_fill(&u.info, ASC_CAPS, num(in), num(in), 4096);
		CHECK(u.info.abi_version == ACCEL_ABI_VERSION && !u.info.flags);
		CHECK(u.info.max_submit == ASC_MAX_SUBMIT &&
		      u.info.queue_depth == ASC_QUEUE_DEPTH);
		CHECK(!u.info.reserved[0] && !u.info.reserved[3]);
	}
	{
		s32 p = (s32)num(in);
		s32 c = asc_clamp_priority(p);

		CHECK(c >= ASC_GREATEST_PRIORITY && c <= ASC_LEAST_PRIORITY);
		if (p >= ASC_GREATEST_PRIORITY && p <= ASC_LEAST_PRIORITY)
			CHECK(c == p);
	}
	{
		u64 a = num(in), al = num(in) + 1, b = num(in), bl = num(in) + 1;
		u64 ae, be;

		if (!__builtin_add_overflow(a, al, &ae) &&
		    !__builtin_add_overflow(b, bl, &be))
			CHECK(asc_ranges_overlap(a, al, b, bl) == (a < be && b < ae));
	}
}

