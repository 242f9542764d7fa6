/*
 * cmd/replay_save.h - the results of 'memprof replay' stored in its trace
 * (cmd/replay_save.c): the seam between the replay session, whose results
 * report/replay_out turns into metric rows, and store/results, which only
 * cmd/ may tie together.
 */
#ifndef MP_CMD_REPLAY_SAVE_H
#define MP_CMD_REPLAY_SAVE_H

#include "replay/session.h"
#include "report/replay_out.h"

/*
 * One stored run per (rank) device and pool of s, as printed in rep; with
 * ranks, the job's figures of each pool too, as the pool's run on device
 * -1.  options is the command line's options.  0, or MP_EXIT_ERROR said.
 */
int mp_replay_save(const struct mp_replay_session *s, const struct mp_replay_report *rep,
                   const char *options);

#endif
