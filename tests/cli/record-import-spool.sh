#!/bin/bash
# record-import-spool.sh - the importer 'spool' (what 'memprof record' runs on
# the spools) through 'memprof import', on spools written by the real spool
# writer from text scripts (tests/tools/spool_script): events counted and
# joined by correlation id, each allocation once, frees paired out of order,
# host memory skipped, VMM maps, phases and marks, losses and truncation
# marked, PyTorch's segments, and stacks symbolised with libdw against a real
# binary (spool_script itself, its 'main' found with nm).
set -u
. "$(dirname "$0")/lib.sh"

SPOOL_SCRIPT=$top_builddir/tests/tools/spool_script
[ -x "$SPOOL_SCRIPT" ] || die "no '$SPOOL_SCRIPT' (make check builds it)"
have_sqlite3 || skip "no sqlite3 shell to read the traces"
cd "$TMP" || die "cd $TMP"

# spool NAME: write NAME.mpt from the script on stdin.
spool() {
	"$SPOOL_SCRIPT" "$1.mpt" || die "spool_script failed on $1"
}

# q DB SQL: one query's result, rows joined by ' ', columns by '|'.
q() {
	sql "$1" "$2" | tr '\n' ' ' | sed 's/ $//'
}

# flags: ASYNC 1, FROM_DRIVER 2, FREE_CALL 4, HOST_MEMORY 8, MANAGED 16
# mem_kind: PAGEABLE 1, PINNED 2, DEVICE 3, MANAGED 5
# ops: alloc 1, free 2, preexisting 3, reserve 4, release 5, map 6, unmap 7,
#      oom 8, phase_begin 9, phase_end 10

# --- joins, pairing, host memory, nesting ---------------------------------------------
step "join by correlation id"
spool join <<'EOF'
header pid=4242 ppid=1
meta host gpu-node-7
meta argv "./train --epochs 1"
meta cupti /opt/wheels/nvidia/cu13/lib/libcupti.so.13
device 0 name="Test GPU" uuid=GPU-1234 total=85899345920
# the memory record arrives before its API event (CUPTI is late and per thread)
event kind=mem_alloc corr=10 ts=1010 addr=0x7f0000001000 bytes=1048576 device=0 mem_kind=3
event kind=api name=cudaMalloc corr=10 thread=77 ts=1000 duration=40 addr=0x7f0000001000 bytes=1000000 device=0 phase=forward
# its free: the record is written before the alloc's in the file, later in time
event kind=mem_free corr=12 ts=3010 addr=0x7f0000001000 bytes=1048576 device=0 mem_kind=3
event kind=api name=cudaFree corr=12 thread=77 ts=3000 duration=20 addr=0x7f0000001000 device=0 flags=4
# driver call with no memory record: the API event makes the allocation itself
event kind=api name=cuMemAlloc_v2 corr=20 thread=78 ts=2000 duration=10 addr=0x7f0000200000 bytes=4096 device=0 flags=2
# a runtime call and the driver call inside it (other correlation id), no record: once
event kind=api name=cudaMalloc corr=30 thread=78 ts=2100 duration=100 addr=0x7f0000300000 bytes=8192 device=0
event kind=api name=cuMemAlloc_v2 corr=31 thread=78 ts=2120 duration=20 addr=0x7f0000300000 bytes=8192 device=0 flags=2
# the same for its free
event kind=api name=cudaFree corr=32 thread=78 ts=2500 duration=100 addr=0x7f0000300000 device=0 flags=4
event kind=api name=cuMemFree_v2 corr=33 thread=78 ts=2510 duration=20 addr=0x7f0000300000 device=0 flags=6
# a failed call makes nothing; cudaFree(0) frees nothing
event kind=api name=cudaMalloc corr=40 thread=78 ts=2600 addr=0x0 bytes=1 device=0 extra=2
event kind=api name=cudaFree corr=41 thread=78 ts=2700 addr=0x0 device=0 flags=4
# pinned host memory: a record and a host API call, kept as host buffers, not events
event kind=mem_alloc corr=50 ts=2800 addr=0x600000 bytes=4096 device=0 mem_kind=2
event kind=api name=cudaMallocHost corr=51 thread=78 ts=2900 addr=0x700000 bytes=4096 device=0 flags=8
# managed memory is GPU memory
event kind=mem_alloc corr=60 ts=3100 addr=0x7f0000400000 bytes=65536 device=0 mem_kind=5
# a free whose allocation is not in the spool
event kind=mem_free corr=70 ts=3200 addr=0x7f0000900000 bytes=512 device=0 mem_kind=3
EOF
mp import -o join.db join.mpt
expect_status 0
expect_stdout_contains "wrote 'join.db': 7 events, 4 allocations"
expect_stderr_not_contains "host memory records"
expect_stderr_contains "1 frees of unknown addresses kept as unmatched"
expect_eq "$(q join.db 'select ts_ns, op, alloc_id, size, requested, address from events order by seq')" \
	"1010|1|1|1048576|1000000|139637976731648 2000|1|2|4096|4096|139637978824704 2100|1|3|8192|8192|139637979873280 2500|2|3|8192|8192|139637979873280 3010|2|1|1048576|1048576|139637976731648 3100|1|4|65536|65536|139637980921856 3200|2|5|512|512|139637986164736" \
	"events (time, op, id, sizes, address)"
