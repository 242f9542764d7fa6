/*
 * import/pickle.c - the pickle machine for plain data: a stack, a mark
 * stack and a memo, fed by a window of the input read in bounded chunks
 * (strings and bytes are copied out of it).  Nothing is allocated for a
 * length before the bytes it announces have arrived, so memory is bounded
 * by a small multiple of the input read.  With a stream hook the items of
 * root['device_traces'][i] are handed over and released one by one (their
 * slots and strings reused), so they do not accumulate: memory follows what
 * the document keeps, not the file's size.  Must never run code.
 */
#include "import/pickle.h"
#include "import/pickle_fetches.h"
#include "util/intmap.h"
#include "util/array.h"
#include "util/mem_budget.h"
#include "util/pipe_tee.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define VALUES_PER_CHUNK 4096
#define MEMO_PAGE_BITS   12
#define MEMO_PAGE        (1u << MEMO_PAGE_BITS)
#define WINDOW_BYTES     (1u << 20) /* input read at a time */

struct chunk {
	struct chunk *next;
	size_t used;
	struct mp_pk values[VALUES_PER_CHUNK];
};

struct mp_pickle {
	size_t len; /* bytes of input read, up to and including STOP */
	struct mp_pk *root;
	struct chunk *chunks;
	struct mp_pk *free_values; /* released slots, chained through v.items */
};

enum { PIN_MEMO = 1, PIN_DUP = 2 };

/* MEMO_PAGE memo entries; a page goes when its last entry does. */
struct memo_page {
	size_t live; /* entries not 0 */
	uintptr_t v[MEMO_PAGE];
};
#define GOTTEN_UNCOUNTED 255 /* gotten: pushed again too often to count */

/* The running machine. */
struct vm {
	struct mp_pickle *p;
	const char *name;
	struct mp_error *err;
	size_t pos, op_pos; /* next byte; offset of the opcode being run */
	/* The window: input bytes [base, base + n_buf) in buf.  in is NULL when buf
	 * holds the whole input (borrowed, not owned). */
	FILE *in;
	const unsigned char *buf;
	unsigned char *own; /* buf when read from in */
	size_t base, n_buf, cap_buf;
	int eof;
	struct mp_pk **stack;
	size_t n_stack, cap_stack;
	size_t *marks;
	size_t n_marks, cap_marks;
	/* The memo: index -> struct mp_pk *, MEMO_RELEASED for a released item,
	 * MEMO_TAG(tag) for a retired list released with its item, 0 for none.
	 * Picklers number it densely from 0: those indexes are pages of an array
	 * (NULL where none is set), others a map.  n_memo is the next MEMOIZE's
	 * index.  When counted, the first pass (pickle_fetches.c) says how often
	 * each entry is fetched: one never fetched is not kept, and one is
	 * dropped at its last fetch. */
	struct memo_page **memo_dir;
	size_t cap_memo_dir, n_memo_dir, n_memo;
	struct mp_intmap memo_far;
	struct mp_pk_fetches fetches;
	int counted;
	struct mp_pickle_stream *stream;
	struct mp_intmap streamed; /* streamed list -> items handed to the hook */
	uint64_t budget;           /* bytes the process may hold (0: no limit) */
	const char *budget_why;    /* where the budget comes from; NULL: not yet known */
	unsigned ops_to_check;     /* opcodes run before the memory is looked at again */
};

/* Opcodes between two looks at the memory held: at most a few tens of MB
 * of values can be made in between. */
#define MEMORY_CHECK_EVERY (1u << 18)

static int oom(struct vm *m)
{
	return mp_err(m->err, MP_ENOMEM, "out of memory reading pickle '%s' at byte %zu", m->name,
	              m->op_pos);
}

static int bad(struct vm *m, const char *what)
{
	return mp_err(m->err, MP_EFORMAT, "invalid pickle '%s' at byte %zu: %s", m->name, m->op_pos,
	              what);
}

static struct mp_pk *new_value(struct vm *m, enum mp_pk_type type)
{
	struct mp_pickle *p = m->p;
	struct mp_pk *v;

	if (p->free_values) {
		v = p->free_values;
		p->free_values = (struct mp_pk *)v->v.items;
		memset(v, 0, sizeof(*v));
		v->type = type;
		return v;
	}
	if (!p->chunks || p->chunks->used == VALUES_PER_CHUNK) {
		struct chunk *c = malloc(sizeof(*c));

		if (!c)
			return NULL;
		c->next = p->chunks;
		c->used = 0;
		p->chunks = c;
	}
	v = &p->chunks->values[p->chunks->used++];
	memset(v, 0, sizeof(*v));
	v->type = type;
	return v;
}

static int is_container(const struct mp_pk *v)
{
	return v->type == MP_PK_LIST || v->type == MP_PK_TUPLE || v->type == MP_PK_DICT ||
	       v->type == MP_PK_SET;
}

/* Give slot v back (v reachable from nowhere else). */
static void release_value(struct mp_pickle *p, struct mp_pk *v)
{
	if (is_container(v))
		free(v->v.items);
	else if (v->type == MP_PK_STR || v->type == MP_PK_BYTES)
		free((char *)v->v.s);
	v->type = 0; /* mp_pickle_free skips it */
	v->v.items = (struct mp_pk **)p->free_values;
	p->free_values = v;
}

