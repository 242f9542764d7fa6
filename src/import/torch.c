/*
 * import/torch.c - the importer of PyTorch CUDA memory snapshots
 * (torch.cuda.memory._dump_snapshot).  Checks the unpickled document and
 * flattens it into tp_device arrays (the trace entries as the pickle is read,
 * entry by entry, so the document never holds them), has torch_window.c find the state at
 * the start of the window, then writes segments, blocks, OOMs and
 * annotations as events in time order.  Reads plain data only (pickle.c).
 */
#include "import/import.h"
#include "import/torch.h"
#include "util/array.h"
#include "util/intmap.h"
#include "util/limits.h"
#include "util/slot_pool.h"
#include "util/strmap.h"
#include "util/trace_window.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEVICES 4096
#define MAX_SIZE    MP_MAX_SIZE_BYTES /* larger sizes are refused as corrupt */

/* The entries of root['device_traces'][i], checked as the pickle streams
 * them: all but the last (up to TP_CHUNK) go to the spill file. */
struct tp_streamed {
	struct tp_entry *tail; /* the entries after the spilled chunks */
	size_t n_tail, cap;
	size_t n;        /* all of them */
	int64_t last_ts; /* the last one's ts_ns */
	struct tp_chunks spilled;
};

/* A distinct frames list (see local_of). */
struct tp_stack {
	const char *frames; /* n frame dict pointers */
	size_t n;
	int64_t writer_id; /* 0 until written */
};

struct torch_import {
	struct mp_import_ctx *c;
	struct mp_pickle *doc;
	struct mp_pickle_stream stream;
	struct tp_streamed *streamed; /* by list index */
	size_t n_streamed;
	struct tp_spill *spill; /* where streamed entries go past a chunk a device */
	size_t budget_bytes;    /* input bytes the budget has been credited for */
	struct tp_device *devices;
	size_t n_devices;
	struct tp_entry *annotations;
	size_t n_annotations;
	int64_t budget; /* items left to look at: memo sharing cannot blow up work */
	/* (1,000,000 plus 8 per byte of input read: credited as the input is read) */
	/* writing */
	int64_t process_id, next_id;
	struct mp_intmap stacks; /* frames list (pointer) -> local stack id */
	struct mp_strmap local;  /* frame dict pointers -> local stack id */
	struct tp_stack *locals; /* by local stack id - 1 */
	size_t cap_locals;
	struct memprof_frame *frames;
	size_t cap_frames;
	char *text; /* NUL-terminated copies of frame strings */
	size_t cap_text;
	int64_t api_malloc, api_free, api_map, api_unmap;
	/* allocations freed inside the window: the snapshot has their request only, so their
	 * granted size is modelled (mp_torch_round_size); kept in meta modelled_granted_blocks */
	int64_t n_modelled_granted;
	int64_t n_entries, n_timed; /* entries that change memory, and those with a time_us */
	int64_t first_time_us, last_time_us; /* the least and most time_us of those */
};

/* --- checking the document ------------------------------------------------------- */

static int bad(struct torch_import *t, const char *where, const char *what)
{
	return mp_err(t->c->err, MP_EFORMAT, "invalid PyTorch snapshot '%s': %s %s", t->c->path,
	              where, what);
}

static int spend(struct torch_import *t, int64_t n)
{
	t->budget -= n;
	if (t->budget < 0)
		return mp_err(
		        t->c->err, MP_EFORMAT,
		        "invalid PyTorch snapshot '%s': shared objects expand it far beyond its "
		        "size (a crafted pickle?)",
		        t->c->path);
	return 0;
}

/* Looking keys up in a dict costs its size: charge that too, so that one
 * large dict shared many times (the memo) cannot make the work quadratic. */
static int spend_dict(struct torch_import *t, const struct mp_pk *d)
{
	return d && d->type == MP_PK_DICT ? spend(t, (int64_t)d->n) : 0;
}

/* v, the value of key (or NULL), as an integer in [lo, hi], else an error naming key. */
static int int_of(struct torch_import *t, const struct mp_pk *v, const char *key, const char *where,
                  int64_t lo, int64_t hi, int64_t *out)
{
	char what[160];

	if (v && v->type == MP_PK_INT && v->is_u64 && lo == INT64_MIN) {
		*out = v->v.i; /* an unsigned 64-bit value: address, stream */
		return 0;
	}
	if (!v || !mp_pk_int(v, out) || *out < lo || *out > hi) {
		snprintf(what, sizeof(what), "%s '%s'%s", v ? "has an out-of-range" : "has no", key,
		         v && (v->type == MP_PK_INT || v->type == MP_PK_BIGINT) ? "" : " integer");
		if (v && v->type == MP_PK_INT && !v->is_u64)
			snprintf(what, sizeof(what), "has '%s' = %lld, out of range", key,
			         (long long)v->v.i);
		return bad(t, where, what);
	}
	return 0;
}

static int get_int(struct torch_import *t, const struct mp_pk *d, const char *key,
                   const char *where, int64_t lo, int64_t hi, int64_t *out)
{
	return int_of(t, mp_pk_get(d, key), key, where, lo, hi, out);
}

static enum tp_action action_of(const struct mp_pk *a)
{
	static const struct {
		const char *name;
		enum tp_action action;
	} names[] = {
	        {"alloc", TP_ALLOC},
	        {"free_requested", TP_FREE_REQUESTED},
	        {"free_completed", TP_FREE_COMPLETED},
	        {"free", TP_FREE},
	        {"segment_alloc", TP_SEGMENT_ALLOC},
	        {"segment_free", TP_SEGMENT_FREE},
	        {"segment_map", TP_SEGMENT_MAP},
	        {"segment_unmap", TP_SEGMENT_UNMAP},
	        {"oom", TP_OOM},
	        {"snapshot", TP_SNAPSHOT},
	};
	size_t i;

	if (!a || a->type != MP_PK_STR)
		return TP_OTHER;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (a->n == strlen(names[i].name) && memcmp(a->v.s, names[i].name, a->n) == 0)
			return names[i].action;
	return TP_OTHER;
}

static struct tp_device *device(struct torch_import *t, int64_t ordinal)
{
	size_t i;
	struct tp_device *d;

	for (i = 0; i < t->n_devices; i++)
		if (t->devices[i].ordinal == ordinal)
			return &t->devices[i];
	if (t->n_devices == MAX_DEVICES)
		return NULL;
	d = realloc(t->devices, (t->n_devices + 1) * sizeof(*d));
	if (!d)
		return NULL;
	t->devices = d;
	d = &t->devices[t->n_devices++];
	memset(d, 0, sizeof(*d));
	d->ordinal = (int32_t)ordinal;
	return d;
}

