/*
 * analysis/gate_limit.c - the thresholds of the CI gate (analysis/gate.h):
 * parsing a limit, and checking it on every device or pool of a diff or of
 * one trace, in exact integer arithmetic (a limit is the largest value
 * allowed).  Decides pass or exceeded; the words are report/'s.
 */
#include "analysis/gate.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/error.h"
#include "util/parse.h"

#define MAX_PERCENT 1000000 /* 10^6 %: a limit beyond it is a typo */

static const struct {
	const char *option, *figure;
} kinds[MP_GATE_N_KINDS] = {
        [MP_GATE_PEAK_INCREASE] = {"max-peak-increase", "peak live"},
        [MP_GATE_RESERVED_INCREASE] = {"max-reserved-increase", "peak reserved"},
        [MP_GATE_FREE_SHARE_INCREASE] = {"max-free-share-increase", "free share"},
        [MP_GATE_POOL_INCREASE] = {"max-pool-increase", "peak reserved"},
        [MP_GATE_FREE_SHARE] = {"max-free-share", "free share"},
        [MP_GATE_PEAK] = {"max-peak", "peak live"},
        [MP_GATE_RESERVED] = {"max-reserved", "peak reserved"},
        [MP_GATE_LEAKED_BYTES] = {"max-leaked", "leaked bytes"},
        [MP_GATE_LEAKED_BLOCKS] = {"no-leaks", "leaked blocks"},
        [MP_GATE_OOMS] = {"no-oom", "OOMs"},
};

const char *mp_gate_kind_option(int kind)
{
	return kind >= 0 && kind < MP_GATE_N_KINDS ? kinds[kind].option : "?";
}

const char *mp_gate_kind_figure(int kind)
{
	return kind >= 0 && kind < MP_GATE_N_KINDS ? kinds[kind].figure : "?";
}

/* A decimal number "I[.F]" (at most 9 decimals, I at most max) in parts
 * per 10^9, exactly. */
static int parse_nano(const char *s, size_t len, int64_t max, int64_t *out)
{
	int64_t whole = 0, frac = 0, scale = MP_GATE_NANO;
	size_t i = 0, n_int = 0, n_frac = 0;

	for (; i < len && s[i] >= '0' && s[i] <= '9'; i++, n_int++) {
		whole = whole * 10 + (s[i] - '0');
		if (whole > max)
			return MP_EINVAL;
	}
	if (i < len && s[i] == '.')
		for (i++; i < len && s[i] >= '0' && s[i] <= '9'; i++, n_frac++) {
			if (n_frac == 9)
				return MP_EINVAL;
			scale /= 10;
			frac += (s[i] - '0') * scale;
		}
	if (i != len || n_int + n_frac == 0)
		return MP_EINVAL;
	*out = whole * MP_GATE_NANO + frac;
	return *out > max * MP_GATE_NANO ? MP_EINVAL : 0;
}

/* A ratio "R" (0 to 1, at most 9 decimals) or a percentage "N%" (0 to
 * 100, at most 7 decimals, so that N / 100 is exact in parts per 10^9). */
static int parse_ratio(const char *s, size_t len, int64_t *out)
{
	int64_t pct;

	if (len == 0 || s[len - 1] != '%')
		return parse_nano(s, len, 1, out);
	if (parse_nano(s, len - 1, 100, &pct) < 0 || pct % 100 != 0)
		return MP_EINVAL;
	*out = pct / 100;
	return 0;
}

int mp_gate_limit_bare_number(int kind, const char *text)
{
	int64_t v;

	if (!text || !(kind <= MP_GATE_POOL_INCREASE && kind != MP_GATE_FREE_SHARE_INCREASE))
		return 0;
	return parse_nano(text, strlen(text), MAX_PERCENT, &v) == 0 && v != 0;
}

int mp_gate_limit_parse(int kind, const char *text, struct mp_gate_limit *l)
{
	size_t len = text ? strlen(text) : 0;

	memset(l, 0, sizeof(*l));
	l->kind = kind;
	if (kind < 0 || kind >= MP_GATE_N_KINDS)
		return MP_EINVAL;
	snprintf(l->text, sizeof(l->text), "%s", text ? text : "");
	switch (kind) {
	case MP_GATE_LEAKED_BLOCKS:
	case MP_GATE_OOMS:
		l->unit = MP_GATE_COUNT;
		return text ? MP_EINVAL : 0;
	case MP_GATE_FREE_SHARE:
	case MP_GATE_FREE_SHARE_INCREASE:
		l->unit = MP_GATE_RATIO;
		return text ? parse_ratio(text, len, &l->value) : MP_EINVAL;
	}
	if (!text || len == 0 || mp_gate_limit_bare_number(kind, text))
		return MP_EINVAL;
	if (kind <= MP_GATE_POOL_INCREASE && text[len - 1] == '%') {
		l->unit = MP_GATE_PERCENT;
		return parse_nano(text, len - 1, MAX_PERCENT, &l->value);
	}
	l->unit = MP_GATE_BYTES;
	return mp_parse_bytes(text, &l->value);
}

