#!/usr/bin/env python3
"""train_gpt.py - a small GPT-style language model trained on random tokens, for recording
with 'memprof record' (samples/torch/README.md).  Plain PyTorch: token and position
embeddings, --layers transformer blocks (causal self-attention and an MLP, pre-norm), a
final LayerNorm and an LM head; AdamW.  NVTX ranges: "step N" around each step and
"forward", "backward", "optimizer" inside it.  Prints the final loss and
torch.cuda.max_memory_allocated.  Without CUDA it says so and exits 1, unless --device=cpu
(a smoke test without ranges that matter)."""
import argparse
import math
import sys
import time


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--steps", type=int, default=20, help="optimizer steps (default 20)")
    p.add_argument("--batch", type=int, default=8, help="sequences per step (default 8)")
    p.add_argument("--seq", type=int, default=256, help="tokens per sequence (default 256)")
    p.add_argument("--layers", type=int, default=4, help="transformer blocks (default 4)")
    p.add_argument("--d-model", type=int, default=256, help="model width (default 256)")
    p.add_argument("--heads", type=int, default=4, help="attention heads (default 4)")
    p.add_argument("--vocab", type=int, default=8192, help="vocabulary size (default 8192)")
    p.add_argument("--device", default="cuda", help="cuda (default), cuda:N or cpu")
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    a = p.parse_args(argv)
    for name in ("steps", "batch", "seq", "layers", "d_model", "heads", "vocab"):
        if getattr(a, name) < 1:
            p.error("--%s must be at least 1" % name.replace("_", "-"))
    if a.d_model % a.heads:
        p.error("--d-model %d is not a multiple of --heads %d" % (a.d_model, a.heads))
    return a


def build_model(torch, a):
    nn = torch.nn
    F = torch.nn.functional

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1 = nn.LayerNorm(a.d_model)
            self.qkv = nn.Linear(a.d_model, 3 * a.d_model)
            self.proj = nn.Linear(a.d_model, a.d_model)
            self.ln2 = nn.LayerNorm(a.d_model)
            self.fc1 = nn.Linear(a.d_model, 4 * a.d_model)
            self.fc2 = nn.Linear(4 * a.d_model, a.d_model)

        def attention(self, x):
            b, t, c = x.shape
            q, k, v = self.qkv(x).split(c, dim=2)
            shape = (b, t, a.heads, c // a.heads)
            q, k, v = (z.view(shape).transpose(1, 2) for z in (q, k, v))
            scores = (q @ k.transpose(-2, -1)) / math.sqrt(c // a.heads)
            mask = torch.ones(t, t, dtype=torch.bool, device=x.device).tril()
            scores = scores.masked_fill(~mask, float("-inf"))
            y = F.softmax(scores, dim=-1) @ v
            return self.proj(y.transpose(1, 2).reshape(b, t, c))

        def forward(self, x):
            x = x + self.attention(self.ln1(x))
            return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.tok = nn.Embedding(a.vocab, a.d_model)
            self.pos = nn.Embedding(a.seq, a.d_model)
            self.blocks = nn.ModuleList(Block() for _ in range(a.layers))
            self.ln_f = nn.LayerNorm(a.d_model)
            self.head = nn.Linear(a.d_model, a.vocab, bias=False)

        def forward(self, idx, targets):
            pos = torch.arange(idx.shape[1], device=idx.device)
            x = self.tok(idx) + self.pos(pos)
            for blk in self.blocks:
                x = blk(x)
            logits = self.head(self.ln_f(x))
            return F.cross_entropy(logits.view(-1, a.vocab), targets.view(-1))

    return GPT()


def main(argv):
    a = parse_args(argv)
    try:
        import torch
    except ImportError as e:
        print("train_gpt: PyTorch is not installed: %s" % e, file=sys.stderr)
        return 1
    on_cuda = a.device.startswith("cuda")
    if on_cuda and not torch.cuda.is_available():
        print("train_gpt: no CUDA device usable by PyTorch (torch %s, built for CUDA %s); "
              "--device=cpu runs a smoke test on the CPU" % (torch.__version__, torch.version.cuda),
              file=sys.stderr)
        return 1
    nvtx = torch.cuda.nvtx if on_cuda else None

    def push(name):
        if nvtx:
            nvtx.range_push(name)

    def pop():
        if nvtx:
            nvtx.range_pop()

    torch.manual_seed(a.seed)
    dev = torch.device(a.device)
    push("init")
    model = build_model(torch, a).to(dev)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.1)
    pop()
    n_params = sum(p.numel() for p in model.parameters())
    print("train_gpt: %d parameters, %d layers, d_model %d, batch %d x %d tokens on %s" %
          (n_params, a.layers, a.d_model, a.batch, a.seq, dev))
    t0, loss = time.monotonic(), None
    for step in range(a.steps):
        push("step %d" % step)
        idx = torch.randint(0, a.vocab, (a.batch, a.seq), device=dev)
        targets = torch.randint(0, a.vocab, (a.batch, a.seq), device=dev)
        push("forward")
        loss = model(idx, targets)
        pop()
        push("backward")
        loss.backward()
        pop()
        push("optimizer")
        opt.step()
        opt.zero_grad(set_to_none=True)
        pop()
        pop()
    final = loss.item()
    if on_cuda:
        torch.cuda.synchronize()
    print("train_gpt: %d steps in %.2f s, final loss %.4f" % (a.steps, time.monotonic() - t0,
                                                            final))
    if on_cuda:
        print("train_gpt: max_memory_allocated %d bytes" % torch.cuda.max_memory_allocated(dev))
    if not math.isfinite(final):
        print("train_gpt: the loss is not finite", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