/* device(), with an error naming where when there is none: MAX_DEVICES
 * reached (the snapshot's fault) or out of memory. */
static int device_at(struct torch_import *t, int64_t ordinal, const char *where,
                     struct tp_device **out)
{
	size_t n = t->n_devices;

	if ((*out = device(t, ordinal)))
		return 0;
	if (n == MAX_DEVICES)
		return mp_err(t->c->err, MP_EFORMAT,
		              "invalid PyTorch snapshot '%s': %s is of device %lld, past the %d "
		              "devices a snapshot may name",
		              t->c->path, where, (long long)ordinal, MAX_DEVICES);
	return mp_err(t->c->err, MP_ENOMEM, "out of memory");
}

/* Append the decimal digits of v at p; returns the end. */
static char *put_index(char *p, size_t v)
{
	char digits[24];
	int n = 0;

	do
		digits[n++] = (char)('0' + v % 10);
	while ((v /= 10) > 0);
	while (n > 0)
		*p++ = digits[--n];
	return p;
}

/* "device_traces[LIST][ITEM]" into buf (at least 64 bytes), named in every
 * message about the entry: formatted for each entry, so without printf. */
static void entry_where(char *buf, size_t list, size_t item)
{
	static const char head[] = "device_traces[";
	char *p = buf;

	memcpy(p, head, sizeof(head) - 1);
	p = put_index(p + sizeof(head) - 1, list);
	*p++ = ']';
	*p++ = '[';
	p = put_index(p, item);
	*p++ = ']';
	*p = '\0';
}

/* The keys of a trace entry that the import reads. */
struct entry_keys {
	const struct mp_pk *action, *addr, *size, *stream, *time_us, *frames, *device_free;
};

/* Does key (a dict's key) spell text, of n bytes? */
static int key_is(const struct mp_pk *key, const char *text, size_t n)
{
	return key->n == n && memcmp(key->v.s, text, n) == 0;
}

/*
 * The keys of entry e in one pass over it (an entry has about seven, and
 * looking each up would scan them again), the first of a key repeated, as
 * mp_pk_get gives.
 */
static void entry_keys(const struct mp_pk *e, struct entry_keys *k)
{
	size_t i;

	memset(k, 0, sizeof(*k));
	for (i = 0; i < e->n; i++) {
		const struct mp_pk *key = e->v.items[2 * i], *v = e->v.items[2 * i + 1], **slot;

		if (key->type != MP_PK_STR)
			continue;
		switch (key->n) {
		case 4:
			slot = key_is(key, "addr", 4)   ? &k->addr
			       : key_is(key, "size", 4) ? &k->size
			                                : NULL;
			break;
		case 6:
			slot = key_is(key, "action", 6)   ? &k->action
			       : key_is(key, "frames", 6) ? &k->frames
			       : key_is(key, "stream", 6) ? &k->stream
			                                  : NULL;
			break;
		case 7:
			slot = key_is(key, "time_us", 7) ? &k->time_us : NULL;
			break;
		case 11:
			slot = key_is(key, "device_free", 11) ? &k->device_free : NULL;
			break;
		default:
			slot = NULL;
		}
		if (slot && !*slot)
			*slot = v;
	}
}

/* One trace entry of device d (entries[i] is already allocated). */
static int read_entry(struct torch_import *t, const struct mp_pk *e, struct tp_entry *out,
                      const char *where, int64_t prev_ts)
{
	int64_t time_us = prev_ts / 1000, v;
	struct entry_keys k;

	if (!e || e->type != MP_PK_DICT)
		return bad(t, where, "is not a dict");
	if (spend_dict(t, e) < 0)
		return MP_EFORMAT;
	entry_keys(e, &k);
	out->action = action_of(k.action);
	if (out->action == TP_OTHER && !k.action)
		return bad(t, where, "has no 'action'");
	if (k.time_us && int_of(t, k.time_us, "time_us", where, 0, INT64_MAX / 1000, &time_us) < 0)
		return MP_EFORMAT;
	if (out->action != TP_SNAPSHOT && out->action != TP_OTHER) { /* memory changes */
		t->n_entries++;
		if (k.time_us && (t->n_timed == 0 || time_us < t->first_time_us))
			t->first_time_us = time_us;
		if (k.time_us && (t->n_timed == 0 || time_us > t->last_time_us))
			t->last_time_us = time_us;
		t->n_timed += k.time_us != NULL;
	}
	out->ts_ns = time_us * 1000 < prev_ts ? prev_ts : time_us * 1000;
	out->granted = -1;
	out->device_free = -1;
	out->frames = k.frames;
	if (out->action == TP_SNAPSHOT || out->action == TP_OTHER)
		return 0;
	if (int_of(t, k.size, "size", where, 0, MAX_SIZE - 1, &out->size) < 0)
		return MP_EFORMAT;
	if (k.stream &&
	    int_of(t, k.stream, "stream", where, INT64_MIN, INT64_MAX, (int64_t *)&out->stream) < 0)
		return MP_EFORMAT;
	if (out->action == TP_OOM) {
		if (k.device_free && int_of(t, k.device_free, "device_free", where, 0, INT64_MAX,
		                            &out->device_free) < 0)
			return MP_EFORMAT;
		return 0;
	}
	if (int_of(t, k.addr, "addr", where, INT64_MIN, INT64_MAX, &v) < 0)
		return MP_EFORMAT;
	out->addr = (uint64_t)v;
	return 0;
}

static int64_t intern_frames(struct torch_import *t, const struct mp_pk *frames);
static int64_t local_of(struct torch_import *t, const struct mp_pk *frames);

/* Credit the work budget with the input read up to bytes. */
static void credit(struct torch_import *t, size_t bytes)
{
	if (bytes > t->budget_bytes) {
		t->budget += 8 * (int64_t)(bytes - t->budget_bytes);
		t->budget_bytes = bytes;
	}
}

/*
 * The local stack of a streamed entry's frames: a list seen for the first
 * time is interned and retired holding it (the pickle may then release it
 * with the entry, and gives memo references to it the local stack back).
 */
static int64_t streamed_local(struct torch_import *t, const struct mp_pk *frames)
{
	int64_t local;

	if (frames && frames->type == MP_PK_RETIRED)
		return frames->v.i;
	if (!frames || (frames->type != MP_PK_LIST && frames->type != MP_PK_TUPLE) || !frames->n ||
	    mp_intmap_get(&t->stacks, (uint64_t)(uintptr_t)frames, NULL))
		return local_of(t, frames); /* none, or (a crafted pickle) known by pointer */
	if ((local = intern_frames(t, frames)) > 0)
		mp_pk_retire((struct mp_pk *)frames, local);
	return local;
}

