/*
 * report/perfetto_slices.c - allocations as async slices ("b" at the
 * alloc, "e" at the program's free, or at the last timestamp for blocks
 * still live), and the JSON texts of call stacks, formatted once per stack.
 * Keeps nothing per live block: the memory state hands the block back.
 */
#include "report/perfetto_internal.h"
#include "util/error.h"
#include "util/stack_text.h"

#include <stdlib.h>
#include <string.h>

static const struct pf_stack no_stack = {"\"alloc\"", "null", "[]", 7, 4, 2};

/* "name (file:line)" as one JSON string. */
static void frame_text(struct mp_jstream *j, const struct memprof_frame *f)
{
	const char *name = f->name && *f->name ? f->name : "??";
	char line[32];

	mp_jstream_str_begin(j);
	mp_jstream_str_part(j, name, strlen(name));
	if (f->file && *f->file && strcmp(f->file, "??") != 0) {
		mp_jstream_lit(j, " (");
		mp_jstream_str_part(j, f->file, strlen(f->file));
		if (f->line > 0) {
			snprintf(line, sizeof(line), ":%lld", (long long)f->line);
			mp_jstream_raw(j, line, strlen(line));
		}
		mp_jstream_lit(j, ")");
	}
	mp_jstream_str_end(j);
}

/* The three texts of a stack in one malloc'd block. */
static struct pf_stack *format_stack(const struct memprof_stack *s)
{
	const struct memprof_frame *site = &s->frames[mp_stack_call_site(s)];
	struct pf_stack *e = malloc(sizeof(*e));
	struct mp_jstream j;
	size_t n_name, n_site, len;
	uint32_t i;
	char *t;

	if (!e || mp_jstream_init(&j, NULL) < 0) {
		free(e);
		return NULL;
	}
	mp_jstream_str(&j, site->name && *site->name ? site->name : "??");
	n_name = j.len;
	frame_text(&j, site);
	n_site = j.len - n_name;
	mp_jstream_lit(&j, "[");
	for (i = s->n_frames; i-- > 0;) { /* innermost last */
		frame_text(&j, &s->frames[i]);
		if (i)
			mp_jstream_lit(&j, ",");
	}
	mp_jstream_lit(&j, "]");
	if (!(t = mp_jstream_take(&j, &len))) {
		mp_jstream_free(&j);
		free(e);
		return NULL;
	}
	e->name = t;
	e->name_len = n_name;
	e->site = t + n_name;
	e->site_len = n_site;
	e->frames = t + n_name + n_site;
	e->frames_len = len - n_name - n_site;
	return e;
}

const struct pf_stack *pf_stack(struct mp_perfetto *w, int64_t stack_id,
                                const struct memprof_stack *s)
{
	struct pf_stack *e;
	uint64_t v;

	if (!s || stack_id == 0 || s->n_frames == 0)
		return &no_stack;
	if (mp_intmap_get(&w->stacks, (uint64_t)stack_id, &v))
		return (const struct pf_stack *)(uintptr_t)v;
	if (!(e = format_stack(s)) ||
	    mp_intmap_put(&w->stacks, (uint64_t)stack_id, (uint64_t)(uintptr_t)e) < 0) {
		if (e)
			free((void *)e->name);
		free(e);
		w->nomem = 1;
		return NULL;
	}
	return e;
}

void pf_stacks_free(struct mp_perfetto *w)
{
	size_t i;

	for (i = 0; i < w->stacks.cap; i++) {
		struct pf_stack *e;

		if (!w->stacks.used[i])
			continue;
		e = (struct pf_stack *)(uintptr_t)w->stacks.vals[i];
		free((void *)e->name);
		free(e);
	}
	mp_intmap_free(&w->stacks);
}

void pf_context_args(struct mp_perfetto *w, const struct memprof_record *rec,
                     const struct pf_stack *s)
{
	mp_jstream_lit(&w->j, ",\"stream\":");
	mp_jstream_u64(&w->j, rec->ev.stream);
	mp_jstream_lit(&w->j, ",\"api\":");
	mp_jstream_str(&w->j, rec->api);
	mp_jstream_lit(&w->j, ",\"phase\":");
	mp_jstream_str(&w->j, rec->phase);
	mp_jstream_lit(&w->j, ",\"pid\":");
	mp_jstream_i64(&w->j, rec->pid);
	mp_jstream_lit(&w->j, ",\"thread\":");
	mp_jstream_i64(&w->j, rec->ev.thread);
	mp_jstream_lit(&w->j, ",\"call_site\":");
	mp_jstream_raw(&w->j, s->site, s->site_len);
	mp_jstream_lit(&w->j, ",\"stack\":");
	mp_jstream_raw(&w->j, s->frames, s->frames_len);
}

