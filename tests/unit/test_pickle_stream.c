/*
 * tests/unit/test_pickle_stream.c - src/import/pickle.c's stream hook: the
 * items of root['device_traces'][i] reach the hook in order whatever the
 * pickler's batching (APPENDS with marks, a lone APPEND), they are released
 * (slots reused: memory does not grow with their number), a later memo
 * reference to one is kept from a file or a pipe (both counted first: a
 * pipe through a temporary copy; the memo keeps only what is fetched again)
 * and refused when nothing could be counted (a pipe with no temporary
 * file), and lists elsewhere are not streamed.  Uncounted, the machine
 * reads a pipe as it parses it: the first entry arrives long before the end
 * of a large input, and strings outlive the window they were read in.
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "import/pickle.h"

/* A pickle being written by hand. */
struct buf {
	unsigned char b[1 << 20];
	size_t n;
};

static void op(struct buf *b, int c)
{
	b->b[b->n++] = (unsigned char)c;
}

static void str(struct buf *b, const char *s)
{
	op(b, 0x8c); /* SHORT_BINUNICODE */
	op(b, (int)strlen(s));
	memcpy(b->b + b->n, s, strlen(s));
	b->n += strlen(s);
}

static void u32(struct buf *b, int c, uint32_t v)
{
	op(b, c);
	for (int i = 0; i < 4; i++)
		op(b, (int)((v >> (8 * i)) & 0xff));
}

/* {'addr': addr, 'size': 7} memoized with MEMOIZE, keys as fresh strings. */
static void entry(struct buf *b, uint32_t addr)
{
	op(b, '}');
	op(b, 0x94);
	op(b, '(');
	str(b, "addr");
	u32(b, 'J', addr);
	str(b, "size");
	op(b, 'K');
	op(b, 7);
	op(b, 'u');
}

struct seen {
	size_t n;
	size_t list[64], item[64];
	int64_t addr[64];
	int fail_at; /* return an error at this call (1-based), 0 never */
};

static int hook(void *ctx, size_t list, size_t item, const struct mp_pk *v, struct mp_error *err)
{
	struct seen *s = ctx;
	int64_t a = -1;

	if (s->fail_at && (int)s->n + 1 == s->fail_at)
		return mp_err(err, MP_EFORMAT, "hook refused item %zu", item);
	cr_assert(mp_pk_int(mp_pk_get(v, "addr"), &a));
	if (s->n < 64) {
		s->list[s->n] = list;
		s->item[s->n] = item;
		s->addr[s->n] = a;
	}
	s->n++;
	return 0;
}

/* A stream over a buffer that cannot seek, like a pipe. */
struct pipe_src {
	const unsigned char *b;
	size_t n, at;
};

static ssize_t pipe_read(void *cookie, char *out, size_t size)
{
	struct pipe_src *p = cookie;
	size_t k = p->n - p->at < size ? p->n - p->at : size;

	memcpy(out, p->b + p->at, k);
	p->at += k;
	return (ssize_t)k;
}

static FILE *pipe_open(struct pipe_src *p, const struct buf *b)
{
	FILE *f;

	*p = (struct pipe_src){b->b, b->n, 0};
	f = fopencookie(p, "rb", (cookie_io_functions_t){.read = pipe_read});
	cr_assert_not_null(f);
	return f;
}

/* Where a test's pickle is read from. */
enum from {
	FROM_FILE,    /* fmemopen: it seeks, so it is counted first */
	FROM_PIPE,    /* counted through a temporary copy */
	FROM_PIPE_AS_IS, /* no temporary file can be made: not counted */
};

/* $TMPDIR where no file can be made, while from is FROM_PIPE_AS_IS. */
static void no_temp_dir(enum from from, int on)
{
	if (from != FROM_PIPE_AS_IS)
		return;
	if (on)
		setenv("TMPDIR", "/nonexistent/memprof-test", 1);
	else
		unsetenv("TMPDIR");
}

/* Load b from a file or a pipe; *held is the memo entries left at the end. */
static int load_from(struct buf *b, struct seen *s, struct mp_pickle **doc, struct mp_error *err,
                     enum from from, size_t *held)
{
	struct mp_pickle_stream st = {.item = hook, .ctx = s};
	struct pipe_src src;
	FILE *f = from != FROM_FILE ? pipe_open(&src, b) : fmemopen(b->b, b->n, "rb");
	int rc;

