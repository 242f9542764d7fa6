#!/usr/bin/env python3
"""make_torch_corpus.py - writes the seed inputs of the torch fuzz target
(tests/fuzz/corpus/torch/seed-*.pickle): small PyTorch memory snapshots in
the layout of torch.cuda.memory._dump_snapshot, pickled with the standard
module at protocols 2 to 5, each under 16 KiB; and regress-*.pickle, the
hand-made inputs that once hung the importer or overflowed it.  Run once;
the files are committed.  Other regress-* files there are fuzzer finds.

usage: make_torch_corpus.py [OUTDIR]
"""
import os
import pickle
import sys

MiB = 1 << 20
T0 = 1748730000000000
CPP = {"name": "c10::cuda::CUDACachingAllocator::malloc", "filename": "??", "line": 0}
PY = [CPP, {"name": "forward", "filename": "net.py", "line": 12},
      {"name": "<module>", "filename": "run.py", "line": 3}]


def block(addr, size, req, state, frames=()):
    return {"address": addr, "size": size, "requested_size": req, "state": state,
            "frames": list(frames)}


def segment(dev, addr, total, blocks, stream=0, expandable=False):
    return {"device": dev, "address": addr, "total_size": total,
            "allocated_size": sum(b["size"] for b in blocks if b["state"] == "active_allocated"),
            "active_size": sum(b["size"] for b in blocks if b["state"] != "inactive"),
            "requested_size": sum(b["requested_size"] for b in blocks),
            "stream": stream, "segment_type": "small" if total <= 2 * MiB else "large",
            "segment_pool_id": (0, 0), "is_expandable": expandable, "frames": [],
            "blocks": blocks}


def ev(action, addr, size, t, stream=0, frames=()):
    return {"action": action, "addr": addr, "size": size, "stream": stream,
            "time_us": T0 + t, "frames": list(frames)}


SETTINGS = {"PYTORCH_CUDA_ALLOC_CONF": "max_split_size_mb:128", "max_split_size": 134217728,
            "garbage_collection_threshold": 0.0, "expandable_segments": False,
            "release_lock_on_cudamalloc": False, "pinned_use_cuda_host_register": False,
            "roundup_power2_divisions": {"1": 0, "2": 4, "32768": 0}}


def two_devices():
    a = 0x7f0000000000
    trace0 = [ev("alloc", a, 1000, 0, frames=PY), ev("alloc", a + 1024, 300, 1, frames=PY),
              ev("free_requested", a + 1024, 300, 2), ev("free_completed", a + 1024, 300, 3),
              ev("free_completed", a + 4096, 512, 4), ev("segment_alloc", a + 2 * MiB, 20 * MiB, 5,
                                                        stream=3),
              ev("alloc", a + 2 * MiB, 5 * MiB, 6, stream=3), ev("free_requested", a + 2 * MiB,
                                                                5 * MiB, 7, stream=3),
              ev("segment_free", a + 40 * MiB, 2 * MiB, 8),
              {"action": "oom", "size": 1 << 34, "device_free": 1000, "stream": 0,
               "time_us": T0 + 9, "frames": PY},
              {"action": "snapshot", "time_us": T0 + 10}]
    trace1 = [ev("segment_alloc", 0x7e0000000000, 2 * MiB, 1, stream=(1 << 64) - 1),
              ev("alloc", 0x7e0000000000, 512, 2, stream=(1 << 64) - 1)]
    segs = [segment(0, a, 2 * MiB, [block(a, 1024, 1000, "active_allocated", PY),
                                    block(a + 1024, 2 * MiB - 1024, 0, "inactive")]),
            segment(0, a + 2 * MiB, 20 * MiB, [block(a + 2 * MiB, 5 * MiB, 5 * MiB,
                                                     "active_pending_free"),
                                               block(a + 7 * MiB, 15 * MiB, 0, "inactive")],
                    stream=3),
            segment(1, 0x7e0000000000, 2 * MiB, [block(0x7e0000000000, 512, 512,
                                                        "active_allocated")],
                    stream=(1 << 64) - 1)]
    return {"segments": segs, "device_traces": [trace0, trace1],
            "allocator_settings": SETTINGS}


def annotated():
    snap = two_devices()
    snap["external_annotations"] = [
        {"stage": "START", "name": "forward", "device": 0, "time_us": T0},
        {"stage": "START", "name": "backward", "device": 1, "time_us": T0 + 2},
        {"stage": "END", "name": "forward", "device": 0, "time_us": T0 + 6},
        {"stage": "END", "name": "backward", "device": 1, "time_us": T0 + 9}]
    return snap


