#!/bin/bash
# report.sh - 'memprof report' as HTML, checked without a browser (the
# browser checks are tests/cli/report-browser.sh):
#   - one self-contained file: the CSP meta, one inline <script>, no http:,
#     no src=, no <link>, no url(); every chart with drawn elements;
#   - a trace whose frames, files, phase and API names and command line hold
#     <script>, quotes, &, </svg>, ]]> and a control character: none of them
#     raw in the page, each shown escaped;
#   - the stored replay results as bars, times labelled as stored; the
#     sentence that says how to add them when there are none;
#   - a 10^6-event trace: no series draws more points than --points, and
#     the file stays under 150 KB + 60 bytes per point and series (5 series
#     per device, each point at most "H123.4V123.4") + 100 bytes per block of
#     the active memory timeline (--blocks) + its merged series (4097 doubles
#     in base64 per device), so its size follows --points and --blocks, not
#     the trace;
#   - exit statuses (missing trace 1, bad option 2) and output written whole
#     or not at all (util/outfile).
set -u
. "$(dirname "$0")/lib.sh"

W=$TMP/work
mkdir "$W" || die "mkdir $W"
cd "$W" || die "cd $W"

# charts FILE: "NAME DRAWN" for every chart, DRAWN its path/rect/line/circle elements
charts() {
	awk '/<svg class="chart"/ { match($0, /data-chart="[a-z]+"/);
		name = substr($0, RSTART + 12, RLENGTH - 13); inside = 1; n = 0 }
	inside && /<(path|rect|line|circle)[ >]/ { n++ }
	inside && /<\/svg>/ { print name, n; inside = 0 }' "$1"
}

