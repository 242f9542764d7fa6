#!/bin/sh
# bench/import-bench.sh - 'memprof import' of a CSV trace against its floor,
# the sqlite3 shell's '.import' of the same file into a plain table, side by
# side in one run; prints medians, the ratio and whether the goals are met.
# Run from the build directory ('make bench'); writes only under bench-out/.
#
# usage: import-bench.sh [EVENTS...]   (default: 100000 1000000 10000000)
# environment: MEMPROF (default ./memprof), SQLITE3 (default sqlite3 from
# PATH), KEEP=1 keeps the CSV files and databases in bench-out/.
# Exits non-zero only when a command fails, never for a missed goal.

set -u
BENCH_NAME=import-bench
. "$(dirname "$0")/lib.sh"

MEMPROF=${MEMPROF:-./memprof}
SQLITE3=${SQLITE3:-sqlite3}
GEN=./bench/gen_csv_trace
MEASURE=./bench/measure
OUT=bench-out
REPEAT=3

GOAL_EVENTS_PER_S=1000000
GOAL_RATIO=1.5
GOAL_RSS_GROWTH=1.5

cleanup() {
	if [ "${KEEP:-0}" != 1 ]; then
		rm -f "$OUT"/trace-*.csv "$OUT"/memprof.db "$OUT"/memprof.db.tmp-* "$OUT"/floor.db \
			"$OUT"/floor.db-journal
	fi
}

# run LOG CMD...: measure CMD, appending its line to LOG; die when it fails
run() {
	log=$1
	shift
	if ! "$MEASURE" -o "$log" -- "$@"; then
		die "command failed (status $(tail -n 1 "$log" | sed -n 's/.*status=//p')): $*"
	fi
}

[ $# -gt 0 ] || set -- 100000 1000000 10000000
for n in "$@"; do
	case $n in
	'' | *[!0-9]*) echo "usage: import-bench.sh [EVENTS...]" >&2; exit 2 ;;
	esac
done
[ -x "$MEMPROF" ] || die "cannot run memprof '$MEMPROF': not an executable file (build it, or set MEMPROF)"
{ [ -x "$GEN" ] && [ -x "$MEASURE" ]; } || die "missing '$GEN' or '$MEASURE': run 'make bench' from the build directory"
command -v "$SQLITE3" >/dev/null 2>&1 || die "cannot find '$SQLITE3' in PATH: the floor needs the sqlite3 shell"

mkdir -p "$OUT" || die "cannot create '$OUT'"
trap cleanup EXIT
trap 'exit 1' INT TERM
results=$OUT/results.txt
: >"$results"

echo "memprof import benchmark: $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores," \
	"$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)"
echo "memprof: $("$MEMPROF" --version 2>/dev/null | head -n 1)   sqlite3: $("$SQLITE3" --version | cut -d' ' -f1)"
echo "each figure is the median of $REPEAT runs, memprof and sqlite3 alternating"
echo

for n in "$@"; do
	csv=$OUT/trace-$n.csv
	mlog=$OUT/memprof-$n.log
	slog=$OUT/sqlite3-$n.log
	: >"$mlog"
	: >"$slog"
	"$GEN" -n "$n" -o "$csv" || die "cannot generate '$csv'"
	i=0
	while [ $i -lt $REPEAT ]; do
		rm -f "$OUT/memprof.db"
		run "$mlog" "$MEMPROF" import -q -f "$csv" -o "$OUT/memprof.db"
		rm -f "$OUT/floor.db" "$OUT/floor.db-journal"
		run "$slog" "$SQLITE3" "$OUT/floor.db" -cmd '.mode csv' ".import $csv events"
		i=$((i + 1))
	done
	# Both must have stored every event, or the comparison means nothing.
	got_m=$("$SQLITE3" "$OUT/memprof.db" 'SELECT count(*) FROM events;') ||
		die "cannot count the events in '$OUT/memprof.db'"
	got_s=$("$SQLITE3" "$OUT/floor.db" 'SELECT count(*) FROM events;') ||
		die "cannot count the events in '$OUT/floor.db'"
	[ "$got_m" = "$n" ] || die "memprof stored $got_m events of $n from '$csv'"
	[ "$got_s" = "$n" ] || die "sqlite3 stored $got_s rows of $n from '$csv'"
	echo "$n $(wc -c <"$csv") $(median "$mlog" wall_s) $(median "$mlog" maxrss_kib)" \
		"$(median "$slog" wall_s) $(median "$slog" maxrss_kib)" >>"$results"
done

awk -v goal_eps="$GOAL_EVENTS_PER_S" -v goal_ratio="$GOAL_RATIO" \
	-v goal_rss="$GOAL_RSS_GROWTH" '
	{
		n[NR] = $1; mib[NR] = $2 / 1048576; mt[NR] = $3; mrss[NR] = $4 / 1024
		st[NR] = $5; srss[NR] = $6 / 1024
		eps[NR] = mt[NR] > 0 ? $1 / mt[NR] : 0
		ratio[NR] = st[NR] > 0 ? mt[NR] / st[NR] : 0
	}
	END {
		printf "%10s %9s %10s %13s %10s %8s %10s %10s\n", "events", "file MiB",
		       "memprof s", "memprof ev/s", "sqlite3 s", "ratio", "memprof", "sqlite3"
		printf "%10s %9s %10s %13s %10s %8s %10s %10s\n", "", "", "", "", "",
		       "mp/sq3", "RSS MiB", "RSS MiB"
		for (i = 1; i <= NR; i++)
			printf "%10d %9.1f %10.3f %13.0f %10.3f %8.2f %10.1f %10.1f\n", n[i], mib[i],
			       mt[i], eps[i], st[i], ratio[i], mrss[i], srss[i]
		# Goals are judged at the largest size, where start-up costs matter least.
		big = 1
		for (i = 1; i <= NR; i++)
			if (n[i] > n[big])
				big = i
		ref = 0
		for (i = 1; i <= NR; i++)
			if (n[i] == 1000000 && i != big)
				ref = i
		if (!ref)
			for (i = 1; i <= NR; i++)
				if (n[i] < n[big] && (!ref || n[i] < n[ref]))
					ref = i
		printf "\ngoals, at %d events:\n", n[big]
		printf "  throughput >= %d events/s: %s (%.0f events/s)\n", goal_eps,
		       (eps[big] >= goal_eps ? "met" : "NOT met"), eps[big]
		printf "  ratio memprof/sqlite3 <= %.1f: %s (%.2f)\n", goal_ratio,
		       (ratio[big] <= goal_ratio ? "met" : "NOT met"), ratio[big]
		if (ref)
			printf "  peak RSS flat in trace length (<= %.1fx the RSS at %d events): %s (%.1f MiB vs %.1f MiB, %.2fx)\n",
			       goal_rss, n[ref], (mrss[big] <= goal_rss * mrss[ref] ? "met" : "NOT met"),
			       mrss[big], mrss[ref], mrss[big] / mrss[ref]
		else
			printf "  peak RSS flat in trace length: not judged (needs two sizes)\n"
	}' "$results" || die "cannot summarize '$results'"
