/*
 * cmd/tune.c - 'memprof tune': the PYTORCH_CUDA_ALLOC_CONF that fits a
 * workload, predicted from its trace.  Parses the options, runs tune/,
 * prints (tune/tune_print) and stores the result in the trace.  Exit 0,
 * 1 on an error, 2 on a usage error.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "tune/tune.h"
#include "tune/tune_print.h"
#include "util/duration.h"
#include "util/parse.h"

static void help(FILE *out)
{
	fprintf(out,
	        "usage: memprof tune [options] TRACE\n\n"
	        "Predict the PyTorch allocator setting (PYTORCH_CUDA_ALLOC_CONF) that fits the\n"
	        "workload of TRACE: replay its allocations through memprof's model of PyTorch's\n"
	        "caching allocator under its own setting (fidelity: the model against what the\n"
	        "trace recorded), then under settings drawn from its sizes, and print the best.\n\n"
	        "options:\n"
	        "      --device=N            the device to tune (needed when the trace has "
	        "several)\n"
	        "      --capacity=BYTES      the device's memory: OOMs and garbage collection\n"
	        "      --objective=WHAT      rank by reserved (default), calls or time (modelled)\n"
	        "      --budget=DURATION     stop starting candidates after this long (e.g. 30s)\n"
	        "      --threads=N           replay in N threads (default: one per core)\n"
	        "      --best=N              how many settings to show (default 5)\n"
	        "      --no-save             do not store the result in the trace\n"
	        "      --plugin-dir=DIR      look for the caching pool here first\n"
	        "      --json                print JSON (layout in memprof-tune(1))\n"
	        "  -h, --help                show this help\n");
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

static const struct option long_opts[] = {
        {"device", required_argument, NULL, OPT_DEVICE},
        {"capacity", required_argument, NULL, OPT_CAPACITY},
        {"objective", required_argument, NULL, OPT_OBJECTIVE},
        {"budget", required_argument, NULL, OPT_BUDGET},
        {"threads", required_argument, NULL, OPT_THREADS},
        {"best", required_argument, NULL, OPT_BEST},
        {"no-save", no_argument, NULL, OPT_NO_SAVE},
        {"plugin-dir", required_argument, NULL, OPT_PLUGIN_DIR},
        {"json", no_argument, NULL, OPT_JSON},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
};

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
	int ch, rc;

	*a = (struct args){.o = {.device = -1, .n_best = 5}, .save = 1};
	optind = 1;
	while ((ch = getopt_long(argc, argv, ":h", long_opts, NULL)) != -1) {
		if (ch == 'h') {
			help(stdout);
			return -1;
		}
		if (ch == '?' || ch == ':')
			return mp_cmd_bad_option(&mp_cmd_tune, argv, ch);
		if (ch == OPT_JSON)
			a->json = 1;
		else if (ch == OPT_NO_SAVE)
			a->save = 0;
		else if ((rc = parse_value(a, ch, optarg)) != 0)
			return rc;
	}
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
	else if (a.save && mp_tune_save(a.trace, &res, &err) < 0)
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