# expect_self_contained FILE
expect_self_contained() {
	local f=$1 n
	n=$(grep -c '<script' "$f")
	expect_eq "$n" 1 "<script elements in $f"
	n=$(grep -c -F "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">" "$f")
	expect_eq "$n" 1 "the CSP meta in $f"
	for bad in 'http:' 'https:' 'src=' '<link' 'url(' '@import' '<iframe' '<object' '<embed'; do
		n=$(grep -c -i -F -e "$bad" "$f")
		expect_eq "$n" 0 "'$bad' in $f"
	done
	n=$(grep -c '^<!DOCTYPE html>$' "$f")
	expect_eq "$n" 1 "doctype in $f"
	expect_eq "$(tail -n 1 "$f")" "</html>" "the last line of $f"
}

step "import the demo trace; report without stored runs"
mp import -o demo.db "$top_srcdir/samples/traces/demo.csv"
expect_status 0
mp report demo.db -o demo.html
expect_status 0
expect_stdout_empty
expect_stderr_empty
expect_self_contained demo.html
charts demo.html >demo.charts
expect_eq "$(cut -d' ' -f1 demo.charts | tr '\n' ' ')" "memory frag peak " "charts without runs"
while read -r name drawn; do
	if [ "$drawn" -gt 0 ]; then pass; else fail "chart $name has no drawn elements"; fi
done <demo.charts
expect_eq "$(grep -c 'class="peak-marker"' demo.html)" 1 "live peak marker"
expect_eq "$(grep -c 'swatch oom-marker' demo.html)" 0 "no OOM in the legend of a trace without OOMs"
expect_eq "$(grep -c 'swatch peak-marker' demo.html)" 1 "the live peak in the legend"
expect_eq "$(grep -c '<rect class="phase p' demo.html)" 9 "phase spans shaded (9 in demo.csv)"
expect_eq "$(grep -c '<g class="cell' demo.html)" "$(grep -c '<g class="cell[^>]*data-tip="' demo.html)" \
	"every icicle cell has a tooltip"
if grep -q 'data-tip="_init_group (torch/optim/adamw.py:140)&#10;[0-9]* bytes ([0-9.]*% of the live peak), [0-9]* blocks&#10;call stack, outermost first:&#10;main (train.py:' demo.html; then
	pass
else
	fail "an icicle cell's tooltip holds the frame, bytes, share and stack"
fi
expect_eq "$(grep -c '<table class="findings">' demo.html)" 1 "findings table"
if grep -q '<tr class="leak"><td>leak</td>' demo.html; then pass; else fail "a leak row"; fi
if grep -q 'memprof replay demo.db --pool=all</code> adds them' demo.html; then
	pass
else
	fail "the sentence on adding replay results"
fi
if grep -q 'data-chart="pools"' demo.html; then fail "a pools chart without runs"; else pass; fi

step "stdout by default; --format=md"
mp report demo.db
expect_status 0
expect_same_file demo.html "$OUT"
mp report --format=md demo.db
expect_status 0
expect_stdout_match '^## memprof report'
expect_stdout_not_contains '<svg'

step "stored replay runs: bars against the lower bound, times as stored"
mp replay demo.db --pool=direct,caching,planned --backend=sim
expect_status 0
mp report demo.db -o pools.html
expect_status 0
expect_self_contained pools.html
charts pools.html >pools.charts
expect_eq "$(cut -d' ' -f1 pools.charts | tr '\n' ' ')" "memory frag peak pools " "charts with runs"
expect_eq "$(grep -c '<rect class="bar' pools.html)" 3 "one bar per pool"
expect_eq "$(grep -c '<line class="lower-bound"' pools.html)" 3 "the lower bound on every bar"
expect_eq "$(grep -c 'lower bound: [0-9.]* [KMG]*i*B (peak requested bytes; no pool holds less)' pools.html)" 3 \
	"the lower bound is named for what it is: peak requested bytes"
expect_eq "$(grep -c 'peak live bytes; no pool' pools.html)" 0 "never called peak live bytes"
expect_eq "$(grep -o '<dt>devices*</dt><dd>[^<]*' pools.html)" "<dt>device</dt><dd>0" \
	"one device is 'device 0', not 'devices 0'"
expect_eq "$(grep -c 'modelled</td>' pools.html)" 3 "sim times labelled modelled"
expect_eq "$(grep -c 'measured</td>' pools.html)" 0 "no time labelled measured"
if grep -q 'saved against caching: ' pools.html; then pass; else fail "bytes saved against the baseline"; fi
if have_sqlite3; then
	sql demo.db "UPDATE replay_metrics SET measured = 1 WHERE name = 'total_ns' AND run = (SELECT id FROM replay_runs WHERE pool = 'direct');"
	mp report demo.db -o measured.html
	expect_status 0
	expect_eq "$(grep -c 'measured</td>' measured.html)" 1 "the time stored as measured"
	expect_eq "$(grep -c 'modelled</td>' measured.html)" 2 "the others still modelled"
fi

step "hostile strings in frames, files, phases, APIs and the command line"
H='<script>alert(1)</script>"'"'"'&</svg>]]>'$'\x01'
E='&lt;script&gt;alert(1)&lt;/script&gt;&quot;&#39;&amp;&lt;/svg&gt;]]&gt;\x01'
q() { printf '"%s"' "${1//\"/\"\"}"; }
{
	echo 'ts_ns,op,id,size,requested,address,device,stream,pid,phase,api,device_free,thread,stack'
	echo "0,reserve,1,4096,4096,0x1000,0,0,1,,$(q "api$H"),,,"
	echo "5,phase_begin,0,0,0,0x0,0,0,1,$(q "ph$H"),,,,"
	echo "10,alloc,1,1024,1000,0x1000,0,0,1,$(q "ph$H"),$(q "api$H"),,,$(q "main@file$H.py:3;fn$H@x$H.py:9")"
	echo "20,alloc,2,1024,1024,0x1800,0,0,1,$(q "ph$H"),$(q "api$H"),,,$(q "main@file$H.py:3;other$H")"
	echo "25,oom,0,9999,9999,0x0,0,0,1,,,100,,"
	echo "35,phase_end,0,0,0,0x0,0,0,1,$(q "ph$H"),,,,"
} >hostile.csv
D='h<script>"'"'"'&]]>'$'\x01''<'
mkdir "$D" || die "mkdir of the hostile directory"
mp import -o "$D/svg>t.db" hostile.csv
expect_status 0
mp report "$D/svg>t.db" -o hostile.html
expect_status 0
expect_self_contained hostile.html
expect_eq "$(grep -c '</svg>' hostile.html)" "$(grep -c '<svg class="chart"' hostile.html)" \
	"</svg> only closing the report's own charts"
expect_eq "$(grep -c -F ']]>' hostile.html)" 0 "raw ]]>"
expect_eq "$(LC_ALL=C grep -c $'\x01' hostile.html)" 0 "raw control character"
expect_eq "$(grep -c -F "\"'&" hostile.html)" 0 "raw quotes and ampersand"
expect_eq "$(grep -c -F 'alert(1)</' hostile.html)" 0 "raw </script>"
for what in "fn$E" "other$E" "ph$E" "api$E" "file&lt;script&gt;"; do
	if grep -q -F -e "$what" hostile.html; then pass; else fail "'$what' not shown escaped"; fi
