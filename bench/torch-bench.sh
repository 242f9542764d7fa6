#!/bin/sh
# bench/torch-bench.sh - 'memprof import' of each PyTorch snapshot in
# ../shared/datasets/torch-snapshots against the floor for any Python tool,
# loading the same file with pickle.load, side by side in one run; then the
# same on a snapshot of about BIG_MIB MiB that bench/make_big_snapshot.py
# builds by repeating the largest real one, shifted in time and address,
# read from the file and then from a pipe (cat FILE |, on both sides).
# Prints medians of REPEAT alternating runs: CPU time (user + system, the
# figure that holds on a shared machine), wall time, their ratios
# (memprof / pickle.load) and peak RSS.  Run from the build directory
# ('make bench-torch'); writes only under bench-out/.  Exits non-zero only
# when a command fails.
#
# environment: MEMPROF (default ./memprof), PYTHON (default /usr/bin/python3:
# the interpreter itself, not a shim that starts another), DATASETS (default
# $top_srcdir/../shared/datasets), REPEAT (default 5), BIG_MIB (default 100;
# 1024 for the 1 GB snapshot of issue 25; 0 skips it), BIG_REPEAT (default 3).

set -u
BENCH_NAME=torch-bench
. "$(dirname "$0")/lib.sh"

MEMPROF=${MEMPROF:-./memprof}
PYTHON=${PYTHON:-/usr/bin/python3}
BIG_MIB=${BIG_MIB:-100}
BIG_REPEAT=${BIG_REPEAT:-3}
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

# one FILE REPEAT [pipe]: alternate memprof import and pickle.load REPEAT
# times, from the file or, with 'pipe', from cat FILE | on both sides; one line
one() {
	f=$1
	name=$(basename "$f" .pickle)${3:+-$3}
	mlog=$OUT/torch-$name.memprof.log
	plog=$OUT/torch-$name.pickle.log
	rm -f "$mlog" "$plog"
	i=0
	while [ "$i" -lt "$2" ]; do # alternate, so drift hits both alike
		if [ "${3:-}" = pipe ]; then
			run "$mlog" sh -c 'cat "$1" | "$2" import -q -f -o "$3" -' sh "$f" "$MEMPROF" \
				"$OUT/torch.db" 2>>"$OUT/torch-warnings.txt"
			run "$plog" sh -c 'cat "$1" | "$2" -c "import pickle, sys; pickle.load(sys.stdin.buffer)"' \
				sh "$f" "$PYTHON"
		else
			run "$mlog" "$MEMPROF" import -q -f -o "$OUT/torch.db" "$f" 2>>"$OUT/torch-warnings.txt"
			run "$plog" "$PYTHON" -c "import pickle, sys; pickle.load(open(sys.argv[1], 'rb'))" "$f"
		fi
		i=$((i + 1))
	done
	events=$("$MEMPROF" info --json "$OUT/torch.db" |
		sed -n 's/^.*"events":[^0-9]*\([0-9]*\).*/\1/p' | head -n 1)
	mc=$(cpu_median "$mlog")
	pc=$(cpu_median "$plog")
	m=$(median "$mlog" wall_s)
	p=$(median "$plog" wall_s)
	mr=$(median "$mlog" maxrss_kib)
	pr=$(median "$plog" maxrss_kib)
	bytes=$(wc -c <"$f")
	printf '%-30s %6.1f %8s %7.3f %7.3f %6.2f %7.3f %7.3f %6.2f %7.1f %7.1f %5.2f %6.2f\n' "$name" \
		"$(awk -v b="$bytes" 'BEGIN { print b / 1048576 }')" "$events" \
		"$mc" "$pc" "$(awk -v a="$mc" -v b="$pc" 'BEGIN { print a / b }')" \
		"$m" "$p" "$(awk -v a="$m" -v b="$p" 'BEGIN { print a / b }')" \
		"$(awk -v k="$mr" 'BEGIN { print k / 1024 }')" "$(awk -v k="$pr" 'BEGIN { print k / 1024 }')" \
		"$(awk -v a="$mr" -v b="$pr" 'BEGIN { print a / b }')" \
		"$(awk -v k="$mr" -v b="$bytes" 'BEGIN { print k * 1024 / b }')"
}

"$PYTHON" -c 'import pickle' 2>/dev/null || die "cannot run '$PYTHON' (set PYTHON)"
echo "memprof import vs pickle.load in $PYTHON ($("$PYTHON" --version 2>&1)), medians of alternating runs"
printf '%-30s %6s %8s %7s %7s %6s %7s %7s %6s %7s %7s %5s %6s\n' snapshot MiB events \
	"mp_cpu" "py_cpu" "x_cpu" "mp_s" "py_s" "x_wall" "mp_MiB" "py_MiB" "x_rss" "x_file"
for f in "$DATASETS"/torch-snapshots/*.pickle; do
	one "$f" "$REPEAT"
done
if [ "$BIG_MIB" != 0 ]; then
	src=$(ls -S "$DATASETS"/torch-snapshots/*.pickle | head -n 1)
	big=$OUT/big-${BIG_MIB}MiB.pickle
	[ -s "$big" ] || "$PYTHON" "$top_srcdir/bench/make_big_snapshot.py" "$src" "$big" "$BIG_MIB" \
		>/dev/null || die "cannot build '$big'"
	one "$big" "$BIG_REPEAT"
	one "$big" "$BIG_REPEAT" pipe
	[ -n "${KEEP:-}" ] || rm -f "$big"
fi
rm -f "$OUT/torch.db"
echo "x_cpu, x_wall, x_rss = memprof import (parse, rebuild the window, write SQLite) / pickle.load alone"
echo "-pipe: read from 'cat FILE |' (memprof counts the memo through a copy in \$TMPDIR; cat's time counted on both sides)"
echo "x_file = memprof's peak RSS / the file's size (on a large file: the blocks live at each moment, the final state and the stacks)"
echo "(below 1: memprof is faster or smaller); $(date -u '+%Y-%m-%d %H:%M UTC'), load average $(cut -d' ' -f1 /proc/loadavg)."
