#!/bin/bash
# import-torch-merge.sh - PyTorch's own history merged into a recorded process: a spool
# (tests/tools/spool_script) of a PyTorch process with its caching allocator on, and beside it
# the snapshot 'memprof record' leaves (torch-PID.pickle, written here with Python's pickle).
# The snapshot's clock is off the spool's by 5.000123 s and PyTorch stamps its segments 5 and
# 7 us after CUPTI: the blocks land at their spool times (5 us early) once the clocks are
# aligned on the two segments both saw.  One block lies outside any segment, one after its
# segment was released, one was live before the history began (the ring buffer is full);
# NCCL's cudaMalloc and a plain one outside PyTorch's allocator stay, labelled by origin.
set -u
. "$(dirname "$0")/lib.sh"

SPOOL_SCRIPT=$top_builddir/tests/tools/spool_script
[ -x "$SPOOL_SCRIPT" ] || die "no '$SPOOL_SCRIPT' (make check builds it)"
have_sqlite3 || skip "no sqlite3 shell to read the traces"
PY=/usr/bin/python3
[ -x "$PY" ] || PY=$(command -v python3) || skip "no python3"
cd "$TMP" || die "cd $TMP"

q() { sql "$1" "$2" | tr '\n' ' ' | sed 's/ $//'; }

START_MONO=1000000000
START_UNIX=1700000000000000000
A=$((0x7f6000000000)) B=$((0x7f6100000000)) C=$((0x7f6200000000))
NCCL=$((0x7f7000000000)) OTHER=$((0x7f7100000000)) NOWHERE=$((0x7f8000000000))
NCCLVMM=$((0x7f7200000000)) # NCCL's cuMem buffer (NCCL_CUMEM_ENABLE): a mapping
MIB=1048576

# The spool: segments A (stack through libc10_cuda), B and C (no stack: PyTorch's by the
# snapshot's addresses; C reserved before the history began), NCCL's buffer, another one.
spool_text() {
	cat <<EOF
header pid=6000 ppid=1 stacks=all start=$START_MONO start_unix=$START_UNIX
module /opt/venv/lib/python3.11/site-packages/torch/lib/libc10_cuda.so base=0x7f5000000000 start=0x7f5000000000 end=0x7f5000100000
module /usr/lib/x86_64-linux-gnu/libnccl.so.2 base=0x7f5100000000 start=0x7f5100000000 end=0x7f5100100000
event kind=api name=cudaMalloc corr=1 thread=3 ts=1500000000 addr=$C bytes=$((2 * MIB)) device=0
event kind=api name=cudaMalloc corr=2 thread=3 ts=2000000000 addr=$A bytes=$((20 * MIB)) device=0 stack=0x7f5000000010
event kind=api name=cudaMalloc corr=3 thread=3 ts=2500000000 addr=$NCCL bytes=$((4 * MIB)) device=0 stack=0x7f5100000010
event kind=api name=cudaMalloc corr=4 thread=3 ts=2600000000 addr=$OTHER bytes=$MIB device=0
event kind=vmm_create thread=3 ts=2700000000 extra=0x77 bytes=$((2 * MIB)) device=0 mem_kind=3
event kind=vmm_map thread=3 ts=2700000100 addr=$NCCLVMM bytes=$((2 * MIB)) extra=0x77 stack=0x7f5100000010
event kind=vmm_unmap thread=3 ts=8100000000 addr=$NCCLVMM bytes=$((2 * MIB))
event kind=api name=cudaMalloc corr=5 thread=3 ts=3000000000 addr=$B bytes=$((2 * MIB)) device=0
event kind=api name=cudaFree corr=6 thread=3 ts=8000000000 addr=$NCCL device=0 flags=4
event kind=api name=cudaFree corr=7 thread=3 ts=9000000000 addr=$A device=0 flags=4
EOF
}
spool() { # NAME
	spool_text | "$SPOOL_SCRIPT" "$1.mpt" || die "spool_script failed on $1"
}

