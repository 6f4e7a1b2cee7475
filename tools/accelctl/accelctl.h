/* SPDX-License-Identifier: GPL-2.0 */
/*
 * accelctl: the admin tool of accelstream.
 *
 * Everything accelctl knows about the driver comes from its stable
 * interfaces: the module's sysfs directory, the misc device's attributes
 * (Documentation/ABI/testing/sysfs-class-misc-accelstream) and
 * ACCEL_IOC_QUERY on the device node. Module loading and unloading go
 * through libkmod; tables and JSON through libsmartcols.
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
 * @debugfs: a directory in the layout of the driver's debugfs files
 *	(ACCELCTL_DEBUGFS_ROOT); when set, contexts, streams and regions
 *	are read from there instead of through ACCEL_IOC_QUERY. NULL: unset.
 * @proc: procfs mount (ACCELCTL_PROC_ROOT, default /proc).
 * @dev: the device node holders are matched against (ACCELCTL_DEV).
 * @real_sysfs: @sysfs is the live /sys, so libkmod may be asked instead.
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
};

struct kmod_ctx;

/**
 * struct accelctl - the state of one run
 * @roots: see &struct accelctl_roots.
 * @kmod: the run's one libkmod context.
 * @json: print JSON instead of tables (-J, --json).
 * @raw: raw output: no alignment, special characters escaped (-r).
 * @noheadings: no header line (-n).
 * @bytes: sizes in bytes rather than KiB, MiB... (-b).
 * @columns: the -o/--output list, NULL for the command's default columns.
 * @interval: ps: seconds between refreshes (-l N, --watch), 0: once.
 * @count: ps: refreshes before exiting (-c N), 0: until interrupted.
 */
struct accelctl {
	struct accelctl_roots roots;
	struct kmod_ctx *kmod;
	bool json;
	bool raw;
	bool noheadings;
	bool bytes;
	const char *columns;
	unsigned int interval;
	unsigned int count;
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
extern const struct accelctl_cmd accelctl_cmd_devices;

/* Which options a subcommand takes besides -J/--json and -h/--help. */
#define ACCELCTL_OPT_TABLE	(1U << 0)	/* -o, -n, -r, -b */
#define ACCELCTL_OPT_LOOP	(1U << 1)	/* -l, --watch, -c */

/*
 * Parses a subcommand's options into @actl. Returns the index of its first
 * operand, -1 after --help (printed, with @columns_help), -2 after a usage
 * error (said in one line).
 */
int accelctl_cmd_opts(struct accelctl *actl, const struct accelctl_cmd *cmd,
		      const char *usage, unsigned int which,
		      void (*columns_help)(FILE *out), int argc, char *argv[]);
/* The one line for a wrong number of operands. */
void accelctl_usage_error(const char *usage, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

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

/* --------------------------------------- module totals (device sysfs) */

/**
 * struct accelctl_totals - the misc device's attributes
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
 * @seen: bit i set when attribute i (in the order above) was read.
 */
struct accelctl_totals {
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

#define ACCELCTL_TOTALS_NFIELDS	10

extern const char *const accelctl_totals_names[ACCELCTL_TOTALS_NFIELDS];
uint64_t accelctl_totals_field(const struct accelctl_totals *t, int i);
/* Reads class/misc/accelstream/ of sysfs; attributes it lacks stay unseen. */
int accelctl_totals_read(const struct accelctl_roots *roots,
			 struct accelctl_totals *t);

/* ------------------------------------ contexts, streams, regions (query) */

/**
 * struct accelctl_context - one context (struct accel_ctx_info)
 * @id: the context's number (ctx-<id> in debugfs).
 * @pid: the process that opened the file, 0 if not visible.
 * @uid: its effective uid; -1 if unknown (debugfs).
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
	int64_t uid;
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
 * struct accelctl_stream - one stream (struct accel_stream_info)
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
 * struct accelctl_region - one region (struct accel_region_info)
 * @handle: region handle.
 * @kind: "host", "host_alloc", "device" or "external".
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
 * The debugfs parsers take a file's whole text and return 0 or -errno
 * (-EBADMSG for a format they do not understand, with the line number in
 * *@badline), and a malloc'ed array in *@out.
 */
int accelctl_parse_contexts(const char *text, struct accelctl_context **out,
			    size_t *n, int *badline);
int accelctl_parse_streams(const char *text, struct accelctl_stream **out,
			   size_t *n, int *badline);
int accelctl_parse_regions(const char *text, struct accelctl_region **out,
			   size_t *n, int *badline);

/* Reads and parses <ACCELCTL_DEBUGFS_ROOT>/accelstream/...; says why not. */
int accelctl_debugfs_contexts(const struct accelctl_roots *roots,
			      struct accelctl_context **out, size_t *n);
int accelctl_debugfs_streams(const struct accelctl_roots *roots, uint64_t ctx,
			     struct accelctl_stream **out, size_t *n);
int accelctl_debugfs_regions(const struct accelctl_roots *roots, uint64_t ctx,
			     struct accelctl_region **out, size_t *n);

/*
 * The lists, from ACCEL_IOC_QUERY on the device node (or from debugfs
 * files when ACCELCTL_DEBUGFS_ROOT is set). They return 0 or -errno after
 * saying why on stderr, except -ENOENT for an unknown (or invisible)
 * context @ctx, which the caller words. accelctl's own context is left
 * out of the context list.
 */
int accelctl_list_contexts(const struct accelctl *actl,
			   struct accelctl_context **out, size_t *n);

/**
 * struct accelctl_device - one device (struct accel_device_info)
 * @index: its number.
 * @contexts: contexts whose current device it is.
 * @streams: streams that run on it.
 * @queued: descriptors queued on them.
 * @pinned_bytes: host bytes its contexts pin.
 * @device_bytes: its memory allocated.
 * @max_device_bytes: the per-context limit on it.
 * @retired: descriptors retired on it since load.
 */
struct accelctl_device {
	uint64_t index;
	uint64_t contexts;
	uint64_t streams;
	uint64_t queued;
	uint64_t pinned_bytes;
	uint64_t device_bytes;
	uint64_t max_device_bytes;
	uint64_t retired;
};

int accelctl_list_devices(const struct accelctl *actl,
			  struct accelctl_device **out, size_t *n);
int accelctl_list_streams(const struct accelctl *actl, uint64_t ctx,
			  struct accelctl_stream **out, size_t *n);
int accelctl_list_regions(const struct accelctl *actl, uint64_t ctx,
			  struct accelctl_region **out, size_t *n);

/* Says "not loaded" (and returns false) unless the module is live. */
bool accelctl_require_live(const struct accelctl *actl);

/* ----------------------------------------------------------------- util */

int accelctl_read_file(const char *path, char **text, size_t max);
int accelctl_path(char *buf, size_t len, const char *root, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
void accelctl_human_bytes(char *buf, size_t len, uint64_t bytes);
/* @s with invalid UTF-8 replaced by U+FFFD, in @buf (at most @len bytes). */
const char *accelctl_utf8_clean(char *buf, size_t len, const char *s);

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
