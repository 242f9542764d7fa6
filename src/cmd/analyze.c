/*
 * cmd/analyze.c - 'memprof analyze': peaks, fragmentation, who holds memory
 * at the peak, lifetime patterns and, for a multi-process trace, the
 * figures of each rank, in one pass of the reader through analysis/memstate
 * and its listeners; printed by report/analyze, the timeline written by
 * report/timeline_csv.
 */
#include "analysis/numa.h"
#include "analysis/pass.h"
#include "cmd/cmd.h"
#include "report/analyze.h"
#include "report/timeline_csv.h"
#include "store/reader.h"
#include "util/outfile.h"
#include "util/duration.h"
#include "util/parse.h"
#include "util/trace_window.h"
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
	const char *at_text;
	const char *step_name; /* --step */
};

static void help(FILE *out)
{
	fprintf(out,
	        "usage: memprof analyze [options] TRACE\n\n"
	        "Where a trace's memory goes: peaks of live, requested and reserved bytes,\n"
	        "internal and external fragmentation, what is live at the peak grouped by\n"
	        "call stack, phase, stream and size, and lifetime patterns (leaks, churn,\n"
	        "reuse candidates, blocks idle until the end); for a trace of several ranks\n"
	        "(or processes), each rank's peaks, their spread and the call sites that\n"
	        "differ between ranks.  Definitions: memprof-analyze(1).\n\n"
	        "options:\n"
	        "      --device=N          only device N\n"
	        "      --top=N             groups and findings listed per table (default 10)\n"
	        "      --stack-depth=N     frames shown per call stack (default 3): the call\n"
	        "                          site, then source frames toward the caller\n"
	        "      --by=LIST           group by stack,phase,stream,size,api or all\n"
	        "                          (default stack,phase,stream,size)\n"
	        "      --at=WHEN           attribute at 'peak' (default), 'oom' (the first OOM),\n"
	        "                          a timestamp in ns, or +DURATION from the first event\n"
	        "      --granularity=SIZE  address-space model granule (default 2MiB)\n"
	        "      --churn-window=DUR  a block freed this soon is churn (default 1ms; DUR\n"
	        "                          takes a unit: ns, us, ms, s, min, h)\n"
	        "      --idle-share=R      least share of the trace an idle block lives (0.5)\n"
	        "      --timeline=FILE     write live/requested/reserved bytes over time as CSV\n"
	        "  -f, --force             replace the --timeline FILE if it exists\n"
	        "      --points=N          at most N timeline rows per device (default 2000)\n"
	        "      --step=NAME         each begin of phase NAME starts a training step (plan\n"
	        "                          metrics; default: from phase names or the period)\n"
	        "      --json              print JSON (layout in memprof-analyze(1))\n"
	        "  -h, --help              show this help\n");
}

static int parse_by(const char *text, unsigned *kinds)
{
	char *copy = strdup(text), *save = NULL, *tok;
	int k, rc = 0;

	*kinds = 0;
	if (!copy)
		return -1;
	for (tok = strtok_r(copy, ",", &save); tok && rc == 0; tok = strtok_r(NULL, ",", &save)) {
		if (strcmp(tok, "all") == 0) {
			*kinds = (1u << MP_ATTR_KINDS) - 1;
			continue;
		}
		for (k = 0; k < MP_ATTR_KINDS && strcmp(tok, mp_attr_kind_names[k]) != 0; k++)
			;
		if (k == MP_ATTR_KINDS)
			rc = -1;
		else
			*kinds |= 1u << k;
	}
	free(copy);
	return rc == 0 && *kinds ? 0 : -1;
}

/* --at: peak, oom, a timestamp (ns), or +DURATION (resolved after the run
 * starts: the first timestamp is only known then). */
static int parse_at(struct analyze_opts *o, const char *text)
{
	int64_t v;
	int bare = 0;

	o->at_text = text;
	if (strcmp(text, "peak") == 0)
		o->a.at = MP_ATTR_AT_PEAK;
	else if (strcmp(text, "oom") == 0)
		o->a.at = MP_ATTR_AT_OOM;
	else if (text[0] == '+' && mp_parse_duration_unit(text + 1, &v, &bare) == 0)
		o->a.at = MP_ATTR_AT_TIME, o->a.at_ts_ns = v;
	else if (text[0] == '+')
		return bare ? -2 : -1;
	else if (mp_parse_count(text, INT64_MIN, INT64_MAX, &v) == 0)
		o->a.at = MP_ATTR_AT_TIME, o->a.at_ts_ns = v;
	else
		return -1;
	return 0;
}

