/*
 * cmd/export.c - 'memprof export': write a trace database out in another
 * format (memprof CSV, MiniMalloc CSV for an offline planner, or Chrome
 * trace-event JSON for ui.perfetto.dev).  Options, the choice of a device
 * and plumbing only: the reader streams, report/csv_writer.c,
 * report/minimalloc_writer.c and report/perfetto.c format.
 */
#include "cmd/cmd.h"
#include "report/csv_writer.h"
#include "report/minimalloc_writer.h"
#include "report/perfetto.h"
#include "store/reader.h"
#include "util/outfile.h"
#include "util/parse.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

struct export_opts {
	const char *format;
	const char *time; /* "seq" or "ns"; NULL: not given */
	int64_t pid;      /* --pid, when have_pid */
	int32_t device;   /* --device, when have_device */
	int have_pid, have_device;
	int64_t min_size_bytes; /* --min-size, when have_min_size */
	int have_min_size;
};

static void help(FILE *out)
{
	fprintf(out, "usage: memprof export [options] TRACE\n\n"
	             "Write the events of a trace database in another format.\n\n"
	             "options:\n"
	             "      --format=csv    memprof CSV (memprof-trace(5)), the default\n"
	             "      --format=minimalloc\n"
	             "                      MiniMalloc CSV: id,lower,upper,size, one row per\n"
	             "                      allocation, from its alloc to its free (half-open)\n"
	             "      --time=seq|ns   minimalloc: lifetimes in event numbers (seq, the\n"
	             "                      default) or in timestamps (ns)\n"
	             "      --device=N      minimalloc: the device to export (one address space)\n"
	             "      --pid=PID       minimalloc: the process to export\n"
	             "      --format=perfetto\n"
	             "                      Chrome trace-event JSON for ui.perfetto.dev and\n"
	             "                      chrome://tracing: per device, counters of live,\n"
	             "                      requested and reserved bytes and the allocations\n"
	             "                      as slices; phases as slices; OOMs as instants\n"
	             "      --min-size=BYTES\n"
	             "                      perfetto: slices only for allocations of at least\n"
	             "                      BYTES (e.g. 1MiB); the counters stay exact\n"
	             "  -o, --output=FILE   where to write (default: standard output, or for\n"
	             "                      perfetto TRACE.json, .db replaced, when that is a\n"
	             "                      terminal)\n"
	             "  -f, --force         replace FILE if it exists\n"
	             "  -h, --help          show this help\n\n"
	             "'memprof import' reads either format back: the CSV into the same events,\n"
	             "MiniMalloc CSV into one alloc and one free per row.\n");
}

