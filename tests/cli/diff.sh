#!/bin/bash
# diff.sh - 'memprof diff' as a CI job runs it: every threshold on both sides
# of its limit (exit 0 at the limit, 3 just past it, the message naming it),
# every format (JSON checked field by field, JUnit against the Jenkins xUnit
# junit-10.xsd with xmllint, the Markdown tables' shape), one run writing
# text, Markdown and JUnit, bad options (2), missing files (1), traces with
# different devices, stored replay results, and a real pair of PyTorch
# snapshots.
#
# base.csv (device 0):                      head.csv (device 0):
#   e1 reserve 8000                           e1 reserve 8000
#   e2 alloc 4000 layer@app/model.py:20       e2 alloc 4000 layer@app/model.py:20
#   e3 alloc 4000 attn@app/model.py:40        e3 alloc 4000 attention@app/model.py:45
#   e4 reserve 4000 (reserved peak 12000)     e4 reserve 5000 (reserved peak 13000)
#   e5 alloc 2000 mlp@app/model.py:60         e5 alloc 2200 mlp@app/model.py:62
#      (live peak 10000: fragmentation           (live peak 10200: fragmentation
#      at the reserved peak 2000/12000)          at the reserved peak 2800/13000)
#   e6, e7 free e3's and e5's blocks          e6, e7 the same
#   e8 an OOM                                 no OOM
# The frames live in /home/ci/a/app/ in BASE and /work/b/app/ in HEAD: call
# sites are keyed by function and the last two path components, so layer
# and mlp (moved by two lines) are the same sites in both.
# So: peak live +200 B = +2% exactly; peak reserved +1000 B = +8.333...%;
# free share 0.166666667 -> 0.215384615 (rounded to 10^-9), +0.048717948;
# call sites: attention +4000 (new), mlp +200, attn -4000 (gone).
set -u
. "$(dirname "$0")/lib.sh"

W=$TMP/work
mkdir "$W" || die "mkdir $W"
cd "$W" || die "cd $W"
command -v python3 >/dev/null || skip "python3 is needed to check the JSON"
XSD=$top_srcdir/tests/data/junit-10.xsd
have_xmllint() { command -v xmllint >/dev/null; }

hdr="ts_ns,op,id,size,requested,address,device,stream,pid,phase,api,device_free,thread,stack"
cat >base.csv <<EOF
$hdr
0,reserve,1,8000,8000,0x100000,0,0,5,,,,,
10,alloc,1,4000,4000,0x100000,0,0,5,,,,,train@/home/ci/a/app/train.py:5;layer@/home/ci/a/app/model.py:20
20,alloc,2,4000,4000,0x100fa0,0,0,5,,,,,train@/home/ci/a/app/train.py:5;attn@/home/ci/a/app/model.py:40
30,reserve,2,4000,4000,0x200000,0,0,5,,,,,
40,alloc,3,2000,2000,0x200000,0,0,5,,,,,train@/home/ci/a/app/train.py:5;mlp@/home/ci/a/app/model.py:60
50,free,2,4000,4000,0x100fa0,0,0,5,,,,,
60,free,3,2000,2000,0x200000,0,0,5,,,,,
70,oom,0,0,9000,0x0,0,0,5,,,100,,
EOF
cat >head.csv <<EOF
$hdr
0,reserve,1,8000,8000,0x100000,0,0,5,,,,,
10,alloc,1,4000,4000,0x100000,0,0,5,,,,,train@/work/b/app/train.py:5;layer@/work/b/app/model.py:20
20,alloc,2,4000,4000,0x100fa0,0,0,5,,,,,train@/work/b/app/train.py:5;attention@/work/b/app/model.py:45
30,reserve,2,5000,5000,0x200000,0,0,5,,,,,
40,alloc,3,2200,2200,0x200000,0,0,5,,,,,train@/work/b/app/train.py:5;mlp@/work/b/app/model.py:62
50,free,2,4000,4000,0x100fa0,0,0,5,,,,,
60,free,3,2200,2200,0x200000,0,0,5,,,,,
EOF

step "import the fixtures"
for t in base head; do
	mp import -o $t.db $t.csv
	expect_status 0
