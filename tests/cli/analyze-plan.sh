#!/bin/bash
# analyze-plan.sh - the plan metrics of 'memprof analyze' end to end:
# hand-made CSV traces from tests/tools/make_step_traces.py (known answers
# in its expected.json, simulated from the events it wrote) -> import ->
# analyze --json and text.  Every step, its fragmentation, the trend, the
# overhead and call-time percentiles, and each OOM's verdict are checked
# against the generator's answers; then --step, a name no phase has, a bad
# --step, --device, and a real PyTorch snapshot of one training step
# (../shared/datasets, when present): no steps, and no durations.
set -u
. "$(dirname "$0")/lib.sh"

command -v python3 >/dev/null || skip "python3 is needed to check the JSON"
GEN=$top_srcdir/tests/tools/make_step_traces.py
W=$TMP/work
mkdir "$W" || die "mkdir $W"
cd "$W" || die "cd $W"

# PLAN_CHECK: j["plan"] against expected.json's trace T, answers V.
PLAN_CHECK='
E = json.load(open("gen/expected.json"))[T]
X, P = E[V], j["plan"]
def close(got, want):  # the histogram: within 1/128, exact below 128 ns
    assert abs(got - want) <= want / 128.0 + (0 if want < 128 else 1), (got, want)
S = P["steps"]
assert (S["method"], S["name"], S["count"]) == (X["method"], X["name"], X["count"]), (S, X["method"], X["name"], X["count"])
if X["count"] == 0:
    assert S["why"].startswith("no steps found"), S["why"]
    assert P["fragmentation"] == [] or all(d["steps"] == [] for d in P["fragmentation"])
else:
    F = P["fragmentation"]
    assert [d["device"] for d in F] == [d["device"] for d in X["fragmentation"]], F
    for got, want in zip(F, X["fragmentation"]):
        assert got["model"] == "segments"
        assert len(got["steps"]) == len(want["steps"])
        for g, w in zip(got["steps"], want["steps"]):
            for k in ("step", "start_seq", "start_ts_ns", "end_seq", "end_ts_ns", "live_bytes",
                      "reserved_bytes", "free_in_reserved_bytes", "largest_hole_bytes"):
                assert g[k] == w[k], (k, g, w)
            assert near(g["free_share"], w["free_share"]), (g, w)
            assert near(g["external_fragmentation"], w["external_fragmentation"]), (g, w)
        gt, wt = got["free_share_trend"], want["free_share_trend"]
        for k in ("steps_known", "last_step", "at_target_step_measured", "meets_target"):
            assert gt[k] == wt[k], (k, gt, wt)
        for k in ("last_free_share", "slope_per_step", "intercept", "at_target_step"):
            assert (gt[k] is None) == (wt[k] is None) and (wt[k] is None or near(gt[k], wt[k])), (k, gt, wt)
    last = S["last_step_ends"]
    assert last == ("trace-end" if X["fragmentation"][0]["steps"][-1]["end_seq"] is None else "phase-end"), last
O, W = P["overhead"], E["overhead"]
for k in ("calls", "calls_with_duration", "calls_without_duration", "durations", "wall_span_ns"):
    assert O[k] == W[k], (k, O[k], W[k])
if W["durations"]:
    assert O["time_in_calls_ns"] == W["time_in_calls_ns"]
    assert near(O["share"], W["share"]) and O["meets_share_target"] == W["meets_share_target"]
    for kind in ("alloc", "free"):
        assert O[kind]["calls"] == W[kind]["calls"]
        if W[kind]["calls"]:
            close(O[kind]["p50_ns"], W[kind]["p50_ns"])
            close(O[kind]["p99_ns"], W[kind]["p99_ns"])
        rows, want = O[kind + "_by_size"], W[kind + "_by_size"]
        assert [r["size_class"] for r in rows] == [r["size_class"] for r in want], (rows, want)
        for r, w in zip(rows, want):
            assert r["calls"] == w["calls"] and r["min_bytes"] == (1 << (w["size_class"] - 1))
            close(r["p50_ns"], w["p50_ns"])
            close(r["p99_ns"], w["p99_ns"])
            assert r.get("common") == w.get("common"), (r, w)
    assert O["meets_alloc_target"] == W["meets_alloc_target"]
