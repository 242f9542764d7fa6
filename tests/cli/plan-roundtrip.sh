#!/bin/bash
# plan-roundtrip.sh - issue 29 item 5: planned packs a trace exported with
# 'memprof export --format=minimalloc --time=ns' and imported again exactly
# as it packs the trace: the same makespan, bound, search nodes and
# optimality, under a node budget (so the same on any machine).  On the demo
# trace, and on MiniMalloc instances C and E (the search runs on E) when
# ../shared/datasets is present; --time=seq keeps the overlaps but not the
# lifetimes' lengths, so it is not held to the same plan.
set -u
. "$(dirname "$0")/lib.sh"

command -v python3 >/dev/null || skip "python3 is needed to check the JSON"
W=$TMP/work
mkdir "$W" || die "mkdir $W"
cd "$W" || die "cd $W"

# plan_of DB NAME: replay planned on DB with a node budget, the JSON in NAME.json
plan_of() {
	mp replay --pool=planned --baseline=none --backend=sim --no-save --json \
		--plan_nodes=600000 --plan_time=600 "$1"
	expect_status 0
	cp "$OUT" "$2.json"
}

# round_trip NAME TRACE: import TRACE, plan it; export, import, plan again; compare
round_trip() {
	local name=$1 trace=$2
	step "$name: planned on the trace and on its MiniMalloc export (--time=ns) re-imported"
	mp import -o "$name.db" "$trace"
	expect_status 0 || return
	plan_of "$name.db" "$name"
	mp export --format=minimalloc --time=ns --device=0 -o "$name.mm.csv" "$name.db"
	expect_status 0 || return
	mp import -o "$name.rt.db" "$name.mm.csv"
	expect_status 0 || return
	plan_of "$name.rt.db" "$name.rt"
	check_json "$name.json" "
rt = json.load(open('$name.rt.json'))
a = [r for r in j['results'] if r['device'] == 0][0]['pool_stats']
b = [r for r in rt['results'] if r['device'] == 0][0]['pool_stats']
keys = ('makespan_bytes', 'plan_lower_bound_bytes', 'proven_bound_bytes', 'search_nodes',
        'optimal', 'orderings_tried')
print('$name: trace %s, round trip %s' % ([a[k] for k in keys], [b[k] for k in keys]))
for k in keys:
    assert a[k] == b[k], (k, a[k], b[k])
"
}

round_trip demo "$top_srcdir/samples/traces/demo.csv"
datasets=$top_srcdir/../shared/datasets/minimalloc
for x in C E; do
	[ -r "$datasets/$x.1048576.csv" ] || continue
	round_trip "$x" "$datasets/$x.1048576.csv"
done
finish
