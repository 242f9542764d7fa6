#!/bin/bash
# trace-locked.sh - a trace another process is writing (issue 23, item 5):
# reading commands wait a bounded time for the writer instead of failing at
# once, and a trace still locked after that is said to be locked, never "a
# SQLite database without memprof's meta table".
set -u
. "$(dirname "$0")/lib.sh"

command -v python3 >/dev/null || skip "no python3 to hold the lock"
python3 -c 'import sqlite3' 2>/dev/null || skip "python3 has no sqlite3 module"

W=$TMP/work
mkdir "$W" && cd "$W" || die "cannot make $W"
"$MEMPROF" import -q -o good.db "$DATA/small.csv" || die "cannot import small.csv"
n_events=$("$MEMPROF" info --json good.db | python3 -c 'import json,sys; print(json.load(sys.stdin)["summary"]["events"])') ||
	die "cannot count the events"

# hold DB SECONDS: an exclusive lock on DB (a writer in the middle of its
# transaction) for SECONDS, taken before this returns; its pid in $holder.
hold() {
	rm -f locked
	python3 - "$1" "$2" <<'EOF' &
import sqlite3, sys, time
db = sqlite3.connect(sys.argv[1], isolation_level=None)
db.execute("BEGIN EXCLUSIVE")
db.execute("INSERT INTO meta VALUES('lock_test', '1')")
open("locked", "w").close()
time.sleep(float(sys.argv[2]))
db.execute("ROLLBACK")
EOF
	holder=$!
	for _ in $(seq 100); do
		[ -e locked ] && return 0
		sleep 0.1
	done
	die "the lock holder did not start"
}

for c in info "analyze" "export"; do
	step "$c waits for a writer that finishes"
	hold good.db 1
	mp $c good.db
	expect_status 0
	expect_stderr_empty
	wait "$holder"
done
step "info after the wait sees the whole trace"
hold good.db 1
mp info --json good.db
expect_status 0
expect_eq "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["summary"]["events"])' "$OUT")" \
	"$n_events" "events seen after the wait"
wait "$holder"

step "replay saves once the writer is done"
hold good.db 1
mp replay --pool=direct --backend=sim good.db
expect_status 0
wait "$holder"

step "a trace locked for longer is said to be locked"
hold good.db 30
mp info good.db
expect_status 1
expect_one_message "memprof info: "
expect_stderr_contains "'good.db'"
expect_stderr_contains "another process is writing it"
expect_stderr_not_contains "meta table"
kill "$holder" 2>/dev/null
wait "$holder" 2>/dev/null

finish