else:
    assert O["time_in_calls_ns"] is None and O["share"] is None and O["meets_share_target"] is None
    assert O["alloc_by_size"] == [] and O["alloc"]["p50_ns"] is None
got = P["ooms"]
want = E.get("ooms", [])
assert got["count"] == len(want), got
for g, w in zip(got["list"], want):
    for k in ("device", "seq", "requested_bytes", "free_in_reserved_bytes", "largest_hole_bytes", "verdict"):
        assert g[k] == w[k], (k, g, w)
for v in ("fragmentation", "capacity", "fits-a-hole", "unknown"):
    assert got["verdicts"][v] == sum(1 for w in want if w["verdict"] == v), (v, got["verdicts"])
print("%s/%s: %s, %d steps, %d calls, %d OOMs" % (T, V, S["method"], S["count"], O["calls"], got["count"]))
'

# analyze_json TRACE VARIANT [OPTION...]: analyze --json, checked.
analyze_json() {
	local t=$1 v=$2
	shift 2
	step "analyze --json $* $t ($v)"
	mp analyze --json "$@" "$t.db"
	expect_status 0
	expect_stderr_empty
	cp "$OUT" "$t.$v.json"
	check_json "$t.$v.json" "T, V = '$t', '$v'
$PLAN_CHECK"
}

# expected TRACE PYTHON-EXPR: a value from expected.json (E is the trace's).
expected() {
	python3 -c "
import json
E = json.load(open('gen/expected.json'))['$1']
print($2)"
}

step "generate the traces"
run python3 "$GEN" --out gen
expect_status 0
for t in phase period ooms none; do
	step "import $t.csv"
	mp import -q -o "$t.db" "gen/$t.csv"
	expect_status 0
done

analyze_json phase default
analyze_json phase step_forward --step=forward
analyze_json period default
analyze_json ooms default
analyze_json none default

step "the step-like names followed, and why train_step was taken"
check_json phase.default.json '
C = {c["name"]: c for c in j["plan"]["steps"]["candidates"]}
assert set(C) == {"train_step", "Optimizer.step#AdamW.step"}, C
assert C["train_step"]["top_level_begins"] == 12 and C["Optimizer.step#AdamW.step"]["top_level_begins"] == 0
assert "at the top level" in j["plan"]["steps"]["why"]'
check_json period.default.json '
S = j["plan"]["steps"]
assert S["period_allocs"] == json.load(open("gen/expected.json"))["period"]["default"]["period_allocs"]
assert S["anchor_size_bytes"] == 4 << 20 and S["periodic_from_alloc"] == 6, S
assert [c["name"] for c in S["candidates"]] == ["iteration"], S["candidates"]'

step "text: the phase trace"
mp analyze phase.db
expect_status 0
expect_stdout_contains "steps: 12, method phase-name, phase 'train_step'"
expect_stdout_contains "$(expected phase '"free share after step %d: %.4f, rising %.4g per step" % (E["default"]["fragmentation"][0]["free_share_trend"]["last_step"], E["default"]["fragmentation"][0]["free_share_trend"]["last_free_share"], E["default"]["fragmentation"][0]["free_share_trend"]["slope_per_step"])')"
expect_stdout_contains "after step 1000: 1.0000 (projected by the trend): misses the target (under 0.10)"
expect_stdout_contains "$(expected phase '"%d calls, %d with a duration, %d without" % (E["overhead"]["calls"], E["overhead"]["calls_with_duration"], E["overhead"]["calls_without_duration"])')"
expect_stdout_contains "(calls on concurrent threads add up)"
expect_stdout_contains "$(expected phase '"%.3f%%" % (100 * E["overhead"]["share"])')"
expect_stdout_contains "in every common size class (5%+ of allocations): met"
expect_stdout_contains "... (2 steps)"
expect_stdout_contains "OOMs: none"

