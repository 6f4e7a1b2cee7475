// SPDX-License-Identifier: GPL-2.0
/*
 * The driver's totals: attributes of the misc device, readable by every
 * user (Documentation/ABI/testing/sysfs-class-misc-accelstream).
 *
 * Copyright (C) 2026 The accelstream authors
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "accelctl.h"

const char *const accelctl_totals_names[ACCELCTL_TOTALS_NFIELDS] = {
	"abi_version", "contexts", "streams", "events", "regions", "queued",
	"pinned_bytes", "device_bytes", "submitted_total", "retired_total",
};

uint64_t accelctl_totals_field(const struct accelctl_totals *t, int i)
{
	const uint64_t v[ACCELCTL_TOTALS_NFIELDS] = {
		t->abi_version, t->contexts, t->streams, t->events, t->regions,
		t->queued, t->pinned_bytes, t->device_bytes,
		t->submitted_total, t->retired_total,
	};

	return v[i];
}

/*
 * The misc device's attributes (Documentation/ABI/testing/
 * sysfs-class-misc-accelstream), readable by every user.
 */
int accelctl_totals_read(const struct accelctl_roots *roots,
			 struct accelctl_totals *t)
{
	uint64_t *field[ACCELCTL_TOTALS_NFIELDS] = {
		&t->abi_version, &t->contexts, &t->streams, &t->events,
		&t->regions, &t->queued, &t->pinned_bytes, &t->device_bytes,
		&t->submitted_total, &t->retired_total,
	};
	char path[4096], *text, *end;
	int i, ret;

	memset(t, 0, sizeof(*t));
	for (i = 0; i < ACCELCTL_TOTALS_NFIELDS; i++) {
		ret = accelctl_path(path, sizeof(path), roots->sysfs,
				    "/class/misc/%s/%s", ACCELCTL_MODULE,
				    accelctl_totals_names[i]);
		if (ret)
			return ret;
		ret = accelctl_read_file(path, &text, 4096);
		if (ret == -ENOENT)
			continue;	/* an older module: unseen */
		if (ret) {
			accelctl_err("cannot read %s: %s", path, strerror(-ret));
			return ret;
		}
		errno = 0;
		*field[i] = strtoull(text, &end, 10);
		if (errno || end == text || (*end && *end != '\n')) {
			text[strcspn(text, "\n")] = '\0';
			accelctl_err("%s: not a number: '%.32s'", path, text);
			free(text);
			return -EBADMSG;
		}
		t->seen |= 1U << i;
		free(text);
	}
	return 0;
}
