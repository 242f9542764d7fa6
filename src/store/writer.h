/*
 * store/writer.h - appending events to a trace being created.
 *
 * Inserts through prepared statements inside large transactions; names,
 * frames and stacks are deduplicated in memory as they are interned.  One
 * writer per store at a time; not thread-safe.  Every function returns a
 * negative MP_E* code on failure with the message on the store handle.
 */
#ifndef MP_STORE_WRITER_H
#define MP_STORE_WRITER_H

#include <stddef.h>
#include <stdint.h>

#include "memprof/trace.h"
#include "store/store.h"

struct mp_writer;

int mp_writer_open(struct mp_store *s, struct mp_writer **out);

/* Intern a phase or API name (len bytes, no NUL needed); returns its id (> 0). */
int64_t mp_writer_phase(struct mp_writer *w, const char *name, size_t len);
int64_t mp_writer_api(struct mp_writer *w, const char *name, size_t len);
/* Intern a call stack (innermost frame first); returns its id, 0 for no frames. */
int64_t mp_writer_stack(struct mp_writer *w, const struct memprof_stack *stack);
/* Add a process; returns its id (> 0) and stores it in p->id. */
int64_t mp_writer_process(struct mp_writer *w, struct memprof_process *p);
/*
 * Labels every process added from now on gets, overriding its own: a rank,
 * local_rank or world_size >= 0 and a non-NULL host replace the process's
 * (the others are kept).  NULL clears them.  The strings are copied.
 */
int mp_writer_label_processes(struct mp_writer *w, const struct memprof_process *labels);
/* Add a device of a process (once per process and ordinal). */
int mp_writer_device(struct mp_writer *w, const struct memprof_device *d);

/* Append an event; assigns ev->seq.  Ids in ev must come from this writer. */
int mp_writer_event(struct mp_writer *w, struct memprof_event *ev);

int64_t mp_writer_n_events(const struct mp_writer *w);

/* Call fn(ctx, n_events) every 2^18 events written (NULL: never). */
typedef void mp_writer_progress_fn(void *ctx, int64_t n_events);
void mp_writer_on_progress(struct mp_writer *w, mp_writer_progress_fn *fn, void *ctx);

/* The error of the last failed call (the store's error slot). */
const struct mp_error *mp_writer_error(const struct mp_writer *w);

/* Commit what was written and free w.  Returns 0 or the first error. */
int mp_writer_close(struct mp_writer *w);

#endif
