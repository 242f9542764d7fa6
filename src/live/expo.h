/*
 * live/expo.h - the live figures in the Prometheus text exposition format
 * (version 0.0.4), for 'memprof record --metrics'.  A pure function of the
 * state.  Families, all with HELP and TYPE lines, samples labelled
 * device, pid and rank (rank only where a launcher variable gave it):
 *   memprof_live_bytes, memprof_reserved_bytes, memprof_peak_live_bytes,
 *   memprof_peak_reserved_bytes, memprof_free_share_ratio (gauges; a
 *   sample is left out where its figure is not known),
 *   memprof_allocations_total, memprof_frees_total,
 *   memprof_allocated_bytes_total, memprof_ooms_total (counters),
 *   memprof_alloc_latency_seconds (histogram), memprof_dropped_events_total
 *   (counter, per process: pid and rank), memprof_processes (gauge).
 */
#ifndef MP_LIVE_EXPO_H
#define MP_LIVE_EXPO_H

#include "live/state.h"
#include "live/text.h"

/* Append the exposition to out.  Returns 0 or MP_ENOMEM. */
int mp_live_render_metrics(const struct mp_live_state *st, struct mp_live_text *out);

#endif
