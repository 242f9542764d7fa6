/*
 * cmd/import.c - 'memprof import': turn a trace file users already have
 * into a trace database.  Options and messages only; the work is in
 * src/import/.
 */
#include "cmd/cmd.h"
#include "cmd/options.h"
#include "import/import.h"
#include "util/outfile.h"

#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { OPT_FORMAT = 256, OPT_RANK, OPT_LOCAL_RANK, OPT_WORLD_SIZE, OPT_HOST };

static const struct mp_cmd_opt options[] = {
        {'o', "output", "TRACE",
         "the database to write (default: the first FILE's name\n"
         "with .db, in the current directory; required when\n"
         "FILE is -)"},
        {OPT_FORMAT, "format", "NAME", "the input format, instead of detecting it"},
        {'f', "force", NULL, "replace TRACE if it exists"},
        {OPT_RANK, "rank", "N", "label every process imported with this rank,"},
        {OPT_LOCAL_RANK, "local-rank", "N", "local rank (its place on its host),"},
        {OPT_WORLD_SIZE, "world-size", "N", "number of ranks in the job,"},
        {OPT_HOST, "host", "NAME", "and host, replacing what the input says"},
        {'q', "quiet", NULL, "print nothing on success"},
        {'h', "help", NULL, "show this help"},
        {0, NULL, NULL, NULL},
};

static void help(FILE *out)
{
	int i;

	fprintf(out, "usage: memprof import [options] FILE...\n\n"
	             "Read trace files and write one memprof trace database.\n\n"
	             "options:\n");
	mp_cmd_opts_help(out, options);
	fprintf(out, "\nformats:\n");
	for (i = 0; mp_importers[i]; i++)
		fprintf(out, "  %-10s %s\n", mp_importers[i]->name, mp_importers[i]->description);
	fprintf(out,
	        "\nThe format is detected from each file's content.  Several files go into one\n"
	        "trace, each with its own processes, events in timestamp order.  The trace is\n"
	        "written to a temporary file and appears only when every input was read: a\n"
	        "bad input leaves nothing behind.  See memprof-import(1).\n");
}

/* A label value: a decimal integer >= 0 (not too large for the trace). */
static int parse_label(const char *opt, const char *arg, int64_t *out)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(arg, &end, 10);
	if (errno || end == arg || *end || v < 0 || v > INT32_MAX || arg[0] == '+' || arg[0] == ' ')
		return mp_cmd_usage(&mp_cmd_import, "invalid %s '%s': give an integer 0 or more",
		                    opt, arg);
	*out = v;
	return 0;
}

static int check_labels(const struct memprof_process *l)
{
	if (l->world_size >= 0 && l->rank >= l->world_size)
		return mp_cmd_usage(&mp_cmd_import,
		                    "invalid --rank '%lld': not below --world-size %lld",
		                    (long long)l->rank, (long long)l->world_size);
	if (l->world_size >= 0 && l->local_rank >= l->world_size)
		return mp_cmd_usage(&mp_cmd_import,
		                    "invalid --local-rank '%lld': not below --world-size %lld",
		                    (long long)l->local_rank, (long long)l->world_size);
	if (l->host && !l->host[0])
		return mp_cmd_usage(&mp_cmd_import, "invalid --host '': give a host name");
	return 0;
}

/* "dir/run.csv" -> "run.db" */
static char *default_output(const char *in)
{
	char *copy = strdup(in), *base, *dot, *out = NULL;

	if (!copy)
		return NULL;
	base = basename(copy);
	dot = strrchr(base, '.');
	if (dot && dot != base)
		*dot = '\0';
	if (asprintf(&out, "%s.db", base) < 0)
		out = NULL;
	free(copy);
	return out;
}

static int run(int argc, char **argv)
{
	struct memprof_process labels = {0, 0, 0, NULL, -1, -1, -1, NULL};
	int labelled = 0;
	struct mp_import_opts o;
	struct mp_import_stats st;
	struct mp_error err = {0};
	const char *out = NULL;
	char *out_default = NULL;
	struct mp_cmd_getopt g;
	int ch, quiet = 0, rc, status;

	mp_cmd_import_opts(&o);
	mp_cmd_getopt_init(&g, options);
	while ((ch = mp_cmd_getopt_next(&mp_cmd_import, argc, argv, &g, &status)) > 0) {
		switch (ch) {
		case 'o':
			out = optarg;
			break;
		case OPT_FORMAT:
			if (!mp_importer_find(optarg))
				return mp_cmd_usage(&mp_cmd_import,
				                    "unknown format '%s' (see the list in --help)",
				                    optarg);
			o.format = optarg;
			break;
		case 'f':
			o.overwrite = 1;
			break;
		case 'q':
			quiet = 1;
			break;
		case OPT_RANK:
		case OPT_LOCAL_RANK:
		case OPT_WORLD_SIZE:
			if (parse_label(ch == OPT_RANK         ? "--rank"
			                : ch == OPT_LOCAL_RANK ? "--local-rank"
			                                       : "--world-size",
			                optarg,
			                ch == OPT_RANK         ? &labels.rank
			                : ch == OPT_LOCAL_RANK ? &labels.local_rank
			                                       : &labels.world_size) != 0)
				return MP_EXIT_USAGE;
			labelled = 1;
			break;
		case OPT_HOST:
			labels.host = optarg;
			labelled = 1;
			break;
		}
	}
	if (ch < 0)
		return status;
	if (optind == argc)
		return mp_cmd_usage(&mp_cmd_import, "no input file given");
	if (labelled && check_labels(&labels) != 0)
		return MP_EXIT_USAGE;
	o.labels = labelled ? &labels : NULL;
	if (!out && strcmp(argv[optind], "-") == 0)
		return mp_cmd_usage(&mp_cmd_import, "reading standard input needs --output");
	if (!out && !(out = out_default = default_output(argv[optind])))
		return mp_cmd_error(&mp_cmd_import, "out of memory");
	/* the existing output is the store's to refuse; an input, even with --force, ours */
	rc = mp_outfile_check(out, 1, (const char *const *)argv + optind, &err);
	if (rc == 0)
		rc = mp_import_files((const char *const *)argv + optind, argc - optind, out, &o,
		                     &st, &err);
	if (rc < 0) {
		free(out_default);
		return mp_cmd_fail(&mp_cmd_import, &err);
	}
	mp_cmd_print_import_warnings(&mp_cmd_import, &st);
	if (!quiet)
		printf("wrote '%s': %lld events, %lld allocations\n", out, (long long)st.n_events,
		       (long long)st.n_allocs);
	free(out_default);
	return MP_EXIT_OK;
}

const struct mp_cmd mp_cmd_import = {
        .name = "import",
        .summary = "turn trace files (PyTorch, RMM, Nsight Systems, ...) into a trace database",
        .usage = "memprof import [-fq] [-o TRACE] [--format=NAME] [--rank=N] [--local-rank=N] "
                 "[--world-size=N] [--host=NAME] FILE...",
        .help = help,
        .run = run,
};
