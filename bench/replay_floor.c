/*
 * bench/replay_floor.c - the floor for 'memprof replay' on the sim backend:
 * the least work any replay of a trace's allocations can do.  It reads a
 * memprof CSV trace (block events of device 0) into arrays, untimed, then
 * times one pass that gives each allocation a bump-pointer address and keeps
 * reserved bytes and their peak: what the direct pool on sim does, with no
 * engine, pool calls, timing or checks.  Prints "ops=N ns=T peak=P".
 * Benchmark only: links nothing of memprof.
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct table {
	uint64_t *keys, *vals;
	size_t cap;
};

static uint64_t *slot(struct table *t, uint64_t key, int *found)
{
	size_t i = (size_t)(key * 0x9E3779B97F4A7C15ull) & (t->cap - 1);

	while (t->keys[i] && t->keys[i] != key + 1)
		i = (i + 1) & (t->cap - 1);
	*found = t->keys[i] != 0;
	t->keys[i] = key + 1;
	return &t->vals[i];
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	FILE *f = argc == 2 ? fopen(argv[1], "r") : NULL;
	char line[4096];
	size_t n_ops = 0, cap_ops = 1 << 20, n_allocs = 0;
	uint64_t *ops = malloc(cap_ops * sizeof *ops), *sizes, *addrs;
	struct table t = {.cap = 1 << 24};
	volatile uint64_t sink;

	if (!f) {
		fprintf(stderr, "usage: replay_floor TRACE.csv\n");
		return 2;
	}
	t.keys = calloc(t.cap, 8);
	t.vals = calloc(t.cap, 8);
	sizes = malloc((size_t)1 << 27);
	if (!ops || !t.keys || !t.vals || !sizes)
		return 1;
	while (fgets(line, sizeof line, f)) {
		char *save = NULL, *ts = strtok_r(line, ",", &save), *op = strtok_r(NULL, ",", &save);
		char *id = strtok_r(NULL, ",", &save), *size = strtok_r(NULL, ",", &save);
		int is_alloc, found;
		uint64_t *v;

		if (!ts || !op || !id || !size)
			continue;
		is_alloc = strcmp(op, "alloc") == 0 || strcmp(op, "preexisting") == 0;
		if (!is_alloc && strcmp(op, "free") != 0)
			continue;
		v = slot(&t, strtoull(id, NULL, 10), &found);
		if (n_ops == cap_ops && !(ops = realloc(ops, (cap_ops *= 2) * sizeof *ops)))
			return 1;
		if (is_alloc) {
			*v = n_allocs;
			sizes[n_allocs] = strtoull(size, NULL, 10);
			ops[n_ops++] = n_allocs++ << 1;
		} else if (found) {
			ops[n_ops++] = (*v << 1) | 1;
		}
	}
	addrs = malloc((n_allocs + 1) * sizeof *addrs);
	{
		uint64_t t0 = now_ns(), bump = 1ull << 40, reserved = 0, peak = 0;
		for (size_t k = 0; k < n_ops; k++) {
			uint64_t i = ops[k] >> 1;
			if (ops[k] & 1) {
				reserved -= sizes[i];
				sink = addrs[i];
			} else {
				addrs[i] = bump;
				bump += (sizes[i] + 511) & ~511ull;
				reserved += sizes[i];
				if (reserved > peak)
					peak = reserved;
			}
		}
		printf("ops=%zu ns=%" PRIu64 " peak=%" PRIu64 "\n", n_ops, now_ns() - t0, peak);
	}
	(void)sink;
	return 0;
}
