/*
 * util/crc32.h - CRC-32 (IEEE 802.3, the polynomial and value of zlib's
 * crc32), table-driven.  Depends on nothing; safe from any thread.
 */
#ifndef MP_UTIL_CRC32_H
#define MP_UTIL_CRC32_H

#include <stddef.h>
#include <stdint.h>

/*
 * The CRC of n bytes at p, continuing from crc (0 to start): the same
 * value as zlib's crc32(crc, p, n).  "123456789" gives 0xcbf43926.
 */
uint32_t mp_crc32(uint32_t crc, const void *p, size_t n);

#endif
