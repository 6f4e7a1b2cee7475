// SPDX-License-Identifier: GPL-2.0
/*
 * accelctl unload: remove the module, but first say who is using it
 * (rmmod's check_module_inuse, plus the processes holding the device).
 *
 * Copyright (C) 2026 The accelstream authors
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <libkmod.h>

#include "accelctl.h"
#include "out.h"

static const char usage[] = "unload [-J]";

static void print_holders(const struct accelctl *actl, long refcnt)
{
	struct accelctl_holder *h = NULL;
	size_t n = 0, i;
	int ret;

	ret = accelctl_find_holders(&actl->roots, &h, &n);
	if (ret < 0 || !n) {
		accelctl_err("%s is in use (refcount %ld) by processes accelctl cannot see%s",
			     ACCELCTL_MODULE, refcnt,
			     ret < 0 ? "" : " (run as root to see them)");
		goto out;
	}
	accelctl_err("%s is in use (refcount %ld): %s is held by:",
		     ACCELCTL_MODULE, refcnt, actl->roots.dev);
	for (i = 0; i < n; i++)
		fprintf(stderr, "accelctl:   pid %ld (%s): %u open file%s%s\n",
			h[i].pid, h[i].comm, h[i].fds, h[i].fds == 1 ? "" : "s",
			h[i].maps ? ", mapped" : "");
	fprintf(stderr, "accelctl: close the device or stop these processes, then unload again\n");
out:
	free(h);
}

/* 0 when nothing holds the module, else -EBUSY after saying who does. */
static int check_module_inuse(const struct accelctl *actl,
			      const struct accelctl_module *m)
{
	size_t i;

	if (m->nholders) {
		fflush(stdout);
		fprintf(stderr, "accelctl: error: %s is in use by module%s:",
			ACCELCTL_MODULE, m->nholders == 1 ? "" : "s");
		for (i = 0; i < m->nholders; i++)
			fprintf(stderr, " %s", m->holders[i]);
		fputc('\n', stderr);
		return -EBUSY;
	}
	if (m->refcnt > 0) {
		print_holders(actl, m->refcnt);
		return -EBUSY;
	}
	return 0;
}

static int do_unload(struct accelctl *actl, int argc, char *argv[])
{
	struct accelctl_module m = { 0 };
	struct kmod_module *mod = NULL;
	int idx, err, ret = EXIT_FAILURE;

	idx = accelctl_cmd_opts(actl, &accelctl_cmd_unload, usage, 0, NULL,
				argc, argv);
	if (idx < 0)
		return idx == -1 ? EXIT_SUCCESS : EXIT_FAILURE;
	if (idx < argc) {
		accelctl_usage_error(usage, "unload takes no arguments, not '%s'",
				     argv[idx]);
		return EXIT_FAILURE;
	}
	err = accelctl_module_read(actl, &m);
	if (err < 0) {
		accelctl_err("cannot read the module's state: %s", strerror(-err));
		goto out;
	}
	switch (m.state) {
	case MODSTATE_NOT_LOADED:
		accelctl_err("%s is not loaded", ACCELCTL_MODULE);
		goto out;
	case MODSTATE_BUILTIN:
		accelctl_err("%s is built into the kernel and cannot be unloaded",
			     ACCELCTL_MODULE);
		goto out;
	case MODSTATE_COMING:
	case MODSTATE_GOING:
		accelctl_err("%s is %s right now; try again", ACCELCTL_MODULE,
			     m.state == MODSTATE_COMING ? "loading" : "unloading");
		goto out;
	case MODSTATE_LIVE:
		break;
	}
	if (check_module_inuse(actl, &m) < 0)
		goto out;

	err = kmod_module_new_from_name(actl->kmod, ACCELCTL_MODULE, &mod);
	if (err < 0) {
		accelctl_err("%s: %s", ACCELCTL_MODULE, strerror(-err));
		goto out;
	}
	err = kmod_module_remove_module(mod, KMOD_REMOVE_NOWAIT);
	if (err < 0) {
		switch (-err) {
		case EPERM:
			accelctl_err("unloading %s needs root (CAP_SYS_MODULE)",
				     ACCELCTL_MODULE);
			break;
		case EBUSY:
		case EAGAIN:
			accelctl_err("%s became busy while unloading (opened meanwhile?); try again",
				     ACCELCTL_MODULE);
			break;
		case ENOENT:
			accelctl_err("%s is not loaded", ACCELCTL_MODULE);
			break;
		default:
			accelctl_err("could not unload %s: %s (%s)",
				     ACCELCTL_MODULE, strerror(-err),
				     accelctl_errno_name(err));
			break;
		}
		goto out;
	}
	if (actl->json) {
		if (out_module_json(actl, "unload", ACCELCTL_MODULE, NULL, NULL,
				    false))
			goto out;
	} else {
		printf("unloaded %s\n", ACCELCTL_MODULE);
	}
	ret = EXIT_SUCCESS;
out:
	kmod_module_unref(mod);
	accelctl_module_free(&m);
	return ret;
}

const struct accelctl_cmd accelctl_cmd_unload = {
	.name = "unload",
	.run = do_unload,
	.help = "remove the module; refuses while processes hold the device",
};
