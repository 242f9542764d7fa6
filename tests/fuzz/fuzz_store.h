/*
 * tests/fuzz/fuzz_store.h - what fuzz targets that run an importer share: a
 * trace store on a scratch directory (tmpfs when there is one), remade
 * every FUZZ_INPUTS_PER_STORE inputs so it never grows without bound, and
 * one importer's run on the input through a real writer, checked: an error
 * must say what was wrong, and the counts must be those of the events
 * written.  Header-only (static functions), included by one target each.
 */
#ifndef MP_TESTS_FUZZ_STORE_H
#define MP_TESTS_FUZZ_STORE_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "import/import.h"
#include "store/store.h"

#define FUZZ_INPUTS_PER_STORE 256

struct fuzz_store {
	char dir[256]; /* the scratch directory, "" until the first input */
	struct mp_store *store;
	int n_inputs;
};

/* Make the scratch directory (named after tag) on first use, and a fresh store now and then. */
static void fuzz_store_prepare(struct fuzz_store *fs, const char *tag)
{
	struct mp_error err;
	char path[300];

	if (!fs->dir[0]) {
		snprintf(fs->dir, sizeof(fs->dir), "%s/%s.XXXXXX",
		         access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp", tag);
		if (!mkdtemp(fs->dir))
			abort();
	}
	if (fs->store && fs->n_inputs++ % FUZZ_INPUTS_PER_STORE != 0)
		return;
	mp_store_close(fs->store);
	snprintf(path, sizeof(path), "%s/trace.db", fs->dir);
	if (mp_store_create(&fs->store, path, 1, &err) < 0)
		abort();
}

/* Close the store (never committed: its file goes) and remove the directory. */
static void fuzz_store_remove(struct fuzz_store *fs)
{
	mp_store_close(fs->store);
	fs->store = NULL;
	if (fs->dir[0])
		rmdir(fs->dir);
}

/*
 * The importer named format on data, as the file name (file_path: its path
 * on disk, NULL for a stream), through a writer on the store.
 */
static void fuzz_run_importer(struct fuzz_store *fs, const char *format, const char *name,
                              const char *file_path, const uint8_t *data, size_t size)
{
	struct mp_import_stats st = {0};
	struct mp_error err = {0};
	struct mp_import_ctx c = {
	        .path = name, .file_path = file_path, .store = fs->store, .st = &st, .err = &err};
	int64_t before;
	int rc;

	c.in = fmemopen((void *)data, size, "rb");
	if (!c.in || mp_writer_open(fs->store, &c.w) < 0)
		abort();
	before = mp_writer_n_events(c.w);
	rc = mp_importer_find(format)->run(&c);
	if (rc < 0 && err.msg[0] == '\0')
		abort(); /* an error must always say what was wrong */
	if (rc == 0 &&
	    (st.n_allocs > st.n_events || mp_writer_n_events(c.w) - before != st.n_events))
		abort(); /* the counts must be those of the events written */
	mp_writer_close(c.w);
	fclose(c.in);
}

#endif
