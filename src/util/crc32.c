/*
 * util/crc32.c - CRC-32 (IEEE, reflected polynomial 0xedb88320), a byte at
 * a time from a 256-entry table the preprocessor builds.  No state, no locks.
 */
#include "util/crc32.h"

#define P      0xedb88320u
#define C1(c)  (((c)&1) ? ((c) >> 1) ^ P : (c) >> 1)
#define C8(c)  C1(C1(C1(C1(C1(C1(C1(C1(c))))))))
#define R4(n)  C8(n), C8(n + 1), C8(n + 2), C8(n + 3)
#define R16(n) R4(n), R4(n + 4), R4(n + 8), R4(n + 12)
#define R64(n) R16(n), R16(n + 16), R16(n + 32), R16(n + 48)

/* table[b]: the CRC register after shifting in byte b from zero. */
static const uint32_t table[256] = {R64(0u), R64(64u), R64(128u), R64(192u)};

uint32_t mp_crc32(uint32_t crc, const void *p, size_t n)
{
	const unsigned char *s = p;

	crc = ~crc;
	while (n >= 4) {
		crc = table[(crc ^ s[0]) & 0xff] ^ (crc >> 8);
		crc = table[(crc ^ s[1]) & 0xff] ^ (crc >> 8);
		crc = table[(crc ^ s[2]) & 0xff] ^ (crc >> 8);
		crc = table[(crc ^ s[3]) & 0xff] ^ (crc >> 8);
		s += 4;
		n -= 4;
	}
	while (n--)
		crc = table[(crc ^ *s++) & 0xff] ^ (crc >> 8);
	return ~crc;
}
