/*
 * report/analyze_numa.c - the NUMA section of 'memprof analyze', as text and
 * as the JSON "numa" object (memprof-analyze(1), NUMA PLACEMENT): each GPU's
 * nearest host node, the pinned host buffers far from it (largest bytes at
 * stake first, --top of them), the totals, or why nothing is known.
 */
#include "report/analyze_out.h"
#include "report/json_util.h"
#include "util/format.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>

static const char *status_name(enum mp_numa_status s)
{
	switch (s) {
	case MP_NUMA_KNOWN:
		return "known";
	case MP_NUMA_NO_BUFFERS:
		return "no_pinned_buffers";
	case MP_NUMA_NO_PLACEMENT:
		return "placement_unknown";
	default:
		return "gpu_nodes_unknown";
	}
}

/* Why nothing is known, NULL when something is. */
static const char *status_note(enum mp_numa_status s)
{
	switch (s) {
	case MP_NUMA_KNOWN:
		return NULL;
	case MP_NUMA_NO_BUFFERS:
		return "no pinned host buffers in this trace (memprof record keeps them; "
		       "other sources do not have them)";
	case MP_NUMA_NO_PLACEMENT:
		return "where the pinned buffers' pages are is unknown (the kernel has no "
		       "NUMA support, or the pages were not touched yet when pinned)";
	default:
		return "the GPUs' nearest host NUMA nodes are unknown (neither the driver nor "
		       "sysfs named one): no buffer can be called near or far";
	}
}

static int n_shown(const struct mp_analysis *a)
{
	const struct mp_numa *n = a->numa;
	return n->n_far < a->top ? (int)n->n_far : a->top;
}

/* "0: 4.00 MiB (21), 1: 4.00 MiB (10)" */
static void shares_text(char *buf, size_t size, const struct mp_numa_far *f)
{
	size_t i, len = 0;
	char b[32], d[16];
	buf[0] = 0;
	for (i = 0; i < f->n_shares && len < size; i++) {
		const struct mp_numa_share *s = &f->shares[i];
		snprintf(d, sizeof(d), "%d", (int)s->distance);
		len += (size_t)snprintf(buf + len, size - len, "%s%d: %s (%s)", i ? ", " : "",
		                        (int)s->node, mp_format_bytes(b, sizeof(b), s->bytes),
		                        s->distance >= 0 ? d : "?");
	}
}

static void print_gpus(FILE *out, const struct mp_numa *n)
{
	size_t i;
	for (i = 0; i < n->n_gpus; i++) {
		const struct mp_numa_gpu *g = &n->gpus[i];
		fprintf(out, "  GPU %d", (int)g->device);
		if (g->pid)
			fprintf(out, " of pid %lld", (long long)g->pid);
		fprintf(out, ": nearest host node ");
		if (g->node >= 0)
			fprintf(out, "%d\n", (int)g->node);
		else
			fprintf(out, "unknown\n");
	}
}

static void print_far(FILE *out, const struct mp_analysis *a)
{
	const struct mp_numa *n = a->numa;
	char b1[32], b2[32], nodes[512];
	int i, shown = n_shown(a);

	if (shown == 0)
		return;
	fprintf(out, "  %-10s %-10s %-8s %-4s %-5s %-6s %-14s %-30s %s\n", "at stake", "size",
	        "pid", "GPU", "near", "at end", "API", "nodes: bytes (distance)", "call site");
	for (i = 0; i < shown; i++) {
		const struct mp_numa_far *f = &n->far[i];
		shares_text(nodes, sizeof(nodes), f);
		fprintf(out, "  %-10s %-10s %-8lld %-4d %-5d %-6s %-14s %-30s %s\n",
		        mp_format_bytes(b1, sizeof(b1), f->far_bytes),
		        mp_format_bytes(b2, sizeof(b2), f->size_bytes), (long long)f->pid,
		        (int)f->device, (int)f->gpu_node, f->free_ts_ns < 0 ? "live" : "freed",
		        f->api ? f->api : "?", nodes, f->call_site);
	}
	if (n->n_far > shown)
		fprintf(out, "  (%lld more far buffers: --top)\n", (long long)(n->n_far - shown));
}

