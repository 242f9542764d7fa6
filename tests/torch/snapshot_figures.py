#!/usr/bin/env python3
"""snapshot_figures.py - the figures 'memprof info --json' must give for a
PyTorch memory snapshot, computed independently of memprof with the standard
pickle module.

The state at the start of the trace window is found by walking the trace
backwards from the final state (memprof walks forwards); the end figures
come from PyTorch's own per-segment fields (total_size, allocated_size,
active_size) and block fields (requested_size).  Prints JSON:
{"devices": {ordinal: {...}}, "events_by_op": {...}}.

usage: snapshot_figures.py SNAPSHOT.pickle
"""
import json
import pickle
import sys

ACTIVE = ("active_allocated", "active_pending_free", "active_awaiting_free")


def end_block_sizes(trace, w):
    """Trace index -> granted size, for the entries of blocks the window
    leaves allocated or pending: their alloc (and free_requested) hold the
    final state's block, whose size is known exactly."""
    live, pending, out = {}, {}, {}
    for i, e in enumerate(trace):
        a, addr = e["action"], e.get("addr")
        if a == "alloc":
            live[addr] = [i]
            pending.pop(addr, None)
        elif a == "free_requested" and addr in live:
            pending[addr] = live.pop(addr) + [i]
        elif a in ("free_completed", "free"):
            live.pop(addr, None)
            pending.pop(addr, None)
    for addr, idx in live.items():
        if addr in w["allocated"]:
            out[idx[0]] = w["allocated"][addr]["size"]
    for addr, idx in pending.items():
        if addr in w["pending_final"]:
            for i in idx:
                out[i] = w["pending_final"][addr]["size"]
    return out