	cr_assert_not_null(f);
	memset(err, 0, sizeof(*err));
	no_temp_dir(from, 1);
	rc = mp_pickle_load_stream(doc, f, "t.pkl", s ? &st : NULL, err);
	no_temp_dir(from, 0);
	fclose(f);
	if (s && rc == 0)
		cr_assert_eq(st.input_bytes, b->n);
	if (held)
		*held = st.memo_held;
	return rc;
}

static int load(struct buf *b, struct seen *s, struct mp_pickle **doc, struct mp_error *err)
{
	return load_from(b, s, doc, err, FROM_FILE, NULL);
}

/* The root's 'again' is the entry dict whose addr is addr. */
static void assert_again_is_entry(const struct mp_pickle *doc, int64_t addr)
{
	const struct mp_pk *again = mp_pk_get(mp_pickle_root(doc), "again");
	int64_t a = 0;

	cr_assert_not_null(again);
	cr_assert_eq(again->type, MP_PK_DICT);
	cr_assert(mp_pk_int(mp_pk_get(again, "addr"), &a));
	cr_assert_eq(a, addr);
}

/* PROTO 4, the root dict, its mark, 'segments': []. */
static void head(struct buf *b)
{
	op(b, 0x80);
	op(b, 4);
	op(b, '}');
	op(b, 0x94);
	op(b, '(');
	str(b, "segments");
	op(b, ']');
	op(b, 0x94);
	str(b, "device_traces");
}

static struct buf b;

Test(pickle_stream, batches_with_marks_reach_the_hook_in_order)
{
	struct seen s = {0};
	struct mp_pickle *doc = NULL;
	struct mp_error err;
	const struct mp_pk *traces;

	b.n = 0;
	head(&b);
	op(&b, ']'); /* the list of lists, batched: two device lists */
	op(&b, 0x94);
	op(&b, '(');
	op(&b, ']'); /* device 0: two batches */
	op(&b, 0x94);
	op(&b, '(');
	entry(&b, 100);
	entry(&b, 101);
	op(&b, 'e');
	op(&b, '(');
	entry(&b, 102);
	op(&b, 'e');
	op(&b, ']'); /* device 1: a lone APPEND */
	op(&b, 0x94);
	entry(&b, 200);
	op(&b, 'a');
	op(&b, 'e'); /* the list of lists */
	op(&b, 'u'); /* the root */
	op(&b, '.');
	cr_assert_eq(load(&b, &s, &doc, &err), 0, "%s", err.msg);
	cr_assert_eq(s.n, 4);
	size_t want_list[] = {0, 0, 0, 1}, want_item[] = {0, 1, 2, 0};
	int64_t want_addr[] = {100, 101, 102, 200};
	for (size_t i = 0; i < 4; i++) {
		cr_assert_eq(s.list[i], want_list[i], "call %zu", i);
		cr_assert_eq(s.item[i], want_item[i], "call %zu", i);
		cr_assert_eq(s.addr[i], want_addr[i], "call %zu", i);
	}
	traces = mp_pk_get(mp_pickle_root(doc), "device_traces");
	cr_assert_eq(traces->n, 2);
	cr_assert_eq(traces->v.items[0]->n, 0, "streamed items are not kept");
	cr_assert_eq(traces->v.items[1]->n, 0);
	mp_pickle_free(doc);

	/* Without a hook the same bytes give the whole tree. */
	cr_assert_eq(load(&b, NULL, &doc, &err), 0, "%s", err.msg);
	traces = mp_pk_get(mp_pickle_root(doc), "device_traces");
	cr_assert_eq(traces->v.items[0]->n, 3);
	cr_assert_eq(traces->v.items[1]->n, 1);
	mp_pickle_free(doc);
}

/* Python pickles a one-item list with a lone APPEND and no mark. */
Test(pickle_stream, one_device_without_a_mark)
{
	struct seen s = {0};
	struct mp_pickle *doc = NULL;
	struct mp_error err;

	b.n = 0;
	head(&b);
	op(&b, ']');
	op(&b, 0x94);
	op(&b, ']');
	op(&b, 0x94);
	op(&b, '(');
	entry(&b, 5);
	entry(&b, 6);
	op(&b, 'e');
	op(&b, 'a'); /* the device list into the list of lists */
	op(&b, 'u');
	op(&b, '.');
	cr_assert_eq(load(&b, &s, &doc, &err), 0, "%s", err.msg);
	cr_assert_eq(s.n, 2);
	cr_assert_eq(s.addr[1], 6);
	cr_assert_eq(s.item[1], 1);
	mp_pickle_free(doc);
}

