/*
 * bench/gen_rmm_log.c - writes a synthetic but realistic RAPIDS RMM
 * logging_resource_adaptor log (the CSV that 'memprof import' reads as rmm)
 * for the import benchmark: several threads and streams, a pool that reuses
 * addresses, a bounded live set, a midnight halfway through, lines a little
 * out of time order, and a few allocate failures.  Deterministic for a given
 * seed.  Benchmark input only: links nothing of memprof.
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N_THREADS  4
#define N_CLASSES  48   /* distinct allocation sizes, reused as in a real workload */
#define LIVE_LOW   1000 /* the live set stays between these */
#define LIVE_HIGH  4000
#define N_FAILURES 5 /* allocate failures, spread over the log */
#define DAY_US     (INT64_C(86400) * 1000000)

struct block {
	uint64_t address;
	int cls;
};

/* Addresses freed per size class, reused last-in first-out as a pool does. */
struct freelist {
	uint64_t *addr;
	size_t n, cap;
};

struct gen {
	FILE *out;
	uint64_t rng;
	int64_t sizes[N_CLASSES];
	struct freelist free[N_CLASSES];
	struct block *live;
	size_t n_live;
	uint64_t next_address;
	int64_t now_us; /* microseconds since the first midnight */
	uint64_t streams[N_THREADS];
	int64_t threads[N_THREADS];
};

static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("gen_rmm_log: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(1);
}

static void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n);
	if (!p)
		die("out of memory");
	return p;
}

