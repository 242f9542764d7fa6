/*
 * util/satmath.h - 64-bit integer arithmetic that saturates instead of
 * overflowing (signed overflow is undefined behaviour), for values read from
 * untrusted files: timestamps, offsets, sizes.  Header only, stateless.
 */
#ifndef MP_UTIL_SATMATH_H
#define MP_UTIL_SATMATH_H

#include <stdint.h>

/* a + b, clamped to [INT64_MIN, INT64_MAX]. */
static inline int64_t mp_sat_add(int64_t a, int64_t b)
{
	int64_t r;

	if (__builtin_add_overflow(a, b, &r))
		return b > 0 ? INT64_MAX : INT64_MIN;
	return r;
}

/* a - b, clamped to [INT64_MIN, INT64_MAX]. */
static inline int64_t mp_sat_sub(int64_t a, int64_t b)
{
	int64_t r;

	if (__builtin_sub_overflow(a, b, &r))
		return b < 0 ? INT64_MAX : INT64_MIN;
	return r;
}

/* v rounded toward zero, clamped to [INT64_MIN, INT64_MAX]; NaN gives 0. */
static inline int64_t mp_sat_i64_of_double(double v)
{
	if (v != v)
		return 0;
	if (v >= 9223372036854775807.0)
		return INT64_MAX;
	if (v <= -9223372036854775808.0)
		return INT64_MIN;
	return (int64_t)v;
}

#endif
