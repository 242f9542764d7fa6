/*
 * analysis/gate.c - the gate figures of one trace (analysis/gate.h), read
 * off a finished analysis pass: peaks from memstate, reserved bytes and
 * fragmentation from frag, leaks from lifetime, and the stack groups at the
 * live peak folded into call sites.  Copies every string so the pass and
 * its reader can go; prints nothing.
 */
#include "analysis/gate.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/call_site.h"
#include "util/error.h"
#include "util/strmap.h"

static char *dup_text(const char *s)
{
	return strdup(s ? s : "");
}

struct site_list {
	struct mp_gate_site *sites;
	size_t n, cap;
	struct mp_strmap index; /* key -> index into sites */
};

char *mp_gate_site_lines(char *buf, size_t n, const struct mp_gate_site *s)
{
	return mp_call_site_lines_text(buf, n, s->lines, s->n_lines, s->line);
}

static int site_add(struct site_list *l, const struct mp_attr_group *g)
{
	const struct memprof_frame *f;
	char *key = mp_call_site_key(g->stack, &f);
	struct mp_gate_site *s;
	int64_t i;

	if (!key)
		return MP_ENOMEM;
	if (mp_strmap_get(&l->index, key, strlen(key), &i)) {
		s = &l->sites[i];
		s->bytes += g->bytes;
		s->blocks += g->count;
		s->n_stacks++;
		free(key);
		/* groups come largest first: the line stays the largest's */
		return mp_call_site_add_line(&s->lines, &s->n_lines,
		                             f && mp_call_site_has_file(f) ? f->line : 0);
	}
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 16;
		struct mp_gate_site *grown = realloc(l->sites, cap * sizeof(*grown));

		if (!grown) {
			free(key);
			return MP_ENOMEM;
		}
		l->sites = grown;
		l->cap = cap;
	}
	s = &l->sites[l->n];
	memset(s, 0, sizeof(*s));
	s->key = key;
	s->name = dup_text(f ? f->name : "");
	s->file = dup_text(f && mp_call_site_has_file(f) ? f->file : "");
	if (!s->name || !s->file ||
	    mp_strmap_put(&l->index, key, strlen(key), (int64_t)l->n, NULL) < 0) {
		free(s->name);
		free(s->file);
		free(key);
		return MP_ENOMEM;
	}
	s->line = f && mp_call_site_has_file(f) ? f->line : 0;
	s->n_stacks = 1;
	if (mp_call_site_add_line(&s->lines, &s->n_lines, s->line) < 0) {
		free(s->name);
		free(s->file);
		free(key);
		return MP_ENOMEM;
	}
	s->bytes = g->bytes;
	s->blocks = g->count;
	l->n++;
	return 0;
}

static int by_bytes(const void *pa, const void *pb)
{
	const struct mp_gate_site *a = pa, *b = pb;

	if (a->bytes != b->bytes)
		return a->bytes > b->bytes ? -1 : 1;
	return strcmp(a->key, b->key);
}

static void sites_free(struct mp_gate_site *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(s[i].key);
		free(s[i].name);
		free(s[i].file);
		free(s[i].lines);
	}
	free(s);
}

/* The stack groups live at the device's live peak, folded into sites. */
static int take_sites(struct mp_gate_device *gd, const struct mp_attr_device *ad)
{
	struct site_list l = {0};
	struct mp_attr_group *g;
	ptrdiff_t n, i;
	int rc = 0;

	if (!ad || !ad->taken || !ad->tables[MP_ATTR_STACK])
		return 0;
	g = mp_attribution_groups(ad, MP_ATTR_STACK, &n);
	if (n < 0)
		return MP_ENOMEM;
	mp_strmap_init(&l.index);
	for (i = 0; i < n && rc == 0; i++)
		rc = site_add(&l, &g[i]);
	free(g);
	mp_strmap_free(&l.index);
	if (rc < 0) {
		sites_free(l.sites, l.n);
		return rc;
	}
	if (l.n > 1)
		qsort(l.sites, l.n, sizeof(*l.sites), by_bytes);
	gd->sites = l.sites;
	gd->n_sites = l.n;
	return 0;
}

/* Reserved bytes and fragmentation at the point p (frag's figures). */
static void take_reserved(struct mp_gate_device *gd, int reserved, const struct mp_frag_point *p)
{
	gd->reserved = reserved;
	gd->peak_reserved_bytes = p->reserved_bytes;
	gd->peak_reserved_ts_ns = p->ts_ns;
	gd->peak_reserved_seq = p->seq;
	gd->free_in_reserved_bytes = p->free_in_reserved_bytes;
	gd->largest_free_bytes = p->largest_free_bytes;
	gd->free_share_nano = mp_gate_ratio_nano(p->free_in_reserved_bytes, p->reserved_bytes);
	if (p->free_in_reserved_bytes == 0)
		gd->external_nano = 0;
	else if (p->free_in_reserved_bytes > 0 && p->largest_free_bytes >= 0 &&
	         p->largest_free_bytes <= p->free_in_reserved_bytes)
		gd->external_nano = MP_GATE_NANO - mp_gate_ratio_nano(p->largest_free_bytes,
		                                                      p->free_in_reserved_bytes);
}