# The snapshot of pid 6000: times are spool times + the offset (Unix us, the snapshot's clock).
snapshot() { # FILE MAX_ENTRIES
	"$PY" - "$@" <<PY || die "cannot write the snapshot"
import pickle, sys
base = $START_UNIX - $START_MONO + 5000123000   # the snapshot's clock is 5.000123 s ahead
us = lambda mono: (mono + base) // 1000
A, B, C, NOWHERE, MIB = $A, $B, $C, $NOWHERE, $MIB
def e(action, addr, size, mono):
    return {"action": action, "addr": addr, "size": size, "stream": 0, "time_us": us(mono),
            "frames": [{"name": "train_step", "filename": "train.py", "line": 42}]}
trace = [e("segment_alloc", A, 20 * MIB, 2000005000),
         e("alloc", A, 1000, 2100000000),
         e("segment_alloc", B, 2 * MIB, 3000007000),
         e("alloc", B, 4096, 3100000000),
         e("alloc", NOWHERE, 512, 3200000000),
         e("free_requested", NOWHERE, 512, 3300000000),
         e("free_completed", NOWHERE, 512, 3300000000),
         e("free_requested", A, 1000, 4000000000),
         e("free_completed", A, 1000, 4000001000),
         e("segment_free", A, 20 * MIB, 9000003000),
         e("alloc", A + MIB, 8192, 9500000000),
         e("free_requested", A + MIB, 8192, 9600000000),
         e("free_completed", A + MIB, 8192, 9600000000)]
def seg(addr, blocks):
    return {"device": 0, "address": addr, "total_size": 2 * MIB, "stream": 0,
            "segment_type": "large", "blocks": blocks}
segments = [seg(B, [{"size": 4096, "requested_size": 4096, "state": "active_allocated"},
                    {"size": 2 * MIB - 4096, "state": "inactive"}]),
            seg(C, [{"size": 512, "requested_size": 500, "state": "active_allocated"},
                    {"size": 2 * MIB - 512, "state": "inactive"}])]
doc = {"segments": segments, "device_traces": [trace],
       "memprof_history": {"max_entries": int(sys.argv[2]), "stacks": "all", "ours": True,
                           "user": False, "reason": "exit", "pid": 6000}}
pickle.dump(doc, open(sys.argv[1], "wb"), protocol=4)
PY
}

step "one trace: segments from the spool, blocks from the snapshot, clocks aligned"
spool merged
snapshot torch-6000.pickle 13
mp import -o merged.db merged.mpt
expect_status 0
expect_eq "$(q merged.db "select e.ts_ns, e.op, e.size, e.requested, printf('%x', e.address) from events e join apis a on a.id = e.api where a.name = 'PyTorch allocator' order by e.ts_ns, e.seq")" \
	"2000000000|3|512|500|7f6200000000 2099995000|1|1024|1000|7f6000000000 3099995000|1|4096|4096|7f6100000000 3199995000|1|512|512|7f8000000000 3299995000|11|512|512|7f8000000000 3299995000|2|512|512|7f8000000000 3999995000|11|1024|1000|7f6000000000 3999996000|2|1024|1000|7f6000000000 9499995000|1|8192|8192|7f6000100000 9599995000|11|8192|8192|7f6000100000 9599995000|2|8192|8192|7f6000100000" \
	"the snapshot's blocks at spool times (5 us before the snapshot's own, once aligned; the block live before the history at its first entry's)"
expect_eq "$(q merged.db "select e.ts_ns, e.op, e.size, a.name from events e join apis a on a.id = e.api where e.op in (4, 5) order by e.ts_ns")" \
	"1500000000|4|2097152|cudaMalloc 2000000000|4|20971520|cudaMalloc 3000000000|4|2097152|cudaMalloc 9000000000|5|20971520|cudaFree" \
	"PyTorch's segments, as CUPTI recorded them"
expect_eq "$(q merged.db "select e.ts_ns, e.op, e.size, a.name from events e join apis a on a.id = e.api where a.name like '%(%' order by e.ts_ns")" \
	"2500000000|1|4194304|cudaMalloc (NCCL) 2600000000|1|1048576|cudaMalloc (outside PyTorch) 2700000100|6|2097152|cuMemMap (NCCL) 8000000000|2|4194304|cudaMalloc (NCCL) 8100000000|7|2097152|cuMemMap (NCCL)" \
	"allocations outside PyTorch's allocator: blocks of their own, labelled by origin; NCCL's mapping by its stack"
expect_eq "$(q merged.db "select count(*) from events where op = 1 and api = (select id from apis where name = 'PyTorch allocator') and stack is null")" \
	"0" "the allocations keep the snapshot's stacks"
expect_eq "$(q merged.db "select key || '=' || value from meta where key like 'torch_%' order by key")" \
	"torch_blocks=5 torch_blocks_outside_segments=2 torch_clock_correction_ns=-5000128000 torch_history=merged torch_history_lost=1 torch_outside_allocations=3" \
	"meta"
expect_eq "$(q merged.db "select count(*) from events e where e.ts_ns < (select max(p.ts_ns) from events p where p.seq < e.seq)")" \
	"0" "events in time order"
