/*
 * store/schema.c - the current schema (v3) of the trace database and the migrations that
 * bring older traces to it.  The layout is documented in memprof-trace(5):
 * change both together (version bump, migration step, old fixture, man page).
 */
#include "store/store_internal.h"

#include <stdio.h>

/* Pinned host buffers and where their pages are (NUMA): new in v3. */
#define HOST_TABLES                                                                                \
	"CREATE TABLE host_buffers(id INTEGER PRIMARY KEY,"                                        \
	" process INTEGER NOT NULL REFERENCES processes(id), device INTEGER,"                      \
	" address INTEGER NOT NULL, size INTEGER NOT NULL, alloc_ts_ns INTEGER NOT NULL,"          \
	" free_ts_ns INTEGER, api INTEGER, stack INTEGER, thread INTEGER);"                        \
	"CREATE TABLE host_buffer_nodes(buffer INTEGER NOT NULL REFERENCES host_buffers(id),"      \
	" node INTEGER NOT NULL, bytes INTEGER NOT NULL, pages INTEGER NOT NULL,"                  \
	" PRIMARY KEY(buffer, node)) WITHOUT ROWID;"

/* The replay tables: part of the schema since v1, what the v0 -> v1 step adds. */
#define REPLAY_TABLES                                                                              \
	"CREATE TABLE replay_runs(id INTEGER PRIMARY KEY, created TEXT NOT NULL,"                  \
	" pool TEXT NOT NULL, backend TEXT NOT NULL, baseline TEXT, options TEXT,"                 \
	" device INTEGER, tool_version TEXT);"                                                     \
	"CREATE TABLE replay_metrics(run INTEGER NOT NULL REFERENCES replay_runs(id),"             \
	" name TEXT NOT NULL, value REAL NOT NULL, unit TEXT NOT NULL,"                            \
	" measured INTEGER NOT NULL, PRIMARY KEY(run, name)) WITHOUT ROWID;"

static const char schema_current[] =
        "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;"
        "CREATE TABLE processes(id INTEGER PRIMARY KEY, pid INTEGER NOT NULL DEFAULT 0,"
        " ppid INTEGER, host TEXT, rank INTEGER, local_rank INTEGER, world_size INTEGER,"
        " command TEXT);"
        "CREATE TABLE devices(process INTEGER NOT NULL REFERENCES processes(id),"
        " ordinal INTEGER NOT NULL, name TEXT, uuid TEXT, total_bytes INTEGER,"
        " numa_node INTEGER, PRIMARY KEY(process, ordinal)) WITHOUT ROWID;"
        "CREATE TABLE frames(id INTEGER PRIMARY KEY, name TEXT NOT NULL,"
        " file TEXT NOT NULL DEFAULT '', line INTEGER NOT NULL DEFAULT 0,"
        " UNIQUE(name, file, line));"
        "CREATE TABLE stacks(id INTEGER PRIMARY KEY, parent INTEGER NOT NULL,"
        " frame INTEGER NOT NULL REFERENCES frames(id), UNIQUE(parent, frame));"
        "CREATE TABLE phases(id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);"
        "CREATE TABLE apis(id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);"
        "CREATE TABLE events(seq INTEGER PRIMARY KEY, ts_ns INTEGER NOT NULL,"
        " op INTEGER NOT NULL, alloc_id INTEGER NOT NULL, size INTEGER NOT NULL,"
        " requested INTEGER NOT NULL, address INTEGER NOT NULL, device INTEGER NOT NULL,"
        " stream INTEGER NOT NULL, process INTEGER NOT NULL, phase INTEGER, stack INTEGER,"
        " api INTEGER, device_free INTEGER, thread INTEGER, duration_ns INTEGER);" REPLAY_TABLES
                HOST_TABLES;

/*
 * v0 was the pre-release layout: the same tables without events.device_free
 * and without the replay tables.  Kept whole so that the schema a trace of
 * any version must have can be rebuilt (mp_schema_reference).
 */
