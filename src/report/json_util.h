/*
 * report/json_util.h - small cJSON helpers the JSON reports share: exact
 * 64-bit integers (cJSON's numbers are doubles), nulls for unknown values,
 * call stacks as frame arrays, and the one way a tree is written out.
 */
#ifndef MP_REPORT_JSON_UTIL_H
#define MP_REPORT_JSON_UTIL_H

#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdio.h>

#include "memprof/trace.h"

/* v written exactly, as a raw number. */
void mp_json_add_int(cJSON *o, const char *key, int64_t v);
/* v, or null when v is negative (unknown). */
void mp_json_add_known(cJSON *o, const char *key, int64_t v);
/* [{"name","file","line"}...] innermost first; [] for a NULL stack. */
cJSON *mp_json_frames(const struct memprof_stack *s);

/* root printed to out, then a newline; every JSON report is written so.
 * Its strings come out as valid UTF-8 whatever bytes the trace held (each
 * byte of an invalid sequence as \ufffd: report/json_stream).  Returns 0,
 * MP_ENOMEM or MP_EIO (a write failed). */
int mp_json_write(FILE *out, const cJSON *root);

#endif
