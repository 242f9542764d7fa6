/*
 * tests/unit/helpers.h - scratch directories and files for the unit tests.
 */
#ifndef MP_TEST_HELPERS_H
#define MP_TEST_HELPERS_H

#include <stddef.h>

/* A fresh directory under $TMPDIR (or /tmp); removed by th_rmdir. */
char *th_mkdtemp(void);
void th_rmdir(char *dir);
/* dir/name, malloc'd. */
char *th_path(const char *dir, const char *name);
/* Write text to path; aborts the test on failure. */
void th_write(const char *path, const char *text);
/* Number of entries in dir (excluding . and ..). */
int th_count_entries(const char *dir);
/* Load a SQL script into a new SQLite database at path. */
void th_sqlite_script(const char *path, const char *sql_file);
/* Run one SQL statement on the database at path. */
void th_sqlite_exec(const char *path, const char *sql);
/* Read a whole file (malloc'd, NUL-terminated). */
char *th_read(const char *path, size_t *len);

#endif