static int export_csv(struct mp_store *s, struct mp_outfile *of, struct mp_error *err)
{
	const struct memprof_record *rec;
	struct mp_csv_writer *w;
	struct mp_reader *r;
	int rc, durations = 0;

	if (mp_store_has_durations(s, &durations) < 0 || mp_reader_open(s, MP_READ_STACKS, &r) < 0)
		return mp_err_copy(err, mp_store_error(s));
	w = mp_csv_writer_open(of->f, durations);
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

/* "pid 7 device 0, pid 7 device 1" (the first 8) into buf */
static void device_list(const struct memprof_device *d, size_t n, const struct memprof_process *p,
                        size_t n_p, char *buf, size_t size)
{
	size_t i, j, len = 0;

	buf[0] = '\0';
	for (i = 0; i < n && i < 8 && len < size; i++) {
		long long pid = 0;

		for (j = 0; j < n_p; j++)
			if (p[j].id == d[i].process_id)
				pid = (long long)p[j].pid;
		len += (size_t)snprintf(buf + len, size - len, "%spid %lld device %d",
		                        i ? ", " : "", pid, (int)d[i].ordinal);
	}
	if (n > 8 && len < size)
		snprintf(buf + len, size - len, ", ...");
}

/* The one (process, device) pair --pid and --device leave, or the only one. */
static int choose(const struct memprof_device *d, size_t n, const struct memprof_process *p,
                  size_t n_p, const struct export_opts *x, struct mp_minimalloc_opts *o)
{
	size_t i, j, n_match = 0;

	for (i = 0; i < n; i++) {
		int64_t pid = 0;

		for (j = 0; j < n_p; j++)
			if (p[j].id == d[i].process_id)
				pid = p[j].pid;
		if ((x->have_pid && pid != x->pid) || (x->have_device && d[i].ordinal != x->device))
			continue;
		if (n_match++ == 0) {
			o->process_id = d[i].process_id;
			o->device = d[i].ordinal;
		}
	}
	o->select = n_match == 1;
	return (int)(n_match < 2 ? n_match : 2);
}

/* MiniMalloc plans one address space: pick one process and device. */
static int select_device(struct mp_store *s, const struct export_opts *x,
                         struct mp_minimalloc_opts *o, struct mp_error *err)
{
	struct memprof_process *procs = NULL;
	struct memprof_device *devs = NULL;
	size_t n_procs = 0, n_devs = 0;
	char list[512];
	int rc = 0, found;

	if (mp_store_processes(s, &procs, &n_procs) < 0 || mp_store_devices(s, &devs, &n_devs) < 0)
		rc = mp_err_copy(err, mp_store_error(s));
	if (rc == 0 && (n_devs || x->have_pid || x->have_device)) {
		found = choose(devs, n_devs, procs, n_procs, x, o);
		device_list(devs, n_devs, procs, n_procs, list, sizeof(list));
		if (found == 0)
			rc = mp_err(err, MP_EINVAL,
			            "no such device '%s': none matches --pid and "
			            "--device (devices: %s)",
			            mp_store_path(s), n_devs ? list : "none");
		else if (found > 1)
			rc = mp_err(
			        err, MP_EINVAL,
			        "several devices '%s': MiniMalloc plans one address space, choose "
			        "one with --device=N (and --pid=PID) (devices: %s)",
			        mp_store_path(s), list);
	}
	mp_store_free_processes(procs, n_procs);
	mp_store_free_devices(devs, n_devs);
	return rc;
}

static void notes(const struct mp_minimalloc_stats *st)
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

static int export_minimalloc(struct mp_store *s, struct mp_outfile *of, const struct export_opts *x,
                             struct mp_error *err)
{
	struct mp_minimalloc_opts o = {0};
	const struct memprof_record *rec;
	struct mp_minimalloc_stats st;
	struct mp_minimalloc_writer *w;
	struct mp_reader *r;
	int rc;

	o.time = x->time && strcmp(x->time, "ns") == 0 ? MP_MINIMALLOC_TIME_NS
	                                               : MP_MINIMALLOC_TIME_SEQ;
	if ((rc = select_device(s, x, &o, err)) < 0)
		return rc;
	if (mp_reader_open(s, 0, &r) < 0)
		return mp_err_copy(err, mp_store_error(s));
	w = mp_minimalloc_writer_open(of->f, &o);
	if (!w) {
		mp_reader_close(r);
		return mp_err(err, MP_ENOMEM, "out of memory");
	}
	while ((rc = mp_reader_next(r, &rec)) == 1)
		if (mp_minimalloc_writer_record(w, rec) < 0)
			break;
	if (rc < 0)
		mp_err_copy(err, mp_store_error(s));
	if (mp_minimalloc_writer_close(w, &st) < 0 && rc >= 0)
		rc = mp_err(err,
		            errno == ENOSPC || errno == EFBIG ? MP_EFULL
		            : errno == ENOMEM                 ? MP_ENOMEM
		                                              : MP_EIO,
		            "cannot write '%s': %s", of->path ? of->path : "<stdout>",
		            strerror(errno));
	mp_reader_close(r);
	if (rc >= 0)
		notes(&st);
	return rc < 0 ? rc : 0;
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

/* Trace-event JSON: the reader feeds the memory state, which feeds the
 * writer, so the counters are memprof's own figures. */
static int perfetto_run(struct mp_store *s, struct mp_perfetto *w, struct mp_error *err)
{
	struct mp_memstate *ms = malloc(sizeof(*ms));
	struct mp_mem_listener l;
	struct mp_consumer c;
	struct mp_reader *r;
	int rc;

	if (!ms)
		return mp_err(err, MP_ENOMEM, "out of memory");
	mp_memstate_init(ms);
	l = mp_perfetto_listener(w, ms);
	c = mp_memstate_consumer(ms);
	if (mp_reader_open(s, MP_READ_STACKS, &r) < 0) {
		rc = mp_err_copy(err, mp_store_error(s));
	} else {
		mp_memstate_listen(ms, &l);
		mp_reader_add(r, &c);
		rc = mp_cmd_read_trace(s, r, ms, err);
		mp_reader_close(r);
	}
	mp_memstate_free(ms);
	free(ms);
	return rc;
}

static int export_perfetto(struct mp_store *s, struct mp_outfile *of, const struct export_opts *x,
                           struct mp_error *err)
{
	static const char *const keys[] = {"source",       "source_file", "tool_version", "created",
	                                   "command_line", "truncated",   "lossy"};
	struct mp_perfetto_opts o = {.min_size_bytes = x->min_size_bytes};
	const char *meta[2 * 9];
	char *values[7] = {0};
	struct memprof_process *procs = NULL;
	struct memprof_device *devs = NULL;
	struct mp_perfetto_stats st;
	struct mp_perfetto *w = NULL;
	size_t i;
	int rc = 0;

	if (mp_store_processes(s, &procs, &o.n_processes) < 0 ||
	    mp_store_devices(s, &devs, &o.n_devices) < 0)
		rc = mp_err_copy(err, mp_store_error(s));
	meta[0] = "trace";
	meta[1] = mp_store_path(s);
	meta[2] = "exported_by";
	meta[3] = "memprof " PACKAGE_VERSION;
	for (i = 0; i < 7; i++) {
		meta[4 + 2 * i] = keys[i];
		meta[5 + 2 * i] = values[i] = mp_store_get_meta(s, keys[i]);
	}
	o.processes = procs;
	o.devices = devs;
	o.meta = meta;
	o.n_meta = 9;
	if (rc == 0 && !(w = mp_perfetto_open(of->f, &o)))
		rc = mp_err(err, MP_ENOMEM, "out of memory");
	if (rc == 0)
		rc = perfetto_run(s, w, err);
	/* a failed write also stops the reader, with no message of its own */
	if (w && mp_perfetto_close(w, &st) < 0 && (rc >= 0 || !err->msg[0]))
		rc = mp_err(err, errno == ENOSPC || errno == EFBIG ? MP_EFULL : MP_EIO,
		            "cannot write '%s': %s", of->path ? of->path : "<stdout>",
		            strerror(errno));
	if (rc == 0)
		perfetto_notes(&st, x->min_size_bytes);
	for (i = 0; i < 7; i++)
		free(values[i]);
	mp_store_free_processes(procs, o.n_processes);
	mp_store_free_devices(devs, o.n_devices);
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
	if (!mm && (x->time || x->have_pid || x->have_device))
		return mp_cmd_usage(&mp_cmd_export, "--%s applies to --format=minimalloc only",
		                    x->time       ? "time"
		                    : x->have_pid ? "pid"
		                                  : "device");
	return 0;
}

static int parse_opts(int argc, char **argv, struct export_opts *x, const char **out, int *force)
{
	static const struct option longopts[] = {
	        {"output", required_argument, NULL, 'o'},
	        {"format", required_argument, NULL, 'F'},
	        {"time", required_argument, NULL, 'T'},
	        {"device", required_argument, NULL, 'D'},
	        {"pid", required_argument, NULL, 'P'},
	        {"force", no_argument, NULL, 'f'},
	        {"help", no_argument, NULL, 'h'},
	        {"min-size", required_argument, NULL, 'M'},
	        {NULL, 0, NULL, 0},
	};
	int64_t v;
	int ch;

	opterr = 0;
	while ((ch = getopt_long(argc, argv, ":o:fh", longopts, NULL)) != -1) {
		switch (ch) {
		case 'o':
			*out = optarg;
			break;
		case 'F':
			x->format = optarg;
			break;
		case 'T':
			x->time = optarg;
			break;
		case 'D':
			if (int_option("device", optarg, 0, INT32_MAX, &v))
				return MP_EXIT_USAGE;
			x->device = (int32_t)v;
			x->have_device = 1;
			break;
		case 'P':
			if (int_option("pid", optarg, 0, INT64_MAX, &x->pid))
				return MP_EXIT_USAGE;
			x->have_pid = 1;
			break;
		case 'M':
			if (min_size_option(optarg, x))
				return MP_EXIT_USAGE;
			break;
		case 'f':
			*force = 1;
			break;
		case 'h':
			help(stdout);
			return -1;
		default:
			return mp_cmd_bad_option(&mp_cmd_export, argv, ch);
		}
	}
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
	if (strcmp(x.format, "csv") == 0)
		rc = export_csv(s, &of, &err);
	else if (strcmp(x.format, "perfetto") == 0)
		rc = export_perfetto(s, &of, &x, &err);
	else
		rc = export_minimalloc(s, &of, &x, &err);
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
