#!/bin/bash
# replay.sh - 'memprof replay' as a user runs it, on a fixture worked out by hand.
#
# tests/cli/data/replay-small.csv (device 0; op positions in brackets):
#   [0] alloc 1: 1024 B (asked 1000), stream 7    [1] alloc 2: 4096, stream 7
#   [2] free_requested 1 (1 stops being live; the pool gets it back at [4])
#   [3] alloc 3: 2048, stream 9   [4] free 1   [5] free 2
#   [6] alloc 4: 8192, stream 7   [7] free 3   [8] free 4
# Requested bytes: 1000, 5096, 4096, 6144, 6144, 2048, 10240 -> lower bound 10240.
# Reserved bytes are what the CUDA driver reserves (modelled, memprof-replay(1) DRIVER
# GRANULARITY): a cudaMalloc under 2 MiB takes its size rounded to 512 B inside 2 MiB
# pages the small requests share.
# direct holds 1024+4096+2048 = 7168 after [3], 2048+8192 = 10240 after [6]: one 2 MiB
#   page, peak 2097152; 8 backend calls (4 cudaMalloc, 4 cudaFree).
# planned: 4 overlaps only 3, so one reservation of 8192 + 2048 = 10240 = the lower
#   bound: one 2 MiB page too, ratio 2097152 / 10240 = 204.8.
# caching (PyTorch's rules): every request is small (<= 1 MiB): one 2 MiB segment for
#   stream 7 and another for stream 9 (a stream never takes another's blocks): 4 MiB;
#   saved by direct against it: 4194304 - 2097152 = 2097152.
# tests/cli/data/replay-segments.csv has no blocks: segments 2 MiB + 20 MiB, release the
#   2 MiB, reserve 4 MiB: replayed at the segment level, lower bound 24 MiB.
set -u
. "$(dirname "$0")/lib.sh"

W=$TMP/work
mkdir "$W" || die "mkdir $W"
cd "$W" || die "cd $W"
command -v python3 >/dev/null || skip "python3 is needed to check the JSON"

step "import the fixtures"
mp import -o t.db "$DATA/replay-small.csv"
expect_status 0
mp import -o seg.db "$DATA/replay-segments.csv"
expect_status 0

step "direct, planned and caching on sim: hand-worked figures"
mp replay --pool=direct,planned --backend=sim --json t.db
expect_status 0
cp "$OUT" small.json
check_json small.json '
assert j["version"] == 3 and j["backend"] == "sim" and j["baseline"] == "caching"
r = {x["pool"]: x for x in j["results"]}
assert sorted(r) == ["caching", "direct", "planned"], sorted(r)
d, p, c = r["direct"], r["planned"], r["caching"]
for x in (d, p, c):
    assert x["lower_bound_bytes"] == 10240 and x["device"] == 0 and x["level"] == "block"
    assert x["time_is"] == "modelled" and x["verify"] == "off" and x["ooms"] == 0
assert d["peak_reserved_bytes"] == 2097152 and d["backend_calls"] == 8
assert d["calls"]["cudaMalloc"] == 4 and d["calls"]["cudaFree"] == 4
assert p["peak_reserved_bytes"] == 2097152 and p["ratio_to_lower_bound"] == 204.8
assert c["peak_reserved_bytes"] == 4194304
assert d["saved_bytes"] == 4194304 - 2097152 and c["saved_bytes"] == 0
assert j["driver_model"] == {"modelled": True, "page_bytes": 2097152, "small_align_bytes": 512}
assert d["alloc_ns_p50"] > 0 and d["alloc_ns_p99"] >= d["alloc_ns_p50"]
'

step "text output names the baseline, says times are modelled"
mp replay --pool=direct --backend=sim --no-save t.db
expect_status 0
expect_stdout_contains "modelled"
expect_stdout_contains "caching"
expect_stdout_contains "direct"

step "results are stored in the trace with their options, unless --no-save"
expect_eq "$(sql t.db 'SELECT count(*) FROM replay_runs')" 3 "runs stored"
expect_eq "$(sql t.db "SELECT value FROM replay_metrics m JOIN replay_runs r ON m.run = r.id WHERE r.pool = 'direct' AND m.name = 'peak_reserved_bytes'")" 2097152.0 "direct's stored peak"
expect_eq "$(sql t.db "SELECT count(*) FROM replay_runs WHERE options LIKE '%--pool=direct,planned%'")" 3 "runs with their options"

