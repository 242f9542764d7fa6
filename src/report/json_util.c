/*
 * report/json_util.c - cJSON helpers shared by the JSON reports.
 */
#include "report/json_util.h"

#include <stdio.h>

void mp_json_add_int(cJSON *o, const char *key, int64_t v)
{
	char num[24];

	snprintf(num, sizeof(num), "%lld", (long long)v);
	cJSON_AddRawToObject(o, key, num);
}

void mp_json_add_known(cJSON *o, const char *key, int64_t v)
{
	if (v < 0)
		cJSON_AddNullToObject(o, key);
	else
		mp_json_add_int(o, key, v);
}

cJSON *mp_json_frames(const struct memprof_stack *s)
{
	cJSON *a = cJSON_CreateArray();
	uint32_t i;

	for (i = 0; s && i < s->n_frames; i++) {
		cJSON *f = cJSON_CreateObject();

		cJSON_AddStringToObject(f, "name", s->frames[i].name);
		cJSON_AddStringToObject(f, "file", s->frames[i].file);
		mp_json_add_int(f, "line", s->frames[i].line);
		cJSON_AddItemToArray(a, f);
	}
	return a;
}
