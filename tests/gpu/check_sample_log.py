#!/usr/bin/env python3
"""check_sample_log.py - compare a CUDA sample's own log (samples/cuda/, "memprof-sample ..."
lines) with the memprof trace recorded while it ran.

Usage: check_sample_log.py [--quiet] LOG TRACE.db

Checks, for the sample's process (the log's begin pid, when the trace has it):
  - every GPU allocation of the log (kind device or managed) is an alloc event of the trace at
    the same address with the logged size (the trace's size or requested), and the k-th
    allocation at an address pairs with the k-th alloc there (addresses are reused);
  - every logged free is a free event of that alloc (by the trace's alloc id), and a block
    the sample leaked has no free;
  - the trace holds no other alloc or free (unless the begin line says extra=allowed, as
    nccl_comm's does: NCCL allocates for itself) and no pinned host block as an alloc;
  - maps and unmaps (alloc_vmm) by address and size;
  - every NVTX range pushed is a phase_begin of that name, as many times;
  - a "loop" line (alloc_runtime --loop=N): N allocs and N frees of that size.
Prints a table of expected against found, then each mismatch, and exits 0 when all agree,
1 on any mismatch, 2 when the log or trace cannot be read.
"""
import collections
import re
import sqlite3
import sys

OP = {"alloc": 1, "free": 2, "preexisting": 3, "map": 6, "unmap": 7, "phase_begin": 9,
      "free_requested": 11}
GPU_KINDS = ("device", "managed")
HOST_KINDS = ("pinned", "host", "pageable")


class Unreadable(Exception):
    pass


def parse_log(path):
    """The log's memprof-sample lines as (line number, verb, {key: value}) in order."""
    try:
        text = open(path, encoding="utf-8", errors="replace").read()
    except OSError as e:
        raise Unreadable("cannot read log '%s': %s" % (path, e.strerror))
    lines = []
    for n, line in enumerate(text.splitlines(), 1):
        words = line.split()
        if len(words) < 2 or words[0] != "memprof-sample":
            continue
        fields = {}
        for w in words[2:]:
            k, eq, v = w.partition("=")
            if eq:
                fields[k] = v
        lines.append((n, words[1], fields))
    if not any(verb == "begin" for _, verb, _ in lines):
        raise Unreadable("log '%s' has no 'memprof-sample begin' line: not a sample's log" % path)
    return lines


def num(text, what, line):
    try:
        return int(text, 0)
    except (TypeError, ValueError):
        raise Unreadable("log line %d: %s is not a number: %r" % (line, what, text))


def u64(v):
    return (v or 0) & 0xFFFFFFFFFFFFFFFF


def open_trace(path):
    try:
        db = sqlite3.connect("file:%s?mode=ro" % path, uri=True)
        fmt = db.execute("SELECT value FROM meta WHERE key = 'format'").fetchone()
    except sqlite3.Error as e:
        raise Unreadable("cannot read trace '%s': %s" % (path, e))
    if not fmt or fmt[0] != "memprof-trace":
        raise Unreadable("'%s' is not a memprof trace" % path)
    return db


def trace_events(db, pid):
    """Events of the process with that pid (all processes when the trace has no such pid)."""
    where, args, note = "", (), None
    if pid is not None:
        row = db.execute("SELECT id FROM processes WHERE pid = ?", (pid,)).fetchall()
        if len(row) == 1:
            where, args = "WHERE e.process = ?", (row[0][0],)
        else:
            note = "the trace has %d processes of pid %d: all processes checked" % (len(row), pid)
    q = ("SELECT e.seq, e.op, e.alloc_id, e.size, e.requested, e.address, e.device, "
         "p.name, a.name FROM events e LEFT JOIN phases p ON p.id = e.phase "
         "LEFT JOIN apis a ON a.id = e.api %s ORDER BY e.seq" % where)
    ev = [dict(zip(("seq", "op", "id", "size", "requested", "address", "device", "phase",
                    "api"), r)) for r in db.execute(q, args)]
    for e in ev:
        e["address"] = u64(e["address"])
    return ev, note