step "text: the period trace, no durations"
mp analyze period.db
expect_status 0
expect_stdout_contains "steps: 12, method period, 5 allocations per step"
expect_stdout_contains "the allocation sequence repeats every 5 allocations from allocation 6 on"
expect_stdout_contains "$(expected period '"unknown: none of the %d allocation and free calls has a duration" % E["overhead"]["calls"]')"
expect_stdout_not_contains "0.000%"

step "text: OOM verdicts"
mp analyze ooms.db
expect_status 0
expect_stdout_contains "steps: 3, method phase-name, phase 'ProfilerStep#N'"
expect_stdout_contains "OOMs: 4 (1 fragmentation, 1 capacity, 1 fit a hole, 1 unknown)"
for v in fragmentation capacity fits-a-hole unknown; do
	line=$(expected ooms "[o for o in E['ooms'] if o['verdict'] == '$v'][0]['seq']")
	case $v in
	fragmentation) want="fragmentation (it fit in the free bytes, not in one hole); request 6.00 MiB, free in reserved 7.00 MiB, largest hole 4.00 MiB" ;;
	capacity) want="capacity, not fragmentation (more than the free bytes); request 64.0 MiB" ;;
	fits-a-hole) want="not fragmentation: the largest hole could hold it" ;;
	*) want="unknown (free in reserved unknown); request 2.00 MiB, free in reserved unknown" ;;
	esac
	expect_stdout_match "event $line at .*: $(printf '%s' "$want" | sed 's/[.()]/\\&/g')"
done
expect_stdout_contains "allocation p50 under 100 us in every common size class (5%+ of allocations): missed"

step "text: no steps, and why"
mp analyze none.db
expect_status 0
expect_stdout_contains "steps: none (no steps found: no phase name with 'step' or 'iter' begins twice (0 phase begins in the trace), and the first 40 allocations of the first process and device repeat no sequence"

step "--step with a name no phase has"
mp analyze --json --step=nothing phase.db
expect_status 0
cp "$OUT" nothing.json
check_json nothing.json '
S = j["plan"]["steps"]
assert S["method"] == "none" and S["count"] == 0, S
assert S["why"] == "no steps found: no phase named '"'nothing'"' begins in the trace (--step)", S["why"]'

step "--step= (empty) is a usage error"
mp analyze --step= phase.db
expect_status 2
expect_stderr_contains "invalid --step ''"

step "--device=1: the device without holes has no fragmentation figures, its OOM stays"
mp analyze --json --device=1 ooms.db
expect_status 0
cp "$OUT" dev1.json
check_json dev1.json '
P = j["plan"]
assert P["fragmentation"] == [], P["fragmentation"]
assert P["ooms"]["count"] == 1 and P["ooms"]["list"][0]["verdict"] == "unknown", P["ooms"]
assert P["overhead"]["calls"] == 2, P["overhead"]["calls"]'

datasets=$top_srcdir/../shared/datasets/torch-snapshots
if [ -f "$datasets/cs336-ctx128-fullstep.pickle" ]; then
	step "a real PyTorch snapshot of one training step"
	mp import -q -o real.db "$datasets/cs336-ctx128-fullstep.pickle"
	expect_status 0
	mp analyze --json real.db
	expect_status 0
	cp "$OUT" real.json
	calls=""
	have_sqlite3 && calls=$(sql real.db "SELECT count(*) FROM events WHERE op IN (1,2,4,5,6,7,8)")
	check_json real.json "
P = j['plan']
S, O = P['steps'], P['overhead']
# one step in the window: the two optimizer phases begin once, no period
assert S['method'] == 'none' and S['count'] == 0, S
assert 'repeat no sequence' in S['why'], S['why']
assert [(c['name'], c['begins']) for c in S['candidates']] == [('Optimizer.step#AdamW.step', 1)], S['candidates']
assert not O['durations'] and O['share'] is None and O['calls_with_duration'] == 0, O
assert '$calls' == '' or O['calls'] == int('$calls'), (O['calls'], '$calls')
assert P['ooms']['count'] == sum(len(d['ooms']) for d in j['devices'])
print('real snapshot: %s, %d calls without durations' % (S['method'], O['calls']))"
else
	say "no PyTorch snapshots in $datasets: that part not run"
fi

finish
