/*
 * report/json_stream.c - JSON text piece by piece into a large buffer (a
 * printf per field is the bottleneck on 10^7 events), flushed to a FILE or
 * kept in memory.  Owns string escaping and UTF-8 repair for the JSON it
 * writes; knows nothing of what the JSON means.
 */
#include "report/json_stream.h"
#include "util/utf8.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define FILE_BUF_BYTES (1 << 20)
#define MEM_BUF_BYTES  256

int mp_jstream_init(struct mp_jstream *j, FILE *out)
{
	memset(j, 0, sizeof(*j));
	j->out = out;
	j->cap = out ? FILE_BUF_BYTES : MEM_BUF_BYTES;
	j->buf = malloc(j->cap);
	if (!j->buf) {
		j->cap = 0;
		j->failed = 1;
		j->saved_errno = ENOMEM;
		return -1;
	}
	return 0;
}

void mp_jstream_free(struct mp_jstream *j)
{
	free(j->buf);
	j->buf = NULL;
	j->len = j->cap = 0;
}

static void fail(struct mp_jstream *j, int err)
{
	if (!j->failed) {
		j->failed = 1;
		j->saved_errno = err ? err : EIO;
	}
}

static void drain(struct mp_jstream *j)
{
	if (j->len && !j->failed && fwrite(j->buf, 1, j->len, j->out) != j->len)
		fail(j, errno);
	j->len = 0;
}

/* Room for n more bytes in memory mode. */
static int grow(struct mp_jstream *j, size_t n)
{
	size_t cap = j->cap ? j->cap : MEM_BUF_BYTES;
	char *p;

	while (cap - j->len < n + 1) {
		if (cap > SIZE_MAX / 2) {
			fail(j, ENOMEM);
			return -1;
		}
		cap *= 2;
	}
	if (cap != j->cap) {
		if (!(p = realloc(j->buf, cap))) {
			fail(j, ENOMEM);
			return -1;
		}
		j->buf = p;
		j->cap = cap;
	}
	return 0;
}

void mp_jstream_raw(struct mp_jstream *j, const char *s, size_t n)
{
	if (j->failed)
		return;
	j->n_bytes += n;
	if (!j->out) {
		if (grow(j, n) == 0) {
			memcpy(j->buf + j->len, s, n);
			j->len += n;
		}
		return;
	}
	while (n) {
		size_t room = j->cap - j->len, k = n < room ? n : room;

		memcpy(j->buf + j->len, s, k);
		j->len += k;
		s += k;
		n -= k;
		if (j->len == j->cap)
			drain(j);
	}
}

void mp_jstream_u64(struct mp_jstream *j, uint64_t v)
{
	char tmp[24];
	int i = 24;

	do {
		tmp[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	mp_jstream_raw(j, tmp + i, (size_t)(24 - i));
}

void mp_jstream_i64(struct mp_jstream *j, int64_t v)
{
	if (v < 0) {
		mp_jstream_lit(j, "-");
		mp_jstream_u64(j, (uint64_t)0 - (uint64_t)v);
	} else {
		mp_jstream_u64(j, (uint64_t)v);
	}
}

void mp_jstream_hex(struct mp_jstream *j, uint64_t v)
{
	static const char digits[] = "0123456789abcdef";
	char tmp[24];
	int i = 23;

	tmp[i] = '"';
	do {
		tmp[--i] = digits[v & 15];
		v >>= 4;
	} while (v);
	tmp[--i] = 'x';
	tmp[--i] = '0';
	tmp[--i] = '"';
	mp_jstream_raw(j, tmp + i, (size_t)(24 - i));
}

void mp_jstream_ts_us(struct mp_jstream *j, int64_t ts_ns)
{
	uint64_t abs_ns = ts_ns < 0 ? (uint64_t)0 - (uint64_t)ts_ns : (uint64_t)ts_ns;
	unsigned frac = (unsigned)(abs_ns % 1000);
	char tmp[4];

	if (ts_ns < 0)
		mp_jstream_lit(j, "-");
	mp_jstream_u64(j, abs_ns / 1000);
	if (frac) {
		tmp[0] = '.';
		tmp[1] = (char)('0' + frac / 100);
		tmp[2] = (char)('0' + frac / 10 % 10);
		tmp[3] = (char)('0' + frac % 10);
		mp_jstream_raw(j, tmp, 4);
	}
}

/* The escape of an ASCII byte, or NULL when it is written as it is. */
static const char *ascii_escape(unsigned char c, char tmp[7])
{
	static const char hex[] = "0123456789abcdef";

	switch (c) {
	case '"':
		return "\\\"";
	case '\\':
		return "\\\\";
	case '\n':
		return "\\n";
	case '\r':
		return "\\r";
	case '\t':
		return "\\t";
	case '\b':
		return "\\b";
	case '\f':
		return "\\f";
	default:
		break;
	}
	if (c >= 0x20 && c != 0x7f)
		return NULL;
	memcpy(tmp, "\\u00", 4);
	tmp[4] = hex[c >> 4];
	tmp[5] = hex[c & 15];
	tmp[6] = '\0';
	return tmp;
}

/* s written with the escapes JSON strings need (json_text 0), or only those
 * that JSON text made elsewhere may lack (json_text 1: its other escapes are
 * done, and bytes >= 0x7f can only be inside its strings): the one place
 * where memprof's JSON is made valid UTF-8. */
static void escaped(struct mp_jstream *j, const char *s, size_t n, int json_text)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + n, *run = p;
	char tmp[7];

	while (p < end) {
		const char *esc = NULL;
		size_t len = 1;
		int kind;

		if (*p < 0x80) {
			if (!json_text || *p == 0x7f)
				esc = ascii_escape(*p, tmp);
		} else {
			len = mp_utf8_seq(p, (size_t)(end - p), &kind);
			esc = kind == MP_UTF8_VALID ? NULL : "\\ufffd";
		}
		if (!esc) {
			p += len;
			continue;
		}
		mp_jstream_raw(j, (const char *)run, (size_t)(p - run));
		mp_jstream_raw(j, esc, strlen(esc));
		p += len;
		run = p;
	}
	mp_jstream_raw(j, (const char *)run, (size_t)(p - run));
}

void mp_jstream_str_part(struct mp_jstream *j, const char *s, size_t n)
{
	escaped(j, s, n, 0);
}

void mp_jstream_json(struct mp_jstream *j, const char *text, size_t n)
{
	escaped(j, text, n, 1);
}

void mp_jstream_str_begin(struct mp_jstream *j)
{
	mp_jstream_lit(j, "\"");
}

void mp_jstream_str_end(struct mp_jstream *j)
{
	mp_jstream_lit(j, "\"");
}

void mp_jstream_str(struct mp_jstream *j, const char *s)
{
	if (!s) {
		mp_jstream_lit(j, "null");
		return;
	}
	mp_jstream_lit(j, "\"");
	mp_jstream_str_part(j, s, strlen(s));
	mp_jstream_lit(j, "\"");
}

int mp_jstream_flush(struct mp_jstream *j)
{
	if (j->out) {
		drain(j);
		if (!j->failed && fflush(j->out) != 0)
			fail(j, errno);
	}
	if (j->failed) {
		errno = j->saved_errno;
		return -1;
	}
	return 0;
}

char *mp_jstream_take(struct mp_jstream *j, size_t *len)
{
	char *t = j->buf;

	if (j->out || j->failed || !t)
		return NULL;
	t[j->len] = '\0';
	if (len)
		*len = j->len;
	j->buf = NULL;
	j->len = j->cap = 0;
	return t;
}
