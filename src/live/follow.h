/*
 * live/follow.h - following the spools of a spool directory while their
 * processes write them (in 'memprof record', never in the workload).
 *
 * Each round (mp_live_follow_poll) lists the directory, opens the spools it
 * has not seen (names given as "skip" are another run's and never read),
 * and reads from each the blocks that are complete on disk since the last
 * round.  A block still being written (the file ends inside it) is left for
 * the next round.  A block that is complete but wrong (magic, size,
 * sequence, checksum, an item) stops that spool for good, with a note
 * naming the file and byte offset; a footer ends it.  Every item of a block
 * is checked before any is handed out.  Table items (strings, stacks,
 * modules) are kept per spool for lookups and handed out too.
 *
 * Memory: the tables of each spool plus one block.  Not thread-safe: one
 * thread polls and looks up.
 */
#ifndef MP_LIVE_FOLLOW_H
#define MP_LIVE_FOLLOW_H

#include <stddef.h>
#include <stdint.h>

#include "spool/format.h"

struct mp_live_follow;
struct mp_live_spool;

/*
 * Called for each item of each new complete block, in file order; spool is
 * the spool it came from (index: mp_live_spool_index, from 0 in the order
 * spools were first seen).  A nonzero return stops the round and is
 * returned by mp_live_follow_poll.
 */
typedef int (*mp_live_item_fn)(void *arg, const struct mp_live_spool *spool,
                               const struct mp_spool_item_head *item);

/* dir: the spool directory; skip: names (not paths) of spools to leave
 * alone (copied).  NULL when out of memory. */
struct mp_live_follow *mp_live_follow_new(const char *dir, char *const *skip, size_t n_skip);
void mp_live_follow_free(struct mp_live_follow *f);

/*
 * One round.  Returns the number of items handed out (0 when nothing was
 * new), fn's nonzero return, or MP_ENOMEM.  An unreadable directory or
 * spool is not an error: it is tried again next round (a spool file that
 * cannot be opened may not be written yet).
 */
int mp_live_follow_poll(struct mp_live_follow *f, mp_live_item_fn fn, void *arg);

size_t mp_live_follow_n_spools(const struct mp_live_follow *f);
const struct mp_live_spool *mp_live_follow_spool(const struct mp_live_follow *f, size_t i);

size_t mp_live_spool_index(const struct mp_live_spool *s);
const char *mp_live_spool_path(const struct mp_live_spool *s);
/* NULL until the spool's header has been read. */
const struct mp_spool_header *mp_live_spool_header(const struct mp_live_spool *s);
/* Bytes read so far (header and complete blocks). */
uint64_t mp_live_spool_offset(const struct mp_live_spool *s);
/* 1 once its footer was read. */
int mp_live_spool_ended(const struct mp_live_spool *s);
/* Why the spool was stopped ("bad checksum in block 3 at byte 4096 of
 * 'x.mpt'"), NULL while it is read normally. */
const char *mp_live_spool_note(const struct mp_live_spool *s);

/* Tables; NULL (length or depth 0) for an id not defined (yet). */
const char *mp_live_spool_string(const struct mp_live_spool *s, uint32_t id, size_t *len);
const uint64_t *mp_live_spool_stack(const struct mp_live_spool *s, uint32_t id, uint32_t *depth);
size_t mp_live_spool_n_modules(const struct mp_live_spool *s);
const struct mp_spool_module *mp_live_spool_module(const struct mp_live_spool *s, size_t i);

#endif
