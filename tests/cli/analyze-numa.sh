#!/bin/bash
# analyze-numa.sh - NUMA placement of pinned host memory, end to end: a
# workload writes a spool with known placements through the real spool writer
# (tests/tools/spool_script stands in for the injected library, which needs a
# GPU driver), 'memprof record' turns it into a trace (the host buffers stay
# out of the events), and 'memprof analyze' reports it: text and JSON (checked
# exactly), --top and --device; then traces where nothing is known (no pinned
# buffers; GPU nodes unknown; placements unknown) say so.
set -u
. "$(dirname "$0")/lib.sh"

SPOOL_SCRIPT=$top_builddir/tests/tools/spool_script
[ -x "$SPOOL_SCRIPT" ] || die "no '$SPOOL_SCRIPT' (make check builds it)"
have_sqlite3 || skip "no sqlite3 shell to read the traces"
cd "$TMP" || die "cd $TMP"
: >"$TMP/libmemprof-inject.so" # a stand-in: nothing here initialises CUDA
export MEMPROF_INJECT=$TMP/libmemprof-inject.so
export SPOOL_SCRIPT TMP

q() {
	sql "$1" "$2" | tr '\n' ' ' | sed 's/ $//'
}

MiB=1048576
# The workload: GPU 0 nearest node 0, GPU 1 nearest node 1, GPU 2 unknown.
#   A cudaHostAlloc, GPU 0, 8 MiB: half on node 0, half on node 1  far 4 MiB, live
#   B cudaMallocHost, GPU 0, 2 MiB on node 0                         near
#   C cuMemHostAlloc, GPU 1, 16 MiB on node 0, freed                  far 16 MiB
#   D cudaHostRegister, GPU 2 (node unknown), 1 MiB on node 1        not judged
#   E cudaMallocHost, GPU 1, no placement (pages not touched)        not judged
#   F cuMemCreate on host node 1, GPU 1, 2 MiB, mapped                near
#   G cudaHostAlloc, GPU 1, 1 MiB on node 0, made and freed by CUPTI
#     memory records joined to its calls                             far 1 MiB, freed
cat >workload.sh <<'EOF'
#!/bin/bash
"$SPOOL_SCRIPT" <<SPOOL || exit 98
header pid=6000 ppid=1 start=1000
meta host nodeA
meta numa_distances "0:10,21;1:21,10"
device 0 name="GPU A" total=80000000000 node=0
device 1 name="GPU B" total=80000000000 node=1
device 2 name="GPU C" total=80000000000
module $TMP/gone/libapp.so base=0x7f9000000000 start=0x7f9000000000 end=0x7f9000100000
event kind=api name=cudaMalloc corr=1 thread=11 ts=100 duration=5 addr=0x7f0000000000 bytes=4096 device=0
event kind=api name=cudaHostAlloc corr=2 thread=11 ts=200 duration=10 addr=0x10000000 bytes=8388608 device=0 mem_kind=2 flags=8
event kind=host_numa name=cudaHostAlloc corr=2 thread=11 ts=210 addr=0x10000000 bytes=4194304 device=0 extra=0 extra2=32
event kind=host_numa name=cudaHostAlloc corr=2 thread=11 ts=210 addr=0x10000000 bytes=4194304 device=0 extra=1 extra2=32
event kind=api name=cudaMallocHost corr=3 thread=11 ts=300 duration=10 addr=0x20000000 bytes=2097152 device=0 mem_kind=2 flags=8
event kind=host_numa name=cudaMallocHost corr=3 thread=11 ts=310 addr=0x20000000 bytes=2097152 device=0 extra=0 extra2=64
event kind=api name=cuMemHostAlloc corr=4 thread=12 ts=400 duration=10 addr=0x30000000 bytes=16777216 device=1 mem_kind=2 flags=10 stack=0x7f9000000abc
event kind=host_numa name=cuMemHostAlloc corr=4 thread=12 ts=410 addr=0x30000000 bytes=16777216 device=1 extra=0 extra2=64
event kind=api name=cudaHostRegister corr=5 thread=13 ts=500 duration=10 addr=0x40000000 bytes=1048576 device=2 mem_kind=2 flags=8
event kind=host_numa name=cudaHostRegister corr=5 thread=13 ts=510 addr=0x40000000 bytes=1048576 device=2 extra=1 extra2=64
event kind=api name=cudaMallocHost corr=6 thread=12 ts=600 duration=10 addr=0x50000000 bytes=65536 device=1 mem_kind=2 flags=8
event kind=api name=cuMemFreeHost corr=7 thread=12 ts=700 duration=10 addr=0x30000000 device=1 mem_kind=2 flags=14
event kind=vmm_create name=cuMemCreate corr=8 thread=12 ts=800 duration=10 extra=0xabc bytes=2097152 device=1 mem_kind=2 flags=10
event kind=host_numa name=cuMemCreate corr=8 thread=12 ts=810 bytes=2097152 device=1 extra=1 extra2=0
event kind=vmm_map name=cuMemMap corr=9 thread=12 ts=820 addr=0x7f4000000000 bytes=2097152 extra=0xabc device=1 flags=2
event kind=mem_alloc corr=10 ts=905 addr=0x60000000 bytes=1048576 device=1 mem_kind=2
event kind=api name=cudaHostAlloc corr=10 thread=14 ts=900 duration=10 addr=0x60000000 bytes=1048576 device=1 mem_kind=2 flags=8
event kind=host_numa name=cudaHostAlloc corr=10 thread=14 ts=910 addr=0x60000000 bytes=1048576 device=1 extra=0 extra2=64
event kind=mem_free corr=11 ts=1005 addr=0x60000000 bytes=1048576 device=1 mem_kind=2
event kind=api name=cudaFreeHost corr=11 thread=14 ts=1000 duration=10 addr=0x60000000 device=1 mem_kind=2 flags=12
event kind=api name=cudaFree corr=12 thread=11 ts=1100 duration=5 addr=0x7f0000000000 device=0 flags=4
SPOOL
EOF
chmod +x workload.sh

