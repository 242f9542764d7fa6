#!/bin/sh
# bench/spool-bench.sh - run bench/spool-bench (see bench/README.md) from the
# build directory: the cost of appending an event to a spool inside the
# workload (mp_spool_event, and with an interned stack lookup) beside a floor
# (mutex + memcpy of the same 96 bytes).  Extra arguments go to spool-bench
# (e.g. --events=500000 --reps=5 --threads=1,2,4).  The spools go to $TMPDIR
# (or /tmp).  Output: bench-out/spool-bench.txt (and the terminal).
set -eu
BENCH_NAME=spool-bench
top_srcdir=${top_srcdir:-$(dirname "$0")/..}
. "$top_srcdir/bench/lib.sh"

[ -x bench/spool-bench ] || die "no bench/spool-bench here: run 'make bench-spool' in the build directory"

mkdir -p bench-out
out=bench-out/spool-bench.txt
{
	echo "== spool-bench $*"
	echo "machine: nproc $(nproc), $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)"
	echo "load average at the start: $(cut -d' ' -f1-3 /proc/loadavg)"
	bench/spool-bench "$@"
	echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
} | tee "$out"
echo "(written to $out)"
