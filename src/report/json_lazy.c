/*
 * report/json_lazy.c - cJSON trees with arrays made while written
 * (json_lazy.h).  A lazy array sits in the tree as a raw marker, \x01N\x01,
 * which no printed string or key can hold (cJSON escapes control
 * characters).  The tree is printed by cJSON_Print; at each marker the
 * array's items are made, printed and freed one at a time, indented as
 * cJSON would indent them at that depth: cJSON_Print of an item at depth 0
 * with the depth's tabs after every newline (a printed string holds no raw
 * newline).
 */
#include "report/json_lazy.h"
#include "report/json_stream.h"
#include "util/error.h"

#include <stdlib.h>
#include <string.h>

#define MARK '\x01'

void mp_json_lazy_init(struct mp_json_lazy *lz)
{
	memset(lz, 0, sizeof(*lz));
}

void mp_json_lazy_free(struct mp_json_lazy *lz)
{
	free(lz->src);
	mp_json_lazy_init(lz);
}

void mp_json_add_lazy_array(cJSON *o, const char *key, struct mp_json_lazy *lz, mp_json_lazy_fn fn,
                            const void *a, const void *b)
{
	char marker[32];
	struct mp_json_lazy_src *s;

	if (lz->n == lz->cap) {
		size_t cap = lz->cap ? lz->cap * 2 : 16;

		if (!(s = realloc(lz->src, cap * sizeof(*s)))) {
			lz->failed = 1;
			return;
		}
		lz->src = s;
		lz->cap = cap;
	}
	snprintf(marker, sizeof(marker), "%c%zu%c", MARK, lz->n, MARK);
	if (!cJSON_AddRawToObject(o, key, marker)) {
		lz->failed = 1;
		return;
	}
	lz->src[lz->n++] = (struct mp_json_lazy_src){.fn = fn, .a = a, .b = b};
}

static void put_tabs(struct mp_jstream *j, size_t n)
{
	static const char tabs[] = "\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t";
	size_t k;

	for (; n > 0; n -= k) {
		k = n < sizeof(tabs) - 1 ? n : sizeof(tabs) - 1;
		mp_jstream_raw(j, tabs, k);
	}
}

/* text with depth tabs after each newline */
static void put_indented(struct mp_jstream *j, const char *text, size_t depth)
{
	const char *nl;

	while ((nl = strchr(text, '\n'))) {
		mp_jstream_json(j, text, (size_t)(nl + 1 - text));
		put_tabs(j, depth);
		text = nl + 1;
	}
	mp_jstream_json(j, text, strlen(text));
}

/* The array of src, its items at depth (cJSON's print depth). */
static int put_array(struct mp_jstream *j, const struct mp_json_lazy_src *src, size_t depth)
{
	cJSON *item;
	char *text;
	size_t i;
	int rc;

	mp_jstream_lit(j, "[");
	for (i = 0;; i++) {
		item = NULL;
		if ((rc = src->fn(src->a, src->b, i, &item)) <= 0)
			break;
		text = cJSON_Print(item);
		cJSON_Delete(item);
		if (!text)
			return MP_ENOMEM;
		if (i > 0)
			mp_jstream_lit(j, ", ");
		put_indented(j, text, depth);
		free(text);
	}
	mp_jstream_lit(j, "]");
	return rc < 0 ? rc : 0;
}

/* The tabs that begin the line holding p. */
static size_t line_depth(const char *text, const char *p)
{
	const char *line = p;
	size_t n = 0;

	while (line > text && line[-1] != '\n')
		line--;
	while (line + n < p && line[n] == '\t')
		n++;
	return n;
}

/* text with each marker replaced by its array. */
static int put_text(struct mp_jstream *j, const char *text, const struct mp_json_lazy *lz)
{
	const char *p = text, *m, *end;
	unsigned long k;
	int rc;

	while ((m = strchr(p, MARK))) {
		mp_jstream_json(j, p, (size_t)(m - p));
		k = strtoul(m + 1, (char **)&end, 10);
		if (*end != MARK || k >= lz->n)
			return MP_EINVAL; /* cannot happen: markers are only ours */
		/* a member's line starts with the object's depth; its items are one deeper */
		if ((rc = put_array(j, &lz->src[k], line_depth(text, m) + 1)) < 0)
			return rc;
		p = end + 1;
	}
	mp_jstream_json(j, p, strlen(p));
	return 0;
}

int mp_json_lazy_write(FILE *out, const cJSON *root, const struct mp_json_lazy *lz)
{
	struct mp_jstream j;
	char *text;
	int rc;

	if (lz->failed)
		return MP_ENOMEM;
	text = cJSON_Print(root);
	if (!text || mp_jstream_init(&j, out) < 0) {
		free(text);
		return MP_ENOMEM;
	}
	rc = put_text(&j, text, lz);
	free(text);
	mp_jstream_lit(&j, "\n");
	if (mp_jstream_flush(&j) < 0 && rc == 0)
		rc = MP_EIO;
	mp_jstream_free(&j);
	return rc;
}