static const char schema_v0[] =
        "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;"
        "CREATE TABLE processes(id INTEGER PRIMARY KEY, pid INTEGER NOT NULL DEFAULT 0,"
        " ppid INTEGER, host TEXT, rank INTEGER, local_rank INTEGER, world_size INTEGER,"
        " command TEXT);"
        "CREATE TABLE devices(process INTEGER NOT NULL REFERENCES processes(id),"
        " ordinal INTEGER NOT NULL, name TEXT, uuid TEXT, total_bytes INTEGER,"
        " PRIMARY KEY(process, ordinal)) WITHOUT ROWID;"
        "CREATE TABLE frames(id INTEGER PRIMARY KEY, name TEXT NOT NULL,"
        " file TEXT NOT NULL DEFAULT '', line INTEGER NOT NULL DEFAULT 0,"
        " UNIQUE(name, file, line));"
        "CREATE TABLE stacks(id INTEGER PRIMARY KEY, parent INTEGER NOT NULL,"
        " frame INTEGER NOT NULL REFERENCES frames(id), UNIQUE(parent, frame));"
        "CREATE TABLE phases(id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);"
        "CREATE TABLE apis(id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);"
        "CREATE TABLE events(seq INTEGER PRIMARY KEY, ts_ns INTEGER NOT NULL,"
        " op INTEGER NOT NULL, alloc_id INTEGER NOT NULL, size INTEGER NOT NULL,"
        " requested INTEGER NOT NULL, address INTEGER NOT NULL, device INTEGER NOT NULL,"
        " stream INTEGER NOT NULL, process INTEGER NOT NULL, phase INTEGER, stack INTEGER,"
        " api INTEGER);";

static const char migrate_v0_v1[] =
        "ALTER TABLE events ADD COLUMN device_free INTEGER;" REPLAY_TABLES;

/* v2 added events.thread and operation 11, free_requested. */
static const char migrate_v1_v2[] = "ALTER TABLE events ADD COLUMN thread INTEGER;";

/*
 * v3 added events.duration_ns, the time inside the call that made the event;
 * devices.numa_node, the GPU's nearest host NUMA node; and the pinned host
 * buffers with their pages per node.
 */
static const char migrate_v2_v3[] = "ALTER TABLE events ADD COLUMN duration_ns INTEGER;"
                                    "ALTER TABLE devices ADD COLUMN numa_node INTEGER;" HOST_TABLES;

/* migrations[v] takes a trace from version v to v + 1 */
static const char *const migrations[MP_SCHEMA_VERSION] = {
        migrate_v0_v1,
        migrate_v1_v2,
        migrate_v2_v3,
};

int mp_schema_create(struct mp_store *s)
{
	char sql[64];

	if (mp_store_exec(s, schema_current) < 0)
		return s->err.code;
	snprintf(sql, sizeof(sql), "PRAGMA user_version=%d;", MP_SCHEMA_VERSION);
	if (mp_store_exec(s, sql) < 0)
		return s->err.code;
	return mp_store_exec(s, "INSERT INTO meta VALUES('format','memprof-trace');");
}

int mp_schema_reference(int version, sqlite3 **out)
{
	sqlite3 *db = NULL;
	int v, rc;

	*out = NULL;
	if (version < 0 || version > MP_SCHEMA_VERSION)
		return MP_EINVAL;
	if (sqlite3_open_v2(":memory:", &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL) !=
	    SQLITE_OK) {
		sqlite3_close(db);
		return MP_ENOMEM;
	}
	/* always v0 and the migrations: a created trace must read the same (tested) */
	rc = sqlite3_exec(db, schema_v0, NULL, NULL, NULL);
	for (v = 0; rc == SQLITE_OK && v < version; v++)
		rc = sqlite3_exec(db, migrations[v], NULL, NULL, NULL);
	if (rc != SQLITE_OK) {
		sqlite3_close(db);
		return rc == SQLITE_NOMEM ? MP_ENOMEM : MP_EIO;
	}
	*out = db;
	return 0;
}

int mp_schema_migrate(struct mp_store *s, int from_version)
{
	char sql[64];
	int v;

	if (mp_store_exec(s, "BEGIN IMMEDIATE;") < 0)
		return s->err.code;
	for (v = from_version; v < MP_SCHEMA_VERSION; v++) {
		if (mp_store_exec(s, migrations[v]) < 0)
			goto fail;
	}
	snprintf(sql, sizeof(sql), "PRAGMA user_version=%d;", MP_SCHEMA_VERSION);
	if (mp_store_exec(s, sql) < 0 || mp_store_exec(s, "COMMIT;") < 0)
		goto fail;
	return 0;
fail:
	sqlite3_exec(s->db, "ROLLBACK;", NULL, NULL, NULL);
	return s->err.code;
}
