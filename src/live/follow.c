/*
 * live/follow.c - reads growing spools block by block: a round lists the
 * spool directory, opens new spools, and reads each spool's blocks that are
 * whole on disk (pread, so a block being written is simply tried again next
 * round).  A whole block that is wrong stops its spool with a note.  Owns
 * the per-spool tables; hands items out, never interprets events.
 */
#include "live/follow.h"
#include "spool/reader.h"
#include "util/array.h"
#include "util/crc32.h"
#include "util/error.h"
#include "util/intmap.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct entry {
	void *data;     /* string (NUL added) or return addresses */
	uint32_t count; /* length or depth */
};

struct mp_live_spool {
	size_t index;
	char *path, *name;
	int fd; /* -1 before opening and after the end */
	int have_header, ended;
	struct mp_spool_header h;
	uint64_t off, n_blocks;
	char note[512];
	struct mp_intmap string_ids, stack_ids; /* id -> index + 1 into entries */
	struct entry *entries;
	size_t n_entries, cap_entries;
	struct mp_spool_module *modules;
	size_t n_modules, cap_modules;
};

struct mp_live_follow {
	char *dir;
	char **skip;
	size_t n_skip;
	struct mp_live_spool **spools;
	size_t n_spools, cap_spools;
	unsigned char *block;
	size_t block_cap;
};

struct mp_live_follow *mp_live_follow_new(const char *dir, char *const *skip, size_t n_skip)
{
	struct mp_live_follow *f = calloc(1, sizeof(*f));
	size_t i;

	if (!f || !(f->dir = strdup(dir)) ||
	    (n_skip && !(f->skip = calloc(n_skip, sizeof(char *)))))
		goto fail;
	for (i = 0; i < n_skip; i++, f->n_skip++)
		if (!(f->skip[i] = strdup(skip[i])))
			goto fail;
	return f;
fail:
	mp_live_follow_free(f);
	return NULL;
}

static void spool_free(struct mp_live_spool *s)
{
	size_t i;

	if (s->fd >= 0)
		close(s->fd);
	for (i = 0; i < s->n_entries; i++)
		free(s->entries[i].data);
	free(s->entries);
	free(s->modules);
	mp_intmap_free(&s->string_ids);
	mp_intmap_free(&s->stack_ids);
	free(s->path);
	free(s);
}

void mp_live_follow_free(struct mp_live_follow *f)
{
	size_t i;

	if (!f)
		return;
	for (i = 0; i < f->n_spools; i++)
		spool_free(f->spools[i]);
	for (i = 0; i < f->n_skip; i++)
		free(f->skip[i]);
	free(f->skip);
	free(f->spools);
	free(f->block);
	free(f->dir);
	free(f);
}

/* --- the directory ---------------------------------------------------------------- */

static int known(const struct mp_live_follow *f, const char *name)
{
	size_t i;

	for (i = 0; i < f->n_skip; i++)
		if (strcmp(f->skip[i], name) == 0)
			return 1;
	for (i = 0; i < f->n_spools; i++)
		if (strcmp(f->spools[i]->name, name) == 0)
			return 1;
	return 0;
}

static int add_spool(struct mp_live_follow *f, const char *name)
{
	struct mp_live_spool *s;

	if (mp_array_reserve((void **)&f->spools, &f->cap_spools, f->n_spools + 1,
	                     sizeof(*f->spools)) < 0 ||
	    !(s = calloc(1, sizeof(*s))))
		return MP_ENOMEM;
	if (asprintf(&s->path, "%s/%s", f->dir, name) < 0) {
		free(s);
		return MP_ENOMEM;
	}
	s->name = strrchr(s->path, '/') + 1;
	s->fd = -1;
	s->index = f->n_spools;
	mp_intmap_init(&s->string_ids);
	mp_intmap_init(&s->stack_ids);
	f->spools[f->n_spools++] = s;
	return 0;
}

/* New *.mpt names, in name order within a round (a stable index order). */
static int scan(struct mp_live_follow *f)
{
	struct dirent **names = NULL;
	int n, i, rc = 0;

	n = scandir(f->dir, &names, NULL, alphasort);
	for (i = 0; i < n; i++) {
		const char *name = names[i]->d_name;
		size_t len = strlen(name);

		if (rc == 0 && len > 4 && strcmp(name + len - 4, ".mpt") == 0 && !known(f, name))
			rc = add_spool(f, name);
		free(names[i]);
	}
	free(names);
	return rc;
}

/* --- one spool -------------------------------------------------------------------- */

static void stop(struct mp_live_spool *s, const char *what, uint64_t off)
{
	snprintf(s->note, sizeof(s->note), "%s at byte %llu of '%s'", what, (unsigned long long)off,
	         s->path);
	s->ended = 1;
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
}

/* Read n bytes at off: 1 all there, 0 not yet, -1 a read error (errno). */
static int read_at(int fd, void *p, size_t n, uint64_t off)
{
	size_t got = 0;

	while (got < n) {
		ssize_t k = pread(fd, (char *)p + got, n - got, (off_t)(off + got));

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return -1;
		if (k == 0)
			return 0;
		got += (size_t)k;
	}
	return 1;
}

