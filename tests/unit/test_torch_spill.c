/*
 * tests/unit/test_torch_spill.c - src/import/torch_spill.c: entries
 * appended to interleaved lists come back exactly, in order and at random,
 * across the chunks in the temporary file and the tail in memory; granted
 * sizes written where each entry is; no file is left behind, none is made
 * for a short list, and a directory that cannot hold one is a clear error.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"
#include "import/torch.h"

static char *dir;

static void setup(void)
{
	dir = th_mkdtemp();
}

static void teardown(void)
{
	th_rmdir(dir);
}

TestSuite(torch_spill, .init = setup, .fini = teardown);

/* A list being appended to, and the device it becomes. */
struct list {
	struct tp_chunks c;
	struct tp_entry *tail;
	size_t n_tail, cap, n;
};

static struct tp_entry entry(int list, size_t i)
{
	struct tp_entry e;

	memset(&e, 0, sizeof(e));
	e.addr = ((uint64_t)list << 40) + i * 512;
	e.size = (int64_t)(i * 7 + 1);
	e.stream = (uint64_t)list;
	e.ts_ns = (int64_t)(i * 1000);
	e.granted = -1;
	e.device = list;
	e.action = (uint8_t)(i % 3 ? TP_ALLOC : TP_FREE_COMPLETED);
	return e;
}

static void append(struct tp_spill *s, struct list *l, int list)
{
	struct tp_entry e = entry(list, l->n);
	struct mp_error err = {0};

	cr_assert_eq(tp_spill_append(s, &l->c, &l->tail, &l->n_tail, &l->cap, &e, &err), 0, "%s",
	             err.msg);
	l->n++;
}

static struct tp_device as_device(struct list *l)
{
	struct tp_device d;

	memset(&d, 0, sizeof(d));
	d.entries = l->tail;
	d.n_entries = l->n;
	d.spilled = l->c;
	return d;
}

static int same(const struct tp_entry *a, const struct tp_entry *b)
{
	return a->addr == b->addr && a->size == b->size && a->stream == b->stream &&
	       a->ts_ns == b->ts_ns && a->granted == b->granted && a->device == b->device &&
	       a->action == b->action;
}

static int files_in(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *de;
	int n = 0;

	cr_assert_not_null(d);
	while ((de = readdir(d)))
		n += de->d_name[0] != '.';
	closedir(d);
	return n;
}

Test(torch_spill, entries_round_trip_across_chunks_and_lists)
{
	char *out = th_path(dir, "out.db");
	struct tp_spill *s = tp_spill_new(out, "in.pickle");
	struct list a = {0}, b = {0};
	struct tp_device da, db;
	struct tp_reader r;
	struct tp_entry got, want;
	size_t i, na = 3 * TP_CHUNK + 5, nb = TP_CHUNK + 1;

	cr_assert_not_null(s);
	for (i = 0; i < na; i++) { /* interleaved, as a crafted pickle may append them */
		append(s, &a, 0);
		if (i < nb)
			append(s, &b, 1);
	}
	cr_assert_eq(a.c.n, 3);
	cr_assert_eq(a.n_tail, 5);
	cr_assert_eq(b.c.n, 1);
	cr_assert_eq(files_in(dir), 0, "the spill file has no name once made");
	da = as_device(&a);
	db = as_device(&b);
	cr_assert_eq(tp_entry_set_granted(&da, 7, 4096), 0);           /* in the file */
	cr_assert_eq(tp_entry_set_granted(&da, na - 2, 8192), 0);      /* in the tail */
	cr_assert_eq(tp_entry_set_granted(&db, TP_CHUNK - 1, 512), 0); /* a chunk's last */
	tp_reader_init(&r, &da);
	for (i = 0; i < na; i++) {
		const struct tp_entry *e = tp_reader_at(&r, i);

		want = entry(0, i);
		want.granted = i == 7 ? 4096 : i == na - 2 ? 8192 : -1;
		cr_assert_not_null(e, "entry %zu", i);
		cr_assert(same(e, &want), "entry %zu of list 0", i);
	}
	tp_reader_free(&r);
	tp_reader_init(&r, &db);
	for (i = 0; i < nb; i++) {
		want = entry(1, i);
		want.granted = i == TP_CHUNK - 1 ? 512 : -1;
		cr_assert(same(tp_reader_at(&r, i), &want), "entry %zu of list 1", i);
	}
	tp_reader_free(&r);
	for (i = 0; i < na; i += 97) { /* at random */
		want = entry(0, i);
		want.granted = i == 7 ? 4096 : -1;
		cr_assert_eq(tp_entry_get(&da, i, &got), 0);
		cr_assert(same(&got, &want), "entry %zu read alone", i);
	}
	free(a.tail);
	free(a.c.at);
	free(b.tail);
	free(b.c.at);
	tp_spill_free(s);
	cr_assert_eq(files_in(dir), 0);
	free(out);
}

Test(torch_spill, a_short_list_stays_in_memory)
{
	char *out = th_path(dir, "out.db");
	struct tp_spill *s = tp_spill_new(out, "in.pickle");
	struct list a = {0};
	size_t i;

	for (i = 0; i < TP_CHUNK; i++)
		append(s, &a, 0);
	cr_assert_eq(a.c.n, 0);
	cr_assert_null(a.c.spill, "no file is made for one chunk");
	cr_assert_eq(a.n_tail, TP_CHUNK);
	free(a.tail);
	tp_spill_free(s);
	free(out);
}

Test(torch_spill, a_directory_that_cannot_hold_the_file_is_a_clear_error)
{
	char *out = th_path(dir, "no-such-dir/out.db");
	struct tp_spill *s = tp_spill_new(out, "big.pickle");
	struct list a = {0};
	struct tp_entry e = entry(0, 0);
	struct mp_error err = {0};
	size_t i;
	int rc = 0;

	for (i = 0; i <= TP_CHUNK && rc == 0; i++)
		rc = tp_spill_append(s, &a.c, &a.tail, &a.n_tail, &a.cap, &e, &err);
	cr_assert_eq(rc, MP_EIO);
	cr_assert_eq(i, TP_CHUNK + 1, "fails when the first chunk is written");
	cr_assert(strstr(err.msg, "temporary file") && strstr(err.msg, "big.pickle") &&
	                  strstr(err.msg, "No such file"),
	          "%s", err.msg);
	free(a.tail);
	free(a.c.at);
	tp_spill_free(s);
	free(out);
}
