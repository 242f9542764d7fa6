/*
 * import/torch_order.c - the order a snapshot's entries and annotations are
 * written in: by time, then phase starts, memory, phase ends, then device
 * and position.  Each device's entries already come in that order, so they
 * are merged through a heap of one cursor per device (O(n log devices),
 * nothing allocated per entry), each reading its device's entries with a
 * tp_reader (spilled or not); only the annotations are sorted.
 */
#include "import/torch.h"

#include <stdlib.h>
#include <string.h>

/* The key of the entry or annotation under a cursor. */
struct tp_ref {
	int64_t ts;
	int rank;      /* at one time: phase starts (0), then memory (1), then phase ends (2) */
	uint32_t list; /* device index, or the number of devices for annotations */
	size_t pos;    /* in the device's entries, or in the sorted annotations */
};

struct tp_cursor {
	struct tp_ref head;
	size_t end;
};

static int ref_cmp(const struct tp_ref *x, const struct tp_ref *y)
{
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank - y->rank;
	if (x->list != y->list)
		return x->list < y->list ? -1 : 1;
	return x->pos < y->pos ? -1 : x->pos > y->pos;
}

static int rank_of(const struct tp_entry *e)
{
	return e->action == TP_PHASE_BEGIN ? 0 : 2;
}

static int ref_qsort_cmp(const void *a, const void *b)
{
	return ref_cmp(a, b);
}

/* o's annotation_order: the annotations' indexes sorted by their keys. */
static int sort_annotations(struct tp_order *o, size_t n)
{
	struct tp_ref *refs = malloc((n ? n : 1) * sizeof(*refs));
	size_t i;

	if (!refs)
		return MP_ENOMEM;
	for (i = 0; i < n; i++)
		refs[i] = (struct tp_ref){o->annotations[i].ts_ns, rank_of(&o->annotations[i]),
		                          o->n_devices, i};
	qsort(refs, n, sizeof(*refs), ref_qsort_cmp); /* the keys are unique: one order */
	for (i = 0; i < n; i++)
		o->annotation_order[i] = refs[i].pos;
	free(refs);
	return 0;
}

/* The key at position pos of list (pos < the list's end): 0, or the
 * reader's error. */
static int ref_at(struct tp_order *o, uint32_t list, size_t pos, struct tp_ref *out)
{
	const struct tp_entry *e;

	if (list == o->n_devices) {
		e = &o->annotations[o->annotation_order[pos]];
		*out = (struct tp_ref){e->ts_ns, rank_of(e), list, pos};
		return 0;
	}
	if (!(e = tp_reader_at(&o->readers[list], pos)))
		return o->readers[list].failed;
	*out = (struct tp_ref){e->ts_ns, 1, list, pos};
	return 0;
}

static void sift_down(struct tp_order *o, size_t i)
{
	struct tp_cursor *h = o->heap, c = h[i];

	for (;;) {
		size_t k = 2 * i + 1;

		if (k >= o->n_heap)
			break;
		if (k + 1 < o->n_heap && ref_cmp(&h[k + 1].head, &h[k].head) < 0)
			k++;
		if (ref_cmp(&h[k].head, &c.head) >= 0)
			break;
		h[i] = h[k];
		i = k;
	}
	h[i] = c;
}

int mp_torch_order_init(struct tp_order *o, const struct tp_device *devices, size_t n_devices,
                        const struct tp_entry *annotations, const size_t *annotation_device,
                        size_t n_annotations)
{
	size_t i;
	int rc = 0;

	memset(o, 0, sizeof(*o));
	o->devices = devices;
	o->n_devices = (uint32_t)n_devices;
	o->annotations = annotations;
	o->annotation_device = annotation_device;
	o->heap = malloc((n_devices + 1) * sizeof(*o->heap));
	o->readers = malloc((n_devices ? n_devices : 1) * sizeof(*o->readers));
	o->annotation_order = malloc((n_annotations ? n_annotations : 1) * sizeof(size_t));
	if (!o->heap || !o->readers || !o->annotation_order ||
	    sort_annotations(o, n_annotations) < 0) {
		free(o->readers);
		o->readers = NULL;
		mp_torch_order_free(o);
		return MP_ENOMEM;
	}
	for (i = 0; i < n_devices; i++)
		tp_reader_init(&o->readers[i], &devices[i]);
	for (i = 0; rc == 0 && i < n_devices; i++)
		if (devices[i].n_entries) {
			o->heap[o->n_heap].end = devices[i].n_entries;
			rc = ref_at(o, (uint32_t)i, 0, &o->heap[o->n_heap++].head);
		}
	if (rc == 0 && n_annotations) {
		o->heap[o->n_heap].end = n_annotations;
		rc = ref_at(o, o->n_devices, 0, &o->heap[o->n_heap++].head);
	}
	if (rc < 0) {
		mp_torch_order_free(o);
		return rc;
	}
	for (i = o->n_heap / 2; i-- > 0;)
		sift_down(o, i);
	return 0;
}

int mp_torch_order_next(struct tp_order *o, size_t *device, const struct tp_entry **e)
{
	struct tp_cursor *top = o->heap;
	struct tp_ref r;
	int rc;

	if (!o->n_heap)
		return 0;
	r = top->head;
	if (r.list == o->n_devices) {
		*e = &o->annotations[o->annotation_order[r.pos]];
		*device = o->annotation_device[o->annotation_order[r.pos]];
	} else {
		/* a copy: reading the next one may replace the reader's chunk */
		if (!(*e = tp_reader_at(&o->readers[r.list], r.pos)))
			return o->readers[r.list].failed;
		o->current = **e;
		*e = &o->current;
		*device = r.list;
	}
	if (r.pos + 1 < top->end) {
		if ((rc = ref_at(o, r.list, r.pos + 1, &top->head)) < 0)
			return rc;
	} else {
		*top = o->heap[--o->n_heap];
	}
	if (o->n_heap)
		sift_down(o, 0);
	return 1;
}

int64_t mp_torch_order_first_ts(const struct tp_order *o)
{
	return o->n_heap ? o->heap[0].head.ts : 0;
}

void mp_torch_order_free(struct tp_order *o)
{
	uint32_t i;

	for (i = 0; o->readers && i < o->n_devices; i++)
		tp_reader_free(&o->readers[i]);
	free(o->readers);
	o->readers = NULL;
	free(o->heap);
	free(o->annotation_order);
	o->heap = NULL;
	o->annotation_order = NULL;
	o->n_heap = 0;
}
