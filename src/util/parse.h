/*
 * util/parse.h - command-line quantities: byte sizes ("2MiB", "1.5 GB",
 * "4096"), durations ("1ms", "250us", "2s", "100" = ns) and ratios
 * ("0.15" or "15%").  Strict: the
 * whole string must parse, and results must fit in int64.
 */
#ifndef MP_UTIL_PARSE_H
#define MP_UTIL_PARSE_H

#include <stdint.h>

/* Binary units B, KiB, MiB, GiB, TiB, PiB (also K, M, G, T, P) and decimal
 * kB, MB, GB, TB, PB; any case; a fraction is rounded to the nearest byte.
 * Returns 0, or MP_EINVAL (negative, unknown unit, overflow, empty). */
int mp_parse_bytes(const char *text, int64_t *out);
/* ns, us, ms, s, min, h; no unit means ns.  Returns 0 or MP_EINVAL. */
int mp_parse_duration(const char *text, int64_t *out);
/* A decimal integer in [lo, hi], nothing else.  Returns 0 or MP_EINVAL. */
int mp_parse_count(const char *text, int64_t lo, int64_t hi, int64_t *out);
/* A ratio "0.15" or the same as a percentage "15%", in [lo, hi] (as a
 * ratio).  Returns 0 or MP_EINVAL. */
int mp_parse_ratio(const char *text, double lo, double hi, double *out);

#endif
