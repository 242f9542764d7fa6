/*
 * bench/gen_csv_trace.c - writes a synthetic but realistic memprof CSV trace
 * (memprof-trace(5)) for the import benchmark: a training loop on one or two
 * devices, deterministic for a given seed, with a live set that stays bounded
 * however long the trace.  Benchmark input only: links nothing of memprof.
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OUT_BYTES     (1 << 20)
#define N_STACKS      320 /* distinct call stacks, reused */
#define N_INIT_STACKS 32  /* of which the first are parameter/optimizer sites */
#define N_STREAMS     3

enum op { ALLOC, FREE, PREEXISTING, RESERVE, RELEASE, OOM, PHASE_BEGIN, PHASE_END };
static const char *const op_names[] = {
        "alloc", "free", "preexisting", "reserve", "release", "oom", "phase_begin", "phase_end",
};

enum phase { PH_NONE = -1, PH_INIT, PH_FORWARD, PH_BACKWARD, PH_OPTIMIZER };
static const char *const phase_names[] = {"init", "forward", "backward", "optimizer"};

enum api { API_NONE = -1, API_TORCH, API_CUDA_MALLOC, API_CUDA_FREE };
static const char *const api_names[] = {"torch", "cudaMalloc", "cudaFree"};

/* One event, before it is given a timestamp. */
struct event {
	int op, phase, api, stack, stream;
	int64_t id, size, requested, device_free;
	uint64_t address;
};

/* A tensor site of the model: the same shape at the same stack every iteration. */
struct site {
	int64_t size, requested;
	int stack, stream;
	int64_t id; /* the live block at this site, 0 when none */
	uint64_t address;
};

/* One process driving one device; its events are queued an iteration at a time. */
struct rank {
	int device;
	int64_t pid;
	int n_params, n_acts;
	struct site *params, *grads, *moments, *acts, input[2];
	int64_t segment_ids[8];
	int64_t segment_sizes[8];
	uint64_t segment_addrs[8];
	int64_t iter;
	uint64_t next_address, base_address;
	int phase;
	struct event *q;
	size_t n, pos, cap;
};

struct gen {
	uint64_t rng;
	int64_t next_id, ts_ns;
	char *stacks[N_STACKS];
	uint64_t streams[N_STREAMS];
	FILE *out;
	char *buf;
	size_t len;
};

static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "gen_csv_trace: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
	exit(1);
}

static void *xmalloc(size_t n)
{
	void *p = calloc(1, n);

	if (!p)
		die("out of memory");
	return p;
}

