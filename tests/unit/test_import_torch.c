/*
 * tests/unit/test_import_torch.c - src/import/torch.c and torch_window.c:
 * small snapshots (torch_fixtures.h) imported end to end, and every event
 * read back in order: the state at the window start, the trace across two
 * devices, sizes, streams, stacks and meta; then the refusals and the
 * count of final states that contradict the trace.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"
#include "import/import.h"
#include "store/reader.h"
#include "torch_fixtures.h"

#define MiB   (INT64_C(1) << 20)
#define T0_NS INT64_C(1700000000000000000) /* the fixtures' first time_us, in ns */

static char *dir;

static void setup(void)
{
	dir = th_mkdtemp();
}

static void teardown(void)
{
	th_rmdir(dir);
}

TestSuite(import_torch, .init = setup, .fini = teardown);

/* Import the pickle b (format detected) into dir/out.db. */
static int import_bytes(const unsigned char *b, size_t n, struct mp_import_stats *st,
                        struct mp_error *err)
{
	char *in = th_path(dir, "in.pickle"), *out = th_path(dir, "out.db");
	struct mp_import_opts o = {.overwrite = 1, .tool_version = "test"};
	FILE *f = fopen(in, "wb");
	int rc;

	cr_assert_not_null(f);
	cr_assert_eq(fwrite(b, 1, n, f), n);
	cr_assert_eq(fclose(f), 0);
	memset(err, 0, sizeof(*err));
	rc = mp_import_files((const char *const[]){in}, 1, out, &o, st, err);
	free(in);
	free(out);
	return rc;
}

#define IMPORT(fx, st, err) import_bytes(fx, sizeof(fx), st, err)

/* One expected event.  same: the 1-based row whose alloc_id it carries
 * (0: a new id, or none for oom and phases). */
struct want {
	int op, device;
	int64_t t_us; /* after the first entry; -1: time 0 */
	uint64_t address;
	int64_t size, requested;
	uint64_t stream;
	int same;
	const char *api, *phase;
	char stack; /* 'A', 'B' (see make_pickle_fixtures.py) or 0 */
};

static void check_stack(const struct memprof_record *rec, char which, size_t row)
{
	const struct memprof_stack *s = rec->stack;

	if (!which) {
		cr_assert_null(s, "row %zu: a stack", row);
		return;
	}
	cr_assert_not_null(s, "row %zu: no stack", row);
	if (which == 'A') { /* init@model.py:10, main@train.py:3 */
		cr_assert_eq(s->n_frames, 2);
		cr_assert_str_eq(s->frames[0].name, "init");
		cr_assert_str_eq(s->frames[0].file, "model.py");
		cr_assert_eq(s->frames[0].line, 10);
		cr_assert_str_eq(s->frames[1].name, "main");
		return;
	}
	cr_assert_eq(s->n_frames, 3); /* innermost first: the C++ frame */
	cr_assert_str_eq(s->frames[0].name, "c10::cuda::CUDACachingAllocator::malloc");
	cr_assert_str_eq(s->frames[0].file, "??");
	cr_assert_eq(s->frames[0].line, 0);
	cr_assert_str_eq(s->frames[1].name, "forward");
	cr_assert_str_eq(s->frames[1].file, "model.py");
	cr_assert_eq(s->frames[1].line, 42);
	cr_assert_str_eq(s->frames[2].name, "main");
	cr_assert_str_eq(s->frames[2].file, "train.py");
	cr_assert_eq(s->frames[2].line, 7);
}

