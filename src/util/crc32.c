/*
 * util/crc32.c - CRC-32 (IEEE, reflected polynomial 0xedb88320), eight bytes
 * at a time ("slicing by 8") from tables built once on first use; the first
 * table the preprocessor builds.  Big-endian machines go a byte at a time.
 */
#include "util/crc32.h"

#include <pthread.h>
#include <string.h>

#define P      0xedb88320u
#define C1(c)  (((c)&1) ? ((c) >> 1) ^ P : (c) >> 1)
#define C8(c)  C1(C1(C1(C1(C1(C1(C1(C1(c))))))))
#define R4(n)  C8(n), C8(n + 1), C8(n + 2), C8(n + 3)
#define R16(n) R4(n), R4(n + 4), R4(n + 8), R4(n + 12)
#define R64(n) R16(n), R16(n + 16), R16(n + 32), R16(n + 48)

/* table[b]: the CRC register after shifting in byte b from zero. */
static const uint32_t table[256] = {R64(0u), R64(64u), R64(128u), R64(192u)};

/* slice[k][b]: byte b followed by k zero bytes. */
static uint32_t slice[8][256];
static pthread_once_t slice_once = PTHREAD_ONCE_INIT;

static void build_slices(void)
{
	int k, b;

	for (b = 0; b < 256; b++)
		slice[0][b] = table[b];
	for (k = 1; k < 8; k++)
		for (b = 0; b < 256; b++)
			slice[k][b] = (slice[k - 1][b] >> 8) ^ table[slice[k - 1][b] & 0xff];
}

uint32_t mp_crc32(uint32_t crc, const void *p, size_t n)
{
	const unsigned char *s = p;

	crc = ~crc;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	pthread_once(&slice_once, build_slices);
	while (n >= 8) {
		uint32_t lo, hi;

		memcpy(&lo, s, 4);
		memcpy(&hi, s + 4, 4);
		lo ^= crc;
		crc = slice[7][lo & 0xff] ^ slice[6][(lo >> 8) & 0xff] ^ slice[5][(lo >> 16) & 0xff] ^
		      slice[4][lo >> 24] ^ slice[3][hi & 0xff] ^ slice[2][(hi >> 8) & 0xff] ^
		      slice[1][(hi >> 16) & 0xff] ^ slice[0][hi >> 24];
		s += 8;
		n -= 8;
	}
#endif
	while (n--)
		crc = table[(crc ^ *s++) & 0xff] ^ (crc >> 8);
	return ~crc;
}
