/*
 * main.c - memprof's entry point: global options, the command table, and
 * dispatch to src/cmd/.  "did you mean" for mistyped commands.
 */
#include "cmd/cmd.h"
#include "util/cleanup.h"
#include "util/suggest.h"

#include <stdio.h>
#include <string.h>

static const struct mp_cmd *const commands[] = {
        &mp_cmd_record,
        &mp_cmd_import,
        &mp_cmd_merge,
        &mp_cmd_export,
        &mp_cmd_info,
        &mp_cmd_analyze,
        &mp_cmd_replay,
        &mp_cmd_tune,
        &mp_cmd_report,
        &mp_cmd_diff,
        &mp_cmd_check,
        &mp_cmd_attach,
        &mp_cmd_watch,
};
#define N_COMMANDS (sizeof(commands) / sizeof(commands[0]))

static void usage(FILE *out)
{
	size_t i;

	fprintf(out,
	        "usage: memprof [--help] [--version] <command> [options]\n\n"
	        "GPU memory profiler: record, import, analyze and replay allocation traces.\n\n"
	        "commands:\n");
	for (i = 0; i < N_COMMANDS; i++)
		fprintf(out, "  %-10s %s\n", commands[i]->name, commands[i]->summary);
	fprintf(out,
	        "\n'memprof <command> --help' describes a command; man memprof(1) has more.\n");
}

static const struct mp_cmd *find(const char *name)
{
	size_t i;

	for (i = 0; i < N_COMMANDS; i++)
		if (strcmp(commands[i]->name, name) == 0)
			return commands[i];
	return NULL;
}

static int unknown_command(const char *name)
{
	const char *names[N_COMMANDS], *closest;
	size_t i;

	for (i = 0; i < N_COMMANDS; i++)
		names[i] = commands[i]->name;
	closest = mp_suggest(name, names, N_COMMANDS);
	fprintf(stderr, "memprof: unknown command '%s'\n", name);
	if (closest)
		fprintf(stderr, "hint: did you mean 'memprof %s'?\n", closest);
	else
		fprintf(stderr, "hint: 'memprof --help' lists the commands\n");
	return MP_EXIT_USAGE;
}

/* Exit status of a command that wrote to standard output: a failed write is
 * an error (a command that failed already said why).  A gate that found a
 * threshold exceeded keeps its status 3, and says its output was lost. */
static int flushed(int status)
{
	if ((fflush(stdout) != 0 || ferror(stdout)) &&
	    (status == MP_EXIT_OK || status == MP_EXIT_THRESHOLD)) {
		fprintf(stderr, "memprof: cannot write to standard output\n");
		return status == MP_EXIT_OK ? MP_EXIT_ERROR : status;
	}
	return status;
}

int main(int argc, char **argv)
{
	const struct mp_cmd *c;
	const char *arg = argc > 1 ? argv[1] : NULL;

	mp_cmd_set_line(argc, argv);
	mp_cleanup_on_signals();
	if (!arg) {
		usage(stderr);
		return MP_EXIT_USAGE;
	}
	if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
		usage(stdout);
		return flushed(MP_EXIT_OK);
	}
	if (strcmp(arg, "--version") == 0 || strcmp(arg, "-V") == 0) {
		printf("memprof %s\n", PACKAGE_VERSION);
		return flushed(MP_EXIT_OK);
	}
	if (strcmp(arg, "help") == 0) {
		if (argc < 3) {
			usage(stdout);
			return flushed(MP_EXIT_OK);
		}
		c = find(argv[2]);
		if (!c)
			return unknown_command(argv[2]);
		c->help(stdout);
		return flushed(MP_EXIT_OK);
	}
	if (arg[0] == '-') {
		fprintf(stderr, "memprof: unknown option '%s'\n", arg);
		usage(stderr);
		return MP_EXIT_USAGE;
	}
	c = find(arg);
	if (!c)
		return unknown_command(arg);
	return flushed(c->run(argc - 1, argv + 1));
}
