#!/bin/bash
# trace-extremes.sh - hostile values at the limits of 64 bits (issue 23,
# item 9): once signed overflows (UBSan) or wrong figures ("time span -1 ns").
#   spool header start times whose difference overflows (import/spool.c)
#   a device ordinal of 2^31-1 through merge (import/merge_devices.c)
#   timestamps at the int64 limits: info, analyze, report and report BASE HEAD
#   (report/info.c, analysis/frag.c, report/report_html*.c)
#   merging such a trace onto another clock (import/merge_clock.c)
#   a stored replay metric of 1e308 (util/format.c, after a cast to int64)
# Run under the sanitizer build too: there each of these was a crash.
set -u
. "$(dirname "$0")/lib.sh"

command -v python3 >/dev/null || skip "no python3 to make the traces"
python3 -c 'import sqlite3' 2>/dev/null || skip "python3 has no sqlite3 module"

W=$TMP/work
mkdir "$W" && cd "$W" || die "cannot make $W"
"$MEMPROF" import -q -o good.db "$DATA/small.csv" || die "cannot import small.csv"

# edit DB SQL: run SQL on a copy of good.db written to DB
edit() {
	cp good.db "$1"
	python3 -c 'import sqlite3,sys; db = sqlite3.connect(sys.argv[1]); db.executescript(sys.argv[2]); db.commit()' \
		"$1" "$2" || die "cannot make $1"
}

step "a spool whose start times differ by more than 2^63 ns"
"$top_builddir/tests/tools/spool_script" clock.mpt <<'EOF' || die "spool_script failed"
header pid=7 start=-9000000000000000000 start_unix=9000000000000000000
device 0 name="GPU"
event kind=mem_alloc ts=-8999999999999999000 addr=0x1000 bytes=512 device=0 corr=1
event kind=mem_free ts=-8999999999999998000 addr=0x1000 bytes=512 device=0 corr=2
end
EOF
mp import -o clock.db clock.mpt
expect_status 0
expect_stderr_contains "give no offset in 64 bits"
expect_eq "$(python3 -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT count(*) FROM meta WHERE key = \"clock_unix_offset_ns\"").fetchone()[0])' clock.db)" \
	0 "clock_unix_offset_ns kept from such a spool"

step "timestamps at the int64 limits"
edit limits.db "UPDATE events SET ts_ns = -9223372036854775808 WHERE seq = 1;
	UPDATE events SET ts_ns = 9223372036854775807 WHERE seq = (SELECT max(seq) FROM events);"
mp info limits.db
expect_status 0
expect_stdout_match '^time span +9223372036\.855 s'
expect_stdout_not_contains "span    -"
expect_stdout_contains "(-9223372036854775808 ns to 9223372036854775807 ns)"
edit at-max.db "UPDATE events SET ts_ns = 9223372036854775807;"
for c in "analyze limits.db" "analyze --json limits.db" "report -o $W/limits.html limits.db" \
	"report -o $W/diff.html limits.db good.db" "report -o $W/at-max.html at-max.db" \
	"report -o $W/diff2.html at-max.db limits.db"; do
	step "$c: timestamps at the int64 limits"
	# shellcheck disable=SC2086
	mp $c
	expect_status 0
done

step "reversed timestamps: the span runs from the earliest to the latest"
edit reversed.db "UPDATE events SET ts_ns = 5000000 - ts_ns * 1000;"
mp info reversed.db
expect_status 0
expect_stdout_not_contains "span    -"
expect_stdout_contains "events earlier than the one before them"

step "merging a trace at the int64 limits onto another clock"
edit other-clock.db "UPDATE meta SET value = 'unix_epoch_ns' WHERE key = 'clock';
	UPDATE processes SET pid = pid + 1000;"
mp merge -o merged.db limits.db other-clock.db
expect_status 1
expect_one_message "memprof merge: "
expect_stderr_contains "cannot merge 'limits.db'"
expect_stderr_contains "64-bit range"
expect_file_absent merged.db

step "a device ordinal of 2^31-1 through merge"
# one host, GPUs known by UUID: the same GPUs in both, so ordinals are kept
big="UPDATE events SET device = 2147483647 WHERE device = 1;
	UPDATE devices SET ordinal = 2147483647 WHERE ordinal = 1;
	UPDATE devices SET uuid = 'GPU-' || ordinal; UPDATE processes SET host = 'h';"
edit big-ordinal.db "$big"
edit big-ordinal2.db "$big UPDATE processes SET pid = pid + 1000;"
mp merge -o merged.db big-ordinal.db big-ordinal2.db
expect_status 0
expect_stdout_contains "from 2 traces, 4 processes, 3 devices"
expect_stdout_contains "2147483647 = "
mp import -o big-again.db --format=trace big-ordinal.db
expect_status 0

step "a stored replay metric of 1e308"
"$MEMPROF" replay -q --pool=direct --backend=sim good.db >/dev/null 2>&1 ||
	"$MEMPROF" replay --pool=direct --backend=sim good.db >/dev/null || die "cannot replay"
edit huge-metric.db "UPDATE replay_metrics SET value = 1e308;"
for c in "report -o $W/huge.html" "report --format=md" "check --max-peak=1GiB" "diff good.db"; do
	step "$c on a replay metric of 1e308"
	# shellcheck disable=SC2086
	mp $c huge-metric.db
	expect_status 1
	expect_stderr_contains "corrupt trace 'huge-metric.db': replay metric"
	expect_stderr_contains "1e+308"
done

finish
