/*
 * report/html.h - the one HTML escaper every report string goes through,
 * for element text and attribute values alike, and a bounded text buffer
 * to compose tooltips (data-tip) in.  Escaping, byte by byte:
 *   & < > " '            as &amp; &lt; &gt; &quot; &#39;
 *   line feed            as &#10; (a line break in a tooltip)
 *   other C0 controls, DEL and bytes that are not UTF-8
 *                        as the visible text \xNN
 * so the output holds no markup from a trace and is valid UTF-8.
 */
#ifndef MP_REPORT_HTML_H
#define MP_REPORT_HTML_H

#include <stddef.h>
#include <stdio.h>

/* Write len bytes of s escaped; s NULL writes nothing. */
void mp_html_escape_n(FILE *out, const char *s, size_t len);
void mp_html_escape(FILE *out, const char *s);

/* At most max_chars characters of s escaped, and "..." when cut (never
 * inside a UTF-8 sequence). */
void mp_html_escape_cut(FILE *out, const char *s, size_t max_chars);

#define MP_HTML_TEXT_MAX 16384

/* Text composed before it is escaped; what does not fit is cut, ending in "...". */
struct mp_html_text {
	char buf[MP_HTML_TEXT_MAX];
	size_t len;
	int cut;
};

void mp_html_text_reset(struct mp_html_text *t);
void mp_html_text_add(struct mp_html_text *t, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)));

/* ' data-tip="TEXT"', escaped: an attribute for the tooltip script. */
void mp_html_tip_attr(FILE *out, const struct mp_html_text *t);
/* '<title>TEXT</title>': the tooltip without JavaScript. */
void mp_html_title(FILE *out, const struct mp_html_text *t);

#endif