static int open_header(struct mp_live_spool *s)
{
	int rc;

	if (s->fd < 0 && (s->fd = open(s->path, O_RDONLY | O_CLOEXEC)) < 0)
		return 0; /* gone or not readable yet: next round */
	rc = read_at(s->fd, &s->h, sizeof(s->h), 0);
	if (rc <= 0) {
		if (rc < 0)
			stop(s, strerror(errno), 0);
		return 0;
	}
	if (memcmp(s->h.magic, MP_SPOOL_MAGIC, 8) != 0)
		stop(s, "not a spool: bad magic", 0);
	else if (s->h.byte_order != MP_SPOOL_BYTE_ORDER)
		stop(s, "bad byte order mark", 0);
	else if (s->h.version == 0 || s->h.version > MP_SPOOL_VERSION)
		stop(s, "a spool version this memprof does not read", 0);
	else if (s->h.header_bytes != sizeof(s->h) ||
	         s->h.event_bytes != sizeof(struct mp_spool_event))
		stop(s, "bad header or event size", 0);
	if (s->ended)
		return 0;
	s->have_header = 1;
	s->off = sizeof(s->h);
	return 1;
}

/* Define the string or stack of item p; NULL, or what was wrong. */
static const char *define(struct mp_live_spool *s, const unsigned char *p, uint32_t bytes,
                          int *nomem)
{
	struct mp_spool_string h; /* the layout of struct mp_spool_stack too */
	int stack = ((const struct mp_spool_item_head *)p)->type == MP_SI_STACK;
	struct mp_intmap *ids = stack ? &s->stack_ids : &s->string_ids;
	size_t n;
	void *copy;

	memcpy(&h, p, sizeof(h));
	if (h.id == 0 || mp_intmap_get(ids, h.id, NULL))
		return stack ? "bad or repeated stack id" : "bad or repeated string id";
	if (stack && h.len > MP_SPOOL_MAX_STACK_DEPTH)
		return "stack deeper than 128 frames";
	n = stack ? (size_t)h.len * 8 : h.len;
	if (n > bytes - sizeof(h))
		return "table item overruns itself";
	if (mp_array_reserve((void **)&s->entries, &s->cap_entries, s->n_entries + 1,
	                     sizeof(*s->entries)) < 0 ||
	    !(copy = malloc(n + 1)))
		goto nomem;
	memcpy(copy, p + sizeof(h), n);
	((char *)copy)[n] = '\0';
	s->entries[s->n_entries] = (struct entry){copy, h.len};
	if (mp_intmap_put(ids, h.id, ++s->n_entries) < 0) {
		free(copy);
		s->n_entries--;
		goto nomem;
	}
	return NULL;
nomem:
	*nomem = 1;
	return "out of memory";
}

/* Check every item of block b (payload n bytes, n_items items) and define its tables. */
static const char *check_items(struct mp_live_spool *s, const unsigned char *b, size_t n,
                               uint32_t n_items, size_t *at, int *nomem)
{
	uint32_t count = 0;
	size_t pos = 0;

	while (pos < n) {
		struct mp_spool_item_head ih;
		const char *bad = NULL;

		memcpy(&ih, b + pos, sizeof(ih));
		*at = pos;
		if (ih.bytes % 8 || ih.bytes < mp_spool_min_item_bytes(ih.type))
			return "bad item size";
		if (ih.bytes > n - pos)
			return "item overruns its block";
		if (ih.type == MP_SI_STRING || ih.type == MP_SI_STACK)
			bad = define(s, b + pos, ih.bytes, nomem);
		else if (ih.type == MP_SI_MODULE) {
			if (mp_array_reserve((void **)&s->modules, &s->cap_modules,
			                     s->n_modules + 1, sizeof(*s->modules)) < 0) {
				*nomem = 1;
				return "out of memory";
			}
			memcpy(&s->modules[s->n_modules++], b + pos, sizeof(*s->modules));
		}
		if (bad)
			return bad;
		pos += ih.bytes;
		count++;
	}
	*at = 0;
	return count == n_items ? NULL : "item count differs from its block header";
}

