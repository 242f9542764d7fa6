/*
 * cmd/import.c - 'memprof import': turn a trace file users already have
 * into a trace database.  Options and messages only; the work is in
 * src/import/.
 */
#include "cmd/cmd.h"
#include "import/import.h"

#include <getopt.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>

static void help(FILE *out)
{
	int i;

	fprintf(out, "usage: memprof import [options] FILE\n\n"
	             "Read a trace file and write a memprof trace database.\n\n"
	             "options:\n"
	             "  -o, --output=TRACE  the database to write (default: FILE's name with .db,\n"
	             "                      in the current directory; required when FILE is -)\n"
	             "      --format=NAME   the input format, instead of detecting it\n"
	             "  -f, --force         replace TRACE if it exists\n"
	             "  -q, --quiet         print nothing on success\n"
	             "  -h, --help          show this help\n\n"
	             "formats:\n");
	for (i = 0; mp_importers[i]; i++)
		fprintf(out, "  %-10s %s\n", mp_importers[i]->name, mp_importers[i]->description);
	fprintf(out,
	        "\nThe trace is written to a temporary file and appears only when the whole\n"
	        "input was read: a bad input leaves nothing behind.  See memprof-import(1).\n");
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
	        {"output", required_argument, NULL, 'o'}, {"format", required_argument, NULL, 'F'},
	        {"force", no_argument, NULL, 'f'},        {"quiet", no_argument, NULL, 'q'},
	        {"help", no_argument, NULL, 'h'},         {NULL, 0, NULL, 0},
	};
	struct mp_import_opts o = {NULL, 0, PACKAGE_VERSION, mp_cmd_line()};
	struct mp_import_stats st;
	struct mp_error err = {0};
	const char *out = NULL;
	char *out_default = NULL;
	int ch, quiet = 0, rc;

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
		case 'h':
			help(stdout);
			return MP_EXIT_OK;
		default:
			return mp_cmd_bad_option(&mp_cmd_import, argv, ch);
		}
	}
	if (optind != argc - 1)
		return mp_cmd_usage(&mp_cmd_import, optind == argc ? "no input file given"
		                                                   : "more than one input file");
	if (!out && strcmp(argv[optind], "-") == 0)
		return mp_cmd_usage(&mp_cmd_import, "reading standard input needs --output");
	if (!out && !(out = out_default = default_output(argv[optind])))
		return mp_cmd_error(&mp_cmd_import, "out of memory");
	rc = mp_import_file(argv[optind], out, &o, &st, &err);
	if (rc < 0) {
		free(out_default);
		return mp_cmd_fail(&mp_cmd_import, &err);
	}
	if (!quiet) {
		printf("wrote '%s': %lld events, %lld allocations", out, (long long)st.n_events,
		       (long long)st.n_allocs);
		if (st.n_unmatched_frees)
			printf(", %lld frees without an allocation (kept)",
			       (long long)st.n_unmatched_frees);
		if (st.n_unmatched_releases)
			printf(", %lld releases without a reserve (kept)",
			       (long long)st.n_unmatched_releases);
		printf("\n");
	}
	free(out_default);
	return MP_EXIT_OK;
}

const struct mp_cmd mp_cmd_import = {
        .name = "import",
        .summary = "turn a trace file (memprof CSV, ...) into a trace database",
        .usage = "memprof import [-fq] [-o TRACE] [--format=NAME] FILE",
        .help = help,
        .run = run,
};
