#!/usr/bin/env python3
"""check_trace_events.py - validate Chrome trace-event JSON written by
'memprof export --format=perfetto' (python3 standard library only).

Checks the JSON Object Format and the rules of each event type the way
ui.perfetto.dev and chrome://tracing read them:
  - the file is UTF-8 and strict JSON (no NaN, no duplicate keys, no raw
    control character or DEL inside strings: Perfetto's tokenizer refuses them);
  - every event has ph, pid and tid (integers that fit in 32 bits) and, but for
    metadata events, a numeric ts; ph and ts come first and no top-level value
    is an array (Perfetto's tokenizer scans the top-level keys of each event);
  - B/E nest per (pid, tid) in timestamp order and every B is ended;
  - b/e pair by (cat, scope, id), with the same pid and name, e not before b,
    no id reused while open, none left open;
  - counters (C) have a name and only numeric args; instants (i) a valid scope;
    metadata (M) a known name and its argument.
Then, with --info (the output of 'memprof info --json' for the same trace), the
expected tracks: a process "GPU N" per device with counters live, requested and
(when the trace has segments) reserved whose maxima are memprof's peaks; one
allocation slice per allocation (or per allocation of at least --min-size
bytes) with its args; as many slices closed at the end as blocks live at the
end.  --phases, --ooms and --slices check counts.

Exit status: 0 valid, 1 problems (each printed), 2 usage.
"""
import argparse
import json
import math
import re
import sys

KNOWN_PH = set("BEXiICbenM")
META_ARG = {
    "process_name": ("name", str),
    "process_labels": ("labels", str),
    "process_sort_index": ("sort_index", int),
    "thread_name": ("name", str),
    "thread_sort_index": ("sort_index", int),
}
SLICE_ARGS = {"size": int, "requested": int, "address": str, "alloc_id": int,
              "stream": int, "pid": int, "thread": int, "stack": list}


class Checker:
    def __init__(self):
        self.problems = []

    def bad(self, where, msg):
        if len(self.problems) < 50:
            self.problems.append("%s: %s" % (where, msg))
        elif len(self.problems) == 50:
            self.problems.append("... (more problems left out)")


def is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def is_num(v):
    return (is_int(v) or isinstance(v, float)) and math.isfinite(v)


def no_dup_pairs(pairs):
    d = {}
    for k, v in pairs:
        if k in d:
            raise ValueError("duplicate key %r" % k)
        d[k] = v
    return d


def reject_constant(name):
    raise ValueError("non-standard JSON constant %s" % name)


def load(path, c):
    raw = open(path, "rb").read()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        c.bad(path, "not valid UTF-8 at byte %d" % e.start)
        return None
    if "\x7f" in text:
        c.bad(path, "a raw DEL character (0x7f): Perfetto's tokenizer refuses it")
    try:
        return json.loads(text, object_pairs_hook=no_dup_pairs,
                          parse_constant=reject_constant)
    except ValueError as e:
        c.bad(path, "not valid JSON: %s" % e)
        return None


def check_top(doc, c):
    if not isinstance(doc, dict):
        c.bad("top", "not the JSON Object Format (an object with traceEvents)")
        return None
    ev = doc.get("traceEvents")
    if not isinstance(ev, list):
        c.bad("top", "traceEvents is missing or not an array")
        return None
    if "displayTimeUnit" in doc and doc["displayTimeUnit"] not in ("ms", "ns"):
        c.bad("top", "displayTimeUnit must be \"ms\" or \"ns\"")
    if "metadata" in doc and not isinstance(doc["metadata"], dict):
        c.bad("top", "metadata is not an object")
    return ev


def check_common(i, e, c):
    where = "event %d" % i
    if not isinstance(e, dict):
        c.bad(where, "not an object")
        return None
    ph = e.get("ph")
    if not isinstance(ph, str) or ph not in KNOWN_PH:
        c.bad(where, "ph %r is not one of %s" % (ph, "".join(sorted(KNOWN_PH))))
        return None
    where = "event %d (ph %s)" % (i, ph)
    keys = list(e)
    if keys[0] != "ph" or (ph != "M" and (len(keys) < 2 or keys[1] != "ts")):
        c.bad(where, "keys must start with ph%s, got %s" % ("" if ph == "M" else ", ts", keys[:2]))
    for k, v in e.items():
        if isinstance(v, list):
            c.bad(where, "top-level array %r: Perfetto's tokenizer refuses it" % k)
    for k in ("pid", "tid"):
        if not is_int(e.get(k)) or not 0 <= e[k] < 2 ** 32:
            c.bad(where, "%s missing or not a 32-bit unsigned integer" % k)
    if ph != "M" and not is_num(e.get("ts")):
        c.bad(where, "ts missing or not a number")
    if ph in "BXbeCiIMn" and not isinstance(e.get("name"), str):
        c.bad(where, "name missing or not a string")
    if "name" in e and not isinstance(e["name"], str):
        c.bad(where, "name is not a string")
    if "cat" in e and not isinstance(e["cat"], str):
        c.bad(where, "cat is not a string")
    if "args" in e and not isinstance(e["args"], dict):
        c.bad(where, "args is not an object")
    return where


