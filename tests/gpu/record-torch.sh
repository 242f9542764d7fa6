#!/bin/bash
# tests/gpu/record-torch.sh - samples/torch/train_gpt.py recorded on a real GPU with
# 'memprof record', once as it is (PyTorch's caching allocator: CUDA sees a few segments)
# and once with --no-framework-cache (every tensor reaches cudaMalloc/cudaFree): the
# no-cache trace must hold many more (at least 5x) allocations, and both traces the
# phases forward, backward and optimizer.  The cached run also keeps PyTorch's own history
# (memprof's sitecustomize, on by default): its trace must hold both levels, its segments and
# blocks live at the end equal to those of the snapshot the run left (kept with --keep-spool),
# every block inside a recorded segment, and allocations outside PyTorch's allocator labelled
# and outside the snapshot's segments.  Prints TAP; skips (77) with the reason without
# a GPU, PyTorch with CUDA, or the record command.  Raw output in $GPU_OUT/record-torch.
set -u
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
top_builddir=${top_builddir:-.}
MEMPROF=${MEMPROF:-$top_builddir/memprof}
out=${GPU_OUT:-$top_builddir/gpu-runs}/record-torch
PY=${PYTHON:-python3}
TRAIN="$top_srcdir/samples/torch/train_gpt.py --steps ${TORCH_STEPS:-5} --layers 2 --d-model 256"

reason=$("$PY" "$top_srcdir/tests/gpu/have_gpu.py") || { echo "record-torch: SKIP: $reason"; exit 77; }
"$PY" -c 'import torch, sys; sys.exit(not torch.cuda.is_available())' 2>/dev/null ||
	{ echo "record-torch: SKIP: no PyTorch with CUDA in $PY"; exit 77; }
"$MEMPROF" record --help >/dev/null 2>&1 ||
	{ echo "record-torch: SKIP: $MEMPROF has no record command"; exit 77; }
mkdir -p "$out" || exit 99

echo "1..6"
fail=0
for mode in cached nocache; do
	opt="--keep-spool --spool-dir=$out/spool-$mode"
	rm -rf "$out/spool-$mode"
	[ "$mode" = nocache ] && opt="$opt --no-framework-cache"
	rm -f "$out/$mode.db"
	# shellcheck disable=SC2086
	"$MEMPROF" record $opt -o "$out/$mode.db" -- "$PY" $TRAIN >"$out/$mode.log" 2>"$out/$mode.err"
	st=$?
	if [ "$st" -eq 0 ] && [ -f "$out/$mode.db" ]; then
		echo "ok - record $mode (${opt:-no option})"
	else
		echo "not ok - record $mode: exit $st; see $out/$mode.err"
		sed 's/^/# /' "$out/$mode.err" | tail -n 15
		fail=1
	fi
done
[ "$fail" -eq 0 ] || { for c in comparison phases both-levels placement; do echo "ok - # SKIP $c: a recording failed"; done; exit 1; }

"$PY" - "$out/cached.db" "$out/nocache.db" >"$out/compare.txt" 2>&1 <<'PY'
import sqlite3, sys
want_phases = ("forward", "backward", "optimizer")
res = {}
for path in sys.argv[1:]:
    db = sqlite3.connect(path)
    q = lambda sql: db.execute(sql).fetchone()[0]
    phases = {r[0] for r in db.execute("SELECT p.name FROM events e JOIN phases p ON "
                                       "p.id = e.phase WHERE e.op = 9")}
    res[path] = dict(events=q("SELECT count(*) FROM events"),
                     allocs=q("SELECT count(*) FROM events WHERE op = 1"),
                     frees=q("SELECT count(*) FROM events WHERE op = 2"),
                     maps=q("SELECT count(*) FROM events WHERE op = 6"),
                     phase_begins=q("SELECT count(*) FROM events WHERE op = 9"),
                     missing=[p for p in want_phases if p not in phases])
    print("%-40s %s" % (path, " ".join("%s=%s" % kv for kv in res[path].items())))
cached, nocache = (res[p] for p in sys.argv[1:])
ok = True
if nocache["allocs"] < 5 * max(cached["allocs"], 1):
    print("FAIL: the no-cache trace has %d allocations, not 5x the cached trace's %d"
          % (nocache["allocs"], cached["allocs"]))
    ok = False
