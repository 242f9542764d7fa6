/*
 * import/csv.h - reader for the memprof CSV trace format (memprof-trace(5)).
 *
 * Turns a stream of text into rows: one event each, with its phase, API and
 * stack still as text.  Checks syntax, values and timestamp order, and names
 * the file, line and column of the first problem.  Knows nothing of the store.
 */
#ifndef MP_IMPORT_CSV_H
#define MP_IMPORT_CSV_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "memprof/trace.h"
#include "util/error.h"

/* The columns, in the order memprof writes them. */
enum mp_csv_column {
	MP_CSV_TS_NS,
	MP_CSV_OP,
	MP_CSV_ID,
	MP_CSV_SIZE,
	MP_CSV_REQUESTED,
	MP_CSV_ADDRESS,
	MP_CSV_DEVICE,
	MP_CSV_STREAM,
	MP_CSV_PID,
	MP_CSV_PHASE,
	MP_CSV_API,
	MP_CSV_DEVICE_FREE,
	MP_CSV_THREAD,
	MP_CSV_STACK,
	MP_CSV_DURATION_NS, /* optional; appended in schema v3 */
	MP_CSV_N_COLUMNS
};

extern const char *const mp_csv_column_names[MP_CSV_N_COLUMNS];

struct mp_csv_row {
	struct memprof_event ev;         /* seq and the *_id links are left 0 */
	int64_t line;                    /* line the row starts on */
	int64_t pid;                     /* 0 when the pid column is absent or empty */
	const char *phase, *api, *stack; /* NULL when empty; valid until the next row */
	size_t phase_len, api_len, stack_len;
	int64_t stack_col; /* column where the stack field starts */
	/* 1: the phase (api) is the same text as the previous row's, which was
	 * not empty either (a hint: 0 says nothing) */
	unsigned char same_phase, same_api;
};

struct mp_csv_reader;

/* Start reading f (named name in messages) and read its header. */
int mp_csv_open(struct mp_csv_reader **out, FILE *f, const char *name, struct mp_error *err);
/* 1 and *row filled, 0 at the end, or MP_EFORMAT / MP_EIO with err filled. */
int mp_csv_next(struct mp_csv_reader *r, struct mp_csv_row *row, struct mp_error *err);
void mp_csv_close(struct mp_csv_reader *r);

/* Does this text start like a memprof CSV trace (a header naming ts_ns and op)? */
int mp_csv_probe(const char *head, size_t n);

#endif
