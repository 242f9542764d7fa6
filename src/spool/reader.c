/*
 * spool/reader.c - reads a spool back: the header, then block by
 * block, each checked whole (magic, size, sequence, checksum, every item)
 * before any of its items is handed out.  Never crashes on any bytes; holds
 * one block plus the string, stack and module tables.  Runs in the CLI only.
 */
#include "spool/reader.h"
#include "util/array.h"
#include "util/crc32.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Ids are at most 2^24; tables are pages of PAGE_ENTRIES, allocated on use. */
#define ID_BITS      24
#define PAGE_BITS    12
#define PAGE_ENTRIES (1u << PAGE_BITS)
#define N_PAGES      (1u << (ID_BITS - PAGE_BITS))
#define MAX_ID       ((1u << ID_BITS) - 1)
#define MAX_MODULES  (1u << 20)

struct table_ent {
	void *data;     /* string (NUL added) or return addresses; NULL: undefined */
	uint32_t count; /* string length or stack depth */
};

struct id_table {
	struct table_ent **pages; /* N_PAGES, allocated on first definition */
};

struct mp_spool_reader {
	FILE *f;
	char *name;
	struct mp_spool_header h;
	uint64_t off; /* file offset of the next block */
	unsigned char *block;
	size_t block_cap, payload_bytes, pos;
	uint64_t n_blocks; /* blocks read so far */
	int ended, complete, have_footer;
	struct mp_spool_footer footer;
	char damage[160];
	uint64_t damage_off;
	struct id_table strings, stacks;
	struct mp_spool_module *modules;
	size_t n_modules, modules_cap;
};

/* --- tables ------------------------------------------------------------------ */

static struct table_ent *table_get(const struct id_table *t, uint32_t id)
{
	struct table_ent *page;

	if (id == 0 || id > MAX_ID || !t->pages)
		return NULL;
	page = t->pages[id >> PAGE_BITS];
	return page && page[id & (PAGE_ENTRIES - 1)].data ? &page[id & (PAGE_ENTRIES - 1)] : NULL;
}

/* Define id (data is taken over); 0, MP_ENOMEM. */
static int table_put(struct id_table *t, uint32_t id, void *data, uint32_t count)
{
	struct table_ent **page;

	if (!t->pages && !(t->pages = calloc(N_PAGES, sizeof(*t->pages))))
		return MP_ENOMEM;
	page = &t->pages[id >> PAGE_BITS];
	if (!*page && !(*page = calloc(PAGE_ENTRIES, sizeof(**page))))
		return MP_ENOMEM;
	(*page)[id & (PAGE_ENTRIES - 1)].data = data;
	(*page)[id & (PAGE_ENTRIES - 1)].count = count;
	return 0;
}

static void table_undefine(struct id_table *t, uint32_t id)
{
	struct table_ent *e = table_get(t, id);

	if (e) {
		free(e->data);
		e->data = NULL;
	}
}

static void table_free(struct id_table *t)
{
	size_t p, i;

	if (!t->pages)
		return;
	for (p = 0; p < N_PAGES; p++) {
		if (!t->pages[p])
			continue;
		for (i = 0; i < PAGE_ENTRIES; i++)
			free(t->pages[p][i].data);
		free(t->pages[p]);
	}
	free(t->pages);
	t->pages = NULL;
}

/* --- open, header -------------------------------------------------------------- */

static uint32_t bswap32(uint32_t x)
{
	return (x >> 24) | ((x >> 8) & 0xff00u) | ((x << 8) & 0xff0000u) | (x << 24);
}

