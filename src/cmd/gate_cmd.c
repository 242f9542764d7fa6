/*
 * cmd/gate_cmd.c - the plumbing 'memprof diff' and 'memprof check' share:
 * their common options and limits, each trace's gate figures loaded
 * (load/gate_load.c), and the outputs written (report/gate_*.c) before
 * the exit status is chosen.
 */
#include "cmd/gate_cmd.h"
#include "load/gate_load.h"
#include "util/outfile.h"
#include "util/parse.h"
#include "util/visible.h"

#include <stdlib.h>
#include <string.h>

const struct mp_cmd_opt mp_gate_cmd_options[] = {
        {MP_GATE_OPT_DEVICE, "device", "N", "only device N"},
        {MP_GATE_OPT_TOP, "top", "N", "call sites listed per device (default 10)"},
        {MP_GATE_OPT_GRANULARITY, "granularity", "SIZE",
         "address-space model granule for modelled reserved\nbytes (default 2MiB)"},
        {MP_GATE_OPT_REQUIRE_CHECKED, "require-checked", NULL,
         "a threshold that could not be checked fails the gate\n"
         "(exit 3); without it, it is reported NOT CHECKED"},
        {MP_GATE_OPT_FORMAT, "format", "FORMAT",
         "text (default), md, json or junit, on standard output"},
        {MP_GATE_OPT_OUTPUT, "output", "FILE", "write that format to FILE instead"},
        {MP_GATE_OPT_FILE + MP_GATE_FORMAT_TEXT, "text", "FILE", "also write text to FILE"},
        {MP_GATE_OPT_FILE + MP_GATE_FORMAT_MD, "md", "FILE", "also write Markdown to FILE"},
        {MP_GATE_OPT_FILE + MP_GATE_FORMAT_JSON, "json", "FILE", "also write JSON to FILE"},
        {MP_GATE_OPT_FILE + MP_GATE_FORMAT_JUNIT, "junit", "FILE", "also write JUnit XML to FILE"},
        {MP_GATE_OPT_FORCE, "force", NULL, "replace output files that exist (never a trace)"},
        {'h', "help", NULL, "show this help"},
        {0, NULL, NULL, NULL},
};

void mp_gate_cmd_defaults(struct mp_gate_cmd_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->device = -1;
	o->top = 10;
	o->granularity = MP_FRAG_DEFAULT_GRANULARITY;
	o->format = MP_GATE_FORMAT_TEXT;
}

/* A ratio given as a bare percent ("15" for 15%): the hint, else "". */
static const char *ratio_hint(char *hint, size_t n, const char *arg)
{
	struct mp_gate_limit l;
	char pct[48];

	hint[0] = '\0';
	if (strlen(arg) + 2 > sizeof(pct) || strchr(arg, '%'))
		return hint;
	snprintf(pct, sizeof(pct), "%s%%", arg);
	if (mp_gate_limit_parse(MP_GATE_FREE_SHARE, pct, &l) == 0)
		snprintf(hint, n, " (did you mean %s?)", pct);
	return hint;
}

static int add_limit(const struct mp_cmd *c, struct mp_gate_cmd_opts *o, int kind, const char *arg)
{
	struct mp_gate_limit l;
	char hint[80];
	size_t i;

	if (mp_gate_limit_bare_number(kind, arg))
		return mp_cmd_usage(c,
		                    "invalid --%s '%s': a number without a unit is ambiguous (did "
		                    "you mean %s%% or %s%s?)",
		                    mp_gate_kind_option(kind), arg, arg, arg,
		                    strchr(arg, '.') ? "MiB" : "B");
	if (mp_gate_limit_parse(kind, arg, &l) < 0) {
		if (kind == MP_GATE_FREE_SHARE || kind == MP_GATE_FREE_SHARE_INCREASE)
			return mp_cmd_usage(c,
			                    "invalid --%s '%s': give a ratio from 0 to 1 or a "
			                    "percentage, such as 0.15 or 15%%%s",
			                    mp_gate_kind_option(kind), arg,
			                    ratio_hint(hint, sizeof(hint), arg));
		if (kind <= MP_GATE_POOL_INCREASE)
			return mp_cmd_usage(c,
			                    "invalid --%s '%s': give a percentage such as 2%% or a "
			                    "size such as 100MiB",
			                    mp_gate_kind_option(kind), arg);
		return mp_cmd_usage(c, "invalid --%s '%s': give a size such as 20GiB",
		                    mp_gate_kind_option(kind), arg);
	}
	for (i = 0; i < o->n_limits && o->limits[i].kind != kind; i++)
		;
	o->limits[i] = l; /* the last of an option given twice wins */
	if (i == o->n_limits)
		o->n_limits++;
	return 0;
}

