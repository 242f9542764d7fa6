/*
 * cmd/record_args.c - the command line of 'memprof record': its option
 * table (cmd/options.h), --help, and the options parsed into struct
 * mp_record_opts (sys/record.h).  Options end at the command's name.
 */
#include "cmd/cmd.h"
#include "cmd/options.h"
#include "cmd/record.h"

#include <getopt.h>
#include <string.h>

enum { /* long only */
       OPT_STACKS = 256,
       OPT_STACK_SAMPLE,
       OPT_STACK_DEPTH,
       OPT_DORMANT,
       OPT_NO_CACHE,
       OPT_HISTORY_ENTRIES,
       OPT_NO_TORCH_HISTORY,
       OPT_KEEP_SPOOL,
       OPT_SPOOL_DIR,
       OPT_INJECT,
       OPT_CUPTI,
       OPT_LIVE,
       OPT_LIVE_LOG,
       OPT_METRICS,
};

static const struct mp_cmd_opt options[] = {
        {'o', "output", "TRACE",
         "the database to write (default:\nmemprof-NAME-YYYYMMDD-HHMMSS.db here)"},
        {'f', "force", NULL, "replace TRACE if it exists"},
        {OPT_STACKS, "stacks", "MODE", "host call stacks: off, sampled or all\n(default all)"},
        {OPT_STACK_SAMPLE, "stack-sample", "N", "sampled: one allocation call in N (default 16)"},
        {OPT_STACK_DEPTH, "stack-depth", "D", "frames kept per stack, 1 to 128 (default 32)"},
        {OPT_DORMANT, "dormant", NULL, "record nothing until 'memprof attach PID start'"},
        {OPT_NO_CACHE, "no-framework-cache", NULL,
         "make PyTorch, JAX and TensorFlow send each\ntensor to CUDA (changes the workload's "
         "memory\nbehaviour)"},
        {OPT_HISTORY_ENTRIES, "history-entries", "N",
         "PyTorch's own allocator history keeps N events\n(its ring buffer; default 100000)"},
        {OPT_NO_TORCH_HISTORY, "no-torch-history", NULL,
         "do not turn PyTorch's allocator history on (the\ntrace then holds its segments, not "
         "its tensors)"},
        {OPT_KEEP_SPOOL, "keep-spool", NULL, "keep the raw spools after converting them"},
        {OPT_SPOOL_DIR, "spool-dir", "DIR",
         "where the spools go (default: a new directory in\n$TMPDIR)"},
        {OPT_INJECT, "inject", "PATH", "the injected library (libmemprof-inject.so)"},
        {OPT_CUPTI, "cupti", "PATH", "the CUPTI library (libcupti.so.13)"},
        {OPT_LIVE, "live", NULL,
         "show live figures while CMD runs: a view that\nrefreshes every second on a terminal "
         "('q' closes\nit), else a line a second on stderr"},
        {OPT_LIVE_LOG, "live-log", "FILE",
         "CMD's output goes to FILE (with the view: default\nTRACE with .log for .db)"},
        {OPT_METRICS, "metrics", "[ADDR:]PORT",
         "serve the live figures for Prometheus at\nhttp://ADDR:PORT/metrics (ADDR 127.0.0.1 "
         "unless\ngiven; PORT 0: any free port, printed)"},
        {'q', "quiet", NULL, "print nothing but problems"},
        {'h', "help", NULL, "show this help"},
        {0, NULL, NULL, NULL},
};

void mp_record_args_help(FILE *out)
{
	fprintf(out, "usage: memprof record [options] -- CMD [ARGS...]\n\n"
	             "Run CMD with every GPU allocation of each of its processes recorded through\n"
	             "CUPTI, then write one trace database.  Exits with CMD's exit status.\n\n"
	             "options:\n");
	mp_cmd_opts_help(out, options);
	fprintf(out, "\nSee memprof-record(1).\n");
}

/* Numbers: 0 = unset.  Returns -1 to go on, else the exit status. */
int mp_record_args_parse(int argc, char **argv, struct mp_record_opts *o)
{
	struct mp_cmd_getopt g;
	char shortopts[sizeof(g.shortopts) + 1];
	int ch;

	mp_cmd_getopt_init(&g, options);
	/* '+': options end at the command's name, '--' or not */
	snprintf(shortopts, sizeof(shortopts), "+%s", g.shortopts);
	opterr = 0;
	while ((ch = getopt_long(argc, argv, shortopts, g.longopts, NULL)) != -1) {
		switch (ch) {
		case 'o':
			o->output = optarg;
			break;
		case 'f':
			o->force = 1;
			break;
		case OPT_STACKS:
			if (strcmp(optarg, "off") && strcmp(optarg, "sampled") &&
			    strcmp(optarg, "all"))
				return mp_cmd_usage(&mp_cmd_record,
				                    "bad --stacks '%s': use off, sampled or all",
				                    optarg);
			o->stacks = optarg;
			break;
		case OPT_STACK_SAMPLE:
		case OPT_STACK_DEPTH:
			if (mp_record_number(optarg, ch == OPT_STACK_DEPTH ? 128 : 1000000000,
			                     ch == OPT_STACK_DEPTH ? &o->stack_depth
			                                           : &o->stack_sample) < 0)
				return mp_cmd_usage(&mp_cmd_record, "bad --%s '%s': %s",
				                    ch == OPT_STACK_DEPTH ? "stack-depth"
				                                          : "stack-sample",
				                    optarg,
				                    ch == OPT_STACK_DEPTH
				                            ? "a number of frames from 1 to 128"
				                            : "a whole number of calls, 1 or more");
			break;
		case OPT_DORMANT:
			o->dormant = 1;
			break;
		case OPT_NO_CACHE:
			o->no_cache = 1;
			break;
		case OPT_HISTORY_ENTRIES:
			if (mp_record_number(optarg, 1000000000, &o->history_entries) < 0)
				return mp_cmd_usage(&mp_cmd_record,
				                    "bad --history-entries '%s': a whole number of "
				                    "events, 1 or more",
				                    optarg);
			break;
		case OPT_NO_TORCH_HISTORY:
			o->no_torch_history = 1;
			break;
		case OPT_KEEP_SPOOL:
			o->keep_spool = 1;
			break;
		case OPT_SPOOL_DIR:
			o->spool_dir = optarg;
			break;
		case OPT_INJECT:
			o->inject = optarg;
			break;
		case OPT_CUPTI:
			o->cupti = optarg;
			break;
		case OPT_LIVE:
			o->live = 1;
			break;
		case OPT_LIVE_LOG:
			o->live_log = optarg;
			break;
		case OPT_METRICS:
			o->metrics = optarg;
			break;
		case 'q':
			o->quiet = 1;
			break;
		case 'h':
			mp_record_args_help(stdout);
			return MP_EXIT_OK;
		default:
			return mp_cmd_bad_option(&mp_cmd_record, argv, ch);
		}
	}
	if (optind == argc)
		return mp_cmd_usage(&mp_cmd_record,
		                    "no command given: memprof record [options] -- CMD");
	o->cmd = argv + optind;
	return -1;
}
