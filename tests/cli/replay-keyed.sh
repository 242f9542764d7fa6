#!/bin/bash
# replay-keyed.sh - the global2x and mxfp8 pools end to end, with --verify on sim and host.
#
# global2x on tests/cli/data/replay-small.csv: four allocations at four call sites, so four
#   keys, each a buffer of 2 x the requested bytes: 2000 + 8192 + 4096 + 16384 = 30672 at
#   the end and at the peak; at the peak allocations 3 (2048) and 4 (8192) are live:
#   view waste 30672 - 10240 = 20432.  The driver holds them (each under 2 MiB, rounded
#   to 512 B) in one shared 2 MiB page: 2097152 reserved (modelled, memprof-replay(1)).
# mxfp8 on replay-small: no pairs: a WARN, and the caching pool's 4 MiB exactly.
# mxfp8 on tests/cli/data/mxfp8-pair.csv (grad bucket K: 64 MiB from init; param bucket K:
#   32 MiB per iteration, 2 iterations; init 128 MiB; a 16 MiB forward buffer; grad-reduce
#   bucket K: 64 MiB in backward, one at a time):
#   caching: 64 + 64 + 128 + 32 + 32 + 16 (own segments, > 10 MiB) = 336, then the 64 MiB
#     reduce-scatter buffer does not fit the cached 16: 400 MiB.
#   mxfp8: the params lie in their grads' buffers: 64 + 64 + 128 + 16 + 64 = 336 MiB; saved
#     2 x min(32, 64) = 64 MiB; each param free zeroes its 64 MiB grad: 4 x 64 = 256 MiB set.
set -u
. "$(dirname "$0")/lib.sh"

W=$TMP/work
mkdir "$W" || die "mkdir $W"
cd "$W" || die "cd $W"
command -v python3 >/dev/null || skip "python3 is needed to check the JSON"

step "import the fixtures"
mp import -o small.db "$DATA/replay-small.csv"
expect_status 0
mp import -o pair.db "$DATA/mxfp8-pair.csv"
expect_status 0

for be in sim host; do
	step "global2x on replay-small, $be"
	mp replay --pool=global2x --backend=$be --verify --no-save --json small.db
	expect_status 0
	cp "$OUT" g.json
	check_json g.json '
r = {x["pool"]: x for x in j["results"]}
g = r["global2x"]
assert g["verify"] == "passed", g["verify_message"]
assert g["peak_reserved_bytes"] == 2097152 and g["end_reserved_bytes"] == 2097152
s = g["pool_stats"]
assert s["keys"] == 4 and s["buffer_reserves"] == 4 and s["reallocations"] == 0, s
assert s["view_waste_peak"] == 20432 and s["fallback_requests"] == 0, s
'

	step "mxfp8 on a trace without pairs, $be: says so, replays as caching"
	mp replay --pool=mxfp8 --backend=$be --verify --no-save --json small.db
	expect_status 0
	expect_stderr_contains "no parameter/gradient pairs in this trace"
	cp "$OUT" m.json
	check_json m.json '
r = {x["pool"]: x for x in j["results"]}
m, c = r["mxfp8"], r["caching"]
assert m["verify"] == "passed", m["verify_message"]
assert m["peak_reserved_bytes"] == c["peak_reserved_bytes"] == 4194304
assert m["pool_stats"]["pairs_found"] == 0 and m["pool_stats"]["bytes_saved"] == 0
'

	step "mxfp8 on parameter/gradient pairs, $be"
	mp replay --pool=mxfp8 --backend=$be --verify --no-save --json pair.db
	expect_status 0
	expect_stderr_not_contains "no parameter/gradient pairs"
	cp "$OUT" p.json
	check_json p.json '
MiB = 1 << 20
r = {x["pool"]: x for x in j["results"]}
m, c = r["mxfp8"], r["caching"]
assert m["verify"] == "passed", m["verify_message"]
assert c["peak_reserved_bytes"] == 400 * MiB, c["peak_reserved_bytes"]
assert m["peak_reserved_bytes"] == 336 * MiB and m["saved_bytes"] == 64 * MiB
assert m["bytes_set"] == 256 * MiB and m["calls"]["cudaMemsetAsync"] == 4
s = m["pool_stats"]
assert s["pairs_found"] == 2 and s["pairs_shared"] == 2 and s["bytes_saved"] == 64 * MiB, s
assert s["param_allocs_shared"] == 4 and s["zeroings"] == 4 and s["unpaired_sides"] == 4, s
'
done

step "bad options name the option and the value"
mp replay --pool=mxfp8 --backend=sim --no-save --pair=nocolon pair.db
expect_status 1
expect_stderr_contains "pair=nocolon"
mp replay --pool=global2x --backend=sim --no-save --key=stack small.db
expect_status 1
expect_stderr_contains "key=stack"

finish
