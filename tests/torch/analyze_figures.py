#!/usr/bin/env python3
"""analyze_figures.py - the figures 'memprof analyze --json' must give for a
PyTorch memory snapshot, computed independently of memprof with the
standard pickle module (no numpy).

Three steps, each written from the documentation, not from memprof's C:
 1. the state at the start of the trace window, by the backward walk of
    snapshot_figures.py (window_start);
 2. the events 'memprof import' writes, in its order (memprof-trace(5),
    IMPORTED TRACES): the prelude, then the entries of every device and the
    annotations in time order, with the implied frees and releases;
 3. the analysis (DESIGN.md section 3, memprof analyze's JSON layout):
    per device the peaks of live, requested and reserved bytes, the
    fragmentation at the live peak, at the reserved peak, at each OOM, at
    the device's last event and time-weighted (holes = parts of reserved
    containers that no live block covers; reserved segments never merge,
    mapped pages merge when they touch), the top groups of live blocks at
    the live peak by stack, phase, stream and size class, the end figures
    and the totals of leaks and of preexisting blocks live at the end
    (not the other lifetime patterns).

Prints JSON in the layout of 'memprof analyze --json' holding only the
figures computed here; each device also has "reference_only" (figures
memprof does not print, for a person reading a difference).  Set
ANALYZE_FIGURES_CHECK=1 to check the incremental hole tracker against a
brute-force scan after every event (slow).

usage: analyze_figures.py [--top N] SNAPSHOT.pickle
       analyze_figures.py --events SNAPSHOT.pickle   (the events of step 2 as
       CSV rows ts_ns,op,id,size,requested,address,device,stream,stack)
"""
import bisect
import csv
import heapq
import json
import os
import pickle
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import snapshot_figures as sf  # noqa: E402

GRANULARITY = 2097152  # the address-space model's default granule
GROUP_KINDS = ("stack", "phase", "stream", "size")  # memprof analyze's default --by
OOMS_LISTED = 10  # memprof analyze's default --top
CHECK = os.environ.get("ANALYZE_FIGURES_CHECK") == "1"  # slow self-checks
ALLOC, FREE, PREEXISTING, RESERVE, RELEASE, MAP, UNMAP, OOM = range(1, 9)
PHASE_BEGIN, PHASE_END, FREE_REQUESTED = 9, 10, 11
FREES = ("free_requested", "free_completed", "free")


# --- step 2: the events memprof import writes ------------------------------------------

def c_string(s):
    """A pickle string as memprof stores it: a C string, so up to a NUL."""
    return s.split("\0", 1)[0] if isinstance(s, str) else ""


FRAME_CACHE = {}  # (name, filename, line) as pickled -> (frame, its text)


def frame_of(fr):
    """One PyTorch frame as memprof keeps it: name, filename as file, line
    (0 when absent, negative or not an integer), and its stack text
    (memprof-trace(5) 'Stack text', canonical form: name[@file[:line]])."""
    fr = fr if isinstance(fr, dict) else {}
    k = (fr.get("name"), fr.get("filename"), fr.get("line"))
    try:
        return FRAME_CACHE[k]
    except (KeyError, TypeError):  # TypeError: an unhashable value
        pass
    line = k[2]
    if not isinstance(line, int) or line < 0 or line >= 1 << 63:
        line = 0
    f = {"name": c_string(k[0]), "file": c_string(k[1]), "line": int(line)}
    t = escape(f["name"], "\\;@")
    if f["file"] or f["line"] > 0 or not f["name"]:
        t += "@" + escape(f["file"], "\\;:")
    if f["line"] > 0:
        t += ":%d" % f["line"]
    try:
        FRAME_CACHE[k] = (f, t)
    except TypeError:
        pass
    return f, t


def escape(s, special):
    for ch in "\\" + special.replace("\\", ""):
        if ch in s:
            s = s.replace(ch, "\\" + ch)
    return s


def stack_of(frames):
    """(text, frames innermost first) of a PyTorch frames list: the text
    lists the frames outermost first, joined by ';'."""
    got = [frame_of(fr) for fr in frames] if isinstance(frames, (list, tuple)) else []
    return ";".join(t for _, t in reversed(got)), [f for f, _ in got]