done

step "no threshold: exit 0, the figures and the call sites"
mp diff base.db head.db
expect_status 0
expect_stderr_empty
expect_stdout_match '^  peak live +9\.77 KiB +9\.96 KiB +\+200 B \(\+2%\)$'
expect_stdout_match '^  peak reserved +11\.7 KiB +12\.7 KiB +\+1000 B \(\+8\.33%\)$'
expect_stdout_match '^  free share +0\.166666667 +0\.215384615 +\+0\.048717948$'
expect_stdout_match '^  OOMs +1 +0 +-1$'
# ranked by growth: the new site first, the vanished one last; layer is unchanged
sites=$(grep -E '^ +(-|[0-9.]+ [KMG]?i?B) +(-|[0-9.]+ [KMG]?i?B) +[-+]' "$OUT" | sed 's/  */ /g')
expect_eq "$sites" " - 3.91 KiB +3.91 KiB attention (app/model.py:45) [new]
 1.95 KiB 2.15 KiB +200 B mlp (app/model.py:62)
 3.91 KiB - -3.91 KiB attn (app/model.py:40) [gone]" "call sites by growth"
expect_stdout_not_contains "layer"
expect_stdout_contains "no threshold given"
expect_stdout_line "result: PASS, no threshold checked"

# limit VALUE -> expect exit status and, for 3, the message
at_limit() { # OPTION=VALUE: exit 0, the result says "within"
	step "$1 (at the limit)"
	mp diff "$1" base.db head.db
	expect_status 0
	expect_stdout_contains "within $1"
	expect_stdout_contains "result: PASS, 1 check within its threshold"
}
past_limit() { # OPTION=VALUE MESSAGE: exit 3, the result names the limit and by how much
	step "$1 (past the limit)"
	mp diff "$1" base.db head.db
	expect_status 3
	expect_stdout_contains "$2"
	expect_stdout_contains "result: FAIL, 1 of 1 checks exceeded a threshold"
	expect_stderr_empty
}

at_limit --max-peak-increase=2%
past_limit --max-peak-increase=1.99% \
	"EXCEEDED     peak live on device 0 grew 2% (+200 B), over --max-peak-increase=1.99% by 0.01 points"
at_limit --max-peak-increase=200B
past_limit --max-peak-increase=199B \
	"peak live on device 0 grew 200 B (+2%), over --max-peak-increase=199B by 1 B"
at_limit --max-reserved-increase=8.333333334%
past_limit --max-reserved-increase=8.333333333% \
	"peak reserved on device 0 grew 8.33% (+1000 B), over --max-reserved-increase=8.333333333% by 0 points"
at_limit --max-reserved-increase=1000B
past_limit --max-reserved-increase=999B \
	"peak reserved on device 0 grew 1000 B (+8.33%), over --max-reserved-increase=999B by 1 B"
at_limit --max-free-share=0.215384615
past_limit --max-free-share=0.215384614 \
	"free share on device 0 is 0.215384615, over --max-free-share=0.215384614 by 0.000000001"
at_limit --max-free-share-increase=0.048717948
past_limit --max-free-share-increase=0.048717947 \
	"free share on device 0 rose 0.048717948 (0.166666667 to 0.215384615), over --max-free-share-increase=0.048717947 by 0.000000001"

step "several thresholds: every exceeded one named, exit 3"
mp diff --max-peak-increase=1% --max-reserved-increase=10% --max-free-share=0.1 base.db head.db
expect_status 3
expect_stdout_contains "over --max-peak-increase=1% by 1 point"
expect_stdout_contains "within --max-reserved-increase=10%"
expect_stdout_contains "over --max-free-share=0.1 by 0.115384615"
expect_stdout_contains "result: FAIL, 2 of 3 checks exceeded a threshold"

step "the same option twice: the last one counts"
mp diff --max-peak-increase=1% --max-peak-increase=5% base.db head.db
expect_status 0

step "BASE and HEAD swapped: a fall passes any limit"
mp diff --max-peak-increase=0% --max-reserved-increase=0 --max-free-share-increase=0 head.db base.db
expect_status 0
expect_stdout_contains "peak live on device 0 fell 1.96% (-200 B), within --max-peak-increase=0%"

