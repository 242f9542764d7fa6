/*
 * tests/fuzz/fuzz_rmm.c - fuzz target for the RMM log importer: any bytes
 * go through the content probe and the importer's run with a real writer,
 * into a trace kept on a scratch directory (remade now and then), and must
 * give events or a clean error, never a crash, a hang or a leak.  The
 * scanner also reads the input through a buffer of a few bytes, which must
 * change nothing but the longest line it takes; inputs whose size is a
 * multiple of 8 also take the whole path, mp_import_files.
 * Built with libFuzzer by 'make fuzz'; replayed by 'make check'.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "import/import.h"
#include "import/rmm_scan.h"
#include "fuzz_store.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct fuzz_store fs;

static void cleanup(void)
{
	char path[300];

	snprintf(path, sizeof(path), "%s/in.dev1.csv", fs.dir);
	unlink(path);
	fuzz_store_remove(&fs);
}

static void prepare(void)
{
	if (!fs.dir[0])
		atexit(cleanup);
	fuzz_store_prepare(&fs, "fuzz_rmm");
}

/*
 * The scanner alone, with the default buffer and with one of a few bytes,
 * so that lines straddle refills: both must give the same rows and the
 * same end, unless the small one found a line longer than its buffer.
 */
static void compare_scans(const uint8_t *data, size_t size)
{
	struct mp_rmm_scanner *big = NULL, *small = NULL;
	struct mp_rmm_row a, b;
	struct mp_error ea = {0}, eb = {0};
	FILE *fa = fmemopen((void *)data, size, "r"), *fb = fmemopen((void *)data, size, "r");
	int ra, rb;

	if (!fa || !fb)
		abort();
	ra = mp_rmm_scan_open(&big, fa, "fuzz", 0, &ea);
	rb = mp_rmm_scan_open(&small, fb, "fuzz", 2 + size % 37, &eb);
	while (ra == 0 && rb == 0) {
		ra = mp_rmm_scan_next(big, &a, &ea);
		rb = mp_rmm_scan_next(small, &b, &eb);
		if (ra != 1 || rb != 1)
			break;
		if (a.line != b.line || a.thread != b.thread || a.time_ns != b.time_ns ||
		    a.action != b.action || a.pointer != b.pointer || a.size != b.size ||
		    a.stream != b.stream || a.time_col != b.time_col)
			abort();
		ra = rb = 0;
	}
	if ((ra < 0 && !ea.msg[0]) || (rb < 0 && !eb.msg[0]))
		abort();
	if (!strstr(eb.msg, "line too long") &&
	    (ra != rb || strcmp(ea.msg, eb.msg) != 0 ||
	     (ra == 0 && big &&
	      mp_rmm_scan_dropped_partial(big) != mp_rmm_scan_dropped_partial(small))))
		abort();
	mp_rmm_scan_close(big);
	mp_rmm_scan_close(small);
	fclose(fa);
	fclose(fb);
}

/* The whole import: a file in, a committed trace out (then deleted). */
static void run_import_files(const uint8_t *data, size_t size)
{
	struct mp_import_opts o = {.format = "rmm", .overwrite = 1, .tool_version = "fuzz"};
	struct mp_import_stats st;
	struct mp_error err = {0};
	char in[300], out[300];
	FILE *f;

	snprintf(in, sizeof(in), "%s/in.dev1.csv", fs.dir);
	snprintf(out, sizeof(out), "%s/out.db", fs.dir);
	f = fopen(in, "wb");
	if (!f || fwrite(data, 1, size, f) != size || fclose(f) != 0)
		abort();
	if (mp_import_files((const char *const[]){in}, 1, out, &o, &st, &err) < 0 &&
	    err.msg[0] == '\0')
		abort();
	unlink(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0)
		return 0; /* fmemopen wants at least a byte */
	mp_rmm_probe((const char *)data, size);
	compare_scans(data, size);
	prepare();
	fuzz_run_importer(&fs, "rmm", "fuzz.dev1.csv", "fuzz.dev1.csv", data, size);
	if (size % 8 == 0)
		run_import_files(data, size);
	return 0;
}