class Stacks:
    """Stack key text and frames of a frames object, worked out on first
    use (only blocks live at a peak need them) and once per object."""

    def __init__(self):
        self.cache = {}

    def of(self, frames):
        if not isinstance(frames, (list, tuple)) or not frames:
            return None
        return frames

    def text(self, frames):
        """(key, frames) of what of() returned."""
        if frames is None:
            return "", []
        k = id(frames)
        if k not in self.cache:
            self.cache[k] = stack_of(frames) + (frames,)  # keep frames alive: id() stays unique
        return self.cache[k][:2]


STACKS = Stacks()


def entry_times(trace):
    """ts_ns of each entry: time_us * 1000, never earlier than the entry
    before it (the previous one's time when absent)."""
    out, prev = [], 0
    for e in trace:
        t = e.get("time_us") if isinstance(e, dict) else None
        ts = t * 1000 if isinstance(t, int) and t >= 0 else prev
        prev = max(ts, prev)
        out.append(prev)
    return out


def device_order(snap):
    """Device ordinals in the order memprof first names them: segments,
    then non-empty device_traces (by index), then annotations."""
    order = []
    for s in snap["segments"]:
        if s.get("device", 0) not in order:
            order.append(s.get("device", 0))
    for i, t in enumerate(snap.get("device_traces") or []):
        if t and i not in order:
            order.append(i)
    for a in snap.get("external_annotations") or []:
        if a.get("device", 0) not in order:
            order.append(a.get("device", 0))
    return order


def prelude_order(w, trace):
    """The start state of one device (window_start) in memprof's order:
    segments the trace releases first (entry order), then the final ones;
    blocks the trace frees first (entry order), then the final ones, then
    pending blocks moved to the front (memprof's in-place partition)."""
    first_free, first_release, seen = {}, {}, set()
    for i, e in enumerate(trace):
        a, addr = e["action"], e.get("addr")
        if a in FREES + ("alloc",) and addr not in seen:
            seen.add(addr)
            if a in FREES:
                first_free[addr] = i
        if a == "segment_free" and addr not in first_release:
            first_release[addr] = i
    final_pos = {}
    for s in w["segs"]:
        final_pos.setdefault(s["address"], len(final_pos))
        for addr, _ in sf.blocks_of(s):
            final_pos.setdefault(("b", addr), len(final_pos))

    def key_seg(addr):
        return (0, first_release[addr]) if addr in first_release else (1, final_pos[addr])

    def key_block(addr):
        return (0, first_free[addr]) if addr in first_free else (1, final_pos[("b", addr)])

    segs = sorted(w["segments"], key=key_seg)
    blocks = [(a, w["live"][a], 0) for a in w["live"]]
    blocks += [(a, w["pending"][a], 1) for a in w["pending"]]
    blocks.sort(key=lambda b: key_block(b[0]))
    first_live = 0
    for i in range(len(blocks)):
        if blocks[i][2]:
            blocks[i], blocks[first_live] = blocks[first_live], blocks[i]
            first_live += 1
    return segs, blocks