static inline int push(struct vm *m, struct mp_pk *v)
{
	if (v && m->n_stack < m->cap_stack) { /* the usual case */
		m->stack[m->n_stack++] = v;
		return 0;
	}
	if (!v || mp_array_reserve((void **)&m->stack, &m->cap_stack, m->n_stack + 1,
	                           sizeof(*m->stack)) < 0)
		return oom(m);
	m->stack[m->n_stack++] = v;
	return 0;
}

static struct mp_pk *top(struct vm *m)
{
	return m->n_stack ? m->stack[m->n_stack - 1] : NULL;
}

/* Append n values to container c (a dict takes key, value pairs). */
static int append(struct vm *m, struct mp_pk *c, struct mp_pk **vals, size_t n)
{
	size_t have = c->type == MP_PK_DICT ? 2 * c->n : c->n;

	if (mp_array_reserve((void **)&c->v.items, &c->cap, have + n, sizeof(*c->v.items)) < 0)
		return oom(m);
	memcpy(c->v.items + have, vals, n * sizeof(*vals));
	c->n += c->type == MP_PK_DICT ? n / 2 : n;
	return 0;
}

/* Where the values above the topmost mark start (CPython's fence): an
 * opcode other than those that pop the mark never takes a value below it. */
static size_t fence(const struct vm *m)
{
	return m->n_marks ? m->marks[m->n_marks - 1] : 0;
}

/* The values above the topmost mark: *first is their index on the stack. */
static int pop_mark(struct vm *m, size_t *first)
{
	if (!m->n_marks)
		return bad(m, "no MARK before this opcode");
	*first = m->marks[--m->n_marks];
	if (*first > m->n_stack)
		return bad(m, "MARK above the stack");
	return 0;
}

/* The next unread byte, and how many follow it in the window. */
static const unsigned char *at(const struct vm *m)
{
	return m->buf + (m->pos - m->base);
}

static size_t avail(const struct vm *m)
{
	return m->base + m->n_buf - m->pos;
}

/* Read one more chunk into the window, keeping its unread bytes (the window
 * grows only when they fill it).  0, 1 at the end of the input, or an error. */
static int read_more(struct vm *m)
{
	size_t keep = avail(m), k;

	if (!m->in || m->eof)
		return 1;
	if (m->pos > m->base) { /* slide the unread bytes to the front */
		memmove(m->own, at(m), keep);
		m->base = m->pos;
		m->n_buf = keep;
	}
	if (mp_array_reserve((void **)&m->own, &m->cap_buf,
	                     keep + (keep < WINDOW_BYTES ? WINDOW_BYTES : keep), 1) < 0)
		return oom(m);
	m->buf = m->own;
	if (m->base + m->n_buf >= MP_PICKLE_MAX_BYTES)
		return mp_err(
		        m->err, MP_EFORMAT,
		        "input too large '%s': over %d GiB, more than a memory snapshot holds",
		        m->name, (int)(MP_PICKLE_MAX_BYTES >> 30));
	k = fread(m->own + m->n_buf, 1, m->cap_buf - m->n_buf, m->in);
	m->n_buf += k;
	if (k == 0) {
		if (ferror(m->in))
			return mp_err(m->err, MP_EIO, "cannot read '%s': %s", m->name,
			              strerror(errno));
		m->eof = 1;
		return 1;
	}
	return 0;
}

/* Make n bytes readable at at(m): 0, 1 when the input ends first (then
 * avail() says how many it has), or an error.  Reads only what is there, so
 * an absurd n costs the input's actual bytes, not n. */
static int fill_slow(struct vm *m, size_t n)
{
	int rc;

	while (avail(m) < n)
		if ((rc = read_more(m)) != 0)
			return rc;
	return 0;
}

static inline int fill(struct vm *m, size_t n)
{
	return avail(m) >= n ? 0 : fill_slow(m, n);
}

static int need_slow(struct vm *m, size_t n)
{
	int rc = fill_slow(m, n);

	if (rc == 1)
		return mp_err(m->err, MP_EFORMAT,
		              "truncated pickle '%s' at byte %zu: opcode needs %zu more bytes, %zu "
		              "left",
		              m->name, m->op_pos, n, avail(m));
	return rc;
}

/* Make n bytes readable at at(m), or fail naming the opcode that needed them. */
static inline int need(struct vm *m, size_t n)
{
	return avail(m) >= n ? 0 : need_slow(m, n);
}

/* n bytes little-endian (the arguments' widths, 1, 2, 4 and 8, as plain loads). */
static inline uint64_t le(const unsigned char *b, size_t n)
{
	uint64_t v = 0;

	switch (n) {
	case 1:
		return b[0];
	case 2:
		return (uint64_t)b[0] | (uint64_t)b[1] << 8;
	case 4:
		return (uint64_t)b[0] | (uint64_t)b[1] << 8 | (uint64_t)b[2] << 16 |
		       (uint64_t)b[3] << 24;
	}
	while (n--)
		v = (v << 8) | b[n];
	return v;
}

/* An argument of n little-endian bytes. */
static inline int arg(struct vm *m, size_t n, uint64_t *out)
{
	if (need(m, n) < 0)
		return MP_EFORMAT;
	*out = le(at(m), n);
	m->pos += n;
	return 0;
}

static int push_int(struct vm *m, int64_t i)
{
	struct mp_pk *v = new_value(m, MP_PK_INT);

	if (v)
		v->v.i = i;
	return push(m, v);
}

