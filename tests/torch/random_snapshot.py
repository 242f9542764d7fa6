#!/usr/bin/env python3
"""random_snapshot.py - a random but self-consistent PyTorch memory
snapshot, from a small model of the caching allocator, for the analyze
tests: two devices, blocks placed first fit in segments and split, freed
with free_requested and (sometimes much later) free_completed, free
neighbours merged, empty segments released, an expandable segment whose
pages are mapped and unmapped at its top on device 1, OOMs, annotations,
stacks with characters the stack text escapes, timestamps that tie across
devices.  The trace keeps only its last entries (a ring buffer), so the
window's start state matters.  Deterministic for a seed.

usage: random_snapshot.py SEED ENTRIES OUT.pickle
"""
import pickle
import random
import sys

MiB = 1 << 20
PAGE = 2 * MiB


def rounded(n):
    return max(512, -(-n // 512) * 512)


class Segment:
    def __init__(self, address, size, stream, expandable=False):
        self.address, self.size, self.stream, self.expandable = address, size, stream, expandable
        # [offset, size, state, requested, frames], in address order, covering [0, size)
        self.blocks = [[0, size, "inactive", 0, []]]
        self.mapped = 0  # expandable: bytes mapped from the start

    def place(self, size, requested, frames, limit):
        for i, b in enumerate(self.blocks):
            if b[2] == "inactive" and b[1] >= size and b[0] + size <= limit:
                if b[1] > size:
                    self.blocks.insert(i + 1, [b[0] + size, b[1] - size, "inactive", 0, []])
                b[1:] = [size, "active_allocated", requested, frames]
                return self.address + b[0]
        return None

    def find(self, address):
        for b in self.blocks:
            if self.address + b[0] == address:
                return b
        return None

    def merge(self):
        out = []
        for b in self.blocks:
            if out and out[-1][2] == "inactive" and b[2] == "inactive":
                out[-1][1] += b[1]
            else:
                out.append(b)
        self.blocks = out

    def empty(self):
        return all(b[2] == "inactive" for b in self.blocks)


class Device:
    def __init__(self, ordinal, rng, stacks, expandable):
        self.ordinal, self.rng, self.stacks = ordinal, rng, stacks
        self.base = 0x7f0000000000 + ordinal * 0x100000000
        self.next_segment = self.base + 0x40000000
        self.segments = []
        self.live, self.pending = [], []  # addresses
        self.trace = []
        self.exp = Segment(self.base, 256 * MiB, 0, True) if expandable else None

    def entry(self, action, addr, size, t, stream=0, frames=()):
        self.trace.append({"action": action, "addr": addr, "size": size, "stream": stream,
                           "time_us": t, "frames": list(frames)})

    def alloc(self, t):
        rng = self.rng
        requested = rng.choice([rng.randint(1, 4096), rng.randint(1, 1 << 20),
                                rng.randint(1 << 20, 24 << 20), 512, 1 << 20])
        size = rounded(requested) + (512 if rng.random() < 0.05 else 0)
        frames = rng.choice(self.stacks)
        stream = rng.choice([0, 0, 7, (1 << 63) + 5])
        addr = None
        if self.exp is not None and rng.random() < 0.5:
            seg = self.exp
            addr = seg.place(size, requested, frames, seg.size)
            if addr is not None:
                top = seg.find(addr)[0] + size
                while seg.mapped < top:  # map pages up to the block's end
                    grow = min(PAGE * rng.randint(1, 2), seg.size - seg.mapped)
                    self.entry("segment_map", seg.address + seg.mapped, grow, t, stream)
                    seg.mapped += grow
        if addr is None:
            for seg in self.segments:
                addr = seg.place(size, requested, frames, seg.size)
                if addr is not None:
                    break
            if addr is None:
                if rng.random() < 0.02:  # the allocator cannot get more memory
                    self.trace.append({"action": "oom", "size": size, "stream": stream,
                                       "device_free": rng.randint(0, 1 << 30), "time_us": t,
                                       "frames": list(frames)})
                    return
                total = max(2 * MiB, -(-size // (2 * MiB)) * 2 * MiB)
                if rng.random() < 0.3:
                    total += 2 * MiB * rng.randint(1, 4)
                seg = Segment(self.next_segment, total, stream)
                self.next_segment += total + 2 * MiB * rng.randint(0, 2)
                self.segments.append(seg)
                self.entry("segment_alloc", seg.address, total, t, stream)
                addr = seg.place(size, requested, frames, seg.size)
        self.entry("alloc", addr, requested, t, stream, frames)
        self.live.append(addr)

    def segment_of(self, addr):
        for seg in self.segments + ([self.exp] if self.exp else []):
            if seg.address <= addr < seg.address + seg.size:
                return seg
        raise AssertionError("no segment at %#x" % addr)

    def free_requested(self, t):
        addr = self.live.pop(self.rng.randrange(len(self.live)))
        seg = self.segment_of(addr)
        b = seg.find(addr)
        self.entry("free_requested", addr, b[3], t, seg.stream)
        b[2] = "active_pending_free"
        self.pending.append(addr)

    def free_completed(self, t):
        addr = self.pending.pop(self.rng.randrange(len(self.pending)))
        seg = self.segment_of(addr)
        b = seg.find(addr)
        self.entry("free_completed", addr, b[3], t, seg.stream)
        b[2:] = ["inactive", 0, []]
        seg.merge()
        if seg.expandable:  # unmap whole free pages at the top
            last = seg.blocks[-1]
            keep = -(-last[0] // PAGE) * PAGE if last[2] == "inactive" else seg.mapped
            if keep < seg.mapped and self.rng.random() < 0.5:
                self.entry("segment_unmap", seg.address + keep, seg.mapped - keep, t)
                seg.mapped = keep
        elif seg.empty() and self.rng.random() < 0.3:
            self.entry("segment_free", seg.address, seg.size, t, seg.stream)
            self.segments.remove(seg)

    def step(self, t):
        r = self.rng.random()
        if r < 0.45 or not self.live:
            self.alloc(t)
        elif r < 0.8:
            self.free_requested(t)
        elif self.pending:
            self.free_completed(t)

    def final_segments(self):
        out = []
        segs = self.segments + ([self.exp] if self.exp and self.exp.mapped else [])
        for seg in segs:
            blocks, total = [], seg.mapped if seg.expandable else seg.size
            for off, size, state, requested, frames in seg.blocks:
                if off >= total:
                    break
                size = min(size, total - off)
                blocks.append({"address": seg.address + off, "size": size,
                               "requested_size": requested, "state": state, "frames": frames})
            active = [b for b in blocks if b["state"] != "inactive"]
            out.append({"device": self.ordinal, "address": seg.address, "total_size": total,
                        "allocated_size": sum(b["size"] for b in blocks
                                              if b["state"] == "active_allocated"),
                        "active_size": sum(b["size"] for b in active),
                        "requested_size": sum(b["requested_size"] for b in active),
                        "stream": seg.stream, "segment_type": "large",
                        "segment_pool_id": (0, 0), "is_expandable": seg.expandable,
                        "frames": [], "blocks": blocks})
        return out


def make_stacks(rng):
    names = ["forward", "backward", "linear;relu", "at@home", "c\\path", "", "main",
             "torch::unwind::unwind()"]
    files = ["model.py", "data:v2.py", "x;y.py", "??", "", "a\\b.py"]
    stacks = [[]]
    for _ in range(12):
        stacks.append([{"name": rng.choice(names), "filename": rng.choice(files),
                        "line": rng.choice([0, 7, 42, 1234, -1])}
                       for _ in range(rng.randint(1, 5))])
    return stacks


def main():
    seed, n, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    rng = random.Random(seed)
    stacks = make_stacks(rng)
    devices = [Device(0, rng, stacks, False), Device(1, rng, stacks, True)]
    t = 1748730000000000
    annotations = []
    for i in range(n):
        t += rng.choice([0, 0, 1, 3, 10])
        rng.choice(devices).step(t)
        if i % 500 == 250:
            stage = "START" if len(annotations) % 2 == 0 else "END"
            annotations.append({"stage": stage, "name": "step;%d" % (i // 1000),
                                "device": 0, "time_us": t})
    snap = {"segments": [s for d in devices for s in d.final_segments()],
            "device_traces": [d.trace[len(d.trace) // 3:] for d in devices],  # a ring buffer
            "allocator_settings": {"expandable_segments": True},
            "external_annotations": annotations}
    with open(out, "wb") as f:
        pickle.dump(snap, f, protocol=4)


if __name__ == "__main__":
    main()