expect_eq "$(q join.db "select e.ts_ns, e.thread, a.name, coalesce(p.name, '') from events e left join apis a on a.id = e.api left join phases p on p.id = e.phase where e.ts_ns in (1010, 3010, 2000)")" \
	"1010|77|cudaMalloc|forward 2000|78|cuMemAlloc_v2| 3010|77|cudaFree|" \
	"thread, API and phase come from the API event"
expect_eq "$(q join.db 'select pid, ppid, host, command, rank from processes')" \
	"4242|1|gpu-node-7|./train --epochs 1|" "the process row"
expect_eq "$(q join.db 'select ordinal, name, uuid, total_bytes from devices')" \
	"0|Test GPU|GPU-1234|85899345920" "the devices row"
expect_eq "$(q join.db "select value from meta where key = 'source'")" "spool" "meta source"
expect_eq "$(q join.db "select value from meta where key = 'clock'")" "monotonic_ns" "meta clock"
expect_eq "$(q join.db "select value from meta where key = 'cupti'")" \
	"/opt/wheels/nvidia/cu13/lib/libcupti.so.13" "meta cupti: the file the process used"
expect_eq "$(q join.db "select value from meta where key = 'host_records_skipped'")" "0" \
	"meta host_records_skipped"
expect_eq "$(q join.db "select value from meta where key = 'host_buffers'")" "2" "meta host_buffers"
expect_eq "$(q join.db "select b.address, b.size, b.alloc_ts_ns, coalesce(b.free_ts_ns, '-'), coalesce(a.name, '-'), coalesce(b.thread, '-') from host_buffers b left join apis a on a.id = b.api order by b.id")" \
	"6291456|4096|2800|-|-|- 7340032|4096|2900|-|cudaMallocHost|78" "the pinned host buffers"
expect_eq "$(q join.db "select value from meta where key = 'truncated'")" "0" "meta truncated"

