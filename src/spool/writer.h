/*
 * spool/writer.h - writing a spool from inside the workload.
 *
 * Any thread may append; appending copies the item into an in-memory buffer
 * under a short lock and never waits for I/O.  A background thread writes
 * full buffers as blocks (and every flush_ms, and on request), so the file
 * on disk is never more than about flush_ms behind.  When both buffers are
 * full the item is dropped and counted, never waited for.  Strings and
 * stacks are interned: the first use writes the table item, later uses get
 * the same id.  A write error turns the writer off (items are then counted
 * as dropped); it never aborts, never exits, never prints to stdout.
 *
 * Safe across fork: in the child, mp_spool_writer_forget drops the writer
 * without touching its file, lock or thread (which the child does not have).
 */
#ifndef MP_SPOOL_WRITER_H
#define MP_SPOOL_WRITER_H

#include <stddef.h>
#include <stdint.h>

#include "spool/format.h"

struct mp_spool_writer;

struct mp_spool_writer_opts {
	size_t buffer_bytes; /* each of the two buffers; 0: 4 MiB */
	int flush_ms;        /* background write period; 0: 200 ms */
};

/*
 * Create path (O_EXCL, mode 0600, close-on-exec), write header h (magic,
 * version, sizes and byte order are filled in) and start the writer thread.
 * Returns 0, or -errno with nothing left behind.
 */
int mp_spool_writer_open(struct mp_spool_writer **out, const char *path,
                         const struct mp_spool_header *h, const struct mp_spool_writer_opts *o);

/*
 * Append one whole item (head.type and head.bytes set by the caller, bytes a
 * multiple of 8).  Returns 0, or -1 when it was dropped (counted).
 * Events: use mp_spool_event, which also counts them.
 */
int mp_spool_append(struct mp_spool_writer *w, const void *item, size_t bytes);
/* Append an event (fills head). */
int mp_spool_event(struct mp_spool_writer *w, struct mp_spool_event *ev);

/* Intern a string / a stack; returns its id, or 0 when it could not be written. */
uint32_t mp_spool_string(struct mp_spool_writer *w, const char *s, size_t len);
uint32_t mp_spool_cstring(struct mp_spool_writer *w, const char *s);
uint32_t mp_spool_stack(struct mp_spool_writer *w, const uint64_t *pcs, uint32_t depth);
/* Append a meta pair (both strings interned). */
int mp_spool_meta(struct mp_spool_writer *w, const char *key, const char *value);

/* Count n items lost outside the writer (e.g. CUPTI dropped records). */
void mp_spool_count_dropped(struct mp_spool_writer *w, uint64_t n);
uint64_t mp_spool_n_dropped(const struct mp_spool_writer *w);
uint64_t mp_spool_n_events(const struct mp_spool_writer *w);

/* Ask the thread to write what is buffered now; wait=1 returns when it is on disk. */
void mp_spool_flush(struct mp_spool_writer *w, int wait);

/*
 * Write the footer (disabled says the library turned itself off), flush,
 * fsync, stop the thread, close the file and free w.  Returns 0 or -errno.
 */
int mp_spool_writer_close(struct mp_spool_writer *w, int64_t end_mono_ns, int disabled);

/* In a forked child: free w's memory only; its file and thread are the parent's. */
void mp_spool_writer_forget(struct mp_spool_writer *w);

#endif
