#!/usr/bin/env python3
"""megatron_step.py - write a SYNTHETIC memprof CSV trace of a Megatron-style
training run (no GPU runs to make it; standard library only).

It models, event by event, the block-level allocations that rank 0 of a
TP x DP job (tensor parallel x data parallel, sequence parallel on, the
distributed optimizer, MXFP8 parameter all-gather) asks of its allocator
while it builds a GPT model and trains it for --iterations steps of one
micro-batch each.  Sizes follow from the model dimensions given as options;
only the timestamps are random (jitter drawn from --seed), so one seed gives
one file, byte for byte.
The CSV's header comment and its first phase, an empty range named
`SYNTHETIC megatron_step.py --layers=... --seed=...`, say it is synthetic.

Notation: L layers, h hidden, f ffn (default 4h), a heads, V vocab, s seq,
b micro-batch, t = --tp, d = --dp, B = --buckets, g = 1 when t > 1 else 0.
BF16 is 2 bytes, FP32 4.  Every tensor is a TP shard of rank 0.

Parameters (BF16, allocated one tensor each at init, never freed):
  per layer, 12 tensors:   two LayerNorms: weight h, bias h (x2)
                           linear_qkv  weight 3h*h/t, bias 3h/t
                           linear_proj weight h*h/t,  bias h
                           linear_fc1  weight f*h/t,  bias f/t
                           linear_fc2  weight h*f/t,  bias h
      P_layer = (4h^2 + 2fh + 3h + f)/t + 6h elements
  word embeddings (V/t)*h, tied with the output layer; final LayerNorm h, h.
  (Rotary position embeddings: no parameters.)

Buckets: parameters are bucketed in backward order.  Bucket K (0..B-1) holds
  layers in reverse: bucket 0 the last n_0 layers, bucket B-1 the first ones,
  with n_K = L//B + (1 if K < L%B else 0) layers (so 1 <= B <= L).
  Bucket 0 also holds the final LayerNorm (2h), bucket B-1 the word
  embeddings ((V/t)*h).  raw_K = n_K * P_layer + those extras, padded as
  Megatron's distributed optimizer pads buckets:
      E_K = ceil(raw_K / m) * m,   m = lcm(d, 128)   elements.

Persistent, at init (phase `init`, grad buffers inside `grad bucket K`):
  grad buffer K            FP32 main grads          4 * E_K
  Adam state, bucket K     FP32 main-param shard,   4 * E_K/d  (x3)
                           exp_avg, exp_avg_sq
  init allocations: 12L + 3 params + B grad buffers + 3B = 12L + 3 + 4B

Per iteration, phases `forward`, `backward`, `optimizer`:
  param bucket K    MXFP8 param all-gather buffer, inside `param bucket K`,
                    stream 9:  E_K + ceil(E_K/32) bytes (1 byte per element
                    and one E8M0 scale byte per 32 elements).  Allocated in
                    forward before the bucket's first layer (bucket B-1
                    before the embedding), freed in backward after the
                    bucket's last use (bucket B-1: after the embedding).
  TP all-gather     [s, b, h] BF16: 2*s*b*h bytes, stream 9, site
                    _gather_along_first_dim@megatron/core/tensor_parallel/
                    mappings.py:224, freed right after its GEMM.  Only when
                    t > 1: two per layer in forward (before linear_qkv and
                    linear_fc1), two per layer in backward (re-gathered for
                    their weight gradients), one each way for the output
                    layer.
  activations       BF16 unless said, stream 7, kept for backward (sh = s/t):
     embedding output     [sh,b,h]     2*sh*b*h
     per layer:  ln1_out, residual1, ln2_out, layer_out  [sh,b,h] 2*sh*b*h
                 qkv [s,b,3h/t] 2*s*b*3h/t;  attn_out [s,b,h/t] 2*s*b*h/t
                 softmax_lse [b,a/t,s] FP32 4*b*(a/t)*s
                 fc1_out, gelu_out [s,b,f/t] 2*s*b*f/t
     head:       final_ln_out [sh,b,h]; probs [s,b,V/t] FP32 4*s*b*V/t;
                 loss [s,b] FP32 4*s*b; logits [s,b,V/t] 2*s*b*V/t is freed
                 in forward once probs exist.
  gradients of activations (backward, stream 7, freed within their layer):
     d_logits [s,b,V/t] 2*s*b*V/t; d_final, d_ln2, d_ln1 [sh,b,h];
     d_fc [s,b,f/t]; d_qkv [s,b,3h/t]
  grad-reduce K     the bucket's gradients cast to BF16, the reduce-scatter's
                    input (rank r gets the E_K/d shard at r*E_K/d), inside
                    `grad-reduce bucket K`, stream 9: 2*E_K bytes.  Launched
                    when bucket K's last layer finished backward, freed when
                    the reduce-scatter completes: after the next backward
                    unit (a layer, the embedding) or at the end of backward.
  optimizer         grad-norm partials 4*B bytes, then per bucket the scaled
                    FP32 grad shard 4*E_K/d, each freed after use.
  allocations per iteration:
     forward   B + 1 + L*(9 + 2g) + 4 + g
     backward  2 + g + L*(4 + 2g) + B
     optimizer B + 1
     total     3B + 8 + 2g + L*(13 + 4g); every one is freed in its iteration.

Granted sizes are the requests rounded up to 512 B, as PyTorch's caching
allocator rounds blocks; `requested` is exact.  Addresses come from a
first-fit arena per stream (unique among live blocks; not the caching
allocator's).  Timestamps are monotonic ns: 0.5-1.5 us between events, GEMMs
at 400 TFLOP/s, collectives at 100 GB/s, each with +-5% jitter.  Call stacks
are Python frames of Megatron-core files; their line numbers are made up.

Usage:
    python3 megatron_step.py [--layers N] [--hidden N] ... [-o FILE]
    python3 megatron_step.py --help
"""
import argparse
import math
import random
import sys