def api_agrees(logged, traced):
    """cuMemAlloc is cuMemAlloc_v2 in CUPTI's names; cudaMallocAsync may be _ptsz."""
    if traced is None:
        return False
    return re.sub(r"(_v\d+)?(_ptsz|_ptds)?$", "", traced) == logged


class Check:
    def __init__(self):
        self.rows = []          # (what, expected, found)
        self.mismatches = []

    def row(self, what, expected, found):
        """A table row; each difference is named by a bad() line of its own."""
        self.rows.append((what, expected, found))

    def differs(self):
        return [r for r in self.rows if r[1] != r[2] and "any" != r[1] and "-" not in r[1:]]

    def bad(self, text):
        self.mismatches.append(text)


def log_blocks(lines):
    """Logged allocations with the line of their free (None: leaked), pinned ones apart."""
    gpu, host, live = [], [], {}
    for n, verb, f in lines:
        if verb == "alloc":
            b = {"line": n, "api": f.get("api", "?"), "kind": f.get("kind", "device"),
                 "ptr": num(f.get("ptr"), "ptr", n), "bytes": num(f.get("bytes"), "bytes", n),
                 "requested": num(f.get("requested", f.get("bytes")), "requested", n),
                 "free_line": None, "free_api": None}
            (host if b["kind"] in HOST_KINDS else gpu).append(b)
            live[b["ptr"]] = b
        elif verb == "free":
            ptr = num(f.get("ptr"), "ptr", n)
            b = live.pop(ptr, None)
            if b is None:
                raise Unreadable("log line %d frees 0x%x, which the log never allocated" % (n, ptr))
            b["free_line"], b["free_api"] = n, f.get("api", "?")
    return gpu, host


def trace_blocks(events):
    """Trace allocs (op alloc) with their free event, and frees of no alloc."""
    blocks, live, orphans = [], {}, []
    for e in events:
        if e["op"] == OP["alloc"]:
            b = dict(e, free=None)
            blocks.append(b)
            live[e["id"]] = b
        elif e["op"] in (OP["free"], OP["free_requested"]):
            b = live.get(e["id"])
            if b is None:
                if e["op"] == OP["free"]:
                    orphans.append(e)
            elif e["op"] == OP["free"]:
                b["free"] = e
                del live[e["id"]]
    return blocks, orphans


def pair_by_address(logged, traced, log_addr, trace_addr):
    """The k-th logged item at an address with the k-th traced one there."""
    queue = collections.defaultdict(collections.deque)
    for t in traced:
        queue[trace_addr(t)].append(t)
    pairs, missing = [], []
    for item in logged:
        q = queue.get(log_addr(item))
        if q:
            pairs.append((item, q.popleft()))
        else:
            missing.append(item)
    extra = [t for q in queue.values() for t in q]
    return pairs, missing, extra


