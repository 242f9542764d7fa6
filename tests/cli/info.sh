#!/bin/bash
# info.sh - 'memprof info' on a fixture whose figures were worked out by hand,
# as text and as JSON.
#
# tests/cli/data/info.csv: one process (pid 77), devices 0 and 1.  Live bytes
# (block level: alloc and preexisting, taken back by free) after each event:
#   seq  ts    event                       total   dev0   dev1
#    1   100   preexisting 1, 4096, dev0    4096   4096      0
#    2   200   phase_begin                  4096
#    3   300   alloc 2, 1024, dev0          5120   5120
#    4   400   alloc 3, 8192, dev1         13312          8192  <- dev1 peak
#    5   500   reserve 100 (segment)       13312
#    6   600   free 2, dev0                12288   4096
#    7   700   alloc 2 again, 2048, dev0   14336   6144         <- peak, dev0 peak
#    8   800   free 3, dev1                 6144             0
#    9   900   free 55 (never allocated)    6144                 unmatched
#   10  1000   alloc 4, 512, dev1           6656           512
#   11  1100   oom                          6656
#   12  1200   release 100                  6656
#   13  1300   phase_end                    6656
#   14  1400   free 1, dev0                 2560   2048
# Peak 14336 B at event 7 (ts 700, 600 ns after the first event); live at the
# end: 2 (ids 2 and 4); allocations 5; frees without an allocation 1.
set -u
. "$(dirname "$0")/lib.sh"

W=$TMP/work
mkdir "$W" || die "mkdir $W"
cd "$W" || die "cd $W"

step "import info.csv"
mp import -o info.db "$DATA/info.csv"
expect_status 0
expect_stdout_line "wrote 'info.db': 14 events, 5 allocations"

step "info (text)"
mp info info.db
expect_status 0
expect_stderr_empty
expect_stdout_match '^trace +info\.db$'
expect_stdout_match '^schema +v3$'
expect_stdout_line "source       csv from '$DATA/info.csv'"
expect_stdout_match '^written by +memprof [0-9]'
expect_stdout_line "events       14 (alloc 4, free 4, preexisting 1, reserve 1, release 1, oom 1, phase_begin 1, phase_end 1)"
expect_stdout_line "allocations  5 (2 live at the end, 1 frees without an allocation)"
expect_stdout_line "processes    1: pid 77"
expect_stdout_line "devices      2: 0, 1"
expect_stdout_match '^time span .*\(100 ns to 1400 ns\)$'
expect_stdout_match '^peak live .*\(14336 B\) at 600 ns, event 7$'
expect_stdout_match '^  device 0 .*\(6144 B\) at event 7$'
expect_stdout_match '^  device 1 .*\(8192 B\) at event 4$'
expect_stdout_match '^truncated +no$'
expect_stdout_match '^lossy +no$'
expect_stdout_match '^dropped +0 records$'

step "info on a trace without events"
mp import -o empty.db "$DATA/header.csv"
expect_status 0
mp info empty.db
expect_status 0
expect_stdout_match '^events +0$'
expect_stdout_match '^peak live .*\(0 B\)$'

step "info --json"
mp info --json info.db
expect_status 0
expect_stderr_empty
cp "$OUT" "$W/info.json"
if ! command -v python3 >/dev/null 2>&1; then
	say "python3 not found: JSON checks skipped"
	finish
fi

# json_check NAME PYTHON-EXPRESSION EXPECTED: evaluate the expression on the
# parsed document j and compare its JSON text with EXPECTED.
json_check() {
	local got
	got=$(python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
print(json.dumps(eval(sys.argv[2]), sort_keys=True))' "$W/info.json" "$2" 2>&1)
	expect_eq "$got" "$3" "JSON $1"
}

if python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$W/info.json" 2>"$TMP/json.err"; then
	pass
	json_check version 'j["memprof_info_version"]' 3
	json_check trace 'j["trace"]' '"info.db"'
	json_check schema 'j["schema_version"]' 3
	json_check source 'j["source"]' '"csv"'
	json_check source_file 'j["source_file"]' "\"$DATA/info.csv\""
	json_check flags '[j["truncated"], j["lossy"], j["dropped_records"]]' '[false, false, 0]'
	json_check pids '[p["pid"] for p in j["processes"]]' '[77]'
	json_check devices '[d["ordinal"] for d in j["devices"]]' '[0, 1]'
	json_check events 'j["summary"]["events"]' 14
	json_check events_by_op 'j["summary"]["events_by_op"]' \
		'{"alloc": 4, "free": 4, "free_requested": 0, "map": 0, "oom": 1, "phase_begin": 1, "phase_end": 1, "preexisting": 1, "release": 1, "reserve": 1, "unmap": 0}'
	json_check allocations 'j["summary"]["allocations"]' 5
	json_check live_at_end 'j["summary"]["live_at_end"]' 2
	json_check unmatched_frees 'j["summary"]["unmatched_frees"]' 1
	json_check time_span '[j["summary"]["first_ts_ns"], j["summary"]["last_ts_ns"]]' '[100, 1400]'
	json_check peak '[j["summary"]["peak_live_bytes"], j["summary"]["peak_ts_ns"], j["summary"]["peak_seq"]]' \
		'[14336, 700, 7]'
	json_check by_device \
		'[[d["device"], d["peak_live_bytes"], d["peak_live_ts_ns"], d["peak_live_seq"]] for d in j["summary"]["by_device"]]' \
		'[[0, 6144, 700, 7], [1, 8192, 400, 4]]'
	# dev0: segment 100 (2 MiB) reserved at event 5, released at 12; live at the
	# end id 2 (2048 B); no segment holds it, so free-in-reserved is unknown.
	# dev1: no segment level at all; live at the end id 4 (512 B).
	json_check by_device_end \
		'[[d["device"], d["peak_reserved_bytes"], d["peak_reserved_seq"], d["end"]] for d in j["summary"]["by_device"]]' \
		'[[0, 2097152, 5, {"free_in_reserved_bytes": null, "internal_fragmentation_bytes": 0, "live_bytes": 2048, "requested_bytes": 2048, "reserved_bytes": 0}], [1, null, null, {"free_in_reserved_bytes": null, "internal_fragmentation_bytes": 0, "live_bytes": 512, "requested_bytes": 512, "reserved_bytes": null}]]'
else
	fail "info --json is not valid JSON: $(cat "$TMP/json.err")"
fi

finish
