/*
 * cmd/export.c - 'memprof export': write a trace database out in another
 * format (memprof CSV, MiniMalloc CSV for an offline planner, or Chrome
 * trace-event JSON for ui.perfetto.dev).  Options, notes and the exit
 * status only: load/trace_export*.c streams the trace into
 * report/csv_writer.c, report/minimalloc_writer.c and report/perfetto.c.
 */
#include "cmd/cmd.h"
#include "cmd/options.h"
#include "load/trace_export.h"
#include "util/outfile.h"
#include "util/parse.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

struct export_opts {
	const char *format;
	const char *time;            /* "seq" or "ns"; NULL: not given */
	struct mp_export_select sel; /* --pid, --device */
	int64_t min_size_bytes;      /* --min-size, when have_min_size */
	int have_min_size;
};

enum { OPT_FORMAT = 256, OPT_TIME, OPT_DEVICE, OPT_PID, OPT_MIN_SIZE };

static const struct mp_cmd_opt options[] = {
        {OPT_FORMAT, "format", "FORMAT",
         "csv: memprof CSV (memprof-trace(5)), the default\n"
         "minimalloc: MiniMalloc CSV: id,lower,upper,size, one\n"
         "row per allocation, from its alloc to its free\n"
         "(half-open)\n"
         "perfetto: Chrome trace-event JSON for ui.perfetto.dev\n"
         "and chrome://tracing: per device, counters of live,\n"
         "requested and reserved bytes and the allocations as\n"
         "slices; phases as slices; OOMs as instants"},
        {OPT_TIME, "time", "seq|ns",
         "--format=minimalloc: lifetimes in event numbers\n"
         "(seq, the default) or in timestamps (ns)"},
        {OPT_DEVICE, "device", "N",
         "--format=minimalloc: the device to export (one\naddress space)"},
        {OPT_PID, "pid", "PID", "--format=minimalloc: the process to export"},
        {OPT_MIN_SIZE, "min-size", "BYTES",
         "--format=perfetto: slices only for allocations of at\n"
         "least BYTES (e.g. 1MiB); the counters stay exact"},
        {'o', "output", "FILE",
         "where to write (default: standard output, or for\n"
         "perfetto TRACE.json, .db replaced, when that is a\n"
         "terminal)"},
        {'f', "force", NULL, "replace FILE if it exists"},
        {'h', "help", NULL, "show this help"},
        {0, NULL, NULL, NULL},
};

static void help(FILE *out)
{
	fprintf(out, "usage: memprof export [options] TRACE\n\n"
	             "Write the events of a trace database in another format.\n\n"
	             "options:\n");
	mp_cmd_opts_help(out, options);
	fprintf(out, "\n'memprof import' reads either format back: the CSV into the same events,\n"
	             "MiniMalloc CSV into one alloc and one free per row.\n");
}

static void minimalloc_notes(const struct mp_minimalloc_stats *st)
{
	if (st->n_unmatched_frees)
		fprintf(stderr,
		        "memprof export: note: %lld frees of blocks never allocated: no rows\n",
		        (long long)st->n_unmatched_frees);
	if (st->n_widened)
		fprintf(stderr,
		        "memprof export: note: %lld blocks freed at the time of their alloc: "
		        "written with upper = lower + 1\n",
		        (long long)st->n_widened);
	if (st->n_reused_ids)
		fprintf(stderr,
		        "memprof export: note: %lld allocations of an id still live: the earlier "
		        "block ends there\n",
		        (long long)st->n_reused_ids);
}

static void perfetto_notes(const struct mp_perfetto_stats *st, int64_t min_size_bytes)
{
	if (st->n_slices_skipped)
		fprintf(stderr,
		        "memprof export: note: %lld allocations below --min-size=%lld: in the "
		        "counters, not as slices\n",
		        (long long)st->n_slices_skipped, (long long)min_size_bytes);
	if (st->n_phase_ends_unmatched)
		fprintf(stderr,
		        "memprof export: note: %lld phase ends with no open phase: left out\n",
		        (long long)st->n_phase_ends_unmatched);
}

/* The export x asks for, into of; its notes on standard error. */
static int export(struct mp_store *s, struct mp_outfile *of, const struct export_opts *x,
                  struct mp_error *err)
{
	struct mp_minimalloc_stats mst;
	struct mp_perfetto_stats pst;
	int rc;

	if (strcmp(x->format, "csv") == 0)
		return mp_export_csv(s, of, err);
	if (strcmp(x->format, "perfetto") == 0) {
		if ((rc = mp_export_perfetto(s, of, x->min_size_bytes, &pst, err)) == 0)
			perfetto_notes(&pst, x->min_size_bytes);
		return rc;
	}
	rc = mp_export_minimalloc(s, of, x->time && strcmp(x->time, "ns") == 0, &x->sel, &mst, err);
	if (rc == 0)
		minimalloc_notes(&mst);
	return rc;
}

/* The value of --device or --pid: a decimal integer from min to max. */
static int int_option(const char *name, const char *text, int64_t min, int64_t max, int64_t *out)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(text, &end, 10);
	if (!*text || *end || errno || v < min || v > max)
		return mp_cmd_usage(&mp_cmd_export,
		                    "invalid --%s '%s': expected a whole number from "
		                    "%lld to %lld",
		                    name, text, (long long)min, (long long)max);
	*out = v;
	return 0;
}

