/*
 * cmd/options.h - one table of a command's options, the one source of its
 * getopt strings and of the options part of its --help (tmux keeps its
 * commands' flags in one template; this is the same idea).  A command
 * lists each option once, with its argument's name and its help text;
 * tests/cli/options-man.sh checks the table against the man page.
 */
#ifndef MP_CMD_OPTIONS_H
#define MP_CMD_OPTIONS_H

#include <getopt.h>
#include <stdio.h>

#define MP_CMD_MAX_OPTS 48

struct mp_cmd_opt {
	int val;          /* what getopt returns; a letter is also the short option */
	const char *name; /* the long option */
	const char *arg;  /* its argument's name ("JOB"), NULL: takes none */
	/* its help: lines joined by '\n', indented to one column; NULL for an
	 * alias of the option before it, which --help does not list (the
	 * option's help and its man page name it) */
	const char *help;
};

/* getopt_long's strings of a table (ends with an entry of name NULL). */
struct mp_cmd_getopt {
	char shortopts[2 * MP_CMD_MAX_OPTS + 2];
	struct option longopts[MP_CMD_MAX_OPTS + 1];
};

/* Fill g from t: shortopts starts with ':' (mp_cmd_bad_option tells ':' from '?'). */
void mp_cmd_getopt_init(struct mp_cmd_getopt *g, const struct mp_cmd_opt *t);

/* Add another table's options to g: a command whose --help shows its
 * options in two tables (diff's thresholds, then the shared options). */
void mp_cmd_getopt_add(struct mp_cmd_getopt *g, const struct mp_cmd_opt *t);
/* After getopt_long returned longopts[idx]: NULL when its name was written
 * out in full, else the abbreviation (argv[optind - 1], or the word before
 * it for "--md FILE").  For commands that take no abbreviation. */
const char *mp_cmd_getopt_abbreviated(char **argv, const struct option *longopts, int idx);

struct mp_cmd;
/* The next option of argv by g, for command c: its value (> 0), 0 after
 * the last, or -1 where the command stops, with *status its exit status:
 * --help printed (c->help; MP_EXIT_OK), or a bad option said
 * (mp_cmd_bad_option; MP_EXIT_USAGE).  getopt's own messages are off. */
int mp_cmd_getopt_next(const struct mp_cmd *c, int argc, char **argv, const struct mp_cmd_getopt *g,
                       int *status);

/* The options of argv by table t, each given to take (its value, its
 * argument or NULL): 0 when all were taken, leaving optind at the first
 * operand; -1 after --help; else the exit status of take's refusal or of a
 * bad option (said). */
int mp_cmd_parse(const struct mp_cmd *c, int argc, char **argv, const struct mp_cmd_opt *t,
                 int (*take)(void *ctx, int ch, const char *arg), void *ctx);

/* The table as the options part of --help: "  -o, --output=JOB  text", aligned. */
void mp_cmd_opts_help(FILE *out, const struct mp_cmd_opt *t);

#endif
