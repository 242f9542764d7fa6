#!/bin/sh
# bench/replay-scale.sh - 'memprof replay --pool=all' (every pool, every
# device, sim backend) on one large generated trace, default 10^8 events
# (issue 25 goal 4): its peak RSS and bytes per trace event, its wall and
# CPU time, and the share of the wall time spent in the replay loops (the
# sum of the results' replay_ns: every alloc and free fed to the pools,
# against reading the trace, planning, the fragmentation at the peak and
# the output).  The trace is generated once with bench/gen_csv_trace
# straight to a file, imported, and the CSV removed; the database is kept
# under bench-out/ and reused by the next run (REPLAY_SCALE_DB names
# another one).  With BASE_MEMPROF (another build) that one is measured on
# the same database too (with its plugins from BASE_PLUGIN_PATH when set).  Run from the build directory ('make
# bench-replay-scale REPLAY_SCALE_EVENTS=N'); writes only under bench-out/.
#
# usage: replay-scale.sh [EVENTS]   (default 100000000)
# environment: MEMPROF (default ./memprof), BASE_MEMPROF, BASE_PLUGIN_PATH, REPLAY_SCALE_DB.
# Exits non-zero only when a command fails.

set -u
BENCH_NAME=replay-scale
. "$(dirname "$0")/lib.sh"

MEMPROF=${MEMPROF:-./memprof}
GEN=./bench/gen_csv_trace
MEASURE=./bench/measure
OUT=bench-out
n=${1:-100000000}
db=${REPLAY_SCALE_DB:-$OUT/replay-scale-$n.db}

[ -x "$MEMPROF" ] || die "cannot run memprof '$MEMPROF' (build it, or set MEMPROF)"
{ [ -x "$GEN" ] && [ -x "$MEASURE" ]; } || die "run 'make bench-replay-scale' from the build directory"
command -v python3 >/dev/null || die "python3 is needed to read the JSON"
mkdir -p "$OUT" || die "cannot create '$OUT'"

echo "memprof replay --pool=all at scale (sim backend): $(date -u '+%Y-%m-%d %H:%M UTC')," \
	"$(nproc) cores, $(awk '/MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo)," \
	"load average $(cut -d' ' -f1-3 /proc/loadavg)"
if [ ! -s "$db" ]; then
	csv=$OUT/replay-scale-$n.csv
	echo "generating $n events into '$csv' and importing them into '$db'"
	"$GEN" -n "$n" -o "$csv" || die "cannot generate '$csv'"
	"$MEASURE" -o "$OUT/replay-scale-import.log" -- "$MEMPROF" import -q -f "$csv" -o "$db" ||
		die "cannot import '$csv'"
	rm -f "$csv"
	echo "import: $(tail -n 1 "$OUT/replay-scale-import.log")"
fi

printf '%12s %9s %9s %10s %8s %9s %7s  %s\n' events "wall s" "CPU s" "RSS MiB" B/event \
	"loops s" "share" build
for m in "$MEMPROF" ${BASE_MEMPROF:+"$BASE_MEMPROF"}; do
	json=$OUT/replay-scale-$n.json
	log=$OUT/replay-scale-$n.log
	: >"$log"
	path=${MEMPROF_PLUGIN_PATH:-}
	[ "$m" = "$MEMPROF" ] || path=${BASE_PLUGIN_PATH:-$path}
	MEMPROF_PLUGIN_PATH=$path "$MEASURE" -o "$log" -- "$m" replay --pool=all --backend=sim \
		--no-save --json "$db" >"$json" 2>"$OUT/replay-scale-$n.err" ||
		die "memprof replay --pool=all failed on '$db'"
	loops=$(python3 -c '
import json, sys
print(sum(r["replay_ns"] for r in json.load(open(sys.argv[1]))["results"]) / 1e9)
' "$json") || die "cannot read '$json'"
	awk -v n="$n" -v loops="$loops" -v m="$m" -F'[ =]' '{
		for (i = 1; i < NF; i += 2) v[$i] = $(i + 1)
	} END {
		printf "%12d %9.1f %9.1f %10.1f %8.1f %9.1f %6.1f%%  %s\n", n, v["wall_s"],
		       v["user_s"] + v["sys_s"], v["maxrss_kib"] / 1024, v["maxrss_kib"] * 1024 / n,
		       loops, 100 * loops / v["wall_s"], m
	}' "$log"
done
echo "loops: the sum of replay_ns (wall) over every (device, pool); share: of the run's wall time"
