/*
 * cmd/report.c - 'memprof report': one trace (or BASE and HEAD), loaded by
 * cmd/report_load.c, drawn as one self-contained HTML file
 * (report/report_html*.c) or summarized in Markdown (report/report_md.c),
 * written whole or not at all through util/outfile.
 */
#include "cmd/options.h"
#include "cmd/report_load.h"
#include "util/outfile.h"
#include "util/parse.h"
#include "util/visible.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

enum { OPT_FORMAT = 256, OPT_DEVICE, OPT_TOP, OPT_POINTS, OPT_BLOCKS };

#define STR(x)  #x
#define XSTR(x) STR(x)

static const struct mp_cmd_opt options[] = {
        {'o', "output", "FILE",
         "write to FILE (default: standard output, or for HTML\n"
         "TRACE.html, .db replaced, when that is a terminal)"},
        {'f', "force", NULL, "replace FILE if it exists (never the trace)"},
        {OPT_FORMAT, "format", "FORMAT", "html (default) or md"},
        {OPT_DEVICE, "device", "N", "only device N"},
        {OPT_TOP, "top", "N", "rows per table (default 10)"},
        {OPT_POINTS, "points", "N",
         "at most N states per series and device (default " XSTR(MP_TIMELINE_DEFAULT_POINTS) ")"},
        {OPT_BLOCKS, "blocks", "N",
         "at most N blocks per device drawn whole in the active\n"
         "memory timeline; the rest merged (default " XSTR(MP_REPORT_DEFAULT_BLOCKS) ")"},
        {'h', "help", NULL, "show this help"},
        {0, NULL, NULL, NULL},
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
	        "options:\n");
	mp_cmd_opts_help(out, options);
}

static int parse_value(void *ctx, int ch, const char *arg)
{
	struct mp_report_opts *o = ctx;
	int64_t v;

	switch (ch) {
	case 'f':
		o->force = 1;
		return 0;
	case 'o':
		o->output = arg;
		return 0;
	case OPT_FORMAT:
		if (strcmp(arg, "html") != 0 && strcmp(arg, "md") != 0)
			return mp_cmd_usage(&mp_cmd_report,
			                    "invalid --format '%s': give html or md", arg);
		o->md = strcmp(arg, "md") == 0;
		return 0;
	case OPT_DEVICE:
		if (mp_parse_count(arg, 0, INT32_MAX, &v) < 0)
			return mp_cmd_usage(&mp_cmd_report, "invalid device '%s'", arg);
		o->device = (int32_t)v;
		return 0;
	case OPT_TOP:
		if (mp_parse_count(arg, 1, 1000000, &v) < 0)
			return mp_cmd_usage(&mp_cmd_report, "invalid --top '%s': give 1 to 1000000",
			                    arg);
		o->top = (int)v;
		return 0;
	case OPT_BLOCKS:
		if (mp_parse_count(arg, 0, MP_REPORT_MAX_BLOCKS, &o->blocks) < 0)
			return mp_cmd_usage(&mp_cmd_report, "invalid --blocks '%s': give 0 to %d",
			                    arg, MP_REPORT_MAX_BLOCKS);
		return 0;
	default: /* OPT_POINTS */
		if (mp_parse_count(arg, MP_TIMELINE_MIN_POINTS, MP_TIMELINE_MAX_POINTS,
		                   &o->points) < 0)
			return mp_cmd_usage(&mp_cmd_report, "invalid --points '%s': give %d to %d",
			                    arg, MP_TIMELINE_MIN_POINTS, MP_TIMELINE_MAX_POINTS);
		return 0;
	}
}

static int parse_opts(int argc, char **argv, struct mp_report_opts *o)
{
	int rc = mp_cmd_parse(&mp_cmd_report, argc, argv, options, parse_value, o);

	if (rc != 0)
		return rc;
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

/* BASE and HEAD: the gate's comparison and both runs on one page. */
static int write_diff(FILE *out, struct mp_report_trace *const *st, const struct mp_report_opts *o)
{
	struct mp_gate_diff d = {0};
	int rc = mp_gate_diff(&d, &st[0]->gate, &st[1]->gate);

	if (rc == 0)
		rc = mp_report_write_diff_html(out, &st[0]->in, &st[1]->in, &d, o->device, o->top);
	mp_gate_diff_free(&d);
	return rc;
}

static int report(const struct mp_report_opts *o, struct mp_error *err)
{
	struct mp_report_trace *st[2] = {NULL, NULL};
	const char *inputs[] = {o->trace, o->head, NULL};
	int n = o->head ? 2 : 1, i, rc = 0;
	struct mp_outfile of;

	if (mp_outfile_open(&of, o->output, o->force, inputs, err) < 0)
		return err->code;
	for (i = 0; i < n && rc == 0; i++)
		rc = mp_report_load(i ? o->head : o->trace, o, &st[i], err);
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
		mp_report_unload(st[i]);
	return rc;
}

static int run(int argc, char **argv)
{
	struct mp_report_opts o = {.output = NULL, .device = -1, .top = 10};
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
