#!/bin/bash
# analyze-edge.sh - 'memprof analyze' on traces at the edges: no events,
# only frees, zero-size allocations, timestamps out of order, a device with
# no events, traces marked truncated or lossy.  Each gives a correct answer
# or says what could not be computed.
set -u
. "$(dirname "$0")/lib.sh"

W=$TMP/work
mkdir "$W" || die "mkdir $W"
cd "$W" || die "cd $W"
command -v python3 >/dev/null || skip "python3 is needed to check the JSON"

HEADER=ts_ns,op,id,size,requested,address,device,stream,pid,phase,api,device_free,thread,stack

# trace NAME ROWS...: import a CSV of these rows as NAME.db
trace() {
	local name=$1
	shift
	printf '%s\n' "$HEADER" "$@" >"$name.csv"
	mp import -q -o "$name.db" "$name.csv"
	[ "$status" -eq 0 ] || die "cannot import $name.csv: $(cat "$ERR")"
}

step "no events"
trace empty
mp analyze --json empty.db
expect_status 0
cp "$OUT" empty.json
check_json empty.json '
assert j["events"] == 0 and j["devices"] == []
assert "no events" in notes, notes
'
mp analyze empty.db
expect_status 0
expect_stdout_contains "the trace has no events: there is nothing to analyze"

step "a pending block (freed by the program, not yet by the allocator) is no hole"
# a 64 MiB segment: A (32 MiB) pending, B (27 MiB) live, C (1 MiB) live, 4 MiB free at its end
trace pending "1000,reserve,1,67108864,67108864,0x7f0000000000,0,7,4242,,cudaMalloc,,," \
	"2000,alloc,1,33554432,33554432,0x7f0000000000,0,7,4242,,,,," \
	"3000,alloc,2,28311552,28311552,0x7f0002000000,0,7,4242,,,,," \
	"4000,free_requested,1,33554432,33554432,0x7f0000000000,0,7,4242,,,,," \
	"5000,alloc,3,1048576,1048576,0x7f0003b00000,0,7,4242,,,,,"
mp analyze --json pending.db
expect_status 0
cp "$OUT" pending.json
mp info --json pending.db
expect_status 0
cp "$OUT" pending-info.json
check_json pending.json '
e = j["devices"][0]["fragmentation"]["at_end"]
assert e["largest_hole_bytes"] == 4 << 20, e
assert e["free_in_reserved_bytes"] == 4 << 20, e
i = json.load(open("pending-info.json"))["summary"]["by_device"][0]["end"]
assert i["free_in_reserved_bytes"] == e["free_in_reserved_bytes"], (i, e)
'

step "only frees"
trace frees "10,free,1,64,64,0x1000,0,0,1,,,,," "20,free,2,64,64,0x2000,0,0,1,,,,,"
mp analyze --json frees.db
expect_status 0
cp "$OUT" frees.json
check_json frees.json '
d, = j["devices"]
assert d["peaks"]["live"]["bytes"] == 0 and d["peaks"]["live"]["seq"] == 0
assert d["attribution"] is None
assert "2 frees have no allocation" in notes and "no allocations" in notes, notes
assert "device 0: nothing was ever live" in notes, notes
'

step "zero-size allocations"
trace zero "10,alloc,1,0,0,0x1000,0,0,1,,,,," "20,alloc,2,32,32,0x1000,0,0,1,,,,," \
	"30,free,1,0,0,0x1000,0,0,1,,,,,"
mp analyze --json zero.db
expect_status 0
cp "$OUT" zero.json
check_json zero.json '
d, = j["devices"]
assert d["peaks"]["live"] == {"bytes": 32, "ts_ns": 20, "seq": 2}
size = d["attribution"]["groups"]["size"]
assert [(g["key"], g["count"], g["bytes"]) for g in size] == [("32 B..64 B", 1, 32), ("0 B", 1, 0)], size
assert "1 allocations are of zero bytes" in notes, notes
'

step "timestamps out of order"
# The CSV importer refuses them, so the third event's timestamp is moved back
# in the database.  Live after each event: 100 (ts 10), 300 (ts 40), 200
# (ts 20), 0 (ts 50).  Backward gaps count 0: 100 held 30 ns, 300 held 0,
# 200 held 30 -> span 60.
trace order "10,alloc,1,100,100,0x1000,0,0,1,,,,," "40,alloc,2,200,100,0x2000,0,0,1,,,,," \
	"45,free,1,100,100,0x1000,0,0,1,,,,," "50,free,2,200,100,0x2000,0,0,1,,,,,"
if [ -n "$SQLITE3_SHELL" ]; then
	"$SQLITE3_SHELL" order.db "UPDATE events SET ts_ns = 20 WHERE seq = 3;" ||
		die "cannot edit order.db"
	mp analyze --json order.db
	expect_status 0
	cp "$OUT" order.json
	check_json order.json '
d, = j["devices"]
assert d["peaks"]["live"] == {"bytes": 300, "ts_ns": 40, "seq": 2}
t = d["fragmentation"]["time_weighted"]
assert t["span_ns"] == 60, t
# internal: 0 * 30 + 100 * 0 + 100 * 30 = 3000 over 60 ns; live 100*30 + 200*30 = 9000
assert abs(t["internal_fragmentation_bytes"] - 50) < 1e-9 and abs(t["internal_fragmentation_share"] - 3000 / 9000) < 1e-9, t
assert "1 events have a timestamp earlier than the event before them" in notes, notes
'
else
	say "no sqlite3 shell: out-of-order timestamps not tested"
fi

step "a device that does not exist: an error naming those that do (as report, check, diff)"
mp analyze --json --device=5 order.db
expect_status 1
expect_stdout_empty
expect_stderr_contains "memprof analyze: no device 5 in 'order.db': its devices: 0"
mp report --device=5 -o nodev.html order.db
expect_status 1
expect_stderr_contains "memprof report: no device 5 in 'order.db': its devices: 0"
[ ! -e nodev.html ] || fail "report wrote a page for a device that does not exist"
mp check --device=5 order.db
expect_status 1
expect_stderr_contains "memprof check: no device 5 in 'order.db': its devices: 0"

step "no addresses"
trace noaddr "10,alloc,1,100,100,0x0,0,0,1,,,,,"
mp analyze --json noaddr.db
expect_status 0
cp "$OUT" noaddr.json
check_json noaddr.json '
f = j["devices"][0]["fragmentation"]
assert f["model"] == "none" and f["at_peak"]["largest_hole_bytes"] is None
assert f["at_peak"]["external_fragmentation"] is None and f["time_weighted"] is None
assert "external fragmentation cannot be computed" in notes, notes
'

step "truncated and lossy traces"
if [ -n "$SQLITE3_SHELL" ]; then
	"$SQLITE3_SHELL" order.db "INSERT OR REPLACE INTO meta VALUES('truncated','1');
		INSERT OR REPLACE INTO meta VALUES('lossy','1');" || die "cannot mark order.db"
	mp analyze --json order.db
	expect_status 0
	cp "$OUT" marked.json
	check_json marked.json '
assert j["truncated"] is True and j["lossy"] is True
assert "marked truncated" in notes and "marked lossy" in notes, notes
'
else
	say "no sqlite3 shell: truncated and lossy marks not tested"
fi

finish
