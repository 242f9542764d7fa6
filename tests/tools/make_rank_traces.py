#!/usr/bin/env python3
"""Writes per-rank memprof CSV traces of a synthetic data-parallel job, with known answers.

Usage:
  make_rank_traces.py --ranks N --out DIR [--steps S] [--ranks-per-node P]
                      [--t0 NS] [--oom-rank R]

Writes DIR/rank<r>.csv for r in 0..N-1 and DIR/expected.json.  Every rank's
process sees its GPU as device 0 (as with CUDA_VISIBLE_DEVICES per rank), has
pid 1000+r, stream 7, thread 10*pid, and:
  - one 64 MiB segment reserved at the start and never released;
  - a base set of 4 blocks of 1 MiB from call site BASE (same on every rank);
  - r extra blocks of 2 MiB from call site EXTRA (so rank 0 has none, and the
    call sites differ between ranks), requested 256 bytes short of the size;
  - S steps (default 3), each a phase 'forward' holding 2 activations of
    512 KiB from call site ACT, freed before the phase ends;
  - with --oom-rank R, rank R ends with one oom of 128 MiB, device_free 1 MiB.
Timestamps start at --t0 (default 1000000) plus r*100 ns, 1000 ns apart, so
ranks interleave when merged.  expected.json holds, per rank, the figures
`memprof info --json` reports for that rank's trace (events, allocations,
peak_live_bytes, peak_reserved_bytes, first/last ts) and peak_requested_bytes, the labels to import it
with (rank, local_rank = r mod P, world_size N, host node<r div P>), and the
call sites: stack text -> peak live bytes of that site, and which sites differ
between ranks.  The figures are computed by simulating the events written,
not written down by hand.  Import and merge, for example:
  memprof import DIR/rank1.csv --rank=1 --world-size=N --host=node0 -o r1.db
  memprof merge r0.db r1.db -o job.db
"""
import argparse
import json
import os

BASE = "main@train.py:10;build_model@model.py:20;Linear.__init__@torch/nn/modules/linear.py:106"
EXTRA = "main@train.py:12;shard_extra@model.py:30"
ACT = "main@train.py:20;train_step@train.py:61;forward@model.py:50"
MIB = 1 << 20
SEGMENT = 64 * MIB
HEADER = "ts_ns,op,id,size,requested,address,device,stream,pid,phase,api,device_free,thread,stack"


class Rank:
    """One rank's CSV lines and its running figures."""

    def __init__(self, r, t0):
        self.r, self.pid, self.ts = r, 1000 + r, t0 + r * 100
        self.lines, self.live, self.live_bytes = [], {}, 0
        self.req_bytes = self.peak_req = 0
        self.peak_live = self.reserved = self.peak_reserved = 0
        self.site_live, self.site_peak = {}, {}
        self.n_events = self.n_allocs = 0
        self.first_ts = self.ts
        self.next_id, self.next_addr = 1, 0x7F0000000000 + r * (1 << 32)

    def emit(self, op, id_, size, req, addr, phase="", api="", dfree="", stack=""):
        self.lines.append("%d,%s,%d,%d,%d,0x%x,0,7,%d,%s,%s,%s,%d,%s" % (
            self.ts, op, id_, size, req, addr, self.pid, phase, api, dfree,
            10 * self.pid, stack))
        self.last_ts = self.ts
        self.ts += 1000
        self.n_events += 1

    def alloc(self, size, req, stack, phase=""):
        bid, addr = self.next_id, self.next_addr
        self.next_id += 1
        self.next_addr += size
        self.emit("alloc", bid, size, req, addr, phase, stack=stack)
        self.n_allocs += 1
        self.live[bid] = (size, req, stack)
        self.live_bytes += size
        self.req_bytes += req
        self.peak_req = max(self.peak_req, self.req_bytes)
        self.peak_live = max(self.peak_live, self.live_bytes)
        self.site_live[stack] = self.site_live.get(stack, 0) + size
        self.site_peak[stack] = max(self.site_peak.get(stack, 0), self.site_live[stack])
        return bid

    def free(self, bid, phase=""):
        size, req, stack = self.live.pop(bid)
        self.emit("free", bid, size, req, 0, phase)
        self.live_bytes -= size
        self.req_bytes -= req
        self.site_live[stack] -= size


def make_rank(r, args):
    k = Rank(r, args.t0)
    k.emit("reserve", 1, SEGMENT, SEGMENT, k.next_addr, api="cudaMalloc")
    k.reserved = k.peak_reserved = SEGMENT
    for _ in range(4):
        k.alloc(MIB, MIB, BASE)
    for _ in range(r):
        k.alloc(2 * MIB, 2 * MIB - 256, EXTRA)
    for _ in range(args.steps):
        k.emit("phase_begin", 0, 0, 0, 0, "forward")
        acts = [k.alloc(MIB // 2, MIB // 2, ACT, "forward") for _ in range(2)]
        for bid in acts:
            k.free(bid, "forward")
        k.emit("phase_end", 0, 0, 0, 0, "forward")
    if r == args.oom_rank:
        k.emit("oom", 0, 128 * MIB, 128 * MIB, 0, api="cudaMalloc", dfree=str(MIB))
    return k


def expected(ranks, args):
    sites = sorted({s for k in ranks for s in k.site_peak})
    per_site = {s: [k.site_peak.get(s, 0) for k in ranks] for s in sites}
    p = args.ranks_per_node
    return {
        "world_size": args.ranks,
        "ranks_per_node": p,
        "steps": args.steps,
        "oom_rank": args.oom_rank,
        "ranks": [{
            "rank": k.r, "local_rank": k.r % p, "host": "node%d" % (k.r // p),
            "pid": k.pid, "file": "rank%d.csv" % k.r, "device": 0,
            "events": k.n_events, "allocations": k.n_allocs,
            "peak_live_bytes": k.peak_live,
            "peak_requested_bytes": k.peak_req, "peak_reserved_bytes": k.peak_reserved,
            "first_ts_ns": k.first_ts, "last_ts_ns": k.last_ts,
            "call_sites": {s: k.site_peak.get(s, 0) for s in sites},
        } for k in ranks],
        "call_sites": per_site,
        "differing_call_sites": [s for s in sites if len(set(per_site[s])) > 1],
        "common_call_sites": [s for s in sites if len(set(per_site[s])) == 1],
        "total_events": sum(k.n_events for k in ranks),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ranks", type=int, required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--ranks-per-node", type=int, default=0,
                    help="ranks on one host (default: all on one)")
    ap.add_argument("--t0", type=int, default=1000000)
    ap.add_argument("--oom-rank", type=int, default=-1)
    args = ap.parse_args()
    if args.ranks < 1 or args.steps < 0 or args.t0 < 0:
        ap.error("--ranks must be >= 1, --steps and --t0 >= 0")
    if args.ranks_per_node <= 0:
        args.ranks_per_node = args.ranks
    os.makedirs(args.out, exist_ok=True)
    ranks = [make_rank(r, args) for r in range(args.ranks)]
    for k in ranks:
        with open(os.path.join(args.out, "rank%d.csv" % k.r), "w") as f:
            f.write("# synthetic rank %d of %d, written by tests/tools/make_rank_traces.py\n"
                    % (k.r, args.ranks))
            f.write(HEADER + "\n")
            f.write("\n".join(k.lines) + "\n")
    with open(os.path.join(args.out, "expected.json"), "w") as f:
        json.dump(expected(ranks, args), f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
