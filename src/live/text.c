/*
 * live/text.c - the growing text buffer of the live renderers: appends,
 * printf, and a sticky out-of-memory flag.  Nothing else.
 */
#include "live/text.h"
#include "util/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int grow(struct mp_live_text *t, size_t more)
{
	size_t cap = t->cap ? t->cap : 256;
	char *p;

	if (t->failed)
		return MP_ENOMEM;
	if (t->n + more + 1 <= t->cap)
		return 0;
	while (cap < t->n + more + 1)
		cap *= 2;
	if (!(p = realloc(t->p, cap))) {
		t->failed = 1;
		return MP_ENOMEM;
	}
	t->p = p;
	t->cap = cap;
	return 0;
}

int mp_live_append(struct mp_live_text *t, const char *s, size_t n)
{
	if (grow(t, n) < 0)
		return MP_ENOMEM;
	memcpy(t->p + t->n, s, n);
	t->n += n;
	t->p[t->n] = '\0';
	return 0;
}

int mp_live_printf(struct mp_live_text *t, const char *fmt, ...)
{
	va_list ap;
	int k;

	if (grow(t, 0) < 0)
		return MP_ENOMEM;
	va_start(ap, fmt);
	k = vsnprintf(t->p + t->n, t->cap - t->n, fmt, ap);
	va_end(ap);
	if (k < 0) {
		t->failed = 1;
		return MP_ENOMEM;
	}
	if ((size_t)k >= t->cap - t->n) {
		if (grow(t, (size_t)k) < 0)
			return MP_ENOMEM;
		va_start(ap, fmt);
		vsnprintf(t->p + t->n, t->cap - t->n, fmt, ap);
		va_end(ap);
	}
	t->n += (size_t)k;
	return 0;
}

void mp_live_text_clear(struct mp_live_text *t)
{
	t->n = 0;
	t->failed = 0;
	if (t->p)
		t->p[0] = '\0';
}

void mp_live_text_free(struct mp_live_text *t)
{
	free(t->p);
	memset(t, 0, sizeof(*t));
}
