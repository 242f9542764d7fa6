#!/bin/sh
# bench/torch-bench.sh - 'memprof import' of each PyTorch snapshot in
# ../shared/datasets/torch-snapshots against the floor for any Python tool,
# loading the same file with pickle.load, side by side in one run; prints
# medians of REPEAT runs, the ratio (memprof / pickle.load) and peak RSS.
# Run from the build directory ('make bench-torch'); writes only under
# bench-out/.  Exits non-zero only when a command fails.
#
# environment: MEMPROF (default ./memprof), PYTHON (default python3),
# DATASETS (default $top_srcdir/../shared/datasets), REPEAT (default 5).

set -u
BENCH_NAME=torch-bench
. "$(dirname "$0")/lib.sh"

MEMPROF=${MEMPROF:-./memprof}
PYTHON=${PYTHON:-python3}
MEASURE=./bench/measure
OUT=bench-out
REPEAT=${REPEAT:-5}
top_srcdir=${top_srcdir:-$(dirname "$0")/..}
DATASETS=${DATASETS:-$top_srcdir/../shared/datasets}

run() {
	log=$1
	shift
	"$MEASURE" -o "$log" -- "$@" || die "command failed: $*"
}

[ -x "$MEMPROF" ] || die "cannot run memprof '$MEMPROF' (build it, or set MEMPROF)"
[ -x "$MEASURE" ] || die "missing '$MEASURE': run 'make bench-torch' from the build directory"
[ -d "$DATASETS/torch-snapshots" ] || die "no snapshots in '$DATASETS/torch-snapshots'"
mkdir -p "$OUT" || die "cannot create $OUT"

printf '%-36s %9s %8s %11s %11s %8s %12s %12s\n' snapshot bytes events \
	"memprof_s" "pickle_s" ratio "memprof_rss" "pickle_rss"
for f in "$DATASETS"/torch-snapshots/*.pickle; do
	name=$(basename "$f" .pickle)
	mlog=$OUT/torch-$name.memprof.log
	plog=$OUT/torch-$name.pickle.log
	rm -f "$mlog" "$plog"
	i=0
	while [ "$i" -lt "$REPEAT" ]; do # alternate, so drift hits both alike
		run "$mlog" "$MEMPROF" import -q -f -o "$OUT/torch.db" "$f"
		run "$plog" "$PYTHON" -c "import pickle, sys; pickle.load(open(sys.argv[1], 'rb'))" "$f"
		i=$((i + 1))
	done
	events=$("$MEMPROF" info --json "$OUT/torch.db" |
		sed -n 's/^.*"events":[^0-9]*\([0-9]*\).*/\1/p' | head -n 1)
	m=$(median "$mlog" wall_s)
	p=$(median "$plog" wall_s)
	mr=$(median "$mlog" maxrss_kib)
	pr=$(median "$plog" maxrss_kib)
	printf '%-36s %9s %8s %11s %11s %8s %9s KiB %9s KiB\n' "$name" "$(wc -c <"$f")" \
		"$events" "$m" "$p" "$(awk -v a="$m" -v b="$p" 'BEGIN { printf "%.2f", a / b }')" \
		"$mr" "$pr"
done
rm -f "$OUT/torch.db"
echo "ratio = memprof import (parse, rebuild the window, write SQLite) / pickle.load alone;"
echo "medians of $REPEAT alternating runs on this machine, $(date -u +%Y-%m-%d)."
