#!/bin/bash
# report-md.sh - 'memprof report --format=md', the Markdown summary for a pull
# request comment, on tests/cli/data/analyze-segments.csv (its figures worked
# out by hand in analyze.sh: peaks live 600 B and requested 540 B at event 4,
# reserved 1000 B at event 1; at the live peak 400 B free in 1000 B reserved,
# holes 300 and 100, external 1 - 300/400 = 0.25; an OOM of 500 B with 600 B
# free and a 300 B hole; live at the peak bwd 300, mlp 200, fwd 100) with the
# results of 'memprof replay --pool=direct,planned' stored (caching, the
# baseline, comes too: 4.00 MiB reserved; direct and planned 600 B, which the
# driver holds in one 2 MiB page (modelled: memprof-replay(1), DRIVER
# GRANULARITY); lower bound 540 B, the peak of requested bytes), then on a
# trace whose frames
# carry Markdown and HTML: every table row keeps its cells, nothing is markup.
set -u
. "$(dirname "$0")/lib.sh"

W=$TMP/work
mkdir "$W" || die "mkdir $W"
cd "$W" || die "cd $W"

# table_rows_whole FILE: every row of every table has as many cell separators
# (unescaped '|') as the table's header.
table_rows_whole() {
	awk '
		function cells(s,   i, n, c) {
			n = 0
			for (i = 1; i <= length(s); i++) {
				c = substr(s, i, 1)
				if (c == "\\") i++
				else if (c == "|") n++
			}
			return n
		}
		/^\|/ { n = cells($0); if (want < 0) want = n; else if (n != want) { print "row " NR ": " $0; bad = 1 }; next }
		{ want = -1 }
		BEGIN { want = -1 }
		END { exit bad }' "$1"
}

step "a trace with figures known by hand and stored replay results"
mp import -q -o seg.db "$DATA/analyze-segments.csv"
expect_status 0
mp replay --pool=direct,planned --backend=sim seg.db
expect_status 0
mp report --format=md seg.db
expect_status 0
expect_stderr_empty
cp "$OUT" seg.md
expect_stdout_line "## memprof report: seg.db"
expect_stdout_match "^8 events over 100 ns, source csv\. Made by: [^ ]*memprof import -q -o seg\.db [^ ]*analyze-segments\.csv \(.*\)$"
expect_stdout_line "### Device 0"
expect_stdout_line "| live | 600 B | +30 ns (event 4) |"
expect_stdout_line "| requested | 540 B | +30 ns (event 4) |"
expect_stdout_line "| reserved | 1000 B | +0 ns (event 1) |"
expect_stdout_line "**Fragmentation at the live peak**: internal fragmentation 60 B (10.0% of live); 400 B free in reserved (free share 0.400 of 1000 B reserved), largest hole 300 B, external fragmentation 0.250."
expect_stdout_line "**OOMs**: 1"
expect_stdout_line "- event 6 at +50 ns: the request was 500 B; 600 B free in reserved, largest hole 300 B (fragmentation: it fit in the free bytes, not in one hole)"
expect_stdout_line "**Live at the live peak** (event 4, +30 ns): 600 B in 3 blocks"
expect_stdout_line "| 300 B | 50.0% | 1 | bwd (model.py:30) ← train (train.py:5) |"
expect_stdout_line "| 200 B | 33.3% | 1 | mlp (model.py:20) ← train (train.py:5) |"
expect_stdout_line "| 100 B | 16.7% | 1 | fwd (model.py:10) ← train (train.py:5) |"
expect_stdout_line "### Replay results stored in the trace"
expect_stdout_match '^\| 0 \| caching \| sim \| 4\.00 MiB \| 540 B \| 7767\.230 \| \(baseline\) \| [0-9.]+ [nums]+ \(modelled\) \| [-0-9.]+ [nums]+ \(modelled\) \| 0 \|$'
expect_stdout_match '^\| 0 \| direct \| sim \| 2\.00 MiB \| 540 B \| 3883\.615 \| 2\.00 MiB vs caching \| [0-9.]+ [nums]+ \(modelled\) \| [-0-9.]+ [nums]+ \(modelled\) \| 0 \|$'
expect_stdout_match '^\| 0 \| planned \| sim \| 2\.00 MiB \| 540 B \| 3883\.615 \| 2\.00 MiB vs caching \| '
expect_stdout_line "| leak (never freed) | 300 B | 1 | bwd (model.py:30) ← train (train.py:5) | |"
expect_stdout_line "| leak (never freed) | 50 B | 1 | fwd (model.py:10) ← train (train.py:5) | |"
expect_stdout_line "<details><summary>Device 0: leaks 2 blocks (350 B), churn 2 blocks (300 B), idle 1 block (100 B)</summary>"
expect_stdout_not_contains "### Notes"
if table_rows_whole seg.md; then pass; else fail "a table row of seg.md lost or gained a cell"; fi

step "replayed again: the latest run of each pool replaces the older"
mp replay --pool=direct --backend=sim seg.db
expect_status 0
mp report --format=md seg.db
expect_status 0
n=$(grep -c '^| 0 | direct | sim |' "$OUT")
expect_eq "$n" 1 "rows of pool direct"

step "-o writes the file; --top=1 cuts the tables"
mp report --format=md --top=1 -o top.md seg.db
expect_status 0
expect_stdout_empty
expect_file_present top.md
if grep -qxF '| | | | and 2 more call sites |' top.md; then pass; else fail "top.md does not say 2 more call sites"; fi
if grep -qF '| 200 B | 33.3% |' top.md; then fail "top.md lists a second call site"; else pass; fi

step "no stored results: a sentence says how to add them"
mp import -q -o plain.db "$DATA/analyze-segments.csv"
expect_status 0
mp report --format=md plain.db
expect_status 0
expect_stdout_line 'None: `memprof replay --pool=all` on the trace stores them.'

step "Markdown and HTML in frames, files and the command line"
cat >'a|b<i>.csv' <<'EOF'
ts_ns,op,id,size,stack
1,alloc,1,100,"main@tr|ain.py:1;<script>alert(1)</script>@<b>x.py:2;f|g`h*i_j[k]@b.py:3"
2,alloc,2,50,"line
break@c.py:4"
EOF
mp import -q -o h.db 'a|b<i>.csv'
expect_status 0
mp report --format=md h.db
expect_status 0
cp "$OUT" h.md
expect_stdout_not_contains "<script"
expect_stdout_not_contains "<b>"
expect_stdout_not_contains "<i>"
# (a frame's name is cut at its argument list: '<script>alert')
expect_stdout_line '| 100 B | 66.7% | 1 | f\|g\`h\*i\_j\[k\] (b.py:3) ← &lt;script&gt;alert (&lt;b&gt;x.py:2) ← main (tr\|ain.py:1) |'
expect_stdout_line '| 50 B | 33.3% | 1 | line break (c.py:4) |'
expect_stdout_match '^2 events over 1 ns, source csv\. Made by: [^ ]*memprof import -q -o h\.db a\\\|b&lt;i&gt;\.csv \(.*\)$'
if table_rows_whole h.md; then pass; else fail "a table row of h.md lost or gained a cell"; fi

finish