def check_event(where, e, c):
    ph = e["ph"]
    args = e.get("args", {})
    if ph == "X" and (not is_num(e.get("dur")) or e["dur"] < 0):
        c.bad(where, "X without a non-negative dur")
    elif ph == "C":
        if not isinstance(args, dict) or not args:
            c.bad(where, "counter without args")
        elif not all(is_num(v) for v in args.values()):
            c.bad(where, "counter args must all be numbers: %r" % args)
    elif ph in "iI" and e.get("s", "t") not in ("g", "p", "t"):
        c.bad(where, "instant scope s must be g, p or t")
    elif ph in "ben":
        if not isinstance(e.get("cat"), str):
            c.bad(where, "async event without cat")
        if not (isinstance(e.get("id"), str) or is_int(e.get("id"))):
            c.bad(where, "async event without a string or integer id")
    elif ph == "M":
        spec = META_ARG.get(e.get("name"))
        if spec is None:
            c.bad(where, "unknown metadata event %r" % e.get("name"))
        elif not isinstance(args, dict) or not isinstance(args.get(spec[0]), spec[1]) \
                or isinstance(args.get(spec[0]), bool):
            c.bad(where, "%s needs args.%s (%s)" % (e["name"], spec[0], spec[1].__name__))


def check_nesting(events, c):
    """B/E per (pid, tid), in timestamp order (stable, as viewers sort)."""
    by_thread = {}
    for i, e in events:
        if e["ph"] in "BE":
            by_thread.setdefault((e["pid"], e["tid"]), []).append((e["ts"], i, e))
    for key, evs in by_thread.items():
        evs.sort(key=lambda t: t[0])
        stack = []
        for ts, i, e in evs:
            if e["ph"] == "B":
                stack.append((e["name"], i))
            elif not stack:
                c.bad("event %d (ph E)" % i, "ends nothing on pid %d tid %d" % key)
            else:
                name, bi = stack.pop()
                if "name" in e and e["name"] != name:
                    c.bad("event %d (ph E)" % i,
                          "ends %r but the innermost open slice is %r (event %d)"
                          % (e["name"], name, bi))
        for name, bi in stack:
            c.bad("event %d (ph B)" % bi, "slice %r never ended" % name)


def check_async(events, c):
    """b/e pairs by (cat, scope, id) in file order; returns the pairs."""
    open_ = {}
    pairs = []
    for i, e in events:
        if e["ph"] not in "be":
            continue
        key = (e.get("cat"), e.get("scope"), str(e.get("id")))
        if e["ph"] == "b":
            if key in open_:
                c.bad("event %d (ph b)" % i, "id %s reused while open (event %d)"
                      % (key[2], open_[key][0]))
            open_[key] = (i, e)
            continue
        if key not in open_:
            c.bad("event %d (ph e)" % i, "ends %s, which is not open" % (key,))
            continue
        bi, b = open_.pop(key)
        if b["pid"] != e["pid"] or b.get("name") != e.get("name"):
            c.bad("event %d (ph e)" % i, "pid or name differ from its b (event %d)" % bi)
        if e["ts"] < b["ts"]:
            c.bad("event %d (ph e)" % i, "ends before its b (event %d)" % bi)
        pairs.append((b, e))
    for key, (bi, b) in open_.items():
        c.bad("event %d (ph b)" % bi, "async slice %s never ended" % (key,))
    return pairs


def tracks(events):
    """Process names, and counter samples by (pid, counter name)."""
    names, counters = {}, {}
    for _, e in events:
        if e["ph"] == "M" and e.get("name") == "process_name":
            names[e["pid"]] = e["args"]["name"]
        elif e["ph"] == "C":
            for k, v in e["args"].items():
                counters.setdefault((e["pid"], e["name"], k), []).append(v)
    return names, counters


def check_slices(pairs, min_size, c):
    for b, e in pairs:
        args = b.get("args", {})
        where = "slice %s" % b.get("id")
        for k, t in SLICE_ARGS.items():
            if not isinstance(args.get(k), t) or isinstance(args.get(k), bool):
                c.bad(where, "args.%s missing or not %s" % (k, t.__name__))
        for k in ("api", "phase", "call_site"):
            if k not in args or not (args[k] is None or isinstance(args[k], str)):
                c.bad(where, "args.%s missing or not a string or null" % k)
        if isinstance(args.get("address"), str) and not re.match(r"^0x[0-9a-f]+$",
                                                                 args["address"]):
            c.bad(where, "args.address %r is not a hex string" % args["address"])
        if isinstance(args.get("stack"), list) and \
                not all(isinstance(f, str) for f in args["stack"]):
            c.bad(where, "args.stack must hold strings")
        if is_int(args.get("size")) and args["size"] < min_size:
            c.bad(where, "size %d below --min-size %d" % (args["size"], min_size))


