/*
 * util/duration.h - duration options: a number with its unit ("500ms",
 * "2s", "1.5us"), the units of mp_parse_duration (util/parse.h).  A bare
 * number other than 0 is refused, since its unit would be a guess (ns for
 * one option, ms or s for another); the caller suggests one.
 */
#ifndef MP_UTIL_DURATION_H
#define MP_UTIL_DURATION_H

#include <stddef.h>
#include <stdint.h>

/* Parse text into *ns.  Returns 0, or MP_EINVAL; *bare is set to 1 when
 * text is a number without a unit (other than 0), else to 0. */
int mp_parse_duration_unit(const char *text, int64_t *ns, int *bare);

/* Why text is not a duration, for "invalid --OPT 'TEXT': WHY": with a bare
 * number, the suggestion TEXT + unit ("did you mean '500ms'?").  Returns buf. */
const char *mp_duration_problem(char *buf, size_t n, const char *text, int bare, const char *unit);

#endif
