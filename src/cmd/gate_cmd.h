/*
 * cmd/gate_cmd.h - what 'memprof diff' and 'memprof check' share: the
 * output and limit options, loading a trace's gate figures (one analysis
 * pass plus the stored replay runs), and writing every requested output
 * before choosing the exit status (0 within every limit, 3 past one, 1 on
 * an error).
 */
#ifndef MP_CMD_GATE_CMD_H
#define MP_CMD_GATE_CMD_H

#include "analysis/gate.h"
#include "cmd/cmd.h"
#include "cmd/options.h"
#include "report/gate.h"

/* getopt_long values of the shared options; a limit option is
 * MP_GATE_OPT_LIMIT + its enum mp_gate_kind. */
enum {
	MP_GATE_OPT_DEVICE = 256,
	MP_GATE_OPT_TOP,
	MP_GATE_OPT_GRANULARITY,
	MP_GATE_OPT_FORMAT,
	MP_GATE_OPT_REQUIRE_CHECKED,
	MP_GATE_OPT_OUTPUT = 'o',
	MP_GATE_OPT_FORCE = 'f',
	MP_GATE_OPT_FILE = 300, /* + enum mp_gate_format: --text, --md, --json, --junit */
	MP_GATE_OPT_LIMIT = 400,
};

/* The shared options (after each command's limits in its --help). */
extern const struct mp_cmd_opt mp_gate_cmd_options[];

struct mp_gate_cmd_opts {
	int32_t device; /* -1: every device */
	int top;
	uint64_t granularity;
	int format;                           /* enum mp_gate_format */
	int require_checked;                  /* --require-checked */
	const char *output;                   /* -o, or NULL for standard output */
	const char *files[MP_GATE_N_FORMATS]; /* --text, --md, --json, --junit */
	int force;                            /* --force: replace outputs that exist */
	const char *const *inputs;            /* the traces, NULL-terminated */
	struct mp_gate_limit limits[MP_GATE_N_KINDS];
	size_t n_limits;
};

void mp_gate_cmd_defaults(struct mp_gate_cmd_opts *o);
/* A shared option or a limit (ch >= MP_GATE_OPT_LIMIT): 0 taken, or
 * MP_EXIT_USAGE after saying why. */
int mp_gate_cmd_option(const struct mp_cmd *c, struct mp_gate_cmd_opts *o, int ch, const char *arg);
/* The options of argv, the command's limits then the shared options (exact
 * names only: '--max-peak' must not silently mean '--max-peak-increase'),
 * into o: 0, -1 after printing the help (c->help), or an exit status.
 * Leaves optind at the first operand; refuses (MP_EXIT_ERROR) an output
 * that exists without --force or that is one of the traces, before any
 * trace is read. */
int mp_gate_cmd_parse(const struct mp_cmd *c, int argc, char **argv,
                      const struct mp_cmd_opt *limits, struct mp_gate_cmd_opts *o);
/* Load path's gate figures into t (which the caller frees either way).
 * Returns MP_EXIT_OK or MP_EXIT_ERROR after saying why. */
int mp_gate_cmd_load(const struct mp_cmd *c, const char *path, const struct mp_gate_cmd_opts *o,
                     struct mp_gate_trace *t);
/* Check the limits, write every output and choose the exit status: r's
 * results are filled here.  d is NULL for check. */
int mp_gate_cmd_finish(const struct mp_cmd *c, const struct mp_gate_cmd_opts *o,
                       struct mp_gate_report *r);

#endif
