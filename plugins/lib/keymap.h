/*
 * plugins/lib/keymap.h - a hash map from byte strings (a call site, a
 * phase, a site and a size) to 64-bit values, for pool plugins that key
 * buffers, recurring allocations or parameter/gradient pairs by what the
 * trace says about a request.  Keys are copied.  Not thread-safe.
 */
#ifndef MEMPROF_PLUGIN_LIB_KEYMAP_H
#define MEMPROF_PLUGIN_LIB_KEYMAP_H

#include <stddef.h>
#include <stdint.h>

struct pl_keymap_slot;

struct pl_keymap {
	struct pl_keymap_slot *slots;
	size_t n, cap; /* cap: 0 or a power of two */
};

void pl_keymap_init(struct pl_keymap *m);
void pl_keymap_free(struct pl_keymap *m);
/* 1 and *value when key is there; 0 when not. */
int pl_keymap_get(const struct pl_keymap *m, const void *key, size_t len, uint64_t *value);
/* Insert or replace; 0, or -1 when out of memory. */
int pl_keymap_put(struct pl_keymap *m, const void *key, size_t len, uint64_t value);

/* A key of text and a number (site and size), written into buf; its length. */
size_t pl_key_text_u64(char *buf, size_t buf_len, const char *text, uint64_t v);

#endif
