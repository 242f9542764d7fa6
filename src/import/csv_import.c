/*
 * import/csv_import.c - the importer of memprof's own CSV format: rows from
 * import/csv.c become events, with names, stacks, processes and devices
 * interned through the writer.  Checks that allocation ids pair up.
 */
#include "import/csv.h"
#include "import/import.h"
#include "util/pair_map.h"
#include "util/intmap.h"
#include "util/stack_text.h"
#include "util/strmap.h"

#include <stdlib.h>
#include <string.h>

/* Stack texts seen lately, by a cheap hash of a few of their bytes: most
 * rows find their stack here with one memcmp and no hash of the whole text. */
#define STACK_CACHE 1024

struct stack_slot {
	const char *text; /* the map's copy */
	size_t len;
	int64_t id;
};

#define N_LAST_NAMES 4 /* phases or APIs kept: two processes' rows interleave */

struct last_name {
	char text[64];
	size_t len;
	int64_t id; /* 0: none kept */
};

struct last_names {
	struct last_name name[N_LAST_NAMES];
	int oldest; /* the slot the next new name takes */
};

#define N_RECENT 8 /* processes and devices kept, by the low bits of their number */

struct csv_import {
	struct mp_writer *w;
	const char *path;
	struct mp_pair_map live_blocks;   /* (alloc id, process) -> size */
	struct mp_pair_map live_segments; /* (segment id, process) -> size */
	struct mp_intmap processes;       /* pid -> process id */
	struct mp_intmap devices;         /* process id << 32 | ordinal -> 1 */
	struct {
		int64_t pid, id; /* id 0: none */
	} recent_process[N_RECENT];
	uint64_t recent_device[N_RECENT]; /* device keys; 0: none */
	int64_t last_pid, last_process;   /* the previous row's (process 0: none yet) */
	int32_t last_device;              /* and device, noted */
	struct mp_strmap stacks;          /* stack text -> stack id */
	const char *last_stack;           /* the map's copy of the last stack text */
	size_t last_stack_len;
	int64_t last_stack_id;
	struct mp_frame_list frames;
	struct mp_import_stats *st;
	int64_t n_events; /* imported, added to st at the end */
	struct stack_slot cache[STACK_CACHE];
	struct last_names last_phase, last_api;
	int64_t prev_phase_id, prev_api_id; /* the previous row's, for same_phase, same_api */
};

static int64_t process_id(struct csv_import *ci, int64_t pid)
{
	unsigned k = (unsigned)pid % N_RECENT;
	uint64_t id;

	if (ci->recent_process[k].id > 0 && ci->recent_process[k].pid == pid)
		return ci->recent_process[k].id;
	if (!mp_intmap_get(&ci->processes, (uint64_t)pid, &id)) {
		struct memprof_process p = {0, pid, 0, NULL, -1, -1, -1, NULL};

		if (mp_writer_process(ci->w, &p) < 0 ||
		    mp_intmap_put(&ci->processes, (uint64_t)pid, (uint64_t)p.id) < 0)
			return -1;
		id = (uint64_t)p.id;
	}
	ci->recent_process[k].pid = pid;
	return ci->recent_process[k].id = (int64_t)id;
}

static int note_device(struct csv_import *ci, int64_t process, int32_t ordinal)
{
	uint64_t key = ((uint64_t)process << 32) | (uint32_t)ordinal;
	unsigned k = (unsigned)(3 * process + ordinal) % N_RECENT; /* 1.1 and 2.0 apart */

	if (key == ci->recent_device[k]) /* process ids start at 1: never key 0 */
		return 0;
	if (!mp_intmap_get(&ci->devices, key, NULL)) {
		struct memprof_device d = {process, ordinal, NULL, NULL, 0};

		if (mp_writer_device(ci->w, &d) < 0 || mp_intmap_put(&ci->devices, key, 1) < 0)
			return -1;
	}
	ci->recent_device[k] = key;
	return 0;
}

