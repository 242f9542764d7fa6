/*
 * cmd/record_live.h - 'memprof record --live' and '--metrics' (internal to
 * cmd/record*.c): before the command runs, the metrics socket is bound and
 * the command's log opened (so their errors come before anything runs);
 * once it runs, a follower thread reads the spools into the live state,
 * draws the view (or prints a line per interval) and reads the 'q' key, and
 * a server thread answers GET /metrics; when it has exited, both stop and
 * the terminal is given back.
 */
#ifndef MP_CMD_RECORD_LIVE_H
#define MP_CMD_RECORD_LIVE_H

#include "sys/launch.h"
#include "cmd/record.h"

struct mp_record_live;

/*
 * NULL in *out when neither --live nor --metrics was given.  Returns 0, or
 * the exit status having printed why (nothing is left behind).
 */
int mp_record_live_prepare(struct mp_record_live **out, const struct mp_record_opts *o,
                           const struct mp_record_spools *sp);
/* The launch hooks: the command's streams, and the start of the threads. */
void mp_record_live_hooks(struct mp_record_live *lv, struct mp_launch_hooks *hooks);
/* After the command: a last read of the spools, the threads stopped, the
 * terminal as it was; says where the command's output went. */
void mp_record_live_finish(struct mp_record_live *lv, int ran);
void mp_record_live_free(struct mp_record_live *lv);

#endif