Test(pickle_stream, released_slots_are_reused)
{
	struct seen s = {0};
	struct mp_pickle *doc = NULL;
	struct mp_error err;
	size_t i;

	b.n = 0;
	head(&b);
	op(&b, ']');
	op(&b, 0x94);
	op(&b, ']');
	op(&b, 0x94);
	for (i = 0; i < 20000; i++) { /* batches of 1000, as Python writes */
		if (i % 1000 == 0)
			op(&b, '(');
		entry(&b, (uint32_t)i);
		if (i % 1000 == 999)
			op(&b, 'e');
	}
	op(&b, 'a');
	op(&b, 'u');
	op(&b, '.');
	cr_assert_eq(load(&b, &s, &doc, &err), 0, "%s", err.msg);
	cr_assert_eq(s.n, 20000);
	/* 20000 dicts of two keys and two ints would be 100000 values */
	cr_assert_lt(mp_pickle_n_slots(doc), 10000, "%zu slots", mp_pickle_n_slots(doc));
	mp_pickle_free(doc);

	cr_assert_eq(load(&b, NULL, &doc, &err), 0, "%s", err.msg);
	cr_assert_geq(mp_pickle_n_slots(doc), 100000);
	mp_pickle_free(doc);
}

/* From a pipe the entry is released before the reference is seen; a file
 * is counted first, so the entry the reference names is kept. */
Test(pickle_stream, a_memo_reference_to_a_released_item_is_refused_only_when_not_counted)
{
	struct seen s = {0};
	struct mp_pickle *doc = NULL;
	struct mp_error err;

	b.n = 0;
	head(&b);
	op(&b, ']'); /* memo 2 */
	op(&b, 0x94);
	op(&b, ']'); /* memo 3 */
	op(&b, 0x94);
	entry(&b, 1); /* memo 4 */
	op(&b, 'a');
	op(&b, 'a');
	str(&b, "again");
	size_t at = b.n;
	op(&b, 'h'); /* BINGET 4: the released entry */
	op(&b, 4);
	op(&b, 'u');
	op(&b, '.');
	cr_assert_eq(load_from(&b, &s, &doc, &err, FROM_PIPE_AS_IS, NULL), MP_EFORMAT);
	char want[160];
	snprintf(want, sizeof(want),
	         "unsupported pickle 't.pkl' at byte %zu: memo reference 4 names a trace entry "
	         "already read and released",
	         at);
	cr_assert_str_eq(err.msg, want);
	cr_assert_null(doc);

	for (enum from from = FROM_FILE; from <= FROM_PIPE; from++) {
		memset(&s, 0, sizeof(s));
		cr_assert_eq(load_from(&b, &s, &doc, &err, from, NULL), 0, "%s", err.msg);
		cr_assert_eq(s.n, 1);
		assert_again_is_entry(doc, 1);
		mp_pickle_free(doc);
	}
}

Test(pickle_stream, lists_elsewhere_are_not_streamed)
{
	struct seen s = {0};
	struct mp_pickle *doc = NULL;
	struct mp_error err;
	const struct mp_pk *inner;

	b.n = 0;
	op(&b, 0x80);
	op(&b, 4);
	op(&b, '}'); /* {'x': {'device_traces': [[entry]]}} */
	str(&b, "x");
	op(&b, '}');
	str(&b, "device_traces");
	op(&b, ']');
	op(&b, ']');
	entry(&b, 9);
	op(&b, 'a');
	op(&b, 'a');
	op(&b, 's');
	op(&b, 's');
	op(&b, '.');
	cr_assert_eq(load(&b, &s, &doc, &err), 0, "%s", err.msg);
	cr_assert_eq(s.n, 0);
	inner = mp_pk_get(mp_pk_get(mp_pickle_root(doc), "x"), "device_traces");
	cr_assert_eq(inner->v.items[0]->n, 1);
	mp_pickle_free(doc);
}

