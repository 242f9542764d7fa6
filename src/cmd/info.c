/*
 * cmd/info.c - 'memprof info': what a trace is (source, counts, processes,
 * devices, time span, peak live bytes, loss flags).  Streams the events once
 * through analysis/memstate; prints through report/info.
 */
#include "analysis/memstate.h"
#include "cmd/cmd.h"
#include "cmd/options.h"
#include "report/info.h"
#include "store/reader.h"
#include "util/visible.h"

#include <getopt.h>
#include <stdlib.h>

enum { OPT_JSON = 256 }; /* long only */

static const struct mp_cmd_opt options[] = {
        {OPT_JSON, "json", NULL, "print JSON (layout in memprof-info(1))"},
        {'h', "help", NULL, "show this help"},
        {0, NULL, NULL, NULL},
};

static void help(FILE *out)
{
	fprintf(out, "usage: memprof info [options] TRACE\n\n"
	             "Describe a trace database: where it came from, how many events and\n"
	             "allocations it holds, its processes and devices, its time span, its peak\n"
	             "of live bytes, and whether anything was lost while recording.\n\n"
	             "options:\n");
	mp_cmd_opts_help(out, options);
}

static int summarize(struct mp_store *s, struct mp_memstate *sum, struct mp_error *err)
{
	struct mp_consumer c = mp_memstate_consumer(sum);
	struct mp_reader *r;
	int rc;

	if (mp_reader_open(s, 0, &r) < 0)
		return mp_err_copy(err, mp_store_error(s));
	mp_reader_add(r, &c);
	rc = mp_cmd_read_trace(s, r, sum, err);
	mp_reader_close(r);
	return rc;
}

/* The text, its trace strings made visible (util/visible). */
static int print_text(const struct mp_info *info, struct mp_error *err)
{
	FILE *v = mp_visible_open(stdout);

	if (!v)
		return mp_err(err, MP_ENOMEM, "out of memory");
	mp_info_print_text(v, info);
	if (fclose(v) != 0)
		return mp_err(err, MP_EIO, "cannot write to standard output");
	return 0;
}

static int describe(struct mp_store *s, int json, struct mp_error *err)
{
	static const char *const keys[] = {"source",  "source_file",     "tool_version",
	                                   "created", "command_line",    "truncated",
	                                   "lossy",   "dropped_records", "import_warnings"};
	char *meta[9] = {0};
	struct memprof_process *procs = NULL;
	struct memprof_device *devs = NULL;
	struct mp_memstate sum;
	struct mp_info info = {0};
	int rc, i;

	mp_memstate_init(&sum);
	rc = summarize(s, &sum, err);
	if (rc == 0 && (mp_store_processes(s, &procs, &info.n_processes) < 0 ||
	                mp_store_devices(s, &devs, &info.n_devices) < 0))
		rc = mp_err_copy(err, mp_store_error(s));
	for (i = 0; i < 9; i++)
		meta[i] = mp_store_get_meta(s, keys[i]);
	if (rc == 0) {
		info.path = mp_store_path(s);
		info.schema_version = mp_store_opened_version(s);
		info.current_version = MP_SCHEMA_VERSION;
		info.source = meta[0];
		info.source_file = meta[1];
		info.tool_version = meta[2];
		info.created = meta[3];
		info.command_line = meta[4];
		info.truncated = meta[5];
		info.lossy = meta[6];
		info.dropped_records = meta[7];
		info.import_warnings = meta[8];
		info.summary = &sum;
		info.processes = procs;
		info.devices = devs;
		if (json && mp_info_print_json(stdout, &info) < 0)
			rc = mp_err(err, MP_ENOMEM, "out of memory");
		else if (!json)
			rc = print_text(&info, err);
	}
	for (i = 0; i < 9; i++)
		free(meta[i]);
	mp_store_free_processes(procs, info.n_processes);
	mp_store_free_devices(devs, info.n_devices);
	mp_memstate_free(&sum);
	return rc;
}

static int run(int argc, char **argv)
{
	struct mp_cmd_getopt g;
	struct mp_error err = {0};
	struct mp_store *s;
	int ch, json = 0, rc;

	mp_cmd_getopt_init(&g, options);
	while ((ch = mp_cmd_getopt_next(&mp_cmd_info, argc, argv, &g, &rc)) > 0)
		json = 1; /* OPT_JSON, the only option but --help */
	if (ch < 0)
		return rc;
	if (optind != argc - 1)
		return mp_cmd_usage(&mp_cmd_info,
		                    optind == argc ? "no trace given" : "more than one trace");
	if (mp_cmd_open_trace(&mp_cmd_info, &s, argv[optind], &err) < 0)
		return mp_cmd_fail(&mp_cmd_info, &err);
	rc = describe(s, json, &err);
	mp_store_close(s);
	if (rc < 0)
		return mp_cmd_fail(&mp_cmd_info, &err);
	if (fflush(stdout) != 0)
		return mp_cmd_error(&mp_cmd_info, "cannot write to standard output");
	return MP_EXIT_OK;
}

const struct mp_cmd mp_cmd_info = {
        .name = "info",
        .summary = "describe a trace: source, counts, devices, time span, peak",
        .usage = "memprof info [--json] TRACE",
        .help = help,
        .run = run,
};
