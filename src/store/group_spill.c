/*
 * store/group_spill.c - the temporary SQLite database of evicted lifetime
 * groups (group_spill.h): each batch sorted, summed by key and stored as a
 * run of fixed-size records in blobs of RUN_CHUNK; FAN_IN runs of one level
 * merged into one of the next (a few runs, each record rewritten about
 * log8(batches) times); read back as one merge of the runs.  Owns its
 * connection only; never prints.
 */
#include "store/group_spill.h"
#include "util/error.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RUN_CHUNK 256           /* records a blob */
#define FAN_IN    8             /* runs of one level merged into one of the next */
#define MAX_RUNS  (FAN_IN * 22) /* FAN_IN - 1 a level at most between adds: 8^22 > 2^63 */

/* A sorted run, no key twice: chunks 0..n_chunks-1 of rows key_of(id, chunk). */
struct run {
	int64_t id, n_chunks;
	int level;
};

struct mp_group_spill {
	sqlite3 *db;
	sqlite3_stmt *ins, *get, *del;
	struct run runs[MAX_RUNS]; /* bottom (oldest) first */
	int n_runs;
	int64_t next_id;
	int failed; /* the first add that failed (journal off: no rollback), else 0 */
	char error[512];
};

/* The next record of a run, read a chunk at a time. */
struct reader {
	const struct run *run;
	int64_t chunk;
	size_t i, n;
	struct mp_group_rec buf[RUN_CHUNK];
};

/* A run being written, a chunk at a time. */
struct writer {
	struct run run;
	size_t n;
	struct mp_group_rec buf[RUN_CHUNK];
};

static const char *const schema =
        "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; PRAGMA locking_mode=EXCLUSIVE;"
        "PRAGMA temp_store=FILE;"
        "CREATE TABLE runs (k INTEGER PRIMARY KEY, data BLOB NOT NULL);";

/* The code for SQLite's last failure, its message kept on sp. */
static int sqlerr(struct mp_group_spill *sp, int rc)
{
	snprintf(sp->error, sizeof(sp->error), "%s",
	         sp->db ? sqlite3_errmsg(sp->db) : sqlite3_errstr(rc));
	if ((rc & 0xff) == SQLITE_FULL)
		return MP_EFULL;
	return (rc & 0xff) == SQLITE_NOMEM ? MP_ENOMEM : MP_EIO;
}

static int prepare(struct mp_group_spill *sp, const char *sql, sqlite3_stmt **st)
{
	int rc = sqlite3_prepare_v3(sp->db, sql, -1, SQLITE_PREPARE_PERSISTENT, st, NULL);

	return rc == SQLITE_OK ? 0 : sqlerr(sp, rc);
}

int mp_group_spill_open(struct mp_group_spill **out, int64_t max_pages)
{
	struct mp_group_spill *sp = calloc(1, sizeof(*sp));
	char sql[64];
	int rc;

	*out = sp;
	if (!sp)
		return MP_ENOMEM;
	/* "": a private temporary database on disk, in memory while it fits the cache */
	rc = sqlite3_open_v2("", &sp->db,
	                     SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
	                     NULL);
	if (rc != SQLITE_OK)
		return sqlerr(sp, rc);
	snprintf(sql, sizeof(sql), "PRAGMA cache_size=-%d;", MP_GROUP_SPILL_CACHE_KIB);
	if ((rc = sqlite3_exec(sp->db, sql, NULL, NULL, NULL)) != SQLITE_OK)
		return sqlerr(sp, rc);
	snprintf(sql, sizeof(sql), "PRAGMA max_page_count=%lld;", (long long)max_pages);
	if ((max_pages > 0 && (rc = sqlite3_exec(sp->db, sql, NULL, NULL, NULL)) != SQLITE_OK) ||
	    (rc = sqlite3_exec(sp->db, schema, NULL, NULL, NULL)) != SQLITE_OK)
		return sqlerr(sp, rc);
	if ((rc = prepare(sp, "INSERT INTO runs (k, data) VALUES (?1, ?2);", &sp->ins)) < 0 ||
	    (rc = prepare(sp, "SELECT data FROM runs WHERE k = ?1;", &sp->get)) < 0 ||
	    (rc = prepare(sp, "DELETE FROM runs WHERE k BETWEEN ?1 AND ?2;", &sp->del)) < 0)
		return rc;
	return 0;
}

