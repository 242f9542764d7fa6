/*
 * tests/unit/capture_helpers.h - shared by the injected library's unit
 * tests: where the real libcupti is, a temporary spool, and a small
 * independent walker of spool files (blocks, crc32, items) that keeps the
 * events, strings, meta pairs, devices, modules and the footer.
 */
#ifndef TESTS_CAPTURE_HELPERS_H
#define TESTS_CAPTURE_HELPERS_H

#include <stddef.h>
#include <stdint.h>

#include "spool/format.h"
#include "spool/writer.h"

/* The real libcupti.so.13 ($MEMPROF_TEST_CUPTI, else under the CUDA toolkit). */
const char *th_cupti_path(void);

/* A fresh temporary directory (mkdtemp), removed with its files by th_rmdir. */
void th_tmpdir(char *buf, size_t n);
void th_rmdir(const char *dir);
/* The one *.mpt file in dir into path; returns how many there are. */
int th_find_spool(const char *dir, char *path, size_t n);

/* A writer on a new spool in dir (header zeroed but for pid). */
struct mp_spool_writer *th_open_writer(const char *dir, char *path, size_t n);

struct th_spool {
	struct mp_spool_header header;
	struct mp_spool_event *events;
	size_t n_events;
	char **strings; /* by id; NULL unknown */
	size_t n_strings;
	struct mp_spool_meta *meta;
	size_t n_meta;
	struct mp_spool_device *devices;
	size_t n_devices;
	struct mp_spool_module *modules;
	size_t n_modules;
	uint32_t *stack_depths; /* by id */
	size_t n_stacks;
	int has_footer;
	struct mp_spool_footer footer;
	const char *error; /* NULL: every block was whole and its crc right */
};

/* Read a spool file; aborts the test (cr_assert) on a file it cannot open. */
void th_read_spool(const char *path, struct th_spool *s);
void th_free_spool(struct th_spool *s);
/* String id -> text ("" when unknown). */
const char *th_str(const struct th_spool *s, uint32_t id);
/* The value of meta key, NULL when absent. */
const char *th_meta(const struct th_spool *s, const char *key);

#endif
