#!/usr/bin/env python3
"""make_demo_trace.py - write samples/traces/demo.csv, memprof's bundled demo.

The demo trace is SYNTHETIC: no GPU ran to make it.  It models, event by
event, what PyTorch's CUDA caching allocator does for three training steps
of a 4-layer MLP (1024 -> 4096 -> 4096 -> 4096 -> 1024, fp32, batch 256)
with AdamW:

  - parameters are allocated once (preexisting would be a mid-run attach;
    here they are allocs before the first step);
  - each step: forward keeps every layer's input and activation for
    backward; backward frees them as it goes and allocates gradients;
    the optimizer allocates its two moment buffers on the first step and
    a temporary per parameter on every step; zero_grad(set_to_none) frees
    the gradients;
  - block sizes are rounded up to 512 B and requested sizes are the exact
    tensor sizes; segments are reserved with the caching allocator's sizes
    (2 MiB for blocks up to 1 MiB, otherwise 20 MiB, or the size rounded
    to 2 MiB for blocks over 10 MiB) and never released; freed space is
    reused only at the top of a segment (a simplification: the real
    allocator splits and reuses any free block);
  - phases forward/backward/optimizer, and Python call stacks of a
    fictional train.py and model.py.

Deterministic: the same file on every run.  Usage:
    python3 make_demo_trace.py > demo.csv
"""
import sys

MiB = 1 << 20
DIMS = [1024, 4096, 4096, 4096, 1024]
BATCH = 256
STEPS = 3
F32 = 4


def round_block(n):
    return (n + 511) // 512 * 512


class Trace:
    def __init__(self):
        self.ts = 1_000_000
        self.rows = []
        self.next_id = 1
        self.next_seg = 1
        self.addr = 0x7F0000000000
        self.segments = []  # [address, size, used]
        self.phase = ""
        self.stream = 7

    def tick(self, ns):
        self.ts += ns

    def row(self, op, ident, size, requested, address, stack="", api="",
            free_bytes=""):
        self.rows.append([self.ts, op, ident, size, requested, "0x%x" % address,
                          0, self.stream if op not in ("phase_begin", "phase_end") else 0,
                          4242, self.phase, api, free_bytes, stack])
        self.tick(900)

    def segment_for(self, size):
        """A segment with room, reserving one as the caching allocator would."""
        for seg in self.segments:
            if seg[1] - seg[2] >= size and (size <= MiB) == (seg[1] == 2 * MiB):
                return seg
        seg_size = 2 * MiB if size <= MiB else (20 * MiB if size < 10 * MiB
                                                 else (size + 2 * MiB - 1) // (2 * MiB) * 2 * MiB)
        seg = [self.addr, seg_size, 0]
        self.addr += seg_size + 64 * MiB
        self.segments.append(seg)
        self.row("reserve", self.next_seg, seg_size, seg_size, seg[0], api="cudaMalloc")
        self.next_seg += 1
        self.tick(40_000)  # cudaMalloc is slow
        return seg

    def alloc(self, nbytes, stack):
        size = round_block(nbytes)
        seg = self.segment_for(size)
        address = seg[0] + seg[2]
        seg[2] += size
        ident = self.next_id
        self.next_id += 1
        self.row("alloc", ident, size, nbytes, address, stack)
        return (ident, size, address, seg)

    def free(self, block):
        ident, size, address, seg = block
        self.row("free", ident, size, size, address)
        if seg[0] + seg[2] == address + size:  # top of the segment: reusable
            seg[2] -= size

    def begin(self, name):
        self.phase = name
        self.row("phase_begin", 0, 0, 0, 0)

    def end(self, name):
        self.row("phase_end", 0, 0, 0, 0)
        self.phase = ""


def stack(*frames):
    return ";".join(["main@train.py:88", "train_step@train.py:61"] + list(frames))


def main():
    t = Trace()
    layers = list(zip(DIMS[:-1], DIMS[1:]))
    params = []
    for i, (fan_in, fan_out) in enumerate(layers):
        st = "main@train.py:80;build_model@model.py:%d;Linear.__init__@torch/nn/modules/linear.py:106" % (20 + i)
        params.append((t.alloc(fan_in * fan_out * F32, st),
                       t.alloc(fan_out * F32, st)))
    moments = None
    for step in range(STEPS):
        x = t.alloc(BATCH * DIMS[0] * F32, stack("next_batch@train.py:40"))
        y = t.alloc(BATCH * DIMS[-1] * F32, stack("next_batch@train.py:41"))
        t.begin("forward")
        saved = []
        h = x
        for i, (fan_in, fan_out) in enumerate(layers):
            out = t.alloc(BATCH * fan_out * F32,
                          stack("forward@model.py:%d" % (50 + i),
                                "linear@torch/nn/functional.py:2210"))
            saved.append(out)
            if i < len(layers) - 1:
                act = t.alloc(BATCH * fan_out * F32,
                              stack("forward@model.py:%d" % (50 + i), "gelu@torch/nn/functional.py:1920"))
                saved.append(act)
                h = act
        loss = t.alloc(512, stack("mse_loss@torch/nn/functional.py:3370"))
        t.end("forward")
        t.begin("backward")
        grads = []
        for i in reversed(range(len(layers))):
            fan_in, fan_out = layers[i]
            st = stack("backward@torch/_tensor.py:521", "run_backward@torch/autograd/graph.py:768")
            grads.append((t.alloc(fan_in * fan_out * F32, st), t.alloc(fan_out * F32, st)))
            tmp = t.alloc(BATCH * fan_in * F32, st)
            t.free(tmp)
            for _ in range(2 if i < len(layers) - 1 else 1):
                if saved:
                    t.free(saved.pop())
        t.free(loss)
        t.end("backward")
        t.begin("optimizer")
        if moments is None:
            st = stack("step@torch/optim/adamw.py:199", "_init_group@torch/optim/adamw.py:140")
            moments = [(t.alloc(w[1] * 1, st), t.alloc(w[1], st), t.alloc(b[1], st), t.alloc(b[1], st))
                       for w, b in params]
        for w, b in params:
            tmp = t.alloc(w[1], stack("step@torch/optim/adamw.py:199", "_multi_tensor_adamw@torch/optim/adamw.py:520"))
            t.free(tmp)
        for gw, gb in grads:
            t.free(gb)
            t.free(gw)
        t.end("optimizer")
        t.free(y)
        t.free(x)
    out = sys.stdout
    out.write("# memprof demo trace: SYNTHETIC, written by samples/traces/make_demo_trace.py\n"
              "# (a model of PyTorch's caching allocator during 3 training steps of an MLP;\n"
              "# no GPU ran to make it).  See samples/traces/README.md.\n")
    out.write("ts_ns,op,id,size,requested,address,device,stream,pid,phase,api,device_free,stack\n")
    for r in t.rows:
        out.write(",".join(str(v) for v in r) + "\n")


if __name__ == "__main__":
    main()