static int64_t key_of(int64_t id, int64_t chunk)
{
	return id * ((int64_t)1 << 32) + chunk;
}

/* Sum r into s (same key): counts added, the least first allocation, shared or-ed. */
static void sum_into(struct mp_group_rec *s, const struct mp_group_rec *r)
{
	s->count += r->count;
	if (r->first_seq < s->first_seq)
		s->first_seq = r->first_seq;
	s->shared = s->shared || r->shared;
}

static int flush(struct mp_group_spill *sp, struct writer *w)
{
	sqlite3_stmt *st = sp->ins;
	int rc;

	if (w->n == 0)
		return 0;
	sqlite3_bind_int64(st, 1, key_of(w->run.id, w->run.n_chunks));
	sqlite3_bind_blob(st, 2, w->buf, (int)(w->n * sizeof(w->buf[0])), SQLITE_STATIC);
	rc = sqlite3_step(st);
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	if (rc != SQLITE_DONE)
		return sqlerr(sp, rc);
	w->run.n_chunks++;
	w->n = 0;
	return 0;
}

/* Append r (a key above the last one's) to the run. */
static int put(struct mp_group_spill *sp, struct writer *w, const struct mp_group_rec *r)
{
	int rc;

	if (w->n == RUN_CHUNK && (rc = flush(sp, w)) < 0)
		return rc;
	w->buf[w->n++] = *r;
	return 0;
}

/* Load the reader's next chunk; 0 (n is 0 at the run's end) or an MP_E* code. */
static int load(struct mp_group_spill *sp, struct reader *rd)
{
	sqlite3_stmt *st = sp->get;
	int rc, bytes;

	rd->i = rd->n = 0;
	if (rd->chunk == rd->run->n_chunks)
		return 0;
	sqlite3_bind_int64(st, 1, key_of(rd->run->id, rd->chunk++));
	if ((rc = sqlite3_step(st)) != SQLITE_ROW) {
		rc = rc == SQLITE_DONE ? SQLITE_CORRUPT : rc;
		sqlite3_reset(st);
		return sqlerr(sp, rc);
	}
	bytes = sqlite3_column_bytes(st, 0);
	if (bytes <= 0 || bytes > (int)sizeof(rd->buf) || bytes % sizeof(rd->buf[0])) {
		sqlite3_reset(st);
		snprintf(sp->error, sizeof(sp->error), "a chunk of %d bytes in run %lld", bytes,
		         (long long)rd->run->id);
		return MP_EIO;
	}
	memcpy(rd->buf, sqlite3_column_blob(st, 0), (size_t)bytes);
	rd->n = (size_t)bytes / sizeof(rd->buf[0]);
	sqlite3_reset(st);
	return 0;
}

static int same_key(const struct mp_group_rec *a, const struct mp_group_rec *b)
{
	return a->size_bytes == b->size_bytes && a->stack_id == b->stack_id &&
	       a->device == b->device;
}

static int key_less(const struct mp_group_rec *a, const struct mp_group_rec *b)
{
	if (a->device != b->device)
		return a->device < b->device;
	if (a->stack_id != b->stack_id)
		return a->stack_id < b->stack_id;
	return a->size_bytes < b->size_bytes;
}

/* Step past the head of active reader *i; at its run's end drop it from
 * act (the order kept: the runs' order).  0 or an MP_E* code. */
static int advance(struct mp_group_spill *sp, struct reader **act, int *n_act, int i)
{
	int rc;

	if (++act[i]->i < act[i]->n)
		return 0;
	if ((rc = load(sp, act[i])) < 0 || act[i]->n)
		return rc;
	memmove(&act[i], &act[i + 1], (size_t)(*n_act - i - 1) * sizeof(*act));
	(*n_act)--;
	return 0;
}

#define HEAD(r) (&(r)->buf[(r)->i])

/* The merge of runs [first, last) of the stack, each key's records summed
 * (the site of the oldest kept), handed to fn in key order. */
