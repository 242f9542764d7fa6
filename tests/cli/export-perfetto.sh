#!/bin/bash
# export-perfetto.sh - 'memprof export --format=perfetto': valid trace-event
# JSON (tests/tools/check_trace_events.py) with the expected tracks on the
# demo trace, on a CSV trace with known answers (two devices, nested and
# crossing phases, an OOM, never-freed blocks, hostile strings), on a real
# PyTorch snapshot, with --min-size, and the error cases.
set -u
. "$(dirname "$0")/lib.sh"

command -v python3 >/dev/null || skip "python3 is needed to check the JSON"
CHECK="python3 $top_srcdir/tests/tools/check_trace_events.py"
W=$TMP/work
mkdir "$W" || die "mkdir $W"

# export_checked DB JSON [checker options...]: export, then check against info --json.
export_checked() {
	local db=$1 json=$2
	shift 2
	mp export --format=perfetto -o "$json" "$db"
	expect_status 0
	expect_stdout_empty
	mp info --json "$db"
	cp "$OUT" "$json.info"
	run $CHECK "$json" --info "$json.info" "$@"
	expect_status 0
	expect_stdout_contains "ok: "
}

# --- the demo trace ----------------------------------------------------------------
step "demo trace"
mp import -q -o "$W/demo.db" "$top_srcdir/samples/traces/demo.csv"
expect_status 0
export_checked "$W/demo.db" "$W/demo.json" --phases 9 --ooms 0 --slices 102
expect_stdout_contains "102 allocation slices (24 live at the end)"

step "demo trace to standard output, same bytes as -o"
mp export --format=perfetto "$W/demo.db"
expect_status 0
cp "$OUT" "$W/demo.stdout.json"
expect_same_file "$W/demo.json" "$W/demo.stdout.json"

# --- a CSV trace with known answers ------------------------------------------------------
# pid 100, threads 11 and 12.  GPU 0: peak live 4000 B (ids 1 and 2),
# reserved 4096 B, id 1 never freed, an OOM of 8000 B with 96 B free.
# GPU 1: peak live 50000 B (ids 3 and 4), reserved 65536 B, id 5 never freed.
# Phases: outer > inner on thread 11; A and B crossing on thread 12 (A ends
# while B is open: B is closed and opened again); a hostile name on thread 12.
# Strings hold quotes, backslashes, control characters, DEL, valid UTF-8
# and invalid UTF-8 (bytes never valid, a truncated sequence).
step "known-answer trace"
python3 - "$W/known.csv" <<'EOF' || die "cannot write the known-answer CSV"
import sys
HOSTILE = b'q"b\\s\x01t\tn\nd\x7f\xff\xfe tr\xe2\x82 ok \xc3\xa9 </script>'
FRAME = b'ev"il\\\\name\x02\xff'          # a backslash escaped for the stack text
def q(b):                                  # RFC 4180 quoting
    return b'"' + b.replace(b'"', b'""') + b'"'
rows = [
    b'ts_ns,op,id,size,requested,address,device,stream,pid,phase,api,device_free,thread,stack',
    b'1000,reserve,1,4096,4096,0x10000,0,0,100,,cudaMalloc,,11,',
    b'2000,phase_begin,0,0,0,0x0,0,0,100,outer,,,11,',
    b'2500,reserve,2,65536,65536,0x20000,1,0,100,,cudaMalloc,,11,',
    b'3000,alloc,1,1000,900,0x10000,0,7,100,outer,' + q(HOSTILE) + b',,11,' +
    q(b'main@train.py:10;' + FRAME + b'@evil.py:2'),
    b'3500,alloc,3,20000,20000,0x20000,1,0,100,outer,,,11,main@train.py:20',
    b'4000,phase_begin,0,0,0,0x0,0,0,100,inner,,,11,',
    b'4500,alloc,4,30000,30000,0x25000,1,0,100,inner,,,11,main@train.py:21',
    b'5000,alloc,2,3000,3000,0x10400,0,0,100,inner,,,11,main@train.py:30;step@model.py:5',
    b'5200,phase_begin,0,0,0,0x0,0,0,100,A,,,12,',
    b'5300,phase_begin,0,0,0,0x0,0,0,100,B,,,12,',
    b'5400,phase_end,0,0,0,0x0,0,0,100,A,,,12,',
    b'5500,free,3,20000,20000,0x20000,1,0,100,inner,,,11,',
    b'5600,phase_end,0,0,0,0x0,0,0,100,B,,,12,',
    b'6000,free,2,3000,3000,0x10400,0,0,100,inner,,,11,',
    b'6500,free,4,30000,30000,0x25000,1,0,100,inner,,,11,',
    b'7000,phase_end,0,0,0,0x0,0,0,100,inner,,,11,',
    b'7500,phase_begin,0,0,0,0x0,0,0,100,' + q(HOSTILE) + b',,,12,',
    b'8000,oom,0,8000,8000,0x0,0,7,100,outer,cudaMalloc,96,11,main@train.py:40',
    b'8500,phase_end,0,0,0,0x0,0,0,100,' + q(HOSTILE) + b',,,12,',
    b'9000,phase_end,0,0,0,0x0,0,0,100,outer,,,11,',
    b'9500,alloc,5,500,500,0x30000,1,0,100,,,,11,',
    b'9750,phase_end,0,0,0,0x0,0,0,100,never-begun,,,11,',
]
open(sys.argv[1], 'wb').write(b'\n'.join(rows) + b'\n')
EOF
mp import -q -o "$W/known.db" "$W/known.csv"
expect_status 0
export_checked "$W/known.db" "$W/known.json" --phases 5 --ooms 1 --slices 5
expect_stdout_contains "2 devices, 5 allocation slices (2 live at the end), 5 phases, 1 OOMs"