# --- VMM, OOM, phases, marks, preexisting -----------------------------------------------
step "VMM, OOM, phases, marks"
spool vmm <<'EOF'
header pid=5000 ppid=1
event kind=vmm_reserve thread=5 ts=100 addr=0x7f1000000000 bytes=1073741824 device=0
event kind=vmm_create thread=5 ts=110 extra=0xabc bytes=2097152 device=0 mem_kind=3
event kind=vmm_map thread=5 ts=120 addr=0x7f1000000000 bytes=2097152 extra=0xabc
event kind=vmm_create thread=5 ts=130 extra=0xdef bytes=2097152 device=0 mem_kind=2
event kind=vmm_map thread=5 ts=140 addr=0x7f2000000000 bytes=2097152 extra=0xdef
event kind=phase_push thread=5 ts=150 name=step
event kind=phase_push thread=5 ts=160 name=backward
event kind=oom name=cudaMalloc thread=5 ts=170 bytes=999999999999 device=0 phase=backward
event kind=phase_pop thread=5 ts=180
event kind=mark thread=0 ts=185 name=checkpoint
event kind=phase_pop thread=5 ts=190
event kind=vmm_unmap thread=5 ts=200 addr=0x7f1000000000 bytes=2097152
event kind=vmm_release thread=5 ts=210 extra=0xabc
event kind=vmm_free thread=5 ts=220 addr=0x7f1000000000 bytes=1073741824
event kind=preexisting name=cudaMalloc ts=90 addr=0x7f3000000000 bytes=4096 device=1 mem_kind=3
EOF
mp import -o vmm.db vmm.mpt
expect_status 0
expect_eq "$(q vmm.db "select e.ts_ns, e.op, e.size, e.requested, e.device, coalesce(p.name, '') from events e left join phases p on p.id = e.phase order by seq")" \
	"90|3|4096|4096|1| 120|6|2097152|2097152|0| 150|9|0|0|0|step 160|9|0|0|0|backward 170|8|0|999999999999|0|backward 180|10|0|0|0|backward 185|9|0|0|0|mark: checkpoint 185|10|0|0|0|mark: checkpoint 190|10|0|0|0|step 200|7|2097152|2097152|0|" \
	"VMM map/unmap (host handle kept out), oom, phases, mark, preexisting"
expect_eq "$(q vmm.db 'select address, size, alloc_ts_ns, coalesce(free_ts_ns, "-") from host_buffers')" \
	"139775415681024|2097152|130|-" "the host handle is a pinned host buffer at its mapping"
for k in vmm_reserve_calls:1 vmm_create_calls:2 vmm_release_calls:1 vmm_address_free_calls:1 host_records_skipped:0 host_buffers:1; do
	expect_eq "$(q vmm.db "select value from meta where key = '${k%%:*}'")" "${k#*:}" "meta ${k%%:*}"
done

step "a mapping live when recording started is unmapped later"
spool premap <<'EOF'
header pid=5050 ppid=1 flags=1
event kind=window_start ts=100
event kind=preexisting name=cuMemMap ts=100 addr=0x7f2000000000 bytes=2097152 device=0 mem_kind=3 flags=32
event kind=preexisting name=cudaMalloc ts=100 addr=0x7f3000000000 bytes=4096 device=0 mem_kind=3
event kind=vmm_unmap thread=5 ts=200 addr=0x7f2000000000 bytes=2097152
event kind=api name=cudaFree corr=9 thread=5 ts=300 duration=10 addr=0x7f3000000000 device=0 flags=4
EOF
mp import -o premap.db premap.mpt
expect_status 0
# flags 32 = MP_SE_MAPPING: a map (6) then its unmap (7), not a block left live
expect_eq "$(q premap.db 'select ts_ns, op, size from events order by seq')" \
	"100|6|2097152 100|3|4096 200|7|2097152 300|2|4096" "preexisting mapping and block, then their ends"

# --- losses: dropped records, the library turned off, a spool cut short ---------------
step "dropped and disabled"
spool lost <<'EOF'
header pid=5100 ppid=1
event kind=api name=cudaMalloc corr=1 thread=9 ts=100 addr=0x1000 bytes=256 device=0
dropped 5
event kind=dropped ts=150 extra=7 name="buffer full"
event kind=disabled ts=200 name="cuptiSubscribe failed: CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED (nsys?)"
end disabled
EOF
mp import -o lost.db lost.mpt
expect_status 0
expect_stdout_contains "1 events, 1 allocations"
expect_stderr_contains "turned itself off"
expect_eq "$(q lost.db "select value from meta where key = 'dropped_records'")" "12" \
	"dropped_records: the footer's 5 and the event's 7"
