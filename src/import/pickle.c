/*
 * import/pickle.c - the pickle machine for plain data: a stack, a mark
 * stack and a memo over the whole input held in memory.  Every length is
 * checked against the bytes left before anything is allocated, so memory is
 * bounded by a small multiple of the input size.  Must never run code.
 */
#include "import/pickle.h"
#include "util/intmap.h"
#include "util/array.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define VALUES_PER_CHUNK 4096

struct chunk {
	struct chunk *next;
	size_t used;
	struct mp_pk values[VALUES_PER_CHUNK];
};

struct mp_pickle {
	unsigned char *data;
	size_t len;
	struct mp_pk *root;
	struct chunk *chunks;
	struct mp_pk **containers; /* every value with an items array, to free */
	size_t n_containers, cap_containers;
};

/* The running machine. */
struct vm {
	struct mp_pickle *p;
	const char *name;
	struct mp_error *err;
	size_t pos, op_pos; /* next byte; offset of the opcode being run */
	struct mp_pk **stack;
	size_t n_stack, cap_stack;
	size_t *marks;
	size_t n_marks, cap_marks;
	struct mp_intmap memo; /* memo index -> struct mp_pk * */
};

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
	if (type == MP_PK_LIST || type == MP_PK_TUPLE || type == MP_PK_DICT || type == MP_PK_SET) {
		if (mp_array_reserve((void **)&p->containers, &p->cap_containers,
		                     p->n_containers + 1, sizeof(*p->containers)) < 0)
			return NULL;
		p->containers[p->n_containers++] = v;
	}
	return v;
}

