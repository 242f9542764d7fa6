/*
 * report/replay_common.c - what the text and JSON replay writers share:
 * the baseline's result for a device (none for a run that failed), the
 * pools' order and which did nothing on the trace, a result's figures as named
 * metrics (the numeric JSON keys, and the pool's own stats as
 * "pool.<name>"), which is also what the trace stores; and the job's
 * figures of a replay over MPI ranks.  No output here.
 */
#include "replay/cost_model.h"
#include "report/replay_out.h"

#include <stdio.h>
#include <string.h>

const struct mp_replay_result *mp_replay_baseline_of(const struct mp_replay_report *rep,
                                                     const struct mp_replay_result *r)
{
	if (!rep->baseline)
		return NULL;
	for (size_t i = 0; i < rep->n_results; i++) {
		const struct mp_replay_result *b = &rep->results[i];

		if (b->device == r->device && strcmp(b->pool, rep->baseline) == 0 &&
		    (!rep->ranks || rep->ranks[i] == rep->ranks[r - rep->results]))
			return b;
	}
	return NULL;
}

int mp_replay_failed(const struct mp_replay_result *r)
{
	return r->n_ooms > 0;
}

const struct mp_replay_result *mp_replay_compared_to(const struct mp_replay_report *rep,
                                                     const struct mp_replay_result *r)
{
	const struct mp_replay_result *b = mp_replay_baseline_of(rep, r);

	return b && !mp_replay_failed(b) && !mp_replay_failed(r) ? b : NULL;
}

static int stat_of(const struct mp_replay_result *r, const char *name, double *v)
{
	for (size_t i = 0; i < r->n_stats && i < MP_REPLAY_MAX_STATS; i++)
		if (strncmp(r->stats[i].name, name, sizeof(r->stats[i].name)) == 0) {
			*v = r->stats[i].value;
			return 1;
		}
	return 0;
}

/* The caching result of r's device (and rank), or NULL. */
static const struct mp_replay_result *caching_of(const struct mp_replay_report *rep,
                                                 const struct mp_replay_result *r)
{
	for (size_t i = 0; i < rep->n_results; i++) {
		const struct mp_replay_result *c = &rep->results[i];

		if (c != r && c->device == r->device && strcmp(c->pool, "caching") == 0 &&
		    (!rep->ranks || rep->ranks[i] == rep->ranks[r - rep->results]))
			return c;
	}
	return NULL;
}

static int same_figures(const struct mp_replay_result *a, const struct mp_replay_result *b)
{
	return a->peak_reserved_bytes == b->peak_reserved_bytes &&
	       a->end_reserved_bytes == b->end_reserved_bytes &&
	       a->backend_calls == b->backend_calls &&
	       memcmp(a->n_calls, b->n_calls, sizeof(a->n_calls)) == 0;
}

const char *mp_replay_no_effect(const struct mp_replay_report *rep,
                                const struct mp_replay_result *r, char *buf, size_t n)
{
	const struct mp_replay_result *c;
	double v, fallback;
	int has_fallback = stat_of(r, "fallback_requests", &fallback);
	const char *all = "every request went to its caching fallback";

	if (mp_replay_failed(r) || r->n_allocs == 0)
		return NULL;
	if (stat_of(r, "pairs_found", &v) && v == 0)
		snprintf(buf, n, "no parameter/gradient pairs in this trace: %s", all);
	else if (stat_of(r, "iterations", &v) && v == 0)
		snprintf(buf, n, "no iterations found in this trace: %s", all);
	else if (has_fallback && fallback >= (double)r->n_allocs)
		snprintf(buf, n, "%s", all);
	else if (has_fallback && (c = caching_of(rep, r)) && !mp_replay_failed(c) &&
	         same_figures(r, c))
		snprintf(buf, n, "the same peak, end and backend calls as caching, its fallback");
	else
		return NULL;
	return buf;
}

/* 0 did something, 1 did nothing, 2 failed */
static int shown_class(const struct mp_replay_report *rep, const struct mp_replay_result *r)
{
	char why[160];

	if (mp_replay_failed(r))
		return 2;
	return mp_replay_no_effect(rep, r, why, sizeof(why)) ? 1 : 0;
}

