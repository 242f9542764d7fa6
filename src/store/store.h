/*
 * store/store.h - the trace database: open, create, migrate, metadata.
 *
 * The store is the only code that speaks SQL (DESIGN.md section 1).  A store
 * handle is either a trace opened for reading or a new trace being written.
 * New traces are written to a temporary file beside the destination and only
 * renamed into place by mp_store_commit, so a failed write never leaves a
 * half-written trace.  Handles are not thread-safe.
 */
#ifndef MP_STORE_STORE_H
#define MP_STORE_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "memprof/trace.h"
#include "util/error.h"

#define MP_SCHEMA_VERSION 3 /* PRAGMA user_version of traces this build writes */

struct mp_store;

/*
 * Open an existing trace for reading.  Refuses, with MP_ENOTTRACE, a file that
 * is not a SQLite database or not a memprof trace (a schema other than
 * memprof's: views, triggers, other tables or columns), and with MP_ENEWER
 * one of a newer schema; migrates an older schema forward in place.  The
 * trace is opened defensively (no SQL of its own runs); a trace another
 * process is writing is waited for up to MP_STORE_BUSY_MS; an interrupted
 * write is rolled back (mp_store_rolled_back).  On failure *out
 * is NULL and err says why.
 */
int mp_store_open(struct mp_store **out, const char *path, struct mp_error *err);

/*
 * Start a new, empty trace that will become path.  Unless overwrite is set,
 * MP_EEXIST when path exists (checked again at commit).
 */
int mp_store_create(struct mp_store **out, const char *path, int overwrite, struct mp_error *err);

/* Finish a created trace: close, flush to disk, rename into place, free s. */
int mp_store_commit(struct mp_store *s, struct mp_error *err);

/* Close s, freeing it.  A created trace that was not committed is deleted. */
void mp_store_close(struct mp_store *s);

/*
 * 1 when opening found the trace's last write interrupted (a process killed
 * while saving left a hot journal) and rolled it back: what that write
 * would have added (replay results) is not in the trace.
 */
int mp_store_rolled_back(const struct mp_store *s);

/* The message of the last failed call on s. */
const char *mp_store_errmsg(const struct mp_store *s);
const struct mp_error *mp_store_error(const struct mp_store *s);
const char *mp_store_path(const struct mp_store *s);
/* Schema version the file had when opened (before any migration). */
int mp_store_opened_version(const struct mp_store *s);
/* Where a created trace is written until commit; NULL for an opened one. */
const char *mp_store_temp_path(const struct mp_store *s);

/* Metadata (the meta table).  get returns a malloc'd copy, or NULL if absent. */
int mp_store_set_meta(struct mp_store *s, const char *key, const char *value);
char *mp_store_get_meta(struct mp_store *s, const char *key);
/* A counter in meta: key += delta, the key written when absent (several
 * spools or snapshots of one trace add up).  0 or a negative MP_E*. */
int mp_store_add_meta(struct mp_store *s, const char *key, int64_t delta);
/* Calls fn for every key in key order; stops and returns fn's value if non-zero. */
int mp_store_each_meta(struct mp_store *s, int (*fn)(void *ctx, const char *k, const char *v),
                       void *ctx);

int mp_store_count_events(struct mp_store *s, int64_t *n);
/* The smallest and largest ts_ns of the events (both 0 when there are none). */
int mp_store_ts_range(struct mp_store *s, int64_t *first_ns, int64_t *last_ns);
/* *yes = 1 when some event has a call duration (events.duration_ns). */
int mp_store_has_durations(struct mp_store *s, int *yes);
/* How many replay_runs rows the trace holds. */
int mp_store_count_replay_runs(struct mp_store *s, int64_t *n);

/* Renumber the events of a created trace in timestamp order (stable). */
int mp_store_sort_events(struct mp_store *s);

/* Processes and devices, in id order.  Free the arrays with the matching free. */
int mp_store_processes(struct mp_store *s, struct memprof_process **out, size_t *n);
void mp_store_free_processes(struct memprof_process *p, size_t n);
int mp_store_devices(struct mp_store *s, struct memprof_device **out, size_t *n);
void mp_store_free_devices(struct memprof_device *d, size_t n);
/* The devices the events name (events.device, what --device selects), ascending, at most
 * cap of them in out; *n is how many there are in all.  0 or MP_E*. */
int mp_store_event_devices(struct mp_store *s, int32_t *out, size_t cap, size_t *n);

#endif