for p, r in res.items():
    if r["missing"]:
        print("FAIL: %s lacks the phases %s" % (p, ", ".join(r["missing"])))
        ok = False
sys.exit(0 if ok else 1)
PY
st=$?
sed 's/^/# /' "$out/compare.txt"
if grep -q "not 5x" "$out/compare.txt" || [ "$st" -gt 1 ]; then
	echo "not ok - the no-cache trace has many more allocations"
	fail=1
else
	echo "ok - the no-cache trace has many more allocations"
fi
if grep -q "lacks the phases" "$out/compare.txt" || [ "$st" -gt 1 ]; then
	echo "not ok - phases forward, backward, optimizer in both traces"
	fail=1
else
	echo "ok - phases forward, backward, optimizer in both traces"
fi
# Both levels in the cached trace, checked against the snapshot PyTorch itself wrote.
"$PY" - "$out/cached.db" "$out/spool-cached" >"$out/both.txt" 2>&1 <<'PY'
import glob, os, pickle, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
meta = dict(db.execute("SELECT key, value FROM meta"))
snaps = sorted(glob.glob(os.path.join(sys.argv[2], "torch-*.pickle")))
print("meta:", {k: v for k, v in meta.items() if k.startswith("torch_")}, "snapshots:", snaps)
if meta.get("torch_history") != "merged" or not snaps:
    print("FAIL: no PyTorch history merged"); sys.exit(1)
pid = int(os.path.basename(snaps[0])[6:-7])
snap = pickle.load(open(snaps[0], "rb"))
proc = db.execute("SELECT id FROM processes WHERE pid = ?", (pid,)).fetchone()[0]
def live(ops_open, ops_close, where):
    rows = db.execute("SELECT e.op, e.alloc_id, e.address, e.size FROM events e LEFT JOIN apis a "
                      "ON a.id = e.api WHERE e.process = ? AND " + where + " ORDER BY e.seq", (proc,))
    out = {}
    for op, aid, addr, size in rows:
        if op in ops_open: out[aid] = (addr, size)
        elif op in ops_close: out.pop(aid, None)
    return set(out.values())
segs = live((4,), (5,), "e.op IN (4, 5)")
blocks = live((1, 3), (2,), "a.name = 'PyTorch allocator'")
snap_segs = {(s["address"], s["total_size"]) for s in snap["segments"]}
snap_blocks = set()
for s in snap["segments"]:
    addr = s["address"]
    for b in s["blocks"]:
        if b["state"].startswith("active"): snap_blocks.add((addr, b["size"]))
        addr += b["size"]
ok = True
for name, mine, theirs in (("segments", segs, snap_segs), ("blocks", blocks, snap_blocks)):
    print("%s: trace %d, snapshot %d, only in trace %d, only in snapshot %d" % (
        name, len(mine), len(theirs), len(mine - theirs), len(theirs - mine)))
    if mine != theirs: ok = False
outside = db.execute("SELECT e.address, e.size, a.name FROM events e JOIN apis a ON a.id = e.api "
                     "WHERE a.name LIKE '%(%)' AND e.op = 1").fetchall()
inside = [o for o in outside if any(a <= o[0] < a + n for a, n in snap_segs)]
print("outside PyTorch's allocator: %d allocations (%s), %d inside a snapshot segment" % (
    len(outside), ", ".join(sorted({o[2] for o in outside})), len(inside)))
print("BOTH %s" % ("ok" if ok else "FAIL"))
print("PLACED %s" % ("ok" if meta.get("torch_blocks_outside_segments") == "0" and not inside else "FAIL"))
PY
sed 's/^/# /' "$out/both.txt"
for check in "BOTH:the merged trace's segments and blocks equal the snapshot's" \
	"PLACED:every block inside a recorded segment, what PyTorch cannot see outside its segments"; do
	if grep -q "^${check%%:*} ok" "$out/both.txt"; then
		echo "ok - ${check#*:}"
	else
		echo "not ok - ${check#*:}"
		fail=1
	fi
done
grep -h "final loss\|max_memory_allocated" "$out"/cached.log "$out"/nocache.log | sed 's/^/# /'
exit "$fail"
