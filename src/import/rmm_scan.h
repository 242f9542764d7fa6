/*
 * import/rmm_scan.h - the line scanner for RAPIDS RMM logging_resource_adaptor
 * logs (CSV written by spdlog: Thread,Time,Action,Pointer,Size,Stream).
 *
 * Turns a stream into rows, checks every field and names the file, line and
 * column of the first problem.  Knows nothing of the store or of pairing.
 * Memory is one fixed buffer, whatever the length of the input.
 */
#ifndef MP_IMPORT_RMM_SCAN_H
#define MP_IMPORT_RMM_SCAN_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "util/error.h"

/* The header line RMM writes, once, before the rows. */
#define MP_RMM_HEADER "Thread,Time,Action,Pointer,Size,Stream"

/* The longest line the scanner takes; a valid row is under 200 bytes. */
#define MP_RMM_MAX_LINE (1 << 20)

enum mp_rmm_action {
	MP_RMM_ALLOCATE = 1, /* "allocate" */
	MP_RMM_FREE,         /* "free" */
	MP_RMM_FAILURE,      /* "allocate failure" */
};

struct mp_rmm_row {
	int64_t line;     /* where the row is, from 1 */
	int64_t thread;   /* OS thread id */
	int64_t time_ns;  /* time of day, 0 to 86,400,999,999,999 (a leap second) */
	int action;       /* enum mp_rmm_action */
	uint64_t pointer; /* 0 for "(nil)" */
	int64_t size;     /* bytes, 0 to 2^63-1 */
	uint64_t stream;  /* 0: the default stream */
	int time_col;     /* where the time field starts, from 1 (for messages) */
};

struct mp_rmm_scanner;

/*
 * Start reading in (which stays the caller's): reads up to the header line
 * and checks it.  name is used in messages.  max_line is the buffer size,
 * the longest line taken: 0 for MP_RMM_MAX_LINE (tests use small ones).
 * 0, or a negative MP_E* code with err filled (MP_EFORMAT when the input is
 * empty or not an RMM log).
 */
int mp_rmm_scan_open(struct mp_rmm_scanner **out, FILE *in, const char *name, size_t max_line,
                     struct mp_error *err);

/*
 * The next row: 1 and *row filled, 0 at the end, or a negative MP_E* code
 * with err filled.  A last line without a line end that is not a valid row
 * (a log cut off mid-line) ends the rows: see mp_rmm_scan_dropped_partial.
 */
int mp_rmm_scan_next(struct mp_rmm_scanner *s, struct mp_rmm_row *row, struct mp_error *err);

/* Was a partial last line dropped?  Its line number, or 0. */
int64_t mp_rmm_scan_dropped_partial(const struct mp_rmm_scanner *s);

void mp_rmm_scan_close(struct mp_rmm_scanner *s);

/* Do these first n bytes of a file start with the RMM log header? */
int mp_rmm_probe(const char *head, size_t n);

#endif
