/*
 * tests/fuzz/fuzz_pages.c - fuzz target for the reader's page decoder
 * (store/event_pages.c): any bytes are written as a trace file and, when it
 * opens as a trace, its events are read both from the pages and through
 * SQLite (MEMPROF_READ_PAGES=0).  Neither may crash, hang or leak; an
 * error must say what was wrong; and when both read the whole trace they
 * must hand over the same records.  Seeded with small traces of 512-byte
 * pages whose events fill interior and leaf pages, so that byte mutations
 * land in the b-tree.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "record_hash.h"
#include "store/reader.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char path[96];

static void cleanup(void)
{
	unlink(path);
}

static void setup(void)
{
	const char *tmp = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";

	snprintf(path, sizeof(path), "%s/fuzz-pages-%ld.db", tmp, (long)getpid());
	atexit(cleanup);
}

/* Read every record one way: 0 and h set, or an error (with a message). */
static int read_events(int pages, uint64_t h[2])
{
	struct mp_consumer c = {"hash", h, MP_READ_STACKS, fuzz_hash_record, NULL};
	struct mp_error err = {0};
	struct mp_reader *r = NULL;
	struct mp_store *s;
	int rc;

	h[0] = FUZZ_HASH_START;
	h[1] = 0;
	if (pages)
		unsetenv("MEMPROF_READ_PAGES");
	else
		setenv("MEMPROF_READ_PAGES", "0", 1);
	if (mp_store_open(&s, path, &err) < 0)
		return 1; /* not a trace: nothing to read either way */
	rc = mp_reader_open(s, MP_READ_STACKS, &r);
	if (rc == 0 && (rc = mp_reader_add(r, &c)) == 0)
		rc = mp_reader_run(r);
	if (rc < 0 && !mp_store_error(s)->msg[0]) {
		fprintf(stderr, "fuzz_pages.c: error %d without a message\n", rc);
		abort();
	}
	mp_reader_close(r);
	mp_store_close(s);
	return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint64_t by_pages[2], by_sql[2];
	FILE *f;
	int a, b;

	if (!path[0])
		setup();
	f = fopen(path, "wb");
	if (!f || fwrite(data, 1, size, f) != size || fclose(f) != 0)
		abort();
	a = read_events(1, by_pages);
	b = read_events(0, by_sql);
	if (a == 0 && b == 0 && (by_pages[0] != by_sql[0] || by_pages[1] != by_sql[1])) {
		fprintf(stderr,
		        "fuzz_pages.c: the pages gave %llu records, SQL %llu, not the same\n",
		        (unsigned long long)by_pages[1], (unsigned long long)by_sql[1]);
		abort();
	}
	unlink(path);
	return 0;
}
