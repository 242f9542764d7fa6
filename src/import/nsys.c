/*
 * import/nsys.c - the importer of Nsight Systems SQLite exports ('nsys export
 * --type sqlite' of a report recorded with --cuda-memory-usage=true): finds
 * the export's tables, columns and enums through store/foreign.h, reads
 * CUDA_GPU_MEMORY_USAGE_EVENTS in time order with each row's runtime API
 * call, checks every value and hands GPU rows to nsys_events.c.
 */
#include "import/nsys.h"
#include "store/foreign.h"
#include "util/limits.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#define EVENTS        "CUDA_GPU_MEMORY_USAGE_EVENTS"
#define RUNTIME       "CUPTI_ACTIVITY_KIND_RUNTIME"
#define MAX_ENUM_ROWS 256
#define MAX_BYTES     MP_MAX_SIZE_BYTES /* 64 PiB: more is not a real size */

static const char sqlite_magic[16] = "SQLite format 3"; /* and its NUL */

struct known {
	const char *name, *label, *api;
	enum mp_nsys_class cls;
};

/* Nsight's own numbering (not CUPTI's), used when the export has no enum table. */
static const struct known kinds[] = {
        {"CUDA_MEMOPR_MEMORY_KIND_PAGEABLE", "Pageable", "nsys:pageable", MP_NSYS_HOST},
        {"CUDA_MEMOPR_MEMORY_KIND_PINNED", "Pinned", "nsys:pinned", MP_NSYS_HOST},
        {"CUDA_MEMOPR_MEMORY_KIND_DEVICE", "Device", "nsys:device", MP_NSYS_GPU},
        {"CUDA_MEMOPR_MEMORY_KIND_ARRAY", "Array", "nsys:array", MP_NSYS_GPU},
        {"CUDA_MEMOPR_MEMORY_KIND_MANAGED", "Managed", "nsys:managed", MP_NSYS_GPU},
        {"CUDA_MEMOPR_MEMORY_KIND_DEVICE_STATIC", "Device Static", "nsys:device_static",
         MP_NSYS_GPU},
        {"CUDA_MEMOPR_MEMORY_KIND_MANAGED_STATIC", "Managed Static", "nsys:managed_static",
         MP_NSYS_GPU},
        {"CUDA_MEMOPR_MEMORY_KIND_UNKNOWN", "Unknown", "nsys:unknown", MP_NSYS_UNKNOWN},
};

static const struct known opers[] = {
        {"CUDA_DEV_MEM_EVENT_OPR_ALLOCATION", "Allocation", NULL, MP_NSYS_GPU},
        {"CUDA_DEV_MEM_EVENT_OPR_DEALLOCATION", "Deallocation", NULL, MP_NSYS_GPU},
};
#define N_KINDS (int)(sizeof(kinds) / sizeof(kinds[0]))
#define N_OPERS (int)(sizeof(opers) / sizeof(opers[0]))

/* Enum values of the export: id -> index in kinds[] or opers[], -1 for a
 * value the export names but memprof does not know. */
struct enum_map {
	struct {
		int64_t id;
		int known;
	} v[MAX_ENUM_ROWS];
	int n;
};

/* Columns of the ordered query (see query_sql). */
enum {
	Q_ROWID,
	Q_START,
	Q_GLOBAL_PID,
	Q_DEVICE,
	Q_ADDRESS,
	Q_BYTES,
	Q_KIND,
	Q_OPER,
	Q_STREAM,
	Q_POOL_ADDRESS,
	Q_POOL_SIZE,
	Q_TID,
	Q_API,
	Q_DURATION,
};

static const char *const required[] = {
        "start", "globalPid", "deviceId", "address", "bytes", "memKind", "memoryOperationType",
};

struct nsys_import {
	struct mp_import_ctx *c;
	struct mp_foreign *db;
	struct enum_map kind_ids, oper_ids;
	int64_t rowid;
};

static int foreign_failed(struct nsys_import *ni)
{
	int rc = mp_err_copy(ni->c->err, mp_foreign_error(ni->db));

	return rc < 0 ? rc : MP_EIO;
}

