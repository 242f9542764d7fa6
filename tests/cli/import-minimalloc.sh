#!/bin/bash
# import-minimalloc.sh - MiniMalloc CSV in and out: the published instances in
# ../shared/datasets/minimalloc (when present) import with the peak of live
# bytes an independent computation finds, fit their capacity, and survive
# import -> export --format=minimalloc -> import; small files with gaps and
# several devices give rows worked out by hand; bad inputs write nothing.
set -u
. "$(dirname "$0")/lib.sh"

W=$TMP/work
OUTDIR=$TMP/out
mkdir "$W" "$OUTDIR" || die "mkdir"
cd "$W" || die "cd $W"

# peak_of FILE: the peak of live bytes of a MiniMalloc CSV with columns
# lower, upper and size, computed here: the maximum over time of the sizes of
# the buffers with lower <= t < upper (at equal times, ends before starts).
peak_of() {
	awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
		NF { print $(col["lower"]), 1, $(col["size"]); print $(col["upper"]), 0, -$(col["size"]) }' "$1" |
		sort -k1,1n -k2,2n |
		awk '{ live += $3; if (live > peak) peak = live } END { print peak + 0 }'
}

# rows_of FILE: "lower,upper,size" of every row, sorted (ids left out).
rows_of() {
	awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
		NF { print $(col["lower"]) "," $(col["upper"]) "," $(col["size"]) }' "$1" | LC_ALL=C sort
}

# info_peak DB: summary.peak_live_bytes from 'memprof info --json'.
info_peak() {
	"$MEMPROF" info --json "$1" | tr -d ' \t\n' |
		sed -n 's/.*"summary":{.*"peak_live_bytes":\([0-9]*\).*"by_device".*/\1/p'
}