def check_blocks(chk, lines, events, extra_allowed):
    gpu, host = log_blocks(lines)
    blocks, orphans = trace_blocks(events)
    # a loop's calls are counted by check_loops, not logged one by one
    loop_sizes = {num(f.get("bytes"), "bytes", n) for n, v, f in lines if v == "loop"}
    blocks = [t for t in blocks if not {t["size"], t["requested"]} & loop_sizes]
    pairs, missing, extra = pair_by_address(gpu, blocks, lambda b: b["ptr"],
                                            lambda t: t["address"])
    host_ptrs = {b["ptr"] for b in host}
    host_in_trace = [t for t in extra if t["address"] in host_ptrs]
    extra = [t for t in extra if t["address"] not in host_ptrs]
    n_frees_log = sum(1 for b in gpu if b["free_line"])
    chk.row("allocations (device, managed)", len(gpu), len(pairs))
    chk.row("frees", n_frees_log, sum(1 for b, t in pairs if b["free_line"] and t["free"]))
    chk.row("bytes allocated", sum(b["bytes"] for b in gpu),
            sum(b["bytes"] for b, t in pairs if b["bytes"] in (t["size"], t["requested"])
                or b["requested"] in (t["size"], t["requested"])))
    chk.row("leaked (never freed)", sum(1 for b in gpu if not b["free_line"]),
            sum(1 for b, t in pairs if not b["free_line"] and not t["free"]))
    chk.row("api names agree", len(pairs), sum(1 for b, t in pairs if api_agrees(b["api"],
                                                                                t["api"])))
    chk.row("pinned host blocks as allocations", 0, len(host_in_trace))
    if host:
        chk.rows.append(("pinned host blocks logged (skipped)", len(host), "-"))
    for b in missing:
        chk.bad("missing alloc: %s ptr=0x%x bytes=%d (log line %d)" %
                (b["api"], b["ptr"], b["bytes"], b["line"]))
    for b, t in pairs:
        what = "%s ptr=0x%x (log line %d, trace event %d)" % (b["api"], b["ptr"], b["line"],
                                                             t["seq"])
        if not ({b["bytes"], b["requested"]} & {t["size"], t["requested"]}):
            chk.bad("wrong size: %s: logged %d bytes, trace has size %d requested %d" %
                    (what, b["bytes"], t["size"], t["requested"]))
        if not api_agrees(b["api"], t["api"]):
            chk.bad("wrong api: %s: trace says %s" % (what, t["api"]))
        if b["free_line"] and not t["free"]:
            chk.bad("missing free: %s ptr=0x%x (log line %d) of the alloc of %d bytes" %
                    (b["free_api"], b["ptr"], b["free_line"], b["bytes"]))
        elif b["free_line"] and not api_agrees(b["free_api"], t["free"]["api"]):
            chk.bad("wrong api: free of %s: trace says %s" % (what, t["free"]["api"]))
        elif not b["free_line"] and t["free"]:
            chk.bad("unexpected free: %s was leaked by the sample, the trace frees it at event %d"
                    % (what, t["free"]["seq"]))
    for t in host_in_trace:
        chk.bad("pinned host block ptr=0x%x is an allocation in the trace (event %d)" %
                (t["address"], t["seq"]))
    label = "extra (not the sample's)" if extra_allowed else "extra"
    chk.rows.append(("%s allocations in the trace" % label, 0 if not extra_allowed else "any",
                     len(extra)))
    if not extra_allowed:
        for t in extra[:20]:
            chk.bad("extra alloc in the trace: event %d api=%s address=0x%x size=%d" %
                    (t["seq"], t["api"], t["address"], t["size"]))
        for t in orphans[:20]:
            chk.bad("free of no allocation in the trace: event %d api=%s address=0x%x" %
                    (t["seq"], t["api"], t["address"]))


def check_maps(chk, lines, events):
    for verb in ("map", "unmap"):
        logged = [(n, num(f.get("ptr"), "ptr", n), f.get("bytes")) for n, v, f in lines
                  if v == verb]
        traced = [e for e in events if e["op"] == OP[verb]]
        if not logged and not traced:
            continue
        pairs, missing, extra = pair_by_address(logged, traced, lambda x: x[1],
                                                lambda t: t["address"])
        chk.row("%ss" % verb, len(logged), len(pairs))
        for n, ptr, size in missing:
            chk.bad("missing %s: ptr=0x%x bytes=%s (log line %s)" % (verb, ptr, size, n))
        for t in extra:
            chk.bad("extra %s in the trace: event %d address=0x%x size=%d" %
                    (verb, t["seq"], t["address"], t["size"]))
        for (n, ptr, size), t in pairs:
            if size is not None and int(size) != t["size"] and t["size"] != 0:
                chk.bad("wrong %s size: ptr=0x%x logged %s bytes, trace has %d (event %d)" %
                        (verb, ptr, size, t["size"], t["seq"]))