int mp_gate_cmd_option(const struct mp_cmd *c, struct mp_gate_cmd_opts *o, int ch, const char *arg)
{
	int64_t v;

	if (ch >= MP_GATE_OPT_LIMIT && ch < MP_GATE_OPT_LIMIT + MP_GATE_N_KINDS)
		return add_limit(c, o, ch - MP_GATE_OPT_LIMIT, arg);
	if (ch >= MP_GATE_OPT_FILE && ch < MP_GATE_OPT_FILE + MP_GATE_N_FORMATS) {
		o->files[ch - MP_GATE_OPT_FILE] = arg;
		return 0;
	}
	switch (ch) {
	case MP_GATE_OPT_DEVICE:
		if (mp_parse_count(arg, 0, INT32_MAX, &v) < 0)
			return mp_cmd_usage(c, "invalid device '%s'", arg);
		o->device = (int32_t)v;
		return 0;
	case MP_GATE_OPT_TOP:
		if (mp_parse_count(arg, 1, 1000000, &v) < 0)
			return mp_cmd_usage(c, "invalid --top '%s': give 1 to 1000000", arg);
		o->top = (int)v;
		return 0;
	case MP_GATE_OPT_GRANULARITY:
		if (mp_parse_bytes(arg, &v) < 0 || v < 1 || (v & (v - 1)) != 0)
			return mp_cmd_usage(
			        c, "invalid --granularity '%s': give a power of two such as 2MiB",
			        arg);
		o->granularity = (uint64_t)v;
		return 0;
	case MP_GATE_OPT_FORCE:
		o->force = 1;
		return 0;
	case MP_GATE_OPT_FORMAT:
		if ((o->format = mp_gate_format_parse(arg)) < 0)
			return mp_cmd_usage(
			        c, "invalid --format '%s': give text, md, json or junit", arg);
		return 0;
	case MP_GATE_OPT_REQUIRE_CHECKED:
		o->require_checked = 1;
		return 0;
	default: /* MP_GATE_OPT_OUTPUT */
		o->output = arg;
		return 0;
	}
}

/* Every output file by the rule of util/outfile, before any work. */
static int check_outputs(const struct mp_cmd *c, const struct mp_gate_cmd_opts *o)
{
	struct mp_error err = {0};
	int f;

	for (f = 0; f < MP_GATE_N_FORMATS; f++)
		if (o->files[f] && mp_outfile_check(o->files[f], o->force, o->inputs, &err) < 0)
			return mp_cmd_fail(c, &err);
	if (o->output && mp_outfile_check(o->output, o->force, o->inputs, &err) < 0)
		return mp_cmd_fail(c, &err);
	return 0;
}

int mp_gate_cmd_parse(const struct mp_cmd *c, int argc, char **argv,
                      const struct mp_cmd_opt *limits, struct mp_gate_cmd_opts *o)
{
	struct mp_cmd_getopt g;
	const char *abbrev;
	int ch, rc, idx;

	mp_cmd_getopt_init(&g, limits);
	mp_cmd_getopt_add(&g, mp_gate_cmd_options);
	opterr = 0;
	while ((ch = getopt_long(argc, argv, g.shortopts, g.longopts, (idx = -1, &idx))) != -1) {
		if (idx >= 0 && ch != '?' && ch != ':' &&
		    (abbrev = mp_cmd_getopt_abbreviated(argv, g.longopts, idx)))
			return mp_cmd_usage(c,
			                    "invalid option '%s': write options out in full (did "
			                    "you mean '--%s'?)",
			                    abbrev, g.longopts[idx].name);
		switch (ch) {
		case 'h':
			c->help(stdout);
			return -1;
		case '?':
		case ':':
			return mp_cmd_bad_option(c, argv, ch);
		default:
			if ((rc = mp_gate_cmd_option(c, o, ch, optarg)) != 0)
				return rc;
		}
	}
	o->inputs = (const char *const *)argv + optind; /* argv[argc] is NULL */
	return check_outputs(c, o);
}