expect_eq "$(q lost.db "select value from meta where key = 'lossy'")" "1" "lossy"
expect_eq "$(q lost.db "select value from meta where key = 'truncated'")" "1" \
	"truncated: recording stopped before the process did"
expect_eq "$(q lost.db "select value from meta where key = 'record_disabled'")" \
	"'lost.mpt' (pid 5100): cuptiSubscribe failed: CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED (nsys?)" \
	"record_disabled"

step "a spool cut short (SIGKILL)"
# (through sh, which does not report the SIGKILL as bash does)
sh -c '"$0" cut.mpt 2>/dev/null' "$SPOOL_SCRIPT" <<'EOF'
header pid=5200 ppid=1
event kind=api name=cudaMalloc corr=1 thread=9 ts=100 addr=0x1000 bytes=256 device=0
event kind=api name=cudaMalloc corr=2 thread=9 ts=200 addr=0x2000 bytes=512 device=0
flush
event kind=api name=cudaFree corr=3 thread=9 ts=300 addr=0x1000 device=0 flags=4
kill
event kind=api name=cudaMalloc corr=4 thread=9 ts=400 addr=0x3000 bytes=1024 device=0
EOF
[ -s cut.mpt ] || die "spool_script wrote no cut.mpt"
size=$(stat -c %s cut.mpt)
mp import -o cut.db cut.mpt
expect_status 0
expect_stdout_contains "wrote 'cut.db': 3 events, 2 allocations"
expect_stderr_contains "'cut.mpt': ends early at byte $size"
expect_stderr_contains "marked truncated"
expect_eq "$(q cut.db "select value from meta where key = 'truncated'")" "1" "truncated"
expect_eq "$(q cut.db "select value from meta where key = 'lossy'")" "1" "lossy"
expect_eq "$(q cut.db "select count(*) from events where ts_ns = 400")" "0" "nothing after the kill"

step "a spool cut in the middle of a block"
head -c $((size - 20)) cut.mpt >cut2.mpt
mp import -o cut2.db cut2.mpt
expect_status 0
expect_stdout_contains "wrote 'cut2.db': 2 events, 2 allocations"
expect_stderr_contains "'cut2.mpt': ends early at byte"
expect_eq "$(q cut2.db "select value from meta where key = 'truncated'")" "1" "truncated"

step "a corrupt block"
cp join.mpt bad.mpt
# a byte in the middle of the payload of the last blocks: its checksum fails
off=$(($(stat -c %s bad.mpt) - 40))
printf '\377' | dd of=bad.mpt bs=1 seek=$off conv=notrunc 2>/dev/null
mp import -o bad.db bad.mpt
expect_status 0
expect_stderr_contains "'bad.mpt': ends early at byte"
expect_eq "$(q bad.db "select value from meta where key = 'truncated'")" "1" "truncated"

step "a spool of another byte order or version is refused"
cp join.mpt ver.mpt
printf '\143' | dd of=ver.mpt bs=1 seek=8 conv=notrunc 2>/dev/null
mp import -o ver.db ver.mpt
expect_status 1
expect_stderr_contains "'ver.mpt'"
expect_file_absent ver.db

