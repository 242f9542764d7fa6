#!/bin/bash
# check.sh - 'memprof check' as a CI job without a baseline runs it: every
# budget on both sides of its limit (exit 0 at the limit, 3 just past it,
# the message naming it), every format (JSON field by field, JUnit against
# the Jenkins xUnit junit-10.xsd, Markdown table shape with a '|' in a frame
# escaped), modelled reserved bytes labelled, stored replay results shown,
# bad options (2) and missing files (1).
#
# t.csv (device 0): reserve 8000; alloc 4000 (layer); alloc 4000 (attn);
# reserve 4000 -> reserved peak 12000; alloc 2000 (mlp) -> live peak 10000,
# the most live at the reserved peak (free share 2000/12000 =
# 0.166666667); free the
# last two; an OOM.  At the end 4000 B in 1 block are leaked.
# clean.csv: the same without the OOM, everything freed.
set -u
. "$(dirname "$0")/lib.sh"

W=$TMP/work
mkdir "$W" || die "mkdir $W"
cd "$W" || die "cd $W"
command -v python3 >/dev/null || skip "python3 is needed to check the JSON"
XSD=$top_srcdir/tests/data/junit-10.xsd

hdr="ts_ns,op,id,size,requested,address,device,stream,pid,phase,api,device_free,thread,stack"
cat >t.csv <<EOF
$hdr
0,reserve,1,8000,8000,0x100000,0,0,5,,,,,
10,alloc,1,4000,4000,0x100000,0,0,5,,,,,train@/ci/app/train.py:5;layer@/ci/app/model.py:20
20,alloc,2,4000,4000,0x100fa0,0,0,5,,,,,train@/ci/app/train.py:5;attn@/ci/app/model.py:40
30,reserve,2,4000,4000,0x200000,0,0,5,,,,,
40,alloc,3,2000,2000,0x200000,0,0,5,,,,,train@/ci/app/train.py:5;mlp@/ci/app/model.py:60
50,free,2,4000,4000,0x100fa0,0,0,5,,,,,
60,free,3,2000,2000,0x200000,0,0,5,,,,,
70,oom,0,0,9000,0x0,0,0,5,,,100,,
EOF
grep -v ',oom,' t.csv >clean.csv
echo "80,free,1,4000,4000,0x100000,0,0,5,,,,," >>clean.csv

step "import the fixtures"
mp import -o t.db t.csv
expect_status 0
mp import -o clean.db clean.csv
expect_status 0

validate_junit() { # FILE
	if ! command -v xmllint >/dev/null; then
		say "xmllint not found: JUnit not validated (apt-get install libxml2-utils)"
		return
	fi
	if xmllint --noout --schema "$XSD" "$1" 2>"$TMP/xmllint.err"; then
		pass
	else
		fail "'$1' is not valid against junit-10.xsd: $(tail -3 "$TMP/xmllint.err")"
	fi
}

step "no budget: exit 0, the figures and the call sites"
mp check t.db
expect_status 0
expect_stderr_empty
expect_stdout_match '^  peak live +9\.77 KiB$'
expect_stdout_match '^  peak reserved +11\.7 KiB$'
expect_stdout_match '^  free share +0\.166666667$'
expect_stdout_match '^  leaked bytes +3\.91 KiB$'
expect_stdout_match '^  leaked blocks +1$'
expect_stdout_match '^  OOMs +1$'
expect_stdout_match '^ +3\.91 KiB +1  attn \(app/model\.py:40\)$'
expect_stdout_match '^ +1\.95 KiB +1  mlp \(app/model\.py:60\)$'
expect_stdout_line "result: PASS, no threshold checked"

within() { # TRACE OPTION[=VALUE]
	step "$2 on $1 (within)"
	mp check "$2" "$1"
	expect_status 0
	expect_stdout_contains "within $2"
	expect_stdout_contains "result: PASS, 1 check within its threshold"
}
over() { # TRACE OPTION[=VALUE] MESSAGE
	step "$2 on $1 (over)"
	mp check "$2" "$1"
	expect_status 3
	expect_stdout_contains "EXCEEDED     $3"
	expect_stdout_contains "result: FAIL, 1 of 1 checks exceeded a threshold"
	expect_stderr_empty
}