/* LONG1 / LONG4: n bytes of two's complement, little-endian. */
static int push_long(struct vm *m, size_t n)
{
	const unsigned char *b;
	struct mp_pk *v;
	size_t len = n;
	int neg;

	if (need(m, n) < 0)
		return MP_EFORMAT;
	b = at(m);
	m->pos += n;
	if (n == 0)
		return push_int(m, 0);
	neg = b[n - 1] & 0x80;
	while (len > 1 && b[len - 1] == (neg ? 0xff : 0x00) &&
	       ((b[len - 2] & 0x80) != 0) == (neg != 0))
		len--; /* drop redundant sign bytes */
	if (len <= 8) {
		uint64_t u = le(b, len);

		if (neg && len < 8)
			u |= ~0ULL << (8 * len);
		return push_int(m, (int64_t)u);
	}
	if (len == 9 && !neg && b[8] == 0) { /* 2^63 .. 2^64 - 1 */
		if (push_int(m, (int64_t)le(b, 8)) < 0)
			return MP_ENOMEM;
		top(m)->is_u64 = 1;
		return 0;
	}
	v = new_value(m, MP_PK_BIGINT);
	if (v)
		v->n = len;
	return push(m, v);
}

/* Copy the next n bytes out of the input into *out (NUL-terminated, never
 * NULL), as they arrive: a length past the input's end costs only its bytes. */
static int take_bytes(struct vm *m, uint64_t n, char **out)
{
	char *s = NULL;
	size_t cap = 0, got = 0, k;
	int rc = 0;

	if (avail(m) >= n) /* the usual case: all there */
		cap = (size_t)n + 1;
	for (;;) {
		k = avail(m) < n - got ? avail(m) : (size_t)(n - got);
		if (mp_array_reserve((void **)&s, &cap, got + k + 1, 1) < 0 ||
		    (!s && !(s = malloc(cap)))) {
			free(s);
			return oom(m);
		}
		memcpy(s + got, at(m), k);
		got += k;
		m->pos += k;
		if (got == n || (rc = read_more(m)) != 0)
			break;
	}
	if (got < n) {
		free(s);
		return rc < 0 ? rc
		              : mp_err(m->err, MP_EFORMAT,
		                       "invalid pickle '%s' at byte %zu: a string of %llu bytes "
		                       "but "
		                       "only %zu bytes left",
		                       m->name, m->op_pos, (unsigned long long)n, got);
	}
	s[got] = '\0';
	*out = s;
	return 0;
}

static int push_bytes(struct vm *m, enum mp_pk_type type, size_t len_bytes)
{
	uint64_t n;
	struct mp_pk *v;
	char *s = NULL;
	int rc;

	if (arg(m, len_bytes, &n) < 0)
		return MP_EFORMAT;
	if ((rc = take_bytes(m, n, &s)) < 0)
		return rc;
	v = new_value(m, type);
	if (!v) {
		free(s);
		return oom(m);
	}
	v->v.s = s;
	v->n = (size_t)n;
	return push(m, v);
}

#define MEMO_RELEASED ((uintptr_t)1)
/* Values are 8-aligned: a memo entry with low bits 2 is a retired list's tag. */
#define MEMO_TAG(tag)  (((uintptr_t)(tag) << 2) | 2)
#define MEMO_IS_TAG(v) (((v)&3) == 2)
#define MEMO_TAG_OF(v) ((int64_t)((v) >> 2))
#define MAX_MEMO_TAG   (INT64_C(1) << 60)

/* Memo entry idx: the pages', else the map's (an index set far ahead of
 * the others, maybe before the pages reached it). */
static inline uintptr_t memo_at(const struct vm *m, uint64_t idx)
{
	uint64_t pg = idx >> MEMO_PAGE_BITS, v = 0;

	if (pg < m->n_memo_dir && m->memo_dir[pg] && m->memo_dir[pg]->v[idx & (MEMO_PAGE - 1)])
		return m->memo_dir[pg]->v[idx & (MEMO_PAGE - 1)];
	if (!m->memo_far.n)
		return 0;
	return mp_intmap_get(&m->memo_far, idx, &v) ? (uintptr_t)v : 0;
}

/* Set memo entry idx (val not 0): 0 or MP_ENOMEM.  Indexes far past those
 * set so far go to the map, so a hostile one costs no pages. */
static int memo_set(struct vm *m, uint64_t idx, uintptr_t val)
{
	uint64_t pg = idx >> MEMO_PAGE_BITS;
	struct memo_page *page;
	uintptr_t *slot;

	if (pg >= m->n_memo_dir && idx < 2 * (uint64_t)m->n_memo + 4096) {
		if (mp_array_reserve((void **)&m->memo_dir, &m->cap_memo_dir, (size_t)pg + 1,
		                     sizeof(*m->memo_dir)) < 0)
			return MP_ENOMEM;
		memset(m->memo_dir + m->n_memo_dir, 0,
		       (size_t)(pg + 1 - m->n_memo_dir) * sizeof(*m->memo_dir));
		m->n_memo_dir = (size_t)pg + 1;
	}
	if (pg >= m->n_memo_dir)
		return mp_intmap_put(&m->memo_far, idx, val) < 0 ? MP_ENOMEM : 0;
	if (!(page = m->memo_dir[pg]) && !(page = m->memo_dir[pg] = calloc(1, sizeof(*page))))
		return MP_ENOMEM;
	slot = &page->v[idx & (MEMO_PAGE - 1)];
	page->live += !*slot;
	*slot = val;
	if (m->memo_far.n)
		mp_intmap_del(&m->memo_far, idx); /* set before the pages reached it */
	return 0;
}