/* The value of --min-size: a size in bytes, with a unit or not. */
static int min_size_option(const char *text, struct export_opts *x)
{
	if (mp_parse_bytes(text, &x->min_size_bytes) < 0)
		return mp_cmd_usage(
		        &mp_cmd_export,
		        "invalid --min-size '%s': expected a size in bytes such as 4096 "
		        "or 1MiB",
		        text);
	x->have_min_size = 1;
	return 0;
}

/* Options that only --format=minimalloc or perfetto takes; 0 or a usage error. */
static int check_opts(const struct export_opts *x)
{
	int mm = strcmp(x->format, "minimalloc") == 0, pf = strcmp(x->format, "perfetto") == 0;

	if (!mm && !pf && strcmp(x->format, "csv") != 0)
		return mp_cmd_usage(&mp_cmd_export,
		                    "unknown format '%s' (formats: csv, minimalloc, perfetto)",
		                    x->format);
	if (!pf && x->have_min_size)
		return mp_cmd_usage(&mp_cmd_export, "--min-size applies to --format=perfetto only");
	if (x->time && strcmp(x->time, "seq") != 0 && strcmp(x->time, "ns") != 0)
		return mp_cmd_usage(&mp_cmd_export, "invalid --time '%s': expected seq or ns",
		                    x->time);
	if (!mm && (x->time || x->sel.have_pid || x->sel.have_device))
		return mp_cmd_usage(&mp_cmd_export, "--%s applies to --format=minimalloc only",
		                    x->time           ? "time"
		                    : x->sel.have_pid ? "pid"
		                                      : "device");
	return 0;
}

static int parse_opts(int argc, char **argv, struct export_opts *x, const char **out, int *force)
{
	struct mp_cmd_getopt g;
	int64_t v;
	int ch, st;

	mp_cmd_getopt_init(&g, options);
	while ((ch = mp_cmd_getopt_next(&mp_cmd_export, argc, argv, &g, &st)) > 0) {
		switch (ch) {
		case 'o':
			*out = optarg;
			break;
		case OPT_FORMAT:
			x->format = optarg;
			break;
		case OPT_TIME:
			x->time = optarg;
			break;
		case OPT_DEVICE:
			if (int_option("device", optarg, 0, INT32_MAX, &v))
				return MP_EXIT_USAGE;
			x->sel.device = (int32_t)v;
			x->sel.have_device = 1;
			break;
		case OPT_PID:
			if (int_option("pid", optarg, 0, INT64_MAX, &x->sel.pid))
				return MP_EXIT_USAGE;
			x->sel.have_pid = 1;
			break;
		case OPT_MIN_SIZE:
			if (min_size_option(optarg, x))
				return MP_EXIT_USAGE;
			break;
		case 'f':
			*force = 1;
			break;
		}
	}
	if (ch < 0)
		return st ? st : -1;
	if (check_opts(x))
		return MP_EXIT_USAGE;
	if (optind != argc - 1)
		return mp_cmd_usage(&mp_cmd_export,
		                    optind == argc ? "no trace given" : "more than one trace");
	return 0;
}

static int run(int argc, char **argv)
{
	struct export_opts x = {.format = "csv"};
	const char *out = NULL;
	char *beside = NULL;
	struct mp_error err = {0};
	struct mp_outfile of;
	struct mp_store *s;
	int rc, force = 0;

	rc = parse_opts(argc, argv, &x, &out, &force);
	if (rc)
		return rc < 0 ? MP_EXIT_OK : rc;
	if (strcmp(x.format, "perfetto") != 0 && !out)
		out = "-";
	if (mp_cmd_default_output(&out, argv[optind], "json", &beside) < 0)
		return mp_cmd_error(&mp_cmd_export, "out of memory");
	if (mp_cmd_open_trace(&mp_cmd_export, &s, argv[optind], &err) < 0) {
		free(beside);
		return mp_cmd_fail(&mp_cmd_export, &err);
	}
	if (mp_outfile_open(&of, out, force, (const char *const *)argv + optind, &err) < 0) {
		mp_store_close(s);
		free(beside);
		return mp_cmd_fail(&mp_cmd_export, &err);
	}
	rc = export(s, &of, &x, &err);
	if (rc < 0) {
		mp_outfile_abort(&of);
		mp_store_close(s);
		free(beside);
		return mp_cmd_fail(&mp_cmd_export, &err);
	}
	mp_store_close(s);
	rc = mp_outfile_commit(&of, &err);
	if (rc == 0 && beside)
		fprintf(stderr,
		        "memprof export: wrote '%s' (standard output is a terminal; -o - "
		        "writes there)\n",
		        beside);
	free(beside);
	return rc < 0 ? mp_cmd_fail(&mp_cmd_export, &err) : MP_EXIT_OK;
}

const struct mp_cmd mp_cmd_export = {
        .name = "export",
        .summary = "write a trace database as memprof CSV, MiniMalloc CSV or Perfetto JSON",
        .usage = "memprof export [--format=csv|minimalloc|perfetto] [--time=seq|ns] "
                 "[--device=N] [--pid=PID] [--min-size=BYTES] [-o FILE] [-f] TRACE",
        .help = help,
        .run = run,
};