Test(pickle_stream, a_hook_error_stops_the_load)
{
	struct seen s = {.fail_at = 2};
	struct mp_pickle *doc = NULL;
	struct mp_error err;

	b.n = 0;
	head(&b);
	op(&b, ']');
	op(&b, ']');
	op(&b, '(');
	entry(&b, 1);
	entry(&b, 2);
	op(&b, 'e');
	op(&b, 'a');
	op(&b, 'u');
	op(&b, '.');
	cr_assert_eq(load(&b, &s, &doc, &err), MP_EFORMAT);
	cr_assert_str_eq(err.msg, "hook refused item 1");
	cr_assert_null(doc);
}

/* A dense memo is an array, an index far past it a map: both are found. */
Test(pickle_stream, far_memo_indexes)
{
	struct mp_pickle *doc = NULL;
	struct mp_error err;
	int64_t v = 0;
	const struct mp_pk *r;

	b.n = 0;
	op(&b, 0x80);
	op(&b, 4);
	op(&b, '(');
	op(&b, 'K');
	op(&b, 42);
	u32(&b, 'r', 4000000000u); /* LONG_BINPUT far away */
	op(&b, 'K');
	op(&b, 43);
	op(&b, 0x94); /* MEMOIZE: index 1 (one entry so far) */
	u32(&b, 'j', 4000000000u);
	op(&b, 'h');
	op(&b, 1);
	op(&b, 'l');
	op(&b, '.');
	cr_assert_eq(load(&b, NULL, &doc, &err), 0, "%s", err.msg);
	r = mp_pickle_root(doc);
	cr_assert_eq(r->n, 4);
	cr_assert(mp_pk_int(r->v.items[2], &v));
	cr_assert_eq(v, 42);
	cr_assert(mp_pk_int(r->v.items[3], &v));
	cr_assert_eq(v, 43);
	mp_pickle_free(doc);
}

/* An entry reachable twice (DUP, or the memo before it is appended) is
 * handed over each time and never released while reachable. */
Test(pickle_stream, entries_reachable_twice_are_kept)
{
	struct seen s = {0};
	struct mp_pickle *doc = NULL;
	struct mp_error err;

	b.n = 0;
	head(&b);
	op(&b, ']'); /* memo 2 */
	op(&b, 0x94);
	op(&b, ']'); /* memo 3 */
	op(&b, 0x94);
	op(&b, '(');
	entry(&b, 1);
	op(&b, '2');  /* DUP */
	entry(&b, 2); /* memo 5 (4 is the first entry) */
	op(&b, 'h');  /* BINGET 5 */
	op(&b, 5);
	op(&b, 'e');
	op(&b, '(');
	entry(&b, 3);
	op(&b, 'e');
	op(&b, 'a');
	op(&b, 'u');
	op(&b, '.');
	cr_assert_eq(load(&b, &s, &doc, &err), 0, "%s", err.msg);
	cr_assert_eq(s.n, 5);
	int64_t want[] = {1, 1, 2, 2, 3};
	for (size_t i = 0; i < 5; i++) {
		cr_assert_eq(s.addr[i], want[i], "call %zu", i);
		cr_assert_eq(s.item[i], i);
	}
	mp_pickle_free(doc);
}

/* --- an input read through a FILE that counts the bytes it has handed over --------- */

/* The input: segments, each served rep times, generated as it is read. */
struct seg {
	const unsigned char *b;
	size_t n, rep;
};

struct source {
	struct seg seg[4];
	size_t n_seg, at_seg, at_rep, at_byte;
	size_t delivered; /* bytes handed to the reader so far */
};

static ssize_t source_read(void *cookie, char *out, size_t size)
{
	struct source *s = cookie;
	size_t done = 0;

	while (done < size && s->at_seg < s->n_seg) {
		const struct seg *g = &s->seg[s->at_seg];
		size_t k = g->n - s->at_byte < size - done ? g->n - s->at_byte : size - done;

		memcpy(out + done, g->b + s->at_byte, k);
		done += k;
		if ((s->at_byte += k) == g->n) {
			s->at_byte = 0;
			if (++s->at_rep == g->rep) {
				s->at_rep = 0;
				s->at_seg++;
			}
		}
	}
	s->delivered += done;
	return (ssize_t)done;
}

