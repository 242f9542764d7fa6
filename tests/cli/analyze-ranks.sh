#!/bin/bash
# analyze-ranks.sh - the ranks section of 'memprof analyze' on multi-rank
# traces, end to end: per-rank CSVs from tests/tools/make_rank_traces.py
# (known answers in its expected.json) -> import --rank -> merge -> analyze.
# Every rank's figures are checked against the generator's answers and
# against 'memprof analyze' of that rank's own trace; the spread against a
# computation from those peaks; the call sites that differ against the call
# sites 'memprof check' reports at the peak of each single-rank trace (the
# same key and moment, computed by analysis/gate).  Then processes without
# a rank (a multi-file import, ranks set afterwards with sqlite3), --device,
# a single-rank trace (no section), and two real PyTorch snapshots as two
# ranks (../shared/datasets/torch-snapshots, when present).
set -u
. "$(dirname "$0")/lib.sh"

command -v python3 >/dev/null || skip "python3 is needed to check the JSON"
GEN=$top_srcdir/tests/tools/make_rank_traces.py
[ -f "$GEN" ] || skip "no $GEN (the MERGE part's generator)"
W=$TMP/work
mkdir "$W" || die "mkdir $W"
cd "$W" || die "cd $W"

# The check of a "ranks" object against single-rank runs, in Python.
# Needs: j (the job's analyze JSON), singles (analyze JSON of each rank's own
# trace, rank order), gates (check JSON of each), ranks (the rank numbers).
RANKS_CHECK='
def load(p): return json.load(open(p))
R = j["ranks"]
S = [load(p) for p in singles]
G = [load(p) for p in gates]
assert R is not None, "no ranks object"
U = R["units"]
assert [u["rank"] for u in U] == ranks, [u["rank"] for u in U]
assert R["ranked"] == len(ranks) and R["unranked"] == 0
for u, s in zip(U, S):
    d, = s["devices"]
    assert u["label"] == "rank %d" % u["rank"]
    assert len(u["devices"]) == 1, u["devices"]
    assert u["peaks"]["live"]["bytes"] == d["peaks"]["live"]["bytes"], (u["label"], u["peaks"], d["peaks"])
    assert u["peaks"]["requested"]["bytes"] == d["peaks"]["requested"]["bytes"]
    ur, dr = u["peaks"]["reserved"], d["peaks"]["reserved"]
    assert (ur is None) == (dr is None) and (ur is None or ur["bytes"] == dr["bytes"])
    assert u["ooms"] == len(d["ooms"])
    assert u["end"]["live_bytes"] == d["end"]["live_bytes"]
    assert u["end"]["live_blocks"] == d["end"]["live_blocks"]
    assert u["events"] == s["events"], (u["events"], s["events"])
# the devices of the ranks are the job devices, one each, all different
assert len({u["devices"][0] for u in U}) == len(U)
# the spread, from the peaks
peaks = [u["peaks"]["live"]["bytes"] for u in U]
sp = R["spread"]
hi, lo = max(peaks), min(peaks)
assert sp["worst"]["unit"] == peaks.index(hi) and sp["worst"]["bytes"] == hi
assert sp["best"]["unit"] == peaks.index(lo) and sp["best"]["bytes"] == lo
assert sp["spread_bytes"] == hi - lo
if lo == 0:
    assert sp["max_over_min"] is None
else:
    assert near(sp["max_over_min"], hi / lo)
