/*
 * store/results.c - replay results in the trace (replay_runs and
 * replay_metrics, memprof-trace(5)).  Saving opens the trace through
 * mp_store_open (identity check, migration), reopens it read-write and
 * appends every run in one transaction; nothing is written on any error.
 * Loading returns the runs oldest first, each with its metrics by name.
 */
#include "store/results.h"
#include "store/store_internal.h"
#include "util/array.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Everything a loaded set owns: the copied strings and the metrics. */
struct results_owned {
	char **strs;
	size_t n_strs, cap_strs;
	struct mp_result_metric *metrics;
	size_t n_metrics, cap_metrics;
	size_t *first; /* per run: index of its first metric */
};

static int check_runs(const struct mp_result_run *runs, size_t n, const char *path,
                      struct mp_error *err)
{
	for (size_t i = 0; i < n; i++) {
		const struct mp_result_run *r = &runs[i];

		if (!r->pool || !r->backend || (r->n_metrics && !r->metrics))
			return mp_err(err, MP_EINVAL,
			              "cannot save results in trace '%s': run %zu has no pool, "
			              "backend or metrics",
			              path, i);
		for (size_t j = 0; j < r->n_metrics; j++) {
			const struct mp_result_metric *m = &r->metrics[j];

			if (!m->name || !m->unit)
				return mp_err(
				        err, MP_EINVAL,
				        "cannot save results in trace '%s': metric %zu of pool "
				        "'%s' has no name or unit",
				        path, j, r->pool);
			if (!isfinite(m->value))
				return mp_err(
				        err, MP_EINVAL,
				        "cannot save results in trace '%s': metric '%s' of pool "
				        "'%s' is not a finite number",
				        path, m->name, r->pool);
			for (size_t k = 0; k < j; k++)
				if (strcmp(r->metrics[k].name, m->name) == 0)
					return mp_err(err, MP_EINVAL,
					              "cannot save results in trace '%s': metric "
					              "'%s' twice in the run of pool '%s'",
					              path, m->name, r->pool);
		}
	}
	return 0;
}

/* A trace the user made read-only is not written, even by root. */
static int check_writable(const char *path, struct mp_error *err)
{
	struct stat st;

	if (stat(path, &st) < 0)
		return mp_err(err, MP_EIO, "cannot open trace '%s': %s", path, strerror(errno));
	if (S_ISREG(st.st_mode) && ((st.st_mode & 0222) == 0 || access(path, W_OK) < 0))
		return mp_err(err, MP_EIO,
		              "cannot save results in trace '%s': the file is read-only", path);
	return 0;
}

/* Open path as a trace (migrating it), then reopen it read-write. */
static int open_rw(const char *path, struct mp_store **out, struct mp_error *err)
{
	struct mp_store *s;
	int rc = mp_store_open(&s, path, err);

	*out = NULL;
	if (rc < 0)
		return rc;
	if (mp_store_reopen(s, SQLITE_OPEN_READWRITE) < 0) {
		rc = s->err.code;
		goto fail;
	}
	if (sqlite3_db_readonly(s->db, "main") == 1) {
		rc = mp_err(&s->err, MP_EIO,
		            "cannot save results in trace '%s': the file is read-only", path);
		goto fail;
	}
	*out = s;
	return 0;
fail:
	mp_err_copy(err, &s->err);
	mp_store_close(s);
	return rc;
}

static void utc_now(char *buf, size_t n)
{
	time_t now = time(NULL);
	struct tm tm;

	if (!gmtime_r(&now, &tm) || !strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm))
		snprintf(buf, n, "1970-01-01T00:00:00Z");
}