step "JSON"
mp diff --format=json --max-peak-increase=1.99% --max-free-share=0.5 base.db head.db
expect_status 3
cp "$OUT" d.json
check_json d.json '
assert j["memprof_gate_version"] == 2 and j["command"] == "diff"
assert j["base"]["path"] == "base.db" and j["head"]["path"] == "head.db"
assert j["base"]["source"] == "csv" and j["device"] is None
d, = j["devices"]
assert d["device"] == 0 and d["in_base"] and d["in_head"]
b, h, c = d["base"], d["head"], d["change"]
assert b["peak_live"] == {"bytes": 10000, "ts_ns": 40, "seq": 5}
assert h["peak_live"]["bytes"] == 10200
assert b["reserved_from"] == "segments" and b["peak_reserved"]["bytes"] == 12000
assert b["peak_reserved"]["seq"] == 4 and b["free_in_reserved_bytes"] == 2000
assert b["free_share"] == 0.166666667 and h["free_share"] == 0.215384615
assert b["external_fragmentation"] == 0 and b["largest_hole_bytes"] == 2000
assert (b["leaked_bytes"], b["leaked_blocks"], b["ooms"]) == (4000, 1, 1)
assert (h["leaked_bytes"], h["leaked_blocks"], h["ooms"]) == (4000, 1, 0)
assert c["peak_live_bytes"] == 200 and near(c["peak_live_percent"], 2)
assert c["peak_reserved_bytes"] == 1000 and near(c["peak_reserved_percent"], 100 / 12)
assert c["free_share"] == 0.048717948 and c["ooms"] == -1
assert d["n_sites"] == 3
assert [(s["key"], s["base_bytes"], s["head_bytes"], s["delta_bytes"], s["status"]) for s in d["sites"]] == [
    ("attention@app/model.py", None, 4000, 4000, "new"),
    ("mlp@app/model.py", 2000, 2200, 200, "grew"),
    ("attn@app/model.py", 4000, None, -4000, "gone")]
assert d["sites"][1]["line"] == 62 and d["sites"][1]["file"] == "/work/b/app/model.py"
t1, t2 = j["thresholds"]
assert t1["option"] == "--max-peak-increase=1.99%" and t1["outcome"] == "exceeded"
assert t1["unit"] == "percent" and t1["limit"] == 1.99 and t1["device"] == 0
assert (t1["base"], t1["head"]) == (10000, 10200) and near(t1["figure"], 2) and near(t1["over"], 0.01)
assert "over --max-peak-increase=1.99% by 0.01 points" in t1["message"]
assert t2["name"] == "max-free-share" and t2["outcome"] == "pass" and t2["head"] == 0.215384615
assert t2["base"] is None and t2["over"] is None and t2["limit"] == 0.5
assert j["exceeded"] == 1 and j["status"] == "fail" and j["pools"] == []
'

validate_junit() { # FILE
	if ! have_xmllint; then
		say "xmllint not found: JUnit not validated (apt-get install libxml2-utils)"
		return
	fi
	if xmllint --noout --schema "$XSD" "$1" 2>"$TMP/xmllint.err"; then
		pass
	else
		fail "'$1' is not valid against junit-10.xsd: $(tail -3 "$TMP/xmllint.err")"
	fi
}

step "JUnit"
mp diff --format=junit --max-peak-increase=1.99% --max-free-share=0.5 --max-reserved-increase=1KiB \
	base.db head.db
expect_status 3
cp "$OUT" d.xml
validate_junit d.xml
python3 - d.xml <<'PY' && pass || fail "JUnit content"
import sys, xml.etree.ElementTree as ET
s = ET.parse(sys.argv[1]).getroot()
assert s.tag == "testsuite" and s.get("name") == "memprof", s.attrib
assert (s.get("tests"), s.get("failures"), s.get("errors"), s.get("skipped")) == ("3", "1", "0", "0"), s.attrib
cases = s.findall("testcase")
assert [c.get("name") for c in cases] == ["max-peak-increase device 0", "max-free-share device 0",
                                          "max-reserved-increase device 0"]