int mp_gate_percent_exceeds(int64_t base, int64_t head, int64_t pct_nano)
{
	if (head <= base)
		return 0;
	if (base <= 0)
		return 1; /* any growth from nothing is infinite */
	return (__int128)(head - base) * 100 * MP_GATE_NANO > (__int128)pct_nano * base;
}

int64_t mp_gate_ratio_nano(int64_t num, int64_t den)
{
	if (den <= 0 || num < 0)
		return -1;
	return (int64_t)(((__int128)num * MP_GATE_NANO * 2 + den) / ((__int128)den * 2));
}

/* --- checking one limit -------------------------------------------------- */

static void set_increase(struct mp_gate_result *r, int64_t base, int64_t head)
{
	const struct mp_gate_limit *l = r->limit;

	r->base = base, r->head = head, r->delta = head - base;
	if (l->unit == MP_GATE_PERCENT) {
		r->figure = base > 0 ? 100.0 * (double)r->delta / (double)base
		                     : (head > base ? INFINITY : 0.0);
		if (mp_gate_percent_exceeds(base, head, l->value))
			r->outcome = MP_GATE_EXCEEDED, r->over = r->figure - (double)l->value / 1e9;
	} else {
		r->figure = (double)r->delta;
		if (r->delta > l->value)
			r->outcome = MP_GATE_EXCEEDED, r->over = (double)(r->delta - l->value);
	}
}

static void set_absolute(struct mp_gate_result *r, int64_t value)
{
	const struct mp_gate_limit *l = r->limit;

	r->base = -1, r->head = value, r->delta = 0;
	r->figure = l->unit == MP_GATE_RATIO ? (double)value / 1e9 : (double)value;
	if (value > l->value) {
		r->outcome = MP_GATE_EXCEEDED;
		r->over = l->unit == MP_GATE_RATIO ? (double)(value - l->value) / 1e9
		                                   : (double)(value - l->value);
	}
}

static const char *not_comparable(const struct mp_gate_device *b, const struct mp_gate_device *h)
{
	if (b->reserved == MP_GATE_RESERVED_UNKNOWN || h->reserved == MP_GATE_RESERVED_UNKNOWN)
		return "reserved bytes are unknown (no segment-level events and no addresses)";
	if (b->reserved != h->reserved)
		return "reserved bytes come from segments in one trace and from the address-space "
		       "model in the other";
	return NULL;
}

/* An increase limit on a device in both traces. */
static void check_increase(struct mp_gate_result *r, const struct mp_gate_device *b,
                           const struct mp_gate_device *h)
{
	int kind = r->limit->kind;

	if (kind == MP_GATE_PEAK_INCREASE) {
		set_increase(r, b->peak_live_bytes, h->peak_live_bytes);
		return;
	}
	r->modelled = b->reserved == MP_GATE_RESERVED_MODELLED ||
	              h->reserved == MP_GATE_RESERVED_MODELLED;
	if ((r->why = not_comparable(b, h))) {
		r->outcome = MP_GATE_NOT_CHECKED;
		return;
	}
	if (kind == MP_GATE_RESERVED_INCREASE) {
		set_increase(r, b->peak_reserved_bytes, h->peak_reserved_bytes);
	} else if (b->free_share_nano < 0 || h->free_share_nano < 0) {
		r->outcome = MP_GATE_NOT_CHECKED;
		r->why = "the free share is unknown (nothing reserved at the peak)";
	} else {
		r->base = b->free_share_nano, r->head = h->free_share_nano,
		r->delta = h->free_share_nano - b->free_share_nano;
		r->figure = (double)r->delta / 1e9;
		if (r->delta > r->limit->value)
			r->outcome = MP_GATE_EXCEEDED,
			r->over = (double)(r->delta - r->limit->value) / 1e9;
	}
}