void mp_analyze_print_numa_text(FILE *out, const struct mp_analysis *a)
{
	const struct mp_numa *n = a->numa;
	char b1[32], b2[32];

	if (!n)
		return;
	fprintf(out, "\nNUMA placement of pinned host memory\n");
	print_gpus(out, n);
	if (n->status != MP_NUMA_KNOWN && n->status != MP_NUMA_NO_GPU_NODES) {
		fprintf(out, "  %s\n", status_note(n->status));
		return;
	}
	fprintf(out,
	        "  %lld pinned buffers, %s; %lld far from their GPU's nearest node, %s at stake\n",
	        (long long)n->n_buffers, mp_format_bytes(b1, sizeof(b1), n->pinned_bytes),
	        (long long)n->n_far, mp_format_bytes(b2, sizeof(b2), n->far_bytes));
	if (n->n_unplaced || n->n_gpu_unknown)
		fprintf(out,
		        "  not judged: %lld of unknown placement, %lld on a GPU whose nearest node "
		        "is unknown\n",
		        (long long)n->n_unplaced, (long long)n->n_gpu_unknown);
	if (n->status == MP_NUMA_NO_GPU_NODES)
		fprintf(out, "  %s\n", status_note(n->status));
	print_far(out, a);
}

static cJSON *distances_json(const struct mp_numa *n)
{
	cJSON *o, *nodes, *m;
	size_t i, j;
	if (n->n_nodes == 0)
		return cJSON_CreateNull();
	o = cJSON_CreateObject();
	nodes = cJSON_AddArrayToObject(o, "nodes");
	m = cJSON_AddArrayToObject(o, "matrix");
	for (i = 0; i < n->n_nodes; i++) {
		cJSON *row = cJSON_CreateArray();
		cJSON_AddItemToArray(nodes, cJSON_CreateNumber(n->nodes[i]));
		for (j = 0; j < n->n_nodes; j++)
			cJSON_AddItemToArray(row,
			                     cJSON_CreateNumber(n->distances[i * n->n_nodes + j]));
		cJSON_AddItemToArray(m, row);
	}
	return o;
}

static cJSON *far_json(const struct mp_numa_far *f)
{
	cJSON *o = cJSON_CreateObject(), *nodes;
	char addr[24];
	size_t i;

	mp_json_add_known(o, "pid", f->pid ? f->pid : -1);
	mp_json_add_int(o, "device", f->device);
	mp_json_add_int(o, "nearest_node", f->gpu_node);
	snprintf(addr, sizeof(addr), "0x%llx", (unsigned long long)f->address);
	cJSON_AddStringToObject(o, "address", addr);
	mp_json_add_int(o, "size_bytes", f->size_bytes);
	mp_json_add_int(o, "far_bytes", f->far_bytes);
	nodes = cJSON_AddArrayToObject(o, "nodes");
	for (i = 0; i < f->n_shares; i++) {
		cJSON *s = cJSON_CreateObject();
		mp_json_add_int(s, "node", f->shares[i].node);
		mp_json_add_int(s, "bytes", f->shares[i].bytes);
		mp_json_add_known(s, "distance", f->shares[i].distance);
		cJSON_AddItemToArray(nodes, s);
	}
	if (f->api)
		cJSON_AddStringToObject(o, "api", f->api);
	else
		cJSON_AddNullToObject(o, "api");
	cJSON_AddStringToObject(o, "call_site", f->call_site);
	mp_json_add_int(o, "alloc_ts_ns", f->alloc_ts_ns);
	mp_json_add_known(o, "free_ts_ns", f->free_ts_ns);
	cJSON_AddBoolToObject(o, "live_at_end", f->free_ts_ns < 0);
	return o;
}

cJSON *mp_analyze_numa_json(const struct mp_analysis *a)
{
	const struct mp_numa *n = a->numa;
	cJSON *o, *gpus, *far;
	const char *note;
	size_t i;
	int k, shown;

	if (!n)
		return cJSON_CreateNull();
	o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "status", status_name(n->status));
	if ((note = status_note(n->status)))
		cJSON_AddStringToObject(o, "note", note);
	else
		cJSON_AddNullToObject(o, "note");
	gpus = cJSON_AddArrayToObject(o, "gpus");
	for (i = 0; i < n->n_gpus; i++) {
		cJSON *g = cJSON_CreateObject();
		mp_json_add_known(g, "pid", n->gpus[i].pid ? n->gpus[i].pid : -1);
		mp_json_add_int(g, "device", n->gpus[i].device);
		mp_json_add_known(g, "nearest_node", n->gpus[i].node);
		cJSON_AddItemToArray(gpus, g);
	}
	cJSON_AddItemToObject(o, "distances", distances_json(n));
	mp_json_add_int(o, "pinned_buffers", n->n_buffers);
	mp_json_add_int(o, "pinned_bytes", n->pinned_bytes);
	mp_json_add_int(o, "unplaced_buffers", n->n_unplaced);
	mp_json_add_int(o, "gpu_node_unknown_buffers", n->n_gpu_unknown);
	mp_json_add_int(o, "far_buffers", n->n_far);
	mp_json_add_int(o, "far_bytes", n->far_bytes);
	far = cJSON_AddArrayToObject(o, "far");
	shown = n_shown(a);
	for (k = 0; k < shown; k++)
		cJSON_AddItemToArray(far, far_json(&n->far[k]));
	return o;
}
