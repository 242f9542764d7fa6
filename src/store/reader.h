/*
 * store/reader.h - the ordered event stream every analysis reads.
 *
 * Events come in sequence order, one at a time, with names and (when asked)
 * call stacks resolved; memory grows with the number of distinct stacks and
 * names, never with the trace length.  Either pull records with
 * mp_reader_next, or register consumers and let mp_reader_run push every
 * record to each of them (many analyses, one pass).  Not thread-safe.
 */
#ifndef MP_STORE_READER_H
#define MP_STORE_READER_H

#include "memprof/trace.h"
#include "store/store.h"

enum {
	MP_READ_STACKS = 1 << 0, /* resolve call stacks (costs a lookup per new stack) */
};

/*
 * A consumer: on_record is called for every record in order, on_end once
 * after the last.  A negative return stops the run and is returned by
 * mp_reader_run (MP_ESTOP stops without an error).  Any callback may be NULL.
 */
struct mp_consumer {
	const char *name;
	void *ctx;
	unsigned flags; /* MP_READ_* this consumer needs */
	int (*on_record)(void *ctx, const struct memprof_record *rec);
	int (*on_end)(void *ctx);
};

struct mp_reader;

int mp_reader_open(struct mp_store *s, unsigned flags, struct mp_reader **out);

/* Pull the next record: 1 and *rec set, 0 at the end, or a negative error.
 * *rec stays valid until the next call. */
int mp_reader_next(struct mp_reader *r, const struct memprof_record **rec);

/* Register a consumer (copied).  Up to 32 per reader. */
int mp_reader_add(struct mp_reader *r, const struct mp_consumer *c);

/* Push every remaining record to the consumers, then call their on_end. */
int mp_reader_run(struct mp_reader *r);

void mp_reader_close(struct mp_reader *r);

/* Beside the event stream: pinned host buffers and NUMA nodes (not events). */
#include "store/host_buffers.h"

#endif
