/*
 * report/json_util.h - small cJSON helpers the JSON reports share: exact
 * 64-bit integers (cJSON's numbers are doubles), nulls for unknown values,
 * and call stacks as frame arrays.
 */
#ifndef MP_REPORT_JSON_UTIL_H
#define MP_REPORT_JSON_UTIL_H

#include <cjson/cJSON.h>
#include <stdint.h>

#include "memprof/trace.h"

/* v written exactly, as a raw number. */
void mp_json_add_int(cJSON *o, const char *key, int64_t v);
/* v, or null when v is negative (unknown). */
void mp_json_add_known(cJSON *o, const char *key, int64_t v);
/* [{"name","file","line"}...] innermost first; [] for a NULL stack. */
cJSON *mp_json_frames(const struct memprof_stack *s);

#endif
