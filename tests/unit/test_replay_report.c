/*
 * tests/unit/test_replay_report.c - src/report/replay_*.c on hand-made
 * results: the JSON parsed back and compared value by value (integers
 * exact beyond 2^53), the baseline matched by device, the stored metrics
 * equal to the JSON keys, and the text naming modelled or measured and
 * the first OOM in a sentence.
 */
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "replay/cost_model.h"
#include "report/replay.h"

#define GiB (1ull << 30)
#define MiB (1ull << 20)

static struct mp_replay_result res[4];
static const char *const notes[] = {"device 1 has no block events: replayed at segment level"};

/* Device 0: caching then direct; device 1: direct then caching (baseline after). */
static void make_results(int measured)
{
	memset(res, 0, sizeof(res));
	snprintf(res[0].pool, sizeof(res[0].pool), "caching");
	res[0].device = 0;
	res[0].peak_reserved_bytes = 3 * GiB;
	res[0].lower_bound_bytes = 2 * GiB;
	res[0].total_ns = 1000;
	res[0].backend_ns = 1000;
	res[0].n_calls[MP_COST_RESERVE] = 7;
	res[0].n_calls[MP_COST_RELEASE] = 2;
	res[0].backend_calls = 9;

	snprintf(res[1].pool, sizeof(res[1].pool), "direct");
	res[1].device = 0;
	res[1].peak_reserved_bytes = 5 * GiB;
	res[1].peak_reserved_seq = 77;
	res[1].lower_bound_bytes = 2 * GiB;
	res[1].peak_live_bytes = 2 * GiB + 512;
	res[1].end_reserved_bytes = 1 * MiB;
	res[1].free_at_peak_bytes = 3 * GiB - 4096;
	res[1].frag_at_peak = 0.375;
	res[1].n_allocs = 100;
	res[1].n_frees = 99;
	res[1].backend_calls = 199;
	res[1].n_calls[MP_COST_RESERVE] = 100;
	res[1].n_calls[MP_COST_RELEASE] = 99;
	res[1].alloc_ns_p50 = 1500;
	res[1].alloc_ns_p99 = 2500000;
	res[1].alloc_ns_max = 3000000;
	res[1].free_ns_p50 = 11;
	res[1].free_ns_p99 = 12;
	res[1].total_ns = 1500;
	res[1].host_ns = 300;
	res[1].backend_ns = 1200;
	res[1].bytes_copied = 4096;
	res[1].bytes_set = 8192;
	res[1].n_ooms = 3;
	res[1].first_oom.seq = 1234;
	res[1].first_oom.request_bytes = 2 * GiB;
	res[1].first_oom.live_bytes = 37 * GiB + GiB / 2;
	res[1].first_oom.reserved_bytes = 39 * GiB;
	res[1].verify = MP_VERIFY_FAILED;
	snprintf(res[1].verify_msg, sizeof(res[1].verify_msg), "block at event 9 overlaps event 5");
	snprintf(res[1].stats[0].name, sizeof(res[1].stats[0].name), "segments");
	res[1].stats[0].value = 17;
	snprintf(res[1].stats[0].unit, sizeof(res[1].stats[0].unit), "count");
	snprintf(res[1].stats[1].name, sizeof(res[1].stats[1].name), "efficiency");
	res[1].stats[1].value = 0.5;
	snprintf(res[1].stats[1].unit, sizeof(res[1].stats[1].unit), "ratio");
	res[1].n_stats = 2;

	snprintf(res[2].pool, sizeof(res[2].pool), "direct");
	res[2].device = 1;
	res[2].level = MP_LEVEL_SEGMENT;
	res[2].peak_reserved_bytes = (1ull << 53) + 1; /* not a double */
	res[2].lower_bound_bytes = 0;
	res[2].total_ns = 400;
	res[2].backend_ns = 400;
	res[2].verify = MP_VERIFY_PASSED;

	snprintf(res[3].pool, sizeof(res[3].pool), "caching");
	res[3].device = 1;
	res[3].level = MP_LEVEL_SEGMENT;
	res[3].peak_reserved_bytes = 10 * GiB;
	res[3].total_ns = 900;
	res[3].backend_ns = 900;
	res[3].verify = MP_VERIFY_PASSED;
	for (int i = 0; i < 4; i++) {
		res[i].backend = measured ? "cuda" : "sim";
		res[i].time_measured = measured;
		res[i].n_runs = 1;
		res[i].host_ns_min = res[i].host_ns_max = res[i].host_ns;
		res[i].backend_ns_min = res[i].backend_ns_max = res[i].backend_ns;
	}
}

