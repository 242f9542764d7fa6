/*
 * cmd/analyze.c - 'memprof analyze': peaks, fragmentation, who holds memory
 * at the peak, lifetime patterns and, for a multi-process trace, the
 * figures of each rank, in one pass of the reader through analysis/memstate
 * and its listeners; printed by report/analyze, the timeline written by
 * report/timeline_csv.
 */
#include "analysis/pass.h"
#include "cmd/cmd.h"
#include "cmd/options.h"
#include "load/analysis_load.h"
#include "report/analyze_out.h"
#include "report/timeline_csv.h"
#include "util/outfile.h"
#include "util/duration.h"
#include "util/parse.h"
#include "util/visible.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

struct analyze_opts {
	struct mp_analysis a;
	int json;
	const char *timeline;
	const char *trace;
	int force;
	int64_t points;
	const char *step_name; /* --step */
};

enum {
	OPT_JSON = 256,
	OPT_DEVICE,
	OPT_TOP,
	OPT_STACK_DEPTH,
	OPT_BY,
	OPT_AT,
	OPT_GRANULARITY,
	OPT_CHURN_WINDOW,
	OPT_IDLE_SHARE,
	OPT_TIMELINE,
	OPT_POINTS,
	OPT_STEP
};

static const struct mp_cmd_opt options[] = {
        {OPT_DEVICE, "device", "N", "only device N"},
        {OPT_TOP, "top", "N", "groups and findings listed per table (default 10)"},
        {OPT_STACK_DEPTH, "stack-depth", "N",
         "frames shown per call stack (default 3): the call\n"
         "site, then source frames toward the caller"},
        {OPT_BY, "by", "LIST",
         "group by stack,phase,stream,size,api or all\n(default stack,phase,stream,size)"},
        {OPT_AT, "at", "WHEN",
         "attribute at 'peak' (default), 'oom' (the first OOM),\n"
         "a timestamp in ns, or +DURATION from the first event"},
        {OPT_GRANULARITY, "granularity", "SIZE", "address-space model granule (default 2MiB)"},
        {OPT_CHURN_WINDOW, "churn-window", "DUR",
         "a block freed this soon is churn (default 1ms; DUR\n"
         "takes a unit: ns, us, ms, s, min, h)"},
        {OPT_IDLE_SHARE, "idle-share", "R", "least share of the trace an idle block lives (0.5)"},
        {OPT_TIMELINE, "timeline", "FILE", "write live/requested/reserved bytes over time as CSV"},
        {'f', "force", NULL, "replace the --timeline FILE if it exists"},
        {OPT_POINTS, "points", "N", "at most N timeline rows per device (default 2000)"},
        {OPT_STEP, "step", "NAME",
         "each begin of phase NAME starts a training step (plan\n"
         "metrics; default: from phase names or the period)"},
        {OPT_JSON, "json", NULL, "print JSON (layout in memprof-analyze(1))"},
        {'h', "help", NULL, "show this help"},
        {0, NULL, NULL, NULL},
};

static void help(FILE *out)
{
	fprintf(out, "usage: memprof analyze [options] TRACE\n\n"
	             "Where a trace's memory goes: peaks of live, requested and reserved bytes,\n"
	             "internal and external fragmentation, what is live at the peak grouped by\n"
	             "call stack, phase, stream and size, and lifetime patterns (leaks, churn,\n"
	             "reuse candidates, blocks idle until the end); for a trace of several ranks\n"
	             "(or processes), each rank's peaks, their spread and the call sites that\n"
	             "differ between ranks.  Definitions: memprof-analyze(1).\n\n"
	             "options:\n");
	mp_cmd_opts_help(out, options);
}

