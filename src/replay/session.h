/*
 * replay/session.h - one 'memprof replay' as a sequence of library calls:
 * the pools chosen (the baseline always among them), the pool options
 * checked against them, the input read from the trace, then every device
 * of the input against every pool in turn (the trace's devices in turn on
 * the visible GPUs), with --repeat's medians, and the notes the output
 * shows.  Never prints: pool warnings go to the log callback, errors to
 * err.  Printing and storing the results are the caller's (cmd/replay.c).
 * Not thread-safe.
 */
#ifndef MP_REPLAY_SESSION_H
#define MP_REPLAY_SESSION_H

#include <stddef.h>
#include <stdint.h>

#include "memprof/pool.h"
#include "replay/engine.h"
#include "replay/rank_group.h"
#include "store/store.h"
#include "util/error.h"

#define MP_REPLAY_MAX_POOLS     32
#define MP_REPLAY_MAX_NOTES     64
#define MP_REPLAY_MAX_POOL_OPTS 64

/* What the command line chose (the caller owns the strings). */
struct mp_replay_settings {
	const char *trace;
	const char *pools; /* comma list, "all", or a path */
	const char *baseline;
	const char *plugin_dir;
	int device; /* -1: every device */
	uint64_t capacity_bytes;
	uint64_t pool_threshold_bytes; /* 0: every request to the pool */
	int verify;
	int repeat; /* runs of each pool, for the spread of measured times */
	struct memprof_pool_option pool_opts[MP_REPLAY_MAX_POOL_OPTS];
	size_t n_pool_opts;
};

struct mp_replay_session {
	const struct mp_replay_settings *set;
	const struct mp_backend_ops *backend; /* the caller's choice */
	struct mp_rank_group *group;          /* --mpi, else NULL */
	void (*log)(void *log_ctx, const char *pool, int level, const char *msg);
	void *log_ctx;
	struct mp_pool_plugin *pools[MP_REPLAY_MAX_POOLS];
	size_t n_pools;
	struct mp_replay_input *in;
	struct mp_replay_result *results;
	size_t n_results;
	int *ranks; /* with group, on rank 0 after a gather: each result's rank */
	char *notes[MP_REPLAY_MAX_NOTES];
	size_t n_notes;
	int n_gpus; /* visible GPUs (cuda backend), else 0 */
};

/* Set up s (zeroed) for set, backend b and group (NULL without --mpi). */
void mp_replay_session_init(struct mp_replay_session *s, const struct mp_replay_settings *set,
                            const struct mp_backend_ops *b, struct mp_rank_group *group);
void mp_replay_session_free(struct mp_replay_session *s);

/* Add a note to the output (at most MP_REPLAY_MAX_NOTES; more are dropped). */
void mp_replay_session_note(struct mp_replay_session *s, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)));

/* Load the pools set->pools names (and the baseline); 0 or MP_E* with err set. */
int mp_replay_session_pools(struct mp_replay_session *s, struct mp_error *err);

/* Every pool option is declared by a chosen pool: 0, or MP_EINVAL naming the first not. */
int mp_replay_session_check_options(const struct mp_replay_session *s, struct mp_error *err);

/* Option names match with '-' and '_' taken as one: --compact-at, --compact_at. */
int mp_replay_same_option_name(const char *a, const char *b);

/*
 * Under --mpi a pool's world-size (the sharded pool's shards) is the number
 * of ranks unless given: 1 with "world-size=N" in text (size n) to add as a
 * pool option when a chosen pool declares world-size and none was given,
 * else 0.  Rank 0 notes it.
 */
int mp_replay_session_world_size(struct mp_replay_session *s, char *text, size_t n);

/* How many GPUs the cuda backend sees (n_gpus); 0 for other backends. */
void mp_replay_session_count_gpus(struct mp_replay_session *s);

/* The backend, pools and options (options_text): what every rank must share. */
uint64_t mp_replay_session_hash(const struct mp_replay_session *s, const char *options_text);

/*
 * Read the input from the open trace st (its rank's processes with a
 * group); 0, or MP_E* with err set (nothing to replay is an error too).
 */
int mp_replay_session_load(struct mp_replay_session *s, struct mp_store *st, struct mp_error *err);

/*
 * Every (device, pool) run in order into results.  With a group every rank
 * goes through n_round_devices devices (the most any rank has) and ends
 * each run with mp_rank_group_done, even past its own devices or after its
 * own error, so no rank waits for a round another will not join.  0, or
 * MP_E* with err set (the first failure).
 */
int mp_replay_session_run(struct mp_replay_session *s, size_t n_round_devices,
                          struct mp_error *err);

#endif
