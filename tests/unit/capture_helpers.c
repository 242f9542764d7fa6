/*
 * tests/unit/capture_helpers.c - helpers of the injected library's unit
 * tests (capture_helpers.h).  The spool walker here is written from
 * spool/format.h alone, independently of the spool reader.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "capture_helpers.h"
#include "util/crc32.h"

const char *th_cupti_path(void)
{
	static char buf[4096];
	const char *env = getenv("MEMPROF_TEST_CUPTI");
	if (env && *env)
		return env;
	const char *cands[] = {MEMPROF_CUDA_DIR "/lib64/libcupti.so.13",
	                       MEMPROF_CUDA_DIR "/extras/CUPTI/lib64/libcupti.so.13",
	                       MEMPROF_CUDA_DIR "/lib/libcupti.so.13"};
	for (size_t i = 0; i < sizeof cands / sizeof cands[0]; i++)
		if (access(cands[i], R_OK) == 0) {
			snprintf(buf, sizeof buf, "%s", cands[i]);
			return buf;
		}
	return cands[0];
}

void th_tmpdir(char *buf, size_t n)
{
	const char *t = getenv("TMPDIR");
	snprintf(buf, n, "%s/mp-capture-XXXXXX", t && *t ? t : "/tmp");
	cr_assert_not_null(mkdtemp(buf), "mkdtemp %s", buf);
}

void th_rmdir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char path[4096];
	if (!d)
		return;
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
			snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
			unlink(path);
		}
	closedir(d);
	rmdir(dir);
}

int th_find_spool(const char *dir, char *path, size_t n)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int found = 0;
	cr_assert_not_null(d, "opendir %s", dir);
	while ((e = readdir(d))) {
		size_t len = strlen(e->d_name);
		if (len > 4 && !strcmp(e->d_name + len - 4, ".mpt")) {
			if (!found)
				snprintf(path, n, "%s/%s", dir, e->d_name);
			found++;
		}
	}
	closedir(d);
	return found;
}

struct mp_spool_writer *th_open_writer(const char *dir, char *path, size_t n)
{
	struct mp_spool_header h;
	struct mp_spool_writer *w = NULL;
	memset(&h, 0, sizeof h);
	h.pid = getpid();
	snprintf(path, n, "%s/test-%ld.mpt", dir, (long)getpid());
	int rc = mp_spool_writer_open(&w, path, &h, NULL);
	cr_assert_eq(rc, 0, "mp_spool_writer_open %s: %d", path, rc);
	return w;
}

#define PUSH(arr, n, item)                                                                         \
	do {                                                                                       \
		arr = realloc(arr, ((n) + 1) * sizeof *(arr));                                     \
		cr_assert_not_null(arr);                                                           \
		(arr)[(n)++] = (item);                                                             \
	} while (0)

static void add_string(struct th_spool *s, const unsigned char *item, size_t bytes)
{
	struct mp_spool_string st;
	memcpy(&st, item, sizeof st);
	cr_assert_leq(sizeof st + st.len, bytes, "string item longer than itself");
	if (st.id >= s->n_strings) {
		s->strings = realloc(s->strings, (st.id + 1) * sizeof *s->strings);
		for (size_t i = s->n_strings; i <= st.id; i++)
			s->strings[i] = NULL;
		s->n_strings = st.id + 1;
	}
	free(s->strings[st.id]);
	s->strings[st.id] = strndup((const char *)item + sizeof st, st.len);
}

static void add_item(struct th_spool *s, const unsigned char *item, size_t bytes)
{
	struct mp_spool_item_head h;
	memcpy(&h, item, sizeof h);
	if (h.type == MP_SI_EVENT) {
		struct mp_spool_event ev;
		cr_assert_eq(bytes, sizeof ev);
		memcpy(&ev, item, sizeof ev);
		PUSH(s->events, s->n_events, ev);
	} else if (h.type == MP_SI_STRING) {
		add_string(s, item, bytes);
	} else if (h.type == MP_SI_META) {
		struct mp_spool_meta m;
		memcpy(&m, item, sizeof m);
		PUSH(s->meta, s->n_meta, m);
	} else if (h.type == MP_SI_DEVICE) {
		struct mp_spool_device d;
		memcpy(&d, item, sizeof d);
		PUSH(s->devices, s->n_devices, d);
	} else if (h.type == MP_SI_MODULE) {
		struct mp_spool_module m;
		memcpy(&m, item, sizeof m);
		PUSH(s->modules, s->n_modules, m);
	} else if (h.type == MP_SI_STACK) {
		struct mp_spool_stack st;
		memcpy(&st, item, sizeof st);
		cr_assert_eq(bytes, sizeof st + st.depth * sizeof(uint64_t));
		if (st.id >= s->n_stacks) {
			s->stack_depths = realloc(s->stack_depths, (st.id + 1) * sizeof(uint32_t));
			for (size_t i = s->n_stacks; i <= st.id; i++)
				s->stack_depths[i] = 0;
			s->n_stacks = st.id + 1;
		}
		s->stack_depths[st.id] = st.depth;
	} else if (h.type == MP_SI_FOOTER) {
		memcpy(&s->footer, item, sizeof s->footer);
		s->has_footer = 1;
	}
}

static void walk_payload(struct th_spool *s, const unsigned char *p, size_t n, uint32_t n_items)
{
	size_t off = 0;
	uint32_t seen = 0;
	while (off < n) {
		struct mp_spool_item_head h;
		cr_assert_leq(off + sizeof h, n);
		memcpy(&h, p + off, sizeof h);
		cr_assert(h.bytes >= sizeof h && h.bytes % 8 == 0 && off + h.bytes <= n,
		          "bad item size %u at payload offset %zu", h.bytes, off);
		add_item(s, p + off, h.bytes);
		off += h.bytes;
		seen++;
	}
	cr_assert_eq(seen, n_items, "block says %u items, holds %u", n_items, seen);
}

void th_read_spool(const char *path, struct th_spool *s)
{
	memset(s, 0, sizeof *s);
	FILE *f = fopen(path, "rb");
	cr_assert_not_null(f, "open %s", path);
	cr_assert_eq(fread(&s->header, sizeof s->header, 1, f), 1, "short header");
	cr_assert_eq(memcmp(s->header.magic, MP_SPOOL_MAGIC, 8), 0);
	cr_assert_eq(s->header.header_bytes, sizeof s->header);
	cr_assert_eq(s->header.event_bytes, sizeof(struct mp_spool_event));
	for (;;) {
		struct mp_spool_block b;
		size_t got = fread(&b, 1, sizeof b, f);
		if (got == 0)
			break;
		if (got != sizeof b || b.magic != MP_SPOOL_BLOCK_MAGIC) {
			s->error = "bad block header";
			break;
		}
		unsigned char *p = malloc(b.payload_bytes ? b.payload_bytes : 1);
		if (fread(p, 1, b.payload_bytes, f) != b.payload_bytes) {
			s->error = "short block";
			free(p);
			break;
		}
		if (mp_crc32(0, p, b.payload_bytes) != b.crc32) {
			s->error = "bad crc";
			free(p);
			break;
		}
		walk_payload(s, p, b.payload_bytes, b.n_items);
		free(p);
	}
	fclose(f);
}

void th_free_spool(struct th_spool *s)
{
	for (size_t i = 0; i < s->n_strings; i++)
		free(s->strings[i]);
	free(s->strings);
	free(s->events);
	free(s->meta);
	free(s->devices);
	free(s->modules);
	free(s->stack_depths);
	memset(s, 0, sizeof *s);
}

const char *th_str(const struct th_spool *s, uint32_t id)
{
	return id < s->n_strings && s->strings[id] ? s->strings[id] : "";
}

const char *th_meta(const struct th_spool *s, const char *key)
{
	for (size_t i = 0; i < s->n_meta; i++)
		if (!strcmp(th_str(s, s->meta[i].key), key))
			return th_str(s, s->meta[i].value);
	return NULL;
}