step "record: pinned host buffers kept out of the events"
mp record -o numa.db -- ./workload.sh
expect_status 0
expect_stderr_not_contains "host memory records"
expect_eq "$(q numa.db 'select ts_ns, op, size from events order by seq')" "100|1|4096 1100|2|4096" \
	"only the device allocation is an event"
expect_eq "$(q numa.db 'select ordinal, coalesce(numa_node, "-") from devices order by ordinal')" \
	"0|0 1|1 2|-" "each GPU's nearest host node"
expect_eq "$(q numa.db "select value from meta where key = 'host_buffers'")" "7" "meta host_buffers"
expect_eq "$(q numa.db "select value from meta where key = 'host_records_skipped'")" "0" \
	"meta host_records_skipped"
expect_eq "$(q numa.db "select value from meta where key = 'numa_distances'")" "0:10,21;1:21,10" \
	"meta numa_distances"
expect_eq "$(q numa.db 'select b.address, b.size, b.alloc_ts_ns, coalesce(b.free_ts_ns, "-"), coalesce(b.device, "-"), a.name, b.thread from host_buffers b join apis a on a.id = b.api order by b.alloc_ts_ns')" \
	"268435456|8388608|200|-|0|cudaHostAlloc|11 536870912|2097152|300|-|0|cudaMallocHost|11 805306368|16777216|400|700|1|cuMemHostAlloc|12 1073741824|1048576|500|-|2|cudaHostRegister|13 1342177280|65536|600|-|1|cudaMallocHost|12 139912854634496|2097152|800|-|1|cuMemCreate|12 1610612736|1048576|905|1005|1|cudaHostAlloc|14" \
	"the host buffers (cuMemCreate's at its mapping, G from its memory records)"
expect_eq "$(q numa.db 'select b.alloc_ts_ns, n.node, n.bytes, n.pages from host_buffer_nodes n join host_buffers b on b.id = n.buffer order by b.alloc_ts_ns, n.node')" \
	"200|0|4194304|32 200|1|4194304|32 300|0|2097152|64 400|0|16777216|64 500|1|1048576|64 800|1|2097152|0 905|0|1048576|64" \
	"their pages per node"