static struct mp_replay_report make_report(const char *baseline)
{
	struct mp_replay_report rep = {.trace_path = "run.db",
	                               .backend = "sim",
	                               .baseline = baseline,
	                               .results = res,
	                               .n_results = 4,
	                               .notes = notes,
	                               .n_notes = 1};

	return rep;
}

/* Print with f into a string (malloc'd). */
static char *render(int (*f)(FILE *, const struct mp_replay_report *),
                    const struct mp_replay_report *rep)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);

	cr_assert_not_null(out);
	cr_assert_eq(f(out, rep), 0);
	cr_assert_eq(fclose(out), 0);
	return buf;
}

static double num(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	cr_assert(cJSON_IsNumber(v), "'%s' is not a number", key);
	return v->valuedouble;
}

static const char *str(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	cr_assert(cJSON_IsString(v), "'%s' is not a string", key);
	return v->valuestring;
}

static int is_null(const cJSON *o, const char *key)
{
	return cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(o, key));
}

static cJSON *parse_json(const struct mp_replay_report *rep, char **text)
{
	cJSON *root;

	*text = render(mp_replay_print_json, rep);
	root = cJSON_Parse(*text);
	cr_assert_not_null(root, "not JSON:\n%s", *text);
	return root;
}

Test(replay_report, baseline_matched_by_device)
{
	struct mp_replay_report rep;

	make_results(0);
	rep = make_report("caching");
	cr_assert_eq(mp_replay_baseline_of(&rep, &res[0]), &res[0]);
	cr_assert_eq(mp_replay_baseline_of(&rep, &res[1]), &res[0]);
	cr_assert_eq(mp_replay_baseline_of(&rep, &res[2]), &res[3]);
	cr_assert_eq(mp_replay_baseline_of(&rep, &res[3]), &res[3]);
	rep = make_report("direct");
	cr_assert_eq(mp_replay_baseline_of(&rep, &res[0]), &res[1]);
	cr_assert_eq(mp_replay_baseline_of(&rep, &res[3]), &res[2]);
	rep = make_report("async");
	cr_assert_null(mp_replay_baseline_of(&rep, &res[1]));
	rep = make_report(NULL);
	cr_assert_null(mp_replay_baseline_of(&rep, &res[1]));
}

Test(replay_report, json_top_level)
{
	struct mp_replay_report rep;
	cJSON *root, *a;
	char *text;

	make_results(0);
	rep = make_report("caching");
	root = parse_json(&rep, &text);
	cr_assert_eq(num(root, "version"), MP_REPLAY_JSON_VERSION);
	cr_assert_str_eq(str(root, "trace"), "run.db");
	cr_assert_str_eq(str(root, "backend"), "sim");
	cr_assert_str_eq(str(root, "baseline"), "caching");
	cr_assert(is_null(root, "capacity_bytes"));
	a = cJSON_GetObjectItemCaseSensitive(root, "notes");
	cr_assert_eq(cJSON_GetArraySize(a), 1);
	cr_assert_str_eq(cJSON_GetArrayItem(a, 0)->valuestring, notes[0]);
	a = cJSON_GetObjectItemCaseSensitive(root, "results");
	cr_assert_eq(cJSON_GetArraySize(a), 4);
	for (int i = 0; i < 4; i++) {
		cr_assert_str_eq(str(cJSON_GetArrayItem(a, i), "pool"), res[i].pool);
		cr_assert_eq(num(cJSON_GetArrayItem(a, i), "device"), res[i].device);
	}
	cJSON_Delete(root);
	free(text);

	rep.capacity_bytes = 40 * GiB;
	root = parse_json(&rep, &text);
	cr_assert_eq(num(root, "capacity_bytes"), 40.0 * GiB);
	cJSON_Delete(root);
	free(text);
}

