#!/bin/sh
# bench/rmm-bench.sh - 'memprof import' of a generated RAPIDS RMM log against
# floors run in the same run: 'wc -l' of the file (reading it and finding its
# lines), the sqlite3 shell's '.import' of the CSV into a plain table, and
# bench/sqlite_floor (SQLite alone storing as many rows in a trace's events
# table, as memprof's writer does, with no parsing).  Prints medians, ratios
# and whether the goals are met.
# Run from the build directory ('make bench-rmm'); writes only under bench-out/.
#
# usage: rmm-bench.sh [EVENTS...]   (default: 100000 1000000 10000000)
# environment: MEMPROF (default ./memprof), SQLITE3 (default sqlite3 from
# PATH), KEEP=1 keeps the logs and databases in bench-out/.
# Exits non-zero only when a command fails, never for a missed goal.

set -u
BENCH_NAME=rmm-bench
. "$(dirname "$0")/lib.sh"

MEMPROF=${MEMPROF:-./memprof}
SQLITE3=${SQLITE3:-sqlite3}
GEN=./bench/gen_rmm_log
FLOOR=./bench/sqlite_floor
MEASURE=./bench/measure
OUT=bench-out
REPEAT=3

GOAL_EVENTS_PER_S=1000000
GOAL_RSS_GROWTH=1.5

cleanup() {
	if [ "${KEEP:-0}" != 1 ]; then
		rm -f "$OUT"/rmm-*.csv "$OUT"/rmm-memprof.db "$OUT"/rmm-memprof.db.tmp-* \
			"$OUT"/rmm-floor.db "$OUT"/rmm-floor.db-journal "$OUT"/rmm-insert.db
	fi
}

# run LOG CMD...: measure CMD, appending its line to LOG (its output and
# messages to rmm-output.txt); die when it fails
run() {
	run_log=$1
	shift
	if ! "$MEASURE" -o "$run_log" -- "$@" >>"$OUT/rmm-output.txt" 2>&1; then
		die "command failed (status $(tail -n 1 "$run_log" | sed -n 's/.*status=//p')): $*"
	fi
}

[ $# -gt 0 ] || set -- 100000 1000000 10000000
for n in "$@"; do
	case $n in
	'' | *[!0-9]*) echo "usage: rmm-bench.sh [EVENTS...]" >&2; exit 2 ;;
	esac
done
[ -x "$MEMPROF" ] || die "cannot run memprof '$MEMPROF': not an executable file (build it, or set MEMPROF)"
{ [ -x "$GEN" ] && [ -x "$MEASURE" ] && [ -x "$FLOOR" ]; } ||
	die "missing '$GEN', '$MEASURE' or '$FLOOR': run 'make bench-rmm' from the build directory"
command -v "$SQLITE3" >/dev/null 2>&1 || die "cannot find '$SQLITE3' in PATH: the floor needs the sqlite3 shell"

mkdir -p "$OUT" || die "cannot create '$OUT'"
trap cleanup EXIT
trap 'exit 1' INT TERM
results=$OUT/rmm-results.txt
: >"$results"
: >"$OUT/rmm-output.txt"

echo "memprof import of RMM logs: $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores," \
	"$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)," \
	"load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "memprof: $("$MEMPROF" --version 2>/dev/null | head -n 1)   sqlite3: $("$SQLITE3" --version | cut -d' ' -f1)"
echo "each figure is the median of $REPEAT runs; memprof and the floors alternate"
echo