step "--capacity: an OOM names the event, the request and the live bytes"
# under 3 MiB caching cannot reserve stream 9's 2 MiB segment for alloc 3 ([3], event 4);
# alloc 4 fits in stream 7's segment
mp replay --pool=caching --baseline=none --backend=sim --no-save --capacity=3MiB --json t.db
expect_status 0
cp "$OUT" cap.json
check_json cap.json '
d, = j["results"]
assert d["ooms"] == 1, d["ooms"]
o = d["first_oom"]
assert o["seq"] == 4 and o["request_bytes"] == 2048, o
assert o["live_bytes"] == 4096 and o["reserved_bytes"] == 2097152, o
'
mp replay --pool=caching --baseline=none --backend=sim --no-save --capacity=3MiB t.db
expect_status 0
expect_stdout_contains "event 4"

step "a pool that had OOMs failed: no saved figure, no ratio, listed last"
# under 4 MiB bucketed cannot serve alloc 3 (event 4); caching (4 MiB) fits
mp replay --pool=bucketed,direct --backend=sim --no-save --capacity=4MiB t.db
expect_status 0
expect_stdout_match '^  -    bucketed +failed: 1 OOM, first at event 4$'
if grep -qE '^  [-0-9*]+ +bucketed +[0-9]' "$OUT"; then fail "the failed pool has figures in the table"; else pass; fi
rows=$(awk '/^  rank /{p=1; next} /^ +recorded /{next} p&&/^  \*/{exit} p{print $1 $2}' "$OUT" | tr '\n' ' ')
expect_eq "$rows" "1*direct 2caching -bucketed " "the failed pool last"
expect_stdout_contains "result          failed: 1 OOM, first at event 4: the figures below are up to where it failed"
mp replay --pool=bucketed,direct --backend=sim --no-save --capacity=4MiB --json t.db
cp "$OUT" failed.json
check_json failed.json '
r = {x["pool"]: x for x in j["results"]}
b, d = r["bucketed"], r["direct"]
assert b["failed"] is True and b["ooms"] == 1 and b["first_oom"]["seq"] == 4, b
assert b["saved_bytes"] is None and b["ratio_to_lower_bound"] is None and b["time_saved_ns"] is None, b
assert d["failed"] is False and d["saved_bytes"] == 4194304 - 2097152, d
'
step "a baseline that failed: no pool is compared with it"
# under 2 MiB caching cannot add stream 9's segment (alloc 3, event 4); direct's one page fits
mp replay --pool=direct --backend=sim --no-save --capacity=2MiB t.db
expect_status 0
expect_stdout_match '^  -    caching +failed: 1 OOM, first at event 4$'
expect_stdout_contains "the baseline caching failed: no pool is compared with it"
mp replay --pool=direct --backend=sim --no-save --capacity=2MiB --json t.db
cp "$OUT" basefail.json
check_json basefail.json '
d = [x for x in j["results"] if x["pool"] == "direct"][0]
assert d["failed"] is False and d["saved_bytes"] is None and d["time_saved_ns"] is None, d
assert d["ratio_to_lower_bound"] == 204.8, d
'

step "pools ranked by peak reserved, then backend time; the best marked; those that did nothing on one line"
# planned, global2x and direct all hold one 2 MiB page of the driver: the least backend
# time first (1, 4 and 8 backend calls); mxfp8 finds no
# pairs and sharded no iterations in this trace: every request goes to their caching fallback
mp replay --backend=sim --no-save t.db
expect_status 0
rows=$(awk '/^  rank /{p=1; next} /^ +recorded /{next} p&&/^  \*/{exit} p{print $1 $2}' "$OUT" | tr '\n' ' ')
expect_eq "$rows" "1*planned 2global2x 3direct 4caching 5bucketed 6compacting " "ranked pools"
expect_stdout_line "  * the best here: the least peak reserved (then the least backend time); ext frag: external fragmentation at the peak"
expect_stdout_line "  did nothing on this trace (no details below):"
expect_stdout_line "    mxfp8        no parameter/gradient pairs in this trace: every request went to its caching fallback"
expect_stdout_line "    sharded      no iterations found in this trace: every request went to its caching fallback"
expect_stdout_not_contains "mxfp8 on device 0"
expect_stdout_not_contains "sharded on device 0"
expect_stdout_contains "planned on device 0"
mp replay --backend=sim --no-save --json t.db
cp "$OUT" rank.json
check_json rank.json '
r = {x["pool"]: x for x in j["results"]}
assert [(p, r[p]["place"]) for p in ("planned", "global2x", "direct", "caching", "bucketed", "compacting")] == [
    ("planned", 1), ("global2x", 2), ("direct", 3), ("caching", 4), ("bucketed", 5), ("compacting", 6)], r
assert [p for p in r if r[p]["best"]] == ["planned"]
for p in ("mxfp8", "sharded"):
    assert r[p]["place"] is None and r[p]["best"] is False and "caching fallback" in r[p]["no_effect"], r[p]
