#!/bin/sh
# make-spool-seeds.sh - rebuild the seeds of corpus/spool/ with the real
# writer, through tests/tools/spool_script (build it first: 'make
# tests/tools/spool_script'): a whole spool of every item type, one of
# several blocks, one cut short by SIGKILL and one with deep stacks.
# usage: tests/fuzz/make-spool-seeds.sh [BUILDDIR]   (default: the source tree)
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
tool=${1:-$top}/tests/tools/spool_script
out=$top/tests/fuzz/corpus/spool
mkdir -p "$out"
seed() {
	rm -f "$out/$1.mpt"
	"$tool" "$out/$1.mpt" || [ "$1" = killed ]
	echo "$out/$1.mpt: $(wc -c <"$out/$1.mpt") bytes"
}
seed every-item <<'S'
header pid=100 ppid=1 flags=2 stacks=all start=1000 start_unix=2000 cupti=130000
meta argv "python train.py --steps 2"
meta env:RANK 0
module /usr/lib/x.so base=0x7f0000000000 start=0x7f0000000000 end=0x7f0000100000 build_id=abcd
device 0 name="NVIDIA H100" uuid=GPU-1234 total=85899345920
event kind=phase_push name=forward thread=11 ts=990
event kind=api name=cudaMalloc corr=7 thread=11 ts=1000 addr=0x7000 bytes=4096 device=0 duration=5000 stack=0x401000,0x401100 phase=forward
event kind=mem_alloc corr=7 ts=1010 addr=0x7000 bytes=4096 device=0 mem_kind=3
event kind=api name=cudaFree corr=8 thread=11 ts=2000 addr=0x7000 device=0 flags=4 stack=0x401000,0x401200 phase=forward
event kind=mem_free corr=8 ts=2010 addr=0x7000 bytes=4096 device=0 mem_kind=3
event kind=phase_pop thread=11 ts=3000
event kind=mark name="step 1" ts=3100
dropped 3
end
S
seed blocks <<'S'
header pid=200 ppid=100 start=1000 start_unix=2000
event kind=vmm_reserve name=cuMemAddressReserve addr=0x10000000 bytes=0x200000 ts=1
flush
event kind=vmm_create name=cuMemCreate extra=0x55 bytes=0x200000 device=0 mem_kind=3 ts=2
event kind=vmm_map name=cuMemMap addr=0x10000000 bytes=0x200000 extra=0x55 ts=3
flush
event kind=oom name=cudaMalloc bytes=0x1000000000 device=0 ts=4
event kind=disabled name="cupti failed" ts=5
end disabled
S
seed killed <<'S'
header pid=300 ppid=1 start=1000 start_unix=2000
event kind=window_start ts=10
event kind=preexisting name=cudaMalloc addr=0x9000 bytes=512 device=1 mem_kind=3 ts=11
flush
event kind=pool_created addr=0xa000 bytes=65536 extra=1 ts=12
kill
S
seed stacks <<'S'
header pid=400 ppid=1 start=1000 start_unix=2000 stacks=sampled sample=4 depth=8
event kind=api name=cuMemAlloc_v2 ts=1 stack=1,2,3,4,5,6,7,8 flags=2
event kind=api name=cuMemAlloc_v2 ts=2 stack=1,2,3,4,5,6,7,8 flags=2
event kind=api name=cuMemAllocManaged ts=3 stack=8,7,6,5,4,3,2,1 flags=18
event kind=dropped name="activity buffer full" extra=12 ts=4
end
S
