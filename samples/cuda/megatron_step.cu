/* megatron_step.cu - the allocation pattern of samples/megatron/megatron_step.py, performed
 * on a GPU with cudaMalloc and cudaFree, for recording (memprof record, nsys).  Same options,
 * same tensors, same order, NVTX ranges of the same names; no kernels run, no PyTorch.
 * Prints one line per event: "alloc NAME BYTES ADDRESS", "free NAME BYTES ADDRESS", and
 * "push RANGE" / "pop RANGE" for the NVTX ranges.  --dry-run prints the log without CUDA.
 * Build: nvcc -O2 -o megatron_step megatron_step.cu (or 'make samples-cuda'). */
#include <cuda_runtime.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__has_include)
#if __has_include(<nvtx3/nvToolsExt.h>)
#include <nvtx3/nvToolsExt.h>
#define HAVE_NVTX3 1
#endif
#endif

#define MAX_BUCKETS 1024
enum { BF16 = 2, FP32 = 4, MX_BLOCK = 32, PAD_ELEMENTS = 128 };

struct dims {
	int64_t L, h, f, a, V, s, b, t, d, B, iterations;
	int64_t g, sh;
	int64_t bucket_first[MAX_BUCKETS]; /* lowest layer of bucket K */
	int64_t bucket_elements[MAX_BUCKETS];
	int dry_run;
};

struct block {
	void *ptr;
	uint64_t bytes;
	char name[64];
};

/* The tensors a layer's forward keeps for its backward. */
struct layer_kept {
	struct block *ln1_out, *qkv, *attn_out, *softmax_lse, *residual1, *ln2_out, *fc1_out,
	        *gelu_out, *layer_out;
};

struct head_kept {
	struct block *final_ln_out, *probs, *loss;
};

static int dry_run;

