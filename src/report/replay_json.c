/*
 * report/replay_json.c - the JSON rendering of 'memprof replay' (layout in
 * memprof-replay(1), versioned by MP_REPLAY_JSON_VERSION), built with cJSON
 * from plain results.  Integers are written exactly; figures that do not
 * exist (no baseline, no lower bound, no OOM) are null.  Under --mpi each
 * result has its "rank", and "ranks" and "job" (figures per pool) are added.
 */
#include "replay/cost_model.h"
#include "replay/driver_model.h"
#include "report/json_util.h"
#include "report/replay_out.h"
#include "util/error.h"

#include <cjson/cJSON.h>
#include <stdlib.h>

static void add_u64(cJSON *o, const char *key, uint64_t v)
{
	mp_json_add_int(o, key, v > INT64_MAX ? INT64_MAX : (int64_t)v);
}

static void add_diff(cJSON *o, const char *key, const struct mp_replay_result *b, uint64_t base,
                     uint64_t v)
{
	if (b)
		mp_json_add_int(o, key, (int64_t)base - (int64_t)v);
	else
		cJSON_AddNullToObject(o, key);
}

static const char *verify_name(int v)
{
	return v == MP_VERIFY_PASSED ? "passed" : v == MP_VERIFY_FAILED ? "failed" : "off";
}

static cJSON *first_oom_json(const struct mp_replay_result *r)
{
	cJSON *o;

	if (r->n_ooms == 0)
		return cJSON_CreateNull();
	o = cJSON_CreateObject();
	mp_json_add_int(o, "seq", r->first_oom.seq);
	add_u64(o, "request_bytes", r->first_oom.request_bytes);
	add_u64(o, "live_bytes", r->first_oom.live_bytes);
	add_u64(o, "reserved_bytes", r->first_oom.reserved_bytes);
	return o;
}

static cJSON *calls_json(const struct mp_replay_result *r)
{
	cJSON *o = cJSON_CreateObject();

	for (int c = 0; c < MP_COST_N_CALLS; c++)
		add_u64(o, mp_cost_call_name(c), r->n_calls[c]);
	return o;
}

static cJSON *stats_json(const struct mp_replay_result *r)
{
	cJSON *o = cJSON_CreateObject();
	char name[48];

	for (size_t i = 0; i < r->n_stats && i < MP_REPLAY_MAX_STATS; i++) {
		snprintf(name, sizeof(name), "%.*s", (int)sizeof(name) - 1, r->stats[i].name);
		cJSON_AddNumberToObject(o, name, r->stats[i].value);
	}
	return o;
}

static void add_memory(cJSON *o, const struct mp_replay_result *r, const struct mp_replay_result *b)
{
	add_u64(o, "peak_reserved_bytes", r->peak_reserved_bytes);
	mp_json_add_int(o, "peak_reserved_seq", r->peak_reserved_seq);
	add_u64(o, "lower_bound_bytes", r->lower_bound_bytes);
	cJSON_AddBoolToObject(o, "failed", mp_replay_failed(r));
	if (r->lower_bound_bytes > 0 && !mp_replay_failed(r))
		cJSON_AddNumberToObject(o, "ratio_to_lower_bound",
		                        (double)r->peak_reserved_bytes /
		                                (double)r->lower_bound_bytes);
	else
		cJSON_AddNullToObject(o, "ratio_to_lower_bound");
	add_diff(o, "saved_bytes", b, b ? b->peak_reserved_bytes : 0, r->peak_reserved_bytes);
	add_u64(o, "peak_live_bytes", r->peak_live_bytes);
	if (r->peak_live_bytes > 0) /* the bound on granted sizes, like with like for planned */
		cJSON_AddNumberToObject(o, "ratio_to_granted_bound",
		                        (double)r->peak_reserved_bytes /
		                                (double)r->peak_live_bytes);
	else
		cJSON_AddNullToObject(o, "ratio_to_granted_bound");
	add_u64(o, "end_reserved_bytes", r->end_reserved_bytes);
	cJSON_AddNumberToObject(o, "external_fragmentation_at_peak", r->frag_at_peak);
	add_u64(o, "free_in_reserved_at_peak_bytes", r->free_at_peak_bytes);
}