/* Free page pg when empty and behind the next MEMOIZE's (none will be set
 * in it again: when counted, MEMOIZE alone numbers the memo). */
static void memo_page_done(struct vm *m, uint64_t pg)
{
	if (pg < m->n_memo_dir && m->memo_dir[pg] && !m->memo_dir[pg]->live &&
	    pg < m->n_memo >> MEMO_PAGE_BITS) {
		free(m->memo_dir[pg]);
		m->memo_dir[pg] = NULL;
	}
}

/* Drop memo entry idx (its last fetch done, when counted). */
static void memo_erase(struct vm *m, uint64_t idx)
{
	uint64_t pg = idx >> MEMO_PAGE_BITS;
	struct memo_page *page = pg < m->n_memo_dir ? m->memo_dir[pg] : NULL;
	uintptr_t *slot = page ? &page->v[idx & (MEMO_PAGE - 1)] : NULL;

	if (slot && *slot) {
		*slot = 0;
		page->live--;
		memo_page_done(m, pg);
	} else if (m->memo_far.n) {
		mp_intmap_del(&m->memo_far, idx);
	}
}

static int memo_put(struct vm *m, uint64_t idx)
{
	struct mp_pk *v;

	if (m->n_stack <= fence(m))
		return bad(m, "memo store from an empty stack");
	v = top(m);
	if (m->counted) { /* MEMOIZE alone: each index a new one */
		if (++m->n_memo % MEMO_PAGE == 0) /* into a new page: the last one done? */
			memo_page_done(m, (m->n_memo >> MEMO_PAGE_BITS) - 1);
		if (!mp_pk_fetches_left(&m->fetches, idx))
			return 0; /* never fetched: not kept, v not pinned */
	} else if (!memo_at(m, idx)) {
		m->n_memo++;
	}
	if (memo_set(m, idx, (uintptr_t)v) < 0)
		return oom(m);
	if ((v->pinned & PIN_MEMO) && v->memo_idx != idx)
		v->pinned |= PIN_DUP; /* in the memo twice: never released */
	v->pinned |= PIN_MEMO;
	v->memo_idx = idx;
	return 0;
}

static inline int memo_get(struct vm *m, uint64_t idx)
{
	uintptr_t v = memo_at(m, idx);
	struct mp_pk *x;

	if (!v)
		return mp_err(
		        m->err, MP_EFORMAT,
		        "invalid pickle '%s' at byte %zu: memo reference %llu was never stored",
		        m->name, m->op_pos, (unsigned long long)idx);
	if (v == MEMO_RELEASED)
		return mp_err(m->err, MP_EFORMAT,
		              "unsupported pickle '%s' at byte %zu: memo reference %llu names a "
		              "trace entry already read and released",
		              m->name, m->op_pos, (unsigned long long)idx);
	if (MEMO_IS_TAG(v)) { /* a retired list, released: a fresh one holds its tag */
		if (!(x = new_value(m, MP_PK_RETIRED)))
			return oom(m);
		x->v.i = MEMO_TAG_OF(v);
	} else {
		x = (struct mp_pk *)(uintptr_t)v;
		if (x->gotten < GOTTEN_UNCOUNTED)
			x->gotten++;
	}
	if (m->counted) {
		mp_pk_fetches_take(&m->fetches, idx);
		if (!mp_pk_fetches_left(&m->fetches, idx))
			memo_erase(m, idx); /* its last fetch */
	}
	return push(m, x);
}

/* Is stack[p] a list right after the string 'device_traces' (a dict's key)? */
static int is_traces_list(const struct vm *m, size_t p)
{
	return p >= 1 && m->stack[p]->type == MP_PK_LIST &&
	       mp_pk_str_is(m->stack[p - 1], "device_traces");
}

/*
 * Is the list at stack position q root['device_traces'][k]?  The stack then
 * holds the root dict, maybe its mark, ... 'device_traces', the list of
 * lists, maybe its mark, ..., q (the marks are there when the pickler
 * batches, not for a single APPEND or SETITEM).  Returns k, or -1.
 */
static long stream_index(const struct vm *m, size_t q)
{
	size_t nm = m->n_marks, mk = nm ? m->marks[nm - 1] : 0, p;
	long base = 0;

	if (!m->stream || m->stack[q]->type != MP_PK_LIST || m->stack[q]->n)
		return -1;
	if (nm && mk >= 3 && mk <= q && is_traces_list(m, mk - 1)) {
		p = mk - 1; /* q is in a batch of the list of lists */
		base = (long)(q - mk);
		nm--;
	} else if (q >= 2 && is_traces_list(m, q - 1)) {
		p = q - 1;
	} else {
		return -1;
	}
	if (m->stack[0]->type != MP_PK_DICT || (nm ? m->marks[nm - 1] != 1 : p != 2))
		return -1; /* not the root dict's key */
	return (long)m->stack[p]->n + base;
}

/*
 * Release a scalar, string or retired list held by x's item.  A value
 * pushed again from the memo is held once more for each time (gotten counts
 * them): each holder's release takes one away, and the last frees it.
 * While the memo still names it (fetches may follow) a scalar is kept and a
 * retired list leaves its tag in its place.  Kept when duplicated, when
 * fetched too often to count, when a holder is never released (a count
 * never run down), or when the memo has no room for the tag.
 */