static void die(const char *fmt, ...)
{
	va_list ap;

	fputs("megatron_step: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

/* --- events ---------------------------------------------------------------------- */

static struct block *blk_alloc(uint64_t bytes, const char *fmt, ...)
{
	struct block *blk = (struct block *)calloc(1, sizeof *blk);
	va_list ap;

	if (!blk)
		die("out of host memory");
	va_start(ap, fmt);
	vsnprintf(blk->name, sizeof blk->name, fmt, ap);
	va_end(ap);
	blk->bytes = bytes;
	if (!dry_run) {
		cudaError_t e = cudaMalloc(&blk->ptr, bytes);
		if (e != cudaSuccess)
			die("cudaMalloc of %" PRIu64 " bytes for '%s' failed: %s", bytes, blk->name,
			    cudaGetErrorString(e));
	}
	printf("alloc %s %" PRIu64 " 0x%" PRIxPTR "\n", blk->name, bytes, (uintptr_t)blk->ptr);
	return blk;
}

static void blk_free(struct block *blk)
{
	if (!blk)
		return;
	if (!dry_run) {
		cudaError_t e = cudaFree(blk->ptr);
		if (e != cudaSuccess)
			die("cudaFree of '%s' failed: %s", blk->name, cudaGetErrorString(e));
	}
	printf("free %s %" PRIu64 " 0x%" PRIxPTR "\n", blk->name, blk->bytes, (uintptr_t)blk->ptr);
	free(blk);
}

static void range_push(const char *fmt, ...)
{
	char name[128];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(name, sizeof name, fmt, ap);
	va_end(ap);
#ifdef HAVE_NVTX3
	nvtxRangePushA(name);
#endif
	printf("push %s\n", name);
}

static void range_pop(const char *name)
{
#ifdef HAVE_NVTX3
	nvtxRangePop();
#endif
	printf("pop %s\n", name);
}

/* --- dimensions ---------------------------------------------------------------------- */

static int64_t ceil_div(int64_t a, int64_t b)
{
	return (a + b - 1) / b;
}

static int64_t gcd(int64_t a, int64_t b)
{
	while (b) {
		int64_t r = a % b;
		a = b;
		b = r;
	}
	return a;
}

/* Elements of one layer's 12 parameter tensors (P_layer of the README). */
static int64_t layer_elements(const struct dims *d)
{
	return (4 * d->h * d->h + 2 * d->f * d->h + 3 * d->h + d->f) / d->t + 6 * d->h;
}

/* Bucket K holds n_K layers counted from the last; E_K is padded to lcm(d, 128). */
static void bucket_layout(struct dims *d)
{
	int64_t top = d->L, m = d->d * PAD_ELEMENTS / gcd(d->d, PAD_ELEMENTS);

	for (int64_t k = 0; k < d->B; k++) {
		int64_t n = d->L / d->B + (k < d->L % d->B ? 1 : 0);
		int64_t raw = n * layer_elements(d);

		d->bucket_first[k] = top - n;
		top -= n;
		if (k == 0)
			raw += 2 * d->h;
		if (k == d->B - 1)
			raw += d->V / d->t * d->h;
		d->bucket_elements[k] = ceil_div(raw, m) * m;
	}
}

static int64_t bucket_of_layer(const struct dims *d, int64_t i)
{
	for (int64_t k = 0; k < d->B; k++)
		if (i >= d->bucket_first[k])
			return k;
	return d->B - 1;
}

/* --- persistent tensors (init) ---------------------------------------------------------- */

static void alloc_parameters(const struct dims *d)
{
	static const char *names[12] = {
	        "input_layernorm.weight",   "input_layernorm.bias",   "linear_qkv.weight",
	        "linear_qkv.bias",          "linear_proj.weight",     "linear_proj.bias",
	        "pre_mlp_layernorm.weight", "pre_mlp_layernorm.bias", "linear_fc1.weight",
	        "linear_fc1.bias",          "linear_fc2.weight",      "linear_fc2.bias"};
	int64_t h = d->h, f = d->f, t = d->t;
	int64_t n[12] = {h, h, 3 * h * h / t, 3 * h / t, h * h / t, h,
	                 h, h, f * h / t,     f / t,     h * f / t, h};

	blk_alloc(BF16 * (d->V / t) * h, "embedding.word_embeddings.weight");
	for (int64_t i = 0; i < d->L; i++)
		for (int j = 0; j < 12; j++)
			blk_alloc(BF16 * n[j], "layer%" PRId64 ".%s", i, names[j]);
	blk_alloc(BF16 * h, "final_layernorm.weight");
	blk_alloc(BF16 * h, "final_layernorm.bias");
}

static void alloc_grad_buffers(const struct dims *d)
{
	char range[64];

	for (int64_t k = 0; k < d->B; k++) {
		snprintf(range, sizeof range, "grad bucket %" PRId64, k);
		range_push("%s", range);
		blk_alloc(FP32 * d->bucket_elements[k], "grad_buffer%" PRId64, k);
		range_pop(range);
	}
}

static void alloc_adam_state(const struct dims *d)
{
	for (int64_t k = 0; k < d->B; k++) {
		uint64_t shard = FP32 * d->bucket_elements[k] / d->d;

		blk_alloc(shard, "main_params%" PRId64, k);
		blk_alloc(shard, "exp_avg%" PRId64, k);
		blk_alloc(shard, "exp_avg_sq%" PRId64, k);
	}
}

/* --- collective buffers ------------------------------------------------------------------- */

static struct block *param_gather_buffer(const struct dims *d, int64_t k)
{
	char range[64];
	int64_t n = d->bucket_elements[k];
	struct block *blk;

	snprintf(range, sizeof range, "param bucket %" PRId64, k);
	range_push("%s", range);
	blk = blk_alloc(n + ceil_div(n, MX_BLOCK), "param_bucket%" PRId64 ".mxfp8", k);
	range_pop(range);
	return blk;
}

static struct block *grad_reduce_buffer(const struct dims *d, int64_t k)
{
	char range[64];
	struct block *blk;

	snprintf(range, sizeof range, "grad-reduce bucket %" PRId64, k);
	range_push("%s", range);
	blk = blk_alloc(BF16 * d->bucket_elements[k], "grad_reduce%" PRId64 ".bf16", k);
	range_pop(range);
	return blk;
}

static struct block *tp_gather(const struct dims *d)
{
	return d->g ? blk_alloc(BF16 * d->s * d->b * d->h, "tp_gather") : NULL;
}

/* --- one iteration ------------------------------------------------------------------------ */

static void forward_layer(const struct dims *d, int64_t i, struct layer_kept *k)
{
	int64_t s = d->s, b = d->b, h = d->h, t = d->t, sh = d->sh;
	struct block *g;

	k->ln1_out = blk_alloc(BF16 * sh * b * h, "layer%" PRId64 ".ln1_out", i);
	g = tp_gather(d);
	k->qkv = blk_alloc(BF16 * s * b * 3 * h / t, "layer%" PRId64 ".qkv", i);
	blk_free(g);
	k->attn_out = blk_alloc(BF16 * s * b * h / t, "layer%" PRId64 ".attn_out", i);
	k->softmax_lse = blk_alloc(FP32 * b * (d->a / t) * s, "layer%" PRId64 ".softmax_lse", i);
	k->residual1 = blk_alloc(BF16 * sh * b * h, "layer%" PRId64 ".residual1", i);
	k->ln2_out = blk_alloc(BF16 * sh * b * h, "layer%" PRId64 ".ln2_out", i);
	g = tp_gather(d);
	k->fc1_out = blk_alloc(BF16 * s * b * d->f / t, "layer%" PRId64 ".fc1_out", i);
	blk_free(g);
	k->gelu_out = blk_alloc(BF16 * s * b * d->f / t, "layer%" PRId64 ".gelu_out", i);
	k->layer_out = blk_alloc(BF16 * sh * b * h, "layer%" PRId64 ".layer_out", i);
}

static void forward_head(const struct dims *d, struct head_kept *k)
{
	int64_t s = d->s, b = d->b, v = d->V / d->t;
	struct block *g, *logits;

	k->final_ln_out = blk_alloc(BF16 * d->sh * b * d->h, "final_ln_out");
	g = tp_gather(d);
	logits = blk_alloc(BF16 * s * b * v, "logits");
	blk_free(g);
	k->probs = blk_alloc(FP32 * s * b * v, "probs");
	blk_free(logits);
	k->loss = blk_alloc(FP32 * s * b, "loss");
}

static struct block *forward(const struct dims *d, struct block **params, struct layer_kept *layers,
                             struct head_kept *head)
{
	struct block *embed;

	range_push("forward");
	params[d->B - 1] = param_gather_buffer(d, d->B - 1);
	embed = blk_alloc(BF16 * d->sh * d->b * d->h, "embed_out");
	for (int64_t i = 0; i < d->L; i++) {
		int64_t k = bucket_of_layer(d, i);
		if (!params[k])
			params[k] = param_gather_buffer(d, k);
		forward_layer(d, i, &layers[i]);
	}
	forward_head(d, head);
	range_pop("forward");
	return embed;
}

static struct block *backward_head(const struct dims *d, struct head_kept *k)
{
	struct block *d_logits, *g, *d_final;

	d_logits = blk_alloc(BF16 * d->s * d->b * (d->V / d->t), "d_logits");
	blk_free(k->probs);
	blk_free(k->loss);
	g = tp_gather(d);
	d_final = blk_alloc(BF16 * d->sh * d->b * d->h, "d_final");
	blk_free(g);
	blk_free(d_logits);
	blk_free(k->final_ln_out);
	return d_final;
}

static struct block *backward_layer(const struct dims *d, int64_t i, struct layer_kept *k,
                                    struct block *d_in)
{
	int64_t s = d->s, b = d->b, h = d->h, t = d->t, sh = d->sh;
	struct block *g, *d_fc, *d_ln2, *d_qkv, *d_ln1;

	g = tp_gather(d);
	d_fc = blk_alloc(BF16 * s * b * d->f / t, "layer%" PRId64 ".d_fc", i);
	blk_free(k->gelu_out);
	blk_free(k->fc1_out);
	d_ln2 = blk_alloc(BF16 * sh * b * h, "layer%" PRId64 ".d_ln2", i);
	blk_free(g);
	blk_free(d_fc);
	blk_free(k->ln2_out);
	blk_free(k->residual1);
	g = tp_gather(d);
	d_qkv = blk_alloc(BF16 * s * b * 3 * h / t, "layer%" PRId64 ".d_qkv", i);
	blk_free(k->softmax_lse);
	blk_free(k->attn_out);
	blk_free(k->qkv);
	d_ln1 = blk_alloc(BF16 * sh * b * h, "layer%" PRId64 ".d_ln1", i);
	blk_free(g);
	blk_free(d_qkv);
	blk_free(k->ln1_out);
	blk_free(d_ln2);
	blk_free(d_in);
	blk_free(k->layer_out);
	return d_ln1;
}

/* Units: head, layers L-1..0, embedding.  A bucket's reduce-scatter buffer is launched
 * when its last unit finished and freed after the next unit (or at the end). */
static void backward(const struct dims *d, struct block **params, struct block *embed,
                     struct layer_kept *layers, struct head_kept *head)
{
	struct block *grad, *pending = NULL, *before;

	range_push("backward");
	grad = backward_head(d, head);
	for (int64_t i = d->L; i >= 0; i--) {
		int64_t k;
		int done;

		before = pending;
		pending = NULL;
		if (i > 0) {
			grad = backward_layer(d, i - 1, &layers[i - 1], grad);
			k = bucket_of_layer(d, i - 1);
			done = k != d->B - 1 && i - 1 == d->bucket_first[k];
		} else {
			blk_free(grad);
			blk_free(embed);
			k = d->B - 1;
			done = 1;
		}
		if (done) {
			blk_free(params[k]);
			params[k] = NULL;
			pending = grad_reduce_buffer(d, k);
		}
		blk_free(before);
	}
	if (!dry_run && cudaDeviceSynchronize() != cudaSuccess)
		die("cudaDeviceSynchronize failed");
	blk_free(pending);
	range_pop("backward");
}

static void optimizer(const struct dims *d)
{
	struct block *norms;

	range_push("optimizer");
	norms = blk_alloc(FP32 * d->B, "grad_norms");
	for (int64_t k = 0; k < d->B; k++)
		blk_free(blk_alloc(FP32 * d->bucket_elements[k] / d->d, "grad_shard%" PRId64, k));
	blk_free(norms);
	range_pop("optimizer");
}

/* --- options ------------------------------------------------------------------------------ */

struct option_def {
	const char *name;
	int64_t *value;
};

static void usage(FILE *to)
{
	fputs("usage: megatron_step [--layers N] [--hidden N] [--ffn N] [--heads N] [--vocab N]\n"
	      "         [--seq N] [--micro-batch N] [--tp N] [--dp N] [--buckets N]\n"
	      "         [--iterations N] [--dry-run]\n"
	      "Performs the allocations of samples/megatron/megatron_step.py (same options and\n"
	      "defaults) with cudaMalloc/cudaFree and NVTX ranges; --dry-run only prints the "
	      "log.\n",
	      to);
}

static void usage_error(const char *fmt, const char *arg)
{
	fputs("megatron_step: ", stderr);
	fprintf(stderr, fmt, arg);
	fputc('\n', stderr);
	usage(stderr);
	exit(2);
}

static int64_t parse_count(const char *name, const char *text)
{
	char *end;
	long long v;

	if (!text || !*text)
		usage_error("option '--%s' needs a value", name);
	v = strtoll(text, &end, 10);
	if (*end || v < 1 || v > (1LL << 40))
		usage_error("bad value for a count: '%s'", text);
	return v;
}

static void parse_options(int argc, char **argv, struct dims *d)
{
	struct option_def opts[] = {{"layers", &d->L},
	                            {"hidden", &d->h},
	                            {"ffn", &d->f},
	                            {"heads", &d->a},
	                            {"vocab", &d->V},
	                            {"seq", &d->s},
	                            {"micro-batch", &d->b},
	                            {"tp", &d->t},
	                            {"dp", &d->d},
	                            {"buckets", &d->B},
	                            {"iterations", &d->iterations}};
	size_t n_opts = sizeof opts / sizeof opts[0];

	for (int i = 1; i < argc; i++) {
		const char *arg = argv[i], *eq, *value;
		size_t j, len;

		if (!strcmp(arg, "--help") || !strcmp(arg, "-h")) {
			usage(stdout);
			exit(0);
		}
		if (!strcmp(arg, "--dry-run")) {
			d->dry_run = 1;
			continue;
		}
		if (strncmp(arg, "--", 2) != 0)
			usage_error("unexpected argument '%s'", arg);
		eq = strchr(arg, '=');
		len = eq ? (size_t)(eq - arg - 2) : strlen(arg + 2);
		for (j = 0; j < n_opts; j++)
			if (strlen(opts[j].name) == len && !strncmp(arg + 2, opts[j].name, len))
				break;
		if (j == n_opts)
			usage_error("unknown option '%s'", arg);
		value = eq ? eq + 1 : (i + 1 < argc ? argv[++i] : NULL);
		*opts[j].value = parse_count(opts[j].name, value);
	}
}

static void check_dims(const struct dims *d)
{
	char why[160];

	why[0] = 0;
	if (d->h % d->a || d->a % d->t || d->h % d->t || d->f % d->t || d->V % d->t || d->s % d->t)
		snprintf(why, sizeof why,
		         "hidden, heads, ffn, vocab and seq must divide as "
		         "megatron_step.py checks (see its --help)");
	else if (d->B > d->L || d->B > MAX_BUCKETS)
		snprintf(why, sizeof why,
		         "--buckets %" PRId64 " exceeds --layers %" PRId64 " (or %d)", d->B, d->L,
		         MAX_BUCKETS);
	if (why[0])
		usage_error("%s", why);
}

static void check_device(void)
{
	int n = 0;
	cudaError_t e = cudaGetDeviceCount(&n);

	if (e != cudaSuccess)
		die("no usable CUDA device: %s (%s)", cudaGetErrorString(e), cudaGetErrorName(e));
	if (n < 1)
		die("no usable CUDA device: cudaGetDeviceCount found none");
}

int main(int argc, char **argv)
{
	struct dims *d = (struct dims *)calloc(1, sizeof *d);
	struct block *params[MAX_BUCKETS] = {0};
	struct layer_kept *layers;
	struct head_kept head;

	if (!d)
		die("out of host memory");
	d->L = 8, d->h = 4096, d->f = 0, d->a = 32, d->V = 50304, d->s = 4096, d->b = 1;
	d->t = 2, d->d = 4, d->B = 4, d->iterations = 3;
	parse_options(argc, argv, d);
	if (d->f == 0)
		d->f = 4 * d->h;
	check_dims(d);
	d->g = d->t > 1, d->sh = d->s / d->t;
	dry_run = d->dry_run;
	bucket_layout(d);
	if (!dry_run)
		check_device();
	printf("# megatron_step: L=%" PRId64 " h=%" PRId64 " f=%" PRId64 " a=%" PRId64 " V=%" PRId64
	       " s=%" PRId64 " b=%" PRId64 " tp=%" PRId64 " dp=%" PRId64 " buckets=%" PRId64
	       " iterations=%" PRId64 "%s\n",
	       d->L, d->h, d->f, d->a, d->V, d->s, d->b, d->t, d->d, d->B, d->iterations,
	       dry_run ? " (dry run: no CUDA calls)" : "");
	printf("# bucket elements (padded):");
	for (int64_t k = 0; k < d->B; k++)
		printf(" %" PRId64, d->bucket_elements[k]);
	printf("\n");
	layers = (struct layer_kept *)calloc((size_t)d->L, sizeof *layers);
	if (!layers)
		die("out of host memory");
	range_push("init");
	alloc_parameters(d);
	alloc_grad_buffers(d);
	alloc_adam_state(d);
	range_pop("init");
	for (int64_t it = 0; it < d->iterations; it++) {
		struct block *embed = forward(d, params, layers, &head);
		backward(d, params, embed, layers, &head);
		optimizer(d);
	}
	if (!dry_run && cudaDeviceSynchronize() != cudaSuccess)
		die("cudaDeviceSynchronize failed");
	free(layers);
	free(d);
	return 0;
}