assert all(c.get("classname") == "memprof.diff" for c in cases)
f = cases[0].find("failure")
assert "over --max-peak-increase=1.99% by 0.01 points" in f.get("message"), f.attrib
assert cases[1].find("failure") is None and cases[2].find("failure") is None
p = {x.get("name"): x.get("value") for x in s.find("properties")}
assert p["device.0.base.peak_live_bytes"] == "10000" and p["device.0.head.peak_live_bytes"] == "10200"
assert p["device.0.head.free_share"] == "0.215384615"
assert p["max-peak-increase.device.0.outcome"] == "exceeded"
assert p["max-peak-increase.device.0.limit"] == "--max-peak-increase=1.99%"
PY

step "Markdown"
mp diff --format=md --max-peak-increase=1.99% base.db head.db
expect_status 3
cp "$OUT" d.md
expect_stdout_line "## memprof diff: FAIL, 1 of 1 checks exceeded a threshold"
expect_stdout_line "| peak live | 9.77 KiB | 9.96 KiB | +200 B (+2%) |"
expect_stdout_line "| - | 3.91 KiB | +3.91 KiB | attention (app/model.py:45) (new) |"
# every table row has as many cells as its header
python3 - d.md <<'PY' && pass || fail "Markdown table shape"
import re, sys
cells = lambda line: len(re.findall(r"(?<!\\)\|", line)) - 1
rows = open(sys.argv[1]).read().split("\n")
i = n_tables = 0
while i < len(rows):
    if rows[i].startswith("|") and i + 1 < len(rows) and re.match(r"^\|(-+:?|:?-+:?|---:?)", rows[i + 1]):
        n = cells(rows[i]); n_tables += 1
        assert cells(rows[i + 1]) == n, rows[i + 1]
        i += 2
        while i < len(rows) and rows[i].startswith("|"):
            assert cells(rows[i]) == n, (n, rows[i])
            i += 1
    else:
        i += 1
assert n_tables == 3, n_tables
PY

step "one run: text on stdout, Markdown and JUnit files, JSON to -o"
mp diff --max-peak-increase=1.99% --md=out/gate.md --junit=out/gate.xml base.db head.db
expect_status 1 # out/ does not exist
expect_stderr_contains "memprof diff: "
mkdir out
mp diff --max-peak-increase=1.99% --md=out/gate.md --junit=out/gate.xml --json=out/gate.json \
	base.db head.db
expect_status 3
expect_stdout_contains "over --max-peak-increase=1.99% by 0.01 points"
expect_file_present out/gate.md
expect_file_present out/gate.xml
expect_same_file d.md out/gate.md
validate_junit out/gate.xml
check_json out/gate.json 'assert j["status"] == "fail" and j["thresholds"][0]["outcome"] == "exceeded"'
expect_no_temp_files out
mp diff --format=json -o out/only.json --max-peak-increase=2% base.db head.db
expect_status 0
expect_stdout_empty
check_json out/only.json 'assert j["status"] == "pass" and j["exceeded"] == 0'
mp diff --format=json -o - base.db head.db
expect_status 0
expect_stdout_contains '"memprof_gate_version":'

step "--device and --top"
mp diff --device=0 --top=1 base.db head.db
expect_status 0
expect_stdout_contains "attention (app/model.py:45) [new]"
expect_stdout_not_contains "mlp (app/model.py"
expect_stdout_contains "(2 more)"
mp diff --device=3 base.db head.db
expect_status 1
expect_stderr_contains "memprof diff: no device 3 in 'base.db' nor in 'head.db': their devices: 0; 0"

