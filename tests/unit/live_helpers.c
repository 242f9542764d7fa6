/*
 * tests/unit/live_helpers.c - spools for the tests of src/live: the real
 * writer, a flush per block, and prefixes of a finished spool.
 */
#include "live_helpers.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void lh_open(struct lh_spool *s, const char *path, int64_t pid)
{
	struct mp_spool_writer_opts o = {0, 60000}; /* blocks only when flushed */
	struct mp_spool_header h;

	memset(&h, 0, sizeof(h));
	h.pid = pid;
	h.ppid = 1;
	h.start_mono_ns = 1000;
	cr_assert_eq(mp_spool_writer_open(&s->w, path, &h, &o), 0, "spool '%s'", path);
}

uint32_t lh_str(struct lh_spool *s, const char *text)
{
	return mp_spool_cstring(s->w, text);
}

void lh_meta(struct lh_spool *s, const char *key, const char *value)
{
	cr_assert_eq(mp_spool_meta(s->w, key, value), 0);
}

void lh_module(struct lh_spool *s, const char *path, uint64_t start, uint64_t end)
{
	static uint32_t next_id;
	struct mp_spool_module m;

	memset(&m, 0, sizeof(m));
	m.head.type = MP_SI_MODULE;
	m.head.bytes = sizeof(m);
	m.id = ++next_id;
	m.path = lh_str(s, path);
	m.base = m.start = start;
	m.end = end;
	cr_assert_eq(mp_spool_append(s->w, &m, sizeof(m)), 0);
}

uint32_t lh_stack(struct lh_spool *s, uint64_t pc0, uint64_t pc1)
{
	uint64_t pcs[2] = {pc0, pc1};

	return mp_spool_stack(s->w, pcs, pc1 ? 2 : 1);
}

void lh_event(struct lh_spool *s, struct mp_spool_event ev)
{
	cr_assert_eq(mp_spool_event(s->w, &ev), 0);
}

void lh_alloc(struct lh_spool *s, const char *api, uint64_t addr, uint64_t bytes, int64_t dur_ns,
              uint32_t stack)
{
	lh_event(s, (struct mp_spool_event){.kind = MP_SK_API,
	                                    .name = lh_str(s, api),
	                                    .address = addr,
	                                    .bytes = bytes,
	                                    .duration_ns = dur_ns,
	                                    .stack = stack,
	                                    .thread = 7});
}

void lh_free(struct lh_spool *s, const char *api, uint64_t addr)
{
	lh_event(s, (struct mp_spool_event){.kind = MP_SK_API,
	                                    .name = lh_str(s, api),
	                                    .address = addr,
	                                    .flags = MP_SE_FREE_CALL,
	                                    .thread = 7});
}

void lh_flush(struct lh_spool *s)
{
	mp_spool_flush(s->w, 1);
}

void lh_close(struct lh_spool *s)
{
	cr_assert_eq(mp_spool_writer_close(s->w, 99999, 0), 0);
	s->w = NULL;
}

size_t lh_block_ends(const char *path, uint64_t *ends, size_t max)
{
	FILE *f = fopen(path, "rb");
	struct mp_spool_block bh;
	uint64_t off = sizeof(struct mp_spool_header);
	size_t n = 0;

	cr_assert(f, "open '%s'", path);
	ends[n++] = off;
	while (n < max && fseek(f, (long)off, SEEK_SET) == 0 && fread(&bh, sizeof(bh), 1, f) == 1) {
		off += sizeof(bh) + bh.payload_bytes;
		ends[n++] = off;
	}
	fclose(f);
	return n;
}

void lh_copy(const char *src, const char *dst, uint64_t n)
{
	FILE *in = fopen(src, "rb"), *out = fopen(dst, "wb");
	char *buf = malloc(n ? n : 1);

	cr_assert(in && out && buf);
	cr_assert_eq(fread(buf, 1, n, in), n, "'%s' is shorter than %llu bytes", src,
	             (unsigned long long)n);
	cr_assert_eq(fwrite(buf, 1, n, out), n);
	fclose(in);
	fclose(out);
	free(buf);
}

struct mp_live_follow *lh_follow_all(const char *dir, struct mp_live_state *st)
{
	struct mp_live_follow *f = mp_live_follow_new(dir, NULL, 0);
	int rc;

	cr_assert(f);
	mp_live_state_init(st, 0);
	while ((rc = mp_live_follow_poll(f, mp_live_state_item, st)) > 0)
		;
	cr_assert_eq(rc, 0, "poll: %d", rc);
	return f;
}