static int parse_value(struct analyze_opts *o, int ch, const char *arg)
{
	int64_t v;
	int rc;
	char why[128];

	switch (ch) {
	case 'd':
		if (mp_parse_count(arg, 0, INT32_MAX, &v) < 0)
			return mp_cmd_usage(&mp_cmd_analyze, "invalid device '%s'", arg);
		o->a.device = (int)v;
		return 0;
	case 't':
		if (mp_parse_count(arg, 1, 1000000, &v) < 0)
			return mp_cmd_usage(&mp_cmd_analyze,
			                    "invalid --top '%s': give 1 to 1000000", arg);
		o->a.top = (int)v;
		return 0;
	case 'D':
		if (mp_parse_count(arg, 1, 1000, &v) < 0)
			return mp_cmd_usage(&mp_cmd_analyze,
			                    "invalid --stack-depth '%s': give 1 to 1000", arg);
		o->a.stack_depth = (int)v;
		return 0;
	case 'b':
		if (parse_by(arg, &o->a.kinds) < 0)
			return mp_cmd_usage(
			        &mp_cmd_analyze,
			        "invalid --by '%s': give stack, phase, stream, size, api or "
			        "all, separated by commas",
			        arg);
		return 0;
	case 'a':
		if ((rc = parse_at(o, arg)) == -2)
			return mp_cmd_usage(&mp_cmd_analyze, "invalid --at '%s': %s", arg,
			                    mp_duration_problem(why, sizeof(why), arg, 1, "ns"));
		if (rc < 0)
			return mp_cmd_usage(
			        &mp_cmd_analyze,
			        "invalid --at '%s': give peak, oom, a timestamp in ns or "
			        "+DURATION",
			        arg);
		return 0;
	case 'g':
		if (mp_parse_bytes(arg, &v) < 0 || v < 1 || (v & (v - 1)) != 0)
			return mp_cmd_usage(
			        &mp_cmd_analyze,
			        "invalid --granularity '%s': give a power of two such as 2MiB",
			        arg);
		o->a.granularity = (uint64_t)v;
		return 0;
	case 'c':
		if (mp_parse_duration_unit(arg, &o->a.churn_window_ns, &rc) < 0)
			return mp_cmd_usage(&mp_cmd_analyze, "invalid --churn-window '%s': %s", arg,
			                    mp_duration_problem(why, sizeof(why), arg, rc, "ns"));
		return 0;
	case 'i':
		if (mp_parse_ratio(arg, 0, 1, &o->a.idle_min_share) < 0)
			return mp_cmd_usage(
			        &mp_cmd_analyze,
			        "invalid --idle-share '%s': give a ratio from 0 to 1 or "
			        "a percentage, such as 0.5 or 50%%",
			        arg);
		return 0;
	case 'p':
		if (mp_parse_count(arg, MP_TIMELINE_MIN_POINTS, MP_TIMELINE_MAX_POINTS,
		                   &o->points) < 0)
			return mp_cmd_usage(&mp_cmd_analyze, "invalid --points '%s': give %d to %d",
			                    arg, MP_TIMELINE_MIN_POINTS, MP_TIMELINE_MAX_POINTS);
		return 0;
	case 's':
		if (!arg[0])
			return mp_cmd_usage(&mp_cmd_analyze,
			                    "invalid --step '': give a phase name");
		o->step_name = arg;
		return 0;
	default: /* 'l' */
		o->timeline = arg;
		return 0;
	}
}