static void release_leaf(struct vm *m, struct mp_pk *x)
{
	if ((x->pinned & PIN_DUP) || x->gotten == GOTTEN_UNCOUNTED)
		return;
	if (x->gotten) {
		x->gotten--; /* another holder remains */
		return;
	}
	if ((x->pinned & PIN_MEMO) && memo_at(m, x->memo_idx) == (uintptr_t)x &&
	    (x->type != MP_PK_RETIRED || x->v.i < 0 || x->v.i >= MAX_MEMO_TAG ||
	     memo_set(m, x->memo_idx, MEMO_TAG(x->v.i)) < 0))
		return;
	release_value(m->p, x);
}

/* Release a streamed item: the dict and the scalars, strings and retired
 * lists only it holds.  An item the memo still names is kept when counted
 * (a fetch of it follows), else left a tombstone. */
static void release_item(struct vm *m, struct mp_pk *v)
{
	size_t i;

	if (v->type != MP_PK_DICT || (v->pinned & PIN_DUP) || v->gotten)
		return; /* reachable from elsewhere: kept */
	if ((v->pinned & PIN_MEMO) && memo_at(m, v->memo_idx) == (uintptr_t)v &&
	    (m->counted || memo_set(m, v->memo_idx, MEMO_RELEASED) < 0))
		return; /* fetched again later, or no tombstone: kept */
	for (i = 0; i < 2 * v->n; i++) {
		struct mp_pk *x = v->v.items[i];

		if (!is_container(x))
			release_leaf(m, x);
	}
	release_value(m->p, v);
}

/* Hand vals (n items for list k, from item index at) to the hook, releasing each. */
static int stream_items(struct vm *m, const struct mp_pk *list, long k, struct mp_pk **vals,
                        size_t n)
{
	uint64_t at = 0;
	size_t i;
	int rc;

	(void)mp_intmap_get(&m->streamed, (uint64_t)(uintptr_t)list, &at);
	m->stream->input_bytes = m->pos;
	for (i = 0; i < n; i++) {
		if ((rc = m->stream->item(m->stream->ctx, (size_t)k, (size_t)at + i, vals[i],
		                          m->err)) < 0)
			return rc;
		release_item(m, vals[i]);
	}
	if (mp_intmap_put(&m->streamed, (uint64_t)(uintptr_t)list, at + n) < 0)
		return oom(m);
	return 0;
}

/* Build a container from the values above the mark (or the top n). */
static int collect(struct vm *m, enum mp_pk_type type, size_t first)
{
	size_t n = m->n_stack - first;
	struct mp_pk *c;

	if (type == MP_PK_DICT && n % 2)
		return bad(m, "DICT with a key and no value");
	c = new_value(m, type);
	if (!c || (n && append(m, c, m->stack + first, n) < 0))
		return oom(m);
	m->n_stack = first;
	return push(m, c);
}

/* APPEND(S), SETITEM(S), ADDITEMS: add the values from first into the
 * container just below them. */
static int add_to(struct vm *m, size_t first, enum mp_pk_type want, const char *op)
{
	size_t n = m->n_stack - first;
	struct mp_pk *c;
	char msg[96];
	long k;

	if (first <= fence(m))
		return bad(m, "nothing to add to");
	c = m->stack[first - 1];
	if (c->type != want) {
		snprintf(msg, sizeof(msg), "%s on something that is not a %s", op,
		         want == MP_PK_DICT  ? "dict"
		         : want == MP_PK_SET ? "set"
		                             : "list");
		return bad(m, msg);
	}
	if (want == MP_PK_DICT && n % 2)
		return bad(m, "SETITEMS with a key and no value");
	if (n && want == MP_PK_LIST && (k = stream_index(m, first - 1)) >= 0) {
		int rc = stream_items(m, c, k, m->stack + first, n);

		m->n_stack = first;
		return rc;
	}
	if (n && append(m, c, m->stack + first, n) < 0)
		return MP_ENOMEM;
	m->n_stack = first;
	return 0;
}

static const char *refused_name(int op)
{
	switch (op) {
	case 'c':
		return "GLOBAL";
	case 0x93:
		return "STACK_GLOBAL";
	case 'R':
		return "REDUCE";
	case 'b':
		return "BUILD";
	case 'i':
		return "INST";
	case 'o':
		return "OBJ";
	case 0x81:
		return "NEWOBJ";
	case 0x92:
		return "NEWOBJ_EX";
	case 0x82:
		return "EXT1";
	case 0x83:
		return "EXT2";
	case 0x84:
		return "EXT4";
	case 'P':
		return "PERSID";
	case 'Q':
		return "BINPERSID";
	case 0x97:
		return "NEXT_BUFFER";
	case 0x98:
		return "READONLY_BUFFER";
	case 'I':
		return "INT (protocol 0)";
	case 'L':
		return "LONG (protocol 0)";
	case 'F':
		return "FLOAT (protocol 0)";
	case 'S':
		return "STRING (protocol 0)";
	case 'V':
		return "UNICODE (protocol 0)";
	case 'p':
		return "PUT (protocol 0)";
	case 'g':
		return "GET (protocol 0)";
	default:
		return NULL;
	}
}