/* The pickle's stream hook: entry item of root['device_traces'][list]. */
static int stream_entry(void *ctx, size_t list, size_t item, const struct mp_pk *v,
                        struct mp_error *err)
{
	struct torch_import *t = ctx;
	struct tp_streamed *l;
	struct tp_entry e;
	int64_t local;
	char where[64];

	(void)err; /* t->c->err is the same */
	credit(t, t->stream.input_bytes);
	if (list >= MAX_DEVICES)
		return mp_err(t->c->err, MP_EFORMAT,
		              "invalid PyTorch snapshot '%s': device_traces[%zu] is past the %d "
		              "devices a snapshot may name",
		              t->c->path, list, MAX_DEVICES);
	if (list >= t->n_streamed) {
		struct tp_streamed *a = realloc(t->streamed, (list + 1) * sizeof(*a));

		if (!a)
			return mp_err(t->c->err, MP_ENOMEM, "out of memory");
		memset(a + t->n_streamed, 0, (list + 1 - t->n_streamed) * sizeof(*a));
		t->streamed = a;
		t->n_streamed = list + 1;
	}
	l = &t->streamed[list];
	if (item != l->n || spend(t, 1) < 0)
		return MP_EFORMAT;
	entry_where(where, list, item);
	memset(&e, 0, sizeof(e));
	if (read_entry(t, v, &e, where, l->last_ts) < 0)
		return MP_EFORMAT;
	e.device = (int32_t)list; /* the list's device (take_streamed) */
	if ((local = streamed_local(t, e.frames)) < 0)
		return (int)local;
	e.local = local; /* the entry keeps its local stack, not the list */
	e.has_local = 1;
	if (!t->spill &&
	    !(t->spill = tp_spill_new(t->c->store ? mp_store_path(t->c->store) : NULL, t->c->path)))
		return mp_err(t->c->err, MP_ENOMEM, "out of memory");
	if ((local = tp_spill_append(t->spill, &l->spilled, &l->tail, &l->n_tail, &l->cap, &e,
	                             t->c->err)) < 0)
		return (int)local;
	l->n++;
	l->last_ts = e.ts_ns;
	return 0;
}

/* Device list i's streamed entries, moved to its device. */
static int take_streamed(struct torch_import *t, size_t i, const char *where)
{
	struct tp_streamed *l = &t->streamed[i];
	struct tp_device *d;
	int rc;

	if ((rc = device_at(t, (int64_t)i, where, &d)) < 0)
		return rc;
	if (d->entries)
		return bad(t, where, "repeats a device");
	d->entries = l->tail;
	d->n_entries = l->n;
	d->spilled = l->spilled;
	l->tail = NULL;
	l->n = l->n_tail = l->cap = 0;
	memset(&l->spilled, 0, sizeof(l->spilled));
	return 0;
}

static int read_traces(struct torch_import *t, const struct mp_pk *traces)
{
	size_t i, j;
	char where[64];

	if (!traces)
		return 0; /* a state-only snapshot */
	if (traces->type != MP_PK_LIST && traces->type != MP_PK_TUPLE)
		return bad(t, "'device_traces'", "is not a list");
	for (i = 0; i < traces->n; i++) {
		const struct mp_pk *list = traces->v.items[i];
		struct tp_device *d;
		int64_t prev = 0;
		int rc;

		snprintf(where, sizeof(where), "device_traces[%zu]", i);
		if (list->type != MP_PK_LIST && list->type != MP_PK_TUPLE)
			return bad(t, where, "is not a list");
		if (list->n == 0 && i < t->n_streamed && t->streamed[i].n) {
			if ((rc = take_streamed(t, i, where)) < 0)
				return rc;
			continue;
		}
		if (list->n == 0)
			continue;
		if (spend(t, (int64_t)list->n) < 0)
			return MP_EFORMAT;
		if ((rc = device_at(t, (int64_t)i, where, &d)) < 0)
			return rc;
		if (d->entries)
			return bad(t, where, "repeats a device");
		d->entries = calloc(list->n, sizeof(*d->entries));
		if (!d->entries)
			return mp_err(t->c->err, MP_ENOMEM, "out of memory");
		d->n_entries = list->n;
		for (j = 0; j < list->n; j++) {
			entry_where(where, i, j);
			d->entries[j].device = d->ordinal;
			if (read_entry(t, list->v.items[j], &d->entries[j], where, prev) < 0)
				return MP_EFORMAT;
			prev = d->entries[j].ts_ns;
		}
	}
	return 0;
}

static int read_blocks(struct torch_import *t, struct tp_device *d, const struct mp_pk *seg,
                       uint64_t seg_addr, const char *seg_where)
{
	const struct mp_pk *blocks = mp_pk_get(seg, "blocks");
	uint64_t addr = seg_addr;
	char where[96];
	size_t i;

	if (!blocks)
		return 0;
	if (blocks->type != MP_PK_LIST && blocks->type != MP_PK_TUPLE)
		return bad(t, seg_where, "has 'blocks' that is not a list");
	if (spend(t, (int64_t)blocks->n) < 0)
		return MP_EFORMAT;
	for (i = 0; i < blocks->n; i++) {
		const struct mp_pk *b = blocks->v.items[i], *state = mp_pk_get(b, "state");
		struct tp_block out = {0};
		int64_t v;

		snprintf(where, sizeof(where), "%s.blocks[%zu]", seg_where, i);
		if (spend_dict(t, b) < 0 ||
		    get_int(t, b, "size", where, 0, MAX_SIZE - 1, &out.size) < 0)
			return MP_EFORMAT;
		if (mp_pk_get(b, "address")) {
			if (get_int(t, b, "address", where, INT64_MIN, INT64_MAX, &v) < 0)
				return MP_EFORMAT;
			addr = (uint64_t)v;
		}
		out.addr = addr;
		addr += (uint64_t)out.size;
		if (!mp_pk_str_is(state, "active_allocated") &&
		    !mp_pk_str_is(state, "active_pending_free") &&
		    !mp_pk_str_is(state, "active_awaiting_free"))
			continue; /* inactive: cached, not in use (its requested_size is stale) */
		out.requested = out.size;
		if (mp_pk_get(b, "requested_size") &&
		    get_int(t, b, "requested_size", where, 0, out.size, &out.requested) < 0)
			return MP_EFORMAT;
		out.pending = !mp_pk_str_is(state, "active_allocated");
		out.frames = mp_pk_get(b, "frames");
		if (d->n_final_blocks % 64 == 0) {
			struct tp_block *a =
			        realloc(d->final_blocks, (d->n_final_blocks + 64) * sizeof(*a));
			if (!a)
				return mp_err(t->c->err, MP_ENOMEM, "out of memory");
			d->final_blocks = a;
		}
		d->final_blocks[d->n_final_blocks++] = out;
	}
	return 0;
}

