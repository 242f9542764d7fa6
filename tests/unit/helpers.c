/*
 * tests/unit/helpers.c - scratch directories and files for the unit tests.
 * Tests may speak SQL directly (to build fixtures); src/ outside store/ may not.
 */
#include "helpers.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <ftw.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

char *th_mkdtemp(void)
{
	const char *tmp = getenv("TMPDIR");
	char *dir;

	cr_assert(asprintf(&dir, "%s/memprof-unit-XXXXXX", tmp && *tmp ? tmp : "/tmp") > 0);
	cr_assert_not_null(mkdtemp(dir), "mkdtemp '%s'", dir);
	return dir;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

void th_rmdir(char *dir)
{
	nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	free(dir);
}

char *th_path(const char *dir, const char *name)
{
	char *p;

	cr_assert(asprintf(&p, "%s/%s", dir, name) > 0);
	return p;
}

void th_write(const char *path, const char *text)
{
	FILE *f = fopen(path, "wb");

	cr_assert_not_null(f, "cannot write '%s'", path);
	cr_assert_eq(fwrite(text, 1, strlen(text), f), strlen(text));
	cr_assert_eq(fclose(f), 0);
}

int th_count_entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	cr_assert_not_null(d);
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			n++;
	closedir(d);
	return n;
}

char *th_read(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	cr_assert_not_null(f, "cannot read '%s'", path);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc((size_t)n + 1);
	cr_assert_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
	buf[n] = '\0';
	fclose(f);
	if (len)
		*len = (size_t)n;
	return buf;
}

void th_sqlite_exec(const char *path, const char *sql)
{
	sqlite3 *db;
	char *msg = NULL;

	cr_assert_eq(sqlite3_open(path, &db), SQLITE_OK);
	cr_assert_eq(sqlite3_exec(db, sql, NULL, NULL, &msg), SQLITE_OK, "sql: %s", msg);
	sqlite3_close(db);
}

void th_sqlite_script(const char *path, const char *sql_file)
{
	char *sql = th_read(sql_file, NULL);

	th_sqlite_exec(path, sql);
	free(sql);
}
