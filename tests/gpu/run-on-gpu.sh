#!/bin/bash
# tests/gpu/run-on-gpu.sh OUTDIR - the issue 7 checks to run when a GPU is lent, from a
# build made elsewhere and carried over (this builds nothing): the machine (nvidia-smi,
# driver and CUDA versions), tests/gpu/record-samples.sh (each sample recorded and checked
# against its log; per sample, which APIs gave CUPTI MEMORY2 records and which only
# callback events: shared/notes/cupti.md section 9), tests/gpu/record-torch.sh,
# bench/record-overhead.sh and (issue 9) tests/gpu/multi-gpu.sh: a 2-rank merged trace on
# the GPUs there are, the sharded pool's NCCL collectives in one process, and mpirun
# --mpi --backend=cuda when mpirun and 2 GPUs are there (skipped with a line otherwise);
# (issue 10) tests/gpu/live-numa.sh: call durations, NUMA nodes of pinned memory,
# --metrics scraped and --live's summary lines on real samples.
# Everything raw goes to OUTDIR; a summary is printed.  Each part has a time limit (15 s
# per plain sample run, 120 + 90 + 120 + 240 s for the four scripts); the multi-GPU part
# may be run alone with PARTS=multi-gpu.
set -u
[ $# -eq 1 ] || { echo "usage: run-on-gpu.sh OUTDIR" >&2; exit 2; }
OUTDIR=$1
mkdir -p "$OUTDIR" || exit 1
OUTDIR=$(cd "$OUTDIR" && pwd)
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
top_builddir=${top_builddir:-$top_srcdir}
MEMPROF=${MEMPROF:-$top_builddir/memprof}
export top_srcdir top_builddir MEMPROF
export GPU_OUT=$OUTDIR
start=$(date +%s)

# part NAME LIMIT_S CMD...: run CMD with a time limit, output to OUTDIR/NAME.txt
part() {
	local name=$1 limit=$2 st t0
	shift 2
	t0=$(date +%s)
	timeout --kill-after=10 "$limit" "$@" >"$OUTDIR/$name.txt" 2>&1
	st=$?
	printf '== %-16s exit %3d  %4ds  (%s)\n' "$name" "$st" "$(($(date +%s) - t0))" "$OUTDIR/$name.txt" |
		tee -a "$OUTDIR/summary.txt"
}

{
	echo "# run-on-gpu.sh $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(hostname)"
	echo "# memprof: $MEMPROF ($("$MEMPROF" --version 2>&1 | head -n 1))"
	echo "# git: $(git -C "$top_srcdir" log --oneline -1 2>/dev/null)"
	nvidia-smi 2>&1
	nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap --format=csv 2>&1
	echo "# CUDA toolkit: $(/usr/local/cuda/bin/nvcc --version 2>&1 | tail -n 2 | head -n 1)"
	ls -l /usr/local/cuda/lib64/libcupti.so.13* 2>&1 | head -n 2
	python3 "$top_srcdir/tests/gpu/have_gpu.py" 2>&1
	python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda,
		torch.cuda.is_available())' 2>&1 | tail -n 1
	ls -l "$top_builddir"/samples/cuda/ 2>&1
} >"$OUTDIR/machine.txt"
: >"$OUTDIR/summary.txt"
head -n 20 "$OUTDIR/machine.txt"

# The samples alone first: do they run at all, and what do they log?
for s in alloc_runtime alloc_async alloc_managed alloc_pinned alloc_driver alloc_vmm nccl_comm; do
	timeout 15 "$top_builddir/samples/cuda/$s" >"$OUTDIR/alone-$s.log" 2>&1
	echo "alone $s: exit $?" >>"$OUTDIR/summary.txt"
done
NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=ALLOC timeout 15 "$top_builddir/samples/cuda/nccl_comm" \
	>"$OUTDIR/alone-nccl_comm-debug.log" 2>&1
# NVTX routed to CUPTI without memprof (the 13.0.0 crash, NVIDIA/NVTX#125)
NVTX_INJECTION64_PATH=${MEMPROF_CUPTI:-/usr/local/cuda/lib64/libcupti.so.13} timeout 15 \
	"$top_builddir/samples/cuda/alloc_runtime" >"$OUTDIR/alone-nvtx-cupti.log" 2>&1
echo "alone alloc_runtime with NVTX_INJECTION64_PATH=libcupti: exit $?" >>"$OUTDIR/summary.txt"

PARTS=${PARTS:-record-samples record-torch record-overhead multi-gpu live-numa}
want() { case " $PARTS " in *" $1 "*) return 0 ;; esac; return 1; }
want record-samples && part record-samples 120 "$top_srcdir/tests/gpu/record-samples.sh"
want record-torch && part record-torch 90 "$top_srcdir/tests/gpu/record-torch.sh"
want record-overhead && OUT_DIR=$OUTDIR/record-overhead REPS=${REPS:-3} LOOP=${LOOP:-100000} \
	TORCH_REPS=${TORCH_REPS:-2} TORCH_STEPS=${TORCH_STEPS:-10} \
	part record-overhead 120 "$top_srcdir/bench/record-overhead.sh"
# Issue 9: NCCL in one process and under mpirun (multi-gpu/ holds the raw output)
want multi-gpu && part multi-gpu 240 "$top_srcdir/tests/gpu/multi-gpu.sh"
# Issue 10: call durations, pinned memory's NUMA nodes, --metrics and --live on real samples
want live-numa && part live-numa 180 "$top_srcdir/tests/gpu/live-numa.sh"

# Section 9: per sample, which calls gave MEMORY2 records and which only callbacks
{
	for k in "$OUTDIR"/record-samples/*.kinds; do
		[ -f "$k" ] || continue
		echo "=== $(basename "$k" .kinds)"
		cat "$k"
	done
	for a in "$OUTDIR"/record-samples/*.apis; do
		[ -f "$a" ] || continue
		echo "=== trace of $(basename "$a" .apis): events by op and api"
		sed '/^meta:/,$d' "$a"
	done
} >"$OUTDIR/section9.txt"
rm -f "$OUTDIR"/record-overhead/*-[2-9].db "$OUTDIR"/record-overhead/*-1[0-9].db
echo "== total $(($(date +%s) - start))s; raw output in $OUTDIR" | tee -a "$OUTDIR/summary.txt"
cat "$OUTDIR/summary.txt"
grep -E "^(ok|not ok)" "$OUTDIR"/record-samples.txt "$OUTDIR"/record-torch.txt \
	"$OUTDIR"/multi-gpu.txt "$OUTDIR"/live-numa.txt 2>/dev/null
tail -n 8 "$OUTDIR/record-overhead.txt" 2>/dev/null
