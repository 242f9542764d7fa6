/*
 * cmd/merge.c - 'memprof merge': combine per-rank or per-node memprof
 * traces into one trace of the whole job.  Options and messages only: the
 * plan (devices, clock, refusals) is in src/import/merge*.c and the copying
 * in the importer 'trace' (src/import/trace_db.c), run by mp_import_files.
 */
#include "cmd/cmd.h"
#include "cmd/options.h"
#include "import/merge_plan.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const struct mp_cmd_opt options[] = {
        {'o', "output", "JOB", "the trace to write (required; not one of the inputs)"},
        {'f', "force", NULL, "replace JOB if it exists"},
        {'q', "quiet", NULL, "print nothing on success but warnings"},
        {'h', "help", NULL, "show this help"},
        {0, NULL, NULL, NULL},
};

static void help(FILE *out)
{
	fprintf(out, "usage: memprof merge [options] TRACE... -o JOB\n\n"
	             "Combine memprof traces (per rank, per node) into one trace of the job.\n\n"
	             "options:\n");
	mp_cmd_opts_help(out, options);
	fprintf(out,
	        "\nEvery process keeps its pid, host, rank, local rank, world size and command.\n"
	        "Devices keep their numbers unless two traces use one number for different\n"
	        "GPUs; then all are renumbered 0..G-1 in rank order (meta merged_devices has\n"
	        "the map).  Timestamps are put on one clock when they can be (the same clock,\n"
	        "or the Unix epoch through clock_unix_offset_ns); otherwise each trace starts\n"
	        "at 0, with a warning.  Replay results of the inputs are not carried.  See\n"
	        "memprof-merge(1).\n");
}

static void print_summary(const char *out, const struct mp_merge_plan *plan,
                          const struct mp_import_stats *st)
{
	char *devices = mp_merge_devices_text(plan);
	size_t i, n_procs = 0;

	for (i = 0; i < plan->n; i++)
		n_procs += plan->in[i].n_procs;
	printf("wrote '%s': %lld events from %zu traces, %zu processes, %d devices\n", out,
	       (long long)st->n_events, plan->n, n_procs, (int)plan->n_job_devices);
	printf("devices%s:\n",
	       plan->renumbered ? " (renumbered: the traces' numbers clashed)" : "");
	if (devices) {
		char *line = devices, *nl;

		for (; *line; line = nl ? nl + 1 : line + strlen(line)) {
			nl = strchr(line, '\n');
			printf("  %.*s\n", nl ? (int)(nl - line) : (int)strlen(line), line);
			if (!nl)
				break;
		}
	}
	printf("clock: %s\n", plan->clock_why);
	free(devices);
}

static int merge(char **inputs, int n, const char *out, int force, int quiet)
{
	struct mp_import_opts o;
	struct mp_merge_plan plan;
	struct mp_import_stats st;
	struct mp_error err = {0};
	int rc;

	mp_cmd_import_opts(&o);
	o.format = "trace";
	o.overwrite = force;
	o.source = "merge";
	o.cmd_name = "merge";
	o.after = mp_merge_after;
	if (mp_merge_plan_build((const char *const *)inputs, n, out, &plan, &err) < 0)
		return mp_cmd_fail(&mp_cmd_merge, &err);
	o.shared = &plan;
	rc = mp_import_files(plan.paths, (int)plan.n, out, &o, &st, &err);
	if (rc < 0) {
		mp_merge_plan_free(&plan);
		return mp_cmd_fail(&mp_cmd_merge, &err);
	}
	mp_cmd_print_import_warnings(&mp_cmd_merge, &st);
	if (!quiet)
		print_summary(out, &plan, &st);
	mp_merge_plan_free(&plan);
	return MP_EXIT_OK;
}

static int run(int argc, char **argv)
{
	struct mp_cmd_getopt g;
	const char *out = NULL;
	int ch, force = 0, quiet = 0, st;

	mp_cmd_getopt_init(&g, options);
	while ((ch = mp_cmd_getopt_next(&mp_cmd_merge, argc, argv, &g, &st)) > 0) {
		switch (ch) {
		case 'o':
			out = optarg;
			break;
		case 'f':
			force = 1;
			break;
		case 'q':
			quiet = 1;
			break;
		}
	}
	if (ch < 0)
		return st;
	if (optind == argc)
		return mp_cmd_usage(&mp_cmd_merge, "no trace given");
	if (!out)
		return mp_cmd_usage(&mp_cmd_merge, "no output given: name it with -o JOB");
	if (!out[0] || strcmp(out, "-") == 0)
		return mp_cmd_usage(&mp_cmd_merge, "invalid output '%s': name a file", out);
	return merge(argv + optind, argc - optind, out, force, quiet);
}

const struct mp_cmd mp_cmd_merge = {
        .name = "merge",
        .summary = "combine per-rank or per-node traces into one trace of the job",
        .usage = "memprof merge [-fq] TRACE... -o JOB",
        .help = help,
        .run = run,
};
