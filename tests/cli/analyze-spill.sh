#!/bin/bash
# analyze-spill.sh - the lifetime groups spilled out of memory give the same
# output: 'memprof analyze' (text, --json) and 'memprof report' (Markdown,
# HTML) with a table of 2 or 5 (device, call site, size) groups
# (MEMPROF_LIFETIME_MAX_GROUPS, for tests) are byte-identical to the default
# on a trace of many sizes, reused, shared and one-off; a spill database that
# fills (MEMPROF_LIFETIME_SPILL_PAGES) is a clear error, not a crash.
set -u
. "$(dirname "$0")/lib.sh"

W=$TMP/work
mkdir "$W" || die "mkdir $W"
cd "$W" || die "cd $W"
unset MEMPROF_LIFETIME_MAX_GROUPS MEMPROF_LIFETIME_SPILL_PAGES

# site r: 30 sizes, each allocated and freed in turn, 4 rounds (reuse
# candidates, but for the sizes of every 7th block, which stays live to the
# end); site s: pairs of one size live at once (not reuse); site o: sizes
# seen once, 960 of them (enough to fill the spill's pages)
awk 'BEGIN {
	print "ts_ns,op,id,size,requested,address,device,stream,pid,phase,api,device_free,thread,stack"
	ts = 1000; id = 0
	for (round = 0; round < 4; round++)
		for (i = 0; i < 30; i++) {
			sz = 256 * (i + 1); id++
			printf "%d,alloc,%d,%d,%d,0x%x,0,7,4242,forward,,,,r@train.py:%d\n", ts += 100, id, sz, sz, 4096 * id, 10 + (i % 3)
			if (id % 7 != 0)
				printf "%d,free,%d,%d,%d,0x%x,0,7,4242,forward,,,,\n", ts += 2000000, id, sz, sz, 4096 * id
			sz = 512 * (i % 11 + 1); a = ++id; b = ++id
			printf "%d,alloc,%d,%d,%d,0x%x,%d,7,4242,backward,,,,s@model.py:5\n", ts += 100, a, sz, sz, 4096 * a, i % 2
			printf "%d,alloc,%d,%d,%d,0x%x,%d,7,4242,backward,,,,s@model.py:5\n", ts += 100, b, sz, sz, 4096 * b, i % 2
			printf "%d,free,%d,%d,%d,0x%x,%d,7,4242,backward,,,,\n", ts += 100, a, sz, sz, 4096 * a, i % 2
			printf "%d,free,%d,%d,%d,0x%x,%d,7,4242,backward,,,,\n", ts += 100, b, sz, sz, 4096 * b, i % 2
			for (k = 0; k < 8; k++) {
				sz = 100000 + round * 1000 + i * 8 + k; id++
				printf "%d,alloc,%d,%d,%d,0x%x,0,3,4242,optimizer,,,,o@opt.py:%d\n", ts += 100, id, sz, sz, 4096 * id, round
				printf "%d,free,%d,%d,%d,0x%x,0,3,4242,optimizer,,,,\n", ts += 100, id, sz, sz, 4096 * id
			}
		}
}' >spill.csv
mp import -q -o spill.db spill.csv
[ "$status" -eq 0 ] || die "cannot import spill.csv: $(cat "$ERR")"

# same NAME ARGS...: the output of 'memprof ARGS spill.db' with the default
# table, then with tables of 2 and 5 groups: the same bytes
same() {
	local name=$1
	shift
	mp "$@" spill.db
	expect_status 0
	cp "$OUT" "$name.default"
	for g in 2 5; do
		step "$* with $g groups in memory"
		MEMPROF_LIFETIME_MAX_GROUPS=$g mp "$@" spill.db
		expect_status 0
		expect_same_file "$name.default" "$OUT"
	done
}

step "analyze"
same text analyze --top=4
expect_stdout_contains "reuse candidate"
same json analyze --json --top=1000
check_json json.default '
reuse = [f for d in j["devices"] for f in d["lifetime"]["reuse"]]
assert len(reuse) == 17, len(reuse)
assert all(f["count"] >= 3 for f in reuse), reuse
'
step "report"
same md report --format=md --top=3
expect_stdout_contains "more call sites"
same html report --top=3

step "a spill database that fills is an error naming the cause"
MEMPROF_LIFETIME_MAX_GROUPS=2 MEMPROF_LIFETIME_SPILL_PAGES=2 mp analyze spill.db
expect_status 1
expect_stderr_contains "memprof analyze: cannot write the lifetime groups to a temporary database: database or disk is full"
expect_stderr_contains "hint: SQLite makes it in SQLITE_TMPDIR or TMPDIR"
MEMPROF_LIFETIME_MAX_GROUPS=2 MEMPROF_LIFETIME_SPILL_PAGES=2 mp report --format=md spill.db
expect_status 1
expect_stderr_contains "memprof report: cannot write the lifetime groups to a temporary database"

finish