/* The cache slot of text s (n >= 1 bytes): its length and three 8-byte samples. */
static struct stack_slot *cache_slot(struct csv_import *ci, const char *s, size_t n)
{
	uint64_t a = 0, b = 0, c = 0, h;
	size_t k = n < 8 ? n : 8;

	if (n >= 8) { /* most stacks: loads of a constant size, no copy loop */
		memcpy(&a, s, 8);
		memcpy(&b, s + n - 8, 8);
		memcpy(&c, s + (n - 8) / 2, 8);
	} else {
		memcpy(&a, s, k);
		memcpy(&b, s + n - k, k);
		memcpy(&c, s + (n - k) / 2, k);
	}
	h = (a ^ (b * 0x9e3779b97f4a7c15ULL) ^ (c * 0xc2b2ae3d27d4eb4fULL) ^ n) *
	    0xff51afd7ed558ccdULL;
	return &ci->cache[h >> 54]; /* the top 10 bits: STACK_CACHE slots */
}

static int64_t stack_id(struct csv_import *ci, const struct mp_csv_row *row, struct mp_error *err)
{
	struct memprof_stack stack;
	struct mp_error perr;
	struct stack_slot *slot;
	int64_t id;

	if (ci->last_stack && row->stack_len == ci->last_stack_len &&
	    memcmp(row->stack, ci->last_stack, row->stack_len) == 0)
		return ci->last_stack_id; /* consecutive events often share a stack */
	slot = cache_slot(ci, row->stack, row->stack_len);
	if (slot->text && slot->len == row->stack_len &&
	    memcmp(slot->text, row->stack, row->stack_len) == 0) {
		ci->last_stack = slot->text;
		ci->last_stack_len = slot->len;
		return ci->last_stack_id = slot->id;
	}
	if (mp_strmap_get_key(&ci->stacks, row->stack, row->stack_len, &id, &ci->last_stack)) {
		ci->last_stack_len = row->stack_len;
		ci->last_stack_id = id;
		*slot = (struct stack_slot){ci->last_stack, row->stack_len, id};
		return id;
	}
	if (mp_stack_text_parse(row->stack, row->stack_len, &ci->frames, &perr) < 0)
		return mp_err(err, MP_EFORMAT, "invalid stack '%s:%lld:%lld': %s", ci->path,
		              (long long)row->line, (long long)row->stack_col, perr.msg);
	stack.n_frames = (uint32_t)ci->frames.n;
	stack.frames = ci->frames.frames;
	id = mp_writer_stack(ci->w, &stack);
	if (id < 0)
		return id;
	if (mp_strmap_put(&ci->stacks, row->stack, row->stack_len, id, &ci->last_stack) < 0)
		return mp_err(err, MP_ENOMEM, "out of memory");
	ci->last_stack_len = row->stack_len;
	ci->last_stack_id = id;
	*slot = (struct stack_slot){ci->last_stack, row->stack_len, id};
	return id;
}

/* Are the n bytes at a and b the same?  Inline: names are short. */
static inline int same_text(const char *a, const char *b, size_t n)
{
	uint64_t x, y;
	uint32_t u, v;
	size_t i;

	if (n >= 8) {
		for (i = 0; i + 8 < n; i += 8) {
			memcpy(&x, a + i, 8);
			memcpy(&y, b + i, 8);
			if (x != y)
				return 0;
		}
		memcpy(&x, a + n - 8, 8);
		memcpy(&y, b + n - 8, 8);
		return x == y;
	}
	if (n >= 4) {
		memcpy(&u, a, 4);
		memcpy(&v, b, 4);
		if (u != v)
			return 0;
		memcpy(&u, a + n - 4, 4);
		memcpy(&v, b + n - 4, 4);
		return u == v;
	}
	for (i = 0; i < n; i++)
		if (a[i] != b[i])
			return 0;
	return 1;
}