within t.db --max-peak=10000
over t.db --max-peak=9999 "peak live on device 0 is 9.77 KiB, over --max-peak=9999 by 1 B"
within t.db --max-peak=1GiB
within t.db --max-reserved=12000
over t.db --max-reserved=11999B "peak reserved on device 0 is 11.7 KiB, over --max-reserved=11999B by 1 B"
within t.db --max-free-share=0.166666667
over t.db --max-free-share=0.166666666 \
	"free share on device 0 is 0.166666667, over --max-free-share=0.166666666 by 0.000000001"
within t.db --max-leaked=4000
over t.db --max-leaked=3999 "leaked bytes on device 0 is 3.91 KiB, over --max-leaked=3999 by 1 B"
within clean.db --max-leaked=0
within clean.db --no-leaks
over t.db --no-leaks "leaked blocks on device 0: 1 block, over --no-leaks by 1 block"
within clean.db --no-oom
over t.db --no-oom "OOMs on device 0: 1, over --no-oom by 1"

step "every budget at once"
mp check --max-peak=20GiB --max-reserved=1MiB --max-free-share=0.1 --no-leaks --no-oom t.db
expect_status 3
expect_stdout_contains "result: FAIL, 3 of 5 checks exceeded a threshold"
mp check --max-peak=20GiB --max-reserved=1MiB --max-free-share=0.5 --no-leaks --no-oom clean.db
expect_status 0
expect_stdout_contains "result: PASS, 5 checks within their thresholds"

step "JSON"
mp check --format=json --max-peak=9999 --no-leaks --max-free-share=0.5 t.db
expect_status 3
cp "$OUT" c.json
check_json c.json '
assert j["memprof_gate_version"] == 2 and j["command"] == "check"
assert j["trace"]["path"] == "t.db" and "base" not in j and "head" not in j
d, = j["devices"]
f = d["figures"]
assert f["peak_live"] == {"bytes": 10000, "ts_ns": 40, "seq": 5}
assert f["reserved_from"] == "segments" and f["peak_reserved"] == {"bytes": 12000, "ts_ns": 30, "seq": 4}
assert f["free_share"] == 0.166666667 and f["external_fragmentation"] == 0
assert (f["leaked_bytes"], f["leaked_blocks"], f["ooms"]) == (4000, 1, 1)
assert [(s["key"], s["bytes"], s["blocks"]) for s in d["sites"]] == [
    ("attn@app/model.py", 4000, 1), ("layer@app/model.py", 4000, 1), ("mlp@app/model.py", 2000, 1)]
t = {x["name"]: x for x in j["thresholds"]}
assert t["max-peak"]["outcome"] == "exceeded" and t["max-peak"]["over"] == 1 and t["max-peak"]["limit"] == 9999
assert t["max-peak"]["base"] is None and t["max-peak"]["head"] == 10000
assert t["no-leaks"]["outcome"] == "exceeded" and t["no-leaks"]["unit"] == "count" and t["no-leaks"]["option"] == "--no-leaks"
assert t["max-free-share"]["outcome"] == "pass" and t["max-free-share"]["head"] == 0.166666667
assert j["exceeded"] == 2 and j["status"] == "fail"
'

