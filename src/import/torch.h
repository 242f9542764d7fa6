/*
 * import/torch.h - what the PyTorch snapshot importer's two halves share:
 * a snapshot checked and flattened into plain arrays (torch.c), and the
 * reconstruction of the allocator state at the start of the trace window
 * (torch_window.c), the order entries are written in (torch_order.c), and
 * the temporary file that keeps a long trace out of memory (torch_spill.c).
 * Internal to src/import/.
 */
#ifndef MP_IMPORT_TORCH_H
#define MP_IMPORT_TORCH_H

#include <stddef.h>
#include <stdint.h>

#include "import/pickle.h"
#include "util/error.h"

#include <stdio.h>

enum tp_action {
	TP_ALLOC = 1,
	TP_FREE_REQUESTED,
	TP_FREE_COMPLETED,
	TP_FREE, /* older PyTorch: one 'free' for both */
	TP_SEGMENT_ALLOC,
	TP_SEGMENT_FREE,
	TP_SEGMENT_MAP,
	TP_SEGMENT_UNMAP,
	TP_OOM,
	TP_SNAPSHOT,
	TP_PHASE_BEGIN, /* external_annotations START */
	TP_PHASE_END,   /* external_annotations END */
	TP_OTHER,       /* an action memprof does not know */
};

/* A trace entry or an annotation, checked: 56 bytes, one for each entry of
 * the trace until the window is rebuilt and the devices merged. */
struct tp_entry {
	uint64_t addr;
	int64_t size; /* blocks: the size the program asked for (PyTorch traces no more) */
	uint64_t stream;
	int64_t ts_ns; /* time_us * 1000, never below the previous entry's */
	union {
		int64_t granted;          /* alloc and frees: the block's size when the final state
		                             has it (allocs only), else -1 */
		int64_t device_free;      /* oom: what CUDA reported free; -1 unknown */
		const struct mp_pk *name; /* annotations: the name (a STR) */
	};
	union {
		const struct mp_pk *frames; /* has_local 0: the frames list, or NULL */
		int64_t local; /* has_local 1 (streamed): its local stack in torch.c, 0 none */
	};
	int32_t device;
	uint8_t action; /* enum tp_action */
	uint8_t has_local;
};

/* A block or segment of the final state, or one live at the window start. */
struct tp_block {
	uint64_t addr;
	int64_t size, requested;
	int pending; /* active_pending_free: freed by the program, not yet reusable */
	const struct mp_pk *frames;
};

struct tp_segment {
	uint64_t addr;
	int64_t size;
	int expandable;
	uint64_t stream;
	const struct mp_pk *frames;
};

/*
 * Where a device's first entries went when they were spilled to the
 * temporary file (torch_spill.c): chunk k holds entries [k * TP_CHUNK,
 * (k + 1) * TP_CHUNK) at file offset at[k].
 */
#define TP_CHUNK 1024
struct tp_spill;
struct tp_chunks {
	uint64_t *at;
	size_t n, cap;
	struct tp_spill *spill; /* the file; NULL while nothing is spilled */
};

struct tp_device {
	int32_t ordinal;
	/* The device's trace, in order: n_entries in all, the first
	 * spilled.n * TP_CHUNK in the spill file (read them with a tp_reader),
	 * the rest here. */
	struct tp_entry *entries;
	size_t n_entries;
	struct tp_chunks spilled;
	struct tp_block *final_blocks; /* active blocks of the final state */
	size_t n_final_blocks;
	struct tp_segment *final_segments;
	size_t n_final_segments;
	/* filled by mp_torch_window */
	struct tp_block *initial_blocks; /* pending ones first */
	size_t n_initial_blocks;
	struct tp_segment *initial_segments;
	size_t n_initial_segments;
	int64_t initial_mapped_bytes; /* of expandable segments */
	uint64_t expandable_addr;     /* where to put them */
	int64_t n_mismatches;         /* final state that disagrees with the trace */
};

/*
 * The temporary file that holds the chunks of entries streamed past the
 * first TP_CHUNK of a device (torch_spill.c), made on first use beside
 * beside_path (the output; $TMPDIR or /tmp when NULL) and unlinked at
 * once; input names the snapshot in messages.
 */
struct tp_spill *tp_spill_new(const char *beside_path, const char *input);
void tp_spill_free(struct tp_spill *s);
/*
 * Append e to a list whose entries after its spilled chunks are tail[0,
 * *n_tail) (of *cap): a full chunk of tail is written to s first.  0,
 * MP_ENOMEM or MP_EIO, with err filled.
 */
