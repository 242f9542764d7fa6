#!/usr/bin/env python3
"""make_snapshots.py - small PyTorch memory snapshots for the tests, written
with the standard pickle module in the layout of
torch.cuda.memory._dump_snapshot (see ../shared/notes/peers-and-formats.md,
section 2.3).  Every case a real snapshot can hold, at a size a person can
check by hand: two devices, segments and blocks live before the window,
blocks freed by the program but still pending at the start and at the end,
expandable segments, OOM, annotations, C++ frames, 64-bit unsigned streams,
the older 'free' action, a state-only list of segments, a trace without time_us.

usage: make_snapshots.py OUTDIR     (writes OUTDIR/*.pickle)
"""
import os
import pickle
import sys

MiB = 1 << 20
CPP = {"name": "torch::unwind::unwind()", "filename": "??", "line": 0}
FWD = [CPP, {"name": "forward", "filename": "model.py", "line": 42},
       {"name": "main", "filename": "train.py", "line": 7}]
BWD = [CPP, {"name": "backward", "filename": "model.py", "line": 88}]


def segment(device, address, total, blocks, stream=0, expandable=False):
    """blocks: (size, requested, state, frames) in address order; the rest of
    the segment is one inactive block."""
    out, addr = [], address
    for size, requested, state, frames in blocks:
        out.append({"address": addr, "size": size, "requested_size": requested,
                    "state": state, "frames": frames})
        addr += size
    if addr < address + total:
        out.append({"address": addr, "size": address + total - addr, "requested_size": 0,
                    "state": "inactive", "frames": []})
    active = [b for b in out if b["state"] != "inactive"]
    return {"device": device, "address": address, "total_size": total,
            "allocated_size": sum(b["size"] for b in out if b["state"] == "active_allocated"),
            "active_size": sum(b["size"] for b in active),
            "requested_size": sum(b["requested_size"] for b in active),
            "stream": stream, "segment_type": "large" if total > MiB else "small",
            "segment_pool_id": (0, 0), "is_expandable": expandable, "frames": [],
            "blocks": out}


def entry(action, addr, size, t, stream=0, frames=()):
    return {"action": action, "addr": addr, "size": size, "stream": stream,
            "time_us": 1748730000000000 + t, "frames": list(frames)}


SETTINGS = {"PYTORCH_CUDA_ALLOC_CONF": "", "max_split_size": -1,
            "garbage_collection_threshold": 0.0, "expandable_segments": False,
            "roundup_power2_divisions": {"1": 0, "2": 0}}


def two_devices():
    s0, s1, s2, s3 = 0x10000000, 0x20000000, 0x30000000, 0x40000000
    b2, b3 = s0 + 1024, s0 + 1536
    dev0 = [
        entry("alloc", b2, 100, 0, frames=FWD),
        entry("alloc", s0 + 0x100000, 3000, 1, frames=FWD),
        entry("free_requested", s0 + 0x100000, 3000, 2),
        entry("free_completed", s0 + 0x100000, 3000, 3),
        entry("free_completed", s0 + 0x180000, 700, 4),          # pending at the start
        entry("free_requested", s0 + 0x1c0000, 5000, 5, frames=BWD),  # live at the start
        entry("free_completed", s0 + 0x1c0000, 5000, 6),
        entry("segment_alloc", s1, 20 * MiB, 7, stream=7),
        entry("alloc", s1, 10 * MiB, 8, stream=7, frames=BWD),
        entry("free_requested", s1, 10 * MiB, 9, stream=7),
        entry("free_completed", s1, 10 * MiB, 10, stream=7),
        entry("segment_free", s1, 20 * MiB, 11, stream=7),
        entry("alloc", b3, 4096, 12),
        entry("free_requested", b3, 4096, 13),                   # pending at the end
        {"action": "oom", "size": 1 << 40, "device_free": 123456, "stream": 0,
         "time_us": 1748730000000014, "frames": FWD},
    ]
    dev1 = [
        entry("segment_alloc", s2, 2 * MiB, 2, stream=(1 << 63) + 5),
        entry("alloc", s2, 512, 3, stream=(1 << 63) + 5),
        entry("segment_free", s3, 2 * MiB, 15),                  # reserved before the window
    ]
    segments = [
        segment(0, s0, 2 * MiB, [(1024, 1000, "active_allocated", FWD),
                                 (512, 100, "active_allocated", FWD),
                                 (4096, 4096, "active_pending_free", [])]),
        segment(1, s2, 2 * MiB, [(512, 512, "active_allocated", [])], stream=(1 << 63) + 5),
    ]
    annotations = [
        {"stage": "START", "name": "forward", "device": 0, "time_us": 1748730000000000},
        {"stage": "END", "name": "forward", "device": 0, "time_us": 1748730000000010},
    ]
    return {"segments": segments, "device_traces": [dev0, dev1],
            "allocator_settings": SETTINGS, "external_annotations": annotations}


def expandable():
    base = 0x50000000
    trace = [
        entry("segment_map", base + 4 * MiB, 2 * MiB, 0),
        entry("alloc", base + 4 * MiB, 1500000, 1, frames=FWD),
        entry("segment_unmap", base + 6 * MiB, 2 * MiB, 2),
        entry("segment_map", base + 6 * MiB, 4 * MiB, 3),
        entry("alloc", base + 6 * MiB, 3 * MiB, 4),
    ]
    seg = segment(0, base, 10 * MiB, [(4 * MiB, 4 * MiB, "active_allocated", []),
                                      (1500160, 1500000, "active_allocated", FWD),
                                      (2 * MiB - 1500160, 0, "inactive", []),
                                      (3 * MiB, 3 * MiB, "active_allocated", [])],
                  expandable=True)
    settings = dict(SETTINGS, expandable_segments=True)
    return {"segments": [seg], "device_traces": [trace], "allocator_settings": settings}


def old_free_action():
    """Older PyTorch: one 'free' action, no allocator_settings."""
    base = 0x60000000
    trace = [
        entry("alloc", base, 2000, 0),
        entry("free", base, 2000, 1),
        entry("free", base + 4096, 512, 2),  # live before the window
        entry("alloc", base + 8192, 100, 3),
    ]
    seg = segment(0, base, 2 * MiB, [(8192, 0, "inactive", []),
                                     (512, 100, "active_allocated", [])])
    return {"segments": [seg], "device_traces": [trace]}


def no_time():
    """An older PyTorch: the same trace without any time_us (only the order is known)."""
    snap = two_devices()
    for trace in snap["device_traces"]:
        for e in trace:
            e.pop("time_us", None)
    return snap


def state_only():
    """torch.cuda.memory_snapshot(): a list of segments, no trace."""
    return [segment(0, 0x70000000, 2 * MiB, [(1024, 1000, "active_allocated", FWD),
                                             (2048, 2048, "active_pending_free", [])]),
            segment(2, 0x80000000, 20 * MiB, [(10 * MiB, 9 * MiB, "active_allocated", BWD)])]


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    cases = {"two-devices": two_devices(), "expandable": expandable(),
             "old-free": old_free_action(), "state-only": state_only(), "no-time": no_time()}
    for name, snap in cases.items():
        with open(os.path.join(out, name + ".pickle"), "wb") as f:
            pickle.dump(snap, f, protocol=4)
    for proto in (2, 3, 5):
        with open(os.path.join(out, "two-devices-p%d.pickle" % proto), "wb") as f:
            pickle.dump(two_devices(), f, protocol=proto)


if __name__ == "__main__":
    main()
