/*
 * report/json_util.c - cJSON helpers shared by the JSON reports.
 */
#include "report/json_util.h"
#include "report/json_stream.h"
#include "util/error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int mp_json_write(FILE *out, const cJSON *root)
{
	struct mp_jstream j;
	char *text = cJSON_Print(root);
	int rc;

	if (!text || mp_jstream_init(&j, out) < 0) {
		free(text);
		return MP_ENOMEM;
	}
	mp_jstream_json(&j, text, strlen(text));
	mp_jstream_lit(&j, "\n");
	free(text);
	rc = mp_jstream_flush(&j);
	mp_jstream_free(&j);
	return rc < 0 ? MP_EIO : 0;
}

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