/* a is shown before b */
static int before(const struct mp_replay_report *rep, const struct mp_replay_result *a,
                  const struct mp_replay_result *b)
{
	int ca = shown_class(rep, a), cb = shown_class(rep, b);

	if (ca != cb)
		return ca < cb;
	if (ca != 0)
		return 0; /* run order */
	if (a->peak_reserved_bytes != b->peak_reserved_bytes)
		return a->peak_reserved_bytes < b->peak_reserved_bytes;
	return a->backend_ns < b->backend_ns;
}

size_t mp_replay_order(const struct mp_replay_report *rep, size_t first, size_t end, size_t *idx)
{
	size_t n = end - first, n_did = 0;

	/* insertion sort: stable, and a device has a handful of pools */
	for (size_t i = 0; i < n; i++) {
		const struct mp_replay_result *r = &rep->results[first + i];
		size_t j = i;

		for (; j > 0 && before(rep, r, &rep->results[idx[j - 1]]); j--)
			idx[j] = idx[j - 1];
		idx[j] = first + i;
		n_did += shown_class(rep, r) == 0;
	}
	return n_did;
}

size_t mp_replay_place(const struct mp_replay_report *rep, const struct mp_replay_result *r)
{
	size_t place = 1;

	if (shown_class(rep, r) != 0)
		return 0;
	for (size_t i = 0; i < rep->n_results; i++) {
		const struct mp_replay_result *o = &rep->results[i];

		if (o != r && o->device == r->device &&
		    (!rep->ranks || rep->ranks[i] == rep->ranks[r - rep->results]) &&
		    shown_class(rep, o) == 0 &&
		    (before(rep, o, r) || (!before(rep, r, o) && o < r)))
			place++;
	}
	return place;
}

struct metric_list {
	struct mp_replay_metric *out;
	size_t n, max;
};

static void put(struct metric_list *l, const char *name, double value, const char *unit,
                int measured)
{
	struct mp_replay_metric *m;

	if (l->n >= l->max)
		return;
	m = &l->out[l->n++];
	snprintf(m->name, sizeof(m->name), "%s", name);
	m->value = value;
	m->unit = unit;
	m->measured = measured;
}

static void put_times(struct metric_list *l, const struct mp_replay_result *r,
                      const struct mp_replay_result *b)
{
	int tm = r->time_measured != 0;

	if (b)
		put(l, "time_saved_ns", (double)((int64_t)b->backend_ns - (int64_t)r->backend_ns),
		    "ns", tm && b->time_measured);
	put(l, "alloc_ns_p50", (double)r->alloc_ns_p50, "ns", tm);
	put(l, "alloc_ns_p99", (double)r->alloc_ns_p99, "ns", tm);
	put(l, "alloc_ns_max", (double)r->alloc_ns_max, "ns", tm);
	put(l, "free_ns_p50", (double)r->free_ns_p50, "ns", tm);
	put(l, "free_ns_p99", (double)r->free_ns_p99, "ns", tm);
	put(l, "total_ns", (double)r->total_ns, "ns", tm);
	put(l, "host_ns", (double)r->host_ns, "ns", 1);
	put(l, "backend_ns", (double)r->backend_ns, "ns", tm);
	put(l, "runs", (double)r->n_runs, "count", 0);
	put(l, "host_ns_min", (double)r->host_ns_min, "ns", 1);
	put(l, "host_ns_max", (double)r->host_ns_max, "ns", 1);
	put(l, "backend_ns_min", (double)r->backend_ns_min, "ns", tm);
	put(l, "backend_ns_max", (double)r->backend_ns_max, "ns", tm);
	put(l, "replay_ns", (double)r->replay_ns, "ns", 1);
	put(l, "replay_cpu_ns", (double)r->replay_cpu_ns, "ns", 1);
}