class Writer:
    """memprof import's writing of one snapshot: events as tuples
    (op, device, id, address, size, requested, frames, ts_ns, stream,
    device_free); frames is the entry's frames list, or None when it makes
    no stack; device_free is -1 when unknown."""

    def __init__(self, stacks):
        self.events, self.next_id, self.stacks = [], 0, stacks
        self.blocks, self.segs = {}, {}  # (device, address) -> [id, size, requested, pending]

    def put(self, op, dev, id_, addr, size, req, ts, frames=None, stream=0, device_free=-1):
        self.events.append((op, dev, id_, addr, size, req, self.stacks.of(frames), ts,
                            stream % (1 << 64), device_free))

    def new_id(self):
        self.next_id += 1
        return self.next_id

    def block(self, op, dev, addr, size, req, ts, frames=None, stream=0):
        k = (dev, addr)
        live = self.blocks.get(k)
        if op in (ALLOC, PREEXISTING):
            if live:  # the trace lost a free: close the old block first
                self.block(FREE, dev, addr, 0, 0, ts, None, stream)
            b = self.blocks[k] = [self.new_id(), size, req if req >= 0 else size, 0]
            return self.put(op, dev, b[0], addr, b[1], b[2], ts, frames, stream)
        if not live:  # a free of nothing live: kept, with a new id
            return self.put(op, dev, self.new_id(), addr, size, req if 0 <= req <= size else size,
                            ts, frames, stream)
        if op == FREE_REQUESTED and live[3]:
            return  # a second free_requested: nothing written
        if op == FREE_REQUESTED:
            live[3] = 1
        else:
            del self.blocks[k]
        self.put(op, dev, live[0], addr, live[1], live[2], ts, frames, stream)

    def segment(self, op, dev, addr, size, ts, frames=None, stream=0):
        k = (dev, addr)
        id_ = self.new_id()
        if op == RESERVE:
            if k in self.segs:
                self.segment(RELEASE, dev, addr, 0, ts, None, stream)
            self.segs[k] = (id_, size)
        elif op == RELEASE and k in self.segs:
            id_, size = self.segs.pop(k)
        self.put(op, dev, id_, addr, size, size, ts, frames, stream)

    def prelude(self, dev, segs_sizes, mapped, map_addr, blocks, ts):
        for addr, size, frames, stream in segs_sizes:
            self.segment(RESERVE, dev, addr, size, ts, frames, stream)
        if mapped > 0:
            self.segment(MAP, dev, map_addr, mapped, ts)
        for addr, (size, req, frames), pending in blocks:
            self.block(PREEXISTING, dev, addr, size, req, ts, frames)
            if pending:
                self.block(FREE_REQUESTED, dev, addr, 0, 0, ts)

    def entry(self, dev, e, ts, size):
        a = e["action"]
        ops = {"alloc": ALLOC, "free_requested": FREE_REQUESTED, "free_completed": FREE,
               "free": FREE, "segment_alloc": RESERVE, "segment_free": RELEASE,
               "segment_map": MAP, "segment_unmap": UNMAP}
        stream = e.get("stream", 0)
        if a in ("alloc",) + FREES:
            self.block(ops[a], dev, e["addr"], size, e["size"], ts, e.get("frames"), stream)
        elif a in ops:
            self.segment(ops[a], dev, e["addr"], e["size"], ts, e.get("frames"), stream)
        elif a == "oom":
            self.put(OOM, dev, 0, 0, e["size"], e["size"], ts, e.get("frames"), stream,
                     e.get("device_free", -1))


MODELLED = [0]  # allocations whose granted size import_events modelled (freed in the window)


def import_events(snap):
    """Every event of the imported trace, in seq order.  Counts in MODELLED[0] the
    allocations whose granted size is modelled (no survivor gives it)."""
    traces = snap.get("device_traces") or []
    anns = snap.get("external_annotations") or []
    devs = device_order(snap)
    refs = []  # (ts, rank, list, pos, device, entry, granted size)
    starts = {}
    for di, dev in enumerate(devs):
        trace = traces[dev] if dev < len(traces) else []
        w = sf.window_start(snap["segments"], trace, dev)
        # an alloc still live or pending at the end holds the final block's size
        survivors = sf.end_block_sizes(trace, w)
        segs, blocks = prelude_order(w, trace)
        released = {}  # address -> stream of the first release
        for e in trace:
            if e["action"] == "segment_free":
                released.setdefault(e.get("addr"), e.get("stream", 0))
        exp = [s["address"] for s in w["segs"] if s.get("is_expandable")]
        final = {s["address"]: s for s in w["segs"]}
        starts[dev] = ([(a, w["segments"][a], None, released[a]) if a in released else
                        (a, w["segments"][a], final[a].get("frames"), final[a].get("stream", 0))
                        for a in segs], w["mapped"],
                       min(exp) if exp else 0, blocks)
        for i, (e, ts) in enumerate(zip(trace, entry_times(trace))):
            size = e.get("size", 0)
            if survivors.get(i, -1) >= size:
                size = survivors[i]
            else:
                size = sf.granted(size)
                MODELLED[0] += e["action"] == "alloc"
            refs.append((ts, 1, di, i, dev, e, size))
    for j, a in enumerate(anns):
        rank = 0 if a["stage"] == "START" else 2
        refs.append((a["time_us"] * 1000, rank, len(devs), j, a.get("device", 0), a, 0))
    refs.sort(key=lambda r: r[:4])
    ts0 = refs[0][0] if refs else 0
    w = Writer(STACKS)
    for dev in devs:
        w.prelude(dev, *starts[dev], ts0)
    for ts, rank, lst, _, dev, e, size in refs:
        if lst == len(devs):
            w.put(PHASE_BEGIN if rank == 0 else PHASE_END, dev, 0, 0, 0, 0, ts)
        else:
            w.entry(dev, e, ts, size)
    return w.events


