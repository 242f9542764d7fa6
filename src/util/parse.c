/*
 * util/parse.c - byte sizes and durations from command-line text.
 */
#include "util/parse.h"
#include "util/error.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <strings.h>

struct unit {
	const char *name;
	double scale;
};

static int parse_scaled(const char *text, const struct unit *units, int64_t *out)
{
	char *end;
	double v, scaled;
	const char *u;

	if (!text || !*text || *text == '-' || *text == '+')
		return MP_EINVAL;
	v = strtod(text, &end);
	if (end == text || !isfinite(v) || v < 0)
		return MP_EINVAL;
	u = end;
	while (*u == ' ')
		u++;
	for (; units->name; units++)
		if (strcasecmp(u, units->name) == 0)
			break;
	if (!units->name)
		return MP_EINVAL;
	scaled = v * units->scale;
	if (scaled >= 9.2233720368547e18)
		return MP_EINVAL;
	*out = (int64_t)(scaled + 0.5);
	return 0;
}

int mp_parse_bytes(const char *text, int64_t *out)
{
	static const struct unit units[] = {
	        {"", 1},         {"B", 1},        {"KiB", 0x1p10}, {"K", 0x1p10},   {"MiB", 0x1p20},
	        {"M", 0x1p20},   {"GiB", 0x1p30}, {"G", 0x1p30},   {"TiB", 0x1p40}, {"T", 0x1p40},
	        {"PiB", 0x1p50}, {"P", 0x1p50},   {"kB", 1e3},     {"MB", 1e6},     {"GB", 1e9},
	        {"TB", 1e12},    {"PB", 1e15},    {NULL, 0},
	};

	return parse_scaled(text, units, out);
}

int mp_parse_duration(const char *text, int64_t *out)
{
	static const struct unit units[] = {
	        {"", 1},    {"ns", 1},     {"us", 1e3},   {"ms", 1e6},
	        {"s", 1e9}, {"min", 60e9}, {"h", 3600e9}, {NULL, 0},
	};

	return parse_scaled(text, units, out);
}

int mp_parse_count(const char *text, int64_t lo, int64_t hi, int64_t *out)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(text, &end, 10);
	if (end == text || *end || errno == ERANGE || v < lo || v > hi)
		return MP_EINVAL;
	*out = v;
	return 0;
}

int mp_parse_ratio(const char *text, double lo, double hi, double *out)
{
	char *end;
	double v;

	if (!text || !*text || isspace((unsigned char)*text))
		return MP_EINVAL;
	errno = 0;
	v = strtod(text, &end);
	if (end == text || errno == ERANGE || !isfinite(v))
		return MP_EINVAL;
	if (end[0] == '%' && end[1] == '\0')
		v /= 100.0, end++;
	if (*end || !(v >= lo && v <= hi))
		return MP_EINVAL;
	*out = v;
	return 0;
}
