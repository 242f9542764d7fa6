#!/bin/sh
# bench/analyze-bench.sh - 'memprof analyze --json' against its floors,
# bench/read_floor (SQLite handing over every events row the two ways the
# reader reads them, every value read, no analysis), side by side in one run
# on generated traces; then, on
# each PyTorch snapshot of ../shared/datasets/torch-snapshots, 'memprof import'
# + 'memprof analyze --json' against tests/torch/analyze_figures.py (the
# independent Python computation of the same figures).  Prints medians, the
# ratios and whether the goals are met.  Run from the build directory
# ('make bench-analyze'); writes only under bench-out/.
#
# usage: analyze-bench.sh [EVENTS...]   (default: 1000000 10000000)
# environment: MEMPROF (default ./memprof), PYTHON (default python3),
# DATASETS (default $top_srcdir/../shared/datasets), REPEAT (default 3),
# KEEP=1 keeps the trace databases in bench-out/; MEMPROF_BEFORE=PATH also runs
# that build's analyze in the same loop, alternating (a change's before and
# after, side by side in one run: its CPU time and ratio printed below the table).
# Exits non-zero only when a command fails, never for a missed goal.

set -u
BENCH_NAME=analyze-bench
. "$(dirname "$0")/lib.sh"

MEMPROF=${MEMPROF:-./memprof}
PYTHON=${PYTHON:-python3}
GEN=./bench/gen_csv_trace
FLOOR=./bench/read_floor
MEASURE=./bench/measure
OUT=bench-out
REPEAT=${REPEAT:-3}
top_srcdir=${top_srcdir:-$(dirname "$0")/..}
DATASETS=${DATASETS:-$top_srcdir/../shared/datasets}
REFERENCE=$top_srcdir/tests/torch/analyze_figures.py

GOAL_EVENTS_PER_S=5000000 # on one core: events per CPU second
GOAL_RSS_GROWTH=1.5

cleanup() {
	rm -f "$OUT"/analyze-trace-*.csv "$OUT"/analyze-snapshot.db "$OUT"/analyze-check.json
	if [ "${KEEP:-0}" != 1 ]; then
		rm -f "$OUT"/analyze-trace-*.db
	fi
}

# run LOG CMD...: measure CMD (its stdout thrown away), appending its line to
# LOG; die when it fails
run() {
	log=$1
	shift
	if ! "$MEASURE" -o "$log" -- "$@" >/dev/null; then
		die "command failed (status $(tail -n 1 "$log" | sed -n 's/.*status=//p')): $*"
	fi
}

ratio() {
	awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else printf "-" }'
}

[ $# -gt 0 ] || set -- 1000000 10000000
for n in "$@"; do
	case $n in
	'' | *[!0-9]*) echo "usage: analyze-bench.sh [EVENTS...]" >&2; exit 2 ;;
	esac
done
[ -x "$MEMPROF" ] || die "cannot run memprof '$MEMPROF' (build it, or set MEMPROF)"
{ [ -x "$GEN" ] && [ -x "$FLOOR" ] && [ -x "$MEASURE" ]; } ||
	die "missing '$GEN', '$FLOOR' or '$MEASURE': run 'make bench-analyze' from the build directory"

mkdir -p "$OUT" || die "cannot create '$OUT'"
trap cleanup EXIT
trap 'exit 1' INT TERM
results=$OUT/analyze-results.txt
: >"$results"

echo "memprof analyze benchmark: $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores," \
	"$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)," \
	"load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "memprof: $("$MEMPROF" --version 2>/dev/null | head -n 1)"
echo "each figure is the median of $REPEAT runs, alternating"
echo

