/*
 * report/timeline_csv.h - the timeline of 'memprof analyze --timeline' as
 * CSV: one row per kept state, devices in ascending ordinal.  Receives the
 * timeline result, never a database handle; never prints elsewhere.
 */
#ifndef MP_REPORT_TIMELINE_CSV_H
#define MP_REPORT_TIMELINE_CSV_H

#include <stdio.h>

#include "analysis/timeline.h"

#define MP_TIMELINE_CSV_HEADER "device,ts_ns,seq,live_bytes,requested_bytes,reserved_bytes\n"

/*
 * Write the header, then the rows of every device (device_or_minus1 ==
 * MP_TIMELINE_ALL_DEVICES) or of that one device only (just the header when
 * it had no event).  reserved_bytes is empty while the device has had no
 * segment-level event.  Flushes out; returns 0, or MP_EIO when a write
 * failed (out's errno says why).
 */
int mp_timeline_csv_write(FILE *out, const struct mp_timeline *t, int device_or_minus1);

/* The rows of one series, without the header; same returns. */
int mp_timeline_csv_write_series(FILE *out, const struct mp_timeline_series *s);

#endif
