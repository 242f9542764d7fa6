/*
 * report/csv_writer.h - writing records as memprof CSV (memprof-trace(5)),
 * the exact form 'memprof import' reads back.  Receives records, never a
 * database handle.  Not thread-safe.
 */
#ifndef MP_REPORT_CSV_WRITER_H
#define MP_REPORT_CSV_WRITER_H

#include <stdio.h>

#include "memprof/trace.h"

struct mp_csv_writer;

/* Start writing to out (not closed by the writer); writes the header, with
 * the optional duration_ns column when durations is set. */
struct mp_csv_writer *mp_csv_writer_open(FILE *out, int durations);
/* Append one record; records need their stacks resolved (MP_READ_STACKS). */
int mp_csv_writer_record(struct mp_csv_writer *w, const struct memprof_record *rec);
/* Flush and free; returns 0, or -1 with errno set when a write failed. */
int mp_csv_writer_close(struct mp_csv_writer *w);

#endif