static int push(struct vm *m, struct mp_pk *v)
{
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

static int need(struct vm *m, size_t n)
{
	if (m->p->len - m->pos < n)
		return mp_err(m->err, MP_EFORMAT,
		              "truncated pickle '%s' at byte %zu: opcode needs %zu more bytes, %zu "
		              "left",
		              m->name, m->op_pos, n, m->p->len - m->pos);
	return 0;
}

static uint64_t le(const unsigned char *b, size_t n)
{
	uint64_t v = 0;

	while (n--)
		v = (v << 8) | b[n];
	return v;
}

/* An argument of n little-endian bytes. */
static int arg(struct vm *m, size_t n, uint64_t *out)
{
	if (need(m, n) < 0)
		return MP_EFORMAT;
	*out = le(m->p->data + m->pos, n);
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
	b = m->p->data + m->pos;
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

static int push_bytes(struct vm *m, enum mp_pk_type type, size_t len_bytes)
{
	uint64_t n;
	struct mp_pk *v;

	if (arg(m, len_bytes, &n) < 0)
		return MP_EFORMAT;
	if (n > m->p->len - m->pos)
		return mp_err(
		        m->err, MP_EFORMAT,
		        "invalid pickle '%s' at byte %zu: a string of %llu bytes but only %zu "
		        "bytes left",
		        m->name, m->op_pos, (unsigned long long)n, m->p->len - m->pos);
	v = new_value(m, type);
	if (v) {
		v->v.s = (const char *)m->p->data + m->pos;
		v->n = (size_t)n;
	}
	m->pos += (size_t)n;
	return push(m, v);
}

static int memo_put(struct vm *m, uint64_t idx)
{
	if (m->n_stack <= fence(m))
		return bad(m, "memo store from an empty stack");
	if (mp_intmap_put(&m->memo, idx, (uint64_t)(uintptr_t)top(m)) < 0)
		return oom(m);
	return 0;
}

static int memo_get(struct vm *m, uint64_t idx)
{
	uint64_t v;

	if (!mp_intmap_get(&m->memo, idx, &v))
		return mp_err(
		        m->err, MP_EFORMAT,
		        "invalid pickle '%s' at byte %zu: memo reference %llu was never stored",
		        m->name, m->op_pos, (unsigned long long)idx);
	return push(m, (struct mp_pk *)(uintptr_t)v);
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
		bits = (bits << 8) | m->p->data[m->pos + (size_t)i];
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
		return v ? push(m, v) : bad(m, "DUP of an empty stack");
	}
	return 1; /* not a structure opcode */
}

/* The opcodes that push a scalar or touch the memo. */
static int run_scalar(struct vm *m, int op)
{
	uint64_t a;

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
		if (a > m->p->len - m->pos)
			return bad(m, "LONG4 longer than the rest of the input");
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
		return memo_put(m, m->memo.n); /* MEMOIZE */
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

static int run(struct vm *m)
{
	int rc, op;

	while (m->pos < m->p->len) {
		m->op_pos = m->pos;
		op = m->p->data[m->pos++];
		if (op == '.') { /* STOP */
			if (m->n_stack != 1 || m->n_marks)
				return bad(m, "STOP with the stack not holding exactly one value");
			m->p->root = m->stack[0];
			return 0;
		}
		rc = run_structure(m, op);
		if (rc == 1)
			rc = run_scalar(m, op);
		if (rc < 0)
			return rc;
	}
	m->op_pos = m->pos;
	return mp_err(m->err, MP_EFORMAT, "truncated pickle '%s' at byte %zu: no STOP opcode",
	              m->name, m->pos);
}

static int load(struct mp_pickle *p, const char *name, struct mp_error *err)
{
	struct vm m = {.p = p, .name = name, .err = err};
	int rc;

	mp_intmap_init(&m.memo);
	rc = run(&m);
	mp_intmap_free(&m.memo);
	free(m.stack);
	free(m.marks);
	return rc;
}

int mp_pickle_load_buffer(struct mp_pickle **out, const void *data, size_t len, const char *name,
                          struct mp_error *err)
{
	struct mp_pickle *p = calloc(1, sizeof(*p));
	int rc;

	*out = NULL;
	if (!p || !(p->data = malloc(len ? len : 1))) {
		free(p);
		return mp_err(err, MP_ENOMEM, "out of memory reading '%s'", name);
	}
	memcpy(p->data, data, len);
	p->len = len;
	rc = load(p, name, err);
	if (rc < 0) {
		mp_pickle_free(p);
		return rc;
	}
	*out = p;
	return 0;
}

/* Whether the first opcode of p (len >= 1) is already refused: then the
 * whole input need not be read (an endless /dev/zero is refused at once). */
static int refused_at_start(const struct mp_pickle *p, const char *name, struct mp_error *err)
{
	struct mp_pickle *first;
	int rc;

	if (p->data[0] == 0x80) /* PROTO: a binary pickle */
		return 0;
	if (!(first = calloc(1, sizeof(*first)))) /* the whole input will say it */
		return 0;
	first->data = p->data; /* borrowed: its first byte only */
	first->len = 1;
	rc = load(first, name, err);
	first->data = NULL;
	mp_pickle_free(first);
	if (rc < 0 && strncmp(err->msg, "truncated", 9) != 0)
		return rc;
	mp_err_clear(err);
	return 0;
}

int mp_pickle_load(struct mp_pickle **out, FILE *in, const char *name, struct mp_error *err)
{
	struct mp_pickle *p = calloc(1, sizeof(*p));
	size_t cap = 0, k;
	int rc;

	*out = NULL;
	if (!p)
		return mp_err(err, MP_ENOMEM, "out of memory reading '%s'", name);
	for (;;) {
		if (p->len >= MP_PICKLE_MAX_BYTES) {
			mp_pickle_free(p);
			return mp_err(err, MP_EFORMAT,
			              "input too large '%s': over %d GiB, more than a memory "
			              "snapshot holds",
			              name, (int)(MP_PICKLE_MAX_BYTES >> 30));
		}
		if (mp_array_reserve((void **)&p->data, &cap, p->len + (1 << 16), 1) < 0) {
			mp_pickle_free(p);
			return mp_err(err, MP_ENOMEM, "out of memory reading '%s'", name);
		}
		k = fread(p->data + p->len, 1, cap - p->len, in);
		p->len += k;
		if (p->len == k && k > 0 && err && refused_at_start(p, name, err) < 0) {
			mp_pickle_free(p);
			return err->code;
		}
		if (k == 0)
			break;
	}
	if (ferror(in)) {
		mp_pickle_free(p);
		return mp_err(err, MP_EIO, "cannot read '%s': %s", name, strerror(errno));
	}
	rc = load(p, name, err);
	if (rc < 0) {
		mp_pickle_free(p);
		return rc;
	}
	*out = p;
	return 0;
}

const struct mp_pk *mp_pickle_root(const struct mp_pickle *p)
{
	return p->root;
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
	for (i = 0; i < p->n_containers; i++)
		free(p->containers[i]->v.items);
	free(p->containers);
	for (c = p->chunks; c; c = next) {
		next = c->next;
		free(c);
	}
	free(p->data);
	free(p);
}

int mp_pickle_probe(const char *head, size_t n)
{
	return n >= 2 && (unsigned char)head[0] == 0x80 && head[1] >= 2 && head[1] <= 5;
}

int mp_pk_str_is(const struct mp_pk *s, const char *text)
{
	size_t n = strlen(text);

	return s && s->type == MP_PK_STR && s->n == n && memcmp(s->v.s, text, n) == 0;
}

const struct mp_pk *mp_pk_get(const struct mp_pk *d, const char *key)
{
	size_t i;

	if (!d || d->type != MP_PK_DICT)
		return NULL;
	for (i = 0; i < d->n; i++)
		if (mp_pk_str_is(d->v.items[2 * i], key))
			return d->v.items[2 * i + 1];
	return NULL;
}

int mp_pk_int(const struct mp_pk *v, int64_t *out)
{
	if (!v || (v->type != MP_PK_INT && v->type != MP_PK_BOOL) || v->is_u64)
		return 0;
	*out = v->v.i;
	return 1;
}