static void check_events(const struct want *w, size_t n)
{
	char *out = th_path(dir, "out.db");
	const struct memprof_record *rec;
	struct mp_reader *r;
	struct mp_store *s;
	struct mp_error err;
	int64_t ids[64];
	size_t i, j;

	cr_assert(n <= 64);
	cr_assert_eq(mp_store_open(&s, out, &err), 0, "%s", err.msg);
	cr_assert_eq(mp_reader_open(s, MP_READ_STACKS, &r), 0);
	for (i = 0; i < n; i++) {
		const struct memprof_event *e;

		cr_assert_eq(mp_reader_next(r, &rec), 1, "event %zu missing", i + 1);
		e = &rec->ev;
		cr_assert_eq(e->op, w[i].op, "row %zu: op %d, want %d", i + 1, e->op, w[i].op);
		cr_assert_eq(e->device, w[i].device, "row %zu: device", i + 1);
		cr_assert_eq(e->ts_ns, w[i].t_us < 0 ? 0 : T0_NS + 1000 * w[i].t_us,
		             "row %zu: ts %lld", i + 1, (long long)e->ts_ns);
		cr_assert_eq(e->address, w[i].address, "row %zu: address %llx", i + 1,
		             (unsigned long long)e->address);
		cr_assert_eq(e->size_bytes, w[i].size, "row %zu: size %lld, want %lld", i + 1,
		             (long long)e->size_bytes, (long long)w[i].size);
		cr_assert_eq(e->requested_bytes, w[i].requested, "row %zu: requested %lld", i + 1,
		             (long long)e->requested_bytes);
		cr_assert_eq(e->stream, w[i].stream, "row %zu: stream", i + 1);
		cr_assert_eq(rec->pid, 0);
		ids[i] = e->alloc_id;
		if (w[i].same) {
			cr_assert_eq(e->alloc_id, ids[w[i].same - 1], "row %zu: id of row %d",
			             i + 1, w[i].same);
		} else if (w[i].op == MEMPROF_OP_OOM || w[i].op == MEMPROF_OP_PHASE_BEGIN ||
		           w[i].op == MEMPROF_OP_PHASE_END) {
			cr_assert_eq(e->alloc_id, 0, "row %zu", i + 1);
		} else {
			cr_assert_gt(e->alloc_id, 0, "row %zu", i + 1);
			for (j = 0; j < i; j++)
				cr_assert_neq(e->alloc_id, ids[j], "row %zu: id of row %zu", i + 1,
				              j + 1);
		}
		if (w[i].api)
			cr_assert(rec->api && strcmp(rec->api, w[i].api) == 0, "row %zu: api %s",
			          i + 1, rec->api ? rec->api : "(none)");
		else
			cr_assert_null(rec->api, "row %zu: api %s", i + 1, rec->api);
		if (w[i].phase)
			cr_assert(rec->phase && strcmp(rec->phase, w[i].phase) == 0,
			          "row %zu: phase", i + 1);
		check_stack(rec, w[i].stack, i + 1);
	}
	cr_assert_eq(mp_reader_next(r, &rec), 0, "more than %zu events", n);
	mp_reader_close(r);
	mp_store_close(s);
	free(out);
}

static char *meta(const char *key)
{
	char *out = th_path(dir, "out.db"), *v;
	struct mp_store *s;
	struct mp_error err;

	cr_assert_eq(mp_store_open(&s, out, &err), 0, "%s", err.msg);
	v = mp_store_get_meta(s, key);
	mp_store_close(s);
	free(out);
	return v;
}

static void check_meta(const char *key, const char *want)
{
	char *v = meta(key);

	if (!want) {
		cr_assert_null(v, "meta %s = '%s'", key, v);
		return;
	}
	cr_assert_not_null(v, "no meta %s", key);
	cr_assert_str_eq(v, want);
	free(v);
}

static void check_devices(int32_t a, int32_t b)
{
	char *out = th_path(dir, "out.db");
	struct memprof_device *d;
	struct mp_store *s;
	struct mp_error err;
	size_t n;

	cr_assert_eq(mp_store_open(&s, out, &err), 0, "%s", err.msg);
	cr_assert_eq(mp_store_devices(s, &d, &n), 0);
	cr_assert_eq(n, 2);
	cr_assert_eq(d[0].ordinal, a);
	cr_assert_eq(d[1].ordinal, b);
	mp_store_free_devices(d, n);
	mp_store_close(s);
	free(out);
}

enum {
	ALLOC = MEMPROF_OP_ALLOC,
	FREE = MEMPROF_OP_FREE,
	PRE = MEMPROF_OP_PREEXISTING,
	RESERVE = MEMPROF_OP_RESERVE,
	RELEASE = MEMPROF_OP_RELEASE,
	MAP = MEMPROF_OP_MAP,
	UNMAP = MEMPROF_OP_UNMAP,
	OOM = MEMPROF_OP_OOM,
	BEGIN = MEMPROF_OP_PHASE_BEGIN,
	END = MEMPROF_OP_PHASE_END,
	FREQ = MEMPROF_OP_FREE_REQUESTED,
};

#define U64_STREAM ((UINT64_C(1) << 63) + 5)