static int merge(struct mp_group_spill *sp, int first, int last,
                 int (*fn)(void *ctx, const struct mp_group_rec *r), void *ctx)
{
	int k = last - first, n_act = 0, i, min, rc = 0;
	struct reader *rd = malloc((size_t)k * sizeof(*rd));
	struct reader **act = malloc((size_t)k * sizeof(*act));
	struct mp_group_rec sum;

	if (!rd || !act) {
		free(rd);
		free(act);
		return MP_ENOMEM;
	}
	for (i = 0; i < k && rc == 0; i++) {
		rd[i].run = &sp->runs[first + i];
		rd[i].chunk = 0;
		if ((rc = load(sp, &rd[i])) == 0 && rd[i].n)
			act[n_act++] = &rd[i];
	}
	while (rc == 0 && n_act > 0) {
		for (min = 0, i = 1; i < n_act; i++) /* the oldest of the least key */
			if (key_less(HEAD(act[i]), HEAD(act[min])))
				min = i;
		sum = *HEAD(act[min]);
		/* the runs before min hold greater keys: only those after it can tie */
		for (i = n_act - 1; i > min && rc == 0; i--)
			if (same_key(HEAD(act[i]), &sum)) {
				sum_into(&sum, HEAD(act[i]));
				rc = advance(sp, act, &n_act, i);
			}
		if (rc == 0 && (rc = advance(sp, act, &n_act, min)) == 0)
			rc = fn(ctx, &sum);
	}
	free(rd);
	free(act);
	return rc;
}

struct put_ctx {
	struct mp_group_spill *sp;
	struct writer *w;
};

static int put_cb(void *ctx, const struct mp_group_rec *r)
{
	struct put_ctx *p = ctx;

	return put(p->sp, p->w, r);
}

/* Delete the rows of runs [first, n_runs). */
static int drop_runs(struct mp_group_spill *sp, int first)
{
	sqlite3_stmt *st = sp->del;
	int rc;

	sqlite3_bind_int64(st, 1, key_of(sp->runs[first].id, 0));
	sqlite3_bind_int64(st, 2, key_of(sp->runs[sp->n_runs - 1].id + 1, 0) - 1);
	rc = sqlite3_step(st);
	sqlite3_reset(st);
	return rc == SQLITE_DONE ? 0 : sqlerr(sp, rc);
}

/* While the FAN_IN top runs are of one level, merge them into one of the next. */
static int cascade(struct mp_group_spill *sp, struct writer *w)
{
	struct put_ctx p = {sp, w};
	int rc, top;

	while (sp->n_runs >= FAN_IN &&
	       sp->runs[sp->n_runs - FAN_IN].level == sp->runs[sp->n_runs - 1].level) {
		top = sp->n_runs - FAN_IN;
		memset(&w->run, 0, sizeof(w->run));
		w->run.id = sp->next_id++;
		w->run.level = sp->runs[top].level + 1;
		w->n = 0;
		if ((rc = merge(sp, top, sp->n_runs, put_cb, &p)) < 0 || (rc = flush(sp, w)) < 0 ||
		    (rc = drop_runs(sp, top)) < 0)
			return rc;
		sp->runs[top] = w->run;
		sp->n_runs = top + 1;
	}
	return 0;
}

static void swap_rec(struct mp_group_rec *a, struct mp_group_rec *b)
{
	struct mp_group_rec t = *a;

	*a = *b;
	*b = t;
}

/* Heapsort of v[0..n): the fallback when quicksort's partitions go bad. */
static void heap_sort(struct mp_group_rec *v, size_t n)
{
	size_t start = n / 2, end = n, root, child;

	while (end > 1) {
		if (start > 0)
			start--;
		else
			swap_rec(&v[0], &v[--end]);
		for (root = start; (child = 2 * root + 1) < end; root = child) {
			if (child + 1 < end && key_less(&v[child], &v[child + 1]))
				child++;
			if (!key_less(&v[root], &v[child]))
				break;
			swap_rec(&v[root], &v[child]);
		}
	}
}

/* Sort v[0..n) by key in place: quicksort (median of three, the smaller
 * side first), insertion sort on short ranges, heapsort past depth. */