Test(replay_report, json_result_values)
{
	struct mp_replay_report rep;
	const cJSON *r, *o;
	cJSON *root;
	char *text;

	make_results(0);
	rep = make_report("caching");
	root = parse_json(&rep, &text);
	r = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(root, "results"), 1);
	cr_assert_str_eq(str(r, "pool"), "direct");
	cr_assert_str_eq(str(r, "backend"), "sim");
	cr_assert_str_eq(str(r, "level"), "block");
	cr_assert_eq(num(r, "peak_reserved_bytes"), 5.0 * GiB);
	cr_assert_eq(num(r, "peak_reserved_seq"), 77);
	cr_assert_eq(num(r, "lower_bound_bytes"), 2.0 * GiB);
	/* 3 OOMs: the run failed, so it saves nothing and has no ratio */
	cr_assert(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r, "failed")));
	cr_assert(is_null(r, "ratio_to_lower_bound"));
	cr_assert(is_null(r, "saved_bytes"));
	cr_assert(is_null(r, "time_saved_ns"));
	cr_assert_str_eq(str(r, "time_is"), "modelled");
	cr_assert_eq(num(r, "backend_calls"), 199);
	cr_assert_eq(num(r, "alloc_ns_p50"), 1500);
	cr_assert_eq(num(r, "alloc_ns_p99"), 2500000);
	cr_assert_eq(num(r, "ooms"), 3);
	cr_assert_str_eq(str(r, "verify"), "failed");
	cr_assert_str_eq(str(r, "verify_message"), "block at event 9 overlaps event 5");
	cr_assert_eq(num(r, "peak_live_bytes"), 2.0 * GiB + 512);
	cr_assert_eq(num(r, "external_fragmentation_at_peak"), 0.375);
	cr_assert_eq(num(r, "free_in_reserved_at_peak_bytes"), 3.0 * GiB - 4096);
	cr_assert_eq(num(r, "total_ns"), 1500);
	cr_assert_eq(num(r, "host_ns"), 300);
	cr_assert_eq(num(r, "backend_ns"), 1200);
	cr_assert_eq(num(r, "bytes_copied"), 4096);
	cr_assert_eq(num(r, "bytes_set"), 8192);
	cr_assert_eq(num(r, "n_allocs"), 100);
	cr_assert_eq(num(r, "n_frees"), 99);
	o = cJSON_GetObjectItemCaseSensitive(r, "first_oom");
	cr_assert_eq(num(o, "seq"), 1234);
	cr_assert_eq(num(o, "request_bytes"), 2.0 * GiB);
	cr_assert_eq(num(o, "live_bytes"), 37.5 * GiB);
	cr_assert_eq(num(o, "reserved_bytes"), 39.0 * GiB);
	o = cJSON_GetObjectItemCaseSensitive(r, "calls");
	cr_assert_eq(cJSON_GetArraySize(o), MP_COST_N_CALLS);
	for (int c = 0; c < MP_COST_N_CALLS; c++)
		cr_assert_eq(num(o, mp_cost_call_name(c)), (double)res[1].n_calls[c]);
	o = cJSON_GetObjectItemCaseSensitive(r, "pool_stats");
	cr_assert_eq(cJSON_GetArraySize(o), 2);
	cr_assert_eq(num(o, "segments"), 17);
	cr_assert_eq(num(o, "efficiency"), 0.5);

	r = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(root, "results"), 0);
	cr_assert(is_null(r, "first_oom") && is_null(r, "verify_message"));
	cr_assert_str_eq(str(r, "verify"), "off");
	cr_assert_eq(num(r, "saved_bytes"), 0); /* the baseline against itself */
	cr_assert(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(r, "failed")));
	cJSON_Delete(root);
	free(text);

	res[1].n_ooms = 0; /* the same run without OOMs is compared */
	root = parse_json(&rep, &text);
	r = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(root, "results"), 1);
	cr_assert(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(r, "failed")));
	cr_assert_eq(num(r, "ratio_to_lower_bound"), 2.5);
	cr_assert_eq(num(r, "saved_bytes"), -2.0 * GiB); /* caching on device 0: 3 - 5 GiB */
	/* backend time only: 1000 - 1200, not the allocator times 1000 - 1500 */
	cr_assert_eq(num(r, "time_saved_ns"), -200);
	cr_assert_eq(num(r, "runs"), 1);
	cJSON_Delete(root);
	free(text);
}

