/*
 * report/tune_text.c - a tune result as text for people (fidelity, the
 * current setting, the best candidates and the line to paste) or as JSON
 * (layout in memprof-tune(1)).  Writes to the stream it is given; every
 * time figure is labelled modelled.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "report/json_util.h"
#include "report/tune_text.h"
#include "util/format.h"

static const char *const objectives[] = {"reserved", "calls", "time"};

static const char *bytes(char *buf, size_t n, uint64_t v)
{
	return mp_format_bytes(buf, n, (int64_t)v);
}

static void print_fidelity(FILE *f, const struct mp_tune_result *r)
{
	const struct mp_tune_fidelity *fi = &r->fid;
	char a[32], b[32];

	fprintf(f, "setting   %s: PYTORCH_CUDA_ALLOC_CONF=%s\n", fi->source,
	        r->current.conf[0] ? r->current.conf : "(defaults)");
	if (fi->n_seeded_segments)
		fprintf(f,
		        "window    the trace starts mid-run: the model starts from its %llu "
		        "recorded "
		        "segments\n",
		        (unsigned long long)fi->n_seeded_segments);
	if (!fi->has_recorded) {
		fprintf(f, "fidelity  unknown: %s\n", fi->why);
		return;
	}
	fprintf(f,
	        "fidelity  peak reserved %s modelled against %s recorded (%+.2f%%); segments %llu "
	        "against %llu; OOMs %llu against %llu\n",
	        bytes(a, sizeof a, fi->model_peak_reserved_bytes),
	        bytes(b, sizeof b, fi->recorded_peak_reserved_bytes), 100.0 * fi->error,
	        (unsigned long long)fi->model_segments, (unsigned long long)fi->recorded_segments,
	        (unsigned long long)fi->model_ooms, (unsigned long long)fi->recorded_ooms);
	if (!fi->reliable)
		fprintf(f,
		        "warning   the model is off by more than %.0f%% on this trace: its "
		        "predictions are not reliable\n          why: %s\n",
		        100.0 * MP_TUNE_RELIABLE_ERROR, fi->why);
}

static void print_row(FILE *f, const char *label, const struct mp_tune_figures *x,
                      const struct mp_tune_figures *cur)
{
	char a[32], b[32], c[32], t[32];
	int64_t saved = (int64_t)cur->peak_reserved_bytes - (int64_t)x->peak_reserved_bytes;

	fprintf(f, "  %-8s %13s %13s %9.3f %12s %10llu %8llu %11s %5llu\n", label,
	        bytes(a, sizeof a, x->peak_reserved_bytes), mp_format_bytes(b, sizeof b, saved),
	        x->frag_at_peak, bytes(c, sizeof c, x->free_at_peak_bytes),
	        (unsigned long long)x->n_malloc, (unsigned long long)x->n_map,
	        mp_format_duration(t, sizeof t, (int64_t)x->backend_ns),
	        (unsigned long long)x->n_ooms);
	fprintf(f, "           PYTORCH_CUDA_ALLOC_CONF=%s\n", x->conf[0] ? x->conf : "(defaults)");
}

static void print_capacity(FILE *f, const struct mp_tune_result *r)
{
	char a[32];
	size_t fit = 0;

	if (!r->capacity_bytes)
		return;
	for (size_t i = 0; i < r->n_ranked; i++)
		fit += r->ranked[i].n_ooms == 0;
	fprintf(f, "capacity  %s: the current setting %s", bytes(a, sizeof a, r->capacity_bytes),
	        r->current.n_ooms ? "runs out of memory" : "fits");
	if (r->current.n_ooms)
		fprintf(f, " (%llu OOMs)", (unsigned long long)r->current.n_ooms);
	if (r->current.n_ooms || r->fid.recorded_ooms)
		fprintf(f, "; %zu of the %zu best avoid every OOM", fit, r->n_ranked);
	fprintf(f, "\n");
}

int mp_tune_print_text(FILE *f, const char *path, const struct mp_tune_result *r)
{
	char wall[32];

	fprintf(f, "trace     %s (device %d)\n", path, (int)r->device);
	print_fidelity(f, r);
	print_capacity(f, r);
	fprintf(f,
	        "search    %zu of %zu settings replayed on %d thread%s in %s%s (%zu with the "
	        "figures of a better one, not shown); ranked by %s; times modelled "
	        "(memprof-replay(1), COST MODEL)\n\n",
	        r->n_evaluated, r->n_candidates, r->n_threads, r->n_threads == 1 ? "" : "s",
	        mp_format_duration(wall, sizeof wall, (int64_t)r->wall_ns),
	        r->budget_hit ? ", budget spent" : "", r->n_equivalent, objectives[r->objective]);
	fprintf(f, "  %-8s %13s %13s %9s %12s %10s %8s %11s %5s\n", "", "peak reserved", "saved",
	        "ext frag", "free in res.", "cudaMalloc", "cuMemMap", "time (mod.)", "OOMs");
	print_row(f, "current", &r->current, &r->current);
	for (size_t i = 0; i < r->n_ranked; i++) {
		char label[24];
		snprintf(label, sizeof label, "#%zu", i + 1);
		print_row(f, label, &r->ranked[i], &r->current);
	}
	if (mp_tune_recommended(r) == &r->current)
		fprintf(f, "\nbest      the current setting: no setting tried does better\n");
	else
		fprintf(f, "\nbest      export PYTORCH_CUDA_ALLOC_CONF=%s\n", r->ranked[0].conf);
	return ferror(f) ? -1 : 0;
}

static cJSON *figures_json(const struct mp_tune_figures *x, const struct mp_tune_figures *cur)
{
	cJSON *o = cJSON_CreateObject();

	if (!o)
		return NULL;
	cJSON_AddStringToObject(o, "conf", x->conf);
	mp_json_add_int(o, "peak_reserved_bytes", (int64_t)x->peak_reserved_bytes);
	mp_json_add_int(o, "saved_bytes",
	                (int64_t)cur->peak_reserved_bytes - (int64_t)x->peak_reserved_bytes);
	cJSON_AddNumberToObject(o, "external_fragmentation_at_peak", x->frag_at_peak);
	mp_json_add_int(o, "free_in_reserved_at_peak_bytes", (int64_t)x->free_at_peak_bytes);
	mp_json_add_int(o, "cudamalloc_calls", (int64_t)x->n_malloc);
	mp_json_add_int(o, "cumemmap_calls", (int64_t)x->n_map);
	mp_json_add_int(o, "backend_calls", (int64_t)x->n_backend_calls);
	mp_json_add_int(o, "backend_ns_modelled", (int64_t)x->backend_ns);
	mp_json_add_int(o, "ooms", (int64_t)x->n_ooms);
	return o;
}

static cJSON *fidelity_json(const struct mp_tune_result *r)
{
	cJSON *o = cJSON_CreateObject();
	const struct mp_tune_fidelity *fi = &r->fid;

	if (!o)
		return NULL;
	cJSON_AddStringToObject(o, "setting_source", fi->source);
	cJSON_AddBoolToObject(o, "recorded", fi->has_recorded);
	mp_json_add_int(o, "recorded_peak_reserved_bytes",
	                (int64_t)fi->recorded_peak_reserved_bytes);
	mp_json_add_int(o, "recorded_segments", (int64_t)fi->recorded_segments);
	mp_json_add_int(o, "recorded_ooms", (int64_t)fi->recorded_ooms);
	mp_json_add_int(o, "model_peak_reserved_bytes", (int64_t)fi->model_peak_reserved_bytes);
	mp_json_add_int(o, "model_segments", (int64_t)fi->model_segments);
	mp_json_add_int(o, "model_ooms", (int64_t)fi->model_ooms);
	mp_json_add_int(o, "seeded_segments", (int64_t)fi->n_seeded_segments);
	if (fi->has_recorded)
		cJSON_AddNumberToObject(o, "error", fi->error);
	else
		cJSON_AddNullToObject(o, "error");
	cJSON_AddBoolToObject(o, "reliable", fi->reliable);
	if (fi->why[0])
		cJSON_AddStringToObject(o, "why", fi->why);
	return o;
}

int mp_tune_print_json(FILE *f, const char *path, const struct mp_tune_result *r)
{
	cJSON *root = cJSON_CreateObject(), *best = cJSON_CreateArray();
	char *text;
	int rc;

	if (!root || !best) {
		cJSON_Delete(root);
		cJSON_Delete(best);
		return -1;
	}
	cJSON_AddStringToObject(root, "trace", path);
	mp_json_add_int(root, "device", r->device);
	cJSON_AddStringToObject(root, "objective", objectives[r->objective]);
	mp_json_add_int(root, "capacity_bytes", (int64_t)r->capacity_bytes);
	mp_json_add_int(root, "candidates", (int64_t)r->n_candidates);
	mp_json_add_int(root, "evaluated", (int64_t)r->n_evaluated);
	mp_json_add_int(root, "equivalent", (int64_t)r->n_equivalent);
	cJSON_AddBoolToObject(root, "budget_spent", r->budget_hit);
	mp_json_add_int(root, "threads", r->n_threads);
	mp_json_add_int(root, "wall_ns", (int64_t)r->wall_ns);
	cJSON_AddItemToObject(root, "fidelity", fidelity_json(r));
	cJSON_AddItemToObject(root, "current", figures_json(&r->current, &r->current));
	for (size_t i = 0; i < r->n_ranked; i++)
		cJSON_AddItemToArray(best, figures_json(&r->ranked[i], &r->current));
	cJSON_AddItemToObject(root, "best", best);
	cJSON_AddItemToObject(root, "recommended",
	                      figures_json(mp_tune_recommended(r), &r->current));
	text = cJSON_Print(root);
	cJSON_Delete(root);
	if (!text)
		return -1;
	rc = fprintf(f, "%s\n", text) < 0 ? -1 : 0;
	cJSON_free(text);
	return rc;
}