static int refuse(struct vm *m, int op)
{
	const char *name = refused_name(op);

	if (name && strstr(name, "protocol 0"))
		return mp_err(
		        m->err, MP_EFORMAT,
		        "unsupported pickle '%s' at byte %zu: opcode %s (0x%02x): memprof reads "
		        "binary pickles (protocol 2 or later), not text ones",
		        m->name, m->op_pos, name, op);
	if (op == 0x97 || op == 0x98)
		return mp_err(
		        m->err, MP_EFORMAT,
		        "unsupported pickle '%s' at byte %zu: opcode %s (0x%02x): out-of-band "
		        "buffers are not part of a file",
		        m->name, m->op_pos, name, op);
	if (name)
		return mp_err(m->err, MP_EFORMAT,
		              "refused pickle '%s' at byte %zu: opcode %s (0x%02x) would import or "
		              "call Python code; memprof reads plain data only",
		              m->name, m->op_pos, name, op);
	return mp_err(m->err, MP_EFORMAT, "invalid pickle '%s' at byte %zu: unknown opcode 0x%02x",
	              m->name, m->op_pos, op);
}

static int push_float(struct vm *m)
{
	uint64_t bits = 0;
	struct mp_pk *v;
	double d;
	int i;

	if (need(m, 8) < 0)
		return MP_EFORMAT;
	for (i = 0; i < 8; i++) /* big-endian */
		bits = (bits << 8) | at(m)[i];
	m->pos += 8;
	memcpy(&d, &bits, sizeof(d));
	v = new_value(m, MP_PK_FLOAT);
	if (v)
		v->v.f = d;
	return push(m, v);
}

static int push_bool(struct vm *m, int b)
{
	struct mp_pk *v = new_value(m, MP_PK_BOOL);

	if (v)
		v->v.i = b;
	return push(m, v);
}

/* The opcodes that build containers or move values around. */
static int run_structure(struct vm *m, int op)
{
	size_t first;
	struct mp_pk *v;

	switch (op) {
	case '(': /* MARK */
		if (mp_array_reserve((void **)&m->marks, &m->cap_marks, m->n_marks + 1,
		                     sizeof(*m->marks)) < 0)
			return oom(m);
		m->marks[m->n_marks++] = m->n_stack;
		return 0;
	case '}':
		return push(m, new_value(m, MP_PK_DICT));
	case ']':
		return push(m, new_value(m, MP_PK_LIST));
	case ')':
		return push(m, new_value(m, MP_PK_TUPLE));
	case 0x8f:
		return push(m, new_value(m, MP_PK_SET));
	case 'd':
		return pop_mark(m, &first) < 0 ? MP_EFORMAT : collect(m, MP_PK_DICT, first);
	case 'l':
		return pop_mark(m, &first) < 0 ? MP_EFORMAT : collect(m, MP_PK_LIST, first);
	case 't':
		return pop_mark(m, &first) < 0 ? MP_EFORMAT : collect(m, MP_PK_TUPLE, first);
	case 0x91:
		return pop_mark(m, &first) < 0 ? MP_EFORMAT : collect(m, MP_PK_SET, first);
	case 0x85:
	case 0x86:
	case 0x87: /* TUPLE1..3 */
		if (m->n_stack - fence(m) < (size_t)(op - 0x84))
			return bad(m, "TUPLE with too few values on the stack");
		return collect(m, MP_PK_TUPLE, m->n_stack - (size_t)(op - 0x84));
	case 'a':
		return m->n_stack - fence(m) < 2 ? bad(m, "APPEND with too few values")
		                                 : add_to(m, m->n_stack - 1, MP_PK_LIST, "APPEND");
	case 'e':
		return pop_mark(m, &first) < 0 ? MP_EFORMAT
		                               : add_to(m, first, MP_PK_LIST, "APPENDS");
	case 0x90:
		return pop_mark(m, &first) < 0 ? MP_EFORMAT
		                               : add_to(m, first, MP_PK_SET, "ADDITEMS");
	case 's':
		return m->n_stack - fence(m) < 3 ? bad(m, "SETITEM with too few values")
		                                 : add_to(m, m->n_stack - 2, MP_PK_DICT, "SETITEM");
	case 'u':
		return pop_mark(m, &first) < 0 ? MP_EFORMAT
		                               : add_to(m, first, MP_PK_DICT, "SETITEMS");
	case '0': /* POP */
		if (m->n_stack && (!m->n_marks || m->marks[m->n_marks - 1] < m->n_stack)) {
			m->n_stack--;
			return 0;
		}
		if (m->n_marks && m->marks[m->n_marks - 1] == m->n_stack) {
			m->n_marks--; /* POP of a mark */
			return 0;
		}
		return bad(m, "POP from an empty stack");
	case '1': /* POP_MARK */
		if (pop_mark(m, &first) < 0)
			return MP_EFORMAT;
		m->n_stack = first;
		return 0;
	case '2': /* DUP */
		v = m->n_stack > fence(m) ? top(m) : NULL;
		if (v)
			v->pinned |= PIN_DUP;
		return v ? push(m, v) : bad(m, "DUP of an empty stack");
	}
	return 1; /* not a structure opcode */
}

