/*
 * report/minimalloc_writer.h - block-level allocations of one process and
 * device as MiniMalloc CSV (id,lower,upper,size): an offline planner's input.
 * Fed records in trace order; a row is written when its block is freed, so
 * memory grows with the live set.  Receives records, never a database
 * handle.  Not thread-safe.
 */
#ifndef MP_REPORT_MINIMALLOC_WRITER_H
#define MP_REPORT_MINIMALLOC_WRITER_H

#include <stdint.h>
#include <stdio.h>

#include "memprof/trace.h"

enum mp_minimalloc_time {
	MP_MINIMALLOC_TIME_SEQ, /* event sequence numbers: unique, no ties */
	MP_MINIMALLOC_TIME_NS,  /* timestamps (ts_ns) */
};

struct mp_minimalloc_opts {
	enum mp_minimalloc_time time;
	int select;         /* 1: only the blocks of process_id on device */
	int64_t process_id; /* a processes row id, not a pid */
	int32_t device;
};

struct mp_minimalloc_stats {
	int64_t n_rows;
	int64_t n_unfreed;         /* never freed: closed at the last time + 1 */
	int64_t n_unmatched_frees; /* frees of blocks never allocated: no row */
	int64_t n_widened;         /* freed at the time of their alloc: upper = lower + 1 */
	int64_t n_reused_ids;      /* an alloc of an id still live: the earlier block ends */
};

struct mp_minimalloc_writer;

/* Start writing to out (not closed by the writer); writes the header.  NULL
 * when out of memory. */
struct mp_minimalloc_writer *mp_minimalloc_writer_open(FILE *out,
                                                       const struct mp_minimalloc_opts *o);
/* Take one record (every record of the trace, in order: the writer selects).
 * 0, or -1 with errno set when a write failed or memory ran out. */
int mp_minimalloc_writer_record(struct mp_minimalloc_writer *w, const struct memprof_record *rec);
/* Write the rows of blocks still live, flush and free w; st (may be NULL)
 * receives the counts.  0, or -1 with errno set when a write failed. */
int mp_minimalloc_writer_close(struct mp_minimalloc_writer *w, struct mp_minimalloc_stats *st);

#endif
