/*
 * replay/tune_setting.c - PYTORCH_CUDA_ALLOC_CONF read and written the way
 * PyTorch's CUDAAllocatorConfig reads it (c10/cuda/CUDAAllocatorConfig.cpp:
 * the text is cut into tokens at ',', ':', '[' and ']', spaces dropped;
 * sizes in MB; the list form of roundup_power2_divisions fills the
 * intervals below its first key and, with '>', those from its last key on),
 * and a snapshot's allocator_settings read through cJSON.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "replay/tune_setting.h"

#define MB         (1024ull * 1024ull)
#define MAX_TOKENS 128
#define LARGE_MB   20 /* kLargeBuffer: sizes must be more than this */

struct lex {
	char tok[MAX_TOKENS][64];
	size_t n, at;
};

static int fail(char *why, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(char *why, size_t n, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, n, fmt, ap);
	va_end(ap);
	return -1;
}

static int lex(const char *s, struct lex *L)
{
	size_t len = 0;

	L->n = L->at = 0;
	for (;; s++) {
		int sep = !*s || strchr(",:[]", *s);
		if ((sep || len == sizeof L->tok[0] - 1) && len) {
			if (L->n == MAX_TOKENS)
				return -1;
			L->tok[L->n++][len] = '\0';
			len = 0;
		}
		if (!*s)
			return 0;
		if (sep) {
			if (L->n == MAX_TOKENS)
				return -1;
			L->tok[L->n][0] = *s;
			L->tok[L->n++][1] = '\0';
		} else if (!isspace((unsigned char)*s)) {
			L->tok[L->n][len++] = *s;
		}
	}
}

static const char *next(struct lex *L)
{
	return L->at < L->n ? L->tok[L->at++] : "";
}

static int expect(struct lex *L, const char *t)
{
	return strcmp(next(L), t) == 0 ? 0 : -1;
}

static int to_u64(const char *t, uint64_t *out)
{
	char *end;

	if (!isdigit((unsigned char)*t))
		return -1;
	errno = 0;
	*out = strtoull(t, &end, 10);
	return errno || *end ? -1 : 0;
}

static int is_pow2(uint64_t v)
{
	return v && !(v & (v - 1));
}

static size_t interval_of_mb(uint64_t mb)
{
	size_t i = 63u - (unsigned)__builtin_clzll(mb);

	return i > MP_TUNE_N_INTERVALS - 1 ? MP_TUNE_N_INTERVALS - 1 : i;
}

/* "[256:1,512:2,>:4]" after the '[' (parseRoundUpPower2Divisions). */
static int parse_list(struct lex *L, struct mp_tune_setting *s)
{
	size_t last = 0;
	int first = 1;
	uint64_t key, div;

	for (;;) {
		const char *k = next(L);
		int rest = strcmp(k, ">") == 0;

		if (!rest && (to_u64(k, &key) != 0 || !is_pow2(key)))
			return -1;
		if (expect(L, ":") != 0 || to_u64(next(L), &div) != 0 || (div && !is_pow2(div)) ||
		    div > UINT32_MAX)
			return -1;
		if (rest) {
			for (size_t i = last; i < MP_TUNE_N_INTERVALS; i++)
				s->divisions[i] = (uint32_t)div;
		} else {
			size_t index = interval_of_mb(key);
			for (size_t i = 0; first && i < index; i++)
				s->divisions[i] = (uint32_t)div;
			first = 0;
			s->divisions[index] = (uint32_t)div;
			last = index;
		}
		k = next(L);
		if (strcmp(k, "]") == 0)
			return 0;
		if (strcmp(k, ",") != 0)
			return -1;
	}
}

static int parse_divisions(struct lex *L, struct mp_tune_setting *s)
{
	const char *t = next(L);
	uint64_t n;

	if (strcmp(t, "[") == 0)
		return parse_list(L, s);
	if (to_u64(t, &n) != 0 || !is_pow2(n) || n > UINT32_MAX)
		return -1;
	for (size_t i = 0; i < MP_TUNE_N_INTERVALS; i++)
		s->divisions[i] = (uint32_t)n;
	return 0;
}

static int parse_mb(struct lex *L, uint64_t *out)
{
	uint64_t mb;

	if (to_u64(next(L), &mb) != 0 || mb <= LARGE_MB || mb > UINT64_MAX / MB)
		return -1;
	*out = mb * MB;
	return 0;
}

static int parse_ratio(struct lex *L, double *out)
{
	const char *t = next(L);
	char *end;

	errno = 0;
	*out = strtod(t, &end);
	return errno || end == t || *end || !(*out > 0.0 && *out < 1.0) ? -1 : 0;
}

