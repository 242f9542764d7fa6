/*
 * live/text.h - a growing text buffer the renderers write into.  After an
 * allocation failure every later append is a no-op and failed is set, so a
 * renderer checks once at the end.  Not thread-safe.
 */
#ifndef MP_LIVE_TEXT_H
#define MP_LIVE_TEXT_H

#include <stddef.h>

struct mp_live_text {
	char *p;  /* NUL-terminated once anything was appended; NULL before */
	size_t n; /* bytes, NUL not counted */
	size_t cap;
	int failed; /* out of memory: the text is incomplete */
};

/* Append printf-style; returns 0 or MP_ENOMEM. */
int mp_live_printf(struct mp_live_text *t, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)));
int mp_live_append(struct mp_live_text *t, const char *s, size_t n);
/* Empty it (keeps the memory). */
void mp_live_text_clear(struct mp_live_text *t);
void mp_live_text_free(struct mp_live_text *t);

#endif
