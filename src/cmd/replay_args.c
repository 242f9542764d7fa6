/*
 * cmd/replay_args.c - the command line of 'memprof replay': its own
 * options, and pool options, given as --pool-opt=NAME=VALUE or as
 * --NAME=VALUE for any NAME replay itself does not know (they go to the
 * pools that declare NAME; cmd/replay.c refuses one that no pool declares).
 */
#include "cmd/cmd.h"
#include "cmd/options.h"
#include "cmd/replay_args.h"
#include "util/parse.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

enum { /* long only */
       OPT_POOL = 256,
       OPT_BASELINE,
       OPT_BACKEND,
       OPT_DEVICE,
       OPT_CAPACITY,
       OPT_THRESHOLD,
       OPT_VERIFY,
       OPT_REPEAT,
       OPT_JSON,
       OPT_NO_SAVE,
       OPT_PLUGIN_DIR,
       OPT_POOL_OPT,
       OPT_LIST_POOLS,
       OPT_MPI,
};

static const struct mp_cmd_opt options[] = {
        {OPT_POOL, "pool", "LIST",
         "pools to replay: names, 'all' (default), or a\npath to a plugin .so"},
        {OPT_BASELINE, "baseline", "NAME", "compare with this pool (default caching)"},
        {OPT_BACKEND, "backend", "NAME", "auto (default), sim, host or cuda"},
        {OPT_DEVICE, "device", "N", "only device N of the trace"},
        {OPT_CAPACITY, "capacity", "BYTES",
         "the backend refuses beyond this: OOMs show\nwhere a smaller GPU would fail"},
        {OPT_THRESHOLD, "pool-threshold", "BYTES",
         "requests smaller than BYTES go straight to\nthe backend, not to the pool (the "
         "baseline\nkeeps every request)"},
        {OPT_VERIFY, "verify", NULL, "check no two live allocations overlap"},
        {OPT_REPEAT, "repeat", "N",
         "run each pool N times (1 to 100, default 1):\nmeasured times are shown with their "
         "median\nand spread, and left out after one run"},
        {OPT_JSON, "json", NULL, "print JSON (keys in memprof-replay(1))"},
        {OPT_NO_SAVE, "no-save", NULL, "do not store the results in the trace"},
        {OPT_PLUGIN_DIR, "plugin-dir", "DIR", "look for pools in DIR first"},
        {OPT_POOL_OPT, "pool-opt", "NAME=VAL",
         "an option for the pools that declare NAME;\n--NAME=VAL does the same"},
        {OPT_LIST_POOLS, "list-pools", NULL, "list the pools found, with their options"},
        {OPT_MPI, "mpi", NULL,
         "one rank of 'mpirun -np N memprof replay --mpi':\nMPI rank i replays trace rank i, "
         "rank 0 prints\nand stores every rank's results and the job's"},
        {'h', "help", NULL, "show this help"},
        {0, NULL, NULL, NULL},
};

void mp_replay_args_help(FILE *out)
{
	fprintf(out, "usage: memprof replay [options] TRACE\n\n"
	             "Replay the trace's allocations against pool allocators and report the\n"
	             "bytes and time each saves against the baseline and the lower bound.\n"
	             "Figures and pools: memprof-replay(1), memprof-plugin(7).\n\n"
	             "options:\n");
	mp_cmd_opts_help(out, options);
}

static int known_long(const char *arg)
{
	size_t len = strcspn(arg + 2, "=");

	for (const struct mp_cmd_opt *o = options; o->name; o++)
		if (strlen(o->name) == len && strncmp(o->name, arg + 2, len) == 0)
			return 1;
	return 0;
}

static int add_pool_opt(struct replay_args *a, const char *text)
{
	char *copy, *eq;

	if (a->s.n_pool_opts == MP_REPLAY_MAX_POOL_OPTS)
		return mp_cmd_usage(&mp_cmd_replay, "too many pool options (at most %d)",
		                    MP_REPLAY_MAX_POOL_OPTS);
	eq = strchr(text, '=');
	if (!eq || eq == text)
		return mp_cmd_usage(&mp_cmd_replay, "pool option '%s' is not NAME=VALUE", text);
	if (!(copy = strdup(text)))
		return mp_cmd_error(&mp_cmd_replay, "out of memory");
	copy[eq - text] = '\0';
	a->opt_storage[a->s.n_pool_opts] = copy;
	a->s.pool_opts[a->s.n_pool_opts].name = copy;
	a->s.pool_opts[a->s.n_pool_opts++].value = copy + (eq - text) + 1;
	return 0;
}

/* Moves every unknown --NAME=VALUE into the pool options; returns the new argc. */
static int take_pool_opts(struct replay_args *a, int argc, char **argv, int *rc)
{
	int n = 1;

	for (int i = 1; i < argc; i++) {
		const char *arg = argv[i];
		if (strcmp(arg, "--") == 0) {
			while (i < argc)
				argv[n++] = argv[i++];
			break;
		}
		if (strncmp(arg, "--", 2) == 0 && strchr(arg, '=') && !known_long(arg)) {
			if ((*rc = add_pool_opt(a, arg + 2)) != 0)
				return n;
			continue;
		}
		argv[n++] = argv[i];
	}
	return n;
}

