/*
 * report/html.c - the HTML escaper of the report writers (report/html.h)
 * and the bounded text they compose tooltips in.  The only code that turns
 * a trace's bytes into HTML; it decides nothing about layout.
 */
#include "report/html.h"

#include <stdarg.h>
#include <stdint.h>
#include <string.h>

/* The length of the valid UTF-8 sequence at s (at most n bytes), or 0:
 * shortest forms only, no surrogates, nothing past U+10FFFF. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	size_t len, i;
	uint32_t c;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2, c = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3, c = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4, c = s[0] & 0x07;
	else
		return 0;
	if (len > n)
		return 0;
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (s[i] & 0x3f);
	}
	if ((len == 3 && (c < 0x800 || (c >= 0xd800 && c <= 0xdfff))) ||
	    (len == 4 && (c < 0x10000 || c > 0x10ffff)))
		return 0;
	return len;
}

void mp_html_escape_n(FILE *out, const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, k;

	if (!s)
		return;
	while (i < len) {
		unsigned char c = p[i];

		switch (c) {
		case '&':
			fputs("&amp;", out);
			break;
		case '<':
			fputs("&lt;", out);
			break;
		case '>':
			fputs("&gt;", out);
			break;
		case '"':
			fputs("&quot;", out);
			break;
		case '\'':
			fputs("&#39;", out);
			break;
		case '\n':
			fputs("&#10;", out);
			break;
		default:
			if (c < 0x20 || c == 0x7f || (k = utf8_len(p + i, len - i)) == 0) {
				fprintf(out, "\\x%02x", c);
				break;
			}
			fwrite(p + i, 1, k, out);
			i += k;
			continue;
		}
		i++;
	}
}

void mp_html_escape(FILE *out, const char *s)
{
	if (s)
		mp_html_escape_n(out, s, strlen(s));
}

void mp_html_escape_cut(FILE *out, const char *s, size_t max_chars)
{
	size_t i = 0, chars = 0, len;

	if (!s)
		return;
	len = strlen(s);
	while (i < len && chars < max_chars) {
		size_t k = utf8_len((const unsigned char *)s + i, len - i);

		i += k ? k : 1;
		chars++;
	}
	mp_html_escape_n(out, s, i);
	if (i < len)
		fputs("...", out);
}

void mp_html_text_reset(struct mp_html_text *t)
{
	t->len = 0;
	t->cut = 0;
	t->buf[0] = '\0';
}

void mp_html_text_add(struct mp_html_text *t, const char *fmt, ...)
{
	size_t room = sizeof(t->buf) - t->len;
	va_list ap;
	int w;

	if (t->cut)
		return;
	va_start(ap, fmt);
	w = vsnprintf(t->buf + t->len, room, fmt, ap);
	va_end(ap);
	if (w >= 0 && (size_t)w < room) {
		t->len += (size_t)w;
		return;
	}
	/* cut: end in "..." on a character boundary */
	t->cut = 1;
	t->len = sizeof(t->buf) - 4;
	while (t->len > 0 && ((unsigned char)t->buf[t->len] & 0xc0) == 0x80)
		t->len--;
	memcpy(t->buf + t->len, "...", 4);
	t->len += 3;
}

void mp_html_tip_attr(FILE *out, const struct mp_html_text *t)
{
	fputs(" data-tip=\"", out);
	mp_html_escape_n(out, t->buf, t->len);
	fputc('"', out);
}

void mp_html_title(FILE *out, const struct mp_html_text *t)
{
	fputs("<title>", out);
	mp_html_escape_n(out, t->buf, t->len);
	fputs("</title>", out);
}
