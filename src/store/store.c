/*
 * store/store.c - opening, creating, committing and closing trace databases,
 * and the small queries on metadata, processes and devices.  Creation writes
 * to a temporary file that only mp_store_commit renames into place.
 */
#include "store/store_internal.h"
#include "util/temp_name.h"
#include "util/cleanup.h"
#include "util/outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int mp_store_sqlerr(struct mp_store *s, const char *what)
{
	int rc = sqlite3_errcode(s->db), sys = sqlite3_system_errno(s->db);
	int ext = sqlite3_extended_errcode(s->db), code = MP_EIO;

	if (rc == SQLITE_FULL || sys == ENOSPC || sys == EFBIG || sys == EDQUOT)
		code = MP_EFULL;
	if (rc == SQLITE_BUSY || rc == SQLITE_LOCKED)
		return mp_err(&s->err, MP_EIO,
		              "%s '%s': another process is writing it (locked for more than %d s)",
		              what, s->path, MP_STORE_BUSY_MS / 1000);
	if (!sys && (ext == SQLITE_IOERR_WRITE || ext == SQLITE_IOERR_FSYNC ||
	             ext == SQLITE_IOERR_TRUNCATE))
		return mp_err(&s->err, MP_EFULL,
		              "%s '%s': a write failed (is the disk full, or the file over a size "
		              "limit?)",
		              what, s->path);
	else if (rc == SQLITE_NOMEM)
		code = MP_ENOMEM;
	else if (rc == SQLITE_NOTADB || rc == SQLITE_CORRUPT)
		code = MP_ENOTTRACE;
	if (sys && (rc & 0xff) != SQLITE_CONSTRAINT)
		return mp_err(&s->err, code, "%s '%s': %s (%s)", what, s->path,
		              sqlite3_errmsg(s->db), strerror(sys));
	return mp_err(&s->err, code, "%s '%s': %s", what, s->path, sqlite3_errmsg(s->db));
}

int mp_store_exec(struct mp_store *s, const char *sql)
{
	if (sqlite3_exec(s->db, sql, NULL, NULL, NULL) != SQLITE_OK)
		return mp_store_sqlerr(s, "cannot write trace");
	return 0;
}

static struct mp_store *store_new(const char *path)
{
	struct mp_store *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->cleanup_slot = -1;
	s->path = strdup(path);
	if (!s->path) {
		free(s);
		return NULL;
	}
	return s;
}

static void store_free(struct mp_store *s)
{
	mp_cleanup_forget(s->cleanup_slot);
	if (s->db)
		sqlite3_close(s->db);
	free(s->path);
	free(s->temp_path);
	free(s);
}

static int query_int(struct mp_store *s, const char *sql, int64_t *out)
{
	sqlite3_stmt *st;
	int rc;

	if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK)
		return MP_EIO;
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		*out = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return rc == SQLITE_ROW ? 0 : MP_EIO;
}

/* Is this a memprof trace?  Fills s->err when not.  Runs after
 * mp_schema_check_objects: no view can stand in for the meta table. */
static int check_identity(struct mp_store *s)
{
	sqlite3_stmt *st;
	int rc, is_trace = 0;

	if (sqlite3_prepare_v2(s->db,
	                       "SELECT value = 'memprof-trace' FROM meta WHERE key = 'format';", -1,
	                       &st, NULL) != SQLITE_OK) {
		if (sqlite3_errcode(s->db) != SQLITE_ERROR) /* locked, unreadable: not "no meta" */
			return mp_store_sqlerr(s, "cannot read trace");
		return mp_err(&s->err, MP_ENOTTRACE,
		              "not a memprof trace '%s': a SQLite database without memprof's "
		              "meta table",
		              s->path);
	}
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		is_trace = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return mp_store_sqlerr(s, "cannot read trace");
	if (!is_trace)
		return mp_err(&s->err, MP_ENOTTRACE,
		              "not a memprof trace '%s': its meta table does not say "
		              "format=memprof-trace",
		              s->path);
	return 0;
}

/* A trace is untrusted input: no SQL of the file's own runs (no triggers,
 * no views, no functions from its schema), values are bounded, and a
 * trace another process is writing is waited for, a bounded time. */
