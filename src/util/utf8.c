/*
 * util/utf8.c - the length and validity of one UTF-8 sequence (RFC 3629).
 */
#include "util/utf8.h"

size_t mp_utf8_seq(const unsigned char *s, size_t n, int *kind)
{
	unsigned char lo = 0x80, hi = 0xbf;
	size_t len, i;

	*kind = MP_UTF8_INVALID;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4;
	else
		return 1;
	if (s[0] == 0xe0)
		lo = 0xa0;
	else if (s[0] == 0xed)
		hi = 0x9f;
	else if (s[0] == 0xf0)
		lo = 0x90;
	else if (s[0] == 0xf4)
		hi = 0x8f;
	for (i = 1; i < len; i++) {
		if (i >= n) {
			*kind = MP_UTF8_CUT;
			return i;
		}
		if (s[i] < (i == 1 ? lo : 0x80) || s[i] > (i == 1 ? hi : 0xbf))
			return i;
	}
	*kind = MP_UTF8_VALID;
	return len;
}
