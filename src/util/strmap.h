/*
 * util/strmap.h - interning map from byte strings to int64 values.
 *
 * Keys are copied into the map (any bytes, explicit length) and stay valid,
 * NUL-terminated, until mp_strmap_free.  Used to deduplicate names, frames
 * and stack texts.  Not thread-safe.
 */
#ifndef MP_UTIL_STRMAP_H
#define MP_UTIL_STRMAP_H

#include <stddef.h>
#include <stdint.h>

struct mp_strmap_entry;

struct mp_strmap {
	struct mp_strmap_entry **slots;
	size_t cap;
	size_t n;
};

void mp_strmap_init(struct mp_strmap *m);
void mp_strmap_free(struct mp_strmap *m);
/* Returns 1 and sets *val when key is present, else 0. */
int mp_strmap_get(const struct mp_strmap *m, const char *key, size_t len, int64_t *val);
/* The same, also giving the map's own copy of the key in *stored. */
int mp_strmap_get_key(const struct mp_strmap *m, const char *key, size_t len, int64_t *val,
                      const char **stored);
/* Insert (key must be absent).  Returns 0 or MP_ENOMEM; *stored (may be NULL)
 * receives the map's own NUL-terminated copy of the key. */
int mp_strmap_put(struct mp_strmap *m, const char *key, size_t len, int64_t val,
                  const char **stored);

#endif
