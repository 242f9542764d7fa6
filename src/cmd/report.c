/*
 * cmd/report.c - 'memprof report': one trace's analyses (analysis/pass,
 * plus fragmentation over time and phase spans) and its stored replay
 * results drawn as one self-contained HTML file (report/report_html*.c) or
 * summarized in Markdown (report/report_md.c), written whole or not at all
 * through util/outfile.
 */
#include "analysis/frag_series.h"
#include "analysis/gate.h"
#include "analysis/pass.h"
#include "analysis/phase_spans.h"
#include "cmd/cmd.h"
#include "report/report.h"
#include "store/reader.h"
#include "util/outfile.h"
#include "util/parse.h"
#include "util/visible.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

struct report_opts {
	const char *trace, *head, *output; /* head: the second trace, NULL for one */
	int md, force;
	int32_t device;
	int top;
	int64_t points, blocks;
};

static void help(FILE *out)
{
	fprintf(out,
	        "usage: memprof report [options] TRACE\n"
	        "       memprof report [options] BASE HEAD\n\n"
	        "Draw a trace for people: one self-contained HTML file with every block as a\n"
	        "band over time, the allocator's segments and blocks at any moment, live,\n"
	        "requested and reserved bytes over time (phases shaded, the peak and every OOM\n"
	        "marked), fragmentation over time, what is live at the peak by call stack, the\n"
	        "replay results stored in the trace and the lifetime findings; or a Markdown\n"
	        "summary for a pull request comment.  Charts and definitions: "
	        "memprof-report(1).\n\n"
	        "options:\n"
	        "  -o, --output=FILE    write to FILE (default: standard output, or for HTML\n"
	        "                       TRACE.html, .db replaced, when that is a terminal)\n"
	        "  -f, --force          replace FILE if it exists (never the trace)\n"
	        "      --format=FORMAT  html (default) or md\n"
	        "      --device=N       only device N\n"
	        "      --top=N          rows per table (default 10)\n"
	        "      --points=N       at most N states per series and device (default %d)\n"
	        "      --blocks=N       at most N blocks per device drawn whole in the active\n"
	        "                       memory timeline; the rest merged (default %d)\n"
	        "  -h, --help           show this help\n",
	        MP_TIMELINE_DEFAULT_POINTS, MP_REPORT_DEFAULT_BLOCKS);
}

static int parse_value(struct report_opts *o, int ch, const char *arg)
{
	int64_t v;

	switch (ch) {
	case 'o':
		o->output = arg;
		return 0;
	case 'm':
		if (strcmp(arg, "html") != 0 && strcmp(arg, "md") != 0)
			return mp_cmd_usage(&mp_cmd_report,
			                    "invalid --format '%s': give html or md", arg);
		o->md = strcmp(arg, "md") == 0;
		return 0;
	case 'd':
		if (mp_parse_count(arg, 0, INT32_MAX, &v) < 0)
			return mp_cmd_usage(&mp_cmd_report, "invalid device '%s'", arg);
		o->device = (int32_t)v;
		return 0;
	case 't':
		if (mp_parse_count(arg, 1, 1000000, &v) < 0)
			return mp_cmd_usage(&mp_cmd_report, "invalid --top '%s': give 1 to 1000000",
			                    arg);
		o->top = (int)v;
		return 0;
	case 'b':
		if (mp_parse_count(arg, 0, MP_REPORT_MAX_BLOCKS, &o->blocks) < 0)
			return mp_cmd_usage(&mp_cmd_report, "invalid --blocks '%s': give 0 to %d",
			                    arg, MP_REPORT_MAX_BLOCKS);
		return 0;
	default: /* 'p' */
		if (mp_parse_count(arg, MP_TIMELINE_MIN_POINTS, MP_TIMELINE_MAX_POINTS,
		                   &o->points) < 0)
			return mp_cmd_usage(&mp_cmd_report, "invalid --points '%s': give %d to %d",
			                    arg, MP_TIMELINE_MIN_POINTS, MP_TIMELINE_MAX_POINTS);
		return 0;
	}
}

