/* SPDX-License-Identifier: GPL-2.0 */
/*
 * accelctl: the admin tool of accelstream.
 *
 * Everything accelctl knows about the driver comes from the files named in
 * Documentation/admin-guide/accelstream.rst (Inspecting: accelctl and debugfs); module loading and
 * unloading go through libkmod.
 *
 * Copyright (C) 2026 The accelstream authors
 */
#ifndef ACCELCTL_H
#define ACCELCTL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* The project's version, from VERSION through the Makefile. */
#ifndef ACCELCTL_VERSION
#error "ACCELCTL_VERSION is set by the Makefile from VERSION"
#endif
#define ACCELCTL_MODULE		"accelstream"

/* ---------------------------------------------------------------- roots */

/**
 * struct accelctl_roots - where the kernel's files are looked for
 * @sysfs: sysfs mount (ACCELCTL_SYSFS_ROOT, default /sys).
 * @debugfs: debugfs mount (ACCELCTL_DEBUGFS_ROOT, default /sys/kernel/debug).
 * @proc: procfs mount (ACCELCTL_PROC_ROOT, default /proc).
 * @dev: the device node holders are matched against (ACCELCTL_DEV).
 * @real_sysfs: @sysfs is the live /sys, so libkmod may be asked instead.
 * @real_debugfs: @debugfs is the default mount point (may be mounted).
 *
 * The overrides exist so that the tests can point accelctl at a fixture
 * tree; nothing else reads other files.
 */
struct accelctl_roots {
	const char *sysfs;
	const char *debugfs;
	const char *proc;
	const char *dev;
	bool real_sysfs;
	bool real_debugfs;
};

struct kmod_ctx;

/**
 * struct accelctl - the state of one run
 * @roots: see &struct accelctl_roots.
 * @kmod: the run's one libkmod context.
 * @json: print JSON instead of tables.
 */
struct accelctl {
	struct accelctl_roots roots;
	struct kmod_ctx *kmod;
	bool json;
};

void accelctl_roots_init(struct accelctl_roots *roots);

/* ------------------------------------------------------------- messages */

void accelctl_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void accelctl_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
const char *accelctl_errno_name(int err);

/* ------------------------------------------------------------- commands */

/**
 * struct accelctl_cmd - one subcommand (kmod's struct kmod_cmd)
 * @name: the word on the command line.
 * @run: returns EXIT_SUCCESS or EXIT_FAILURE.
 * @help: one line for --help.
 */
struct accelctl_cmd {
	const char *name;
	int (*run)(struct accelctl *actl, int argc, char *argv[]);
	const char *help;
};

extern const struct accelctl_cmd accelctl_cmd_load;
extern const struct accelctl_cmd accelctl_cmd_unload;
extern const struct accelctl_cmd accelctl_cmd_status;
extern const struct accelctl_cmd accelctl_cmd_ps;
extern const struct accelctl_cmd accelctl_cmd_stats;

/* Parses the options every subcommand takes (--json, --help). */
int accelctl_cmd_opts(struct accelctl *actl, const struct accelctl_cmd *cmd,
		      const char *usage, int argc, char *argv[]);

/* -------------------------------------------------------- module (sysfs) */

enum accelctl_modstate {
	MODSTATE_NOT_LOADED = 0,
	MODSTATE_BUILTIN,
	MODSTATE_LIVE,
	MODSTATE_COMING,
	MODSTATE_GOING,
};

const char *accelctl_modstate_str(enum accelctl_modstate state);

/**
 * struct accelctl_param - one module parameter as sysfs shows it
 * @name: file name under parameters/.
 * @value: its contents without the trailing newline; NULL if unreadable.
 */
struct accelctl_param {
	char *name;
	char *value;
};

/**
 * struct accelctl_module - what /sys/module/accelstream says
 * @state: load state.
 * @refcnt: open files and other users; -1 if unknown.
 * @holders: names of modules that depend on this one.
 * @nholders: entries of @holders.
 * @params: parameters, sorted by name.
 * @nparams: entries of @params.
 */
struct accelctl_module {
	enum accelctl_modstate state;
	long refcnt;
	char **holders;
	size_t nholders;
	struct accelctl_param *params;
	size_t nparams;
};

int accelctl_module_read(const struct accelctl *actl,
			 struct accelctl_module *mod);
void accelctl_module_free(struct accelctl_module *mod);

/* ---------------------------------------------------- debugfs (parsers) */

