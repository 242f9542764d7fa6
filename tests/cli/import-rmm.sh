#!/bin/bash
# import-rmm.sh - RMM logging_resource_adaptor logs end to end: detection,
# the events 'memprof export' gives back, figures 'memprof info' computes,
# warnings, a cut-off log, standard input, two logs at once, and bad input
# (exit 1, one message naming file and line, nothing written).
#
# tests/cli/data/rmm/job.dev1.csv, worked out by hand (device 1 from the name;
# live bytes after each event; row 5 is logged out of order, 10 us before
# row 4, and keeps row 4's time):
#   seq  ts (ns since midnight)  event                           live
#    1   56822841961000   alloc 1, 1 MiB    at 0x7f4a00000000  1048576
#    2   56822842010000   alloc 2, 2 MiB    at 0x7f4a00100000  3145728
#    3   56822842015000   alloc 3, 512 KiB  at 0x7f4a00300000  3670016
#    4   56822842100000   free 1                               2621440
#    5   56822842100000   alloc 4, 4 MiB    at 0x7f4a00000000  6815744 <- peak
#    6   56822842300000   oom, 80 GiB requested                6815744
#    7   56822842400000   free 3                               6291456
#    8   56822842500000   free 2                               4194304
# events: alloc 4, free 3, oom 1; allocations 4, 1 live at the end.
set -u
. "$(dirname "$0")/lib.sh"

R=$DATA/rmm
W=$TMP/work
OUTDIR=$TMP/out
mkdir "$W" "$OUTDIR" || die "mkdir"
cd "$W" || die "cd $W"

have_python=0
command -v python3 >/dev/null 2>&1 && have_python=1

# json_check FILE NAME PYTHON-EXPRESSION EXPECTED: the expression on the parsed
# document j of FILE, as JSON text, must be EXPECTED.
json_check() {
	local got
	got=$(python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
print(json.dumps(eval(sys.argv[2]), sort_keys=True))' "$1" "$3" 2>&1)
	expect_eq "$got" "$4" "JSON $2"
}

# --- a small log, detected by its header -------------------------------------------
step "import job.dev1.csv"
mp import -o job.db "$R/job.dev1.csv"
expect_status 0
expect_stdout_line "wrote 'job.db': 8 events, 4 allocations"
expect_stderr_empty

step "export job.db"
mp export job.db
expect_status 0
cp "$OUT" job.out.csv
expect_same_file "$R/job.dev1.expected.csv" job.out.csv

step "info job.db"
mp info job.db
expect_status 0
expect_stdout_line "source       rmm from '$R/job.dev1.csv'"
expect_stdout_line "events       8 (alloc 4, free 3, oom 1)"
expect_stdout_line "allocations  4 (1 live at the end, 0 frees without an allocation)"
expect_stdout_line "processes    1: pid 0"
expect_stdout_line "devices      1: 1"
expect_stdout_match '^peak live .*\(6815744 B\) at 139 us, event 5$'
expect_stdout_match '^truncated +no$'
expect_stdout_match '^lossy +no$'
if have_sqlite3; then
	expect_eq "$(sql job.db "SELECT value FROM meta WHERE key = 'clock'")" \
		"time_of_day_ns (RMM log: wall clock without a date; midnight of the log's first day is 0)" "meta clock"
	expect_eq "$(sql job.db "SELECT count(*) FROM events WHERE device_free IS NULL")" 8 "device_free unknown"
fi
if [ "$have_python" = 1 ]; then
	mp info --json job.db
	expect_status 0
	cp "$OUT" job.json
	json_check job.json events_by_op 'j["summary"]["events_by_op"]' \
		'{"alloc": 4, "free": 3, "free_requested": 0, "map": 0, "oom": 1, "phase_begin": 0, "phase_end": 0, "preexisting": 0, "release": 0, "reserve": 0, "unmap": 0}'
	json_check job.json peak '[j["summary"]["peak_live_bytes"], j["summary"]["peak_ts_ns"], j["summary"]["peak_seq"]]' \
		'[6815744, 56822842100000, 5]'
	json_check job.json live_at_end 'j["summary"]["live_at_end"]' 1
	json_check job.json devices '[d["ordinal"] for d in j["devices"]]' '[1]'
else
	say "python3 not found: JSON checks skipped"
fi

# --- midnight ------------------------------------------------------------------------------
# 23:59:59.999000, then 00:00:00.000500 (the next day), then a line from
# 23:59:59.999900 that reached the log late (held), then 00:00:00.001000.
step "import midnight.csv"
mp import -o midnight.db "$R/midnight.csv"
expect_status 0
expect_stdout_line "wrote 'midnight.db': 4 events, 2 allocations"
expect_stderr_contains "memprof import: warning: 1 times of day that went backwards, taken as passing midnight"
mp export midnight.db
cp "$OUT" midnight.out.csv
expect_same_file "$R/midnight.expected.csv" midnight.out.csv
mp info midnight.db
expect_stdout_match '^lossy +no$'

# --- warnings ------------------------------------------------------------------------------
# alloc 1 (1000 B) at 0x100; alloc at 0x100 again: implied free of 1, alloc 2
# (2000 B); free of 0x900, never allocated (id 3); free of 0x100 saying 1500 B:
# frees 2 with its 2000 B.  Peak 2000 B at event 3.
step "import warnings.csv"
mp import -o warnings.db "$R/warnings.csv"
expect_status 0
expect_stdout_line "wrote 'warnings.db': 5 events, 2 allocations"
expect_stderr_contains "warning: 1 frees of unknown addresses kept as unmatched"
expect_stderr_contains "warning: 1 allocations at an address still live: the earlier allocation was closed by an implied free"
expect_stderr_contains "warning: 1 frees whose size differs from their allocation's: the allocation's size was kept"
mp info warnings.db
expect_stdout_line "events       5 (alloc 2, free 3)"
expect_stdout_line "allocations  2 (0 live at the end, 1 frees without an allocation)"
expect_stdout_match '^peak live .*\(2000 B\) at 1 us, event 3$'
expect_stdout_match '^lossy +yes$'
if have_sqlite3; then
	expect_eq "$(sql warnings.db "SELECT group_concat(op || ':' || alloc_id || ':' || size, ' ') FROM events")" \
		"1:1:1000 2:1:1000 1:2:2000 2:3:64 2:2:2000" "warnings.db events"
fi

# --- a log that lost its tail --------------------------------------------------------------
step "import cut.csv"
mp import -o cut.db "$R/cut.csv"
expect_status 0
expect_stdout_line "wrote 'cut.db': 2 events, 1 allocations"
expect_stderr_contains "warning: 1 cut-off last lines (the log lost its tail) dropped"
mp info cut.db
expect_stdout_match '^truncated +yes$'
expect_stdout_match '^lossy +yes$'

# --- standard input, and two logs at once ----------------------------------------------------
step "import from a pipe"
run sh -c 'cat "$1" | "$2" import -o "$3" -' sh "$R/job.dev1.csv" "$MEMPROF" stdin.db
expect_status 0
expect_stdout_line "wrote 'stdin.db': 8 events, 4 allocations"
mp info stdin.db
expect_stdout_line "devices      1: 0"

step "import two devices' logs"
cp "$R/job.dev1.csv" job.dev0.csv
mp import -o two.db job.dev0.csv "$R/job.dev1.csv"
expect_status 0
expect_stdout_line "wrote 'two.db': 16 events, 8 allocations"
mp info two.db
expect_stdout_line "processes    2: pid 0, pid 0"
expect_stdout_line "devices      2: 0 of pid 0, 1 of pid 0"
expect_stdout_match '^peak live .*\(13631488 B\)'

# --- a write that fails while the log is still being read ----------------------------------------
# 200000 rows (about 9 MB of trace) under a 2 MiB file-size limit: the writer
# fails, the reading thread stops, nothing is left behind.
step "import into a full disk"
awk 'BEGIN {
	print "Thread,Time,Action,Pointer,Size,Stream"
	for (i = 0; i < 100000; i++) {
		printf "7,10:%02d:%02d.%06d,allocate,0x%x,4096,0\n", i / 60000000 % 60, i / 1000000 % 60, i % 1000000, 4096 * i
		printf "7,10:%02d:%02d.%06d,free,0x%x,4096,0\n", i / 60000000 % 60, i / 1000000 % 60, i % 1000000, 4096 * i
	}
}' >big.csv
run bash -c 'trap "" XFSZ; ulimit -f 2048; exec "$1" import -o "$2" big.csv' sh "$MEMPROF" "$OUTDIR/big.db"
expect_status 1
expect_one_message "memprof import: "
expect_stderr_contains "cannot write trace '$OUTDIR/big.db'"
expect_dir_empty "$OUTDIR"

