#!/bin/bash
# bench/record-overhead.sh - the slowdown 'memprof record' causes, side by side in one run:
# each workload alone, under 'memprof record --stacks=off' and under '--stacks=all',
# REPS times each, interleaved (alone, off, all, alone, off, all, ...), medians and ratios
# to the workload alone.  Workloads: samples/cuda/alloc_runtime --loop=LOOP (cudaMalloc/
# cudaFree pairs of 1 MiB; its in-process loop time is reported too, which leaves out
# process start, cuInit and the spool import) and, when PyTorch with CUDA imports,
# samples/torch/train_gpt.py, which also runs under '--stacks=all --no-torch-history' (mode
# nohist): 'off' and 'all' include PyTorch's own allocator history, memprof's default, so
# all/nohist is that history's cost.  Skips (77) without a GPU or the record command.
# Environment: REPS (5), LOOP (100000), TORCH_REPS (3), TORCH_STEPS (20), OUT_DIR.
set -u -o pipefail
BENCH_NAME=record-overhead
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
top_builddir=${top_builddir:-.}
MEMPROF=${MEMPROF:-$top_builddir/memprof}
. "$top_srcdir/bench/lib.sh"
REPS=${REPS:-5}
LOOP=${LOOP:-100000}
TORCH_REPS=${TORCH_REPS:-3}
TORCH_STEPS=${TORCH_STEPS:-20}
out=${OUT_DIR:-$top_builddir/bench-out/record-overhead}
PY=${PYTHON:-python3}

reason=$("$PY" "$top_srcdir/tests/gpu/have_gpu.py") || { echo "$BENCH_NAME: SKIP: $reason"; exit 77; }
"$MEMPROF" record --help >/dev/null 2>&1 || { echo "$BENCH_NAME: SKIP: no record command"; exit 77; }
sample=$top_builddir/samples/cuda/alloc_runtime
[ -x "$sample" ] || make -C "$top_builddir" samples/cuda/alloc_runtime >&2 || die "no $sample"
mkdir -p "$out" || die "cannot make $out"
rm -f "$out"/*.times "$out"/*.loop

# one WORKLOAD MODE REP CMD...: run CMD alone or under memprof record; append the wall
# seconds to WORKLOAD-MODE.times and the sample's loop_ns (if it prints one) to .loop
one() {
	local w=$1 mode=$2 rep=$3 t0 t1 st
	shift 3
	local tag=$out/$w-$mode-$rep
	t0=$(date +%s%N)
	case $mode in
	alone) "$@" >"$tag.log" 2>"$tag.err" ;;
	nohist) "$MEMPROF" record --no-torch-history -o "$tag.db" -- "$@" >"$tag.log" 2>"$tag.err" ;;
	*) "$MEMPROF" record --stacks="$mode" -o "$tag.db" -- "$@" >"$tag.log" 2>"$tag.err" ;;
	esac
	st=$?
	t1=$(date +%s%N)
	[ "$st" -eq 0 ] || die "$w $mode run $rep failed with status $st: $(tail -n 3 "$tag.err")"
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f\n", (b - a) / 1e9 }' >>"$out/$w-$mode.times"
	sed -n 's/.* loop_ns=\([0-9]*\).*/\1/p' "$tag.log" >>"$out/$w-$mode.loop"
	[ "$rep" -eq 1 ] || rm -f "$tag.db"
}

# the modes measured for a workload: PyTorch's history only matters to PyTorch
modes_of() { [ "$1" = train_gpt ] && echo "alone nohist off all" || echo "alone off all"; }

# bench WORKLOAD N CMD...: N interleaved rounds of its modes
bench() {
	local w=$1 n=$2
	shift 2
	for rep in $(seq 1 "$n"); do
		for mode in $(modes_of "$w"); do
			one "$w" "$mode" "$rep" "$@"
		done
		echo "$BENCH_NAME: $w round $rep of $n done" >&2
	done
}

report() {
	local w=$1 base lbase
	base=$(median_of <"$out/$w-alone.times")
	lbase=$(median_of <"$out/$w-alone.loop" 2>/dev/null || true)
	for mode in $(modes_of "$w"); do
		local m l ratio lratio=""
		m=$(median_of <"$out/$w-$mode.times")
		ratio=$(awk -v a="$m" -v b="$base" 'BEGIN { printf "%.2f", a / b }')
		l=$(median_of <"$out/$w-$mode.loop" 2>/dev/null || true)
		[ -n "$l" ] && [ -n "$lbase" ] &&
			lratio=$(awk -v a="$l" -v b="$lbase" -v n="$LOOP" \
				'BEGIN { printf "%9.1f %8.2fx", a / n, a / b }')
		printf '%-14s %-10s %10s %8sx   %s\n' "$w" "$mode" "$m" "$ratio" "$lratio"
	done
}

{
	echo "# $BENCH_NAME: $reason; $(nvidia-smi -L 2>/dev/null | head -n 1)"
	echo "# medians of $REPS (torch: $TORCH_REPS) interleaved runs; wall = whole command,"
	echo "# memprof's spool import included; loop = the sample's own cudaMalloc/cudaFree loop"
	bench alloc_runtime "$REPS" "$sample" --loop="$LOOP"
	have_torch=0
	"$PY" -c 'import torch, sys; sys.exit(not torch.cuda.is_available())' 2>/dev/null && have_torch=1
	[ "$have_torch" -eq 1 ] && bench train_gpt "$TORCH_REPS" "$PY" \
		"$top_srcdir/samples/torch/train_gpt.py" --steps "$TORCH_STEPS"
	printf '%-14s %-10s %10s %9s   %9s %9s\n' workload mode wall_s ratio loop_ns/pair ratio
	report alloc_runtime
	[ "$have_torch" -eq 1 ] && report train_gpt
	[ "$have_torch" -eq 1 ] || echo "# train_gpt.py not measured: no PyTorch with CUDA"
} | tee "$out/results.txt"
