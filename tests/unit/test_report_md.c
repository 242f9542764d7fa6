/*
 * tests/unit/test_report_md.c - src/report/report_md.c on traces imported
 * from CSV written here, analysed by analysis/pass as 'memprof report'
 * does: the figures of a trace worked out by hand (tests/cli/analyze.sh
 * explains analyze-segments.csv), stored replay runs built as plain data
 * (latest per pool, baseline, measured or modelled), and hostile strings
 * that must neither break a table nor reach the page as markup.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/pass.h"
#include "helpers.h"
#include "import/import.h"
#include "report/report.h"
#include "store/reader.h"
#include "store/store.h"

static char *dir;

static void setup(void)
{
	dir = th_mkdtemp();
}

static void teardown(void)
{
	th_rmdir(dir);
}

TestSuite(report_md, .init = setup, .fini = teardown);

/* The figures worked out by hand in tests/cli/analyze.sh. */
static const char segments_csv[] =
        "ts_ns,op,id,size,requested,address,device,stream,pid,phase,api,device_free,thread,"
        "stack\n"
        "0,reserve,1,1000,1000,0x1000,0,0,5,,cudaMalloc,,,\n"
        "10,alloc,1,100,90,0x1000,0,7,5,forward,,,,train@train.py:5;fwd@model.py:10\n"
        "20,alloc,2,200,200,0x1064,0,7,5,forward,,,,train@train.py:5;mlp@model.py:20\n"
        "30,alloc,3,300,250,0x1190,0,9,5,backward,,,,train@train.py:5;bwd@model.py:30\n"
        "40,free,2,200,200,0x1064,0,7,5,,,,,\n"
        "50,oom,0,0,500,0x0,0,7,5,,,12345,,\n"
        "60,alloc,4,50,50,0x1064,0,7,5,,,,,train@train.py:5;fwd@model.py:10\n"
        "100,free,1,100,90,0x1000,0,7,5,,,,,\n";

struct md_opts {
	const struct mp_report_runs *runs;
	const char *command_line;
	int top;
	int truncated;
};

/* Import csv, run the analyses of 'memprof report' over it and return the
 * Markdown (malloc'd). */
static char *md_of(const char *csv, const struct md_opts *mo)
{
	char *in = th_path(dir, "in.csv"), *db = th_path(dir, "t.db"), *text = NULL;
	struct mp_import_opts io = {.overwrite = 1, .tool_version = "test"};
	struct mp_import_stats st;
	struct mp_error err;
	struct mp_pass_opts po;
	struct mp_pass *p = calloc(1, sizeof(*p));
	struct mp_analysis a;
	struct mp_report_input ri;
	struct mp_reader *r;
	struct mp_store *s;
	size_t len;
	FILE *out;

	th_write(in, csv);
	cr_assert_eq(mp_import_files((const char *const[]){in}, 1, db, &io, &st, &err), 0, "%s",
	             err.msg);
	cr_assert_eq(mp_store_open(&s, db, &err), 0);
	cr_assert_eq(mp_reader_open(s, MP_READ_STACKS, &r), 0);
	mp_pass_opts_default(&po);
	po.timeline_points = 100;
	cr_assert_eq(mp_pass_init(p, &po), 0);
	cr_assert_eq(mp_pass_attach(p, r), 0);
	cr_assert_eq(mp_reader_run(r), 0);
	memset(&a, 0, sizeof(a));
	a.path = "/some/dir/t.db";
	a.source = "csv";
	a.truncated = mo->truncated;
	a.device = -1;
	a.top = mo->top ? mo->top : 10;
	a.kinds = po.kinds;
	a.at = po.at;
	a.granularity = po.granularity;
	a.churn_window_ns = po.life.churn_window_ns;
	a.idle_min_share = po.life.idle_min_share;
	a.ms = &p->ms;
	a.frag = &p->frag;
	a.attr = &p->attr;
	a.life = &p->life;
	memset(&ri, 0, sizeof(ri));
	ri.a = &a;
	ri.timeline = &p->timeline;
	ri.runs = mo->runs;
	ri.command_line = mo->command_line;
	out = open_memstream(&text, &len);
	cr_assert_not_null(out);
	cr_assert_eq(mp_report_write_md(out, &ri), 0);
	fclose(out);
	mp_reader_close(r);
	mp_store_close(s);
	mp_pass_free(p);
	free(p);
	free(in);
	free(db);
	return text;
}

static void assert_line(const char *md, const char *line)
{
	const char *at = md;
	size_t n = strlen(line);

	while ((at = strstr(at, line)) != NULL) {
		if ((at == md || at[-1] == '\n') && (at[n] == '\n' || at[n] == '\0'))
			return;
		at++;
	}
	cr_assert_fail("no line is exactly:\n%s\nin:\n%s", line, md);
}