static int read_segments(struct torch_import *t, const struct mp_pk *segs)
{
	char where[48];
	size_t i;

	if (!segs)
		return 0;
	if (segs->type != MP_PK_LIST && segs->type != MP_PK_TUPLE)
		return bad(t, "'segments'", "is not a list");
	if (spend(t, (int64_t)segs->n) < 0)
		return MP_EFORMAT;
	for (i = 0; i < segs->n; i++) {
		const struct mp_pk *s = segs->v.items[i], *exp;
		struct tp_segment out = {0};
		struct tp_device *d;
		int64_t ordinal = 0, v;
		int rc;

		snprintf(where, sizeof(where), "segments[%zu]", i);
		if (s->type != MP_PK_DICT)
			return bad(t, where, "is not a dict");
		if (spend_dict(t, s) < 0)
			return MP_EFORMAT;
		if (mp_pk_get(s, "device") &&
		    get_int(t, s, "device", where, 0, INT32_MAX, &ordinal) < 0)
			return MP_EFORMAT;
		if (get_int(t, s, "address", where, INT64_MIN, INT64_MAX, &v) < 0 ||
		    get_int(t, s, "total_size", where, 0, MAX_SIZE - 1, &out.size) < 0)
			return MP_EFORMAT;
		out.addr = (uint64_t)v;
		if (mp_pk_get(s, "stream") && get_int(t, s, "stream", where, INT64_MIN, INT64_MAX,
		                                      (int64_t *)&out.stream) < 0)
			return MP_EFORMAT;
		exp = mp_pk_get(s, "is_expandable");
		out.expandable = exp && exp->type == MP_PK_BOOL && exp->v.i;
		out.frames = mp_pk_get(s, "frames");
		if ((rc = device_at(t, ordinal, where, &d)) < 0)
			return rc;
		if (d->n_final_segments % 64 == 0) {
			struct tp_segment *a =
			        realloc(d->final_segments, (d->n_final_segments + 64) * sizeof(*a));
			if (!a)
				return mp_err(t->c->err, MP_ENOMEM, "out of memory");
			d->final_segments = a;
		}
		d->final_segments[d->n_final_segments++] = out;
		if (read_blocks(t, d, s, out.addr, where) < 0)
			return MP_EFORMAT;
	}
	return 0;
}

static int read_annotations(struct torch_import *t, const struct mp_pk *list)
{
	char where[48];
	size_t i;

	if (!list || list->type == MP_PK_NONE)
		return 0;
	if (list->type != MP_PK_LIST && list->type != MP_PK_TUPLE)
		return bad(t, "'external_annotations'", "is not a list");
	if (spend(t, (int64_t)list->n) < 0)
		return MP_EFORMAT;
	t->annotations = calloc(list->n ? list->n : 1, sizeof(*t->annotations));
	if (!t->annotations)
		return mp_err(t->c->err, MP_ENOMEM, "out of memory");
	for (i = 0; i < list->n; i++) {
		const struct mp_pk *a = list->v.items[i], *stage = mp_pk_get(a, "stage");
		struct tp_entry *e = &t->annotations[t->n_annotations];
		struct tp_device *d;
		int64_t us = 0, dev = 0;
		int rc;

		snprintf(where, sizeof(where), "external_annotations[%zu]", i);
		if (spend_dict(t, a) < 0 ||
		    get_int(t, a, "time_us", where, 0, INT64_MAX / 1000, &us) < 0 ||
		    (mp_pk_get(a, "device") &&
		     get_int(t, a, "device", where, 0, INT32_MAX, &dev) < 0))
			return MP_EFORMAT;
		e->name = mp_pk_get(a, "name");
		if (!e->name || e->name->type != MP_PK_STR)
			return bad(t, where, "has no string 'name'");
		if (mp_pk_str_is(stage, "START"))
			e->action = TP_PHASE_BEGIN;
		else if (mp_pk_str_is(stage, "END"))
			e->action = TP_PHASE_END;
		else
			return bad(t, where, "has a 'stage' other than START or END");
		e->device = (int32_t)dev;
		e->ts_ns = us * 1000;
		if ((rc = device_at(t, dev, where, &d)) < 0) /* annotated devices exist */
			return rc;
		t->n_annotations++;
	}
	return 0;
}

static int read_document(struct torch_import *t)
{
	const struct mp_pk *root = mp_pickle_root(t->doc);
	size_t i;

	if (root->type == MP_PK_LIST) { /* torch.cuda.memory_snapshot(): segments only */
		if (read_segments(t, root) < 0)
			return MP_EFORMAT;
	} else if (root->type != MP_PK_DICT || !mp_pk_get(root, "segments")) {
		return bad(t, "the top level",
		           "is not a dict with 'segments' (is it a memory "
		           "snapshot from torch.cuda.memory._dump_snapshot?)");
	} else if (read_segments(t, mp_pk_get(root, "segments")) < 0 ||
	           read_traces(t, mp_pk_get(root, "device_traces")) < 0 ||
	           read_annotations(t, mp_pk_get(root, "external_annotations")) < 0) {
		return MP_EFORMAT;
	}
	for (i = 0; i < t->n_devices; i++) {
		int rc = mp_torch_window(&t->devices[i]);

		if (rc == MP_EIO)
			return mp_err(t->c->err, MP_EIO, "%s", tp_spill_error(t->spill));
		if (rc < 0)
			return mp_err(t->c->err, MP_ENOMEM, "out of memory");
	}
	return 0;
}

/* --- writing events ------------------------------------------------------------------- */

/* A live block or segment while writing: where an address's id and sizes are. */
struct live {
	int64_t id, size, requested;
	int pending;
};

struct writing {
	struct mp_slot_pool pool;            /* of struct live */
	struct mp_intmap *blocks, *segments; /* per device: address -> pool slot */
};

static const char *copy_str(struct torch_import *t, const struct mp_pk *s, size_t *at)
{
	const char *p = t->text + *at;

	if (s && s->type == MP_PK_STR) {
		memcpy(t->text + *at, s->v.s, s->n);
		*at += s->n;
	}
	t->text[(*at)++] = '\0';
	return p;
}

/*
 * A frames list (n > 0 items) as a local stack: its frame dicts (pointers)
 * interned by content, so that the many lists of a trace with the same
 * frames (one per allocation) cost one writer stack.
 */
