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
	struct mp_import_opts o = {NULL, 0, PACKAGE_VERSION, mp_cmd_line(),
	                           isatty(STDERR_FILENO) ? stderr : NULL, NULL};
	struct mp_import_stats st;
	struct mp_error err = {0};
	const char *out = NULL;
	char *out_default = NULL;
	int ch, quiet = 0, rc, w;

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
	if (optind == argc)
		return mp_cmd_usage(&mp_cmd_import, "no input file given");
	if (!out && strcmp(argv[optind], "-") == 0)
		return mp_cmd_usage(&mp_cmd_import, "reading standard input needs --output");
	if (!out && !(out = out_default = default_output(argv[optind])))
		return mp_cmd_error(&mp_cmd_import, "out of memory");
	rc = mp_import_files((const char *const *)argv + optind, argc - optind, out, &o, &st, &err);
	if (rc < 0) {
		free(out_default);
		return mp_cmd_fail(&mp_cmd_import, &err);
	}
	for (w = 0; w < MP_WARN_N; w++)
		if (st.n_warnings[w])
			fprintf(stderr, "memprof import: warning: %lld %s\n",
			        (long long)st.n_warnings[w], mp_import_warning_text(w));
	mp_cmd_print_notes(&mp_cmd_import, st.notes);
	if (!quiet)
		printf("wrote '%s': %lld events, %lld allocations\n", out, (long long)st.n_events,
		       (long long)st.n_allocs);
	free(out_default);
	return MP_EXIT_OK;
}

const struct mp_cmd mp_cmd_import = {
        .name = "import",
        .summary = "turn trace files (PyTorch, RMM, Nsight Systems, ...) into a trace database",
        .usage = "memprof import [-fq] [-o TRACE] [--format=NAME] FILE...",
        .help = help,
        .run = run,
};