static void bind_text_or_null(sqlite3_stmt *st, int i, const char *v)
{
	if (v)
		sqlite3_bind_text(st, i, v, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(st, i);
}

static int insert_run(struct mp_store *s, sqlite3_stmt *run_st, sqlite3_stmt *met_st,
                      const struct mp_result_run *r, const char *created)
{
	int64_t id;

	sqlite3_reset(run_st);
	sqlite3_bind_text(run_st, 1, created, -1, SQLITE_STATIC);
	sqlite3_bind_text(run_st, 2, r->pool, -1, SQLITE_STATIC);
	sqlite3_bind_text(run_st, 3, r->backend, -1, SQLITE_STATIC);
	bind_text_or_null(run_st, 4, r->baseline);
	bind_text_or_null(run_st, 5, r->options);
	sqlite3_bind_int64(run_st, 6, r->device);
	sqlite3_bind_text(run_st, 7, PACKAGE_VERSION, -1, SQLITE_STATIC);
	if (sqlite3_step(run_st) != SQLITE_DONE)
		return mp_store_sqlerr(s, "cannot save results in trace");
	id = sqlite3_last_insert_rowid(s->db);
	for (size_t j = 0; j < r->n_metrics; j++) {
		const struct mp_result_metric *m = &r->metrics[j];

		sqlite3_reset(met_st);
		sqlite3_bind_int64(met_st, 1, id);
		sqlite3_bind_text(met_st, 2, m->name, -1, SQLITE_STATIC);
		sqlite3_bind_double(met_st, 3, m->value);
		sqlite3_bind_text(met_st, 4, m->unit, -1, SQLITE_STATIC);
		sqlite3_bind_int(met_st, 5, m->measured ? 1 : 0);
		if (sqlite3_step(met_st) != SQLITE_DONE)
			return mp_store_sqlerr(s, "cannot save results in trace");
	}
	return 0;
}

static int insert_all(struct mp_store *s, const struct mp_result_run *runs, size_t n)
{
	sqlite3_stmt *run_st = NULL, *met_st = NULL;
	char created[32];
	int rc = 0;

	utc_now(created, sizeof(created));
	if (sqlite3_prepare_v2(s->db,
	                       "INSERT INTO replay_runs(created, pool, backend, baseline, options,"
	                       " device, tool_version) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7);",
	                       -1, &run_st, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(s->db,
	                       "INSERT INTO replay_metrics(run, name, value, unit, measured)"
	                       " VALUES(?1, ?2, ?3, ?4, ?5);",
	                       -1, &met_st, NULL) != SQLITE_OK)
		rc = mp_store_sqlerr(s, "cannot save results in trace");
	for (size_t i = 0; rc == 0 && i < n; i++)
		rc = insert_run(s, run_st, met_st, &runs[i], created);
	sqlite3_finalize(run_st);
	sqlite3_finalize(met_st);
	return rc;
}

int mp_results_save(const char *path, const struct mp_result_run *runs, size_t n,
                    struct mp_error *err)
{
	struct mp_store *s;
	int rc;

	if (n == 0)
		return 0;
	if (!runs)
		return mp_err(err, MP_EINVAL, "cannot save results in trace '%s': no runs given",
		              path);
	if ((rc = check_runs(runs, n, path, err)) < 0 || (rc = check_writable(path, err)) < 0 ||
	    (rc = open_rw(path, &s, err)) < 0)
		return rc;
	if (mp_store_exec(s, "BEGIN IMMEDIATE;") < 0) {
		rc = s->err.code;
		goto out;
	}
	rc = insert_all(s, runs, n);
	if (rc == 0 && mp_store_exec(s, "COMMIT;") < 0)
		rc = s->err.code;
	if (rc < 0)
		sqlite3_exec(s->db, "ROLLBACK;", NULL, NULL, NULL);
out:
	if (rc < 0)
		mp_err_copy(err, &s->err);
	mp_store_close(s);
	return rc;
}

/* ---- loading ------------------------------------------------------------ */

static const char *own_text(struct results_owned *o, sqlite3_stmt *st, int col, int *oom)
{
	const unsigned char *t = sqlite3_column_text(st, col);
	char *copy, **grown;

	if (!t)
		return NULL;
	if (o->n_strs == o->cap_strs) {
		size_t cap = o->cap_strs ? 2 * o->cap_strs : 64;

		grown = realloc(o->strs, cap * sizeof(*grown));
		if (!grown) {
			*oom = 1;
			return NULL;
		}
		o->strs = grown;
		o->cap_strs = cap;
	}
	copy = strdup((const char *)t);
	if (!copy) {
		*oom = 1;
		return NULL;
	}
	o->strs[o->n_strs++] = copy;
	return copy;
}

static int load_runs(struct mp_store *s, struct mp_result_set *set, struct results_owned *o)
{
	sqlite3_stmt *st;
	size_t cap = 0, cap_first = 0;
	int rc, oom = 0;

	if (sqlite3_prepare_v2(s->db,
	                       "SELECT id, pool, backend, baseline, options, device"
	                       " FROM replay_runs ORDER BY id;",
	                       -1, &st, NULL) != SQLITE_OK)
		return mp_store_sqlerr(s, "cannot read results in trace");
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct mp_result_run *r;

		if (mp_array_reserve((void **)&set->runs, &cap, set->n_runs + 1, sizeof(*r)) < 0 ||
		    mp_array_reserve((void **)&o->first, &cap_first, set->n_runs + 1,
		                     sizeof(size_t)) < 0) {
			oom = 1;
			break;
		}
		r = &set->runs[set->n_runs++];
		memset(r, 0, sizeof(*r));
		r->id = sqlite3_column_int64(st, 0);
		r->pool = own_text(o, st, 1, &oom);
		r->backend = own_text(o, st, 2, &oom);
		r->baseline = own_text(o, st, 3, &oom);
		r->options = own_text(o, st, 4, &oom);
		r->device = sqlite3_column_type(st, 5) == SQLITE_NULL
		                    ? -1
		                    : (int32_t)sqlite3_column_int64(st, 5);
		if (oom)
			break;
	}
	sqlite3_finalize(st);
	if (oom)
		return mp_err(&s->err, MP_ENOMEM, "out of memory reading results in trace '%s'",
		              s->path);
	return rc == SQLITE_DONE ? 0 : mp_store_sqlerr(s, "cannot read results in trace");
}

/* The index of the run with id, or -1 (runs are in id order). */
static ptrdiff_t find_run(const struct mp_result_set *set, int64_t id)
{
	size_t lo = 0, hi = set->n_runs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (set->runs[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < set->n_runs && set->runs[lo].id == id ? (ptrdiff_t)lo : -1;
}

/* What a metric can be: bytes, nanoseconds, counts and ratios all fit in
 * an int64, and the readers convert some to one. */
static int value_in_range(double v)
{
	return isfinite(v) && v > -9.2e18 && v < 9.2e18;
}

static int load_metrics(struct mp_store *s, struct mp_result_set *set, struct results_owned *o)
{
	sqlite3_stmt *st;
	ptrdiff_t cur = -1;
	int rc, oom = 0;

	if (sqlite3_prepare_v2(s->db,
	                       "SELECT run, name, value, unit, measured FROM replay_metrics"
	                       " ORDER BY run, name;",
	                       -1, &st, NULL) != SQLITE_OK)
		return mp_store_sqlerr(s, "cannot read results in trace");
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		ptrdiff_t i = find_run(set, sqlite3_column_int64(st, 0));
		struct mp_result_metric *m;

		if (i < 0)
			continue; /* a metric of a run that is not there: skipped */
		if (mp_array_reserve((void **)&o->metrics, &o->cap_metrics, o->n_metrics + 1,
		                     sizeof(*m)) < 0) {
			oom = 1;
			break;
		}
		if (i != cur)
			o->first[i] = o->n_metrics;
		cur = i;
		m = &o->metrics[o->n_metrics++];
		m->name = own_text(o, st, 1, &oom);
		m->value = sqlite3_column_double(st, 2);
		if (!oom && !value_in_range(m->value)) {
			sqlite3_finalize(st);
			return mp_err(&s->err, MP_ENOTTRACE,
			              "corrupt trace '%s': replay metric '%s' of run %lld is %g, "
			              "beyond what memprof writes (|value| < 2^63)",
			              s->path, m->name ? m->name : "", (long long)set->runs[i].id,
			              m->value);
		}
		m->unit = own_text(o, st, 3, &oom);
		m->measured = sqlite3_column_int(st, 4) != 0;
		set->runs[i].n_metrics++;
		if (oom)
			break;
	}
	sqlite3_finalize(st);
	if (oom)
		return mp_err(&s->err, MP_ENOMEM, "out of memory reading results in trace '%s'",
		              s->path);
	if (rc != SQLITE_DONE)
		return mp_store_sqlerr(s, "cannot read results in trace");
	for (size_t i = 0; i < set->n_runs; i++)
		set->runs[i].metrics = set->runs[i].n_metrics ? &o->metrics[o->first[i]] : NULL;
	return 0;
}

int mp_results_load(const char *path, struct mp_result_set *out, struct mp_error *err)
{
	struct results_owned *o;
	struct mp_store *s;
	int rc;

	memset(out, 0, sizeof(*out));
	o = calloc(1, sizeof(*o));
	if (!o)
		return mp_err(err, MP_ENOMEM, "out of memory reading results in trace '%s'", path);
	out->owned = o;
	rc = mp_store_open(&s, path, err);
	if (rc < 0) {
		mp_results_free(out);
		return rc;
	}
	rc = load_runs(s, out, o);
	if (rc == 0)
		rc = load_metrics(s, out, o);
	if (rc < 0) {
		mp_err_copy(err, &s->err);
		mp_results_free(out);
	}
	mp_store_close(s);
	return rc;
}

void mp_results_free(struct mp_result_set *set)
{
	struct results_owned *o;

	if (!set)
		return;
	o = set->owned;
	if (o) {
		for (size_t i = 0; i < o->n_strs; i++)
			free(o->strs[i]);
		free(o->strs);
		free(o->metrics);
		free(o->first);
		free(o);
	}
	free(set->runs);
	memset(set, 0, sizeof(*set));
}
