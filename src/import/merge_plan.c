/*
 * import/merge_plan.c - building the plan of a merge: open every input
 * trace, refuse what cannot be merged, order the inputs, map each input's
 * devices to job devices (decision 1 of the multi-rank design) and choose
 * how timestamps are put on one clock (decision 3).  No event is read here.
 */
#include "import/merge_plan.h"
#include "util/satmath.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static char *meta_or_empty(struct mp_store *s, const char *key)
{
	char *v = mp_store_get_meta(s, key);

	return v ? v : strdup("");
}

/* The host all procs share, NULL when one is unknown or they differ. */
static const char *common_host(const struct memprof_process *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!p[i].host || strcmp(p[i].host, p[0].host) != 0)
			return NULL;
	return n ? p[0].host : NULL;
}

static int parse_offset(const char *text, int64_t *out)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(text, &end, 10);
	if (errno || end == text || *end)
		return 0;
	*out = v;
	return 1;
}

static int load_devices(struct mp_merge_input *in)
{
	struct memprof_device *d;
	size_t n, i;

	if (mp_store_devices(in->s, &d, &n) < 0)
		return -1;
	in->devs = calloc(n ? n : 1, sizeof(*in->devs));
	if (!in->devs) {
		mp_store_free_devices(d, n);
		return -1;
	}
	for (i = 0; i < n; i++)
		in->devs[i].d = d[i]; /* takes the strings */
	in->n_devs = n;
	free(d);
	return 0;
}

static int open_input(struct mp_merge_input *in, const char *path, struct mp_error *err)
{
	char *offset;
	size_t i;

	in->path = path;
	in->lowest_rank = MP_MERGE_NO_RANK;
	if (mp_store_open(&in->s, path, err) < 0)
		return err->code;
	in->source = meta_or_empty(in->s, "source");
	in->clock = meta_or_empty(in->s, "clock");
	offset = mp_store_get_meta(in->s, "clock_unix_offset_ns");
	in->has_offset = offset && parse_offset(offset, &in->offset_ns);
	free(offset);
	if (!in->source || !in->clock || mp_store_processes(in->s, &in->procs, &in->n_procs) < 0 ||
	    load_devices(in) < 0 || mp_store_ts_range(in->s, &in->first_ns, &in->last_ns) < 0 ||
	    mp_store_count_events(in->s, &in->n_events) < 0 ||
	    mp_store_count_replay_runs(in->s, &in->n_replay_runs) < 0) {
		if (mp_store_error(in->s)->code)
			return mp_err_copy(err, mp_store_error(in->s));
		return mp_err(err, MP_ENOMEM, "out of memory reading '%s'", path);
	}
	in->host = common_host(in->procs, in->n_procs);
	for (i = 0; i < in->n_procs; i++)
		if (in->procs[i].rank >= 0 && in->procs[i].rank < in->lowest_rank)
			in->lowest_rank = in->procs[i].rank;
	return 0;
}

/* Every input's times, shifted onto the merged clock, stay within 64 bits. */
static int check_shifts(const struct mp_merge_plan *plan, struct mp_error *err)
{
	size_t i;
	int64_t a, b;

	for (i = 0; i < plan->n; i++) {
		const struct mp_merge_input *in = &plan->in[i];

		if (in->n_events == 0)
			continue;
		if (__builtin_add_overflow(in->first_ns, in->shift_ns, &a) ||
		    __builtin_add_overflow(in->last_ns, in->shift_ns, &b) ||
		    (plan->clock_mode == MP_MERGE_CLOCK_ALIGNED && in->first_ns == INT64_MIN))
			return mp_err(
			        err, MP_EFORMAT,
			        "cannot merge '%s': its times (%lld ns to %lld ns) put on the "
			        "merged clock (%+lld ns) leave the 64-bit range",
			        in->path, (long long)in->first_ns, (long long)in->last_ns,
			        (long long)in->shift_ns);
	}
	return 0;
}

static void free_input(struct mp_merge_input *in)
{
	size_t i;

	mp_store_close(in->s);
	free(in->source);
	free(in->clock);
	mp_store_free_processes(in->procs, in->n_procs);
	for (i = 0; i < in->n_devs; i++) {
		free((char *)in->devs[i].d.name);
		free((char *)in->devs[i].d.uuid);
	}
	free(in->devs);
}