int tp_spill_append(struct tp_spill *s, struct tp_chunks *c, struct tp_entry **tail, size_t *n_tail,
                    size_t *cap, const struct tp_entry *e, struct mp_error *err);

/* Reads a device's entries in order, spilled or not, one chunk in memory. */
struct tp_reader {
	const struct tp_device *d;
	struct tp_entry *buf; /* the chunk last read */
	size_t chunk;         /* its index; SIZE_MAX: none */
	int failed;           /* a read failed: MP_EIO */
};
void tp_reader_init(struct tp_reader *r, const struct tp_device *d);
const struct tp_entry *tp_reader_load(struct tp_reader *r, size_t i);
/* Entry i of the device (i < n_entries); NULL (r->failed set) when it could not be read. */
static inline const struct tp_entry *tp_reader_at(struct tp_reader *r, size_t i)
{
	size_t base = r->d->spilled.n * TP_CHUNK;

	if (i >= base)
		return &r->d->entries[i - base];
	if (i / TP_CHUNK == r->chunk)
		return &r->buf[i % TP_CHUNK];
	return tp_reader_load(r, i);
}
void tp_reader_free(struct tp_reader *r);
/* Entry i read, or its granted size written, wherever it is: 0 or MP_EIO. */
int tp_entry_get(const struct tp_device *d, size_t i, struct tp_entry *out);
int tp_entry_set_granted(struct tp_device *d, size_t i, int64_t granted);
/* The message of the last failed spill read or write (for MP_EIO). */
const char *tp_spill_error(const struct tp_spill *s);

/*
 * Find what was live on d when its trace starts: blocks and segments freed
 * in the window without being allocated in it, and those of the final state
 * the window never touched.  Also gives each window alloc that survives to
 * the end the granted size (block size) the final state records.  0,
 * MP_ENOMEM, or MP_EIO when the spill file could not be read or written.
 */
int mp_torch_window(struct tp_device *d);

/*
 * The entries of devices and the annotations in the order they are written
 * (torch_order.c): time, then phase starts, memory, phase ends, then
 * device and position.  annotation_device[i] is annotation i's device index.
 */
struct tp_cursor;
struct tp_order {
	const struct tp_device *devices;
	uint32_t n_devices;
	struct tp_reader *readers; /* one a device */
	struct tp_entry current;   /* the entry last given */
	const struct tp_entry *annotations;
	const size_t *annotation_device;
	size_t *annotation_order; /* annotation indexes, sorted */
	struct tp_cursor *heap;   /* one cursor per list not yet done */
	size_t n_heap;
};

/* 0, MP_ENOMEM or MP_EIO (a spilled entry could not be read).  The arrays
 * must outlive o. */
int mp_torch_order_init(struct tp_order *o, const struct tp_device *devices, size_t n_devices,
                        const struct tp_entry *annotations, const size_t *annotation_device,
                        size_t n_annotations);
/* The next entry and its device index: 1, 0 when all are given, or MP_EIO
 * or MP_ENOMEM.  *e stays valid until the next call. */
int mp_torch_order_next(struct tp_order *o, size_t *device, const struct tp_entry **e);
/* The time of the first entry not yet given (0 when none is left). */
int64_t mp_torch_order_first_ts(const struct tp_order *o);
void mp_torch_order_free(struct tp_order *o);

/*
 * The size PyTorch's caching allocator grants for a request it traced:
 * rounded up to 512 bytes.  Exact for blocks that were split off a larger
 * one; a large block left unsplit (less than 1 MiB over) is bigger.
 */
int64_t mp_torch_round_size(int64_t requested);

/*
 * A snapshot read, checked and flattened (the window found) without being
 * written: for the merge of a recorded process's history (torch_merge.c).
 * Returns 0 with *out set, or a negative MP_E* code with err filled.  The
 * devices and their frames belong to the document.
 */
struct mp_torch_doc;
int mp_torch_doc_load(struct mp_torch_doc **out, FILE *in, const char *path, struct mp_error *err);
struct tp_device *mp_torch_doc_devices(struct mp_torch_doc *d, size_t *n);
const struct mp_pk *mp_torch_doc_root(const struct mp_torch_doc *d);
void mp_torch_doc_free(struct mp_torch_doc *d);

#endif