size_t mp_replay_metrics(const struct mp_replay_report *rep, const struct mp_replay_result *r,
                         struct mp_replay_metric *out, size_t max)
{
	const struct mp_replay_result *b = mp_replay_compared_to(rep, r);
	struct metric_list l = {out, 0, max};
	char name[64];

	put(&l, "peak_reserved_bytes", (double)r->peak_reserved_bytes, "bytes", 0);
	put(&l, "peak_reserved_seq", (double)r->peak_reserved_seq, "count", 0);
	put(&l, "lower_bound_bytes", (double)r->lower_bound_bytes, "bytes", 0);
	put(&l, "failed", (double)mp_replay_failed(r), "state", 0);
	if (mp_replay_place(rep, r))
		put(&l, "place", (double)mp_replay_place(rep, r), "count", 0);
	if (r->lower_bound_bytes > 0 && !mp_replay_failed(r))
		put(&l, "ratio_to_lower_bound",
		    (double)r->peak_reserved_bytes / (double)r->lower_bound_bytes, "ratio", 0);
	if (b)
		put(&l, "saved_bytes",
		    (double)((int64_t)b->peak_reserved_bytes - (int64_t)r->peak_reserved_bytes),
		    "bytes", 0);
	put(&l, "peak_live_bytes", (double)r->peak_live_bytes, "bytes", 0);
	if (r->peak_live_bytes > 0)
		put(&l, "ratio_to_granted_bound",
		    (double)r->peak_reserved_bytes / (double)r->peak_live_bytes, "ratio", 0);
	put(&l, "end_reserved_bytes", (double)r->end_reserved_bytes, "bytes", 0);
	put(&l, "external_fragmentation_at_peak", r->frag_at_peak, "ratio", 0);
	put(&l, "free_in_reserved_at_peak_bytes", (double)r->free_at_peak_bytes, "bytes", 0);
	put(&l, "backend_calls", (double)r->backend_calls, "count", 0);
	put(&l, "n_allocs", (double)r->n_allocs, "count", 0);
	put(&l, "n_frees", (double)r->n_frees, "count", 0);
	put(&l, "pool_threshold_bytes", (double)r->pool_threshold_bytes, "bytes", 0);
	put(&l, "n_below_threshold", (double)r->n_below_threshold, "count", 0);
	put_times(&l, r, b);
	put(&l, "bytes_copied", (double)r->bytes_copied, "bytes", 0);
	put(&l, "bytes_set", (double)r->bytes_set, "bytes", 0);
	put(&l, "copy_ns", (double)r->call_ns[MP_COST_COPY], "ns", r->time_measured != 0);
	put(&l, "memset_ns", (double)r->call_ns[MP_COST_MEMSET], "ns", r->time_measured != 0);
	put(&l, "blocks_shared", (double)r->n_shared, "count", 0);
	put(&l, "ooms", (double)r->n_ooms, "count", 0);
	put(&l, "verify", (double)r->verify, "state", 0);
	for (size_t i = 0; i < r->n_stats && i < MP_REPLAY_MAX_STATS; i++) {
		const struct mp_replay_stat *st = &r->stats[i];
		int unit_ok = memchr(st->unit, '\0', sizeof(st->unit)) != NULL;

		snprintf(name, sizeof(name), "pool.%.*s", (int)sizeof(st->name) - 1, st->name);
		put(&l, name, st->value, unit_ok && st->unit[0] ? st->unit : "count", 0);
	}
	return l.n;
}

/* The time of the slowest rank for pool: sum over each rank's devices, then the largest. */
static uint64_t slowest_rank_ns(const struct mp_replay_report *rep, const char *pool, int *rank,
                                int *all_measured, int *n_ranks)
{
	uint64_t worst = 0;

	*rank = -1;
	*all_measured = 1;
	*n_ranks = 0;
	for (int k = 0; k < rep->n_ranks; k++) {
		uint64_t sum = 0;
		int seen = 0;

		for (size_t i = 0; i < rep->n_results; i++)
			if (rep->ranks[i] == k && strcmp(rep->results[i].pool, pool) == 0) {
				sum += rep->results[i].backend_ns;
				*all_measured &= rep->results[i].time_measured != 0;
				seen = 1;
			}
		*n_ranks += seen;
		if (seen && (*rank < 0 || sum > worst)) {
			worst = sum;
			*rank = k;
		}
	}
	return worst;
}