static int parse_opts(int argc, char **argv, struct report_opts *o)
{
	static const struct option longopts[] = {
	        {"output", required_argument, NULL, 'o'},
	        {"force", no_argument, NULL, 'f'},
	        {"format", required_argument, NULL, 'm'},
	        {"device", required_argument, NULL, 'd'},
	        {"top", required_argument, NULL, 't'},
	        {"points", required_argument, NULL, 'p'},
	        {"blocks", required_argument, NULL, 'b'},
	        {"help", no_argument, NULL, 'h'},
	        {NULL, 0, NULL, 0},
	};
	int ch, rc;

	opterr = 0;
	while ((ch = getopt_long(argc, argv, ":ho:f", longopts, NULL)) != -1) {
		switch (ch) {
		case 'h':
			help(stdout);
			return -1;
		case 'f':
			o->force = 1;
			break;
		case '?':
		case ':':
			return mp_cmd_bad_option(&mp_cmd_report, argv, ch);
		default:
			if ((rc = parse_value(o, ch, optarg)) != 0)
				return rc;
		}
	}
	if (optind == argc || argc - optind > 2)
		return mp_cmd_usage(&mp_cmd_report,
		                    optind == argc ? "no trace given" : "more than two traces");
	if (argc - optind == 2 && o->md)
		return mp_cmd_usage(&mp_cmd_report,
		                    "two traces are compared in HTML only: leave out --format=md");
	o->trace = argv[optind];
	o->head = argc - optind == 2 ? argv[optind + 1] : NULL;
	return 0;
}

/* Everything the writers read, owned here. */
struct report_state {
	struct mp_pass *pass;
	struct mp_frag_series series;
	struct mp_phase_spans phases;
	struct mp_block_spans spans;
	struct mp_gate_trace gate;
	struct mp_cmd_runs runs;
	struct memprof_device *devices;
	size_t n_devices;
	char *meta[7]; /* source, command_line, created, tool_version, clock, allocator_settings,
	                  private_pools */
	struct mp_analysis a;
	struct mp_report_input in;
	struct mp_store *s;
	struct mp_reader *r;
};

static void state_free(struct report_state *st)
{
	int i;

	if (st->pass) {
		mp_pass_free(st->pass);
		free(st->pass);
	}
	mp_frag_series_free(&st->series);
	mp_phase_spans_free(&st->phases);
	mp_block_spans_free(&st->spans);
	mp_gate_trace_free(&st->gate);
	mp_cmd_runs_free(&st->runs);
	if (st->devices)
		mp_store_free_devices(st->devices, st->n_devices);
	for (i = 0; i < 7; i++)
		free(st->meta[i]);
}

/* The pass, with fragmentation over time and phase spans listening after
 * its analyses, run over the trace. */
static int analyze(struct mp_store *s, struct mp_reader *r, const struct report_opts *o,
                   struct report_state *st, struct mp_error *err)
{
	struct mp_mem_listener ls[3];
	struct mp_pass_opts po;
	int rc, i;

	mp_phase_spans_init(&st->phases, 0);
	mp_block_spans_init(&st->spans);
	if (!(st->pass = calloc(1, sizeof(*st->pass))))
		return mp_err(err, MP_ENOMEM, "out of memory");
	mp_pass_opts_default(&po);
	po.timeline_points = o->points;
	po.kinds |= 1u << MP_ATTR_API;
	po.life.no_timestamps = mp_cmd_no_timestamps(s);
	rc = mp_pass_init(st->pass, &po);
	if (rc == 0)
		rc = mp_frag_series_init(&st->series, &st->pass->frag, o->points);
	if (rc == 0)
		rc = mp_pass_attach(st->pass, r);
	ls[0] = mp_frag_series_listener(&st->series);
	ls[1] = mp_phase_spans_listener(&st->phases);
	ls[2] = mp_block_spans_listener(&st->spans);
	for (i = 0; i < (o->md ? 2 : 3) && rc == 0; i++)
		rc = mp_memstate_listen(&st->pass->ms, &ls[i]);
	if (rc < 0)
		return mp_err(err, rc, "cannot set up the analyses");
	return mp_cmd_read_trace(s, r, &st->pass->ms, err);
}

