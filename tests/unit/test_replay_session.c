/*
 * tests/unit/test_replay_session.c - the library parts of 'memprof replay'
 * that cmd/ used to hold: a rank's results and notes packed to bytes and
 * the job's unpacked from every rank's (replay/pack.c: in rank order, notes
 * prefixed with their rank, bytes that are not packed ranks refused), the
 * pool option names that match with '-' and '_' as one, and the notes a
 * session keeps (replay/session.c: at most MP_REPLAY_MAX_NOTES).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "replay/pack.h"
#include "replay/session.h"

static struct mp_replay_result result(const char *pool, int32_t device, uint64_t peak)
{
	struct mp_replay_result r;

	memset(&r, 0, sizeof(r));
	snprintf(r.pool, sizeof(r.pool), "%s", pool);
	r.backend = "sim";
	r.device = device;
	r.total_ns = peak;
	return r;
}

static void free_unpacked(struct mp_replay_unpacked *u)
{
	for (size_t i = 0; i < u->n_notes; i++)
		free(u->notes[i]);
	free(u->results);
	free(u->ranks);
}

Test(replay_pack, two_ranks_back_in_rank_order)
{
	struct mp_replay_result r0[2] = {result("caching", 0, 10), result("direct", 0, 20)};
	struct mp_replay_result r1[1] = {result("caching", 1, 30)};
	char *notes0[1] = {"first"}, *notes1[2] = {"second", "third"};
	size_t n0, n1, lens[2];
	unsigned char *b0 = mp_replay_pack(r0, 2, notes0, 1, &n0);
	unsigned char *b1 = mp_replay_pack(r1, 1, notes1, 2, &n1);
	unsigned char *all = malloc(n0 + n1);
	char *notes[8];
	struct mp_replay_unpacked u = {.notes = notes, .max_notes = 8};

	cr_assert(b0 && b1 && all);
	memcpy(all, b0, n0);
	memcpy(all + n0, b1, n1);
	lens[0] = n0;
	lens[1] = n1;
	cr_assert_eq(mp_replay_unpack(all, lens, 2, "host", &u), 0);
	cr_assert_eq(u.n_results, 3);
	cr_assert_str_eq(u.results[1].pool, "direct");
	cr_assert_eq(u.results[2].device, 1);
	cr_assert_eq(u.results[2].total_ns, 30);
	cr_assert_str_eq(u.results[2].backend, "host");
	cr_assert_eq(u.ranks[0], 0);
	cr_assert_eq(u.ranks[2], 1);
	cr_assert_eq(u.n_notes, 3);
	cr_assert_str_eq(u.notes[0], "rank 0: first");
	cr_assert_str_eq(u.notes[2], "rank 1: third");
	free_unpacked(&u);
	free(b0);
	free(b1);
	free(all);
}

Test(replay_pack, bytes_that_are_not_a_rank_are_refused)
{
	struct mp_replay_result r[1] = {result("caching", 0, 1)};
	char *note[1] = {"a note"};
	size_t n, lens[1];
	unsigned char *b = mp_replay_pack(r, 1, note, 1, &n);
	char *notes[4];
	struct mp_replay_unpacked u = {.notes = notes, .max_notes = 4};

	cr_assert(b);
	lens[0] = n - 1; /* the note's NUL cut off */
	cr_assert_eq(mp_replay_unpack(b, lens, 1, "sim", &u), -1);
	free_unpacked(&u);
	memset(&u, 0, sizeof(u));
	u.notes = notes;
	u.max_notes = 4;
	lens[0] = 4; /* shorter than the header */
	cr_assert_eq(mp_replay_unpack(b, lens, 1, "sim", &u), -1);
	free_unpacked(&u);
	free(b);
}

Test(replay_session, option_names_match_with_hyphen_or_underscore)
{
	cr_assert(mp_replay_same_option_name("compact-at", "compact_at"));
	cr_assert(mp_replay_same_option_name("world_size", "world-size"));
	cr_assert(!mp_replay_same_option_name("world-size", "world-sizes"));
	cr_assert(!mp_replay_same_option_name("worldsize", "world-size"));
}

Test(replay_session, notes_stop_at_the_limit)
{
	struct mp_replay_settings set = {.pools = "all", .baseline = "caching", .device = -1};
	struct mp_replay_session s;

	mp_replay_session_init(&s, &set, NULL, NULL);
	for (int i = 0; i < MP_REPLAY_MAX_NOTES + 5; i++)
		mp_replay_session_note(&s, "note %d", i);
	cr_assert_eq(s.n_notes, MP_REPLAY_MAX_NOTES);
	cr_assert_str_eq(s.notes[3], "note 3");
	mp_replay_session_free(&s);
	cr_assert_eq(s.n_notes, 0);
}
