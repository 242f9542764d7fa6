/*
 * import/merge_meta.c - the meta keys of a merged trace: which traces it
 * was made from (merged_from), the job devices (merged_devices), the clock
 * (clock, merge_clock, clock_unix_offset_ns), and what the inputs said about
 * themselves (import_warnings, import_notes, truncated, lossy, dropped
 * records, record_disabled), each input's part naming its file.
 */
#include "import/merge_plan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void ranks_of(FILE *f, const struct mp_merge_input *in)
{
	size_t i;
	int any = 0;

	for (i = 0; i < in->n_procs; i++)
		if (in->procs[i].rank >= 0) {
			fprintf(f, "%s%lld", any ? "," : ", ranks ", (long long)in->procs[i].rank);
			any = 1;
		}
}

static char *merged_from(const struct mp_merge_plan *plan)
{
	char *text = NULL;
	size_t len = 0, i;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		return NULL;
	for (i = 0; i < plan->n; i++) {
		const struct mp_merge_input *in = &plan->in[i];

		fprintf(f, "%s'%s': source %s, %lld events, %zu processes", i ? "\n" : "", in->path,
		        in->source[0] ? in->source : "unknown", (long long)in->n_events,
		        in->n_procs);
		ranks_of(f, in);
		fprintf(f, ", clock %s", in->clock[0] ? in->clock : "unknown");
	}
	return fclose(f) == 0 ? text : (free(text), NULL);
}

/* Each input's value of key, as "'<path>': <value>" joined by sep; NULL when
 * none has it (and on no memory: *rc then MP_ENOMEM). */
static char *carried(const struct mp_merge_plan *plan, const char *key, const char *sep, int *rc)
{
	char *text = NULL, *v;
	size_t len = 0, i;
	FILE *f = open_memstream(&text, &len);
	int any = 0;

	if (!f) {
		*rc = MP_ENOMEM;
		return NULL;
	}
	for (i = 0; i < plan->n; i++) {
		if (!(v = mp_store_get_meta(plan->in[i].s, key)))
			continue;
		if (v[0])
			fprintf(f, "%s'%s': %s", any ? sep : "", plan->in[i].path, v);
		any |= v[0] != 0;
		free(v);
	}
	if (fclose(f) != 0) {
		*rc = MP_ENOMEM;
		any = 0;
	}
	if (!any) {
		free(text);
		return NULL;
	}
	return text;
}

static int set_carried(struct mp_store *s, const struct mp_merge_plan *plan, const char *key,
                       const char *sep)
{
	int rc = 0;
	char *text = carried(plan, key, sep, &rc), *had = NULL, *both = NULL;

	if (text && (had = mp_store_get_meta(s, key)) &&
	    asprintf(&both, "%s%s%s", had, sep, text) < 0)
		rc = MP_ENOMEM;
	else if (text && mp_store_set_meta(s, key, both ? both : text) < 0)
		rc = MP_EIO;
	free(text);
	free(had);
	free(both);
	return rc;
}

static int flag(struct mp_store *s, const char *key)
{
	char *v = mp_store_get_meta(s, key);
	int set = v && strcmp(v, "0") != 0;

	free(v);
	return set;
}

/* truncated, lossy and dropped records: any input's make the merge's. */
static int carry_flags(const struct mp_merge_plan *plan, struct mp_store *s,
                       struct mp_import_stats *st)
{
	int lossy = 0;
	size_t i;
	char *v;

	for (i = 0; i < plan->n; i++) {
		struct mp_store *in = plan->in[i].s;

		if (flag(in, "truncated")) {
			st->n_truncated++;
			mp_import_note(st, "'%s' is marked truncated: so is the merged trace",
			               plan->in[i].path);
		}
		lossy |= flag(in, "lossy");
		if ((v = mp_store_get_meta(in, "dropped_records"))) {
			st->n_dropped += strtoll(v, NULL, 10);
			free(v);
		}
		if (plan->in[i].n_replay_runs > 0)
			mp_import_note(
			        st,
			        "'%s' holds %lld replay runs: not carried (they were of that "
			        "trace alone); replay the merged trace again",
			        plan->in[i].path, (long long)plan->in[i].n_replay_runs);
	}
	return lossy && mp_store_set_meta(s, "lossy", "1") < 0 ? MP_EIO : 0;
}

static int write_clock(const struct mp_merge_plan *plan, struct mp_store *s,
                       struct mp_import_stats *st)
{
	char offset[24];

	if (plan->clock_mode == MP_MERGE_CLOCK_ALIGNED)
		mp_import_note(st, "clocks not comparable: %s", plan->clock_why);
	snprintf(offset, sizeof(offset), "%lld", (long long)plan->offset_ns);
	if (mp_store_set_meta(s, "clock", plan->clock) < 0 ||
	    mp_store_set_meta(s, "merge_clock", plan->clock_why) < 0 ||
	    (plan->has_offset && mp_store_set_meta(s, "clock_unix_offset_ns", offset) < 0))
		return MP_EIO;
	return 0;
}

int mp_merge_carry(const struct mp_merge_plan *plan, struct mp_store *s, struct mp_import_stats *st)
{
	int rc = carry_flags(plan, s, st);

	if (rc == 0)
		rc = set_carried(s, plan, "import_warnings", "; ");
	if (rc == 0)
		rc = set_carried(s, plan, "import_notes", "\n");
	if (rc == 0)
		rc = set_carried(s, plan, "record_disabled", "; ");
	return rc;
}

int mp_merge_after(void *shared, struct mp_store *s, struct mp_import_stats *st,
                   struct mp_error *err)
{
	const struct mp_merge_plan *plan = shared;
	char *from = merged_from(plan), *devices = mp_merge_devices_text(plan);
	int rc = from && devices ? 0 : MP_ENOMEM;

	if (rc == 0 && (mp_store_set_meta(s, "merged_from", from) < 0 ||
	                mp_store_set_meta(s, "merged_devices", devices) < 0))
		rc = MP_EIO;
	if (rc == 0)
		rc = write_clock(plan, s, st);
	if (rc == 0)
		rc = mp_merge_carry(plan, s, st);
	free(from);
	free(devices);
	if (rc == MP_ENOMEM)
		return mp_err(err, rc, "out of memory");
	if (rc < 0)
		return mp_err_copy(err, mp_store_error(s));
	return 0;
}
