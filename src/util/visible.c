/*
 * util/visible.c - control characters and bytes that are not UTF-8 shown
 * as \xNN, for text that reaches a terminal: a filter over a FILE (a
 * fopencookie stream holding a sequence cut between two writes) and the
 * same for one buffer.  Prints nothing of its own.
 */
#include "util/visible.h"
#include "util/utf8.h"

#include <stdlib.h>
#include <string.h>

struct visible {
	FILE *out;
	unsigned char held[4]; /* the start of a sequence cut by the last write */
	size_t n_held;
	int failed;
};

/* A valid sequence a terminal would obey: C1 controls (U+0080..U+009F) and
 * the bidirectional embeddings, overrides and isolates. */
static int is_control(const unsigned char *p, size_t len)
{
	if (len == 2)
		return p[0] == 0xc2 && p[1] <= 0x9f;
	if (len == 3 && p[0] == 0xe2 && p[1] == 0x80)
		return p[2] >= 0xaa && p[2] <= 0xae;
	if (len == 3 && p[0] == 0xe2 && p[1] == 0x81)
		return p[2] >= 0xa6 && p[2] <= 0xa9;
	return 0;
}

static int put_hex(FILE *out, const unsigned char *p, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < len; i++) {
		char e[4] = {'\\', 'x', hex[p[i] >> 4], hex[p[i] & 15]};

		if (fwrite(e, 1, 4, out) != 4)
			return -1;
	}
	return 0;
}

/* Write what of s is complete; returns how many bytes at the end are the
 * cut start of a sequence (only when hold is set), or -1 on error. */
static long filter(FILE *out, const unsigned char *s, size_t n, int hold)
{
	const unsigned char *p = s, *end = s + n, *run = s;

	while (p < end) {
		size_t len = 1;
		int kind = MP_UTF8_VALID, hide;

		if (*p >= 0x80)
			len = mp_utf8_seq(p, (size_t)(end - p), &kind);
		if (kind == MP_UTF8_CUT && hold)
			break;
		hide = *p < 0x80 ? (*p < 0x20 && *p != '\n' && *p != '\t') || *p == 0x7f
		                 : kind != MP_UTF8_VALID || is_control(p, len);
		if (hide) {
			if (fwrite(run, 1, (size_t)(p - run), out) != (size_t)(p - run) ||
			    put_hex(out, p, len) < 0)
				return -1;
			run = p + len;
		}
		p += len;
	}
	if (fwrite(run, 1, (size_t)(p - run), out) != (size_t)(p - run))
		return -1;
	return (long)(end - p);
}

int mp_visible_write(FILE *out, const char *s, size_t n)
{
	return filter(out, (const unsigned char *)s, n, 0) < 0 ? -1 : 0;
}

/* The held start of a sequence, completed (or ended) by the first bytes of
 * buf; returns how many bytes of buf it took, or -1 on error. */
static long finish_held(struct visible *v, const char *buf, size_t size)
{
	unsigned char j[4];
	size_t m = v->n_held, take = 0, len;
	int kind;

	memcpy(j, v->held, m);
	while (m < sizeof(j) && take < size)
		j[m++] = (unsigned char)buf[take++];
	len = mp_utf8_seq(j, m, &kind);
	if (kind == MP_UTF8_CUT) { /* still cut: every byte of buf is held */
		memcpy(v->held, j, m);
		v->n_held = m;
		return (long)size;
	}
	if (filter(v->out, j, len, 0) < 0)
		return -1;
	take = len - v->n_held; /* a sequence ends after the held bytes */
	v->n_held = 0;
	return (long)take;
}

static ssize_t cookie_write(void *cookie, const char *buf, size_t size)
{
	struct visible *v = cookie;
	long take = 0, left;

	if (!v->failed && v->n_held)
		take = finish_held(v, buf, size);
	if (v->failed || take < 0)
		return v->failed = 1, -1;
	if (v->n_held) /* still cut */
		return (ssize_t)size;
	left = filter(v->out, (const unsigned char *)buf + take, size - (size_t)take, 1);
	if (left < 0 || left > 3)
		return v->failed = 1, -1;
	memcpy(v->held, buf + size - (size_t)left, (size_t)left);
	v->n_held = (size_t)left;
	return (ssize_t)size;
}

static int cookie_close(void *cookie)
{
	struct visible *v = cookie;
	int rc = v->failed ? -1 : 0;

	if (rc == 0 && v->n_held && filter(v->out, v->held, v->n_held, 0) < 0)
		rc = -1;
	if (fflush(v->out) != 0 || ferror(v->out))
		rc = -1;
	free(v);
	return rc;
}

FILE *mp_visible_open(FILE *out)
{
	cookie_io_functions_t io = {.write = cookie_write, .close = cookie_close};
	struct visible *v = calloc(1, sizeof(*v));
	FILE *f;

	if (!v)
		return NULL;
	v->out = out;
	if (!(f = fopencookie(v, "w", io)))
		free(v);
	return f;
}
