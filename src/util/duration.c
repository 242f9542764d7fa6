/*
 * util/duration.c - duration options with their unit (util/duration.h):
 * the unit check and the suggestion; the arithmetic is util/parse.c's.
 */
#include "util/duration.h"
#include "util/error.h"
#include "util/parse.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

int mp_parse_duration_unit(const char *text, int64_t *ns, int *bare)
{
	char *end;
	double v;

	*bare = 0;
	if (!text || !*text)
		return MP_EINVAL;
	v = strtod(text, &end);
	if (end != text && *end == '\0' && text[0] != '-' && text[0] != '+' && isfinite(v)) {
		if (v != 0) {
			*bare = 1;
			return MP_EINVAL;
		}
		*ns = 0;
		return 0;
	}
	return mp_parse_duration(text, ns);
}

const char *mp_duration_problem(char *buf, size_t n, const char *text, int bare, const char *unit)
{
	if (bare)
		snprintf(buf, n,
		         "a duration needs a unit (ns, us, ms, s, min or h): did you mean '%s%s'?",
		         text, unit);
	else
		snprintf(buf, n, "give a duration with its unit, such as 500us, 1ms or 2s");
	return buf;
}
