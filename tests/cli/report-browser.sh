#!/bin/bash
# report-browser.sh - 'memprof report' opened in headless Chromium as a
# person would open it (tests/browser/check-report.mjs): from disk, nothing
# requested, no console error, every chart drawn, stacks and markers shown on
# hover, a screenshot with pixels in every chart.  Three traces, written here
# as CSV: one with known stacks, phases, an OOM and stored replay results;
# the same without replay results (no pools chart); one whose frames, files,
# phases, APIs, trace name and command line carry HTML and script that must
# run nothing and show literally.  First the checker itself must fail on
# broken copies of tests/browser/fixtures/contract.html.
#
# Skipped (77) when /usr/bin/chromium, node or tests/browser/node_modules is
# missing, unless MEMPROF_REQUIRE_BROWSER=1: then that is a failure.
# node_modules is looked for in tests/browser of the source tree, then in
# $MEMPROF_BROWSER_MODULES, then in the trees above it (make distcheck).
# KEEP_WORK=DIR copies the traces, reports, screenshot and checker output
# there before the test ends.
set -u
. "$(dirname "$0")/lib.sh"

W=$TMP/work
mkdir "$W" || die "mkdir $W"
cd "$W" || die "cd $W"
BROWSER_SRC=$top_srcdir/tests/browser
CHROMIUM=${MEMPROF_CHROMIUM:-/usr/bin/chromium}

# missing WHAT: skip, or fail when the browser test is required.
missing() {
	if [ "${MEMPROF_REQUIRE_BROWSER:-0}" = 1 ]; then
		fail "MEMPROF_REQUIRE_BROWSER=1 but $1"
		finish
	fi
	skip "$1"
}

# A node_modules holding the playwright-core of our package-lock.json.
find_modules() {
	local d i
	d=$(cd "$top_srcdir" && pwd -P) || return
	if [ -d "$BROWSER_SRC/node_modules/playwright-core" ]; then
		echo "$BROWSER_SRC/node_modules"
		return
	fi
	if [ -n "${MEMPROF_BROWSER_MODULES:-}" ] && [ -d "$MEMPROF_BROWSER_MODULES/playwright-core" ]; then
		echo "$MEMPROF_BROWSER_MODULES"
		return
	fi
	for i in 1 2 3; do
		d=$(dirname "$d")
		if [ -d "$d/tests/browser/node_modules/playwright-core" ] &&
			cmp -s "$d/tests/browser/package-lock.json" "$BROWSER_SRC/package-lock.json"; then
			echo "$d/tests/browser/node_modules"
			return
		fi
	done
}

[ -x "$CHROMIUM" ] || missing "no Chromium at '$CHROMIUM' (apt-get install chromium)"
command -v node >/dev/null || missing "no node (apt-get install nodejs)"
modules=$(find_modules)
[ -n "$modules" ] || missing "no tests/browser/node_modules (npm ci --prefix tests/browser)"
command -v python3 >/dev/null || missing "no python3 (for the hostile strings' JSON)"

