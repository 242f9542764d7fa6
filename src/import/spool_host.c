/*
 * import/spool_host.c - a spool's pinned host buffers (spool.h): pinned by
 * an API call or a memory record, unpinned by a free call or cuMemRelease,
 * their pages per NUMA node from HOST_NUMA events; written to the trace's
 * host_buffers tables when the spool's conversion ends, never as events (a
 * trace's events are GPU memory).  No output, no SQL of its own.
 */
#include "import/spool.h"

#include <stdlib.h>
#include <string.h>

#include "util/array.h"

void mp_spool_host_init(struct mp_spool_host *h)
{
	memset(h, 0, sizeof(*h));
	mp_intmap_init(&h->live);
	mp_intmap_init(&h->by_corr);
	mp_intmap_init(&h->handles);
}

void mp_spool_host_free(struct mp_spool_host *h)
{
	size_t i;
	for (i = 0; i < h->n; i++)
		free(h->bufs[i].nodes);
	free(h->bufs);
	mp_intmap_free(&h->live);
	mp_intmap_free(&h->by_corr);
	mp_intmap_free(&h->handles);
	memset(h, 0, sizeof(*h));
}

int mp_spool_host_open(struct mp_spool_host *h, const struct mp_host_buffer *b, uint32_t corr,
                       uint64_t handle)
{
	struct mp_spool_host_buf *x;
	if (b->address && !handle)
		mp_spool_host_close(h, b->address, b->alloc_ts_ns);
	if (mp_array_reserve((void **)&h->bufs, &h->cap, h->n + 1, sizeof(*h->bufs)) < 0)
		return MP_ENOMEM;
	x = &h->bufs[h->n];
	memset(x, 0, sizeof(*x));
	x->b = *b;
	x->b.free_ts_ns = -1;
	x->b.n_nodes = 0;
	x->b.nodes = NULL;
	x->handle = handle;
	h->n++;
	if ((handle ? mp_intmap_put(&h->handles, handle, h->n)
	            : mp_intmap_put(&h->live, b->address, h->n)) < 0 ||
	    (corr && mp_intmap_put(&h->by_corr, corr, h->n) < 0))
		return MP_ENOMEM;
	return 0;
}

int mp_spool_host_close(struct mp_spool_host *h, uint64_t address, int64_t ts)
{
	uint64_t i;
	if (!address || !mp_intmap_get(&h->live, address, &i))
		return 0;
	h->bufs[i - 1].b.free_ts_ns = ts;
	mp_intmap_del(&h->live, address);
	return 1;
}

int mp_spool_host_release(struct mp_spool_host *h, uint64_t handle, int64_t ts)
{
	uint64_t i;
	if (!mp_intmap_get(&h->handles, handle, &i))
		return 0;
	h->bufs[i - 1].b.free_ts_ns = ts;
	mp_intmap_del(&h->handles, handle);
	return 1;
}

int mp_spool_host_mapped(struct mp_spool_host *h, uint64_t handle, uint64_t va)
{
	uint64_t i;
	if (!mp_intmap_get(&h->handles, handle, &i))
		return 0;
	if (!h->bufs[i - 1].b.address)
		h->bufs[i - 1].b.address = va;
	return 1;
}

/* Add bytes and pages on node to x (one row per node). */
static int add_node(struct mp_spool_host_buf *x, int32_t node, int64_t bytes, int64_t pages)
{
	size_t k;
	for (k = 0; k < x->n_nodes; k++)
		if (x->nodes[k].node == node) {
			x->nodes[k].bytes += bytes;
			x->nodes[k].pages += pages;
			return 0;
		}
	if (mp_array_reserve((void **)&x->nodes, &x->cap_nodes, x->n_nodes + 1, sizeof(*x->nodes)) <
	    0)
		return MP_ENOMEM;
	x->nodes[x->n_nodes++] = (struct mp_host_buffer_node){node, bytes, pages};
	return 0;
}

int mp_spool_host_numa(struct mp_spool_host *h, const struct mp_spool_event *e)
{
	uint64_t i = 0;
	struct mp_spool_host_buf *x;
	if (e->extra > INT32_MAX || e->bytes > INT64_MAX)
		return 0; /* not a node, not a size */
	if (!(e->correlation && mp_intmap_get(&h->by_corr, e->correlation, &i)) &&
	    !(e->address && mp_intmap_get(&h->live, e->address, &i)))
		return 0;
	x = &h->bufs[i - 1];
	if (e->address && x->b.address && e->address != x->b.address)
		return 0; /* the correlation is another call's */
	return add_node(x, (int32_t)e->extra, (int64_t)e->bytes, (int64_t)e->extra2) < 0 ? MP_ENOMEM
	                                                                                 : 1;
}

int64_t mp_spool_host_write(struct mp_spool_host *h, struct mp_store *s)
{
	size_t i;
	int rc;
	for (i = 0; i < h->n; i++) {
		struct mp_spool_host_buf *x = &h->bufs[i];
		x->b.nodes = x->nodes;
		x->b.n_nodes = x->n_nodes;
		if ((rc = mp_store_add_host_buffer(s, &x->b)) < 0)
			return rc;
	}
	return (int64_t)h->n;
}