static void add_time(cJSON *o, const struct mp_replay_result *r, const struct mp_replay_result *b)
{
	cJSON_AddStringToObject(o, "time_is", r->time_measured ? "measured" : "modelled");
	add_u64(o, "alloc_ns_p50", r->alloc_ns_p50);
	add_u64(o, "alloc_ns_p99", r->alloc_ns_p99);
	add_u64(o, "alloc_ns_max", r->alloc_ns_max);
	add_u64(o, "free_ns_p50", r->free_ns_p50);
	add_u64(o, "free_ns_p99", r->free_ns_p99);
	add_u64(o, "total_ns", r->total_ns);
	add_u64(o, "host_ns", r->host_ns);
	add_u64(o, "backend_ns", r->backend_ns);
	add_u64(o, "replay_ns", r->replay_ns);
	add_u64(o, "replay_cpu_ns", r->replay_cpu_ns);
	add_u64(o, "runs", r->n_runs);
	add_u64(o, "host_ns_min", r->host_ns_min);
	add_u64(o, "host_ns_max", r->host_ns_max);
	add_u64(o, "backend_ns_min", r->backend_ns_min);
	add_u64(o, "backend_ns_max", r->backend_ns_max);
	add_diff(o, "time_saved_ns", b, b ? b->backend_ns : 0, r->backend_ns);
}

/* Its place among the pools of its device, best first, or why it did nothing. */
static void add_place(cJSON *o, const struct mp_replay_report *rep,
                      const struct mp_replay_result *r)
{
	size_t place = mp_replay_place(rep, r);
	char why[200];

	if (place)
		mp_json_add_int(o, "place", (int64_t)place);
	else
		cJSON_AddNullToObject(o, "place");
	cJSON_AddBoolToObject(o, "best", place == 1);
	if (mp_replay_no_effect(rep, r, why, sizeof(why)))
		cJSON_AddStringToObject(o, "no_effect", why);
	else
		cJSON_AddNullToObject(o, "no_effect");
}

static cJSON *result_json(const struct mp_replay_report *rep, const struct mp_replay_result *r)
{
	const struct mp_replay_result *b = mp_replay_compared_to(rep, r);
	cJSON *o = cJSON_CreateObject();

	cJSON_AddStringToObject(o, "pool", r->pool);
	cJSON_AddStringToObject(o, "backend", r->backend ? r->backend : "");
	mp_json_add_int(o, "device", r->device);
	if (rep->ranks)
		mp_json_add_int(o, "rank", rep->ranks[r - rep->results]);
	cJSON_AddStringToObject(o, "level", r->level == MP_LEVEL_SEGMENT ? "segment" : "block");
	add_memory(o, r, b);
	add_place(o, rep, r);
	add_u64(o, "backend_calls", r->backend_calls);
	cJSON_AddItemToObject(o, "calls", calls_json(r));
	add_u64(o, "n_allocs", r->n_allocs);
	add_u64(o, "n_frees", r->n_frees);
	add_u64(o, "pool_threshold_bytes", r->pool_threshold_bytes);
	add_u64(o, "n_below_threshold", r->n_below_threshold);
	add_time(o, r, b);
	add_u64(o, "bytes_copied", r->bytes_copied);
	add_u64(o, "bytes_set", r->bytes_set);
	add_u64(o, "copy_ns", r->call_ns[MP_COST_COPY]);
	add_u64(o, "memset_ns", r->call_ns[MP_COST_MEMSET]);
	add_u64(o, "blocks_shared", r->n_shared);
	add_u64(o, "ooms", r->n_ooms);
	cJSON_AddItemToObject(o, "first_oom", first_oom_json(r));
	cJSON_AddStringToObject(o, "verify", verify_name(r->verify));
	if (r->verify_msg[0])
		cJSON_AddStringToObject(o, "verify_message", r->verify_msg);
	else
		cJSON_AddNullToObject(o, "verify_message");
	cJSON_AddItemToObject(o, "pool_stats", stats_json(r));
	return o;
}

static cJSON *job_row_json(const struct mp_replay_job_row *j)
{
	cJSON *o = cJSON_CreateObject();

	cJSON_AddStringToObject(o, "pool", j->pool);
	mp_json_add_int(o, "ranks", j->n_ranks);
	add_u64(o, "peak_reserved_bytes", j->peak_reserved_bytes);
	mp_json_add_int(o, "peak_rank", j->peak_rank);
	mp_json_add_int(o, "peak_device", j->peak_device);
	add_u64(o, "lower_bound_bytes", j->lower_bound_bytes);
	if (j->has_saved)
		mp_json_add_int(o, "saved_bytes", j->saved_bytes);
	else
		cJSON_AddNullToObject(o, "saved_bytes");
	cJSON_AddStringToObject(o, "time_is", j->time_measured ? "measured" : "modelled");
	add_u64(o, "backend_ns", j->backend_ns);
	mp_json_add_int(o, "slowest_rank", j->slowest_rank);
	if (j->has_time_saved)
		mp_json_add_int(o, "time_saved_ns", j->time_saved_ns);
	else
		cJSON_AddNullToObject(o, "time_saved_ns");
	add_u64(o, "ooms", j->n_ooms);
	return o;
}

