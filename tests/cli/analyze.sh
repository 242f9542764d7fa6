#!/bin/bash
# analyze.sh - 'memprof analyze' on two fixtures whose figures were worked
# out by hand, as JSON (checked field by field) and as text.
#
# tests/cli/data/analyze-segments.csv: device 0, one segment [4096, 5096).
#   seq  ts   event                                   live  req  free  holes          ext
#    1    0   reserve 1000 at 4096                       0    0  1000  1000           0
#    2   10   alloc 1: 100 (req 90) at 4096, A, s7     100   90   900  900            0
#    3   20   alloc 2: 200 at 4196, B, s7              300  290   700  700            0
#    4   30   alloc 3: 300 (req 250) at 4496, C, s9    600  540   400  100,300        1-300/400 = 0.25
#    5   40   free 2                                   400  340   600  300,300        0.5
#    6   50   oom, request 500                         400  340   600  300,300        0.5
#    7   60   alloc 4: 50 at 4196, A, s7               450  390   550  250,300        1-300/550
#    8  100   free 1                                   350  300   650  100,250,300    1-300/650
# Peaks: live 600 and requested 540 at event 4; reserved 1000 at event 1.
# Time-weighted over 100 ns (value after each event times the gap to the next):
#   internal: 0*10 + 10*10 + 10*10 + 60*10 + 60*10 + 60*10 + 60*40 = 4400 -> 44 B
#   live:     0*10 + 100*10 + 300*10 + 600*10 + 400*10 + 400*10 + 450*40 = 36000
#             internal ratio 4400/36000
#   free:     1000*10 + 900*10 + 700*10 + 400*10 + 600*10 + 600*10 + 550*40 = 64000 -> 640 B
#   external: (0.25*10 + 0.5*10 + 0.5*10 + (1-300/550)*40) / 100
# The OOM: 600 free in reserved memory, largest hole 300: fits the free bytes,
# not one hole.  Live at the peak (event 4): C 300, B 200, A 100 by stack;
# phases forward 300 (2 blocks) and backward 300 (1 block); streams 7 and 9.
# Lifetime (churn window 15 ns): block 2 is churn (freed before stream 7's
# next allocation); blocks 3 (C, 300) and 4 (A, 50) are leaks; block 1 is
# idle until the end (freed after the last allocation, live 90 of 100 ns).
#
# tests/cli/data/analyze-address.csv: device 1, no segments, 4 KiB granules.
#   x1 [8192, 9192), x2 [9192, 10192) req 900, x3 [20480, 25480).
#   After x3 (the peak, 7000 live): granules [8192, 12288) and [20480, 28672):
#   reserved 12288, holes 2096 and 3192, free 5288, external 1-3192/5288.
#   After freeing x2: holes 3096 and 3192, free 6288.
set -u
. "$(dirname "$0")/lib.sh"

W=$TMP/work
mkdir "$W" || die "mkdir $W"
cd "$W" || die "cd $W"
command -v python3 >/dev/null || skip "python3 is needed to check the JSON"

step "import the fixtures"
mp import -o seg.db "$DATA/analyze-segments.csv"
expect_status 0
mp import -o addr.db "$DATA/analyze-address.csv"
expect_status 0

step "segments model: peaks, fragmentation, OOM"
mp analyze --json --by=all --churn-window=15ns seg.db
expect_status 0
expect_stderr_empty
cp "$OUT" seg.json
check_json seg.json '
assert j["memprof_analyze_version"] == 2
assert j["events"] == 8 and j["span_ns"] == 100
d, = j["devices"]
assert d["device"] == 0 and d["events"] == 8
assert d["peaks"]["live"] == {"bytes": 600, "ts_ns": 30, "seq": 4}
assert d["peaks"]["requested"] == {"bytes": 540, "ts_ns": 30, "seq": 4}
assert d["peaks"]["reserved"] == {"bytes": 1000, "ts_ns": 0, "seq": 1}
assert d["end"] == {"live_bytes": 350, "requested_bytes": 300, "reserved_bytes": 1000, "live_blocks": 2}
f = d["fragmentation"]
assert f["model"] == "segments" and f["granularity_bytes"] is None
p = f["at_peak"]
assert (p["seq"], p["live_bytes"], p["requested_bytes"], p["reserved_bytes"]) == (4, 600, 540, 1000)
assert p["internal_fragmentation_bytes"] == 60 and near(p["internal_fragmentation_share"], 0.1)
assert p["free_in_reserved_bytes"] == 400 and p["largest_hole_bytes"] == 300
assert near(p["external_fragmentation"], 0.25)
r = f["at_reserved_peak"]
assert (r["seq"], r["live_bytes"], r["free_in_reserved_bytes"], r["largest_hole_bytes"]) == (4, 600, 400, 300)
assert near(r["external_fragmentation"], 0.25)
e = f["at_end"]
assert (e["seq"], e["live_bytes"], e["internal_fragmentation_bytes"], e["free_in_reserved_bytes"], e["largest_hole_bytes"]) == (8, 350, 50, 650, 300)
assert near(e["external_fragmentation"], 1 - 300 / 650)
t = f["time_weighted"]
assert t["span_ns"] == 100
assert near(t["internal_fragmentation_bytes"], 44) and near(t["internal_fragmentation_share"], 4400 / 36000)
assert near(t["free_in_reserved_bytes"], 640)
assert near(t["external_fragmentation"], (0.25 * 10 + 0.5 * 10 + 0.5 * 10 + (1 - 300 / 550) * 40) / 100)
o, = d["ooms"]
assert (o["seq"], o["ts_ns"], o["requested_bytes"], o["device_free_bytes"]) == (6, 50, 500, 12345)
assert (o["live_bytes"], o["reserved_bytes"], o["free_in_reserved_bytes"], o["largest_hole_bytes"]) == (400, 1000, 600, 300)
assert o["fits_in_free_reserved"] is True and o["fits_in_largest_free"] is False
'

