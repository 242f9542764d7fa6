#!/bin/bash
# window-leaks.sh - what is live at the end of a window is not a leak
# (issue 22 item 13; memprof-analyze(1), LIFETIME PATTERNS).  A PyTorch
# snapshot (tests/torch/make_snapshots.py) and a truncated trace are windows:
# analyze lists their blocks live at the end as "live at the end of the
# window", its JSON names the window and makes "leaks" null, and check does
# not check --no-leaks or --max-leaked on them (NOT CHECKED, exit 0; exit 3
# with --require-checked).  A trace of a whole program (CSV) still has leaks,
# and --no-leaks fails it.
set -u
. "$(dirname "$0")/lib.sh"

W=$TMP/work
mkdir "$W" || die "mkdir $W"
cd "$W" || die "cd $W"
command -v python3 >/dev/null || skip "python3 is needed to write the snapshots"

run python3 "$top_srcdir/tests/torch/make_snapshots.py" "$W/gen"
expect_status 0
hdr="ts_ns,op,id,size,requested,address,device,stream,pid,phase,api,device_free,thread,stack"
cat >whole.csv <<CSV
$hdr
0,reserve,1,8192,8192,0x100000,0,0,5,,,,,
10,alloc,1,4096,4096,0x100000,0,0,5,,,,,train@/app/train.py:5
20,alloc,2,1024,1024,0x101000,0,0,5,,,,,train@/app/train.py:6
30,free,2,1024,1024,0x101000,0,0,5,,,,,
CSV

step "import: a snapshot is stored as a window, a CSV trace is not"
mp import -q -o snap.db "$W/gen/two-devices.pickle"
expect_status 0
mp import -q -o whole.db whole.csv
expect_status 0
cp whole.db cut.db
run python3 -c 'import sqlite3, sys
c = sqlite3.connect(sys.argv[1]); c.execute("INSERT OR REPLACE INTO meta VALUES (\"truncated\", \"1\")"); c.commit()' cut.db
expect_status 0
expect_eq "$(python3 -c 'import sqlite3, sys
r = sqlite3.connect(sys.argv[1]).execute("SELECT value FROM meta WHERE key = \"window\"").fetchone()
print(r[0] if r else "none")' snap.db)" \
	"a PyTorch snapshot: the allocator's history keeps only the program's last events" "snap.db meta window"
expect_eq "$(python3 -c 'import sqlite3, sys
r = sqlite3.connect(sys.argv[1]).execute("SELECT value FROM meta WHERE key = \"window\"").fetchone()
print(r[0] if r else "none")' whole.db)" "none" "whole.db meta window"

step "analyze: a window's blocks live at the end are not leaks"
mp analyze snap.db
expect_status 0
expect_stdout_contains "live at the end of the window (not leaks: the trace is a window, see notes)"
expect_stdout_not_contains "leaks (never freed)"
expect_stdout_contains "the trace is a window of the program (a PyTorch snapshot"
mp analyze --json snap.db
expect_status 0
cp "$OUT" out.json
run python3 -c 'import json, sys
j = json.load(open(sys.argv[1]))
assert j["window"].startswith("a PyTorch snapshot"), j["window"]
for d in j["devices"]:
    l = d["lifetime"]
    assert l["leaks"] is None and l["totals"]["leaks"] is None, l
    assert isinstance(l["live_at_window_end"], list), l
    assert l["totals"]["live_at_window_end"]["count"] >= 0, l
assert any(d["lifetime"]["totals"]["live_at_window_end"]["count"] > 0 for d in j["devices"])' out.json
expect_status 0 "the JSON names the window and has no leaks"

step "analyze: a truncated trace is a window too"
mp analyze cut.db
expect_status 0
expect_stdout_contains "live at the end of the window (not leaks: the trace is a window, see notes)"
expect_stdout_contains "the trace is a window of the program (the trace is truncated: recording stopped early)"

step "analyze: a whole-life trace has leaks"
mp analyze whole.db
expect_status 0
expect_stdout_contains "leaks (never freed): 1 block, 4.00 KiB"
expect_stdout_not_contains "window"
mp analyze --json whole.db
expect_status 0
cp "$OUT" out.json
run python3 -c 'import json, sys
j = json.load(open(sys.argv[1]))
assert j["window"] is None, j["window"]
t = j["devices"][0]["lifetime"]["totals"]
assert t["leaks"] == {"count": 1, "bytes": 4096} and "live_at_window_end" not in t, t' out.json
expect_status 0 "the JSON has the leak and no window"

step "check: --no-leaks and --max-leaked are NOT CHECKED on a window"
for db in snap.db cut.db; do
	mp check --no-leaks --max-leaked=1B "$db"
	expect_status 0
	expect_stdout_match "^  NOT CHECKED  leaked blocks on device [0-9]+: not checked against --no-leaks: the trace is a window of the program"
	expect_stdout_match "^  NOT CHECKED  leaked bytes on device [0-9]+: not checked against --max-leaked=1B: the trace is a window"
	expect_stdout_match "^  live at end +"
	expect_stdout_not_contains "leaked bytes  "
	mp check --no-leaks --require-checked "$db"
	expect_status 3
done
mp check --format=json --no-leaks snap.db
expect_status 0
cp "$OUT" out.json
run python3 -c 'import json, sys
j = json.load(open(sys.argv[1]))
assert j["trace"]["window"].startswith("a PyTorch snapshot"), j["trace"]
for d in j["devices"]:
    f = d["figures"]
    assert f["leaked_bytes"] is None and f["leaked_blocks"] is None, f
    assert f["live_at_end_bytes"] >= 0 and f["live_at_end_blocks"] >= 0, f
assert all(t["outcome"] == "not_checked" for t in j["thresholds"]), j["thresholds"]' out.json
expect_status 0 "the gate JSON: leaks null, live at end given, not checked"

step "check: --no-leaks fails a whole-life trace with a leak"
mp check --no-leaks whole.db
expect_status 3
expect_stdout_match "^  EXCEEDED     leaked blocks on device 0: 1 block, over --no-leaks"
expect_stdout_match "^  leaked bytes +4.00 KiB$"

finish
