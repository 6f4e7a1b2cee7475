// SPDX-License-Identifier: GPL-2.0
/*
 * The module's sysfs directory: state, reference count, holders and
 * parameters.
 *
 * On the live /sys, state, refcount and holders come from libkmod (the way
 * lsmod and rmmod ask); under a fixture root (ACCELCTL_SYSFS_ROOT) the
 * same files are read directly, since libkmod only knows /sys.
 *
 * Copyright (C) 2026 The accelstream authors
 */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libkmod.h>

#include "accelctl.h"

const char *accelctl_modstate_str(enum accelctl_modstate state)
{
	switch (state) {
	case MODSTATE_BUILTIN:
		return "builtin";
	case MODSTATE_LIVE:
		return "live";
	case MODSTATE_COMING:
		return "coming";
	case MODSTATE_GOING:
		return "going";
	case MODSTATE_NOT_LOADED:
		break;
	}
	return "not loaded";
}

static void chomp(char *s)
{
	size_t len = strlen(s);

	while (len && (s[len - 1] == '\n' || s[len - 1] == ' '))
		s[--len] = '\0';
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int param_cmp(const void *a, const void *b)
{
	const struct accelctl_param *pa = a, *pb = b;

	return strcmp(pa->name, pb->name);
}

/*
 * Lists the entries of @dir (no dot files) into a sorted array; a missing
 * directory is an empty list.
 */
static int list_dir(const char *dir, char ***out, size_t *n)
{
	struct dirent *de;
	char **names = NULL, **nn;
	size_t alloc = 0;
	int ret = 0;
	DIR *d;

	*out = NULL;
	*n = 0;
	d = opendir(dir);
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		if (*n == alloc) {
			alloc = alloc ? alloc * 2 : 8;
			nn = realloc(names, alloc * sizeof(*names));
			ret = -ENOMEM;
			if (!nn)
				goto out;
			names = nn;
		}
		names[*n] = strdup(de->d_name);
		ret = -ENOMEM;
		if (!names[*n])
			goto out;
		(*n)++;
		ret = 0;
	}
	qsort(names, *n, sizeof(*names), name_cmp);
	*out = names;
	names = NULL;
out:
	if (ret) {
		while (*n)
			free(names[--(*n)]);
		free(names);
	}
	closedir(d);
	return ret;
}

static enum accelctl_modstate state_from_str(const char *s)
{
	if (!strcmp(s, "live"))
		return MODSTATE_LIVE;
	if (!strcmp(s, "coming"))
		return MODSTATE_COMING;
	if (!strcmp(s, "going"))
		return MODSTATE_GOING;
	return MODSTATE_NOT_LOADED;
}

/* libkmod's view of the live module (lsmod, rmmod's check_module_inuse). */
static int module_read_kmod(const struct accelctl *actl,
			    struct accelctl_module *mod)
{
	struct kmod_module *km = NULL;
	struct kmod_list *holders = NULL, *l;
	int ret, state;

	ret = kmod_module_new_from_name(actl->kmod, ACCELCTL_MODULE, &km);
	if (ret < 0)
		goto out;
	state = kmod_module_get_initstate(km);
	ret = 0;
	if (state < 0)
		goto out;	/* not loaded */
	switch (state) {
	case KMOD_MODULE_BUILTIN:
		mod->state = MODSTATE_BUILTIN;
		break;
	case KMOD_MODULE_LIVE:
		mod->state = MODSTATE_LIVE;
		break;
	case KMOD_MODULE_COMING:
		mod->state = MODSTATE_COMING;
		break;
	case KMOD_MODULE_GOING:
		mod->state = MODSTATE_GOING;
		break;
	}
	if (mod->state == MODSTATE_BUILTIN)
		goto out;
	mod->refcnt = kmod_module_get_refcnt(km);
	holders = kmod_module_get_holders(km);
	kmod_list_foreach(l, holders) {
		struct kmod_module *h = kmod_module_get_module(l);
		char **nh = realloc(mod->holders,
				    (mod->nholders + 1) * sizeof(*nh));

		if (nh)
			mod->holders = nh;
		if (nh && (nh[mod->nholders] = strdup(kmod_module_get_name(h))))
			mod->nholders++;
		else
			ret = -ENOMEM;
		kmod_module_unref(h);
		if (ret)
			goto out;
	}
out:
	kmod_module_unref_list(holders);
	kmod_module_unref(km);
	return ret;
}

