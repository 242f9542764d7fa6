/*
 * import/pickle_fetches.h - a first pass over a pickle's opcodes that counts
 * how often each memo entry is fetched again (BINGET, LONG_BINGET), so the
 * machine (pickle.c) can keep an entry only while a fetch of it is still to
 * come.  Two bits an entry: 0, 1, 2, or 3 for three or more.
 */
#ifndef MEMPROF_IMPORT_PICKLE_FETCHES_H
#define MEMPROF_IMPORT_PICKLE_FETCHES_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define MP_PK_FETCHES_MANY 3 /* three fetches or more: never counted down */

struct mp_pk_fetches {
	unsigned char *bits; /* 2 bits per memo index, 4 to a byte */
	size_t n;            /* memo indexes counted: [0, n) */
	size_t cap;          /* bytes of bits */
};

/*
 * Count the fetches of in's memo entries, from its position up to STOP or
 * the end, then seek back there.  Only for pickles that number the memo
 * with MEMOIZE alone (protocol 4 and 5, as Python writes them); a BINPUT, an
 * opcode the machine does not run, a read error, a stream that cannot seek
 * back, or no memory leaves nothing counted.  1 when counted (f holds the
 * counts: free with mp_pk_fetches_free), 0 when not (f empty), or -1 when
 * in could not be put back where it was (the read cannot go on).
 */
int mp_pk_count_fetches(FILE *in, struct mp_pk_fetches *f);
/* The same without seeking back: in is read up to STOP (and a buffer's
 * worth beyond), the end, or the first opcode not followed; 1 or 0. */
int mp_pk_count_fetches_once(FILE *in, struct mp_pk_fetches *f);
void mp_pk_fetches_free(struct mp_pk_fetches *f);

/* Fetches of idx still to come (MP_PK_FETCHES_MANY: three or more). */
static inline unsigned mp_pk_fetches_left(const struct mp_pk_fetches *f, uint64_t idx)
{
	return idx < f->n ? (f->bits[idx >> 2] >> ((idx & 3) * 2)) & 3u : 0;
}

/* One fetch of idx done: its count less one (a count of many stays). */
static inline void mp_pk_fetches_take(struct mp_pk_fetches *f, uint64_t idx)
{
	unsigned c = mp_pk_fetches_left(f, idx);

	if (c && c != MP_PK_FETCHES_MANY)
		f->bits[idx >> 2] = (unsigned char)(f->bits[idx >> 2] - (1u << ((idx & 3) * 2)));
}

#endif
