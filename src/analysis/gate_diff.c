/*
 * analysis/gate_diff.c - the comparison of two traces' gate figures
 * (analysis/gate.h): devices matched by ordinal, call sites matched by key
 * and ranked by growth, replayed pools matched by device, pool and backend.
 * Refers to the traces' figures; copies nothing, prints nothing.
 */
#include "analysis/gate.h"

#include <stdlib.h>
#include <string.h>

#include "util/error.h"
#include "util/strmap.h"

static int by_growth(const void *pa, const void *pb)
{
	const struct mp_gate_site_change *a = pa, *b = pb;
	const char *ka = a->head ? a->head->key : a->base->key;
	const char *kb = b->head ? b->head->key : b->base->key;

	if (a->delta_bytes != b->delta_bytes)
		return a->delta_bytes > b->delta_bytes ? -1 : 1;
	return strcmp(ka, kb);
}

static void put_site(struct mp_gate_device_change *c, const struct mp_gate_site *b,
                     const struct mp_gate_site *h)
{
	int64_t delta = (h ? h->bytes : 0) - (b ? b->bytes : 0);

	if (delta == 0 && b && h)
		return;
	c->sites[c->n_sites++] = (struct mp_gate_site_change){b, h, delta};
}

/* Sites of both devices matched by key, ranked by growth. */
static int compare_sites(struct mp_gate_device_change *c)
{
	const struct mp_gate_device *b = c->base, *h = c->head;
	struct mp_strmap index;
	char *matched = calloc(h->n_sites + 1, 1);
	size_t i;
	int rc = 0;

	c->sites = calloc(b->n_sites + h->n_sites + 1, sizeof(*c->sites));
	if (!matched || !c->sites) {
		free(matched);
		return MP_ENOMEM;
	}
	mp_strmap_init(&index);
	for (i = 0; i < h->n_sites && rc == 0; i++)
		rc = mp_strmap_put(&index, h->sites[i].key, strlen(h->sites[i].key), (int64_t)i,
		                   NULL);
	for (i = 0; i < b->n_sites && rc == 0; i++) {
		int64_t j;

		if (mp_strmap_get(&index, b->sites[i].key, strlen(b->sites[i].key), &j)) {
			matched[j] = 1;
			put_site(c, &b->sites[i], &h->sites[j]);
		} else {
			put_site(c, &b->sites[i], NULL);
		}
	}
	for (i = 0; i < h->n_sites && rc == 0; i++)
		if (!matched[i])
			put_site(c, NULL, &h->sites[i]);
	mp_strmap_free(&index);
	free(matched);
	if (rc == 0 && c->n_sites > 1)
		qsort(c->sites, c->n_sites, sizeof(*c->sites), by_growth);
	return rc;
}

static int compare_devices(struct mp_gate_diff *d)
{
	const struct mp_gate_trace *b = d->base, *h = d->head;
	size_t i = 0, j = 0;
	int rc = 0;

	d->devices = calloc(b->n_devices + h->n_devices + 1, sizeof(*d->devices));
	if (!d->devices)
		return MP_ENOMEM;
	while ((i < b->n_devices || j < h->n_devices) && rc == 0) {
		struct mp_gate_device_change *c = &d->devices[d->n_devices++];
		const struct mp_gate_device *bd = i < b->n_devices ? &b->devices[i] : NULL;
		const struct mp_gate_device *hd = j < h->n_devices ? &h->devices[j] : NULL;

		if (bd && hd && bd->device == hd->device) {
			c->base = bd, c->head = hd;
			i++, j++;
			rc = compare_sites(c);
		} else if (bd && (!hd || bd->device < hd->device)) {
			c->base = bd;
			i++;
		} else {
			c->head = hd;
			j++;
		}
		c->device = c->base ? c->base->device : c->head->device;
	}
	return rc;
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

static int compare_pools(struct mp_gate_diff *d)
{
	const struct mp_gate_trace *b = d->base, *h = d->head;
	size_t i = 0, j = 0;

	d->pools = calloc(b->n_pools + h->n_pools + 1, sizeof(*d->pools));
	if (!d->pools)
		return MP_ENOMEM;
	while (i < b->n_pools || j < h->n_pools) {
		struct mp_gate_pool_change *c = &d->pools[d->n_pools++];
		const struct mp_gate_pool *bp = i < b->n_pools ? &b->pools[i] : NULL;
		const struct mp_gate_pool *hp = j < h->n_pools ? &h->pools[j] : NULL;
		int cmp = bp && hp ? pool_cmp(bp, hp) : bp ? -1 : 1;

		if (cmp <= 0)
			c->base = bp, i++;
		if (cmp >= 0)
			c->head = hp, j++;
		c->times_comparable = c->base && c->head && c->base->total_ns >= 0 &&
		                      c->head->total_ns >= 0 &&
		                      c->base->time_measured == c->head->time_measured;
	}
	return 0;
}

int mp_gate_diff(struct mp_gate_diff *d, const struct mp_gate_trace *base,
                 const struct mp_gate_trace *head)
{
	int rc;

	memset(d, 0, sizeof(*d));
	d->base = base;
	d->head = head;
	if ((rc = compare_devices(d)) < 0)
		return rc;
	return compare_pools(d);
}

void mp_gate_diff_free(struct mp_gate_diff *d)
{
	size_t i;

	for (i = 0; i < d->n_devices; i++)
		free(d->devices[i].sites);
	free(d->devices);
	free(d->pools);
	memset(d, 0, sizeof(*d));
}
