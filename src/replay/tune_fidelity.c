/*
 * replay/tune_fidelity.c - one setting replayed through the caching pool on the
 * sim backend (mp_tune_replay), the ranking of two replays, and the
 * fidelity check: the trace's own setting against the peak reserved bytes,
 * segments and OOMs the trace recorded, with the likely cause when they
 * differ by more than MP_TUNE_RELIABLE_ERROR.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "replay/backend.h"
#include "replay/cost_model.h"
#include "replay/engine.h"
#include "replay/tune_internal.h"

int mp_tune_replay(const struct mp_tune_job *job, const struct mp_tune_setting *s, int frag,
                   uint64_t capacity_bytes, struct mp_tune_figures *f, uint64_t *n_seeded,
                   struct mp_error *err)
{
	struct mp_replay_result *res = malloc(sizeof *res);
	struct mp_tune_setting set = *s; /* s may lie in f */
	struct mp_tune_opts po;
	struct mp_replay_options ro = {.backend = mp_backend_find("sim"),
	                               .capacity_bytes = capacity_bytes,
	                               .no_frag = !frag};
	int rc;

	if (!res || !ro.backend) {
		free(res);
		return mp_err(err, MP_ENOMEM, "out of memory");
	}
	mp_tune_setting_options(&set, &po);
	ro.pool_opts = po.opts;
	ro.n_pool_opts = po.n;
	rc = mp_replay_run(job->in, job->d, job->pool, &ro, res, err);
	memset(f, 0, sizeof *f);
	f->setting = set;
	mp_tune_setting_format(&set, f->conf, sizeof f->conf);
	if (rc == 0) {
		f->peak_reserved_bytes = res->peak_reserved_bytes;
		f->free_at_peak_bytes = res->free_at_peak_bytes;
		f->frag_at_peak = res->frag_at_peak;
		f->n_malloc = res->n_calls[MP_COST_RESERVE];
		f->n_map = res->n_calls[MP_COST_MAP];
		f->n_backend_calls = res->backend_calls;
		f->backend_ns = res->backend_ns;
		f->n_ooms = res->n_ooms;
		if (n_seeded)
			*n_seeded = res->n_seeded_segments;
	}
	free(res);
	return rc;
}

const struct mp_tune_figures *mp_tune_recommended(const struct mp_tune_result *res)
{
	return res->n_ranked && mp_tune_better(&res->ranked[0], &res->current, res->objective)
	               ? &res->ranked[0]
	               : &res->current;
}

static int cmp3(uint64_t a0, uint64_t b0, uint64_t a1, uint64_t b1, uint64_t a2, uint64_t b2)
{
	if (a0 != b0)
		return a0 < b0 ? -1 : 1;
	if (a1 != b1)
		return a1 < b1 ? -1 : 1;
	return a2 < b2 ? -1 : a2 > b2;
}

int mp_tune_better(const struct mp_tune_figures *a, const struct mp_tune_figures *b, int objective)
{
	int c;

	if (a->n_ooms != b->n_ooms)
		return a->n_ooms < b->n_ooms;
	if (objective == MP_TUNE_CALLS)
		c = cmp3(a->n_backend_calls, b->n_backend_calls, a->peak_reserved_bytes,
		         b->peak_reserved_bytes, a->backend_ns, b->backend_ns);
	else if (objective == MP_TUNE_TIME)
		c = cmp3(a->backend_ns, b->backend_ns, a->peak_reserved_bytes,
		         b->peak_reserved_bytes, a->n_backend_calls, b->n_backend_calls);
	else
		c = cmp3(a->peak_reserved_bytes, b->peak_reserved_bytes, a->backend_ns,
		         b->backend_ns, a->n_backend_calls, b->n_backend_calls);
	if (c)
		return c < 0;
	/* ties: the shorter line (fewer settings to paste), then by text */
	if (strlen(a->conf) != strlen(b->conf))
		return strlen(a->conf) < strlen(b->conf);
	return strcmp(a->conf, b->conf) < 0;
}

/* The likely cause of a fidelity error beyond MP_TUNE_RELIABLE_ERROR. */
static void explain(const struct mp_tune_job *job, const struct mp_tune_result *res, char *why,
                    size_t n)
{
	const struct mp_replay_device *d = job->d;
	const struct mp_tune_fidelity *f = &res->fid;

	if (d->n_seed_skipped)
		snprintf(why, n,
		         "the trace starts mid-run and %zu of the segments it started with could "
		         "not be laid out from its blocks (overlapping blocks)",
		         d->n_seed_skipped);
	else if (f->recorded_ooms != f->model_ooms)
		snprintf(why, n,
		         "the trace recorded %llu OOMs and the model %llu: the memory the "
		         "device had left depended on more than this allocator (other processes, "
		         "the CUDA context); give the device's size with --capacity",
		         (unsigned long long)f->recorded_ooms, (unsigned long long)f->model_ooms);
	else if (res->current.setting.expandable)
		snprintf(why, n,
		         "expandable segments: PyTorch maps pages as its requests need them, "
		         "which the trace's map events show only in part");
	else if (d->n_preexisting && !d->n_seed_segments)
		snprintf(why, n,
		         "the trace starts mid-run without its segments' layout, so free space "
		         "left by the history before it is unknown");
	else
		snprintf(why, n,
		         "not known: the trace may hold memory from outside PyTorch's caching "
		         "allocator, CUDA-graph pools, or a setting changed while it ran");
}

int mp_tune_fidelity(const struct mp_tune_job *job, const struct mp_tune_setting *current,
                     struct mp_tune_result *res, struct mp_error *err)
{
	struct mp_tune_fidelity *f = &res->fid;
	const struct mp_replay_device *d = job->d;
	/* under the trace's own conditions: no capacity but the device's */
	int rc = mp_tune_replay(job, current, 1, 0, &res->current, &f->n_seeded_segments, err);
	char msg[sizeof err->msg];

	if (rc < 0) {
		snprintf(msg, sizeof msg, "%s", err->msg);
		return mp_err(err, err->code ? err->code : rc,
		              "the caching pool cannot replay '%s' under its own setting: %s",
		              job->path, msg);
	}
	f->has_recorded = d->has_segments && d->trace_peak_reserved_bytes > 0;
	f->recorded_peak_reserved_bytes = d->trace_peak_reserved_bytes;
	f->recorded_segments = d->trace_segments;
	f->recorded_ooms = d->trace_ooms;
	f->model_segments = res->current.n_malloc + res->current.n_map;
	f->model_peak_reserved_bytes = res->current.peak_reserved_bytes;
	f->model_ooms = res->current.n_ooms;
	if (!f->has_recorded) {
		snprintf(f->why, sizeof f->why,
		         "the trace recorded no segments, so the model cannot be checked against "
		         "it");
		return 0;
	}
	f->error = ((double)res->current.peak_reserved_bytes -
	            (double)f->recorded_peak_reserved_bytes) /
	           (double)f->recorded_peak_reserved_bytes;
	f->reliable = fabs(f->error) <= MP_TUNE_RELIABLE_ERROR;
	if (!f->reliable)
		explain(job, res, f->why, sizeof f->why);
	return 0;
}

int mp_tune_current(const struct mp_tune_job *job, const struct mp_tune_setting *current,
                    struct mp_tune_result *res, struct mp_error *err)
{
	if (!job->o->capacity_bytes)
		return 0;
	return mp_tune_replay(job, current, 1, job->o->capacity_bytes, &res->current, NULL, err);
}
