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
#include <limits.h>
#include <locale.h>
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
	&accelctl_cmd_devices,
};

#define NCOMMANDS	(sizeof(commands) / sizeof(commands[0]))

static const struct option main_opts[] = {
	{ "json", no_argument, NULL, 'J' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ }
};

static void help(FILE *out)
{
	size_t i;

	fprintf(out,
		"Usage: accelctl [-J|--json] [--verbose] COMMAND [ARGS]\n"
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
		"  -J, --json     print JSON instead of tables\n"
		"  -v, --verbose  show libkmod's own messages\n"
		"  -h, --help     show this help (COMMAND --help: that command's)\n"
		"  -V, --version  show the version\n"
		"\n"
		"See accelctl(8).\n");
}

void accelctl_usage_error(const char *usage, const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fprintf(stderr, "accelctl: error: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, " (usage: accelctl %s)\n", usage);
}

/* A count of seconds or refreshes: 1 to INT_MAX. */
static int parse_count(const char *s, unsigned int *v)
{
	char *end;
	long n;

	errno = 0;
	n = strtol(s, &end, 10);
	if (errno || end == s || *end || n < 1 || n > INT_MAX)
		return -EINVAL;
	*v = n;
	return 0;
}

int accelctl_cmd_opts(struct accelctl *actl, const struct accelctl_cmd *cmd,
		      const char *usage, unsigned int which,
		      void (*columns_help)(FILE *out), int argc, char *argv[])
{
	enum { OPT_WATCH = 256 };
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'J' },
		{ "help", no_argument, NULL, 'h' },
		{ "output", required_argument, NULL, 'o' },
		{ "noheadings", no_argument, NULL, 'n' },
		{ "raw", no_argument, NULL, 'r' },
		{ "bytes", no_argument, NULL, 'b' },
		{ "loop", required_argument, NULL, 'l' },
		{ "watch", no_argument, NULL, OPT_WATCH },
		{ "count", required_argument, NULL, 'c' },
		{ }
	};
	bool table = which & ACCELCTL_OPT_TABLE, loop = which & ACCELCTL_OPT_LOOP;
	int c;

	/* 0, not 1: also forget main()'s "+" (stop at the first word). */
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":jJho:nrbl:c:", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
		case 'J':
			actl->json = true;
			continue;
		case 'h':
			printf("Usage: accelctl %s\n\n%s\n", usage, cmd->help);
			if (columns_help)
				columns_help(stdout);
			return -1;
		case 'o':
		case 'n':
		case 'r':
		case 'b':
			if (!table)
				break;
			if (c == 'o')
				actl->columns = optarg;
			actl->noheadings |= c == 'n';
			actl->raw |= c == 'r';
			actl->bytes |= c == 'b';
			continue;
		case 'l':
		case 'c':
			if (!loop)
				break;
			if (parse_count(optarg, c == 'l' ? &actl->interval :
					&actl->count)) {
				accelctl_usage_error(usage, "-%c takes a number above 0, not '%s'",
						     c, optarg);
				return -2;
			}
			continue;
		case OPT_WATCH:
			if (!loop)
				break;
			if (!actl->interval)
				actl->interval = 2;
			continue;
		case ':':
			accelctl_usage_error(usage, "option '%s' needs a value",
					     argv[optind - 1]);
			return -2;
		default:
			break;
		}
		/* Unknown to getopt ('?'), or not one of this command's. */
		if (c != '?')
			optopt = c == OPT_WATCH ? 0 : c;
		if (optopt)
			accelctl_usage_error(usage, "%s: unknown option '-%c'",
					     cmd->name, optopt);
		else
			accelctl_usage_error(usage, "%s: unknown option '%s'",
					     cmd->name, c == OPT_WATCH ? "--watch" :
					     argv[optind - 1]);
		return -2;
	}
	if (actl->count && !actl->interval)
		actl->interval = 2;
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

	setlocale(LC_ALL, "");
	accelctl_roots_init(&actl.roots);
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+jJvhV", main_opts, NULL)) != -1) {
		switch (c) {
		case 'j':
		case 'J':
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
			if (optopt)
				accelctl_err("unknown option '-%c' (see accelctl --help)",
					     optopt);
			else
				accelctl_err("unknown option '%s' (see accelctl --help)",
					     argv[optind - 1]);
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