# --- step 3: the analysis --------------------------------------------------------------

def add_range(ranges, lo, hi):
    """Mapped ranges (sorted, disjoint, not touching) after mapping [lo, hi)."""
    out = []
    for a, b in ranges:
        if b < lo or a > hi:
            out.append((a, b))
        else:
            lo, hi = min(a, lo), max(b, hi)
    out.append((lo, hi))
    return sorted(out)


def cut_range(ranges, lo, hi):
    out = []
    for a, b in ranges:
        if a < lo:
            out.append((a, min(b, lo)))
        if b > hi:
            out.append((max(a, hi), b))
    return [r for r in out if r[0] < r[1]]


def holes_in(containers, blocks):
    """Lengths of the maximal parts of each container [lo, hi) that no
    block [a, b) covers; containers are taken one by one (never merged)."""
    union = []  # the blocks' union: sorted, disjoint
    for a, b in sorted(blocks):
        if b <= a:
            continue
        if union and a <= union[-1][1]:
            union[-1][1] = max(union[-1][1], b)
        else:
            union.append([a, b])
    ends = [b for _, b in union]
    out = []
    for lo, hi in containers:
        at, i = lo, bisect.bisect_right(ends, lo)
        while i < len(union):
            a, b = union[i]
            i += 1
            if a >= hi:
                break
            if a > at:
                out.append(a - at)
            at = max(at, b)
            if at >= hi:
                break
        if at < hi:
            out.append(hi - at)
    return out