# --- PyTorch's caching allocator -------------------------------------------------------------
torch_spool() { # NAME EXTRA-META-LINE
	spool "$1" <<EOF
header pid=6000 ppid=1
module /opt/venv/lib/python3.11/site-packages/torch/lib/libc10_cuda.so base=0x7f5000000000 start=0x7f5000000000 end=0x7f5000100000
$2
event kind=api name=cudaMalloc corr=1 thread=3 ts=100 addr=0x7f6000000000 bytes=20971520 device=0
event kind=mem_alloc corr=1 ts=101 addr=0x7f6000000000 bytes=20971520 device=0 mem_kind=3
event kind=mem_alloc corr=2 ts=150 addr=0x7f7000000000 bytes=4096 device=0 mem_kind=3 flags=1
event kind=mem_free corr=3 ts=200 addr=0x7f6000000000 bytes=20971520 device=0 mem_kind=3
EOF
}
step "PyTorch caching allocator on: segments"
torch_spool torch ""
mp import -o torch.db torch.mpt
expect_status 0
expect_stderr_contains "PyTorch's caching allocator was on: the trace holds its segments, not tensors; record with --no-framework-cache to see each tensor (this changes the workload's memory behaviour)"
expect_eq "$(q torch.db 'select ts_ns, op, size from events order by seq')" \
	"101|4|20971520 150|1|4096 200|5|20971520" "cudaMalloc blocks are reserve/release, async ones allocs"
step "PyTorch with PYTORCH_NO_CUDA_MEMORY_CACHING=1: tensors"
torch_spool torch-nocache "meta env:PYTORCH_NO_CUDA_MEMORY_CACHING 1"
mp import -o torch-nocache.db torch-nocache.mpt
expect_status 0
expect_stderr_not_contains "caching allocator"
expect_eq "$(q torch-nocache.db 'select ts_ns, op, size from events order by seq')" \
	"101|1|20971520 150|1|4096 200|2|20971520" "alloc/free"

# --- stacks ---------------------------------------------------------------------------------
step "stacks symbolised with libdw"
main_off=$(nm "$SPOOL_SCRIPT" | awk '$3 == "main" { print $1 }')
[ -n "$main_off" ] || die "no symbol 'main' in '$SPOOL_SCRIPT' (stripped?)"
build_id=$(readelf -n "$SPOOL_SCRIPT" | awk '/Build ID/ { print $3 }')
base=$((0x555555554000))
if readelf -h "$SPOOL_SCRIPT" | grep -q 'EXEC'; then base=0; fi
pc=$(printf '0x%x' $((base + 0x$main_off + 4)))
spool stacks <<EOF
header pid=7000 ppid=1 stacks=all
module $SPOOL_SCRIPT base=$base start=$base end=$((base + 0x1000000)) build_id=$build_id
module /usr/lib/x86_64-linux-gnu/libcuda.so.580.65.06 base=0x7f8000000000 start=0x7f8000000000 end=0x7f8000100000
module $TMP/gone/libgone.so base=0x7f9000000000 start=0x7f9000000000 end=0x7f9000100000
event kind=api name=cudaMalloc corr=1 thread=3 ts=100 addr=0x1000 bytes=256 device=0 stack=0x7f8000000010,0x7f8000000020,$pc,0x7f9000000abc
event kind=api name=cudaMalloc corr=2 thread=3 ts=200 addr=0x2000 bytes=256 device=0 stack=0x7f8000000010,0x7f8000000020,$pc,0x7f9000000abc
EOF
mp import -o stacks.db stacks.mpt
expect_status 0
expect_stderr_contains "'stacks.mpt': 1 module(s) of the recorded process could not be read for symbols"
expect_stderr_contains "$TMP/gone/libgone.so"
# frames innermost first: main (libcuda's two frames left out), then the unresolved one
expect_eq "$(q stacks.db "with recursive walk(id, depth) as (select stack, 0 from events where seq = 1 union all select s.parent, depth + 1 from stacks s join walk on s.id = walk.id where s.parent != 0) select f.name || '@' || f.file from walk join stacks s on s.id = walk.id join frames f on f.id = s.frame order by depth")" \
	"main@$(q stacks.db "select file from frames where name = 'main'") 0xabc@$TMP/gone/libgone.so" \
	"stack frames"
expect_eq "$(q stacks.db "select count(*) from frames where name = 'main' and file like '%spool_script.c' and line > 0")" \
	"1" "main resolved to its source file and a line"
expect_eq "$(q stacks.db 'select count(distinct stack) from events')" "1" "one stack for both"
expect_eq "$(q stacks.db "select count(*) from frames where file like '%libcuda%'")" "0" \
	"the driver's frames left out"

