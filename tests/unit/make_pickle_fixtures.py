#!/usr/bin/env python3
"""make_pickle_fixtures.py - writes the pickles the unit tests embed, as C
byte arrays: pickle_fixtures.h (test_pickle.c: one value of every kind at
protocols 2 to 5) and torch_fixtures.h (test_import_torch.c: small PyTorch
memory snapshots in the layout of torch.cuda.memory._dump_snapshot, see
../shared/notes/peers-and-formats.md section 2.3).  Run once when a fixture
changes; the headers are committed so the tests need no Python.

usage: make_pickle_fixtures.py [DIR]     (default: this script's directory)
"""
import os
import pickle
import sys

MiB = 1 << 20
T0 = 1700000000000000  # time_us of the first entry


# --- test_pickle.c ------------------------------------------------------------------

def values(proto):
    """Every plain type; ints at each LONG width; a shared list (memo)."""
    shared = ["x"]
    v = {"none": None, "true": True, "false": False, "i1": 7, "i2": 300, "i4": 70000,
         "neg": -1, "neg4": -70000, "min64": -(1 << 63), "max64": (1 << 63) - 1,
         "u64": 1 << 63, "u64max": (1 << 64) - 1, "big": 1 << 64, "negbig": -(1 << 64) - 1,
         "huge": 1 << 2100,  # more than 255 bytes: LONG4
         "f": -2.5, "s": "h\u00e9llo", "long_s": "y" * 300,
         "t0": (), "t1": (1,), "t2": (1, 2), "t3": (1, 2, 3), "t4": (1, 2, 3, 4),
         "l": [1, "two", [3]], "d": {"k": 1, 2: "v"}, "a": shared, "b": shared}
    if proto == 4:  # more than 1000 items: several APPENDS / SETITEMS batches
        v["l"] = [None] * 1001 + [1]
        v["d"] = {i: None for i in range(1002)}
    if proto >= 3:
        v["bytes"] = b"\x00\xff"
    if proto >= 4:
        v["set"] = {5}
        v["fset"] = frozenset({6})
    if proto >= 5:
        v["ba"] = bytearray(b"ab")
    return v


# --- test_import_torch.c -------------------------------------------------------------

CPP = {"name": "c10::cuda::CUDACachingAllocator::malloc", "filename": "??", "line": 0}
FA = [{"name": "init", "filename": "model.py", "line": 10},
      {"name": "main", "filename": "train.py", "line": 3}]
FB = [CPP, {"name": "forward", "filename": "model.py", "line": 42},
      {"name": "main", "filename": "train.py", "line": 7}]
U64_STREAM = (1 << 63) + 5


def ev(action, addr, size, t, stream=0, frames=()):
    return {"action": action, "addr": addr, "size": size, "stream": stream,
            "time_us": T0 + t, "frames": list(frames)}


def blk(addr, size, req, state, frames=()):
    return {"address": addr, "size": size, "requested_size": req, "state": state,
            "frames": list(frames)}


def seg(dev, addr, total, blocks, stream=0, expandable=False):
    end = blocks[-1]["address"] + blocks[-1]["size"] if blocks else addr
    if end < addr + total:
        blocks = blocks + [blk(end, addr + total - end, 0, "inactive")]
    return {"device": dev, "address": addr, "total_size": total, "allocated_size": 0,
            "active_size": 0, "requested_size": 0, "stream": stream,
            "segment_type": "large" if total > MiB else "small", "segment_pool_id": (0, 0),
            "is_expandable": expandable, "frames": [], "blocks": blocks}


def two_devices():
    s0, s1 = 0x10000000, 0x20000000
    dev0 = [
        ev("alloc", s0 + 0x400, 100, 0, frames=FB),
        ev("free_completed", 0x10100000, 700, 1),          # pending at the window start
        ev("free_requested", 0x10200000, 5000, 2),         # live at the window start
        ev("free_completed", 0x10200000, 5000, 3),
        ev("segment_alloc", 0x30000000, 20 * MiB, 4, stream=7),
        ev("alloc", 0x30000000, 10 * MiB, 5, stream=7),
        ev("free_requested", 0x30000000, 10 * MiB, 6, stream=7),
        ev("free_completed", 0x30000000, 10 * MiB, 7, stream=7),
        ev("segment_free", 0x30000000, 20 * MiB, 8, stream=7),
        ev("alloc", s0 + 0x600, 4000, 9),
        ev("free_requested", s0 + 0x600, 4000, 10),         # pending at the end
        ev("segment_free", 0x40000000, 2 * MiB, 11),        # reserved before the window
        {"action": "oom", "size": 1 << 40, "device_free": 123456, "stream": 0,
         "time_us": T0 + 12, "frames": FB},
        {"action": "snapshot", "time_us": T0 + 13},
        {"action": "some_new_action", "addr": 0, "size": 0, "time_us": T0 + 14},
    ]
    dev1 = [ev("segment_alloc", s1, 2 * MiB, 3, stream=U64_STREAM),
            ev("alloc", s1, 512, 4, stream=U64_STREAM)]
    segments = [
        seg(0, s0, 2 * MiB, [blk(s0, 1024, 1000, "active_allocated", FA),
                             blk(s0 + 0x400, 512, 100, "active_allocated", FB),
                             blk(s0 + 0x600, 4096, 4000, "active_pending_free")]),
        seg(1, s1, 2 * MiB, [blk(s1, 512, 512, "active_allocated")], stream=U64_STREAM),
    ]
    settings = {"PYTORCH_CUDA_ALLOC_CONF": "max_split_size_mb:64", "max_split_size": -1,
                "garbage_collection_threshold": 0.5, "expandable_segments": False,
                "roundup_power2_divisions": {"1": 0, "2": 4}, "big": (1 << 64) - 1}
    annotations = [{"stage": "START", "name": "fwd", "device": 0, "time_us": T0},
                   {"stage": "END", "name": "fwd", "device": 0, "time_us": T0 + 9}]
    return {"segments": segments, "device_traces": [dev0, dev1],
            "allocator_settings": settings, "external_annotations": annotations}