step "JUnit: one testcase per budget, a failure for each exceeded"
mp check --format=junit --max-peak=9999 --no-leaks --max-free-share=0.5 --no-oom t.db
expect_status 3
cp "$OUT" c.xml
validate_junit c.xml
python3 - c.xml <<'PY' && pass || fail "JUnit content"
import sys, xml.etree.ElementTree as ET
s = ET.parse(sys.argv[1]).getroot()
assert (s.get("name"), s.get("tests"), s.get("failures"), s.get("errors")) == ("memprof", "4", "3", "0"), s.attrib
cases = {c.get("name"): c for c in s.findall("testcase")}
assert sorted(cases) == ["max-free-share device 0", "max-peak device 0", "no-leaks device 0", "no-oom device 0"]
assert all(c.get("classname") == "memprof.check" for c in cases.values())
assert cases["max-free-share device 0"].find("failure") is None
m = cases["max-peak device 0"].find("failure").get("message")
assert m == "peak live on device 0 is 9.77 KiB, over --max-peak=9999 by 1 B", m
p = {x.get("name"): x.get("value") for x in s.find("properties")}
assert p["trace"] == "t.db" and p["device.0.peak_live_bytes"] == "10000" and p["device.0.ooms"] == "1"
PY
mp check --format=junit clean.db
expect_status 0
cp "$OUT" empty.xml
validate_junit empty.xml
expect_stdout_contains '<testsuite name="memprof" tests="0" failures="0" errors="0" skipped="0">'

step "Markdown: a '|' and markup in a frame are escaped"
sed 's/attn@/at|tn<b>*x*@/' t.csv >pipe.csv
mp import -o pipe.db pipe.csv
expect_status 0
mp check --format=md --max-peak=9999 pipe.db
expect_status 3
cp "$OUT" c.md
expect_stdout_line "## memprof check: FAIL, 1 of 1 checks exceeded a threshold"
expect_stdout_line "| peak live | 9.77 KiB |"
expect_stdout_line '| 3.91 KiB | 1 | at\|tn&lt;b&gt;\*x\* (app/model.py:40) |'
expect_stdout_not_contains "<b>"
python3 - c.md <<'PY' && pass || fail "Markdown table shape"
import re, sys
cells = lambda line: len(re.findall(r"(?<!\\)\|", line)) - 1
rows = open(sys.argv[1]).read().split("\n")
i = n_tables = 0
while i < len(rows):
    if rows[i].startswith("|") and i + 1 < len(rows) and rows[i + 1].startswith("|-"):
        n = cells(rows[i]); n_tables += 1
        i += 1
        while i < len(rows) and rows[i].startswith("|"):
            assert cells(rows[i]) == n, (n, rows[i])
            i += 1
    else:
        i += 1
assert n_tables == 3, n_tables
PY
mp check --format=junit pipe.db
cp "$OUT" pipe.xml
validate_junit pipe.xml

step "one run: text, Markdown, JUnit and JSON"
mp check --max-peak=9999 --md=c2.md --junit=c2.xml --json=c2.json t.db
expect_status 3
expect_stdout_contains "over --max-peak=9999 by 1 B"
validate_junit c2.xml
check_json c2.json 'assert j["status"] == "fail"'
if grep -q "^| \*\*exceeded\*\* | --max-peak=9999 | 0 | " c2.md; then pass; else fail "c2.md: no exceeded row"; fi
expect_no_temp_files .

step "modelled reserved bytes (no segments) are labelled in every format"
mp import -o addr.db "$DATA/analyze-address.csv"
expect_status 0
mp check --granularity=4KiB --max-reserved=12288 --max-free-share=0.4 addr.db
expect_status 3
expect_stdout_contains "peak reserved on device 1 (modelled) is 12.0 KiB, within --max-reserved=12288"
expect_stdout_contains "free share on device 1 (modelled) is 0.430338542, over --max-free-share=0.4 by 0.030338542"
expect_stdout_contains "modelled from block addresses (4.00 KiB granules, at the live peak)"
mp check --granularity=4KiB --max-reserved=12287 --format=json addr.db
expect_status 3
cp "$OUT" addr.json
check_json addr.json '
f = j["devices"][0]["figures"]
assert f["reserved_from"] == "modelled" and f["peak_reserved"]["bytes"] == 12288
assert f["free_in_reserved_bytes"] == 5288 and f["free_share"] == 0.430338542
t, = j["thresholds"]
assert t["modelled"] is True and t["outcome"] == "exceeded" and "(modelled)" in t["message"]
assert any("modelled from block addresses" in n for n in j["notes"])
'
mp check --granularity=4KiB --format=md addr.db
expect_stdout_line "| peak reserved (modelled) | 12.0 KiB |"
mp check --granularity=4KiB --max-reserved=1 --format=junit addr.db
cp "$OUT" addr.xml
validate_junit addr.xml
expect_stdout_contains 'name="device.1.reserved_from" value="modelled"'
expect_stdout_contains '(modelled)'

