/*
 * tests/unit/test_import.c - src/import: the CSV importer end to end into a
 * real SQLite trace, id pairing, and that a failed import leaves nothing.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"
#include "import/import.h"
#include "store/reader.h"

static char *dir;

static void setup(void)
{
	dir = th_mkdtemp();
}

static void teardown(void)
{
	th_rmdir(dir);
}

TestSuite(import, .init = setup, .fini = teardown);

static int import_text(const char *text, struct mp_import_stats *st, struct mp_error *err)
{
	char *in = th_path(dir, "in.csv"), *out = th_path(dir, "out.db");
	struct mp_import_opts o = {.tool_version = "test"};
	int rc;

	th_write(in, text);
	rc = mp_import_files((const char *const[]){in}, 1, out, &o, st, err);
	free(in);
	free(out);
	return rc;
}

Test(import, events_stacks_and_processes)
{
	struct mp_import_stats st;
	struct mp_error err;
	const struct memprof_record *rec;
	struct mp_reader *r;
	struct mp_store *s;
	char *out = th_path(dir, "out.db");

	cr_assert_eq(import_text("ts_ns,op,id,size,pid,stack,phase\n"
	                         "1,alloc,1,100,10,main@a.py:1;f@b.py:2,fwd\n"
	                         "2,alloc,1,200,11,main@a.py:1;g,fwd\n" /* same id, other pid */
	                         "3,free,1,,10,,\n"
	                         "4,free,77,,10,,\n",
	                         &st, &err),
	             0, "%s", err.msg);
	cr_assert_eq(st.n_events, 4);
	cr_assert_eq(st.n_allocs, 2);
	cr_assert_eq(st.n_warnings[MP_WARN_UNMATCHED_FREE], 1);
	cr_assert_eq(mp_store_open(&s, out, &err), 0, "%s", err.msg);
	cr_assert_eq(mp_reader_open(s, MP_READ_STACKS, &r), 0);
	cr_assert_eq(mp_reader_next(r, &rec), 1);
	cr_assert_eq(rec->pid, 10);
	cr_assert_eq(rec->stack->n_frames, 2);
	cr_assert_str_eq(rec->stack->frames[0].name, "f");
	cr_assert_str_eq(rec->phase, "fwd");
	cr_assert_eq(mp_reader_next(r, &rec), 1);
	cr_assert_eq(rec->pid, 11);
	cr_assert_str_eq(rec->stack->frames[0].name, "g");
	cr_assert_eq(mp_reader_next(r, &rec), 1);
	cr_assert_eq(rec->ev.size_bytes, 100, "a free takes its size from its alloc");
	mp_reader_close(r);
	mp_store_close(s);
	free(out);
}

/*
 * Stacks of one length that agree at their start, middle and end (what the
 * importer's stack cache samples), phases and APIs changing row by row: each
 * row keeps its own.
 */
Test(import, stacks_alike_at_the_edges_stay_apart)
{
	char text[16384], *at = text, name[8];
	struct mp_import_stats st;
	struct mp_error err;
	const struct memprof_record *rec;
	struct mp_reader *r;
	struct mp_store *s;
	char *out = th_path(dir, "out.db");
	int i;

	at += sprintf(at, "ts_ns,op,id,size,stack,phase,api\n");
	for (i = 0; i < 60; i++)
		at += sprintf(at,
		              "%d,alloc,%d,8,main@a.py:1;aaaaaaaaaaaaaaaa%c%"
		              "cbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
		              "bbbbbbb"
		              "bbbbbbbbbbbbbbbbbb,%s,%s\n",
		              i, i, 'A' + i % 20, 'A' + i % 3, i % 2 ? "fwd" : "bwd",
		              i % 3 ? "cudaMalloc" : "cuMemCreate");
	cr_assert_eq(import_text(text, &st, &err), 0, "%s", err.msg);
	cr_assert_eq(mp_store_open(&s, out, &err), 0, "%s", err.msg);
	cr_assert_eq(mp_reader_open(s, MP_READ_STACKS, &r), 0);
	for (i = 0; i < 60; i++) {
		cr_assert_eq(mp_reader_next(r, &rec), 1);
		cr_assert_eq(rec->stack->n_frames, 2);
		snprintf(name, sizeof(name), "%c%c", 'A' + i % 20, 'A' + i % 3);
		cr_assert(strstr(rec->stack->frames[0].name, name) ==
		                  rec->stack->frames[0].name + 16,
		          "row %d: %s", i, rec->stack->frames[0].name);
		cr_assert_str_eq(rec->phase, i % 2 ? "fwd" : "bwd", "row %d", i);
	}
	mp_reader_close(r);
	mp_store_close(s);
	free(out);
}

Test(import, duplicate_live_id_is_an_error_and_leaves_nothing)
{
	struct mp_import_stats st;
	struct mp_error err;

	cr_assert_eq(import_text("ts_ns,op,id,size\n1,alloc,5,8\n2,alloc,5,8\n", &st, &err),
	             MP_EFORMAT);
	cr_assert(strstr(err.msg, "duplicate id"), "%s", err.msg);
	cr_assert(strstr(err.msg, "in.csv:3"), "%s", err.msg);
	cr_assert_eq(th_count_entries(dir), 1, "only the input remains");
}

Test(import, id_reuse_after_free_is_fine)
{
	struct mp_import_stats st;
	struct mp_error err;

	cr_assert_eq(import_text("ts_ns,op,id,size\n1,alloc,5,8\n2,free,5,\n3,alloc,5,16\n"
	                         "4,reserve,5,2097152\n",
	                         &st, &err),
	             0, "%s", err.msg);
	cr_assert_eq(st.n_allocs, 2);
}

Test(import, bad_stack_names_position)
{
	struct mp_import_stats st;
	struct mp_error err;

	cr_assert_eq(import_text("ts_ns,op,id,size,stack\n1,alloc,1,8,a;;b\n", &st, &err),
	             MP_EFORMAT);
	cr_assert(strstr(err.msg, "in.csv:2:13': stack text: empty frame"), "%s", err.msg);
	cr_assert_eq(th_count_entries(dir), 1);
}

Test(import, unknown_format_is_refused)
{
	struct mp_import_stats st;
	struct mp_error err;

	cr_assert_eq(import_text("\x7f"
	                         "ELF\x02\x01\x01 binary junk",
	                         &st, &err),
	             MP_EFORMAT);
	cr_assert(strstr(err.msg, "unknown trace format"), "%s", err.msg);
	cr_assert_eq(th_count_entries(dir), 1);
}
