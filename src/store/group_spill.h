/*
 * store/group_spill.h - the store where analysis/lifetime puts the
 * (device, call site, size) groups it evicts from memory: a temporary SQLite
 * database (a file SQLite deletes on close, SQLite's temporary directory:
 * SQLITE_TMPDIR, TMPDIR, /var/tmp, /usr/tmp, /tmp) with a bounded page
 * cache, holding sorted runs of records (blobs) that a merge adds up by
 * group.  Memory: the page cache and a few 12 KiB buffers.  Not
 * thread-safe.
 */
#ifndef MP_STORE_GROUP_SPILL_H
#define MP_STORE_GROUP_SPILL_H

#include <stddef.h>
#include <stdint.h>

/* The page cache of the spill database, in KiB. */
#define MP_GROUP_SPILL_CACHE_KIB 2048

/* One record of a group, or the sum of its records. */
struct mp_group_rec {
	int64_t stack_id, size_bytes;
	int64_t count;     /* allocations: summed */
	int64_t first_seq; /* of the earliest allocation: the least kept */
	int32_t device;
	uint32_t site;  /* the caller's site index: kept from the first record */
	int32_t shared; /* two allocations live at once: or-ed */
};

struct mp_group_spill;

/*
 * A new, empty store in *out.  max_pages > 0 caps the database's pages (for
 * tests: a full disk); 0 leaves it unbounded.  Returns 0, MP_ENOMEM or MP_EIO
 * (*out is then still set, with its message, and must be closed; it is NULL
 * only for MP_ENOMEM).
 */
int mp_group_spill_open(struct mp_group_spill **out, int64_t max_pages);
/* Add n records (reordered here: sorted by key, those of one key summed
 * into the first) in one transaction: each is summed into its group's
 * sums.  0, MP_EFULL (disk or page limit full), MP_ENOMEM or MP_EIO; the
 * message in mp_group_spill_error.  After a failure every later add and
 * foreach returns the same code (the store may be half written). */
int mp_group_spill_add(struct mp_group_spill *sp, struct mp_group_rec *recs, size_t n);
/* Call fn with every group's sums (shared 0 or 1), in key order: device,
 * then stack_id, then size_bytes, ascending; stops at fn's first negative
 * return and returns it.  Else 0, or an MP_E* code with the message in
 * mp_group_spill_error. */
int mp_group_spill_foreach(struct mp_group_spill *sp,
                           int (*fn)(void *ctx, const struct mp_group_rec *r), void *ctx);
/* What the last failure was ("" when none). */
const char *mp_group_spill_error(const struct mp_group_spill *sp);
/* sp may be NULL. */
void mp_group_spill_close(struct mp_group_spill *sp);

#endif