/* splitmix64: small, fast, and the same sequence everywhere. */
static uint64_t rnd(struct gen *g)
{
	uint64_t z = (g->rng += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static int64_t rnd_range(struct gen *g, int64_t lo, int64_t hi) /* [lo, hi] */
{
	return lo + (int64_t)(rnd(g) % (uint64_t)(hi - lo + 1));
}

static int chance(struct gen *g, int percent)
{
	return (int)(rnd(g) % 100) < percent;
}

/* A request size: mostly small, some medium, a few large (log-uniform within each). */
static int64_t rnd_request(struct gen *g, int small_pct, int large_pct)
{
	int r = (int)(rnd(g) % 100), lo, hi, e;

	if (r < small_pct)
		lo = 6, hi = 16; /* 64 B .. 64 KiB */
	else if (r < 100 - large_pct)
		lo = 16, hi = 21; /* 64 KiB .. 2 MiB */
	else
		lo = 21, hi = 28; /* 2 MiB .. 256 MiB */
	e = (int)rnd_range(g, lo, hi - 1);
	return (((int64_t)1 << e) + (int64_t)(rnd(g) % ((uint64_t)1 << e))) & ~(int64_t)3;
}

static int64_t granted(int64_t requested)
{
	return (requested + 511) / 512 * 512;
}

/* ---- stacks ---------------------------------------------------------------- */

static const char *const layers[] = {
        "linear",        "conv2d",       "layer_norm",
        "softmax",       "gelu",         "dropout",
        "matmul",        "embedding",    "scaled_dot_product_attention",
        "cross_entropy", "add",          "mul",
        "cat",           "view_as_real",
};
static const char *const modules[] = {
        "nn/linear.py",     "nn/conv.py",         "nn/norm.py",   "nn/activation.py",
        "nn/functional.py", "model/attention.py", "model/mlp.py", "model/block.py",
};
static const char *const natives[] = {
        "at::native::empty_cuda(c10::ArrayRef<long>, c10::optional<c10::ScalarType>)",
        "at::cuda::blas::gemm<float>(char, char, long, long, long)",
        "at::native::(anonymous namespace)::layer_norm_cuda(at::Tensor const&, long)",
};

/* Stack text, outermost frame first: "main@train.py:212;step@train.py:88;...". */
static char *make_stack(struct gen *g, int i)
{
	char buf[1024];
	int n, depth = (int)rnd_range(g, 1, 2), d;

	if (i < N_INIT_STACKS)
		n = snprintf(buf, sizeof(buf), "main@train.py:%d;%s@train.py:%d", 200 + i % 7,
		             i % 2 ? "build_model" : "make_optimizer", 40 + i);
	else
		n = snprintf(buf, sizeof(buf), "main@train.py:212;step@train.py:%d",
		             80 + i % 3 * 11);
	for (d = 0; d < depth && n < 900; d++)
		n += snprintf(buf + n, sizeof(buf) - (size_t)n, ";%s@%s:%d",
		              layers[rnd(g) % (sizeof(layers) / sizeof(layers[0]))],
		              modules[rnd(g) % (sizeof(modules) / sizeof(modules[0]))],
		              (int)rnd_range(g, 20, 2400));
	if (i % 20 == 7) /* a native frame: its commas make the field quoted */
		snprintf(buf + n, sizeof(buf) - (size_t)n, ";%s",
		         natives[rnd(g) % (sizeof(natives) / sizeof(natives[0]))]);
	return strdup(buf);
}

/* ---- output ---------------------------------------------------------------- */

static void flush(struct gen *g)
{
	if (g->len && fwrite(g->buf, 1, g->len, g->out) != g->len)
		die("cannot write: %s", strerror(errno));
	g->len = 0;
}

static void put(struct gen *g, const char *s, size_t n)
{
	if (g->len + n > OUT_BYTES)
		flush(g);
	memcpy(g->buf + g->len, s, n);
	g->len += n;
}

static void put_str(struct gen *g, const char *s)
{
	put(g, s, strlen(s));
}

static void put_u64(struct gen *g, uint64_t v, int hex)
{
	char tmp[24];
	int i = 24;

	do {
		tmp[--i] = "0123456789abcdef"[hex ? v & 15 : v % 10];
		v = hex ? v >> 4 : v / 10;
	} while (v);
	if (hex) {
		tmp[--i] = 'x';
		tmp[--i] = '0';
	}
	put(g, tmp + i, (size_t)(24 - i));
}

/* A text field, quoted when it holds a comma or a quote (RFC 4180). */
static void put_text(struct gen *g, const char *s)
{
	if (!strpbrk(s, ",\"")) {
		put_str(g, s);
		return;
	}
	put(g, "\"", 1);
	for (; *s; s++) {
		if (*s == '"')
			put(g, "\"", 1);
		put(g, s, 1);
	}
	put(g, "\"", 1);
}

/* One line, in the layout 'memprof export' writes. */
static void emit(struct gen *g, const struct rank *rk, const struct event *e)
{
	put_u64(g, (uint64_t)g->ts_ns, 0);
	put(g, ",", 1);
	put_str(g, op_names[e->op]);
	put(g, ",", 1);
	put_u64(g, (uint64_t)e->id, 0);
	put(g, ",", 1);
	put_u64(g, (uint64_t)e->size, 0);
	put(g, ",", 1);
	put_u64(g, (uint64_t)e->requested, 0);
	put(g, ",", 1);
	put_u64(g, e->address, 1);
	put(g, ",", 1);
	put_u64(g, (uint64_t)rk->device, 0);
	put(g, ",", 1);
	put_u64(g, g->streams[e->stream], 0);
	put(g, ",", 1);
	put_u64(g, (uint64_t)rk->pid, 0);
	put(g, ",", 1);
	if (e->phase != PH_NONE)
		put_str(g, phase_names[e->phase]);
	put(g, ",", 1);
	if (e->api != API_NONE)
		put_str(g, api_names[e->api]);
	put(g, ",", 1);
	if (e->device_free >= 0)
		put_u64(g, (uint64_t)e->device_free, 0);
	put(g, ",", 1);
	if (e->stack >= 0)
		put_text(g, g->stacks[e->stack]);
	put(g, "\n", 1);
}

/* ---- the model --------------------------------------------------------------- */

static struct event *push(struct rank *rk, int op)
{
	struct event *e;

	if (rk->n == rk->cap) {
		rk->cap = rk->cap ? rk->cap * 2 : 4096;
		rk->q = realloc(rk->q, rk->cap * sizeof(*rk->q));
		if (!rk->q)
			die("out of memory");
	}
	e = &rk->q[rk->n++];
	memset(e, 0, sizeof(*e));
	e->op = op;
	e->phase = rk->phase;
	e->api = op == PHASE_BEGIN || op == PHASE_END || op == OOM ? API_NONE : API_TORCH;
	e->stack = -1;
	e->device_free = -1;
	return e;
}

static void phase(struct rank *rk, int op, int ph)
{
	rk->phase = ph;
	push(rk, op);
	if (op == PHASE_END)
		rk->phase = PH_NONE;
}

/* A bump allocator over a 64 GiB window: addresses look real and do not repeat soon. */
static uint64_t address_for(struct rank *rk, int64_t size)
{
	uint64_t a = rk->base_address + rk->next_address;

	rk->next_address = (rk->next_address + (uint64_t)size + 4095) % (64ULL << 30) / 512 * 512;
	return a;
}

static void alloc_site(struct gen *g, struct rank *rk, struct site *s)
{
	struct event *e = push(rk, ALLOC);

	s->id = g->next_id++;
	s->address = address_for(rk, s->size);
	e->id = s->id;
	e->size = s->size;
	e->requested = s->requested;
	e->address = s->address;
	e->stack = s->stack;
	e->stream = s->stream;
}

static void free_site(struct rank *rk, struct site *s)
{
	struct event *e = push(rk, FREE);

	e->id = s->id;
	e->size = s->size;
	e->requested = s->requested;
	e->address = s->address;
	e->stream = s->stream;
	s->id = 0;
}

/* A short-lived temporary: allocated, then freed after the next event. */
static void temp_alloc(struct gen *g, struct rank *rk, struct site *t)
{
	t->requested = rnd_request(g, 85, 2);
	t->size = granted(t->requested);
	t->stack = (int)rnd_range(g, N_INIT_STACKS, N_STACKS - 1);
	t->stream = chance(g, 85) ? 0 : (int)rnd_range(g, 1, N_STREAMS - 1);
	alloc_site(g, rk, t);
}

static void init_sites(struct gen *g, struct site *s, int n, int small_pct, int large_pct,
                       int stack_lo, int stack_hi)
{
	int i;

	for (i = 0; i < n; i++) {
		s[i].requested = rnd_request(g, small_pct, large_pct);
		s[i].size = granted(s[i].requested);
		s[i].stack = (int)rnd_range(g, stack_lo, stack_hi);
		s[i].stream = chance(g, 80) ? 0 : (int)rnd_range(g, 1, N_STREAMS - 1);
	}
}

static void rank_init(struct gen *g, struct rank *rk, int device)
{
	int i;

	rk->device = device;
	rk->pid = 31400 + device * 17;
	rk->base_address = 0x7f0000000000ULL + ((uint64_t)device << 40);
	rk->phase = PH_NONE;
	rk->n_params = (int)rnd_range(g, 120, 220);
	rk->n_acts = (int)rnd_range(g, 1000, 1800);
	rk->params = xmalloc((size_t)rk->n_params * sizeof(struct site));
	rk->grads = xmalloc((size_t)rk->n_params * sizeof(struct site));
	rk->moments = xmalloc((size_t)rk->n_params * 2 * sizeof(struct site));
	rk->acts = xmalloc((size_t)rk->n_acts * sizeof(struct site));
	init_sites(g, rk->params, rk->n_params, 40, 20, 0, N_INIT_STACKS - 1);
	init_sites(g, rk->acts, rk->n_acts, 55, 8, N_INIT_STACKS, N_STACKS - 1);
	init_sites(g, rk->input, 2, 0, 100, N_INIT_STACKS, N_INIT_STACKS + 3);
	for (i = 0; i < rk->n_params; i++) {
		rk->grads[i] = rk->params[i];
		rk->grads[i].stack = N_INIT_STACKS + (int)(rnd(g) % (N_STACKS - N_INIT_STACKS));
		rk->moments[2 * i] = rk->moments[2 * i + 1] = rk->params[i];
	}
}

/* Before the loop: the context, the first segments, the weights. */
static void queue_setup(struct gen *g, struct rank *rk)
{
	int i;

	for (i = 0; i < 4; i++) {
		struct event *e = push(rk, PREEXISTING);

		e->id = g->next_id++;
		e->requested = e->size = (int64_t)(2 + i) << 20;
		e->address = address_for(rk, e->size);
		e->api = API_NONE;
	}
	for (i = 0; i < 8; i++) {
		struct event *e = push(rk, RESERVE);

		rk->segment_ids[i] = e->id = g->next_id++;
		rk->segment_sizes[i] = e->size = e->requested = (int64_t)20 << (20 + i % 4);
		rk->segment_addrs[i] = e->address = address_for(rk, e->size);
		e->api = API_CUDA_MALLOC;
	}
	phase(rk, PHASE_BEGIN, PH_INIT);
	for (i = 0; i < rk->n_params; i++)
		alloc_site(g, rk, &rk->params[i]);
	phase(rk, PHASE_END, PH_INIT);
}

static void queue_forward(struct gen *g, struct rank *rk)
{
	struct site t;
	int k;

	phase(rk, PHASE_BEGIN, PH_FORWARD);
	alloc_site(g, rk, &rk->input[0]);
	alloc_site(g, rk, &rk->input[1]);
	for (k = 0; k < rk->n_acts; k++) {
		int tmp = chance(g, 40);

		if (tmp)
			temp_alloc(g, rk, &t);
		alloc_site(g, rk, &rk->acts[k]);
		if (tmp)
			free_site(rk, &t);
	}
	phase(rk, PHASE_END, PH_FORWARD);
}

/* Activations freed in reverse; gradients appear on the first pass and stay. */
static void queue_backward(struct gen *g, struct rank *rk)
{
	struct site t;
	int k;

	phase(rk, PHASE_BEGIN, PH_BACKWARD);
	for (k = rk->n_acts - 1; k >= 0; k--) {
		int tmp = chance(g, 50), p = k * rk->n_params / rk->n_acts;

		if (tmp)
			temp_alloc(g, rk, &t);
		free_site(rk, &rk->acts[k]);
		if (rk->iter == 0 &&
		    (k == rk->n_acts - 1 || (k + 1) * rk->n_params / rk->n_acts != p))
			alloc_site(g, rk, &rk->grads[p]);
		if (tmp)
			free_site(rk, &t);
	}
	phase(rk, PHASE_END, PH_BACKWARD);
}

static void queue_optimizer(struct gen *g, struct rank *rk)
{
	struct site t;
	int i;

	phase(rk, PHASE_BEGIN, PH_OPTIMIZER);
	for (i = 0; i < rk->n_params; i++) {
		if (rk->iter == 0) {
			alloc_site(g, rk, &rk->moments[2 * i]);
			alloc_site(g, rk, &rk->moments[2 * i + 1]);
		}
		temp_alloc(g, rk, &t); /* a foreach kernel's workspace */
		free_site(rk, &t);
	}
	phase(rk, PHASE_END, PH_OPTIMIZER);
}

/* Now and then the caching allocator gives a segment back, or a request fails. */
static void queue_rare(struct gen *g, struct rank *rk)
{
	struct event *e;
	int i = (int)(rnd(g) % 8);

	if (rk->iter % 29 == 28) {
		e = push(rk, RELEASE);
		e->id = rk->segment_ids[i];
		e->size = e->requested = rk->segment_sizes[i];
		e->address = rk->segment_addrs[i];
		e->api = API_CUDA_FREE;
		e = push(rk, RESERVE);
		rk->segment_ids[i] = e->id = g->next_id++;
		e->size = e->requested = rk->segment_sizes[i];
		rk->segment_addrs[i] = e->address = address_for(rk, e->size);
		e->api = API_CUDA_MALLOC;
	}
	if (rk->iter % 61 == 60) {
		e = push(rk, OOM);
		e->size = e->requested = (int64_t)rnd_range(g, 1, 16) << 30;
		e->device_free = (int64_t)rnd_range(g, 1, 900) << 20;
	}
}

/* Queue one more iteration (the setup first). */
static void refill(struct gen *g, struct rank *rk)
{
	rk->n = rk->pos = 0;
	if (rk->iter < 0) {
		queue_setup(g, rk);
		rk->iter = 0;
		return;
	}
	queue_forward(g, rk);
	queue_backward(g, rk);
	queue_optimizer(g, rk);
	free_site(rk, &rk->input[0]);
	free_site(rk, &rk->input[1]);
	queue_rare(g, rk);
	rk->iter++;
}

/* ---- main -------------------------------------------------------------------- */

static void usage(FILE *f)
{
	fprintf(f, "usage: gen_csv_trace [-n EVENTS] [-o FILE] [--seed N] [--devices 1|2]\n\n"
	           "Write a synthetic memprof CSV trace of EVENTS events (default 1000000)\n"
	           "to FILE (default standard output).  The same seed gives the same bytes.\n");
}

static int64_t number(const char *s, const char *what)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || end == s || *end || v < 0)
		die("invalid %s '%s': expected a non-negative integer", what, s);
	return v;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
	        {"seed", required_argument, NULL, 's'},
	        {"devices", required_argument, NULL, 'd'},
	        {"help", no_argument, NULL, 'h'},
	        {NULL, 0, NULL, 0},
	};
	struct gen g = {0};
	struct rank ranks[2] = {{0}};
	int64_t n_events = 1000000, i;
	int ch, n_devices = 2, d;

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
		case 'd':
			n_devices = (int)number(optarg, "--devices");
			if (n_devices < 1 || n_devices > 2)
				die("invalid --devices: expected 1 or 2");
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
	g.buf = xmalloc(OUT_BYTES);
	g.next_id = 1;
	g.ts_ns = 1000000000 + (int64_t)(rnd(&g) % 1000000000);
	for (i = 0; i < N_STACKS; i++)
		g.stacks[i] = make_stack(&g, (int)i);
	g.streams[0] = 0;
	for (i = 1; i < N_STREAMS; i++)
		g.streams[i] = 0x55d0c0a00000ULL + (rnd(&g) % 4096) * 0x100;
	for (d = 0; d < n_devices; d++) {
		rank_init(&g, &ranks[d], d);
		ranks[d].iter = -1;
	}
	put_str(&g, "ts_ns,op,id,size,requested,address,device,stream,pid,phase,api,device_free,"
	            "stack\n");
	for (i = 0; i < n_events; i++) {
		struct rank *rk = &ranks[n_devices == 1 ? 0 : rnd(&g) & 1];

		if (rk->pos == rk->n)
			refill(&g, rk);
		g.ts_ns += rnd_range(&g, 100, 4000);
		emit(&g, rk, &rk->q[rk->pos++]);
	}
	flush(&g);
	if (fflush(g.out) != 0 || (g.out != stdout && fclose(g.out) != 0))
		die("cannot write: %s", strerror(errno));
	for (i = 0; i < N_STACKS; i++)
		free(g.stacks[i]);
	for (d = 0; d < n_devices; d++) {
		free(ranks[d].params);
		free(ranks[d].grads);
		free(ranks[d].moments);
		free(ranks[d].acts);
		free(ranks[d].q);
	}
	free(g.buf);
	return 0;
}
