#!/usr/bin/env python3
"""spool_kinds.py - what a recorded spool (.mpt, src/spool/format.h) holds, for the
first-GPU-run questions of shared/notes/cupti.md section 9: which API calls produced CUPTI
MEMORY2 records and which only callback events.

Usage: spool_kinds.py SPOOL...

For each spool: events by kind; then each API name (MP_SK_API and VMM events) with the
number of calls, how many of them share a correlation id with a MEM_ALLOC/MEM_FREE record
("memory2"), how many none ("callback only"), and the memory kinds of those records; then
MEM records whose correlation id no API event has.  Reads the layout independently of the
C reader (python struct); stops at the first bad block, saying where.  Exit 0, or 2 when a
file cannot be read as a spool.
"""
import collections
import struct
import sys

KINDS = {1: "MEM_ALLOC", 2: "MEM_FREE", 3: "POOL_CREATED", 4: "POOL_DESTROYED",
         5: "POOL_TRIMMED", 6: "API", 7: "VMM_RESERVE", 8: "VMM_FREE", 9: "VMM_CREATE",
         10: "VMM_RELEASE", 11: "VMM_MAP", 12: "VMM_UNMAP", 13: "OOM", 14: "PHASE_PUSH",
         15: "PHASE_POP", 16: "MARK", 17: "PREEXISTING", 18: "WINDOW_START",
         19: "WINDOW_STOP", 20: "DROPPED", 21: "DISABLED"}
MEM_KINDS = {0: "unknown", 1: "pageable", 2: "pinned", 3: "device", 4: "array", 5: "managed",
             6: "device_static", 7: "managed_static"}
# struct mp_spool_event after its 8-byte item head: kind, mem_kind, flags, device, thread,
# correlation, name, stack, phase, zero, ts_ns, address, bytes, stream, duration_ns, extra,
# extra2 (96 bytes in all)
EVENT = struct.Struct("<BBHiIIIIII qQQQqQQ")
BLOCK = struct.Struct("<IIIIQ")
HEAD = struct.Struct("<HHI")
BLOCK_MAGIC = 0x4B42504D


class BadSpool(Exception):
    pass


def read_spool(path):
    """(events as tuples, strings by id, footer or None, where the reading stopped)."""
    data = open(path, "rb").read()
    if len(data) < 128 or data[:8] != b"MPSPOOL\x01":
        raise BadSpool("%s: not a memprof spool (no MPSPOOL magic)" % path)
    header_bytes, event_bytes = struct.unpack_from("<II", data, 12)
    if event_bytes != 96:
        raise BadSpool("%s: events of %d bytes, this reads 96" % (path, event_bytes))
    events, strings, footer, off, stop = [], {}, None, header_bytes, "end of file"
    while off < len(data):
        if off + BLOCK.size > len(data):
            stop = "a block header cut short at byte %d" % off
            break
        magic, payload, _crc, n_items, _seq = BLOCK.unpack_from(data, off)
        if magic != BLOCK_MAGIC or payload % 8 or off + BLOCK.size + payload > len(data):
            stop = "a bad or cut block at byte %d" % off
            break
        pos, end = off + BLOCK.size, off + BLOCK.size + payload
        while pos < end:
            typ, _zero, size = HEAD.unpack_from(data, pos)
            if size < 8 or pos + size > end:
                raise BadSpool("%s: item of %d bytes at byte %d" % (path, size, pos))
            if typ == 1:
                events.append(EVENT.unpack_from(data, pos + 8))
            elif typ == 2:
                sid, n = struct.unpack_from("<II", data, pos + 8)
                strings[sid] = data[pos + 16:pos + 16 + n].decode("utf-8", "replace")
            elif typ == 7:
                footer = struct.unpack_from("<QQqI", data, pos + 8)
            pos += size
        off = end
    return events, strings, footer, stop


def report(path):
    events, strings, footer, stop = read_spool(path)
    print("== %s: %d events, %s; footer: %s" % (
        path, len(events), "read to the " + stop if stop == "end of file" else "stopped at " + stop,
        "n_events=%d n_dropped=%d disabled=%d" % (footer[0], footer[1], footer[3])
        if footer else "none (cut short)"))
    by_kind = collections.Counter(KINDS.get(e[0], "kind %d" % e[0]) for e in events)
    for k, n in sorted(by_kind.items()):
        print("  %-16s %8d" % (k, n))
    mem = collections.defaultdict(list)
    for e in events:
        if e[0] in (1, 2):
            mem[e[5]].append(e)
    api = collections.defaultdict(lambda: [0, 0, 0, collections.Counter()])
    seen = set()
    for e in events:
        if e[0] == 6 or 7 <= e[0] <= 12:
            name = strings.get(e[6], KINDS[e[0]])
            row = api[(KINDS[e[0]], name)]
            row[0] += 1
            recs = mem.get(e[5]) if e[5] else None
            if recs:
                row[1] += 1
                seen.add(e[5])
                row[3].update(MEM_KINDS.get(r[1], str(r[1])) for r in recs)
            else:
                row[2] += 1
    print("  %-12s %-28s %7s %8s %14s  %s" % ("event", "api", "calls", "memory2",
                                           "callback-only", "memory kinds"))
    for (kind, name), (n, with_mem, without, kinds) in sorted(api.items()):
        print("  %-12s %-28s %7d %8d %14d  %s" % (kind, name, n, with_mem, without,
                                               ",".join("%s:%d" % kv for kv in
                                                        sorted(kinds.items())) or "-"))
    lone = [e for c, recs in mem.items() if c not in seen for e in recs]
    kinds = collections.Counter((KINDS[e[0]], MEM_KINDS.get(e[1], str(e[1]))) for e in lone)
    for (k, mk), n in sorted(kinds.items()):
        print("  %s %s records with no API event of their correlation id: %d" % (k, mk, n))


def main(argv):
    if len(argv) < 2:
        print("usage: spool_kinds.py SPOOL...", file=sys.stderr)
        return 2
    status = 0
    for path in argv[1:]:
        try:
            report(path)
        except (OSError, BadSpool, struct.error) as e:
            print("spool_kinds: %s" % e, file=sys.stderr)
            status = 2
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv))