def granule_regions(blocks, g):
    """The address-space model: runs of consecutive g-aligned granules
    that live blocks touch."""
    gr = set()
    for a, b in blocks:
        if b > a:
            gr.update(range(a // g, -(-b // g)))
    regions, run = [], None
    for k in sorted(gr):
        if run and k == run[1]:
            run[1] = k + 1
        else:
            run = [k, k + 1]
            regions.append(run)
    return [(lo * g, hi * g) for lo, hi in regions]


class HoleTracker:
    """The largest hole of one device's containers, kept up to date as
    blocks and containers come and go: each container keeps the live
    blocks that touch it in address order and its largest hole; a heap
    with stale entries gives the largest of all."""

    def __init__(self):
        self.cons = {}  # key -> [lo, hi, blocks touching it (sorted), largest hole]
        self.order = []  # (lo, hi, key), sorted
        self.overlap = False  # containers overlap: find them by a full scan
        self.heap = []

    def _update(self, key):
        c = self.cons[key]
        c[3] = max(holes_in([(c[0], c[1])], c[2]), default=0)
        heapq.heappush(self.heap, (-c[3], key, c[3]))

    def add_container(self, key, lo, hi, spans):
        i = bisect.bisect_left(self.order, (lo, hi, key))
        if (i > 0 and self.order[i - 1][1] > lo) or (i < len(self.order)
                                                     and self.order[i][0] < hi):
            self.overlap = True
        self.order.insert(i, (lo, hi, key))
        self.cons[key] = [lo, hi, sorted(s for s in spans if s[0] < hi and s[1] > lo), 0]
        self._update(key)

    def remove_container(self, key):
        lo, hi = self.cons.pop(key)[:2]
        self.order.remove((lo, hi, key))

    def touching(self, a, b):
        if self.overlap:
            return [k for lo, hi, k in self.order if lo < b and hi > a]
        i, out = max(bisect.bisect_right(self.order, (a, float("inf"))) - 1, 0), []
        while i < len(self.order) and self.order[i][0] < b:
            if self.order[i][1] > a:
                out.append(self.order[i][2])
            i += 1
        return out

    def change(self, a, b, add):
        for k in self.touching(a, b):
            if add:
                bisect.insort(self.cons[k][2], (a, b))
            else:
                self.cons[k][2].remove((a, b))
            self._update(k)

    def largest(self):
        while self.heap and (self.heap[0][1] not in self.cons
                             or self.cons[self.heap[0][1]][3] != self.heap[0][2]):
            heapq.heappop(self.heap)
        return self.heap[0][2] if self.heap else 0


class Device:
    def __init__(self, ordinal):
        self.ordinal = ordinal
        self.events = 0
        self.live = self.requested = self.reserved = 0
        self.has_segments = False
        self.blocks = {}  # id -> [address, size, requested, frames, pending]
        self.segments = {}  # id -> (address, size)
        self.mapped = []  # merged mapped ranges
        self.peaks = {k: {"bytes": 0, "ts_ns": 0, "seq": 0}
                      for k in ("live", "requested", "reserved")}
        self.ooms = []
        self.reserved_best = (0, 0)  # (seq, live bytes) of the reserved peak's FRAG
        self.holes = None  # HoleTracker, for the time-weighted figures
        self.last_seq = self.last_ts = 0  # the device's last event

    def apply(self, ev, never_live):
        """One event of this device; returns the block span that became
        live (+1) or stopped being live (-1), or None."""
        op, _, id_, addr, size, req = ev[:6]
        self.events += 1
        change = None
        if op in (ALLOC, PREEXISTING):
            # a block freed by the program before the trace began is pending from the
            # start: it holds its range (no hole) but is not live
            self.blocks[id_] = [addr, size, req, ev[6], 1 if never_live else 0, ev[8],
                                op == PREEXISTING]
            if not never_live:
                self.live += size
                self.requested += min(req, size)
            change = (addr, addr + size, 1)
        elif op in (FREE, FREE_REQUESTED):
            b = self.blocks.get(id_)
            if b and not b[4]:
                self.live -= b[1]
                self.requested -= min(b[2], b[1])
                b[4] = 1
            if b and op == FREE:  # the allocator takes the range back: a hole now
                del self.blocks[id_]
                change = (b[0], b[0] + b[1], -1)
        elif op in (RESERVE, RELEASE, MAP, UNMAP):
            self.has_segments = True
            if op == RESERVE:
                self.segments[id_] = (addr, size)
                self.reserved += size
            elif op == RELEASE and id_ in self.segments:
                self.reserved -= self.segments.pop(id_)[1]
            elif op == MAP:
                self.reserved += size
                self.mapped = add_range(self.mapped, addr, addr + size)
            elif op == UNMAP:
                self.reserved -= size
                self.mapped = cut_range(self.mapped, addr, addr + size)
        return change

    def live_blocks(self):
        return [b for b in self.blocks.values() if not b[4]]

    def held(self):
        """Bytes the blocks hold: live and pending (freed by the program, not
        yet by the allocator: neither live nor a hole)."""
        return sum(b[1] for b in self.blocks.values())

    def spans(self):
        """The blocks that fill address ranges, live or pending: with an
        address and a size."""
        return [(b[0], b[0] + b[1]) for b in self.blocks.values() if b[0] and b[1]]

    def containers(self):
        return [(a, a + s) for a, s in self.segments.values()] + self.mapped

    def model(self):
        if self.has_segments:
            return "segments"
        return "address-space" if any(b[0] for b in self.blocks.values()) else "none"

    def frag(self, seq, ts):
        """FRAG of memprof analyze's layout, now."""
        spans = self.spans()
        if self.has_segments:
            containers = self.containers()
            reserved = self.reserved
            holes = holes_in(containers, spans)
            free = reserved - self.held() if reserved >= self.held() else None
        else:
            containers = granule_regions(spans, GRANULARITY)
            reserved = sum(hi - lo for lo, hi in containers)
            holes = holes_in(containers, spans)
            free = sum(holes)
        largest = max(holes, default=0)
        if self.model() == "none":
            reserved = free = largest = None
        internal = self.live - self.requested
        return {"ts_ns": ts, "seq": seq, "live_bytes": self.live,
                "requested_bytes": self.requested,
                "reserved_bytes": reserved, "internal_fragmentation_bytes": internal,
                "internal_fragmentation_share": internal / self.live if self.live else 0.0,
                "free_in_reserved_bytes": free, "largest_hole_bytes": largest,
                "external_fragmentation": None if free is None else 1 - largest / free if free else 0.0,
                "_hole_bytes": sum(holes), "_n_holes": len(holes),
                "_container_bytes": sum(hi - lo for lo, hi in containers)}

    def weighted_values(self, seq, ts):
        """(live, internal, free, external ratio) now, for the integrals;
        the segments model's largest hole from the tracker."""
        if not self.has_segments:
            f = self.frag(seq, ts)
            return self.live, f["internal_fragmentation_bytes"], f["free_in_reserved_bytes"], f["external_fragmentation"]
        if self.reserved < self.held():
            return self.live, self.live - self.requested, None, None
        free = self.reserved - self.held()
        ratio = 1 - self.holes.largest() / free if free else 0.0
        return self.live, self.live - self.requested, free, ratio

    def groups(self, kind):
        """The live blocks grouped by kind (stack, phase, stream or size),
        largest first: bytes, then count, then key."""
        by = {}
        for b in self.live_blocks():
            extra = {}
            if kind == "stack":
                key, frames = STACKS.text(b[3])
                extra = {"frames": frames}
            elif kind == "phase":
                key = ""  # memory events of a snapshot have no phase
            elif kind == "stream":
                key = str(b[5])
            else:
                lo = 1 << (b[1].bit_length() - 1) if b[1] else 0
                key = "%s..%s" % (binary(lo), binary(2 * lo)) if lo else "0 B"
                extra = {"min_bytes": lo, "max_bytes": 2 * lo - 1 if lo else 0}
            g = by.get(key)
            if g is None:
                g = by[key] = dict({"key": key, "count": 0, "bytes": 0, "requested_bytes": 0},
                                   **extra)
            g["count"] += 1
            g["bytes"] += b[1]
            g["requested_bytes"] += min(b[2], b[1])
        out = sorted(by.values(), key=lambda g: (-g["bytes"], -g["count"],
                                                 g["key"].encode("utf-8", "surrogatepass")))
        for g in out:
            g["share"] = g["bytes"] / self.live if self.live else 0.0
        return out


def binary(v):
    """A power of two with its binary unit: 512 B, 1 KiB, 2 MiB."""
    for unit in ("EiB", "PiB", "TiB", "GiB", "MiB", "KiB"):
        scale = 1 << (10 * (1 + ("KiB", "MiB", "GiB", "TiB", "PiB", "EiB").index(unit)))
        if v >= scale:
            return "%d %s" % (v // scale, unit)
    return "%d B" % v


class Weighted:
    """The time-weighted figures of one device: integrals of the values
    after each event over the gap to the trace's next event."""

    def __init__(self, seq):
        self.since_seq, self.span = seq, 0
        self.live = self.internal = self.free = self.ratio = 0
        self.free_known = True
        self.now = None

    def add(self, gap):
        if self.now is None or gap <= 0:
            return
        live, internal, free, ratio = self.now
        self.span += gap
        self.live += live * gap
        self.internal += internal * gap
        if free is None:
            self.free_known = False
        else:
            self.free += free * gap
            self.ratio += ratio * gap

    def figures(self):
        if self.span == 0:
            return None
        known = self.free_known
        return {"span_ns": self.span, "since_seq": self.since_seq,
                "internal_fragmentation_bytes": self.internal / self.span,
                "internal_fragmentation_share": self.internal / self.live if self.live else 0.0,
                "free_in_reserved_bytes": self.free / self.span if known else None,
                "external_fragmentation": self.ratio / self.span if known else None}


def track_holes(d, ev, change):
    """Keep d's HoleTracker up to date after event ev (segments model)."""
    op, id_, addr, size = ev[0], ev[2], ev[3], ev[4]
    if not d.has_segments:
        return
    if d.holes is None:  # the model starts: place the live blocks
        d.holes = HoleTracker()
        for key, (a, s) in d.segments.items():
            d.holes.add_container(("s", key), a, a + s, d.spans())
        for i, (lo, hi) in enumerate(d.mapped):
            d.holes.add_container(("m", i), lo, hi, d.spans())
        return
    if op == RESERVE:
        if ("s", id_) in d.holes.cons:
            d.holes.remove_container(("s", id_))
        d.holes.add_container(("s", id_), addr, addr + size, d.spans())
    elif op == RELEASE and ("s", id_) in d.holes.cons and id_ not in d.segments:
        d.holes.remove_container(("s", id_))
    if op in (MAP, UNMAP):
        for k in [k for k in d.holes.cons if k[0] == "m"]:
            d.holes.remove_container(k)
        for i, (lo, hi) in enumerate(d.mapped):
            d.holes.add_container(("m", i), lo, hi, d.spans())
    if change and change[0] and change[1] > change[0]:
        d.holes.change(change[0], change[1], change[2] > 0)


def replay(events, at=None, weighted=False):
    """Run the memory state over the events.  at: {seq: [what, ...]} where
    the FRAG (and groups) of the event's device are taken.  weighted: also
    the time-weighted figures (slower).  Returns the devices, the FRAGs
    taken ({(what, seq): frag}) and {device: Weighted}."""
    devices, taken, tw = {}, {}, {}
    n = len(events)
    skip = False
    for i, ev in enumerate(events):
        op, dev, id_, ts = ev[0], ev[1], ev[2], ev[7]
        seq = i + 1
        d = devices.get(dev) or devices.setdefault(dev, Device(dev))
        # a preexisting block followed at once by its free_requested is never live
        never_live = (op == PREEXISTING and i + 1 < n and events[i + 1][0] == FREE_REQUESTED
                      and events[i + 1][1] == dev and events[i + 1][2] == id_)
        d.last_seq, d.last_ts = seq, ts
        had_segments = d.has_segments
        if skip:
            d.events += 1
            skip = False
            change = None
        else:
            change = d.apply(ev, never_live)
            skip = never_live
        if op == OOM:
            d.ooms.append((seq, ts, ev[4], ev[9]))
        for k, v in (("live", d.live), ("requested", d.requested), ("reserved", d.reserved)):
            if v > d.peaks[k]["bytes"]:
                d.peaks[k] = {"bytes": v, "ts_ns": ts, "seq": seq}
        # at the reserved peak: of the events leaving reserved bytes at their
        # peak, the first with the most live bytes
        rp = d.peaks["reserved"]
        if d.has_segments and rp["seq"] and (
                rp["seq"] == seq or (d.reserved == rp["bytes"] and d.live > d.reserved_best[1])):
            d.reserved_best = (seq, d.live)
        for what in (at or {}).get(seq, ()):
            f = d.frag(seq, ts)
            f["_groups"] = {k: d.groups(k) for k in GROUP_KINDS} if what == "peak" else None
            taken[(what, seq)] = f
        if weighted:
            if dev not in tw or (d.has_segments and not had_segments and
                                 tw[dev].since_seq != seq):
                tw[dev] = Weighted(seq)  # the device's model starts here
            track_holes(d, ev, change)
            tw[dev].now = d.weighted_values(seq, ts)
            if CHECK and d.has_segments:  # the tracker against the brute force
                brute = max(holes_in(d.containers(), d.spans()), default=0)
                assert d.holes.largest() == brute, (seq, d.holes.largest(), brute)
            gap = events[i + 1][7] - ts if i + 1 < n else 0
            for w in tw.values():
                w.add(gap)
    return devices, taken, tw


def lifetime_totals(d):
    """A snapshot is a window of its program: blocks live at its end (not
    preexisting) are live at the window's end, never leaks ("leaks" is
    null); preexisting blocks live at the end apart."""
    out = {"leaks": None}
    for name, pre in (("live_at_window_end", False), ("preexisting_live_at_end", True)):
        blocks = [b for b in d.live_blocks() if b[6] == pre]
        out[name] = {"count": len(blocks), "bytes": sum(b[1] for b in blocks)}
    return out


def public(frag):
    return {k: v for k, v in frag.items() if not k.startswith("_")} if frag else None


def analyze(snap, top):
    MODELLED[0] = 0
    events = import_events(snap)
    devices, _, _ = replay(events)
    at = {}
    for d in devices.values():
        at.setdefault(d.peaks["live"]["seq"], []).append("peak")
        if d.has_segments:
            at.setdefault(d.reserved_best[0], []).append("reserved_peak")
        for o in d.ooms:
            at.setdefault(o[0], []).append("oom")
    _, taken, tw = replay(events, at, weighted=True)
    last_ts = events[-1][7] if events else 0
    out = {"memprof_analyze_version": 2, "events": len(events),
           "modelled_granted_blocks": MODELLED[0],
           "span_ns": last_ts - events[0][7] if events else 0, "devices": []}
    for dev in sorted(devices):
        d = devices[dev]
        if d.events == 0:
            continue
        peak = taken.get(("peak", d.peaks["live"]["seq"]))  # None: nothing was ever live
        end = d.frag(d.last_seq, d.last_ts)  # after the device's last event
        ooms = []
        for seq, ts, size, device_free in d.ooms:
            f = taken[("oom", seq)]
            largest, free = f["largest_hole_bytes"], f["free_in_reserved_bytes"]
            ooms.append({"seq": seq, "ts_ns": ts, "requested_bytes": size,
                         "device_free_bytes": device_free if device_free >= 0 else None,
                         "live_bytes": f["live_bytes"], "reserved_bytes": f["reserved_bytes"],
                         "free_in_reserved_bytes": free, "largest_hole_bytes": largest,
                         "fits_in_free_reserved": size <= free if free is not None else None,
                         "fits_in_largest_free": size <= largest if largest is not None else None})
        groups = peak["_groups"] if peak else {k: [] for k in GROUP_KINDS}
        reserved_peak = taken.get(("reserved_peak", d.reserved_best[0]))
        out["devices"].append({
            "device": dev,
            "events": d.events,
            "peaks": {"live": d.peaks["live"], "requested": d.peaks["requested"],
                      "reserved": d.peaks["reserved"] if d.has_segments else None},
            "end": {"live_bytes": d.live, "requested_bytes": d.requested,
                    "reserved_bytes": d.reserved if d.has_segments else None,
                    "live_blocks": len(d.live_blocks())},
            "fragmentation": {
                "model": d.model(),
                "granularity_bytes": GRANULARITY if d.model() == "address-space" else None,
                "at_peak": public(peak),
                "at_reserved_peak": public(reserved_peak),
                "at_end": public(end),
                "time_weighted": tw[dev].figures()},
            "ooms": ooms[:OOMS_LISTED],
            "attribution": {"at": "peak", "seq": peak["seq"], "ts_ns": peak["ts_ns"],
                            "live_bytes": peak["live_bytes"],
                            "live_blocks": sum(g["count"] for g in groups["stack"]),
                            "groups": {k: v[:top] for k, v in groups.items()}}
            if peak else None,
            "lifetime": {"totals": lifetime_totals(d)},
            "reference_only": {
                "at_peak": {k[1:]: v for k, v in (peak or {}).items()
                            if k.startswith("_") and k != "_groups"},
                "at_end": {k[1:]: v for k, v in end.items() if k.startswith("_")},
                "groups_at_peak": {k: len(v) for k, v in groups.items()}},
        })
    return out


OP_NAMES = {ALLOC: "alloc", FREE: "free", PREEXISTING: "preexisting", RESERVE: "reserve",
            RELEASE: "release", MAP: "map", UNMAP: "unmap", OOM: "oom",
            PHASE_BEGIN: "phase_begin", PHASE_END: "phase_end",
            FREE_REQUESTED: "free_requested"}


def write_events(snap, out):
    """The events as CSV rows ts_ns,op,id,size,requested,address,device,stream,stack:
    those columns of 'memprof export' (compare_analyze.py --events)."""
    w = csv.writer(out, lineterminator="\n")
    for ev in import_events(snap):
        op, dev, id_, addr, size, req, frames, ts, stream = ev[:9]
        w.writerow([ts, OP_NAMES[op], id_, size, req, "0x%x" % addr, dev, stream,
                    STACKS.text(frames)[0]])


def main():
    args = sys.argv[1:]
    top, events = 3, False
    while len(args) > 1 and args[0] in ("--top", "--events"):
        if args[0] == "--events":
            events, args = True, args[1:]
        else:
            top, args = int(args[1]), args[2:]
    if len(args) != 1:
        sys.exit("usage: analyze_figures.py [--top N | --events] SNAPSHOT.pickle")
    with open(args[0], "rb") as f:
        snap = pickle.load(f)
    if isinstance(snap, list):
        snap = {"segments": snap, "device_traces": []}
    if events:
        write_events(snap, sys.stdout)
        return
    json.dump(analyze(snap, top), sys.stdout, indent=1, sort_keys=True)
    print()


if __name__ == "__main__":
    main()
