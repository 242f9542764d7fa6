#!/bin/bash
# trace-interrupted.sh - a trace whose last write was interrupted (issue 23,
# item 3): a process killed in the middle of saving into a trace (as a
# replay killed while saving its results) leaves a hot journal.  Every
# command then reads the trace as it was before that write, rolled back,
# and says on stderr that what the write added was lost.
set -u
. "$(dirname "$0")/lib.sh"

command -v python3 >/dev/null || skip "no python3 to interrupt a write"
python3 -c 'import sqlite3' 2>/dev/null || skip "python3 has no sqlite3 module"

W=$TMP/work
mkdir "$W" && cd "$W" || die "cannot make $W"
"$MEMPROF" import -q -o good.db "$DATA/small.csv" || die "cannot import small.csv"
"$MEMPROF" replay -q --pool=direct --backend=sim good.db >/dev/null 2>&1 ||
	"$MEMPROF" replay --pool=direct --backend=sim good.db >/dev/null || die "cannot replay good.db"
"$MEMPROF" export good.db >good.csv || die "cannot export good.db"

# interrupt DB: a writer saving replay results into DB (enough to spill
# pages into the file before it commits) is killed with SIGKILL mid-write.
interrupt() {
	python3 - "$1" <<'EOF'
import os, signal, sqlite3, sys
db = sqlite3.connect(sys.argv[1], isolation_level=None)
db.execute("PRAGMA cache_size=1")
db.execute("BEGIN IMMEDIATE")
db.execute("DELETE FROM events WHERE seq > 3")
for i in range(2000):
    db.execute("INSERT INTO replay_runs(created, pool, backend, options) VALUES('now', 'direct', 'sim', ?)",
               ("x" * 2000,))
os.kill(os.getpid(), signal.SIGKILL)
EOF
	[ -s "$1-journal" ] || die "no hot journal beside $1"
}

runs_before=$(python3 -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT count(*) FROM replay_runs").fetchone()[0])' good.db)

for c in info analyze export "report -o $W/r.html" "replay --pool=direct --backend=sim --no-save" \
	"diff good.db"; do
	cp good.db t.db
	interrupt t.db
	step "$c on a trace with an interrupted write"
	# shellcheck disable=SC2086
	mp $c t.db
	expect_status 0
	expect_stderr_contains "memprof ${c%% *}: warning: the last write to 't.db' was interrupted"
	expect_stderr_contains "replay results"
	expect_file_absent t.db-journal
	rm -f "$W/r.html"
	step "the trace is as it was before the interrupted write"
	mp export t.db
	expect_status 0
	expect_stderr_empty
	expect_same_file good.csv "$OUT"
	expect_eq "$(python3 -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT count(*) FROM replay_runs").fetchone()[0])' t.db)" \
		"$runs_before" "replay runs after the rollback"
done

step "a replay that saves into a trace with an interrupted write"
cp good.db t.db
interrupt t.db
mp replay --pool=direct --backend=sim t.db
expect_status 0
expect_stderr_contains "was interrupted"
runs_after=$(python3 -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT count(*) FROM replay_runs").fetchone()[0])' t.db)
[ "$runs_after" -gt "$runs_before" ] ||
	fail "the replay saved no runs: $runs_after runs, $runs_before before"

if [ "$(id -u)" != 0 ]; then
	step "an interrupted write in a read-only directory cannot be rolled back"
	mkdir ro
	cp good.db ro/t.db
	interrupt ro/t.db
	chmod 555 ro
	mp info ro/t.db
	expect_status 1
	expect_one_message "memprof info: "
	expect_stderr_contains "cannot read trace 'ro/t.db': its last write was interrupted"
	expect_stderr_contains "write access"
	chmod 755 ro
else
	say "running as root: the read-only directory check is skipped"
fi

finish