done
if grep -q -F 'import -o h&lt;script&gt;&quot;&#39;&amp;]]&gt;\x01&lt;/svg&gt;t.db hostile.csv' hostile.html; then
	pass
else
	fail "the command line shown escaped"
fi
expect_eq "$(grep -c 'class="oom-marker"' hostile.html)" 1 "the OOM marked"
expect_eq "$(grep -c 'swatch oom-marker' hostile.html)" 1 "the OOM in the legend"
if grep -q 'requested: 9.76 KiB (9999 B)&#10;device free: 100 B (as recorded)&#10;live: 2.00 KiB (2048 B)&#10;free in reserved: 2.00 KiB (2048 B)&#10;largest hole: 1.00 KiB (1024 B)' hostile.html; then
	pass
else
	fail "the OOM's tooltip: requested, free, largest hole"
fi
charts hostile.html >hostile.charts
while read -r name drawn; do
	if [ "$drawn" -gt 0 ]; then pass; else fail "chart $name has no drawn elements"; fi
done <hostile.charts

step "a trace without stacks says so"
printf 'ts_ns,op,id,size,address\n0,alloc,1,100,0x1000\n5,free,1,100,0x1000\n' >nostack.csv
mp import -o nostack.db nostack.csv
expect_status 0
mp report nostack.db -o nostack.html
expect_status 0
if grep -q '<p>No call stacks: ' nostack.html; then pass; else fail "no sentence on missing stacks"; fi
if grep -q 'data-chart="peak"' nostack.html; then fail "an icicle without stacks"; else pass; fi

step "a 10^6-event trace: points per series and size bounded by --points"
awk 'BEGIN { print "ts_ns,op,id,size,address,device,stream,pid,phase,stack"; ts = 0; n = 0
	print ts ",reserve,1,1073741824,0x10000000,0,0,1,,"; n++
	for (i = 1; n < 1000000; i++) {
		if (i % 50 == 1) { print ts ",phase_begin,0,0,0x0,0,0,1,step,"; n++ }
		a = sprintf("0x%x", 268435456 + (i % 500) * 2097152); sz = (i * 7919) % 1048576 + 512
		print ts ",alloc," i "," sz "," a ",0,0,1,,main@train.py:1;f" (i % 13) "@m.py:" (i % 7)
		ts += 100; print ts ",free," i "," sz "," a ",0,0,1,,"; ts += 50; n += 2
		if (i % 50 == 0) { print ts ",phase_end,0,0,0x0,0,0,1,step,"; n++ }
		if (i % 100000 == 0) { print ts ",oom,0,2147483648,0x0,0,0,1,,"; n++ }
		if (i % 1000 == 0) { print ts ",alloc," i ",4096,0x9000,1,0,1,,"; print ts ",free," i ",4096,0x9000,1,0,1,,"; n += 2 }
	}
}' >big.csv
mp import -o big.db big.csv
expect_status 0
for points in 2000 100; do
	mp report big.db --points=$points --blocks=$points -o big$points.html
	expect_status 0
	expect_self_contained big$points.html
	grep -o '<path class="series [^"]*" d="[^"]*" data-points="[0-9]*"' big$points.html |
		awk -v max=$points '{ d = $0; h = gsub(/H/, "", d); v = gsub(/V/, "", d)
			match($0, /data-points="[0-9]+"/); p = substr($0, RSTART + 13, RLENGTH - 14) + 0
			print (h <= max && v <= max && p <= max && p > 0) ? "ok" : "too many: " h " " v " " p }' >series.txt
	expect_eq "$(grep -c '' series.txt)" 9 "series drawn (5 per device, but no reserved on device 1) with --points=$points"
	expect_eq "$(grep -vc '^ok$' series.txt)" 0 "series over $points points"
	size=$(stat -c %s big$points.html)
	limit=$((150000 + 60 * 5 * points + 100 * points + 2 * 8 * 4097 * 4 / 3))
	if [ "$size" -lt "$limit" ]; then pass; else fail "big$points.html is $size bytes, over $limit"; fi
	expect_eq "$(grep -c 'class="oom-marker"' big$points.html)" 4 "every OOM marked (4)"
	expect_eq "$(charts big$points.html | awk '$2 == 0' | wc -l)" 0 "empty charts"
done
if grep -q 'spans narrower than a pixel were merged with same-named neighbours into' big2000.html; then
	pass
else
	fail "the sentence on merged phase spans"