static int check_header(const struct mp_spool_header *h, size_t n, const char *name,
                        struct mp_error *err)
{
	if (n == 0)
		return mp_err(err, MP_EFORMAT, "not a spool '%s': empty file", name);
	if (n < 8 || memcmp(h->magic, MP_SPOOL_MAGIC, 8) != 0)
		return mp_err(err, MP_EFORMAT, "not a spool '%s': bad magic at byte 0", name);
	if (n < sizeof(*h))
		return mp_err(err, MP_EFORMAT,
		              "spool '%s' cut short: %zu bytes, less than its 128-byte header",
		              name, n);
	if (h->byte_order == bswap32(MP_SPOOL_BYTE_ORDER))
		return mp_err(err, MP_EFORMAT,
		              "spool '%s' was written on a machine of the other byte order", name);
	if (h->byte_order != MP_SPOOL_BYTE_ORDER)
		return mp_err(err, MP_EFORMAT, "bad spool header '%s': byte order mark 0x%08x",
		              name, h->byte_order);
	if (h->version > MP_SPOOL_VERSION)
		return mp_err(err, MP_EFORMAT,
		              "spool '%s' is version %u, newer than this memprof reads (%d): "
		              "upgrade memprof",
		              name, h->version, MP_SPOOL_VERSION);
	if (h->version == 0)
		return mp_err(err, MP_EFORMAT, "bad spool header '%s': version 0", name);
	if (h->header_bytes != sizeof(*h) || h->event_bytes != sizeof(struct mp_spool_event))
		return mp_err(err, MP_EFORMAT,
		              "bad spool header '%s': header of %u bytes and events of %u "
		              "(expected %zu and %zu)",
		              name, h->header_bytes, h->event_bytes, sizeof(*h),
		              sizeof(struct mp_spool_event));
	return 0;
}

int mp_spool_reader_open(struct mp_spool_reader **out, FILE *f, const char *name,
                         struct mp_error *err)
{
	struct mp_spool_reader *r;
	size_t n;
	int rc;

	*out = NULL;
	r = calloc(1, sizeof(*r));
	if (!r || !(r->name = strdup(name))) {
		free(r);
		return mp_err(err, MP_ENOMEM, "out of memory reading spool '%s'", name);
	}
	r->f = f;
	n = fread(&r->h, 1, sizeof(r->h), f);
	if (n < sizeof(r->h) && ferror(f))
		rc = mp_err(err, MP_EIO, "cannot read spool '%s': %s", name, strerror(errno));
	else
		rc = check_header(&r->h, n, name, err);
	if (rc < 0) {
		mp_spool_reader_close(r);
		return rc;
	}
	r->off = sizeof(r->h);
	*out = r;
	return 0;
}

void mp_spool_reader_close(struct mp_spool_reader *r)
{
	if (!r)
		return;
	table_free(&r->strings);
	table_free(&r->stacks);
	free(r->modules);
	free(r->block);
	free(r->name);
	free(r);
}

const struct mp_spool_header *mp_spool_reader_header(const struct mp_spool_reader *r)
{
	return &r->h;
}

/* --- items ------------------------------------------------------------------- */

size_t mp_spool_min_item_bytes(uint16_t type)
{
	switch (type) {
	case MP_SI_EVENT:
		return sizeof(struct mp_spool_event);
	case MP_SI_STRING:
		return sizeof(struct mp_spool_string);
	case MP_SI_STACK:
		return sizeof(struct mp_spool_stack);
	case MP_SI_MODULE:
		return sizeof(struct mp_spool_module);
	case MP_SI_DEVICE:
		return sizeof(struct mp_spool_device);
	case MP_SI_META:
		return sizeof(struct mp_spool_meta);
	case MP_SI_FOOTER:
		return sizeof(struct mp_spool_footer);
	default:
		return sizeof(struct mp_spool_item_head);
	}
}

/* Define a string or stack from item p; NULL on success, else what was wrong. */
static const char *define_entry(struct mp_spool_reader *r, const unsigned char *p, size_t bytes,
                                int *nomem)
{
	struct mp_spool_string s; /* the same layout as struct mp_spool_stack */
	int is_stack = ((const struct mp_spool_item_head *)p)->type == MP_SI_STACK;
	struct id_table *t = is_stack ? &r->stacks : &r->strings;
	size_t data_bytes;
	unsigned char *copy;

	memcpy(&s, p, sizeof(s));
	if (s.id == 0 || s.id > MAX_ID)
		return is_stack ? "bad stack id" : "bad string id";
	if (table_get(t, s.id))
		return is_stack ? "stack id defined twice" : "string id defined twice";
	if (is_stack && s.len > MP_SPOOL_MAX_STACK_DEPTH)
		return "stack deeper than 128 frames";
	if (!is_stack && s.len > MP_SPOOL_MAX_STRING)
		return "string longer than the most a spool holds";
	data_bytes = is_stack ? (size_t)s.len * 8 : s.len;
	if (sizeof(s) + data_bytes > bytes)
		return is_stack ? "stack overruns its item" : "string overruns its item";
	copy = malloc(data_bytes + 1);
	if (!copy || table_put(t, s.id, copy, s.len) < 0) {
		free(copy);
		*nomem = 1;
		return "out of memory";
	}
	memcpy(copy, p + sizeof(s), data_bytes);
	copy[data_bytes] = '\0';
	return NULL;
}

