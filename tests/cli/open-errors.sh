#!/bin/bash
# open-errors.sh - info and export on files that are not traces they can
# read: each is refused with exit 1 and a message naming the file; a trace of
# an older schema (v0) is migrated forward in place.
set -u
. "$(dirname "$0")/lib.sh"

W=$TMP/work
mkdir "$W" || die "mkdir $W"
cd "$W" || die "cd $W"

# refused FILE TEXT...: info and export (to stdout and with -o) exit 1 naming
# FILE, with each TEXT in the message; FILE is left as it was.
refused() {
	local file=$1 c t
	shift
	cp -p "$file" "$TMP/before" 2>/dev/null
	for c in info export; do
		step "$c $file"
		mp "$c" "$file"
		expect_status 1
		expect_one_message "memprof $c: "
		expect_stderr_contains "'$file'"
		for t in "$@"; do
			expect_stderr_contains "$t"
		done
		expect_stdout_empty
	done
	step "export -o on $file"
	mp export -o "$W/never.csv" "$file"
	expect_status 1
	expect_file_absent "$W/never.csv"
	expect_no_temp_files "$W"
	if [ -f "$file" ]; then
		step "$file is left untouched"
		expect_same_file "$TMP/before" "$file"
		left=$(ls "$file"-* 2>/dev/null)
		expect_eq "$left" "" "files made beside $file"
	fi
	rm -f "$TMP/before"
}

refused nope.db "No such file"

mkdir dir.db
refused dir.db "directory"

: >empty.db
refused empty.db "not a memprof trace 'empty.db': the file is empty"

printf 'ts_ns,op,id,size\n1,alloc,1,10\n' >text.db
refused text.db "not a memprof trace 'text.db': it looks like a memprof CSV; 'memprof import text.db' reads it into a trace"

# files of the formats memprof imports are named as such, with the command that reads them
printf '\x80\x04\x95\x0b\x00\x00\x00\x00\x00\x00\x00}\x94.' >snap.pickle
refused snap.pickle "it looks like a PyTorch snapshot (a pickle); 'memprof import snap.pickle' reads it into a trace"
printf 'id,lower,upper,size\n0,0,2,16\n' >plan.csv
refused plan.csv "it looks like a MiniMalloc CSV"
printf 'Thread,Time,Action,Pointer,Size,Stream\n' >log.dev0.csv
refused log.dev0.csv "it looks like an RMM log"

awk 'BEGIN { for (i = 0; i < 8192; i++) printf "%c", (i * 37 + 11) % 256 }' >binary.db
refused binary.db "not a memprof trace"

# A valid trace to derive the others from.
"$MEMPROF" import -q -o "$W/good.db" "$DATA/small.csv" || die "cannot import small.csv"

step "a truncated trace"
head -c 1000 good.db >truncated.db
refused truncated.db