static int64_t intern_frames(struct torch_import *t, const struct mp_pk *frames)
{
	struct tp_stack *ls;
	const char *key;
	int64_t local;

	if (spend(t, (int64_t)frames->n) < 0)
		return MP_EFORMAT;
	key = (const char *)frames->v.items;
	if (!mp_strmap_get(&t->local, key, frames->n * sizeof(*frames->v.items), &local)) {
		if (mp_array_reserve((void **)&t->locals, &t->cap_locals, t->local.n + 1,
		                     sizeof(*t->locals)) < 0 ||
		    mp_strmap_put(&t->local, key, frames->n * sizeof(*frames->v.items),
		                  local = (int64_t)t->local.n + 1, &key) < 0)
			return mp_err(t->c->err, MP_ENOMEM, "out of memory");
		ls = &t->locals[local - 1];
		ls->frames = key; /* the map's copy: n pointers, maybe unaligned */
		ls->n = frames->n;
		ls->writer_id = 0;
	}
	return local;
}

/*
 * The local stack of a frames list, 0 for none.  A streamed entry's list
 * was retired holding it (stream_entry); any other list is interned once
 * and remembered by pointer.
 */
static int64_t local_of(struct torch_import *t, const struct mp_pk *frames)
{
	uint64_t id;
	int64_t local;

	if (frames && frames->type == MP_PK_RETIRED)
		return frames->v.i;
	if (!frames || (frames->type != MP_PK_LIST && frames->type != MP_PK_TUPLE))
		return 0;
	if (mp_intmap_get(&t->stacks, (uint64_t)(uintptr_t)frames, &id))
		return (int64_t)id;
	if (!frames->n)
		return 0;
	if ((local = intern_frames(t, frames)) > 0 &&
	    mp_intmap_put(&t->stacks, (uint64_t)(uintptr_t)frames, (uint64_t)local) < 0)
		return mp_err(t->c->err, MP_ENOMEM, "out of memory");
	return local;
}

static const struct mp_pk *local_frame(const struct tp_stack *ls, size_t i)
{
	const struct mp_pk *f;

	memcpy(&f, ls->frames + i * sizeof(f), sizeof(f));
	return f;
}

/* The writer's stack of a local stack (> 0), written on first use. */
static int64_t stack_of(struct torch_import *t, int64_t local)
{
	struct memprof_stack stack;
	struct tp_stack *ls;
	size_t i, need = 0, at = 0;
	int64_t sid;

	ls = &t->locals[local - 1];
	if (ls->writer_id)
		return ls->writer_id;
	for (i = 0; i < ls->n; i++) {
		const struct mp_pk *fr = local_frame(ls, i), *n = mp_pk_get(fr, "name"),
		                   *f = mp_pk_get(fr, "filename");

		if (spend_dict(t, fr) < 0)
			return MP_EFORMAT;
		need += (n && n->type == MP_PK_STR ? n->n : 0) +
		        (f && f->type == MP_PK_STR ? f->n : 0) + 2;
	}
	if ((ls->n > t->cap_frames &&
	     !(t->frames = realloc(t->frames, (t->cap_frames = ls->n) * sizeof(*t->frames)))) ||
	    (need > t->cap_text && !(t->text = realloc(t->text, t->cap_text = need))))
		return mp_err(t->c->err, MP_ENOMEM, "out of memory");
	for (i = 0; i < ls->n; i++) {
		const struct mp_pk *fr = local_frame(ls, i);
		int64_t line = 0;

		t->frames[i].name = copy_str(t, mp_pk_get(fr, "name"), &at);
		t->frames[i].file = copy_str(t, mp_pk_get(fr, "filename"), &at);
		if (!mp_pk_int(mp_pk_get(fr, "line"), &line) || line < 0)
			line = 0;
		t->frames[i].line = line;
	}
	stack.n_frames = (uint32_t)ls->n;
	stack.frames = t->frames;
	sid = mp_writer_stack(t->c->w, &stack);
	if (sid < 0)
		return sid;
	return ls->writer_id = sid;
}

/* Write ev with the stack of local (0: none; below 0: an error to return). */
static int put(struct torch_import *t, struct memprof_event *ev, int64_t local)
{
	ev->process_id = t->process_id;
	if (local < 0)
		return (int)local;
	if (local > 0 && (ev->stack_id = stack_of(t, local)) < 0)
		return (int)ev->stack_id;
	if (mp_writer_event(t->c->w, ev) < 0)
		return MP_EIO;
	t->c->st->n_events++;
	if (ev->op == MEMPROF_OP_ALLOC || ev->op == MEMPROF_OP_PREEXISTING)
		t->c->st->n_allocs++;
	return 0;
}

static struct live *live_get(struct writing *wr, struct mp_intmap *m, uint64_t addr)
{
	uint64_t slot;

	return mp_intmap_get(m, addr, &slot) ? mp_slot_pool_at(&wr->pool, slot) : NULL;
}

static void live_del(struct writing *wr, struct mp_intmap *m, uint64_t addr)
{
	uint64_t slot;

	if (!mp_intmap_get(m, addr, &slot))
		return;
	mp_intmap_del(m, addr);
	mp_slot_pool_give(&wr->pool, slot);
}

static struct live *live_add(struct writing *wr, struct mp_intmap *m, uint64_t addr)
{
	size_t slot;
	struct live *l = mp_slot_pool_take(&wr->pool, &slot);

	if (!l || mp_intmap_put(m, addr, slot) < 0)
		return NULL;
	return l;
}

static void event_init(struct memprof_event *ev, int op, const struct tp_device *d, int64_t ts)
{
	memset(ev, 0, sizeof(*ev));
	ev->op = op;
	ev->device = d->ordinal;
	ev->ts_ns = ts;
	ev->device_free_bytes = -1;
}

/* A block event: alloc and preexisting open a live block at addr; the
 * frees close or mark the one there (or, unmatched, stand alone). */
static int block_event(struct torch_import *t, struct writing *wr, size_t dev, int op,
                       uint64_t addr, int64_t size, int64_t requested, int64_t ts, uint64_t stream,
                       int64_t local)
{
	struct mp_intmap *m = &wr->blocks[dev];
	struct live *l = live_get(wr, m, addr);
	struct memprof_event ev;
	int rc;

	event_init(&ev, op, &t->devices[dev], ts);
	ev.address = addr;
	ev.stream = stream;
	if (op == MEMPROF_OP_ALLOC || op == MEMPROF_OP_PREEXISTING) {
		if (l) { /* the trace lost a free: close the old block first */
			t->c->st->n_warnings[MP_WARN_DUPLICATE_ALLOC]++;
			if ((rc = block_event(t, wr, dev, MEMPROF_OP_FREE, addr, 0, 0, ts, stream,
			                      0)) < 0)
				return rc;
		}
		if (!(l = live_add(wr, m, addr)))
			return mp_err(t->c->err, MP_ENOMEM, "out of memory");
		l->id = ++t->next_id;
		l->size = size;
		l->requested = requested >= 0 ? requested : size;
	} else if (!l) {
		t->c->st->n_warnings[MP_WARN_UNMATCHED_FREE]++;
		ev.alloc_id = ++t->next_id;
		ev.size_bytes = size;
		ev.requested_bytes = requested >= 0 && requested <= size ? requested : size;
		return put(t, &ev, local);
	} else if (op == MEMPROF_OP_FREE_REQUESTED && l->pending) {
		return 0; /* a second free of a block: counted as a state mismatch */
	}
	ev.alloc_id = l->id;
	ev.size_bytes = l->size;
	ev.requested_bytes = l->requested;
	if (op == MEMPROF_OP_FREE_REQUESTED)
		l->pending = 1;
	if (op == MEMPROF_OP_FREE)
		live_del(wr, m, addr);
	return put(t, &ev, local);
}

