#!/usr/bin/env python3
"""compare_info.py - compare 'memprof info --json' with the figures of
snapshot_figures.py for the same snapshot.  Prints each difference; exits 1
when there is one, 0 when every figure of every device is equal.

usage: compare_info.py EXPECTED.json INFO.json
"""
import json
import sys


def main():
    expected = json.load(open(sys.argv[1]))
    got = json.load(open(sys.argv[2]))["summary"]
    diffs = []
    by_device = {str(d["device"]): d for d in got["by_device"]}
    if sorted(by_device) != sorted(expected["devices"]):
        diffs.append("devices: memprof %s, expected %s"
                     % (sorted(by_device), sorted(expected["devices"])))
    for dev, e in expected["devices"].items():
        d = by_device.get(dev)
        if d is None:
            continue
        for key in ("peak_live_bytes", "peak_reserved_bytes"):
            if d[key] != e[key]:
                diffs.append("device %s %s: memprof %s, expected %s" % (dev, key, d[key], e[key]))
        for key, value in e["end"].items():
            if d["end"][key] != value:
                diffs.append("device %s end.%s: memprof %s, expected %s"
                             % (dev, key, d["end"][key], value))
    for op, n in expected["events_by_op"].items():
        if got["events_by_op"].get(op) != n:
            diffs.append("events_by_op.%s: memprof %s, expected %s"
                         % (op, got["events_by_op"].get(op), n))
    for line in diffs:
        print(line)
    sys.exit(1 if diffs else 0)


if __name__ == "__main__":
    main()
