/*
 * analysis/phase_spans.h - the top-level phases of a trace as time spans,
 * from its phase_begin and phase_end events, for shading charts.  A
 * memory-state listener (on_event only).  Not thread-safe.
 *
 * Phases nest per (process, device, thread): a begin while a phase of the
 * same process, device and thread is open is nested, and an end closes the
 * innermost open phase of its name there (an end with none is counted and
 * ignored).  Only top-level phases become spans; a phase still open after
 * the last event ends at the last timestamp.  Spans are kept per device
 * ordinal, as the events name it (recorded NVTX ranges carry device -1:
 * no particular device).
 *
 * Memory is bounded: at most MP_PHASE_MAX_OPEN open phases per device (the
 * deeper ones are counted and ignored) and MP_PHASE_MAX_SPANS spans per
 * device; past that, neighbouring spans are merged pairwise, so the spans
 * still cover the same time: a merged span keeps its name when both had
 * the same, else it has none ("several phases").
 */
#ifndef MP_ANALYSIS_PHASE_SPANS_H
#define MP_ANALYSIS_PHASE_SPANS_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/memstate.h"

#define MP_PHASE_MAX_SPANS   4096
#define MP_PHASE_MAX_OPEN    256
#define MP_PHASE_MAX_DEVICES 64

struct mp_phase_span {
	int64_t begin_ts_ns, end_ts_ns;
	const char *name; /* reader-owned; NULL: several phases merged, or unnamed */
	int64_t n_phases; /* top-level phases it covers, >= 1 */
};

struct mp_phase_open; /* private */

struct mp_phase_device {
	int32_t device;
	struct mp_phase_span *spans; /* in order of their ends */
	size_t n_spans, cap_spans;
	int64_t n_phases;         /* top-level phases seen */
	int64_t n_open_at_end;    /* of those, still open after the last event */
	int64_t n_unmatched_ends; /* ends with no open phase of their name */
	int64_t n_too_deep;       /* begins past MP_PHASE_MAX_OPEN open phases */
	/* private */
	struct mp_phase_open *open;
	size_t n_open;
};

struct mp_phase_spans {
	struct mp_phase_device devices[MP_PHASE_MAX_DEVICES]; /* in order of appearance */
	int n_devices;
	int devices_truncated; /* phases on more than MP_PHASE_MAX_DEVICES devices */
	int64_t last_ts_ns;
	/* private */
	int64_t max_spans; /* MP_PHASE_MAX_SPANS; smaller in tests */
};

/* max_spans: spans kept per device, 0 for MP_PHASE_MAX_SPANS (at least 2). */
void mp_phase_spans_init(struct mp_phase_spans *p, size_t max_spans);
void mp_phase_spans_free(struct mp_phase_spans *p);
/* The listener; on_event returns 0 or MP_ENOMEM, on_end closes open phases. */
struct mp_mem_listener mp_phase_spans_listener(struct mp_phase_spans *p);
/* A device's spans, or NULL when it had no phase. */
const struct mp_phase_device *mp_phase_spans_device(const struct mp_phase_spans *p, int32_t device);

#endif
