/*
 * import/pickle_fetches.c - the first pass of a streamed pickle: walk the
 * opcodes without building anything and count, for each memo entry, the
 * fetches of it that follow.  The machine (pickle.c) then keeps in its memo
 * only what will be fetched again, and drops an entry at its last fetch, so
 * its memo follows the objects still to be shared, not the file's length.
 * Any doubt (an opcode it does not know, BINPUT's explicit indexes, a read
 * error) leaves nothing counted and the machine keeps every entry, as
 * without this pass; errors are the machine's to report.
 */
#include "import/pickle_fetches.h"
#include "import/pickle.h"
#include "util/array.h"

#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#define SCAN_BYTES (256u << 10)

struct scan {
	FILE *in;
	unsigned char *buf;
	size_t pos, len; /* unread bytes: buf[pos, len) */
	uint64_t done;   /* bytes consumed before buf[0] */
	int too_big;     /* stopped at MP_PICKLE_MAX_BYTES */
};

/* Refill the buffer, keeping its unread bytes: 0, or 1 at the end or an error. */
static int refill(struct scan *s)
{
	size_t keep = s->len - s->pos, k;

	memmove(s->buf, s->buf + s->pos, keep);
	s->done += s->pos;
	s->pos = 0;
	s->len = keep;
	if (s->done + keep >= (uint64_t)MP_PICKLE_MAX_BYTES) {
		s->too_big = 1; /* the machine refuses it there */
		return 1;
	}
	k = fread(s->buf + keep, 1, SCAN_BYTES - keep, s->in);
	s->len += k;
	return k == 0;
}

/* The next n bytes (n <= 8) as a little-endian number: 0, or 1 at the end. */
static int take(struct scan *s, size_t n, uint64_t *out)
{
	uint64_t v = 0;
	size_t i;

	while (s->len - s->pos < n)
		if (refill(s))
			return 1;
	for (i = n; i-- > 0;)
		v = (v << 8) | s->buf[s->pos + i];
	s->pos += n;
	*out = v;
	return 0;
}

/* Skip n bytes: 0, or 1 when the input ends first. */
static int skip(struct scan *s, uint64_t n)
{
	while ((uint64_t)(s->len - s->pos) < n) {
		n -= s->len - s->pos;
		s->pos = s->len;
		if (refill(s))
			return 1;
	}
	s->pos += (size_t)n;
	return 0;
}

/* What an opcode is to this pass, and the width of its argument (of the
 * length before its bytes for OP_BYTES).  Opcodes not listed are OP_NOT:
 * BINPUT, those the machine refuses, unknown ones. */
enum { OP_NOT, OP_PLAIN, OP_BYTES, OP_MEMOIZE, OP_FETCH, OP_STOP };
static const struct op_shape {
	unsigned char kind, width;
} shapes[256] = {
        ['('] = {OP_PLAIN, 0},   ['}'] = {OP_PLAIN, 0},   [']'] = {OP_PLAIN, 0},
        [')'] = {OP_PLAIN, 0},   [0x8f] = {OP_PLAIN, 0},  ['d'] = {OP_PLAIN, 0},
        ['l'] = {OP_PLAIN, 0},   ['t'] = {OP_PLAIN, 0},   [0x91] = {OP_PLAIN, 0},
        [0x85] = {OP_PLAIN, 0},  [0x86] = {OP_PLAIN, 0},  [0x87] = {OP_PLAIN, 0},
        ['a'] = {OP_PLAIN, 0},   ['e'] = {OP_PLAIN, 0},   [0x90] = {OP_PLAIN, 0},
        ['s'] = {OP_PLAIN, 0},   ['u'] = {OP_PLAIN, 0},   ['0'] = {OP_PLAIN, 0},
        ['1'] = {OP_PLAIN, 0},   ['2'] = {OP_PLAIN, 0},   ['N'] = {OP_PLAIN, 0},
        [0x88] = {OP_PLAIN, 0},  [0x89] = {OP_PLAIN, 0},  ['K'] = {OP_PLAIN, 1},
        [0x80] = {OP_PLAIN, 1},  ['M'] = {OP_PLAIN, 2},   ['J'] = {OP_PLAIN, 4},
        ['G'] = {OP_PLAIN, 8},   [0x95] = {OP_PLAIN, 8},  /* FRAME: a length hint */
        [0x8a] = {OP_BYTES, 1},  [0x8c] = {OP_BYTES, 1},  ['U'] = {OP_BYTES, 1},
        ['C'] = {OP_BYTES, 1},   [0x8b] = {OP_BYTES, 4},  ['X'] = {OP_BYTES, 4},
        ['T'] = {OP_BYTES, 4},   ['B'] = {OP_BYTES, 4},   [0x8d] = {OP_BYTES, 8},
        [0x8e] = {OP_BYTES, 8},  [0x96] = {OP_BYTES, 8},  [0x94] = {OP_MEMOIZE, 0},
        ['h'] = {OP_FETCH, 1},   ['j'] = {OP_FETCH, 4},   ['.'] = {OP_STOP, 0},
};