int mp_gate_cmd_load(const struct mp_cmd *c, const char *path, const struct mp_gate_cmd_opts *o,
                     struct mp_gate_trace *t)
{
	struct mp_error err = {0};
	struct mp_store *s;
	int rc;

	memset(t, 0, sizeof(*t));
	if (mp_cmd_open_trace(c, &s, path, &err) < 0)
		return mp_cmd_fail(c, &err);
	rc = mp_load_gate_pass(s, o->granularity, o->device, t, &err);
	mp_store_close(s);
	if (rc == 0)
		rc = mp_load_gate_pools(path, o->device, t, &err);
	if (rc < 0)
		return mp_cmd_fail(c, &err);
	return MP_EXIT_OK;
}

/* mp_gate_write, with the text and Markdown made visible (util/visible):
 * no terminal escape from a trace reaches a terminal or a CI log. */
static int gate_write(FILE *out, int format, const struct mp_gate_report *r)
{
	FILE *v;
	int rc;

	if (format != MP_GATE_FORMAT_TEXT && format != MP_GATE_FORMAT_MD)
		return mp_gate_write(out, format, r);
	if (!(v = mp_visible_open(out)))
		return MP_ENOMEM;
	rc = mp_gate_write(v, format, r);
	if (fclose(v) != 0 && rc == 0)
		rc = MP_EIO;
	return rc;
}

static int write_file(const struct mp_cmd *c, const struct mp_gate_cmd_opts *o, const char *path,
                      int format, const struct mp_gate_report *r)
{
	struct mp_error err = {0};
	struct mp_outfile of;
	int rc;

	if (mp_outfile_open(&of, path, o->force, o->inputs, &err) < 0)
		return mp_cmd_fail(c, &err);
	if ((rc = gate_write(of.f, format, r)) < 0) {
		mp_outfile_write_error(&of, rc, mp_gate_format_name(format), &err);
		mp_outfile_abort(&of);
		return mp_cmd_fail(c, &err);
	}
	if (mp_outfile_commit(&of, &err) < 0)
		return mp_cmd_fail(c, &err);
	return MP_EXIT_OK;
}

int mp_gate_cmd_finish(const struct mp_cmd *c, const struct mp_gate_cmd_opts *o,
                       struct mp_gate_report *r)
{
	struct mp_gate_result *res;
	ptrdiff_t n;
	int f, rc, status = MP_EXIT_OK;

	res = mp_gate_check(r->diff, r->head, o->limits, o->n_limits, &n);
	if (n < 0)
		return mp_cmd_error(c, "out of memory");
	r->results = res;
	r->n_results = (size_t)n;
	r->limits = o->limits;
	r->n_limits = o->n_limits;
	r->device = o->device;
	r->top = o->top;
	r->require_checked = o->require_checked;
	for (f = 0; f < MP_GATE_N_FORMATS; f++)
		if (o->files[f] && write_file(c, o, o->files[f], f, r) != MP_EXIT_OK)
			status = MP_EXIT_ERROR;
	if (o->output) {
		if (write_file(c, o, o->output, o->format, r) != MP_EXIT_OK)
			status = MP_EXIT_ERROR;
	} else if ((rc = gate_write(stdout, o->format, r)) < 0) {
		status = mp_cmd_error(c, "cannot write %s to standard output: %s",
		                      mp_gate_format_name(o->format),
		                      rc == MP_ENOMEM ? "out of memory" : "write error");
	}
	if (status == MP_EXIT_OK && mp_gate_failed(r))
		status = MP_EXIT_THRESHOLD;
	free(res);
	r->results = NULL;
	r->n_results = 0;
	return status;
}