static size_t source_size(const struct source *s)
{
	size_t n = 0;

	for (size_t i = 0; i < s->n_seg; i++)
		n += s->seg[i].n * s->seg[i].rep;
	return n;
}

static FILE *source_open(struct source *s)
{
	FILE *f = fopencookie(s, "rb", (cookie_io_functions_t){.read = source_read});

	cr_assert_not_null(f);
	return f;
}

struct lead {
	struct source *src;
	size_t n, first_delivered; /* bytes handed to the reader at the first entry */
};

static int lead_hook(void *ctx, size_t list, size_t item, const struct mp_pk *v,
                     struct mp_error *err)
{
	struct lead *l = ctx;
	int64_t a = -1;

	(void)list;
	(void)err;
	cr_assert(mp_pk_int(mp_pk_get(v, "addr"), &a));
	cr_assert_eq(a, (int64_t)(item % 1000), "item %zu", item);
	if (l->n++ == 0)
		l->first_delivered = l->src->delivered;
	return 0;
}

/*
 * A snapshot of about 9 MiB read from a pipe that cannot be counted (no
 * temporary file): the machine's own reading hands the first entry to the
 * hook after the first few MiB, not after the whole file.
 */
Test(pickle_stream, the_input_is_read_as_it_is_parsed)
{
	static struct buf batch, tail;
	struct source src = {0};
	struct lead l = {.src = &src};
	struct mp_pickle_stream st = {.ctx = &l};
	struct mp_pickle *doc = NULL;
	struct mp_error err = {0};
	size_t total;
	FILE *f;

	b.n = batch.n = tail.n = 0;
	head(&b);
	op(&b, ']');
	op(&b, 0x94);
	op(&b, ']');
	op(&b, 0x94);
	op(&batch, '(');
	for (uint32_t i = 0; i < 1000; i++)
		entry(&batch, i);
	op(&batch, 'e');
	op(&tail, 'a');
	op(&tail, 'u');
	op(&tail, '.');
	src.seg[0] = (struct seg){b.b, b.n, 1};
	src.seg[1] = (struct seg){batch.b, batch.n, 400};
	src.seg[2] = (struct seg){tail.b, tail.n, 1};
	src.n_seg = 3;
	total = source_size(&src);
	cr_assert_gt(total, 8u << 20);
	st.item = lead_hook;
	f = source_open(&src);
	no_temp_dir(FROM_PIPE_AS_IS, 1);
	cr_assert_eq(mp_pickle_load_stream(&doc, f, "t.pkl", &st, &err), 0, "%s", err.msg);
	no_temp_dir(FROM_PIPE_AS_IS, 0);
	fclose(f);
	cr_assert_eq(l.n, 400000);
	cr_assert_eq(st.input_bytes, total);
	cr_assert_eq(mp_pickle_size(doc), total);
	cr_assert_lt(l.first_delivered, 3u << 20, "%zu of %zu bytes read before the first entry",
	             l.first_delivered, total);
	mp_pickle_free(doc);
}

/* Strings are the reader's own: one longer than the window, and one
 * memoized early and fetched again megabytes later, read back whole. */
Test(pickle_stream, strings_outlive_the_window)
{
	static struct buf pre, fill, post;
	static const char pattern[] = "0123456789abcdef";
	struct source src = {0};
	struct mp_pickle *doc = NULL;
	struct mp_error err = {0};
	const struct mp_pk *r, *big, *again;
	size_t len = 16 * 200000; /* 3.05 MiB */
	FILE *f;

	pre.n = fill.n = post.n = 0;
	op(&pre, 0x80);
	op(&pre, 4);
	op(&pre, '}');
	op(&pre, '(');
	str(&pre, "name");
	str(&pre, "hello"); /* memo 0 */
	op(&pre, 0x94);
	str(&pre, "big");
	u32(&pre, 'X', (uint32_t)len); /* BINUNICODE: its bytes follow */
	memcpy(fill.b, pattern, 16);
	fill.n = 16;
	str(&post, "again");
	op(&post, 'h'); /* BINGET 0 */
	op(&post, 0);
	op(&post, 'u');
	op(&post, '.');
	src.seg[0] = (struct seg){pre.b, pre.n, 1};
	src.seg[1] = (struct seg){fill.b, fill.n, len / 16};
	src.seg[2] = (struct seg){post.b, post.n, 1};
	src.n_seg = 3;
	f = source_open(&src);
	cr_assert_eq(mp_pickle_load(&doc, f, "t.pkl", &err), 0, "%s", err.msg);
	fclose(f);
	r = mp_pickle_root(doc);
	big = mp_pk_get(r, "big");
	again = mp_pk_get(r, "again");
	cr_assert_not_null(big);
	cr_assert_eq(big->n, len);
	for (size_t i = 0; i < len; i += 16)
		cr_assert_eq(memcmp(big->v.s + i, pattern, 16), 0, "byte %zu", i);
	cr_assert(mp_pk_str_is(again, "hello"));
	cr_assert(mp_pk_str_is(mp_pk_get(r, "name"), "hello"));
	mp_pickle_free(doc);
}

