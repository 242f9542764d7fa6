#!/bin/bash
# write-errors.sh - outputs that cannot be written: a read-only directory and
# a full disk (simulated with a file-size limit, RLIMIT_FSIZE).  memprof must
# exit 1 with a message naming the output, never crash, and leave neither the
# output nor a temporary file behind.
set -u
. "$(dirname "$0")/lib.sh"

W=$TMP/work
mkdir "$W" || die "mkdir $W"
cd "$W" || die "cd $W"

# A trace to export, and a generated CSV large enough to pass the limits below
# (50000 events: some 5 MB of CSV, a trace database of about 7 MB).
cp "$DATA/small.csv" "$W/small.csv" || die "cannot copy small.csv"
"$MEMPROF" import -q -o "$W/small.db" "$W/small.csv" || die "cannot import small.csv"
awk 'BEGIN {
	print "ts_ns,op,id,size,requested,address,device,stream,pid,phase,api,device_free,thread,stack"
	for (i = 1; i <= 50000; i++)
		printf "%d,alloc,%d,%d,1000,0x%x,%d,7,%d,phase%d,cudaMalloc,,,main@train.py:10;f%d@model.py:%d\n",
			i, i, 1024 + i, 140000000000 + i * 4096, i % 4, 1000 + i % 3, i % 50, i % 1000, i % 77
}' >"$W/big.csv"
"$MEMPROF" import -q -o "$W/big.db" "$W/big.csv" || die "cannot import big.csv"

# --- a read-only output directory ------------------------------------------------------------
# Permissions do not stop root: run memprof as 'nobody' then, through setpriv.
AS=()
ro_ok=1
if [ "$(id -u)" -eq 0 ]; then
	if command -v setpriv >/dev/null 2>&1; then
		AS=(setpriv --reuid=65534 --regid=65534 --clear-groups)
		chmod 755 "$TMP" "$W"
		chmod 644 "$W/small.db" "$W/small.csv"
		if ! ${AS[@]+"${AS[@]}"} "$MEMPROF" --version >/dev/null 2>&1; then
			say "SKIP read-only directory: user nobody cannot run '$MEMPROF'"
			ro_ok=0
		elif ! ${AS[@]+"${AS[@]}"} test -r "$W/small.db" || ! ${AS[@]+"${AS[@]}"} test -r "$W/small.csv"; then
			say "SKIP read-only directory: user nobody cannot read the inputs"
			ro_ok=0
		fi
	else
		say "SKIP read-only directory: running as root and setpriv (util-linux) is missing"
		ro_ok=0
	fi
fi
if [ "$ro_ok" -eq 1 ]; then
	mkdir "$W/ro"
	chmod 555 "$W/ro"

	step "import into a read-only directory"
	run ${AS[@]+"${AS[@]}"} "$MEMPROF" import -o "$W/ro/x.db" "$W/small.csv"
	expect_status 1
	expect_one_message "memprof import: "
	expect_stderr_contains "'$W/ro/x.db'"
	expect_stderr_contains "Permission denied"
	expect_stdout_empty
	expect_dir_empty "$W/ro"

	step "import with the default output name in a read-only directory"
	run ${AS[@]+"${AS[@]}"} sh -c 'cd "$1" && exec "$2" import "$3"' sh "$W/ro" "$MEMPROF" "$W/small.csv"
	expect_status 1
	expect_stderr_contains "'small.db'"
	expect_dir_empty "$W/ro"

	step "export -o into a read-only directory"
	run ${AS[@]+"${AS[@]}"} "$MEMPROF" export -o "$W/ro/x.csv" "$W/small.db"
	expect_status 1
	expect_one_message "memprof export: "
	expect_stderr_contains "'$W/ro/x.csv'"
	expect_stderr_contains "Permission denied"
	expect_stdout_empty
	expect_dir_empty "$W/ro"
	chmod 755 "$W/ro"
fi

# --- a full disk: RLIMIT_FSIZE ---------------------------------------------------------------------
# ulimit -f counts 1024-byte blocks in bash (512 in POSIX mode): either way the
# limit (at most 2 MiB) is well under the outputs (several MB).  SIGXFSZ is
# ignored so that write() fails with EFBIG instead of killing the process.
LIMIT=2048

# limited DIR CMD...: run CMD in DIR under the file-size limit, its output in
# $OUT and $ERR, its exit status in $status.
limited() {
	local dir=$1
	shift
	LAST_CMD="(cd $dir; ulimit -f $LIMIT; $*)"
	(
		cd "$dir" || exit 99
		trap '' XFSZ
		ulimit -f "$LIMIT" || exit 99
		exec "$@"
	) >"$OUT" 2>"$ERR" </dev/null
	status=$?
}

mkdir "$W/full"

step "import past the file-size limit"
limited "$W" "$MEMPROF" import -o "$W/full/big.db" "$W/big.csv"
expect_status 1
expect_one_message "memprof import: "
expect_stderr_contains "'$W/full/big.db'"
expect_stdout_empty
expect_dir_empty "$W/full"

step "import past the file-size limit, default output name"
limited "$W/full" "$MEMPROF" import ../big.csv
expect_status 1
expect_stderr_contains "'big.db'"
expect_dir_empty "$W/full"

step "import --force past the file-size limit keeps the old trace"
cp "$W/small.db" "$W/full/keep.db"
limited "$W" "$MEMPROF" import --force -o "$W/full/keep.db" "$W/big.csv"
expect_status 1
expect_stderr_contains "'$W/full/keep.db'"
expect_same_file "$W/small.db" "$W/full/keep.db"
expect_no_temp_files "$W/full"
rm -f "$W/full/keep.db"

step "export -o past the file-size limit"
limited "$W" "$MEMPROF" export -o "$W/full/big.csv" "$W/big.db"
expect_status 1
expect_one_message "memprof export: "
expect_stderr_contains "'$W/full/big.csv'"
expect_stdout_empty
expect_dir_empty "$W/full"

step "export -o --force past the file-size limit keeps the old file"
printf 'old\n' >"$W/full/old.csv"
limited "$W" "$MEMPROF" export --force -o "$W/full/old.csv" "$W/big.db"
expect_status 1
expect_stderr_contains "'$W/full/old.csv'"
expect_eq "$(cat "$W/full/old.csv")" old "content of old.csv"
expect_no_temp_files "$W/full"

step "export to standard output past the file-size limit"
LAST_CMD="(ulimit -f $LIMIT; memprof export big.db > file)"
(
	trap '' XFSZ
	ulimit -f "$LIMIT" || exit 99
	exec "$MEMPROF" export "$W/big.db"
) >"$W/full/stdout.csv" 2>"$ERR" </dev/null
status=$?
: >"$OUT"
expect_status 1
expect_one_message "memprof export: "
if grep -qE "<stdout>|standard output" "$ERR"; then pass; else fail "the message should name standard output"; fi

step "the limits were really reached"
# Without the limit the same commands succeed: the failures above came from it.
mp export -o "$W/big.out.csv" "$W/big.db"
expect_status 0
size=$(wc -c <"$W/big.out.csv")
if [ "$size" -gt $((LIMIT * 1024)) ]; then pass; else fail "export is only $size bytes: raise the event count"; fi
size=$(wc -c <"$W/big.db")
if [ "$size" -gt $((LIMIT * 1024)) ]; then pass; else fail "big.db is only $size bytes: raise the event count"; fi

finish
