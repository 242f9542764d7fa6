#!/bin/sh
# bench/pool-bench.sh - run bench/pool-bench (see bench/README.md) over every
# reference pool built in plugins/.libs that can run on the host backend
# (direct, caching, planned; async needs a GPU), from the build directory.
# Extra arguments go to pool-bench (e.g. --allocs=200000 --repeat=7).  With
# POOL_BENCH_TRACE=EXPORT.csv it runs a second time over that trace's block
# events.  Output: bench-out/pool-bench.txt (and the terminal).
set -eu
BENCH_NAME=pool-bench
top_srcdir=${top_srcdir:-$(dirname "$0")/..}
. "$top_srcdir/bench/lib.sh"

[ -x bench/pool-bench ] || die "no bench/pool-bench here: run 'make bench-pool' in the build directory"
pools=""
for name in direct caching planned; do
	so=plugins/.libs/$name.so
	[ -f "$so" ] && pools="$pools $so"
done
[ -n "$pools" ] || die "no pool plugins in plugins/.libs: run 'make' first"

mkdir -p bench-out
out=bench-out/pool-bench.txt
{
	echo "== pool-bench $* $pools"
	# shellcheck disable=SC2086
	bench/pool-bench "$@" $pools
	if [ -n "${POOL_BENCH_TRACE:-}" ]; then
		echo
		echo "== pool-bench --trace=$POOL_BENCH_TRACE $* $pools"
		# shellcheck disable=SC2086
		bench/pool-bench --trace="$POOL_BENCH_TRACE" "$@" $pools
	fi
} | tee "$out"
echo "(written to $out)"