static int parse_value(void *ctx, int ch, const char *arg)
{
	struct analyze_opts *o = ctx;
	int64_t v;
	int rc;
	char why[128];

	switch (ch) {
	case OPT_JSON:
		o->json = 1;
		return 0;
	case 'f':
		o->force = 1;
		return 0;
	case OPT_DEVICE:
		if (mp_parse_count(arg, 0, INT32_MAX, &v) < 0)
			return mp_cmd_usage(&mp_cmd_analyze, "invalid device '%s'", arg);
		o->a.device = (int)v;
		return 0;
	case OPT_TOP:
		if (mp_parse_count(arg, 1, 1000000, &v) < 0)
			return mp_cmd_usage(&mp_cmd_analyze,
			                    "invalid --top '%s': give 1 to 1000000", arg);
		o->a.top = (int)v;
		return 0;
	case OPT_STACK_DEPTH:
		if (mp_parse_count(arg, 1, 1000, &v) < 0)
			return mp_cmd_usage(&mp_cmd_analyze,
			                    "invalid --stack-depth '%s': give 1 to 1000", arg);
		o->a.stack_depth = (int)v;
		return 0;
	case OPT_BY:
		if (mp_analyze_parse_by(arg, &o->a.opts.kinds) < 0)
			return mp_cmd_usage(
			        &mp_cmd_analyze,
			        "invalid --by '%s': give stack, phase, stream, size, api or "
			        "all, separated by commas",
			        arg);
		return 0;
	case OPT_AT:
		if ((rc = mp_analyze_parse_at(arg, &o->a.opts)) == -2)
			return mp_cmd_usage(&mp_cmd_analyze, "invalid --at '%s': %s", arg,
			                    mp_duration_problem(why, sizeof(why), arg, 1, "ns"));
		if (rc < 0)
			return mp_cmd_usage(
			        &mp_cmd_analyze,
			        "invalid --at '%s': give peak, oom, a timestamp in ns or "
			        "+DURATION",
			        arg);
		return 0;
	case OPT_GRANULARITY:
		if (mp_parse_bytes(arg, &v) < 0 || v < 1 || (v & (v - 1)) != 0)
			return mp_cmd_usage(
			        &mp_cmd_analyze,
			        "invalid --granularity '%s': give a power of two such as 2MiB",
			        arg);
		o->a.opts.granularity = (uint64_t)v;
		return 0;
	case OPT_CHURN_WINDOW:
		if (mp_parse_duration_unit(arg, &o->a.opts.life.churn_window_ns, &rc) < 0)
			return mp_cmd_usage(&mp_cmd_analyze, "invalid --churn-window '%s': %s", arg,
			                    mp_duration_problem(why, sizeof(why), arg, rc, "ns"));
		return 0;
	case OPT_IDLE_SHARE:
		if (mp_parse_ratio(arg, 0, 1, &o->a.opts.life.idle_min_share) < 0)
			return mp_cmd_usage(
			        &mp_cmd_analyze,
			        "invalid --idle-share '%s': give a ratio from 0 to 1 or "
			        "a percentage, such as 0.5 or 50%%",
			        arg);
		return 0;
	case OPT_POINTS:
		if (mp_parse_count(arg, MP_TIMELINE_MIN_POINTS, MP_TIMELINE_MAX_POINTS,
		                   &o->points) < 0)
			return mp_cmd_usage(&mp_cmd_analyze, "invalid --points '%s': give %d to %d",
			                    arg, MP_TIMELINE_MIN_POINTS, MP_TIMELINE_MAX_POINTS);
		return 0;
	case OPT_STEP:
		if (!arg[0])
			return mp_cmd_usage(&mp_cmd_analyze,
			                    "invalid --step '': give a phase name");
		o->step_name = arg;
		return 0;
	default: /* OPT_TIMELINE */
		o->timeline = arg;
		return 0;
	}
}

static int parse_opts(int argc, char **argv, struct analyze_opts *o)
{
	int rc = mp_cmd_parse(&mp_cmd_analyze, argc, argv, options, parse_value, o);

	if (rc != 0)
		return rc;
	if (optind != argc - 1)
		return mp_cmd_usage(&mp_cmd_analyze,
		                    optind == argc ? "no trace given" : "more than one trace");
	return 0;
}