static const char *add_module(struct mp_spool_reader *r, const unsigned char *p, int *nomem)
{
	if (r->n_modules >= MAX_MODULES)
		return "more than 2^20 modules";
	if (mp_array_reserve((void **)&r->modules, &r->modules_cap, r->n_modules + 1,
	                     sizeof(*r->modules)) < 0) {
		*nomem = 1;
		return "out of memory";
	}
	memcpy(&r->modules[r->n_modules++], p, sizeof(*r->modules));
	return NULL;
}

/* Undo the table items of the block before byte end (a later item was bad). */
static void undo_tables(struct mp_spool_reader *r, size_t end, size_t n_modules_before)
{
	size_t pos = 0;

	while (pos < end) {
		const struct mp_spool_item_head *ih = (const void *)(r->block + pos);
		const struct mp_spool_string *s = (const void *)ih;

		if (ih->type == MP_SI_STRING)
			table_undefine(&r->strings, s->id);
		else if (ih->type == MP_SI_STACK)
			table_undefine(&r->stacks, s->id);
		pos += ih->bytes;
	}
	r->n_modules = n_modules_before;
}

/*
 * Check every item of the block just read and define its table items.
 * NULL when it is sound, else what was wrong (*at: the item's offset in the
 * payload); the tables are then as before the block.
 */
static const char *check_items(struct mp_spool_reader *r, uint32_t n_items, size_t *at, int *nomem)
{
	size_t pos = 0, n_modules_before = r->n_modules;
	uint32_t n = 0;
	const char *bad = NULL;

	while (pos < r->payload_bytes && !bad) {
		struct mp_spool_item_head ih;

		memcpy(&ih, r->block + pos, sizeof(ih));
		*at = pos;
		if (ih.bytes % 8 != 0 || ih.bytes < mp_spool_min_item_bytes(ih.type))
			bad = "bad item size";
		else if (ih.bytes > r->payload_bytes - pos)
			bad = "item overruns its block";
		else if (ih.type == MP_SI_STRING || ih.type == MP_SI_STACK)
			bad = define_entry(r, r->block + pos, ih.bytes, nomem);
		else if (ih.type == MP_SI_MODULE)
			bad = add_module(r, r->block + pos, nomem);
		if (!bad) {
			pos += ih.bytes;
			n++;
		}
	}
	if (!bad && n != n_items) {
		*at = 0;
		bad = "item count differs from its block header";
	}
	if (bad)
		undo_tables(r, *at, n_modules_before);
	return bad;
}

/* --- blocks ------------------------------------------------------------------ */

static void set_damage(struct mp_spool_reader *r, uint64_t off, const char *what, const char *where)
{
	snprintf(r->damage, sizeof(r->damage), "%s %s block %llu", what, where,
	         (unsigned long long)r->n_blocks);
	r->damage_off = off;
	r->ended = 1;
}

/* Read n bytes at the current position: 1 whole, 0 cut by EOF (*got read), MP_EIO. */
static int read_exact(struct mp_spool_reader *r, void *p, size_t n, size_t *got,
                      struct mp_error *err)
{
	*got = fread(p, 1, n, r->f);
	if (*got == n)
		return 1;
	if (ferror(r->f))
		return mp_err(err, MP_EIO, "cannot read spool '%s' after byte %llu: %s", r->name,
		              (unsigned long long)r->off, strerror(errno));
	return 0;
}

/*
 * Read the n-byte payload into r->block, growing it as the bytes arrive (a
 * lying size in a short file costs no more memory than the file has).
 */
static int read_payload(struct mp_spool_reader *r, size_t n, struct mp_error *err)
{
	size_t got = 0, k;

	while (got < n) {
		size_t chunk = n - got < (1u << 20) ? n - got : (1u << 20);
		int rc;

		if (got + chunk > r->block_cap) {
			size_t cap =
			        r->block_cap * 2 > got + chunk ? r->block_cap * 2 : got + chunk;
			unsigned char *b = realloc(r->block, cap > n ? n : cap);

			if (!b)
				return mp_err(err, MP_ENOMEM, "out of memory reading spool '%s'",
				              r->name);
			r->block = b;
			r->block_cap = cap > n ? n : cap;
		}
		rc = read_exact(r, r->block + got, chunk, &k, err);
		if (rc <= 0)
			return rc;
		got += chunk;
	}
	return 1;
}