/* The same from files under a fixture root. */
static int module_read_files(const struct accelctl *actl,
			     struct accelctl_module *mod)
{
	const char *root = actl->roots.sysfs;
	char path[4096], *text = NULL;
	int ret;

	ret = accelctl_path(path, sizeof(path), root, "/module/%s", ACCELCTL_MODULE);
	if (ret)
		goto out;
	if (access(path, F_OK))
		goto out;	/* not loaded */
	ret = accelctl_path(path, sizeof(path), root, "/module/%s/initstate",
			    ACCELCTL_MODULE);
	if (ret)
		goto out;
	ret = accelctl_read_file(path, &text, 4096);
	if (ret == -ENOENT) {
		/* A module directory without initstate is built in. */
		mod->state = MODSTATE_BUILTIN;
		ret = 0;
		goto out;
	}
	if (ret)
		goto out;
	chomp(text);
	mod->state = state_from_str(text);
	free(text);
	text = NULL;

	ret = accelctl_path(path, sizeof(path), root, "/module/%s/refcnt",
			    ACCELCTL_MODULE);
	if (ret)
		goto out;
	if (accelctl_read_file(path, &text, 4096) == 0)
		mod->refcnt = strtol(text, NULL, 10);
	ret = accelctl_path(path, sizeof(path), root, "/module/%s/holders",
			    ACCELCTL_MODULE);
	if (ret)
		goto out;
	ret = list_dir(path, &mod->holders, &mod->nholders);
out:
	free(text);
	return ret;
}

static int module_read_params(const struct accelctl *actl,
			      struct accelctl_module *mod)
{
	char dir[4096], path[4096];
	char **names = NULL;
	size_t n = 0, i;
	int ret;

	ret = accelctl_path(dir, sizeof(dir), actl->roots.sysfs,
			    "/module/%s/parameters", ACCELCTL_MODULE);
	if (ret)
		goto out;
	ret = list_dir(dir, &names, &n);
	if (ret)
		goto out;
	mod->params = calloc(n ? n : 1, sizeof(*mod->params));
	ret = -ENOMEM;
	if (!mod->params)
		goto out;
	ret = 0;
	for (i = 0; i < n; i++) {
		struct accelctl_param *p = &mod->params[mod->nparams++];

		p->name = names[i];
		names[i] = NULL;
		/* Unreadable (0200) parameters keep a NULL value. */
		if (snprintf(path, sizeof(path), "%s/%s", dir, p->name) >=
		    (int)sizeof(path))
			continue;
		if (accelctl_read_file(path, &p->value, 65536) == 0)
			chomp(p->value);
	}
	qsort(mod->params, mod->nparams, sizeof(*mod->params), param_cmp);
out:
	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return ret;
}

int accelctl_module_read(const struct accelctl *actl,
			 struct accelctl_module *mod)
{
	int ret;

	memset(mod, 0, sizeof(*mod));
	mod->refcnt = -1;
	if (actl->roots.real_sysfs)
		ret = module_read_kmod(actl, mod);
	else
		ret = module_read_files(actl, mod);
	if (ret)
		goto out;
	if (mod->state != MODSTATE_NOT_LOADED)
		ret = module_read_params(actl, mod);
out:
	if (ret)
		accelctl_module_free(mod);
	return ret;
}

void accelctl_module_free(struct accelctl_module *mod)
{
	size_t i;

	for (i = 0; i < mod->nholders; i++)
		free(mod->holders[i]);
	free(mod->holders);
	for (i = 0; i < mod->nparams; i++) {
		free(mod->params[i].name);
		free(mod->params[i].value);
	}
	free(mod->params);
	mod->holders = NULL;
	mod->params = NULL;
	mod->nholders = mod->nparams = 0;
}

bool accelctl_require_live(const struct accelctl *actl)
{
	struct accelctl_module m;
	int err;

	err = accelctl_module_read(actl, &m);
	if (err < 0) {
		accelctl_err("cannot read the module's state: %s", strerror(-err));
		return false;
	}
	accelctl_module_free(&m);
	if (m.state == MODSTATE_LIVE)
		return true;
	if (m.state == MODSTATE_NOT_LOADED)
		accelctl_err("%s is not loaded (accelctl load)", ACCELCTL_MODULE);
	else
		accelctl_err("%s is %s, not live", ACCELCTL_MODULE,
			     accelctl_modstate_str(m.state));
	return false;
}