/* make_pickle_fixtures.py two_devices(), worked out by hand. */
static const struct want two_devices[] = {
        /* the state at the window start, at its first time: device 0 */
        {RESERVE, 0, 0, 0x40000000, 2 * MiB, 2 * MiB, 0, 0, "cudaMalloc", NULL, 0},
        {RESERVE, 0, 0, 0x10000000, 2 * MiB, 2 * MiB, 0, 0, "cudaMalloc", NULL, 0},
        {PRE, 0, 0, 0x10100000, 1024, 700, 0, 0, NULL, NULL, 0}, /* pending: 700 rounded */
        {FREQ, 0, 0, 0x10100000, 1024, 700, 0, 3, NULL, NULL, 0},
        {PRE, 0, 0, 0x10200000, 5120, 5000, 0, 0, NULL, NULL, 0},
        {PRE, 0, 0, 0x10000000, 1024, 1000, 0, 0, NULL, NULL, 'A'}, /* final state only */
        /* the window, in time order across the devices */
        {BEGIN, 0, 0, 0, 0, 0, 0, 0, NULL, "fwd", 0},
        {ALLOC, 0, 0, 0x10000400, 512, 100, 0, 0, NULL, NULL, 'B'}, /* final size */
        {FREE, 0, 1, 0x10100000, 1024, 700, 0, 3, NULL, NULL, 0},
        {FREQ, 0, 2, 0x10200000, 5120, 5000, 0, 5, NULL, NULL, 0},
        {FREE, 0, 3, 0x10200000, 5120, 5000, 0, 5, NULL, NULL, 0},
        {RESERVE, 1, 3, 0x20000000, 2 * MiB, 2 * MiB, U64_STREAM, 0, "cudaMalloc", NULL, 0},
        {RESERVE, 0, 4, 0x30000000, 20 * MiB, 20 * MiB, 7, 0, "cudaMalloc", NULL, 0},
        {ALLOC, 1, 4, 0x20000000, 512, 512, U64_STREAM, 0, NULL, NULL, 0},
        {ALLOC, 0, 5, 0x30000000, 10 * MiB, 10 * MiB, 7, 0, NULL, NULL, 0}, /* rounded */
        {FREQ, 0, 6, 0x30000000, 10 * MiB, 10 * MiB, 7, 15, NULL, NULL, 0},
        {FREE, 0, 7, 0x30000000, 10 * MiB, 10 * MiB, 7, 15, NULL, NULL, 0},
        {RELEASE, 0, 8, 0x30000000, 20 * MiB, 20 * MiB, 7, 13, "cudaFree", NULL, 0},
        {ALLOC, 0, 9, 0x10000600, 4096, 4000, 0, 0, NULL, NULL, 0},
        {END, 0, 9, 0, 0, 0, 0, 0, NULL, "fwd", 0},
        {FREQ, 0, 10, 0x10000600, 4096, 4000, 0, 19, NULL, NULL, 0}, /* pending at the end */
        {RELEASE, 0, 11, 0x40000000, 2 * MiB, 2 * MiB, 0, 1, "cudaFree", NULL, 0},
        {OOM, 0, 12, 0, INT64_C(1) << 40, INT64_C(1) << 40, 0, 0, NULL, NULL, 'B'},
};

static void check_two_devices(const unsigned char *fx, size_t n)
{
	struct mp_import_stats st;
	struct mp_error err;
	int w;

	cr_assert_eq(import_bytes(fx, n, &st, &err), 0, "%s", err.msg);
	cr_assert_eq(st.n_events, 23);
	cr_assert_eq(st.n_allocs, 7);
	for (w = 0; w < MP_WARN_N; w++)
		cr_assert_eq(st.n_warnings[w], w == MP_WARN_SKIPPED_UNKNOWN, "warning %d: %lld", w,
		             (long long)st.n_warnings[w]);
	check_events(two_devices, sizeof(two_devices) / sizeof(two_devices[0]));
	check_devices(0, 1);
	check_meta("allocator_settings",
	           "{\"PYTORCH_CUDA_ALLOC_CONF\":\"max_split_size_mb:64\",\"max_split_size\":-1,"
	           "\"garbage_collection_threshold\":0.5,\"expandable_segments\":false,"
	           "\"roundup_power2_divisions\":{\"1\":0,\"2\":4},"
	           "\"big\":18446744073709551615}");
	check_meta("clock", "unix_epoch_ns (PyTorch time_us: microseconds)");
	check_meta("source", "torch");
	check_meta("lossy", "1");
}

Test(import_torch, two_devices_every_event)
{
	check_two_devices(fx_two_devices, sizeof(fx_two_devices));
}

Test(import_torch, two_devices_protocol_2)
{
	check_two_devices(fx_two_devices_p2, sizeof(fx_two_devices_p2));
}