static void sort_recs(struct mp_group_rec *v, size_t n, int depth)
{
	size_t i, j, mid;
	struct mp_group_rec pivot;

	while (n > 16) {
		if (depth-- == 0) {
			heap_sort(v, n);
			return;
		}
		mid = n / 2;
		if (key_less(&v[mid], &v[0]))
			swap_rec(&v[mid], &v[0]);
		if (key_less(&v[n - 1], &v[mid])) {
			swap_rec(&v[n - 1], &v[mid]);
			if (key_less(&v[mid], &v[0]))
				swap_rec(&v[mid], &v[0]);
		}
		pivot = v[mid];
		for (i = 0, j = n - 1;;) { /* Hoare: v[0] <= pivot <= v[n - 1] stop the scans */
			while (key_less(&v[i], &pivot))
				i++;
			while (key_less(&pivot, &v[j]))
				j--;
			if (i >= j)
				break;
			swap_rec(&v[i++], &v[j--]);
		}
		/* v[0..j] <= pivot <= v[j+1..n) */
		if (j + 1 < n - j - 1) {
			sort_recs(v, j + 1, depth);
			v += j + 1;
			n -= j + 1;
		} else {
			sort_recs(v + j + 1, n - j - 1, depth);
			n = j + 1;
		}
	}
	for (i = 1; i < n; i++)
		for (j = i; j > 0 && key_less(&v[j], &v[j - 1]); j--)
			swap_rec(&v[j], &v[j - 1]);
}

/* Sort recs by key and sum the records of one key into the first: returns
 * how many remain. */
static size_t sort_and_sum(struct mp_group_rec *recs, size_t n)
{
	size_t i, w = 0;

	if (n == 0) /* recs may be NULL */
		return 0;
	sort_recs(recs, n, 2 * 64);
	for (i = 0; i < n; i++) {
		if (w > 0 && same_key(&recs[w - 1], &recs[i])) {
			sum_into(&recs[w - 1], &recs[i]);
			continue;
		}
		recs[w] = recs[i];
		recs[w++].shared = recs[i].shared != 0;
	}
	return w;
}

/* Write the batch as a new run of level 0, then cascade. */
static int add_run(struct mp_group_spill *sp, struct writer *w, const struct mp_group_rec *recs,
                   size_t n)
{
	size_t i;
	int rc;

	if (sp->next_id >= INT32_MAX) {
		snprintf(sp->error, sizeof(sp->error), "too many runs");
		return MP_EIO;
	}
	memset(&w->run, 0, sizeof(w->run));
	w->run.id = sp->next_id++;
	w->n = 0;
	for (i = 0; i < n; i++)
		if ((rc = put(sp, w, &recs[i])) < 0)
			return rc;
	if ((rc = flush(sp, w)) < 0)
		return rc;
	sp->runs[sp->n_runs++] = w->run;
	return cascade(sp, w);
}

int mp_group_spill_add(struct mp_group_spill *sp, struct mp_group_rec *recs, size_t n)
{
	struct writer *w;
	int rc;

	if (sp->failed)
		return sp->failed;
	n = sort_and_sum(recs, n);
	if (n == 0)
		return 0;
	if (!(w = malloc(sizeof(*w))))
		return MP_ENOMEM;
	if ((rc = sqlite3_exec(sp->db, "BEGIN;", NULL, NULL, NULL)) != SQLITE_OK)
		rc = sqlerr(sp, rc);
	else if ((rc = add_run(sp, w, recs, n)) == 0 &&
	         (rc = sqlite3_exec(sp->db, "COMMIT;", NULL, NULL, NULL)) != SQLITE_OK)
		rc = sqlerr(sp, rc);
	if (rc < 0) { /* the rows may be half written: the store is done */
		sqlite3_exec(sp->db, "ROLLBACK;", NULL, NULL, NULL);
		sp->failed = rc;
	}
	free(w);
	return rc;
}

int mp_group_spill_foreach(struct mp_group_spill *sp,
                           int (*fn)(void *ctx, const struct mp_group_rec *r), void *ctx)
{
	if (sp->failed)
		return sp->failed;
	return sp->n_runs ? merge(sp, 0, sp->n_runs, fn, ctx) : 0;
}

const char *mp_group_spill_error(const struct mp_group_spill *sp)
{
	return sp ? sp->error : "";
}

void mp_group_spill_close(struct mp_group_spill *sp)
{
	if (!sp)
		return;
	sqlite3_finalize(sp->ins);
	sqlite3_finalize(sp->get);
	sqlite3_finalize(sp->del);
	sqlite3_close(sp->db);
	free(sp);
}