expect_stderr_contains "PyTorch's own history merged (written at exit): 5 blocks inside the segments CUPTI recorded"
expect_stderr_contains "torch-6000.pickle': its clock was -5000.128 ms off the spool's (aligned on 2 segments)"
expect_stderr_contains "torch-6000.pickle': 2 of its 5 blocks are not inside a segment CUPTI saw reserved at that moment: 1 at addresses no recorded segment covers (CUPTI lost the segment, or PyTorch got the memory elsewhere), 1 outside the time their segment was reserved (the clocks disagree by more than 4 us)"
expect_stderr_contains "'merged.mpt': 3 allocations outside PyTorch's allocator, memory PyTorch cannot see (NCCL 2, cuBLAS workspace 0, cuDNN workspace 0, other 1): 'analyze --by=api' lists them"
expect_stderr_contains "PyTorch's history ring buffer was full (max_entries=13, device 0)"
expect_stderr_not_contains "the trace holds its segments, not tensors"

step "memprof record: the snapshot its workload left is merged, then deleted with the spool"
use_inject_library
export SPOOL_SCRIPT
cat >workload.sh <<'SH'
#!/bin/sh
"$SPOOL_SCRIPT" <"$1" || exit 98
cp torch-6000.pickle "$MEMPROF_SPOOL_DIR/" || exit 97
SH
chmod +x workload.sh
spool_text >spool.script
mkdir -p tmpdir
TMPDIR=$TMP/tmpdir mp record -o rec.db -- ./workload.sh spool.script
expect_status 0
expect_eq "$(q rec.db "select value from meta where key = 'torch_history'")" "merged" "merged by record"
expect_eq "$(q rec.db "select count(*) from events e join apis a on a.id = e.api where a.name = 'PyTorch allocator'")" \
	"11" "the blocks"
expect_dir_empty tmpdir

step "the merged trace is a window: blocks live at the snapshot are not leaks"
expect_eq "$(q merged.db "select value from meta where key = 'window'")" \
	"PyTorch's own history, merged: its blocks end where its snapshot was taken (at exit, before the interpreter freed its tensors)" \
	"meta window"

step "analyze --by=api shows the memory PyTorch cannot see"
mp analyze --by=api merged.db
expect_status 0
expect_stdout_contains "cudaMalloc (NCCL)"
expect_stdout_contains "PyTorch allocator"

step "history not full: nothing said of the ring buffer"
rm -f torch-6000.pickle
snapshot torch-6000.pickle 100000
mp import -o roomy.db merged.mpt
expect_status 0
expect_stderr_not_contains "ring buffer"
expect_eq "$(q roomy.db "select count(*) from meta where key = 'torch_history_lost'")" "0" "no torch_history_lost"

step "an alloc at an address still live (the history lost a free): the old block ends there"
mkdir dup && spool_text | "$SPOOL_SCRIPT" dup/merged.mpt || die "spool_script failed"
"$PY" - dup/torch-6000.pickle <<PY || die "cannot write the snapshot"
import pickle, sys
us = lambda mono: (mono + $START_UNIX - $START_MONO) // 1000
e = lambda action, mono: {"action": action, "addr": $A, "size": 1000, "stream": 0,
                          "time_us": us(mono), "frames": []}
trace = [dict(e("segment_alloc", 2000000000), size=20 * $MIB), e("alloc", 2100000000),
         e("alloc", 2200000000), e("free_requested", 2300000000), e("free_completed", 2300000000)]
pickle.dump({"segments": [], "device_traces": [trace]}, open(sys.argv[1], "wb"))
PY
mp import -o dup.db dup/merged.mpt
expect_status 0
expect_eq "$(q dup.db "select e.ts_ns, e.op, e.alloc_id - (select min(alloc_id) from events where api = e.api) from events e join apis a on a.id = e.api where a.name = 'PyTorch allocator' order by e.seq")" \
	"2100000000|1|0 2200000000|2|0 2200000000|1|1 2300000000|11|1 2300000000|2|1" \
	"the first block freed where the second is allocated"
expect_stderr_contains "1 allocations at an address still live: the earlier allocation was closed by an implied free"

step "without a snapshot: segments only, as before"
mkdir alone && cp merged.mpt alone/
mp import -o alone.db alone/merged.mpt
expect_status 0
expect_stderr_contains "the trace holds its segments, not tensors"
expect_eq "$(q alone.db "select count(*) from meta where key like 'torch_%'")" "0" "no torch_ meta"
expect_eq "$(q alone.db "select group_concat(op) from events")" "4,4,4,4,6,4,5,7,5" "every cudaMalloc a segment (and the mapping a mapping)"

step "a snapshot that cannot be read: a note, the spool is imported"
mkdir bad && cp merged.mpt bad/ && printf '\200\004not a pickle' >bad/torch-6000.pickle
mp import -o bad.db bad/merged.mpt
expect_status 0
expect_stderr_contains "PyTorch's history not merged: "
expect_stderr_contains "bad/torch-6000.pickle"
expect_eq "$(q bad.db "select count(*) from meta where key like 'torch_%'")" "0" "no torch_ meta"

finish
