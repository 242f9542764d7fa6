/*
 * import/event_pipe.h - an importer's parsing on a thread of its own, its
 * events written by the caller's thread: the two overlap, so an import runs
 * at the speed of the slower of the two instead of their sum.
 *
 * The producer runs on the new thread and may only read its input, keep its
 * own state and push events: it must not touch the writer or the store, nor
 * anything the caller uses meanwhile.  Memory: a few fixed chunks of events.
 */
#ifndef MP_IMPORT_EVENT_PIPE_H
#define MP_IMPORT_EVENT_PIPE_H

#include "memprof/trace.h"
#include "store/writer.h"
#include "util/error.h"

struct mp_event_pipe;

/*
 * Run produce(ctx, pipe) on a new thread and write every event it pushes to
 * w, in order, on this thread; return when both are done.  Returns the
 * writer's error (message in err) when a write failed, else produce's
 * result (its message is the producer's to keep: err is not touched).
 */
int mp_event_pipe_run(struct mp_writer *w, int (*produce)(void *ctx, struct mp_event_pipe *p),
                      void *ctx, struct mp_error *err);

/*
 * From the producer: queue a copy of ev.  Returns 0, or MP_ESTOP when
 * writing failed: the producer should then return at once.
 */
int mp_event_pipe_push(struct mp_event_pipe *p, const struct memprof_event *ev);

#endif