/* The opcodes that push a scalar or touch the memo. */
static int run_scalar(struct vm *m, int op)
{
	uint64_t a;
	int rc;

	switch (op) {
	case 'N':
		return push(m, new_value(m, MP_PK_NONE));
	case 0x88:
		return push_bool(m, 1);
	case 0x89:
		return push_bool(m, 0);
	case 'J':
		return arg(m, 4, &a) < 0 ? MP_EFORMAT : push_int(m, (int32_t)(uint32_t)a);
	case 'K':
		return arg(m, 1, &a) < 0 ? MP_EFORMAT : push_int(m, (int64_t)a);
	case 'M':
		return arg(m, 2, &a) < 0 ? MP_EFORMAT : push_int(m, (int64_t)a);
	case 0x8a:
		return arg(m, 1, &a) < 0 ? MP_EFORMAT : push_long(m, (size_t)a);
	case 0x8b:
		if (arg(m, 4, &a) < 0)
			return MP_EFORMAT;
		if ((rc = fill(m, (size_t)a)) != 0)
			return rc < 0 ? rc : bad(m, "LONG4 longer than the rest of the input");
		return push_long(m, (size_t)a);
	case 'G':
		return push_float(m);
	case 0x8c:
		return push_bytes(m, MP_PK_STR, 1); /* SHORT_BINUNICODE */
	case 'X':
		return push_bytes(m, MP_PK_STR, 4); /* BINUNICODE */
	case 0x8d:
		return push_bytes(m, MP_PK_STR, 8); /* BINUNICODE8 */
	case 'U':
		return push_bytes(m, MP_PK_STR, 1); /* SHORT_BINSTRING */
	case 'T':
		return push_bytes(m, MP_PK_STR, 4); /* BINSTRING */
	case 'C':
		return push_bytes(m, MP_PK_BYTES, 1); /* SHORT_BINBYTES */
	case 'B':
		return push_bytes(m, MP_PK_BYTES, 4); /* BINBYTES */
	case 0x8e:
		return push_bytes(m, MP_PK_BYTES, 8); /* BINBYTES8 */
	case 0x96:
		return push_bytes(m, MP_PK_BYTES, 8); /* BYTEARRAY8 */
	case 'q':
		return arg(m, 1, &a) < 0 ? MP_EFORMAT : memo_put(m, a); /* BINPUT */
	case 'r':
		return arg(m, 4, &a) < 0 ? MP_EFORMAT : memo_put(m, a); /* LONG_BINPUT */
	case 0x94:
		return memo_put(m, m->n_memo); /* MEMOIZE */
	case 'h':
		return arg(m, 1, &a) < 0 ? MP_EFORMAT : memo_get(m, a); /* BINGET */
	case 'j':
		return arg(m, 4, &a) < 0 ? MP_EFORMAT : memo_get(m, a); /* LONG_BINGET */
	case 0x80:                                                      /* PROTO */
		if (arg(m, 1, &a) < 0)
			return MP_EFORMAT;
		if (a > 5)
			return mp_err(
			        m->err, MP_EFORMAT,
			        "unsupported pickle '%s' at byte %zu: protocol %llu (memprof reads "
			        "protocols 2 to 5)",
			        m->name, m->op_pos, (unsigned long long)a);
		return 0;
	case 0x95: /* FRAME: a length hint only */
		return arg(m, 8, &a) < 0 ? MP_EFORMAT : 0;
	}
	return refuse(m, op);
}

/* A crafted pickle can ask for more memory than the machine has (its
 * values outside the streamed entries are held whole): stop with an error
 * before the process is killed for it. */
static int check_memory(struct vm *m)
{
	uint64_t held;

	m->ops_to_check = MEMORY_CHECK_EVERY;
	if (!m->budget_why) /* at the first look: a small pickle never asks */
		m->budget = mp_mem_budget(&m->budget_why);
	if (!m->budget || (held = mp_mem_resident()) <= m->budget)
		return 0;
	return mp_err(m->err, MP_ENOMEM,
	              "pickle '%s' at byte %zu holds more than this import may take: %.2f GiB "
	              "in memory, over its budget of %.2f GiB (%s); refused before memory "
	              "runs out",
	              m->name, m->op_pos, (double)held / (1 << 30),
	              (double)m->budget / (1 << 30), m->budget_why);
}

static int run(struct vm *m)
{
	int rc, op;

	m->ops_to_check = MEMORY_CHECK_EVERY;
	while ((rc = fill(m, 1)) == 0) {
		m->op_pos = m->pos;
		if (--m->ops_to_check == 0 && (rc = check_memory(m)) < 0)
			return rc;
		op = *at(m);
		m->pos++;
		if (op == '.') { /* STOP */
			if (m->n_stack != 1 || m->n_marks)
				return bad(m, "STOP with the stack not holding exactly one value");
			m->p->root = m->stack[0];
			m->p->len = m->pos;
			return 0;
		}
		rc = run_structure(m, op);
		if (rc == 1)
			rc = run_scalar(m, op);
		if (rc < 0)
			return rc;
	}
	if (rc < 0)
		return rc;
	m->op_pos = m->pos;
	return mp_err(m->err, MP_EFORMAT, "truncated pickle '%s' at byte %zu: no STOP opcode",
	              m->name, m->pos);
}

/* Run the machine over in (or, when in is NULL, over data: len bytes). */
static int load(struct mp_pickle **out, FILE *in, const void *data, size_t len, const char *name,
                struct mp_pickle_stream *s, struct mp_error *err)
{
	struct vm m = {.name = name, .err = err, .stream = s && s->item ? s : NULL, .in = in};
	struct mp_pipe_tee *tee;
	FILE *again = NULL;
	size_t i, held;
	int rc;