/* The writers' input from the results, the trace's meta and devices. */
static int fill(struct mp_store *s, const struct report_opts *o, struct report_state *st,
                struct mp_error *err)
{
	static const char *const keys[7] = {"source",       "command_line", "created",
	                                    "tool_version", "clock",        "allocator_settings",
	                                    "private_pools"};
	struct mp_analysis *a = &st->a;
	int i;

	for (i = 0; i < 7; i++)
		st->meta[i] = mp_store_get_meta(s, keys[i]);
	if (mp_store_devices(s, &st->devices, &st->n_devices) < 0)
		return mp_err_copy(err, mp_store_error(s));
	if (!o->md && mp_gate_trace_from_pass(&st->gate, st->pass, mp_store_path(s), st->meta[0],
	                                      o->device) < 0)
		return mp_err(err, MP_ENOMEM, "out of memory");
	st->gate.truncated = mp_cmd_meta_flag(s, "truncated");
	st->gate.lossy = mp_cmd_meta_flag(s, "lossy");
	a->path = mp_store_path(s);
	a->source = st->meta[0];
	a->truncated = mp_cmd_meta_flag(s, "truncated");
	a->lossy = mp_cmd_meta_flag(s, "lossy");
	a->modelled_granted_blocks = mp_cmd_meta_int(s, "modelled_granted_blocks");
	a->device = o->device;
	a->top = o->top;
	a->stack_depth = 3;
	a->kinds = st->pass->opts.kinds;
	a->at = st->pass->opts.at;
	a->granularity = st->pass->opts.granularity;
	a->churn_window_ns = st->pass->opts.life.churn_window_ns;
	a->idle_min_share = st->pass->opts.life.idle_min_share;
	a->no_timestamps = st->pass->opts.life.no_timestamps;
	a->ms = &st->pass->ms;
	a->frag = &st->pass->frag;
	a->attr = &st->pass->attr;
	a->life = &st->pass->life;
	st->in = (struct mp_report_input){
	        .a = a,
	        .timeline = &st->pass->timeline,
	        .runs = &st->runs.view,
	        .command_line = st->meta[1],
	        .created = st->meta[2],
	        .tool_version = st->meta[3],
	        .frag_series = &st->series,
	        .phases = &st->phases,
	        .devices = st->devices,
	        .n_devices = st->n_devices,
	        .spans = o->md ? NULL : &st->spans,
	        .max_blocks = o->blocks,
	        .gate = o->md ? NULL : &st->gate,
	        .clock = st->meta[4],
	        .allocator_settings = st->meta[5],
	        .private_pools = st->meta[6],
	};
	return 0;
}

/* The Markdown, its trace strings made visible (util/visible). */
static int write_md(FILE *out, const struct mp_report_input *in)
{
	FILE *v = mp_visible_open(out);
	int rc;

	if (!v)
		return MP_ENOMEM;
	rc = mp_report_write_md(v, in);
	if (fclose(v) != 0 && rc == 0)
		rc = MP_EIO;
	return rc;
}

/* Open, analyze and describe one trace; its store and reader stay open
 * until unload (names and stacks are the reader's). */
static int load(const char *path, const struct report_opts *o, struct report_state *st,
                struct mp_error *err)
{
	int rc;

