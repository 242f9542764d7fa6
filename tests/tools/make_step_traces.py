#!/usr/bin/env python3
"""Writes memprof CSV traces of training steps with known plan metrics.

Usage: make_step_traces.py --out DIR [--steps N]

Writes DIR/<name>.csv and DIR/expected.json.  Every figure in expected.json
comes from simulating the events written (segments, live blocks and their
addresses, holes, call durations), not from numbers written down by hand:

  phase.csv   N steps (default 12), each a top-level phase 'train_step' with a
              nested 'Optimizer.step' (step-like too, never top level) and a
              nested 'forward'.  One 64 MiB segment of persistent 1 MiB
              blocks, filled at the start; each step frees one of them (every
              other block, so holes stay 1 MiB) and allocates activations in a
              second 16 MiB segment, freed before the step ends: the
              fragmentation at the end of step k is (16 + k) / 80 MiB.  Every
              call has a duration (several size classes), reserves have none.
  period.csv  no step-like phase (a phase 'setup', and 'iteration' once): model
              allocations, then N steps of one fixed allocation pattern; steps
              come from the period.  No duration column.
  ooms.csv    three OOMs on device 0, one of each verdict (fragmentation,
              capacity, fits-a-hole), one on device 1 whose free bytes are
              unknown (no addresses), in phases ProfilerStep#1..#3.
  none.csv    allocations of ever larger sizes, no phase: no steps.
expected.json: per trace, the steps (method, name, count, start/end seq and
ts), per device the state at the end of each step and the trend, the overhead
(calls, durations, share, p50/p99 per kind and size class), the OOM verdicts.
"""
import argparse
import json
import os

MIB = 1 << 20
KIB = 1 << 10
HEADER = "ts_ns,op,id,size,requested,address,device,stream,pid,phase,api,device_free,thread,stack"
CALL_KIND = {"alloc": "alloc", "reserve": "alloc", "map": "alloc", "oom": "alloc",
             "free": "free", "release": "free", "unmap": "free"}
TARGET_STEP, TARGET_FRAG, TARGET_SHARE = 1000, 0.10, 0.05
TARGET_ALLOC_NS, COMMON_SHARE = 100000, 0.05


def size_class(size):
    return size.bit_length()


