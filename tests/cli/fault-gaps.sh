#!/bin/bash
# fault-gaps.sh - faults while writing (issue 23 item 11): a full disk
# (/dev/full) names its reason for export --format=perfetto, report,
# analyze --timeline and check --json; a process killed while writing an
# output (SIGKILL, SIGUSR1, SIGALRM) leaves no file behind; a file-size
# limit (ulimit -f) gives import's message instead of killing it with
# SIGXFSZ; an endless torch input (/dev/zero) is refused at once.
set -u
. "$(dirname "$0")/lib.sh"

W=$TMP/work
mkdir "$W" || die "mkdir $W"
cd "$W" || die "cd $W"
# 100000 events: a report takes long enough to be caught while writing.
awk 'BEGIN {
	print "ts_ns,op,id,size,requested,address,device,stream,pid,phase,api,device_free,thread,stack"
	for (i = 1; i <= 100000; i++)
		printf "%d,alloc,%d,%d,1000,0x%x,%d,7,1000,phase%d,cudaMalloc,,,main@train.py:10;f%d@model.py:%d\n",
			i, i, 1024 + i, 140000000000 + i * 4096, i % 4, i % 50, i % 1000, i % 77
}' >big.csv
"$MEMPROF" import -q -o big.db big.csv || die "cannot import big.csv"

step "a full disk names its reason"
for cmd in "export --format=perfetto -o /dev/full" "report -o /dev/full" \
	"analyze --timeline=/dev/full" "check --json=/dev/full" "check --md=/dev/full"; do
	# shellcheck disable=SC2086 # the words of cmd on purpose
	mp $cmd big.db
	expect_status 1
	expect_stderr_contains "'/dev/full': No space left on device"
	expect_stderr_not_contains "unknown error"
	expect_stderr_contains "hint: free some space or write elsewhere"
done

# kill_while_writing SIG DIR CMD...: start CMD, wait until it holds a file
# open in DIR (the output being written), send SIG; DIR must end up empty.
kill_while_writing() {
	local sig=$1 dir=$2 pid end caught=0
	shift 2
	"$@" >/dev/null 2>&1 &
	pid=$!
	end=$((SECONDS + 60))
	while kill -0 "$pid" 2>/dev/null && [ $SECONDS -lt $end ]; do
		if ls -l "/proc/$pid/fd" 2>/dev/null | grep -qF -e "-> $dir/"; then
			kill -s "$sig" "$pid"
			caught=1
			break
		fi
		sleep 0.01
	done
	wait "$pid" 2>/dev/null
	if [ $caught = 1 ]; then pass; else fail "$* finished before it could be killed"; fi
	expect_dir_empty "$dir"
	rm -rf "${dir:?}"/*
}

mkdir "$W/out"
for sig in KILL USR1 ALRM; do
	step "report killed by SIG$sig while writing"
	LAST_CMD="memprof report -o $W/out/r.html big.db (SIG$sig)"
	kill_while_writing "$sig" "$W/out" "$MEMPROF" report -o "$W/out/r.html" big.db
done
for sig in USR1 ALRM; do
	step "import killed by SIG$sig while writing"
	LAST_CMD="memprof import -o $W/out/i.db big.csv (SIG$sig)"
	kill_while_writing "$sig" "$W/out" "$MEMPROF" import -q -o "$W/out/i.db" big.csv
done

step "ulimit -f: import says so instead of dying of SIGXFSZ"
# SIGXFSZ not ignored here: memprof must ignore it itself.
LAST_CMD="(ulimit -f 1024; memprof import -o $W/out/x.db big.csv)"
(
	trap - XFSZ
	ulimit -f 1024 || exit 99
	exec "$MEMPROF" import -o "$W/out/x.db" big.csv
) >"$OUT" 2>"$ERR" </dev/null
status=$?
expect_status 1
expect_stderr_contains "memprof import: "
expect_stderr_contains "hint: free some space or write elsewhere"
expect_dir_empty "$W/out"

step "import --format=torch /dev/zero is refused at once"
# The address-space limit keeps a memprof that reads on from taking the
# machine's memory; AddressSanitizer needs more address space than that.
vlimit=2000000
if ldd "$MEMPROF" 2>/dev/null | grep -q libasan; then vlimit=unlimited; fi
LAST_CMD="(ulimit -v $vlimit; memprof import --format=torch -o $W/out/z.db /dev/zero)"
(
	ulimit -v "$vlimit" || exit 99
	exec timeout 60 "$MEMPROF" import --format=torch -o "$W/out/z.db" /dev/zero
) >"$OUT" 2>"$ERR" </dev/null
status=$?
expect_status 1
expect_stderr_contains "invalid pickle '/dev/zero' at byte 0: unknown opcode 0x00"
expect_dir_empty "$W/out"

finish
