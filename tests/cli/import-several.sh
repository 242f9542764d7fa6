#!/bin/bash
# import-several.sh - several input files into one trace (events merged in
# timestamp order, each file with its own processes), and the progress line
# shown on a terminal only.
set -u
. "$(dirname "$0")/lib.sh"

W=$TMP/work
mkdir "$W" || die "mkdir $W"
cd "$W" || die "cd $W"

cat >a.csv <<'CSV'
ts_ns,op,id,size,pid
10,alloc,1,100,7
30,alloc,2,200,7
50,free,1,,7
CSV
cat >b.csv <<'CSV'
ts_ns,op,id,size,pid
20,alloc,1,1000,7
30,alloc,2,2000,7
40,free,9,,7
CSV

step "two files into one trace"
mp import -o ab.db a.csv b.csv
expect_status 0
expect_stdout_line "wrote 'ab.db': 6 events, 4 allocations"
expect_stderr_contains "warning: 1 frees of unknown addresses kept as unmatched"

step "events in timestamp order, ties in file order, ids kept per file"
mp export ab.db
expect_status 0
cut -d, -f1-4 "$OUT" >cols.csv
printf '%s\n' ts_ns,op,id,size 10,alloc,1,100 20,alloc,1,1000 30,alloc,2,200 30,alloc,2,2000 \
	40,free,9,0 50,free,1,100 >expected.csv
expect_same_file expected.csv cols.csv

step "each file keeps its own process, though both say pid 7"
expect_eq "$(sql ab.db 'SELECT count(*) FROM processes')" 2 "processes"
expect_eq "$(sql ab.db 'SELECT count(DISTINCT process) FROM events WHERE alloc_id = 1')" 2 \
	"id 1 of each file"
expect_eq "$(sql ab.db "SELECT value FROM meta WHERE key = 'source_file'")" "a.csv, b.csv" \
	"source_file"
expect_eq "$(sql ab.db "SELECT value FROM meta WHERE key = 'import_warnings'")" \
	"1 frees of unknown addresses kept as unmatched" "import_warnings"

step "info sees both files' allocations"
mp info --json ab.db
expect_status 0
expect_stdout_contains '"peak_live_bytes":	3300'

step "a bad second file leaves nothing behind"
printf 'ts_ns,op,id,size\n1,alloc,1,x\n' >bad.csv
mp import -o abad.db a.csv bad.csv
expect_status 1
expect_stderr_contains "bad.csv:2"
expect_file_absent abad.db
expect_no_temp_files "$W"

# --- progress -----------------------------------------------------------------------------
awk 'BEGIN { print "ts_ns,op,id,size"; for (i = 1; i <= 300000; i++) printf "%d,alloc,%d,64\n", i, i }' \
	>big.csv
step "no progress when stderr is not a terminal"
mp import -o big.db big.csv
expect_status 0
expect_stderr_not_contains "% read"
if command -v script >/dev/null 2>&1; then
	step "progress on a terminal"
	run script -qec "'$MEMPROF' import -f -o big.db big.csv" /dev/null
	expect_status 0
	expect_stdout_contains "memprof import: big.csv:"
	expect_stdout_contains "% read, 0.3M events"
else
	say "note: no script(1): progress on a terminal not checked"
fi

finish
