#!/bin/bash
# import-limits.sh - one limit on sizes, checked at import (issue 23, item
# 8): a size of 2^56 bytes or more, which every reader refuses, is refused
# by the csv, rmm, minimalloc, spool and trace importers, naming the file
# and the position; 2^56 - 1 is imported and read.  Also: a size such as
# '12abc' is refused, never read as 12 (item 12).
set -u
. "$(dirname "$0")/lib.sh"

W=$TMP/work
mkdir "$W" && cd "$W" || die "cannot make $W"
big=72057594037927936 # 2^56
max=72057594037927935 # 2^56 - 1

# refused FORMAT FILE TEXT...: import exits 1 naming FILE and each TEXT; no trace
refused() {
	local format=$1 file=$2 t
	shift 2
	step "import --format=$format $file"
	rm -f out.db
	mp import --format="$format" -o out.db "$file"
	expect_status 1
	expect_one_message "memprof import: "
	for t in "$@"; do
		expect_stderr_contains "$t"
	done
	expect_file_absent out.db
}

# read_back FORMAT FILE: import, then info and analyze read the trace
read_back() {
	step "import --format=$1 $2, then read"
	mp import --format="$1" -o "$2.db" "$2"
	expect_status 0
	mp info "$2.db"
	expect_status 0
	mp analyze "$2.db"
	expect_status 0
}

printf 'ts_ns,op,id,size\n1,alloc,1,%s\n2,free,1,0\n' "$big" >big.csv
refused csv big.csv "invalid size 'big.csv:2:11'" "below 2^56"
printf 'ts_ns,op,id,size,requested\n1,alloc,1,16,%s\n' "$big" >big-req.csv
refused csv big-req.csv "invalid requested 'big-req.csv:2:14'" "below 2^56"
printf 'ts_ns,op,id,size\n1,alloc,1,12abc\n' >abc.csv
refused csv abc.csv "invalid size 'abc.csv:2:11'" "'12abc'"
printf 'ts_ns,op,id,size\n1,alloc,1,%s\n2,free,1,0\n' "$max" >max.csv
read_back csv max.csv

hdr='Thread,Time,Action,Pointer,Size,Stream'
printf '%s\n1,08:00:00.000000,allocate,0x100,%s,0\n' "$hdr" "$big" >big.rmm.csv
refused rmm big.rmm.csv "invalid size 'big.rmm.csv:2:34'" "below 2^56"
printf '%s\n1,08:00:00.000000,allocate,0x100,12abc,0\n' "$hdr" >abc.rmm.csv
refused rmm abc.rmm.csv "invalid size 'abc.rmm.csv:2:34'" "'12abc'"
printf '%s\n1,08:00:00.000000,allocate,0x100,%s,0\n1,08:00:00.000001,free,0x100,%s,0\n' \
	"$hdr" "$max" "$max" >max.rmm.csv
read_back rmm max.rmm.csv

printf 'id,lower,upper,size\n1,0,10,%s\n' "$big" >big.mm.csv
refused minimalloc big.mm.csv "invalid size 'big.mm.csv:2:8'" "2^56 bytes or more"
printf 'id,lower,upper,size\n1,0,10,12abc\n' >abc.mm.csv
refused minimalloc abc.mm.csv "invalid size 'abc.mm.csv:2:8'" "'12abc'"
printf 'id,lower,upper,size\n1,0,10,%s\n' "$max" >max.mm.csv
read_back minimalloc max.mm.csv

spool() {
	"$top_builddir/tests/tools/spool_script" "$1" || die "spool_script failed on $1"
}
spool big.mpt <<EOF
header pid=7
device 0 name="GPU"
event kind=mem_alloc ts=100 addr=0x1000 bytes=512 device=0 corr=1
event kind=mem_alloc ts=200 addr=0x2000 bytes=$big device=0 corr=2
end
EOF
refused spool big.mpt "invalid size 'big.mpt': event 2 of the spool" "2^56 or more"
spool max.mpt <<EOF
header pid=7
device 0 name="GPU"
event kind=mem_alloc ts=200 addr=0x2000 bytes=$max device=0 corr=2
end
EOF
read_back spool max.mpt

if command -v python3 >/dev/null && python3 -c 'import sqlite3' 2>/dev/null; then
	"$MEMPROF" import -q -o good.db "$DATA/small.csv" || die "cannot import small.csv"
	cp good.db big-trace.db
	python3 -c 'import sqlite3,sys; db = sqlite3.connect(sys.argv[1]); db.execute("UPDATE events SET size = 72057594037927936 WHERE seq = 3"); db.commit()' \
		big-trace.db || die "cannot make big-trace.db"
	refused trace big-trace.db "invalid size 'big-trace.db': event 3 has 72057594037927936 bytes"
else
	say "no python3 with sqlite3: the trace importer's check is skipped"
fi

finish
