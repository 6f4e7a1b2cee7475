// SPDX-License-Identifier: GPL-2.0
/*
 * Which processes hold the device: an open file, or a mapping of a host
 * allocation (which keeps the file, and so the module, alive after close).
 *
 * Copyright (C) 2026 The accelstream authors
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "accelctl.h"

static unsigned int count_fds(const char *procdir, const char *dev)
{
	char path[4096], link[4096];
	struct dirent *de;
	unsigned int n = 0;
	ssize_t len;
	DIR *d;

	if (snprintf(path, sizeof(path), "%s/fd", procdir) >= (int)sizeof(path))
		return 0;
	d = opendir(path);
	if (!d)
		return 0;	/* gone, or not ours to look at */
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		if (snprintf(path, sizeof(path), "%s/fd/%s", procdir,
			     de->d_name) >= (int)sizeof(path))
			continue;
		len = readlink(path, link, sizeof(link) - 1);
		if (len < 0)
			continue;
		link[len] = '\0';
		if (!strcmp(link, dev))
			n++;
	}
	closedir(d);
	return n;
}

static unsigned int count_maps(const char *procdir, const char *dev)
{
	char path[4096], *text = NULL, *line, *save = NULL;
	size_t dlen = strlen(dev), llen;
	unsigned int n = 0;

	if (snprintf(path, sizeof(path), "%s/maps", procdir) >= (int)sizeof(path))
		return 0;
	if (accelctl_read_file(path, &text, 64 << 20))
		return 0;
	for (line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		llen = strlen(line);
		if (llen > dlen && !strcmp(line + llen - dlen, dev) &&
		    line[llen - dlen - 1] == ' ')
			n++;
	}
	free(text);
	return n;
}

static int holder_cmp(const void *a, const void *b)
{
	const struct accelctl_holder *ha = a, *hb = b;

	return (ha->pid > hb->pid) - (ha->pid < hb->pid);
}

static bool all_digits(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s))
			return false;
	return true;
}

int accelctl_find_holders(const struct accelctl_roots *roots,
			  struct accelctl_holder **out, size_t *n)
{
	struct accelctl_holder *h = NULL, *nh;
	char procdir[4096], path[4096], *comm;
	unsigned int fds, maps;
	struct dirent *de;
	size_t alloc = 0;
	int ret = 0;
	DIR *d;

	*out = NULL;
	*n = 0;
	d = opendir(roots->proc);
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		if (!all_digits(de->d_name))
			continue;
		if (snprintf(procdir, sizeof(procdir), "%s/%s", roots->proc,
			     de->d_name) >= (int)sizeof(procdir))
			continue;
		fds = count_fds(procdir, roots->dev);
		maps = count_maps(procdir, roots->dev);
		if (!fds && !maps)
			continue;
		if (*n == alloc) {
			alloc = alloc ? alloc * 2 : 8;
			nh = realloc(h, alloc * sizeof(*h));
			ret = -ENOMEM;
			if (!nh)
				goto out;
			h = nh;
			ret = 0;
		}
		memset(&h[*n], 0, sizeof(h[*n]));
		h[*n].pid = strtol(de->d_name, NULL, 10);
		h[*n].fds = fds;
		h[*n].maps = maps;
		if (snprintf(path, sizeof(path), "%s/comm", procdir) <
		    (int)sizeof(path) &&
		    accelctl_read_file(path, &comm, 4096) == 0) {
			comm[strcspn(comm, "\n")] = '\0';
			snprintf(h[*n].comm, sizeof(h[*n].comm), "%s", comm);
			free(comm);
		} else {
			strcpy(h[*n].comm, "?");
		}
		(*n)++;
	}
	qsort(h, *n, sizeof(*h), holder_cmp);
	*out = h;
	h = NULL;
out:
	if (ret)
		*n = 0;
	free(h);
	closedir(d);
	return ret;
}