def nearest_rank(values, p):
    v = sorted(values)
    n = len(v)
    rank = -(-int(p * 1000) * n // 1000)  # ceil(p n), p in thousandths
    return v[max(1, min(n, rank)) - 1]


class Trace:
    """One CSV trace and the simulated state of its devices."""

    def __init__(self, durations=True, pid=4242):
        self.lines, self.ts, self.seq, self.pid = [], 1000, 0, pid
        self.durations = durations
        self.blocks, self.segments = {}, {}  # id -> (device, address, size)
        self.next_id = 1
        self.calls = []  # (kind, size, duration or None, ts)
        self.marks = {}  # label -> (seq, ts) of an event
        self.snap = {}  # seq -> {device: state before the event}
        self.ooms = []

    def state(self, dev):
        segs = [(a, s) for (d, a, s) in self.segments.values() if d == dev]
        blocks = [(a, s) for (d, a, s) in self.blocks.values() if d == dev]
        if not segs:
            return None
        reserved = sum(s for _, s in segs)
        live = sum(s for _, s in blocks)
        largest = 0
        for a, s in segs:
            pos = a
            for ba, bs in sorted(b for b in blocks if a <= b[0] < a + s):
                largest = max(largest, ba - pos)
                pos = ba + bs
            largest = max(largest, a + s - pos)
        return {"live_bytes": live, "reserved_bytes": reserved,
                "free_in_reserved_bytes": reserved - live, "largest_hole_bytes": largest}

    def emit(self, op, id_=0, size=0, req=None, addr=0, dev=0, phase="", dfree="", dur=None,
             stack="", label=None, keep=False):
        if keep:
            self.snap[self.seq + 1] = {d: self.state(d) for d in (0, 1)}
        self.seq += 1
        if op in CALL_KIND:
            self.calls.append((CALL_KIND[op], req if op == "oom" else size, dur, self.ts))
        fields = [self.ts, op, id_, size, size if req is None else req, "0x%x" % addr, dev, 7,
                  self.pid, phase, "", dfree, 11, stack]
        if self.durations:
            fields.append("" if dur is None else dur)
        self.lines.append(",".join(str(f) for f in fields))
        if label:
            self.marks[label] = (self.seq, self.ts)
        self.ts += 1000
        return self.seq

    def reserve(self, addr, size, dev=0):
        sid = self.next_id
        self.next_id += 1
        self.emit("reserve", sid, size, addr=addr, dev=dev)
        self.segments[sid] = (dev, addr, size)
        return sid

    def alloc(self, addr, size, stack, dur, dev=0, keep=False):
        bid = self.next_id
        self.next_id += 1
        self.emit("alloc", bid, size, addr=addr, dev=dev, dur=dur, stack=stack, keep=keep)
        self.blocks[bid] = (dev, addr, size)
        return bid

    def free(self, bid, dur):
        dev, addr, size = self.blocks.pop(bid)
        self.emit("free", bid, size, addr=addr, dev=dev, dur=dur)

    def phase(self, op, name, keep=False):
        return self.emit("phase_" + op, phase=name, keep=keep)

    def oom(self, req, dev=0, dur=None):
        before = self.state(dev)
        seq = self.emit("oom", 0, req, req=req, dev=dev, dfree=MIB, dur=dur)
        if before is None:
            verdict = "unknown"
        elif req > before["free_in_reserved_bytes"]:
            verdict = "capacity"
        elif req <= before["largest_hole_bytes"]:
            verdict = "fits-a-hole"
        else:
            verdict = "fragmentation"
        self.ooms.append({"device": dev, "seq": seq, "requested_bytes": req,
                          "free_in_reserved_bytes": before and before["free_in_reserved_bytes"],
                          "largest_hole_bytes": before and before["largest_hole_bytes"],
                          "verdict": verdict})

    def write(self, path):
        header = HEADER + (",duration_ns" if self.durations else "")
        with open(path, "w") as f:
            f.write(header + "\n" + "\n".join(self.lines) + "\n")

    # expected answers
    def steps_expected(self, method, name, starts, last_end, devices=(0,)):
        """starts: [(seq, ts)]; last_end: (seq, ts) or None (trace end)."""
        steps = []
        for i, (s, t) in enumerate(starts):
            end = starts[i + 1] if i + 1 < len(starts) else last_end
            steps.append({"step": i + 1, "start_seq": s, "start_ts_ns": t,
                          "end_seq": end[0] if end else None,
                          "end_ts_ns": end[1] if end else None})
        frag = []
        for dev in devices:
            rows = []
            for st in steps:
                state = (self.snap[st["end_seq"]][dev] if st["end_seq"]
                         else self.state(dev))
                row = dict(st)
                row.update(state)
                row["free_share"] = (state["free_in_reserved_bytes"] / state["reserved_bytes"]
                                     if state["reserved_bytes"] else 0.0)
                free = state["free_in_reserved_bytes"]
                row["external_fragmentation"] = (1 - state["largest_hole_bytes"] / free
                                         if free and state["largest_hole_bytes"] < free else 0.0)
                rows.append(row)
            frag.append({"device": dev, "steps": rows, "free_share_trend": trend(rows)})
        return {"method": method, "name": name, "count": len(steps), "fragmentation": frag}

    def overhead_expected(self):
        timed = [c for c in self.calls if c[2] is not None and c[2] > 0]
        # from the first ts to the last, or to the end of a call that returns later
        end = max([self.ts - 1000] + [c[3] + c[2] for c in timed])
        span = end - 1000
        out = {"calls": len(self.calls), "calls_with_duration": len(timed),
               "calls_without_duration": len(self.calls) - len(timed),
               "durations": bool(timed), "wall_span_ns": span}
        if not timed:
            return out
        total = sum(c[2] for c in timed)
        out.update({"time_in_calls_ns": total, "share": total / span,
                    "meets_share_target": total < TARGET_SHARE * span})
        n_alloc = sum(1 for c in timed if c[0] == "alloc")
        met = True
        for kind in ("alloc", "free"):
            vals = [c[2] for c in timed if c[0] == kind]
            out[kind] = {"calls": len(vals), "p50_ns": nearest_rank(vals, 0.5),
                         "p99_ns": nearest_rank(vals, 0.99)} if vals else {"calls": 0}
            rows = []
            for k in sorted({size_class(c[1]) for c in timed if c[0] == kind}):
                vals = [c[2] for c in timed if c[0] == kind and size_class(c[1]) == k]
                row = {"size_class": k, "calls": len(vals), "p50_ns": nearest_rank(vals, 0.5),
                       "p99_ns": nearest_rank(vals, 0.99)}
                if kind == "alloc":
                    row["common"] = len(vals) >= COMMON_SHARE * n_alloc
                    if row["common"] and row["p50_ns"] >= TARGET_ALLOC_NS:
                        met = False
                rows.append(row)
            out[kind + "_by_size"] = rows
        out["meets_alloc_target"] = met if n_alloc else None
        return out


def trend(rows):
    xs = [r["step"] for r in rows]
    ys = [r["free_share"] for r in rows]
    n = len(xs)
    out = {"steps_known": n, "last_step": xs[-1] if xs else None,
           "last_free_share": ys[-1] if ys else None}
    if n >= 2:
        mx, my = sum(xs) / n, sum(ys) / n
        sxx = sum((x - mx) ** 2 for x in xs)
        slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx
        out["slope_per_step"] = slope
        out["intercept"] = my - slope * mx
    else:
        out["slope_per_step"] = None
    if n >= TARGET_STEP:
        at, measured = ys[TARGET_STEP - 1], True
    elif n >= 2:
        at = min(1.0, max(0.0, out["intercept"] + out["slope_per_step"] * TARGET_STEP))
        measured = False
    else:
        at = measured = None
    out["at_target_step"], out["at_target_step_measured"] = at, measured
    out["meets_target"] = None if at is None else at < TARGET_FRAG
    return out


SEG_A, SEG_B = 0x7F0000000000, 0x7F1000000000
PERSIST = "main@train.py:10;build_model@model.py:20"
ACT = "main@train.py:30;train_step@train.py:61;forward@model.py:%d"


def phase_trace(n_steps):
    t = Trace()
    t.reserve(SEG_A, 64 * MIB)
    t.reserve(SEG_B, 16 * MIB)
    persist = [t.alloc(SEG_A + i * MIB, MIB, PERSIST, 700 + 13 * i) for i in range(64)]
    starts, forwards = [], []
    for k in range(n_steps):
        s = t.phase("begin", "train_step", keep=True)
        starts.append((s, t.ts - 1000))
        t.free(persist[2 * k], 400 + 7 * k)
        s = t.phase("begin", "forward", keep=True)
        forwards.append((s, t.ts - 1000))
        acts = [t.alloc(SEG_B + j * 256 * KIB, 256 * KIB, ACT % (40 + j), 150 + 11 * ((k * 5 + j) % 17))
                for j in range(8)]
        acts.append(t.alloc(SEG_B + 2 * MIB, 4 * KIB, ACT % 60, 90 + k))
        fwd_end = t.phase("end", "forward", keep=True)
        fwd_end_ts = t.ts - 1000
        for j, b in enumerate(acts):
            t.free(b, 120 + 3 * ((k + j) % 9))
        t.phase("begin", "Optimizer.step#AdamW.step")
        t.phase("end", "Optimizer.step#AdamW.step")
        t.phase("end", "train_step", keep=True)
        end = (t.seq, t.ts - 1000)
    exp = t.steps_expected("phase-name", "train_step", starts, end)
    exp_fwd = t.steps_expected("phase", "forward", forwards, (fwd_end, fwd_end_ts))
    return t, {"default": exp, "step_forward": exp_fwd, "overhead": t.overhead_expected()}


def period_trace(n_steps):
    t = Trace(durations=False)
    t.reserve(SEG_A, 64 * MIB)
    t.phase("begin", "setup")
    model = [t.alloc(SEG_A + i * 2 * MIB, MIB + i * KIB, "init@model.py:%d" % i, None)
             for i in range(5)]
    t.phase("end", "setup")
    t.phase("begin", "iteration")
    t.phase("end", "iteration")
    base = SEG_A + 16 * MIB
    starts = []
    for k in range(n_steps):
        inp = t.alloc(base, 4 * MIB, "loader@train.py:5", None, keep=True)
        starts.append((t.seq, t.ts - 1000))
        a = t.alloc(base + 4 * MIB, 2 * MIB, "forward@model.py:50", None)
        b = t.alloc(base + 6 * MIB, 2 * MIB, "forward@model.py:51", None)
        c = t.alloc(base + 8 * MIB, 512 * KIB, "loss@train.py:70", None)
        t.free(a, None)
        g = t.alloc(base + 4 * MIB, MIB, "backward@model.py:90", None)
        for x in (b, c, g, inp):
            t.free(x, None)
        if k % 3 == 2 and k // 3 < len(model):  # a model block freed: fragmentation moves
            t.free(model[k // 3], None)
    exp = t.steps_expected("period", None, starts, None)
    exp["period_allocs"] = 5
    return t, {"default": exp, "overhead": t.overhead_expected()}


def oom_trace():
    t = Trace()
    starts = []
    t.reserve(SEG_A, 8 * MIB)
    t.reserve(SEG_B, 4 * MIB)
    s = t.phase("begin", "ProfilerStep#1", keep=True)
    starts.append((s, t.ts - 1000))
    b = [t.alloc(SEG_A + i * MIB, MIB, "blk@m.py:%d" % (i % 2), 2000) for i in range(8)]
    for i in (1, 3, 5):
        t.free(b[i], 1000)  # three 1 MiB holes in A; B is one 4 MiB hole
    t.phase("end", "ProfilerStep#1")
    s = t.phase("begin", "ProfilerStep#2", keep=True)
    starts.append((s, t.ts - 1000))
    t.oom(6 * MIB, dur=5000)      # 7 MiB free, largest 4 MiB: fragmentation
    t.oom(64 * MIB, dur=6000)     # capacity
    t.oom(3 * MIB, dur=150000)    # fits the 4 MiB hole; a slow call
    t.phase("end", "ProfilerStep#2")
    s = t.phase("begin", "ProfilerStep#3", keep=True)
    starts.append((s, t.ts - 1000))
    t.alloc(0, MIB, "other@m.py:1", 3000, dev=1)  # no address: device 1 has no holes
    t.oom(2 * MIB, dev=1, dur=200000)
    t.phase("end", "ProfilerStep#3", keep=True)
    end = (t.seq, t.ts - 1000)
    exp = t.steps_expected("phase-name", "ProfilerStep#N", starts, end)
    return t, {"default": exp, "overhead": t.overhead_expected(), "ooms": t.ooms}


def none_trace():
    t = Trace(durations=False)
    t.reserve(SEG_A, 64 * MIB)
    for i in range(40):
        bid = t.alloc(SEG_A, 4096 + 512 * i, "a@b.py:1", None)
        t.free(bid, None)
    return t, {"default": {"method": "none", "name": None, "count": 0},
               "overhead": t.overhead_expected()}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--steps", type=int, default=12)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    expected = {}
    for name, (t, exp) in (("phase", phase_trace(args.steps)),
                           ("period", period_trace(args.steps)),
                           ("ooms", oom_trace()), ("none", none_trace())):
        t.write(os.path.join(args.out, name + ".csv"))
        expected[name] = exp
    with open(os.path.join(args.out, "expected.json"), "w") as f:
        json.dump(expected, f, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