step "traces with different devices"
sed 's/^\([0-9]*,[a-z]*,[0-9]*,[0-9]*,[0-9]*,0x[0-9a-f]*\),0,/\1,1,/' head.csv >dev1.csv
mp import -o dev1.db dev1.csv
expect_status 0
mp diff --max-peak-increase=0% --max-free-share=0.5 --format=json base.db dev1.db
expect_status 0
cp "$OUT" dev.json
check_json dev.json '
assert [(d["device"], d["in_base"], d["in_head"]) for d in j["devices"]] == [(0, True, False), (1, False, True)]
assert j["devices"][0]["head"] is None and j["devices"][0]["change"] is None
t, = j["thresholds"]
assert t["name"] == "max-free-share" and t["device"] == 1 and t["outcome"] == "pass"
assert any("device 0 is only in BASE" in n for n in j["notes"]), j["notes"]
assert any("device 1 is only in HEAD" in n for n in j["notes"]), j["notes"]
assert any("--max-peak-increase=0% checked nothing" in n for n in j["notes"]), j["notes"]
'
mp diff base.db dev1.db
expect_stdout_line "device 1: only in HEAD (peak live 9.96 KiB)"

step "modelled reserved bytes (no segments) are labelled, and not compared with measured ones"
grep -v ',reserve,' head.csv >noseg.csv
mp import -o noseg.db noseg.csv
expect_status 0
mp diff --max-reserved-increase=1% --max-free-share=0.9 --granularity=4KiB base.db noseg.db
expect_status 0
expect_stdout_contains "peak reserved on device 0 (modelled): not checked against --max-reserved-increase=1%: reserved bytes come from segments in one trace and from the address-space model in the other"
expect_stdout_contains "free share on device 0 (modelled) is"
expect_stdout_contains "peak reserved*"
expect_stdout_contains "modelled from block addresses (4.00 KiB granules, at the live peak)"
mp diff --format=md --max-reserved-increase=1% base.db noseg.db
expect_stdout_contains "| peak reserved (modelled) |"
mp diff --format=junit --max-reserved-increase=1% base.db noseg.db
cp "$OUT" noseg.xml
validate_junit noseg.xml
expect_stdout_contains '<skipped message="reserved bytes come from segments in one trace and from the address-space model in the other"/>'
expect_stdout_contains 'name="device.0.head.reserved_from" value="modelled"'
mp diff --format=json --max-reserved-increase=1% --granularity=4KiB noseg.db noseg.db
cp "$OUT" noseg.json
check_json noseg.json '
d = j["devices"][0]["head"]
assert d["reserved_from"] == "modelled" and d["peak_reserved"]["bytes"] == 12288
t, = j["thresholds"]
assert t["outcome"] == "pass" and t["modelled"] is True and "(modelled)" in t["message"]
'

step "thresholds that cannot be checked: NOT CHECKED, counted apart, never passed"
# no segments and no addresses: reserved bytes and fragmentation are unknown
grep -v ',reserve,' base.csv | sed 's/,0x[0-9a-f]*,0,0,5,/,,0,0,5,/' >unk-base.csv
grep -v ',reserve,' head.csv | sed 's/,0x[0-9a-f]*,0,0,5,/,,0,0,5,/' >unk-head.csv
mp import -o unk-base.db unk-base.csv
mp import -o unk-head.db unk-head.csv
mp diff --max-reserved-increase=1% --max-free-share=0.5 unk-base.db unk-head.db
expect_status 0
expect_stdout_match '^  NOT CHECKED  peak reserved on device 0: not checked against --max-reserved-increase=1%: reserved bytes are unknown'
expect_stdout_match '^  NOT CHECKED  free share on device 0: not checked against --max-free-share=0.5: '
expect_stdout_line "result: PASS, nothing checked, 2 NOT CHECKED"
expect_stdout_not_contains "within"
expect_stdout_contains "2 checks were NOT CHECKED, which is not a pass: --require-checked makes an unchecked threshold fail the gate (exit 3)"
mp diff --max-reserved-increase=1% --max-free-share=0.5 --max-peak-increase=2% unk-base.db unk-head.db
expect_status 0
expect_stdout_line "result: PASS, 1 check within its threshold, 2 NOT CHECKED"
mp diff --format=md --max-reserved-increase=1% --max-free-share=0.5 --max-peak-increase=2% \
	unk-base.db unk-head.db
