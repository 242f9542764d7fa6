/*
 * replay/peak_state.h - the fragmentation of reserved memory at the
 * reserved peak, kept during the one replay pass that has no address map
 * (no --verify): the engine reports every change the address map would get
 * (blocks placed and taken back, segments reserved and released, ranges
 * mapped and unmapped) and says when the reserved peak rises; at the end
 * the holes of the state of the last rise are measured once, as an
 * mp_extents holding that state would give them.  Between two rises the changes go to a journal
 * that is applied to the saved state at the next rise; a journal longer than twice the live state
 * is dropped and the saved state copied from the current one instead (the current blocks from the
 * caller, who keeps them anyway), so each change costs O(1) amortised and memory grows with the
 * live state only.  Map and unmap calls that would make containers overlap a segment are the
 * caller's to avoid (the address map refuses them). Not thread-safe.
 */
#ifndef MP_REPLAY_PEAK_STATE_H
#define MP_REPLAY_PEAK_STATE_H

#include <stddef.h>
#include <stdint.h>

struct mp_peak_state;

/* A new, empty state, or NULL when out of memory. */
struct mp_peak_state *mp_peak_state_new(void);
/*
 * The same, for block keys mostly below n_keys (a replay's allocation
 * indices): those are found in an array of 4 bytes a key, made when the
 * first block is saved, instead of a hash map.
 */
struct mp_peak_state *mp_peak_state_new_keys(size_t n_keys);
void mp_peak_state_free(struct mp_peak_state *ps);

/* The changes, as mp_extents takes them.  Each returns 0 or MP_ENOMEM. */
int mp_peak_state_add_block(struct mp_peak_state *ps, uint64_t key, uint64_t addr, uint64_t size);
int mp_peak_state_remove_block(struct mp_peak_state *ps, uint64_t key);
int mp_peak_state_add_segment(struct mp_peak_state *ps, uint64_t addr, uint64_t size);
int mp_peak_state_remove_segment(struct mp_peak_state *ps, uint64_t addr);
int mp_peak_state_map(struct mp_peak_state *ps, uint64_t addr, uint64_t size);
int mp_peak_state_unmap(struct mp_peak_state *ps, uint64_t addr, uint64_t size);

/* Gives each current block to emit (which returns 0 or MP_ENOMEM); 0 or MP_ENOMEM. */
typedef int (*mp_peak_state_emit_fn)(void *emit_ctx, uint64_t key, uint64_t addr, uint64_t size);
typedef int (*mp_peak_state_blocks_fn)(void *ctx, mp_peak_state_emit_fn emit, void *emit_ctx);

/*
 * Save the current state as the one at the peak.  blocks(ctx, ...) lists
 * the current blocks: those added and not removed since, as the caller
 * keeps them (called only when the journal cannot be used).  0 or MP_ENOMEM.
 */
int mp_peak_state_save(struct mp_peak_state *ps, mp_peak_state_blocks_fn blocks, void *ctx);

/*
 * The holes of the saved state, as mp_extents_figures gives them for the
 * same blocks and containers: 0, or MP_ENOMEM.  *saved is 0 when nothing
 * was saved (the figures are then zero).
 */
int mp_peak_state_holes(const struct mp_peak_state *ps, uint64_t *hole_bytes,
                        uint64_t *largest_hole, int *saved);

#endif
