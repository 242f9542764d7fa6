/*
 * cmd/replay_args.h - the options of 'memprof replay', parsed by
 * cmd/replay_args.c and used by cmd/replay.c; what the library needs of
 * them is the session's settings (replay/session.h).
 */
#ifndef MP_CMD_REPLAY_ARGS_H
#define MP_CMD_REPLAY_ARGS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "replay/session.h"

struct replay_args {
	struct mp_replay_settings s; /* trace, pools, baseline, device, pool options... */
	const char *backend;
	int json, save, list_pools;
	int mpi; /* --mpi: this process is one MPI rank of the replay */
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