static void harden(sqlite3 *db)
{
	sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, (int *)NULL);
	sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_TRIGGER, 0, (int *)NULL);
	sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_VIEW, 0, (int *)NULL);
	sqlite3_db_config(db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, (int *)NULL);
	sqlite3_limit(db, SQLITE_LIMIT_LENGTH, MP_STORE_MAX_VALUE_BYTES);
	sqlite3_busy_timeout(db, MP_STORE_BUSY_MS);
}

int mp_store_reopen(struct mp_store *s, int flags)
{
	if (s->db)
		sqlite3_close(s->db);
	s->db = NULL;
	/* a store handle is used by one thread: no SQLite mutexes */
	if (sqlite3_open_v2(s->path, &s->db, flags | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK)
		return mp_store_sqlerr(s, "cannot open trace");
	sqlite3_extended_result_codes(s->db, 0);
	harden(s->db);
	return 0;
}

/* A trace this run creates: its own file, written fast (no journal), so
 * not in defensive mode, which refuses journal_mode=OFF. */
static int open_created(struct mp_store *s)
{
	if (sqlite3_open_v2(s->path, &s->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL) !=
	    SQLITE_OK)
		return mp_store_sqlerr(s, "cannot open trace");
	sqlite3_extended_result_codes(s->db, 0);
	return 0;
}

/*
 * The last write to the trace was interrupted (a process killed while
 * saving left a hot journal): a read-only connection cannot roll it back,
 * so roll it back through a read-write one, then read as before.
 */
static int recover_journal(struct mp_store *s)
{
	char *dir = strdup(s->path);
	int writable = dir && access(s->path, W_OK) == 0 && access(dirname(dir), W_OK) == 0;
	sqlite3_stmt *st;
	int rc;

	free(dir);
	if (!writable)
		return mp_err(
		        &s->err, MP_EIO,
		        "cannot read trace '%s': its last write was interrupted (a journal "
		        "'%s-journal' is left), and rolling it back needs write access to the "
		        "file and its directory",
		        s->path, s->path);
	if (mp_store_reopen(s, SQLITE_OPEN_READWRITE) < 0)
		return s->err.code;
	rc = sqlite3_prepare_v2(s->db, "SELECT count(*) FROM sqlite_master;", -1, &st, NULL);
	if (rc == SQLITE_OK) {
		rc = sqlite3_step(st);
		sqlite3_finalize(st);
	}
	if (rc != SQLITE_ROW)
		return mp_store_sqlerr(s, "cannot roll back the interrupted write to trace");
	s->rolled_back = 1;
	return mp_store_reopen(s, SQLITE_OPEN_READONLY);
}

/* What a file that is not a trace looks like, from its first bytes (for the message), or NULL. */
static const char *looks_like(const char *path)
{
	unsigned char b[16] = {0};
	FILE *f = fopen(path, "rb");
	size_t n = f ? fread(b, 1, sizeof(b), f) : 0;

	if (f)
		fclose(f);
	if (n >= 2 && b[0] == 0x80 && b[1] >= 2 && b[1] <= 5)
		return "a PyTorch snapshot (a pickle)";
	if (n >= 6 && memcmp(b, "ts_ns,", 6) == 0)
		return "a memprof CSV";
	if (n >= 3 && memcmp(b, "id,", 3) == 0)
		return "a MiniMalloc CSV";
	if (n >= 7 && memcmp(b, "Thread,", 7) == 0)
		return "an RMM log";
	if (n >= 7 && memcmp(b, "MPSPOOL", 7) == 0)
		return "a spool of memprof record";
	return NULL;
}

/* The first read of a trace: where SQLite finds a file that is not a
 * database, a lock held too long or an interrupted write. */
static int first_read(struct mp_store *s, int64_t *version)
{
	if (query_int(s, "PRAGMA user_version;", version) == 0)
		return 0;
	if (sqlite3_extended_errcode(s->db) == SQLITE_READONLY_ROLLBACK) {
		if (recover_journal(s) < 0)
			return s->err.code;
		if (query_int(s, "PRAGMA user_version;", version) == 0)
			return 0;
	}
	if (sqlite3_errcode(s->db) == SQLITE_NOTADB && looks_like(s->path))
		return mp_err(
		        &s->err, MP_ENOTTRACE,
		        "not a memprof trace '%s': it looks like %s; 'memprof import %s' reads "
		        "it into a trace",
		        s->path, looks_like(s->path), s->path);
	if (sqlite3_errcode(s->db) == SQLITE_NOTADB)
		return mp_err(&s->err, MP_ENOTTRACE,
		              "not a memprof trace '%s': not a SQLite database", s->path);
	return mp_store_sqlerr(s, "cannot read trace");
}

int mp_store_open(struct mp_store **out, const char *path, struct mp_error *err)
{
	struct mp_store *s;
	struct stat st;
	int64_t version = 0;

	*out = NULL;
	if (stat(path, &st) < 0)
		return mp_err(err, MP_EIO, "cannot open trace '%s': %s", path, strerror(errno));
	if (S_ISDIR(st.st_mode))
		return mp_err(err, MP_EIO, "cannot open trace '%s': is a directory", path);
	if (S_ISREG(st.st_mode) && st.st_size == 0) /* SQLite would take it for an empty database */
		return mp_err(err, MP_ENOTTRACE, "not a memprof trace '%s': the file is empty",
		              path);
	s = store_new(path);
	if (!s)
		return mp_err(err, MP_ENOMEM, "out of memory opening '%s'", path);
	if (mp_store_reopen(s, SQLITE_OPEN_READONLY) < 0 || first_read(s, &version) < 0 ||
	    mp_schema_check_objects(s) < 0 || check_identity(s) < 0)
		goto fail;
	s->opened_version = (int)version;
	if (version < 0) {
		mp_err(&s->err, MP_ENOTTRACE,
		       "corrupt trace '%s': schema version %lld is not one memprof ever wrote",
		       path, (long long)version);
		goto fail;
	}
	if (version > MP_SCHEMA_VERSION) {
		mp_err(&s->err, MP_ENEWER,
		       "trace '%s' has schema v%lld, this memprof reads up to v%d: upgrade memprof",
		       path, (long long)version, MP_SCHEMA_VERSION);
		goto fail;
	}
	if (mp_schema_check(s, (int)version) < 0)
		goto fail;
	if (version < MP_SCHEMA_VERSION) {
		if (mp_store_reopen(s, SQLITE_OPEN_READWRITE) < 0 ||
		    mp_schema_migrate(s, (int)version) < 0) {
			char cause[sizeof(s->err.msg)];

			snprintf(cause, sizeof(cause), "%s", s->err.msg);
			mp_err(&s->err, s->err.code,
			       "cannot migrate trace '%s' from schema v%lld to v%d: %s", path,
			       (long long)version, MP_SCHEMA_VERSION, cause);
			goto fail;
		}
	}
	*out = s;
	return 0;
fail:
	mp_err_copy(err, &s->err);
	store_free(s);
	return err ? err->code : MP_EIO;
}

static const char fast_create_pragmas[] = "PRAGMA page_size=65536;"
                                          "PRAGMA journal_mode=OFF;"
                                          "PRAGMA synchronous=OFF;"
                                          "PRAGMA locking_mode=EXCLUSIVE;"
                                          "PRAGMA cache_size=-8192;";

int mp_store_create(struct mp_store **out, const char *path, int overwrite, struct mp_error *err)
{
	struct mp_store *s;
	int fd;

	*out = NULL;
	if (!overwrite && access(path, F_OK) == 0)
		return mp_err(err, MP_EEXIST, "output exists '%s': use --force to replace it",
		              path);
	s = store_new(path);
	(void)mp_temp_sweep(path); /* what a memprof killed while writing path left */
	if (!s || !(s->temp_path = mp_temp_template(path))) {
		if (s)
			s->temp_path = NULL;
		if (s)
			store_free(s);
		return mp_err(err, MP_ENOMEM, "out of memory creating '%s'", path);
	}
	fd = mp_cleanup_mkstemp(s->temp_path, &s->cleanup_slot);
	if (fd < 0) {
		mp_err(err, errno == ENOSPC ? MP_EFULL : MP_EIO, "cannot create trace '%s': %s",
		       path, strerror(errno));
		store_free(s);
		return err ? err->code : MP_EIO;
	}
	mp_file_default_mode(fd);
	close(fd);
	free(s->path);
	s->path = s->temp_path; /* SQLite opens the temporary file */
	s->temp_path = strdup(s->path);
	if (!s->temp_path || open_created(s) < 0 || mp_store_exec(s, fast_create_pragmas) < 0 ||
	    mp_schema_create(s) < 0) {
		mp_err_copy(err, &s->err);
		unlink(s->path);
		store_free(s);
		return err ? err->code : MP_EIO;
	}
	free(s->path);
	s->path = strdup(path);
	s->opened_version = MP_SCHEMA_VERSION;
	s->overwrite = overwrite;
	if (!s->path) {
		unlink(s->temp_path);
		store_free(s);
		return mp_err(err, MP_ENOMEM, "out of memory creating '%s'", path);
	}
	*out = s;
	return 0;
}

static int fsync_path(const char *path, int flags)
{
	int fd = open(path, flags), rc;

	if (fd < 0)
		return -1;
	rc = fsync(fd);
	close(fd);
	return rc;
}

int mp_store_commit(struct mp_store *s, struct mp_error *err)
{
	char *dir_copy;
	int rc = 0;

	if (!s->temp_path)
		return mp_err(err, MP_EINVAL, "trace '%s' was not created by this run", s->path);
	if (sqlite3_close(s->db) != SQLITE_OK) {
		rc = mp_store_sqlerr(s, "cannot finish trace");
		goto fail;
	}
	s->db = NULL;
	if (fsync_path(s->temp_path, O_RDONLY) < 0) {
		rc = mp_err(&s->err, errno == ENOSPC ? MP_EFULL : MP_EIO,
		            "cannot flush trace '%s': %s", s->path, strerror(errno));
		goto fail;
	}
	if (s->overwrite) {
		if (rename(s->temp_path, s->path) < 0) {
			rc = mp_err(&s->err, MP_EIO, "cannot rename '%s' to '%s': %s", s->temp_path,
			            s->path, strerror(errno));
			goto fail;
		}
	} else if (renameat2(AT_FDCWD, s->temp_path, AT_FDCWD, s->path, RENAME_NOREPLACE) < 0) {
		if (errno == EEXIST) {
			rc = mp_err(&s->err, MP_EEXIST,
			            "output exists '%s': it appeared while writing; use --force "
			            "to replace it",
			            s->path);
			goto fail;
		}
		if (errno != EINVAL && errno != ENOSYS) {
			rc = mp_err(&s->err, MP_EIO, "cannot rename '%s' to '%s': %s", s->temp_path,
			            s->path, strerror(errno));
			goto fail;
		}
		if (rename(s->temp_path, s->path) < 0) { /* no RENAME_NOREPLACE here */
			rc = mp_err(&s->err, MP_EIO, "cannot rename '%s' to '%s': %s", s->temp_path,
			            s->path, strerror(errno));
			goto fail;
		}
	}
	dir_copy = strdup(s->path);
	if (dir_copy)
		fsync_path(dirname(dir_copy), O_RDONLY | O_DIRECTORY);
	free(dir_copy);
	free(s->temp_path);
	s->temp_path = NULL;
	store_free(s);
	return 0;
fail:
	mp_err_copy(err, &s->err);
	mp_store_close(s);
	return rc;
}

void mp_store_close(struct mp_store *s)
{
	if (!s)
		return;
	if (s->db) {
		sqlite3_close(s->db);
		s->db = NULL;
	}
	if (s->temp_path)
		unlink(s->temp_path);
	store_free(s);
}

int mp_store_rolled_back(const struct mp_store *s)
{
	return s->rolled_back;
}

const char *mp_store_errmsg(const struct mp_store *s)
{
	return s->err.msg;
}

const struct mp_error *mp_store_error(const struct mp_store *s)
{
	return &s->err;
}

const char *mp_store_path(const struct mp_store *s)
{
	return s->path;
}

int mp_store_opened_version(const struct mp_store *s)
{
	return s->opened_version;
}

const char *mp_store_temp_path(const struct mp_store *s)
{
	return s->temp_path;
}

int mp_store_set_meta(struct mp_store *s, const char *key, const char *value)
{
	sqlite3_stmt *st;
	int rc;

	if (sqlite3_prepare_v2(s->db, "INSERT OR REPLACE INTO meta VALUES(?1, ?2);", -1, &st,
	                       NULL) != SQLITE_OK)
		return mp_store_sqlerr(s, "cannot write trace");
	sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, value, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : mp_store_sqlerr(s, "cannot write trace");
}

int mp_store_add_meta(struct mp_store *s, const char *key, int64_t delta)
{
	char *had = mp_store_get_meta(s, key), buf[24];
	long long sum = (had ? strtoll(had, NULL, 10) : 0) + delta;
	int absent = had == NULL;

	free(had);
	snprintf(buf, sizeof(buf), "%lld", sum);
	return delta || absent ? mp_store_set_meta(s, key, buf) : 0;
}

static char *dup_column(sqlite3_stmt *st, int col)
{
	const unsigned char *t = sqlite3_column_text(st, col);

	return t ? strdup((const char *)t) : NULL;
}

char *mp_store_get_meta(struct mp_store *s, const char *key)
{
	sqlite3_stmt *st;
	char *v = NULL;

	if (sqlite3_prepare_v2(s->db, "SELECT value FROM meta WHERE key = ?1;", -1, &st, NULL) !=
	    SQLITE_OK)
		return NULL;
	sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
	if (sqlite3_step(st) == SQLITE_ROW)
		v = dup_column(st, 0);
	sqlite3_finalize(st);
	return v;
}

int mp_store_each_meta(struct mp_store *s, int (*fn)(void *ctx, const char *k, const char *v),
                       void *ctx)
{
	sqlite3_stmt *st;
	int rc, ret = 0;

	if (sqlite3_prepare_v2(s->db, "SELECT key, value FROM meta ORDER BY key;", -1, &st, NULL) !=
	    SQLITE_OK)
		return mp_store_sqlerr(s, "cannot read trace");
	while ((rc = sqlite3_step(st)) == SQLITE_ROW && ret == 0)
		ret = fn(ctx, (const char *)sqlite3_column_text(st, 0),
		         (const char *)sqlite3_column_text(st, 1));
	sqlite3_finalize(st);
	if (ret == 0 && rc != SQLITE_DONE && rc != SQLITE_ROW)
		return mp_store_sqlerr(s, "cannot read trace");
	return ret;
}

int mp_store_count_events(struct mp_store *s, int64_t *n)
{
	if (query_int(s, "SELECT count(*) FROM events;", n) < 0)
		return mp_store_sqlerr(s, "cannot read trace");
	return 0;
}

int mp_store_ts_range(struct mp_store *s, int64_t *first_ns, int64_t *last_ns)
{
	*first_ns = *last_ns = 0;
	if (query_int(s, "SELECT coalesce(min(ts_ns), 0) FROM events;", first_ns) < 0 ||
	    query_int(s, "SELECT coalesce(max(ts_ns), 0) FROM events;", last_ns) < 0)
		return mp_store_sqlerr(s, "cannot read trace");
	return 0;
}

int mp_store_has_durations(struct mp_store *s, int *yes)
{
	int64_t n = 0;

	if (query_int(s, "SELECT EXISTS(SELECT 1 FROM events WHERE duration_ns IS NOT NULL);", &n) <
	    0)
		return mp_store_sqlerr(s, "cannot read trace");
	*yes = n != 0;
	return 0;
}

int mp_store_count_replay_runs(struct mp_store *s, int64_t *n)
{
	if (query_int(s, "SELECT count(*) FROM replay_runs;", n) < 0)
		return mp_store_sqlerr(s, "cannot read trace");
	return 0;
}

/*
 * Renumber events in timestamp order, ties kept in their written order: the
 * new events are appended above the old range, the old rows deleted, and
 * the new ones moved down, all in one transaction.
 */
int mp_store_sort_events(struct mp_store *s)
{
	static const char sql[] =
	        "BEGIN;"
	        "CREATE TEMP TABLE sort_base AS SELECT coalesce(max(seq), 0) AS n FROM events;"
	        "INSERT INTO events SELECT (SELECT n FROM sort_base) +"
	        " row_number() OVER (ORDER BY ts_ns, seq), ts_ns, op, alloc_id, size, requested,"
	        " address, device, stream, process, phase, stack, api, device_free, thread, "
	        "duration_ns "
	        "FROM "
	        "events;"
	        "DELETE FROM events WHERE seq <= (SELECT n FROM sort_base);"
	        "UPDATE events SET seq = seq - (SELECT n FROM sort_base);"
	        "DROP TABLE sort_base;"
	        "COMMIT;";

	if (mp_store_exec(s, sql) < 0) {
		sqlite3_exec(s->db, "ROLLBACK;", NULL, NULL, NULL);
		return s->err.code;
	}
	return 0;
}

static int64_t column_or(sqlite3_stmt *st, int col, int64_t dflt)
{
	return sqlite3_column_type(st, col) == SQLITE_NULL ? dflt : sqlite3_column_int64(st, col);
}

int mp_store_processes(struct mp_store *s, struct memprof_process **out, size_t *n)
{
	sqlite3_stmt *st;
	struct memprof_process *p = NULL, *q;
	size_t cap = 0;
	int rc;

	*out = NULL;
	*n = 0;
	if (sqlite3_prepare_v2(s->db,
	                       "SELECT id, pid, ppid, host, rank, local_rank, world_size, command "
	                       "FROM processes ORDER BY id;",
	                       -1, &st, NULL) != SQLITE_OK)
		return mp_store_sqlerr(s, "cannot read trace");
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (*n == cap) {
			cap = cap ? cap * 2 : 8;
			q = realloc(p, cap * sizeof(*p));
			if (!q) {
				rc = SQLITE_NOMEM;
				break;
			}
			p = q;
		}
		q = &p[(*n)++];
		q->id = sqlite3_column_int64(st, 0);
		q->pid = sqlite3_column_int64(st, 1);
		q->ppid = column_or(st, 2, 0);
		q->host = dup_column(st, 3);
		q->rank = column_or(st, 4, -1);
		q->local_rank = column_or(st, 5, -1);
		q->world_size = column_or(st, 6, -1);
		q->command = dup_column(st, 7);
	}
	sqlite3_finalize(st);
	*out = p;
	if (rc != SQLITE_DONE) {
		mp_store_free_processes(p, *n);
		*out = NULL;
		*n = 0;
		return rc == SQLITE_NOMEM ? mp_err(&s->err, MP_ENOMEM, "out of memory")
		                          : mp_store_sqlerr(s, "cannot read trace");
	}
	return 0;
}

