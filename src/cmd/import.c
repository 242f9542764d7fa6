/*
 * cmd/import.c - 'memprof import': turn a trace file users already have
 * into a trace database.  Options and messages only; the work is in
 * src/import/.
 */
#include "cmd/cmd.h"
#include "import/import.h"
#include "util/outfile.h"

#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void help(FILE *out)
{
	int i;

	fprintf(out, "usage: memprof import [options] FILE...\n\n"
	             "Read trace files and write one memprof trace database.\n\n"
	             "options:\n"
	             "  -o, --output=TRACE  the database to write (default: the first FILE's name\n"
	             "                      with .db, in the current directory; required when\n"
	             "                      FILE is -)\n"
	             "      --format=NAME   the input format, instead of detecting it\n"
	             "  -f, --force         replace TRACE if it exists\n"
	             "      --rank=N        label every process imported with this rank,\n"
	             "      --local-rank=N  local rank (its place on its host),\n"
	             "      --world-size=N  number of ranks in the job,\n"
	             "      --host=NAME     and host, replacing what the input says\n"
	             "  -q, --quiet         print nothing on success\n"
	             "  -h, --help          show this help\n\n"
	             "formats:\n");
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
	static const struct option longopts[] = {
	        {"output", required_argument, NULL, 'o'},
	        {"format", required_argument, NULL, 'F'},
	        {"force", no_argument, NULL, 'f'},
	        {"quiet", no_argument, NULL, 'q'},
	        {"help", no_argument, NULL, 'h'},
	        {"rank", required_argument, NULL, 'R'},
	        {"local-rank", required_argument, NULL, 'L'},
	        {"world-size", required_argument, NULL, 'W'},
	        {"host", required_argument, NULL, 'H'},
	        {NULL, 0, NULL, 0},
	};
	struct memprof_process labels = {0, 0, 0, NULL, -1, -1, -1, NULL};
	int labelled = 0;
	struct mp_import_opts o;
	struct mp_import_stats st;
	struct mp_error err = {0};
	const char *out = NULL;
	char *out_default = NULL;
	int ch, quiet = 0, rc;

	mp_cmd_import_opts(&o);
	opterr = 0;
	while ((ch = getopt_long(argc, argv, ":o:fqh", longopts, NULL)) != -1) {
		switch (ch) {
		case 'o':
			out = optarg;
			break;
		case 'F':
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
		case 'R':
		case 'L':
		case 'W':
			if (parse_label(ch == 'R'   ? "--rank"
			                : ch == 'L' ? "--local-rank"
			                            : "--world-size",
			                optarg,
			                ch == 'R'   ? &labels.rank
			                : ch == 'L' ? &labels.local_rank
			                            : &labels.world_size) != 0)
				return MP_EXIT_USAGE;
			labelled = 1;
			break;
		case 'H':
			labels.host = optarg;
			labelled = 1;
			break;
		case 'h':
			help(stdout);
			return MP_EXIT_OK;
		default:
			return mp_cmd_bad_option(&mp_cmd_import, argv, ch);
		}
	}
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