/* Read the next block into f->block: 1 read, 0 not whole yet or stopped, < 0 MP_ENOMEM. */
static int next_block(struct mp_live_follow *f, struct mp_live_spool *s, size_t *n)
{
	struct mp_spool_block bh;
	const char *bad;
	size_t at = 0;
	int rc, nomem = 0;

	if ((rc = read_at(s->fd, &bh, sizeof(bh), s->off)) <= 0)
		goto not_read;
	if (bh.magic != MP_SPOOL_BLOCK_MAGIC || bh.payload_bytes % 8 ||
	    bh.payload_bytes > MP_SPOOL_MAX_BLOCK || bh.block_seq != s->n_blocks) {
		stop(s, bh.magic != MP_SPOOL_BLOCK_MAGIC ? "bad block magic" : "bad block header",
		     s->off);
		return 0;
	}
	if (bh.payload_bytes > f->block_cap) {
		unsigned char *b = realloc(f->block, bh.payload_bytes);

		if (!b)
			return MP_ENOMEM;
		f->block = b;
		f->block_cap = bh.payload_bytes;
	}
	if ((rc = read_at(s->fd, f->block, bh.payload_bytes, s->off + sizeof(bh))) <= 0)
		goto not_read;
	if (mp_crc32(0, f->block, bh.payload_bytes) != bh.crc32) {
		stop(s, "bad checksum", s->off);
		return 0;
	}
	if ((bad = check_items(s, f->block, bh.payload_bytes, bh.n_items, &at, &nomem))) {
		if (nomem)
			return MP_ENOMEM;
		stop(s, bad, s->off + sizeof(bh) + at);
		return 0;
	}
	*n = bh.payload_bytes;
	s->off += sizeof(bh) + bh.payload_bytes;
	s->n_blocks++;
	return 1;
not_read:
	if (rc < 0)
		stop(s, strerror(errno), s->off);
	return 0; /* the block is not whole on disk yet */
}

/* Hand out the items of the block just read; returns the count or fn's return. */
static int hand_out(struct mp_live_follow *f, struct mp_live_spool *s, size_t n, mp_live_item_fn fn,
                    void *arg, int *n_items)
{
	size_t pos = 0;
	int rc;

	while (pos < n) {
		const struct mp_spool_item_head *ih = (const void *)(f->block + pos);

		if (ih->type == MP_SI_FOOTER)
			s->ended = 1;
		if ((rc = fn(arg, s, ih)) != 0)
			return rc;
		(*n_items)++;
		pos += ih->bytes;
	}
	if (s->ended && s->fd >= 0) {
		close(s->fd);
		s->fd = -1;
	}
	return 0;
}

static int read_spool(struct mp_live_follow *f, struct mp_live_spool *s, mp_live_item_fn fn,
                      void *arg, int *n_items)
{
	size_t n = 0;
	int rc;

	if (s->ended || (!s->have_header && !open_header(s)))
		return 0;
	while (!s->ended && (rc = next_block(f, s, &n)) == 1)
		if ((rc = hand_out(f, s, n, fn, arg, n_items)) != 0)
			return rc;
	return rc < 0 ? rc : 0;
}

int mp_live_follow_poll(struct mp_live_follow *f, mp_live_item_fn fn, void *arg)
{
	int n_items = 0, rc;
	size_t i;

	if ((rc = scan(f)) < 0)
		return rc;
	for (i = 0; i < f->n_spools; i++)
		if ((rc = read_spool(f, f->spools[i], fn, arg, &n_items)) != 0)
			return rc;
	return n_items;
}

/* --- lookups --------------------------------------------------------------------- */

size_t mp_live_follow_n_spools(const struct mp_live_follow *f)
{
	return f->n_spools;
}

const struct mp_live_spool *mp_live_follow_spool(const struct mp_live_follow *f, size_t i)
{
	return i < f->n_spools ? f->spools[i] : NULL;
}

size_t mp_live_spool_index(const struct mp_live_spool *s)
{
	return s->index;
}

const char *mp_live_spool_path(const struct mp_live_spool *s)
{
	return s->path;
}

const struct mp_spool_header *mp_live_spool_header(const struct mp_live_spool *s)
{
	return s->have_header ? &s->h : NULL;
}

uint64_t mp_live_spool_offset(const struct mp_live_spool *s)
{
	return s->off;
}

int mp_live_spool_ended(const struct mp_live_spool *s)
{
	return s->ended && !s->note[0];
}

const char *mp_live_spool_note(const struct mp_live_spool *s)
{
	return s->note[0] ? s->note : NULL;
}

static const struct entry *lookup(const struct mp_live_spool *s, const struct mp_intmap *ids,
                                  uint32_t id)
{
	uint64_t i;

	return id && mp_intmap_get(ids, id, &i) ? &s->entries[i - 1] : NULL;
}

const char *mp_live_spool_string(const struct mp_live_spool *s, uint32_t id, size_t *len)
{
	const struct entry *e = lookup(s, &s->string_ids, id);

	if (len)
		*len = e ? e->count : 0;
	return e ? e->data : NULL;
}

const uint64_t *mp_live_spool_stack(const struct mp_live_spool *s, uint32_t id, uint32_t *depth)
{
	const struct entry *e = lookup(s, &s->stack_ids, id);

	if (depth)
		*depth = e ? e->count : 0;
	return e ? e->data : NULL;
}

size_t mp_live_spool_n_modules(const struct mp_live_spool *s)
{
	return s->n_modules;
}

const struct mp_spool_module *mp_live_spool_module(const struct mp_live_spool *s, size_t i)
{
	return i < s->n_modules ? &s->modules[i] : NULL;
}
