// SPDX-License-Identifier: GPL-2.0
/*
 * accelctl load: insert the module from a .ko path or by name (insmod's
 * job, with modprobe's lookup), explaining the usual failures in one line.
 *
 * Copyright (C) 2026 The accelstream authors
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <libkmod.h>

#include "accelctl.h"
#include "out.h"

static const char usage[] = "load [-J] [PATH|NAME] [param=value...]";

static bool ends_with(const char *s, const char *suffix)
{
	size_t ls = strlen(s), lx = strlen(suffix);

	return ls >= lx && !strcmp(s + ls - lx, suffix);
}

/* A path names a file; anything else is a module name to look up. */
static bool is_path(const char *arg)
{
	return strchr(arg, '/') || ends_with(arg, ".ko") ||
	       ends_with(arg, ".ko.xz") || ends_with(arg, ".ko.gz") ||
	       ends_with(arg, ".ko.zst");
}

/* Joins param=value words; a value with spaces is quoted for the kernel. */
static char *join_options(int argc, char *argv[])
{
	size_t len = 1;
	char *opts, *p;
	int i;

	for (i = 0; i < argc; i++)
		len += strlen(argv[i]) + 3;
	opts = malloc(len);
	if (!opts)
		return NULL;
	p = opts;
	*p = '\0';
	for (i = 0; i < argc; i++) {
		const char *eq = strchr(argv[i], '=');

		if (i)
			*p++ = ' ';
		if (eq && strchr(eq, ' '))
			p += sprintf(p, "%.*s\"%s\"", (int)(eq - argv[i] + 1),
				     argv[i], eq + 1);
		else
			p += sprintf(p, "%s", argv[i]);
	}
	return opts;
}

static void explain_insert_error(int err, const char *what, const char *file,
				 const char *opts)
{
	struct utsname u;

	switch (-err) {
	case EPERM:
		accelctl_err("loading %s needs root (CAP_SYS_MODULE), or module loading is disabled",
			     what);
		break;
	case EEXIST:
		accelctl_err("%s is already loaded (accelctl unload first)", what);
		break;
	case ENOEXEC:
		if (uname(&u))
			strcpy(u.release, "?");
		accelctl_err("%s is not a valid module for this kernel: not a .ko, or it was built for a different kernel (running %s; see dmesg)",
			     file, u.release);
		break;
	case ENOENT:
		accelctl_err("%s: unknown symbol in module, or unknown parameter in '%s' (see dmesg)",
			     what, opts);
		break;
	case EINVAL:
		accelctl_err("%s: invalid parameters '%s' (see dmesg)", what, opts);
		break;
	case EKEYREJECTED:
	case EBADMSG:
		accelctl_err("%s: module signature rejected (see dmesg)", what);
		break;
	case EBUSY:
		accelctl_err("%s is being loaded or unloaded right now; try again",
			     what);
		break;
	case ENOSYS:
		if (uname(&u))
			strcpy(u.release, "?");
		accelctl_err("this kernel (%s) cannot load modules (init_module: ENOSYS); run accelstream in a VM with a Debian kernel, as 'make run' does, or use ACCEL_TRANSPORT=inproc",
			     u.release);
		break;
	default:
		accelctl_err("%s: could not load: %s (%s)", file, strerror(-err),
			     accelctl_errno_name(err));
		break;
	}
}

/* Parameter names compare as the kernel's parameq() does: '-' is '_'. */
static bool param_eq(const char *a, size_t alen, const char *b, size_t blen)
{
	size_t i;

	if (alen != blen)
		return false;
	for (i = 0; i < alen; i++)
		if ((a[i] == '-' ? '_' : a[i]) != (b[i] == '-' ? '_' : b[i]))
			return false;
	return true;
}

/*
 * The kernel ignores unknown parameters with a line in dmesg and loads
 * anyway: check every name against the module's (modinfo's parmtype
 * entries) before loading, and say which names it has. A file whose
 * modinfo cannot be read is left to the insertion, which fails on it
 * with the error that explain_insert_error() words.
 */