/* A string cut short by the end of a file read in chunks is refused as one
 * in a buffer is, naming what was there, without allocating its length. */
Test(pickle_stream, a_string_past_the_end_of_a_file)
{
	static struct buf pre, fill;
	struct source src = {0};
	struct mp_pickle *doc = NULL;
	struct mp_error err = {0};
	FILE *f;

	pre.n = fill.n = 0;
	op(&pre, 0x80);
	op(&pre, 4);
	op(&pre, 0x8d); /* BINUNICODE8 of 2^62 bytes */
	for (int i = 0; i < 7; i++)
		op(&pre, 0);
	op(&pre, 0x40);
	memset(fill.b, 'x', 1000);
	fill.n = 1000;
	src.seg[0] = (struct seg){pre.b, pre.n, 1};
	src.seg[1] = (struct seg){fill.b, fill.n, 2500}; /* 2.4 MiB, past the window */
	src.n_seg = 2;
	f = source_open(&src);
	cr_assert_eq(mp_pickle_load(&doc, f, "t.pkl", &err), MP_EFORMAT);
	fclose(f);
	cr_assert_str_eq(err.msg, "invalid pickle 't.pkl' at byte 2: a string of "
	                          "4611686018427387904 bytes but only 2500000 bytes left");
	cr_assert_null(doc);
}

/* Retires each entry's frames list with the entry's addr as its tag, and
 * notes the tag of a list already retired. */
static int retiring_hook(void *ctx, size_t list, size_t item, const struct mp_pk *v,
                         struct mp_error *err)
{
	int64_t *seen_tag = ctx, a = -1;
	struct mp_pk *frames = (struct mp_pk *)mp_pk_get(v, "frames");

	(void)list;
	(void)item;
	(void)err;
	cr_assert(mp_pk_int(mp_pk_get(v, "addr"), &a));
	cr_assert_not_null(frames);
	if (frames->type == MP_PK_RETIRED)
		*seen_tag = frames->v.i;
	else
		mp_pk_retire(frames, a);
	return 0;
}

/* Two entries sharing one frames list (the second by BINGET 5), then tail. */
static void shared_frames(struct buf *x, void (*tail)(struct buf *))
{
	x->n = 0;
	head(x);
	op(x, ']'); /* memo 2 */
	op(x, 0x94);
	op(x, ']'); /* memo 3 */
	op(x, 0x94);
	op(x, '}'); /* memo 4: the first entry */
	op(x, 0x94);
	op(x, '(');
	str(x, "addr");
	u32(x, 'J', 1);
	str(x, "frames");
	op(x, ']'); /* memo 5: its frames */
	op(x, 0x94);
	str(x, "f1");
	op(x, 'a');
	op(x, 'u');
	op(x, 'a');
	op(x, '}'); /* memo 6: the second entry, the same frames */
	op(x, 0x94);
	op(x, '(');
	str(x, "addr");
	u32(x, 'J', 2);
	str(x, "frames");
	op(x, 'h');
	op(x, 5);
	op(x, 'u');
	op(x, 'a');
	op(x, 'a'); /* the device's list into device_traces */
	tail(x);
}

static void keep_it(struct buf *x)
{
	str(x, "again");
	op(x, 'h');
	op(x, 5);
	op(x, 'u');
	op(x, '.');
}

static void append_to_it(struct buf *x)
{
	op(x, 'h');
	op(x, 5);
	op(x, 'K');
	op(x, 9);
	op(x, 'a');
}

