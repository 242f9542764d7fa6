/*
 * plugins/mxfp8/rule.c - the mxfp8 pool's pairing: the pair= rule (two
 * globs split on the first unescaped ':'), and the offline plan that sorts
 * every allocation into parameter and gradient sides by the rule, groups
 * them by the text the first '*' captured, and makes a pair of each group
 * with both sides.  It reserves nothing and never logs but the no-pair WARN.
 */
#include <stdlib.h>
#include <string.h>

#include "../lib/parse.h"
#include "mxfp8.h"

/* A copy of s[0, len) with each "\:" turned into ':'. */
static char *unescape(const char *s, size_t len)
{
	char *out = malloc(len + 1), *o = out;

	if (!out)
		return NULL;
	for (size_t i = 0; i < len; i++) {
		if (s[i] == '\\' && i + 1 < len && s[i + 1] == ':')
			i++;
		*o++ = s[i];
	}
	*o = '\0';
	return out;
}

int mx_parse_rule(struct memprof_pool *p, const char *text)
{
	const char *colon = text;
	size_t len = strlen(text);

	while ((colon = strchr(colon, ':')) && colon > text && colon[-1] == '\\')
		colon++;
	if (!colon || colon == text || colon == text + len - 1)
		return -1;
	for (int s = 0; s < 2; s++)
		free(p->pattern[s]);
	free(p->rule);
	p->pattern[MX_PARAM] = unescape(text, (size_t)(colon - text));
	p->pattern[MX_GRAD] = unescape(colon + 1, len - (size_t)(colon - text) - 1);
	p->rule = strdup(text);
	return p->pattern[0] && p->pattern[1] && p->rule ? 0 : -1;
}

/* Allocations of one pair key while planning. */
struct group {
	uint64_t max_bytes[2], n[2];
};

struct classes {
	struct pl_keymap ids; /* captured text -> group */
	struct group *groups;
	size_t n_groups, cap_groups;
	int64_t *of; /* per item: group << 1 | side, or -1 */
	size_t n_pairs;
};

static void classes_free(struct classes *c)
{
	pl_keymap_free(&c->ids);
	free(c->groups);
	free(c->of);
	memset(c, 0, sizeof *c);
}

static int group_of(struct classes *c, const char *cap, size_t len, uint64_t *g)
{
	if (pl_keymap_get(&c->ids, cap, len, g))
		return 0;
	if (c->n_groups == c->cap_groups) {
		size_t cap_n = c->cap_groups ? 2 * c->cap_groups : 16;
		struct group *n = realloc(c->groups, cap_n * sizeof *n);

		if (!n)
			return -1;
		c->groups = n;
		c->cap_groups = cap_n;
	}
	if (pl_keymap_put(&c->ids, cap, len, c->n_groups) < 0)
		return -1;
	c->groups[c->n_groups] = (struct group){{0, 0}, {0, 0}};
	*g = c->n_groups++;
	return 0;
}

/* The side text matches (MX_NONE: neither) and what the first '*' captured. */
static int side_of(const struct memprof_pool *p, const char *text, const char **cap, size_t *len)
{
	if (text && pl_glob(p->pattern[MX_PARAM], text, cap, len))
		return MX_PARAM; /* a text both globs match is a parameter */
	if (text && pl_glob(p->pattern[MX_GRAD], text, cap, len))
		return MX_GRAD;
	return MX_NONE;
}

/*
 * Texts lately matched, by address: an address holds one text while the
 * items are held, and items repeat a few, so most skip the globs.
 */
struct side_memo {
	const char *text;
	int side;
	size_t cap_at, len; /* the capture: text + cap_at, len bytes */
};

