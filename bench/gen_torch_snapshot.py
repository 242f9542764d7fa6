#!/usr/bin/env python3
"""gen_torch_snapshot.py - a large PyTorch memory snapshot for bench/report-snapshot.sh,
in the layout of torch.cuda.memory._dump_snapshot, written with the standard pickle
module: N allocations with time_us in 20 MiB segments, each at a 512 KiB slot whose
previous block is freed first (free_requested, free_completed); 200 distinct stacks of
12 frames (a CPython frame among them, as real snapshots have), each entry with its own
copy of its frames as torch writes them; the final segments and blocks the trace
leaves.  About 700 bytes of pickle per allocation.  Deterministic for a given N.

usage: gen_torch_snapshot.py N OUT.pickle
"""
import pickle
import random
import sys

MiB = 1 << 20


def stacks():
    out = []
    for s in range(200):
        frames = [{"name": "PyEval_EvalFrameDefault", "filename": "Python/ceval.c", "line": 4200}]
        for d in range(10):
            frames.append({"name": "layer%d_%d" % (s % 17, d), "filename": "model/block%d.py" % (s % 9),
                           "line": 10 + d})
        frames.append({"name": "train_step", "filename": "train.py", "line": 88})
        out.append(frames)
    return out


def main():
    n, path = int(sys.argv[1]), sys.argv[2]
    rng = random.Random(1)
    st = stacks()
    trace, live, t = [], {}, 1748730000000000
    seg_size = 20 * MiB
    n_segs = max(4, n // 2000)
    segs = [0x7f0000000000 + i * seg_size for i in range(n_segs)]
    trace += [{"action": "segment_alloc", "addr": a, "size": seg_size, "stream": 0,
               "time_us": t, "frames": []} for a in segs]
    slot = 0
    for i in range(n):
        t += rng.randint(1, 20)
        size = 512 * rng.randint(1, 64)
        addr = segs[slot % n_segs] + (slot // n_segs % 40) * 512 * 1024
        slot += 1
        if addr in live:
            old = live.pop(addr)
            trace.append({"action": "free_requested", "addr": addr, "size": old, "stream": 0,
                          "time_us": t, "frames": []})
            trace.append({"action": "free_completed", "addr": addr, "size": old, "stream": 0,
                          "time_us": t, "frames": []})
        trace.append({"action": "alloc", "addr": addr, "size": size, "stream": 0, "time_us": t,
                      "frames": [dict(f) for f in st[rng.randrange(len(st))]]})
        live[addr] = size
    segments = []
    for a in segs:
        blocks, at = [], a
        for off in range(0, seg_size, 512 * 1024):
            b = a + off
            if b in live:
                if b > at:
                    blocks.append({"address": at, "size": b - at, "requested_size": 0,
                                   "state": "inactive", "frames": []})
                blocks.append({"address": b, "size": live[b], "requested_size": live[b],
                               "state": "active_allocated", "frames": []})
                at = b + live[b]
        if at < a + seg_size:
            blocks.append({"address": at, "size": a + seg_size - at, "requested_size": 0,
                           "state": "inactive", "frames": []})
        segments.append({"device": 0, "address": a, "total_size": seg_size, "stream": 0,
                         "segment_type": "large", "segment_pool_id": (0, 0),
                         "is_expandable": False, "frames": [], "blocks": blocks})
    snap = {"segments": segments, "device_traces": [trace],
            "allocator_settings": {"PYTORCH_CUDA_ALLOC_CONF": ""}}
    with open(path, "wb") as f:
        pickle.dump(snap, f, protocol=4)


if __name__ == "__main__":
    main()