/* reserve opens a segment at addr, release closes it; map and unmap are
 * ranges of expandable segments, each its own id. */
static int segment_event(struct torch_import *t, struct writing *wr, size_t dev, int op,
                         uint64_t addr, int64_t size, int64_t ts, uint64_t stream, int64_t local)
{
	struct mp_intmap *m = &wr->segments[dev];
	struct live *l = live_get(wr, m, addr);
	struct memprof_event ev;
	int rc;

	event_init(&ev, op, &t->devices[dev], ts);
	ev.address = addr;
	ev.stream = stream;
	ev.size_bytes = ev.requested_bytes = size;
	ev.alloc_id = ++t->next_id;
	ev.api_id = op == MEMPROF_OP_RESERVE   ? t->api_malloc
	            : op == MEMPROF_OP_RELEASE ? t->api_free
	            : op == MEMPROF_OP_MAP     ? t->api_map
	                                       : t->api_unmap;
	if (op == MEMPROF_OP_RESERVE) {
		if (l) {
			t->c->st->n_warnings[MP_WARN_DUPLICATE_RESERVE]++;
			if ((rc = segment_event(t, wr, dev, MEMPROF_OP_RELEASE, addr, 0, ts, stream,
			                        0)) < 0)
				return rc;
		}
		if (!(l = live_add(wr, m, addr)))
			return mp_err(t->c->err, MP_ENOMEM, "out of memory");
		l->id = ev.alloc_id;
		l->size = size;
	} else if (op == MEMPROF_OP_RELEASE) {
		if (!l) {
			t->c->st->n_warnings[MP_WARN_UNMATCHED_RELEASE]++;
		} else {
			ev.alloc_id = l->id;
			ev.size_bytes = ev.requested_bytes = l->size;
			live_del(wr, m, addr);
		}
	}
	return put(t, &ev, local);
}

/* What was live when the window opened, at its first timestamp. */
static int write_prelude(struct torch_import *t, struct writing *wr, size_t dev, int64_t ts)
{
	const struct tp_device *d = &t->devices[dev];
	size_t i;
	int rc = 0;

	for (i = 0; rc == 0 && i < d->n_initial_segments; i++) {
		const struct tp_segment *s = &d->initial_segments[i];

		rc = segment_event(t, wr, dev, MEMPROF_OP_RESERVE, s->addr, s->size, ts, s->stream,
		                   local_of(t, s->frames));
	}
	if (rc == 0 && d->initial_mapped_bytes > 0)
		rc = segment_event(t, wr, dev, MEMPROF_OP_MAP, d->expandable_addr,
		                   d->initial_mapped_bytes, ts, 0, 0);
	for (i = 0; rc == 0 && i < d->n_initial_blocks; i++) {
		const struct tp_block *b = &d->initial_blocks[i];

		rc = block_event(t, wr, dev, MEMPROF_OP_PREEXISTING, b->addr, b->size, b->requested,
		                 ts, 0, local_of(t, b->frames));
		if (rc == 0 && b->pending) /* freed by the program before the window */
			rc = block_event(t, wr, dev, MEMPROF_OP_FREE_REQUESTED, b->addr, 0, 0, ts,
			                 0, 0);
	}
	return rc;
}

static int write_entry(struct torch_import *t, struct writing *wr, size_t dev,
                       const struct tp_entry *e)
{
	static const int block_ops[] = {
	        [TP_ALLOC] = MEMPROF_OP_ALLOC,
	        [TP_FREE_REQUESTED] = MEMPROF_OP_FREE_REQUESTED,
	        [TP_FREE_COMPLETED] = MEMPROF_OP_FREE,
	        [TP_FREE] = MEMPROF_OP_FREE,
	        [TP_SEGMENT_ALLOC] = MEMPROF_OP_RESERVE,
	        [TP_SEGMENT_FREE] = MEMPROF_OP_RELEASE,
	        [TP_SEGMENT_MAP] = MEMPROF_OP_MAP,
	        [TP_SEGMENT_UNMAP] = MEMPROF_OP_UNMAP,
	};
	struct memprof_event ev;
	int64_t local = e->has_local ? e->local : local_of(t, e->frames);

	if (e->action == TP_ALLOC && e->granted < e->size)
		t->n_modelled_granted++;
	switch (e->action) {
	case TP_ALLOC:
	case TP_FREE_REQUESTED:
	case TP_FREE_COMPLETED:
	case TP_FREE:
		return block_event(t, wr, dev, block_ops[e->action], e->addr,
		                   e->granted >= e->size ? e->granted
		                                         : mp_torch_round_size(e->size),
		                   e->size, e->ts_ns, e->stream, local);
	case TP_SEGMENT_ALLOC:
	case TP_SEGMENT_FREE:
	case TP_SEGMENT_MAP:
	case TP_SEGMENT_UNMAP:
		return segment_event(t, wr, dev, block_ops[e->action], e->addr, e->size, e->ts_ns,
		                     e->stream, local);
	case TP_OOM:
		event_init(&ev, MEMPROF_OP_OOM, &t->devices[dev], e->ts_ns);
		ev.size_bytes = ev.requested_bytes = e->size;
		ev.device_free_bytes = e->device_free;
		ev.stream = e->stream;
		return put(t, &ev, local);
	case TP_PHASE_BEGIN:
	case TP_PHASE_END:
		event_init(&ev,
		           e->action == TP_PHASE_BEGIN ? MEMPROF_OP_PHASE_BEGIN
		                                       : MEMPROF_OP_PHASE_END,
		           &t->devices[dev], e->ts_ns);
		ev.device = e->device;
		if ((ev.phase_id = mp_writer_phase(t->c->w, e->name->v.s, e->name->n)) < 0)
			return MP_EIO;
		return put(t, &ev, 0);
	case TP_SNAPSHOT:
		return 0; /* marks when a snapshot was taken: no memory changes */
	case TP_OTHER:
		t->c->st->n_warnings[MP_WARN_SKIPPED_UNKNOWN]++;
		return 0;
	}
	return 0;
}

