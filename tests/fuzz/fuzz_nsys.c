/*
 * tests/fuzz/fuzz_nsys.c - fuzz target for the Nsight Systems importer and
 * store/foreign.c under it.  An input that starts with the SQLite header is
 * a database file, bytes as they are (corrupt pages, odd schemas); any other
 * input is SQL run on a fresh database with an export's tables (odd values:
 * NULLs, text, huge numbers, enum tables that say anything).  Either way the
 * file is probed and imported end to end into a scratch trace, and must give
 * a trace or an error that says what was wrong: never a crash, a hang or a
 * leak.  Built with libFuzzer by 'make fuzz'; replayed over the corpus by
 * 'make check' (replay_main.c).
 */
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "import/import.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The tables of tests/cli/data/nsys/schema.sql, for SQL inputs to fill. */
static const char schema[] =
        "PRAGMA page_size=512; PRAGMA max_page_count=512;"
        "CREATE TABLE StringIds(id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);"
        "CREATE TABLE PROCESSES(globalPid INTEGER, pid INTEGER, name TEXT);"
        "CREATE TABLE TARGET_INFO_SESSION_START_TIME(utcEpochNs INTEGER, utcTime TEXT,"
        " localTime TEXT);"
        "CREATE TABLE META_DATA_EXPORT(name TEXT NOT NULL, value TEXT);"
        "CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME(start INTEGER NOT NULL, end INTEGER NOT NULL,"
        " eventClass INTEGER NOT NULL, globalTid INTEGER, correlationId INTEGER,"
        " nameId INTEGER NOT NULL, returnValue INTEGER NOT NULL, callchainId INTEGER);"
        "CREATE TABLE CUDA_GPU_MEMORY_USAGE_EVENTS(start INTEGER NOT NULL,"
        " globalPid INTEGER NOT NULL, deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL,"
        " address INTEGER NOT NULL, pc INTEGER NOT NULL, bytes INTEGER NOT NULL,"
        " memKind INTEGER NOT NULL, memoryOperationType INTEGER NOT NULL, name TEXT,"
        " correlationId INTEGER, streamId INTEGER, localMemoryPoolAddress INTEGER,"
        " localMemoryPoolReleaseThreshold INTEGER, localMemoryPoolSize INTEGER,"
        " localMemoryPoolUtilizedSize INTEGER, importedMemoryPoolAddress INTEGER,"
        " importedMemoryPoolProcessId INTEGER);"
        "CREATE TABLE ENUM_CUDA_MEM_KIND(id INTEGER NOT NULL PRIMARY KEY, name TEXT, label TEXT);"
        "CREATE TABLE ENUM_CUDA_DEV_MEM_EVENT_OPER(id INTEGER NOT NULL PRIMARY KEY, name TEXT,"
        " label TEXT);"
        "INSERT INTO ENUM_CUDA_MEM_KIND VALUES (0,'CUDA_MEMOPR_MEMORY_KIND_PAGEABLE','Pageable'),"
        " (1,'CUDA_MEMOPR_MEMORY_KIND_PINNED','Pinned'),"
        " (2,'CUDA_MEMOPR_MEMORY_KIND_DEVICE','Device'),"
        " (3,'CUDA_MEMOPR_MEMORY_KIND_ARRAY','Array'),"
        " (4,'CUDA_MEMOPR_MEMORY_KIND_MANAGED','Managed'),"
        " (5,'CUDA_MEMOPR_MEMORY_KIND_DEVICE_STATIC','Device Static'),"
        " (6,'CUDA_MEMOPR_MEMORY_KIND_MANAGED_STATIC','Managed Static'),"
        " (7,'CUDA_MEMOPR_MEMORY_KIND_UNKNOWN','Unknown');"
        "INSERT INTO ENUM_CUDA_DEV_MEM_EVENT_OPER VALUES"
        " (0,'CUDA_DEV_MEM_EVENT_OPR_ALLOCATION','Allocation'),"
        " (1,'CUDA_DEV_MEM_EVENT_OPR_DEALLOCATION','Deallocation');";

static char dir[64], in_path[96], out_path[96];

static void scratch(void)
{
	const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";

	snprintf(dir, sizeof(dir), "%s/fuzz-nsys-XXXXXX", base);
	if (!mkdtemp(dir))
		abort();
	snprintf(in_path, sizeof(in_path), "%s/in.sqlite", dir);
	snprintf(out_path, sizeof(out_path), "%s/out.db", dir);
}

static void cleanup(void)
{
	unlink(in_path);
	unlink(out_path);
	rmdir(dir);
}

/* The fuzzer's SQL may touch this database only: no other files, no pragmas. */
static int authorize(void *ctx, int action, const char *a, const char *b, const char *c,
                     const char *d)
{
	(void)ctx;
	(void)a;
	(void)b;
	(void)c;
	(void)d;
	return action == SQLITE_ATTACH || action == SQLITE_DETACH || action == SQLITE_PRAGMA
	               ? SQLITE_DENY
	               : SQLITE_OK;
}

/* Stop SQL that runs long (a recursive CTE, say) after some millions of steps. */
static int progress(void *ctx)
{
	return ++*(int *)ctx > 2000;
}

/* in_path from schema plus the input as SQL; its errors do not matter. */
static void from_sql(const uint8_t *data, size_t size)
{
	char *sql = malloc(size + 1);
	sqlite3 *db;
	int steps = 0;

	if (!sql)
		abort();
	memcpy(sql, data, size);
	sql[size] = '\0';
	unlink(in_path);
	if (sqlite3_open(in_path, &db) != SQLITE_OK ||
	    sqlite3_exec(db, schema, NULL, NULL, NULL) != SQLITE_OK)
		abort();
	sqlite3_limit(db, SQLITE_LIMIT_ATTACHED, 0);
	sqlite3_set_authorizer(db, authorize, NULL);
	sqlite3_progress_handler(db, 1000, progress, &steps);
	sqlite3_exec(db, sql, NULL, NULL, NULL);
	sqlite3_close(db);
	free(sql);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char magic[16] = "SQLite format 3";
	const struct mp_importer *imp = mp_importer_find("nsys");
	struct mp_import_opts o = {.format = "nsys", .overwrite = 1, .tool_version = "fuzz"};
	const char *in = in_path;
	struct mp_import_stats st;
	struct mp_error err = {0};
	char head[4096];
	size_t n;
	FILE *f;

	if (!dir[0]) {
		scratch();
		atexit(cleanup);
	}
	if (size >= sizeof(magic) && memcmp(data, magic, sizeof(magic)) == 0) {
		f = fopen(in_path, "wb");
		if (!f || fwrite(data, 1, size, f) != size || fclose(f) != 0)
			abort();
	} else {
		from_sql(data, size);
	}
	f = fopen(in_path, "rb");
	if (!f || !imp)
		abort();
	n = fread(head, 1, sizeof(head), f);
	fclose(f);
	imp->probe(in_path, head, n);
	if (mp_import_files(&in, 1, out_path, &o, &st, &err) < 0 && err.msg[0] == '\0')
		abort(); /* an error must always say what was wrong */
	unlink(out_path);
	return 0;
}
