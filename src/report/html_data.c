/*
 * report/html_data.c - base64 of doubles and JSON string literals for the
 * data-* attributes of the report's interactive views (report/html_data.h).
 * Writes what it is given and nothing else; never reads a trace.
 */
#include "report/html_data.h"
#include "util/utf8.h"

#include <stdint.h>
#include <string.h>

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static void b64_bytes(FILE *out, const unsigned char *p, size_t n)
{
	size_t i;

	for (i = 0; i + 2 < n; i += 3) {
		uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8 | p[i + 2];

		fputc(b64[v >> 18], out);
		fputc(b64[(v >> 12) & 63], out);
		fputc(b64[(v >> 6) & 63], out);
		fputc(b64[v & 63], out);
	}
	if (n - i == 1) {
		fputc(b64[p[i] >> 2], out);
		fputc(b64[(p[i] & 3) << 4], out);
		fputs("==", out);
	} else if (n - i == 2) {
		fputc(b64[p[i] >> 2], out);
		fputc(b64[((p[i] & 3) << 4) | (p[i + 1] >> 4)], out);
		fputc(b64[(p[i + 1] & 15) << 2], out);
		fputc('=', out);
	}
}

void mp_html_b64_doubles(FILE *out, const double *v, size_t n)
{
	unsigned char buf[3 * 8 * 64]; /* whole groups of 3 bytes */
	size_t i, k, used = 0;

	for (i = 0; i < n; i++) {
		uint64_t u;

		memcpy(&u, &v[i], sizeof(u));
		for (k = 0; k < 8; k++)
			buf[used++] = (unsigned char)(u >> (8 * k));
		if (used == sizeof(buf)) {
			b64_bytes(out, buf, used);
			used = 0;
		}
	}
	b64_bytes(out, buf, used);
}

void mp_html_json_string(FILE *out, const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, n;
	int kind;

	fputc('"', out);
	while (s && i < len) {
		if (p[i] == '"' || p[i] == '\\') {
			fprintf(out, "\\%c", p[i++]);
		} else if (p[i] < 0x20 || p[i] == 0x7f) {
			fprintf(out, "\\u%04x", p[i++]);
		} else if (p[i] < 0x80) {
			fputc(p[i++], out);
		} else {
			n = mp_utf8_seq(p + i, len - i, &kind);
			if (kind == MP_UTF8_VALID)
				fwrite(p + i, 1, n, out);
			else
				fputs("\\ufffd", out);
			i += n ? n : 1;
		}
	}
	fputc('"', out);
}