assert r["planned"]["no_effect"] is None
'

step "the trace's own recorded figures beside the pools: the model's error"
# segments 2 MiB, then 20 MiB; the 2 MiB released, then 4 MiB: recorded peak 24 MiB with 2 held,
# 3 reserved.  caching models the two blocks in a 2 MiB (small) and a 20 MiB (large) segment.
{
	echo "ts_ns,op,id,size,requested,address,device,stream,pid,phase,api,device_free,thread,stack"
	echo "0,reserve,1,2097152,2097152,0x10000000,0,0,5,,,,,"
	echo "10,alloc,1,1024,1000,0x10000000,0,0,5,,,,,"
	echo "20,reserve,2,20971520,20971520,0x20000000,0,0,5,,,,,"
	echo "30,alloc,2,3145728,3145728,0x20000000,0,0,5,,,,,"
	echo "40,free,1,1024,1000,0x10000000,0,0,5,,,,,"
	echo "50,release,1,2097152,2097152,0x10000000,0,0,5,,,,,"
	echo "60,reserve,3,4194304,4194304,0x30000000,0,0,5,,,,,"
	echo "70,free,2,3145728,3145728,0x20000000,0,0,5,,,,,"
} >rec.csv
mp import -o rec.db rec.csv
expect_status 0
mp replay --backend=sim --pool=caching,direct --no-save rec.db
expect_status 0
expect_stdout_match '^       recorded +24\.0 MiB +7\.997  as the trace recorded it: 3 segments reserved, 2 held at its peak; caching.s model of it: -2\.00 MiB \(-8\.33%\)$'
mp replay --backend=sim --pool=caching --no-save --json rec.db
cp "$OUT" rec.json
check_json rec.json '
r, = j["recorded"]
assert r == {"device": 0, "has_segments": True, "peak_reserved_bytes": 24 << 20, "segments": 3, "segments_at_peak": 2}, r
c, = [x for x in j["results"] if x["pool"] == "caching"]
assert c["peak_reserved_bytes"] == 22 << 20, c["peak_reserved_bytes"]
'
mp replay --backend=sim --pool=direct --no-save t.db
expect_stdout_contains "recorded     unknown: the trace has no segment-level events, so no pool's figures can be checked against it"
mp replay --backend=sim --pool=direct --no-save --json t.db
cp "$OUT" norec.json
check_json norec.json 'assert j["recorded"] == [{"device": 0, "has_segments": False, "peak_reserved_bytes": None, "segments": None, "segments_at_peak": None}]'

step "time saved is the backend's time only; the pool's CPU time needs runs and a spread"
mp replay --pool=direct,planned --backend=sim --no-save t.db
expect_status 0
expect_stdout_line "runs      1 of each pool: measured times are left out (--repeat=N gives their median and spread)"
expect_stdout_contains "pool CPU time   left out: measured in one run only, its spread is unknown (--repeat=N)"
expect_stdout_match '^  backend time    [0-9.]+ [nu]?s \(modelled\)$'
expect_stdout_match '^  time saved      -?[0-9.]+ [nmu]?s of backend time against caching \(modelled\)$'
mp replay --pool=direct,planned --backend=sim --no-save --json t.db
cp "$OUT" times.json
check_json times.json '
r = {x["pool"]: x for x in j["results"]}
c = r["caching"]
for x in r.values():
    assert x["runs"] == 1 and x["host_ns_min"] == x["host_ns"] == x["host_ns_max"], x
    # the CPU time of the loop beside its wall time (for the CPU share of bench-replay)
    assert isinstance(x["replay_cpu_ns"], int) and isinstance(x["replay_ns"], int), x
    # the backend time saved, never mixed with the pool CPU time measured on this host
    assert x["time_saved_ns"] == c["backend_ns"] - x["backend_ns"], x
'
mp replay --pool=direct,planned --backend=sim --no-save --repeat=3 t.db
expect_status 0
expect_stdout_line "runs      3 of each pool: a measured time is their median, with its spread"
expect_stdout_match '^  pool CPU time   [0-9.]+ [nmu]?s, the median of 3 runs, from [0-9.]+ [nmu]?s to [0-9.]+ [nmu]?s \(measured on this host\)$'
expect_stdout_not_contains "left out"
mp replay --pool=direct,planned --backend=sim --no-save --repeat=3 --json t.db
cp "$OUT" times3.json
check_json times3.json '
for x in j["results"]:
    assert x["runs"] == 3 and x["host_ns_min"] <= x["host_ns"] <= x["host_ns_max"], x
    assert x["total_ns"] == x["host_ns"] + x["backend_ns"], x
    # sim: the modelled backend time is the same every run
    assert x["backend_ns_min"] == x["backend_ns"] == x["backend_ns_max"], x
