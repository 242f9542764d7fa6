/*
 * cmd/gate_cmd.h - what 'memprof diff' and 'memprof check' share: the
 * output and limit options, loading a trace's gate figures (one analysis
 * pass plus the stored replay runs), and writing every requested output
 * before choosing the exit status (0 within every limit, 3 past one, 1 on
 * an error).
 */
#ifndef MP_CMD_GATE_CMD_H
#define MP_CMD_GATE_CMD_H

#include <getopt.h>

#include "analysis/gate.h"
#include "cmd/cmd.h"
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

/* The shared long options (end with a NULL entry; no limits among them). */
#define MP_GATE_COMMON_OPTIONS                                                                     \
	{"device", required_argument, NULL, MP_GATE_OPT_DEVICE},                                   \
	        {"top", required_argument, NULL, MP_GATE_OPT_TOP},                                 \
	        {"granularity", required_argument, NULL, MP_GATE_OPT_GRANULARITY},                 \
	        {"format", required_argument, NULL, MP_GATE_OPT_FORMAT},                           \
	        {"require-checked", no_argument, NULL, MP_GATE_OPT_REQUIRE_CHECKED},               \
	        {"output", required_argument, NULL, MP_GATE_OPT_OUTPUT},                           \
	        {"text", required_argument, NULL, MP_GATE_OPT_FILE + MP_GATE_FORMAT_TEXT},         \
	        {"md", required_argument, NULL, MP_GATE_OPT_FILE + MP_GATE_FORMAT_MD},             \
	        {"json", required_argument, NULL, MP_GATE_OPT_FILE + MP_GATE_FORMAT_JSON},         \
	        {"junit", required_argument, NULL, MP_GATE_OPT_FILE + MP_GATE_FORMAT_JUNIT},       \
	        {"force", no_argument, NULL, MP_GATE_OPT_FORCE},                                   \
	{                                                                                          \
		"help", no_argument, NULL, 'h'                                                     \
	}

/* The help text of the shared options. */
#define MP_GATE_COMMON_HELP                                                                        \
	"      --device=N          only device N\n"                                                \
	"      --top=N             call sites listed per device (default 10)\n"                    \
	"      --granularity=SIZE  address-space model granule for modelled reserved\n"            \
	"                          bytes (default 2MiB)\n"                                         \
	"      --require-checked   a threshold that could not be checked fails the gate\n"         \
	"                          (exit 3); without it, it is reported NOT CHECKED\n"             \
	"      --format=FORMAT     text (default), md, json or junit, on standard output\n"        \
	"  -o, --output=FILE       write that format to FILE instead\n"                            \
	"      --text=FILE         also write text to FILE\n"                                      \
	"      --md=FILE           also write Markdown to FILE\n"                                  \
	"      --json=FILE         also write JSON to FILE\n"                                      \
	"      --junit=FILE        also write JUnit XML to FILE\n"                                 \
	"  -f, --force             replace output files that exist (never a trace)\n"              \
	"  -h, --help              show this help\n"

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
/* After getopt_long returned long option longopts[idx] (idx >= 0): 0 when
 * it was written out in full, else MP_EXIT_USAGE after saying so.  A gate
 * takes no abbreviation: '--max-peak' must not silently mean
 * '--max-peak-increase'. */
int mp_gate_cmd_exact(const struct mp_cmd *c, char **argv, const struct option *longopts, int idx);
/* The options of argv by longopts (exact names only), into o: 0, -1 after
 * printing the help (c->help), or an exit status.  Leaves optind at the
 * first operand; refuses (MP_EXIT_ERROR) an output that exists without
 * --force or that is one of the traces, before any trace is read. */
int mp_gate_cmd_parse(const struct mp_cmd *c, int argc, char **argv,
                      const struct option *longopts, struct mp_gate_cmd_opts *o);
/* Load path's gate figures into t (which the caller frees either way).
 * Returns MP_EXIT_OK or MP_EXIT_ERROR after saying why. */
int mp_gate_cmd_load(const struct mp_cmd *c, const char *path, const struct mp_gate_cmd_opts *o,
                     struct mp_gate_trace *t);
/* Check the limits, write every output and choose the exit status: r's
 * results are filled here.  d is NULL for check. */
int mp_gate_cmd_finish(const struct mp_cmd *c, const struct mp_gate_cmd_opts *o,
                       struct mp_gate_report *r);

#endif