def expandable():
    b = 0x600000000000
    trace = [ev("segment_map", b + 2 * MiB, 2 * MiB, 0), ev("alloc", b + 2 * MiB, MiB, 1),
             ev("segment_unmap", b + 4 * MiB, 2 * MiB, 2), ev("free", b, 2 * MiB, 3)]
    segs = [segment(0, b, 4 * MiB, [block(b, 2 * MiB, 0, "inactive"),
                                    block(b + 2 * MiB, MiB, MiB, "active_allocated"),
                                    block(b + 3 * MiB, MiB, 0, "inactive")], expandable=True)]
    return {"segments": segs, "device_traces": [trace],
            "allocator_settings": dict(SETTINGS, expandable_segments=True)}


def state_only():
    return [segment(0, 0x500000000000, 2 * MiB,
                    [block(0x500000000000, 2048, 2000, "active_allocated", PY),
                     block(0x500000000800, 2048, 2048, "active_pending_free")]),
            segment(3, 0x510000000000, 20 * MiB,
                    [block(0x510000000000, 20 * MiB, 19 * MiB, "active_allocated")])]


def big_ints():
    """Ints of every LONG width, a float, bytes, sets, self-reference."""
    loop = []
    loop.append(loop)
    return {"segments": [], "device_traces": [],
            "allocator_settings": {"a": -1, "b": 1 << 63, "c": 1 << 70, "d": -(1 << 70),
                                   "e": 2.5, "f": b"\x00\x01", "g": frozenset({1}),
                                   "h": {2, 3}, "i": (None, True, False), "loop": loop}}


def sstr(text):
    b = text.encode()
    return bytes([0x8c, len(b)]) + b  # SHORT_BINUNICODE


def regressions():
    """Hand-made pickles that once hung or overflowed the importer."""
    head = b"\x80\x04}" + sstr("segments")
    # allocator_settings: a list holding itself 4 times (4^16 JSON values)
    yield "settings-self-reference", head + b"]s" + sstr("allocator_settings") + \
        b"]q\x00(" + b"h\x00" * 4 + b"es."
    # the same list holding itself 1000 times (DUP): 10^4 JSON values and
    # 1000 nulls under each once the bound stopped only the recursion
    yield "settings-self-reference-wide", head + b"]s" + sstr("allocator_settings") + \
        b"]q\x00(h\x00" + b"2" * 999 + b"es."
    # one trace entry of 3000 keys, shared by 3000 entries (quadratic lookups)
    entry = b"}q\x01(" + sstr("action") + sstr("snapshot") + sstr("z") + b"N" + \
        b"2" * (2 * 3000 - 2) + b"u"
    yield "shared-large-dict", head + b"]s" + sstr("device_traces") + b"](](" + entry + \
        b"h\x01" * 2999 + b"ees."
    # 300 segment_map entries of 2^56 - 1 bytes (int64 overflow of the sum)
    size = sstr("size") + b"\x8a\x08" + b"\xff" * 7 + b"\x00"
    m = b"}q\x01(" + sstr("action") + sstr("segment_map") + sstr("addr") + b"K\x00" + size + b"u"
    yield "map-size-overflow", head + b"]s" + sstr("device_traces") + b"]((" + m + \
        b"h\x01" * 299 + b"les."
    seg = b"}q\x01(" + sstr("address") + b"K\x00" + sstr("total_size") + size[len(sstr("size")):] + \
        sstr("is_expandable") + b"\x88u"
    yield "expandable-size-overflow", head + b"](" + seg + b"h\x01" * 299 + b"es."


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__),
                                                              "corpus", "torch")
    os.makedirs(out, exist_ok=True)
    cases = [("two-devices", two_devices(), (2, 3, 4, 5)), ("annotated", annotated(), (4,)),
             ("expandable", expandable(), (5,)), ("state-only", state_only(), (3,)),
             ("values", big_ints(), (2, 5))]
    for name, obj, protos in cases:
        for p in protos:
            data = pickle.dumps(obj, protocol=p)
            assert len(data) < 16384, name
            with open(os.path.join(out, "seed-%s-p%d.pickle" % (name, p)), "wb") as f:
                f.write(data)
    for name, data in regressions():
        with open(os.path.join(out, "regress-%s.pickle" % name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