def expandable():
    b = 0x50000000
    trace = [ev("segment_map", b + 4 * MiB, 2 * MiB, 0),
             ev("alloc", b + 4 * MiB, 1500000, 1, frames=FB),
             ev("segment_map", b + 6 * MiB, 2 * MiB, 2),
             ev("alloc", b + 6 * MiB, 2 * MiB, 3),
             ev("free_requested", b + 6 * MiB, 2 * MiB, 4),
             ev("free_completed", b + 6 * MiB, 2 * MiB, 5),
             ev("segment_unmap", b + 6 * MiB, 2 * MiB, 6)]
    segments = [seg(0, b, 6 * MiB, [blk(b, 4 * MiB, 4 * MiB, "active_allocated"),
                                    blk(b + 4 * MiB, 1500160, 1500000, "active_allocated")],
                    expandable=True)]
    return {"segments": segments, "device_traces": [trace],
            "allocator_settings": {"expandable_segments": True}}


def state_only():
    """torch.cuda.memory_snapshot(): a list of segments, no trace."""
    return [seg(0, 0x70000000, 2 * MiB, [blk(0x70000000, 1024, 1000, "active_allocated", FA),
                                         blk(0x70000400, 2048, 2048, "active_pending_free")]),
            seg(2, 0x80000000, 20 * MiB, [blk(0x80000000, 10 * MiB, 9 * MiB,
                                              "active_allocated", FB)])]


def old_free():
    """Older PyTorch: one 'free' action, no allocator_settings, no streams."""
    b = 0x60000000
    trace = [{"action": "alloc", "addr": b, "size": 2000, "time_us": T0},
             {"action": "free", "addr": b, "size": 2000, "time_us": T0 + 1},
             {"action": "free", "addr": b + 4096, "size": 512, "time_us": T0 + 2}]
    return {"segments": [seg(0, b, 2 * MiB, [])], "device_traces": [trace]}


def mismatch():
    """A final state that contradicts the trace, four ways."""
    a, b, c = 0x90000000, 0x90001000, 0x90002000
    trace = [ev("alloc", a, 100, 0), ev("free_requested", a, 100, 1),
             ev("free_completed", a, 100, 2),        # freed, yet live at the end: 1
             ev("alloc", b, 100, 3),                 # live, yet not in the final state: 2
             ev("alloc", c, 100, 4),                 # allocated, final says pending: 3
             ev("segment_free", 0xa0000000, 2 * MiB, 5),
             ev("segment_free", 0xa0000000, 2 * MiB, 6)]  # released twice: 4
    segments = [seg(0, 0x90000000, 2 * MiB, [blk(a, 512, 100, "active_allocated"),
                                             blk(a + 512, 3584, 0, "inactive"),
                                             blk(c, 512, 100, "active_pending_free")])]
    return {"segments": segments, "device_traces": [trace]}


def errors():
    e = {"action": "alloc", "addr": 4096, "size": 512, "stream": 0, "time_us": T0}
    return {
        "err_top_int": 5,
        "err_top_dict": {"device_traces": []},
        "err_segments_int": {"segments": 5},
        "err_no_addr": {"segments": [], "device_traces": [[dict(e), {
            "action": "alloc", "size": 512, "time_us": T0}]]},
        "err_neg_size": {"segments": [], "device_traces": [[dict(e, size=-5)]]},
        "err_big_size": {"segments": [], "device_traces": [[dict(e, size=1 << 56)]]},
        "err_entry_list": {"segments": [], "device_traces": [[], [e, [1, 2]]]},
        "err_segment_str": {"segments": ["seg"]},
        "err_block_size": {"segments": [{"address": 0, "total_size": 1024, "blocks": [
            {"size": 1 << 60, "state": "active_allocated"}]}]},
    }


def c_array(name, data):
    lines = ["static const unsigned char %s[] = {" % name]
    for i in range(0, len(data), 16):
        lines.append("\t" + ", ".join("0x%02x" % x for x in data[i:i + 16]) + ",")
    lines.append("};")
    return "\n".join(lines) + "\n"


def header(path, what, arrays):
    with open(path, "w") as f:
        f.write("/*\n * %s - %s.\n * Written by make_pickle_fixtures.py: "
                "do not edit.\n */\n" % (os.path.basename(path), what))
        for name, data in arrays:
            f.write(c_array(name, data))


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    header(os.path.join(out, "pickle_fixtures.h"),
           "pickles of one value of every kind, protocols 2 to 5, for test_pickle.c",
           [("fx_values_p%d" % p, pickle.dumps(values(p), protocol=p)) for p in (2, 3, 4, 5)])
    torch = [("fx_two_devices", pickle.dumps(two_devices(), protocol=4)),
             ("fx_two_devices_p2", pickle.dumps(two_devices(), protocol=2)),
             ("fx_expandable", pickle.dumps(expandable(), protocol=5)),
             ("fx_state_only", pickle.dumps(state_only(), protocol=3)),
             ("fx_old_free", pickle.dumps(old_free(), protocol=2)),
             ("fx_mismatch", pickle.dumps(mismatch(), protocol=4))]
    torch += [("fx_" + k, pickle.dumps(v, protocol=4)) for k, v in errors().items()]
    header(os.path.join(out, "torch_fixtures.h"),
           "small PyTorch memory snapshots for test_import_torch.c", torch)


if __name__ == "__main__":
    main()