assert near(sp["max_over_mean"], hi / (sum(peaks) / len(peaks)))
v = sorted(peaks); n = len(v)
m2 = 2 * v[n // 2] if n % 2 else v[n // 2 - 1] + v[n // 2]
assert near(sp["median_bytes"], m2 / 2)
assert sp["above_median_pct"] == 5
assert [a["unit"] for a in sp["above_median"]] == [i for i, p in enumerate(peaks) if p * 200 > m2 * 105]
# the job peak is the worst rank: the highest device peak of the job
assert hi == max(d["peaks"]["live"]["bytes"] for d in j["devices"])
# call sites at each rank peak: what check reports on the single traces
site = [{x["key"]: x["bytes"] for x in g["devices"][0]["sites"]} for g in G]
for g in G:
    assert g["devices"][0]["n_sites"] == len(g["devices"][0]["sites"]), "raise --top"
keys = sorted({k for s in site for k in s})
want = []
for k in keys:
    b = [s.get(k, 0) for s in site]
    if max(b) != min(b):
        want.append((-(max(b) - min(b)), k, b))
want.sort()
got = R["call_sites"]
assert R["differing_sites"] == len(want) == len(got), (R["differing_sites"], len(want), len(got))
for (neg, k, b), c in zip(want, got):
    assert c["key"] == k, (c["key"], k)
    assert c["bytes"] == b, (k, c["bytes"], b)
    assert c["difference_bytes"] == -neg
    assert c["min"]["bytes"] == min(b) and c["min"]["unit"] == b.index(min(b))
    assert c["max"]["bytes"] == max(b) and c["max"]["unit"] == b.index(max(b))
    assert c["present"] == sum(1 for x in b if x > 0)
print("%d ranks, job peak %d, %d call sites differ" % (len(U), hi, len(got)))
'

# single NAME DB: the analyze and check JSON of one rank's trace.
single() {
	mp analyze --json "$2"
	expect_status 0
	cp "$OUT" "$1.analyze.json"
	mp check --format=json --top=100000 "$2"
	expect_status 0
	cp "$OUT" "$1.check.json"
}

step "generate 4 ranks on 2 hosts, an OOM on rank 2"
run python3 "$GEN" --ranks 4 --ranks-per-node 2 --oom-rank 2 --out gen
expect_status 0
N=4
labels() { # R: the import options of rank R from expected.json
	python3 -c '
import json, sys
r = json.load(open("gen/expected.json"))["ranks"][int(sys.argv[1])]
print("--rank=%d --local-rank=%d --world-size=%d --host=%s" % (r["rank"], r["local_rank"], '"$N"', r["host"]))' "$1"
}

inputs=""
for r in 0 1 2 3; do
	step "import rank $r with its labels"
	# shellcheck disable=SC2046 # the labels are words
	mp import -q $(labels $r) -o r$r.db gen/rank$r.csv
	expect_status 0
	single rank$r r$r.db
	step "one rank: no ranks section"
	check_json rank$r.analyze.json 'assert j["ranks"] is None'
	mp analyze r$r.db
	expect_stdout_not_contains "ranks:"
	inputs="$inputs r$r.db"
done

step "merge"
# shellcheck disable=SC2086 # the list of inputs
mp merge -q $inputs -o job.db
expect_status 0

step "analyze --json the job: each rank as its own trace"
mp analyze --json --top=100000 job.db
expect_status 0
expect_stderr_empty
cp "$OUT" job.json
check_json job.json "
singles = ['rank%d.analyze.json' % r for r in range($N)]
gates = ['rank%d.check.json' % r for r in range($N)]
ranks = list(range($N))
$RANKS_CHECK"

step "analyze --json the job: the generator's answers"
check_json job.json '
E = json.load(open("gen/expected.json"))
R = j["ranks"]
assert R["hosts"] == len({r["host"] for r in E["ranks"]})
for u, e in zip(R["units"], E["ranks"]):
    assert u["host"] == e["host"] and u["local_rank"] == e["local_rank"]
    assert u["pids"] == [e["pid"]]
    assert u["peaks"]["live"]["bytes"] == e["peak_live_bytes"]
    assert u["peaks"]["requested"]["bytes"] == e["peak_requested_bytes"]
    assert u["peaks"]["reserved"]["bytes"] == e["peak_reserved_bytes"]
    assert u["ooms"] == (1 if e["rank"] == E["oom_rank"] else 0)
# the call sites: a stack of the generator becomes the key of its call-site
# frame (innermost frame with a file and line): NAME@last two path parts
def key(stack):
    name, rest = stack.split(";")[-1].split("@")
    return name + "@" + "/".join(rest.split(":")[0].split("/")[-2:])
got = {c["key"]: c["bytes"] for c in R["call_sites"]}
want = {key(s): E["call_sites"][s] for s in E["differing_call_sites"]}
assert got == want, (got, want)
for s in E["common_call_sites"]:
    assert key(s) not in got
'

step "analyze the job: the text"
mp analyze job.db
expect_status 0
worst=$(python3 -c '
import json
E = json.load(open("gen/expected.json"))["ranks"]
w = max(E, key=lambda r: (r["peak_live_bytes"], -r["rank"]))
print("rank %d \\(host %s, device" % (w["rank"], w["host"]))')
expect_stdout_line "ranks: $N ranks on 2 hosts"
expect_stdout_match "^  job peak .* on $worst [0-9]+\) at .*; spread "
expect_stdout_match "^  more than 5% above the median: rank"
expect_stdout_contains "call sites that differ between ranks"
expect_stdout_match " 0 B \(rank 0\) .* \(rank 3\) +3/4 +shard_extra \(model.py:30\)$"

step "--device: one rank's device, one unit, no section"
mp analyze --json --device=0 job.db
expect_status 0
cp "$OUT" dev0.json
check_json dev0.json 'assert j["ranks"] is None'

step "processes without a rank: a multi-file import, all on device 0"
mp import -q -o multi.db gen/rank0.csv gen/rank1.csv gen/rank2.csv
expect_status 0
mp analyze --json multi.db
expect_status 0
cp "$OUT" multi.json
check_json multi.json '
E = json.load(open("gen/expected.json"))["ranks"][:3]
R = j["ranks"]
assert R["ranked"] == 0 and R["unranked"] == 3 and R["hosts"] == 0
assert [u["label"] for u in R["units"]] == ["pid %d" % e["pid"] for e in E]
assert all(u["rank"] is None and u["host"] is None for u in R["units"])
assert [u["peaks"]["live"]["bytes"] for u in R["units"]] == [e["peak_live_bytes"] for e in E]
assert [u["peaks"]["reserved"]["bytes"] for u in R["units"]] == [e["peak_reserved_bytes"] for e in E]
# one device number shared by three processes: the device counts them all
d, = j["devices"]
assert d["peaks"]["reserved"]["bytes"] == sum(e["peak_reserved_bytes"] for e in E)
assert d["peaks"]["live"]["bytes"] > max(e["peak_live_bytes"] for e in E)
'
mp analyze multi.db
expect_status 0
expect_stdout_line "ranks: unknown; 3 processes without a rank, each its own unit"
expect_stdout_match "^  job peak .* on pid 1002 \(device 0\) at "

step "--device=0 on the shared device: the same units"
mp analyze --json --device=0 multi.db
expect_status 0
cp "$OUT" multi0.json
check_json multi0.json '
m = json.load(open("multi.json"))["ranks"]
R = j["ranks"]
assert R["device"] == 0 and m["device"] is None
assert R["units"] == m["units"] and R["spread"] == m["spread"]
'

if have_sqlite3; then
	step "ranks set afterwards: two ranks and one process without"
	cp multi.db mixed.db
	run sql mixed.db "UPDATE processes SET rank = 1 WHERE pid = 1000;
		UPDATE processes SET rank = 0, host = 'h' WHERE pid = 1002;"
	mp analyze --json mixed.db
	expect_status 0
	cp "$OUT" mixed.json
	check_json mixed.json '
E = json.load(open("gen/expected.json"))["ranks"]
R = j["ranks"]
assert R["ranked"] == 2 and R["unranked"] == 1 and R["hosts"] == 1
assert [u["label"] for u in R["units"]] == ["rank 0", "rank 1", "pid 1001"]
assert [u["peaks"]["live"]["bytes"] for u in R["units"]] == [E[2]["peak_live_bytes"], E[0]["peak_live_bytes"], E[1]["peak_live_bytes"]]
'
	mp analyze mixed.db
	expect_stdout_line "ranks: 2 ranks and 1 process without a rank on 1 host"
fi

datasets=$top_srcdir/../shared/datasets/torch-snapshots
a=$datasets/cs336-ctx128-fullstep.pickle
b=$datasets/cs336-ctx128-forward-mixed.pickle
if [ -f "$a" ] && [ -f "$b" ]; then
	step "two PyTorch snapshots as two ranks"
	mp import -q --rank=0 --world-size=2 --host=gpu-a -o t0.db "$a"
	expect_status 0
	mp import -q --rank=1 --world-size=2 --host=gpu-b -o t1.db "$b"
	expect_status 0
	single torch0 t0.db
	single torch1 t1.db
	mp merge -q t0.db t1.db -o torch.db
	expect_status 0
	mp analyze --json --top=100000 torch.db
	expect_status 0
	cp "$OUT" torch.json
	check_json torch.json "
singles = ['torch0.analyze.json', 'torch1.analyze.json']
gates = ['torch0.check.json', 'torch1.check.json']
ranks = [0, 1]
$RANKS_CHECK"
else
	say "no PyTorch snapshots in $datasets: that part not run"
fi

finish