/* Pipes in a table row that split cells (not escaped with a backslash). */
static int cells_of(const char *line, size_t len)
{
	int n = 0;

	for (size_t i = 0; i < len; i++) {
		if (line[i] == '\\')
			i++;
		else if (line[i] == '|')
			n++;
	}
	return n;
}

/* Every row of every table has as many cells as its header. */
static void assert_tables_whole(const char *md)
{
	const char *line = md;
	int want = -1;

	while (*line) {
		const char *end = strchr(line, '\n');
		size_t len = end ? (size_t)(end - line) : strlen(line);

		if (len > 0 && line[0] == '|') {
			int n = cells_of(line, len);

			if (want < 0)
				want = n;
			cr_assert_eq(n, want, "a table row with %d cell separators, not %d: %.*s",
			             n, want, (int)len, line);
		} else
			want = -1;
		line += len + (end != NULL);
	}
}

Test(report_md, figures_known_by_hand)
{
	struct md_opts mo = {.command_line = "memprof import -o t.db analyze-segments.csv"};
	char *md = md_of(segments_csv, &mo);

	assert_line(md, "## memprof report: t.db");
	assert_line(md, "8 events over 100 ns, source csv. Made by: memprof import -o t.db "
	                "analyze-segments.csv");
	assert_line(md, "### Device 0");
	assert_line(md, "| live | 600 B | +30 ns (event 4) |");
	assert_line(md, "| requested | 540 B | +30 ns (event 4) |");
	assert_line(md, "| reserved | 1000 B | +0 ns (event 1) |");
	assert_line(md, "**Fragmentation at the live peak**: internal fragmentation 60 B (10.0% of "
	                "live); 400 B free in reserved (free share 0.400 of 1000 B reserved), "
	                "largest hole 300 B, external fragmentation 0.250.");
	assert_line(md, "**OOMs**: 1");
	assert_line(md, "- event 6 at +50 ns: the request was 500 B; 600 B free in reserved, "
	                "largest hole 300 B (fragmentation: it fit in the free bytes, not "
	                "in one hole)");
	assert_line(md, "**Live at the live peak** (event 4, +30 ns): 600 B in 3 blocks");
	assert_line(md, "| 300 B | 50.0% | 1 | bwd (model.py:30) \u2190 train (train.py:5) |");
	assert_line(md, "| 200 B | 33.3% | 1 | mlp (model.py:20) \u2190 train (train.py:5) |");
	assert_line(md, "| 100 B | 16.7% | 1 | fwd (model.py:10) \u2190 train (train.py:5) |");
	assert_line(md, "None: `memprof replay --pool=all` on the trace stores them.");
	/* the default churn window (1 ms) makes blocks 1 and 2 churn; 3 and 4 are leaks */
	assert_line(md, "| leak (never freed) | 300 B | 1 | bwd (model.py:30) \u2190 train "
	                "(train.py:5) | |");
	assert_line(md, "| leak (never freed) | 50 B | 1 | fwd (model.py:10) \u2190 train "
	                "(train.py:5) | |");
	assert_line(md, "| churn (freed at once) | 200 B | 1 | mlp (model.py:20) \u2190 train "
	                "(train.py:5) | mean life 20 ns |");
	assert_line(md,
	            "<details><summary>Device 0: leaks 2 blocks (350 B), churn 2 blocks (300 B), "
	            "idle 1 block (100 B)</summary>");
	cr_assert_null(strstr(md, "### Notes"), "no notes expected:\n%s", md);
	assert_tables_whole(md);
	free(md);
}

Test(report_md, top_truncates_tables)
{
	struct md_opts mo = {.top = 2};
	char *md = md_of(segments_csv, &mo);

	assert_line(md, "| | | | and 1 more call sites |");
	cr_assert_null(strstr(md, "| 100 B | 16.7% |"), "%s", md);
	assert_tables_whole(md);
	free(md);
}

Test(report_md, notes_truncated_and_address_model)
{
	struct md_opts mo = {.truncated = 1};
	char *md = md_of("ts_ns,op,id,size,address,device\n"
	                 "0,alloc,1,1000,0x2000,1\n"
	                 "5,alloc,2,1000,0x3000,1\n",
	                 &mo);

	assert_line(md, "2 events over 5 ns, source csv, **truncated**.");
	assert_line(md, "### Device 1");
	assert_line(md, "| reserved | unknown | no segment-level events |");
	assert_line(md, "**OOMs**: none.");
	assert_line(md, "### Notes");
	assert_line(md, "- the trace is marked truncated: recording stopped early");
	cr_assert_not_null(strstr(md, "modelled from block addresses"), "%s", md);
	assert_tables_whole(md);
	free(md);
}