static void note_options(struct replay_args *a, int argc, char **argv)
{
	size_t len = 0;

	for (int i = 1; i < argc && len + 2 < sizeof a->options_text; i++) {
		if (argv[i] == a->s.trace)
			continue;
		len += (size_t)snprintf(a->options_text + len, sizeof a->options_text - len, "%s%s",
		                        len ? " " : "", argv[i]);
	}
	for (size_t k = 0; k < a->s.n_pool_opts && len + 2 < sizeof a->options_text; k++)
		len += (size_t)snprintf(a->options_text + len, sizeof a->options_text - len,
		                        "%s--pool-opt=%s=%s", len ? " " : "",
		                        a->s.pool_opts[k].name, a->s.pool_opts[k].value);
	if (len >= sizeof a->options_text)
		a->options_text[sizeof a->options_text - 1] = '\0';
}

static int parse_value(struct replay_args *a, int ch, const char *v)
{
	int64_t n;

	switch (ch) {
	case OPT_POOL:
		a->s.pools = v;
		return 0;
	case OPT_BASELINE:
		a->s.baseline = v;
		return 0;
	case OPT_BACKEND:
		a->backend = v;
		return 0;
	case OPT_PLUGIN_DIR:
		a->s.plugin_dir = v;
		return 0;
	case OPT_POOL_OPT:
		return add_pool_opt(a, v);
	case OPT_DEVICE:
		if (mp_parse_count(v, 0, INT32_MAX, &n) < 0)
			return mp_cmd_usage(&mp_cmd_replay, "invalid device '%s'", v);
		a->s.device = (int)n;
		return 0;
	case OPT_CAPACITY:
		if (mp_parse_bytes(v, &n) < 0 || n <= 0)
			return mp_cmd_usage(&mp_cmd_replay,
			                    "invalid capacity '%s': give bytes, e.g. 40GiB", v);
		a->s.capacity_bytes = (uint64_t)n;
		return 0;
	case OPT_REPEAT:
		if (mp_parse_count(v, 1, 100, &n) < 0)
			return mp_cmd_usage(&mp_cmd_replay, "invalid --repeat '%s': give 1 to 100",
			                    v);
		a->s.repeat = (int)n;
		return 0;
	case OPT_THRESHOLD:
		if (mp_parse_bytes(v, &n) < 0 || n < 0)
			return mp_cmd_usage(&mp_cmd_replay,
			                    "invalid pool threshold '%s': give bytes, e.g. 1MiB",
			                    v);
		a->s.pool_threshold_bytes = (uint64_t)n;
		return 0;
	default:
		return mp_cmd_usage(&mp_cmd_replay, "invalid option");
	}
}

int mp_replay_args_parse(struct replay_args *a, int argc, char **argv)
{
	struct mp_cmd_getopt g;
	int ch, rc = 0;

	memset(a, 0, sizeof *a);
	a->s.pools = "all";
	a->s.baseline = "caching";
	a->backend = "auto";
	a->s.device = -1;
	a->save = 1;
	a->s.repeat = 1;
	argc = take_pool_opts(a, argc, argv, &rc);
	if (rc)
		return rc;
	mp_cmd_getopt_init(&g, options);
	optind = 1;
	while ((ch = getopt_long(argc, argv, g.shortopts, g.longopts, NULL)) != -1) {
		switch (ch) {
		case OPT_VERIFY:
			a->s.verify = 1;
			break;
		case OPT_JSON:
			a->json = 1;
			break;
		case OPT_NO_SAVE:
			a->save = 0;
			break;
		case OPT_LIST_POOLS:
			a->list_pools = 1;
			break;
		case OPT_MPI:
			a->mpi = 1;
			break;
		case 'h':
			mp_replay_args_help(stdout);
			return -1;
		case '?':
		case ':':
			return mp_cmd_bad_option(&mp_cmd_replay, argv, ch);
		default:
			if ((rc = parse_value(a, ch, optarg)) != 0)
				return rc;
		}
	}
	if (a->list_pools && optind == argc)
		return 0;
	if (optind != argc - 1)
		return mp_cmd_usage(&mp_cmd_replay,
		                    optind == argc ? "no trace given" : "more than one trace");
	if (a->mpi && a->s.repeat > 1)
		return mp_cmd_usage(&mp_cmd_replay, "--repeat is not supported with --mpi");
	a->s.trace = argv[optind];
	note_options(a, argc, argv);
	return 0;
}

int mp_replay_args_add_pool_opt(struct replay_args *a, const char *text)
{
	size_t len = strlen(a->options_text);
	int rc = add_pool_opt(a, text);

	if (rc == 0 && len + 2 < sizeof a->options_text)
		snprintf(a->options_text + len, sizeof a->options_text - len, "%s--pool-opt=%s",
		         len ? " " : "", text);
	return rc;
}

void mp_replay_args_free(struct replay_args *a)
{
	for (size_t i = 0; i < a->s.n_pool_opts; i++)
		free(a->opt_storage[i]);
}
