/*
 * analysis/numa.c - the NUMA placement figures of analysis/numa.h from the
 * trace's devices.numa_node, host_buffers tables and numa_distances meta
 * (through store/reader.h).  A buffer is far when some of its bytes sit on
 * another node than its GPU's nearest one; nothing is printed here.
 */
#include "analysis/numa.h"
#include "analysis/call_site.h"
#include "store/reader.h"

#include <stdlib.h>
#include <string.h>

#include "util/array.h"

struct load {
	struct mp_numa *n;
	int device;
	struct memprof_process *procs;
	size_t n_procs;
	size_t cap_far;
};

int32_t mp_numa_distance(const struct mp_numa *n, int32_t a, int32_t b)
{
	size_t i, j;
	for (i = 0; i < n->n_nodes && n->nodes[i] != a; i++)
		;
	for (j = 0; j < n->n_nodes && n->nodes[j] != b; j++)
		;
	if (i == n->n_nodes || j == n->n_nodes)
		return -1;
	return n->distances[i * n->n_nodes + j];
}

/* A number at *p, then *p past it; -1 when there is none. */
static long number(const char **p)
{
	char *end;
	long v = strtol(*p, &end, 10);
	if (end == *p || v < 0 || v > 1000000)
		return -1;
	*p = end;
	return v;
}

static int count_rows(const char *text)
{
	int rows = 1;
	for (; *text; text++)
		rows += *text == ';';
	return rows;
}

int mp_numa_parse_distances(struct mp_numa *n, const char *text)
{
	size_t rows = (size_t)count_rows(text), r = 0, c;
	const char *p = text;

	free(n->nodes);
	free(n->distances);
	n->n_nodes = 0;
	n->nodes = calloc(rows, sizeof(*n->nodes));
	n->distances = calloc(rows * rows, sizeof(*n->distances));
	if (!n->nodes || !n->distances)
		return MP_ENOMEM;
	for (r = 0; r < rows; r++) {
		long node = number(&p);
		if (node < 0 || *p++ != ':')
			goto bad;
		n->nodes[r] = (int32_t)node;
		for (c = 0; c < rows; c++) {
			long d = number(&p);
			if (d < 0 || (c + 1 < rows ? *p++ != ',' : 0))
				goto bad;
			n->distances[r * rows + c] = (int32_t)d;
		}
		if (*p != (r + 1 < rows ? ';' : '\0'))
			goto bad;
		p++;
	}
	n->n_nodes = rows;
	return 0;
bad:
	n->n_nodes = 0;
	return MP_EFORMAT;
}

static const struct mp_numa_gpu *gpu_of(const struct mp_numa *n, int64_t process_id, int32_t device)
{
	size_t i;
	for (i = 0; i < n->n_gpus; i++)
		if (n->gpus[i].process_id == process_id && n->gpus[i].device == device)
			return &n->gpus[i];
	return NULL;
}

static int64_t pid_of(const struct load *l, int64_t process_id)
{
	size_t i;
	for (i = 0; i < l->n_procs; i++)
		if (l->procs[i].id == process_id)
			return l->procs[i].pid;
	return 0;
}

/* Keep b as a far buffer (gpu_node its GPU's, far_bytes its bytes elsewhere). */
static int keep_far(struct load *l, const struct mp_host_buffer *b, int32_t gpu_node,
                    int64_t far_bytes)
{
	struct mp_numa *n = l->n;
	struct mp_numa_far *f;
	size_t k;

	if (mp_array_reserve((void **)&n->far, &l->cap_far, (size_t)n->n_far + 1, sizeof(*f)) < 0)
		return MP_ENOMEM;
	f = &n->far[n->n_far];
	memset(f, 0, sizeof(*f));
	n->n_far++;
	f->pid = pid_of(l, b->process_id);
	f->device = b->device;
	f->gpu_node = gpu_node;
	f->address = b->address;
	f->size_bytes = b->size_bytes;
	f->far_bytes = far_bytes;
	f->alloc_ts_ns = b->alloc_ts_ns;
	f->free_ts_ns = b->free_ts_ns;
	f->api = b->api ? strdup(b->api) : NULL;
	const struct memprof_frame *site;
	f->call_site = mp_call_site_key(b->stack, &site);
	f->shares = calloc(b->n_nodes, sizeof(*f->shares));
	if ((b->api && !f->api) || !f->call_site || !f->shares)
		return MP_ENOMEM;
	f->n_shares = b->n_nodes;
	for (k = 0; k < b->n_nodes; k++)
		f->shares[k] =
		        (struct mp_numa_share){b->nodes[k].node, b->nodes[k].bytes,
		                               mp_numa_distance(n, gpu_node, b->nodes[k].node)};
	return 0;
}

