/*
 * report/json_stream.h - JSON text written piece by piece, for outputs too
 * large to build as a cJSON tree (the trace-event export).  Buffers into
 * a FILE or grows in memory.  Strings are always valid JSON and valid
 * UTF-8, whatever bytes come in: control characters and DEL as \u00XX,
 * each byte of an invalid UTF-8 sequence as \ufffd.  Integers are printed
 * exactly; timestamps as microseconds with the nanoseconds as an exact
 * three-digit fraction.  Not thread-safe.
 *
 * Errors stick: after a failed write or allocation every call does nothing
 * and mp_jstream_flush (or mp_jstream_take) reports it.
 */
#ifndef MP_REPORT_JSON_STREAM_H
#define MP_REPORT_JSON_STREAM_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct mp_jstream {
	FILE *out; /* NULL: the text stays in buf */
	char *buf;
	size_t len, cap;
	uint64_t n_bytes; /* written so far, buffered or not */
	int failed, saved_errno;
};

/* Start writing to out (never closed here), or to memory when out is NULL.
 * Returns 0 or -1 (out of memory; j is then safe to free). */
int mp_jstream_init(struct mp_jstream *j, FILE *out);
void mp_jstream_free(struct mp_jstream *j);

void mp_jstream_raw(struct mp_jstream *j, const char *s, size_t n);
/* A string literal written as it is (it must already be JSON). */
#define mp_jstream_lit(j, s) mp_jstream_raw((j), (s), sizeof(s) - 1)
void mp_jstream_i64(struct mp_jstream *j, int64_t v);
void mp_jstream_u64(struct mp_jstream *j, uint64_t v);
/* "0x1f": a string, so 64-bit addresses stay exact in every reader. */
void mp_jstream_hex(struct mp_jstream *j, uint64_t v);
/* ts_ns as microseconds: 1234567 -> 1234.567, -1500 -> -1.500, 2000 -> 2 */
void mp_jstream_ts_us(struct mp_jstream *j, int64_t ts_ns);
/* s quoted and escaped; null for NULL. */
void mp_jstream_str(struct mp_jstream *j, const char *s);
/* One string made of several pieces: begin, any number of parts, end. */
void mp_jstream_str_begin(struct mp_jstream *j);
void mp_jstream_str_part(struct mp_jstream *j, const char *s, size_t n);
void mp_jstream_str_end(struct mp_jstream *j);
/* JSON text made elsewhere (a cJSON tree printed: cJSON passes any byte of
 * a string through), made valid UTF-8 by the same rule as strings: each
 * byte of an invalid UTF-8 sequence becomes \ufffd and DEL \u007f. */
void mp_jstream_json(struct mp_jstream *j, const char *text, size_t n);

/* Write out what is buffered (and fflush out).  Returns 0, or -1 with
 * errno set when anything failed so far. */
int mp_jstream_flush(struct mp_jstream *j);
/* Memory mode: the text (NUL-terminated, malloc'd, the caller frees it)
 * and its length; j is left empty.  NULL when anything failed. */
char *mp_jstream_take(struct mp_jstream *j, size_t *len);

#endif