if have_sqlite3; then
	step "make a SQLite database that is not a trace"
	"$SQLITE3_SHELL" other.db 'CREATE TABLE t(x); INSERT INTO t VALUES(1);' ||
		die "sqlite3 cannot make other.db"
	refused other.db "not a memprof trace"

	"$SQLITE3_SHELL" other-meta.db "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT);
		INSERT INTO meta VALUES('format', 'something-else');" ||
		die "sqlite3 cannot make other-meta.db"
	refused other-meta.db "not a memprof trace"

	step "make a v99 trace"
	cp good.db v99.db
	"$SQLITE3_SHELL" v99.db 'PRAGMA user_version=99;' || die "sqlite3 cannot set user_version"
	refused v99.db "v99" "v3"
	step "v99 trace keeps its version"
	expect_eq "$(sql v99.db 'PRAGMA user_version;')" 99 "user_version after refusal"

	# A trace of schema v0, from the fixture of the unit tests.
	fixture=$top_srcdir/tests/unit/fixtures/trace-v0.sql
	if [ -f "$fixture" ]; then
		step "load the v0 fixture"
		"$SQLITE3_SHELL" v0.db <"$fixture" || die "sqlite3 cannot load $fixture"
		expect_eq "$(sql v0.db 'PRAGMA user_version;')" 0 "user_version of the fixture"
		n_events=$(sql v0.db 'SELECT count(*) FROM events;')
		cp v0.db v0-export.db

		step "info on a v0 trace"
		mp info v0.db
		expect_status 0
		expect_stdout_match '^schema +v0 \(migrated to v3\)$'
		expect_stdout_line "events       $n_events (alloc 2, free 1, phase_begin 1, phase_end 1)"
		expect_stderr_empty
		step "v0 trace after info"
		expect_eq "$(sql v0.db 'PRAGMA user_version;')" 3 "user_version after migration"
		expect_eq "$(sql v0.db "SELECT count(*) FROM pragma_table_info('events') WHERE name = 'device_free';")" \
			1 "events.device_free after migration"
		expect_eq "$(sql v0.db "SELECT count(*) FROM pragma_table_info('events') WHERE name = 'duration_ns';")" \
			1 "events.duration_ns after migration"
		expect_eq "$(sql v0.db "SELECT count(*) FROM sqlite_master WHERE name IN ('replay_runs', 'replay_metrics');")" \
			2 "replay tables after migration"
		expect_eq "$(sql v0.db 'SELECT count(*) FROM events;')" "$n_events" "events after migration"

		step "info on the migrated trace"
		mp info v0.db
		expect_status 0
		expect_stdout_match '^schema +v3$'
		expect_stdout_not_contains "migrated"

		step "info --json on a v0 trace"
		cp v0-export.db v0-json.db
		mp info --json v0-json.db
		expect_status 0
		expect_stdout_contains '"schema_version":'

		step "export of a v0 trace"
		mp export v0-export.db
		expect_status 0
		expect_stdout_line "200,alloc,1,1024,1000,0x1000,0,7,4242,forward,cudaMalloc,,,main@train.py:10;forward@model.py:42"
		expect_eq "$(grep -c '' "$OUT")" $((n_events + 1)) "lines exported"
		expect_eq "$(sql v0-export.db 'PRAGMA user_version;')" 3 "user_version after export"

		step "a v0 trace exports to CSV that imports"
		cp "$OUT" v0.csv
		mp import -o v0-again.db v0.csv
		expect_status 0
		mp export v0-again.db
		cp "$OUT" v0-again.csv
		expect_same_file v0.csv v0-again.csv
	else
		say "no $fixture: v0 migration checks skipped"
	fi

	# A trace of schema v2 (memprof before call durations and pinned host
	# buffers), made from small.csv: it migrates, keeps its events and
	# analyzes as the same CSV imported today does.
	fixture=$top_srcdir/tests/unit/fixtures/trace-v2.sql
	step "load the v2 fixture"
	"$SQLITE3_SHELL" v2.db <"$fixture" || die "sqlite3 cannot load $fixture"
	expect_eq "$(sql v2.db 'PRAGMA user_version;')" 2 "user_version of the v2 fixture"
	mp info v2.db
	expect_status 0
	expect_stdout_match '^schema +v2 \(migrated to v3\)$'
	step "v2 trace after info"
	expect_eq "$(sql v2.db 'PRAGMA user_version;')" 3 "user_version after migration"
	expect_eq "$(sql v2.db "SELECT count(*) FROM pragma_table_info('events') WHERE name = 'duration_ns';")" \
		1 "events.duration_ns after migration"
	expect_eq "$(sql v2.db "SELECT count(*) FROM pragma_table_info('devices') WHERE name = 'numa_node';")" \
		1 "devices.numa_node after migration"
	expect_eq "$(sql v2.db "SELECT count(*) FROM sqlite_master WHERE name IN ('host_buffers', 'host_buffer_nodes');")" \
		2 "pinned host buffer tables after migration"
	expect_eq "$(sql v2.db 'SELECT count(*) FROM events WHERE duration_ns IS NOT NULL;')" 0 \
		"no durations invented"
	step "a migrated v2 trace reads as today's import of the same CSV"
	mp export v2.db
	expect_status 0
	expect_same_file "$DATA/small.csv" "$OUT"
	mp analyze --json v2.db
	expect_status 0
	grep -v '"trace":' "$OUT" >v2-analyze.json
	mp import -q -o small-now.db "$DATA/small.csv"
	mp analyze --json small-now.db
	expect_status 0
	grep -v '"trace":' "$OUT" >now-analyze.json
	expect_same_file v2-analyze.json now-analyze.json
else
	say "SQLITE3_SHELL is empty: checks that need the sqlite3 shell skipped"
fi

finish
