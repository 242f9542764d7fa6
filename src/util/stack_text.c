/*
 * util/stack_text.c - parsing and formatting the text form of a call stack.
 * Stateless apart from the caller's buffers.
 */
#include "util/stack_text.h"
#include "util/array.h"
#include "util/frame_skip.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void mp_frame_list_init(struct mp_frame_list *l)
{
	memset(l, 0, sizeof(*l));
}

void mp_frame_list_free(struct mp_frame_list *l)
{
	free(l->frames);
	free(l->text);
	mp_frame_list_init(l);
}

/* Unescape [s, e) into l->text; returns the offset of the copy, or -1. */
static long copy_unescaped(struct mp_frame_list *l, const char *s, const char *e)
{
	size_t off = l->text_len;

	if (mp_array_reserve((void **)&l->text, &l->text_cap, off + (size_t)(e - s) + 1, 1) < 0)
		return -1;
	while (s < e) {
		if (*s == '\\')
			s++;
		l->text[l->text_len++] = *s++;
	}
	l->text[l->text_len++] = '\0';
	return (long)off;
}

/* Find the first unescaped c in [s, e), or e. */
static const char *find_unescaped(const char *s, const char *e, char c)
{
	for (; s < e; s++) {
		if (*s == '\\')
			s++;
		else if (*s == c)
			return s;
	}
	return e;
}

static const char *find_last_unescaped(const char *s, const char *e, char c)
{
	const char *last = NULL;

	for (; s < e; s++) {
		if (*s == '\\')
			s++;
		else if (*s == c)
			last = s;
	}
	return last;
}

static int check_escapes(const char *base, const char *s, const char *e, struct mp_error *err)
{
	for (; s < e; s++) {
		if (*s != '\\')
			continue;
		if (s + 1 == e)
			return mp_err(err, MP_EFORMAT,
			              "stack text: backslash at the end of a frame at byte %zu",
			              (size_t)(s - base) + 1);
		if (!strchr("\\;@:", s[1]))
			return mp_err(err, MP_EFORMAT,
			              "stack text: unknown escape '\\%c' at byte %zu (escape only "
			              "'\\', ';', '@' and ':')",
			              s[1], (size_t)(s - base) + 1);
		s++;
	}
	return 0;
}

/* Parse one frame [s, e), append it (offsets in pointers, fixed up later). */
static int parse_frame(struct mp_frame_list *l, const char *base, const char *s, const char *e,
                       struct mp_error *err)
{
	const char *at = find_unescaped(s, e, '@'), *colon = NULL, *file_end = e;
	struct memprof_frame *f;
	long name_off, file_off;
	int64_t line = 0;

	if (s == e)
		return mp_err(err, MP_EFORMAT, "stack text: empty frame at byte %zu",
		              (size_t)(s - base) + 1);
	if (check_escapes(base, s, e, err) < 0)
		return MP_EFORMAT;
	if (at < e)
		colon = find_last_unescaped(at + 1, e, ':');
	if (colon) {
		const char *d;

		if (colon + 1 == e)
			return mp_err(err, MP_EFORMAT,
			              "stack text: missing line number after ':' at byte %zu",
			              (size_t)(colon - base) + 1);
		for (d = colon + 1; d < e; d++) {
			if (*d < '0' || *d > '9')
				return mp_err(err, MP_EFORMAT,
				              "stack text: line number must be decimal digits at "
				              "byte %zu",
				              (size_t)(d - base) + 1);
			if (line > (INT64_MAX - 9) / 10)
				return mp_err(err, MP_EFORMAT,
				              "stack text: line number too large at byte %zu",
				              (size_t)(colon - base) + 2);
			line = line * 10 + (*d - '0');
		}
		file_end = colon;
	}
	if (at == e && s == e)
		return mp_err(err, MP_EFORMAT, "stack text: empty frame");
	name_off = copy_unescaped(l, s, at);
	file_off = at < e ? copy_unescaped(l, at + 1, file_end) : copy_unescaped(l, e, e);
	if (name_off < 0 || file_off < 0 ||
	    mp_array_reserve((void **)&l->frames, &l->cap, l->n + 1, sizeof(*l->frames)) < 0)
		return mp_err(err, MP_ENOMEM, "out of memory parsing a stack");
	f = &l->frames[l->n++];
	f->name = (const char *)(uintptr_t)name_off;
	f->file = (const char *)(uintptr_t)file_off;
	f->line = line;
	return 0;
}