/* --- order and the importer ---------------------------------------------------------- */

/* The device index of each annotation (its device exists: see write_all). */
static size_t *annotation_devices(struct torch_import *t)
{
	size_t *dev = malloc((t->n_annotations ? t->n_annotations : 1) * sizeof(*dev)), j, i;

	for (j = 0; dev && j < t->n_annotations; j++) {
		for (i = 0; t->devices[i].ordinal != t->annotations[j].device; i++)
			;
		dev[j] = i;
	}
	return dev;
}

static int write_all(struct torch_import *t)
{
	struct writing wr = {0};
	struct tp_order order = {0};
	const struct tp_entry *e;
	size_t *ann_dev = NULL, i, nd, dev;
	int64_t mismatches = 0;
	int rc = 0;

	for (i = 0; i < t->n_annotations; i++) /* annotated devices exist */
		if (!device(t, t->annotations[i].device))
			return mp_err(t->c->err, MP_ENOMEM, "out of memory");
	nd = t->n_devices;
	if (!(ann_dev = annotation_devices(t)) ||
	    (rc = mp_torch_order_init(&order, t->devices, nd, t->annotations, ann_dev,
	                              t->n_annotations)) < 0) {
		free(ann_dev);
		return rc == MP_EIO ? mp_err(t->c->err, MP_EIO, "%s", tp_spill_error(t->spill))
		                    : mp_err(t->c->err, MP_ENOMEM, "out of memory");
	}
	mp_slot_pool_init(&wr.pool, sizeof(struct live));
	wr.blocks = calloc(nd ? nd : 1, sizeof(*wr.blocks));
	wr.segments = calloc(nd ? nd : 1, sizeof(*wr.segments));
	if (!wr.blocks || !wr.segments)
		rc = mp_err(t->c->err, MP_ENOMEM, "out of memory");
	for (i = 0; rc == 0 && i < nd; i++) {
		struct memprof_device dv = {t->process_id, t->devices[i].ordinal, NULL, NULL, 0};

		mp_intmap_init(&wr.blocks[i]);
		mp_intmap_init(&wr.segments[i]);
		if (mp_writer_device(t->c->w, &dv) < 0)
			rc = MP_EIO;
		else
			rc = write_prelude(t, &wr, i, mp_torch_order_first_ts(&order));
		mismatches += t->devices[i].n_mismatches;
	}
	while (rc == 0) {
		int more = mp_torch_order_next(&order, &dev, &e);

		if (more <= 0) {
			rc = more == MP_EIO
			             ? mp_err(t->c->err, MP_EIO, "%s", tp_spill_error(t->spill))
			     : more < 0 ? mp_err(t->c->err, MP_ENOMEM, "out of memory")
			                : 0;
			break;
		}
		rc = write_entry(t, &wr, dev, e);
	}
	t->c->st->n_warnings[MP_WARN_STATE_MISMATCH] += mismatches;
	for (i = 0; wr.blocks && wr.segments && i < nd; i++) {
		mp_intmap_free(&wr.blocks[i]);
		mp_intmap_free(&wr.segments[i]);
	}
	free(wr.blocks);
	free(wr.segments);
	mp_slot_pool_free(&wr.pool);
	mp_torch_order_free(&order);
	free(ann_dev);
	return rc;
}

/* A pickle value as JSON, for the meta table (allocator_settings).  *left
 * bounds the values and string bytes written, and no loop goes on once it
 * is spent: shared objects cannot blow the text up. */
static cJSON *to_json(const struct mp_pk *v, int depth, int64_t *left)
{
	cJSON *o;
	size_t i;
	char num[32];

	if (--*left < 0 || depth > 16)
		return cJSON_CreateNull();
	switch (v->type) {
	case MP_PK_BOOL:
		return cJSON_CreateBool((int)v->v.i);
	case MP_PK_INT:
		snprintf(num, sizeof(num), v->is_u64 ? "%llu" : "%lld",
		         v->is_u64 ? (unsigned long long)v->v.i
		                   : (unsigned long long)(long long)v->v.i);
		if (!v->is_u64)
			snprintf(num, sizeof(num), "%lld", (long long)v->v.i);
		return cJSON_CreateRaw(num);
	case MP_PK_FLOAT:
		return cJSON_CreateNumber(v->v.f);
	case MP_PK_STR: {
		char *s = (*left -= (int64_t)v->n) < 0 ? NULL : strndup(v->v.s, v->n);

		o = s ? cJSON_CreateString(s) : NULL;
		free(s);
		return o;
	}
	case MP_PK_LIST:
	case MP_PK_TUPLE:
	case MP_PK_SET:
		o = cJSON_CreateArray();
		for (i = 0; o && *left >= 0 && i < v->n; i++)
			cJSON_AddItemToArray(o, to_json(v->v.items[i], depth + 1, left));
		return o;
	case MP_PK_DICT:
		o = cJSON_CreateObject();
		for (i = 0; o && *left >= 0 && i < v->n; i++) {
			const struct mp_pk *k = v->v.items[2 * i];
			char *key = k->type != MP_PK_STR           ? strdup("?")
			            : (*left -= (int64_t)k->n) < 0 ? NULL
			                                           : strndup(k->v.s, k->n);

			if (key)
				cJSON_AddItemToObject(
				        o, key, to_json(v->v.items[2 * i + 1], depth + 1, left));
			free(key);
		}
		return o;
	default:
		return cJSON_CreateNull();
	}
}

/* The private pools of the snapshot's segments (segment_pool_id other than (0, 0),
 * e.g. CUDA graphs' pools) as a JSON object: "A,B" -> "N segments, B bytes, device D";
 * NULL when there are none (or out of memory: the meta is then left out). */
static cJSON *private_pools(const struct mp_pk *root)
{
	const struct mp_pk *segs =
	        root && root->type == MP_PK_DICT ? mp_pk_get(root, "segments") : root;
	cJSON *o = NULL;
	size_t i;

	for (i = 0; segs && (segs->type == MP_PK_LIST || segs->type == MP_PK_TUPLE) && i < segs->n;
	     i++) {
		const struct mp_pk *sg = segs->v.items[i], *id = mp_pk_get(sg, "segment_pool_id");
		int64_t a, b, size = 0, dev = 0, n = 0, bytes = 0;
		char key[48], val[96];
		cJSON *had;

		if (!id || (id->type != MP_PK_TUPLE && id->type != MP_PK_LIST) || id->n != 2 ||
		    !mp_pk_int(id->v.items[0], &a) || !mp_pk_int(id->v.items[1], &b) ||
		    (a == 0 && b == 0))
			continue;
		mp_pk_int(mp_pk_get(sg, "total_size"), &size);
		mp_pk_int(mp_pk_get(sg, "device"), &dev);
		snprintf(key, sizeof(key), "%lld,%lld", (long long)a, (long long)b);
		if (!o && !(o = cJSON_CreateObject()))
			return NULL;
		if ((had = cJSON_GetObjectItemCaseSensitive(o, key)))
			sscanf(had->valuestring, "%lld segments, %lld bytes", (long long *)&n,
			       (long long *)&bytes);
		snprintf(val, sizeof(val), "%lld segments, %lld bytes, device %lld",
		         (long long)(n + 1), (long long)(bytes + size), (long long)dev);
		cJSON_DeleteItemFromObjectCaseSensitive(o, key);
		cJSON_AddStringToObject(o, key, val);
	}
	return o;
}