/* A name not among the last ones: interned, and kept in the place of the
 * oldest when it fits. */
static int64_t new_name(struct csv_import *ci, struct last_names *last, const char *s, size_t n,
                        int64_t (*intern)(struct mp_writer *, const char *, size_t))
{
	struct last_name *slot;
	int64_t id = intern(ci->w, s, n);

	if (id <= 0 || n > sizeof(last->name[0].text))
		return id;
	slot = &last->name[last->oldest];
	last->oldest = (last->oldest + 1) % N_LAST_NAMES;
	memcpy(slot->text, s, n);
	slot->len = n;
	slot->id = id;
	return id;
}

/* The writer's id of a phase or API name, the last N_LAST_NAMES kept, each
 * new one in the place of the oldest: rows run in phases of thousands (one
 * per process, two processes' rows interleaved), and most of them name the
 * same API as the row before.  Inline: the lookup is a few compares. */
static inline __attribute__((always_inline)) int64_t
name_id(struct csv_import *ci, struct last_names *last, const char *s, size_t n,
        int64_t (*intern)(struct mp_writer *, const char *, size_t))
{
	int i;

	for (i = 0; i < N_LAST_NAMES; i++)
		if (n == last->name[i].len && last->name[i].id > 0 &&
		    same_text(s, last->name[i].text, n))
			return last->name[i].id;
	return new_name(ci, last, s, n, intern);
}

/* check_ids for every op but the free of a live block. */
static int check_other_ids(struct csv_import *ci, struct mp_csv_row *row, int seg,
                           struct mp_error *err)
{
	struct memprof_event *ev = &row->ev;
	struct mp_pair_map *live = seg ? &ci->live_segments : &ci->live_blocks;
	uint64_t key = (uint64_t)ev->alloc_id, process = (uint64_t)ev->process_id, size;
	int rc;

	switch (ev->op) {
	case MEMPROF_OP_ALLOC:
	case MEMPROF_OP_PREEXISTING:
	case MEMPROF_OP_RESERVE:
		rc = mp_pair_map_add(live, key, process, (uint64_t)ev->size_bytes);
		if (rc == 0)
			return mp_err(err, MP_EFORMAT,
			              "duplicate id '%s:%lld': %s %lld is still live (ids may be "
			              "reused only after their %s)",
			              ci->path, (long long)row->line,
			              seg ? "segment" : "allocation", (long long)ev->alloc_id,
			              seg ? "release" : "free");
		if (rc < 0)
			return mp_err(err, MP_ENOMEM, "out of memory");
		if (!seg)
			ci->st->n_allocs++;
		return 0;
	case MEMPROF_OP_FREE:
	case MEMPROF_OP_RELEASE:
	case MEMPROF_OP_FREE_REQUESTED:
		if (!(ev->op == MEMPROF_OP_FREE_REQUESTED /* the free that follows ends it */
		              ? mp_pair_map_get(live, key, process, &size)
		              : mp_pair_map_take(live, key, process, &size))) {
			ci->st->n_warnings[seg ? MP_WARN_UNMATCHED_RELEASE
			                       : MP_WARN_UNMATCHED_FREE]++;
			return 0;
		}
		if (ev->size_bytes == 0)
			ev->size_bytes = ev->requested_bytes = (int64_t)size;
		return 0;
	default:
		return 0;
	}
}

/* Pair allocs with frees (and reserves with releases); fill a free's size. */
static int check_ids(struct csv_import *ci, struct mp_csv_row *row, struct mp_error *err)
{
	struct memprof_event *ev = &row->ev;
	int seg = ev->op == MEMPROF_OP_RESERVE || ev->op == MEMPROF_OP_RELEASE;
	uint64_t size;

	/* The free of a live block, most rows' other op, in few steps: as below. */
	if (ev->op == MEMPROF_OP_FREE && mp_pair_map_take(&ci->live_blocks, (uint64_t)ev->alloc_id,
	                                                  (uint64_t)ev->process_id, &size)) {
		if (ev->size_bytes == 0)
			ev->size_bytes = ev->requested_bytes = (int64_t)size;
		return 0;
	}
	return check_other_ids(ci, row, seg, err);
}