/**
 * struct accelctl_summary - debugfs summary
 * @abi_version: ACCEL_ABI_VERSION of the loaded module.
 * @contexts: open files.
 * @streams: streams alive, draining ones included.
 * @events: events alive.
 * @regions: regions alive, deferred releases included.
 * @queued: descriptors submitted and not retired.
 * @pinned_bytes: host bytes pinned.
 * @device_bytes: device bytes allocated.
 * @submitted_total: descriptors submitted since load.
 * @retired_total: descriptors retired since load.
 * @seen: bit i set when field i (in the order above) was present.
 */
struct accelctl_summary {
	uint64_t abi_version;
	uint64_t contexts;
	uint64_t streams;
	uint64_t events;
	uint64_t regions;
	uint64_t queued;
	uint64_t pinned_bytes;
	uint64_t device_bytes;
	uint64_t submitted_total;
	uint64_t retired_total;
	unsigned int seen;
};

#define ACCELCTL_SUMMARY_NFIELDS	10

/**
 * struct accelctl_context - one row of debugfs contexts
 * @id: the ctx-<id> directory.
 * @pid: the process that opened the file.
 * @streams: live streams.
 * @events: live events.
 * @regions: live regions.
 * @queued: descriptors not retired.
 * @pinned_bytes: host bytes pinned.
 * @device_bytes: device bytes allocated.
 * @executor: "soft" or "user:<pid>".
 * @failed_streams: streams in the sticky error state.
 * @comm: the opener's command name (may contain spaces).
 */
struct accelctl_context {
	uint64_t id;
	int64_t pid;
	uint64_t streams;
	uint64_t events;
	uint64_t regions;
	uint64_t queued;
	uint64_t pinned_bytes;
	uint64_t device_bytes;
	char executor[32];
	uint64_t failed_streams;
	char comm[64];
};

/**
 * struct accelctl_stream - one row of ctx-<id>/streams
 * @handle: stream handle.
 * @submitted: last submitted sequence number.
 * @completed: last completed sequence number.
 * @queued: descriptors not retired.
 * @priority: effective priority.
 * @flags: creation flags.
 * @error: 0 or a negative errno.
 * @state: "live" or "destroyed".
 */
struct accelctl_stream {
	uint64_t handle;
	uint64_t submitted;
	uint64_t completed;
	uint64_t queued;
	int64_t priority;
	uint64_t flags;
	int64_t error;
	char state[16];
};

/**
 * struct accelctl_region - one row of ctx-<id>/regions
 * @handle: region handle.
 * @kind: "host", "host_alloc" or "device".
 * @size: bytes.
 * @inflight: queued descriptors naming it.
 * @flags: region flags.
 * @state: "live" or "released".
 */
struct accelctl_region {
	uint64_t handle;
	char kind[16];
	uint64_t size;
	uint64_t inflight;
	uint64_t flags;
	char state[16];
};

/*
 * The parsers take a file's whole text and return 0 or -errno (-EBADMSG
 * for a format they do not understand, with the line number in *@badline).
 * The row parsers return a malloc'ed array in *@out.
 */
int accelctl_parse_summary(const char *text, struct accelctl_summary *sum,
			   int *badline);
int accelctl_parse_contexts(const char *text, struct accelctl_context **out,
			    size_t *n, int *badline);
int accelctl_parse_streams(const char *text, struct accelctl_stream **out,
			   size_t *n, int *badline);
int accelctl_parse_regions(const char *text, struct accelctl_region **out,
			   size_t *n, int *badline);

/* Reads debugfs accelstream/<name>; mounts debugfs first where it may. */
int accelctl_debugfs_read(const struct accelctl_roots *roots, const char *name,
			  char **text);
/* Says on stderr why reading or parsing debugfs accelstream/<name> failed. */
void accelctl_debugfs_error(const struct accelctl_roots *roots,
			    const char *name, int err, int badline);

/* ----------------------------------------------------------------- util */

int accelctl_read_file(const char *path, char **text, size_t max);
int accelctl_path(char *buf, size_t len, const char *root, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
void accelctl_human_bytes(char *buf, size_t len, uint64_t bytes);

/* -------------------------------------------------------- device holders */

/**
 * struct accelctl_holder - a process holding the device open or mapped
 * @pid: its pid.
 * @comm: its command name.
 * @fds: open files of the device it holds.
 * @maps: mappings of the device it holds.
 */
struct accelctl_holder {
	long pid;
	char comm[64];
	unsigned int fds;
	unsigned int maps;
};

int accelctl_find_holders(const struct accelctl_roots *roots,
			  struct accelctl_holder **out, size_t *n);

#endif /* ACCELCTL_H */
