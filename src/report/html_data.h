/*
 * report/html_data.h - data for the report's script, carried in data-*
 * attributes: numbers as base64 of little-endian IEEE doubles (what
 * Float64Array reads on every machine a browser runs on), strings as JSON
 * whose text then goes through report/html.h's escaper like any attribute.
 */
#ifndef MP_REPORT_HTML_DATA_H
#define MP_REPORT_HTML_DATA_H

#include <stddef.h>
#include <stdio.h>

/* The n doubles of v as base64 (only A-Z a-z 0-9 + / =: no escaping needed). */
void mp_html_b64_doubles(FILE *out, const double *v, size_t n);
/* len bytes of s as a JSON string literal, quotes included: '"' and '\'
 * escaped, control characters as \u00XX, bytes that are not UTF-8 as
 * \ufffd.  s NULL writes "". */
void mp_html_json_string(FILE *out, const char *s, size_t len);

#endif
