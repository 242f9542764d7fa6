/*
 * util/utf8.h - where UTF-8 sequences start and end, by RFC 3629 (no
 * overlong forms, no surrogates, nothing past U+10FFFF).  The one reading
 * of UTF-8 that the JSON writer (report/json_stream) and the terminal text
 * filter (util/visible) share.  Pure.
 */
#ifndef MP_UTIL_UTF8_H
#define MP_UTIL_UTF8_H

#include <stddef.h>

enum { MP_UTF8_INVALID = 0, MP_UTF8_VALID = 1, MP_UTF8_CUT = 2 };

/*
 * The sequence at s (n >= 1 bytes left, s[0] >= 0x80): its length, with
 * *kind MP_UTF8_VALID, or MP_UTF8_INVALID for its maximal subpart (at least
 * one byte, each replaced by one U+FFFD as Unicode recommends), or
 * MP_UTF8_CUT when the n bytes are a valid start that n cut short (more
 * bytes may complete it).
 */
size_t mp_utf8_seq(const unsigned char *s, size_t n, int *kind);

#endif