/* ,"cat":"alloc","id":"0x..","scope":"alloc","name":..: what pairs b and e. */
static void slice_ident(struct mp_perfetto *w, int64_t seq, const struct pf_stack *s)
{
	mp_jstream_lit(&w->j, ",\"cat\":\"alloc\",\"id\":");
	mp_jstream_hex(&w->j, (uint64_t)seq);
	mp_jstream_lit(&w->j, ",\"scope\":\"alloc\",\"name\":");
	mp_jstream_raw(&w->j, s->name, s->name_len);
}

void pf_slices_init(struct mp_perfetto *w)
{
	mp_intmap_init(&w->open_slices);
	mp_slot_pool_init(&w->slices, sizeof(struct pf_open_slice));
}

void pf_slices_free(struct mp_perfetto *w)
{
	mp_intmap_free(&w->open_slices);
	mp_slot_pool_free(&w->slices);
}

/* Remember b's slice until its end; 0 or MP_ENOMEM. */
static int open_slice(struct mp_perfetto *w, const struct mp_mem_block *b, int64_t jpid,
                      const struct pf_stack *s)
{
	struct pf_open_slice *o;
	size_t slot;

	if (!(o = mp_slot_pool_take(&w->slices, &slot)) ||
	    mp_intmap_put(&w->open_slices, b->key, slot) < 0) {
		w->nomem = 1;
		return MP_ENOMEM;
	}
	o->seq = b->alloc_seq;
	o->begin_ts_ns = b->alloc_ts_ns;
	o->jpid = jpid;
	o->stack = s;
	return 0;
}

int pf_slice_begin(void *ctx, const struct mp_mem_block *b, const struct memprof_record *rec)
{
	struct mp_perfetto *w = ctx;
	const struct pf_stack *s;
	struct pf_device *d;

	if (b->size_bytes < w->o.min_size_bytes) {
		w->st.n_slices_skipped++;
		return 0;
	}
	if (!(d = pf_device(w, b->device)) || !(s = pf_stack(w, b->stack_id, b->stack)) ||
	    open_slice(w, b, d->jpid, s) < 0)
		return pf_status(w);
	pf_event_head(w, 'b', b->alloc_ts_ns, d->jpid, d->jpid);
	slice_ident(w, b->alloc_seq, s);
	mp_jstream_lit(&w->j, ",\"args\":{\"size\":");
	mp_jstream_i64(&w->j, b->size_bytes);
	mp_jstream_lit(&w->j, ",\"requested\":");
	mp_jstream_i64(&w->j, b->requested_bytes);
	mp_jstream_lit(&w->j, ",\"address\":");
	mp_jstream_hex(&w->j, b->address);
	mp_jstream_lit(&w->j, ",\"alloc_id\":");
	mp_jstream_i64(&w->j, b->alloc_id);
	if (b->preexisting)
		mp_jstream_lit(&w->j, ",\"preexisting\":true");
	pf_context_args(w, rec, s);
	mp_jstream_lit(&w->j, "}}");
	w->st.n_slices++;
	return pf_status(w);
}

/* The "e" of a slice at ts_ns (never before its "b"). */
static void slice_end(struct mp_perfetto *w, const struct pf_open_slice *o, int64_t ts_ns,
                      int live_at_end)
{
	pf_event_head(w, 'e', ts_ns > o->begin_ts_ns ? ts_ns : o->begin_ts_ns, o->jpid, o->jpid);
	slice_ident(w, o->seq, o->stack);
	if (live_at_end) {
		mp_jstream_lit(&w->j, ",\"args\":{\"live_at_end\":true}");
		w->st.n_live_at_end++;
	}
	mp_jstream_lit(&w->j, "}");
}

int pf_slice_end(void *ctx, const struct mp_mem_block *b, const struct memprof_record *rec)
{
	struct mp_perfetto *w = ctx;
	uint64_t slot;

	if (!mp_intmap_get(&w->open_slices, b->key, &slot))
		return 0; /* below --min-size */
	slice_end(w, mp_slot_pool_at(&w->slices, slot), rec->ev.ts_ns, 0);
	mp_intmap_del(&w->open_slices, b->key);
	mp_slot_pool_give(&w->slices, slot);
	return pf_status(w);
}

int pf_slices_finish(struct mp_perfetto *w)
{
	const struct mp_intmap *m = &w->open_slices;
	size_t i;

	for (i = 0; i < m->cap; i++)
		if (m->used[i])
			slice_end(w, mp_slot_pool_at(&w->slices, m->vals[i]), w->max_ts_ns, 1);
	return pf_status(w);
}