step "analyze --json"
mp analyze --json numa.db
expect_status 0
cp "$OUT" numa.json
check_json numa.json "
n = j['numa']
far_c = {'pid': 6000, 'device': 1, 'nearest_node': 1, 'address': '0x30000000',
         'size_bytes': 16 * $MiB, 'far_bytes': 16 * $MiB,
         'nodes': [{'node': 0, 'bytes': 16 * $MiB, 'distance': 21}],
         'api': 'cuMemHostAlloc', 'call_site': '0xabc@gone/libapp.so',
         'alloc_ts_ns': 400, 'free_ts_ns': 700, 'live_at_end': False}
far_a = {'pid': 6000, 'device': 0, 'nearest_node': 0, 'address': '0x10000000',
         'size_bytes': 8 * $MiB, 'far_bytes': 4 * $MiB,
         'nodes': [{'node': 0, 'bytes': 4 * $MiB, 'distance': 10},
                   {'node': 1, 'bytes': 4 * $MiB, 'distance': 21}],
         'api': 'cudaHostAlloc', 'call_site': '(no call stack)',
         'alloc_ts_ns': 200, 'free_ts_ns': None, 'live_at_end': True}
far_g = {'pid': 6000, 'device': 1, 'nearest_node': 1, 'address': '0x60000000',
         'size_bytes': $MiB, 'far_bytes': $MiB,
         'nodes': [{'node': 0, 'bytes': $MiB, 'distance': 21}],
         'api': 'cudaHostAlloc', 'call_site': '(no call stack)',
         'alloc_ts_ns': 905, 'free_ts_ns': 1005, 'live_at_end': False}
want = {'status': 'known', 'note': None,
        'gpus': [{'pid': 6000, 'device': 0, 'nearest_node': 0},
                 {'pid': 6000, 'device': 1, 'nearest_node': 1},
                 {'pid': 6000, 'device': 2, 'nearest_node': None}],
        'distances': {'nodes': [0, 1], 'matrix': [[10, 21], [21, 10]]},
        'pinned_buffers': 7, 'pinned_bytes': (8 + 2 + 16 + 1 + 2 + 1) * $MiB + 65536,
        'unplaced_buffers': 1, 'gpu_node_unknown_buffers': 1,
        'far_buffers': 3, 'far_bytes': 21 * $MiB,
        'far': [far_c, far_a, far_g]}
assert n == want, json.dumps(n, indent=1)
"

step "a copied trace keeps its pinned buffers and nodes (import --format=trace, merge)"
mp import --format=trace -q -o copy.db numa.db
expect_status 0
mp analyze --json copy.db
expect_status 0
cp "$OUT" copy.json
check_json copy.json "
assert j['numa'] == json.load(open('numa.json'))['numa'], json.dumps(j['numa'], indent=1)
"
mp import --format=trace -q --rank=1 --world-size=2 -o rank1.db numa.db
expect_status 0
mp merge -q -o job.db copy.db rank1.db
expect_status 0
expect_eq "$(q job.db 'select count(*), sum(size) from host_buffers')" \
	"14|$((2 * ((8 + 2 + 16 + 1 + 2 + 1) * 1048576 + 65536)))" "both ranks' pinned buffers"
expect_eq "$(q job.db 'select count(*) from host_buffer_nodes')" "14" "their placements"
expect_eq "$(q job.db "select value from meta where key = 'numa_distances'")" "0:10,21;1:21,10" \
	"node distances"
mp analyze --json job.db
expect_status 0
cp "$OUT" job.json
check_json job.json "
n = j['numa']
assert n['pinned_buffers'] == 14 and n['far_buffers'] == 6 and n['far_bytes'] == 42 * $MiB, n
assert len(n['gpus']) == 6 and sorted(g['nearest_node'] for g in n['gpus'] if g['nearest_node'] is not None) == [0, 0, 1, 1], n['gpus']
"

