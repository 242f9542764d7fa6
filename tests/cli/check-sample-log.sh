#!/bin/bash
# check-sample-log.sh - tests/gpu/check_sample_log.py, the checker of the GPU test
# tests/gpu/record-samples.sh, without a GPU: a hand-written sample log
# (data/sample-log/fake-sample.txt) against traces imported with 'memprof import' from a
# hand-written CSV that agrees with it (exit 0), and from copies with one thing wrong
# each: the checker must exit 1 and name what is wrong.  Unreadable input: exit 2.
set -u
. "$(dirname "$0")/lib.sh"

command -v python3 >/dev/null || skip "python3 is needed to run the checker"
python3 -c 'import sqlite3' 2>/dev/null || skip "python3 has no sqlite3 module"
CHECK=$top_srcdir/tests/gpu/check_sample_log.py
D=$DATA/sample-log
cd "$TMP" || die "cd $TMP"

# trace NAME CSV: import CSV into NAME.db
trace() {
	"$MEMPROF" import -q -f -o "$1.db" "$2" >/dev/null 2>import.err ||
		die "memprof import of $2 failed: $(cat import.err)"
}

# variant NAME SED-SCRIPT: fake.csv edited by SED-SCRIPT, imported as NAME.db
variant() {
	sed -e "$2" "$D/fake.csv" >"$1.csv"
	cmp -s "$D/fake.csv" "$1.csv" && die "variant $1: the edit changed nothing"
	trace "$1" "$1.csv"
}

step "the trace that agrees with the log"
trace good "$D/fake.csv"
run python3 "$CHECK" "$D/fake-sample.txt" good.db
expect_status 0
expect_stdout_contains "fake: the trace agrees with the log"
expect_stdout_match "^  allocations \(device, managed\) +6 +6$"
expect_stdout_match "^  frees +5 +5$"
expect_stdout_match "^  leaked \(never freed\) +1 +1$"
expect_stdout_match "^  maps +2 +2$"
expect_stdout_match "^  NVTX ranges as phases +4 +4$"
expect_stdout_not_contains "mismatch"

# each: NAME, the edit of the CSV, a line the checker must print
while IFS='|' read -r name edit says; do
	[ -n "$name" ] || continue
	step "$name"
	variant "$name" "$edit"
	run python3 "$CHECK" "$D/fake-sample.txt" "$name.db"
	expect_status 1
	expect_stdout_contains "$says"
	expect_stdout_contains "<-- mismatch"
done <<'CASES'
missing-free|/^130,free,2,/d|missing free: cudaFree ptr=0x7f0000200000 (log line 7) of the alloc of 1048576 bytes
wrong-size|s/^310,alloc,5,3145728,3145728,/310,alloc,5,3149824,3149824,/|wrong size: cuMemAlloc ptr=0x7f0000600000 (log line 17, trace event
missing-alloc|/^210,alloc,3,/d|missing alloc: cudaMalloc ptr=0x7f0000400000 bytes=2097152 (log line 13)
extra-alloc|/^400,alloc/i 399,alloc,7,512,512,0x7f0000c00000,0,0,4242,,cudaMalloc|extra alloc in the trace: event
leak-freed|$a 700,free,5,0,0,0x7f0000600000,0,0,4242,,cuMemFree_v2|unexpected free: cuMemAlloc ptr=0x7f0000600000
pinned-kept|/^400,alloc/i 399,alloc,7,4096,4096,0x7fff00000000,0,0,4242,,cudaMallocHost|pinned host block ptr=0x7fff00000000 is an allocation in the trace
wrong-api|s/^230,alloc,4,\(.*\),cudaMalloc$/230,alloc,4,\1,cudaMallocAsync/|trace says cudaMallocAsync
missing-map|/^530,map,/d|missing map: ptr=0x7e0000200000 bytes=2097152
missing-phase|/^200,phase_begin,/d|phase 'reuse': pushed 1 time(s), the trace begins it 0 time(s)
CASES

step "nccl-like: extra=allowed accepts allocations the sample did not log"
sed 's/extra=none/extra=allowed/' "$D/fake-sample.txt" >allowed.log
variant extra2 '/^400,alloc/i 399,alloc,7,512,512,0x7f0000c00000,0,0,4242,,cuMemCreate'
run python3 "$CHECK" allowed.log extra2.db
expect_status 0
expect_stdout_match "^  extra \(not the sample's\) allocations in the trace +any +1$"

step "a loop line: N allocs and N frees of its size"
printf '%s\n' "memprof-sample begin sample=alloc_runtime pid=7 devices=1 extra=none" \
	"memprof-sample loop api=cudaMalloc,cudaFree pairs=3 bytes=1048576 loop_ns=10" >loop.log
{
	echo "ts_ns,op,id,size,requested,address,pid,api"
	for i in 1 2 3; do
		echo "${i}0,alloc,$i,2097152,1048576,0x1000,7,cudaMalloc"
		echo "${i}5,free,$i,0,0,0x1000,7,cudaFree"
	done
} >loop.csv
trace loop loop.csv
run python3 "$CHECK" loop.log loop.db
expect_status 0
expect_stdout_match "^  loop frees +3 +3$"
grep -v '^35,' loop.csv >loop2.csv
trace loop2 loop2.csv
run python3 "$CHECK" loop.log loop2.db
expect_status 1
expect_stdout_contains "3 cudaMalloc/cudaFree pairs of 1048576 bytes, the trace has 3 allocs and 2 frees"

step "unreadable input: exit 2 with a reason"
run python3 "$CHECK" "$D/fake.csv" good.db
expect_status 2
expect_stderr_contains "has no 'memprof-sample begin' line"
run python3 "$CHECK" "$D/fake-sample.txt" "$D/fake.csv"
expect_status 2
expect_stderr_contains "cannot read trace"
run python3 "$CHECK" "$D/fake-sample.txt" missing.db
expect_status 2
run python3 "$CHECK" "$D/fake-sample.txt"
expect_status 2
expect_stderr_contains "usage: check_sample_log.py"

finish
