/*
 * import/merge_clock.c - putting the inputs of a merge on one clock
 * (decision 3 of the multi-rank design): kept when every input is on the
 * same clock already (same clock meta, and one known host for monotonic
 * clocks); else on the Unix epoch when every input is on it or carries
 * clock_unix_offset_ns; else each input's first event aligned to 0.
 */
#include "import/merge_plan.h"
#include "util/satmath.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OFFSET_SLACK_NS 1000000 /* offsets this close are one host's clock */

static int is_unix(const char *clock)
{
	return strncmp(clock, "unix_epoch_ns", 13) == 0;
}

static int is_monotonic(const char *clock)
{
	return strncmp(clock, "monotonic_ns", 12) == 0;
}

/* Every input on the same clock: same clock text; monotonic on one known host. */
static int all_same_clock(const struct mp_merge_plan *plan)
{
	size_t i;

	for (i = 0; i < plan->n; i++) {
		const struct mp_merge_input *in = &plan->in[i];

		if (strcmp(in->clock, plan->in[0].clock) != 0)
			return 0;
		if (plan->n > 1 && !is_unix(in->clock) &&
		    !(is_monotonic(in->clock) && in->host && plan->in[0].host &&
		      strcmp(in->host, plan->in[0].host) == 0))
			return 0;
	}
	return 1;
}

static int all_unix_able(const struct mp_merge_plan *plan)
{
	size_t i;

	for (i = 0; i < plan->n; i++)
		if (!is_unix(plan->in[i].clock) &&
		    !(is_monotonic(plan->in[i].clock) && plan->in[i].has_offset))
			return 0;
	return 1;
}

/* Kept: the offset to Unix time survives when every input had the same one. */
static void keep_offset(struct mp_merge_plan *plan)
{
	int64_t d;
	size_t i;

	plan->has_offset = plan->n > 0 && plan->in[0].has_offset;
	plan->offset_ns = plan->has_offset ? plan->in[0].offset_ns : 0;
	for (i = 1; i < plan->n && plan->has_offset; i++) {
		d = mp_sat_sub(plan->in[i].offset_ns, plan->offset_ns);
		plan->has_offset =
		        plan->in[i].has_offset && d < OFFSET_SLACK_NS && d > -OFFSET_SLACK_NS;
	}
}

/* "'a.db' monotonic_ns (host x), 'b.db' unix_epoch_ns" */
static void list_clocks(FILE *f, const struct mp_merge_plan *plan)
{
	size_t i;

	for (i = 0; i < plan->n; i++)
		fprintf(f, "%s'%s' %s%s%s%s", i ? ", " : "", plan->in[i].path,
		        plan->in[i].clock[0] ? plan->in[i].clock : "(no clock)",
		        plan->in[i].host ? " (host " : "", plan->in[i].host ? plan->in[i].host : "",
		        plan->in[i].host ? ")" : "");
}

int mp_merge_clock_plan(struct mp_merge_plan *plan)
{
	char *why = NULL;
	size_t len = 0, i;
	FILE *f = open_memstream(&why, &len);

	if (!f)
		return MP_ENOMEM;
	if (all_same_clock(plan)) {
		plan->clock_mode = MP_MERGE_CLOCK_KEPT;
		plan->clock = strdup(plan->n ? plan->in[0].clock : "monotonic_ns");
		keep_offset(plan);
		fprintf(f, "kept: every input on %s", plan->clock ? plan->clock : "");
		if (plan->n && plan->in[0].host && !is_unix(plan->in[0].clock))
			fprintf(f, " of host %s", plan->in[0].host);
	} else if (all_unix_able(plan)) {
		plan->clock_mode = MP_MERGE_CLOCK_UNIX;
		plan->clock = strdup("unix_epoch_ns (merged: monotonic inputs shifted by their "
		                     "clock_unix_offset_ns)");
		fputs("unix_epoch_ns: ", f);
		for (i = 0; i < plan->n; i++) {
			struct mp_merge_input *in = &plan->in[i];

			in->shift_ns = is_unix(in->clock) ? 0 : in->offset_ns;
			fprintf(f, "%s'%s' %s", i ? ", " : "", in->path,
			        is_unix(in->clock) ? "as it is"
			                           : "shifted by its clock_unix_offset_ns");
			if (in->shift_ns)
				fprintf(f, " (%+lld ns)", (long long)in->shift_ns);
		}
	} else {
		plan->clock_mode = MP_MERGE_CLOCK_ALIGNED;
		plan->clock = strdup("aligned_ns (merged: each input's first event at 0, the "
		                     "inputs' clocks were not comparable)");
		fputs("aligned: each input's first event put at 0, its clock not comparable with "
		      "the others': ",
		      f);
		list_clocks(f, plan);
		for (i = 0; i < plan->n; i++)
			plan->in[i].shift_ns = plan->in[i].first_ns == INT64_MIN
			                               ? INT64_MAX /* checked by mp_merge_plan */
			                               : -plan->in[i].first_ns;
	}
	if (fclose(f) != 0 || !plan->clock) {
		free(why);
		return MP_ENOMEM;
	}
	plan->clock_why = why;
	return 0;
}
