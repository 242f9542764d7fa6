#!/bin/bash
# trace-hostile.sh - a trace is untrusted input (issue 23, item 1): traces
# with views, triggers, virtual tables, or tables, indexes and columns other
# than memprof's (made by tests/tools/make_hostile_traces.py) are refused by
# every reading command, naming what is wrong, and left as they were: no
# view runs, no trigger fires (replay saving its results included).
set -u
. "$(dirname "$0")/lib.sh"

command -v python3 >/dev/null || skip "no python3 to make the hostile traces"
python3 -c 'import sqlite3' 2>/dev/null || skip "python3 has no sqlite3 module"

W=$TMP/work
mkdir "$W" && cd "$W" || die "cannot make $W"
"$MEMPROF" import -q -o good.db "$DATA/small.csv" || die "cannot import small.csv"
python3 "$top_srcdir/tests/tools/make_hostile_traces.py" good.db . >cases.txt ||
	die "make_hostile_traces.py failed"
n_good=$(python3 -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT count(*) FROM events").fetchone()[0])' good.db)

n_cases=0
while IFS=$'\t' read -r name text; do
	n_cases=$((n_cases + 1))
	db=$name.db
	cp -p "$db" before.db
	for c in info analyze export "report -o $W/$name.html" \
		"replay --pool=direct --backend=sim" "diff good.db"; do
		step "$c on $db"
		# shellcheck disable=SC2086
		mp $c "$db"
		expect_status 1
		expect_one_message "memprof ${c%% *}: "
		expect_stderr_contains "not a memprof trace '$db'"
		expect_stderr_contains "$text"
	done
	step "$db is left as it was"
	expect_same_file before.db "$db"
	expect_file_absent "$W/$name.html"
done <cases.txt
[ "$n_cases" -ge 10 ] || fail "only $n_cases hostile traces were made"
say "$n_cases hostile traces refused by 6 commands each"

step "the good trace still reads, and a replay saves into it"
mp replay --pool=direct --backend=sim good.db
expect_status 0
mp info good.db
expect_status 0
expect_stdout_contains "events       $n_good"

finish
