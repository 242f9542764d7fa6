#!/bin/sh
# tests/gpu/replay-cuda.sh - the cuda backend on a real GPU (tests/gpu/README.md).
# Skips (77) with the reason when no GPU is usable.  Runs tests/gpu/cuda_backend_run
# (every backend operation, read back from the device); then replays the demo trace on
# the GPU through every pool with --verify (async, and compacting --mode=vmm, included)
# and keeps the raw output in $GPU_OUT/replay-cuda (default gpu-runs/ of the build
# directory).  Prints TAP.
set -u
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
top_builddir=${top_builddir:-.}
MEMPROF=${MEMPROF:-$top_builddir/memprof}
run=$top_builddir/tests/gpu/cuda_backend_run
out=${GPU_OUT:-$top_builddir/gpu-runs}/replay-cuda

[ -x "$run" ] || { echo "replay-cuda: no $run: run 'make check' or 'make $run' first" >&2; exit 99; }
"$run"
rc=$?
[ "$rc" -eq 0 ] || exit "$rc" # 77: no GPU (the reason is printed above); 1: a check failed

mkdir -p "$out" || exit 99
db=$out/demo.db
rm -f "$db"
"$MEMPROF" import -q -f -o "$db" "$top_srcdir/samples/traces/demo.csv" || exit 1
fail=0
# every pool this memprof has ('memprof replay --list-pools'), then compacting on VMM
pools=$("$MEMPROF" replay --list-pools 2>/dev/null | awk '/^[a-z0-9_]+ / { print $1 }')
[ -n "$pools" ] || pools="direct async caching planned"
for pool in $pools compacting-vmm; do
	log=$out/$pool.txt
	case $pool in
	compacting-vmm) set -- --pool=compacting --pool-opt=mode=vmm ;;
	*) set -- --pool="$pool" ;;
	esac
	if "$MEMPROF" replay --backend=cuda --verify --json --no-save "$@" "$db" >"$log.json" 2>"$log"; then
		echo "ok - replay --backend=cuda --verify $*"
	else
		echo "not ok - replay --backend=cuda --verify $*: $(tail -n 1 "$log")"
		fail=1
	fi
done
nvidia-smi -L >"$out/device.txt" 2>&1 || true
echo "# raw output in $out/"
exit "$fail"
