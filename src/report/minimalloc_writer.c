/*
 * report/minimalloc_writer.c - records to MiniMalloc CSV rows, one per
 * block-level allocation (alloc, preexisting) from its alloc to its free,
 * half-open.  Keeps only the live blocks; everything but alloc, preexisting
 * and free is ignored.
 */
#include "report/minimalloc_writer.h"
#include "util/intmap.h"

#include <errno.h>
#include <stdlib.h>

struct live {
	int64_t id, lower, size;
};

struct mp_minimalloc_writer {
	FILE *out;
	struct mp_minimalloc_opts o;
	struct mp_minimalloc_stats st;
	struct mp_intmap ids; /* alloc id -> index in slots */
	struct live *slots;
	size_t n_slots, cap_slots;
	size_t *free_slots; /* indices of unused slots */
	size_t n_free;
	int64_t last;
	int failed;
};

struct mp_minimalloc_writer *mp_minimalloc_writer_open(FILE *out,
                                                       const struct mp_minimalloc_opts *o)
{
	struct mp_minimalloc_writer *w = calloc(1, sizeof(*w));

	if (!w)
		return NULL;
	w->out = out;
	w->o = *o;
	mp_intmap_init(&w->ids);
	if (fputs("id,lower,upper,size\n", out) == EOF)
		w->failed = errno ? errno : EIO;
	return w;
}

static void put_row(struct mp_minimalloc_writer *w, const struct live *b, int64_t upper)
{
	if (upper <= b->lower) {
		upper = b->lower + 1; /* freed at the time of its alloc */
		w->st.n_widened++;
	}
	if (!w->failed && fprintf(w->out, "%lld,%lld,%lld,%lld\n", (long long)b->id,
	                          (long long)b->lower, (long long)upper, (long long)b->size) < 0)
		w->failed = errno ? errno : EIO;
	w->st.n_rows++;
}

static int take_slot(struct mp_minimalloc_writer *w, size_t *out)
{
	if (w->n_free) {
		*out = w->free_slots[--w->n_free];
		return 0;
	}
	if (w->n_slots == w->cap_slots) {
		size_t cap = w->cap_slots ? w->cap_slots * 2 : 1024;
		struct live *s = realloc(w->slots, cap * sizeof(*s));
		size_t *f;

		if (!s)
			return -1;
		w->slots = s;
		f = realloc(w->free_slots, cap * sizeof(*f));
		if (!f)
			return -1;
		w->free_slots = f;
		w->cap_slots = cap;
	}
	*out = w->n_slots++;
	return 0;
}

/* End the live block of id at time t, if there is one: 1 when there was. */
static int end_block(struct mp_minimalloc_writer *w, int64_t id, int64_t t)
{
	uint64_t slot;

	if (!mp_intmap_get(&w->ids, (uint64_t)id, &slot))
		return 0;
	put_row(w, &w->slots[slot], t);
	mp_intmap_del(&w->ids, (uint64_t)id);
	w->free_slots[w->n_free++] = (size_t)slot;
	return 1;
}

int mp_minimalloc_writer_record(struct mp_minimalloc_writer *w, const struct memprof_record *rec)
{
	const struct memprof_event *ev = &rec->ev;
	int64_t t = w->o.time == MP_MINIMALLOC_TIME_NS ? ev->ts_ns : ev->seq;
	size_t slot;

	if (t > w->last)
		w->last = t;
	if (w->o.select && ev->process_id != w->o.process_id)
		return 0;
	switch (ev->op) {
	case MEMPROF_OP_ALLOC:
	case MEMPROF_OP_PREEXISTING:
		if (w->o.select && ev->device != w->o.device)
			return 0;
		w->st.n_reused_ids += end_block(w, ev->alloc_id, t);
		if (take_slot(w, &slot) < 0 ||
		    mp_intmap_put(&w->ids, (uint64_t)ev->alloc_id, (uint64_t)slot) < 0) {
			w->failed = ENOMEM;
			return -1;
		}
		w->slots[slot] = (struct live){ev->seq, t, ev->size_bytes};
		break;
	case MEMPROF_OP_FREE:
		/* ids are unique within a process: a free may name another device */
		if (!end_block(w, ev->alloc_id, t) && (!w->o.select || ev->device == w->o.device))
			w->st.n_unmatched_frees++;
		break;
	default:
		break;
	}
	if (w->failed)
		errno = w->failed;
	return w->failed ? -1 : 0;
}

static int by_id(const void *a, const void *b)
{
	const struct live *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

/* Blocks never freed, in the order of their allocs, end at the last time + 1. */
static void put_unfreed(struct mp_minimalloc_writer *w)
{
	struct live *left = malloc(w->ids.n * sizeof(*left) + 1);
	size_t i, n = 0;

	if (!left) {
		w->failed = ENOMEM;
		return;
	}
	for (i = 0; i < w->ids.cap; i++)
		if (w->ids.used[i])
			left[n++] = w->slots[w->ids.vals[i]];
	qsort(left, n, sizeof(*left), by_id);
	for (i = 0; i < n; i++)
		put_row(w, &left[i], w->last + 1);
	w->st.n_unfreed = (int64_t)n;
	free(left);
}

int mp_minimalloc_writer_close(struct mp_minimalloc_writer *w, struct mp_minimalloc_stats *st)
{
	int rc;

	put_unfreed(w);
	if (fflush(w->out) != 0 && !w->failed)
		w->failed = errno ? errno : EIO;
	if (st)
		*st = w->st;
	rc = w->failed ? -1 : 0;
	if (w->failed)
		errno = w->failed;
	mp_intmap_free(&w->ids);
	free(w->slots);
	free(w->free_slots);
	free(w);
	return rc;
}