Test(import_torch, expandable_segments_map_and_unmap)
{
	static const struct want w[] = {
	        {MAP, 0, 0, 0x50000000, 4 * MiB, 4 * MiB, 0, 0, "cuMemMap", NULL, 0}, /* 6 - 2 */
	        {PRE, 0, 0, 0x50000000, 4 * MiB, 4 * MiB, 0, 0, NULL, NULL, 0},
	        {MAP, 0, 0, 0x50400000, 2 * MiB, 2 * MiB, 0, 0, "cuMemMap", NULL, 0},
	        {ALLOC, 0, 1, 0x50400000, 1500160, 1500000, 0, 0, NULL, NULL, 'B'},
	        {MAP, 0, 2, 0x50600000, 2 * MiB, 2 * MiB, 0, 0, "cuMemMap", NULL, 0},
	        {ALLOC, 0, 3, 0x50600000, 2 * MiB, 2 * MiB, 0, 0, NULL, NULL, 0},
	        {FREQ, 0, 4, 0x50600000, 2 * MiB, 2 * MiB, 0, 6, NULL, NULL, 0},
	        {FREE, 0, 5, 0x50600000, 2 * MiB, 2 * MiB, 0, 6, NULL, NULL, 0},
	        {UNMAP, 0, 6, 0x50600000, 2 * MiB, 2 * MiB, 0, 0, "cuMemUnmap", NULL, 0},
	};
	struct mp_import_stats st;
	struct mp_error err;

	cr_assert_eq(IMPORT(fx_expandable, &st, &err), 0, "%s", err.msg);
	cr_assert_eq(st.n_warnings[MP_WARN_STATE_MISMATCH], 0);
	check_events(w, sizeof(w) / sizeof(w[0]));
	check_meta("allocator_settings", "{\"expandable_segments\":true}");
}

Test(import_torch, state_only_list_of_segments)
{
	static const struct want w[] = {
	        {RESERVE, 0, -1, 0x70000000, 2 * MiB, 2 * MiB, 0, 0, "cudaMalloc", NULL, 0},
	        {PRE, 0, -1, 0x70000400, 2048, 2048, 0, 0, NULL, NULL, 0}, /* pending first */
	        {FREQ, 0, -1, 0x70000400, 2048, 2048, 0, 2, NULL, NULL, 0},
	        {PRE, 0, -1, 0x70000000, 1024, 1000, 0, 0, NULL, NULL, 'A'},
	        {RESERVE, 2, -1, 0x80000000, 20 * MiB, 20 * MiB, 0, 0, "cudaMalloc", NULL, 0},
	        {PRE, 2, -1, 0x80000000, 10 * MiB, 9 * MiB, 0, 0, NULL, NULL, 'B'},
	};
	struct mp_import_stats st;
	struct mp_error err;

	cr_assert_eq(IMPORT(fx_state_only, &st, &err), 0, "%s", err.msg);
	cr_assert_eq(st.n_events, 6);
	cr_assert_eq(st.n_allocs, 3);
	check_events(w, sizeof(w) / sizeof(w[0]));
	check_devices(0, 2);
	check_meta("allocator_settings", NULL);
}

Test(import_torch, older_free_action)
{
	static const struct want w[] = {
	        {RESERVE, 0, 0, 0x60000000, 2 * MiB, 2 * MiB, 0, 0, "cudaMalloc", NULL, 0},
	        {PRE, 0, 0, 0x60001000, 512, 512, 0, 0, NULL, NULL, 0},
	        {ALLOC, 0, 0, 0x60000000, 2048, 2000, 0, 0, NULL, NULL, 0},
	        {FREE, 0, 1, 0x60000000, 2048, 2000, 0, 3, NULL, NULL, 0},
	        {FREE, 0, 2, 0x60001000, 512, 512, 0, 2, NULL, NULL, 0},
	};
	struct mp_import_stats st;
	struct mp_error err;
	int k;

	cr_assert_eq(IMPORT(fx_old_free, &st, &err), 0, "%s", err.msg);
	for (k = 0; k < MP_WARN_N; k++)
		cr_assert_eq(st.n_warnings[k], 0);
	check_events(w, sizeof(w) / sizeof(w[0]));
	check_meta("allocator_settings", NULL);
	check_meta("lossy", "0");
}

