/*
 * util/suggest.c - edit distance and closest-word lookup for error messages.
 */
#include "util/suggest.h"

#include <stdlib.h>
#include <string.h>

static size_t min3(size_t a, size_t b, size_t c)
{
	size_t m = a < b ? a : b;
	return m < c ? m : c;
}

size_t mp_edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), i, j, d;
	size_t *mem, *prev2, *prev, *cur, *tmp;

	if (la > 256 || lb > 256) /* command names are short; bound the work */
		return la > lb ? la : lb;
	mem = calloc(3 * (lb + 1), sizeof(size_t));
	if (!mem)
		return la > lb ? la : lb;
	prev2 = mem;
	prev = prev2 + lb + 1;
	cur = prev + lb + 1;
	for (j = 0; j <= lb; j++)
		prev[j] = j;
	for (i = 1; i <= la; i++) {
		cur[0] = i;
		for (j = 1; j <= lb; j++) {
			size_t cost = a[i - 1] != b[j - 1];

			cur[j] = min3(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost);
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
			    prev2[j - 2] + 1 < cur[j])
				cur[j] = prev2[j - 2] + 1;
		}
		tmp = prev2;
		prev2 = prev;
		prev = cur;
		cur = tmp;
	}
	d = prev[lb];
	free(mem);
	return d;
}

const char *mp_suggest(const char *word, const char *const *candidates, size_t n)
{
	const char *best = NULL, *prefixed = NULL;
	size_t best_d = (size_t)-1, limit, i, n_prefixed = 0, len = strlen(word);

	for (i = 0; i < n; i++) {
		size_t d = mp_edit_distance(word, candidates[i]);

		if (d < best_d) {
			best_d = d;
			best = candidates[i];
		}
		if (len && strncmp(word, candidates[i], len) == 0) {
			prefixed = candidates[i];
			n_prefixed++;
		}
	}
	if (n_prefixed == 1)
		return prefixed;
	limit = len / 3 > 2 ? len / 3 : 2;
	return best_d <= limit ? best : NULL;
}
