/*
 * load/gate_load.h - a trace's gate figures (analysis/gate) for 'memprof
 * diff' and 'memprof check': one analysis pass at the peak, the trace's
 * meta (truncated, lossy, its window), and its stored replay runs.
 */
#ifndef MP_LOAD_GATE_LOAD_H
#define MP_LOAD_GATE_LOAD_H

#include <stdint.h>

#include "analysis/gate.h"
#include "store/store.h"
#include "util/error.h"

/* The figures of one pass over the open trace s into t (zeroed by the
 * caller; freed by it either way): granularity is the address-space
 * model's granule, device -1 every device.  0 or MP_E* with err set. */
int mp_load_gate_pass(struct mp_store *s, uint64_t granularity, int32_t device,
                      struct mp_gate_trace *t, struct mp_error *err);
/* The newest stored run of each device, pool and backend of the trace at
 * path (only device's, unless -1) added to t.  0 or MP_E* with err set. */
int mp_load_gate_pools(const char *path, int32_t device, struct mp_gate_trace *t,
                       struct mp_error *err);

#endif
