// SPDX-License-Identifier: GPL-2.0
/*
 * accelctl: load, unload and inspect the accelstream driver.
 *
 * The shape is kmod's: one table of subcommands, one kmod_ctx per run
 * created here and released here, each subcommand in its own file.
 *
 * Copyright (C) 2026 The accelstream authors
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <libkmod.h>

#include "accelctl.h"
#include "../../uapi/accelstream.h"

static const struct accelctl_cmd *const commands[] = {
	&accelctl_cmd_load,
	&accelctl_cmd_unload,
	&accelctl_cmd_status,
	&accelctl_cmd_ps,
	&accelctl_cmd_stats,
};

#define NCOMMANDS	(sizeof(commands) / sizeof(commands[0]))

static const struct option main_opts[] = {
	{ "json", no_argument, NULL, 'j' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ }
};

static void help(FILE *out)
{
	size_t i;

	fprintf(out,
		"Usage: accelctl [--json] [--verbose] COMMAND [ARGS]\n"
		"       accelctl --help | --version\n"
		"\n"
		"Load, unload and inspect the accelstream driver.\n"
		"\n"
		"Commands:\n");
	for (i = 0; i < NCOMMANDS; i++)
		fprintf(out, "  %-8s %s\n", commands[i]->name, commands[i]->help);
	fprintf(out,
		"\n"
		"Options:\n"
		"  -j, --json     print JSON instead of tables\n"
		"  -v, --verbose  show libkmod's own messages\n"
		"  -h, --help     show this help (COMMAND --help: that command's)\n"
		"  -V, --version  show the version\n"
		"\n"
		"See accelctl(8).\n");
}

int accelctl_cmd_opts(struct accelctl *actl, const struct accelctl_cmd *cmd,
		      const char *usage, int argc, char *argv[])
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ }
	};
	int c;

	/* 0, not 1: also forget main()'s "+" (stop at the first word). */
	optind = 0;
	while ((c = getopt_long(argc, argv, "jh", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			actl->json = true;
			break;
		case 'h':
			printf("Usage: accelctl %s\n\n%s\n", usage, cmd->help);
			return -1;
		default:
			fprintf(stderr, "Usage: accelctl %s\n", usage);
			return -2;
		}
	}
	return optind;
}

static bool verbose;

static void log_kmod(void *data, int priority, const char *file, int line,
		     const char *fn, const char *format, va_list args)
{
	if (!verbose)
		return;
	fprintf(stderr, "accelctl: libkmod: ");
	vfprintf(stderr, format, args);
}

int main(int argc, char *argv[])
{
	struct accelctl actl = { 0 };
	const struct accelctl_cmd *cmd = NULL;
	int c, ret = EXIT_FAILURE;
	size_t i;

	accelctl_roots_init(&actl.roots);
	while ((c = getopt_long(argc, argv, "+jvhV", main_opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			actl.json = true;
			break;
		case 'v':
			verbose = true;
			break;
		case 'h':
			help(stdout);
			return EXIT_SUCCESS;
		case 'V':
			printf("accelctl %s (accelstream ABI %d, %s)\n",
			       ACCELCTL_VERSION, ACCEL_ABI_VERSION, "libkmod");
			return EXIT_SUCCESS;
		default:
			help(stderr);
			return EXIT_FAILURE;
		}
	}
	if (optind >= argc) {
		help(stderr);
		return EXIT_FAILURE;
	}
	for (i = 0; i < NCOMMANDS; i++)
		if (!strcmp(argv[optind], commands[i]->name))
			cmd = commands[i];
	if (!cmd) {
		accelctl_err("unknown command '%s' (see accelctl --help)",
			     argv[optind]);
		return EXIT_FAILURE;
	}

	actl.kmod = kmod_new(NULL, NULL);
	if (!actl.kmod) {
		accelctl_err("libkmod could not start (kmod_new failed)");
		goto out;
	}
	kmod_set_log_fn(actl.kmod, log_kmod, NULL);
	ret = cmd->run(&actl, argc - optind, argv + optind);
out:
	kmod_unref(actl.kmod);
	return ret;
}