# --- 1. generated traces: analyze against the floors ------------------------------------
for n in "$@"; do
	csv=$OUT/analyze-trace-$n.csv
	db=$OUT/analyze-trace-$n.db
	alog=$OUT/analyze-$n.log
	plog=$OUT/analyze-floor-push-$n.log
	slog=$OUT/analyze-floor-step-$n.log
	qlog=$OUT/analyze-sql-$n.log
	blog=$OUT/analyze-before-$n.log
	: >"$blog"
	: >"$alog"
	: >"$plog"
	: >"$slog"
	: >"$qlog"
	if [ "${KEEP:-0}" != 1 ] || [ ! -f "$db" ]; then
		"$GEN" -n "$n" -o "$csv" || die "cannot generate '$csv'"
		"$MEMPROF" import -q -f "$csv" -o "$db" || die "cannot import '$csv'"
		rm -f "$csv"
	fi
	# All must see every event, or the comparison means nothing.
	"$MEMPROF" analyze --json "$db" >"$OUT/analyze-check.json" || die "memprof analyze failed on '$db'"
	got=$(sed -n 's/^[[:space:]]*"events":[[:space:]]*\([0-9]*\).*/\1/p' "$OUT/analyze-check.json" |
		head -n 1)
	[ "$got" = "$n" ] || die "memprof analyze saw '$got' events of $n in '$db'"
	for m in push step; do
		got=$("$FLOOR" -m $m "$db" | sed -n 's/^rows=\([0-9]*\).*/\1/p')
		[ "$got" = "$n" ] || die "read_floor -m $m read '$got' rows of $n in '$db'"
	done
	i=0
	while [ $i -lt "$REPEAT" ]; do
		run "$alog" "$MEMPROF" analyze --json "$db"
		run "$plog" "$FLOOR" -m push "$db"
		run "$slog" "$FLOOR" -m step "$db"
		run "$qlog" env MEMPROF_READ_PAGES=0 "$MEMPROF" analyze --json "$db"
		if [ -n "${MEMPROF_BEFORE:-}" ]; then
			run "$blog" "$MEMPROF_BEFORE" analyze --json "$db"
		fi
		i=$((i + 1))
	done
	echo "$n $(wc -c <"$db") $(median "$alog" wall_s) $(cpu_median "$alog")" \
		"$(median "$alog" maxrss_kib) $(median "$plog" wall_s) $(cpu_median "$plog")" \
		"$(median "$slog" wall_s) $(cpu_median "$slog") $(cpu_median "$qlog")" \
		"$([ -s "$blog" ] && cpu_median "$blog" || echo -)" >>"$results"
done

awk -v goal_eps="$GOAL_EVENTS_PER_S" -v goal_rss="$GOAL_RSS_GROWTH" -v goal_floor=1.5 '
	{
		n[NR] = $1; mib[NR] = $2 / 1048576; aw[NR] = $3; ac[NR] = $4; ar[NR] = $5 / 1024
		pw[NR] = $6; pc[NR] = $7; sw[NR] = $8; sc[NR] = $9; qc[NR] = $10; bc[NR] = $11
		eps[NR] = aw[NR] > 0 ? n[NR] / aw[NR] : 0
		epc[NR] = ac[NR] > 0 ? n[NR] / ac[NR] : 0
	}
	END {
		printf "%10s %6s %8s %8s %9s %9s %7s %8s %8s %8s %6s %6s %6s %8s %6s\n", "events",
		       "db", "analyze", "analyze", "analyze", "analyze", "analyze", "push", "push",
		       "step", "ratio", "ratio", "ratio", "sql", "ratio"
		printf "%10s %6s %8s %8s %9s %9s %7s %8s %8s %8s %6s %6s %6s %8s %6s\n", "", "MiB",
		       "s", "CPU s", "ev/s", "ev/CPU s", "RSS MiB", "floor s", "CPU s", "CPU s",
		       "an/psh", "an/psh", "an/stp", "CPU s", "sq/psh"
		printf "%10s %6s %8s %8s %9s %9s %7s %8s %8s %8s %6s %6s %6s %8s %6s\n", "", "", "",
		       "", "", "", "", "", "", "", "wall", "CPU", "CPU", "", "CPU"
		for (i = 1; i <= NR; i++)
			printf "%10d %6.1f %8.3f %8.3f %9.0f %9.0f %7.1f %8.3f %8.3f %8.3f %6.2f %6.2f %6.2f %8.3f %6.2f\n",
			       n[i], mib[i], aw[i], ac[i], eps[i], epc[i], ar[i], pw[i], pc[i], sc[i],
			       (pw[i] > 0 ? aw[i] / pw[i] : 0), (pc[i] > 0 ? ac[i] / pc[i] : 0),
			       (sc[i] > 0 ? ac[i] / sc[i] : 0), qc[i], (pc[i] > 0 ? qc[i] / pc[i] : 0)
		for (i = 1; i <= NR; i++)
			if (bc[i] != "-")
				printf "%10d MEMPROF_BEFORE analyze: %.3f CPU s, %.2f of the push floor (this build %.2f)\n",
				       n[i], bc[i], (pc[i] > 0 ? bc[i] / pc[i] : 0), (pc[i] > 0 ? ac[i] / pc[i] : 0)
		big = 1
		for (i = 1; i <= NR; i++)
			if (n[i] > n[big])
				big = i
		ref = 0
		for (i = 1; i <= NR; i++)
			if (n[i] < n[big] && (!ref || n[i] > n[ref]))
				ref = i
		printf "\nfloors (bench/read_floor, no analysis): push = the reader'"'"'s aggregate function\n"
		printf "(mp_reader_run, what analyze uses), step = its statement stepped (mp_reader_next);\n"
		printf "floor events per CPU second at %d: push %.0f, step %.0f\n", n[big],
		       (pc[big] > 0 ? n[big] / pc[big] : 0), (sc[big] > 0 ? n[big] / sc[big] : 0)
		printf "sql = analyze reading the events through SQLite (MEMPROF_READ_PAGES=0), as\n"
		printf "before the page decoder; analyze decodes the events table'"'"'s pages itself\n"
		printf "goals, at %d events:\n", n[big]
		printf "  analyze within %.1fx of read_floor -m push in CPU time (issue 25 goal 3): %s (%.2f)\n",
		       goal_floor, (pc[big] > 0 && ac[big] <= goal_floor * pc[big] ? "met" : "NOT met"),
		       (pc[big] > 0 ? ac[big] / pc[big] : 0)
		printf "  throughput >= %d events per CPU second (one core): %s (%.0f; %.0f per wall second)\n",
		       goal_eps, (epc[big] >= goal_eps ? "met" : "NOT met"), epc[big], eps[big]
		if (ref)
			printf "  peak RSS flat in trace length (<= %.1fx the RSS at %d events): %s (%.1f MiB vs %.1f MiB, %.2fx)\n",
			       goal_rss, n[ref], (ar[big] <= goal_rss * ar[ref] ? "met" : "NOT met"),
			       ar[big], ar[ref], (ar[ref] > 0 ? ar[big] / ar[ref] : 0)
		else
			printf "  peak RSS flat in trace length: not judged (needs two sizes)\n"
	}' "$results" || die "cannot summarize '$results'"

