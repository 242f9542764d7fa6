/*
 * tests/unit/test_group_spill.c - src/store/group_spill.c: batches of
 * records with repeated keys, within a batch and across batches (enough of
 * them for runs to merge level into level), read back against sums made by
 * brute force; an empty store; a callback that stops the read; a store
 * that fills (a page limit) fails, and stays failed, with SQLite's message.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "store/group_spill.h"
#include "util/error.h"

#define N_DEV   3
#define N_STACK 40
#define N_SIZE  30
#define N_KEYS  (N_DEV * N_STACK * N_SIZE)

/* the brute force: every key's sums, and whether it was seen */
static struct mp_group_rec want[N_KEYS];
static int seen[N_KEYS];

static int key_index(int32_t device, int64_t stack_id, int64_t size_bytes)
{
	return (device * N_STACK + (int)stack_id) * N_SIZE + (int)size_bytes;
}

struct got {
	int n;
	int last; /* the last key's index: the keys come in ascending order */
	int stop_at;
};

static int check_rec(void *ctx, const struct mp_group_rec *r)
{
	struct got *g = ctx;
	int k;

	cr_assert(r->device >= 0 && r->device < N_DEV && r->stack_id >= 0 &&
	          r->stack_id < N_STACK && r->size_bytes >= 0 && r->size_bytes < N_SIZE);
	k = key_index(r->device, r->stack_id, r->size_bytes);
	cr_assert_gt(k, g->last, "key %d after %d: not in key order, or twice", k, g->last);
	cr_assert(seen[k], "key %d never added", k);
	cr_assert_eq(r->count, want[k].count, "key %d", k);
	cr_assert_eq(r->first_seq, want[k].first_seq, "key %d", k);
	cr_assert_eq(r->shared, want[k].shared, "key %d", k);
	cr_assert_eq(r->site, want[k].site, "key %d", k);
	g->last = k;
	if (++g->n == g->stop_at)
		return -42;
	return 0;
}

/* n random records into recs, summed into the brute force as the spill must */
static void random_batch(struct mp_group_rec *recs, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		struct mp_group_rec *r = &recs[i];
		int k;

		memset(r, 0, sizeof(*r));
		r->device = rand() % N_DEV;
		r->stack_id = rand() % N_STACK;
		r->size_bytes = rand() % N_SIZE;
		r->count = 1 + rand() % 5;
		r->first_seq = rand() % 100000;
		r->shared = rand() % 7 == 0 ? 2 : 0; /* any non-zero is 1 once stored */
		r->site = (uint32_t)(r->device * N_STACK +
		                     r->stack_id); /* the caller's: one per site */
		k = key_index(r->device, r->stack_id, r->size_bytes);
		if (!seen[k]) {
			want[k] = *r;
			want[k].shared = r->shared != 0;
			seen[k] = 1;
			continue;
		}
		want[k].count += r->count;
		if (r->first_seq < want[k].first_seq)
			want[k].first_seq = r->first_seq;
		want[k].shared |= r->shared != 0;
	}
}

Test(group_spill, batches_read_back_as_the_sums_in_key_order)
{
	static struct mp_group_rec recs[1000];
	struct mp_group_spill *sp;
	struct got g = {0, -1, 0};
	int b, n_keys = 0, k;

	srand(25);
	memset(seen, 0, sizeof(seen));
	cr_assert_eq(mp_group_spill_open(&sp, 0), 0);
	/* 150 batches: runs merged 8 at a time into levels 1 and 2; sizes to
	 * 1000 records, more than one blob a run */
	for (b = 0; b < 150; b++) {
		size_t n = (size_t)(b % 10 == 3 ? 0 : 1 + rand() % 1000);

		random_batch(recs, n);
		cr_assert_eq(mp_group_spill_add(sp, recs, n), 0, "batch %d: %s", b,
		             mp_group_spill_error(sp));
		if (b == 20 || b == 149) { /* read back midway too: reading changes nothing */
			g.n = 0;
			g.last = -1;
			cr_assert_eq(mp_group_spill_foreach(sp, check_rec, &g), 0);
		}
	}
	for (k = 0; k < N_KEYS; k++)
		n_keys += seen[k];
	cr_assert_eq(g.n, n_keys);
	cr_assert_gt(n_keys, N_KEYS / 2);
	mp_group_spill_close(sp);
}