step "segments model: who holds memory at the peak"
check_json seg.json '
a = j["devices"][0]["attribution"]
assert (a["at"], a["seq"], a["ts_ns"], a["live_bytes"], a["live_blocks"]) == ("peak", 4, 30, 600, 3)
g = a["groups"]
assert [(x["key"], x["bytes"], x["count"]) for x in g["stack"]] == [
    ("train@train.py:5;bwd@model.py:30", 300, 1),
    ("train@train.py:5;mlp@model.py:20", 200, 1),
    ("train@train.py:5;fwd@model.py:10", 100, 1)]
assert g["stack"][0]["frames"][0] == {"name": "bwd", "file": "model.py", "line": 30}
assert near(g["stack"][0]["share"], 0.5) and g["stack"][0]["requested_bytes"] == 250
assert [(x["key"], x["bytes"], x["count"]) for x in g["phase"]] == [("forward", 300, 2), ("backward", 300, 1)]
assert [(x["key"], x["bytes"], x["count"]) for x in g["stream"]] == [("7", 300, 2), ("9", 300, 1)]
assert [(x["key"], x["min_bytes"], x["max_bytes"], x["bytes"]) for x in g["size"]] == [
    ("256 B..512 B", 256, 511, 300), ("128 B..256 B", 128, 255, 200), ("64 B..128 B", 64, 127, 100)]
assert [(x["key"], x["bytes"]) for x in g["api"]] == [("", 600)]
'

step "segments model: lifetime patterns"
check_json seg.json '
l = j["devices"][0]["lifetime"]
assert [(x["key"], x["bytes"], x["count"]) for x in l["leaks"]] == [
    ("train@train.py:5;bwd@model.py:30", 300, 1), ("train@train.py:5;fwd@model.py:10", 50, 1)]
assert [(x["key"], x["bytes"], x["count"]) for x in l["churn"]] == [("train@train.py:5;mlp@model.py:20", 200, 1)]
assert l["reuse"] == []
assert [(x["key"], x["bytes"], x["count"], x["mean_lifetime_ns"]) for x in l["idle"]] == [
    ("train@train.py:5;fwd@model.py:10", 100, 1, 90)]
assert l["totals"]["leaks"] == {"count": 2, "bytes": 350}
assert l["totals"]["preexisting_live_at_end"] == {"count": 0, "bytes": 0}
'

step "the idle share is an option"
# block 1 lived 90 of the trace's 100 ns: idle at share 0.9, not at 0.95
mp analyze --json --churn-window=15ns --idle-share=0.9 seg.db
cp "$OUT" idle.json
check_json idle.json 'assert j["devices"][0]["lifetime"]["totals"]["idle"] == {"count": 1, "bytes": 100}'
mp analyze --json --churn-window=15ns --idle-share=0.95 seg.db
cp "$OUT" idle.json
check_json idle.json '
assert j["devices"][0]["lifetime"]["totals"]["idle"] == {"count": 0, "bytes": 0}
assert j["options"]["idle_share"] == 0.95'
mp analyze --json --churn-window=15ns --idle-share=95% seg.db
expect_status 0
cp "$OUT" idle.json
check_json idle.json 'assert j["options"]["idle_share"] == 0.95'

step "attribution at the first OOM, at a time, and from the first event"
for at in oom +45ns 45; do
	mp analyze --json "--at=$at" seg.db
	expect_status 0
	cp "$OUT" at.json
	check_json at.json '
a = j["devices"][0]["attribution"]
assert (a["seq"], a["live_bytes"], a["live_blocks"]) == ('"$([ $at = oom ] && echo 6 || echo 5)"', 400, 2), a
assert [(x["key"], x["bytes"]) for x in a["groups"]["stack"]] == [
    ("train@train.py:5;bwd@model.py:30", 300), ("train@train.py:5;fwd@model.py:10", 100)]