Test(pickle_stream, a_retired_list_gives_back_its_tag_and_refuses_items)
{
	int64_t tag = 0;
	struct mp_pickle_stream st = {.item = retiring_hook, .ctx = &tag};
	struct mp_pickle *doc = NULL;
	struct mp_error err = {0};
	const struct mp_pk *again;
	FILE *f;

	shared_frames(&b, keep_it);
	cr_assert_not_null(f = fmemopen(b.b, b.n, "rb"));
	cr_assert_eq(mp_pickle_load_stream(&doc, f, "t.pkl", &st, &err), 0, "%s", err.msg);
	fclose(f);
	cr_assert_eq(tag, 1, "the second entry's frames are the first's, retired with tag 1");
	again = mp_pk_get(mp_pickle_root(doc), "again");
	cr_assert_not_null(again);
	cr_assert_eq(again->type, MP_PK_RETIRED);
	cr_assert_eq(again->v.i, 1);
	cr_assert_eq(again->n, 0);
	mp_pickle_free(doc);

	doc = NULL;
	shared_frames(&b, append_to_it);
	cr_assert_not_null(f = fmemopen(b.b, b.n, "rb"));
	cr_assert_eq(mp_pickle_load_stream(&doc, f, "t.pkl", &st, &err), MP_EFORMAT);
	fclose(f);
	cr_assert(strstr(err.msg, "APPEND"), "%s", err.msg);
	cr_assert_null(doc);
}

Test(pickle_stream, an_entry_memoized_twice_is_kept)
{
	struct seen s = {0};
	struct mp_pickle *doc = NULL;
	struct mp_error err;

	b.n = 0;
	head(&b);
	op(&b, ']'); /* memo 2 */
	op(&b, 0x94);
	op(&b, ']'); /* memo 3 */
	op(&b, 0x94);
	entry(&b, 7); /* memo 4 */
	op(&b, 'q');  /* BINPUT 9: the same entry again */
	op(&b, 9);
	op(&b, 'a');
	op(&b, 'a');
	str(&b, "again");
	op(&b, 'h'); /* BINGET 4: the first index still names it */
	op(&b, 4);
	op(&b, 'u');
	op(&b, '.');
	cr_assert_eq(load(&b, &s, &doc, &err), 0, "%s", err.msg);
	cr_assert_eq(s.n, 1);
	assert_again_is_entry(doc, 7);
	mp_pickle_free(doc);
}

/* An index stored ahead of the array, which then grows over it: still found. */
Test(pickle_stream, a_far_index_the_array_grows_over)
{
	struct mp_pickle *doc = NULL;
	struct mp_error err;
	int64_t v = 0;
	const struct mp_pk *r;

	b.n = 0;
	op(&b, 0x80);
	op(&b, 4);
	op(&b, '(');
	op(&b, 'K');
	op(&b, 42);
	u32(&b, 'r', 6000);              /* LONG_BINPUT: past the array of one entry */
	for (int i = 0; i < 5000; i++) { /* MEMOIZE 1 .. 5000: the array past 6000 */
		op(&b, 'N');
		op(&b, 0x94);
		op(&b, '0');
	}
	u32(&b, 'j', 6000); /* LONG_BINGET */
	op(&b, 'l');
	op(&b, '.');
	cr_assert_eq(load(&b, NULL, &doc, &err), 0, "%s", err.msg);
	r = mp_pickle_root(doc);
	cr_assert_eq(r->n, 2);
	cr_assert(mp_pk_int(r->v.items[1], &v));
	cr_assert_eq(v, 42);
	mp_pickle_free(doc);
}

/* Checks that every odd entry's frames are the entry before's, retired with
 * its addr as the tag. */
struct frames_seen {
	size_t n, wrong;
	int64_t last_addr;
};

static int frames_hook(void *ctx, size_t list, size_t item, const struct mp_pk *v,
                       struct mp_error *err)
{
	struct frames_seen *fs = ctx;
	struct mp_pk *frames = (struct mp_pk *)mp_pk_get(v, "frames");
	int64_t a = -1;

