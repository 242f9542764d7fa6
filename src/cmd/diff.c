/*
 * cmd/diff.c - 'memprof diff BASE HEAD': the CI regression gate.  The
 * change of peak live, peak reserved, free share and the replayed
 * pools between two traces, the call sites that account for it, and the
 * thresholds that make it exit 3.  Options and plumbing only: figures and
 * limits in analysis/gate, outputs in report/gate_*.c.
 */
#include "cmd/gate_cmd.h"

#include <stdlib.h>
#include <string.h>

static const struct mp_cmd_opt limits[] = {
        {MP_GATE_OPT_LIMIT + MP_GATE_PEAK_INCREASE, "max-peak-increase", "N%|SIZE",
         "peak live bytes, HEAD over BASE"},
        {MP_GATE_OPT_LIMIT + MP_GATE_RESERVED_INCREASE, "max-reserved-increase", "N%|SIZE",
         "peak reserved bytes"},
        {MP_GATE_OPT_LIMIT + MP_GATE_FREE_SHARE, "max-free-share", "R|N%",
         "free share of HEAD: free in reserved\n"
         "/ reserved (0.15 or 15%)\n(--max-frag is an alias)"},
        {MP_GATE_OPT_LIMIT + MP_GATE_FREE_SHARE, "max-frag", "R|N%", NULL},
        {MP_GATE_OPT_LIMIT + MP_GATE_FREE_SHARE_INCREASE, "max-free-share-increase", "R|N%",
         "free share, HEAD minus BASE\n(--max-frag-increase is an alias)"},
        {MP_GATE_OPT_LIMIT + MP_GATE_FREE_SHARE_INCREASE, "max-frag-increase", "R|N%", NULL},
        {MP_GATE_OPT_LIMIT + MP_GATE_POOL_INCREASE, "max-pool-increase", "N%|SIZE",
         "peak reserved of each replayed pool\nstored in both traces"},
        {0, NULL, NULL, NULL},
};

static void help(FILE *out)
{
	fprintf(out, "usage: memprof diff [options] BASE HEAD\n\n"
	             "Compare two traces: the change in peak live bytes, peak reserved bytes,\n"
	             "free share and the replayed pools' results per device, and the call\n"
	             "sites live at the peak that account for it (largest growth first).\n"
	             "Exit status 3 when a threshold is exceeded, naming it and by how much.\n\n"
	             "thresholds (a limit is the largest value allowed; per device; a SIZE needs\n"
	             "its unit, 2B or 2MiB, as a bare 2 could mean 2%%):\n");
	mp_cmd_opts_help(out, limits);
	fprintf(out, "\noptions:\n");
	mp_cmd_opts_help(out, mp_gate_cmd_options);
	fprintf(out, "\nExit status: 0 within every threshold, 1 error, 2 usage, 3 a threshold\n"
	             "exceeded.  Layouts and definitions: memprof-diff(1).\n");
}

static int parse_opts(int argc, char **argv, struct mp_gate_cmd_opts *o)
{
	int rc = mp_gate_cmd_parse(&mp_cmd_diff, argc, argv, limits, o);

	if (rc != 0)
		return rc;
	if (argc - optind != 2)
		return mp_cmd_usage(&mp_cmd_diff, argc - optind < 2
		                                          ? "give two traces, BASE and HEAD"
		                                          : "more than two traces");
	return 0;
}

/* --device=N in neither trace: say so, with the devices each has. */
static int no_device(const struct mp_gate_cmd_opts *o, const char *base, const char *head)
{
	struct mp_error err = {0};
	char lb[200], lh[200];

	if (mp_cmd_device_list(NULL, base, o->device, lb, sizeof(lb), &err) < 0 ||
	    mp_cmd_device_list(NULL, head, o->device, lh, sizeof(lh), &err) < 0)
		return mp_cmd_fail(&mp_cmd_diff, &err);
	return mp_cmd_error(&mp_cmd_diff, "no device %d in '%s' nor in '%s': their devices: %s; %s",
	                    (int)o->device, base, head, lb, lh);
}

static int run(int argc, char **argv)
{
	struct mp_gate_cmd_opts o;
	struct mp_gate_trace base, head;
	struct mp_gate_diff d;
	struct mp_gate_report r;
	int rc;

	mp_gate_cmd_defaults(&o);
	if ((rc = parse_opts(argc, argv, &o)) != 0)
		return rc < 0 ? MP_EXIT_OK : rc;
	memset(&d, 0, sizeof(d));
	memset(&head, 0, sizeof(head));
	rc = mp_gate_cmd_load(&mp_cmd_diff, argv[optind], &o, &base);
	if (rc == MP_EXIT_OK)
		rc = mp_gate_cmd_load(&mp_cmd_diff, argv[optind + 1], &o, &head);
	if (rc == MP_EXIT_OK && o.device >= 0 && base.n_devices == 0 && head.n_devices == 0)
		rc = no_device(&o, argv[optind], argv[optind + 1]);
	if (rc == MP_EXIT_OK && mp_gate_diff(&d, &base, &head) < 0)
		rc = mp_cmd_error(&mp_cmd_diff, "out of memory");
	if (rc == MP_EXIT_OK) {
		memset(&r, 0, sizeof(r));
		r.command = "diff";
		r.base = &base;
		r.head = &head;
		r.diff = &d;
		rc = mp_gate_cmd_finish(&mp_cmd_diff, &o, &r);
	}
	mp_gate_diff_free(&d);
	mp_gate_trace_free(&head);
	mp_gate_trace_free(&base);
	return rc;
}

const struct mp_cmd mp_cmd_diff = {
        .name = "diff",
        .summary = "compare two traces; exit 3 when a threshold is exceeded (CI gate)",
        .usage = "memprof diff [--max-peak-increase=N%|SIZE] [--max-reserved-increase=N%|SIZE] "
                 "[--max-free-share=R|N%] [--max-free-share-increase=R|N%] "
                 "[--max-pool-increase=N%|SIZE] [--device=N] [--top=N] [--granularity=SIZE] "
                 "[--require-checked] [--format=FORMAT] [-o FILE] [--text=FILE] [--md=FILE] "
                 "[--junit=FILE] [--json=FILE] [-f] BASE HEAD",
        .help = help,
        .run = run,
};