step "known answers"
mp export --format=perfetto -f -o "$W/known.json" "$W/known.db"
expect_status 0
expect_stderr_contains "memprof export: note: 1 phase ends with no open phase: left out"
check_json "$W/known.json" '
HOSTILE = b"q\"b\\s\x01t\tn\nd\x7f\xff\xfe tr\xe2\x82 ok \xc3\xa9 </script>".decode("utf-8", "replace")
FRAME = b"ev\"il\\name\x02\xff".decode("utf-8", "replace")
ev = j["traceEvents"]
names = {e["pid"]: e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "process_name"}
gpu = {v: k for k, v in names.items()}
assert set(names.values()) == {"GPU 0", "GPU 1", "pid 100"}, names
def counter(dev, name):
    return [(e["ts"], e["args"]["bytes"]) for e in ev
            if e["ph"] == "C" and e["pid"] == gpu[dev] and e["name"] == name]
assert max(v for _, v in counter("GPU 0", "live")) == 4000
assert max(v for _, v in counter("GPU 1", "live")) == 50000
assert max(v for _, v in counter("GPU 0", "reserved")) == 4096
assert max(v for _, v in counter("GPU 1", "reserved")) == 65536
assert max(v for _, v in counter("GPU 0", "requested")) == 3900
# a sample each time a figure changes, none when it does not
assert counter("GPU 0", "live") == [(1, 0), (3, 1000), (5, 4000), (6, 1000)], counter("GPU 0", "live")
assert counter("GPU 1", "live") == [(2.5, 0), (3.5, 20000), (4.5, 50000), (5.5, 30000), (6.5, 0), (9.5, 500)]
b = {e["args"]["alloc_id"]: e for e in ev if e["ph"] == "b"}
e_ = {e["id"]: e for e in ev if e["ph"] == "e"}
one = b[1]
assert one["pid"] == gpu["GPU 0"] and one["ts"] == 3 and one["cat"] == "alloc"
a = one["args"]
assert (a["size"], a["requested"], a["address"], a["stream"], a["pid"], a["thread"]) == \
       (1000, 900, "0x10000", 7, 100, 11), a