	(void)list;
	(void)err;
	cr_assert(mp_pk_int(mp_pk_get(v, "addr"), &a));
	cr_assert_not_null(frames);
	if (a != (int64_t)item || !mp_pk_str_is(mp_pk_get(v, "action"), "alloc"))
		fs->wrong++;
	if (item % 2 == 0 && frames->type == MP_PK_LIST)
		mp_pk_retire(frames, a);
	else if (item % 2 == 0 || frames->type != MP_PK_RETIRED || frames->v.i != fs->last_addr)
		fs->wrong++;
	fs->last_addr = a;
	fs->n++;
	return 0;
}

/*
 * N entries {'addr': i, 'action': 'alloc' (a fresh string, memoized),
 * 'frames': [...]} in batches of 1000; each odd entry's frames are the even
 * one's before it, by LONG_BINGET; every frames list holds frame 4.  Memo 0
 * to 3 are the head's lists.
 */
static void fetched_frames(struct buf *x, size_t n)
{
	uint32_t memo = 5, frames = 0;

	x->n = 0;
	head(x);
	op(x, ']'); /* memo 2 */
	op(x, 0x94);
	op(x, ']'); /* memo 3 */
	op(x, 0x94);
	op(x, '}'); /* memo 4: the frame every frames list holds, as PyTorch shares them */
	op(x, 0x94);
	op(x, '0');
	for (size_t i = 0; i < n; i++) {
		if (i % 1000 == 0)
			op(x, '(');
		op(x, '}');
		op(x, 0x94);
		memo++;
		op(x, '(');
		str(x, "addr");
		u32(x, 'J', (uint32_t)i);
		str(x, "action");
		str(x, "alloc");
		op(x, 0x94);
		memo++;
		str(x, "frames");
		if (i % 2 == 0) {
			op(x, ']');
			op(x, 0x94);
			frames = memo++;
			op(x, 'h');
			op(x, 4);
			op(x, 'a');
		} else {
			u32(x, 'j', frames);
		}
		op(x, 'u');
		if (i % 1000 == 999 || i == n - 1)
			op(x, 'e');
	}
	op(x, 'a');
	op(x, 'u');
	op(x, '.');
}

static size_t load_frames(enum from from, struct frames_seen *fs, size_t *slots)
{
	struct mp_pickle_stream st = {.item = frames_hook, .ctx = fs};
	struct mp_pickle *doc = NULL;
	struct mp_error err = {0};
	struct pipe_src src;
	FILE *f = from != FROM_FILE ? pipe_open(&src, &b) : fmemopen(b.b, b.n, "rb");

	cr_assert_not_null(f);
	memset(fs, 0, sizeof(*fs));
	no_temp_dir(from, 1);
	cr_assert_eq(mp_pickle_load_stream(&doc, f, "t.pkl", &st, &err), 0, "%s", err.msg);
	no_temp_dir(from, 0);
	fclose(f);
	*slots = mp_pickle_n_slots(doc);
	mp_pickle_free(doc);
	return st.memo_held;
}

/* A frames list fetched again is freed when its last holder is released,
 * counted or not; counted (a file, or a pipe through its copy) the memo
 * keeps only the entries a fetch is still to come for, and the strings
 * never fetched are released. */
Test(pickle_stream, a_counted_input_keeps_only_the_memo_entries_fetched_again)
{
	struct frames_seen fs;
	size_t slots, held;

	fetched_frames(&b, 20000);
	for (enum from from = FROM_FILE; from <= FROM_PIPE; from++) {
		held = load_frames(from, &fs, &slots);
		cr_assert_eq(fs.n, 20000);
		cr_assert_eq(fs.wrong, 0);
		cr_assert_lt(held, 16, "%zu memo entries held (from %d)", held, (int)from);
		/* 20000 entries of three keys and three values would be 140000 values */
		cr_assert_lt(slots, 10000, "%zu slots (from %d)", slots, (int)from);
	}

	held = load_frames(FROM_PIPE_AS_IS, &fs, &slots);
	cr_assert_eq(fs.n, 20000);
	cr_assert_eq(fs.wrong, 0);
	cr_assert_geq(held, 50000, "every memo entry, a tag or a tombstone: %zu", held);
	cr_assert_geq(slots, 20000, "the memoized strings are kept: %zu slots", slots);
	cr_assert_lt(slots, 28000, "the 10000 retired frames lists are not: %zu slots", slots);
}
