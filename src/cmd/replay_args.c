/*
 * cmd/replay_args.c - the command line of 'memprof replay': its own
 * options, and pool options, given as --pool-opt=NAME=VALUE or as
 * --NAME=VALUE for any NAME replay itself does not know (they go to the
 * pools that declare NAME; cmd/replay.c refuses one that no pool declares).
 */
#include "cmd/cmd.h"
#include "cmd/replay_args.h"
#include "util/parse.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

static const struct option longopts[] = {
        {"pool", required_argument, NULL, 'p'},
        {"baseline", required_argument, NULL, 'B'},
        {"backend", required_argument, NULL, 'b'},
        {"device", required_argument, NULL, 'd'},
        {"capacity", required_argument, NULL, 'c'},
        {"pool-threshold", required_argument, NULL, 'T'},
        {"verify", no_argument, NULL, 'V'},
        {"repeat", required_argument, NULL, 'R'},
        {"json", no_argument, NULL, 'j'},
        {"no-save", no_argument, NULL, 'n'},
        {"plugin-dir", required_argument, NULL, 'P'},
        {"pool-opt", required_argument, NULL, 'o'},
        {"list-pools", no_argument, NULL, 'l'},
        {"mpi", no_argument, NULL, 'm'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
};

void mp_replay_args_help(FILE *out)
{
	fprintf(out, "usage: memprof replay [options] TRACE\n\n"
	             "Replay the trace's allocations against pool allocators and report the\n"
	             "bytes and time each saves against the baseline and the lower bound.\n"
	             "Figures and pools: memprof-replay(1), memprof-plugin(7).\n\n"
	             "options:\n"
	             "      --pool=LIST          pools to replay: names, 'all' (default), or a\n"
	             "                           path to a plugin .so\n"
	             "      --baseline=NAME      compare with this pool (default caching)\n"
	             "      --backend=NAME       auto (default), sim, host or cuda\n"
	             "      --device=N           only device N of the trace\n"
	             "      --capacity=BYTES     the backend refuses beyond this: OOMs show\n"
	             "                           where a smaller GPU would fail\n"
	             "      --pool-threshold=BYTES\n"
	             "                           requests smaller than BYTES go straight to\n"
	             "                           the backend, not to the pool (the baseline\n"
	             "                           keeps every request)\n"
	             "      --verify             check no two live allocations overlap\n"
	             "      --repeat=N           run each pool N times (1 to 100, default 1):\n"
	             "                           measured times are shown with their median\n"
	             "                           and spread, and left out after one run\n"
	             "      --json               print JSON (keys in memprof-replay(1))\n"
	             "      --no-save            do not store the results in the trace\n"
	             "      --plugin-dir=DIR     look for pools in DIR first\n"
	             "      --pool-opt=NAME=VAL  an option for the pools that declare NAME;\n"
	             "                           --NAME=VAL does the same\n"
	             "      --list-pools         list the pools found, with their options\n"
	             "      --mpi                one rank of 'mpirun -np N memprof replay --mpi':\n"
	             "                           MPI rank i replays trace rank i, rank 0 prints\n"
	             "                           and stores every rank's results and the job's\n"
	             "  -h, --help               show this help\n");
}

static int known_long(const char *arg)
{
	size_t len = strcspn(arg + 2, "=");

	for (const struct option *o = longopts; o->name; o++)
		if (strlen(o->name) == len && strncmp(o->name, arg + 2, len) == 0)
			return 1;
	return 0;
}

static int add_pool_opt(struct replay_args *a, const char *text)
{
	char *copy, *eq;

	if (a->n_pool_opts == MP_REPLAY_MAX_POOL_OPTS)
		return mp_cmd_usage(&mp_cmd_replay, "too many pool options (at most %d)",
		                    MP_REPLAY_MAX_POOL_OPTS);
	eq = strchr(text, '=');
	if (!eq || eq == text)
		return mp_cmd_usage(&mp_cmd_replay, "pool option '%s' is not NAME=VALUE", text);
	if (!(copy = strdup(text)))
		return mp_cmd_error(&mp_cmd_replay, "out of memory");
	copy[eq - text] = '\0';
	a->opt_storage[a->n_pool_opts] = copy;
	a->pool_opts[a->n_pool_opts].name = copy;
	a->pool_opts[a->n_pool_opts++].value = copy + (eq - text) + 1;
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
		if (argv[i] == a->trace)
			continue;
		len += (size_t)snprintf(a->options_text + len, sizeof a->options_text - len, "%s%s",
		                        len ? " " : "", argv[i]);
	}
	for (size_t k = 0; k < a->n_pool_opts && len + 2 < sizeof a->options_text; k++)
		len += (size_t)snprintf(a->options_text + len, sizeof a->options_text - len,
		                        "%s--pool-opt=%s=%s", len ? " " : "", a->pool_opts[k].name,
		                        a->pool_opts[k].value);
	if (len >= sizeof a->options_text)
		a->options_text[sizeof a->options_text - 1] = '\0';
}

static int parse_value(struct replay_args *a, int ch, const char *v)
{
	int64_t n;

	switch (ch) {
	case 'p':
		a->pools = v;
		return 0;
	case 'B':
		a->baseline = v;
		return 0;
	case 'b':
		a->backend = v;
		return 0;
	case 'P':
		a->plugin_dir = v;
		return 0;
	case 'o':
		return add_pool_opt(a, v);
	case 'd':
		if (mp_parse_count(v, 0, INT32_MAX, &n) < 0)
			return mp_cmd_usage(&mp_cmd_replay, "invalid device '%s'", v);
		a->device = (int)n;
		return 0;
	case 'c':
		if (mp_parse_bytes(v, &n) < 0 || n <= 0)
			return mp_cmd_usage(&mp_cmd_replay,
			                    "invalid capacity '%s': give bytes, e.g. 40GiB", v);
		a->capacity_bytes = (uint64_t)n;
		return 0;
	case 'R':
		if (mp_parse_count(v, 1, 100, &n) < 0)
			return mp_cmd_usage(&mp_cmd_replay, "invalid --repeat '%s': give 1 to 100",
			                    v);
		a->repeat = (int)n;
		return 0;
	case 'T':
		if (mp_parse_bytes(v, &n) < 0 || n < 0)
			return mp_cmd_usage(&mp_cmd_replay,
			                    "invalid pool threshold '%s': give bytes, e.g. 1MiB",
			                    v);
		a->pool_threshold_bytes = (uint64_t)n;
		return 0;
	default:
		return mp_cmd_usage(&mp_cmd_replay, "invalid option");
	}
}

int mp_replay_args_parse(struct replay_args *a, int argc, char **argv)
{
	int ch, rc = 0;

	memset(a, 0, sizeof *a);
	a->pools = "all";
	a->baseline = "caching";
	a->backend = "auto";
	a->device = -1;
	a->save = 1;
	a->repeat = 1;
	argc = take_pool_opts(a, argc, argv, &rc);
	if (rc)
		return rc;
	optind = 1;
	while ((ch = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		switch (ch) {
		case 'V':
			a->verify = 1;
			break;
		case 'j':
			a->json = 1;
			break;
		case 'n':
			a->save = 0;
			break;
		case 'l':
			a->list_pools = 1;
			break;
		case 'm':
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
	if (a->mpi && a->repeat > 1)
		return mp_cmd_usage(&mp_cmd_replay, "--repeat is not supported with --mpi");
	a->trace = argv[optind];
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
	for (size_t i = 0; i < a->n_pool_opts; i++)
		free(a->opt_storage[i]);
}