/* Does table have col?  1 or 0, or < 0 with the error in c->err. */
static int has(struct nsys_import *ni, const char *table, const char *col)
{
	int rc = mp_foreign_has_column(ni->db, table, col);

	return rc < 0 ? foreign_failed(ni) : rc;
}

static int row_error(struct nsys_import *ni, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)));

static int row_error(struct nsys_import *ni, const char *fmt, ...)
{
	char what[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	return mp_err(ni->c->err, MP_EFORMAT, "invalid row '%s': " EVENTS " row %lld: %s",
	              ni->c->path, (long long)ni->rowid, what);
}

/* --- the export's own enums --------------------------------------------------- */

static int match(const char *text, const struct known *k, int n, int by_label)
{
	int i;

	for (i = 0; text && i < n; i++)
		if (strcasecmp(text, by_label ? k[i].label : k[i].name) == 0)
			return i;
	return -1;
}

/* The default map: id i is known[i]. */
static void enum_default(struct enum_map *m, int n)
{
	for (m->n = 0; m->n < n; m->n++) {
		m->v[m->n].id = m->n;
		m->v[m->n].known = m->n;
	}
}

/* Read table (id, name, label) into m; without a usable table, the defaults. */
static int enum_read(struct nsys_import *ni, const char *table, const struct known *k, int n,
                     struct enum_map *m)
{
	struct mp_foreign_rows *r;
	char sql[256];
	int id, name, label, rc;

	enum_default(m, n);
	if ((id = has(ni, table, "id")) < 0)
		return id;
	if ((name = has(ni, table, "name")) < 0)
		return name;
	if ((label = has(ni, table, "label")) < 0)
		return label;
	if (!id || (!name && !label))
		return 0;
	snprintf(sql, sizeof(sql), "SELECT id, %s, %s FROM \"%s\" LIMIT %d", name ? "name" : "NULL",
	         label ? "label" : "NULL", table, MAX_ENUM_ROWS);
	if (mp_foreign_query(ni->db, sql, &r) < 0)
		return foreign_failed(ni);
	m->n = 0;
	while ((rc = mp_foreign_next(r)) == 1) {
		int known;

		if (mp_foreign_type(r, 0) != MP_FOREIGN_INT)
			continue;
		known = match(mp_foreign_text(r, 1, NULL), k, n, 0);
		if (known < 0)
			known = match(mp_foreign_text(r, 2, NULL), k, n, 1);
		m->v[m->n].id = mp_foreign_int(r, 0);
		m->v[m->n++].known = known;
	}
	mp_foreign_finish(r);
	if (rc < 0)
		return foreign_failed(ni);
	if (m->n == 0)
		enum_default(m, n); /* an empty table says nothing */
	return 0;
}

/* Index in the known list, -1 for a value named but unknown, -2 for one not listed. */
static int enum_find(const struct enum_map *m, int64_t id)
{
	int i;

	for (i = 0; i < m->n; i++)
		if (m->v[i].id == id)
			return m->v[i].known;
	return -2;
}

/* --- what the file is ----------------------------------------------------------- */

/* 2 a memprof trace, 1 an nsys export, 0 neither, < 0 error (on db). */
static int identify(struct mp_foreign *db)
{
	static const char *const marks[] = {
	        EVENTS,
	        "TARGET_INFO_SESSION_START_TIME",
	        "META_DATA_EXPORT",
	        "StringIds",
	};
	struct mp_foreign_rows *r;
	size_t i;
	int rc;

	if ((rc = mp_foreign_has_column(db, "meta", "key")) > 0)
		rc = mp_foreign_has_column(db, "meta", "value");
	if (rc > 0) {
		if (mp_foreign_query(db,
		                     "SELECT 1 FROM meta WHERE key = 'format' AND "
		                     "value = 'memprof-trace'",
		                     &r) < 0)
			return MP_EFORMAT;
		rc = mp_foreign_next(r);
		mp_foreign_finish(r);
		if (rc == 1)
			return 2;
	}
	if (rc < 0)
		return rc;
	for (i = 0; i < sizeof(marks) / sizeof(marks[0]); i++)
		if ((rc = mp_foreign_has_table(db, marks[i])) != 0)
			return rc;
	return 0;
}

static int probe(const char *path, const char *head, size_t n)
{
	struct mp_foreign *db;
	int rc;

	if (n < sizeof(sqlite_magic) || memcmp(head, sqlite_magic, sizeof(sqlite_magic)) != 0)
		return 0;
	/* a database on a pipe, or one SQLite cannot read: run() says which */
	if (mp_foreign_open(&db, path, NULL) < 0)
		return 1;
	rc = identify(db);
	mp_foreign_close(db);
	return rc == 1 || rc < 0;
}

/* Refuse what is not an nsys export with memory events; opens ni->db. */
static int open_export(struct nsys_import *ni)
{
	struct mp_import_ctx *c = ni->c;
	char head[sizeof(sqlite_magic)];
	int rc;

	if (!c->file_path)
		return mp_err(c->err, MP_EINVAL,
		              "cannot import '%s' as an Nsight Systems export: SQLite databases "
		              "are read from a file, give its path",
		              c->path);
	if (fread(head, 1, sizeof(head), c->in) != sizeof(head) ||
	    memcmp(head, sqlite_magic, sizeof(head)) != 0)
		return mp_err(c->err, MP_EFORMAT,
		              "not an Nsight Systems export '%s': not a SQLite database (make one "
		              "with 'nsys export --type sqlite REPORT.nsys-rep')",
		              c->path);
	if ((rc = mp_foreign_open(&ni->db, c->file_path, c->err)) < 0)
		return rc;
	rc = identify(ni->db);
	if (rc < 0)
		return foreign_failed(ni);
	if (rc == 2)
		return mp_err(c->err, MP_EFORMAT,
		              "not an Nsight Systems export '%s': it is a memprof trace already, "
		              "which memprof commands read as it is",
		              c->path);
	if (rc == 0)
		return mp_err(c->err, MP_EFORMAT,
		              "not an Nsight Systems export '%s': a SQLite database without the "
		              "tables of one",
		              c->path);
	if ((rc = mp_foreign_has_table(ni->db, EVENTS)) < 0)
		return foreign_failed(ni);
	if (rc == 0)
		return mp_err(c->err, MP_EFORMAT,
		              "no CUDA memory events '%s': the report was recorded without "
		              "--cuda-memory-usage=true\nhint: record with 'nsys profile "
		              "--trace=cuda --cuda-memory-usage=true', then export it with 'nsys "
		              "export --type sqlite'",
		              c->path);
	return 0;
}

/* --- metadata --------------------------------------------------------------------- */

/* Set meta key; its failure becomes the import's error. */
static int set_meta(struct nsys_import *ni, const char *key, const char *value)
{
	if (mp_store_set_meta(ni->c->store, key, value) < 0)
		return mp_err_copy(ni->c->err, mp_store_error(ni->c->store));
	return 0;
}

/* The first value of sql, an integer or a short text, into meta key. */
static int copy_meta(struct nsys_import *ni, const char *sql, const char *key)
{
	struct mp_foreign_rows *r;
	const char *value = NULL;
	char buf[32];
	size_t len;
	int rc;

	if (mp_foreign_query(ni->db, sql, &r) < 0)
		return foreign_failed(ni);
	if ((rc = mp_foreign_next(r)) < 0) {
		rc = foreign_failed(ni);
	} else if (rc == 1 && mp_foreign_type(r, 0) == MP_FOREIGN_INT) {
		snprintf(buf, sizeof(buf), "%lld", (long long)mp_foreign_int(r, 0));
		value = buf;
	} else if (rc == 1 && mp_foreign_type(r, 0) == MP_FOREIGN_TEXT) {
		value = mp_foreign_text(r, 0, &len);
		if (value && (len > 64 || strlen(value) != len))
			value = NULL; /* not a version number */
	}
	if (rc >= 0)
		rc = value ? set_meta(ni, key, value) : 0;
	mp_foreign_finish(r);
	return rc;
}

/* Our clock, and what the export says of its session and schema. */
static int write_meta(struct nsys_import *ni)
{
	int rc;

	if ((rc = set_meta(ni, "clock", "nsys session ns")) < 0)
		return rc;
	rc = has(ni, "TARGET_INFO_SESSION_START_TIME", "utcEpochNs");
	if (rc > 0)
		rc = copy_meta(ni, "SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME",
		               "clock_epoch_ns");
	if (rc >= 0 && (rc = has(ni, "META_DATA_EXPORT", "value")) > 0 &&
	    (rc = has(ni, "META_DATA_EXPORT", "name")) > 0)
		rc = copy_meta(ni,
		               "SELECT value FROM META_DATA_EXPORT WHERE name = "
		               "'EXPORT_SCHEMA_VERSION'",
		               "nsys_schema_version");
	return rc < 0 ? rc : 0;
}

/* --- the ordered query -------------------------------------------------------------- */

/* Can rows be joined to their runtime API call (thread) and its name? */
static int runtime_join(struct nsys_import *ni, int *tid, int *name, int *timed)
{
	static const char *const cols[][2] = {
	        {EVENTS, "correlationId"}, {RUNTIME, "correlationId"}, {RUNTIME, "globalTid"},
	        {RUNTIME, "nameId"},       {"StringIds", "id"},        {"StringIds", "value"},
	};
	int i, rc = 1, end = 0;

	*tid = *name = *timed = 0;
	for (i = 0; i < 6 && rc > 0; i++) {
		if ((rc = has(ni, cols[i][0], cols[i][1])) < 0)
			return rc;
		if (i == 2)
			*tid = rc;
	}
	*name = rc > 0;
	if (!*tid)
		return 0;
	if ((rc = has(ni, RUNTIME, "start")) <= 0 || (end = has(ni, RUNTIME, "end")) < 0)
		return rc < 0 ? rc : end < 0 ? end : 0;
	*timed = end;
	return 0;
}

/*
 * The rows of EVENTS in time order (then rowid), columns as in enum Q_*, each
 * with its runtime API call (same correlationId in the same process) when the
 * export has CUPTI_ACTIVITY_KIND_RUNTIME and StringIds.  A runtime table that
 * repeats a correlationId repeats the row: the reader keeps the first, joined
 * to the call with the lowest rowid.
 */
static int query_sql(struct nsys_import *ni, char *sql, size_t size)
{
	int stream, pool_address, pool_size, tid, name, timed, rc;
	size_t i;

	for (i = 0; i < sizeof(required) / sizeof(required[0]); i++) {
		if ((rc = has(ni, EVENTS, required[i])) < 0)
			return rc;
		if (rc == 0)
			return mp_err(ni->c->err, MP_EFORMAT,
			              "missing column '%s': " EVENTS " has no column %s (an export "
			              "schema memprof does not know)",
			              ni->c->path, required[i]);
	}
	if ((stream = has(ni, EVENTS, "streamId")) < 0)
		return stream;
	if ((pool_address = has(ni, EVENTS, "localMemoryPoolAddress")) < 0)
		return pool_address;
	if ((pool_size = has(ni, EVENTS, "localMemoryPoolSize")) < 0)
		return pool_size;
	if ((rc = runtime_join(ni, &tid, &name, &timed)) < 0)
		return rc;
	snprintf(sql, size,
	         "SELECT e.rowid, e.start, e.globalPid, e.deviceId, e.address, e.bytes, "
	         "e.memKind, e.memoryOperationType, %s, %s, %s, %s, %s, %s FROM " EVENTS
	         " AS e%s%s ORDER BY e.start, e.rowid%s",
	         stream ? "e.streamId" : "NULL", pool_address ? "e.localMemoryPoolAddress" : "NULL",
	         pool_size ? "e.localMemoryPoolSize" : "NULL", tid ? "r.globalTid" : "NULL",
	         name ? "s.value" : "NULL", timed ? "r.\"end\" - r.start" : "NULL",
	         tid ? " LEFT JOIN " RUNTIME " AS r ON r.correlationId = e.correlationId AND "
	               "r.globalTid >> 24 = e.globalPid >> 24"
	             : "",
	         name ? " LEFT JOIN StringIds AS s ON s.id = r.nameId" : "",
	         tid ? ", r.rowid" : "");
	return 0;
}

/* --- one row ------------------------------------------------------------------------ */

/* Column col as an integer: 1, or 0 when NULL (an error when required), or < 0. */
static int get_int(struct nsys_import *ni, struct mp_foreign_rows *r, int col, const char *name,
                   int required_, int64_t *out)
{
	enum mp_foreign_type t = mp_foreign_type(r, col);

	*out = 0;
	if (t == MP_FOREIGN_NULL)
		return required_ ? row_error(ni, "%s is NULL", name) : 0;
	if (t != MP_FOREIGN_INT)
		return row_error(ni, "%s is %s, not an integer", name,
		                 t == MP_FOREIGN_REAL   ? "a real number"
		                 : t == MP_FOREIGN_TEXT ? "text"
		                                        : "a blob");
	*out = mp_foreign_int(r, col);
	return 1;
}

/* The row's operation into *op: 1 allocation, 0 deallocation, -1 unknown. */
static int operation(struct nsys_import *ni, int64_t oper, int *op)
{
	int known = enum_find(&ni->oper_ids, oper);

	if (known == -2)
		return row_error(ni,
		                 "memoryOperationType %lld is neither an allocation nor a "
		                 "deallocation (ENUM_CUDA_DEV_MEM_EVENT_OPER)",
		                 (long long)oper);
	*op = known < 0 ? -1 : known == 0;
	return 0;
}

static int read_pool(struct nsys_import *ni, struct mp_foreign_rows *r, struct mp_nsys_row *row)
{
	int64_t address, size;
	int rc;

	if ((rc = get_int(ni, r, Q_POOL_ADDRESS, "localMemoryPoolAddress", 0, &address)) <= 0)
		return rc;
	if ((rc = get_int(ni, r, Q_POOL_SIZE, "localMemoryPoolSize", 0, &size)) <= 0)
		return rc;
	if (size < 0)
		return row_error(ni, "negative localMemoryPoolSize %lld", (long long)size);
	if (size >= MAX_BYTES)
		return row_error(ni, "localMemoryPoolSize %lld is more than 2^56 bytes",
		                 (long long)size);
	row->has_pool = address != 0;
	row->pool_address = (uint64_t)address;
	row->pool_size = size;
	return 0;
}

/* The call's thread and name, and the stream and pool of a GPU row. */
static int read_details(struct nsys_import *ni, struct mp_foreign_rows *r, struct mp_nsys_row *row,
                        const struct known *kind)
{
	int64_t v;
	int rc;

	if ((rc = get_int(ni, r, Q_STREAM, "streamId", 0, &v)) < 0)
		return rc;
	row->stream = (uint64_t)v;
	if (mp_foreign_type(r, Q_TID) == MP_FOREIGN_INT)
		row->thread = mp_foreign_int(r, Q_TID) & 0xffffff; /* tid: bits 0..23 */
	/* the runtime call's time; one that ends before it starts is not believed */
	if (mp_foreign_type(r, Q_DURATION) == MP_FOREIGN_INT &&
	    (v = mp_foreign_int(r, Q_DURATION)) > 0)
		row->duration_ns = v;
	row->api = mp_foreign_text(r, Q_API, &row->api_len);
	if (!row->api && !mp_foreign_is_null(r, Q_API))
		return foreign_failed(ni);
	if (!row->api || row->api_len == 0 || strlen(row->api) != row->api_len) {
		row->api = kind->api;
		row->api_len = strlen(kind->api);
	}
	return read_pool(ni, r, row);
}

/* Check one row into *row; *cls says what to do with it. */
static int read_row(struct nsys_import *ni, struct mp_foreign_rows *r, struct mp_nsys_row *row,
                    enum mp_nsys_class *cls)
{
	int64_t v[Q_OPER + 1];
	int i, rc, op = -1, known;

	memset(row, 0, sizeof(*row));
	for (i = Q_START; i <= Q_OPER; i++)
		if ((rc = get_int(ni, r, i, required[i - Q_START], 1, &v[i])) < 0)
			return rc;
	if (v[Q_START] < 0)
		return row_error(ni, "negative start %lld", (long long)v[Q_START]);
	if (v[Q_BYTES] < 0)
		return row_error(ni, "negative bytes %lld", (long long)v[Q_BYTES]);
	if (v[Q_BYTES] >= MAX_BYTES)
		return row_error(ni, "bytes %lld is more than 2^56", (long long)v[Q_BYTES]);
	if ((rc = operation(ni, v[Q_OPER], &op)) < 0)
		return rc;
	known = enum_find(&ni->kind_ids, v[Q_KIND]);
	*cls = op < 0 || known < 0 ? MP_NSYS_UNKNOWN : kinds[known].cls;
	if (*cls != MP_NSYS_GPU)
		return 0;
	if (v[Q_DEVICE] < 0 || v[Q_DEVICE] > INT32_MAX)
		return row_error(ni, "deviceId %lld is not a device ordinal",
		                 (long long)v[Q_DEVICE]);
	row->is_alloc = op;
	row->start = v[Q_START];
	row->global_pid = (uint64_t)v[Q_GLOBAL_PID];
	row->device = (int32_t)v[Q_DEVICE];
	row->address = (uint64_t)v[Q_ADDRESS];
	row->bytes = v[Q_BYTES];
	return read_details(ni, r, row, &kinds[known]);
}

static int read_rows(struct nsys_import *ni, struct mp_foreign_rows *r, struct mp_nsys_events *ev)
{
	struct mp_nsys_row row;
	enum mp_nsys_class cls = MP_NSYS_UNKNOWN;
	int rc, first = 1;

	while ((rc = mp_foreign_next(r)) == 1) {
		int64_t rowid = mp_foreign_int(r, Q_ROWID);

		if (!first && rowid == ni->rowid)
			continue; /* the same row again, joined to another runtime call */
		first = 0;
		ni->rowid = rowid;
		if ((rc = read_row(ni, r, &row, &cls)) < 0)
			return rc;
		if (cls == MP_NSYS_HOST)
			ni->c->st->n_warnings[MP_WARN_SKIPPED_HOST]++;
		else if (cls == MP_NSYS_UNKNOWN)
			ni->c->st->n_warnings[MP_WARN_SKIPPED_UNKNOWN]++;
		else if ((rc = mp_nsys_events_row(ev, &row)) < 0)
			return rc;
	}
	return rc < 0 ? foreign_failed(ni) : 0;
}

static int run(struct mp_import_ctx *c)
{
	struct nsys_import ni = {.c = c};
	struct mp_foreign_rows *r = NULL;
	struct mp_nsys_events ev;
	char sql[1024];
	int rc;

	mp_nsys_events_init(&ev, c);
	rc = open_export(&ni);
	if (rc == 0)
		rc = enum_read(&ni, "ENUM_CUDA_MEM_KIND", kinds, N_KINDS, &ni.kind_ids);
	if (rc == 0)
		rc = enum_read(&ni, "ENUM_CUDA_DEV_MEM_EVENT_OPER", opers, N_OPERS, &ni.oper_ids);
	if (rc == 0)
		rc = write_meta(&ni);
	if (rc == 0)
		rc = query_sql(&ni, sql, sizeof(sql));
	if (rc == 0 && mp_foreign_query(ni.db, sql, &r) < 0)
		rc = foreign_failed(&ni);
	if (rc == 0)
		rc = read_rows(&ni, r, &ev);
	mp_foreign_finish(r);
	mp_foreign_close(ni.db);
	mp_nsys_events_free(&ev);
	return rc;
}

const struct mp_importer mp_importer_nsys = {
        .name = "nsys",
        .description = "Nsight Systems SQLite export (nsys export --type sqlite)",
        .probe = probe,
        .run = run,
};
