/*
 * plugins/lib/parse.c - option-value parsers for pool plugins, and their
 * error message (parse.h).
 */
#include "parse.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const struct {
	const char *suffix;
	unsigned shift;
} units[] = {
        {"", 0},     {"B", 0},  {"K", 10},  {"KB", 10},  {"KiB", 10}, {"M", 20},  {"MB", 20},
        {"MiB", 20}, {"G", 30}, {"GB", 30}, {"GiB", 30}, {"T", 40},   {"TB", 40}, {"TiB", 40},
};

static int parse_bytes_n(const char *s, size_t len, uint64_t *out)
{
	char buf[64];

	if (len >= sizeof buf)
		return -1;
	memcpy(buf, s, len);
	buf[len] = '\0';
	return pl_parse_bytes(buf, out);
}

int pl_parse_bytes(const char *s, uint64_t *out)
{
	unsigned long long v;
	char *end;

	if (!s || !isdigit((unsigned char)*s))
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return -1;
	while (*end == ' ')
		end++;
	for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
		if (strcasecmp(end, units[i].suffix) == 0) {
			if (units[i].shift && v > (UINT64_MAX >> units[i].shift))
				return -1;
			*out = (uint64_t)v << units[i].shift;
			return 0;
		}
	}
	return -1;
}

int pl_parse_bytes_list(const char *s, uint64_t *out, size_t max_n, size_t *n)
{
	*n = 0;
	if (!s || !*s)
		return -1;
	for (const char *p = s;;) {
		const char *comma = strchr(p, ',');
		size_t len = comma ? (size_t)(comma - p) : strlen(p);
		uint64_t v;

		if (*n == max_n || parse_bytes_n(p, len, &v) < 0 || v == 0)
			return -1;
		if (*n && v <= out[*n - 1])
			return -1;
		out[(*n)++] = v;
		if (!comma)
			return 0;
		p = comma + 1;
	}
}

int pl_parse_count(const char *s, uint64_t *out)
{
	char *end;

	if (!s || !isdigit((unsigned char)*s))
		return -1;
	errno = 0;
	*out = strtoull(s, &end, 10);
	return errno || *end ? -1 : 0;
}

int pl_parse_ratio(const char *s, double lo, double hi, double *out)
{
	char *end;
	double v;

	if (!s || !*s || isspace((unsigned char)*s))
		return -1;
	errno = 0;
	v = strtod(s, &end);
	if (end != s && end[0] == '%' && end[1] == '\0')
		v /= 100.0, end++; /* "15%" is 0.15 */
	if (errno || end == s || *end || !isfinite(v) || v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

int pl_parse_switch(const char *s, int *out)
{
	static const char *const on[] = {"on", "1", "true", "yes", NULL};
	static const char *const off[] = {"off", "0", "false", "no", NULL};

	if (pl_parse_choice(s, on) >= 0)
		*out = 1;
	else if (pl_parse_choice(s, off) >= 0)
		*out = 0;
	else
		return -1;
	return 0;
}

int pl_parse_choice(const char *s, const char *const *choices)
{
	for (int i = 0; s && choices[i]; i++)
		if (!strcmp(s, choices[i]))
			return i;
	return -1;
}

/* Whether text matches pattern; backtracking over '*', linear for one star. */
static int glob_at(const char *p, const char *t)
{
	const char *star = NULL, *resume = NULL;

	while (*t) {
		if (*p == '*') {
			star = p++;
			resume = t;
		} else if (*p == '?' || *p == *t) {
			p++;
			t++;
		} else if (star) {
			p = star + 1;
			t = ++resume;
		} else {
			return 0;
		}
	}
	while (*p == '*')
		p++;
	return *p == '\0';
}

int pl_glob(const char *pattern, const char *text, const char **cap, size_t *cap_len)
{
	const char *star;
	size_t pre;

	if (!pattern || !text || !glob_at(pattern, text))
		return 0;
	*cap = text;
	*cap_len = strlen(text);
	if (!(star = strchr(pattern, '*')))
		return 1;
	pre = (size_t)(star - pattern); /* the prefix matched character for character */
	for (size_t len = 0; pre + len <= strlen(text); len++) {
		/* the shortest run for the first star that still lets the rest match */
		if (glob_at(star + 1, text + pre + len)) {
			*cap = text + pre;
			*cap_len = len;
			return 1;
		}
	}
	return 1;
}

int pl_bad_option(const struct memprof_pool_host *host, const char *name, const char *value,
                  const char *why)
{
	host->log(host->ctx, MEMPROF_POOL_LOG_ERROR, "bad option '%s=%s': %s", name ? name : "",
	          value ? value : "", why);
	return MEMPROF_POOL_EINVAL;
}