static int write_pools(struct torch_import *t, const struct mp_pk *root)
{
	cJSON *pools = private_pools(root);
	char *text = pools ? cJSON_PrintUnformatted(pools) : NULL;
	int rc = text && mp_store_set_meta(t->c->store, "private_pools", text) < 0 ? MP_EIO : 0;

	free(text);
	cJSON_Delete(pools);
	return rc;
}

static int write_meta(struct torch_import *t)
{
	const struct mp_pk *root = mp_pickle_root(t->doc),
	                   *settings = mp_pk_get(root, "allocator_settings");
	struct mp_store *s = t->c->store;
	char *text = NULL;
	int rc = 0;

	if (mp_store_set_meta(s, "clock", "unix_epoch_ns (PyTorch time_us: microseconds)") < 0 ||
	    mp_store_set_meta(s, MP_WINDOW_META, mp_window_torch) < 0 || write_pools(t, root) < 0)
		return MP_EIO;
	/* No time_us on any memory entry (older PyTorch), or all at one instant (a state-only
	 * snapshot: every event is the state at one moment): only the order of events is
	 * known.  Never unset by a later snapshot of the trace. */
	if ((t->n_timed == 0 || t->first_time_us == t->last_time_us) &&
	    mp_store_set_meta(s, "timestamps", "none") < 0)
		return MP_EIO;
	/* several snapshots in one trace add up */
	if (t->n_modelled_granted > 0 &&
	    mp_store_add_meta(s, "modelled_granted_blocks", t->n_modelled_granted) < 0)
		return MP_EIO;
	if (settings) {
		int64_t left = 10000;
		cJSON *j = to_json(settings, 0, &left);

		text = j ? cJSON_PrintUnformatted(j) : NULL;
		cJSON_Delete(j);
		if (!text)
			return mp_err(t->c->err, MP_ENOMEM, "out of memory");
		rc = mp_store_set_meta(s, "allocator_settings", text) < 0 ? MP_EIO : 0;
		free(text);
	}
	return rc;
}

static void torch_free(struct torch_import *t)
{
	size_t i;

	for (i = 0; i < t->n_devices; i++) {
		free(t->devices[i].entries);
		free(t->devices[i].spilled.at);
		free(t->devices[i].final_blocks);
		free(t->devices[i].final_segments);
		free(t->devices[i].initial_blocks);
		free(t->devices[i].initial_segments);
	}
	for (i = 0; i < t->n_streamed; i++) {
		free(t->streamed[i].tail);
		free(t->streamed[i].spilled.at);
	}
	free(t->streamed);
	tp_spill_free(t->spill);
	free(t->devices);
	free(t->annotations);
	free(t->frames);
	free(t->text);
	mp_intmap_free(&t->stacks);
	mp_strmap_free(&t->local);
	free(t->locals);
	mp_pickle_free(t->doc);
}

static int run(struct mp_import_ctx *c)
{
	struct torch_import t = {.c = c, .budget = 1000000};
	struct memprof_process p = {0, 0, 0, NULL, -1, -1, -1, NULL};
	int rc;

	mp_intmap_init(&t.stacks);
	mp_strmap_init(&t.local);
	t.stream.item = stream_entry;
	t.stream.ctx = &t;
	rc = mp_pickle_load_stream(&t.doc, c->in, c->path, &t.stream, c->err);
	if (rc < 0) {
		torch_free(&t);
		return rc;
	}
	credit(&t, mp_pickle_size(t.doc));
	rc = read_document(&t);
	if (rc == 0 && (t.process_id = mp_writer_process(c->w, &p)) < 0)
		rc = MP_EIO;
	if (rc == 0 && ((t.api_malloc = mp_writer_api(c->w, "cudaMalloc", 10)) < 0 ||
	                (t.api_free = mp_writer_api(c->w, "cudaFree", 8)) < 0 ||
	                (t.api_map = mp_writer_api(c->w, "cuMemMap", 8)) < 0 ||
	                (t.api_unmap = mp_writer_api(c->w, "cuMemUnmap", 10)) < 0))
		rc = MP_EIO;
	if (rc == 0)
		rc = write_all(&t);
	if (rc == 0)
		rc = write_meta(&t);
	torch_free(&t);
	return rc;
}

static int probe(const char *path, const char *head, size_t n)
{
	(void)path;
	return mp_pickle_probe(head, n);
}

const struct mp_importer mp_importer_torch = {
        .name = "torch",
        .description = "PyTorch CUDA memory snapshot (torch.cuda.memory._dump_snapshot)",
        .probe = probe,
        .run = run,
};

/* --- a snapshot read without writing it (import/torch_merge.c) ----------------------- */

struct mp_torch_doc {
	struct torch_import t;
	struct mp_import_ctx c;
};

int mp_torch_doc_load(struct mp_torch_doc **out, FILE *in, const char *path, struct mp_error *err)
{
	struct mp_torch_doc *d = calloc(1, sizeof(*d));
	int rc;

	*out = NULL;
	if (!d)
		return mp_err(err, MP_ENOMEM, "out of memory");
	d->c.path = path;
	d->c.err = err;
	d->t.c = &d->c;
	mp_intmap_init(&d->t.stacks);
	rc = mp_pickle_load(&d->t.doc, in, path, err);
	if (rc == 0) {
		d->t.budget = 8 * (int64_t)mp_pickle_size(d->t.doc) + 1000000;
		rc = read_document(&d->t);
	}
	d->c.err = NULL;
	if (rc < 0) {
		mp_torch_doc_free(d);
		return rc;
	}
	*out = d;
	return 0;
}

struct tp_device *mp_torch_doc_devices(struct mp_torch_doc *d, size_t *n)
{
	*n = d->t.n_devices;
	return d->t.devices;
}

const struct mp_pk *mp_torch_doc_root(const struct mp_torch_doc *d)
{
	return mp_pickle_root(d->t.doc);
}

void mp_torch_doc_free(struct mp_torch_doc *d)
{
	if (!d)
		return;
	torch_free(&d->t);
	free(d);
}