BF16 = 2
FP32 = 4
MX_BLOCK = 32          # MXFP8: one E8M0 scale byte per 32 elements
BLOCK_BYTES = 512      # PyTorch's caching allocator rounds blocks to 512 B
PAD_ELEMENTS = 128     # the distributed optimizer pads buckets to lcm(d, 128)
COMPUTE_STREAM = 7
COMM_STREAM = 9
PID = 4242
FLOPS_PER_S = 400e12
COMM_BYTES_PER_S = 100e9
TP_GATHER_SITE = "_gather_along_first_dim@megatron/core/tensor_parallel/mappings.py:224"

# --- call stacks (outermost first; line numbers are made up) -------------------

MAIN = "main@pretrain_gpt.py:285;pretrain@megatron/training/training.py:383"
SETUP = MAIN + ";setup_model_and_optimizer@megatron/training/training.py:1046"
MODEL = (SETUP + ";get_model@megatron/training/training.py:866"
         ";model_provider@pretrain_gpt.py:120;__init__@megatron/core/models/gpt/gpt_model.py:95")
LAYER_INIT = (MODEL + ";__init__@megatron/core/transformer/transformer_block.py:270"
              ";__init__@megatron/core/transformer/transformer_layer.py:120")
DDP_INIT = (SETUP + ";get_model@megatron/training/training.py:940"
            ";__init__@megatron/core/distributed/distributed_data_parallel.py:260"
            ";_allocate_buffers_for_parameters@megatron/core/distributed/"
            "distributed_data_parallel.py:212"
            ";__init__@megatron/core/distributed/param_and_grad_buffer.py:671")
OPT_INIT = (SETUP + ";get_megatron_optimizer@megatron/core/optimizer/__init__.py:452"
            ";__init__@megatron/core/optimizer/distrib_optimizer.py:560")
STEP = (MAIN + ";train@megatron/training/training.py:1401"
        ";train_step@megatron/training/training.py:752")
