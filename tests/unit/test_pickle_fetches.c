/*
 * tests/unit/test_pickle_fetches.c - src/import/pickle_fetches.c, the first
 * pass of a streamed pickle: the fetches of each MEMOIZE'd entry counted up
 * to three, every argument skipped whatever its width (strings past the
 * scan buffer included), the stream put back where it was, and nothing
 * counted for a BINPUT, an opcode it does not follow, or a pipe.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "import/pickle_fetches.h"

static unsigned char pk[1 << 20];
static size_t n;

static void op(int c)
{
	pk[n++] = (unsigned char)c;
}

static void u32(int c, uint32_t v)
{
	op(c);
	for (int i = 0; i < 4; i++)
		op((int)((v >> (8 * i)) & 0xff));
}

/* MEMOIZE k entries (None each), then fetch entry i fetches[i] times,
 * alternating BINGET and LONG_BINGET. */
static void memo_then_fetch(const unsigned *fetches, size_t k)
{
	n = 0;
	op(0x80);
	op(4);
	op('(');
	for (size_t i = 0; i < k; i++) {
		op('N');
		op(0x94);
	}
	for (size_t i = 0; i < k; i++)
		for (unsigned j = 0; j < fetches[i]; j++) {
			if (j % 2)
				u32('j', (uint32_t)i);
			else {
				op('h');
				op((int)i);
			}
		}
	op('l');
	op('.');
}

static int count(struct mp_pk_fetches *f, long *pos_after)
{
	FILE *in = fmemopen(pk, n, "rb");
	int rc;

	cr_assert_not_null(in);
	rc = mp_pk_count_fetches(in, f);
	*pos_after = ftell(in);
	fclose(in);
	return rc;
}

Test(pickle_fetches, counts_each_entry_up_to_three)
{
	const unsigned fetches[] = {0, 1, 2, 3, 7, 0, 1};
	struct mp_pk_fetches f;
	long pos;

	memo_then_fetch(fetches, 7);
	cr_assert_eq(count(&f, &pos), 1);
	cr_assert_eq(pos, 0, "put back at its start");
	cr_assert_eq(f.n, 7);
	for (size_t i = 0; i < 7; i++)
		cr_assert_eq(mp_pk_fetches_left(&f, i),
		             fetches[i] > MP_PK_FETCHES_MANY ? MP_PK_FETCHES_MANY : fetches[i],
		             "entry %zu", i);
	cr_assert_eq(mp_pk_fetches_left(&f, 7), 0, "past the memo");
	mp_pk_fetches_take(&f, 2);
	cr_assert_eq(mp_pk_fetches_left(&f, 2), 1);
	mp_pk_fetches_take(&f, 2);
	cr_assert_eq(mp_pk_fetches_left(&f, 2), 0);
	mp_pk_fetches_take(&f, 2);
	cr_assert_eq(mp_pk_fetches_left(&f, 2), 0, "no fetches left stays none");
	mp_pk_fetches_take(&f, 4);
	cr_assert_eq(mp_pk_fetches_left(&f, 4), MP_PK_FETCHES_MANY, "many is never counted down");
	cr_assert_eq(mp_pk_fetches_left(&f, 3), 3, "a neighbour in the same byte untouched");
	mp_pk_fetches_free(&f);
}

/* Strings of every width, one longer than the scan buffer, between a
 * MEMOIZE and its fetch; the count starts where the stream was. */
Test(pickle_fetches, skips_every_argument)
{
	struct mp_pk_fetches f;
	FILE *in;
	size_t big = 600000;

	n = 0;
	op('x'); /* not part of the pickle: the stream starts past it */
	op(0x80);
	op(4);
	op(0x95); /* FRAME */
	for (int i = 0; i < 8; i++)
		op(i == 0 ? 0x99 : 0);
	op('N');
	op(0x94);
	op(0x8c); /* SHORT_BINUNICODE 'hj' (a fetch's opcode inside a string) */
	op(2);
	op('h');
	op(0);
	u32('X', (uint32_t)big); /* BINUNICODE past the buffer, full of BINGET 0 */
	for (size_t i = 0; i < big; i++)
		op(i % 2 ? 0 : 'h');
	op(0x8e); /* BINBYTES8 of 3 */
	op(3);
	for (int i = 0; i < 7; i++)
		op(0);
	op('h');
	op(0);
	op('h');
	op('J'); /* BININT of 'h' 0 'h' 0 */
	op('h');
	op(0);
	op('h');
	op(0);
	op('G'); /* BINFLOAT */
	for (int i = 0; i < 8; i++)
		op('h');
	op(0x8a); /* LONG1 of 2 */
	op(2);
	op('h');
	op(0);
	op('h'); /* the one real fetch */
	op(0);
	op('.');
	in = fmemopen(pk, n, "rb");
	cr_assert_not_null(in);
	cr_assert_eq(fgetc(in), 'x');
	cr_assert_eq(mp_pk_count_fetches(in, &f), 1);
	cr_assert_eq(ftell(in), 1);
	cr_assert_eq(f.n, 1);
	cr_assert_eq(mp_pk_fetches_left(&f, 0), 1);
	mp_pk_fetches_free(&f);
	fclose(in);
}

Test(pickle_fetches, nothing_counted_for_binput_or_an_unknown_opcode)
{
	const unsigned fetches[] = {1, 1};
	struct mp_pk_fetches f;
	long pos;

	memo_then_fetch(fetches, 2);
	pk[6] = 'q'; /* the second MEMOIZE made a BINPUT */
	cr_assert_eq(count(&f, &pos), 0);
	cr_assert_eq(pos, 0);
	cr_assert_null(f.bits);
	cr_assert_eq(f.n, 0);

	memo_then_fetch(fetches, 2);
	pk[3] = 'c'; /* GLOBAL: refused by the machine */
	cr_assert_eq(count(&f, &pos), 0);
	cr_assert_eq(f.n, 0);
}

Test(pickle_fetches, a_truncated_pickle_is_counted_to_its_end)
{
	const unsigned fetches[] = {2, 1};
	struct mp_pk_fetches f;
	long pos;

	memo_then_fetch(fetches, 2);
	n -= 6; /* ... 'j' 0 0 | 0 0 'h' 1 'l' '.': LONG_BINGET cut in its argument */
	cr_assert_eq(count(&f, &pos), 1);
	cr_assert_eq(pos, 0);
	cr_assert_eq(mp_pk_fetches_left(&f, 0), 1, "the cut fetch not counted");
	cr_assert_eq(mp_pk_fetches_left(&f, 1), 0);
	mp_pk_fetches_free(&f);
}

Test(pickle_fetches, a_pipe_is_not_counted)
{
	struct mp_pk_fetches f;
	int fd[2];
	FILE *in;

	cr_assert_eq(pipe(fd), 0);
	cr_assert_eq(write(fd[1], "\x80\x04N\x94h\x00.", 7), 7);
	close(fd[1]);
	in = fdopen(fd[0], "rb");
	cr_assert_not_null(in);
	cr_assert_eq(mp_pk_count_fetches(in, &f), 0);
	cr_assert_eq(fgetc(in), 0x80, "nothing read from it");
	fclose(in);
}
