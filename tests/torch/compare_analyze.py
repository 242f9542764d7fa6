#!/usr/bin/env python3
"""compare_analyze.py - compare 'memprof analyze --json' with the figures
of analyze_figures.py for the same snapshot.  Every figure the reference
holds is compared: integers exactly, ratios to 1e-9 and time-weighted
bytes to 1e-9 of their value (the sums run in another order); a list of
attribution groups is compared on the reference's first entries (memprof
may list more).  Prints each difference; exits 1 when there is one, 0 when
all are equal.

usage: compare_analyze.py EXPECTED.json ANALYZE.json
       compare_analyze.py --events EXPECTED.csv EXPORT.csv
         (the rows of analyze_figures.py --events against the same columns
         of 'memprof export': ts_ns,op,id,size,requested,address,device,stream,
         stack)
"""
import csv
import json
import sys

TOLERANCE = 1e-9
SKIP = {"reference_only"}


def same(a, b):
    if isinstance(a, bool) or isinstance(b, bool) or a is None or b is None:
        return a is b or a == b and type(a) is type(b)
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        if isinstance(a, int) and isinstance(b, int):
            return a == b
        # ratios to 1e-9; time-weighted bytes (sums in another order) to 1e-9 of their size
        return abs(a - b) <= TOLERANCE * max(1.0, abs(a), abs(b))
    return a == b


def show(v):
    return json.dumps(v, sort_keys=True) if not isinstance(v, str) else repr(v)


def compare(path, exp, got, diffs):
    """Walk the reference; every leaf must be in memprof's output."""
    if isinstance(exp, dict):
        if not isinstance(got, dict):
            diffs.append("%s: memprof %s, expected an object" % (path, show(got)))
            return
        for k, v in exp.items():
            if k in SKIP:
                continue
            if k not in got:
                diffs.append("%s.%s: missing in memprof's output (expected %s)"
                             % (path, k, show(v)))
                continue
            compare("%s.%s" % (path, k), v, got[k], diffs)
    elif isinstance(exp, list):
        if not isinstance(got, list):
            diffs.append("%s: memprof %s, expected a list" % (path, show(got)))
            return
        prefix = ".groups." in path  # memprof's top N against the reference's top n
        if (len(got) < len(exp)) if prefix else (len(got) != len(exp)):
            diffs.append("%s: memprof has %d entries, expected %d" % (path, len(got), len(exp)))
        for i, (e, g) in enumerate(zip(exp, got)):
            compare("%s[%d]" % (path, i), e, g, diffs)
    elif not same(exp, got):
        extra = ""
        if isinstance(exp, (int, float)) and isinstance(got, (int, float)) \
                and not isinstance(exp, bool) and not isinstance(got, bool):
            extra = " (memprof - expected = %s)" % show(got - exp)
        diffs.append("%s: memprof %s, expected %s%s" % (path, show(got), show(exp), extra))


def compare_analyze(expected, got):
    diffs = []
    for k in ("memprof_analyze_version", "events", "span_ns", "modelled_granted_blocks"):
        compare(k, expected[k], got.get(k), diffs)
    by_device = {d.get("device"): d for d in got.get("devices", [])}
    want = [d["device"] for d in expected["devices"]]
    if sorted(by_device) != sorted(want):
        diffs.append("devices: memprof %s, expected %s" % (sorted(by_device), sorted(want)))
    for d in expected["devices"]:
        if d["device"] in by_device:
            compare("device %d" % d["device"], d, by_device[d["device"]], diffs)
    return diffs


def compare_events(expected_csv, export_csv):
    exp = list(csv.reader(open(expected_csv, newline="")))
    rows = list(csv.reader(open(export_csv, newline="")))
    cols = [0, 1, 2, 3, 4, 5, 6, 7, 13]
    got = [[r[i] for i in cols] for r in rows[1:]]
    diffs = []
    for i, (e, g) in enumerate(zip(exp, got)):
        if e != g:
            diffs.append("event %d: memprof %s, expected %s" % (i + 1, ",".join(g), ",".join(e)))
            if len(diffs) >= 20:
                diffs.append("(more differences not shown)")
                return diffs
    if len(exp) != len(got):
        diffs.append("events: memprof has %d, expected %d" % (len(got), len(exp)))
    return diffs


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--events":
        diffs = compare_events(sys.argv[2], sys.argv[3])
    elif len(sys.argv) == 3:
        diffs = compare_analyze(json.load(open(sys.argv[1])), json.load(open(sys.argv[2])))
    else:
        sys.exit(__doc__.split("\n\n")[-1])
    for line in diffs:
        print(line)
    sys.exit(1 if diffs else 0)


if __name__ == "__main__":
    main()
