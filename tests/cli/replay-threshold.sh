#!/bin/bash
# replay-threshold.sh - 'memprof replay --pool-threshold=BYTES': requests
# smaller than BYTES go straight to the backend, one reservation each, and
# never reach the pool; the baseline keeps every request.  Figures worked
# out by hand on tests/cli/data/replay-small.csv (see replay.sh for its ops):
#   allocations 1 (1024 B, ops [0]-[4]) and 3 (2048 B, [3]-[7]) are below 4096;
#   2 (4096 B, [1]-[5]) and 4 (8192 B, [6]-[8]) go to the pool.
# Reserved bytes are the driver's (modelled, memprof-replay(1) DRIVER GRANULARITY): a
# reservation of 2 MiB or more in whole 2 MiB pages, a smaller one rounded to 512 B in
# 2 MiB pages the small ones share.
#   planned: plans only 2 and 4 (disjoint): an 8192-byte arena reserved at the
#     start; with 1024 + 2048 direct at [3] 11264 bytes, all small: one shared
#     2 MiB page, 2097152; backend calls: the arena, 2 reserves and 2 releases = 5.
#   bucketed: a 2 MiB slab for 4 KiB at [1], one for 8 KiB at [6] while 2048
#     is still held directly in a shared page: 2 x 2097152 + 2097152 = 6291456;
#     2 bucketed requests.
#   direct: the same whatever the threshold: one shared page, 2097152, 8 calls.
#   caching (the baseline): 4 MiB, 2 calls, none below the threshold.
set -u
. "$(dirname "$0")/lib.sh"

W=$TMP/work
mkdir "$W" || die "mkdir $W"
cd "$W" || die "cd $W"
command -v python3 >/dev/null || skip "python3 is needed to check the JSON"

mp import -q -o t.db "$DATA/replay-small.csv"
[ "$status" -eq 0 ] || die "cannot import replay-small.csv: $(cat "$ERR")"

step "threshold 4096 on sim: hand-worked figures"
mp replay --pool=planned,bucketed,direct --backend=sim --pool-threshold=4096 --json --no-save t.db
expect_status 0
cp "$OUT" t4096.json
check_json t4096.json '
r = {x["pool"]: x for x in j["results"]}
p, b, d, c = r["planned"], r["bucketed"], r["direct"], r["caching"]
for x in (p, b, d):
    assert x["pool_threshold_bytes"] == 4096 and x["n_below_threshold"] == 2, x
assert c["pool_threshold_bytes"] == 0 and c["n_below_threshold"] == 0, c
assert p["peak_reserved_bytes"] == 2097152, p
assert p["backend_calls"] == 5, p["backend_calls"]
assert p["pool_stats"]["makespan_bytes"] == 8192, p["pool_stats"]
assert b["peak_reserved_bytes"] == 6291456, b
assert b["pool_stats"]["bucketed_requests"] + b["pool_stats"]["large_requests"] == 2
assert d["peak_reserved_bytes"] == 2097152 and d["backend_calls"] == 8
assert c["peak_reserved_bytes"] == 4194304 and c["backend_calls"] == 2
for x in (p, b, d, c):
    assert x["n_allocs"] == 4 and x["n_frees"] == 4, x
'

step "without a threshold nothing is sent past the pool"
mp replay --pool=bucketed --backend=sim --json --no-save t.db
expect_status 0
cp "$OUT" none.json
check_json none.json '
b = [x for x in j["results"] if x["pool"] == "bucketed"][0]
assert b["pool_threshold_bytes"] == 0 and b["n_below_threshold"] == 0
assert b["pool_stats"]["bucketed_requests"] + b["pool_stats"]["large_requests"] == 4
'

step "a threshold above every request leaves the pool nothing"
mp replay --pool=bucketed --backend=sim --pool-threshold=1MiB --json --no-save t.db
expect_status 0
cp "$OUT" all.json
check_json all.json '
b = [x for x in j["results"] if x["pool"] == "bucketed"][0]
assert b["n_below_threshold"] == 4 and b["pool_threshold_bytes"] == 1048576
assert b["pool_stats"]["bucketed_requests"] + b["pool_stats"]["large_requests"] == 0
assert b["peak_reserved_bytes"] == 2097152, b  # as direct: one shared page
'

step "text output says how many went straight to the backend"
mp replay --pool=bucketed --backend=sim --pool-threshold=4KiB --no-save t.db
expect_status 0
expect_stdout_match '^  below 4\.00 KiB +2 allocations straight to the backend$'

step "host backend with --verify: the direct blocks are real memory too"
mp replay --pool=bucketed,planned --backend=host --pool-threshold=4096 --verify --json --no-save t.db
expect_status 0
cp "$OUT" host.json
check_json host.json '
for x in j["results"]:
    assert x["verify"] == "passed", x
    if x["pool"] != "caching":
        assert x["n_below_threshold"] == 2, x
'

step "stored: the option in the run, the count as a metric"
mp replay --pool=bucketed --backend=sim --pool-threshold=4096 t.db
expect_status 0
expect_eq "$(sql t.db "SELECT options FROM replay_runs WHERE pool = 'bucketed'")" \
	"--pool=bucketed --backend=sim --pool-threshold=4096" "stored options"
expect_eq "$(sql t.db "SELECT m.value FROM replay_metrics m JOIN replay_runs r ON r.id = m.run
	WHERE r.pool = 'bucketed' AND m.name = 'n_below_threshold'")" "2.0" "stored count"
expect_eq "$(sql t.db "SELECT m.value FROM replay_metrics m JOIN replay_runs r ON r.id = m.run
	WHERE r.pool = 'caching' AND m.name = 'n_below_threshold'")" "0.0" "baseline has none"

step "bad thresholds are usage errors"
for bad in -1 abc 1XB ''; do
	mp replay --pool=bucketed --backend=sim --pool-threshold="$bad" --no-save t.db
	expect_status 2
	expect_stderr_contains "invalid pool threshold '$bad': give bytes, e.g. 1MiB"
done

finish