# The scripts run from a copy beside the node_modules found.
B=$TMP/browser
mkdir "$B" || die "mkdir $B"
cp "$BROWSER_SRC"/*.mjs "$BROWSER_SRC/package.json" "$B/" || die "cannot copy the browser scripts"
cp -r "$BROWSER_SRC/fixtures" "$B/" || die "cannot copy the fixtures"
ln -s "$modules" "$B/node_modules" || die "cannot link '$modules'"
export MEMPROF_CHROMIUM=$CHROMIUM

# check NAME EXPECTED_STATUS ARG...: run the checker on a report; its lines
# go to the log; a failure shows its 'not ok' lines.  The broken copies of
# the fixture wait 1 s for a tooltip instead of 10: they are expected to fail.
check() {
	local name=$1 want=$2
	shift 2
	local t0=$SECONDS
	LAST_CMD="node check-report.mjs $*"
	node "$B/check-report.mjs" "$@" >"$W/$name.out" 2>&1 </dev/null
	status=$?
	if [ "$status" -eq "$want" ]; then
		pass
		tail -n 1 "$W/$name.out" | sed "s/^/$TEST_NAME: [$name] /; s/\$/ ($((SECONDS - t0)) s)/"
	else
		grep -v '^ok [0-9]' "$W/$name.out" | tail -n 60 | sed "s/^/$TEST_NAME: [$name] /"
		fail "$name: the checker exited $status, not $want"
	fi
}

step "the checker passes the contract fixture and fails broken copies of it"
FX=$B/fixtures/contract.html
check fixture 0 --report "$FX" --charts memory,frag,peak,pools --tip bwd --oom --findings
sed 's|<h2>Replay</h2>|<h2>Replay</h2><img src="http://198.51.100.7/x.png">|; s|<meta http-equiv="Content-Security-Policy"[^>]*>||' \
	"$FX" >bad-network.html
check bad-network 1 --hover-timeout 1000 --report bad-network.html
grep -q 'not ok .* no request but the report file itself' bad-network.out && pass ||
	fail "the checker did not see the request of bad-network.html"
sed 's|tip.textContent = |tip.innerHTML = |; s|data-tip="300 B"|data-tip="\&lt;img src=x onerror=\&quot;window.__pwned=2\&quot;\&gt;"|' \
	"$FX" >bad-xss.html
printf '%s\n' '["<img src=x onerror=\"window.__pwned=2\">"]' >bad-xss.json
check bad-xss 1 --hover-timeout 1000 --report bad-xss.html --hostile bad-xss.json
grep -q 'not ok .* nothing set window.__pwned' bad-xss.out && pass ||
	fail "the checker did not see the script of bad-xss.html run"
sed 's|<path d="M 40 110[^>]*>||' "$FX" >bad-empty.html
check bad-empty 1 --hover-timeout 1000 --report bad-empty.html
grep -q "not ok .* chart 'frag' (device 0) has drawn elements" bad-empty.out && pass ||
	fail "the checker did not see the empty chart of bad-empty.html"
sed 's|(function () {|(function () { null.x;|' "$FX" >bad-error.html
check bad-error 1 --hover-timeout 1000 --report bad-error.html
grep -q 'not ok .* no page error' bad-error.out && pass ||
	fail "the checker did not see the page error of bad-error.html"

# Device 0: a 1 MiB segment; phases forward and backward; stacks worked out
# as in analyze.sh (bwd 300, mlp 200, fwd 100 live at the peak; bwd's stack
# holds an interpreter frame, drawn only behind the icicle's toggle); an OOM.
# Device 1: blocks with addresses, no segments.
cat >known.csv <<'EOF'
ts_ns,op,id,size,requested,address,device,stream,pid,phase,api,device_free,thread,stack
0,reserve,1,1048576,1048576,0x100000,0,0,5,,cudaMalloc,,,
5,phase_begin,0,0,0,0,0,0,5,forward,,,,
10,alloc,1,100000,90000,0x100000,0,7,5,forward,,,,train@train.py:5;fwd@model.py:10
20,alloc,2,200000,200000,0x120000,0,7,5,forward,,,,train@train.py:5;mlp@model.py:20
25,phase_end,0,0,0,0,0,0,5,forward,,,,
26,phase_begin,0,0,0,0,0,0,5,backward,,,,
30,alloc,3,300000,250000,0x160000,0,9,5,backward,,,,train@train.py:5;PyEval_EvalFrameDefault@Python/ceval.c:4200;bwd@model.py:30
40,free,2,200000,200000,0x120000,0,7,5,,,,,
50,oom,0,0,900000,0x0,0,7,5,,,12345,,
60,alloc,4,50000,50000,0x120000,0,7,5,backward,,,,train@train.py:5;fwd@model.py:10
90,phase_end,0,0,0,0,0,0,5,backward,,,,
100,free,1,100000,90000,0x100000,0,7,5,,,,,
110,alloc,5,4096,4096,0x7000000,1,0,5,,,,,main@run.py:1;load@io.py:2
120,alloc,6,8192,8192,0x7100000,1,0,5,,,,,main@run.py:1;load@io.py:2
130,free,5,4096,4096,0x7000000,1,0,5,,,,,
EOF

step "a trace with stacks, phases, an OOM and stored replay results"
mp import -q -o known.db known.csv
expect_status 0
mp replay --pool=all known.db
expect_status 0
mp report -o known.html known.db
expect_status 0
expect_file_present known.html
check known 0 --report known.html --charts memory,frag,peak,pools --tip bwd --tip mlp --oom \
	--findings --screenshot known.png --views --band-tip bwd --band-tip mlp --brush \
	--pick-out known-pick.json --all-frames PyEval_EvalFrameDefault
expect_file_present known.png
if grep -q '<td class="num">50.0%</td><td class="num">1</td><td class="num">1</td><td>bwd (model.py:30)</td>' \
	known.html; then
	pass
else
	fail "known.html has no top call sites table with bwd's 50.0% of the peak"
fi

step "the allocator state drawn at the peak, the OOM, the end and a clicked moment is analyze's"
# The trace starts at 0 ns, so the page's moments (from the first event) are timestamps.
moment=$(python3 -c 'import json, sys; print(int(float(json.load(open(sys.argv[1]))["picked"]["moment"])))' \
	known-pick.json) || die "no picked moment in known-pick.json"
mp analyze --json --at="$moment" known.db
expect_status 0
cp "$OUT" known-at.json
cat >compare.py <<'PY'
import json, sys
page, at = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
d = at["devices"][0]
f, m = d["fragmentation"], {x["label"]: x for x in page["marks"]}
want = [("picked", "live", page["picked"], d["attribution"]["live_bytes"]),
        ("peak", "free", m["the live peak"], f["at_peak"]["free_in_reserved_bytes"]),
        ("peak", "hole", m["the live peak"], f["at_peak"]["largest_hole_bytes"]),
        ("oom", "free", m["OOM 1"], d["ooms"][0]["free_in_reserved_bytes"]),
        ("oom", "hole", m["OOM 1"], d["ooms"][0]["largest_hole_bytes"]),
        ("end", "free", m["the end"], f["at_end"]["free_in_reserved_bytes"]),
        ("end", "live", m["the end"], d["end"]["live_bytes"])]
bad = [f"{w} {k}: page {int(float(p[k]))}, analyze {a}" for w, k, p, a in want if int(float(p[k])) != a]
print("\n".join(bad))
sys.exit(1 if bad else 0)
PY
if python3 compare.py known-pick.json known-at.json >compare.out 2>&1; then
	pass
else
	fail "the allocator state differs from 'memprof analyze --at=$moment': $(cat compare.out)"
fi

step "no replay results stored: no pools chart, a sentence instead"
mp import -q -o plain.db known.csv
expect_status 0
mp report -o plain.html plain.db
expect_status 0
check plain 0 --report plain.html --charts memory,frag,peak --absent pools --tip fwd --findings
grep -q 'memprof replay' plain.html && pass || fail "plain.html does not say how to add replay results"

step "a snapshot without timestamps, with allocator settings and a private pool"
# Settings and frames hold hostile strings; the segment of pool (7, 1) is private.
cat >notime.py <<'PY'
import json, pickle, sys
h = json.load(open(sys.argv[1]))
MiB = 1 << 20
fr = [{"name": h[0], "filename": "m.py", "line": 3}, {"name": "main", "filename": "t.py", "line": 1}]
def seg(addr, size, pool, blocks):
    out, at = [], addr
    for s, st, f in blocks:
        out.append({"address": at, "size": s, "requested_size": s, "state": st, "frames": f})
        at += s
    return {"device": 0, "address": addr, "total_size": size, "allocated_size": 0, "active_size": 0,
            "requested_size": 0, "stream": 0, "segment_type": "large", "segment_pool_id": pool,
            "is_expandable": False, "frames": [], "blocks": out}
snap = {"segments": [seg(0x1000000, 2 * MiB, (0, 0), [(MiB, "active_allocated", fr), (MiB, "inactive", [])]),
                     seg(0x2000000, 4 * MiB, (7, 1), [(4 * MiB, "active_allocated", fr[1:])])],
        "device_traces": [[{"action": "alloc", "addr": 0x1100000, "size": 512 * 1024, "stream": 0, "frames": fr[1:]},
                           {"action": "free_requested", "addr": 0x1100000, "size": 512 * 1024, "stream": 0, "frames": []},
                           {"action": "free_completed", "addr": 0x1100000, "size": 512 * 1024, "stream": 0, "frames": []}]],
        "allocator_settings": {"PYTORCH_CUDA_ALLOC_CONF": h[1], h[2]: 1, "max_split_size": -1}}
pickle.dump(snap, open(sys.argv[2], "wb"), protocol=4)
PY
printf '%s\n' '["<script>window.__pwned=1</script>", "<img src=x onerror=\"window.__pwned=2\">", "\"><svg onload=window.__pwned=3>"]' \
	>notime.json
run python3 notime.py notime.json notime.pickle
expect_status 0
mp import -q -o notime.db notime.pickle
expect_status 0
mp report -o notime.html notime.db
expect_status 0
for want in 'none: only the order of events is known' 'data-axis="events"' \
	'<td><code>7,1</code></td><td><code>1 segments, 4194304 bytes, device 0</code></td>' \
	'2 blocks (5.00 MiB) were allocated before'; do
	grep -qF "$want" notime.html && pass || fail "notime.html does not hold '$want'"
done
check notime 0 --report notime.html --charts peak --views --axis events --hostile notime.json

step "two runs: the call sites that grew at the peak are memprof diff's, both timelines zoom together"
cat >base.csv <<'EOF'
ts_ns,op,id,size,requested,address,device,stream,pid,phase,api,device_free,thread,stack
0,reserve,1,1048576,1048576,0x100000,0,0,5,,cudaMalloc,,,
10,alloc,1,100000,100000,0x100000,0,7,5,,,,,train@train.py:5;fwd@model.py:10
20,alloc,2,200000,200000,0x120000,0,7,5,,,,,train@train.py:5;mlp@model.py:20
30,free,2,200000,200000,0x120000,0,7,5,,,,,
40,free,1,100000,100000,0x100000,0,7,5,,,,,
EOF
cat >head.csv <<'EOF'
ts_ns,op,id,size,requested,address,device,stream,pid,phase,api,device_free,thread,stack
0,reserve,1,1048576,1048576,0x100000,0,0,5,,cudaMalloc,,,
10,alloc,1,100000,100000,0x100000,0,7,5,,,,,train@train.py:5;fwd@model.py:10
20,alloc,2,500000,500000,0x120000,0,7,5,,,,,train@train.py:5;mlp@model.py:20
25,alloc,3,50000,50000,0x1a0000,0,7,5,,,,,train@train.py:5;<b>new</b>@model.py:40
30,free,2,500000,500000,0x120000,0,7,5,,,,,
60,free,1,100000,100000,0x100000,0,7,5,,,,,
EOF
mp import -q -o base.db base.csv
expect_status 0
mp import -q -o head.db head.csv
expect_status 0
mp report -o diff.html base.db head.db
expect_status 0
mp diff --format=json base.db head.db
expect_status 0
cp "$OUT" diff.json
cat >sites.py <<'PY'
import html, json, re, sys
page = open(sys.argv[1], encoding="utf-8").read()
rows = re.findall(r'data-delta="(-?\d+)">[^<]*</td><td>([^<]*)</td>', page)
got = [(int(d), html.unescape(t).split(" (")[0]) for d, t in rows]
want = [(s["delta_bytes"], s["name"]) for s in json.load(open(sys.argv[2]))["devices"][0]["sites"]]
print(got, want)
sys.exit(0 if got == want and got else 1)
PY
if python3 sites.py diff.html diff.json >sites.out 2>&1; then
	pass
else
	fail "diff.html's call-site changes are not memprof diff's: $(cat sites.out)"
fi
grep -q '<pre class="gate">' diff.html && pass || fail "diff.html has no gate figures"
check diff 0 --report diff.html --charts memory --absent peak,frag --views --band-tip '<b>new</b>' --brush

# --- hostile strings -----------------------------------------------------------------
# Each must run nothing and show literally.  In the CSV, stack text escapes
# ';' and '@' in names and ';' and ':' in files (memprof-trace(5)); a field
# with '"' is quoted and the quote doubled.  @LS@ becomes U+2028 (a line
# separator that ends a JavaScript string literal in older engines).
cat >hostile.json.in <<'EOF'
[
 "<script>window.__pwned=1</script>",
 "<img src=x onerror=\"window.__pwned=2\">",
 "\"><svg onload=window.__pwned=3>",
 "'><iframe srcdoc=\"<script>parent.__pwned=4</script>\">",
 "</style></svg><script>window.__pwned=5</script>",
 "&lt;b&gt;not bold&lt;/b&gt;",
 "]]><!-- --><script>window.__pwned=7</script>",
 "{{7*7}}${window.__pwned=8}",
 "sep@LS@arator</script><script>window.__pwned=9</script>",
 "<u onclick=\"window.__pwned=10\">cmdline</u>",
 "<marquee onstart=window.__pwned=11>trace"
]
EOF
cat >hostile.csv.in <<'EOF'
ts_ns,op,id,size,requested,address,device,stream,pid,phase,api,device_free,thread,stack
0,reserve,1,4194304,4194304,0x100000,0,0,7,,<script>window.__pwned=1</script>,,,
5,phase_begin,0,0,0,0,0,0,7,"<img src=x onerror=""window.__pwned=2"">",,,,
10,alloc,1,400000,400000,0x100000,0,0,7,"<img src=x onerror=""window.__pwned=2"">","'><iframe srcdoc=""<script>parent.__pwned=4</script>"">",,,"main@train.py:1;<script>window.__pwned=1</script>@""><svg onload=window.__pwned=3>:2;<img src=x onerror=""window.__pwned=2"">@model.py:3"
20,alloc,2,300000,300000,0x200000,0,0,7,"<img src=x onerror=""window.__pwned=2"">",<script>window.__pwned=1</script>,,,"main@train.py:1;'><iframe srcdoc=""<script>parent.__pwned=4</script>"">@</style></svg><script>window.__pwned=5</script>:4;&lt\;b&gt\;not bold&lt\;/b&gt\;@layer.py:5"
25,phase_end,0,0,0,0,0,0,7,"<img src=x onerror=""window.__pwned=2"">",,,,
30,phase_begin,0,0,0,0,0,0,7,"""><svg onload=window.__pwned=3>",,,,
40,alloc,3,200000,200000,0x300000,0,0,7,"""><svg onload=window.__pwned=3>",,,,"main@train.py:1;]]><!-- --><script>window.__pwned=7</script>@x.py:6;{{7*7}}${window.__pwned=8}@y.py:7"
50,alloc,4,100000,100000,0x380000,0,0,7,</style></svg><script>window.__pwned=5</script>,,,,main@train.py:1;sep@LS@arator</script><script>window.__pwned=9</script>@z.py:8
60,free,1,400000,400000,0x100000,0,0,7,,,,,
70,oom,0,0,8000000,0x0,0,0,7,,,100,,
80,phase_end,0,0,0,0,0,0,7,"""><svg onload=window.__pwned=3>",,,,
EOF
LS=$(printf '\342\200\250')
sed "s/@LS@/$LS/g" hostile.json.in >hostile.json || die "cannot write hostile.json"
sed "s/@LS@/$LS/g" hostile.csv.in >hostile.csv.tmp || die "cannot write hostile.csv"
python3 -c 'import json, sys; json.load(open(sys.argv[1]))' hostile.json || die "hostile.json is not JSON"

step "hostile strings in frames, files, phases, APIs, the trace's name and command line"
# The command line holds the input's path: directories make the '/' of '</u>'.
cmd_dir="$W/<u onclick=\"window.__pwned=10\">cmdline<"
mkdir -p "$cmd_dir" || die "mkdir $cmd_dir"
mv hostile.csv.tmp "$cmd_dir/u>.csv" || die "cannot move hostile.csv"
hostile_db="$W/<marquee onstart=window.__pwned=11>trace.db"
mp import -q -o "$hostile_db" "$cmd_dir/u>.csv"
expect_status 0
mp replay --pool=caching,planned "$hostile_db"
expect_status 0
mp report -o hostile.html "$hostile_db"
expect_status 0
check hostile 0 --report hostile.html --charts memory,frag,peak,pools --oom --findings \
	--hostile hostile.json --views
if grep -q -e '<script>window' -e '<img src' -e '<svg onload' -e '<iframe' -e '<u onclick' \
	-e '<marquee' hostile.html; then
	fail "hostile.html holds a hostile string unescaped"
else
	pass
fi

[ -n "${KEEP_WORK:-}" ] && cp -r "$W" "$KEEP_WORK"
finish