static int add_job(cJSON *root, const struct mp_replay_report *rep)
{
	struct mp_replay_job_row *rows = calloc(rep->n_results + 1, sizeof *rows);
	cJSON *job;
	size_t n;

	if (!rows)
		return MP_ENOMEM;
	n = mp_replay_job_rows(rep, rows, rep->n_results);
	mp_json_add_int(root, "ranks", rep->n_ranks);
	job = cJSON_AddArrayToObject(root, "job");
	for (size_t i = 0; i < n; i++)
		cJSON_AddItemToArray(job, job_row_json(&rows[i]));
	free(rows);
	return 0;
}

/* The driver granularity reserved bytes are counted in (modelled). */
static void add_driver_model(cJSON *root)
{
	cJSON *o = cJSON_AddObjectToObject(root, "driver_model");

	if (!o)
		return;
	cJSON_AddBoolToObject(o, "modelled", 1);
	add_u64(o, "page_bytes", MP_DRIVER_PAGE_BYTES);
	add_u64(o, "small_align_bytes", MP_DRIVER_ALIGN_BYTES);
}

/* The trace's own figures, one per device (and rank), as the first result
 * of the device carries them. */
static void add_recorded(cJSON *root, const struct mp_replay_report *rep)
{
	cJSON *a = cJSON_AddArrayToObject(root, "recorded");

	for (size_t i = 0; a && i < rep->n_results; i++) {
		const struct mp_replay_result *r = &rep->results[i];
		cJSON *o;

		if (i > 0 && r->device == rep->results[i - 1].device &&
		    (!rep->ranks || rep->ranks[i] == rep->ranks[i - 1]))
			continue;
		if (!(o = cJSON_CreateObject()))
			return;
		cJSON_AddItemToArray(a, o);
		mp_json_add_int(o, "device", r->device);
		if (rep->ranks)
			mp_json_add_int(o, "rank", rep->ranks[i]);
		cJSON_AddBoolToObject(o, "has_segments", r->trace_has_segments);
		if (!r->trace_has_segments) {
			cJSON_AddNullToObject(o, "peak_reserved_bytes");
			cJSON_AddNullToObject(o, "segments");
			cJSON_AddNullToObject(o, "segments_at_peak");
			continue;
		}
		add_u64(o, "peak_reserved_bytes", r->trace_peak_reserved_bytes);
		add_u64(o, "segments", r->trace_segments);
		add_u64(o, "segments_at_peak", r->trace_segments_at_peak);
	}
}

static void add_text_or_null(cJSON *o, const char *key, const char *v)
{
	if (v)
		cJSON_AddStringToObject(o, key, v);
	else
		cJSON_AddNullToObject(o, key);
}

int mp_replay_print_json(FILE *out, const struct mp_replay_report *rep)
{
	cJSON *root = cJSON_CreateObject(), *notes, *results;
	int rc = 0;

	if (!root)
		return MP_ENOMEM;
	mp_json_add_int(root, "version", MP_REPLAY_JSON_VERSION);
	add_text_or_null(root, "trace", rep->trace_path);
	add_text_or_null(root, "backend", rep->backend);
	add_text_or_null(root, "baseline", rep->baseline);
	if (rep->capacity_bytes)
		add_u64(root, "capacity_bytes", rep->capacity_bytes);
	else
		cJSON_AddNullToObject(root, "capacity_bytes");
	notes = cJSON_AddArrayToObject(root, "notes");
	for (size_t i = 0; i < rep->n_notes; i++)
		cJSON_AddItemToArray(notes, cJSON_CreateString(rep->notes[i]));
	add_driver_model(root);
	add_recorded(root, rep);
	results = cJSON_AddArrayToObject(root, "results");
	for (size_t i = 0; i < rep->n_results; i++)
		cJSON_AddItemToArray(results, result_json(rep, &rep->results[i]));
	if (rep->ranks && add_job(root, rep) < 0) {
		cJSON_Delete(root);
		return MP_ENOMEM;
	}
	rc = mp_json_write(out, root);
	cJSON_Delete(root);
	return rc;
}