Test(import_torch, final_state_contradicting_the_trace)
{
	struct mp_import_stats st;
	struct mp_error err;
	char *warn, want[256];

	cr_assert_eq(IMPORT(fx_mismatch, &st, &err), 0, "%s", err.msg);
	/* a block freed yet live at the end, one left live but absent, one
	 * allocated but pending at the end, a segment released twice */
	cr_assert_eq(st.n_warnings[MP_WARN_STATE_MISMATCH], 4, "%lld",
	             (long long)st.n_warnings[MP_WARN_STATE_MISMATCH]);
	cr_assert_eq(st.n_warnings[MP_WARN_UNMATCHED_RELEASE], 1, "the second release");
	snprintf(want, sizeof(want), "4 %s", mp_import_warning_text(MP_WARN_STATE_MISMATCH));
	warn = meta("import_warnings");
	cr_assert_not_null(warn);
	cr_assert(strstr(warn, want), "%s", warn);
	free(warn);
	check_meta("lossy", "1");
}

/* allocator_settings: a list that holds itself 1000 times is written as
 * JSON of a bounded size (not 1000^16 values), fast. */
Test(import_torch, settings_that_hold_themselves_stay_small)
{
	static const unsigned char head[] = {
	        0x80, 4,    '}', 0x8c, 8,   's', 'e', 'g', 'm', 'e', 'n', 't', 's', ']',
	        's',  0x8c, 18,  'a',  'l', 'l', 'o', 'c', 'a', 't', 'o', 'r', '_', 's',
	        'e',  't',  't', 'i',  'n', 'g', 's', ']', 'q', 0,   '(', 'h', 0};
	unsigned char b[sizeof(head) + 1002];
	struct mp_import_stats st;
	struct mp_error err;
	char *json;

	memcpy(b, head, sizeof(head));
	memset(b + sizeof(head), '2', 999); /* DUP */
	memcpy(b + sizeof(head) + 999, "es.", 3);
	cr_assert_eq(import_bytes(b, sizeof(b), &st, &err), 0, "%s", err.msg);
	json = meta("allocator_settings");
	cr_assert_not_null(json);
	cr_assert_eq(strncmp(json, "[[[[", 4), 0, "%.40s", json);
	cr_assert_lt(strlen(json), 100000, "%zu bytes of JSON", strlen(json));
	free(json);
}

static void refused(const unsigned char *fx, size_t n, const char *what)
{
	struct mp_import_stats st;
	struct mp_error err;
	char *in = th_path(dir, "in.pickle"), want[512];

	snprintf(want, sizeof(want), "invalid PyTorch snapshot '%s': %s", in, what);
	cr_assert_eq(import_bytes(fx, n, &st, &err), MP_EFORMAT, "imported; want '%s'", what);
	cr_assert_str_eq(err.msg, want);
	cr_assert_eq(th_count_entries(dir), 1, "only the input is left");
	free(in);
}

#define EXPECT_REFUSED(fx, what) refused(fx, sizeof(fx), what)

Test(import_torch, malformed_snapshots_are_refused)
{
	EXPECT_REFUSED(fx_err_top_int,
	               "the top level is not a dict with 'segments' (is it a memory "
	               "snapshot from torch.cuda.memory._dump_snapshot?)");
	EXPECT_REFUSED(fx_err_top_dict,
	               "the top level is not a dict with 'segments' (is it a memory "
	               "snapshot from torch.cuda.memory._dump_snapshot?)");
	EXPECT_REFUSED(fx_err_segments_int, "'segments' is not a list");
	EXPECT_REFUSED(fx_err_no_addr, "device_traces[0][1] has no 'addr' integer");
	EXPECT_REFUSED(fx_err_neg_size, "device_traces[0][0] has 'size' = -5, out of range");
	EXPECT_REFUSED(fx_err_big_size,
	               "device_traces[0][0] has 'size' = 72057594037927936, out of range");
	EXPECT_REFUSED(fx_err_entry_list, "device_traces[1][1] is not a dict");
	EXPECT_REFUSED(fx_err_segment_str, "segments[0] is not a dict");
	EXPECT_REFUSED(fx_err_block_size,
	               "segments[0].blocks[0] has 'size' = 1152921504606846976, out of range");
}

Test(import_torch, code_in_the_pickle_is_refused)
{
	/* protocol 2, GLOBAL os.system */
	static const unsigned char fx[] = {0x80, 2,   'c', 'o', 's',  '\n', 's', 'y',
	                                   's',  't', 'e', 'm', '\n', 'N',  '.'};
	struct mp_import_stats st;
	struct mp_error err;

	cr_assert_eq(IMPORT(fx, &st, &err), MP_EFORMAT);
	cr_assert(strstr(err.msg, "at byte 2: opcode GLOBAL (0x63) would import or call Python "
	                          "code"),
	          "%s", err.msg);
	cr_assert_eq(th_count_entries(dir), 1);
}
