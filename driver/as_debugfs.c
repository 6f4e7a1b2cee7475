// SPDX-License-Identifier: GPL-2.0
/*
 * accelstream: debugfs, for debugging: no ABI (the stable interface of
 * admin tools is as_sysfs.c's). The layout is described in the admin
 * guide (Documentation/admin-guide/).
 */
#include <linux/debugfs.h>
#include <linux/seq_file.h>

#include "as_drv.h"

static struct dentry *as_dbg_root;

static int as_summary_show(struct seq_file *m, void *unused)
{
	struct as_totals t;

	as_totals(&t);
	seq_printf(m, "abi_version %u\n", ACCEL_ABI_VERSION);
	seq_printf(m, "contexts %llu\n", t.contexts);
	seq_printf(m, "streams %llu\n", t.streams);
	seq_printf(m, "events %llu\n", t.events);
	seq_printf(m, "regions %llu\n", t.regions);
	seq_printf(m, "queued %llu\n", t.queued);
	seq_printf(m, "pinned_bytes %llu\n", t.pinned_bytes);
	seq_printf(m, "device_bytes %llu\n", t.device_bytes);
	seq_printf(m, "submitted_total %llu\n", t.submitted_total);
	seq_printf(m, "retired_total %llu\n", t.retired_total);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(as_summary);

static int as_contexts_show(struct seq_file *m, void *unused)
{
	struct as_ctx *ctx;

	seq_puts(m, "id pid streams events regions queued pinned_bytes device_bytes executor failed_streams comm\n");
	mutex_lock(&as_ctx_list_lock);
	list_for_each_entry(ctx, &as_ctx_list, node) {
		char exec[24] = "soft";

		spin_lock(&ctx->lock);
		if (ctx->executor)
			snprintf(exec, sizeof(exec), "user:%d", ctx->executor_pid);
		seq_printf(m, "%u %d %u %u %u %llu %llu %llu %s %u %s\n",
			   ctx->id, ctx->tgid, ctx->nstreams, ctx->nevents,
			   ctx->nregions, ctx->queued, ctx->pinned_bytes,
			   ctx->device_bytes, exec, ctx->failed_streams,
			   ctx->comm);
		spin_unlock(&ctx->lock);
	}
	mutex_unlock(&as_ctx_list_lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(as_contexts);

static int as_streams_show(struct seq_file *m, void *unused)
{
	struct as_ctx *ctx = m->private;
	struct as_stream *s;

	seq_puts(m, "handle submitted completed queued priority flags error state\n");
	spin_lock(&ctx->lock);
	list_for_each_entry(s, &ctx->streams, node)
		seq_printf(m, "%u %llu %llu %u %d %u %d %s\n", s->obj.handle,
			   s->tl.submitted, s->tl.completed, s->q.count,
			   s->priority, s->flags, s->tl.error,
			   s->destroyed ? "destroyed" : "live");
	spin_unlock(&ctx->lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(as_streams);

static const char *const as_kind_names[] = {
	[AS_MEM_USER] = "host",
	[AS_MEM_HOST_ALLOC] = "host_alloc",
	[AS_MEM_DEVICE] = "device",
	[AS_MEM_EXTERNAL] = "external",
};

static int as_regions_show(struct seq_file *m, void *unused)
{
	struct as_ctx *ctx = m->private;
	struct as_mem *r;

	seq_puts(m, "handle kind size inflight flags state\n");
	spin_lock(&ctx->lock);
	list_for_each_entry(r, &ctx->regions, node)
		seq_printf(m, "%u %s %llu %llu %u %s\n", r->obj.handle,
			   as_kind_names[r->core.kind], r->core.size,
			   r->core.inflight, r->core.flags,
			   r->core.released ? "released" : "live");
	spin_unlock(&ctx->lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(as_regions);

/**
 * as_debugfs_init() - create /sys/kernel/debug/accelstream
 *
 * Debugfs failures are not fatal: the driver works without it.
 */
void as_debugfs_init(void)
{
	as_dbg_root = debugfs_create_dir(AS_DRV_NAME, NULL);
	debugfs_create_file("summary", 0444, as_dbg_root, NULL,
			    &as_summary_fops);
	debugfs_create_file("contexts", 0444, as_dbg_root, NULL,
			    &as_contexts_fops);
}

/**
 * as_debugfs_fini() - remove /sys/kernel/debug/accelstream
 */
void as_debugfs_fini(void)
{
	debugfs_remove_recursive(as_dbg_root);
}

/**
 * as_debugfs_ctx_init() - create a context's ctx-<id> directory
 * @ctx: the context.
 *
 * Context: as_ctx_list_lock held.
 */
void as_debugfs_ctx_init(struct as_ctx *ctx)
{
	char name[24];

	snprintf(name, sizeof(name), "ctx-%u", ctx->id);
	ctx->dbg = debugfs_create_dir(name, as_dbg_root);
	debugfs_create_file("streams", 0444, ctx->dbg, ctx, &as_streams_fops);
	debugfs_create_file("regions", 0444, ctx->dbg, ctx, &as_regions_fops);
}

/**
 * as_debugfs_ctx_fini() - remove a context's directory
 * @ctx: the context; readers of its files are gone when this returns.
 */
void as_debugfs_ctx_fini(struct as_ctx *ctx)
{
	debugfs_remove_recursive(ctx->dbg);
}
