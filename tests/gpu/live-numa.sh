#!/bin/bash
# tests/gpu/live-numa.sh - the issue 10 checks that need a GPU: on samples/cuda programs
# recorded for real, (1) every allocation and free call carries its duration and analyze's
# plan metrics have an overhead figure; (2) the pinned buffers of alloc_pinned are kept
# with the NUMA node their pages landed on (checked against the machine's own nodes), the
# GPU has its nearest node (the driver's HOST_NUMA_ID or sysfs: printed beside
# nvidia-smi topo -m) and analyze has a NUMA section; (3) 'record --metrics=0' is scraped
# by python3 (urllib; no curl needed) while a sample loops, and the figures are not
# empty; (4) 'record --live' with stderr not a terminal prints its summary lines.  Prints TAP; skips (77) without a GPU.
# Raw output goes to $GPU_OUT/live-numa (default gpu-runs/ of the build directory).
set -u
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
top_builddir=${top_builddir:-.}
MEMPROF=${MEMPROF:-$top_builddir/memprof}
out=${GPU_OUT:-$top_builddir/gpu-runs}/live-numa
bins=$top_builddir/samples/cuda

reason=$(python3 "$top_srcdir/tests/gpu/have_gpu.py") || { echo "live-numa: SKIP: $reason"; exit 77; }
[ -x "$bins/alloc_pinned" ] && [ -x "$bins/alloc_runtime" ] ||
	{ echo "live-numa: no samples in $bins: run 'make samples-cuda'" >&2; exit 99; }
mkdir -p "$out" || exit 99
cd "$out" || exit 99
rm -f ./*.db ./*.log

n=0
failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); failed=1; echo "not ok $n - $1"; }
check() { if eval "$2"; then ok "$1"; else not_ok "$1"; fi; }
# q DB SQL: the rows as the sqlite3 shell prints them (python3's sqlite3: the GPU machine
# may have no shell); errors go to stderr, never into the value checked
q() {
	python3 -c 'import sqlite3, sys
db = sqlite3.connect("file:%s?mode=ro" % sys.argv[1], uri=True)
for row in db.execute(sys.argv[2]):
    print("|".join("" if v is None else str(v) for v in row))' "$1" "$2"
}
# fetch URL: the body on stdout, exit 1 on any failure (no curl needed)
fetch() {
	python3 -c 'import sys, urllib.request
sys.stdout.buffer.write(urllib.request.urlopen(sys.argv[1], timeout=5).read())' "$1" 2>/dev/null
}

{ nvidia-smi topo -m; ls /sys/devices/system/node/; cat /sys/devices/system/node/node*/distance; } \
	>topology.txt 2>&1

# (1) durations
"$MEMPROF" record -f -o runtime.db -- "$bins/alloc_runtime" >runtime.log 2>&1
check "record alloc_runtime" "[ -f runtime.db ]"
calls=$(q runtime.db "SELECT count(*) FROM events WHERE op IN (1, 2)")
timed=$(q runtime.db "SELECT count(*) FROM events WHERE op IN (1, 2) AND duration_ns > 0")
echo "# alloc_runtime: $calls allocations and frees, $timed with a duration"
check "every allocation and free of alloc_runtime has a duration" \
	"[ \"$calls\" -gt 0 ] && [ \"$calls\" = \"$timed\" ]"
"$MEMPROF" analyze --json runtime.db >runtime-analyze.json 2>runtime-analyze.err
check "analyze: the plan's overhead is known" \
	"python3 -c 'import json,sys; o=json.load(open(\"runtime-analyze.json\"))[\"plan\"][\"overhead\"]; print(\"#\", o[\"time_in_calls_ns\"], o[\"wall_span_ns\"], o[\"share\"]); sys.exit(not o[\"durations\"])'"

# (2) NUMA placement of pinned memory
"$MEMPROF" record -f -o pinned.db -- "$bins/alloc_pinned" >pinned.log 2>&1
check "record alloc_pinned" "[ -f pinned.db ]"
q pinned.db "SELECT b.id, b.size, a.name, n.node, n.bytes, n.pages FROM host_buffers b
	JOIN apis a ON a.id = b.api LEFT JOIN host_buffer_nodes n ON n.buffer = b.id" >pinned-buffers.txt
q pinned.db "SELECT process, ordinal, numa_node FROM devices" >pinned-devices.txt
cat pinned-buffers.txt pinned-devices.txt | sed 's/^/# /'
check "pinned buffers kept" "[ \"\$(q pinned.db 'SELECT count(*) FROM host_buffers')\" -gt 0 ]"
check "every placed node is a node of this machine" \
	"(k=\$(q pinned.db 'SELECT DISTINCT node FROM host_buffer_nodes') && [ -n \"\$k\" ] && for x in \$k; do [ -d /sys/devices/system/node/node\$x ] || exit 1; done)"
check "the GPU's nearest node is known" \
	"[ -n \"\$(q pinned.db 'SELECT numa_node FROM devices WHERE numa_node IS NOT NULL')\" ]"
"$MEMPROF" analyze pinned.db >pinned-analyze.txt 2>&1
check "analyze has the NUMA section" "grep -q '^NUMA placement of pinned host memory' pinned-analyze.txt"

# (3) Prometheus metrics while a sample loops
"$MEMPROF" record -f --metrics=0 -o loop.db -- "$bins/alloc_runtime" --loop=200000 \
	>loop.log 2>loop.err &
pid=$!
url=""
for _ in $(seq 1 100); do
	url=$(grep -o 'http://[0-9.:]*/metrics' loop.err 2>/dev/null | head -n 1)
	[ -n "$url" ] && fetch "$url" >metrics-1.txt &&
		grep -q '^memprof_allocations_total{' metrics-1.txt && break
	sleep 0.2
done
sleep 1
fetch "$url" >metrics-2.txt
wait "$pid"
check "metrics scraped while recording" "grep -q '^memprof_allocations_total{' metrics-2.txt"
check "the exposition is well formed" "python3 '$top_srcdir/tests/cli/check_exposition.py' metrics-2.txt >exposition-check.txt 2>&1"

# (4) --live without a terminal: summary lines
"$MEMPROF" record -f --live -o live.db -- "$bins/alloc_runtime" \
	--loop=200000 >live.out 2>live.err </dev/null
check "record --live without a terminal prints summary lines" \
	"grep -qE '^memprof record: [0-9]+\\.[0-9] s: ' live.err"

echo "1..$n"
exit $failed