/* One "key:value"; *what says what the value must be when it is refused. */
static int parse_option(struct lex *L, const char *key, struct mp_tune_setting *s,
                        const char **what)
{
	const char *v;

	if (expect(L, ":") != 0)
		return *what = "a ':' and a value", -1;
	if (!strcmp(key, "max_split_size_mb") || !strcmp(key, "max_non_split_rounding_mb")) {
		*what = "a whole number of MB above 20";
		return parse_mb(L, key[4] == 's' ? &s->max_split_bytes : &s->max_non_split_bytes);
	}
	if (!strcmp(key, "garbage_collection_threshold"))
		return *what = "a number between 0 and 1", parse_ratio(L, &s->gc_threshold);
	if (!strcmp(key, "roundup_power2_divisions")) {
		*what = "a power of 2, or a list like [256:1,512:2,>:4]";
		return parse_divisions(L, s);
	}
	v = next(L);
	if (!strcmp(key, "expandable_segments")) {
		*what = "True or False";
		s->expandable = !strcmp(v, "True");
		return s->expandable || !strcmp(v, "False") ? 0 : -1;
	}
	if (!strcmp(key, "backend")) {
		*what = "native (memprof models PyTorch's own caching allocator, not "
		        "cudaMallocAsync)";
		return strcmp(v, "native") == 0 ? 0 : -1;
	}
	if (!strncmp(key, "pinned_", 7) || !strcmp(key, "release_lock_on_cudamalloc"))
		return 0; /* host memory or locking: no effect on device memory */
	*what = NULL;
	return -1;
}

int mp_tune_setting_parse(const char *conf, struct mp_tune_setting *s, char *why, size_t n_why)
{
	struct lex *L = malloc(sizeof *L);
	int rc = 0;

	memset(s, 0, sizeof *s);
	if (!L)
		return fail(why, n_why, "out of memory");
	if (lex(conf, L) != 0) {
		free(L);
		return fail(why, n_why, "more than %d tokens", MAX_TOKENS);
	}
	while (rc == 0 && L->at < L->n) {
		char key[64];
		const char *what = NULL;

		snprintf(key, sizeof key, "%s", next(L));
		if (strcmp(key, ",") == 0)
			continue;
		if (parse_option(L, key, s, &what) != 0)
			rc = what ? fail(why, n_why, "bad value for '%s': expected %s", key, what)
			          : fail(why, n_why, "unknown option '%s'", key);
	}
	free(L);
	return rc;
}

static int json_divisions(const cJSON *d, struct mp_tune_setting *s)
{
	const cJSON *it;

	if (cJSON_IsNumber(d)) {
		for (size_t i = 0; i < MP_TUNE_N_INTERVALS; i++)
			s->divisions[i] = d->valuedouble > 1 ? (uint32_t)d->valuedouble : 0;
		return 0;
	}
	cJSON_ArrayForEach(it, d)
	{
		uint64_t mb;

		if (!it->string || to_u64(it->string, &mb) != 0 || !is_pow2(mb) ||
		    !cJSON_IsNumber(it) || it->valuedouble < 0 || it->valuedouble > UINT32_MAX)
			return -1;
		s->divisions[interval_of_mb(mb)] = (uint32_t)it->valuedouble;
	}
	return 0;
}

/* The parsed fields PyTorch's snapshot() writes (max_split_size -1: unlimited). */
static int json_fields(const cJSON *root, struct mp_tune_setting *s)
{
	const cJSON *v;

	if ((v = cJSON_GetObjectItemCaseSensitive(root, "max_split_size")) && cJSON_IsNumber(v))
		s->max_split_bytes = v->valuedouble > 0 ? (uint64_t)v->valuedouble : 0;
	if ((v = cJSON_GetObjectItemCaseSensitive(root, "max_non_split_rounding_size")) &&
	    cJSON_IsNumber(v) && v->valuedouble > (double)(LARGE_MB * MB))
		s->max_non_split_bytes = (uint64_t)v->valuedouble;
	if ((v = cJSON_GetObjectItemCaseSensitive(root, "garbage_collection_threshold")) &&
	    cJSON_IsNumber(v))
		s->gc_threshold = v->valuedouble > 0 && v->valuedouble < 1 ? v->valuedouble : 0;
	if ((v = cJSON_GetObjectItemCaseSensitive(root, "expandable_segments")))
		s->expandable = cJSON_IsTrue(v);
	if ((v = cJSON_GetObjectItemCaseSensitive(root, "roundup_power2_divisions")))
		return json_divisions(v, s);
	return 0;
}

int mp_tune_setting_from_json(const char *json, struct mp_tune_setting *s, char *why, size_t n_why)
{
	cJSON *root = cJSON_Parse(json);
	const cJSON *conf;
	int rc = 0;

	memset(s, 0, sizeof *s);
	if (!cJSON_IsObject(root)) {
		cJSON_Delete(root);
		return fail(why, n_why, "allocator_settings is not a JSON object");
	}
	conf = cJSON_GetObjectItemCaseSensitive(root, "PYTORCH_CUDA_ALLOC_CONF");
	if (cJSON_GetObjectItemCaseSensitive(root, "max_split_size") ||
	    cJSON_GetObjectItemCaseSensitive(root, "expandable_segments"))
		rc = json_fields(root, s) == 0
		             ? 0
		             : fail(why, n_why, "allocator_settings: bad roundup_power2_divisions");
	else if (cJSON_IsString(conf))
		rc = mp_tune_setting_parse(conf->valuestring, s, why, n_why);
	cJSON_Delete(root);
	return rc;
}

