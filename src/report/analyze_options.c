/*
 * report/analyze_options.c - analyze's attribution options read from their
 * text, by the same names the output uses (mp_attr_kind_names): --by's
 * list of kinds and --at's moment.
 */
#include "report/analyze_out.h"
#include "util/duration.h"
#include "util/parse.h"

#include <stdlib.h>
#include <string.h>

int mp_analyze_parse_by(const char *text, unsigned *kinds)
{
	char *copy = strdup(text), *save = NULL, *tok;
	int k, rc = 0;

	*kinds = 0;
	if (!copy)
		return -1;
	for (tok = strtok_r(copy, ",", &save); tok && rc == 0; tok = strtok_r(NULL, ",", &save)) {
		if (strcmp(tok, "all") == 0) {
			*kinds = (1u << MP_ATTR_KINDS) - 1;
			continue;
		}
		for (k = 0; k < MP_ATTR_KINDS && strcmp(tok, mp_attr_kind_names[k]) != 0; k++)
			;
		if (k == MP_ATTR_KINDS)
			rc = -1;
		else
			*kinds |= 1u << k;
	}
	free(copy);
	return rc == 0 && *kinds ? 0 : -1;
}

int mp_analyze_parse_at(const char *text, struct mp_pass_opts *o)
{
	int64_t v;
	int bare = 0;

	if (strcmp(text, "peak") == 0)
		o->at = MP_ATTR_AT_PEAK;
	else if (strcmp(text, "oom") == 0)
		o->at = MP_ATTR_AT_OOM;
	else if (text[0] == '+' && mp_parse_duration_unit(text + 1, &v, &bare) == 0)
		o->at = MP_ATTR_AT_TIME, o->at_ts_ns = v;
	else if (text[0] == '+')
		return bare ? -2 : -1;
	else if (mp_parse_count(text, INT64_MIN, INT64_MAX, &v) == 0)
		o->at = MP_ATTR_AT_TIME, o->at_ts_ns = v;
	else
		return -1;
	o->at_relative = text[0] == '+';
	return 0;
}