/* Sort items into sides and groups by their sites (on_site) or tags. */
static int classify(const struct memprof_pool *p, const struct memprof_pool_lifetime *items,
                    size_t n, int on_site, struct classes *c)
{
	struct side_memo memo[64] = {{0}};

	memset(c, 0, sizeof *c);
	pl_keymap_init(&c->ids);
	if (!(c->of = malloc((n ? n : 1) * sizeof *c->of)))
		return -1;
	for (size_t i = 0; i < n; i++) {
		const char *text = on_site ? items[i].site : items[i].phase, *cap = NULL;
		struct side_memo *m = &memo[((uintptr_t)text >> 4) & 63];
		size_t len = 0;
		uint64_t g;
		int side;

		if (text && m->text == text) {
			side = m->side;
			cap = text + m->cap_at;
			len = m->len;
		} else {
			side = side_of(p, text, &cap, &len);
			if (text)
				*m = (struct side_memo){text, side,
				                        side == MX_NONE ? 0 : (size_t)(cap - text),
				                        len};
		}
		c->of[i] = -1;
		if (side == MX_NONE)
			continue;
		if (group_of(c, cap, len, &g) < 0)
			return -1;
		c->of[i] = (int64_t)(g << 1 | (uint64_t)side);
		if (items[i].size_bytes > c->groups[g].max_bytes[side])
			c->groups[g].max_bytes[side] = items[i].size_bytes;
		if (c->groups[g].n[side]++ == 0 && c->groups[g].n[!side])
			c->n_pairs++;
	}
	return 0;
}

/* Make the pairs of c and index their allocations. */
static int adopt(struct memprof_pool *p, const struct memprof_pool_lifetime *items, size_t n,
                 const struct classes *c)
{
	uint64_t *pair_of = malloc((c->n_groups ? c->n_groups : 1) * sizeof *pair_of);
	int rc = 0;

	p->pairs = calloc(c->n_pairs ? c->n_pairs : 1, sizeof *p->pairs);
	if (!pair_of || !p->pairs) {
		free(pair_of);
		return -1;
	}
	for (size_t g = 0; g < c->n_groups; g++) {
		const struct group *gr = &c->groups[g];
		struct mx_pair *pr = &p->pairs[p->n_pairs];

		pair_of[g] = UINT64_MAX;
		if (!gr->n[MX_PARAM] || !gr->n[MX_GRAD]) {
			p->st.n_unpaired += gr->n[MX_PARAM] + gr->n[MX_GRAD];
			continue;
		}
		pr->side_bytes[MX_PARAM] = gr->max_bytes[MX_PARAM];
		pr->side_bytes[MX_GRAD] = gr->max_bytes[MX_GRAD];
		pr->buffer_bytes = gr->max_bytes[gr->max_bytes[MX_GRAD] > gr->max_bytes[MX_PARAM]];
		pr->content = MX_NONE;
		pair_of[g] = p->n_pairs++;
	}
	for (size_t i = 0; i < n && rc == 0; i++) {
		int64_t of = c->of[i];
		uint64_t pair = of < 0 ? UINT64_MAX : pair_of[of >> 1];

		if (pair != UINT64_MAX)
			rc = pl_keymap_put(&p->by_index, &items[i].index, sizeof items[i].index,
			                   pair << 1 | (uint64_t)(of & 1));
	}
	free(pair_of);
	return rc;
}

int mx_plan(struct memprof_pool *p, const struct memprof_pool_lifetime *items, size_t n)
{
	struct classes c;
	int on_site = p->on == MX_ON_SITE, rc;

	if (p->planned) {
		p->host->log(p->host->ctx, MEMPROF_POOL_LOG_ERROR, "plan called twice");
		return MEMPROF_POOL_EINVAL;
	}
	rc = classify(p, items, n, on_site, &c);
	if (rc == 0 && c.n_pairs == 0 && p->on == MX_ON_AUTO) {
		classes_free(&c);
		on_site = 1;
		rc = classify(p, items, n, on_site, &c);
	}
	if (rc == 0)
		rc = adopt(p, items, n, &c);
	classes_free(&c);
	if (rc != 0)
		return MEMPROF_POOL_ENOMEM;
	p->planned = 1;
	p->on_site = on_site;
	if (p->n_pairs == 0)
		p->host->log(p->host->ctx, MEMPROF_POOL_LOG_WARN,
		             "no parameter/gradient pairs in this trace (rule pair=%s on %s%s): "
		             "every request goes to the caching fallback",
		             p->rule, p->on == MX_ON_AUTO ? "tags and " : "",
		             on_site ? "call sites" : "tags");
	return MEMPROF_POOL_OK;
}

int mx_lookup(const struct memprof_pool *p, int64_t index, uint32_t *pair)
{
	uint64_t v;

	if (!pl_keymap_get(&p->by_index, &index, sizeof index, &v))
		return MX_NONE;
	*pair = (uint32_t)(v >> 1);
	return (int)(v & 1);
}