Test(replay_report, a_failed_baseline_is_compared_with_nothing)
{
	struct mp_replay_report rep;
	const cJSON *r;
	cJSON *root;
	char *text;

	make_results(0);
	res[1].n_ooms = 0;
	res[0].n_ooms = 1; /* caching, the baseline on device 0, failed */
	rep = make_report("caching");
	root = parse_json(&rep, &text);
	r = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(root, "results"), 1);
	cr_assert(is_null(r, "saved_bytes") && is_null(r, "time_saved_ns"));
	cr_assert_eq(num(r, "ratio_to_lower_bound"), 2.5);
	cJSON_Delete(root);
	free(text);
	text = render(mp_replay_print_text, &rep);
	cr_assert(strstr(text, "the baseline caching failed: no pool is compared with it"), "%s",
	          text);
	free(text);
}

Test(replay_report, json_device_1_exact_and_nulls)
{
	struct mp_replay_report rep;
	const cJSON *r;
	cJSON *root;
	char *text;

	make_results(1);
	rep = make_report("caching");
	root = parse_json(&rep, &text);
	r = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(root, "results"), 2);
	cr_assert_str_eq(str(r, "level"), "segment");
	cr_assert_str_eq(str(r, "time_is"), "measured");
	cr_assert_str_eq(str(r, "verify"), "passed");
	cr_assert(is_null(r, "ratio_to_lower_bound")); /* lower bound 0 */
	/* caching on device 1, not device 0: 10 GiB - (2^53 + 1), and 900 - 400 */
	cr_assert_eq(num(r, "saved_bytes"), (double)(int64_t)(10 * GiB - ((1ull << 53) + 1)));
	cr_assert_eq(num(r, "time_saved_ns"), 500);
	/* 2^53 + 1 written exactly, not as the nearest double */
	cr_assert(strstr(text, "9007199254740993"), "%s", text);
	cr_assert_null(strstr(text, "9007199254740992"));
	cJSON_Delete(root);
	free(text);

	rep = make_report("async"); /* no such result: nothing saved against it */
	root = parse_json(&rep, &text);
	r = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(root, "results"), 1);
	cr_assert(is_null(r, "saved_bytes") && is_null(r, "time_saved_ns"));
	cJSON_Delete(root);
	free(text);
}

static const struct mp_replay_metric *metric(const struct mp_replay_metric *m, size_t n,
                                             const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(m[i].name, name) == 0)
			return &m[i];
	return NULL;
}

