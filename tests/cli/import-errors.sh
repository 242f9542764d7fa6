#!/bin/bash
# import-errors.sh - malformed inputs: import exits 1 with one message naming
# the file, the line (and column where there is one) and the problem, and
# leaves no output and no temporary file behind.
set -u
. "$(dirname "$0")/lib.sh"

W=$TMP/work
OUTDIR=$TMP/out
mkdir "$W" "$OUTDIR" || die "mkdir"
cd "$W" || die "cd $W"

HEADER='ts_ns,op,id,size,requested,address,device,stream,pid,phase,api,device_free,thread,stack'

# bad NAME POSITION [TEXT...]: import NAME.csv (already written in $W) must fail
# with exit 1, one message naming 'NAME.csv:POSITION' (or 'NAME.csv' when
# POSITION is empty) and containing each TEXT, and leave $OUTDIR empty.
bad() {
	local name=$1 pos=$2 t
	shift 2
	step "$name"
	mp import -o "$OUTDIR/$name.db" "$name.csv"
	expect_status 1
	expect_one_message "memprof import: "
	if [ -n "$pos" ]; then
		expect_stderr_contains "'$name.csv:$pos'"
	else
		expect_stderr_contains "'$name.csv'"
	fi
	for t in "$@"; do
		expect_stderr_contains "$t"
	done
	expect_stdout_empty
	expect_dir_empty "$OUTDIR"
	rm -f "$OUTDIR"/* 2>/dev/null
}

# csv NAME TEXT: write NAME.csv (TEXT is a printf format without arguments).
csv() {
	printf "$2" >"$W/$1.csv"
}

# --- empty and header-only --------------------------------------------------------------
csv empty ''
bad empty ""
step "empty file with --format=csv"
mp import --format=csv -o "$OUTDIR/empty.db" empty.csv
expect_status 1
expect_one_message "memprof import: "
expect_stderr_contains "empty"
expect_stderr_contains "'empty.csv'"
expect_dir_empty "$OUTDIR"

step "header only"
csv header-only 'ts_ns,op,id,size\n'
mp import -o "$OUTDIR/header-only.db" header-only.csv
expect_status 0
expect_stdout_contains ": 0 events, 0 allocations"
expect_file_present "$OUTDIR/header-only.db"
expect_no_temp_files "$OUTDIR"
rm -f "$OUTDIR"/*

# --- the header --------------------------------------------------------------------------------
csv unknown-column 'ts_ns,op,id,size,colour\n1,alloc,1,1,red\n'
bad unknown-column 1:18 "unknown column" "'colour'"

csv duplicate-column 'ts_ns,op,id,size,op\n'
bad duplicate-column 1:18 "duplicate column" "'op'"

csv missing-column 'ts_ns,op,size\n1,alloc,5\n'
bad missing-column 1 "missing column" "'id'"

csv missing-column-late '# a comment\n\nop,size,ts_ns,requested\n'
bad missing-column-late 3 "missing column" "'id'"

# --- records ------------------------------------------------------------------------------------
csv too-many-fields 'ts_ns,op,id,size\n1,alloc,1,10\n2,alloc,2,10,5\n'
bad too-many-fields 3 "wrong number of fields" "expected 4" "found 5"

csv too-few-fields 'ts_ns,op,id,size\n1,alloc,1\n'
bad too-few-fields 2 "wrong number of fields" "found 3"

csv trailing-comma-at-eof 'ts_ns,op,id,size\n1,alloc,1,10\n2,alloc,2,10,'
bad trailing-comma-at-eof 3 "wrong number of fields" "found 5"

csv far-too-many-fields 'ts_ns,op,id,size\n1,alloc,1,10,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,\n'
bad far-too-many-fields 2 "wrong number of fields" "expected 4"

csv header-trailing-comma 'ts_ns,op,id,size,\n1,alloc,1,10,\n'
bad header-trailing-comma 1:18 "unknown column"

csv non-numeric-size 'ts_ns,op,id,size\n1,alloc,1,12a\n'
bad non-numeric-size 2:11 "invalid size" "'12a'"

csv negative-size 'ts_ns,op,id,size\n1,alloc,1,-5\n'
bad negative-size 2:11 "invalid size" "'-5'"

csv overflow-size 'ts_ns,op,id,size\n1,alloc,1,99999999999999999999999\n'
bad overflow-size 2:11 "invalid size" "99999999999999999999999"

csv overflow-ts 'ts_ns,op,id,size\n9223372036854775808,alloc,1,1\n'
bad overflow-ts 2:1 "invalid ts_ns" "9223372036854775808"

csv overflow-id 'ts_ns,op,id,size\n1,alloc,18446744073709551616,1\n'
bad overflow-id 2:9 "invalid id"

csv overflow-device 'ts_ns,op,id,size,device\n1,alloc,1,1,4294967296\n'
bad overflow-device 2:13 "invalid device"

csv bad-hex 'ts_ns,op,id,size,address\n1,alloc,1,1,0xzz\n'
bad bad-hex 2:13 "invalid address" "'0xzz'"

csv overflow-hex 'ts_ns,op,id,size,address\n1,alloc,1,1,0x1ffffffffffffffff\n'
bad overflow-hex 2:13 "invalid address" "0x1ffffffffffffffff"

csv unknown-op 'ts_ns,op,id,size\n1,malloc,1,1\n'
bad unknown-op 2:3 "invalid op" "'malloc'" \
	"alloc, free, preexisting, reserve, release, map, unmap, oom, phase_begin, phase_end, free_requested"

csv missing-size 'ts_ns,op,id,size\n1,alloc,1,\n'
bad missing-size 2:11 "missing size" "'alloc'"

# --- CSV syntax ------------------------------------------------------------------------------------
csv stray-quote 'ts_ns,op,id,size,phase\n1,alloc,1,1,ab"c\n'
bad stray-quote 2:15 "stray quote"

csv unterminated 'ts_ns,op,id,size,phase\n1,alloc,1,1,x\n2,alloc,2,1,"abc\n3,free,1,1,x\n'
bad unterminated 3:13 "unterminated quoted field"

csv after-quote 'ts_ns,op,id,size,phase\n1,alloc,1,1,"abc"d\n'
bad after-quote 2:18 "text after closing quote"

# --- meaning ----------------------------------------------------------------------------------------
csv time-goes-back 'ts_ns,op,id,size\n5,alloc,1,1\n6,alloc,2,1\n4,alloc,3,1\n'
bad time-goes-back 4 "timestamp goes back" "4 is before 6 on line 3"

csv duplicate-id 'ts_ns,op,id,size\n5,alloc,1,1\n6,alloc,2,1\n7,alloc,1,1\n'
bad duplicate-id 4 "duplicate id" "allocation 1 is still live"

csv duplicate-segment 'ts_ns,op,id,size\n5,reserve,1,1\n7,reserve,1,1\n'
bad duplicate-segment 3 "duplicate id" "segment 1"

csv requested-too-big 'ts_ns,op,id,size,requested\n5,alloc,1,10,11\n'
bad requested-too-big 2:14 "invalid requested" "11 bytes requested but only 10 granted"

csv stack-escape "ts_ns,op,id,size,stack\n5,alloc,1,10,a\\\\xb\n"
bad stack-escape 2:14 "invalid stack" "unknown escape '\\x'"

csv stack-empty-frame 'ts_ns,op,id,size,stack\n5,alloc,1,10,a;;b\n'
bad stack-empty-frame 2:14 "invalid stack" "empty frame"

csv stack-line 'ts_ns,op,id,size,stack\n5,alloc,1,10,a@f.py:1x\n'
bad stack-line 2:14 "invalid stack" "line number"

csv phase-no-column 'ts_ns,op,id,size\n5,phase_begin,0,0\n'
bad phase-no-column 2 "missing phase" "'phase_begin'"

csv phase-empty 'ts_ns,op,id,size,phase\n5,phase_begin,0,0,\n'
bad phase-empty 2:19 "missing phase" "'phase_begin'"

# --- positions after comments, blank lines, CRLF and multi-line fields -------------------------
csv lines-after-comments '# a comment\n\nts_ns,op,id,size,phase\n# another\n\n1,alloc,1,10,"multi\nline"\n\n# c\n2,alloc,2,1x,a\n'
bad lines-after-comments 10:11 "invalid size" "'1x'"

csv lines-crlf '# a comment\r\n\r\nts_ns,op,id,size\r\n# another\r\n\r\n1,alloc,1,10\r\n\r\n2,alloc,2,1x\r\n'
bad lines-crlf 8:11 "invalid size" "'1x'"

csv lines-back '# c\nts_ns,op,id,size\n1,alloc,1,10\n# c\n\n0,alloc,2,1\n'
bad lines-back 6 "timestamp goes back" "on line 3"

csv no-final-newline 'ts_ns,op,id,size\n1,alloc,1,10\n2,alloc,2,1x'
bad no-final-newline 3:11 "invalid size"

# --- an error deep in a large input: the partial trace is discarded ---------------------------
step "error after many good records"
{
	echo "$HEADER"
	awk 'BEGIN { for (i = 1; i <= 50000; i++)
		printf "%d,alloc,%d,4096,4096,0x%x,0,0,1,p%d,cudaMalloc,,,main@a.py:%d\n", i, i, i * 4096, i % 7, i % 13 }'
	echo "50001,alloc,50001,oops,,,,,,,,,,"
} >"$W/late-error.csv"
bad late-error 50002:19 "invalid size" "'oops'"

# --- files that are not CSV ---------------------------------------------------------------------------
step "binary garbage"
awk 'BEGIN { for (i = 0; i < 4096; i++) printf "%c", (i * 131 + 17) % 256 }' >"$W/garbage.csv"
printf '\0\0\0\0' >>"$W/garbage.csv"
bad garbage "" "unknown trace format"

step "nonexistent input"
mp import -o "$OUTDIR/nope.db" nope.csv
expect_status 1
expect_one_message "memprof import: "
expect_stderr_contains "'nope.csv'"
expect_stderr_contains "No such file"
expect_dir_empty "$OUTDIR"

step "nonexistent input, default output"
mp import nope.csv
expect_status 1
expect_file_absent "$W/nope.db"

step "a directory as input"
mkdir "$W/dir.csv"
mp import -o "$OUTDIR/dir.db" dir.csv
expect_status 1
expect_one_message "memprof import: "
expect_stderr_contains "'dir.csv'"
if grep -qi 'directory' "$ERR"; then pass; else fail "the message should say it is a directory"; fi
expect_dir_empty "$OUTDIR"

step "a directory as input, --format=csv"
mp import --format=csv -o "$OUTDIR/dir.db" dir.csv
expect_status 1
expect_stderr_contains "'dir.csv'"
expect_dir_empty "$OUTDIR"

step "the working directory holds only the inputs"
left=$(find "$W" -maxdepth 1 \( -name '*.db' -o -name '*.tmp-*' \))
expect_eq "$left" "" "files left in the working directory"

finish
