/*
 * util/limits.h - the one limit on sizes that every importer checks and
 * every reader relies on: a size (granted, requested, segment, buffer) is
 * below 2^56 bytes (64 PiB, far beyond any device), so that sums of many
 * stay within 2^62 and packed entries can hold one.  Header only.
 */
#ifndef MP_UTIL_LIMITS_H
#define MP_UTIL_LIMITS_H

#include <stdint.h>

#define MP_MAX_SIZE_BITS  56
#define MP_MAX_SIZE_BYTES (INT64_C(1) << MP_MAX_SIZE_BITS) /* sizes are below this */

/* 1 when bytes is a size memprof accepts: 0 <= bytes < 2^56. */
static inline int mp_size_ok(int64_t bytes)
{
	return bytes >= 0 && bytes < MP_MAX_SIZE_BYTES;
}

#endif