step "no addresses and no segments: reserved bytes unknown, the budget not checked"
printf '%s\n0,alloc,1,100,100,0x0,0,0,5,,,,,\n' "$hdr" >noaddr.csv
mp import -o noaddr.db noaddr.csv
expect_status 0
mp check --max-reserved=1 --max-free-share=0.1 --max-peak=100 --format=junit noaddr.db
expect_status 0
cp "$OUT" noaddr.xml
validate_junit noaddr.xml
expect_stdout_contains 'skipped="2"'
expect_stdout_contains '<skipped message="reserved bytes are unknown (no segment-level events and no addresses)"/>'
mp check --max-reserved=1 --max-free-share=0.1 --max-peak=100 noaddr.db
expect_status 0
expect_stdout_match '^  NOT CHECKED  peak reserved on device 0: not checked against --max-reserved=1: '
expect_stdout_line "result: PASS, 1 check within its threshold, 2 NOT CHECKED"
mp check --require-checked --max-reserved=1 --max-peak=100 noaddr.db
expect_status 3
expect_stdout_line "result: FAIL, 1 check within its threshold, 1 NOT CHECKED (--require-checked)"
mp check --require-checked --max-peak=100 noaddr.db
expect_status 0

step "--device"
mp check --device=0 --max-peak=9999 t.db
expect_status 3
mp check --device=1 t.db
expect_status 1
expect_stderr_contains "memprof check: no device 1 in 't.db': its devices: 0"

step "stored replay results are shown"
mp replay --pool=caching,bucketed --backend=sim t.db
expect_status 0
mp check t.db
expect_status 0
expect_stdout_match "^  device 0  caching \(sim\): peak reserved .*, allocator time .* \(modelled\)$"
expect_stdout_match "^  device 0  bucketed \(sim\): peak reserved "
mp check --format=json t.db
cp "$OUT" pools.json
check_json pools.json '
p = [(x["pool"], x["backend"], x["figures"]["time"]) for x in j["pools"]]
assert p == [("bucketed", "sim", "modelled"), ("caching", "sim", "modelled")], p
assert all(x["figures"]["peak_reserved_bytes"] > 0 for x in j["pools"])
'

step "bad options: exit 2"
for args in "--bogus t.db" "--max-peak=big t.db" "--max-peak=2% t.db" "--max-free-share=2 t.db" \
	"--max-leaked=-1 t.db" "--no-leaks=1 t.db" "--max-peak-increase=2% t.db" \
	"--max-pe=1GiB t.db" "--format=html t.db" "--device=-1 t.db" "t.db t.db" ""; do
	# shellcheck disable=SC2086
	mp check $args
	expect_status 2
	expect_stderr_contains "try 'memprof check --help'"
	expect_stdout_empty
done
step "--max-free-share as a percentage"
mp check --max-free-share=16.6666667% t.db
expect_status 0
expect_stdout_contains "within --max-free-share=16.6666667%"
mp check --max-free-share=16.6666666% t.db
expect_status 3
mp check --max-free-share=17 t.db
expect_status 2
expect_stderr_contains "(did you mean 17%?)"

step "the older name --max-frag is the same limit, reported under its new name"
mp check --max-frag=0.166666666 t.db
expect_status 3
expect_stdout_contains "free share on device 0 is 0.166666667, over --max-free-share=0.166666666 by 0.000000001"
expect_stdout_not_contains "fragmentation on device"
mp check --help
expect_status 0
expect_stdout_contains "usage: memprof check [options] TRACE"

step "missing files: exit 1"
mp check missing.db
expect_status 1
expect_stderr_contains "missing.db"
expect_stdout_empty
mp check --junit=no/such/dir/c.xml t.db
expect_status 1
expect_stderr_contains "no/such/dir/c.xml"

finish