static void append(char *buf, size_t n, size_t *at, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));
static void append(char *buf, size_t n, size_t *at, const char *fmt, ...)
{
	va_list ap;
	int k;

	if (*at >= n)
		return;
	va_start(ap, fmt);
	k = vsnprintf(buf + *at, n - *at, fmt, ap);
	va_end(ap);
	*at += k > 0 ? (size_t)k : 0;
}

/*
 * The list form that reads back as d: the first key fills the intervals
 * below it, every interval up to the constant tail is named, and '>' (which
 * PyTorch applies from the last key named on) covers the tail.
 */
static void format_divisions(const uint32_t *d, char *buf, size_t n, size_t *at)
{
	size_t head = 0, tail = MP_TUNE_N_INTERVALS - 1;

	while (head + 1 < MP_TUNE_N_INTERVALS && d[head + 1] == d[0])
		head++;
	while (tail > 0 && d[tail - 1] == d[MP_TUNE_N_INTERVALS - 1])
		tail--;
	if (head == MP_TUNE_N_INTERVALS - 1) {
		append(buf, n, at, "roundup_power2_divisions:%u", d[0]);
		return;
	}
	append(buf, n, at, "roundup_power2_divisions:[%llu:%u", 1ull << head, d[0]);
	for (size_t i = head + 1; i <= tail; i++)
		append(buf, n, at, ",%llu:%u", 1ull << i, d[i]);
	if (tail < MP_TUNE_N_INTERVALS - 1)
		append(buf, n, at, ",>:%u", d[tail]);
	append(buf, n, at, "]");
}

static int any_divisions(const struct mp_tune_setting *s)
{
	for (size_t i = 0; i < MP_TUNE_N_INTERVALS; i++)
		if (s->divisions[i] > 1)
			return 1;
	return 0;
}

void mp_tune_setting_format(const struct mp_tune_setting *s, char *buf, size_t n)
{
	size_t at = 0;

	buf[0] = '\0';
	if (s->expandable)
		append(buf, n, &at, "expandable_segments:True");
	if (s->max_split_bytes)
		append(buf, n, &at, "%smax_split_size_mb:%llu", at ? "," : "",
		       (unsigned long long)(s->max_split_bytes / MB));
	if (s->max_split_bytes && s->max_non_split_bytes)
		append(buf, n, &at, ",max_non_split_rounding_mb:%llu",
		       (unsigned long long)(s->max_non_split_bytes / MB));
	if (any_divisions(s)) {
		if (at)
			append(buf, n, &at, ",");
		format_divisions(s->divisions, buf, n, &at);
	}
	if (s->gc_threshold > 0)
		append(buf, n, &at, "%sgarbage_collection_threshold:%g", at ? "," : "",
		       s->gc_threshold);
}

static void add_opt(struct mp_tune_opts *o, const char *name, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));
static void add_opt(struct mp_tune_opts *o, const char *name, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(o->bufs[o->n], sizeof o->bufs[o->n], fmt, ap);
	va_end(ap);
	o->opts[o->n].name = name;
	o->opts[o->n].value = o->bufs[o->n];
	o->n++;
}

void mp_tune_setting_options(const struct mp_tune_setting *s, struct mp_tune_opts *o)
{
	char text[MP_TUNE_CONF_MAX];
	size_t at = 0;

	o->n = 0;
	if (s->expandable)
		add_opt(o, "expandable_segments", "on");
	if (s->max_split_bytes)
		add_opt(o, "max_split_size", "%llu", (unsigned long long)s->max_split_bytes);
	if (s->max_non_split_bytes)
		add_opt(o, "max_non_split_rounding", "%llu",
		        (unsigned long long)s->max_non_split_bytes);
	if (s->gc_threshold > 0)
		add_opt(o, "garbage_collection_threshold", "%.17g", s->gc_threshold);
	if (any_divisions(s)) {
		format_divisions(s->divisions, text, sizeof text, &at);
		add_opt(o, "roundup_power2_divisions", "%s", strchr(text, ':') + 1);
	}
}

int mp_tune_setting_equal(const struct mp_tune_setting *a, const struct mp_tune_setting *b)
{
	char x[MP_TUNE_CONF_MAX], y[MP_TUNE_CONF_MAX];

	mp_tune_setting_format(a, x, sizeof x);
	mp_tune_setting_format(b, y, sizeof y);
	return strcmp(x, y) == 0;
}