'
for bad in --repeat=0 --repeat=101 --repeat=x; do
	mp replay --pool=direct --backend=sim --no-save $bad t.db
	expect_status 2
	expect_stderr_contains "invalid --repeat"
done
# MPI starts before the options are read; the MPI library's own leaks are not memprof's
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
	mp replay --pool=direct --backend=sim --no-save --repeat=2 --mpi t.db
if grep -q "built without MPI" "$ERR"; then
	say "this memprof has no MPI: --repeat with --mpi not checked"
else
	expect_status 2
	expect_stderr_contains "--repeat is not supported with --mpi"
fi

step "--verify passes for every pool on sim and on host memory"
for be in sim host; do
	mp replay --backend=$be --verify --no-save --json t.db
	expect_status 0
	cp "$OUT" v-$be.json
	check_json v-$be.json '
assert len(j["results"]) >= 3
for x in j["results"]:
    assert x["verify"] == "passed", x
'
done

step "all pools by default; async is skipped on sim with the reason"
mp replay --backend=sim --no-save t.db
expect_status 0
expect_stdout_contains "async"
expect_stdout_contains "needs --backend=cuda"

step "async named explicitly on sim is an error that says why"
mp replay --pool=async --backend=sim --no-save t.db
expect_status 1
expect_stderr_contains "needs --backend=cuda"

step "cuda without a driver fails cleanly and suggests sim; auto says what it chose"
if "$MEMPROF" replay --list-pools >/dev/null 2>&1 && ! ls /dev/nvidia0 >/dev/null 2>&1; then
	mp replay --backend=cuda --pool=direct --no-save t.db
	expect_status 1
	expect_stderr_contains "no NVIDIA driver found"
	expect_stderr_contains "--backend=sim"
	mp replay --backend=auto --pool=direct --baseline=none --no-save t.db
	expect_status 0
	expect_stderr_contains "using sim"
fi

step "pool options: routed to the pools that declare them, refused otherwise"
mp replay --pool=direct --bogus=1 --no-save t.db
expect_status 2
expect_stderr_contains "'--bogus'"
mp replay --pool=caching --max_split_size=nonsense --no-save t.db
expect_status 1
expect_stderr_contains "max_split_size"

step "--pool-opt=NAME=VALUE goes to the pool like --NAME=VALUE; a bare name is a usage error"
mp replay --pool=caching --pool-opt=max_split_size=nonsense --no-save t.db
expect_status 1
expect_stderr_contains "max_split_size"
mp replay --pool=caching --pool-opt=max_split_size --no-save t.db
expect_status 2
expect_stderr_contains "NAME=VALUE"

step "--device picks a device of the trace; one without events is an error"
mp replay --pool=direct --baseline=none --backend=sim --no-save --json --device=0 t.db
expect_status 0
cp "$OUT" dev0.json
check_json dev0.json '
d, = j["results"]
assert d["device"] == 0 and d["peak_reserved_bytes"] == 2097152, d
assert d["saved_bytes"] is None and d["time_saved_ns"] is None, d  # --baseline=none
'
mp replay --pool=direct --backend=sim --no-save --device=3 t.db
expect_status 1
expect_stderr_contains "no events on that device"

step "--plugin-dir is searched first"
mkdir -p mine
cp "$top_builddir"/plugins/.libs/direct.so mine/direct.so
mp replay --list-pools --plugin-dir="$W/mine"
expect_status 0
expect_stdout_contains "$W/mine/direct.so"
mp replay --pool=direct --baseline=none --backend=sim --no-save --plugin-dir="$W/mine" t.db
expect_status 0

step "a plugin by path, and --list-pools"
plugin=$(ls "$top_builddir"/plugins/.libs/direct.so)
mp replay --pool="$plugin" --baseline=none --backend=sim --no-save t.db
expect_status 0
expect_stdout_contains "direct"
mp replay --list-pools
expect_status 0
for p in direct caching async planned; do expect_stdout_contains "$p"; done

step "a trace with only segments replays them, with a note that says why"
mp replay --pool=direct --baseline=none --backend=sim --no-save --json seg.db
expect_status 0
cp "$OUT" seg.json
check_json seg.json '
d, = j["results"]
assert d["level"] == "segment" and d["lower_bound_bytes"] == 24 << 20, d
assert any("no block-level events" in n for n in j["notes"]), j["notes"]
'

step "errors: no trace, a missing trace, an unknown backend"
mp replay
expect_status 2
mp replay --pool=direct missing.db
expect_status 1
expect_stderr_contains "missing.db"
mp replay --backend=tpu t.db
expect_status 2
expect_stderr_contains "'tpu'"

finish
