/*
 * cmd/cmd.h - what every subcommand provides and the helpers they share.
 *
 * Adding a subcommand: a file src/cmd/<name>.c ending with one const
 * struct mp_cmd; its declaration below; its entry in the table in
 * src/main.c; its line in Makefile.am; man/memprof-<name>.1; a CLI test in
 * tests/cli/; a line in README.md.  Only cmd/ and main.c print to the user
 * and choose exit statuses.  Nothing outside cmd/ and main.c includes this.
 */
#ifndef MP_CMD_CMD_H
#define MP_CMD_CMD_H

#include <stdio.h>

#include "analysis/memstate.h"
#include "report/runs.h"
#include "store/results.h"
#include "store/reader.h"
#include "util/error.h"

enum {
	MP_EXIT_OK = 0,
	MP_EXIT_ERROR = 1,
	MP_EXIT_USAGE = 2,
	MP_EXIT_THRESHOLD = 3, /* a CI threshold was exceeded */
};

struct mp_cmd {
	const char *name;
	const char *summary; /* one line for 'memprof --help' */
	const char *usage;   /* "memprof import [options] FILE" */
	void (*help)(FILE *out);
	int (*run)(int argc, char **argv); /* argv[0] is the command name */
};

extern const struct mp_cmd mp_cmd_import;
extern const struct mp_cmd mp_cmd_export;
extern const struct mp_cmd mp_cmd_info;
extern const struct mp_cmd mp_cmd_analyze;
extern const struct mp_cmd mp_cmd_replay;
extern const struct mp_cmd mp_cmd_report;
extern const struct mp_cmd mp_cmd_record;
extern const struct mp_cmd mp_cmd_attach;
extern const struct mp_cmd mp_cmd_watch;
extern const struct mp_cmd mp_cmd_diff;
extern const struct mp_cmd mp_cmd_check;
extern const struct mp_cmd mp_cmd_merge;
extern const struct mp_cmd mp_cmd_tune;

/* "memprof <cmd>: <message>" on stderr; returns MP_EXIT_ERROR. */
int mp_cmd_error(const struct mp_cmd *c, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)));
/* The same for a library error, with a hint line when one is known. */
int mp_cmd_fail(const struct mp_cmd *c, const struct mp_error *e);
/* A usage error: message, then "try 'memprof <cmd> --help'"; returns MP_EXIT_USAGE. */
int mp_cmd_usage(const struct mp_cmd *c, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)));
/* Report what getopt_long returned for a bad option: ch is '?' (unknown) or
 * ':' (missing argument; option strings start with ':').  Returns MP_EXIT_USAGE. */
int mp_cmd_bad_option(const struct mp_cmd *c, char **argv, int ch);

/* mp_store_open, and a warning on stderr when the trace's last write had
 * been interrupted and was rolled back (what was lost). */
int mp_cmd_open_trace(const struct mp_cmd *c, struct mp_store **s, const char *path,
                      struct mp_error *err);

/* mp_reader_run(r) with the memory state ms among its consumers, its error
 * turned into a message naming the trace (and the oversized event). */
int mp_cmd_read_trace(struct mp_store *s, struct mp_reader *r, const struct mp_memstate *ms,
                      struct mp_error *err);

/*
 * Every command that takes --device=N says the same when the trace has no
 * device N: "no device N in 'T': its devices: 0, 1" (or "none (no events)"),
 * exit 1.  Returns MP_EXIT_OK when device is -1 (all) or in the trace (open s, or
 * path opened here), else prints that and returns MP_EXIT_ERROR.
 */
int mp_cmd_check_device(const struct mp_cmd *c, struct mp_store *s, const char *path,
                        int32_t device);
/* The trace's event devices as text in list ("0, 1"); 1 when device is among them, 0 when
 * not, -1 with err set when the trace cannot be read.  s may be NULL: path is opened. */
int mp_cmd_device_list(struct mp_store *s, const char *path, int32_t device, char *list,
                       size_t size, struct mp_error *err);

/* Each line of an import's notes (mp_import_stats.notes) as
 * "memprof <cmd>: warning: LINE" on stderr. */
void mp_cmd_print_notes(const struct mp_cmd *c, const char *notes);

/* The options every import into a trace starts from (import, merge): this
 * version, the command line, progress on standard error when a terminal. */
struct mp_import_opts;
struct mp_import_stats;
void mp_cmd_import_opts(struct mp_import_opts *o);
/* An import's warnings (a count per kind) and notes, each as
 * "memprof <cmd>: warning: ..." on stderr. */
void mp_cmd_print_import_warnings(const struct mp_cmd *c, const struct mp_import_stats *st);

/* TRACE with ".db" replaced by (or, without it, followed by) ".EXT";
 * malloc'd, NULL when out of memory (cmd/outpath.c). */
char *mp_cmd_output_beside(const char *trace, const char *ext);
/* The output of a command whose -o defaults to standard output but whose
 * output is no use on a terminal: *output given (non-NULL) is kept; else
 * "-" when standard output is not a terminal (returns 0), else the file
 * beside the trace (mp_cmd_output_beside, returned in *owned to free;
 * returns 1: say where on standard error).  -1 when out of memory. */
int mp_cmd_default_output(const char **output, const char *trace, const char *ext, char **owned);
/* The whole command line, joined by spaces, for the meta table (static buffer). */
const char *mp_cmd_line(void);
void mp_cmd_set_line(int argc, char **argv);

#endif