# --- the published instances --------------------------------------------------------
datasets=$top_srcdir/../shared/datasets/minimalloc
if [ -d "$datasets" ] && [ -n "$(ls "$datasets"/*.csv 2>/dev/null)" ]; then
	for f in "$datasets"/*.csv; do
		b=$(basename "$f" .csv)
		step "import $b.csv"
		mp import -o "$W/$b.db" "$f"
		expect_status 0
		expect_stderr_empty
		n=$(awk 'NR > 1 && NF' "$f" | wc -l)
		expect_stdout_line "wrote '$W/$b.db': $((2 * n)) events, $n allocations"
		want=$(peak_of "$f")
		[ "$want" -gt 0 ] || fail "no peak computed for $b.csv"
		got=$(info_peak "$W/$b.db")
		expect_eq "$got" "$want" "peak_live_bytes of $b"
		case $b in
		*.1048576)
			if [ -n "$got" ] && [ "$got" -le 1048576 ]; then pass; else
				fail "$b: peak $got is over the capacity 1048576 in its name"
			fi ;;
		esac
		mp info "$W/$b.db"
		expect_stdout_line "source       minimalloc from '$f'"

		for t in ns seq; do
			step "$b: export --format=minimalloc --time=$t, import again"
			mp export --format=minimalloc --time=$t -o "$W/$b.$t.csv" "$W/$b.db"
			expect_status 0
			expect_stderr_empty
			mp import -o "$W/$b.$t.db" "$W/$b.$t.csv"
			expect_status 0
			expect_eq "$(info_peak "$W/$b.$t.db")" "$want" "peak after the round trip ($t)"
			expect_eq "$(peak_of "$W/$b.$t.csv")" "$want" "peak of the exported rows ($t)"
		done
		step "$b: the same buffers after the round trip"
		rows_of "$f" >"$W/$b.rows"
		rows_of "$W/$b.ns.csv" >"$W/$b.ns.rows"
		expect_same_file "$W/$b.rows" "$W/$b.ns.rows"
		mp export --format=minimalloc --time=ns "$W/$b.ns.db"
		cp "$OUT" "$W/$b.ns2.csv"
		rows_of "$W/$b.ns2.csv" >"$W/$b.ns2.rows"
		expect_same_file "$W/$b.rows" "$W/$b.ns2.rows"
	done
else
	say "note: no MiniMalloc instances at '$datasets': that part is skipped"
fi

# --- a small file worked out by hand ---------------------------------------------------
# b1 [0,10) 8 B at 100 with a gap [2,4) and a gap [6,7) keeping bytes [2,6);
# b2 [1,3) 16 B; b3 (legacy ids are not integers: row numbers 1, 2, 3).
# Live bytes: [0,1) 8, [1,2) 24, [2,3) 16, [3,4) 0, [4,6) 8, [6,7) 4, [7,10) 8.
step "gaps: import"
printf 'id,lower,upper,size,gaps,offset\nb1,0,10,8,2-4 6-7@2:6,100\nb2,1,3,16,,0\nb3,20,21,1,,\n' >gaps.csv
mp import -o gaps.db gaps.csv
expect_status 0
expect_stdout_line "wrote 'gaps.db': 12 events, 6 allocations"
expect_eq "$(info_peak gaps.db)" 24 "peak of gaps.csv"

step "gaps: the events"
mp export gaps.db
expect_status 0
expect_stdout_line "0,alloc,1,8,8,0x64,0,0,0,,,,,"
expect_stdout_line "6,free,1,8,8,0x64,0,0,0,,,,,"
expect_stdout_line "6,alloc,1,4,4,0x66,0,0,0,,,,,"
expect_stdout_line "7,free,1,4,4,0x66,0,0,0,,,,,"

step "gaps: export --time=ns"
mp export --format=minimalloc --time=ns gaps.db
expect_status 0
expect_stderr_empty
# rows in the order of the frees; ids are the sequence numbers of the allocs
printf 'id,lower,upper,size\n1,0,2,8\n2,1,3,16\n5,4,6,8\n7,6,7,4\n9,7,10,8\n11,20,21,1\n' >gaps.expected
cp "$OUT" gaps.ns.csv
expect_same_file gaps.expected gaps.ns.csv

step "gaps: export (seq, the default)"
mp export --format=minimalloc gaps.db
expect_status 0
printf 'id,lower,upper,size\n1,1,3,8\n2,2,4,16\n5,5,6,8\n7,7,8,4\n9,9,10,8\n11,11,12,1\n' >gaps.seq.expected
cp "$OUT" gaps.seq.csv
expect_same_file gaps.seq.expected gaps.seq.csv

# --- export: devices, blocks never freed, zero-length lifetimes -------------------------------
# pid 5 uses devices 0 and 1.  Device 1: id 2 (10 B) from ts 100 to 100 (no
# time at all: widened by one), id 3 (20 B) never freed; id 4 frees nothing
# known.  Device 0: id 1 (7 B) from 50 to 300.
cat >devs.csv <<'EOF'
ts_ns,op,id,size,device,pid
50,alloc,1,7,0,5
100,alloc,2,10,1,5
100,free,2,,1,5
150,alloc,3,20,1,5
200,reserve,9,4096,1,5
250,free,4,,1,5
300,free,1,,0,5
EOF
mp import -o devs.db devs.csv
expect_status 0

step "export of two devices is refused"
mp export --format=minimalloc -o "$OUTDIR/x.csv" devs.db
expect_status 1
expect_one_message "memprof export: "
expect_stderr_contains "several devices 'devs.db'"
expect_stderr_contains "choose one with --device=N"
expect_stderr_contains "pid 5 device 0, pid 5 device 1"
expect_dir_empty "$OUTDIR"

step "export --device=1 --time=ns"
mp export --format=minimalloc --time=ns --device=1 devs.db
expect_status 0
printf 'id,lower,upper,size\n2,100,101,10\n4,150,301,20\n' >devs1.expected
cp "$OUT" devs1.csv
expect_same_file devs1.expected devs1.csv
expect_stderr_contains "memprof export: note: 1 frees of blocks never allocated: no rows"
expect_stderr_contains "memprof export: note: 1 blocks freed at the time of their alloc: written with upper = lower + 1"

step "export --device=0 --pid=5 (seq)"
mp export --format=minimalloc --device=0 --pid=5 devs.db
expect_status 0
expect_stderr_empty
printf 'id,lower,upper,size\n1,1,7,7\n' >devs0.expected
cp "$OUT" devs0.csv
expect_same_file devs0.expected devs0.csv

step "export --device=2: no such device"
mp export --format=minimalloc --device=2 devs.db
expect_status 1
expect_stderr_contains "no such device 'devs.db'"
expect_stdout_empty

step "export option errors"
mp export --time=ns devs.db
expect_status 2
expect_stderr_contains "--time applies to --format=minimalloc only"
mp export --format=minimalloc --time=us devs.db
expect_status 2
expect_stderr_contains "invalid --time 'us'"
mp export --format=minimalloc --device=-1 devs.db
expect_status 2
expect_stderr_contains "invalid --device '-1'"
mp export --format=planner devs.db
expect_status 2
expect_stderr_contains "unknown format 'planner' (formats: csv, minimalloc, perfetto)"

# --- bad inputs: one message naming file, line (and column), nothing written ---------------
bad() { # NAME POSITION TEXT...
	local name=$1 pos=$2 t
	shift 2
	step "bad $name"
	mp import --format=minimalloc -o "$OUTDIR/$name.db" "$name.csv"
	expect_status 1
	expect_one_message "memprof import: "
	expect_stderr_contains "'$name.csv:$pos'"
	for t in "$@"; do
		expect_stderr_contains "$t"
	done
	expect_stdout_empty
	expect_dir_empty "$OUTDIR"
}
H='id,lower,upper,size'
printf 'id,lower,size\n1,0,1\n' >no-upper.csv
bad no-upper 1 "missing column" "'upper' or 'end'"
printf '%s\n1,0,1\n' "$H" >few-fields.csv
bad few-fields 2 "wrong number of fields" "expected 4, found 3"
printf '%s\n1,0,1,1\n2,0,x,1\n' "$H" >not-a-number.csv
bad not-a-number 3:5 "invalid upper" "found 'x'"
printf '%s\n1,0,4,-8\n' "$H" >negative-size.csv
bad negative-size 2:7 "invalid size" "found '-8'"
printf '%s\n1,4,4,8\n' "$H" >empty-life.csv
bad empty-life 2:5 "bad lifespan" "upper 4 is not after lower 4"
printf '%s\nx,0,4,8\nx,1,2,8\n' "$H" >dup-id.csv
bad dup-id 3:1 "duplicate id" "'x' was already used on line 2"
printf '%s,gaps\n1,0,4,8,3-5\n' "$H" >gap-outside.csv
bad gap-outside 2:9 "bad gap" "'3-5' is outside the buffer's lifespan [0, 4)"
printf '%s,gaps\n1,0,4,8,1:2\n' "$H" >gap-syntax.csv
bad gap-syntax 2:9 "bad gap" "expected lo-hi or lo-hi@low:high"

step "a file that is not MiniMalloc CSV is not detected as one"
printf 'id,lower,size\n1,0,1\n' >other.csv
mp import -o "$OUTDIR/other.db" other.csv
expect_status 1
expect_stderr_contains "unknown trace format 'other.csv'"
expect_dir_empty "$OUTDIR"

finish
