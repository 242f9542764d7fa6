/*
 * util/format.h - human-readable numbers for reports and messages.
 */
#ifndef MP_UTIL_FORMAT_H
#define MP_UTIL_FORMAT_H

#include <stddef.h>
#include <stdint.h>

/* "1.50 GiB", "512 B": binary units, three significant digits. Returns buf. */
char *mp_format_bytes(char *buf, size_t n, int64_t bytes);
/* "1.234 s", "12.5 ms", "800 ns". Returns buf. */
char *mp_format_duration(char *buf, size_t n, int64_t ns);

#endif
