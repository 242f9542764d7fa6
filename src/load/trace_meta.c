/*
 * load/trace_meta.c - a trace's meta values read as flags and counts.
 */
#include "load/trace_meta.h"

#include <stdlib.h>
#include <string.h>

int mp_load_no_timestamps(struct mp_store *s)
{
	char *v = mp_store_get_meta(s, "timestamps");
	int none = v && strcmp(v, "none") == 0;

	free(v);
	return none;
}

int64_t mp_load_meta_int(struct mp_store *s, const char *key)
{
	char *v = mp_store_get_meta(s, key), *end = NULL;
	long long n = v ? strtoll(v, &end, 10) : 0;

	if (!v || end == v || *end != '\0' || n < 0)
		n = 0;
	free(v);
	return (int64_t)n;
}

int mp_load_meta_flag(struct mp_store *s, const char *key)
{
	char *v = mp_store_get_meta(s, key);
	int set = v && strcmp(v, "0") != 0;

	free(v);
	return set;
}
