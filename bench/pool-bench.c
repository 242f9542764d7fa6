/*
 * bench/pool-bench.c - what a pool's operations cost on real host memory
 * (the host backend), beside glibc malloc and jemalloc serving the same
 * sequence of allocations and frees, in one run, alternating between them.
 * The sequence is synthetic (log-uniform sizes, LIFO and random frees) or
 * the block events of a trace exported by 'memprof export'.  A pool plugin
 * is loaded from its .so as memprof would; the host services it gets are a
 * thin layer over mp_backend_host that counts the backend calls.
 */
#include <dlfcn.h>
#include <gnu/libc-version.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "memprof/pool.h"
#include "replay/backend.h"
#include "util/intmap.h"

#define MAX_POOLS 8

/* One step of the sequence: alloc or free of the allocation with this ordinal. */
struct step {
	uint32_t ord;
	uint32_t is_free;
};

struct seq {
	struct step *steps;
	size_t n_steps;
	uint64_t *sizes; /* by ordinal */
	size_t n_allocs;
	uint64_t total_bytes, peak_live_bytes;
	int64_t *alloc_at, *free_at; /* by ordinal: step positions, for offline pools */
};

struct opts {
	size_t n_allocs;
	uint64_t seed;
	int repeat;
	size_t max_live;
	const char *trace;
	int touch;
	const char *pools[MAX_POOLS];
	int n_pools;
};

