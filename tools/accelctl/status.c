// SPDX-License-Identifier: GPL-2.0
/*
 * accelctl status: the module (state, refcount, parameters) and the
 * driver's totals (the misc device's sysfs attributes). Works for every
 * user: nothing it reads needs root, debugfs or access to the device.
 *
 * Copyright (C) 2026 The accelstream authors
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "accelctl.h"
#include "out.h"
#include "../../uapi/accelstream.h"

static const char usage[] = "status [-J]";

/* JSON: one row of these (the totals follow, ABI_VERSION first). */
enum { S_MODULE, S_STATE, S_LOADED, S_REFCOUNT, S_HOLDERS, S_ABI_EXPECTED,
       S_TOTALS };

#define NUM	SCOLS_FL_RIGHT, SCOLS_JSON_NUMBER, true

static const struct accelctl_col status_cols[S_TOTALS + ACCELCTL_TOTALS_NFIELDS] = {
	{ "MODULE", 0, 0, SCOLS_JSON_STRING, true, "module name" },
	{ "STATE", 0, 0, SCOLS_JSON_STRING, true, "live, coming, going, builtin, not loaded" },
	{ "LOADED", 0, 0, SCOLS_JSON_BOOLEAN, true, "whether it is loaded" },
	{ "REFCOUNT", 0, NUM, "open files and other users" },
	{ "HOLDERS", 0, 0, SCOLS_JSON_STRING, true, "modules using it" },
	{ "ABI_EXPECTED", 0, NUM, "the ABI accelctl was built for" },
	{ "ABI_VERSION", 0, NUM, "the module's ABI" },
	{ "CONTEXTS", 0, NUM, "open files of the device" },
	{ "STREAMS", 0, NUM, "streams" },
	{ "EVENTS", 0, NUM, "events" },
	{ "REGIONS", 0, NUM, "regions" },
	{ "QUEUED", 0, NUM, "descriptors not retired" },
	{ "PINNED_BYTES", 0, NUM, "host bytes pinned" },
	{ "DEVICE_BYTES", 0, NUM, "device bytes allocated" },
	{ "SUBMITTED_TOTAL", 0, NUM, "descriptors submitted since load" },
	{ "RETIRED_TOTAL", 0, NUM, "descriptors retired since load" },
};

enum { P_NAME, P_VALUE };

static const struct accelctl_col param_cols[] = {
	{ "NAME", 0, 0, SCOLS_JSON_STRING, true, "parameter" },
	{ "VALUE", 0, NUM, "its value, null if not a number" },
};

/* The human form: a name column and a value column. */
static const struct accelctl_col kv_cols[] = {
	{ "FIELD", 0, 0, SCOLS_JSON_STRING, true, "" },
	{ "VALUE", 0, 0, SCOLS_JSON_STRING, true, "" },
};

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

static bool is_number(const char *s)
{
	char *end;

	if (!s || !*s)
		return false;
	errno = 0;
	strtoll(s, &end, 10);
	return !errno && !*end;
}

static int fill_json(const struct accelctl *actl, struct accelctl_tab *st,
		     struct accelctl_tab *pt, const struct accelctl_module *m,
		     const struct accelctl_totals *t)
{
	struct libscols_line *ln = out_row(st);
	char holders[1024] = "";
	size_t i;
	int k, ret = 0;

	if (!ln)
		return -ENOMEM;
	for (i = 0; i < m->nholders; i++)
		snprintf(holders + strlen(holders), sizeof(holders) - strlen(holders),
			 "%s%s", i ? " " : "", m->holders[i]);
	ret |= out_cell(st, ln, S_MODULE, "%s", ACCELCTL_MODULE);
	ret |= out_cell(st, ln, S_STATE, "%s", accelctl_modstate_str(m->state));
	ret |= out_cell(st, ln, S_LOADED, "%s",
			m->state != MODSTATE_NOT_LOADED ? "1" : "0");
	if (m->refcnt >= 0)
		ret |= out_cell(st, ln, S_REFCOUNT, "%ld", m->refcnt);
	if (m->state != MODSTATE_NOT_LOADED)
		ret |= out_cell(st, ln, S_HOLDERS, "%s", holders);
	ret |= out_cell(st, ln, S_ABI_EXPECTED, "%d", ACCEL_ABI_VERSION);
	for (k = 0; t && k < ACCELCTL_TOTALS_NFIELDS; k++)
		if (t->seen & (1U << k))
			ret |= out_cell_u64(st, ln, S_TOTALS + k,
					    accelctl_totals_field(t, k));
	for (i = 0; i < m->nparams && !ret; i++) {
		ln = out_row(pt);
		if (!ln)
			return -ENOMEM;
		ret |= out_cell(pt, ln, P_NAME, "%s", m->params[i].name);
		if (is_number(m->params[i].value))
			ret |= out_cell(pt, ln, P_VALUE, "%s", m->params[i].value);
	}
	(void)actl;
	return ret ? -ENOMEM : 0;
}