step "a module whose build id differs stays unresolved"
sed "s/build_id=$build_id/build_id=00112233/" <<EOF | spool stacks-id
header pid=7001 ppid=1 stacks=all
module $SPOOL_SCRIPT base=$base start=$base end=$((base + 0x1000000)) build_id=$build_id
event kind=api name=cudaMalloc corr=1 thread=3 ts=100 addr=0x1000 bytes=256 device=0 stack=$pc
EOF
mp import -o stacks-id.db stacks-id.mpt
expect_status 0
expect_stderr_contains "not 00112233 as recorded"
expect_eq "$(q stacks-id.db 'select name from frames')" "$(printf '0x%x' $((0x$main_off + 4)))" \
	"the frame is its offset in the module"

step "a module path naming a FIFO is never opened"
mkfifo "$TMP/fifo.so"
spool stacks-fifo <<EOF
header pid=7002 ppid=1 stacks=all
module $TMP/fifo.so base=0x400000 start=0x400000 end=0x500000
event kind=api name=cudaMalloc corr=1 thread=3 ts=100 addr=0x1000 bytes=256 device=0 stack=0x400100
EOF
run timeout 20 "$MEMPROF" import -o stacks-fifo.db stacks-fifo.mpt
expect_status 0
expect_stderr_contains "not a regular file"

# --- several spools -----------------------------------------------------------------------
step "a spool stamped with CUPTI's clock says so"
spool cuptiClock <<'EOF'
header pid=6000 ppid=1
meta clock cupti
event kind=api name=cudaMalloc corr=1 thread=1 ts=1000 addr=0x7000 bytes=4096 device=0
end
EOF
mp import -o cuptiClock.db cuptiClock.mpt
expect_status 0
expect_eq "$(q cuptiClock.db "select value from meta where key = 'clock'")" \
	"cupti_ns (CUPTI's own clock: it refused CLOCK_MONOTONIC)" "clock of a CUPTI-stamped spool"
expect_eq "$(q join.db "select value from meta where key = 'clock'")" "monotonic_ns" "clock of the others"

step "a recording started dormant, or stopped, is a window: no leaks are claimed"
spool dormant <<'EOF'
header pid=6100 ppid=1 flags=1
event kind=window_start thread=1 ts=900
event kind=api name=cudaMalloc corr=1 thread=1 ts=1000 addr=0x7000 bytes=4096 device=0
end
EOF
spool stopped <<'EOF'
header pid=6200 ppid=1
event kind=api name=cudaMalloc corr=1 thread=1 ts=1000 addr=0x7000 bytes=4096 device=0
event kind=window_stop thread=1 ts=2000
end
EOF
window="recorded only between 'memprof attach PID start' and 'stop' (record --dormant, or a stop before the program ended)"
for name in dormant stopped; do
	mp import -o $name.db $name.mpt
	expect_status 0
	expect_eq "$(q $name.db "select value from meta where key = 'window'")" "$window" "window of $name"
	mp analyze $name.db
	expect_status 0
	expect_stdout_contains "live at the end of the window (not leaks: the trace is a window, see notes): 1 block, 4.00 KiB"
done
expect_eq "$(q cuptiClock.db "select count(*) from meta where key = 'window'")" "0" "a whole recording is no window"
mp analyze cuptiClock.db
expect_status 0
expect_stdout_contains "leaks (never freed): 1 block, 4.00 KiB"

step "several spools: one process each, events in time order"
mp import -o both.db join.mpt vmm.mpt
expect_status 0
expect_eq "$(q both.db 'select pid from processes order by id')" "4242 5000" "processes"
expect_eq "$(q both.db 'select count(*) from events e join processes p on p.id = e.process where p.pid = 5000')" \
	"10" "events of the second spool"
expect_eq "$(q both.db 'select min(ts_ns) from events where seq = 1')" "90" "first event by time"

finish