	*out = NULL;
	if (!(m.p = calloc(1, sizeof(*m.p))))
		return mp_err(err, MP_ENOMEM, "out of memory reading '%s'", name);
	if (!in) {
		m.buf = data;
		m.n_buf = len;
	}
	mp_intmap_init(&m.memo_far);
	mp_intmap_init(&m.streamed);
	rc = 0;
	if (m.stream && in && ftello(in) >= 0) {
		if ((rc = mp_pk_count_fetches(in, &m.fetches)) < 0)
			rc = mp_err(err, MP_EIO, "cannot read '%s' again from its start: %s", name,
			            strerror(errno));
	} else if (m.stream && in && (tee = mp_pipe_tee_open(in))) {
		/* a pipe: counted through a temporary copy of what the count reads,
		 * then run from that copy and the rest of the pipe */
		rc = mp_pk_count_fetches_once(mp_pipe_tee_first(tee), &m.fetches);
		m.in = again = mp_pipe_tee_again(tee);
	}
	m.counted = rc == 1;
	if (rc >= 0)
		rc = run(&m);
	if (again)
		fclose(again);
	mp_pk_fetches_free(&m.fetches);
	held = m.memo_far.n;
	mp_intmap_free(&m.memo_far);
	for (i = 0; i < m.n_memo_dir; i++) {
		held += m.memo_dir[i] ? m.memo_dir[i]->live : 0;
		free(m.memo_dir[i]);
	}
	free(m.memo_dir);
	mp_intmap_free(&m.streamed);
	free(m.stack);
	free(m.marks);
	free(m.own);
	if (rc < 0) {
		mp_pickle_free(m.p);
		return rc;
	}
	if (s) {
		s->input_bytes = m.p->len;
		s->memo_held = held;
	}
	*out = m.p;
	return 0;
}

int mp_pickle_load_buffer(struct mp_pickle **out, const void *data, size_t len, const char *name,
                          struct mp_error *err)
{
	return load(out, NULL, data, len, name, NULL, err);
}

int mp_pickle_load(struct mp_pickle **out, FILE *in, const char *name, struct mp_error *err)
{
	return mp_pickle_load_stream(out, in, name, NULL, err);
}

int mp_pickle_load_stream(struct mp_pickle **out, FILE *in, const char *name,
                          struct mp_pickle_stream *s, struct mp_error *err)
{
	return load(out, in, NULL, 0, name, s, err);
}

const struct mp_pk *mp_pickle_root(const struct mp_pickle *p)
{
	return p->root;
}

size_t mp_pickle_n_slots(const struct mp_pickle *p)
{
	const struct chunk *c;
	size_t n = 0;

	for (c = p->chunks; c; c = c->next)
		n += c->used;
	return n;
}

size_t mp_pickle_size(const struct mp_pickle *p)
{
	return p->len;
}

void mp_pickle_free(struct mp_pickle *p)
{
	struct chunk *c, *next;
	size_t i;

	if (!p)
		return;
	for (c = p->chunks; c; c = next) {
		next = c->next;
		for (i = 0; i < c->used; i++)
			if (c->values[i].type)
				release_value(p, &c->values[i]);
		free(c);
	}
	free(p);
}

int mp_pickle_probe(const char *head, size_t n)
{
	return n >= 2 && (unsigned char)head[0] == 0x80 && head[1] >= 2 && head[1] <= 5;
}

void mp_pk_retire(struct mp_pk *v, int64_t tag)
{
	if (v->type != MP_PK_LIST && v->type != MP_PK_TUPLE)
		return;
	free(v->v.items);
	v->type = MP_PK_RETIRED;
	v->v.i = tag;
	v->n = v->cap = 0;
}

static int str_is(const struct mp_pk *s, const char *text, size_t n)
{
	return s->type == MP_PK_STR && s->n == n &&
	       (n == 0 || (s->v.s[0] == text[0] && memcmp(s->v.s, text, n) == 0));
}

int mp_pk_str_is(const struct mp_pk *s, const char *text)
{
	size_t n = strlen(text);

	return s && str_is(s, text, n);
}

/*
 * Where mp_pk_get last found a key, by the key's address (callers pass
 * literals, and the dicts of a document share their layout): that slot is
 * tried first, so a lookup in a dict like the last costs one comparison.
 * Only a hint, the text is compared as ever: a miss scans the keys, and a
 * stale entry is simply replaced.
 */
#define KEY_HINTS 64
static _Thread_local struct key_hint {
	const char *key;
	size_t at;
} key_hints[KEY_HINTS];

static struct key_hint *hint_of(const char *key)
{
	uintptr_t h = (uintptr_t)key;

	return &key_hints[(h ^ h >> 6) % KEY_HINTS];
}

/* The key's length is taken once, and a key is compared only when its length and
 * first byte match: a dict's keys are scanned without a call per key. */
const struct mp_pk *mp_pk_get(const struct mp_pk *d, const char *key)
{
	struct key_hint *h = hint_of(key);
	size_t i, n;

	if (!d || d->type != MP_PK_DICT)
		return NULL;
	n = strlen(key);
	if (h->key == key && h->at < d->n && str_is(d->v.items[2 * h->at], key, n))
		return d->v.items[2 * h->at + 1];
	for (i = 0; i < d->n; i++)
		if (str_is(d->v.items[2 * i], key, n)) {
			*h = (struct key_hint){key, i};
			return d->v.items[2 * i + 1];
		}
	return NULL;
}

int mp_pk_int(const struct mp_pk *v, int64_t *out)
{
	if (!v || (v->type != MP_PK_INT && v->type != MP_PK_BOOL) || v->is_u64)
		return 0;
	*out = v->v.i;
	return 1;
}
