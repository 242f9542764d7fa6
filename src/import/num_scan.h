/*
 * import/num_scan.h - decimal and hex digits parsed 16 bytes at a time (SSE2)
 * for the text importers' fast paths, byte by byte elsewhere.  Each reads
 * the 16 bytes from p, and mp_scan_dec also the 16 before p: the caller's
 * buffer must hold them (their contents do not matter).  They only count
 * and convert: which lengths are valid is the caller's choice.
 */
#ifndef MP_IMPORT_NUM_SCAN_H
#define MP_IMPORT_NUM_SCAN_H

#include <stdint.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

/* Hex digit values plus one; 0 for other bytes. */
static const unsigned char mp_scan_hexval1[256] = {
        ['0'] = 1,  ['1'] = 2,  ['2'] = 3,  ['3'] = 4,  ['4'] = 5,  ['5'] = 6,
        ['6'] = 7,  ['7'] = 8,  ['8'] = 9,  ['9'] = 10, ['a'] = 11, ['b'] = 12,
        ['c'] = 13, ['d'] = 14, ['e'] = 15, ['f'] = 16, ['A'] = 11, ['B'] = 12,
        ['C'] = 13, ['D'] = 14, ['E'] = 15, ['F'] = 16,
};

/*
 * The number of hex digits at p, at most 16, or 17 when there are more;
 * for 1 to 16, *out is their value.
 */
static inline int mp_scan_hex(const char *p, uint64_t *out)
{
#ifdef __SSE2__
	const __m128i b = _mm_loadu_si128((const __m128i *)(const void *)p);
	const __m128i dig = _mm_sub_epi8(b, _mm_set1_epi8('0'));
	const __m128i let = _mm_sub_epi8(_mm_or_si128(b, _mm_set1_epi8(0x20)), _mm_set1_epi8('a'));
	const __m128i is_dig = _mm_cmpeq_epi8(_mm_min_epu8(dig, _mm_set1_epi8(9)), dig);
	const __m128i is_let = _mm_cmpeq_epi8(_mm_min_epu8(let, _mm_set1_epi8(5)), let);
	__m128i v, pairs;
	uint64_t all;
	int n = __builtin_ctz(~(unsigned)_mm_movemask_epi8(_mm_or_si128(is_dig, is_let)));

	if (n == 0 || n == 16) {
		if (n == 16 && mp_scan_hexval1[(unsigned char)p[16]])
			return 17;
		if (n == 0)
			return 0;
	}
	/* each byte its digit's value (0 past the digits); then the pairs in bytes */
	v = _mm_or_si128(_mm_and_si128(is_dig, dig),
	                 _mm_and_si128(is_let, _mm_add_epi8(let, _mm_set1_epi8(10))));
	pairs = _mm_and_si128(_mm_or_si128(_mm_slli_epi16(v, 4), _mm_srli_epi16(v, 8)),
	                      _mm_set1_epi16(0xff));
	all = __builtin_bswap64((uint64_t)_mm_cvtsi128_si64(_mm_packus_epi16(pairs, pairs)));
	*out = all >> (4 * (16 - n)); /* the first n of the 16 nibbles */
	return n;
#else
	uint64_t v = 0;
	unsigned d;
	int n = 0;

	while (n < 17 && (d = mp_scan_hexval1[(unsigned char)p[n]] - 1u) < 16) {
		v = v << 4 | d;
		n++;
	}
	*out = v;
	return n;
#endif
}

/*
 * The number of decimal digits at p, at most 16, or 17 when there are
 * more; for 0 to 16, *out is their value (0 for none).
 */
static inline int mp_scan_dec(const char *p, uint64_t *out)
{
#ifdef __SSE2__
	static const unsigned char keep_last[32] = {
	        0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,
	        0,    0,    0,    0,    0,    0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	        0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	};
	const __m128i zero = _mm_set1_epi8('0'), nine = _mm_set1_epi8(9);
	const __m128i d = _mm_sub_epi8(_mm_loadu_si128((const __m128i *)(const void *)p), zero);
	int n = __builtin_ctz(
	        ~(unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_min_epu8(d, nine), d)));
	__m128i v, t;
	uint64_t halves;

	if ((unsigned)(n - 2) > 13) { /* none, one or 16: one test for the three */
		if (n < 2) {          /* none or one: no vector work */
			*out = n ? (unsigned)(p[0] - '0') : 0;
			return n;
		}
		if ((unsigned)(p[16] - '0') < 10)
			return 17;
	}
	/* the n digits at the end of 16 bytes, zeros before them */
	v = _mm_and_si128(
	        _mm_sub_epi8(_mm_loadu_si128((const __m128i *)(const void *)(p + n - 16)), zero),
	        _mm_loadu_si128((const __m128i *)(const void *)(keep_last + n)));
	t = _mm_add_epi16(
	        _mm_mullo_epi16(_mm_and_si128(v, _mm_set1_epi16(0xff)), _mm_set1_epi16(10)),
	        _mm_srli_epi16(v, 8));                          /* 8 x 2 digits */
	t = _mm_madd_epi16(t, _mm_set1_epi32(1 << 16 | 100));   /* 4 x 4 digits */
	t = _mm_packs_epi32(t, t);                              /* as 16-bit lanes */
	t = _mm_madd_epi16(t, _mm_set1_epi32(1 << 16 | 10000)); /* 2 x 8 digits */
	halves = (uint64_t)_mm_cvtsi128_si64(t);
	*out = (halves & 0xffffffffu) * 100000000u + (halves >> 32);
	return n;
#else
	uint64_t v = 0;
	unsigned d;
	int n = 0;

	while (n < 17 && (d = (unsigned)(unsigned char)p[n] - '0') < 10) {
		v = v * 10 + d;
		n++;
	}
	*out = v;
	return n;
#endif
}

#endif
