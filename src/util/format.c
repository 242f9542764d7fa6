/*
 * util/format.c - byte and duration formatting.  Stateless.
 */
#include "util/format.h"

#include <stdio.h>

char *mp_format_bytes(char *buf, size_t n, int64_t bytes)
{
	static const char *const units[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
	double v = bytes < 0 ? -(double)bytes : (double)bytes; /* -INT64_MIN overflows */
	const char *sign = bytes < 0 ? "-" : "";
	int u = -1;

	if (v < 1024) {
		snprintf(buf, n, "%lld B", (long long)bytes);
		return buf;
	}
	while (v >= 1024 && u < 5) {
		v /= 1024;
		u++;
	}
	snprintf(buf, n,
	         v < 10    ? "%s%.2f %s"
	         : v < 100 ? "%s%.1f %s"
	                   : "%s%.0f %s",
	         sign, v, units[u]);
	return buf;
}

char *mp_format_duration(char *buf, size_t n, int64_t ns)
{
	double v = (double)ns;

	if (ns < 0)
		v = -v;
	if (v < 1e3)
		snprintf(buf, n, "%lld ns", (long long)ns);
	else if (v < 1e6)
		snprintf(buf, n, "%.3g us", (double)ns / 1e3);
	else if (v < 1e9)
		snprintf(buf, n, "%.3g ms", (double)ns / 1e6);
	else
		snprintf(buf, n, "%.3f s", (double)ns / 1e9);
	return buf;
}
