/*
 * tests/fuzz/fuzz_minimalloc.c - fuzz target for the MiniMalloc CSV importer
 * end to end (detection, parsing, sorting, a real trace database) and for the
 * MiniMalloc writer: any bytes give a trace or an error with a message; a
 * trace exported as MiniMalloc CSV imports again with the same peak of live
 * bytes.  Built with libFuzzer by 'make fuzz'; replayed by 'make check'.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "import/import.h"
#include "report/minimalloc_writer.h"
#include "store/reader.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[64], in_path[96], out_path[96], again_path[96], csv_path[96];

static void cleanup(void)
{
	unlink(in_path);
	unlink(out_path);
	unlink(again_path);
	unlink(csv_path);
	rmdir(dir);
}

static void paths(void)
{
	const char *tmp = getenv("TMPDIR");

	if (dir[0])
		return;
	if (!tmp || strlen(tmp) >= 40) /* memory, not disk: each import syncs its trace */
		tmp = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
	snprintf(dir, sizeof(dir), "%s/fuzz-mm-XXXXXX", tmp);
	if (!mkdtemp(dir))
		abort();
	snprintf(in_path, sizeof(in_path), "%s/in.csv", dir);
	snprintf(out_path, sizeof(out_path), "%s/out.db", dir);
	snprintf(again_path, sizeof(again_path), "%s/again.db", dir);
	snprintf(csv_path, sizeof(csv_path), "%s/out.csv", dir);
	atexit(cleanup);
}

static void write_file(const char *path, const uint8_t *data, size_t size)
{
	FILE *f = fopen(path, "wb");

	if (!f || fwrite(data, 1, size, f) != size || fclose(f) != 0)
		abort();
}

/*
 * Peak live bytes of a trace, summed here in 128 bits (sizes may be up to
 * 2^63 - 1); with csv set, also write the trace there as MiniMalloc CSV.
 */
static __int128 peak_and_export(const char *db, const char *csv)
{
	struct mp_minimalloc_opts o = {MP_MINIMALLOC_TIME_NS, 0, 0, 0};
	struct mp_minimalloc_writer *w = NULL;
	const struct memprof_record *rec;
	struct mp_reader *r;
	struct mp_store *s;
	struct mp_error err;
	__int128 live = 0, peak = 0;
	FILE *f = NULL;

	if (mp_store_open(&s, db, &err) < 0 || mp_reader_open(s, 0, &r) < 0)
		abort();
	if (csv && (!(f = fopen(csv, "w")) || !(w = mp_minimalloc_writer_open(f, &o))))
		abort();
	while (mp_reader_next(r, &rec) == 1) {
		live += rec->ev.op == MEMPROF_OP_ALLOC ? rec->ev.size_bytes : -rec->ev.size_bytes;
		if (live > peak)
			peak = live;
		if (w && mp_minimalloc_writer_record(w, rec) < 0)
			abort();
	}
	if (w && (mp_minimalloc_writer_close(w, NULL) < 0 || fclose(f) != 0))
		abort();
	mp_reader_close(r);
	mp_store_close(s);
	return peak;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mp_import_opts o = {.format = "minimalloc", .overwrite = 1, .tool_version = "fuzz"};
	const char *in = in_path, *again = csv_path;
	struct mp_import_stats st;
	struct mp_error err;
	__int128 peak;

	paths();
	mp_importer_minimalloc.probe(in_path, (const char *)data, size);
	write_file(in_path, data, size);
	memset(&err, 0, sizeof(err));
	if (mp_import_files(&in, 1, out_path, &o, &st, &err) < 0) {
		if (err.msg[0] == '\0')
			abort(); /* an error must always say what was wrong */
		return 0;
	}
	peak = peak_and_export(out_path, csv_path);
	memset(&err, 0, sizeof(err));
	if (mp_import_files(&again, 1, again_path, &o, &st, &err) < 0)
		abort(); /* what the writer writes, the importer reads */
	if (peak_and_export(again_path, NULL) != peak)
		abort(); /* and finds the same peak */
	unlink(out_path);
	unlink(again_path);
	return 0;
}
