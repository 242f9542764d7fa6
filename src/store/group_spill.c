/*
 * store/group_spill.c - the temporary SQLite database of evicted lifetime
 * groups (group_spill.h): an UPSERT that sums a group's records, and the
 * sums read back in key order at the end.  Owns its connection only; never
 * prints.
 */
#include "store/group_spill.h"
#include "util/error.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct mp_group_spill {
	sqlite3 *db;
	sqlite3_stmt *upsert;
	char error[512];
};

static const char *const schema =
        "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; PRAGMA locking_mode=EXCLUSIVE;"
        "PRAGMA temp_store=FILE;"
        "CREATE TABLE g (device INTEGER NOT NULL, stack_id INTEGER NOT NULL,"
        " size_bytes INTEGER NOT NULL, site INTEGER NOT NULL, count INTEGER NOT NULL,"
        " first_seq INTEGER NOT NULL, shared INTEGER NOT NULL,"
        " PRIMARY KEY (device, stack_id, size_bytes)) WITHOUT ROWID;";

static const char *const upsert_sql =
        "INSERT INTO g VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)"
        " ON CONFLICT (device, stack_id, size_bytes) DO UPDATE SET"
        " count = count + excluded.count, first_seq = min(first_seq, excluded.first_seq),"
        " shared = shared | excluded.shared;";

/* The code for SQLite's last failure, its message kept on sp. */
static int sqlerr(struct mp_group_spill *sp, int rc)
{
	snprintf(sp->error, sizeof(sp->error), "%s",
	         sp->db ? sqlite3_errmsg(sp->db) : sqlite3_errstr(rc));
	if ((rc & 0xff) == SQLITE_FULL)
		return MP_EFULL;
	return (rc & 0xff) == SQLITE_NOMEM ? MP_ENOMEM : MP_EIO;
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
	    (rc = sqlite3_exec(sp->db, schema, NULL, NULL, NULL)) != SQLITE_OK ||
	    (rc = sqlite3_prepare_v3(sp->db, upsert_sql, -1, SQLITE_PREPARE_PERSISTENT, &sp->upsert,
	                             NULL)) != SQLITE_OK)
		return sqlerr(sp, rc);
	return 0;
}

static int cmp_rec(const void *pa, const void *pb)
{
	const struct mp_group_rec *a = pa, *b = pb;

	if (a->device != b->device)
		return a->device < b->device ? -1 : 1;
	if (a->stack_id != b->stack_id)
		return a->stack_id < b->stack_id ? -1 : 1;
	if (a->size_bytes != b->size_bytes)
		return a->size_bytes < b->size_bytes ? -1 : 1;
	return 0;
}

static int put(struct mp_group_spill *sp, const struct mp_group_rec *r)
{
	sqlite3_stmt *st = sp->upsert;
	int rc;

	sqlite3_bind_int64(st, 1, r->device);
	sqlite3_bind_int64(st, 2, r->stack_id);
	sqlite3_bind_int64(st, 3, r->size_bytes);
	sqlite3_bind_int64(st, 4, r->site);
	sqlite3_bind_int64(st, 5, r->count);
	sqlite3_bind_int64(st, 6, r->first_seq);
	sqlite3_bind_int64(st, 7, r->shared != 0);
	rc = sqlite3_step(st);
	sqlite3_reset(st);
	return rc == SQLITE_DONE ? 0 : sqlerr(sp, rc);
}

int mp_group_spill_add(struct mp_group_spill *sp, struct mp_group_rec *recs, size_t n)
{
	size_t i;
	int rc;

	/* in key order, successive rows land on the same pages of the tree */
	qsort(recs, n, sizeof(*recs), cmp_rec);
	if ((rc = sqlite3_exec(sp->db, "BEGIN;", NULL, NULL, NULL)) != SQLITE_OK)
		return sqlerr(sp, rc);
	for (i = 0; i < n; i++)
		if ((rc = put(sp, &recs[i])) < 0) {
			sqlite3_exec(sp->db, "ROLLBACK;", NULL, NULL, NULL);
			return rc;
		}
	if ((rc = sqlite3_exec(sp->db, "COMMIT;", NULL, NULL, NULL)) != SQLITE_OK)
		return sqlerr(sp, rc);
	return 0;
}

int mp_group_spill_foreach(struct mp_group_spill *sp,
                           int (*fn)(void *ctx, const struct mp_group_rec *r), void *ctx)
{
	sqlite3_stmt *st = NULL;
	struct mp_group_rec r;
	int rc;

	/* the primary key's order: a plain scan of the WITHOUT ROWID table */
	rc = sqlite3_prepare_v2(
	        sp->db,
	        "SELECT device, stack_id, size_bytes, site, count, first_seq, shared"
	        " FROM g ORDER BY device, stack_id, size_bytes;",
	        -1, &st, NULL);
	if (rc != SQLITE_OK)
		return sqlerr(sp, rc);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		memset(&r, 0, sizeof(r));
		r.device = (int32_t)sqlite3_column_int64(st, 0);
		r.stack_id = sqlite3_column_int64(st, 1);
		r.size_bytes = sqlite3_column_int64(st, 2);
		r.site = (uint32_t)sqlite3_column_int64(st, 3);
		r.count = sqlite3_column_int64(st, 4);
		r.first_seq = sqlite3_column_int64(st, 5);
		r.shared = (int32_t)sqlite3_column_int64(st, 6);
		if ((rc = fn(ctx, &r)) < 0) {
			sqlite3_finalize(st);
			return rc;
		}
	}
	if (rc != SQLITE_DONE) {
		rc = sqlerr(sp, rc);
		sqlite3_finalize(st);
		return rc;
	}
	sqlite3_finalize(st);
	return 0;
}

const char *mp_group_spill_error(const struct mp_group_spill *sp)
{
	return sp ? sp->error : "";
}

void mp_group_spill_close(struct mp_group_spill *sp)
{
	if (!sp)
		return;
	sqlite3_finalize(sp->upsert);
	sqlite3_close(sp->db);
	free(sp);
}
