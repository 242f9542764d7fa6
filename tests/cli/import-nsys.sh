#!/bin/bash
# import-nsys.sh - Nsight Systems SQLite exports end to end: fixtures made
# with the sqlite3 shell from tests/cli/data/nsys/ (schema.sql plus a case),
# detected and imported, exported to the expected CSV, and summarised by
# 'memprof info --json' with figures computed by hand; then the files
# memprof must refuse, each with one clear message and nothing written.
set -u
. "$(dirname "$0")/lib.sh"

have_sqlite3 || skip "no sqlite3 shell (configure found none): cannot make the fixtures"

NSYS=$DATA/nsys
W=$TMP/work
OUTDIR=$TMP/out
mkdir "$W" "$OUTDIR" || die "mkdir"
cd "$W" || die "cd $W"

# export NAME: make NAME.sqlite from schema.sql and NAME.sql.
export_of() {
	rm -f "$1.sqlite"
	cat "$NSYS/schema.sql" "$NSYS/$1.sql" | "$SQLITE3_SHELL" -batch "$1.sqlite" ||
		die "sqlite3 cannot make $1.sqlite"
}

json_check() { # NAME PYTHON-EXPRESSION EXPECTED, on $W/info.json as j
	local got
	got=$(python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
print(json.dumps(eval(sys.argv[2]), sort_keys=True))' "$W/info.json" "$2" 2>&1)
	expect_eq "$got" "$3" "JSON $1"
}

# imported NAME EVENTS ALLOCS PEAK BY_OP [WARNING...]: NAME.sqlite is detected
# as nsys and imported with these counts and warnings, exports as
# NAME.expected.csv, and info --json gives the peak and counts by operation.
imported() {
	local name=$1 events=$2 allocs=$3 peak=$4 by_op=$5 w
	shift 5
	export_of "$name"
	step "import $name"
	mp import "$name.sqlite"
	expect_status 0
	expect_stdout_line "wrote '$name.db': $events events, $allocs allocations"
	for w in "$@"; do
		expect_stderr_contains "memprof import: warning: $w"
	done
	[ $# -gt 0 ] || expect_stderr_empty
	step "export $name"
	mp export -o "$W/$name.csv" "$name.db"
	expect_status 0
	expect_same_file "$NSYS/$name.expected.csv" "$W/$name.csv"
	step "the export of $name imports back to the same events"
	mp import -q -o "$W/$name.again.db" "$W/$name.csv"
	expect_status 0
	mp export "$name.again.db"
	expect_same_file "$NSYS/$name.expected.csv" "$OUT"
	step "meta of $name"
	expect_eq "$(sql "$name.db" "SELECT value FROM meta WHERE key = 'source'")" nsys source
	expect_eq "$(sql "$name.db" "SELECT value FROM meta WHERE key = 'clock'")" \
		"nsys session ns" clock
	expect_eq "$(sql "$name.db" "SELECT value FROM meta WHERE key = 'clock_epoch_ns'")" \
		1761000000123456789 clock_epoch_ns
	command -v python3 >/dev/null 2>&1 || return 0
	step "info --json $name"
	mp info --json "$name.db"
	expect_status 0
	cp "$OUT" "$W/info.json"
	json_check events 'j["summary"]["events"]' "$events"
	json_check peak_live_bytes 'j["summary"]["peak_live_bytes"]' "$peak"
	json_check events_by_op \
		'{k: v for k, v in j["summary"]["events_by_op"].items() if v}' "$by_op"
}

# basic: live 1024, 5120 (peak), 4096, 4608, 4864, 768; pinned alloc+free skipped.
imported basic 6 4 5120 '{"alloc": 4, "free": 2}' \
	"2 host memory records (pageable, pinned) skipped"
json_check pids '[p["pid"] for p in j["processes"]]' '[4242]'
step "basic: the runtime calls' durations (end - start: 9, 40, 2, 5, 1000 ns)"
expect_eq "$(sql basic.db "SELECT group_concat(coalesce(duration_ns, '-'), ' ') FROM
	(SELECT duration_ns FROM events ORDER BY seq)")" "9 40 2 5 - 1000" "durations"
if command -v python3 >/dev/null 2>&1; then
	mp analyze --json basic.db
	expect_status 0
	cp "$OUT" "$W/analyze.json"
	check_json "$W/analyze.json" '
o = j["plan"]["overhead"]
assert o["calls_with_duration"] == 5 and o["calls_without_duration"] == 1, o
# the free at 700 returned at 700 + 1000: the span runs from 100 to 1700
assert o["time_in_calls_ns"] == 1056 and o["wall_span_ns"] == 1600, o
assert abs(o["share"] - 1056 / 1600) < 1e-9, o
'
fi

# multi: 100, +200 (other process, same address), +300 on device 1 = 600.
imported multi 6 3 600 '{"alloc": 3, "free": 3}'
json_check pids '[p["pid"] for p in j["processes"]]' '[100, 200]'
json_check devices '[[d["process_id"], d["ordinal"]] for d in j["devices"]]' \
	'[[1, 0], [1, 1], [2, 0]]'
json_check by_device \
	'[[d["device"], d["peak_live_bytes"]] for d in j["summary"]["by_device"]]' \
	'[[0, 300], [1, 300]]'

# pool: 1 MiB, 2 MiB, 4 MiB (peak), 3, 2, 0, then 64 KiB twice; the pool
# maps 2 + 2 MiB and unmaps 3 MiB.
imported pool 11 5 4194304 '{"alloc": 5, "free": 3, "map": 2, "unmap": 1}'
step "reserved bytes of the pool follow its size"
expect_eq "$(sql pool.db "SELECT sum(CASE op WHEN 6 THEN size ELSE -size END) FROM events
	WHERE op IN (6, 7)")" 1048576 "pool bytes mapped at the end"

# pairing: unmatched free of 64 (no change), 128, implied free, 256 (peak), 0.
imported pairing 5 2 256 '{"alloc": 2, "free": 3}' \
	"1 frees of unknown addresses kept as unmatched" \
	"1 allocations at an address still live" \
	"2 records of a kind memprof does not know skipped"
json_check unmatched 'j["summary"]["unmatched_frees"]' 1
json_check lossy 'j["lossy"]' true

step "several exports into one trace"
mp import -o "$W/both.db" basic.sqlite multi.sqlite
expect_status 0
expect_stdout_line "wrote '$W/both.db': 12 events, 7 allocations"
expect_eq "$(sql both.db "SELECT value FROM meta WHERE key = 'source'")" nsys "source of two"

# --- refused ----------------------------------------------------------------------------

# refused FILE [--format=nsys] TEXT...: import fails with exit 1, one message
# naming FILE with each TEXT (and hint lines), and writes nothing.
refused() {
	local file=$1 fmt="" t
	shift
	if [ "${1:-}" = --format=nsys ]; then
		fmt=$1
		shift
	fi
	step "refuse $file $fmt"
	mp import $fmt -o "$OUTDIR/out.db" "$file"
	expect_status 1
	expect_one_message "memprof import: "
	expect_stderr_contains "'$file'"
	for t in "$@"; do
		expect_stderr_contains "$t"
	done
	expect_stdout_empty
	expect_dir_empty "$OUTDIR"
}

export_of no-memory
refused no-memory.sqlite "no CUDA memory events" \
	"the report was recorded without --cuda-memory-usage=true"
expect_stderr_contains "hint: record with 'nsys profile --trace=cuda --cuda-memory-usage=true'"

export_of negative-bytes
refused negative-bytes.sqlite \
	"invalid row 'negative-bytes.sqlite': CUDA_GPU_MEMORY_USAGE_EVENTS row 2: negative bytes -5"
export_of null-device
refused null-device.sqlite "row 3: deviceId is NULL"
export_of bad-oper
refused bad-oper.sqlite "row 2: memoryOperationType 5 is neither an allocation nor a deallocation"
export_of missing-column
refused missing-column.sqlite "missing column" "has no column bytes"

step "a memprof trace is not an export"
refused basic.db --format=nsys "not an Nsight Systems export" "memprof trace"
refused basic.db "unknown trace format"

printf 'ts_ns,op,id,size\n1,alloc,1,8\n' >text.sqlite
refused text.sqlite --format=nsys "not an Nsight Systems export" "not a SQLite database"
: >empty.sqlite
refused empty.sqlite --format=nsys "not a SQLite database"

head -c 3000 basic.sqlite >cut.sqlite
refused cut.sqlite "cannot read SQLite database"
refused cut.sqlite --format=nsys "cannot read SQLite database"
awk 'BEGIN { printf "SQLite format 3%c", 0; for (i = 0; i < 8192; i++) printf "%c", (i * 37 + 11) % 256 }' \
	>garbage.sqlite
refused garbage.sqlite --format=nsys "cannot read SQLite database"

"$SQLITE3_SHELL" other.sqlite 'CREATE TABLE t(x); INSERT INTO t VALUES (1);' ||
	die "sqlite3 cannot make other.sqlite"
refused other.sqlite "unknown trace format"
refused other.sqlite --format=nsys "a SQLite database without the tables of one"

for fmt in "" --format=nsys; do
	step "an export on standard input $fmt"
	LAST_CMD="memprof import $fmt -o out.db - < basic.sqlite"
	"$MEMPROF" import $fmt -o "$OUTDIR/out.db" - <basic.sqlite >"$OUT" 2>"$ERR"
	status=$?
	expect_status 1
	expect_one_message "memprof import: "
	expect_stderr_contains "'<stdin>' as an Nsight Systems export"
	expect_stderr_contains "give its path"
	expect_dir_empty "$OUTDIR"
done

step "an export through a pipe that has a name"
mp import -o "$OUTDIR/out.db" <(cat basic.sqlite)
expect_status 1
expect_one_message "memprof import: "
expect_stderr_contains "not a regular file"
expect_dir_empty "$OUTDIR"

step "help lists the format"
mp import --help
expect_status 0
expect_stdout_match '^  nsys +Nsight Systems SQLite export'

finish
