/*
 * import/torch_merge_write.c - a recorded process's PyTorch history written
 * into its trace: the snapshot's clock (Unix microseconds) aligned with the
 * spool's (monotonic ns) by the segments both saw reserved, its blocks
 * written as block-level events of the spool's process (api "PyTorch
 * allocator"), each checked to lie inside a segment CUPTI saw reserved at
 * that moment, and what was found said in notes and meta torch_*.  The
 * events are appended: the import sorts them (mp_import_stats.unsorted).
 */
#include "import/torch_merge.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/array.h"
#include "util/satmath.h"
#include "util/trace_window.h"

#define TOLERANCE_NS 2000 /* time_us is whole microseconds: a block may seem early by one */

struct tm_live {
	int64_t id, size, requested;
	int pending;
};

/* What writing the blocks needs and counts. */
struct tm_write {
	struct mp_spool_in *in;
	struct mp_torch_merge *m;
	int64_t shift;     /* added to a snapshot time (Unix ns) to give spool time */
	int64_t tolerance; /* of the check, ns */
	int64_t api_id, next_id;
	struct mp_intmap live; /* (device, address) -> index + 1 into blocks */
	struct tm_live *blocks;
	size_t n_blocks, cap_blocks;
	struct mp_intmap stacks; /* frames list (pointer) -> stack id */
	int64_t max_seg_size;
	int64_t n_blocks_written, n_outside_address, n_outside_time, n_unmatched;
};

static uint64_t key_of(int32_t device, uint64_t address)
{
	return ((uint64_t)(uint32_t)device << 48) ^ address;
}

/* --- clocks ---------------------------------------------------------------------- */