Test(group_spill, an_empty_store_reads_nothing)
{
	struct mp_group_spill *sp;
	struct got g = {0, -1, 0};

	cr_assert_eq(mp_group_spill_open(&sp, 0), 0);
	cr_assert_eq(mp_group_spill_add(sp, NULL, 0), 0);
	cr_assert_eq(mp_group_spill_foreach(sp, check_rec, &g), 0);
	cr_assert_eq(g.n, 0);
	mp_group_spill_close(sp);
	mp_group_spill_close(NULL);
}

Test(group_spill, the_callback_stops_the_read)
{
	static struct mp_group_rec recs[500];
	struct mp_group_spill *sp;
	struct got g = {0, -1, 10};
	int b;

	srand(7);
	memset(seen, 0, sizeof(seen));
	cr_assert_eq(mp_group_spill_open(&sp, 0), 0);
	for (b = 0; b < 3; b++) {
		random_batch(recs, 500);
		cr_assert_eq(mp_group_spill_add(sp, recs, 500), 0);
	}
	cr_assert_eq(mp_group_spill_foreach(sp, check_rec, &g), -42);
	cr_assert_eq(g.n, 10);
	mp_group_spill_close(sp);
}

Test(group_spill, a_full_store_fails_and_stays_failed)
{
	static struct mp_group_rec recs[200];
	struct mp_group_spill *sp;
	struct got g = {0, -1, 0};
	int b, rc = 0;

	srand(3);
	memset(seen, 0, sizeof(seen));
	cr_assert_eq(mp_group_spill_open(&sp, 4), 0);
	for (b = 0; b < 100 && rc == 0; b++) {
		random_batch(recs, 200);
		rc = mp_group_spill_add(sp, recs, 200);
	}
	cr_assert_eq(rc, MP_EFULL, "rc %d after %d batches", rc, b);
	cr_assert(strstr(mp_group_spill_error(sp), "database or disk is full"), "%s",
	          mp_group_spill_error(sp));
	random_batch(recs, 1);
	cr_assert_eq(mp_group_spill_add(sp, recs, 1), MP_EFULL);
	cr_assert_eq(mp_group_spill_foreach(sp, check_rec, &g), MP_EFULL);
	cr_assert_eq(g.n, 0);
	mp_group_spill_close(sp);
}

/* Batches in orders that strain a sort: ascending, descending, one key
 * only, organ pipe, few keys; each read back against the brute force. */
Test(group_spill, ordered_and_repeated_batches_sort_and_sum)
{
	static struct mp_group_rec recs[3000];
	struct mp_group_spill *sp;
	int shape, i;

	for (shape = 0; shape < 5; shape++) {
		struct got g = {0, -1, 0};
		int n = 3000;

		memset(seen, 0, sizeof(seen));
		cr_assert_eq(mp_group_spill_open(&sp, 0), 0);
		for (i = 0; i < n; i++) {
			int k = shape == 0   ? i % N_KEYS
			        : shape == 1 ? (n - 1 - i) % N_KEYS
			        : shape == 2 ? 77
			        : shape == 3 ? (i < n / 2 ? i : n - 1 - i) % N_KEYS
			                     : (i * 7) % 5;
			struct mp_group_rec *r = &recs[i];

			memset(r, 0, sizeof(*r));
			r->device = k / (N_STACK * N_SIZE);
			r->stack_id = k / N_SIZE % N_STACK;
			r->size_bytes = k % N_SIZE;
			r->count = 1;
			r->first_seq = 1000000 - i;
			r->site = (uint32_t)(r->device * N_STACK + r->stack_id);
			if (!seen[k]) {
				want[k] = *r;
				seen[k] = 1;
			} else {
				want[k].count++;
				want[k].first_seq = r->first_seq; /* falling: the last is least */
			}
		}
		cr_assert_eq(mp_group_spill_add(sp, recs, (size_t)n), 0);
		cr_assert_eq(mp_group_spill_foreach(sp, check_rec, &g), 0);
		for (i = 0; i < N_KEYS; i++)
			g.n -= seen[i];
		cr_assert_eq(g.n, 0, "shape %d", shape);
		mp_group_spill_close(sp);
	}
}