for n in "$@"; do
	csv=$OUT/rmm-$n.csv
	mlog=$OUT/rmm-memprof-$n.log
	wlog=$OUT/rmm-wc-$n.log
	slog=$OUT/rmm-sqlite3-$n.log
	ilog=$OUT/rmm-insert-$n.log
	: >"$mlog"
	: >"$wlog"
	: >"$slog"
	: >"$ilog"
	"$GEN" -n "$n" -o "$csv" || die "cannot generate '$csv'"
	i=0
	while [ $i -lt $REPEAT ]; do
		rm -f "$OUT/rmm-memprof.db"
		run "$mlog" "$MEMPROF" import -q -f "$csv" -o "$OUT/rmm-memprof.db"
		run "$wlog" wc -l "$csv"
		rm -f "$OUT/rmm-floor.db" "$OUT/rmm-floor.db-journal"
		run "$slog" "$SQLITE3" "$OUT/rmm-floor.db" -cmd '.mode csv' ".import $csv events"
		rm -f "$OUT/rmm-insert.db"
		run "$ilog" "$FLOOR" -n "$n" -o "$OUT/rmm-insert.db"
		i=$((i + 1))
	done
	# Both must have stored every event, or the comparison means nothing.
	got_m=$("$SQLITE3" "$OUT/rmm-memprof.db" 'SELECT count(*) FROM events;') ||
		die "cannot count the events in '$OUT/rmm-memprof.db'"
	got_s=$("$SQLITE3" "$OUT/rmm-floor.db" 'SELECT count(*) FROM events;') ||
		die "cannot count the rows in '$OUT/rmm-floor.db'"
	# memprof adds an implied free per allocation at a live address: none here
	[ "$got_m" = "$n" ] || die "memprof stored $got_m events of $n from '$csv'"
	[ "$got_s" = "$n" ] || die "sqlite3 stored $got_s rows of $n from '$csv'"
	echo "$n $(wc -c <"$csv") $(median "$mlog" wall_s) $(cpu_median "$mlog")" \
		"$(median "$mlog" maxrss_kib) $(median "$wlog" wall_s) $(median "$slog" wall_s)" \
		"$(median "$slog" maxrss_kib) $(median "$ilog" wall_s)" >>"$results"
done

awk -v goal_eps="$GOAL_EVENTS_PER_S" -v goal_rss="$GOAL_RSS_GROWTH" '
	{
		n[NR] = $1; mib[NR] = $2 / 1048576; mt[NR] = $3; mcpu[NR] = $4; mrss[NR] = $5 / 1024
		wt[NR] = $6; st[NR] = $7; srss[NR] = $8 / 1024; it[NR] = $9
		eps[NR] = mt[NR] > 0 ? $1 / mt[NR] : 0
		ceps[NR] = mcpu[NR] > 0 ? $1 / mcpu[NR] : 0
	}
	END {
		printf "%10s %6s %8s %9s %8s %9s %7s %7s %8s %8s %6s %6s %6s\n", "events", "file",
		       "memprof", "memprof", "memprof", "memprof", "memprof", "wc -l", "sqlite3",
		       "SQLite", "ratio", "ratio", "ratio"
		printf "%10s %6s %8s %9s %8s %9s %7s %7s %8s %8s %6s %6s %6s\n", "", "MiB", "s", "ev/s",
		       "CPU s", "ev/CPU s", "RSS MiB", "s", ".import s", "insert s", "mp/wc", "mp/sq3",
		       "mp/ins"
		for (i = 1; i <= NR; i++)
			printf "%10d %6.1f %8.3f %9.0f %8.3f %9.0f %7.1f %7.3f %8.3f %8.3f %6.1f %6.2f %6.2f\n",
			       n[i], mib[i], mt[i], eps[i], mcpu[i], ceps[i], mrss[i], wt[i], st[i], it[i],
			       (wt[i] > 0 ? mt[i] / wt[i] : 0), (st[i] > 0 ? mt[i] / st[i] : 0),
			       (it[i] > 0 ? mt[i] / it[i] : 0)
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
		printf "  throughput >= %d events/s (wall): %s (%.0f events/s; %.0f per CPU second)\n",
		       goal_eps, (eps[big] >= goal_eps ? "met" : "NOT met"), eps[big], ceps[big]
		if (ref)
			printf "  peak RSS flat in trace length (<= %.1fx the RSS at %d events): %s (%.1f MiB vs %.1f MiB, %.2fx)\n",
			       goal_rss, n[ref], (mrss[big] <= goal_rss * mrss[ref] ? "met" : "NOT met"),
			       mrss[big], mrss[ref], mrss[big] / mrss[ref]
		else
			printf "  peak RSS flat in trace length: not judged (needs two sizes)\n"
	}' "$results" || die "cannot summarize '$results'"