/* Every metric is a numeric key of the JSON result with the same value. */
static void expect_metrics_match_json(const struct mp_replay_report *rep, size_t i, const cJSON *r)
{
	struct mp_replay_metric m[MP_REPLAY_MAX_METRICS];
	size_t n = mp_replay_metrics(rep, &rep->results[i], m, MP_REPLAY_MAX_METRICS);
	const cJSON *stats = cJSON_GetObjectItemCaseSensitive(r, "pool_stats"), *item;
	size_t n_numeric = 0;

	cr_assert_gt(n, 10);
	for (size_t k = 0; k < n; k++) {
		if (strncmp(m[k].name, "pool.", 5) == 0)
			cr_assert_eq(num(stats, m[k].name + 5), m[k].value, "%s", m[k].name);
		else if (strcmp(m[k].name, "verify") == 0)
			cr_assert_eq(m[k].value, rep->results[i].verify);
		else if (strcmp(m[k].name, "failed") == 0) /* a state; true or false in JSON */
			cr_assert_eq(m[k].value,
			             cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r, "failed")));
		else
			cr_assert_eq(num(r, m[k].name), m[k].value, "%s", m[k].name);
	}
	/* and every numeric key of the result is a metric */
	cJSON_ArrayForEach(item, r)
	{
		if (!cJSON_IsNumber(item) || strcmp(item->string, "device") == 0)
			continue;
		n_numeric++;
		cr_assert_not_null(metric(m, n, item->string), "'%s' is not stored", item->string);
	}
	cr_assert_eq(n, n_numeric + 2 /* verify, failed */ + rep->results[i].n_stats);
}

Test(replay_report, metrics_are_the_numeric_json_keys)
{
	struct mp_replay_report rep;
	cJSON *root;
	char *text;

	for (int measured = 0; measured < 2; measured++) {
		make_results(measured);
		rep = make_report("caching");
		root = parse_json(&rep, &text);
		for (size_t i = 0; i < 4; i++)
			expect_metrics_match_json(
			        &rep, i,
			        cJSON_GetArrayItem(
			                cJSON_GetObjectItemCaseSensitive(root, "results"), (int)i));
		cJSON_Delete(root);
		free(text);
	}
}

Test(replay_report, metrics_units_measured_and_absent)
{
	struct mp_replay_metric m[MP_REPLAY_MAX_METRICS];
	struct mp_replay_report rep;
	size_t n;

	make_results(0);
	rep = make_report("caching");
	n = mp_replay_metrics(&rep, &res[1], m, MP_REPLAY_MAX_METRICS);
	cr_assert_str_eq(metric(m, n, "peak_reserved_bytes")->unit, "bytes");
	/* 3 OOMs: failed, so neither saved bytes nor a ratio is stored */
	cr_assert_eq(metric(m, n, "failed")->value, 1);
	cr_assert_null(metric(m, n, "saved_bytes"));
	cr_assert_null(metric(m, n, "ratio_to_lower_bound"));
	cr_assert_null(metric(m, n, "time_saved_ns"));
	res[1].n_ooms = 0;
	n = mp_replay_metrics(&rep, &res[1], m, MP_REPLAY_MAX_METRICS);
	cr_assert_eq(metric(m, n, "failed")->value, 0);
	cr_assert_eq(metric(m, n, "saved_bytes")->value, -2.0 * GiB);
	cr_assert_str_eq(metric(m, n, "ratio_to_lower_bound")->unit, "ratio");
	cr_assert_str_eq(metric(m, n, "ooms")->unit, "count");
	cr_assert_str_eq(metric(m, n, "verify")->unit, "state");
	cr_assert_eq(metric(m, n, "verify")->value, MP_VERIFY_FAILED);
	cr_assert_str_eq(metric(m, n, "pool.efficiency")->unit, "ratio");
	cr_assert_eq(metric(m, n, "total_ns")->measured, 0); /* modelled */
	cr_assert_eq(metric(m, n, "host_ns")->measured, 1);  /* always timed on the host */
	cr_assert_eq(metric(m, n, "peak_reserved_bytes")->measured, 0);

	make_results(1);
	res[1].n_ooms = 0;
	n = mp_replay_metrics(&rep, &res[1], m, MP_REPLAY_MAX_METRICS);
	cr_assert_eq(metric(m, n, "total_ns")->measured, 1);
	cr_assert_eq(metric(m, n, "alloc_ns_p99")->measured, 1);
	cr_assert_eq(metric(m, n, "time_saved_ns")->measured, 1);
	res[0].time_measured = 0; /* a modelled baseline makes the saving modelled */
	n = mp_replay_metrics(&rep, &res[1], m, MP_REPLAY_MAX_METRICS);
	cr_assert_eq(metric(m, n, "time_saved_ns")->measured, 0);

	n = mp_replay_metrics(&rep, &res[2], m, MP_REPLAY_MAX_METRICS);
	cr_assert_null(metric(m, n, "ratio_to_lower_bound"));
	rep = make_report("async");
	n = mp_replay_metrics(&rep, &res[2], m, MP_REPLAY_MAX_METRICS);
	cr_assert_null(metric(m, n, "saved_bytes"));
	cr_assert_null(metric(m, n, "time_saved_ns"));
	cr_assert_not_null(metric(m, n, "peak_reserved_bytes"));
	cr_assert_eq(mp_replay_metrics(&rep, &res[1], m, 3), 3);
}

