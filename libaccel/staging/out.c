// SPDX-License-Identifier: MIT
/*
 * The staging pool (stage.h): stream order between a pageable write and a
 * later pageable read (outs and patches), and copies with both sides
 * pageable.
 */
#include "stage.h"

/* ------------------------------------------------------------------ */
/* Outs: stream order between a pageable write and a later read        */
/* ------------------------------------------------------------------ */

struct stage_out *stage_out_add_locked(struct accel_staging *p,
				       uint32_t kstream, void *dst,
				       size_t len)
{
	struct stage_out *o = calloc(1, sizeof(*o));

	if (!o)
		return NULL;
	o->id = ++p->out_ids;
	o->start = (uintptr_t)dst;
	o->end = o->start + len;
	o->kstream = kstream;
	o->next = p->outs;
	p->outs = o;
	return o;
}

void stage_out_done_locked(struct accel_staging *p, struct stage_out *o)
{
	struct stage_out **pp;

	for (pp = &p->outs; *pp; pp = &(*pp)->next) {
		if (*pp == o) {
			*pp = o->next;
			free(o);
			pthread_cond_broadcast(&p->out_cond);
			return;
		}
	}
}

void stage_out_done(struct accel_staging *p, struct stage_out *o)
{
	pthread_mutex_lock(&p->lock);
	stage_out_done_locked(p, o);
	pthread_mutex_unlock(&p->lock);
}

/*
 * The bytes of [@src, @src + @len) that unfinished outs of @kstream will
 * write: *@patch (malloc'd, *@n entries, overlaps possible) and in *@dep
 * the newest such out's id. 0, or -ENOMEM.
 */
int stage_outs_overlap_locked(struct accel_staging *p, uint32_t kstream,
			      const void *src, size_t len,
			      struct stage_patch **patch, unsigned int *n,
			      uint64_t *dep)
{
	uintptr_t a = (uintptr_t)src, b = a + len;
	struct stage_out *o;

	*patch = NULL;
	*n = 0;
	*dep = 0;
	for (o = p->outs; o; o = o->next) {
		struct stage_patch *np;
		uintptr_t lo, hi;

		if (o->kstream != kstream || o->end <= a || o->start >= b)
			continue;
		lo = o->start > a ? o->start : a;
		hi = o->end < b ? o->end : b;
		np = realloc(*patch, (*n + 1) * sizeof(*np));
		if (!np) {
			free(*patch);
			*patch = NULL;
			*n = 0;
			return -ENOMEM;
		}
		*patch = np;
		np[*n].off = lo - a;
		np[*n].len = hi - lo;
		(*n)++;
		if (o->id > *dep)
			*dep = o->id;
	}
	return 0;
}

/* Outs of @job's stream up to its dep that overlap its source remain. */
static bool outs_pending_locked(struct accel_staging *p,
				const struct stage_job *job)
{
	uintptr_t a = (uintptr_t)job->src, b = a + job->len;
	struct stage_out *o;

	for (o = p->outs; o; o = o->next)
		if (o->kstream == job->kstream && o->id <= job->dep &&
		    o->end > a && o->start < b)
			return true;
	return false;
}

/* Read the patched bytes again, now that the outs wrote them. */
void stage_patch_apply(char *to, const char *src,
		       const struct stage_patch *patch, unsigned int n)
{
	unsigned int i;

	/* A source freed under its queued write is undefined, not a crash. */
	for (i = 0; i < n; i++)
		accel_copy_checked(to + patch[i].off, src + patch[i].off,
				   patch[i].len);
}

/* Until the outs this job's source depends on are done: false on stop. */
bool stage_job_wait_outs(struct accel_staging *p, struct stage_job *job)
{
	bool ok;

	pthread_mutex_lock(&p->lock);
	while (!p->stopping && outs_pending_locked(p, job))
		pthread_cond_wait(&p->out_cond, &p->lock);
	ok = !p->stopping;
	pthread_mutex_unlock(&p->lock);
	return ok;
}

/*
 * Both sides pageable: no device is involved, a host function copies. The
 * job holds a reference to its pool's context (pool->ctx).
 */
struct h2h_job {
	struct accel_staging *pool;
	void *dst;
	void *bytes;
	size_t len;
	uint32_t kstream;
	struct stage_out *out;	/* the write into dst, done once copied */
	const char *src;	/* the source, for the patches */
	struct stage_patch *patch;
	unsigned int npatch;
};

static void h2h_drop(void *arg)
{
	struct h2h_job *j = arg;

	if (j->out)
		stage_out_done(j->pool, j->out);
	accel_ctx_put(j->pool->ctx);
	free(j->patch);
	free(j->bytes);
	free(j);
}

static void h2h_fn(void *arg)
{
	struct h2h_job *j = arg;

	/* In stream order: the earlier writes into the source are done. */
	stage_patch_apply(j->bytes, j->src, j->patch, j->npatch);
	if (accel_copy_checked(j->dst, j->bytes, j->len))
		accel_check_dst_gone(j->dst, j->len, j->kstream);
	h2h_drop(j);
}

int stage_h2h_copy(struct accel_staging *p, uint32_t kstream, void *dst,
		   const void *src, size_t bytes)
{
	struct accel_ctx *ctx = p->ctx;
	struct h2h_job *j;
	uint64_t dep;
	int ret;

	j = calloc(1, sizeof(*j));
	if (!j)
		return -ENOMEM;
	j->bytes = malloc(bytes);
	if (!j->bytes) {
		free(j);
		return -ENOMEM;
	}
	stage_par_copy(p, j->bytes, src, bytes, false);
	j->pool = p;
	j->dst = dst;
	j->len = bytes;
	j->kstream = kstream;
	j->src = src;
	accel_obj_ref(&ctx->obj);
	pthread_mutex_lock(&p->lock);
	ret = stage_outs_overlap_locked(p, kstream, src, bytes, &j->patch,
					&j->npatch, &dep);
	if (!ret) {
		j->out = stage_out_add_locked(p, kstream, dst, bytes);
		if (!j->out)
			ret = -ENOMEM;
	}
	pthread_mutex_unlock(&p->lock);
	/* hostfn takes ctx->lock: launched without the pool lock. */
	if (!ret)
		ret = accel_hostfn_launch_drop(ctx, kstream, h2h_fn, h2h_drop,
					       j);
	if (ret)
		h2h_drop(j);
	return ret;
}
