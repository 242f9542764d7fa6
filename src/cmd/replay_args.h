/*
 * cmd/replay_args.h - the options of 'memprof replay', parsed by
 * cmd/replay_args.c and used by cmd/replay.c.
 */
#ifndef MP_CMD_REPLAY_ARGS_H
#define MP_CMD_REPLAY_ARGS_H

#include <stddef.h>
#include <stdint.h>

#include "memprof/pool.h"

#define MP_REPLAY_MAX_POOL_OPTS 64

struct replay_args {
	const char *trace;
	const char *pools; /* comma list, "all", or a path */
	const char *baseline;
	const char *backend;
	const char *plugin_dir;
	int device; /* -1: every device */
	uint64_t capacity_bytes;
	uint64_t pool_threshold_bytes; /* 0: every request to the pool */
	int verify, json, save, list_pools;
	int mpi;    /* --mpi: this process is one MPI rank of the replay */
	int repeat; /* --repeat: runs of each pool, for the spread of measured times */
	struct memprof_pool_option pool_opts[MP_REPLAY_MAX_POOL_OPTS];
	size_t n_pool_opts;
	char *opt_storage[MP_REPLAY_MAX_POOL_OPTS]; /* strdup'd "NAME=VALUE" texts */
	char options_text[1024];                    /* the options as given, for stored runs */
};

/* Parse argv; 0 to go on, -1 after --help (exit 0), or an MP_EXIT_* status. */
int mp_replay_args_parse(struct replay_args *a, int argc, char **argv);
void mp_replay_args_free(struct replay_args *a);
/* Add the pool option text "NAME=VALUE" as if given, noted in options_text; 0 or an exit status. */
int mp_replay_args_add_pool_opt(struct replay_args *a, const char *text);
void mp_replay_args_help(FILE *out);

#endif