static int kv(struct accelctl_tab *t, const char *field, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int kv(struct accelctl_tab *t, const char *field, const char *fmt, ...)
{
	struct libscols_line *ln = out_row(t);
	char buf[1024];
	va_list ap;

	if (!ln)
		return -ENOMEM;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (out_cell(t, ln, 0, "%s", field) || out_cell(t, ln, 1, "%s", buf))
		return -ENOMEM;
	return 0;
}

static int fill_human(struct accelctl_tab *t, const struct accelctl_module *m,
		      const struct accelctl_totals *tot)
{
	char holders[1024] = "", buf[32];
	size_t i;
	int k, ret = 0;

	ret |= kv(t, "module", "%s", ACCELCTL_MODULE);
	ret |= kv(t, "state", "%s", accelctl_modstate_str(m->state));
	if (m->state == MODSTATE_NOT_LOADED)
		return ret;
	if (m->refcnt >= 0)
		ret |= kv(t, "refcount", "%ld", m->refcnt);
	for (i = 0; i < m->nholders; i++)
		snprintf(holders + strlen(holders), sizeof(holders) - strlen(holders),
			 "%s%s", i ? " " : "", m->holders[i]);
	ret |= kv(t, "holders", "%s", m->nholders ? holders : "-");
	for (i = 0; i < m->nparams; i++)
		ret |= kv(t, i ? "" : "parameters", "%s=%s", m->params[i].name,
			  m->params[i].value ?: "(unreadable)");
	for (k = 0; tot && k < ACCELCTL_TOTALS_NFIELDS; k++) {
		const char *name = accelctl_totals_names[k];
		uint64_t v = accelctl_totals_field(tot, k);

		if (!(tot->seen & (1U << k))) {
			ret |= kv(t, name, "?");
		} else if (k == 0 && v != ACCEL_ABI_VERSION) {
			ret |= kv(t, name, "%" PRIu64 " (accelctl expects %d)", v,
				  ACCEL_ABI_VERSION);
		} else if (strstr(name, "_bytes")) {
			accelctl_human_bytes(buf, sizeof(buf), v);
			ret |= kv(t, name, "%" PRIu64 " (%s)", v, buf);
		} else {
			ret |= kv(t, name, "%" PRIu64, v);
		}
	}
	return ret ? -ENOMEM : 0;
}

static int do_status(struct accelctl *actl, int argc, char *argv[])
{
	struct accelctl_tab st = { 0 }, pt = { 0 };
	struct accelctl_tab *tabs[2] = { &st, &pt };
	struct accelctl_totals tot, *have = NULL;
	struct accelctl_module m = { 0 };
	int idx, err, ret = EXIT_FAILURE;

	idx = accelctl_cmd_opts(actl, &accelctl_cmd_status, usage, 0, NULL,
				argc, argv);
	if (idx < 0)
		return idx == -1 ? EXIT_SUCCESS : EXIT_FAILURE;
	if (idx < argc) {
		accelctl_usage_error(usage, "status takes no arguments, not '%s'",
				     argv[idx]);
		return EXIT_FAILURE;
	}
	err = accelctl_module_read(actl, &m);
	if (err < 0) {
		accelctl_err("cannot read the module's state: %s", strerror(-err));
		goto out;
	}
	if (m.state == MODSTATE_LIVE) {
		if (accelctl_totals_read(&actl->roots, &tot))
			goto out;
		have = &tot;
		if (!(tot.seen & 1))
			accelctl_warn("%s/class/misc/%s has no abi_version: the module predates its sysfs attributes",
				      actl->roots.sysfs, ACCELCTL_MODULE);
		else if (tot.abi_version != ACCEL_ABI_VERSION)
			accelctl_warn("the module speaks ABI %" PRIu64 ", accelctl was built for ABI %d",
				      tot.abi_version, ACCEL_ABI_VERSION);
	}
	if (actl->json) {
		err = out_tab_init(&st, actl, "status", status_cols,
				   ARRAY_SIZE(status_cols), true);
		if (!err)
			err = out_tab_init(&pt, actl, "parameters", param_cols,
					   ARRAY_SIZE(param_cols), true);
		if (!err)
			err = fill_json(actl, &st, &pt, &m, have);
		if (!err)
			err = out_print(actl, tabs, 2);
	} else {
		struct accelctl plain = *actl;

		plain.noheadings = true;
		err = out_tab_init(&st, &plain, "status", kv_cols,
				   ARRAY_SIZE(kv_cols), true);
		if (!err)
			err = fill_human(&st, &m, have);
		if (!err)
			err = out_print(actl, tabs, 1);
	}
	if (err == -ENOMEM)
		accelctl_err("out of memory");
	if (!err)
		ret = EXIT_SUCCESS;
out:
	out_tab_fini(&st);
	out_tab_fini(&pt);
	accelctl_module_free(&m);
	return ret;
}

const struct accelctl_cmd accelctl_cmd_status = {
	.name = "status",
	.run = do_status,
	.help = "module state, refcount, parameters, ABI and totals",
};