/* Folds result i into the row j of its pool. */
static void add_to_row(const struct mp_replay_report *rep, size_t i, struct mp_replay_job_row *j)
{
	const struct mp_replay_result *r = &rep->results[i];
	const struct mp_replay_result *b = mp_replay_compared_to(rep, r);
	int k = rep->ranks[i];

	if (j->peak_rank < 0 || r->peak_reserved_bytes > j->peak_reserved_bytes) {
		j->peak_reserved_bytes = r->peak_reserved_bytes;
		j->peak_rank = k;
		j->peak_device = r->device;
	}
	if (r->lower_bound_bytes > j->lower_bound_bytes)
		j->lower_bound_bytes = r->lower_bound_bytes;
	if (b)
		j->saved_bytes += (int64_t)b->peak_reserved_bytes - (int64_t)r->peak_reserved_bytes;
	else
		j->has_saved = 0;
	j->n_ooms += r->n_ooms;
}

size_t mp_replay_job_rows(const struct mp_replay_report *rep, struct mp_replay_job_row *out,
                          size_t max)
{
	size_t n = 0;

	if (!rep->ranks || rep->n_ranks <= 0)
		return 0;
	for (size_t i = 0; i < rep->n_results && n < max; i++) {
		const char *pool = rep->results[i].pool;
		struct mp_replay_job_row *j = &out[n];
		size_t k;

		for (k = 0; k < n && strcmp(out[k].pool, pool) != 0; k++)
			;
		if (k < n)
			continue; /* this pool's row is made already */
		*j = (struct mp_replay_job_row){.pool = pool, .peak_rank = -1, .has_saved = 1};
		for (size_t m = i; m < rep->n_results; m++)
			if (strcmp(rep->results[m].pool, pool) == 0)
				add_to_row(rep, m, j);
		j->backend_ns = slowest_rank_ns(rep, pool, &j->slowest_rank, &j->time_measured,
		                                &j->n_ranks);
		n++;
	}
	for (size_t k = 0; k < n && rep->baseline; k++) {
		int rank, measured, n_ranks;
		uint64_t b = slowest_rank_ns(rep, rep->baseline, &rank, &measured, &n_ranks);
		int base_failed = 0;

		for (size_t m = 0; m < n; m++)
			base_failed |= strcmp(out[m].pool, rep->baseline) == 0 && out[m].n_ooms > 0;
		/* a failed run (OOMs on a rank) saves nothing */
		out[k].has_time_saved = rank >= 0 && out[k].n_ooms == 0 && !base_failed;
		out[k].time_saved_ns = (int64_t)b - (int64_t)out[k].backend_ns;
	}
	return n;
}

size_t mp_replay_job_metrics(const struct mp_replay_job_row *j, struct mp_replay_metric *out,
                             size_t max)
{
	struct metric_list l = {out, 0, max};

	put(&l, "peak_reserved_bytes", (double)j->peak_reserved_bytes, "bytes", 0);
	put(&l, "peak_rank", (double)j->peak_rank, "count", 0);
	put(&l, "peak_device", (double)j->peak_device, "count", 0);
	put(&l, "lower_bound_bytes", (double)j->lower_bound_bytes, "bytes", 0);
	if (j->has_saved)
		put(&l, "saved_bytes", (double)j->saved_bytes, "bytes", 0);
	put(&l, "backend_ns", (double)j->backend_ns, "ns", j->time_measured);
	put(&l, "slowest_rank", (double)j->slowest_rank, "count", 0);
	if (j->has_time_saved)
		put(&l, "time_saved_ns", (double)j->time_saved_ns, "ns", j->time_measured);
	put(&l, "ooms", (double)j->n_ooms, "count", 0);
	put(&l, "ranks", (double)j->n_ranks, "count", 0);
	return l.n;
}