	if (mp_cmd_open_trace(&mp_cmd_report, &st->s, path, err) < 0 ||
	    mp_cmd_load_runs(path, &st->runs, err) < 0)
		return err->code;
	if (mp_reader_open(st->s, MP_READ_STACKS, &st->r) < 0)
		return mp_err_copy(err, mp_store_error(st->s));
	if ((rc = analyze(st->s, st->r, o, st, err)) == 0)
		rc = fill(st->s, o, st, err);
	return rc;
}

static void unload(struct report_state *st)
{
	if (!st)
		return;
	mp_reader_close(st->r);
	state_free(st);
	if (st->s)
		mp_store_close(st->s);
	free(st);
}

/* BASE and HEAD: the gate's comparison and both runs on one page. */
static int write_diff(FILE *out, struct report_state *const *st, const struct report_opts *o)
{
	struct mp_gate_diff d = {0};
	int rc = mp_gate_diff(&d, &st[0]->gate, &st[1]->gate);

	if (rc == 0)
		rc = mp_report_write_diff_html(out, &st[0]->in, &st[1]->in, &d, o->device, o->top);
	mp_gate_diff_free(&d);
	return rc;
}

static int report(const struct report_opts *o, struct mp_error *err)
{
	struct report_state *st[2] = {NULL, NULL};
	const char *inputs[] = {o->trace, o->head, NULL};
	int n = o->head ? 2 : 1, i, rc = 0;
	struct mp_outfile of;

	if (mp_outfile_open(&of, o->output, o->force, inputs, err) < 0)
		return err->code;
	for (i = 0; i < n && rc == 0; i++)
		if (!(st[i] = calloc(1, sizeof(*st[i]))))
			rc = mp_err(err, MP_ENOMEM, "out of memory");
		else
			rc = load(i ? o->head : o->trace, o, st[i], err);
	if (rc == 0) {
		rc = n == 2  ? write_diff(of.f, st, o)
		     : o->md ? write_md(of.f, &st[0]->in)
		             : mp_report_write_html(of.f, &st[0]->in);
		if (rc < 0)
			rc = mp_outfile_write_error(&of, rc, "report", err);
	}
	if (rc == 0)
		rc = mp_outfile_commit(&of, err);
	else
		mp_outfile_abort(&of);
	for (i = 0; i < n; i++)
		unload(st[i]);
	return rc;
}

static int run(int argc, char **argv)
{
	struct report_opts o = {.output = NULL, .device = -1, .top = 10};
	char *beside = NULL;
	struct mp_error err = {0};
	int rc;

	o.points = MP_TIMELINE_DEFAULT_POINTS;
	o.blocks = MP_REPORT_DEFAULT_BLOCKS;
	if ((rc = parse_opts(argc, argv, &o)) != 0)
		return rc < 0 ? MP_EXIT_OK : rc;
	if ((rc = mp_cmd_check_device(&mp_cmd_report, NULL, o.trace, o.device)) != 0 ||
	    (o.head && (rc = mp_cmd_check_device(&mp_cmd_report, NULL, o.head, o.device)) != 0))
		return rc;
	if (o.md && !o.output)
		o.output = "-";
	if (mp_cmd_default_output(&o.output, o.head ? o.head : o.trace, "html", &beside) < 0)
		rc = mp_err(&err, MP_ENOMEM, "out of memory");
	else
		rc = report(&o, &err);
	if (rc == 0 && beside)
		fprintf(stderr,
		        "memprof report: wrote '%s' (standard output is a terminal; -o - "
		        "writes there)\n",
		        beside);
	free(beside);
	if (rc < 0)
		return mp_cmd_fail(&mp_cmd_report, &err);
	return MP_EXIT_OK;
}

const struct mp_cmd mp_cmd_report = {
        .name = "report",
        .summary = "charts of a trace in one HTML file, or a Markdown summary",
        .usage = "memprof report [-o FILE] [-f] [--format=html|md] [--device=N] [--top=N] "
                 "[--points=N] [--blocks=N] TRACE [HEAD]",
        .help = help,
        .run = run,
};