step "analyze: text"
mp analyze numa.db
expect_status 0
expect_stdout_line "NUMA placement of pinned host memory"
expect_stdout_line "  GPU 0 of pid 6000: nearest host node 0"
expect_stdout_line "  GPU 2 of pid 6000: nearest host node unknown"
expect_stdout_line "  7 pinned buffers, 30.1 MiB; 3 far from their GPU's nearest node, 21.0 MiB at stake"
expect_stdout_line "  not judged: 1 of unknown placement, 1 on a GPU whose nearest node is unknown"
expect_stdout_match "^  16.0 MiB +16.0 MiB +6000 +1 +1 +freed +cuMemHostAlloc +0: 16.0 MiB \(21\) +0xabc@gone/libapp.so$"
expect_stdout_match "^  4.00 MiB +8.00 MiB +6000 +0 +0 +live +cudaHostAlloc +0: 4.00 MiB \(10\), 1: 4.00 MiB \(21\) +\(no call stack\)$"

step "--top 1 lists the largest only; the totals stay"
mp analyze --json --top=1 numa.db
expect_status 0
cp "$OUT" top.json
check_json top.json "
n = j['numa']
assert [f['address'] for f in n['far']] == ['0x30000000'], n['far']
assert (n['far_buffers'], n['far_bytes']) == (3, 21 * $MiB), n
"
mp analyze --top=1 numa.db
expect_stdout_line "  (2 more far buffers: --top)"

step "--device 0: its buffers and GPU only"
mp analyze --json --device=0 numa.db
expect_status 0
cp "$OUT" dev0.json
check_json dev0.json "
n = j['numa']
assert n['gpus'] == [{'pid': 6000, 'device': 0, 'nearest_node': 0}], n['gpus']
assert (n['pinned_buffers'], n['far_buffers'], n['far_bytes']) == (2, 1, 4 * $MiB), n
assert [f['address'] for f in n['far']] == ['0x10000000'], n['far']
"

# --- when nothing is known ------------------------------------------------------------
step "a trace without pinned buffers says so"
printf 'ts_ns,op,id,size,address,device\n1,alloc,1,4096,4096,0\n2,free,1,4096,4096,0\n' >plain.csv
mp import -o plain.db plain.csv
expect_status 0
mp analyze --json plain.db
cp "$OUT" plain.json
check_json plain.json "
n = j['numa']
assert n['status'] == 'no_pinned_buffers' and n['far'] == [] and n['pinned_buffers'] == 0, n
assert n['gpus'] == [{'pid': None, 'device': 0, 'nearest_node': None}], n['gpus']
assert n['distances'] is None, n
assert 'no pinned host buffers' in n['note'], n['note']
"
mp analyze plain.db
expect_stdout_line "  GPU 0: nearest host node unknown"
expect_stdout_contains "no pinned host buffers in this trace"

step "GPU nodes unknown, then placements unknown"
cat >unknown.sh <<'EOF'
#!/bin/bash
"$SPOOL_SCRIPT" <<SPOOL || exit 98
header pid=6100 ppid=1 start=1000
device 0 name="GPU A"
event kind=api name=cudaMallocHost corr=1 thread=11 ts=100 duration=5 addr=0x10000000 bytes=4096 device=0 mem_kind=2 flags=8
event kind=host_numa name=cudaMallocHost corr=1 thread=11 ts=105 addr=0x10000000 bytes=4096 device=0 extra=1 extra2=1
SPOOL
EOF
chmod +x unknown.sh
mp record -o unknown.db -- ./unknown.sh
expect_status 0
mp analyze --json unknown.db
cp "$OUT" unknown.json
check_json unknown.json "
n = j['numa']
assert n['status'] == 'gpu_nodes_unknown' and n['far'] == [], n
assert (n['pinned_buffers'], n['gpu_node_unknown_buffers'], n['far_bytes']) == (1, 1, 0), n
"
mp analyze unknown.db
expect_stdout_contains "the GPUs' nearest host NUMA nodes are unknown"
sed -i '/host_numa/d' unknown.sh
mp record -o unplaced.db -- ./unknown.sh
expect_status 0
mp analyze --json unplaced.db
cp "$OUT" unplaced.json
check_json unplaced.json "
n = j['numa']
assert n['status'] == 'placement_unknown' and n['unplaced_buffers'] == 1, n
"

finish
