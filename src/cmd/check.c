/*
 * cmd/check.c - 'memprof check TRACE': absolute memory budgets for a CI
 * job that has no baseline yet (peak live, peak reserved, free share,
 * leaks, OOMs); exit 3 when one is exceeded.  Options and plumbing only:
 * figures and limits in analysis/gate, outputs in report/gate_*.c.
 */
#include "cmd/gate_cmd.h"

#include <stdlib.h>
#include <string.h>

static const struct mp_cmd_opt limits[] = {
        {MP_GATE_OPT_LIMIT + MP_GATE_PEAK, "max-peak", "SIZE", "peak live bytes"},
        {MP_GATE_OPT_LIMIT + MP_GATE_RESERVED, "max-reserved", "SIZE", "peak reserved bytes"},
        {MP_GATE_OPT_LIMIT + MP_GATE_FREE_SHARE, "max-free-share", "R|N%",
         "free share at the reserved peak: free in reserved\n"
         "/ reserved (0.15 or 15%; --max-frag is an alias)"},
        {MP_GATE_OPT_LIMIT + MP_GATE_FREE_SHARE, "max-frag", "R|N%", NULL},
        {MP_GATE_OPT_LIMIT + MP_GATE_LEAKED_BYTES, "max-leaked", "SIZE",
         "bytes still live at the end (leaks)"},
        {MP_GATE_OPT_LIMIT + MP_GATE_LEAKED_BLOCKS, "no-leaks", NULL,
         "no block still live at the end"},
        {MP_GATE_OPT_LIMIT + MP_GATE_OOMS, "no-oom", NULL, "no OOM"},
        {0, NULL, NULL, NULL},
};

static void help(FILE *out)
{
	fprintf(out, "usage: memprof check [options] TRACE\n\n"
	             "Check a trace against absolute budgets: peak live bytes, peak reserved\n"
	             "bytes, free share, leaks and OOMs per device, with what is live at the\n"
	             "peak by call site and the replayed pools stored in the trace.  Exit\n"
	             "status 3 when a budget is exceeded, naming it and by how much.\n\n"
	             "budgets (a limit is the largest value allowed; per device):\n");
	mp_cmd_opts_help(out, limits);
	fprintf(out, "\noptions:\n");
	mp_cmd_opts_help(out, mp_gate_cmd_options);
	fprintf(out,
	        "\nExit status: 0 within every budget, 1 error, 2 usage, 3 a budget exceeded.\n"
	        "Layouts and definitions: memprof-check(1), memprof-diff(1).\n");
}

static int parse_opts(int argc, char **argv, struct mp_gate_cmd_opts *o)
{
	int rc = mp_gate_cmd_parse(&mp_cmd_check, argc, argv, limits, o);

	if (rc != 0)
		return rc;
	if (optind != argc - 1)
		return mp_cmd_usage(&mp_cmd_check,
		                    optind == argc ? "no trace given" : "more than one trace");
	return 0;
}

static int run(int argc, char **argv)
{
	struct mp_gate_cmd_opts o;
	struct mp_gate_trace t;
	struct mp_gate_report r;
	int rc;

	mp_gate_cmd_defaults(&o);
	if ((rc = parse_opts(argc, argv, &o)) != 0)
		return rc < 0 ? MP_EXIT_OK : rc;
	rc = mp_gate_cmd_load(&mp_cmd_check, argv[optind], &o, &t);
	if (rc == MP_EXIT_OK && o.device >= 0 && t.n_devices == 0)
		rc = mp_cmd_check_device(&mp_cmd_check, NULL, argv[optind], o.device);
	if (rc == MP_EXIT_OK) {
		memset(&r, 0, sizeof(r));
		r.command = "check";
		r.head = &t;
		rc = mp_gate_cmd_finish(&mp_cmd_check, &o, &r);
	}
	mp_gate_trace_free(&t);
	return rc;
}

const struct mp_cmd mp_cmd_check = {
        .name = "check",
        .summary = "check a trace against memory budgets; exit 3 when one is exceeded",
        .usage = "memprof check [--max-peak=SIZE] [--max-reserved=SIZE] [--max-free-share=R|N%] "
                 "[--max-leaked=SIZE] [--no-leaks] [--no-oom] [--device=N] [--top=N] "
                 "[--granularity=SIZE] [--require-checked] [--format=FORMAT] [-o FILE] "
                 "[--text=FILE] [--md=FILE] [--junit=FILE] [--json=FILE] [-f] TRACE",
        .help = help,
        .run = run,
};
