#!/usr/bin/env python3
"""make_tune_traces.py - writes the hand-built PyTorch snapshots of
tests/cli/tune.sh into DIR, each a workload whose best allocator setting is
worked out here.  All sizes are MiB; large requests (>= 10 MiB) get a
segment of exactly their size (rounded to 2 MiB) when no cached block fits.

split.pickle - fragments under default splitting, not under max_split_size_mb.
    alloc A 100, free A, alloc B 30, alloc C 100, free B, free C.
    Defaults: B takes A's cached 100 MiB block and splits it (30 + 70 free),
    so C needs a second 100 MiB segment: 200 MiB reserved (the trace records
    exactly that with its segment events: fidelity 0%).  With
    max_split_size_mb of 30..100, A's block is oversize: B may not take it
    (it gets a 30 MiB segment of its own) and C reuses it whole: 130 MiB.
    Expandable segments: B at 0..30, C at 30..130 in 20 MiB chunks: 140 MiB.
    Best: max_split_size_mb, 130 MiB, 70 MiB saved.

expand.pickle - expandable segments save a computable number of bytes.
    alloc 30, free, alloc 40, free, alloc 50, free.  Defaults: each request is
    larger than every cached block: segments of 30 + 40 + 50 = 120 MiB.
    Expandable: one range grown in 20 MiB chunks; each request starts at its
    base, so only the largest counts: 60 MiB (3 chunks).  Nothing else helps
    (rounding only makes requests bigger; nothing is reused to split).
    Best: expandable_segments:True, 60 MiB, 60 MiB saved.

round.pickle - rounding divisions trade internal fragmentation for reuse.
    alloc 33, free, alloc 34, free, alloc 35, free, alloc 36, free.
    Defaults: a segment of 34 MiB (33 rounded to 2 MiB) that 34 reuses, then
    one of 36 that 36 reuses: 70 MiB.  In [32, 64) MiB, 8 divisions round
    every request to 36 MiB (a 4 MiB step), wasting up to 3 MiB of each, but
    one segment serves all four: 36 MiB.  (2 divisions: 48; 4: 40; 16, a
    2 MiB step: 70 as the defaults; expandable segments: 40.)
    Best: roundup_power2_divisions of 8 over [32, 64) MiB, 36 MiB, 34 saved.

two.pickle - the expand workload on device 0 and the round one on device 1:
    tune takes one device at a time.

async.pickle - the expand workload recorded under backend:cudaMallocAsync,
    which memprof does not model: tune refuses it.

usage: make_tune_traces.py DIR
"""
import os
import pickle
import sys

MiB = 1 << 20
T0 = 1700000000000000
SETTINGS = {"PYTORCH_CUDA_ALLOC_CONF": "", "max_split_size": -1,
            "garbage_collection_threshold": 0, "expandable_segments": False,
            "roundup_power2_divisions": {str(1 << i): 0 for i in range(16)}}


class Trace:
    def __init__(self):
        self.entries = []

    def ev(self, action, addr, size):
        self.entries.append({"action": action, "addr": addr, "size": size, "stream": 0,
                             "time_us": T0 + len(self.entries), "frames": []})

    def alloc(self, addr, mib):
        self.ev("alloc", addr, mib * MiB)

    def free(self, addr, mib):
        self.ev("free_requested", addr, mib * MiB)
        self.ev("free_completed", addr, mib * MiB)

    def snapshot(self):
        return {"segments": [], "device_traces": [self.entries],
                "allocator_settings": dict(SETTINGS)}


def split():
    t, s1, s2 = Trace(), 0x100000000, 0x200000000
    t.ev("segment_alloc", s1, 100 * MiB)
    t.alloc(s1, 100)
    t.free(s1, 100)
    t.alloc(s1, 30)
    t.ev("segment_alloc", s2, 100 * MiB)
    t.alloc(s2, 100)
    t.free(s1, 30)
    t.free(s2, 100)
    t.ev("segment_free", s1, 100 * MiB)
    t.ev("segment_free", s2, 100 * MiB)
    return t.snapshot()


def sequence(sizes):
    t = Trace()
    for i, mib in enumerate(sizes):
        addr = (i + 1) << 32
        t.alloc(addr, mib)
        t.free(addr, mib)
    return t.snapshot()


def main():
    out = sys.argv[1]
    other = sequence([30, 40, 50])
    other["allocator_settings"] = {"PYTORCH_CUDA_ALLOC_CONF": "backend:cudaMallocAsync"}
    two = sequence([30, 40, 50])
    two["device_traces"].append(sequence([33, 34, 35, 36])["device_traces"][0])
    for name, snap in (("split", split()), ("expand", sequence([30, 40, 50])),
                       ("round", sequence([33, 34, 35, 36])), ("async", other), ("two", two)):
        with open(os.path.join(out, name + ".pickle"), "wb") as f:
            pickle.dump(snap, f, protocol=4)


if __name__ == "__main__":
    main()
