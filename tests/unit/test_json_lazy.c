/*
 * tests/unit/test_json_lazy.c - src/report/json_lazy: a tree whose arrays
 * are made item by item while written comes out byte for byte as
 * mp_json_write prints the same tree built in full, at every depth, for
 * empty arrays, nested objects and arrays inside the items, and strings
 * holding escaped newlines and tabs; an item function's error stops the
 * write with its code.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/json_lazy.h"
#include "report/json_util.h"
#include "util/error.h"

/* Item i of a test array: an object with nested members, n items (a). */
static cJSON *make_item(size_t i)
{
	cJSON *o = cJSON_CreateObject(), *in, *arr;

	mp_json_add_int(o, "i", (int64_t)i);
	cJSON_AddStringToObject(o, "text", "line\none\ttab \"q\" \x01");
	cJSON_AddNumberToObject(o, "ratio", 1.0 / (double)(i + 3));
	in = cJSON_AddObjectToObject(o, "inner");
	cJSON_AddNullToObject(in, "none");
	arr = cJSON_AddArrayToObject(in, "list");
	cJSON_AddItemToArray(arr, cJSON_CreateNumber((double)i));
	cJSON_AddItemToArray(arr, cJSON_CreateObject());
	cJSON_AddItemToArray(arr, cJSON_CreateString("x"));
	cJSON_AddObjectToObject(o, "empty");
	return o;
}

static int items(const void *a, const void *b, size_t i, cJSON **item)
{
	(void)b;
	if (i >= *(const size_t *)a)
		return 0;
	*item = make_item(i);
	return 1;
}

static int numbers(const void *a, const void *b, size_t i, cJSON **item)
{
	(void)b;
	if (i >= *(const size_t *)a)
		return 0;
	*item = cJSON_CreateNumber((double)i * 0.5);
	return 1;
}

static int failing(const void *a, const void *b, size_t i, cJSON **item)
{
	(void)a;
	(void)b;
	if (i == 2)
		return MP_EFORMAT;
	*item = cJSON_CreateNumber((double)i);
	return 1;
}

/* What f writes, in a malloc'd text. */
static char *written(FILE *f)
{
	long n;
	char *t;

	fflush(f);
	n = ftell(f);
	cr_assert_geq(n, 0);
	t = calloc(1, (size_t)n + 1);
	rewind(f);
	cr_assert_eq(fread(t, 1, (size_t)n, f), (size_t)n);
	return t;
}

static void add_full(cJSON *o, const char *key, size_t n, int nums)
{
	cJSON *arr = cJSON_AddArrayToObject(o, key);
	size_t i;

	for (i = 0; i < n; i++)
		cJSON_AddItemToArray(arr,
		                     nums ? cJSON_CreateNumber((double)i * 0.5) : make_item(i));
}

/*
 * The same shape twice: lazy when lz is set, else in full.  Lazy arrays at
 * depth 1, inside an array's object (depth 3) and deeper (depth 5).
 */
static cJSON *tree(struct mp_json_lazy *lz, const size_t *n)
{
	cJSON *root = cJSON_CreateObject(), *devs, *d, *deep;
	int k;

	mp_json_add_int(root, "version", 3);
	if (lz)
		mp_json_add_lazy_array(root, "top", lz, items, &n[0], NULL);
	else
		add_full(root, "top", n[0], 0);
	devs = cJSON_AddArrayToObject(root, "devices");
	for (k = 0; k < 2; k++) {
		d = cJSON_CreateObject();
		mp_json_add_int(d, "device", k);
		if (lz)
			mp_json_add_lazy_array(d, "steps", lz, items, &n[1 + k], NULL);
		else
			add_full(d, "steps", n[1 + k], 0);
		deep = cJSON_AddObjectToObject(cJSON_AddObjectToObject(d, "a"), "b");
		if (lz)
			mp_json_add_lazy_array(deep, "nums", lz, numbers, &n[3], NULL);
		else
			add_full(deep, "nums", n[3], 1);
		cJSON_AddStringToObject(deep, "after", "end");
		cJSON_AddItemToArray(devs, d);
	}
	cJSON_AddBoolToObject(root, "last", 1);
	return root;
}

static void expect_same(const size_t *n)
{
	struct mp_json_lazy lz;
	cJSON *full = tree(NULL, n), *lazy;
	FILE *a = tmpfile(), *b = tmpfile();
	char *ta, *tb;

	mp_json_lazy_init(&lz);
	lazy = tree(&lz, n);
	cr_assert(a && b);
	cr_assert_eq(mp_json_write(a, full), 0);
	cr_assert_eq(mp_json_lazy_write(b, lazy, &lz), 0);
	ta = written(a);
	tb = written(b);
	cr_expect_str_eq(tb, ta, "items %zu %zu %zu %zu", n[0], n[1], n[2], n[3]);
	free(ta);
	free(tb);
	fclose(a);
	fclose(b);
	cJSON_Delete(full);
	cJSON_Delete(lazy);
	mp_json_lazy_free(&lz);
}

Test(json_lazy, same_bytes_as_the_full_tree)
{
	static const size_t cases[][4] = {
	        {0, 0, 0, 0}, {1, 0, 1, 0}, {3, 2, 0, 5}, {0, 7, 1, 1}, {40, 33, 20, 100}};
	size_t c;

	for (c = 0; c < sizeof(cases) / sizeof(cases[0]); c++)
		expect_same(cases[c]);
}

Test(json_lazy, an_item_error_stops_the_write)
{
	struct mp_json_lazy lz;
	cJSON *root = cJSON_CreateObject();
	FILE *f = tmpfile();

	cr_assert_not_null(f);
	mp_json_lazy_init(&lz);
	mp_json_add_lazy_array(root, "broken", &lz, failing, NULL, NULL);
	cr_expect_eq(mp_json_lazy_write(f, root, &lz), MP_EFORMAT);
	fclose(f);
	cJSON_Delete(root);
	mp_json_lazy_free(&lz);
}