def check_phases(chk, lines, events):
    pushed = collections.Counter(f.get("name") for _, v, f in lines if v == "push")
    begun = collections.Counter(e["phase"] for e in events if e["op"] == OP["phase_begin"])
    if not pushed:
        return
    found = 0
    for name, n in sorted(pushed.items()):
        got = begun.get(name, 0) + sum(c for p, c in begun.items()
                                       if p and p.endswith(": " + name))
        found += min(got, n)
        if got != n:
            chk.bad("phase '%s': pushed %d time(s), the trace begins it %d time(s)" %
                    (name, n, got))
    chk.rows.append(("NVTX ranges as phases", sum(pushed.values()), found))


def check_loops(chk, lines, events):
    for n, verb, f in lines:
        if verb != "loop":
            continue
        pairs = num(f.get("pairs"), "pairs", n)
        size = num(f.get("bytes"), "bytes", n)
        allocs = [e for e in events if e["op"] == OP["alloc"] and size in (e["size"],
                                                                            e["requested"])]
        ids = collections.Counter()
        freed = 0
        for e in events:
            if e["op"] == OP["alloc"] and size in (e["size"], e["requested"]):
                ids[e["id"]] += 1
            elif e["op"] == OP["free"] and ids[e["id"]] > 0:
                ids[e["id"]] -= 1
                freed += 1
        chk.row("loop allocations of %d bytes" % size, pairs, len(allocs))
        chk.row("loop frees", pairs, freed)
        if len(allocs) != pairs or freed != pairs:
            chk.bad("loop (log line %d): %d cudaMalloc/cudaFree pairs of %d bytes, the trace "
                    "has %d allocs and %d frees of that size" % (n, pairs, size, len(allocs),
                                                                 freed))


def check(log_path, trace_path):
    lines = parse_log(log_path)
    begin = next(f for _, v, f in lines if v == "begin")
    name = begin.get("sample", "?")
    pid = int(begin["pid"]) if begin.get("pid", "").isdigit() else None
    db = open_trace(trace_path)
    try:
        events, note = trace_events(db, pid)
    except sqlite3.Error as e:
        raise Unreadable("cannot read trace '%s': %s" % (trace_path, e))
    chk = Check()
    check_blocks(chk, lines, events, begin.get("extra") == "allowed")
    check_maps(chk, lines, events)
    check_phases(chk, lines, events)
    check_loops(chk, lines, events)
    if chk.differs() and not chk.mismatches:
        chk.bad("table row '%s' differs" % chk.differs()[0][0])
    return name, pid, note, chk


def main(argv):
    args = [a for a in argv[1:] if a != "--quiet"]
    if len(args) != 2 or any(a.startswith("-") and a != "-" for a in args):
        print("usage: check_sample_log.py [--quiet] LOG TRACE.db", file=sys.stderr)
        return 2
    try:
        name, pid, note, chk = check(args[0], args[1])
    except Unreadable as e:
        print("check_sample_log: %s" % e, file=sys.stderr)
        return 2
    if "--quiet" not in argv or chk.mismatches:
        print("%s (pid %s): log %s against trace %s" % (name, pid, args[0], args[1]))
        if note:
            print("  note: %s" % note)
        print("  %-44s %10s %10s" % ("", "expected", "found"))
        for what, exp, got in chk.rows:
            flag = "  <-- mismatch" if (what, exp, got) in chk.differs() else ""
            print("  %-44s %10s %10s%s" % (what, exp, got, flag))
    if chk.mismatches:
        print("%s: %d mismatch(es):" % (name, len(chk.mismatches)))
        for m in chk.mismatches:
            print("  - %s" % m)
        return 1
    print("%s: the trace agrees with the log" % name)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
