/*
 * load/trace_meta.h - a trace's meta values as the commands read them: a
 * flag (truncated, lossy), a count, whether it has timestamps.
 */
#ifndef MP_LOAD_TRACE_META_H
#define MP_LOAD_TRACE_META_H

#include <stdint.h>

#include "store/store.h"

/* 1 when the trace's meta key is set to anything but "0" (truncated, lossy). */
int mp_load_meta_flag(struct mp_store *s, const char *key);
/* A meta value as a count: 0 when absent or not a number. */
int64_t mp_load_meta_int(struct mp_store *s, const char *key);
/* 1 when the trace has no timestamps (meta timestamps=none: only the order of events). */
int mp_load_no_timestamps(struct mp_store *s);

#endif
