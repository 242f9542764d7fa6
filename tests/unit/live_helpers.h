/*
 * tests/unit/live_helpers.h - spools for the tests of src/live, written
 * with the real writer (one block per lh_flush), and cutting them at block
 * boundaries to play a spool that grows.
 */
#ifndef MP_TEST_LIVE_HELPERS_H
#define MP_TEST_LIVE_HELPERS_H

#include <stddef.h>
#include <stdint.h>

#include "spool/writer.h"
#include "live/follow.h"
#include "live/state.h"

struct lh_spool {
	struct mp_spool_writer *w;
};

void lh_open(struct lh_spool *s, const char *path, int64_t pid);
uint32_t lh_str(struct lh_spool *s, const char *text);
void lh_meta(struct lh_spool *s, const char *key, const char *value);
void lh_module(struct lh_spool *s, const char *path, uint64_t start, uint64_t end);
uint32_t lh_stack(struct lh_spool *s, uint64_t pc0, uint64_t pc1);
/* An event: ev's head is filled in. */
void lh_event(struct lh_spool *s, struct mp_spool_event ev);
/* An allocation (free when free_call) call of bytes at addr on device 0. */
void lh_alloc(struct lh_spool *s, const char *api, uint64_t addr, uint64_t bytes, int64_t dur_ns,
              uint32_t stack);
void lh_free(struct lh_spool *s, const char *api, uint64_t addr);
void lh_flush(struct lh_spool *s);
void lh_close(struct lh_spool *s);

/* Offsets where each block of the spool at path ends (the first: the header's
 * end); returns how many (at most max). */
size_t lh_block_ends(const char *path, uint64_t *ends, size_t max);
/* dst becomes the first n bytes of src. */
void lh_copy(const char *src, const char *dst, uint64_t n);

/* Follow dir until nothing is new, into st (started at 0 ns); the follower
 * is returned (the state refers to its spools). */
struct mp_live_follow *lh_follow_all(const char *dir, struct mp_live_state *st);

#endif