static int on_buffer(void *ctx, const struct mp_host_buffer *b)
{
	struct load *l = ctx;
	struct mp_numa *n = l->n;
	const struct mp_numa_gpu *g;
	int64_t far_bytes = 0;
	size_t k;

	if (l->device >= 0 && b->device != l->device)
		return 0;
	n->n_buffers++;
	n->pinned_bytes += b->size_bytes;
	if (b->n_nodes == 0) {
		n->n_unplaced++;
		return 0;
	}
	g = b->device >= 0 ? gpu_of(n, b->process_id, b->device) : NULL;
	if (!g || g->node < 0) {
		n->n_gpu_unknown++;
		return 0;
	}
	for (k = 0; k < b->n_nodes; k++)
		if (b->nodes[k].node != g->node)
			far_bytes += b->nodes[k].bytes;
	if (far_bytes == 0)
		return 0;
	n->far_bytes += far_bytes;
	return keep_far(l, b, g->node, far_bytes);
}

static int by_stake(const void *a, const void *b)
{
	const struct mp_numa_far *x = a, *y = b;
	if (x->far_bytes != y->far_bytes)
		return x->far_bytes > y->far_bytes ? -1 : 1;
	if (x->size_bytes != y->size_bytes)
		return x->size_bytes > y->size_bytes ? -1 : 1;
	return (x->alloc_ts_ns > y->alloc_ts_ns) - (x->alloc_ts_ns < y->alloc_ts_ns);
}

static int load_gpus(struct mp_store *s, struct load *l)
{
	struct mp_device_node *d;
	size_t i, n_d;
	if (mp_store_device_nodes(s, &d, &n_d) < 0)
		return -1;
	l->n->gpus = calloc(n_d ? n_d : 1, sizeof(*l->n->gpus));
	if (!l->n->gpus) {
		free(d);
		return MP_ENOMEM;
	}
	for (i = 0; i < n_d; i++)
		if (l->device < 0 || d[i].ordinal == l->device)
			l->n->gpus[l->n->n_gpus++] =
			        (struct mp_numa_gpu){pid_of(l, d[i].process_id), d[i].process_id,
			                             d[i].ordinal, d[i].node};
	free(d);
	return 0;
}

static void set_status(struct mp_numa *n)
{
	if (n->n_buffers == 0)
		n->status = MP_NUMA_NO_BUFFERS;
	else if (n->n_unplaced == n->n_buffers)
		n->status = MP_NUMA_NO_PLACEMENT;
	else if (n->n_unplaced + n->n_gpu_unknown == n->n_buffers)
		n->status = MP_NUMA_NO_GPU_NODES;
	else
		n->status = MP_NUMA_KNOWN;
}

int mp_numa_load(struct mp_store *s, int device, struct mp_numa *out, struct mp_error *err)
{
	struct load l = {out, device, NULL, 0, 0};
	char *dist;
	int rc;

	memset(out, 0, sizeof(*out));
	if (mp_store_processes(s, &l.procs, &l.n_procs) < 0)
		return mp_err_copy(err, mp_store_error(s));
	dist = mp_store_get_meta(s, "numa_distances");
	if (dist && mp_numa_parse_distances(out, dist) == MP_ENOMEM)
		rc = MP_ENOMEM;
	else if ((rc = load_gpus(s, &l)) == 0)
		rc = mp_store_each_host_buffer(s, on_buffer, &l);
	free(dist);
	mp_store_free_processes(l.procs, l.n_procs);
	if (rc == MP_ENOMEM)
		return mp_err(err, MP_ENOMEM, "out of memory");
	if (rc < 0)
		return mp_err_copy(err, mp_store_error(s));
	if (out->n_far > 1) /* far is NULL when there are none */
		qsort(out->far, (size_t)out->n_far, sizeof(*out->far), by_stake);
	set_status(out);
	return 0;
}

void mp_numa_free(struct mp_numa *n)
{
	int64_t i;
	for (i = 0; i < n->n_far; i++) {
		free(n->far[i].api);
		free(n->far[i].call_site);
		free(n->far[i].shares);
	}
	free(n->far);
	free(n->gpus);
	free(n->nodes);
	free(n->distances);
	memset(n, 0, sizeof(*n));
}