static void die(const char *fmt, ...)
{
	va_list ap;

	fputs("pool-bench: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size);

	if (!p)
		die("out of memory");
	return p;
}

/* xorshift64*: deterministic across runs and machines */
static uint64_t rnd(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ull;
}

static double rnd01(uint64_t *s)
{
	return (double)(rnd(s) >> 11) / 9007199254740992.0;
}

static void seq_alloc(struct seq *q, size_t n_allocs)
{
	q->n_allocs = 0;
	q->n_steps = 0;
	q->sizes = xcalloc(n_allocs, sizeof *q->sizes);
	q->steps = xcalloc(2 * n_allocs, sizeof *q->steps);
	q->alloc_at = xcalloc(n_allocs, sizeof *q->alloc_at);
	q->free_at = xcalloc(n_allocs, sizeof *q->free_at);
}

static void seq_push(struct seq *q, uint32_t ord, int is_free)
{
	(is_free ? q->free_at : q->alloc_at)[ord] = (int64_t)q->n_steps;
	q->steps[q->n_steps++] = (struct step){.ord = ord, .is_free = (uint32_t)is_free};
}

/* Live set as an array; LIFO frees take the last entry, random ones any (swap-remove). */
static void seq_synthetic(struct seq *q, const struct opts *o)
{
	uint32_t *live = xcalloc(o->max_live, sizeof *live);
	size_t n_live = 0;
	uint64_t s = o->seed ? o->seed : 1, live_bytes = 0;

	seq_alloc(q, o->n_allocs);
	while (q->n_allocs < o->n_allocs || n_live) {
		int can_alloc = q->n_allocs < o->n_allocs && n_live < o->max_live;

		if (can_alloc && (n_live == 0 || rnd01(&s) < 0.5)) {
			/* log-uniform over [512 B, 64 MiB]: 512 * 2^(17 u) */
			uint64_t size = (uint64_t)(512.0 * exp2(17.0 * rnd01(&s)));

			q->sizes[q->n_allocs] = size;
			q->total_bytes += size;
			live_bytes += size;
			if (live_bytes > q->peak_live_bytes)
				q->peak_live_bytes = live_bytes;
			live[n_live++] = (uint32_t)q->n_allocs;
			seq_push(q, (uint32_t)q->n_allocs++, 0);
		} else {
			size_t i = rnd01(&s) < 0.5 ? n_live - 1 : (size_t)(rnd(&s) % n_live);
			uint32_t ord = live[i];

			live[i] = live[--n_live];
			live_bytes -= q->sizes[ord];
			seq_push(q, ord, 1);
		}
	}
	free(live);
}

/* The column index of name in a CSV header line, or -1. */
static int column_of(const char *header, const char *name)
{
	int col = 0;
	size_t len = strlen(name);

	for (const char *p = header; *p; col++) {
		size_t n = strcspn(p, ",\r\n");

		if (n == len && strncmp(p, name, len) == 0)
			return col;
		p += n;
		if (*p != ',')
			break;
		p++;
	}
	return -1;
}

/* Field col of a line (no quoting before the columns used), copied into out. */
static void field(const char *line, int col, char *out, size_t out_size)
{
	const char *p = line;
	size_t n;

	for (int c = 0; c < col && p; c++) {
		p = strchr(p, ',');
		p = p ? p + 1 : NULL;
	}
	if (!p) {
		out[0] = '\0';
		return;
	}
	n = strcspn(p, ",\r\n");
	if (n >= out_size)
		n = out_size - 1;
	memcpy(out, p, n);
	out[n] = '\0';
}

/* The block events of a 'memprof export' CSV: alloc and free by id, in file order. */
static void seq_from_csv(struct seq *q, const char *path)
{
	FILE *f = fopen(path, "r");
	char *line = NULL, buf[64];
	size_t cap = 0, n_alloc_lines = 0;
	int c_op = -1, c_id = -1, c_size = -1;
	struct mp_intmap live; /* id -> ordinal */
	uint64_t live_bytes = 0, ord;

	if (!f)
		die("cannot open '%s': %s", path, strerror(errno));
	while (getline(&line, &cap, f) > 0)
		n_alloc_lines += strncmp(line, "alloc,", 6) == 0 || strstr(line, ",alloc,") != NULL;
	rewind(f);
	seq_alloc(q, n_alloc_lines);
	mp_intmap_init(&live);
	while (getline(&line, &cap, f) > 0) {
		if (line[0] == '#')
			continue;
		if (c_op < 0) {
			c_op = column_of(line, "op");
			c_id = column_of(line, "id");
			c_size = column_of(line, "size");
			if (c_op < 0 || c_id < 0 || c_size < 0)
				die("'%s': no op, id and size columns: not a 'memprof export' CSV",
				    path);
			continue;
		}
		field(line, c_op, buf, sizeof buf);
		if (strcmp(buf, "alloc") != 0 && strcmp(buf, "free") != 0)
			continue;
		int is_free = buf[0] == 'f';
		field(line, c_id, buf, sizeof buf);
		uint64_t id = strtoull(buf, NULL, 10);
		if (is_free) {
			if (!mp_intmap_get(&live, id, &ord))
				continue; /* freed before the trace began */
			mp_intmap_del(&live, id);
			live_bytes -= q->sizes[ord];
			seq_push(q, (uint32_t)ord, 1);
			continue;
		}
		if (q->n_allocs == n_alloc_lines || mp_intmap_get(&live, id, NULL))
			continue;
		field(line, c_size, buf, sizeof buf);
		q->sizes[q->n_allocs] = strtoull(buf, NULL, 10);
		q->total_bytes += q->sizes[q->n_allocs];
		live_bytes += q->sizes[q->n_allocs];
		if (live_bytes > q->peak_live_bytes)
			q->peak_live_bytes = live_bytes;
		if (mp_intmap_put(&live, id, q->n_allocs) != 0)
			die("out of memory");
		seq_push(q, (uint32_t)q->n_allocs++, 0);
	}
	for (size_t i = 0; i < live.cap; i++) /* what the trace never freed, freed at the end */
		if (live.used[i])
			seq_push(q, (uint32_t)live.vals[i], 1);
	mp_intmap_free(&live);
	free(line);
	fclose(f);
	if (!q->n_allocs)
		die("'%s': no alloc events", path);
}

/* --- a pool over the host backend ------------------------------------------------ */

struct bench_host {
	struct memprof_pool_host host;
	const struct mp_backend_ops *bops;
	struct mp_backend *be;
	struct mp_error err;
	uint64_t n_calls;
	const char *pool_name;
};

static struct bench_host *bh(void *ctx)
{
	return ctx;
}

static int h_reserve(void *ctx, uint64_t n, struct memprof_region *out)
{
	bh(ctx)->n_calls++;
	return bh(ctx)->bops->reserve(bh(ctx)->be, n, out);
}

static int h_release(void *ctx, const struct memprof_region *r)
{
	bh(ctx)->n_calls++;
	return bh(ctx)->bops->release(bh(ctx)->be, r);
}

static int h_memset(void *ctx, uint64_t addr, int v, uint64_t n, uint64_t stream)
{
	bh(ctx)->n_calls++;
	return bh(ctx)->bops->memset(bh(ctx)->be, addr, v, n, stream);
}

static int h_copy(void *ctx, uint64_t dst, uint64_t src, uint64_t n, uint64_t stream)
{
	bh(ctx)->n_calls++;
	return bh(ctx)->bops->copy(bh(ctx)->be, dst, src, n, stream);
}

static int h_va_reserve(void *ctx, uint64_t n, struct memprof_region *out)
{
	bh(ctx)->n_calls++;
	return bh(ctx)->bops->va_reserve(bh(ctx)->be, n, out);
}

static int h_va_release(void *ctx, const struct memprof_region *va)
{
	bh(ctx)->n_calls++;
	return bh(ctx)->bops->va_release(bh(ctx)->be, va);
}

static int h_map(void *ctx, const struct memprof_region *va, uint64_t off, uint64_t n)
{
	bh(ctx)->n_calls++;
	return bh(ctx)->bops->map(bh(ctx)->be, va, off, n);
}

static int h_unmap(void *ctx, const struct memprof_region *va, uint64_t off, uint64_t n)
{
	bh(ctx)->n_calls++;
	return bh(ctx)->bops->unmap(bh(ctx)->be, va, off, n);
}

static int h_sync(void *ctx, uint64_t stream)
{
	return bh(ctx)->bops->sync(bh(ctx)->be, stream);
}

static uint64_t h_clock(void *ctx)
{
	(void)ctx;
	return now_ns();
}

static void h_log(void *ctx, int level, const char *fmt, ...)
{
	va_list ap;

	(void)level;
	fprintf(stderr, "pool-bench: %s: ", bh(ctx)->pool_name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static int h_moved(void *ctx, uint64_t token, uint64_t addr)
{
	(void)ctx, (void)token, (void)addr;
	return 0;
}

static void host_init(struct bench_host *h, const char *pool_name)
{
	struct mp_backend_options bo = {.device = 0, .err = &h->err};

	memset(h, 0, sizeof *h);
	h->bops = &mp_backend_host;
	h->pool_name = pool_name;
	if (h->bops->open(&bo, &h->be) != 0)
		die("host backend: %s", h->err.msg);
	h->host = (struct memprof_pool_host){
	        .struct_size = sizeof(struct memprof_pool_host),
	        .abi_major = MEMPROF_POOL_ABI_MAJOR,
	        .abi_minor = MEMPROF_POOL_ABI_MINOR,
	        .ctx = h,
	        .backend = "host",
	        .granularity_bytes = mp_backend_host.granularity_bytes,
	        .reserve = h_reserve,
	        .release = h_release,
	        .memset = h_memset,
	        .copy = h_copy,
	        .clock_ns = h_clock,
	        .log = h_log,
	        .va_reserve = h_va_reserve,
	        .va_release = h_va_release,
	        .map = h_map,
	        .unmap = h_unmap,
	        .sync = h_sync,
	        .block_moved = h_moved,
	};
}

struct plugin {
	const char *path;
	const struct memprof_pool_ops *ops;
	int has_plan;
};

static void plugin_load(struct plugin *pl, const char *path)
{
	void *dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	memprof_pool_init_fn init;
	void *sym;

	if (!dl)
		die("cannot load pool '%s': %s", path, dlerror());
	sym = dlsym(dl, MEMPROF_POOL_INIT_SYMBOL);
	if (!sym)
		die("'%s' exports no %s: not a memprof pool", path, MEMPROF_POOL_INIT_SYMBOL);
	memcpy(&init, &sym, sizeof init);
	pl->path = path;
	pl->ops = init(MEMPROF_POOL_ABI_MAJOR);
	if (!pl->ops || pl->ops->abi_major != MEMPROF_POOL_ABI_MAJOR || !pl->ops->create ||
	    !pl->ops->alloc || !pl->ops->free || !pl->ops->destroy)
		die("'%s': not a pool of ABI major %d", path, MEMPROF_POOL_ABI_MAJOR);
	pl->has_plan = pl->ops->struct_size >=
	                       offsetof(struct memprof_pool_ops, plan) + sizeof(pl->ops->plan) &&
	               pl->ops->plan;
}

/* Offline pools see every lifetime first (not timed; plan_ns says how long it took). */
static void plugin_plan(const struct plugin *pl, struct memprof_pool *p, const struct seq *q,
                        uint64_t *plan_ns)
{
	struct memprof_pool_lifetime *items = xcalloc(q->n_allocs, sizeof *items);
	uint64_t t0;

	for (size_t i = 0; i < q->n_allocs; i++)
		items[i] = (struct memprof_pool_lifetime){.index = (int64_t)i,
		                                          .size_bytes = q->sizes[i],
		                                          .alloc_at = q->alloc_at[i],
		                                          .free_at = q->free_at[i]};
	t0 = now_ns();
	if (pl->ops->plan(p, items, q->n_allocs) != 0)
		die("%s: plan failed", pl->ops->name);
	*plan_ns = now_ns() - t0;
	free(items);
}

/* One timed pass of the sequence through a fresh pool; returns the loop's ns. */
static uint64_t run_pool(const struct plugin *pl, const struct seq *q, int touch, uint64_t *n_calls,
                         uint64_t *plan_ns)
{
	struct bench_host h;
	struct memprof_pool *p = NULL;
	struct memprof_pool_block *blocks = xcalloc(q->n_allocs, sizeof *blocks);
	struct memprof_pool_request req = {.struct_size = sizeof req};
	uint64_t t0, t1;

	host_init(&h, pl->ops->name);
	if (pl->ops->create(&h.host, NULL, 0, &p) != 0 || !p)
		die("%s: create failed", pl->ops->name);
	if (pl->has_plan)
		plugin_plan(pl, p, q, plan_ns);
	h.n_calls = 0;
	t0 = now_ns();
	for (size_t i = 0; i < q->n_steps; i++) {
		uint32_t ord = q->steps[i].ord;
		int rc;

		if (q->steps[i].is_free) {
			rc = pl->ops->free(p, &blocks[ord], 0);
		} else {
			req.size_bytes = req.requested_bytes = q->sizes[ord];
			req.index = ord;
			req.block_token = ord;
			rc = pl->ops->alloc(p, &req, &blocks[ord]);
			if (rc == 0 && touch)
				*(volatile char *)(uintptr_t)blocks[ord].addr = 1;
		}
		if (rc != 0)
			die("%s: %s of allocation %u (%" PRIu64 " bytes) failed: %d %s",
			    pl->ops->name, q->steps[i].is_free ? "free" : "alloc", ord,
			    q->sizes[ord], rc, h.err.msg);
	}
	t1 = now_ns();
	*n_calls = h.n_calls;
	pl->ops->destroy(p);
	h.bops->close(h.be);
	free(blocks);
	return t1 - t0;
}

/* --- malloc-like allocators ---------------------------------------------------------- */

struct mallocator {
	void *(*malloc_fn)(size_t);
	void (*free_fn)(void *);
};

static uint64_t run_malloc(const struct mallocator *m, const struct seq *q, int touch)
{
	void **ptrs = xcalloc(q->n_allocs, sizeof *ptrs);
	uint64_t t0, t1;

	t0 = now_ns();
	for (size_t i = 0; i < q->n_steps; i++) {
		uint32_t ord = q->steps[i].ord;

		if (q->steps[i].is_free) {
			m->free_fn(ptrs[ord]);
			continue;
		}
		ptrs[ord] = m->malloc_fn((size_t)q->sizes[ord]);
		if (!ptrs[ord])
			die("malloc of %" PRIu64 " bytes failed", q->sizes[ord]);
		if (touch)
			*(volatile char *)ptrs[ord] = 1;
	}
	t1 = now_ns();
	free(ptrs);
	return t1 - t0;
}

/*
 * jemalloc's thread-local state is initial-exec TLS, which glibc's dlopen
 * can only place in the spare static TLS (512 bytes by default): run again
 * with more of it (the glibc.rtld.optional_static_tls tunable), once.
 */
static void reexec_with_static_tls(char **argv)
{
	const char *old = getenv("GLIBC_TUNABLES");
	char tunables[1024];

	if (getenv("POOL_BENCH_REEXEC"))
		return;
	snprintf(tunables, sizeof tunables, "%s%sglibc.rtld.optional_static_tls=65536",
	         old ? old : "", old && *old ? ":" : "");
	setenv("GLIBC_TUNABLES", tunables, 1);
	setenv("POOL_BENCH_REEXEC", "1", 1);
	execv("/proc/self/exe", argv);
}

/* jemalloc from its own shared object, beside glibc's malloc; version in *version. */
static void jemalloc_load(struct mallocator *m, const char **version, char **argv)
{
	void *dl = dlopen("libjemalloc.so.2", RTLD_NOW | RTLD_LOCAL);
	void *mal, *fre, *ctl;
	int (*mallctl)(const char *, void *, size_t *, void *, size_t);
	size_t len = sizeof *version;

	if (!dl && strstr(dlerror(), "static TLS")) {
		reexec_with_static_tls(argv);
		dl = dlopen("libjemalloc.so.2", RTLD_NOW | RTLD_LOCAL);
	}
	if (!dl)
		die("cannot load jemalloc: %s (Debian: apt-get install libjemalloc-dev)",
		    dlerror());
	mal = dlsym(dl, "malloc");
	fre = dlsym(dl, "free");
	ctl = dlsym(dl, "mallctl");
	if (!mal || !fre)
		die("libjemalloc.so.2 exports no malloc/free");
	memcpy(&m->malloc_fn, &mal, sizeof mal);
	memcpy(&m->free_fn, &fre, sizeof fre);
	*version = "?";
	if (ctl) {
		memcpy(&mallctl, &ctl, sizeof ctl);
		if (mallctl("version", version, &len, NULL, 0) != 0)
			*version = "?";
	}
}

/* --- the run ----------------------------------------------------------------------- */

#define MAX_REPEAT 15

struct runner {
	char label[96];
	const struct mallocator *m; /* or */
	const struct plugin *pl;
	uint64_t ns[MAX_REPEAT];
	uint64_t n_calls, plan_ns;
};

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static double median_ns(const struct runner *r, int n)
{
	uint64_t v[MAX_REPEAT];

	memcpy(v, r->ns, (size_t)n * sizeof v[0]);
	qsort(v, (size_t)n, sizeof v[0], cmp_u64);
	return n % 2 ? (double)v[n / 2] : ((double)v[n / 2 - 1] + (double)v[n / 2]) / 2;
}

static void usage(void)
{
	fputs("usage: pool-bench [--allocs=N] [--seed=N] [--repeat=N] [--max-live=N]\n"
	      "                  [--trace=EXPORT.csv] [--touch] POOL.so...\n",
	      stderr);
	exit(2);
}

static uint64_t num_arg(const char *arg, const char *name, uint64_t lo, uint64_t hi)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(arg, &end, 10);
	if (errno || end == arg || *end || v < lo || v > hi)
		die("%s='%s': want a whole number from %" PRIu64 " to %" PRIu64, name, arg, lo, hi);
	return v;
}

static void parse(int argc, char **argv, struct opts *o)
{
	*o = (struct opts){.n_allocs = 100000, .seed = 42, .repeat = 5, .max_live = 256};
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (strncmp(a, "--allocs=", 9) == 0)
			o->n_allocs = num_arg(a + 9, "--allocs", 1, 100000000);
		else if (strncmp(a, "--seed=", 7) == 0)
			o->seed = num_arg(a + 7, "--seed", 0, UINT64_MAX);
		else if (strncmp(a, "--repeat=", 9) == 0)
			o->repeat = (int)num_arg(a + 9, "--repeat", 1, MAX_REPEAT);
		else if (strncmp(a, "--max-live=", 11) == 0)
			o->max_live = num_arg(a + 11, "--max-live", 1, 1000000);
		else if (strncmp(a, "--trace=", 8) == 0)
			o->trace = a + 8;
		else if (strcmp(a, "--touch") == 0)
			o->touch = 1;
		else if (a[0] == '-')
			usage();
		else if (o->n_pools == MAX_POOLS)
			die("at most %d pools", MAX_POOLS);
		else
			o->pools[o->n_pools++] = a;
	}
	if (!o->n_pools)
		usage();
}

static void print_header(const struct opts *o, const struct seq *q)
{
	if (o->trace)
		printf("sequence: the block events of %s\n", o->trace);
	else
		printf("sequence: synthetic, seed %" PRIu64 ": sizes log-uniform 512 B..64 MiB, "
		       "frees half LIFO half random, at most %zu live\n",
		       o->seed, o->max_live);
	printf("          %zu allocs + %zu frees = %zu ops, %.1f GiB requested, peak live "
	       "%.1f MiB%s\n",
	       q->n_allocs, q->n_steps - q->n_allocs, q->n_steps,
	       (double)q->total_bytes / (1u << 30), (double)q->peak_live_bytes / (1u << 20),
	       o->touch ? ", first byte of each block written" : ", blocks not touched");
	printf("timing:   median of %d runs, the allocators alternating; ns/op = loop time / "
	       "ops\n\n",
	       o->repeat);
}

static void print_table(const struct runner *r, int n, int repeat, const struct seq *q)
{
	double glibc = median_ns(&r[0], repeat), jem = median_ns(&r[1], repeat);

	printf("%-34s %10s %10s %12s %14s\n", "allocator", "ns/op", "x glibc", "x jemalloc",
	       "backend/op");
	for (int i = 0; i < n; i++) {
		double med = median_ns(&r[i], repeat);

		printf("%-34s %10.1f %9.2fx %11.2fx ", r[i].label, med / (double)q->n_steps,
		       med / glibc, med / jem);
		if (r[i].pl)
			printf("%14.3f\n", (double)r[i].n_calls / (double)q->n_steps);
		else
			printf("%14s\n", "-");
	}
	for (int i = 0; i < n; i++)
		if (r[i].pl && r[i].pl->has_plan)
			printf("(%s: plan, not timed above, took %.1f ms)\n", r[i].label,
			       (double)r[i].plan_ns / 1e6);
}

int main(int argc, char **argv)
{
	struct opts o;
	struct seq q = {0};
	struct mallocator glibc = {malloc, free}, jem;
	struct plugin pls[MAX_POOLS];
	struct runner run[MAX_POOLS + 2];
	const char *jem_version;
	int n = 0;

	parse(argc, argv, &o);
	if (o.trace)
		seq_from_csv(&q, o.trace);
	else
		seq_synthetic(&q, &o);
	jemalloc_load(&jem, &jem_version, argv);
	memset(run, 0, sizeof run);
	snprintf(run[n].label, sizeof run[n].label, "glibc malloc %s", gnu_get_libc_version());
	run[n++].m = &glibc;
	snprintf(run[n].label, sizeof run[n].label, "jemalloc %.20s", jem_version);
	run[n++].m = &jem;
	for (int i = 0; i < o.n_pools; i++) {
		plugin_load(&pls[i], o.pools[i]);
		snprintf(run[n].label, sizeof run[n].label, "pool %s (host backend)",
		         pls[i].ops->name);
		run[n++].pl = &pls[i];
	}
	print_header(&o, &q);
	for (int rep = 0; rep < o.repeat; rep++)
		for (int k = 0; k < n; k++) {
			struct runner *r = &run[(k + rep) % n]; /* rotate who goes first */

			r->ns[rep] = r->pl ? run_pool(r->pl, &q, o.touch, &r->n_calls, &r->plan_ns)
			                   : run_malloc(r->m, &q, o.touch);
		}
	print_table(run, n, o.repeat, &q);
	free(q.steps);
	free(q.sizes);
	free(q.alloc_at);
	free(q.free_at);
	return 0;
}
