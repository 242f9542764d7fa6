#!/bin/bash
# analyze-torch.sh - 'memprof analyze --json' of PyTorch CUDA memory snapshots
# against an independent Python computation on the same pickle
# (tests/torch/analyze_figures.py, standard library only): per device the
# peaks of live, requested and reserved bytes with their time and event,
# the fragmentation at the live peak, the reserved peak, each OOM and the
# end, the time-weighted figures, the top 3 groups of blocks live at the
# peak by call stack, phase, stream and size class, the end state and the
# leak totals.  First the event stream itself: the reference's events
# must be those 'memprof export' shows.  Runs on small generated snapshots
# (tests/torch/make_snapshots.py), on random ones from a model of the
# caching allocator (tests/torch/random_snapshot.py), then on the real ones in
# ../shared/datasets/torch-snapshots; skips (77) when those are absent and
# every generated case passed.
set -u
. "$(dirname "$0")/lib.sh"

command -v python3 >/dev/null || skip "python3 is needed for the reference computation"
TORCH=$top_srcdir/tests/torch
W=$TMP/work
mkdir "$W" || die "mkdir $W"
cd "$W" || die "cd $W"

# same_analysis NAME PICKLE: import, export and analyze, compare with the reference.
same_analysis() {
	local name=$1 pickle=$2
	step "import $name"
	mp import -q -o "$name.db" "$pickle"
	expect_status 0
	step "the events of $name are the reference's"
	mp export "$name.db"
	expect_status 0
	cp "$OUT" "$name.export.csv"
	run python3 "$TORCH/analyze_figures.py" --events "$pickle"
	expect_status 0
	cp "$OUT" "$name.events.csv"
	run python3 "$TORCH/compare_analyze.py" --events "$name.events.csv" "$name.export.csv"
	expect_status 0
	expect_stdout_empty
	step "analyze --json $name"
	mp analyze --json "$name.db"
	expect_status 0
	cp "$OUT" "$name.analyze.json"
	step "reference figures of $name"
	run python3 "$TORCH/analyze_figures.py" "$pickle"
	expect_status 0
	cp "$OUT" "$name.expected.json"
	step "memprof's analysis of $name equals the reference"
	run python3 "$TORCH/compare_analyze.py" "$name.expected.json" "$name.analyze.json"
	expect_status 0
	expect_stdout_empty
}

# --- generated snapshots: every case, small ---------------------------------------------
run python3 "$TORCH/make_snapshots.py" "$W/gen"
expect_status 0
for f in "$W"/gen/*.pickle; do
	same_analysis "$(basename "$f" .pickle)" "$f"
done

# --- no timestamps: a trace without time_us, and the state at one moment --------------
for name in no-time state-only; do
	step "$name: no timestamps, event order only, nothing from durations"
	mp analyze "$name.db"
	expect_status 0
	expect_stdout_contains "(no timestamps: in event order only)"
	expect_stdout_contains "at an unknown time, event"
	expect_stdout_not_contains "[mean life"
	expect_stdout_not_contains " over 0 ns"
	expect_stdout_contains "the trace has no timestamps"
	mp analyze --json "$name.db"
	expect_status 0
	cp "$OUT" "$name.nots.json"
	check_json "$name.nots.json" '
assert j["timestamps"] is False, j["timestamps"]
for d in j["devices"]:
    for f in d["lifetime"]["churn"] + d["lifetime"]["idle"]:
        assert f["mean_lifetime_ns"] is None, f
'
	mp report "$name.db" -o "$name.html"
	expect_status 0
	grep -qF "(no timestamps: in event order only)" "$name.html" && pass || fail "$name.html: no 'no timestamps' in the header"
	grep -qF "No charts over time: the trace has no timestamps" "$name.html" && pass || fail "$name.html: time charts drawn"
done
mp analyze --json two-devices.db
cp "$OUT" timed.json
check_json timed.json 'assert j["timestamps"] is True'

# --- random snapshots: a model of the caching allocator, the trace cut to a window ------
mkdir "$W/random" || die "mkdir $W/random"
for seed in 1 2 3; do
	step "random snapshot $seed"
	run python3 "$TORCH/random_snapshot.py" "$seed" 4000 "$W/random/random-$seed.pickle"
	expect_status 0
	same_analysis "random-$seed" "$W/random/random-$seed.pickle"
done

# two-devices, worked by hand (make_snapshots.py; MiB = 1048576, t = 1748730000000000 us):
# device 0 holds at most 1024 + 512 + 10 MiB = 10487296 bytes, at the alloc of
# 10 MiB at t+8 us, event 18 (after the 7 events of the prelude and of device 1
# and the phase start); it is then in segments of 2 MiB and 20 MiB: holes
# 2 MiB - 1536 = 2095616 and 10 MiB = 10485760, free 12581376, external ratio
# 1 - 10485760 / 12581376.
step "two-devices: the hand-worked figures of device 0"
python3 - two-devices.expected.json <<'PY' >hand.txt || die "cannot read the reference"
import json, sys
d = json.load(open(sys.argv[1]))["devices"][0]
p, f = d["peaks"]["live"], d["fragmentation"]["at_peak"]
print(p["bytes"], p["seq"], p["ts_ns"], f["reserved_bytes"], f["free_in_reserved_bytes"],
      f["largest_hole_bytes"], "%.12f" % f["external_fragmentation"],
      d["attribution"]["groups"]["stack"][0]["key"])
PY
expect_eq "$(cat hand.txt)" \
	"10487296 18 1748730000000008000 23068672 12581376 10485760 $(python3 -c 'print("%.12f" % (1 - 10485760 / 12581376))') backward@model.py:88;torch::unwind::unwind()@??" \
	"two-devices device 0 at its live peak"

step "the comparison can fail"
python3 - two-devices.expected.json <<'PY' || die "cannot edit the reference"
import json, sys
j = json.load(open(sys.argv[1]))
d = j["devices"][0]
d["fragmentation"]["at_peak"]["largest_hole_bytes"] += 512
d["fragmentation"]["at_peak"]["external_fragmentation"] += 1e-6
d["attribution"]["groups"]["stack"][0]["key"] = "elsewhere"
json.dump(j, open("wrong.expected.json", "w"))
PY
run python3 "$TORCH/compare_analyze.py" wrong.expected.json two-devices.analyze.json
expect_status 1
expect_stdout_contains "device 0.fragmentation.at_peak.largest_hole_bytes: memprof 10485760, expected 10486272"
expect_stdout_contains "device 0.fragmentation.at_peak.external_fragmentation"
expect_stdout_contains "device 0.attribution.groups.stack[0].key"

# --- the real snapshots -----------------------------------------------------------------
datasets=$top_srcdir/../shared/datasets/torch-snapshots
if [ ! -d "$datasets" ]; then
	[ "$n_failed" -eq 0 ] || finish
	skip "no $datasets: the real snapshots were not checked (the $n_checks checks of the generated ones passed)"
fi
for f in "$datasets"/*.pickle; do
	same_analysis "$(basename "$f" .pickle)" "$f"
done

finish