static int by_value(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

/* The recorded segment at the address of snapshot segment entry e closest in time to t. */
static const struct tm_segment *match(const struct mp_torch_merge *m, int32_t device,
                                      const struct tp_entry *e, int64_t t)
{
	const struct tm_segment *best = NULL;
	size_t i;

	for (i = 0; i < m->n_segs; i++) {
		const struct tm_segment *s = &m->segs[i];

		if (s->device == device && s->address == e->addr &&
		    (!best || llabs(s->t0 - t) < llabs(best->t0 - t)))
			best = s;
	}
	return best;
}

/*
 * The shift from snapshot time to spool time: the process's own offset
 * (start_unix_ns - start_mono_ns), corrected by the median gap between the
 * segments the snapshot traced and the same segments CUPTI recorded; the
 * spread of those gaps bounds the check's tolerance.  *n_matched: how many.
 */
static int align(struct tm_write *tw, int64_t *correction, int64_t *spread, size_t *n_matched)
{
	const struct mp_spool_header *h = mp_spool_reader_header(tw->in->r);
	int64_t base = mp_sat_sub(h->start_unix_ns, h->start_mono_ns), *gaps = NULL;
	size_t n = 0, cap = 0, i, j;

	*correction = *spread = 0;
	for (i = 0; i < tw->m->n_devices; i++) {
		const struct tp_device *d = &tw->m->devices[i];

		for (j = 0; j < d->n_entries; j++) {
			const struct tp_entry *e = &d->entries[j];
			const struct tm_segment *s;
			int64_t t = mp_sat_sub(e->ts_ns, base);

			if ((e->action != TP_SEGMENT_ALLOC && e->action != TP_SEGMENT_MAP) ||
			    !(s = match(tw->m, d->ordinal, e, t)))
				continue;
			if (mp_array_reserve((void **)&gaps, &cap, n + 1, sizeof(*gaps)) < 0) {
				free(gaps);
				return MP_ENOMEM;
			}
			gaps[n++] = mp_sat_sub(s->t0, t);
		}
	}
	if (n) {
		qsort(gaps, n, sizeof(*gaps), by_value);
		*correction = gaps[n / 2];
		*spread = llabs(gaps[0] - *correction) > llabs(gaps[n - 1] - *correction)
		                  ? llabs(gaps[0] - *correction)
		                  : llabs(gaps[n - 1] - *correction);
	}
	free(gaps);
	*n_matched = n;
	tw->shift = mp_sat_add(-base, *correction);
	tw->tolerance = TOLERANCE_NS + *spread;
	return 0;
}

/* --- the check --------------------------------------------------------------------- */

static int by_place(const void *a, const void *b)
{
	const struct tm_segment *x = a, *y = b;

	if (x->device != y->device)
		return x->device < y->device ? -1 : 1;
	return x->address < y->address ? -1 : x->address > y->address;
}

/* 0: inside a segment reserved at ts; 1: only at other times; 2: in no segment at all. */
static int placed(const struct tm_write *tw, int32_t device, uint64_t address, int64_t size,
                  int64_t ts)
{
	const struct mp_torch_merge *m = tw->m;
	size_t lo = 0, hi = m->n_segs;
	int found = 0;

	while (lo < hi) { /* the first segment past (device, address) */
		size_t mid = lo + (hi - lo) / 2;
		const struct tm_segment *s = &m->segs[mid];

		if (s->device < device || (s->device == device && s->address <= address))
			lo = mid + 1;
		else
			hi = mid;
	}
	while (lo-- > 0) {
		const struct tm_segment *s = &m->segs[lo];

		if (s->device != device || s->address + (uint64_t)tw->max_seg_size <= address)
			break;
		if (address + (uint64_t)size > s->address + (uint64_t)s->size)
			continue;
		if (ts >= s->t0 - tw->tolerance &&
		    (s->t1 == INT64_MAX || ts <= s->t1 + tw->tolerance))
			return 0;
		found = 1;
	}
	return found ? 1 : 2;
}

static void check(struct tm_write *tw, int32_t device, uint64_t address, int64_t size, int64_t ts)
{
	switch (placed(tw, device, address, size, ts)) {
	case 1:
		tw->n_outside_time++;
		break;
	case 2:
		tw->n_outside_address++;
		break;
	default:
		break;
	}
}

/* --- writing ------------------------------------------------------------------------ */

/* Copy a STR (or nothing) NUL-terminated at *at, past it. */
static void str_of(const struct mp_pk *v, char **at)
{
	if (v && v->type == MP_PK_STR) {
		memcpy(*at, v->v.s, v->n);
		*at += v->n;
	}
	*(*at)++ = '\0';
}

/* The stack of a snapshot frames list, interned once per list. */
static int64_t stack_of(struct tm_write *tw, const struct mp_pk *frames)
{
	struct memprof_frame *fr;
	struct memprof_stack st;
	char *text, *at;
	size_t i, need = 1;
	uint64_t id;
	int64_t sid;

	if (!frames || (frames->type != MP_PK_LIST && frames->type != MP_PK_TUPLE) || !frames->n)
		return 0;
	if (mp_intmap_get(&tw->stacks, (uint64_t)(uintptr_t)frames, &id))
		return (int64_t)id;
	for (i = 0; i < frames->n; i++) {
		const struct mp_pk *n = mp_pk_get(frames->v.items[i], "name"),
		                   *f = mp_pk_get(frames->v.items[i], "filename");

		need += (n && n->type == MP_PK_STR ? n->n : 0) +
		        (f && f->type == MP_PK_STR ? f->n : 0) + 2;
	}
	fr = calloc(frames->n, sizeof(*fr));
	text = malloc(need);
	if (!fr || !text) {
		free(fr);
		free(text);
		return MP_ENOMEM;
	}
	for (i = 0, at = text; i < frames->n; i++) {
		const struct mp_pk *f = frames->v.items[i];
		int64_t line = 0;

		fr[i].name = at;
		str_of(mp_pk_get(f, "name"), &at);
		fr[i].file = at;
		str_of(mp_pk_get(f, "filename"), &at);
		fr[i].line = mp_pk_int(mp_pk_get(f, "line"), &line) && line > 0 ? line : 0;
	}
	st.n_frames = (uint32_t)frames->n;
	st.frames = fr;
	sid = mp_writer_stack(tw->in->c->w, &st);
	free(fr);
	free(text);
	if (sid >= 0 && mp_intmap_put(&tw->stacks, (uint64_t)(uintptr_t)frames, (uint64_t)sid) < 0)
		return MP_ENOMEM;
	return sid < 0 ? MP_EIO : sid;
}

static int put(struct tm_write *tw, struct memprof_event *ev, const struct mp_pk *frames)
{
	struct mp_import_ctx *c = tw->in->c;
	int64_t sid = stack_of(tw, frames);

	if (sid < 0)
		return (int)sid;
	ev->stack_id = sid;
	ev->process_id = tw->in->process_id;
	ev->api_id = tw->api_id;
	ev->device_free_bytes = -1;
	if (mp_writer_event(c->w, ev) < 0)
		return MP_EIO;
	c->st->n_events++;
	if (ev->op == MEMPROF_OP_ALLOC || ev->op == MEMPROF_OP_PREEXISTING)
		c->st->n_allocs++;
	return 0;
}

static int close_block(struct tm_write *tw, int op, int32_t device, uint64_t address, int64_t size,
                       int64_t ts, uint64_t stream, const struct mp_pk *frames);

/* An alloc or preexisting block: opened, checked, written. */
static int open_block(struct tm_write *tw, int op, int32_t device, uint64_t address, int64_t size,
                      int64_t requested, int64_t ts, uint64_t stream, const struct mp_pk *frames)
{
	struct memprof_event ev = {0};
	struct tm_live *b;
	int rc;

	if (mp_intmap_get(&tw->live, key_of(device, address), NULL)) {
		/* the history lost a free: the old block ends here */
		tw->in->c->st->n_warnings[MP_WARN_DUPLICATE_ALLOC]++;
		if ((rc = close_block(tw, MEMPROF_OP_FREE, device, address, 0, ts, stream, NULL)) <
		    0)
			return rc;
	}
	if (mp_array_reserve((void **)&tw->blocks, &tw->cap_blocks, tw->n_blocks + 1,
	                     sizeof(*tw->blocks)) < 0 ||
	    mp_intmap_put(&tw->live, key_of(device, address), tw->n_blocks + 1) < 0)
		return MP_ENOMEM;
	b = &tw->blocks[tw->n_blocks++];
	*b = (struct tm_live){++tw->next_id, size,
	                      requested >= 0 && requested <= size ? requested : size, 0};
	check(tw, device, address, size, ts);
	tw->n_blocks_written++;
	ev = (struct memprof_event){.ts_ns = ts,
	                            .op = op,
	                            .alloc_id = b->id,
	                            .size_bytes = size,
	                            .requested_bytes = b->requested,
	                            .address = address,
	                            .device = device,
	                            .stream = stream};
	return put(tw, &ev, frames);
}

/* A free (requested or completed) of the block at address. */
static int close_block(struct tm_write *tw, int op, int32_t device, uint64_t address, int64_t size,
                       int64_t ts, uint64_t stream, const struct mp_pk *frames)
{
	struct memprof_event ev = {
	        .ts_ns = ts, .op = op, .address = address, .device = device, .stream = stream};
	uint64_t at;

	if (!mp_intmap_get(&tw->live, key_of(device, address), &at)) {
		tw->in->c->st->n_warnings[MP_WARN_UNMATCHED_FREE]++;
		ev.alloc_id = ++tw->next_id;
		ev.size_bytes = ev.requested_bytes = size;
		return put(tw, &ev, frames);
	}
	if (op == MEMPROF_OP_FREE_REQUESTED && tw->blocks[at - 1].pending)
		return 0;
	ev.alloc_id = tw->blocks[at - 1].id;
	ev.size_bytes = tw->blocks[at - 1].size;
	ev.requested_bytes = tw->blocks[at - 1].requested;
	tw->blocks[at - 1].pending = 1;
	if (op == MEMPROF_OP_FREE)
		mp_intmap_del(&tw->live, key_of(device, address));
	return put(tw, &ev, frames);
}

static int write_entry(struct tm_write *tw, int32_t device, const struct tp_entry *e)
{
	int64_t ts = mp_sat_add(e->ts_ns, tw->shift);

	switch (e->action) {
	case TP_ALLOC:
		return open_block(tw, MEMPROF_OP_ALLOC, device, e->addr,
		                  e->granted >= e->size ? e->granted : mp_torch_round_size(e->size),
		                  e->size, ts, e->stream, e->frames);
	case TP_FREE_REQUESTED:
		return close_block(tw, MEMPROF_OP_FREE_REQUESTED, device, e->addr, e->size, ts,
		                   e->stream, e->frames);
	case TP_FREE_COMPLETED:
	case TP_FREE:
		return close_block(tw, MEMPROF_OP_FREE, device, e->addr, e->size, ts, e->stream,
		                   NULL);
	default: /* segments: CUPTI's are the trace's; OOMs and the rest: the spool's */
		return 0;
	}
}

/* The last time the spool has: when a state-only snapshot's blocks are placed. */
static int64_t spool_end(const struct mp_spool_in *in)
{
	int64_t end = 0;
	size_t i;

	for (i = 0; i < in->n_events; i++)
		if (in->events[i].ts_ns > end)
			end = in->events[i].ts_ns;
	return end;
}

/* One device: what was live when its window opened, then its window. */
static int write_device(struct tm_write *tw, const struct tp_device *d)
{
	int64_t start =
	        d->n_entries ? mp_sat_add(d->entries[0].ts_ns, tw->shift) : spool_end(tw->in);
	size_t i;
	int rc = 0;

	for (i = 0; rc == 0 && i < d->n_initial_blocks; i++) {
		const struct tp_block *b = &d->initial_blocks[i];

		rc = open_block(tw, MEMPROF_OP_PREEXISTING, d->ordinal, b->addr, b->size,
		                b->requested, start, 0, b->frames);
		if (rc == 0 && b->pending)
			rc = close_block(tw, MEMPROF_OP_FREE_REQUESTED, d->ordinal, b->addr, 0,
			                 start, 0, NULL);
	}
	for (i = 0; rc == 0 && i < d->n_entries; i++)
		rc = write_entry(tw, d->ordinal, &d->entries[i]);
	return rc;
}

/* --- what was found ------------------------------------------------------------------ */

/* The device whose ring buffer was full (its history lost), or NULL. */
static const struct tp_device *lost(const struct mp_torch_merge *m)
{
	size_t i;

	for (i = 0; m->max_entries > 0 && i < m->n_devices; i++)
		if ((int64_t)m->devices[i].n_entries >= m->max_entries)
			return &m->devices[i];
	return NULL;
}

static void note_outside(const struct tm_write *tw)
{
	const struct mp_torch_merge *m = tw->m;
	int64_t n = m->n_outside[TM_NCCL] + m->n_outside[TM_CUBLAS] + m->n_outside[TM_CUDNN] +
	            m->n_outside[TM_OTHER];

	if (n)
		mp_import_note(tw->in->c->st,
		               "'%s': %" PRId64 " allocations outside PyTorch's allocator, memory "
		               "PyTorch cannot see (NCCL %" PRId64 ", cuBLAS workspace %" PRId64
		               ", cuDNN workspace %" PRId64 ", other %" PRId64
		               "): 'analyze --by=api' lists them",
		               tw->in->c->path, n, m->n_outside[TM_NCCL], m->n_outside[TM_CUBLAS],
		               m->n_outside[TM_CUDNN], m->n_outside[TM_OTHER]);
	if (tw->n_outside_address || tw->n_outside_time)
		mp_import_note(
		        tw->in->c->st,
		        "'%s': %" PRId64 " of its %" PRId64 " blocks are not inside a segment "
		        "CUPTI saw reserved at that moment: %" PRId64 " at addresses no "
		        "recorded segment covers (CUPTI lost the segment, or PyTorch got the "
		        "memory elsewhere), %" PRId64 " outside the time their segment was "
		        "reserved (the clocks disagree by more than %" PRId64 " us)",
		        tw->m->path, tw->n_outside_address + tw->n_outside_time,
		        tw->n_blocks_written, tw->n_outside_address, tw->n_outside_time,
		        tw->tolerance / 1000);
}

static void notes(const struct tm_write *tw, size_t n_matched, int64_t correction)
{
	const struct tp_device *d = lost(tw->m);
	struct mp_import_stats *st = tw->in->c->st;

	mp_import_note(st,
	               "'%s': PyTorch's own history merged (written at %s): %" PRId64
	               " blocks inside the segments CUPTI recorded",
	               tw->m->path, tw->m->reason[0] ? tw->m->reason : "an unknown moment",
	               tw->n_blocks_written);
	if (n_matched == 0)
		mp_import_note(st,
		               "'%s': no segment reserved within the history to align the clocks "
		               "on: aligned by the process's start times only",
		               tw->m->path);
	else if (correction > 1000000 || correction < -1000000)
		mp_import_note(st,
		               "'%s': its clock was %.3f ms off the spool's (aligned on %zu "
		               "segments)",
		               tw->m->path, (double)correction / 1e6, n_matched);
	note_outside(tw);
	if (d)
		mp_import_note(st,
		               "'%s': PyTorch's history ring buffer was full (max_entries=%" PRId64
		               ", device %d): what came before its first entry is lost, the blocks "
		               "live then are kept as pre-existing; record with a larger "
		               "--history-entries to keep more",
		               tw->m->path, tw->m->max_entries, d->ordinal);
	if (tw->m->user_history)
		mp_import_note(st,
		               "'%s': the program records PyTorch's history with its own settings: "
		               "memprof left them as they were",
		               tw->m->path);
}

/* PyTorch's history ends at its snapshot (at exit, before the interpreter frees its
 * tensors): what is live then is not a leak.  A window already named is kept. */
static int window_meta(struct mp_store *s)
{
	char *had = mp_store_get_meta(s, MP_WINDOW_META);
	int rc = had && *had ? 0
	                     : mp_store_set_meta(s, MP_WINDOW_META,
	                                         "PyTorch's own history, merged: its blocks end "
	                                         "where its snapshot was taken (at exit, before "
	                                         "the interpreter freed its tensors)");

	free(had);
	return rc;
}

static int write_meta(const struct tm_write *tw, int64_t correction, int64_t spread)
{
	struct mp_store *s = tw->in->c->store;
	const struct mp_torch_merge *m = tw->m;
	char buf[32];
	int rc;

	snprintf(buf, sizeof(buf), "%" PRId64, correction);
	rc = mp_store_set_meta(s, "torch_history", "merged") < 0 ||
	     mp_store_set_meta(s, "torch_clock_correction_ns", buf) < 0 ||
	     mp_store_add_meta(s, "torch_blocks", tw->n_blocks_written) < 0 ||
	     mp_store_add_meta(s, "torch_blocks_outside_segments",
	                       tw->n_outside_address + tw->n_outside_time) < 0 ||
	     mp_store_add_meta(s, "torch_outside_allocations",
	                       m->n_outside[TM_NCCL] + m->n_outside[TM_CUBLAS] +
	                               m->n_outside[TM_CUDNN] + m->n_outside[TM_OTHER]) < 0 ||
	     (lost(m) && mp_store_add_meta(s, "torch_history_lost", 1) < 0) || window_meta(s) < 0;
	(void)spread;
	return rc ? mp_err(tw->in->c->err, MP_EIO, "cannot write the trace's metadata") : 0;
}

int mp_torch_merge_write(struct mp_spool_in *in)
{
	struct tm_write tw = {.in = in, .m = in->merge, .next_id = in->next_alloc_id};
	int64_t correction = 0, spread = 0;
	size_t n_matched = 0, i;
	int rc;

	mp_intmap_init(&tw.live);
	mp_intmap_init(&tw.stacks);
	rc = align(&tw, &correction, &spread, &n_matched);
	qsort(tw.m->segs, tw.m->n_segs, sizeof(*tw.m->segs), by_place);
	for (i = 0; i < tw.m->n_segs; i++)
		if (tw.m->segs[i].size > tw.max_seg_size)
			tw.max_seg_size = tw.m->segs[i].size;
	if (rc == 0 && (tw.api_id = mp_writer_api(in->c->w, "PyTorch allocator", 17)) < 0)
		rc = MP_EIO;
	for (i = 0; rc == 0 && i < tw.m->n_devices; i++)
		rc = write_device(&tw, &tw.m->devices[i]);
	if (rc == 0) {
		in->c->st->unsorted = 1;
		notes(&tw, n_matched, correction);
		rc = write_meta(&tw, correction, spread);
	} else if (rc == MP_ENOMEM) {
		rc = mp_err(in->c->err, MP_ENOMEM, "out of memory merging '%s'", tw.m->path);
	} else if (!in->c->err->code) {
		mp_err_copy(in->c->err, mp_writer_error(in->c->w));
	}
	mp_intmap_free(&tw.live);
	mp_intmap_free(&tw.stacks);
	free(tw.blocks);
	return rc;
}
