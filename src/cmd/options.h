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
	const char *help; /* its help: lines joined by '\n', indented to one column */
};

/* getopt_long's strings of a table (ends with an entry of name NULL). */
struct mp_cmd_getopt {
	char shortopts[2 * MP_CMD_MAX_OPTS + 2];
	struct option longopts[MP_CMD_MAX_OPTS + 1];
};

/* Fill g from t: shortopts starts with ':' (mp_cmd_bad_option tells ':' from '?'). */
void mp_cmd_getopt_init(struct mp_cmd_getopt *g, const struct mp_cmd_opt *t);

/* The table as the options part of --help: "  -o, --output=JOB  text", aligned. */
void mp_cmd_opts_help(FILE *out, const struct mp_cmd_opt *t);

#endif