expect_stdout_line "## memprof diff: PASS, 1 check within its threshold, 2 NOT CHECKED"
expect_stdout_match '^\| \*\*NOT CHECKED\*\* \| --max-free-share=0\.5 \| 0 \| '
step "--require-checked: a threshold not checked fails the gate (exit 3)"
mp diff --require-checked --max-reserved-increase=1% --max-peak-increase=2% unk-base.db unk-head.db
expect_status 3
expect_stdout_line "result: FAIL, 1 check within its threshold, 1 NOT CHECKED (--require-checked)"
mp diff --require-checked --max-peak-increase=2% unk-base.db unk-head.db
expect_status 0
expect_stdout_line "result: PASS, 1 check within its threshold"
mp diff --require-checked --max-pool-increase=1% base.db head.db
expect_status 3
expect_stdout_contains "--max-pool-increase=1% checked nothing: no pool is replayed in both traces"
expect_stdout_line "result: FAIL, nothing checked, 1 NOT CHECKED (--require-checked)"
mp diff --format=json --max-reserved-increase=1% --max-peak-increase=2% unk-base.db unk-head.db
cp "$OUT" unk.json
check_json unk.json '
assert (j["exceeded"], j["passed"], j["not_checked"]) == (0, 1, 1), j
assert j["status"] == "pass" and j["require_checked"] is False
t = [x for x in j["thresholds"] if x["name"] == "max-reserved-increase"][0]
assert t["outcome"] == "not_checked" and t["head"] is None
'
mp diff --require-checked --format=json --max-reserved-increase=1% --max-peak-increase=2% \
	unk-base.db unk-head.db
expect_status 3
cp "$OUT" unk-req.json
check_json unk-req.json 'assert j["status"] == "fail" and j["require_checked"] is True and j["not_checked"] == 1'
mp diff --format=junit --max-reserved-increase=1% --max-pool-increase=1% unk-base.db unk-head.db
expect_status 0
cp "$OUT" unk.xml
validate_junit unk.xml
expect_stdout_contains 'tests="2" failures="0" errors="0" skipped="2"'
expect_stdout_contains '<testcase classname="memprof.diff" name="max-pool-increase (applies to nothing)">'
mp diff --require-checked --format=junit --max-reserved-increase=1% unk-base.db unk-head.db
expect_status 3
cp "$OUT" unk-req.xml
validate_junit unk-req.xml
expect_stdout_contains 'tests="1" failures="1" errors="0" skipped="0"'
expect_stdout_contains '<failure type="not_checked" message="NOT CHECKED: reserved bytes are unknown'

step "stored replay results: peak reserved of each pool present in both"
{
	echo "$hdr"
	echo "0,alloc,1,67108864,67108864,0x10000000,0,0,5,,,,,"
	echo "10,free,1,67108864,67108864,0x10000000,0,0,5,,,,,"
} >pbase.csv
{
	echo "$hdr"
	echo "0,alloc,1,67108864,67108864,0x10000000,0,0,5,,,,,"
	echo "5,alloc,2,33554432,33554432,0x20000000,0,0,5,,,,,"
	echo "10,free,1,67108864,67108864,0x10000000,0,0,5,,,,,"
	echo "20,free,2,33554432,33554432,0x20000000,0,0,5,,,,,"
} >phead.csv
mp import -o pbase.db pbase.csv
mp import -o phead.db phead.csv
mp replay --pool=caching,bucketed --backend=sim pbase.db
expect_status 0
mp replay --pool=caching,bucketed --backend=sim phead.db
expect_status 0
mp replay --pool=planned --backend=sim phead.db
expect_status 0
mp diff --format=json pbase.db phead.db
expect_status 0
cp "$OUT" pools.json
check_json pools.json '
p = [(x["pool"], x["backend"], x["base"] is not None, x["head"] is not None) for x in j["pools"]]
assert p == [("bucketed", "sim", True, True), ("caching", "sim", True, True), ("planned", "sim", False, True)], p
for x in j["pools"][:2]:
    b, h, c = x["base"], x["head"], x["change"]
    assert b["peak_reserved_bytes"] > 0 and h["peak_reserved_bytes"] > b["peak_reserved_bytes"]
    assert c["peak_reserved_bytes"] == h["peak_reserved_bytes"] - b["peak_reserved_bytes"]
    assert b["time"] == h["time"] == "modelled" and c["times_compared"] is True
    assert c["total_ns"] == h["total_ns"] - b["total_ns"]