# --- bad input: nothing written ----------------------------------------------------------------
# bad NAME POSITION [TEXT...]: import NAME (written in $W) must fail with exit
# 1, one message naming 'NAME:POSITION' and holding each TEXT; $OUTDIR stays empty.
bad() {
	local name=$1 pos=$2 t
	shift 2
	step "bad $name"
	mp import -o "$OUTDIR/x.db" "$@" "$name"
	expect_status 1
	expect_one_message "memprof import: "
	expect_stderr_contains "'$name:$pos'"
	expect_stdout_empty
	expect_dir_empty "$OUTDIR"
}

printf 'Thread,Time,Action,Pointer,Size,Stream\n1,08:00:00.000000,allocate,0x10,8,0\n1,08:00:00.000001,free,0xg0,8,0\n' >badhex.csv
bad badhex.csv 3:24
expect_stderr_contains "invalid pointer"
expect_stderr_contains "found '0xg0'"

printf 'Thread,Time,Action,Pointer,Size,Stream\n1,08:00:00.000000,allocate,0x10,-8,0\n' >negsize.csv
bad negsize.csv 2:33
expect_stderr_contains "invalid size"

printf 'Thread,Time,Action,Pointer,Size,Stream\n1,08:00:00.000000,allocate,0x10,8\n' >short.log
bad short.log 2:34
expect_stderr_contains "wrong number of fields"
expect_stderr_contains "found 5"

printf 'Thread,Time,Action,Pointer,Size,Stream\n1,08:00:00.000000,reserve,0x10,8,0\n' >action.csv
bad action.csv 2:19
expect_stderr_contains "invalid action"

bad "job.out.csv" 1 --format=rmm
expect_stderr_contains "not an RMM log"

finish