static int write_timeline(const struct analyze_opts *o, const struct mp_timeline *t,
                          struct mp_error *err)
{
	const char *inputs[] = {o->trace, NULL};
	struct mp_outfile of;
	int rc;

	if (mp_outfile_open(&of, o->timeline, o->force, inputs, err) < 0)
		return err->code;
	if ((rc = mp_timeline_csv_write(of.f, t, o->a.device)) < 0) {
		rc = mp_outfile_write_error(&of, rc, "timeline", err);
		mp_outfile_abort(&of);
		return rc;
	}
	return mp_outfile_commit(&of, err);
}

/* The text report, its trace strings made visible (util/visible). */
static int print_text(const struct analyze_opts *o, struct mp_error *err)
{
	FILE *v = mp_visible_open(stdout);

	if (!v)
		return mp_err(err, MP_ENOMEM, "out of memory");
	mp_analyze_print_text(v, &o->a);
	if (fclose(v) != 0)
		return mp_err(err, MP_EIO, "cannot write to standard output");
	return 0;
}

static int analyze(struct mp_store *s, struct analyze_opts *o, struct mp_error *err)
{
	struct mp_analyze_load l;
	int rc = mp_analyze_load_pass(s, &o->a, o->timeline ? o->points : 0, o->step_name, &l, err);

	if (rc == 0 && o->timeline)
		rc = write_timeline(o, &l.pass->timeline, err);
	if (rc == 0)
		rc = mp_analyze_load_fill(s, &o->a, &l, err);
	if (rc == 0 && o->json && mp_analyze_print_json(stdout, &o->a) < 0)
		rc = mp_err(err, MP_ENOMEM, "out of memory");
	else if (rc == 0 && !o->json)
		rc = print_text(o, err);
	mp_analyze_load_free(&l);
	return rc;
}

static int run(int argc, char **argv)
{
	struct analyze_opts o;
	struct mp_error err = {0};
	struct mp_store *s;
	int rc;

	memset(&o, 0, sizeof(o));
	o.a.device = -1;
	o.a.top = 10;
	o.a.stack_depth = 3;
	mp_pass_opts_default(&o.a.opts);
	o.points = MP_TIMELINE_DEFAULT_POINTS;
	if ((rc = parse_opts(argc, argv, &o)) != 0)
		return rc < 0 ? MP_EXIT_OK : rc;
	o.trace = argv[optind];
	if (o.timeline &&
	    mp_outfile_check(o.timeline, o.force, (const char *const *)argv + optind, &err) < 0)
		return mp_cmd_fail(&mp_cmd_analyze, &err);
	if (mp_cmd_open_trace(&mp_cmd_analyze, &s, argv[optind], &err) < 0)
		return mp_cmd_fail(&mp_cmd_analyze, &err);
	if ((rc = mp_cmd_check_device(&mp_cmd_analyze, s, argv[optind], o.a.device)) != 0) {
		mp_store_close(s);
		return rc;
	}
	rc = analyze(s, &o, &err);
	mp_store_close(s);
	if (rc < 0)
		return mp_cmd_fail(&mp_cmd_analyze, &err);
	return MP_EXIT_OK;
}

const struct mp_cmd mp_cmd_analyze = {
        .name = "analyze",
        .summary = "peaks, fragmentation, who holds memory at the peak, lifetime patterns",
        .usage = "memprof analyze [--device=N] [--top=N] [--stack-depth=N] [--by=LIST] [--at=WHEN] "
                 "[--granularity=SIZE] [--churn-window=DUR] [--idle-share=R] [--step=NAME] "
                 "[--json] [--timeline=FILE.csv] [-f] [--points=N] TRACE",
        .help = help,
        .run = run,
};