assert j["pools"][2]["change"] is None
assert any("pool planned (sim) on device 0 is only replayed in HEAD" in n for n in j["notes"])
'
# the largest growth of the two pools, in bytes and in percent (exact: 9 decimals)
read -r grow pct <<<"$(python3 -c '
import json, sys
from fractions import Fraction
j = json.load(open(sys.argv[1]))
g = [(x["change"]["peak_reserved_bytes"], Fraction(x["change"]["peak_reserved_bytes"] * 100, x["base"]["peak_reserved_bytes"])) for x in j["pools"][:2]]
b = max(x[0] for x in g); p = max(x[1] for x in g)
import math
print(b, "%d.%09d" % (p.numerator // p.denominator, math.ceil((p - p.numerator // p.denominator) * 10**9)))
' pools.json)"
step "--max-pool-increase at and past the limit ($grow B, $pct%)"
mp diff --max-pool-increase="${grow}B" pbase.db phead.db
expect_status 0
expect_stdout_contains "within --max-pool-increase=${grow}B"
mp diff --max-pool-increase=$((grow - 1))B pbase.db phead.db
expect_status 3
expect_stdout_match "pool (caching|bucketed) \(sim\) peak reserved on device 0 grew .* over --max-pool-increase=$((grow - 1))B by 1 B"
mp diff "--max-pool-increase=$pct%" pbase.db phead.db
expect_status 0
mp diff --max-pool-increase=1% --format=junit pbase.db phead.db
expect_status 3
cp "$OUT" pools.xml
validate_junit pools.xml
expect_stdout_contains 'name="max-pool-increase caching/sim device 0"'
expect_stdout_contains 'name="max-pool-increase bucketed/sim device 0"'
mp diff --max-pool-increase=1% pbase.db head.db
expect_status 0
expect_stdout_contains "--max-pool-increase=1% checked nothing: no pool is replayed in both traces"
if have_sqlite3; then
	step "a measured time is not compared with a modelled one"
	sql phead.db "UPDATE replay_metrics SET measured = 1 WHERE name = 'total_ns' AND run IN (SELECT id FROM replay_runs WHERE pool = 'caching')"
	mp diff pbase.db phead.db
	expect_status 0
	expect_stdout_contains "pool caching (sim) on device 0: the allocator time of BASE is modelled and that of HEAD measured: times not compared"
	expect_stdout_match "caching \(sim\): peak reserved .* allocator time not compared \(modelled vs measured\)"
fi

step "a stored run that failed (had OOMs) is not compared: NOT CHECKED"
# under 80 MiB direct serves BASE's 64 MiB but not HEAD's 64 + 32 MiB
mp replay --pool=direct --backend=sim --capacity=80MiB pbase.db
expect_status 0
mp replay --pool=direct --backend=sim --capacity=80MiB phead.db
expect_status 0
mp diff --max-pool-increase=1000% pbase.db phead.db
expect_status 0
expect_stdout_contains "NOT CHECKED  pool direct (sim) peak reserved on device 0: not checked against --max-pool-increase=1000%: a stored run failed (had OOMs): its peak is not a result"
mp diff --require-checked --max-pool-increase=1000% pbase.db phead.db
expect_status 3

step "bad options: exit 2"
for args in "--bogus base.db head.db" "--max-peak-increase=abc base.db head.db" \
	"--max-peak-increase=-1% base.db head.db" "--max-free-share=1.5 base.db head.db" \
	"--max-free-share=150% base.db head.db" "--max-free-share-increase base.db head.db" \
	"--format=xml base.db head.db" "--device=x base.db head.db" "--top=0 base.db head.db" \
	"--max-peak=1GiB base.db head.db" "--no-leaks base.db head.db" "base.db" \
	"base.db head.db head.db" ""; do
	# shellcheck disable=SC2086
	mp diff $args
	expect_status 2
	expect_stderr_contains "try 'memprof diff --help'"
	expect_stdout_empty
done
mp diff --max-peak=1GiB base.db head.db
expect_stderr_contains "invalid option '--max-peak=1GiB': write options out in full (did you mean '--max-peak-increase'?)"
mp diff --max-peak-increase=two base.db head.db
expect_stderr_contains "invalid --max-peak-increase 'two': give a percentage such as 2% or a size such as 100MiB"
step "a ratio as a ratio or a percentage; a bare number where a percentage is as likely: refused"
at_limit --max-free-share=21.5384615%
past_limit --max-free-share=21.5384614% \
	"free share on device 0 is 0.215384615, over --max-free-share=21.5384614% by 0.000000001"
at_limit --max-free-share-increase=4.8717948%
mp diff --max-free-share=15% --format=json base.db head.db
expect_status 3
cp "$OUT" pct.json
check_json pct.json 't, = j["thresholds"]; assert t["limit"] == 0.15 and t["option"] == "--max-free-share=15%", t'
for opt in max-peak-increase max-reserved-increase max-pool-increase; do
	mp diff --$opt=2 base.db head.db
	expect_status 2
	expect_stderr_contains "memprof diff: invalid --$opt '2': a number without a unit is ambiguous (did you mean 2% or 2B?)"
	expect_stdout_empty
done
mp diff --max-peak-increase=2.5 base.db head.db
expect_status 2
expect_stderr_contains "(did you mean 2.5% or 2.5MiB?)"
mp diff --max-free-share=15 base.db head.db
expect_status 2
expect_stderr_contains "invalid --max-free-share '15': give a ratio from 0 to 1 or a percentage, such as 0.15 or 15% (did you mean 15%?)"
mp diff --max-free-share=0.123456789% base.db head.db
expect_status 2
mp diff --help
expect_status 0
expect_stdout_contains "usage: memprof diff [options] BASE HEAD"

step "missing and unreadable files: exit 1"
mp diff missing.db head.db
expect_status 1
expect_stderr_contains "missing.db"
expect_stdout_empty
mp diff base.db missing.db
expect_status 1
expect_stderr_contains "missing.db"
mp diff base.csv head.db
expect_status 1
expect_stderr_contains "not a memprof trace 'base.csv'"

step "a real pair: PyTorch snapshots of a forward pass and of a full step"
snaps=$top_srcdir/../shared/datasets/torch-snapshots
if [ -f "$snaps/cs336-ctx128-forward-mixed.pickle" ] && [ -f "$snaps/cs336-ctx128-fullstep.pickle" ]; then
	mp import -o fwd.db "$snaps/cs336-ctx128-forward-mixed.pickle"
	expect_status 0
	mp import -o step.db "$snaps/cs336-ctx128-fullstep.pickle"
	expect_status 0
	mp diff --max-peak-increase=2% --max-free-share=0.5 --md=real.md --junit=real.xml --format=json \
		fwd.db step.db
	expect_status 3
	cp "$OUT" real.json
	validate_junit real.xml
	# the figures of memprof analyze on the same traces
	check_json real.json '
d, = j["devices"]
b, h = d["base"], d["head"]
assert b["peak_live"]["bytes"] == 24023981056 and h["peak_live"]["bytes"] == 55078640128
assert b["peak_reserved"]["bytes"] == 24245174272 and h["peak_reserved"]["bytes"] == 61111009280
assert b["reserved_from"] == h["reserved_from"] == "segments"
t1, t2 = j["thresholds"]
assert t1["outcome"] == "exceeded" and t2["outcome"] == "pass"
s = d["sites"][0]
assert s["key"] == "step@cs336_basics/optimizers.py" and s["status"] == "new" and s["delta_bytes"] > 0
'
	expect_file_present real.md
	if grep -q '^| - | 25.6 GiB | +25.6 GiB | step (cs336\\_basics/optimizers.py:82,84,100) (new) |$' real.md; then
		pass
	else
		fail "real.md lacks the grown call site: $(grep -m3 'GiB' real.md)"
	fi
else
	say "no PyTorch snapshots in $snaps: the real pair is not tested"
fi

finish