def granted(requested):
    """PyTorch's caching allocator rounds every request up to 512 bytes.  Its
    trace records only requested sizes: this is the granted size of a block
    the final state no longer holds."""
    return max(512, -(-requested // 512) * 512)


def blocks_of(seg):
    addr = seg["address"]
    for b in seg.get("blocks", []):
        addr = b.get("address", addr)
        yield addr, b
        addr += b["size"]


def window_start(snap_segments, trace, dev):
    """The state of device dev at the start of the trace window, found by
    undoing every entry from the final state backwards.  Returns a dict:
    live and pending (freed by the program, not yet by the allocator),
    address -> (granted, requested, frames) of the blocks at the start,
    segments (address -> total size, not expandable), mapped (bytes of
    expandable segments mapped, may be negative in a broken snapshot),
    allocated (address -> final block) and segs (the device's final
    segments)."""
    segs = [s for s in snap_segments if s.get("device", 0) == dev]
    allocated = {}  # address -> block, final state
    pending = {}
    for s in segs:
        for addr, b in blocks_of(s):
            if b["state"] == "active_allocated":
                allocated[addr] = b
            elif b["state"] in ACTIVE:
                pending[addr] = b

    def final(b):
        return b["size"], b.get("requested_size", b["size"]), b.get("frames")

    A = {addr: final(b) for addr, b in allocated.items()}
    P = {addr: final(b) for addr, b in pending.items()}
    S = {s["address"]: s["total_size"] for s in segs if not s.get("is_expandable")}
    M = sum(s["total_size"] for s in segs if s.get("is_expandable"))
    for e in reversed(trace):
        a, addr = e["action"], e.get("addr")
        if a == "alloc":
            A.pop(addr, None)
        elif a == "free_requested":
            P.pop(addr, None)
            A[addr] = (granted(e["size"]), e["size"], None)
        elif a == "free_completed":
            P[addr] = (granted(e["size"]), e["size"], None)
        elif a == "free":
            A[addr] = (granted(e["size"]), e["size"], None)
        elif a == "segment_alloc":
            S.pop(addr, None)
        elif a == "segment_free":
            S[addr] = e["size"]
        elif a == "segment_map":
            M -= e["size"]
        elif a == "segment_unmap":
            M += e["size"]
    return {"live": A, "pending": P, "segments": S, "mapped": M, "allocated": allocated,
            "pending_final": pending,
            "segs": segs}


def device_figures(snap_segments, trace, dev, counts):
    w = window_start(snap_segments, trace, dev)
    segs = w["segs"]
    allocated = {addr: b["size"] for addr, b in w["allocated"].items()}
    A = {addr: v[0] for addr, v in w["live"].items()}
    P, S, M = w["pending"], w["segments"], w["mapped"]

    counts["preexisting"] += len(A) + len(P)
    counts["free_requested"] += len(P)
    counts["reserve"] += len(S)
    counts["map"] += 1 if M > 0 else 0

    # An alloc with no later free of its address holds the final state's
    # block, and so does one freed by a free_requested only (still pending).
    survivor_sizes = end_block_sizes(trace, w)
    survivors = set(survivor_sizes)

    # Forwards from the start: live bytes (alloc to the program's free) and
    # reserved bytes (segments, mapped pages), and their maxima.
    live_blocks = dict(A)
    live = sum(A.values())
    reserved = sum(S.values()) + max(M, 0)
    segs_live = dict(S)
    peak_live, peak_reserved = live, reserved
    for i, e in enumerate(trace):
        a, addr = e["action"], e.get("addr")
        if a == "alloc":
            size = survivor_sizes[i] if i in survivors else granted(e["size"])
            live_blocks[addr] = size
            live += size
        elif a in ("free_requested", "free") and addr in live_blocks:
            live -= live_blocks.pop(addr)
        elif a == "free_completed" and addr in live_blocks:
            live -= live_blocks.pop(addr)
        elif a == "segment_alloc":
            segs_live[addr] = e["size"]
            reserved += e["size"]
        elif a == "segment_free" and addr in segs_live:
            reserved -= segs_live.pop(addr)
        elif a == "segment_map":
            reserved += e["size"]
        elif a == "segment_unmap":
            reserved -= e["size"]
        peak_live = max(peak_live, live)
        peak_reserved = max(peak_reserved, reserved)
        name = {"alloc": "alloc", "free_requested": "free_requested",
                "free_completed": "free", "free": "free", "segment_alloc": "reserve",
                "segment_free": "release", "segment_map": "map",
                "segment_unmap": "unmap", "oom": "oom"}.get(a)
        if name:
            counts[name] += 1

    end_reserved = sum(s["total_size"] for s in segs)
    end_live = sum(s["allocated_size"] for s in segs)
    end_requested = sum(b.get("requested_size", b["size"]) for s in segs
                        for _, b in blocks_of(s) if b["state"] == "active_allocated")
    return {
        "peak_live_bytes": peak_live,
        "peak_reserved_bytes": peak_reserved,
        "end": {
            "reserved_bytes": end_reserved,
            "live_bytes": end_live,
            "requested_bytes": end_requested,
            "internal_fragmentation_bytes": end_live - end_requested,
            "free_in_reserved_bytes": sum(s["total_size"] - s["active_size"] for s in segs),
        },
    }


def main():
    with open(sys.argv[1], "rb") as f:
        snap = pickle.load(f)
    if isinstance(snap, list):
        snap = {"segments": snap, "device_traces": []}
    traces = snap.get("device_traces") or []
    devices = {s.get("device", 0) for s in snap["segments"]}
    devices |= {i for i, t in enumerate(traces) if t}
    counts = dict.fromkeys(["alloc", "free", "preexisting", "reserve", "release", "map",
                            "unmap", "oom", "phase_begin", "phase_end", "free_requested"], 0)
    for a in snap.get("external_annotations") or []:
        counts["phase_begin" if a["stage"] == "START" else "phase_end"] += 1
    out = {"devices": {}, "events_by_op": counts}
    for dev in sorted(devices):
        trace = traces[dev] if dev < len(traces) else []
        out["devices"][str(dev)] = device_figures(snap["segments"], trace, dev, counts)
    json.dump(out, sys.stdout, indent=1, sort_keys=True)
    print()


if __name__ == "__main__":
    main()