void mp_merge_plan_free(struct mp_merge_plan *plan)
{
	size_t i;

	for (i = 0; i < plan->n; i++)
		free_input(&plan->in[i]);
	free(plan->in);
	free(plan->paths);
	free(plan->clock);
	free(plan->clock_why);
	memset(plan, 0, sizeof(*plan));
}

static int same_text(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

/* The output, or a file given twice, among the inputs (same device and inode). */
static int check_files(const char *const *paths, int n, const char *out_path, struct mp_error *err)
{
	struct stat a, b;
	int i, j;

	for (i = 0; i < n; i++) {
		if (stat(paths[i], &a) != 0)
			continue; /* mp_store_open says why */
		if (out_path && stat(out_path, &b) == 0 && a.st_dev == b.st_dev &&
		    a.st_ino == b.st_ino)
			return mp_err(
			        err, MP_EINVAL,
			        "output among the inputs '%s': the merged trace must be a new "
			        "file, not one of the traces merged",
			        out_path);
		for (j = 0; j < i; j++)
			if (stat(paths[j], &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino)
				return mp_err(err, MP_EINVAL,
				              "same trace given twice '%s': it is also '%s'",
				              paths[i], paths[j]);
	}
	return 0;
}

static void describe_process(const struct memprof_process *p, char *buf, size_t size)
{
	char rank[32] = "no rank";

	if (p->rank >= 0)
		snprintf(rank, sizeof(rank), "rank %lld", (long long)p->rank);
	snprintf(buf, size, "pid %lld, host %s, %s", (long long)p->pid,
	         p->host ? p->host : "unknown", rank);
}

/* Two inputs holding the same process: the same trace given twice. */
static int check_processes(const struct mp_merge_plan *plan, struct mp_error *err)
{
	size_t i, j, a, b;
	char what[256];

	for (i = 0; i < plan->n; i++)
		for (j = 0; j < i; j++)
			for (a = 0; a < plan->in[i].n_procs; a++)
				for (b = 0; b < plan->in[j].n_procs; b++) {
					const struct memprof_process *p = &plan->in[i].procs[a],
					                             *q = &plan->in[j].procs[b];

					if (p->pid != q->pid || p->rank != q->rank ||
					    !same_text(p->host, q->host))
						continue;
					describe_process(p, what, sizeof(what));
					return mp_err(
					        err, MP_EINVAL,
					        "same process twice '%s': its process %lld (%s) is "
					        "also in '%s' (the same trace given twice? label "
					        "per-rank traces with 'memprof import --rank')",
					        plan->in[i].path, (long long)p->id, what,
					        plan->in[j].path);
				}
	return 0;
}

/* Inputs by lowest rank, then as given (a stable insertion sort). */
static void order_inputs(struct mp_merge_plan *plan)
{
	size_t i, j;

	for (i = 1; i < plan->n; i++) {
		struct mp_merge_input t = plan->in[i];

		for (j = i; j > 0 && plan->in[j - 1].lowest_rank > t.lowest_rank; j--)
			plan->in[j] = plan->in[j - 1];
		plan->in[j] = t;
	}
	for (i = 0; i < plan->n; i++)
		plan->paths[i] = plan->in[i].path;
}

int mp_merge_plan_build(const char *const *paths, int n, const char *out_path,
                        struct mp_merge_plan *plan, struct mp_error *err)
{
	int i, rc;

	memset(plan, 0, sizeof(*plan));
	if ((rc = check_files(paths, n, out_path, err)) < 0)
		return rc;
	plan->in = calloc((size_t)n, sizeof(*plan->in));
	plan->paths = calloc((size_t)n, sizeof(*plan->paths));
	if (!plan->in || !plan->paths) {
		mp_merge_plan_free(plan);
		return mp_err(err, MP_ENOMEM, "out of memory");
	}
	for (i = 0; i < n; i++) {
		plan->n++;
		if ((rc = open_input(&plan->in[i], paths[i], err)) < 0) {
			mp_merge_plan_free(plan);
			return rc;
		}
	}
	order_inputs(plan);
	if ((rc = check_processes(plan, err)) < 0) {
		mp_merge_plan_free(plan);
		return rc;
	}
	if (mp_merge_devices_plan(plan) < 0 || mp_merge_clock_plan(plan) < 0) {
		mp_merge_plan_free(plan);
		return mp_err(err, MP_ENOMEM, "out of memory");
	}
	if ((rc = check_shifts(plan, err)) < 0)
		mp_merge_plan_free(plan);
	return rc;
}
