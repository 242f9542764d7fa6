/*
 * load/trace_export.h - a trace's events read out of the store into one of
 * report/'s format writers, for 'memprof export': memprof CSV, MiniMalloc
 * CSV (one process and device: one address space) and Chrome trace-event
 * JSON for Perfetto (through the memory state, so its counters are
 * memprof's own figures).  Each writes to of->f and leaves committing or
 * aborting of to the caller; 0 or MP_E* with err set.
 */
#ifndef MP_LOAD_TRACE_EXPORT_H
#define MP_LOAD_TRACE_EXPORT_H

#include <stdint.h>

#include "report/minimalloc_writer.h"
#include "report/perfetto.h"
#include "store/store.h"
#include "util/error.h"
#include "util/outfile.h"

/* Which (process, device) pair a MiniMalloc export takes: the one these
 * leave, or the trace's only one. */
struct mp_export_select {
	int64_t pid;    /* when have_pid */
	int32_t device; /* when have_device */
	int have_pid, have_device;
};

int mp_export_csv(struct mp_store *s, struct mp_outfile *of, struct mp_error *err);
/* time_ns: lifetimes in timestamps, else in event numbers.  Its notes
 * (frees never allocated, ...) in *st on success. */
int mp_export_minimalloc(struct mp_store *s, struct mp_outfile *of, int time_ns,
                         const struct mp_export_select *sel, struct mp_minimalloc_stats *st,
                         struct mp_error *err);
/* Slices only for allocations of at least min_size_bytes; *st on success. */
int mp_export_perfetto(struct mp_store *s, struct mp_outfile *of, int64_t min_size_bytes,
                       struct mp_perfetto_stats *st, struct mp_error *err);

/* "cannot write 'PATH': <errno's text>" for a writer that failed on of, with
 * its code (MP_EFULL for a full disk or file-size limit, MP_ENOMEM, MP_EIO). */
int mp_export_write_failed(const struct mp_outfile *of, struct mp_error *err);

#endif
