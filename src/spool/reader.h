/*
 * spool/reader.h - reading a spool back (in the memprof CLI, never in
 * the workload).
 *
 * Validates the header, then each block (magic, size, sequence, checksum) and
 * each item (type, size, table ids in range and defined once) before handing
 * it out.  Whether an event's ids were defined is the importer's to check:
 * an unknown id looks up as NULL.  A spool
 * cut short ends at its last complete block and is reported truncated; a
 * corrupt block ends the spool there, reported truncated with the offset and
 * what was wrong (mp_spool_reader_damage).  A bad header is an error naming
 * the file.  Memory: one block, plus the string, stack and module tables.
 */
#ifndef MP_SPOOL_READER_H
#define MP_SPOOL_READER_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "spool/format.h"
#include "util/error.h"

struct mp_spool_reader;

/*
 * Start reading f (positioned at its start; not closed by the reader);
 * name is used in messages.  Returns 0, or MP_EFORMAT (not a spool, other
 * byte order, newer version, short header) / MP_EIO / MP_ENOMEM with err
 * naming the file and what was wrong.
 */
int mp_spool_reader_open(struct mp_spool_reader **out, FILE *f, const char *name,
                         struct mp_error *err);
void mp_spool_reader_close(struct mp_spool_reader *r);

const struct mp_spool_header *mp_spool_reader_header(const struct mp_spool_reader *r);

/*
 * The next item that is not a table item (events, meta, devices, footer);
 * strings, stacks and modules are kept in the tables below as they pass.
 * Returns 1 with *item valid until the next call, 0 at the end (footer or
 * cut), or a negative MP_E* code (MP_ENOMEM, MP_EIO) with err filled.
 */
int mp_spool_reader_next(struct mp_spool_reader *r, const struct mp_spool_item_head **item,
                         struct mp_error *err);

/* After the end: was there a footer?  If not, why it stopped (static text
 * or NULL) and at which byte offset. */
int mp_spool_reader_complete(const struct mp_spool_reader *r);
const char *mp_spool_reader_damage(const struct mp_spool_reader *r, uint64_t *offset);
/* The footer, NULL when the spool has none. */
const struct mp_spool_footer *mp_spool_reader_footer(const struct mp_spool_reader *r);

/* Smallest whole size of an item of a known type; 8 for others (readers
 * that check items themselves, such as the live follower, use it too). */
size_t mp_spool_min_item_bytes(uint16_t type);

/* Tables: NULL (depth 0) for an unknown id. */
const char *mp_spool_reader_string(const struct mp_spool_reader *r, uint32_t id, size_t *len);
const uint64_t *mp_spool_reader_stack(const struct mp_spool_reader *r, uint32_t id,
                                      uint32_t *depth);
size_t mp_spool_reader_n_modules(const struct mp_spool_reader *r);
const struct mp_spool_module *mp_spool_reader_module(const struct mp_spool_reader *r, size_t i);

#endif