int mp_stack_text_parse(const char *text, size_t len, struct mp_frame_list *l, struct mp_error *err)
{
	const char *s = text, *e = text + len;
	size_t i;

	l->n = 0;
	l->text_len = 0;
	while (len && s <= e) {
		const char *semi = find_unescaped(s, e, ';');

		if (parse_frame(l, text, s, semi, err) < 0)
			return err ? err->code : MP_EFORMAT;
		s = semi + 1;
	}
	/* outermost first in text; innermost first in the list */
	for (i = 0; i < l->n / 2; i++) {
		struct memprof_frame t = l->frames[i];

		l->frames[i] = l->frames[l->n - 1 - i];
		l->frames[l->n - 1 - i] = t;
	}
	for (i = 0; i < l->n; i++) {
		l->frames[i].name = l->text + (uintptr_t)l->frames[i].name;
		l->frames[i].file = l->text + (uintptr_t)l->frames[i].file;
	}
	return 0;
}

struct out {
	char *p;
	size_t len, cap;
	int failed;
};

static void put(struct out *o, const char *s, size_t n)
{
	if (o->failed || mp_array_reserve((void **)&o->p, &o->cap, o->len + n + 1, 1) < 0) {
		o->failed = 1;
		return;
	}
	memcpy(o->p + o->len, s, n);
	o->len += n;
	o->p[o->len] = '\0';
}

static void put_escaped(struct out *o, const char *s, const char *special)
{
	for (; *s; s++) {
		if (strchr(special, *s))
			put(o, "\\", 1);
		put(o, s, 1);
	}
}

char *mp_stack_text_format(const struct memprof_stack *s, size_t *len)
{
	struct out o = {NULL, 0, 0, 0};
	uint32_t i;

	put(&o, "", 0);
	for (i = s ? s->n_frames : 0; i-- > 0;) {
		const struct memprof_frame *f = &s->frames[i];
		char num[32];

		put_escaped(&o, f->name ? f->name : "", "\\;@");
		/* an unnamed frame without a location is written "@", never "" */
		if ((f->file && *f->file) || f->line > 0 || !f->name || !*f->name) {
			put(&o, "@", 1);
			put_escaped(&o, f->file ? f->file : "", "\\;:");
		}
		if (f->line > 0) {
			int n = snprintf(num, sizeof(num), ":%lld", (long long)f->line);
			put(&o, num, (size_t)n);
		}
		if (i > 0)
			put(&o, ";", 1);
	}
	if (o.failed) {
		free(o.p);
		return NULL;
	}
	if (len)
		*len = o.len;
	return o.p;
}

/* Frames of the allocator and of the stack capture itself: never a call
 * site (PyTorch's caching allocator and unwinder, the CUDA allocation
 * entry points). */
static int is_allocator_frame(const char *name)
{
	static const char *const prefixes[] = {
	        "torch::unwind::",
	        "torch::CapturedTraceback::",
	        "torch::cuda::(anonymous namespace)::gather",
	        "c10::cuda::CUDACachingAllocator::",
	        "c10::cuda::MemPool",
	        "at::TensorBase at::detail::_empty",
	        "at::detail::empty",
	        "cudaMalloc",
	        "cudaFree",
	        "cuMem",
	};
	size_t i;

	for (i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (strncmp(name, prefixes[i], strlen(prefixes[i])) == 0)
			return 1;
	return 0;
}

static int has_line(const struct memprof_frame *f)
{
	return f->line > 0 && f->file && f->file[0] && strcmp(f->file, "??") != 0;
}

/* The innermost frame that is not the allocator's nor, with skip_runtime,
 * an interpreter, runtime or dispatch frame (util/frame_skip.h), preferring
 * one with a source line; -1 when every frame is skipped. */
static int innermost(const struct memprof_stack *s, int skip_runtime)
{
	uint32_t i;
	int first = -1;

	for (i = 0; i < s->n_frames; i++) {
		const struct memprof_frame *f = &s->frames[i];

		if (is_allocator_frame(f->name) || (skip_runtime && mp_frame_skip(f)))
			continue;
		if (first < 0)
			first = (int)i;
		if (has_line(f))
			return (int)i;
	}
	return first;
}

int mp_stack_call_site(const struct memprof_stack *s)
{
	int i;

	if (!s || s->n_frames == 0)
		return -1;
	if ((i = innermost(s, 1)) >= 0)
		return i;
	i = innermost(s, 0);
	return i < 0 ? 0 : i;
}

int mp_stack_frame_shown(const struct memprof_frame *f)
{
	return !is_allocator_frame(f->name) && !mp_frame_skip(f);
}
