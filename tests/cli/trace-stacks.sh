#!/bin/bash
# trace-stacks.sh - crafted stack chains (issue 23, item 4): a trace whose
# 6000 allocations each have a stack one frame deeper than the last (made by
# tests/tools/make_hostile_traces.py) once took memory and time quadratic in
# the frames (about 430 MB and 25 s for 1.6 MB); now linear.  Checks the
# peak memory of analyze and export, and that the stacks read are right:
# the innermost 256 frames of each.
set -u
. "$(dirname "$0")/lib.sh"

command -v python3 >/dev/null || skip "no python3 to make the traces"
python3 -c 'import sqlite3' 2>/dev/null || skip "python3 has no sqlite3 module"

W=$TMP/work
mkdir "$W" && cd "$W" || die "cannot make $W"
"$MEMPROF" import -q -o good.db "$DATA/small.csv" || die "cannot import small.csv"
gen=$top_srcdir/tests/tools/make_hostile_traces.py

# peak_mb CMD...: run CMD (stdout to out.txt, stderr to err.txt), print its
# exit status and its peak resident memory in MiB.
peak_mb() {
	python3 - "$@" <<'EOF'
import resource, subprocess, sys
with open("out.txt", "wb") as out, open("err.txt", "wb") as err:
    rc = subprocess.call(sys.argv[1:], stdout=out, stderr=err)
print(rc, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024)
EOF
}

for shape in chain comb; do
	n=6000
	[ "$shape" = comb ] && n=3000
	python3 "$gen" --stacks "$shape" "$n" good.db "$shape.db" || die "cannot make $shape.db"
	for c in analyze export; do
		step "$c of a $shape of $n stacks"
		read -r rc mb < <(peak_mb "$MEMPROF" "$c" "$shape.db")
		expect_eq "$rc" 0 "exit status of memprof $c $shape.db ($(head -c 300 err.txt))"
		[ "$mb" -lt 250 ] || fail "memprof $c $shape.db peaked at $mb MiB (quadratic stacks?)"
		say "memprof $c $shape.db: $mb MiB"
	done
	step "the stacks of the $shape as exported"
	# out.txt holds the export: the last line has the deepest stack
	deepest=$(tail -n 1 out.txt | awk -F, '{ print $NF }')
	expect_eq "$(printf '%s' "$deepest" | awk -F';' '{ print NF }')" 256 "frames of the deepest stack"
	first=$(grep -m 1 '@chain.py' out.txt | awk -F, '{ print $NF }')
	expect_eq "$first" "deep@chain.py:1" "the first stack"
done

finish
