/*
 * import/csv_reader.h - the CSV reader's state, shared by its general path
 * (import/csv.c) and its fast path (import/csv_fast.c).  Internal to those
 * two files: the rest of memprof uses import/csv.h.
 */
#ifndef MP_IMPORT_CSV_READER_H
#define MP_IMPORT_CSV_READER_H

#include "import/csv.h"

#define READ_CHUNK       (1 << 20)
#define READ_PAD         16 /* zeroed bytes before and after the data: 16-byte loads stay inside */
#define MAX_RECORD_BYTES (16 << 20)
#define MAX_FIELDS       (MP_CSV_N_COLUMNS + 1)

struct field {
	const char *ptr; /* set when the record is complete */
	size_t off, len; /* off: into scratch, while scanning a quoted record */
	int64_t line, col;
};

struct mp_csv_reader {
	FILE *f;
	char *name;
	unsigned char *mem; /* READ_PAD zeroed bytes, then buf */
	unsigned char *buf; /* READ_CHUNK bytes and READ_PAD more */
	size_t buf_len, buf_pos;
	size_t fast_end; /* just past the last '\n' in buf, 0 when none */
	int eof;
	int64_t line, col;                      /* position of the next byte */
	int column_field[MP_CSV_N_COLUMNS];     /* field index of each column, or -1 */
	unsigned char field_column[MAX_FIELDS]; /* column of each header field */
	unsigned char absent[MP_CSV_N_COLUMNS]; /* the columns the header lacks */
	int n_absent;
	int n_header_fields;
	int layout;    /* enum mp_csv_layout: the fast path's parse of a row */
	char *scratch; /* unescaped bytes of the current record's fields */
	size_t scratch_len, scratch_cap;
	struct field fields[MAX_FIELDS];
	int n_fields, too_many;
	int64_t record_line;
	int64_t prev_ts;
	int64_t prev_ts_line;
	struct {
		char text[16]; /* the previous row's phase (api), the ',' after it, more */
		unsigned len;  /* its length, 1 to 14; 0: none to compare with */
	} prev_name[2];        /* set by the fast path of a standard layout only */
};

/* Header layouts the fast path parses in a straight line. */
enum mp_csv_layout {
	MP_CSV_LAYOUT_ANY,        /* by the header's column of each field */
	MP_CSV_LAYOUT_STD,        /* ts_ns,op,id,size,requested,address,device,stream,pid,
	                           * phase,api,device_free,stack (bench/gen_csv_trace) */
	MP_CSV_LAYOUT_STD_THREAD, /* the same with thread before stack (memprof export) */
};

/* The layout of the header r has read. */
int mp_csv_fast_layout(const struct mp_csv_reader *r);

/*
 * The fast path: when the line at the reading position is a plain row (no
 * quotes, no blanks around values, every value well formed and within its
 * range, every field the header names), parse it into *row, move past it
 * and return 1.  Otherwise return 0 having consumed nothing: the general
 * path then reads that line and reports whatever is wrong with it.  A row
 * whose time goes back is declined too (the general path reports it); a
 * row taken sets prev_ts and prev_ts_line.
 */
int mp_csv_fast_row(struct mp_csv_reader *r, struct mp_csv_row *row);

#endif