assert a["api"] == HOSTILE, (a["api"], HOSTILE)
assert a["phase"] == "outer"
assert a["stack"] == ["main (train.py:10)", FRAME + " (evil.py:2)"], a["stack"]
assert a["call_site"] == FRAME + " (evil.py:2)" and one["name"] == FRAME
# never freed: closed at the last timestamp (9.75 us), saying so
assert e_[one["id"]]["ts"] == 9.75 and e_[one["id"]]["args"] == {"live_at_end": True}
assert e_[b[5]["id"]]["args"] == {"live_at_end": True} and b[5]["pid"] == gpu["GPU 1"]
assert e_[b[2]["id"]]["ts"] == 6 and "args" not in e_[b[2]["id"]]
assert b[2]["name"] == "step" and b[5]["name"] == "alloc" and b[5]["args"]["stack"] == []
assert len({e["id"] for e in b.values()}) == 5
ph = [(e["ph"], e["ts"], e["name"], e["tid"]) for e in ev if e["ph"] in "BE"]
t11 = {e["tid"] for e in ev if e["ph"] == "B" and e["name"] == "outer"}
t12 = {e["tid"] for e in ev if e["ph"] == "B" and e["name"] == "A"}
assert len(t11) == 1 and len(t12) == 1 and t11 != t12
threads = {e["tid"]: e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "thread_name"}
assert threads == {t11.pop(): "phases, thread 11", t12.pop(): "phases, thread 12"}, threads
assert [p[:3] for p in ph] == [
    ("B", 2, "outer"), ("B", 4, "inner"), ("B", 5.2, "A"), ("B", 5.3, "B"),
    ("E", 5.4, "B"), ("E", 5.4, "A"), ("B", 5.4, "B"), ("E", 5.6, "B"),
    ("E", 7, "inner"), ("B", 7.5, HOSTILE), ("E", 8.5, HOSTILE), ("E", 9, "outer")], ph
oom = [e for e in ev if e["ph"] == "i"]
assert len(oom) == 1 and oom[0]["s"] == "p" and oom[0]["pid"] == gpu["GPU 0"] and oom[0]["ts"] == 8
assert (oom[0]["args"]["requested"], oom[0]["args"]["device_free"], oom[0]["args"]["live"],
        oom[0]["args"]["reserved"]) == (8000, 96, 1000, 4096), oom[0]["args"]
m = j["metadata"]
assert (m["n_slices"], m["n_live_at_end"], m["n_phases"], m["n_ooms"], m["n_phase_ends_unmatched"]) == \
       (5, 2, 5, 1, 1), m
assert j["displayTimeUnit"] == "ns"
'
step "the JSON text is plain ASCII with escapes where the trace had control bytes"
if LC_ALL=C grep -qP '[\x00-\x08\x0b-\x1f\x7f]' "$W/known.json"; then
	fail "raw control characters in the JSON"
else
	pass
fi
if grep -qF '\u0001' "$W/known.json" && grep -qF '\u007f' "$W/known.json" &&
	grep -qF '\ufffd' "$W/known.json"; then pass; else fail "expected \\u0001, \\u007f and \\ufffd escapes"; fi

step "the checker refuses broken trace-event files"
python3 - "$W/known.json" "$W" <<'EOF' || die "cannot write the broken files"
import json, sys
doc = json.load(open(sys.argv[1]))
ev = doc["traceEvents"]
def write(name, events=None, text=None):
    d = dict(doc, traceEvents=events if events is not None else ev)
    t = text if text is not None else json.dumps(d).encode("ascii")
    open("%s/broken-%s.json" % (sys.argv[2], name), "wb").write(t)
first = lambda ph: next(i for i, e in enumerate(ev) if e["ph"] == ph)
write("open-slice", ev[:first("e")] + ev[first("e") + 1:])
write("open-phase", [e for e in ev if not (e["ph"] == "E" and e["name"] == "outer")])
write("crossed", [dict(e, name="inner") if e["ph"] == "E" and e["name"] == "outer" else e for e in ev])
write("counter-text", [dict(e, args={"bytes": "12"}) if e["ph"] == "C" else e for e in ev])
write("top-array", [dict(e, stack=[]) if e["ph"] == "b" else e for e in ev])
write("no-ts", [{k: v for k, v in e.items() if k != "ts"} if e["ph"] == "i" else e for e in ev])
write("peak", [dict(e, args={"bytes": 4001}) if e["ph"] == "C" and e["args"]["bytes"] == 4000 else e for e in ev])
write("extra-slice", ev + [dict(ev[first("b")], id="0xfffff"), dict(ev[first("e")], id="0xfffff")])
good = json.dumps(doc).encode()
write("del", text=good.replace(b"\\u007f", b"\x7f"))
write("latin1", text=good.replace(b"\\ufffd", b"\xff", 1))
write("truncated", text=good[:-20])
EOF
n_broken=0
for f in "$W"/broken-*.json; do
	n_broken=$((n_broken + 1))
	run $CHECK "$f" --info "$W/known.json.info"
	if [ "$status" -eq 1 ] && [ -s "$OUT" ]; then pass; else fail "the checker took $(basename "$f") (exit $status)"; fi
