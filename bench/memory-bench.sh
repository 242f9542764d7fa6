#!/bin/sh
# bench/memory-bench.sh - peak memory of the commands that read a whole
# trace ('memprof analyze --json', 'memprof export' in each format, 'memprof
# report' as Markdown and HTML) at two trace lengths, and the ratio of the
# two: a command whose memory is bounded by the live set (issue 25, goal 6)
# keeps the ratio near 1 however much longer the trace.  Traces from
# bench/gen_csv_trace (a live set of at most about 5,000 blocks whatever the
# length), imported once (not measured); outputs go to /dev/null.  Run from
# the build directory ('make bench-memory'); writes only under bench-out/.
#
# usage: memory-bench.sh [SMALL BIG]   (default: 1000000 10000000)
# environment: MEMPROF (default ./memprof), KEEP=1 keeps the trace databases.
# Exits non-zero only when a command fails, never for a ratio over the goal.

set -u
BENCH_NAME=memory-bench
. "$(dirname "$0")/lib.sh"

MEMPROF=${MEMPROF:-./memprof}
GEN=./bench/gen_csv_trace
MEASURE=./bench/measure
OUT=bench-out
GOAL_RATIO=1.5

cleanup() {
	rm -f "$OUT"/memory-trace-*.csv
	if [ "${KEEP:-0}" != 1 ]; then
		rm -f "$OUT"/memory-trace-*.db
	fi
}

[ $# -eq 0 ] && set -- 1000000 10000000
[ $# -eq 2 ] || { echo "usage: memory-bench.sh [SMALL BIG]" >&2; exit 2; }
for n in "$@"; do
	case $n in
	'' | *[!0-9]*) echo "usage: memory-bench.sh [SMALL BIG]" >&2; exit 2 ;;
	esac
done
[ -x "$MEMPROF" ] || die "cannot run memprof '$MEMPROF' (build it, or set MEMPROF)"
{ [ -x "$GEN" ] && [ -x "$MEASURE" ]; } ||
	die "missing '$GEN' or '$MEASURE': run 'make bench-memory' from the build directory"
mkdir -p "$OUT" || die "cannot create '$OUT'"
trap cleanup EXIT
trap 'exit 1' INT TERM

# the commands measured: a name, then the arguments after memprof (TRACE last)
commands='analyze|analyze --json
export-csv|export --format=csv
export-perfetto|export --format=perfetto
export-minimalloc|export --format=minimalloc --device=0
report-md|report --format=md
report-html|report'

echo "memprof memory benchmark: $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores," \
	"load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "memprof: $("$MEMPROF" --version 2>/dev/null | head -n 1)"
echo

results=$OUT/memory-results.txt
: >"$results"
for n in "$@"; do
	csv=$OUT/memory-trace-$n.csv
	db=$OUT/memory-trace-$n.db
	if [ "${KEEP:-0}" != 1 ] || [ ! -f "$db" ]; then
		"$GEN" -n "$n" -o "$csv" || die "cannot generate '$csv'"
		"$MEMPROF" import -q -f "$csv" -o "$db" || die "cannot import '$csv'"
		rm -f "$csv"
	fi
	echo "$commands" | while IFS='|' read -r name args; do
		log=$OUT/memory-$name-$n.log
		: >"$log"
		# shellcheck disable=SC2086 # args is a word list
		if ! "$MEASURE" -o "$log" -- "$MEMPROF" $args "$db" >/dev/null; then
			die "command failed: memprof $args $db"
		fi
		echo "$name $n $(median "$log" maxrss_kib) $(cpu_median "$log")" >>"$results"
	done || exit 1
done

awk -v small="$1" -v big="$2" -v goal="$GOAL_RATIO" '
	{ rss[$1, $2] = $3 / 1024; cpu[$1, $2] = $4; if (!($1 in seen)) { seen[$1] = 1; order[++n] = $1 } }
	END {
		printf "%-18s %12s %12s %8s %10s %10s  %s\n", "command", "RSS MiB", "RSS MiB",
		       "ratio", "CPU s", "CPU s", "flat (ratio <= " goal ")"
		printf "%-18s %12s %12s %8s %10s %10s\n", "", "at " small, "at " big, "", "at " small,
		       "at " big
		for (i = 1; i <= n; i++) {
			c = order[i]; r = rss[c, small] > 0 ? rss[c, big] / rss[c, small] : 0
			printf "%-18s %12.1f %12.1f %8.2f %10.2f %10.2f  %s\n", c, rss[c, small],
			       rss[c, big], r, cpu[c, small], cpu[c, big], (r <= goal ? "yes" : "NO")
		}
	}' "$results" || die "cannot summarize '$results'"