/* Read and check the next block: 1 read, 0 the spool ends here, < 0 error. */
static int next_block(struct mp_spool_reader *r, struct mp_error *err)
{
	struct mp_spool_block bh;
	const char *bad;
	size_t at = 0, got;
	int rc, nomem = 0;

	rc = read_exact(r, &bh, sizeof(bh), &got, err);
	if (rc <= 0) {
		if (rc == 0)
			set_damage(r, r->off, "cut short", got ? "in" : "before");
		return rc;
	}
	if (bh.magic != MP_SPOOL_BLOCK_MAGIC) {
		set_damage(r, r->off, "bad block magic", "in");
		return 0;
	}
	if (bh.payload_bytes % 8 != 0 || bh.payload_bytes > MP_SPOOL_MAX_BLOCK) {
		set_damage(r, r->off, "bad block size", "in");
		return 0;
	}
	if (bh.block_seq != r->n_blocks) {
		set_damage(r, r->off, "bad block sequence number", "in");
		return 0;
	}
	rc = read_payload(r, bh.payload_bytes, err);
	if (rc <= 0) {
		if (rc == 0)
			set_damage(r, r->off, "cut short", "in");
		return rc;
	}
	if (mp_crc32(0, r->block, bh.payload_bytes) != bh.crc32) {
		set_damage(r, r->off, "bad checksum", "in");
		return 0;
	}
	r->payload_bytes = bh.payload_bytes;
	bad = check_items(r, bh.n_items, &at, &nomem);
	if (nomem)
		return mp_err(err, MP_ENOMEM, "out of memory reading spool '%s'", r->name);
	if (bad) {
		set_damage(r, r->off + sizeof(bh) + at, bad, "in");
		return 0;
	}
	r->off += sizeof(bh) + bh.payload_bytes;
	r->n_blocks++;
	r->pos = 0;
	return 1;
}

int mp_spool_reader_next(struct mp_spool_reader *r, const struct mp_spool_item_head **item,
                         struct mp_error *err)
{
	*item = NULL;
	for (;;) {
		const struct mp_spool_item_head *ih;
		int rc;

		if (r->ended)
			return 0;
		if (r->pos >= r->payload_bytes) {
			r->payload_bytes = r->pos = 0;
			rc = next_block(r, err);
			if (rc <= 0)
				return rc;
			continue;
		}
		ih = (const void *)(r->block + r->pos);
		r->pos += ih->bytes;
		switch (ih->type) {
		case MP_SI_FOOTER:
			memcpy(&r->footer, ih, sizeof(r->footer));
			r->have_footer = r->complete = r->ended = 1;
			*item = ih;
			return 1;
		case MP_SI_EVENT:
		case MP_SI_META:
		case MP_SI_DEVICE:
			*item = ih;
			return 1;
		default: /* table items (already in the tables) and unknown types */
			break;
		}
	}
}

int mp_spool_reader_complete(const struct mp_spool_reader *r)
{
	return r->complete;
}

const char *mp_spool_reader_damage(const struct mp_spool_reader *r, uint64_t *offset)
{
	if (r->complete || !r->ended)
		return NULL;
	if (offset)
		*offset = r->damage_off;
	return r->damage;
}

const struct mp_spool_footer *mp_spool_reader_footer(const struct mp_spool_reader *r)
{
	return r->have_footer ? &r->footer : NULL;
}

const char *mp_spool_reader_string(const struct mp_spool_reader *r, uint32_t id, size_t *len)
{
	const struct table_ent *e = table_get(&r->strings, id);

	if (len)
		*len = e ? e->count : 0;
	return e ? e->data : NULL;
}

const uint64_t *mp_spool_reader_stack(const struct mp_spool_reader *r, uint32_t id, uint32_t *depth)
{
	const struct table_ent *e = table_get(&r->stacks, id);

	if (depth)
		*depth = e ? e->count : 0;
	return e ? e->data : NULL;
}

size_t mp_spool_reader_n_modules(const struct mp_spool_reader *r)
{
	return r->n_modules;
}

const struct mp_spool_module *mp_spool_reader_module(const struct mp_spool_reader *r, size_t i)
{
	return i < r->n_modules ? &r->modules[i] : NULL;
}
