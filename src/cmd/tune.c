/*
 * cmd/tune.c - 'memprof tune': the PYTORCH_CUDA_ALLOC_CONF that fits a
 * workload, predicted from its trace.  Parses the options, runs
 * replay/tune, prints (report/tune_text) and stores the result in the
 * trace.  Exit 0,
 * 1 on an error, 2 on a usage error.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "cmd/options.h"
#include "report/tune_text.h"
#include "store/results.h"
#include "replay/tune.h"
#include "util/duration.h"
#include "util/parse.h"

#define N_METRICS 12

static size_t metrics(const struct mp_tune_result *r, const struct mp_tune_figures *x, int rank,
                      struct mp_result_metric *m)
{
	size_t n = 0;

#define PUT(name_, value_, unit_)                                                                  \
	m[n++] = (struct mp_result_metric){name_, (double)(value_), unit_, 0}
	PUT("tune_rank", rank, "count");
	PUT("peak_reserved_bytes", x->peak_reserved_bytes, "bytes");
	PUT("saved_bytes", (double)r->current.peak_reserved_bytes - (double)x->peak_reserved_bytes,
	    "bytes");
	PUT("external_fragmentation_at_peak", x->frag_at_peak, "ratio");
	PUT("free_in_reserved_at_peak_bytes", x->free_at_peak_bytes, "bytes");
	PUT("cudamalloc_calls", x->n_malloc, "count");
	PUT("cumemmap_calls", x->n_map, "count");
	PUT("backend_ns", x->backend_ns, "ns");
	PUT("ooms", x->n_ooms, "count");
	if (r->fid.has_recorded) {
		PUT("recorded_peak_reserved_bytes", r->fid.recorded_peak_reserved_bytes, "bytes");
		PUT("fidelity_error", r->fid.error, "ratio");
	}
#undef PUT
	return n;
}

/*
 * The result kept in the trace: one replay run per setting (the current
 * one, then the best in order) in the tables of memprof-trace(5), on the sim
 * backend, as pools named "caching (tune: current)", "caching (tune #1)",
 * ... (never the plain "caching" of 'memprof replay', whose result they must
 * not replace), the current one their baseline, the PYTORCH_CUDA_ALLOC_CONF
 * line their options: 'memprof report' draws them with the replayed pools.
 * All or nothing (store/results).
 */
