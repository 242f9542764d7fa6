#!/usr/bin/python3
"""bench/make_big_snapshot.py - a large PyTorch memory snapshot for the
benchmarks, built by repeating the device trace of a real one.

usage: make_big_snapshot.py SOURCE.pickle OUT.pickle MIB

Copy r of the trace (r = 0 .. K-1) is shifted later in time by r times the
source's span and to other addresses by (K-1-r) * 2^36, so the last copy
lies where the final state ('segments') says and every copy is a
consistent window of its own.  Each copy gets frames lists of its own (a
real trace records one per allocation; frames lists shared inside the
source stay shared inside a copy), while the frame dicts stay shared, as
PyTorch writes them.  K is chosen so that the file is about MIB MiB.
Annotations are repeated with their copy.  Plain data only: the output
loads with pickle.load and with memprof import.
"""
import pickle
import sys


def shift_entry(e, dt, da, frames_of):
    out = dict(e)
    if "time_us" in out:
        out["time_us"] = e["time_us"] + dt
    if "addr" in out and e.get("action") != "oom":
        out["addr"] = e["addr"] + da
    if "frames" in out:
        f = e["frames"]
        if id(f) not in frames_of:
            frames_of[id(f)] = list(f)
        out["frames"] = frames_of[id(f)]
    return out


def main():
    if len(sys.argv) != 4:
        sys.exit("usage: make_big_snapshot.py SOURCE.pickle OUT.pickle MIB")
    src, out, mib = sys.argv[1], sys.argv[2], float(sys.argv[3])
    with open(src, "rb") as f:
        snap = pickle.load(f)
    traces = snap.get("device_traces") or []
    times = [e["time_us"] for t in traces for e in t if "time_us" in e]
    if not times:
        sys.exit("make_big_snapshot.py: no timed trace entries in '%s'" % src)
    span = max(times) - min(times) + 1000
    src_bytes = len(pickle.dumps(snap, protocol=4))
    trace_bytes = src_bytes - len(pickle.dumps(dict(snap, device_traces=[]), protocol=4))
    k = max(1, int((mib * 1048576 - src_bytes) / max(trace_bytes, 1)) + 1)
    new_traces = []
    for t in traces:
        copies = []
        for r in range(k):
            frames_of = {}
            dt, da = r * span, (k - 1 - r) << 36
            copies.extend(shift_entry(e, dt, da, frames_of) for e in t)
        new_traces.append(copies)
    snap["device_traces"] = new_traces
    ann = snap.get("external_annotations")
    if ann:
        snap["external_annotations"] = [
            dict(a, time_us=a["time_us"] + r * span) for r in range(k) for a in ann
        ]
    with open(out, "wb") as f:
        pickle.dump(snap, f, protocol=4)
    print("%s: %d copies of %s" % (out, k, src))


if __name__ == "__main__":
    main()
