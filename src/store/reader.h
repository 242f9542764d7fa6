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

/* Push every remaining record to the consumers, then call their on_end.
 * The rows are decoded straight from the trace file's pages where it holds
 * what SQLite sees (store/event_pages.h), else read through SQL: the same
 * records either way. */
int mp_reader_run(struct mp_reader *r);

/* Of the records read so far, how many were decoded from the events
 * table's pages (mp_reader_run, where the file holds what SQLite sees) and
 * how many read through SQL (the rest, or where the pages could not be
 * read directly, or with MEMPROF_READ_PAGES=0). */
void mp_reader_read_counts(const struct mp_reader *r, int64_t *from_pages, int64_t *by_sql);

void mp_reader_close(struct mp_reader *r);

/* --- beside the event stream: pinned host buffers and NUMA nodes (not events) ---
 * Written by the importers through store/host_buffers.h (schema v3). */

/* Where some of a buffer's pages are. */
struct mp_host_buffer_node {
	int32_t node;
	int64_t bytes; /* the buffer's bytes on node (estimated from the pages sampled) */
	int64_t pages; /* pages sampled found there; 0: the node the allocation named */
};

/* A pinned host buffer (cudaMallocHost, cudaHostAlloc, host registration, cuMemCreate). */
struct mp_host_buffer {
	int64_t id; /* set by mp_store_add_host_buffer */
	int64_t process_id;
	int32_t device; /* of the context that pinned it, -1 unknown */
	uint64_t address;
	int64_t size_bytes;
	int64_t alloc_ts_ns;
	int64_t free_ts_ns; /* -1: still pinned at the end of the trace */
	int64_t api_id;     /* 0 none */
	int64_t stack_id;   /* 0 none */
	uint32_t thread;    /* 0 unknown */
	size_t n_nodes;     /* nodes holding pages of it; 0: placement unknown */
	const struct mp_host_buffer_node *nodes;
	/* Filled by mp_store_each_host_buffer only: */
	const char *api;                   /* NULL none */
	const struct memprof_stack *stack; /* NULL none */
};

/*
 * Call fn for every host buffer in id order, with its nodes, API name and
 * call stack; everything it points to is valid during the call only.  Stops
 * and returns fn's value when it is not 0.
 */
int mp_store_each_host_buffer(struct mp_store *s,
                              int (*fn)(void *ctx, const struct mp_host_buffer *b), void *ctx);

/* A device row's nearest host node. */
struct mp_device_node {
	int64_t process_id;
	int32_t ordinal;
	int32_t node; /* -1 unknown */
};

/* Every device of the trace with its node, by process and ordinal (malloc'd; free it). */
int mp_store_device_nodes(struct mp_store *s, struct mp_device_node **out, size_t *n);

#endif