'
done
mp analyze --json --at=25 seg.db
cp "$OUT" at.json
check_json at.json '
a = j["devices"][0]["attribution"]
assert (a["at"], a["seq"], a["live_bytes"]) == ("time", 3, 300), a
'

step "address-space model"
mp analyze --json --granularity=4KiB addr.db
expect_status 0
cp "$OUT" addr.json
check_json addr.json '
d, = j["devices"]
assert d["device"] == 1 and d["peaks"]["reserved"] is None
f = d["fragmentation"]
assert f["model"] == "address-space" and f["granularity_bytes"] == 4096
p = f["at_peak"]
assert (p["seq"], p["live_bytes"], p["internal_fragmentation_bytes"], p["reserved_bytes"]) == (3, 7000, 100, 12288)
assert (p["free_in_reserved_bytes"], p["largest_hole_bytes"]) == (5288, 3192)
assert near(p["external_fragmentation"], 1 - 3192 / 5288)
e = f["at_end"]
assert (e["live_bytes"], e["reserved_bytes"], e["free_in_reserved_bytes"], e["largest_hole_bytes"]) == (6000, 12288, 6288, 3192)
assert any("modelled from block addresses" in n for n in j["notes"])
'

step "text output"
mp analyze --churn-window=15ns seg.db
expect_status 0
expect_stdout_match '^  peak live +600 B +at \+30 ns, event 4$'
expect_stdout_match '^  peak reserved +1000 B +at \+0 ns, event 1$'
expect_stdout_match 'fragmentation figures \(segments model\)'
expect_stdout_contains 'event 6 at +50 ns: the request was 500 B, 600 B was free in reserved memory, the largest hole was 300 B (fragmentation: it fit in the free bytes, not in one hole)'
expect_stdout_match '300 B +50\.0% +1 +bwd \(model\.py:30\) < train \(train\.py:5\)$'
expect_stdout_contains 'leaks (never freed): 2 blocks, 350 B'
mp analyze --device=1 --granularity=4KiB addr.db
expect_status 0
expect_stdout_contains 'fragmentation figures (address-space model, 4.00 KiB granules)'

step "timeline"
mp analyze --timeline=tl.csv seg.db
expect_status 0
if [ "$(head -1 tl.csv)" = "device,ts_ns,seq,live_bytes,requested_bytes,reserved_bytes" ] &&
	[ "$(sed -n 5p tl.csv)" = "0,30,4,600,540,1000" ] && [ "$(wc -l <tl.csv)" -eq 9 ]; then
	pass
else
	fail "unexpected timeline: $(head -5 tl.csv | tr '\n' '|')"
fi

step "timeline downsampled to --points"
# 60 events on device 0: 30 allocations (i KiB each, 1 MiB for the 20th),
# then their frees; live bytes peak at the 30th event.  16 rows at most, the
# peak's row kept with its exact figures.
{
	echo "ts_ns,op,id,size,requested,address,device,stream,pid,phase,api,device_free,thread,stack"
	for i in $(seq 1 30); do
		size=$((i * 1024))
		[ "$i" -eq 20 ] && size=1048576
		printf '%d,alloc,%d,%d,%d,0x%x,0,0,9,,,,,\n' "$i" "$i" "$size" "$size" $((i << 24))
		printf '%d,free,%d,%d,%d,0x%x,0,0,9,,,,,\n' $((i + 100)) "$i" "$size" "$size" \
			$((i << 24)) >>frees.part
	done
	cat frees.part
} >many.csv
mp import -q -o many.db many.csv
expect_status 0
mp analyze --points=16 --timeline=many-tl.csv many.db
expect_status 0
peak=$(sort -t, -k4 -n many-tl.csv | tail -1 | cut -d, -f3)
rows=$(($(wc -l <many-tl.csv) - 1))
want_peak=$(awk 'BEGIN { s = 0; for (i = 1; i <= 30; i++) s += (i == 20 ? 1048576 : i * 1024); print s }')
if [ "$rows" -le 16 ] && [ "$rows" -ge 8 ] && [ "$peak" = 30 ] &&
	grep -q "^0,30,30,$want_peak,$want_peak,\$" many-tl.csv; then
	pass
else
	fail "timeline of 60 events at --points=16: $rows rows, peak row seq $peak"
fi

step "bad options"
for bad in --top=0 --by=colour --at=later --granularity=3000 --churn-window=soon \
	--idle-share=2 --points=3 --device=-1; do
	mp analyze "$bad" seg.db
	expect_status 2
	expect_stderr_contains "memprof analyze: invalid"
done
mp analyze
expect_status 2
mp analyze missing.db
expect_status 1
expect_stderr_contains "missing.db"

finish
