#!/bin/bash
# plan-abi.sh - pool ABI 1.2 appended the lifetimes' own times: a planning
# plugin built for 1.1 (tests/plugins/plan_1_1.c) still gets its items with
# the 1.0 stride and reads every one of them right; planned, built for 1.2,
# gets the times (a replay of the demo trace plans with them).
set -u
. "$(dirname "$0")/lib.sh"

command -v python3 >/dev/null || skip "python3 is needed to check the JSON"
plugin=$top_builddir/tests/plugins/.libs/plan_1_1.so
[ -r "$plugin" ] || skip "no '$plugin' (built by make check)"
W=$TMP/work
mkdir "$W" || die "mkdir $W"
cd "$W" || die "cd $W"

step "a 1.1 planning plugin reads its items with the 1.0 stride"
mp import -o demo.db "$top_srcdir/samples/traces/demo.csv"
expect_status 0
mp replay --pool="$plugin" --baseline=none --backend=sim --no-save --json demo.db
expect_status 0
cp "$OUT" old.json
check_json old.json "
r = j['results'][0]
assert r['pool_stats']['plan_items_checked'] == r['n_allocs'], (r['pool_stats'], r['n_allocs'])
assert r['n_allocs'] > 0
"
finish