# --- 2. PyTorch snapshots: memprof against the Python reference ---------------------------
echo
if [ ! -d "$DATASETS/torch-snapshots" ]; then
	echo "no snapshots in '$DATASETS/torch-snapshots': part 2 not run"
	exit 0
fi
command -v "$PYTHON" >/dev/null 2>&1 || die "cannot find '$PYTHON' for the reference"
printf '%-28s %8s %8s %9s %9s %9s %7s %7s %9s %9s\n' snapshot "pickle" events "memprof" \
	"analyze" "python" ratio ratio "memprof" "python"
printf '%-28s %8s %8s %9s %9s %9s %7s %7s %9s %9s\n' "" KiB "" "s" "s" "s" "mp/py" "an/py" \
	"RSS MiB" "RSS MiB"
db=$OUT/analyze-snapshot.db
for f in "$DATASETS"/torch-snapshots/*.pickle; do
	name=$(basename "$f" .pickle)
	mlog=$OUT/analyze-torch-$name.memprof.log
	alog=$OUT/analyze-torch-$name.analyze.log
	plog=$OUT/analyze-torch-$name.python.log
	: >"$mlog"
	: >"$alog"
	: >"$plog"
	i=0
	while [ $i -lt "$REPEAT" ]; do
		# import + analyze as one command, as a user runs them on a new snapshot
		run "$mlog" sh -c '"$1" import -q -f -o "$2" "$3" && "$1" analyze --json "$2"' sh \
			"$MEMPROF" "$db" "$f"
		run "$alog" "$MEMPROF" analyze --json "$db"
		run "$plog" "$PYTHON" "$REFERENCE" "$f"
		i=$((i + 1))
	done
	events=$("$MEMPROF" analyze --json "$db" |
		sed -n 's/^[[:space:]]*"events":[[:space:]]*\([0-9]*\).*/\1/p' | head -n 1)
	m=$(median "$mlog" wall_s)
	a=$(median "$alog" wall_s)
	p=$(median "$plog" wall_s)
	printf '%-28s %8d %8s %9s %9s %9s %7s %7s %9.1f %9.1f\n' "$name" "$(($(wc -c <"$f") / 1024))" \
		"$events" "$m" "$a" "$p" "$(ratio "$m" "$p")" "$(ratio "$a" "$p")" \
		"$(awk -v k="$(median "$mlog" maxrss_kib)" 'BEGIN { print k / 1024 }')" \
		"$(awk -v k="$(median "$plog" maxrss_kib)" 'BEGIN { print k / 1024 }')"
done
echo "memprof = 'memprof import' + 'memprof analyze --json' of the pickle; analyze = the"
echo "analysis alone on the imported trace; python = tests/torch/analyze_figures.py (unpickle,"
echo "rebuild the window, replay, the same figures); wall seconds, medians of $REPEAT."