/* Make room for memo index f->n (its count 0). */
static int add_index(struct mp_pk_fetches *f)
{
	if (mp_array_reserve((void **)&f->bits, &f->cap, (f->n >> 2) + 1, 1) < 0)
		return -1;
	if ((f->n & 3) == 0)
		f->bits[f->n >> 2] = 0;
	f->n++;
	return 0;
}

static inline void count_fetch(struct mp_pk_fetches *f, uint64_t idx)
{
	if (idx < f->n && mp_pk_fetches_left(f, idx) < MP_PK_FETCHES_MANY)
		f->bits[idx >> 2] = (unsigned char)(f->bits[idx >> 2] + (1u << ((idx & 3) * 2)));
}

/* n bytes little-endian (n is 1, 2, 4 or 8). */
static inline uint64_t le(const unsigned char *b, size_t n)
{
	uint64_t v = 0;

	while (n--)
		v = (v << 8) | b[n];
	return v;
}

/* Walk the opcodes: 1 when counted (to STOP or the end), 0 when not.  Nine
 * bytes (an opcode and the widest argument) are read in place; nearer the
 * buffer's end each part is taken on its own. */
static int walk(struct scan *s, struct mp_pk_fetches *f)
{
	const struct op_shape *sh;
	uint64_t a = 0;

	for (;;) {
		if (s->len - s->pos < 9 && refill(s) &&
		    s->pos == s->len)
			return 1; /* the end: the machine says what is missing */
		while (s->len - s->pos >= 9) {
			const unsigned char *b = s->buf + s->pos;

			sh = &shapes[b[0]];
			switch (sh->kind) {
			case OP_PLAIN:
				s->pos += 1u + sh->width;
				continue;
			case OP_FETCH:
				count_fetch(f, sh->width == 1 ? b[1] : le(b + 1, 4));
				s->pos += 1u + sh->width;
				continue;
			case OP_MEMOIZE:
				if (add_index(f) < 0)
					return 0;
				s->pos++;
				continue;
			case OP_BYTES:
				a = le(b + 1, sh->width);
				s->pos += 1u + sh->width;
				if (skip(s, a))
					return 1;
				continue;
			case OP_STOP:
				return 1;
			}
			return 0; /* BINPUT, refused or unknown: not followed */
		}
		if (s->pos == s->len)
			continue;
		sh = &shapes[s->buf[s->pos++]]; /* near the end of the input */
		if (sh->kind == OP_NOT)
			return 0;
		if (sh->kind == OP_STOP)
			return 1;
		if (sh->kind == OP_MEMOIZE && add_index(f) < 0)
			return 0;
		if (sh->width && take(s, sh->width, &a))
			return 1;
		if (sh->kind == OP_FETCH)
			count_fetch(f, a);
		else if (sh->kind == OP_BYTES && skip(s, a))
			return 1;
	}
}

int mp_pk_count_fetches_once(FILE *in, struct mp_pk_fetches *f)
{
	struct scan s = {.in = in};
	int counted;

	memset(f, 0, sizeof(*f));
	if (!(s.buf = malloc(SCAN_BYTES)))
		return 0;
	counted = walk(&s, f) && !s.too_big && !ferror(in);
	free(s.buf);
	if (!counted)
		mp_pk_fetches_free(f);
	return counted;
}

int mp_pk_count_fetches(FILE *in, struct mp_pk_fetches *f)
{
	off_t start = ftello(in);
	int counted;

	memset(f, 0, sizeof(*f));
	if (start < 0)
		return 0;
	counted = mp_pk_count_fetches_once(in, f);
	clearerr(in);
	if (fseeko(in, start, SEEK_SET) != 0) {
		mp_pk_fetches_free(f);
		return -1;
	}
	return counted;
}

void mp_pk_fetches_free(struct mp_pk_fetches *f)
{
	free(f->bits);
	memset(f, 0, sizeof(*f));
}