Test(replay_report, text_modelled_and_oom_sentence)
{
	struct mp_replay_report rep;
	char *text, *p;
	int n = 0;

	make_results(0);
	rep = make_report("caching");
	text = render(mp_replay_print_text, &rep);
	cr_assert(strstr(text, "times     backend time (modelled)"), "%s", text);
	cr_assert_null(strstr(text, "(measured):"), "%s", text);
	cr_assert(strstr(text, "oom at event 1234: request 2.00 GiB with 37.5 GiB live, "
	                       "39.0 GiB reserved"),
	          "%s", text);
	cr_assert(strstr(text, "direct: verify failed: block at event 9 overlaps event 5"), "%s",
	          text);
	cr_assert(strstr(text, "saved vs caching"), "%s", text);
	cr_assert(strstr(text, notes[0]), "%s", text);
	cr_assert(strstr(text,
	                 "alloc latency   p50 1.5 us, p99 2.5 ms, max 3 ms (backend modelled, "
	                 "with the pool's CPU time of the first run)"),
	          "%s", text);
	/* direct had 3 OOMs: it failed, has no figures in the table and saves nothing */
	cr_assert(strstr(text, "\n  -    direct       failed: 3 OOMs, first at event 1234\n"), "%s",
	          text);
	cr_assert_null(strstr(text, "against caching (modelled)\n  OOMs            3"), "%s", text);
	cr_assert(strstr(text, "time saved      500 ns of backend time against caching (modelled)"),
	          "%s", text);
	cr_assert(strstr(text, "segments"), "%s", text);
	/* every pool's backend time says which; the pool's CPU time, one run, is left out */
	for (p = text; (p = strstr(p, "  backend time    ")); p++) {
		char *eol = strchr(p, '\n');

		cr_assert(eol && memmem(p, (size_t)(eol - p), "(modelled)", 10), "%.*s",
		          (int)(eol - p), p);
		n++;
	}
	cr_assert_eq(n, 4);
	cr_assert(strstr(text, "runs      1 of each pool: measured times are left out"), "%s",
	          text);
	cr_assert(strstr(text, "pool CPU time   left out: measured in one run only"), "%s", text);
	cr_assert_null(strstr(text, "300 ns"), "%s", text); /* direct's pool CPU time */
	free(text);

	/* three runs: the pool's CPU time is their median, with its spread */
	for (int i = 0; i < 4; i++)
		res[i].n_runs = 3;
	res[1].host_ns_min = 250, res[1].host_ns_max = 900;
	text = render(mp_replay_print_text, &rep);
	cr_assert(strstr(text, "runs      3 of each pool: a measured time is their median"), "%s",
	          text);
	cr_assert(strstr(text,
	                 "pool CPU time   300 ns, the median of 3 runs, from 250 ns to 900 ns "
	                 "(measured on this host)"),
	          "%s", text);
	free(text);
}

