// SPDX-License-Identifier: GPL-2.0
/*
 * accelctl status: the module (state, refcount, parameters) and the
 * driver's totals (debugfs summary).
 *
 * Copyright (C) 2026 The accelstream authors
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "accelctl.h"
#include "json.h"
#include "../../uapi/accelstream.h"

static const char usage[] = "status [--json]";

static const char *const summary_keys[ACCELCTL_SUMMARY_NFIELDS] = {
	"abi_version", "contexts", "streams", "events", "regions", "queued",
	"pinned_bytes", "device_bytes", "submitted_total", "retired_total",
};

static uint64_t summary_field(const struct accelctl_summary *s, int i)
{
	const uint64_t v[ACCELCTL_SUMMARY_NFIELDS] = {
		s->abi_version, s->contexts, s->streams, s->events, s->regions,
		s->queued, s->pinned_bytes, s->device_bytes,
		s->submitted_total, s->retired_total,
	};

	return v[i];
}

static void print_json(const struct accelctl_module *m,
		       const struct accelctl_summary *sum)
{
	struct json j;
	size_t i;
	int k;

	json_init(&j, stdout);
	json_object_begin(&j, NULL);
	json_string(&j, "module", ACCELCTL_MODULE);
	json_string(&j, "state", accelctl_modstate_str(m->state));
	json_bool(&j, "loaded", m->state != MODSTATE_NOT_LOADED);
	if (m->refcnt >= 0)
		json_i64(&j, "refcnt", m->refcnt);
	else
		json_null(&j, "refcnt");
	json_array_begin(&j, "holders");
	for (i = 0; i < m->nholders; i++)
		json_string(&j, NULL, m->holders[i]);
	json_array_end(&j);
	json_object_begin(&j, "parameters");
	for (i = 0; i < m->nparams; i++)
		json_string(&j, m->params[i].name, m->params[i].value);
	json_object_end(&j);
	json_u64(&j, "abi_expected", ACCEL_ABI_VERSION);
	if (sum) {
		json_object_begin(&j, "summary");
		for (k = 0; k < ACCELCTL_SUMMARY_NFIELDS; k++) {
			if (sum->seen & (1U << k))
				json_u64(&j, summary_keys[k], summary_field(sum, k));
			else
				json_null(&j, summary_keys[k]);
		}
		json_object_end(&j);
	} else {
		json_null(&j, "summary");
	}
	json_object_end(&j);
	json_finish(&j);
}

static void print_human(const struct accelctl_module *m,
			const struct accelctl_summary *sum)
{
	char buf[64];
	size_t i;
	int k;

	printf("%-16s %s\n", "module", ACCELCTL_MODULE);
	printf("%-16s %s\n", "state", accelctl_modstate_str(m->state));
	if (m->state == MODSTATE_NOT_LOADED)
		return;
	if (m->refcnt >= 0)
		printf("%-16s %ld\n", "refcount", m->refcnt);
	printf("%-16s", "holders");
	for (i = 0; i < m->nholders; i++)
		printf(" %s", m->holders[i]);
	printf("%s\n", m->nholders ? "" : " -");
	for (i = 0; i < m->nparams; i++)
		printf("%-16s %s=%s\n", i ? "" : "parameters", m->params[i].name,
		       m->params[i].value ?: "(unreadable)");
	if (!sum)
		return;
	for (k = 0; k < ACCELCTL_SUMMARY_NFIELDS; k++) {
		uint64_t v = summary_field(sum, k);

		if (!(sum->seen & (1U << k))) {
			printf("%-16s ?\n", summary_keys[k]);
			continue;
		}
		if (k == 0) {
			printf("%-16s %" PRIu64 "%s\n", summary_keys[k], v,
			       v == ACCEL_ABI_VERSION ? "" : " (accelctl expects "
			       "a different ABI)");
		} else if (strstr(summary_keys[k], "_bytes")) {
			accelctl_human_bytes(buf, sizeof(buf), v);
			printf("%-16s %" PRIu64 " (%s)\n", summary_keys[k], v, buf);
		} else {
			printf("%-16s %" PRIu64 "\n", summary_keys[k], v);
		}
	}
}

static int do_status(struct accelctl *actl, int argc, char *argv[])
{
	struct accelctl_module m = { 0 };
	struct accelctl_summary sum, *have = NULL;
	int idx, err, badline = 0, ret = EXIT_FAILURE;
	char *text = NULL;

	idx = accelctl_cmd_opts(actl, &accelctl_cmd_status, usage, argc, argv);
	if (idx < 0)
		return idx == -1 ? EXIT_SUCCESS : EXIT_FAILURE;
	if (idx < argc) {
		fprintf(stderr, "Usage: accelctl %s\n", usage);
		return EXIT_FAILURE;
	}
	err = accelctl_module_read(actl, &m);
	if (err < 0) {
		accelctl_err("cannot read the module's state: %s", strerror(-err));
		goto out;
	}
	ret = EXIT_SUCCESS;
	if (m.state == MODSTATE_LIVE) {
		err = accelctl_debugfs_read(&actl->roots, "summary", &text);
		if (!err)
			err = accelctl_parse_summary(text, &sum, &badline);
		if (err) {
			accelctl_debugfs_error(&actl->roots, "summary", err, badline);
			ret = EXIT_FAILURE;
		} else {
			have = &sum;
			if (!(sum.seen & 1))
				accelctl_warn("summary has no abi_version");
			else if (sum.abi_version != ACCEL_ABI_VERSION)
				accelctl_warn("the module speaks ABI %" PRIu64 ", accelctl was built for ABI %d",
					      sum.abi_version, ACCEL_ABI_VERSION);
		}
	}
	if (actl->json)
		print_json(&m, have);
	else
		print_human(&m, have);
out:
	free(text);
	accelctl_module_free(&m);
	return ret;
}

const struct accelctl_cmd accelctl_cmd_status = {
	.name = "status",
	.run = do_status,
	.help = "module state, refcount, parameters, ABI and totals",
};