SCHED = STEP + ";forward_backward_no_pipelining@megatron/core/pipeline_parallel/schedules.py:476"
FWD = (SCHED + ";forward_step@megatron/core/pipeline_parallel/schedules.py:275"
       ";forward_step@pretrain_gpt.py:208;forward@megatron/core/models/gpt/gpt_model.py:262")
LAYER_FWD = (FWD + ";forward@megatron/core/transformer/transformer_block.py:523"
             ";forward@megatron/core/transformer/transformer_layer.py:370")
BWD = (SCHED + ";backward_step@megatron/core/pipeline_parallel/schedules.py:371"
       ";backward@torch/_tensor.py:626;_engine_run_backward@torch/autograd/graph.py:823")
OPT = STEP + ";step@megatron/core/optimizer/optimizer.py:470"

LAYER_NORM = "__init__@megatron/core/fusions/fused_layer_norm.py:98"
LAYER_NORM_BIAS = "__init__@megatron/core/fusions/fused_layer_norm.py:101"
COLUMN_WEIGHT = "__init__@megatron/core/tensor_parallel/layers.py:760"
COLUMN_BIAS = "__init__@megatron/core/tensor_parallel/layers.py:790"
ROW_WEIGHT = "__init__@megatron/core/tensor_parallel/layers.py:1010"
ROW_BIAS = "__init__@megatron/core/tensor_parallel/layers.py:1040"

FWD_SITES = {
    "embed_out": FWD + ";forward@megatron/core/models/common/embeddings/"
                       "language_model_embedding.py:112",
    "layer_norm": LAYER_FWD + ";forward@megatron/core/fusions/fused_layer_norm.py:161",
    "linear": ";forward@megatron/core/tensor_parallel/layers.py:472",
    "gather": ";forward@megatron/core/tensor_parallel/layers.py:459;" + TP_GATHER_SITE,
    "attention": LAYER_FWD + ";forward@megatron/core/transformer/attention.py:310"
                             ";_flash_attn_forward@flash_attn/flash_attn_interface.py:91",
    "bias_add": LAYER_FWD + ";_bias_dropout_add@megatron/core/fusions/fused_bias_dropout.py:41",
    "gelu": LAYER_FWD + ";forward@megatron/core/transformer/mlp.py:132"
                        ";bias_gelu@megatron/core/fusions/fused_bias_gelu.py:17",
    "probs": FWD + ";forward@megatron/core/tensor_parallel/cross_entropy.py:139",
    "loss": FWD + ";forward@megatron/core/tensor_parallel/cross_entropy.py:170",
    "param_gather": FWD + ";hook@megatron/core/distributed/distributed_data_parallel.py:389"
                          ";start_param_sync@megatron/core/distributed/"
                          "param_and_grad_buffer.py:261",
}
BWD_SITES = {
    "d_logits": BWD + ";backward@megatron/core/tensor_parallel/cross_entropy.py:232",
    "gather": BWD + ";backward@megatron/core/tensor_parallel/layers.py:521;" + TP_GATHER_SITE,
    "dgrad": BWD + ";backward@megatron/core/tensor_parallel/layers.py:545",
    "d_fc": BWD + ";backward@megatron/core/fusions/fused_bias_gelu.py:33",
    "d_qkv": BWD + ";backward@flash_attn/flash_attn_interface.py:1055"
                   ";_flash_attn_backward@flash_attn/flash_attn_interface.py:190",
    "grad_reduce": BWD + ";hook@megatron/core/distributed/distributed_data_parallel.py:424"
                         ";register_grad_ready@megatron/core/distributed/"
                         "param_and_grad_buffer.py:437"
                         ";start_grad_sync@megatron/core/distributed/param_and_grad_buffer.py:352",
}
OPT_SITES = {
    "grad_norm": OPT + ";clip_grad_norm@megatron/core/optimizer/optimizer.py:417"
                       ";get_grad_norm_fp32@megatron/core/optimizer/clip_grads.py:110",
    "grad_shard": OPT + ";prepare_grads@megatron/core/optimizer/optimizer.py:433"
                        ";_copy_model_grads_to_main_grads@megatron/core/optimizer/"
                        "distrib_optimizer.py:1870",
}


