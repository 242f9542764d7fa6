/*
 * util/suggest.h - "did you mean": the closest word from a list.
 */
#ifndef MP_UTIL_SUGGEST_H
#define MP_UTIL_SUGGEST_H

#include <stddef.h>

/* Optimal-string-alignment edit distance between a and b. */
size_t mp_edit_distance(const char *a, const char *b);

/* The candidate closest to word, or NULL when none is close enough to be a
 * plausible typo (distance above a third of the word, at least 2), or when
 * word is a prefix of exactly one candidate, that candidate. */
const char *mp_suggest(const char *word, const char *const *candidates, size_t n);

#endif