/* splitmix64 */
static uint64_t rnd(struct gen *g)
{
	uint64_t z = (g->rng += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static int64_t rnd_range(struct gen *g, int64_t lo, int64_t hi)
{
	return lo + (int64_t)(rnd(g) % (uint64_t)(hi - lo + 1));
}

/* Sizes like a dataframe workload's: many small columns, some MiB, a few large. */
static void make_sizes(struct gen *g)
{
	int i;

	for (i = 0; i < N_CLASSES; i++) {
		int64_t s;

		if (i < 24)
			s = rnd_range(g, 1, 256) * 256; /* up to 64 KiB */
		else if (i < 44)
			s = rnd_range(g, 1, 64) * 65536; /* up to 4 MiB */
		else
			s = rnd_range(g, 16, 512) * 1048576; /* up to 512 MiB */
		g->sizes[i] = s;
	}
}

static void put_time(struct gen *g, int thread)
{
	int64_t t = g->now_us;

	if (rnd(g) % 8 == 0 && t > 20)
		t -= rnd_range(g, 1, 20); /* logged a little out of order */
	t %= DAY_US;
	fprintf(g->out, "%lld,%02d:%02d:%02d.%06d,", (long long)g->threads[thread],
	        (int)(t / 3600000000), (int)(t / 60000000 % 60), (int)(t / 1000000 % 60),
	        (int)(t % 1000000));
}

static void put_stream(struct gen *g, int thread)
{
	if (g->streams[thread])
		fprintf(g->out, ",0x%llx\n", (unsigned long long)g->streams[thread]);
	else
		fputs(",0\n", g->out);
}

static int pick_class(struct gen *g)
{
	uint64_t r = rnd(g) % 100;

	if (r < 70)
		return (int)(rnd(g) % 24);
	if (r < 98)
		return 24 + (int)(rnd(g) % 20);
	return 44 + (int)(rnd(g) % 4);
}

static void allocate(struct gen *g, int thread)
{
	int cls = pick_class(g);
	struct freelist *fl = &g->free[cls];
	uint64_t a;

	if (fl->n) {
		a = fl->addr[--fl->n];
	} else {
		a = g->next_address;
		g->next_address += (uint64_t)(g->sizes[cls] + 255) / 256 * 256;
	}
	if (g->n_live % 1024 == 0)
		g->live = xrealloc(g->live, (g->n_live + 1024) * sizeof(*g->live));
	g->live[g->n_live].address = a;
	g->live[g->n_live++].cls = cls;
	put_time(g, thread);
	fprintf(g->out, "allocate,0x%llx,%lld", (unsigned long long)a, (long long)g->sizes[cls]);
	put_stream(g, thread);
}

static void release(struct gen *g, int thread)
{
	size_t i = (size_t)(rnd(g) % g->n_live);
	struct block b = g->live[i];
	struct freelist *fl = &g->free[b.cls];

	g->live[i] = g->live[--g->n_live];
	if (fl->n == fl->cap) {
		fl->cap = fl->cap ? 2 * fl->cap : 64;
		fl->addr = xrealloc(fl->addr, fl->cap * sizeof(*fl->addr));
	}
	fl->addr[fl->n++] = b.address;
	put_time(g, thread);
	fprintf(g->out, "free,0x%llx,%lld", (unsigned long long)b.address,
	        (long long)g->sizes[b.cls]);
	put_stream(g, thread);
}

static void fail(struct gen *g, int thread)
{
	put_time(g, thread);
	fprintf(g->out, "allocate failure,(nil),%lld", (long long)rnd_range(g, 64, 128) << 30);
	put_stream(g, thread);
}

static int64_t number(const char *s, const char *what)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || end == s || *end || v < 0)
		die("invalid %s '%s': expected a number", what, s);
	return v;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: gen_rmm_log [-n EVENTS] [-o FILE] [--seed=N]\n\n"
	           "Write a synthetic RMM logging_resource_adaptor log of EVENTS rows\n"
	           "(default 1000000) to FILE or standard output.  Midnight falls halfway.\n");
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
	        {"seed", required_argument, NULL, 's'},
	        {"help", no_argument, NULL, 'h'},
	        {NULL, 0, NULL, 0},
	};
	static char obuf[1 << 20];
	struct gen g = {0};
	int64_t n_events = 1000000, fail_every, i;
	int ch, t;

	g.rng = 1;
	while ((ch = getopt_long(argc, argv, "n:o:h", longopts, NULL)) != -1) {
		switch (ch) {
		case 'n':
			n_events = number(optarg, "-n");
			break;
		case 'o':
			if (!(g.out = fopen(optarg, "w")))
				die("cannot create '%s': %s", optarg, strerror(errno));
			break;
		case 's':
			g.rng = (uint64_t)number(optarg, "--seed");
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc) {
		usage(stderr);
		return 2;
	}
	if (!g.out)
		g.out = stdout;
	setvbuf(g.out, obuf, _IOFBF, sizeof(obuf));
	make_sizes(&g);
	g.next_address = 0x7f4a00000000ULL;
	for (t = 0; t < N_THREADS; t++) {
		g.threads[t] = 2342727 + t * 13;
		g.streams[t] = t == 0 ? 0 : 0x55d0c0a00000ULL + (uint64_t)t * 0x1a40;
	}
	/* the average step is 2 us: midnight halfway */
	g.now_us = DAY_US - (n_events < DAY_US / 2 ? n_events : DAY_US / 2);
	fail_every = n_events / N_FAILURES > 0 ? n_events / N_FAILURES : 1;
	fputs("Thread,Time,Action,Pointer,Size,Stream\n", g.out);
	for (i = 0; i < n_events; i++) {
		int thread = (int)(rnd(&g) % N_THREADS);
		uint64_t r = rnd(&g);

		g.now_us += rnd_range(&g, 1, 3);
		if (i % fail_every == fail_every / 2)
			fail(&g, thread);
		else if (g.n_live < LIVE_LOW || (g.n_live < LIVE_HIGH && r % 2 == 0))
			allocate(&g, thread);
		else
			release(&g, thread);
	}
	if (fflush(g.out) != 0 || (g.out != stdout && fclose(g.out) != 0))
		die("cannot write: %s", strerror(errno));
	for (t = 0; t < N_CLASSES; t++)
		free(g.free[t].addr);
	free(g.live);
	return 0;
}