# --- model dimensions ---------------------------------------------------------

def ceil_div(a, b):
    return -(-a // b)


class Dims:
    """The options, checked, and what follows from them."""

    def __init__(self, o):
        self.L, self.h, self.a, self.V = o.layers, o.hidden, o.heads, o.vocab
        self.f = o.ffn if o.ffn is not None else 4 * o.hidden
        self.s, self.b, self.t, self.d, self.B = o.seq, o.micro_batch, o.tp, o.dp, o.buckets
        self.g = 1 if self.t > 1 else 0
        self.sh = self.s // self.t  # the sequence-parallel shard
        self.bucket_layers = self._bucket_layers()
        self.bucket_elements = [self._bucket_elements(k) for k in range(self.B)]

    def layer_params(self):
        """(name, elements, innermost init frame) of one layer's 12 tensors."""
        h, f, t = self.h, self.f, self.t
        return [
            ("input_layernorm.weight", h, LAYER_NORM),
            ("input_layernorm.bias", h, LAYER_NORM_BIAS),
            ("linear_qkv.weight", 3 * h * h // t, COLUMN_WEIGHT),
            ("linear_qkv.bias", 3 * h // t, COLUMN_BIAS),
            ("linear_proj.weight", h * h // t, ROW_WEIGHT),
            ("linear_proj.bias", h, ROW_BIAS),
            ("pre_mlp_layernorm.weight", h, LAYER_NORM),
            ("pre_mlp_layernorm.bias", h, LAYER_NORM_BIAS),
            ("linear_fc1.weight", f * h // t, COLUMN_WEIGHT),
            ("linear_fc1.bias", f // t, COLUMN_BIAS),
            ("linear_fc2.weight", h * f // t, ROW_WEIGHT),
            ("linear_fc2.bias", h, ROW_BIAS),
        ]

    def _bucket_layers(self):
        """Layer indexes of each bucket: bucket 0 holds the last layers."""
        out, top = [], self.L
        for k in range(self.B):
            n = self.L // self.B + (1 if k < self.L % self.B else 0)
            out.append(list(range(top - n, top)))
            top -= n
        return out

    def _bucket_elements(self, k):
        raw = len(self.bucket_layers[k]) * sum(n for _, n, _ in self.layer_params())
        if k == 0:
            raw += 2 * self.h  # final LayerNorm
        if k == self.B - 1:
            raw += self.V // self.t * self.h  # word embeddings
        m = self.d * PAD_ELEMENTS // math.gcd(self.d, PAD_ELEMENTS)
        return ceil_div(raw, m) * m

    def bucket_of_layer(self, i):
        return next(k for k, ls in enumerate(self.bucket_layers) if i in ls)


def check_dims(p, o):
    """Refuse dimensions Megatron would refuse (exit 2 through argparse)."""
    for name in ("layers", "hidden", "heads", "vocab", "seq", "micro_batch", "tp", "dp",
                 "buckets", "iterations"):
        if getattr(o, name) < 1:
            p.error("--%s must be at least 1" % name.replace("_", "-"))
    if o.ffn is not None and o.ffn < 1:
        p.error("--ffn must be at least 1")
    ffn = o.ffn if o.ffn is not None else 4 * o.hidden
    for what, n, by in (("--hidden", o.hidden, o.heads), ("--heads", o.heads, o.tp),
                        ("--hidden", o.hidden, o.tp), ("--ffn", ffn, o.tp),
                        ("--vocab", o.vocab, o.tp), ("--seq", o.seq, o.tp)):
        if n % by:
            p.error("%s %d is not a multiple of %d" % (what, n, by))
    if o.buckets > o.layers:
        p.error("--buckets %d exceeds --layers %d (a bucket holds whole layers)"
                % (o.buckets, o.layers))


# --- the trace: clock, addresses, phases, rows --------------------------------

class Arena:
    """First-fit addresses for one stream, 512-B aligned, coalescing frees."""

    def __init__(self, base):
        self.free = [[base, 1 << 44]]  # [address, bytes], sorted by address

    def take(self, size):
        for i, (addr, n) in enumerate(self.free):
            if n >= size:
                if n == size:
                    del self.free[i]
                else:
                    self.free[i] = [addr + size, n - size]
                return addr
        raise MemoryError("arena exhausted")

    def give(self, addr, size):
        i = 0
        while i < len(self.free) and self.free[i][0] < addr:
            i += 1
        self.free.insert(i, [addr, size])
        if i + 1 < len(self.free) and addr + size == self.free[i + 1][0]:
            self.free[i][1] += self.free.pop(i + 1)[1]
        if i > 0 and self.free[i - 1][0] + self.free[i - 1][1] == addr:
            self.free[i - 1][1] += self.free.pop(i)[1]


class Block:
    __slots__ = ("ident", "size", "requested", "address", "stream")

    def __init__(self, ident, size, requested, address, stream):
        self.ident, self.size, self.requested = ident, size, requested
        self.address, self.stream = address, stream


class Trace:
    def __init__(self, seed):
        self.rng = random.Random(seed)
        self.ts = 1_000_000
        self.rows = []
        self.next_id = 1
        self.arenas = {COMPUTE_STREAM: Arena(0x7F0000000000), COMM_STREAM: Arena(0x7F8000000000)}
        self.phases = []

    def wait(self, ns):
        self.ts += max(1, int(ns * self.rng.uniform(0.95, 1.05)))

    def compute(self, flops):
        self.wait(flops / FLOPS_PER_S * 1e9)

    def communicate(self, n_bytes):
        self.wait(n_bytes / COMM_BYTES_PER_S * 1e9)

    def _row(self, op, ident, size, requested, address, stream, stack=""):
        phase = self.phases[-1] if self.phases else ""
        self.rows.append("%d,%s,%d,%d,%d,0x%x,0,%d,%d,%s,,,%s"
                         % (self.ts, op, ident, size, requested, address, stream, PID,
                            phase, stack))
        self.ts += self.rng.randint(500, 1500)

    def begin(self, name):
        self.phases.append(name)
        self._row("phase_begin", 0, 0, 0, 0, 0)

    def end(self):
        self._row("phase_end", 0, 0, 0, 0, 0)
        self.phases.pop()

    def alloc(self, requested, stack, stream=COMPUTE_STREAM):
        size = max(1, ceil_div(requested, BLOCK_BYTES)) * BLOCK_BYTES
        blk = Block(self.next_id, size, requested, self.arenas[stream].take(size), stream)
        self.next_id += 1
        self._row("alloc", blk.ident, size, requested, blk.address, stream, stack)
        return blk

    def free(self, *blocks):
        for blk in blocks:
            self._row("free", blk.ident, blk.size, blk.requested, blk.address, blk.stream)
            self.arenas[blk.stream].give(blk.address, blk.size)


# --- persistent tensors (init) --------------------------------------------------

def alloc_parameters(tr, d):
    """BF16 parameters, one tensor each, in construction order."""
    tr.alloc(BF16 * (d.V // d.t) * d.h,
             MODEL + ";__init__@megatron/core/tensor_parallel/layers.py:225")
    for _ in range(d.L):
        for _, n, frame in d.layer_params():
            tr.alloc(BF16 * n, LAYER_INIT + ";" + frame)
    tr.alloc(BF16 * d.h, MODEL + ";" + LAYER_NORM)
    tr.alloc(BF16 * d.h, MODEL + ";" + LAYER_NORM_BIAS)


def alloc_grad_buffers(tr, d):
    """FP32 main-grad buffer of each bucket, inside `grad bucket K`."""
    for k, n in enumerate(d.bucket_elements):
        tr.begin("grad bucket %d" % k)
        tr.alloc(FP32 * n, DDP_INIT)
        tr.end()


def alloc_adam_state(tr, d):
    """Distributed optimizer: FP32 main params, exp_avg, exp_avg_sq of rank 0's shard."""
    for n in d.bucket_elements:
        tr.alloc(FP32 * n // d.d, OPT_INIT + ";_build_model_and_main_param_groups@"
                 "megatron/core/optimizer/distrib_optimizer.py:402")
        for line in (612, 613):
            tr.alloc(FP32 * n // d.d, OPT_INIT + ";_init_state@megatron/core/optimizer/"
                     "distrib_optimizer.py:%d" % line)


# --- collective buffers -----------------------------------------------------------

def mxfp8_bytes(n_elements):
    return n_elements + ceil_div(n_elements, MX_BLOCK)


def param_gather_buffer(tr, d, k):
    """Bucket k's MXFP8 parameter all-gather buffer, inside `param bucket K`."""
    tr.begin("param bucket %d" % k)
    blk = tr.alloc(mxfp8_bytes(d.bucket_elements[k]), FWD_SITES["param_gather"], COMM_STREAM)
    tr.communicate(mxfp8_bytes(d.bucket_elements[k]))
    tr.end()
    return blk


def grad_reduce_buffer(tr, d, k):
    """Bucket k's BF16 reduce-scatter input, inside `grad-reduce bucket K`."""
    tr.begin("grad-reduce bucket %d" % k)
    blk = tr.alloc(BF16 * d.bucket_elements[k], BWD_SITES["grad_reduce"], COMM_STREAM)
    tr.end()
    return blk


def tp_gather(tr, d, stack):
    """The sequence-parallel all-gather of [s, b, h]; None when t = 1."""
    if not d.g:
        return None
    blk = tr.alloc(BF16 * d.s * d.b * d.h, stack, COMM_STREAM)
    tr.communicate(BF16 * d.s * d.b * d.h)
    return blk


def free_gather(tr, blk):
    if blk is not None:
        tr.free(blk)


# --- one iteration ----------------------------------------------------------------

def forward_layer(tr, d):
    """One transformer layer's forward; returns the tensors kept for backward."""
    s, b, h, t, sh = d.s, d.b, d.h, d.t, d.sh
    ln, bias_add = FWD_SITES["layer_norm"], FWD_SITES["bias_add"]
    linear, gather = LAYER_FWD + FWD_SITES["linear"], LAYER_FWD + FWD_SITES["gather"]
    kept = {"ln1_out": tr.alloc(BF16 * sh * b * h, ln)}
    g = tp_gather(tr, d, gather)
    kept["qkv"] = tr.alloc(BF16 * s * b * 3 * h // t, linear)
    tr.compute(2 * s * b * h * 3 * h / t)
    free_gather(tr, g)
    kept["attn_out"] = tr.alloc(BF16 * s * b * h // t, FWD_SITES["attention"])
    kept["softmax_lse"] = tr.alloc(FP32 * b * (d.a // t) * s, FWD_SITES["attention"])
    tr.compute(4 * s * s * b * h / t)
    kept["residual1"] = tr.alloc(BF16 * sh * b * h, bias_add)
    tr.compute(2 * s * b * h * h / t)
    kept["ln2_out"] = tr.alloc(BF16 * sh * b * h, ln)
    g = tp_gather(tr, d, gather)
    kept["fc1_out"] = tr.alloc(BF16 * s * b * d.f // t, linear)
    tr.compute(2 * s * b * h * d.f / t)
    free_gather(tr, g)
    kept["gelu_out"] = tr.alloc(BF16 * s * b * d.f // t, FWD_SITES["gelu"])
    kept["layer_out"] = tr.alloc(BF16 * sh * b * h, bias_add)
    tr.compute(2 * s * b * h * d.f / t)
    return kept


def forward_head(tr, d):
    """Final LayerNorm, output layer (tied embeddings), vocab-parallel cross entropy."""
    s, b, v = d.s, d.b, d.V // d.t
    kept = {"final_ln_out": tr.alloc(BF16 * d.sh * b * d.h, FWD_SITES["layer_norm"])}
    g = tp_gather(tr, d, FWD + FWD_SITES["gather"])
    logits = tr.alloc(BF16 * s * b * v, FWD + FWD_SITES["linear"])
    tr.compute(2 * s * b * d.h * v)
    free_gather(tr, g)
    kept["probs"] = tr.alloc(FP32 * s * b * v, FWD_SITES["probs"])
    tr.free(logits)
    kept["loss"] = tr.alloc(FP32 * s * b, FWD_SITES["loss"])
    return kept


def forward(tr, d):
    """Returns the MXFP8 buffers by bucket and the kept tensors by unit."""
    tr.begin("forward")
    params = {d.B - 1: param_gather_buffer(tr, d, d.B - 1)}
    embed = tr.alloc(BF16 * d.sh * d.b * d.h, FWD_SITES["embed_out"])
    layers = []
    for i in range(d.L):
        k = d.bucket_of_layer(i)
        if k not in params:
            params[k] = param_gather_buffer(tr, d, k)
        layers.append(forward_layer(tr, d))
    head = forward_head(tr, d)
    tr.end()
    return params, embed, layers, head


def backward_head(tr, d, head):
    s, b, v = d.s, d.b, d.V // d.t
    d_logits = tr.alloc(BF16 * s * b * v, BWD_SITES["d_logits"])
    tr.free(head["probs"], head["loss"])
    g = tp_gather(tr, d, BWD_SITES["gather"])
    d_final = tr.alloc(BF16 * d.sh * b * d.h, BWD_SITES["dgrad"])
    tr.compute(4 * s * b * d.h * v)
    free_gather(tr, g)
    tr.free(d_logits, head["final_ln_out"])
    return d_final


def backward_layer(tr, d, kept, d_in):
    """One layer's backward; frees what forward kept and returns d_ln1."""
    s, b, h, t, sh = d.s, d.b, d.h, d.t, d.sh
    g = tp_gather(tr, d, BWD_SITES["gather"])
    d_fc = tr.alloc(BF16 * s * b * d.f // t, BWD_SITES["d_fc"])
    tr.compute(4 * s * b * h * d.f / t)
    tr.free(kept["gelu_out"], kept["fc1_out"])
    d_ln2 = tr.alloc(BF16 * sh * b * h, BWD_SITES["dgrad"])
    tr.compute(4 * s * b * h * d.f / t)
    free_gather(tr, g)
    tr.free(d_fc, kept["ln2_out"], kept["residual1"])
    g = tp_gather(tr, d, BWD_SITES["gather"])
    d_qkv = tr.alloc(BF16 * s * b * 3 * h // t, BWD_SITES["d_qkv"])
    tr.compute(8 * s * s * b * h / t + 4 * s * b * h * h / t)
    tr.free(kept["softmax_lse"], kept["attn_out"], kept["qkv"])
    d_ln1 = tr.alloc(BF16 * sh * b * h, BWD_SITES["dgrad"])
    tr.compute(4 * s * b * h * 3 * h / t)
    free_gather(tr, g)
    tr.free(d_qkv, kept["ln1_out"], d_ln2, d_in, kept["layer_out"])
    return d_ln1


def backward(tr, d, params, embed, layers, head):
    """Units: head, layers L-1..0, embedding; buckets reduce as they complete."""
    tr.begin("backward")
    grad = backward_head(tr, d, head)
    pending = []
    for i in reversed(range(d.L + 1)):  # i = 0 is the embedding, layer j is i = j + 1
        launched_before, pending = pending, []
        if i > 0:
            grad = backward_layer(tr, d, layers[i - 1], grad)
            k, last = d.bucket_of_layer(i - 1), d.bucket_layers[d.bucket_of_layer(i - 1)][0]
            done = k != d.B - 1 and i - 1 == last
        else:
            tr.compute(2 * d.s * d.b * d.h)  # embedding gradient, into the grad buffer
            tr.free(grad, embed)
            k, done = d.B - 1, True
        if done:
            tr.free(params[k])
            pending.append(grad_reduce_buffer(tr, d, k))
        for blk in launched_before:
            tr.free(blk)
    tr.communicate(BF16 * d.bucket_elements[d.B - 1])
    tr.free(*pending)
    tr.end()


def optimizer(tr, d):
    tr.begin("optimizer")
    norms = tr.alloc(FP32 * d.B, OPT_SITES["grad_norm"])
    for n in d.bucket_elements:
        shard = tr.alloc(FP32 * n // d.d, OPT_SITES["grad_shard"])
        tr.compute(16 * n / d.d)
        tr.free(shard)
    tr.free(norms)
    tr.end()


# --- output ---------------------------------------------------------------------

def command_text(o):
    opts = ["--%s=%s" % (k.replace("_", "-"), v) for k, v in vars(o).items()
            if k not in ("output", "format") and v is not None]
    return "megatron_step.py " + " ".join(opts)


def write_csv(out, o, d, tr):
    out.write("# memprof trace: SYNTHETIC, written by samples/megatron/megatron_step.py;\n"
              "# no GPU ran to make it.  A model of rank 0 of a TP x DP Megatron-style run:\n"
              "# %s\n"
              "# bucket elements (padded): %s.  See samples/megatron/README.md.\n"
              % (command_text(o), " ".join(str(n) for n in d.bucket_elements)))
    out.write("ts_ns,op,id,size,requested,address,device,stream,pid,phase,api,device_free,stack\n")
    for row in tr.rows:
        out.write(row + "\n")


def parse_args(argv):
    p = argparse.ArgumentParser(
        prog="megatron_step.py",
        description="Write a SYNTHETIC memprof CSV trace of a Megatron-style training run "
                    "(rank 0 of TP x DP).  Sizes follow from the model dimensions.")
    add = p.add_argument
    add("--layers", type=int, default=8, help="transformer layers (default 8)")
    add("--hidden", type=int, default=4096, help="hidden size h (default 4096)")
    add("--ffn", type=int, default=None, help="FFN size f (default 4 x hidden)")
    add("--heads", type=int, default=32, help="attention heads (default 32)")
    add("--vocab", type=int, default=50304, help="vocabulary size (default 50304)")
    add("--seq", type=int, default=4096, help="sequence length (default 4096)")
    add("--micro-batch", type=int, default=1, help="micro-batch size (default 1)")
    add("--tp", type=int, default=2, help="tensor-parallel size (default 2)")
    add("--dp", type=int, default=4,
        help="data-parallel size, for the optimizer shards (default 4)")
    add("--buckets", type=int, default=4, help="gradient buckets, 1..layers (default 4)")
    add("--iterations", type=int, default=3, help="training iterations (default 3)")
    add("--seed", type=int, default=1, help="seed of the timestamp jitter (default 1)")
    add("--format", choices=["csv"], default="csv", help="output format (only csv)")
    add("-o", "--output", default="-", help="output file (default standard output)")
    o = p.parse_args(argv)
    check_dims(p, o)
    return o


def main(argv):
    o = parse_args(argv)
    d = Dims(o)
    tr = Trace(o.seed)
    tr.begin("SYNTHETIC " + command_text(o))
    tr.end()
    tr.begin("init")
    alloc_parameters(tr, d)
    alloc_grad_buffers(tr, d)
    alloc_adam_state(tr, d)
    tr.end()
    for _ in range(o.iterations):
        params, embed, layers, head = forward(tr, d)
        backward(tr, d, params, embed, layers, head)
        optimizer(tr, d)
    if o.output == "-":
        write_csv(sys.stdout, o, d, tr)
    else:
        with open(o.output, "w", newline="\n") as out:
            write_csv(out, o, d, tr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
