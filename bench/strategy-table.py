#!/usr/bin/env python3
"""bench/strategy-table.py - the strategy pools side by side on traces.

For each trace, runs `memprof replay TRACE --pool=all --backend=sim --json
--no-save` once (baseline caching) and prints one Markdown row per pool:
peak reserved, bytes saved against caching and against direct, the ratio
to the lower bound (peak requested bytes), and the backend time saved
against caching.  Backend time on sim comes from the cost model of
memprof-replay(1): it is modelled, and labelled so.  Pool CPU time is
measured on this machine and noisy, so it is shown apart.

usage: bench/strategy-table.py [--memprof=./memprof] [--verify] TRACE.db...
"""
import json
import os
import subprocess
import sys

MiB = 1 << 20


def replay(memprof, trace, verify):
    cmd = [memprof, "replay", trace, "--pool=all", "--backend=sim", "--json", "--no-save"]
    if verify:
        cmd.append("--verify")
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def mib(n):
    return f"{n / MiB:,.1f}"


def signed_mib(n):
    return f"{n / MiB:+,.1f}"


def rows(doc, name):
    by_pool = {(r["pool"], r["device"]): r for r in doc["results"]}
    for r in doc["results"]:
        caching = by_pool.get(("caching", r["device"]))
        direct = by_pool.get(("direct", r["device"]))
        if not caching or not direct:
            continue
        vs_caching = caching["peak_reserved_bytes"] - r["peak_reserved_bytes"]
        vs_direct = direct["peak_reserved_bytes"] - r["peak_reserved_bytes"]
        ratio = r.get("ratio_to_lower_bound")
        backend_saved = caching["backend_ns"] - r["backend_ns"]
        host = r["host_ns"]
        verify = r["verify"]
        yield (
            f"| {name} | {r['pool']} | {mib(r['peak_reserved_bytes'])} | "
            f"{signed_mib(vs_caching)} | {signed_mib(vs_direct)} | "
            f"{ratio:.3f} | {backend_saved / 1e6:+,.2f} | {host / 1e6:,.2f} | "
            f"{r['ooms']} | {verify} |"
        )


def main(argv):
    memprof = "./memprof"
    verify = False
    traces = []
    for a in argv:
        if a.startswith("--memprof="):
            memprof = a.split("=", 1)[1]
        elif a == "--verify":
            verify = True
        elif a.startswith("-"):
            sys.exit(__doc__)
        else:
            traces.append(a)
    if not traces:
        sys.exit(__doc__)
    print("| trace | pool | peak reserved MiB | saved vs caching MiB | saved vs direct MiB "
          "| ratio to lower bound | backend ms saved vs caching (modelled) "
          "| pool CPU ms (measured here) | OOMs | verify |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---|")
    for t in traces:
        for row in rows(replay(memprof, t, verify), os.path.basename(t)):
            print(row)


if __name__ == "__main__":
    main(sys.argv[1:])
