/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * core_fuzz: what the steps of the libFuzzer target on the pure core share:
 * the input reader, the model's objects (as a shell holds them) and the
 * helpers that act on what the core reports.
 */
#ifndef CORE_FUZZ_H
#define CORE_FUZZ_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "asc_core.h"

#define CHECK(c)							\
	do {								\
		if (!(c)) {						\
			fprintf(stderr, "core_fuzz: %s:%d: check failed: %s\n", \
				__FILE__, __LINE__, #c);		\
			abort();					\
		}							\
	} while (0)

#define NREG	6
#define NEV	8
#define NSTR	4
#define NWAIT	4
#define WAITN	4

/* ---- input reader ------------------------------------------------------ */

struct in {
	const uint8_t *p;
	size_t n;
};

static inline uint8_t rd8(struct in *in)
{
	uint8_t v;

	if (!in->n)
		return 0;
	v = *in->p++;
	in->n--;
	return v;
}

static inline void bytes(struct in *in, void *dst, size_t len)
{
	size_t k = len < in->n ? len : in->n;

	memset(dst, 0, len);
	memcpy(dst, in->p, k);
	in->p += k;
	in->n -= k;
}

/* A small number most of the time, a wide one sometimes. */
static inline uint64_t num(struct in *in)
{
	uint8_t t = rd8(in);
	uint64_t v = 0;

	switch (t >> 6) {
	case 0:
		return t & 63;
	case 1:
		return (uint64_t)(t & 63) << 12 | rd8(in);
	case 2:
		bytes(in, &v, 4);
		return v;
	default:
		bytes(in, &v, 8);
		return v;
	}
}

/* ---- the model's objects (core_fuzz.c) ---------------------------------- */

struct stream {
	struct asc_timeline tl;
	struct asc_queue q;
	bool destroyed;
	u64 last_completed;
};

extern struct asc_region *reg[NREG];
extern bool reg_live[NREG];
extern struct asc_event *ev[NEV];
extern bool ev_live[NEV];
extern struct stream *st[NSTR];
/* An executor is attached (core_fuzz_exec.c): the engine runs nothing. */
extern bool executor;

void collect(struct asc_release *rel);
void check_stream(struct stream *s);
void free_stream_if_done(int i);
void retire_head(int k, int status);
struct asc_region *lookup_reg(u32 h);
struct asc_event *lookup_ev(u32 h);

/* ---- steps --------------------------------------------------------------- */

/* core_fuzz_abi.c: every command's checks and answers. */
bool ref_desc_ok(const struct accel_desc *d);
u32 ref_memset_width(u32 flags);
void step_abi(struct in *in);

/* core_fuzz_exec.c: the executor protocol. */
void exec_reset(void);
void step_exec_attach(struct in *in);
void step_exec_detach(struct in *in);
void step_exec_fetch(struct in *in);
void step_exec_complete(struct in *in);

#endif /* CORE_FUZZ_H */