void mp_store_free_processes(struct memprof_process *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free((char *)p[i].host);
		free((char *)p[i].command);
	}
	free(p);
}

int mp_store_devices(struct mp_store *s, struct memprof_device **out, size_t *n)
{
	sqlite3_stmt *st;
	struct memprof_device *d = NULL, *q;
	size_t cap = 0;
	int rc;

	*out = NULL;
	*n = 0;
	if (sqlite3_prepare_v2(s->db,
	                       "SELECT process, ordinal, name, uuid, total_bytes FROM devices "
	                       "ORDER BY process, ordinal;",
	                       -1, &st, NULL) != SQLITE_OK)
		return mp_store_sqlerr(s, "cannot read trace");
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (*n == cap) {
			cap = cap ? cap * 2 : 8;
			q = realloc(d, cap * sizeof(*d));
			if (!q) {
				rc = SQLITE_NOMEM;
				break;
			}
			d = q;
		}
		q = &d[(*n)++];
		q->process_id = sqlite3_column_int64(st, 0);
		q->ordinal = (int32_t)sqlite3_column_int64(st, 1);
		q->name = dup_column(st, 2);
		q->uuid = dup_column(st, 3);
		q->total_bytes = column_or(st, 4, 0);
	}
	sqlite3_finalize(st);
	*out = d;
	if (rc != SQLITE_DONE) {
		mp_store_free_devices(d, *n);
		*out = NULL;
		*n = 0;
		return rc == SQLITE_NOMEM ? mp_err(&s->err, MP_ENOMEM, "out of memory")
		                          : mp_store_sqlerr(s, "cannot read trace");
	}
	return 0;
}

void mp_store_free_devices(struct memprof_device *d, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free((char *)d[i].name);
		free((char *)d[i].uuid);
	}
	free(d);
}

int mp_store_event_devices(struct mp_store *s, int32_t *out, size_t cap, size_t *n)
{
	sqlite3_stmt *st;
	int rc;

	*n = 0;
	if (sqlite3_prepare_v2(s->db, "SELECT DISTINCT device FROM events ORDER BY device;", -1,
	                       &st, NULL) != SQLITE_OK)
		return mp_store_sqlerr(s, "cannot read trace");
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (*n < cap)
			out[*n] = (int32_t)sqlite3_column_int64(st, 0);
		(*n)++;
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : mp_store_sqlerr(s, "cannot read trace");
}