/* An absolute limit on one device. */
static void check_absolute(struct mp_gate_result *r, const struct mp_gate_device *h)
{
	switch (r->limit->kind) {
	case MP_GATE_PEAK:
		set_absolute(r, h->peak_live_bytes);
		return;
	case MP_GATE_LEAKED_BYTES:
	case MP_GATE_LEAKED_BLOCKS:
		if (h->window) {
			r->outcome = MP_GATE_NOT_CHECKED;
			r->why =
			        "the trace is a window of the program: what is live at its end may "
			        "be freed after it, so it is not a leak (memprof-analyze(1), "
			        "LIFETIME "
			        "PATTERNS)";
		} else {
			set_absolute(r, r->limit->kind == MP_GATE_LEAKED_BYTES ? h->leaked_bytes
			                                                       : h->leaked_blocks);
		}
		return;
	case MP_GATE_OOMS:
		set_absolute(r, h->n_ooms);
		return;
	}
	r->modelled = h->reserved == MP_GATE_RESERVED_MODELLED;
	if (h->reserved == MP_GATE_RESERVED_UNKNOWN) {
		r->outcome = MP_GATE_NOT_CHECKED;
		r->why = "reserved bytes are unknown (no segment-level events and no addresses)";
	} else if (r->limit->kind == MP_GATE_RESERVED) {
		set_absolute(r, h->peak_reserved_bytes);
	} else if (h->free_share_nano < 0) {
		r->outcome = MP_GATE_NOT_CHECKED;
		r->why = "the free share is unknown (nothing reserved at the peak)";
	} else {
		set_absolute(r, h->free_share_nano);
	}
}

static void check_pool(struct mp_gate_result *r, const struct mp_gate_pool_change *c)
{
	r->device = c->head->device;
	r->base_pool = c->base, r->head_pool = c->head;
	if (c->base->peak_reserved_bytes < 0 || c->head->peak_reserved_bytes < 0) {
		r->outcome = MP_GATE_NOT_CHECKED;
		r->why = "a stored run has no peak reserved bytes";
		return;
	}
	if (c->base->failed || c->head->failed) {
		r->outcome = MP_GATE_NOT_CHECKED;
		r->why = "a stored run failed (had OOMs): its peak is not a result";
		return;
	}
	set_increase(r, c->base->peak_reserved_bytes, c->head->peak_reserved_bytes);
}

/* --- every limit on every device ------------------------------------------- */

struct result_list {
	struct mp_gate_result *r;
	size_t n, cap;
};

static struct mp_gate_result *next(struct result_list *l, const struct mp_gate_limit *lim,
                                   int32_t device)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 16;
		struct mp_gate_result *grown = realloc(l->r, cap * sizeof(*grown));

		if (!grown)
			return NULL;
		l->r = grown, l->cap = cap;
	}
	memset(&l->r[l->n], 0, sizeof(l->r[0]));
	l->r[l->n].limit = lim;
	l->r[l->n].device = device;
	l->r[l->n].outcome = MP_GATE_PASS;
	return &l->r[l->n++];
}

static int check_diff(struct result_list *l, const struct mp_gate_diff *d,
                      const struct mp_gate_limit *lim)
{
	struct mp_gate_result *r;
	size_t i;

	if (lim->kind == MP_GATE_POOL_INCREASE) {
		for (i = 0; i < d->n_pools; i++) {
			if (!d->pools[i].base || !d->pools[i].head)
				continue;
			if (!(r = next(l, lim, d->pools[i].head->device)))
				return MP_ENOMEM;
			check_pool(r, &d->pools[i]);
		}
		return 0;
	}
	for (i = 0; i < d->n_devices; i++) {
		const struct mp_gate_device_change *c = &d->devices[i];
		int increase = lim->kind <= MP_GATE_FREE_SHARE_INCREASE;

		if (!c->head || (increase && !c->base))
			continue;
		if (!(r = next(l, lim, c->device)))
			return MP_ENOMEM;
		if (increase)
			check_increase(r, c->base, c->head);
		else
			check_absolute(r, c->head);
	}
	return 0;
}

struct mp_gate_result *mp_gate_check(const struct mp_gate_diff *d, const struct mp_gate_trace *t,
                                     const struct mp_gate_limit *limits, size_t n_limits,
                                     ptrdiff_t *n)
{
	struct result_list l = {0};
	size_t i, j;
	int rc = 0;

	for (i = 0; i < n_limits && rc == 0; i++) {
		const struct mp_gate_limit *lim = &limits[i];

		if (d) {
			rc = check_diff(&l, d, lim);
			continue;
		}
		if (lim->kind <= MP_GATE_POOL_INCREASE)
			continue; /* an increase needs a base */
		for (j = 0; j < t->n_devices && rc == 0; j++) {
			struct mp_gate_result *r = next(&l, lim, t->devices[j].device);

			if (!r)
				rc = MP_ENOMEM;
			else
				check_absolute(r, &t->devices[j]);
		}
	}
	if (rc < 0) {
		free(l.r);
		*n = -1;
		return NULL;
	}
	*n = (ptrdiff_t)l.n;
	return l.r;
}