def check_expected(events, pairs, info, opts, c):
    names, counters = tracks(events)
    gpus = {}
    for pid, name in names.items():
        m = re.match(r"^GPU (-?\d+)$", name)
        if m:
            gpus[int(m.group(1))] = pid
    summary = info["summary"] if info else None
    for d in (summary or {}).get("by_device", []):
        dev = d["device"]
        if dev not in gpus:
            c.bad("tracks", "no process \"GPU %d\"" % dev)
            continue
        want = {"live": d["peak_live_bytes"], "requested": None,
                "reserved": d.get("peak_reserved_bytes")}
        for name, peak in want.items():
            vals = counters.get((gpus[dev], name, "bytes"))
            if name == "reserved" and peak is None:
                if vals:
                    c.bad("GPU %d" % dev, "a reserved counter but the trace has no segments")
                continue
            if not vals:
                c.bad("GPU %d" % dev, "no %s bytes counter" % name)
            elif peak is not None and max(vals) != peak:
                c.bad("GPU %d" % dev, "max of the %s counter %s != memprof's peak %s"
                      % (name, max(vals), peak))
    gpu_pids = set(gpus.values())
    for b, _ in pairs:
        if b["pid"] not in gpu_pids:
            c.bad("slice %s" % b.get("id"), "not in a GPU process")
    n_live_end = sum(1 for _, e in pairs if e.get("args", {}).get("live_at_end") is True)
    if summary and opts.min_size == 0:
        if len(pairs) != summary["allocations"]:
            c.bad("slices", "%d allocation slices, the trace has %d allocations"
                  % (len(pairs), summary["allocations"]))
        if n_live_end != summary["live_at_end"]:
            c.bad("slices", "%d slices live at the end, memprof counts %d"
                  % (n_live_end, summary["live_at_end"]))
    if opts.slices is not None and len(pairs) != opts.slices:
        c.bad("slices", "%d allocation slices, expected %d" % (len(pairs), opts.slices))
    phases = [e for _, e in events if e["ph"] == "B"
              and not e.get("args", {}).get("reopened")]
    for e in phases:
        if e["pid"] in gpu_pids:
            c.bad("phase %r" % e["name"], "on a GPU process, not on its own process")
    if opts.phases is not None and len(phases) != opts.phases:
        c.bad("phases", "%d phase slices, expected %d" % (len(phases), opts.phases))
    ooms = [e for _, e in events if e["ph"] == "i" and e.get("name") == "OOM"]
    for e in ooms:
        a = e.get("args", {})
        if e.get("s") != "p" or not is_int(a.get("requested")) or "device_free" not in a:
            c.bad("OOM at %s" % e["ts"], "needs s \"p\", args.requested and args.device_free")
    if opts.ooms is not None and len(ooms) != opts.ooms:
        c.bad("ooms", "%d OOM instants, expected %d" % (len(ooms), opts.ooms))
    return gpus, phases, ooms, n_live_end


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("trace_json")
    ap.add_argument("--info", help="'memprof info --json' output for the same trace")
    ap.add_argument("--min-size", type=int, default=0, help="the export's --min-size in bytes")
    ap.add_argument("--slices", type=int, help="expected number of allocation slices")
    ap.add_argument("--phases", type=int, help="expected number of phase slices")
    ap.add_argument("--ooms", type=int, help="expected number of OOM instants")
    opts = ap.parse_args()

    c = Checker()
    doc = load(opts.trace_json, c)
    raw_events = check_top(doc, c) if doc is not None else None
    if raw_events is None:
        print("\n".join(c.problems))
        return 1
    events = []
    for i, e in enumerate(raw_events):
        where = check_common(i, e, c)
        if where is None:
            continue
        check_event(where, e, c)
        if e["ph"] == "M" or is_num(e.get("ts")):
            events.append((i, e))
    if c.problems:  # the rest assumes well-formed events
        print("\n".join(c.problems))
        return 1
    check_nesting(events, c)
    pairs = check_async(events, c)
    check_slices(pairs, opts.min_size, c)
    info = json.load(open(opts.info)) if opts.info else None
    gpus, phases, ooms, n_live_end = check_expected(events, pairs, info, opts, c)
    if c.problems:
        print("\n".join(c.problems))
        return 1
    print("ok: %d events, %d devices, %d allocation slices (%d live at the end), "
          "%d phases, %d OOMs" % (len(raw_events), len(gpus), len(pairs), n_live_end,
                                  len(phases), len(ooms)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
