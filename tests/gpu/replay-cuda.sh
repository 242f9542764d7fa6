#!/bin/sh
# tests/gpu/replay-cuda.sh - the cuda backend on a real GPU (tests/gpu/README.md).
# Skips (77) with the reason when no GPU is usable.  Runs tests/gpu/cuda_backend_run
# (every backend operation, read back from the device); then, when this memprof
# has the replay command, replays the demo trace on the GPU through each pool
# with --verify and keeps the raw output in gpu-runs/ of the build directory.
set -u
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
top_builddir=${top_builddir:-.}
MEMPROF=${MEMPROF:-$top_builddir/memprof}
run=$top_builddir/tests/gpu/cuda_backend_run

[ -x "$run" ] || { echo "replay-cuda: no $run: run 'make check' or 'make $run' first" >&2; exit 99; }
"$run"
rc=$?
[ "$rc" -eq 0 ] || exit "$rc" # 77: no GPU (the reason is printed above); 1: a check failed

if ! "$MEMPROF" replay --help >/dev/null 2>&1; then
	echo "# this memprof has no replay command yet: only the backend was tested"
	exit 0
fi
out=$top_builddir/gpu-runs
mkdir -p "$out"
db=$out/demo.db
rm -f "$db"
"$MEMPROF" import -q -f -o "$db" "$top_srcdir/samples/traces/demo.csv" || exit 1
fail=0
for pool in direct async caching planned; do
	log=$out/replay-cuda-$pool.txt
	if "$MEMPROF" replay --backend=cuda --verify --pool="$pool" "$db" >"$log" 2>&1; then
		echo "ok - replay --backend=cuda --verify --pool=$pool"
	elif grep -q "no pool\|not found" "$log"; then
		echo "ok - # SKIP pool $pool is not built here"
	else
		echo "not ok - replay --backend=cuda --verify --pool=$pool (see $log)"
		fail=1
	fi
done
nvidia-smi -L >"$out/device.txt" 2>&1 || true
echo "# raw output in $out/: commit it under docs/gpu-runs/ with the device line"
exit "$fail"
