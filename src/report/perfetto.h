/*
 * report/perfetto.h - a trace as Chrome trace-event JSON, the JSON Object
 * Format that ui.perfetto.dev and chrome://tracing open.  Per device a
 * process "GPU N" with counter tracks of live, requested and reserved bytes
 * (memstate's own figures, a sample each time one changes) and the
 * allocations as async slices from alloc to free; phases as slices on
 * thread tracks of the process that opened them; OOMs as instant events.
 * The layout is documented in memprof-export(1).
 *
 * Fed by the memory state's listener callbacks, never a database handle.
 * Streams: memory grows with the live set, the open phases and the
 * distinct call stacks, not with the trace.  Not thread-safe.
 */
#ifndef MP_REPORT_PERFETTO_H
#define MP_REPORT_PERFETTO_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "analysis/memstate.h"
#include "memprof/trace.h"

struct mp_perfetto_opts {
	/* slices only for allocations of at least this many bytes (0: all);
	 * the counters stay exact */
	int64_t min_size_bytes;
	/* names for the process tracks and the devices; may be NULL */
	const struct memprof_process *processes;
	size_t n_processes;
	const struct memprof_device *devices;
	size_t n_devices;
	/* n_meta key, value pairs for the top-level "metadata" object (a NULL
	 * value is left out); the writer adds its counts after them */
	const char *const *meta;
	size_t n_meta;
};

struct mp_perfetto_stats {
	int64_t n_events;         /* trace events written, metadata events included */
	int64_t n_slices;         /* allocations written as slices */
	int64_t n_slices_skipped; /* allocations below min_size_bytes */
	int64_t n_live_at_end;    /* slices closed at the last timestamp */
	int64_t n_counter_samples;
	int64_t n_phases;
	int64_t n_phase_ends_unmatched; /* phase ends with no open phase of that name */
	int64_t n_phases_open_at_end;
	int64_t n_ooms;
	uint64_t n_bytes; /* of JSON text */
};

struct mp_perfetto;

/* Start writing to out (not closed by the writer).  NULL when out of memory. */
struct mp_perfetto *mp_perfetto_open(FILE *out, const struct mp_perfetto_opts *o);
/* The listener that feeds w: register it on ms (mp_memstate_listen)
 * before the run.  Its on_end closes what is still open at the last
 * timestamp and finishes the JSON.  Its callbacks return MP_ENOMEM, or
 * MP_EIO once a write failed (errno then in mp_perfetto_close). */
struct mp_mem_listener mp_perfetto_listener(struct mp_perfetto *w, const struct mp_memstate *ms);
/* Flush and free; st (may be NULL) gets the counts.  Returns 0, or -1 with
 * errno set when a write failed.  The JSON is complete only when the run
 * reached on_end. */
int mp_perfetto_close(struct mp_perfetto *w, struct mp_perfetto_stats *st);

#endif
