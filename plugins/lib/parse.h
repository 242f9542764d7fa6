/*
 * plugins/lib/parse.h - option-value parsers shared by the pool plugins
 * (plugins link nothing of memprof, so they cannot use src/util/parse):
 * byte sizes with binary units, lists of sizes, ratios, counts, and a glob
 * match that captures what its first '*' matched.  Return 0, or -1 when the
 * text is not one; they never print.  pl_bad_option logs the one error
 * message pools give for an option they refuse.
 */
#ifndef MEMPROF_PLUGIN_LIB_PARSE_H
#define MEMPROF_PLUGIN_LIB_PARSE_H

#include <stddef.h>
#include <stdint.h>

#include "memprof/pool.h"

/* "123", "64KiB", "20 MiB", "2G", "1k": binary units (K = KiB).  */
int pl_parse_bytes(const char *s, uint64_t *out);
/*
 * "64,256,1KiB": sizes in strictly increasing order, at most max_n of them,
 * into out[]; *n how many.
 */
int pl_parse_bytes_list(const char *s, uint64_t *out, size_t max_n, size_t *n);
/* A decimal count: digits only. */
int pl_parse_count(const char *s, uint64_t *out);
/* A number in [lo, hi] ("0.3", "1e-2"), or the same as a percentage
 * ("30%"). */
int pl_parse_ratio(const char *s, double lo, double hi, double *out);
/* "on"/"off"/"1"/"0"/"true"/"false"/"yes"/"no". */
int pl_parse_switch(const char *s, int *out);
/* Which of choices[] (NULL-terminated) s is; -1 when none. */
int pl_parse_choice(const char *s, const char *const *choices);

/*
 * Whether text matches the glob pattern ('*' any run, '?' one character,
 * everything else itself).  When it does and the pattern has a '*', *cap
 * and *cap_len give the text the first '*' matched (the shortest such run);
 * otherwise the whole text.
 */
int pl_glob(const char *pattern, const char *text, const char **cap, size_t *cap_len);

/* Log "bad option 'name=value': why" as an error; returns MEMPROF_POOL_EINVAL. */
int pl_bad_option(const struct memprof_pool_host *host, const char *name, const char *value,
                  const char *why);

#endif