static int save(const char *path, const struct mp_tune_result *r, struct mp_error *err)
{
	size_t n = r->n_ranked + 1;
	struct mp_result_run *runs = calloc(n, sizeof *runs);
	struct mp_result_metric(*m)[N_METRICS] = calloc(n, sizeof *m);
	char(*opts)[MP_TUNE_CONF_MAX + 48] = calloc(n, sizeof *opts);
	char(*names)[40] = calloc(n, sizeof *names);
	int rc;

	if (!runs || !m || !opts || !names) {
		free(runs);
		free(m);
		free(opts);
		free(names);
		return mp_err(err, MP_ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < n; i++) {
		const struct mp_tune_figures *x = i ? &r->ranked[i - 1] : &r->current;
		snprintf(opts[i], sizeof opts[i], "memprof tune: PYTORCH_CUDA_ALLOC_CONF=%s",
		         x->conf);
		if (i)
			snprintf(names[i], sizeof names[i], "caching (tune #%zu)", i);
		else
			snprintf(names[i], sizeof names[i], "caching (tune: current)");
		runs[i] = (struct mp_result_run){.pool = names[i],
		                                 .backend = "sim",
		                                 .baseline = names[0],
		                                 .options = opts[i],
		                                 .device = r->device,
		                                 .metrics = m[i],
		                                 .n_metrics = metrics(r, x, (int)i, m[i])};
	}
	rc = mp_results_save(path, runs, n, err);
	free(runs);
	free(m);
	free(opts);
	free(names);
	return rc;
}

enum {
	OPT_DEVICE = 256,
	OPT_CAPACITY,
	OPT_OBJECTIVE,
	OPT_BUDGET,
	OPT_THREADS,
	OPT_BEST,
	OPT_NO_SAVE,
	OPT_PLUGIN_DIR,
	OPT_JSON
};

static const struct mp_cmd_opt options[] = {
        {OPT_DEVICE, "device", "N", "the device to tune (needed when the trace has several)"},
        {OPT_CAPACITY, "capacity", "BYTES", "the device's memory: OOMs and garbage collection"},
        {OPT_OBJECTIVE, "objective", "WHAT",
         "rank by reserved (default), calls or time (modelled)"},
        {OPT_BUDGET, "budget", "DURATION", "stop starting candidates after this long (e.g. 30s)"},
        {OPT_THREADS, "threads", "N", "replay in N threads (default: one per core)"},
        {OPT_BEST, "best", "N", "how many settings to show (default 5)"},
        {OPT_NO_SAVE, "no-save", NULL, "do not store the result in the trace"},
        {OPT_PLUGIN_DIR, "plugin-dir", "DIR", "look for the caching pool here first"},
        {OPT_JSON, "json", NULL, "print JSON (layout in memprof-tune(1))"},
        {'h', "help", NULL, "show this help"},
        {0, NULL, NULL, NULL},
};

static void help(FILE *out)
{
	fprintf(out,
	        "usage: memprof tune [options] TRACE\n\n"
	        "Predict the PyTorch allocator setting (PYTORCH_CUDA_ALLOC_CONF) that fits the\n"
	        "workload of TRACE: replay its allocations through memprof's model of PyTorch's\n"
	        "caching allocator under its own setting (fidelity: the model against what the\n"
	        "trace recorded), then under settings drawn from its sizes, and print the best.\n\n"
	        "options:\n");
	mp_cmd_opts_help(out, options);
}

struct args {
	struct mp_tune_options o;
	int json, save;
	const char *trace;
};

static int parse_value(struct args *a, int ch, const char *v)
{
	static const char *const objectives[] = {"reserved", "calls", "time"};
	int64_t n;
	char why[128];
	int bare;

	switch (ch) {
	case OPT_DEVICE:
		if (mp_parse_count(v, 0, INT32_MAX, &n) != 0)
			return mp_cmd_usage(&mp_cmd_tune,
			                    "invalid --device '%s': expected a device number", v);
		a->o.device = (int32_t)n;
		return 0;
	case OPT_CAPACITY:
		if (mp_parse_bytes(v, &n) != 0 || n <= 0)
			return mp_cmd_usage(
			        &mp_cmd_tune,
			        "invalid --capacity '%s': expected a size such as 80GiB", v);
		a->o.capacity_bytes = (uint64_t)n;
		return 0;
	case OPT_OBJECTIVE:
		for (int i = 0; i < 3; i++)
			if (strcmp(v, objectives[i]) == 0)
				return a->o.objective = i, 0;
		return mp_cmd_usage(&mp_cmd_tune,
		                    "invalid --objective '%s': expected reserved, calls or time",
		                    v);
	case OPT_BUDGET:
		if (mp_parse_duration_unit(v, &n, &bare) != 0 || n <= 0)
			return mp_cmd_usage(&mp_cmd_tune, "invalid --budget '%s': %s", v,
			                    mp_duration_problem(why, sizeof why, v, bare, "s"));
		a->o.budget_s = (double)n / 1e9;
		return 0;
	case OPT_THREADS:
	case OPT_BEST:
		if (mp_parse_count(v, 1, ch == OPT_THREADS ? 64 : 100, &n) != 0)
			return mp_cmd_usage(&mp_cmd_tune,
			                    "invalid --%s '%s': expected a number from 1 to %d",
			                    ch == OPT_THREADS ? "threads" : "best", v,
			                    ch == OPT_THREADS ? 64 : 100);
		if (ch == OPT_THREADS)
			a->o.n_threads = (int)n;
		else
			a->o.n_best = (size_t)n;
		return 0;
	default:
		a->o.plugin_dir = v;
		return 0;
	}
}

static int parse(int argc, char **argv, struct args *a)
{
	struct mp_cmd_getopt g;
	int ch, rc;

	*a = (struct args){.o = {.device = -1, .n_best = 5}, .save = 1};
	mp_cmd_getopt_init(&g, options);
	optind = 1;
	while ((ch = mp_cmd_getopt_next(&mp_cmd_tune, argc, argv, &g, &rc)) > 0) {
		if (ch == OPT_JSON)
			a->json = 1;
		else if (ch == OPT_NO_SAVE)
			a->save = 0;
		else if ((rc = parse_value(a, ch, optarg)) != 0)
			return rc;
	}
	if (ch < 0)
		return rc ? rc : -1;
	if (optind != argc - 1)
		return mp_cmd_usage(&mp_cmd_tune,
		                    optind < argc ? "one trace at a time" : "no trace given");
	a->trace = argv[optind];
	return 0;
}

static int run(int argc, char **argv)
{
	struct mp_tune_result res;
	struct mp_error err = {0};
	struct args a;
	int rc = parse(argc, argv, &a);

	if (rc != 0)
		return rc < 0 ? MP_EXIT_OK : rc;
	if (mp_cmd_check_device(&mp_cmd_tune, NULL, a.trace, a.o.device) != MP_EXIT_OK)
		return MP_EXIT_ERROR;
	if (mp_tune_run(a.trace, &a.o, &res, &err) < 0) {
		mp_tune_result_free(&res);
		return mp_cmd_fail(&mp_cmd_tune, &err);
	}
	rc = a.json ? mp_tune_print_json(stdout, a.trace, &res)
	            : mp_tune_print_text(stdout, a.trace, &res);
	fflush(stdout);
	if (rc < 0)
		rc = mp_cmd_error(&mp_cmd_tune, "cannot write the result to standard output");
	else if (a.save && save(a.trace, &res, &err) < 0)
		rc = mp_cmd_fail(&mp_cmd_tune, &err);
	mp_tune_result_free(&res);
	return rc;
}

const struct mp_cmd mp_cmd_tune = {
        .name = "tune",
        .summary = "predict the PYTORCH_CUDA_ALLOC_CONF that fits a workload",
        .usage = "memprof tune [options] TRACE",
        .help = help,
        .run = run,
};
