/*
 * report/json_lazy.h - a cJSON tree written exactly as mp_json_write writes
 * it (cJSON_Print's layout), except that some of its arrays are made item
 * by item while they are written: a report whose lists grow with the trace
 * (a step per training step, an entry per OOM) holds one item of them at a
 * time, not a tree of all.  Not thread-safe.
 */
#ifndef MP_REPORT_JSON_LAZY_H
#define MP_REPORT_JSON_LAZY_H

#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdio.h>

/* Makes item i (0, 1, ... in order) of a lazy array: returns 1 with *item
 * set (the writer deletes it), 0 when the array has no item i, or a
 * negative MP_E* code. */
typedef int (*mp_json_lazy_fn)(const void *a, const void *b, size_t i, cJSON **item);

struct mp_json_lazy_src {
	mp_json_lazy_fn fn;
	const void *a, *b;
};

/* The lazy arrays of one tree. */
struct mp_json_lazy {
	struct mp_json_lazy_src *src;
	size_t n, cap;
	int failed; /* an add ran out of memory: the write fails */
};

void mp_json_lazy_init(struct mp_json_lazy *lz);
void mp_json_lazy_free(struct mp_json_lazy *lz);
/* Add to object o, under key, an array whose items fn(a, b, i, ...) makes
 * when the tree is written.  Only as a member of an object.  An error
 * (out of memory) sticks in lz and makes mp_json_lazy_write fail. */
void mp_json_add_lazy_array(cJSON *o, const char *key, struct mp_json_lazy *lz, mp_json_lazy_fn fn,
                            const void *a, const void *b);
/* root and its lazy arrays printed to out, then a newline, byte for byte
 * as mp_json_write prints the tree with the arrays built in full.
 * Returns 0, MP_ENOMEM, MP_EIO, or the code a lazy function returned. */
int mp_json_lazy_write(FILE *out, const cJSON *root, const struct mp_json_lazy *lz);

#endif
