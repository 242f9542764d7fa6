/*
 * analysis/extents.h - the free extents (holes) of one device's reserved
 * memory, kept in address order so that the largest hole and the sum of
 * holes are known after every change, each change costing O(log n) in the
 * number of live blocks and containers (a segment or map change also
 * re-checks the k blocks it may move in or out of a container: O((k+1)
 * log n), k usually 0).
 *
 * Two models (DESIGN.md section 3; memprof-analyze(1) documents both):
 *
 *   segments (granularity 0): reserved memory is the containers the trace
 *     names.  Reserved segments (mp_extents_add_segment) never merge, even
 *     when adjacent: an allocator cannot place a block across two of them.
 *     Mapped ranges (mp_extents_map) that touch or overlap merge into one
 *     container, as the pages of an expandable segment do; unmapping a range
 *     cuts it out of them.  Containers never overlap: a segment that overlaps
 *     any container, or a map that overlaps a reserved segment, is refused.
 *     A hole is a maximal part of a container that no live block covers.  A
 *     block not wholly inside one container is "outside": it makes no hole,
 *     and the free bytes between it and its address-order neighbours in the
 *     container it starts in are not counted either.
 *
 *   address space (granularity G > 0): there are no containers.  Reserved
 *     memory is modelled as the G-aligned granules that live blocks touch
 *     (block [a, a+s) touches granules floor(a/G) .. ceil((a+s)/G)-1; a
 *     zero-size block touches none); a region is a run of consecutive
 *     touched granules; a hole is a maximal part of a region that no live
 *     block covers.  The segment and map calls are refused (MP_EINVAL), and
 *     so is a block whose last granule would end past 2^64.
 *
 * Live blocks that overlap one another (a corrupt or lossy trace) are kept
 * and counted; the holes next to them are then approximate (never
 * negative): each hole is measured from a block's address-order
 * predecessor only, so free space under a long block that also contains a
 * shorter one may count as a hole (and, in the address-space model, its
 * granules may count twice).  Memory grows with the live blocks and
 * containers only.  Not thread-safe.
 */
#ifndef MP_ANALYSIS_EXTENTS_H
#define MP_ANALYSIS_EXTENTS_H

#include <stdint.h>

struct mp_extents;

struct mp_extents_figures {
	uint64_t container_bytes; /* reserved bytes: containers, or touched granules */
	uint64_t hole_bytes;      /* sum of holes */
	uint64_t largest_hole;    /* largest single hole, 0 when none */
	uint64_t n_holes;
	uint64_t n_blocks;     /* live blocks held */
	uint64_t n_outside;    /* live blocks not wholly inside one container (segments model) */
	uint64_t n_overlaps;   /* block adds that overlapped a live block, since creation */
	uint64_t n_containers; /* containers (segments model) or regions (address space) */
};

/* granularity 0: the segments model; a power of two: the address-space
 * model at that granularity.  Returns 0, MP_EINVAL or MP_ENOMEM. */
int mp_extents_new(uint64_t granularity, struct mp_extents **out);
void mp_extents_destroy(struct mp_extents *x);

/* A block [address, address+size) becomes live.  key is unique among the
 * live blocks (the caller's block id).  Returns 0 or MP_ENOMEM; MP_EINVAL
 * when key is already live or address+size wraps.  A zero-size block is
 * counted in n_blocks but covers nothing: it splits no hole and is never
 * outside or overlapping. */
int mp_extents_add_block(struct mp_extents *x, uint64_t key, uint64_t address, uint64_t size);
/* The block added with key and address stops being live.  Returns 1 when
 * removed, 0 when no such block is live. */
int mp_extents_remove_block(struct mp_extents *x, uint64_t key, uint64_t address);

/* A reserved segment [address, address+size).  Returns 0, MP_ENOMEM, or
 * MP_EINVAL (address-space model, a wrapping range, or a range that
 * overlaps a segment or mapped range already there).  A zero-size segment
 * reserves nothing and is not recorded. */
int mp_extents_add_segment(struct mp_extents *x, uint64_t address, uint64_t size);
/* The segment reserved at address is released.  Returns 1 when removed, 0
 * when none is reserved there.  Blocks still live inside it stay, outside. */
int mp_extents_remove_segment(struct mp_extents *x, uint64_t address);

/* Pages [address, address+size) are mapped: merged with mapped ranges they
 * touch or overlap.  Returns 0, MP_ENOMEM or MP_EINVAL (address-space
 * model, a wrapping range, or a range that overlaps a reserved segment). */
int mp_extents_map(struct mp_extents *x, uint64_t address, uint64_t size);
/* Pages [address, address+size) are unmapped: cut out of the mapped
 * ranges (which may split one).  Returns the number of bytes that were
 * mapped and no longer are (less than size when part was not mapped; bytes
 * of reserved segments are never unmapped), or MP_ENOMEM / MP_EINVAL (as
 * map, or size above INT64_MAX) as a negative value. */
int64_t mp_extents_unmap(struct mp_extents *x, uint64_t address, uint64_t size);

/* The figures as they are now, in O(1). */
void mp_extents_figures(const struct mp_extents *x, struct mp_extents_figures *f);

#endif