static int check_params(struct kmod_module *mod, int argc, char *argv[])
{
	struct kmod_list *info = NULL, *l;
	char known[1024] = "";
	size_t klen = 0;
	int i, ret = 0;

	/* Unreadable (not a module, say): the insertion's error explains it. */
	if (kmod_module_get_info(mod, &info) < 0)
		return 0;
	kmod_list_foreach(l, info) {
		const char *key = kmod_module_info_get_key(l);
		const char *val = kmod_module_info_get_value(l);
		const char *colon = val ? strchr(val, ':') : NULL;

		/* parmtype names every parameter (parm only described ones). */
		if (strcmp(key, "parmtype") || !colon ||
		    klen + (colon - val) + 3 >= sizeof(known))
			continue;
		klen += snprintf(known + klen, sizeof(known) - klen, "%s%.*s",
				 klen ? ", " : "", (int)(colon - val), val);
	}
	for (i = 0; i < argc && !ret; i++) {
		const char *eq = strchr(argv[i], '=');
		size_t len = eq ? (size_t)(eq - argv[i]) : strlen(argv[i]);
		bool found = false;

		kmod_list_foreach(l, info) {
			const char *val = kmod_module_info_get_value(l);
			const char *colon = val ? strchr(val, ':') : NULL;

			if (!strcmp(kmod_module_info_get_key(l), "parmtype") &&
			    colon && param_eq(argv[i], len, val, colon - val))
				found = true;
		}
		if (!found) {
			accelctl_err("%s has no parameter '%.*s' (it has: %s); nothing loaded",
				     kmod_module_get_name(mod), (int)len, argv[i],
				     klen ? known : "none");
			ret = -EINVAL;
		}
	}
	kmod_module_info_free_list(info);
	return ret;
}

/* Finds the module @arg names: a file, or an installed module's name. */
static int module_from_arg(struct accelctl *actl, const char *arg,
			   struct kmod_module **mod)
{
	struct kmod_list *list = NULL;
	struct utsname u;
	int ret;

	*mod = NULL;
	if (is_path(arg)) {
		ret = kmod_module_new_from_path(actl->kmod, arg, mod);
		if (ret == -ENOENT)
			accelctl_err("%s: module file not found", arg);
		else if (ret < 0)
			accelctl_err("%s: cannot use this file: %s", arg,
				     strerror(-ret));
		goto out;
	}
	ret = kmod_module_new_from_lookup(actl->kmod, arg, &list);
	if (ret < 0) {
		accelctl_err("%s: module lookup failed: %s", arg, strerror(-ret));
		goto out;
	}
	if (!list) {
		if (uname(&u))
			strcpy(u.release, "?");
		accelctl_err("module %s not found in /lib/modules/%s (give the path to the .ko)",
			     arg, u.release);
		ret = -ENOENT;
		goto out;
	}
	*mod = kmod_module_get_module(list);
	if (!kmod_module_get_path(*mod) &&
	    kmod_module_get_initstate(*mod) != KMOD_MODULE_BUILTIN) {
		accelctl_err("module %s not found in /lib/modules (give the path to the .ko)",
			     arg);
		kmod_module_unref(*mod);
		*mod = NULL;
		ret = -ENOENT;
	}
out:
	kmod_module_unref_list(list);
	return ret;
}

static int do_load(struct accelctl *actl, int argc, char *argv[])
{
	struct kmod_module *mod = NULL;
	const char *target = ACCELCTL_MODULE, *name;
	char *opts = NULL;
	int idx, first, ret = EXIT_FAILURE, err;

	idx = accelctl_cmd_opts(actl, &accelctl_cmd_load, usage, 0, NULL,
				argc, argv);
	if (idx < 0)
		return idx == -1 ? EXIT_SUCCESS : EXIT_FAILURE;
	first = idx;
	if (first < argc && (!strchr(argv[first], '=') || is_path(argv[first])))
		target = argv[first++];
	opts = join_options(argc - first, argv + first);
	if (!opts) {
		accelctl_err("out of memory");
		goto out;
	}
	if (module_from_arg(actl, target, &mod) < 0)
		goto out;
	name = kmod_module_get_name(mod);
	if (kmod_module_get_initstate(mod) == KMOD_MODULE_BUILTIN) {
		accelctl_err("%s is built into the kernel", name);
		goto out;
	}
	if (check_params(mod, argc - first, argv + first))
		goto out;
	err = kmod_module_insert_module(mod, 0, opts);
	if (err < 0) {
		explain_insert_error(err, name, kmod_module_get_path(mod) ?: target,
				     opts);
		goto out;
	}
	if (actl->json) {
		if (out_module_json(actl, "load", name,
				    kmod_module_get_path(mod) ?: target, opts,
				    true))
			goto out;
	} else {
		printf("loaded %s from %s%s%s\n", name,
		       kmod_module_get_path(mod) ?: target,
		       *opts ? " with " : "", opts);
	}
	ret = EXIT_SUCCESS;
out:
	kmod_module_unref(mod);
	free(opts);
	return ret;
}

const struct accelctl_cmd accelctl_cmd_load = {
	.name = "load",
	.run = do_load,
	.help = "insert the module (default: the installed accelstream)",
};