static void take_figures(struct mp_gate_device *gd, const struct mp_pass *p,
                         const struct mp_mem_device *md)
{
	const struct mp_frag_device *fd = mp_frag_device(&p->frag, md->device);
	struct mp_lifetime_totals lt;

	gd->device = md->device;
	gd->peak_live_bytes = md->live_peak.bytes;
	gd->peak_live_ts_ns = md->live_peak.ts_ns;
	gd->peak_live_seq = md->live_peak.seq;
	gd->reserved = MP_GATE_RESERVED_UNKNOWN;
	gd->peak_reserved_bytes = gd->free_in_reserved_bytes = gd->largest_free_bytes = -1;
	gd->free_share_nano = gd->external_nano = -1;
	if (md->has_segments && fd) {
		struct mp_frag_point at = fd->at_reserved_peak;

		at.reserved_bytes = md->reserved_peak.bytes;
		at.ts_ns = md->reserved_peak.ts_ns;
		at.seq = md->reserved_peak.seq;
		take_reserved(gd, MP_GATE_RESERVED_SEGMENTS, &at);
	} else if (fd && fd->model == MP_FRAG_ADDRESS_SPACE && fd->at_live_peak.seq > 0) {
		take_reserved(gd, MP_GATE_RESERVED_MODELLED, &fd->at_live_peak);
	}
	mp_lifetime_device_totals(&p->life, md->device, &lt);
	gd->leaked_bytes = lt.kind[MP_LIFETIME_LEAK].bytes;
	gd->leaked_blocks = lt.kind[MP_LIFETIME_LEAK].count;
	gd->n_ooms = md->n_ooms;
}

static int by_ordinal(const void *pa, const void *pb)
{
	const struct mp_gate_device *a = pa, *b = pb;

	return a->device < b->device ? -1 : a->device > b->device;
}

int mp_gate_trace_from_pass(struct mp_gate_trace *t, const struct mp_pass *p, const char *path,
                            const char *source, int32_t device)
{
	int i, rc;

	memset(t, 0, sizeof(*t));
	t->granularity = p->opts.granularity;
	t->path = dup_text(path);
	t->source = source ? strdup(source) : NULL;
	t->devices = calloc((size_t)p->ms.n_devices + 1, sizeof(*t->devices));
	if (!t->path || (source && !t->source) || !t->devices)
		return MP_ENOMEM;
	for (i = 0; i < p->ms.n_devices; i++) {
		const struct mp_mem_device *md = &p->ms.devices[i];
		struct mp_gate_device *gd = &t->devices[t->n_devices];

		if (device >= 0 && md->device != device)
			continue;
		take_figures(gd, p, md);
		t->n_devices++;
		if ((rc = take_sites(gd, mp_attribution_device(&p->attr, md->device))) < 0)
			return rc;
	}
	qsort(t->devices, t->n_devices, sizeof(*t->devices), by_ordinal);
	return 0;
}

static int pool_cmp(const struct mp_gate_pool *a, const struct mp_gate_pool *b)
{
	int c;

	if (a->device != b->device)
		return a->device < b->device ? -1 : 1;
	if ((c = strcmp(a->pool, b->pool)) != 0)
		return c;
	return strcmp(a->backend, b->backend);
}

int mp_gate_trace_add_pool(struct mp_gate_trace *t, const struct mp_gate_pool *pool)
{
	struct mp_gate_pool *grown = realloc(t->pools, (t->n_pools + 1) * sizeof(*grown));
	size_t i;

	if (!grown)
		return MP_ENOMEM;
	t->pools = grown;
	for (i = t->n_pools; i > 0 && pool_cmp(&t->pools[i - 1], pool) > 0; i--)
		t->pools[i] = t->pools[i - 1];
	t->pools[i] = *pool;
	t->pools[i].pool = dup_text(pool->pool);
	t->pools[i].backend = dup_text(pool->backend);
	t->n_pools++;
	if (!t->pools[i].pool || !t->pools[i].backend)
		return MP_ENOMEM;
	return 0;
}

const struct mp_gate_device *mp_gate_trace_device(const struct mp_gate_trace *t, int32_t device)
{
	size_t i;

	for (i = 0; i < t->n_devices; i++)
		if (t->devices[i].device == device)
			return &t->devices[i];
	return NULL;
}

int mp_gate_trace_set_window(struct mp_gate_trace *t, const char *why)
{
	size_t i;

	free(t->window);
	t->window = NULL;
	if (why && !(t->window = strdup(why)))
		return MP_ENOMEM;
	for (i = 0; i < t->n_devices; i++)
		t->devices[i].window = why != NULL;
	return 0;
}

void mp_gate_trace_free(struct mp_gate_trace *t)
{
	size_t i;

	for (i = 0; i < t->n_devices; i++)
		sites_free(t->devices[i].sites, t->devices[i].n_sites);
	for (i = 0; i < t->n_pools; i++) {
		free(t->pools[i].pool);
		free(t->pools[i].backend);
	}
	free(t->devices);
	free(t->pools);
	free(t->window);
	free(t->path);
	free(t->source);
	memset(t, 0, sizeof(*t));
}