fi
if [ "$(grep -c '<rect class="phase p' big2000.html)" -le 600 ]; then pass; else fail "over 600 phase spans drawn"; fi

step "--blocks=1: the others merged into one series of their highest per bucket"
# A (100 B, 10..40) is kept first, pushed out at 20 by B (5000 B, 20..30),
# so merged after the fact; C (300 B from 50) is merged as it comes; D
# (4000 B) is smaller than B: merged as it comes.
cat >merge.csv <<'EOF'
ts_ns,op,id,size,address,device,stream,pid,phase,stack
1000,reserve,1,1048576,0x100000,0,0,1,,
1010,alloc,1,100,0x100000,0,0,1,,main@a.py:1
1020,alloc,2,5000,0x101000,0,0,1,,main@b.py:2
1030,free,2,5000,0x101000,0,0,1,,
1040,free,1,100,0x100000,0,0,1,,
1050,alloc,3,300,0x102000,0,0,1,,main@c.py:3
1060,alloc,4,4000,0x103000,0,0,1,,main@d.py:4
EOF
mp import -q -o merge.db merge.csv
expect_status 0
mp report --blocks=1 -o merge.html merge.db
expect_status 0
cat >small.py <<'PY'
import base64, re, struct, sys
page = open(sys.argv[1], encoding="utf-8").read()
x0 = float(re.search(r'data-small-x0="([^"]*)"', page).group(1))
dx = float(re.search(r'data-small-dx="([^"]*)"', page).group(1))
raw = base64.b64decode(re.search(r' data-small="([^"]*)"', page).group(1))
v = struct.unpack("<%dd" % (len(raw) // 8), raw)
at = lambda t: v[min(len(v) - 1, int((t - x0) // dx))]
got = [x0, dx, at(5), at(15), at(35), at(45), at(55), at(65), v[-1]]
want = [0, 1, 0, 100, 100, 0, 300, 4300, 4300]
print(got, want)
sys.exit(0 if got == want else 1)
PY
if python3 small.py merge.html >small.out 2>&1; then pass; else fail "merged series: $(cat small.out)"; fi
if grep -q 'the 1 largest of the device.s 4 blocks; the other 3 are merged into the grey band' merge.html; then
	pass
else
	fail "merge.html does not say what was merged"
fi
mp report --blocks=0 -o merge0.html merge.db # every block merged, none kept
expect_status 0
if grep -q 'the 0 largest of the device.s 4 blocks; the other 4 are merged' merge0.html; then
	pass
else
	fail "merge0.html does not say that every block was merged"
fi

step "--device and --top"
mp report big.db --device=1 --top=1 -o dev1.html
expect_status 0
expect_eq "$(grep -c 'data-device="0"' dev1.html)" 0 "device 0 left out"
expect_eq "$(charts dev1.html | cut -d' ' -f1 | tr '\n' ' ')" "memory frag " "device 1's charts (no stacks)"
if grep -q '<p>No call stacks: ' dev1.html; then pass; else fail "no sentence on missing stacks"; fi
mp report demo.db --top=1 -o top1.html
expect_status 0
expect_eq "$(grep -c '<tr class="leak">' top1.html)" 1 "--top=1 leak rows"

step "exit statuses and messages"
mp report missing.db -o missing.html
expect_status 1
expect_one_message "memprof report: "
expect_file_absent missing.html
for bad in --format=pdf --points=5 --top=0 --device=x --bogus; do
	mp report "$bad" demo.db
	expect_status 2
	expect_stderr_contains "memprof report: "
done
mp report
expect_status 2
mp report demo.db demo.db demo.db
expect_status 2
expect_stderr_contains "more than two traces"
mp report --format=md demo.db demo.db
expect_status 2
expect_stderr_contains "two traces are compared in HTML only"
mp report --help
expect_status 0
expect_stdout_contains "usage: memprof report"

step "written whole or not at all"
mp report demo.db -o no/such/dir/r.html
expect_status 1
expect_file_absent no
expect_no_temp_files .
# a trace whose size no reader takes (imports refuse it: made by hand)
if have_sqlite3; then
	printf 'ts_ns,op,id,size,address\n0,alloc,1,4096,0x1000\n' >huge.csv
	mp import -o huge.db huge.csv
	expect_status 0
	"$SQLITE3_SHELL" huge.db 'UPDATE events SET size = 1152921504606846976, requested = 1152921504606846976;' ||
		die "sqlite3 cannot change huge.db"
	echo old >huge.html
	mp report huge.db -o huge.html
	expect_status 1
	expect_eq "$(cat huge.html)" old "the old file kept when the report fails"
	expect_no_temp_files .
fi

finish