done
expect_eq "$n_broken" 11 "broken files made"

# --- --min-size: slices only for big blocks, counters unchanged ---------------------------
step "--min-size"
mp export --format=perfetto --min-size=10000 -o "$W/big.json" "$W/known.db"
expect_status 0
expect_stderr_contains "memprof export: note: 3 allocations below --min-size=10000: in the counters, not as slices"
run $CHECK "$W/big.json" --info "$W/known.json.info" --min-size 10000 --slices 2 --phases 5 --ooms 1
expect_status 0
check_json "$W/big.json" '
full = json.load(open(sys.argv[1].replace("big.json", "known.json")))
def counters(doc):
    return [(e["pid"], e["ts"], e["name"], e["args"]["bytes"]) for e in doc["traceEvents"] if e["ph"] == "C"]
assert counters(j) == counters(full)
assert sorted(e["args"]["size"] for e in j["traceEvents"] if e["ph"] == "b") == [20000, 30000]
assert j["metadata"]["min_size_bytes"] == 10000 and j["metadata"]["n_slices_skipped"] == 3
'
mp export --format=perfetto --min-size=1MiB -o "$W/none.json" "$W/demo.db"
expect_status 0
run $CHECK "$W/none.json" --info "$W/demo.json.info" --min-size 1048576
expect_status 0

# --- a real PyTorch snapshot -------------------------------------------------------------
SNAP=$top_srcdir/../shared/datasets/torch-snapshots/cs336-ctx128-fullstep.pickle
step "PyTorch snapshot"
if [ -f "$SNAP" ]; then
	mp import -q -o "$W/snap.db" "$SNAP"
	expect_status 0
	export_checked "$W/snap.db" "$W/snap.json"
	expect_stdout_contains "7095 allocation slices (1201 live at the end)"
	check_json "$W/snap.json" '
ev = j["traceEvents"]
deep = [e for e in ev if e["ph"] == "b" and len(e["args"]["stack"]) > 10]
assert deep, "no slice with a deep stack"
assert all(e["name"] == e["args"]["call_site"].split(" (")[0] for e in deep[:100])
assert j["metadata"]["source"] == "torch"
'
else
	say "no $SNAP: the snapshot step is skipped"
fi

# --- errors -----------------------------------------------------------------------------------
step "-o into a missing directory leaves nothing"
mp export --format=perfetto -o "$W/missing/out.json" "$W/demo.db"
expect_status 1
expect_one_message "memprof export: "
expect_file_absent "$W/missing"

step "-o onto an existing file without --force"
printf 'precious\n' >"$W/precious.json"
mp export --format=perfetto -o "$W/precious.json" "$W/demo.db"
expect_status 1
expect_stderr_contains "--force"
expect_eq "$(cat "$W/precious.json")" "precious" "the existing file"
expect_no_temp_files "$W"

step "bad options"
for args in "--format=perfetto --min-size=lots" "--format=perfetto --min-size=-1" \
	"--min-size=1MiB" "--format=perfetto --time=ns" "--format=perfetto --device=0" \
	"--format=chrome" "--format=perfetto --bogus"; do
	# shellcheck disable=SC2086
	mp export $args -o "$W/bad.json" "$W/demo.db"
	expect_status 2
	expect_stderr_contains "try 'memprof export --help'"
	expect_file_absent "$W/bad.json"
done
mp export --format=perfetto --min-size=lots "$W/demo.db"
expect_stderr_contains "invalid --min-size 'lots'"
mp export --min-size=1MiB "$W/demo.db"
expect_stderr_contains "--min-size applies to --format=perfetto only"

step "a full disk is an error"
if [ -c /dev/full ]; then
	LAST_CMD="memprof export --format=perfetto demo.db >/dev/full"
	"$MEMPROF" export --format=perfetto "$W/demo.db" >/dev/full 2>"$ERR"
	status=$?
	expect_status 1
	expect_stderr_contains "memprof export: cannot write '<stdout>': No space left on device"
else
	say "no /dev/full: the full-disk step is skipped"
fi

step "a trace that is not one"
printf 'not a database\n' >"$W/junk.db"
mp export --format=perfetto -o "$W/junk.json" "$W/junk.db"
expect_status 1
expect_file_absent "$W/junk.json"

step "help names the format"
mp export --help
expect_status 0
expect_stdout_contains "--format=perfetto"
expect_stdout_contains "--min-size=BYTES"

finish