Test(replay_report, text_measured)
{
	struct mp_replay_report rep;
	char *text;

	make_results(1);
	rep = make_report("caching");
	rep.capacity_bytes = 40 * GiB;
	text = render(mp_replay_print_text, &rep);
	cr_assert(strstr(text, "times     backend time (measured)"), "%s", text);
	cr_assert(strstr(text, "capacity  40.0 GiB"), "%s", text);
	/* no time is modelled on cuda: the one modelled figure is the driver's granularity */
	cr_assert(strstr(text, "reserved  as the CUDA driver reserves it (modelled)"), "%s", text);
	cr_assert_null(strstr(strstr(text, "(modelled)") + 1, "(modelled)"), "%s", text);
	/* measured in one run: left out, in the table too */
	cr_assert(strstr(text, "backend time    left out: measured in one run only"), "%s", text);
	cr_assert(strstr(text, " 0 ns            -          -     0"), "%s",
	          text); /* backend, saved */
	free(text);
	for (int i = 0; i < 4; i++)
		res[i].n_runs = 5;
	res[3].backend_ns_min = 800, res[3].backend_ns_max = 1100;
	text = render(mp_replay_print_text, &rep);
	cr_assert(strstr(text,
	                 "backend time    900 ns, the median of 5 runs, from 800 ns to 1.1 us "
	                 "(measured)"),
	          "%s", text);
	cr_assert(strstr(text, "time saved      500 ns of backend time against caching (measured)"),
	          "%s", text);
	free(text);
}

Test(replay_report, ranked_by_peak_then_backend_time_and_no_effect)
{
	struct mp_replay_report rep;
	size_t idx[2];
	char why[200];

	make_results(0);
	res[1].n_ooms = 0;
	rep = make_report("caching");
	/* device 0: caching 3 GiB before direct 5 GiB */
	cr_assert_eq(mp_replay_order(&rep, 0, 2, idx), 2);
	cr_assert_eq(idx[0], 0);
	cr_assert_eq(idx[1], 1);
	cr_assert_eq(mp_replay_place(&rep, &res[0]), 1);
	cr_assert_eq(mp_replay_place(&rep, &res[1]), 2);
	/* the same peak: the least backend time first */
	res[1].peak_reserved_bytes = res[0].peak_reserved_bytes;
	res[0].backend_ns = 10, res[1].backend_ns = 5;
	mp_replay_order(&rep, 0, 2, idx);
	cr_assert_eq(idx[0], 1);
	cr_assert_eq(mp_replay_place(&rep, &res[1]), 1);
	/* a pool with a fallback and caching's figures exactly did nothing */
	cr_assert_null(mp_replay_no_effect(&rep, &res[1], why, sizeof(why)));
	memcpy(res[1].n_calls, res[0].n_calls, sizeof(res[0].n_calls));
	res[1].backend_calls = res[0].backend_calls;
	res[1].end_reserved_bytes = res[0].end_reserved_bytes;
	cr_assert_null(mp_replay_no_effect(&rep, &res[1], why, sizeof(why))); /* no fallback */
	snprintf(res[1].stats[0].name, sizeof(res[1].stats[0].name), "fallback_requests");
	res[1].stats[0].value = 10; /* of 100 allocs */
	cr_assert_str_eq(mp_replay_no_effect(&rep, &res[1], why, sizeof(why)),
	                 "the same peak, end and backend calls as caching, its fallback");
	cr_assert_eq(mp_replay_order(&rep, 0, 2, idx), 1);
	cr_assert_eq(idx[0], 0);
	cr_assert_eq(mp_replay_place(&rep, &res[1]), 0);
	res[1].end_reserved_bytes++; /* a different figure: it did something */
	cr_assert_null(mp_replay_no_effect(&rep, &res[1], why, sizeof(why)));
	res[1].stats[0].value = 100; /* every request to the fallback */
	cr_assert_str_eq(mp_replay_no_effect(&rep, &res[1], why, sizeof(why)),
	                 "every request went to its caching fallback");
	res[1].n_ooms = 1; /* failed: never "did nothing", and last */
	cr_assert_null(mp_replay_no_effect(&rep, &res[1], why, sizeof(why)));
	cr_assert_eq(mp_replay_order(&rep, 0, 2, idx), 1);
	cr_assert_eq(idx[1], 1);
}
