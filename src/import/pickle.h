/*
 * import/pickle.h - a reader for Python pickles of plain data (protocols 2
 * to 5): None, bools, ints of any length, floats, strings, bytes, lists,
 * tuples, dicts and sets, with the memo and frames.  It never executes or
 * imports anything: opcodes that would (GLOBAL, REDUCE, BUILD, ...) are
 * refused with their name and byte offset.  Knows nothing of PyTorch.
 */
#ifndef MP_IMPORT_PICKLE_H
#define MP_IMPORT_PICKLE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "util/error.h"

enum mp_pk_type {
	MP_PK_NONE = 1,
	MP_PK_BOOL,
	MP_PK_INT,    /* fits int64, or uint64 when is_u64 */
	MP_PK_BIGINT, /* an int that fits neither: only its byte length is kept */
	MP_PK_FLOAT,
	MP_PK_STR,
	MP_PK_BYTES,
	MP_PK_LIST,
	MP_PK_TUPLE,
	MP_PK_DICT,
	MP_PK_SET,
	MP_PK_RETIRED, /* a list or tuple its reader is done with: v.i is the reader's tag */
};

/*
 * A value.  Values may be shared (the memo) and containers may even hold
 * themselves: walk them along a known shape, never recursively at large.
 */
struct mp_pk {
	enum mp_pk_type type;
	unsigned char is_u64; /* MP_PK_INT: the value is (uint64_t)i, at least 2^63 */
	unsigned char pinned; /* private: memoized or duplicated (reachable twice) */
	unsigned char gotten; /* private: times pushed again from the memo, 255: more */
	size_t n;             /* STR, BYTES: bytes; LIST, TUPLE, SET: items; DICT: pairs */
	union {
		int64_t i; /* INT, BOOL */
		double f;
		const char *s;        /* STR (UTF-8), BYTES: not NUL-terminated */
		struct mp_pk **items; /* LIST, TUPLE, SET: n; DICT: key, value, ... (2n) */
	} v;
	size_t cap;        /* private: allocated slots of items */
	uint64_t memo_idx; /* private: the memo index when pinned by the memo */
};

struct mp_pickle;

/* The most of an input read (an endless stream is refused past it). */
#define MP_PICKLE_MAX_BYTES (INT64_C(4) << 30)

/*
 * Unpickle in (named name in messages) as it is read, in chunks of a few
 * MiB at most, up to its STOP opcode and at most MP_PICKLE_MAX_BYTES; an
 * input is refused at its first bad opcode, before the rest is read.  On
 * success
 * *out holds the document; its root is mp_pickle_root().  Errors are
 * MP_EFORMAT with the byte offset and the opcode, MP_EIO or MP_ENOMEM.
 */
int mp_pickle_load(struct mp_pickle **out, FILE *in, const char *name, struct mp_error *err);
/*
 * Streaming: a hook called for each item appended to the list
 * root['device_traces'][list] of a root dict, as soon as it is complete,
 * item = its index in that list.  Once the hook returns, the item (a dict)
 * and the scalars only it holds are released, and the list stays empty:
 * memory is bounded by what the rest of the document keeps, not by the
 * number of items.  An input that can seek back (a file) is first walked
 * once without building anything (pickle_fetches.c) to count how often each
 * memo entry is fetched again: the memo then keeps an entry only until its
 * last fetch, an item fetched again later is kept, and the strings never
 * fetched go with their item, so the memo follows what is still to be
 * shared, not the file.  A pipe is counted the same way through a
 * temporary copy of what the count read (util/pipe_tee.h); where no
 * temporary file can be made (or only in a tmpfs) it is not counted: every memo entry stays (8
 * bytes each) and a later memo reference to a released item is an error.  The hook
 * returns 0 or a negative error code (with err set).
 * input_bytes is the bytes of input read so far (up to the item's end) at
 * each call, and the whole pickle's size once mp_pickle_load_stream returns.
 */
struct mp_pickle_stream {
	int (*item)(void *ctx, size_t list, size_t item, const struct mp_pk *v,
	            struct mp_error *err);
	void *ctx;
	size_t input_bytes; /* set by mp_pickle_load_stream before each call */
	size_t memo_held;   /* memo entries left when mp_pickle_load_stream returned */
};
/* mp_pickle_load with a stream hook (s may be NULL). */
int mp_pickle_load_stream(struct mp_pickle **out, FILE *in, const char *name,
                          struct mp_pickle_stream *s, struct mp_error *err);
/* The same from a buffer (read in place; nothing refers to it afterwards). */
int mp_pickle_load_buffer(struct mp_pickle **out, const void *data, size_t len, const char *name,
                          struct mp_error *err);
const struct mp_pk *mp_pickle_root(const struct mp_pickle *p);
/* Value slots carved out so far (released ones are reused, not counted again). */
size_t mp_pickle_n_slots(const struct mp_pickle *p);
/* Bytes of the pickle read, up to and including its STOP opcode. */
size_t mp_pickle_size(const struct mp_pickle *p);
void mp_pickle_free(struct mp_pickle *p);

/* Does a file start like a pickle of protocol 2 or later (0x80, version)? */
int mp_pickle_probe(const char *head, size_t n);

/* The value of key in dict d, or NULL (also when d is not a dict). */
const struct mp_pk *mp_pk_get(const struct mp_pk *d, const char *key);
/*
 * Free the items of a list or tuple and make it MP_PK_RETIRED, holding tag
 * (v.i): a stream hook may do this to a list it has read, so that memo
 * references still find the value and give the hook back its tag, not the
 * items.  Appending to a retired list is refused like appending to any
 * non-list.  Other values are left alone.
 */
void mp_pk_retire(struct mp_pk *v, int64_t tag);
/* Does s (a STR) equal text? */
int mp_pk_str_is(const struct mp_pk *s, const char *text);
/* Is v an INT (or BOOL) that fits int64?  Then *out holds it. */
int mp_pk_int(const struct mp_pk *v, int64_t *out);

#endif
