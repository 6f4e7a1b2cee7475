// SPDX-License-Identifier: GPL-2.0
/*
 * Host unit tests of accelctl's debugfs parsers, sysfs totals, holder scan,
 * errno names and UTF-8 cleaning, against the fixture tree. Prints TAP.
 *
 * Usage: test-parse FIXTURE_DIR
 *
 * Copyright (C) 2026 The accelstream authors
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "accelctl.h"

static int ntests, nfail;
static const char *fixtures;

#define CHECK(cond, name)						\
	do {								\
		ntests++;						\
		if (cond) {						\
			printf("ok %d %s\n", ntests, name);		\
		} else {						\
			nfail++;					\
			printf("not ok %d %s # %s:%d: %s\n", ntests,	\
			       name, __FILE__, __LINE__, #cond);	\
		}							\
	} while (0)

static char *fixture(const char *rel)
{
	char path[4096], *text;
	int ret;

	snprintf(path, sizeof(path), "%s/%s", fixtures, rel);
	ret = accelctl_read_file(path, &text, 1 << 20);
	if (ret) {
		fprintf(stderr, "test-parse: %s: %s\n", path, strerror(-ret));
		exit(EXIT_FAILURE);
	}
	return text;
}

static void test_totals(void)
{
	struct accelctl_roots roots;
	struct accelctl_totals t;
	char sys[4096];
	int ret;

	snprintf(sys, sizeof(sys), "%s/live/sys", fixtures);
	roots.sysfs = sys;
	ret = accelctl_totals_read(&roots, &t);
	CHECK(ret == 0, "totals: read");
	CHECK(t.abi_version == 1 && t.contexts == 2 && t.streams == 4 &&
	      t.events == 1 && t.regions == 3 && t.queued == 5,
	      "totals: counts");
	CHECK(t.pinned_bytes == 1114112 && t.device_bytes == 4096 &&
	      t.submitted_total == 42 && t.retired_total == 37,
	      "totals: bytes and totals");
	CHECK(t.seen == (1U << ACCELCTL_TOTALS_NFIELDS) - 1,
	      "totals: every attribute seen");

	snprintf(sys, sizeof(sys), "%s/parse/sys-old", fixtures);
	ret = accelctl_totals_read(&roots, &t);
	CHECK(ret == 0 && t.seen == 3 && t.contexts == 7,
	      "totals: a missing attribute is unseen");
	snprintf(sys, sizeof(sys), "%s/parse/sys-bad", fixtures);
	ret = accelctl_totals_read(&roots, &t);
	CHECK(ret == -EBADMSG, "totals: a bad number is EBADMSG");
}

static void test_contexts(void)
{
	struct accelctl_context *c;
	size_t n;
	char *t = fixture("live/debug/accelstream/contexts");
	int bad, ret;

	ret = accelctl_parse_contexts(t, &c, &n, &bad);
	CHECK(ret == 0 && n == 2, "contexts: two rows");
	if (ret == 0 && n == 2) {
		CHECK(c[0].id == 1 && c[0].pid == 1234 && c[0].streams == 3 &&
		      c[0].regions == 1 && c[0].pinned_bytes == 1048576 &&
		      !strcmp(c[0].executor, "soft") &&
		      !strcmp(c[0].comm, "holder"),
		      "contexts: first row");
		CHECK(c[1].queued == 5 && c[1].device_bytes == 4096 &&
		      c[1].failed_streams == 1 && c[1].events == 1,
		      "contexts: second row numbers");
		CHECK(!strcmp(c[1].comm, "my \"odd\" prog"),
		      "contexts: comm keeps its spaces");
	}
	free(c);
	free(t);

	t = fixture("parse/contexts-empty");
	ret = accelctl_parse_contexts(t, &c, &n, &bad);
	CHECK(ret == 0 && n == 0, "contexts: header only is no rows");
	free(c);
	free(t);

	t = fixture("parse/contexts-missing-column");
	ret = accelctl_parse_contexts(t, &c, &n, &bad);
	CHECK(ret == -EBADMSG && bad == 1, "contexts: missing column is EBADMSG at the header");
	free(t);

	t = fixture("parse/contexts-bad-number");
	ret = accelctl_parse_contexts(t, &c, &n, &bad);
	CHECK(ret == -EBADMSG && bad == 2, "contexts: bad number is EBADMSG at line 2");
	free(t);

	t = fixture("parse/contexts-extra-column");
	ret = accelctl_parse_contexts(t, &c, &n, &bad);
	CHECK(ret == 0 && n == 1 && c[0].id == 9 &&
	      !strcmp(c[0].executor, "user:11") &&
	      !strcmp(c[0].comm, "kworker name"),
	      "contexts: an added column is skipped by name");
	free(c);
	free(t);

	ret = accelctl_parse_contexts("", &c, &n, &bad);
	CHECK(ret == -EBADMSG, "contexts: no header is EBADMSG");
	ret = accelctl_parse_contexts("id pid streams events regions queued pinned_bytes device_bytes executor failed_streams comm\n3 4 0 0 0 0 0 0 soft 0\n",
				      &c, &n, &bad);
	CHECK(ret == 0 && n == 1 && c[0].comm[0] == '\0', "contexts: empty comm");
	free(c);
}

static void test_streams_regions(void)
{
	struct accelctl_stream *s;
	struct accelctl_region *r;
	size_t n;
	char *t;
	int bad, ret;

	t = fixture("live/debug/accelstream/ctx-2/streams");
	ret = accelctl_parse_streams(t, &s, &n, &bad);
	CHECK(ret == 0 && n == 1 && s[0].submitted == 12 &&
	      s[0].completed == 7 && s[0].queued == 5 && s[0].priority == -1 &&
	      s[0].flags == 1 && s[0].error == -5 && !strcmp(s[0].state, "live"),
	      "streams: negative priority and errno");
	free(s);
	free(t);

	t = fixture("parse/streams-short-row");
	ret = accelctl_parse_streams(t, &s, &n, &bad);
	CHECK(ret == -EBADMSG && bad == 2, "streams: short row is EBADMSG");
	free(t);

	t = fixture("live/debug/accelstream/ctx-2/regions");
	ret = accelctl_parse_regions(t, &r, &n, &bad);
	CHECK(ret == 0 && n == 2 && !strcmp(r[0].kind, "host_alloc") &&
	      r[0].inflight == 3 && r[1].size == 4096 &&
	      !strcmp(r[1].state, "released"),
	      "regions: kinds, sizes, states");
	free(r);
	free(t);
}

static void test_errno_names(void)
{
	CHECK(!strcmp(accelctl_errno_name(-ETIMEDOUT), "ETIMEDOUT") &&
	      !strcmp(accelctl_errno_name(ECANCELED), "ECANCELED") &&
	      !strcmp(accelctl_errno_name(-EISDIR), "EISDIR") &&
	      !strcmp(accelctl_errno_name(-ERANGE), "ERANGE") &&
	      !strcmp(accelctl_errno_name(-ENXIO), "ENXIO") &&
	      !strcmp(accelctl_errno_name(-EIO), "EIO"),
	      "errno names: beyond the old table");
	CHECK(!strcmp(accelctl_errno_name(-4000), "E?"),
	      "errno names: unknown is E?");
}

static void test_utf8(void)
{
	char buf[64];

	CHECK(!strcmp(accelctl_utf8_clean(buf, sizeof(buf), "caf\xc3\xa9 \xe2\x82\xac"),
		      "caf\xc3\xa9 \xe2\x82\xac"), "utf8: valid UTF-8 kept");
	CHECK(!strcmp(accelctl_utf8_clean(buf, sizeof(buf), "x\xff\xc3(\xed\xa0\x80y"),
		      "x\xef\xbf\xbd\xef\xbf\xbd(\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbdy"),
	      "utf8: invalid bytes and surrogates become U+FFFD");
	CHECK(strlen(accelctl_utf8_clean(buf, 8, "abcdefghijkl")) < 8,
	      "utf8: cut to the buffer");
}

static void test_holders(void)
{
	struct accelctl_roots roots;
	struct accelctl_holder *h;
	char proc[4096];
	size_t n, i;
	int ret, seen = 0;

	snprintf(proc, sizeof(proc), "%s/live/proc", fixtures);
	roots.proc = proc;
	roots.dev = "/dev/accelstream";
	ret = accelctl_find_holders(&roots, &h, &n);
	CHECK(ret == 0 && n == 2, "holders: two processes hold the device");
	for (i = 0; ret == 0 && i < n; i++) {
		if (h[i].pid == 1234 && h[i].fds == 1 && !h[i].maps &&
		    !strcmp(h[i].comm, "holder"))
			seen |= 1;
		if (h[i].pid == 1300 && h[i].fds == 1 && h[i].maps == 1)
			seen |= 2;
	}
	CHECK(seen == 3, "holders: pid, comm, open files and mappings");
	free(h);
}

static void test_human(void)
{
	char buf[32];

	accelctl_human_bytes(buf, sizeof(buf), 1023);
	CHECK(!strcmp(buf, "1023 B"), "human: bytes");
	accelctl_human_bytes(buf, sizeof(buf), 1048576);
	CHECK(!strcmp(buf, "1.0 MiB"), "human: MiB");
}

int main(int argc, char *argv[])
{
	if (argc != 2) {
		fprintf(stderr, "usage: test-parse FIXTURE_DIR\n");
		return EXIT_FAILURE;
	}
	fixtures = argv[1];
	printf("TAP version 13\n");
	test_totals();
	test_contexts();
	test_streams_regions();
	test_errno_names();
	test_utf8();
	test_holders();
	test_human();
	printf("1..%d\n", ntests);
	printf("# Totals: pass:%d fail:%d xfail:0 xpass:0 skip:0 error:0\n",
	       ntests - nfail, nfail);
	return nfail ? EXIT_FAILURE : EXIT_SUCCESS;
}