#define M(n, v, u, meas)                                                                           \
	{                                                                                          \
		n, v, u, meas                                                                      \
	}

Test(report_md, stored_runs_latest_per_pool)
{
	const struct mp_report_metric caching_old[] = {
	        M("peak_reserved_bytes", 4096, "bytes", 0),
	        M("lower_bound_bytes", 600, "bytes", 0),
	};
	const struct mp_report_metric caching[] = {
	        M("peak_reserved_bytes", 2048, "bytes", 0),
	        M("lower_bound_bytes", 600, "bytes", 0),
	        M("ratio_to_lower_bound", 2048.0 / 600, "ratio", 0),
	        M("backend_ns", 1500, "ns", 1),
	        M("ooms", 0, "count", 0),
	};
	const struct mp_report_metric planned[] = {
	        M("peak_reserved_bytes", 1024, "bytes", 0),
	        M("lower_bound_bytes", 600, "bytes", 0),
	        M("ratio_to_lower_bound", 1024.0 / 600, "ratio", 0),
	        M("saved_bytes", 1024, "bytes", 0),
	        M("backend_ns", 2500000, "ns", 0),
	        M("time_saved_ns", -2498500, "ns", 0),
	        M("ooms", 2, "count", 0),
	};
	const struct mp_report_run r[] = {
	        {1, "caching", "sim", "caching", NULL, 0, caching_old, 2},
	        {2, "planned", "sim", "caching", NULL, 0, planned, 7},
	        {3, "caching", "cuda", "caching", NULL, 0, caching, 5},
	        {4, "caching", "sim", "caching", NULL, 0, caching, 5},
	};
	const struct mp_report_runs runs = {r, 4};
	struct md_opts mo = {.runs = &runs};
	char *md = md_of(segments_csv, &mo);

	assert_line(md, "| 0 | caching | cuda | 2.00 KiB | 600 B | 3.413 | (baseline) | 1.5 us "
	                "(measured) | - | 0 |");
	assert_line(md, "| 0 | caching | sim | 2.00 KiB | 600 B | 3.413 | (baseline) | 1.5 us "
	                "(measured) | - | 0 |");
	assert_line(md, "| 0 | planned | sim | 1.00 KiB | 600 B | 1.707 | 1.00 KiB vs caching | "
	                "2.5 ms (modelled) | -2.5 ms (modelled) | 2 |");
	cr_assert_null(strstr(md, "4.00 KiB"), "the older caching run is shown:\n%s", md);
	assert_tables_whole(md);
	free(md);
}

/* Strings a trace may carry that mean something to Markdown or HTML. */
Test(report_md, hostile_strings_escaped)
{
	const struct mp_report_metric m[] = {M("peak_reserved_bytes", 1, "bytes", 0)};
	const struct mp_report_run r[] = {{1, "po|ol<b>", "sim", "ba`se", NULL, 0, m, 1}};
	const struct mp_report_runs runs = {r, 1};
	struct md_opts mo = {.runs = &runs,
	                     .command_line = "memprof import <script>alert(1)</script> a|b"};
	char *md = md_of("ts_ns,op,id,size,phase,stack\n"
	                 "1,alloc,1,100,<img src=x onerror=alert(1)>,"
	                 "\"main@tr|ain.py:1;<script>window.x=1</script>@a.py:2;"
	                 "f|g`h*i_j[k](l)@b.py:3\"\n"
	                 "2,alloc,2,100,,\"a\nb@x.py:3\"\n",
	                 &mo);

	cr_assert_null(strstr(md, "<script"), "%s", md);
	cr_assert_null(strstr(md, "<img"), "%s", md);
	cr_assert_null(strstr(md, "<b>"), "%s", md);
	cr_assert_not_null(strstr(md, "&lt;script&gt;window.x=1&lt;/script&gt;"), "%s", md);
	cr_assert_not_null(strstr(md, "| 100 B | 50.0% | 1 | f\\|g\\`h\\*i\\_j\\[k\\] (b.py:3) "
	                              "\u2190 &lt;script&gt;window.x=1&lt;/script&gt; (a.py:2) "
	                              "\u2190 main (tr\\|ain.py:1) |"),
	                   "%s", md);
	/* the line break inside a frame name stays in its cell */
	cr_assert_not_null(strstr(md, "| 100 B | 50.0% | 1 | a b (x.py:3) |"), "%s", md);
	assert_line(md, "2 events over 1 ns, source csv. Made by: memprof import "
	                "&lt;script&gt;alert(1)&lt;/script&gt; a\\|b");
	assert_line(md, "| 0 | po\\|ol&lt;b&gt; | sim | 1 B | - | - | - | - | - | - |");
	assert_tables_whole(md);
	free(md);
}