static int import_row(struct csv_import *ci, struct mp_csv_row *row, struct mp_error *err)
{
	struct memprof_event *ev = &row->ev;
	int rc;

	if (row->pid == ci->last_pid && ev->device == ci->last_device && ci->last_process > 0) {
		ev->process_id = ci->last_process; /* and its device noted */
	} else {
		ev->process_id = process_id(ci, row->pid);
		if (ev->process_id < 0 || note_device(ci, ev->process_id, ev->device) < 0)
			return MP_EIO;
		ci->last_pid = row->pid;
		ci->last_device = ev->device;
		ci->last_process = ev->process_id;
	}
	rc = check_ids(ci, row, err);
	if (rc < 0)
		return rc;
	if (row->same_phase) /* the reader saw the previous row's text */
		ev->phase_id = ci->prev_phase_id;
	else if (row->phase && (ev->phase_id = name_id(ci, &ci->last_phase, row->phase,
	                                               row->phase_len, mp_writer_phase)) < 0)
		return MP_EIO;
	if (row->same_api)
		ev->api_id = ci->prev_api_id;
	else if (row->api && (ev->api_id = name_id(ci, &ci->last_api, row->api, row->api_len,
	                                           mp_writer_api)) < 0)
		return MP_EIO;
	ci->prev_phase_id = ev->phase_id;
	ci->prev_api_id = ev->api_id;
	if (row->stack && (ev->stack_id = stack_id(ci, row, err)) < 0)
		return (int)ev->stack_id;
	if (mp_writer_event(ci->w, ev) < 0)
		return MP_EIO;
	ci->n_events++;
	return 0;
}

static int import_all(struct csv_import *ci, struct mp_import_ctx *c)
{
	struct mp_error *err = c->err;
	struct mp_csv_reader *r;
	struct mp_csv_row row;
	int rc;

	rc = mp_csv_open(&r, c->in, c->path, err);
	if (rc < 0)
		return rc;
	mp_pair_map_init(&ci->live_blocks);
	mp_pair_map_init(&ci->live_segments);
	mp_intmap_init(&ci->processes);
	mp_intmap_init(&ci->devices);
	mp_strmap_init(&ci->stacks);
	mp_frame_list_init(&ci->frames);
	while ((rc = mp_csv_next(r, &row, err)) == 1) {
		rc = import_row(ci, &row, err);
		if (rc == MP_EIO || rc == MP_ENOMEM || rc == MP_EFULL)
			rc = mp_err_copy(err, mp_writer_error(c->w));
		if (rc < 0)
			break;
	}
	ci->st->n_events += ci->n_events;
	mp_csv_close(r);
	mp_pair_map_free(&ci->live_blocks);
	mp_pair_map_free(&ci->live_segments);
	mp_intmap_free(&ci->processes);
	mp_intmap_free(&ci->devices);
	mp_strmap_free(&ci->stacks);
	mp_frame_list_free(&ci->frames);
	return rc < 0 ? rc : 0;
}

static int run(struct mp_import_ctx *c)
{
	struct csv_import *ci = calloc(1, sizeof(*ci));
	int rc;

	if (!ci)
		return mp_err(c->err, MP_ENOMEM, "out of memory");
	ci->w = c->w;
	ci->path = c->path;
	ci->st = c->st;
	rc = import_all(ci, c);
	free(ci);
	return rc;
}

static int probe(const char *path, const char *head, size_t n)
{
	(void)path;
	return mp_csv_probe(head, n);
}

const struct mp_importer mp_importer_csv = {
        .name = "csv",
        .description = "memprof CSV trace (memprof-trace(5))",
        .probe = probe,
        .run = run,
};