static int parse_opts(int argc, char **argv, struct analyze_opts *o)
{
	static const struct option longopts[] = {
	        {"device", required_argument, NULL, 'd'},
	        {"top", required_argument, NULL, 't'},
	        {"stack-depth", required_argument, NULL, 'D'},
	        {"by", required_argument, NULL, 'b'},
	        {"at", required_argument, NULL, 'a'},
	        {"granularity", required_argument, NULL, 'g'},
	        {"churn-window", required_argument, NULL, 'c'},
	        {"idle-share", required_argument, NULL, 'i'},
	        {"timeline", required_argument, NULL, 'l'},
	        {"points", required_argument, NULL, 'p'},
	        {"step", required_argument, NULL, 's'},
	        {"json", no_argument, NULL, 'j'},
	        {"force", no_argument, NULL, 'f'},
	        {"help", no_argument, NULL, 'h'},
	        {NULL, 0, NULL, 0},
	};
	int ch, rc;

	opterr = 0;
	while ((ch = getopt_long(argc, argv, ":fh", longopts, NULL)) != -1) {
		switch (ch) {
		case 'j':
			o->json = 1;
			break;
		case 'f':
			o->force = 1;
			break;
		case 'h':
			help(stdout);
			return -1;
		case '?':
		case ':':
			return mp_cmd_bad_option(&mp_cmd_analyze, argv, ch);
		default:
			if ((rc = parse_value(o, ch, optarg)) != 0)
				return rc;
		}
	}
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
	struct mp_pass_opts po;
	struct mp_pass *p = calloc(1, sizeof(*p));
	struct mp_numa numa = {0};
	struct mp_reader *r = NULL;
	struct memprof_process *procs = NULL;
	size_t n_procs = 0;
	char *source = NULL, *window = NULL;
	int rc;

	if (!p)
		return mp_err(err, MP_ENOMEM, "out of memory");
	if (mp_reader_open(s, MP_READ_STACKS, &r) < 0) {
		free(p);
		return mp_err_copy(err, mp_store_error(s));
	}
	mp_pass_opts_default(&po);
	po.granularity = o->a.granularity;
	po.kinds = o->a.kinds;
	po.at = o->a.at;
	po.at_ts_ns = o->a.at_ts_ns;
	po.at_relative = o->at_text && o->at_text[0] == '+';
	po.life.churn_window_ns = o->a.churn_window_ns;
	po.life.idle_min_share = o->a.idle_min_share;
	po.life.no_timestamps = o->a.no_timestamps = mp_cmd_no_timestamps(s);
	po.timeline_points = o->timeline ? o->points : 0;
	po.ranks = 1;
	po.ranks_device = o->a.device;
	po.plan = 1;
	po.step_name = o->step_name;
	po.plan_device = o->a.device;
	if (mp_store_processes(s, &procs, &n_procs) < 0) {
		mp_reader_close(r);
		free(p);
		return mp_err_copy(err, mp_store_error(s));
	}
	po.processes = procs;
	po.n_processes = n_procs;
	rc = mp_pass_init(p, &po);
	mp_store_free_processes(procs, n_procs);
	if (rc == 0)
		rc = mp_pass_attach(p, r);
	if (rc < 0)
		mp_err(err, rc, "cannot set up the analyses");
	else
		rc = mp_cmd_read_trace(s, r, &p->ms, err);
	if (rc == 0 && o->timeline)
		rc = write_timeline(o, &p->timeline, err);
	if (rc == 0 && (rc = mp_numa_load(s, o->a.device, &numa, err)) == 0)
		o->a.numa = &numa;
	if (rc == 0) {
		o->a.path = mp_store_path(s);
		o->a.source = source = mp_store_get_meta(s, "source");
		o->a.truncated = mp_cmd_meta_flag(s, "truncated");
		o->a.lossy = mp_cmd_meta_flag(s, "lossy");
		window = mp_store_get_meta(s, MP_WINDOW_META);
		o->a.window = mp_trace_window(source, window, o->a.truncated);
		o->a.modelled_granted_blocks = mp_cmd_meta_int(s, "modelled_granted_blocks");
		o->a.ms = &p->ms;
		o->a.frag = &p->frag;
		o->a.attr = &p->attr;
		o->a.life = &p->life;
		o->a.ranks = &p->ranks;
		o->a.plan = po.plan ? &p->plan : NULL;
		if (o->a.at == MP_ATTR_AT_TIME)
			o->a.at_ts_ns = mp_pass_at_ts_ns(p);
		if (o->json && mp_analyze_print_json(stdout, &o->a) < 0)
			rc = mp_err(err, MP_ENOMEM, "out of memory");
		else if (!o->json)
			rc = print_text(o, err);
	}
	free(source);
	free(window);
	mp_numa_free(&numa);
	mp_reader_close(r);
	mp_pass_free(p);
	free(p);
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
	{
		struct mp_pass_opts d;

		mp_pass_opts_default(&d);
		o.a.kinds = d.kinds;
		o.a.at = d.at;
		o.a.granularity = d.granularity;
		o.a.churn_window_ns = d.life.churn_window_ns;
		o.a.idle_min_share = d.life.idle_min_share;
	}
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
                 "[--step=NAME] "
                 "[--json] [--timeline=FILE.csv] [-f] TRACE",
        .help = help,
        .run = run,
};
