/*
 * cmd/export.c - 'memprof export': write a trace database out in another
 * format (now memprof CSV).  Options and plumbing only: the reader streams,
 * report/csv_writer.c formats.
 */
#include "cmd/cmd.h"
#include "report/csv_writer.h"
#include "store/reader.h"
#include "util/outfile.h"

#include <errno.h>
#include <getopt.h>
#include <string.h>

static void help(FILE *out)
{
	fprintf(out, "usage: memprof export [options] TRACE\n\n"
	             "Write the events of a trace database in another format.\n\n"
	             "options:\n"
	             "      --format=csv    memprof CSV (memprof-trace(5)), the default\n"
	             "  -o, --output=FILE   where to write (default: standard output)\n"
	             "  -f, --force         replace FILE if it exists\n"
	             "  -h, --help          show this help\n\n"
	             "'memprof import' reads the CSV back into the same events.\n");
}

static int export_csv(struct mp_store *s, struct mp_outfile *of, struct mp_error *err)
{
	const struct memprof_record *rec;
	struct mp_csv_writer *w;
	struct mp_reader *r;
	int rc;

	if (mp_reader_open(s, MP_READ_STACKS, &r) < 0)
		return mp_err_copy(err, mp_store_error(s));
	w = mp_csv_writer_open(of->f);
	if (!w) {
		mp_reader_close(r);
		return mp_err(err, MP_ENOMEM, "out of memory");
	}
	while ((rc = mp_reader_next(r, &rec)) == 1)
		if (mp_csv_writer_record(w, rec) < 0)
			break;
	if (rc < 0)
		mp_err_copy(err, mp_store_error(s));
	if (mp_csv_writer_close(w) < 0 && rc >= 0)
		rc = mp_err(err, errno == ENOSPC || errno == EFBIG ? MP_EFULL : MP_EIO,
		            "cannot write '%s': %s", of->path ? of->path : "<stdout>",
		            strerror(errno));
	mp_reader_close(r);
	return rc < 0 ? rc : 0;
}

static int run(int argc, char **argv)
{
	static const struct option longopts[] = {
	        {"output", required_argument, NULL, 'o'},
	        {"format", required_argument, NULL, 'F'},
	        {"force", no_argument, NULL, 'f'},
	        {"help", no_argument, NULL, 'h'},
	        {NULL, 0, NULL, 0},
	};
	const char *out = "-", *format = "csv";
	struct mp_error err = {0};
	struct mp_outfile of;
	struct mp_store *s;
	int ch, force = 0;

	opterr = 0;
	while ((ch = getopt_long(argc, argv, ":o:fh", longopts, NULL)) != -1) {
		switch (ch) {
		case 'o':
			out = optarg;
			break;
		case 'F':
			format = optarg;
			break;
		case 'f':
			force = 1;
			break;
		case 'h':
			help(stdout);
			return MP_EXIT_OK;
		default:
			return mp_cmd_bad_option(&mp_cmd_export, argv, ch);
		}
	}
	if (strcmp(format, "csv") != 0)
		return mp_cmd_usage(&mp_cmd_export, "unknown format '%s' (formats: csv)", format);
	if (optind != argc - 1)
		return mp_cmd_usage(&mp_cmd_export,
		                    optind == argc ? "no trace given" : "more than one trace");
	if (mp_store_open(&s, argv[optind], &err) < 0)
		return mp_cmd_fail(&mp_cmd_export, &err);
	if (mp_outfile_open(&of, out, force, &err) < 0) {
		mp_store_close(s);
		return mp_cmd_fail(&mp_cmd_export, &err);
	}
	if (export_csv(s, &of, &err) < 0) {
		mp_outfile_abort(&of);
		mp_store_close(s);
		return mp_cmd_fail(&mp_cmd_export, &err);
	}
	mp_store_close(s);
	if (mp_outfile_commit(&of, &err) < 0)
		return mp_cmd_fail(&mp_cmd_export, &err);
	return MP_EXIT_OK;
}

const struct mp_cmd mp_cmd_export = {
        .name = "export",
        .summary = "write a trace database as memprof CSV",
        .usage = "memprof export [--format=csv] [-o FILE] [-f] TRACE",
        .help = help,
        .run = run,
};
