#!/bin/sh
# bench/replay-bench.sh - the replay loop of 'memprof replay' on the sim
# backend (pools direct and planned) against its floor, bench/replay_floor
# (the same block events given bump-pointer addresses with no engine, pool
# calls, timing or checks), side by side in one run on generated traces.
# The replay loop's own time is the result's replay_ns (reading the trace
# and planning are not in it).  Prints medians, events per second and the
# ratio to the floor, and whether the goal (5 million events per second) is
# met.  Run from the build directory ('make bench-replay'); writes only
# under bench-out/.
#
# Then, once per size, the peak RSS of 'memprof replay --pool=all' (every
# device, under bench/measure), its bytes per trace event, and the replay
# loops' share of its CPU time (issue 25 goal 4): the sum of the results'
# replay_cpu_ns (the process's CPU time in each pool's loop) over the
# process's user + system time, beside the older wall-clock share (the sum
# of replay_ns over the wall time; on a loaded machine a loop's wall time
# counts the time others ran, so it is the rougher figure); with
# BASE_MEMPROF (another build, e.g. main's: its plugins found through
# MEMPROF_PLUGIN_PATH) the same on the same trace, for a before/after.
#
# usage: replay-bench.sh [EVENTS...]   (default: 1000000 10000000)
# environment: MEMPROF (default ./memprof), REPEAT (default 3), BASE_MEMPROF.
# Exits non-zero only when a command fails, never for a missed goal.

set -u
BENCH_NAME=replay-bench
. "$(dirname "$0")/lib.sh"

MEMPROF=${MEMPROF:-./memprof}
GEN=./bench/gen_csv_trace
FLOOR=./bench/replay_floor
OUT=bench-out
REPEAT=${REPEAT:-3}
GOAL_EVENTS_PER_S=5000000
MEASURE=./bench/measure
RSS_LINES=

[ $# -gt 0 ] || set -- 1000000 10000000
[ -x "$MEMPROF" ] || die "cannot run memprof '$MEMPROF' (build it, or set MEMPROF)"
{ [ -x "$GEN" ] && [ -x "$FLOOR" ]; } || die "run 'make bench-replay' from the build directory"
command -v python3 >/dev/null || die "python3 is needed to read the JSON"
mkdir -p "$OUT" || die "cannot create '$OUT'"

echo "memprof replay benchmark (sim backend): $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores," \
	"$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)," \
	"load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "each figure is the median of $REPEAT runs, alternating memprof and the floor"
printf '%10s %9s %8s %12s %12s %12s %8s\n' events ops pool "replay s" "ops/s" "floor ops/s" "ratio"
for n in "$@"; do
	csv=$OUT/replay-trace-$n.csv
	db=$OUT/replay-trace-$n.db
	"$GEN" -n "$n" -o "$csv" || die "cannot generate '$csv'"
	rm -f "$db"
	"$MEMPROF" import -q -f "$csv" -o "$db" || die "cannot import '$csv'"
	: >"$OUT/replay-$n.log"
	i=0
	while [ $i -lt "$REPEAT" ]; do
		"$MEMPROF" replay --pool=direct,planned --baseline=none --backend=sim --no-save --json \
			--device=0 "$db" 2>/dev/null >"$OUT/replay-$n.json" || die "memprof replay failed on '$db'"
		python3 -c '
import json, sys
for r in json.load(open(sys.argv[1]))["results"]:
    print(r["pool"], r["n_allocs"] + r["n_frees"], r["replay_ns"])
' "$OUT/replay-$n.json" >>"$OUT/replay-$n.log" || die "cannot read '$OUT/replay-$n.json'"
		"$FLOOR" "$csv" | sed 's/^/floor /' >>"$OUT/replay-$n.log" || die "replay_floor failed"
		i=$((i + 1))
	done
	fops=$(sed -n 's/^floor ops=\([0-9]*\) ns=.*/\1/p' "$OUT/replay-$n.log" | head -n 1)
	fns=$(sed -n 's/^floor ops=[0-9]* ns=\([0-9]*\).*/\1/p' "$OUT/replay-$n.log" | median_of)
	for pool in direct planned; do
		ops=$(awk -v p=$pool '$1 == p { print $2; exit }' "$OUT/replay-$n.log")
		ns=$(awk -v p=$pool '$1 == p { print $3 }' "$OUT/replay-$n.log" | median_of)
		awk -v n="$n" -v ops="$ops" -v ns="$ns" -v fops="$fops" -v fns="$fns" -v p=$pool \
			-v goal=$GOAL_EVENTS_PER_S 'BEGIN {
			eps = ops / (ns / 1e9); feps = fops / (fns / 1e9)
			printf "%10d %9d %8s %12.3f %12.0f %12.0f %8.1f  goal %s\n", n, ops, p, ns / 1e9,
			       eps, feps, feps / eps, ((eps >= goal) ? "met" : "NOT met")
		}'
	done
	for m in "$MEMPROF" ${BASE_MEMPROF:+"$BASE_MEMPROF"}; do
		"$MEASURE" -o "$OUT/replay-rss-$n.log" -- "$m" replay --pool=all --backend=sim --no-save \
			--json "$db" >"$OUT/replay-all-$n.json" 2>/dev/null ||
			die "memprof replay --pool=all failed on '$db'"
		kib=$(sed -n 's/.*maxrss_kib=\([0-9]*\).*/\1/p' "$OUT/replay-rss-$n.log" | tail -n 1)
		wall=$(sed -n 's/.*wall_s=\([0-9.]*\).*/\1/p' "$OUT/replay-rss-$n.log" | tail -n 1)
		cpu=$(sed -n 's/.*user_s=\([0-9.]*\) sys_s=\([0-9.]*\).*/\1 \2/p' \
			"$OUT/replay-rss-$n.log" | tail -n 1 | awk '{ print $1 + $2 }')
		# the loops' own time: the sum of every result's replay_ns (wall) and
		# replay_cpu_ns (the process's CPU time in the loop)
		loops=$(sed -n 's/.*"replay_ns":[[:space:]]*\([0-9]*\).*/\1/p' "$OUT/replay-all-$n.json" |
			awk '{ s += $1 } END { printf "%.3f", s / 1e9 }')
		loops_cpu=$(sed -n 's/.*"replay_cpu_ns":[[:space:]]*\([0-9]*\).*/\1/p' \
			"$OUT/replay-all-$n.json" | awk '{ s += $1 } END { printf "%.3f", s / 1e9 }')
		RSS_LINES="$RSS_LINES$(awk -v n="$n" -v k="$kib" -v m="$m" -v w="$wall" -v c="$cpu" \
			-v l="$loops" -v lc="$loops_cpu" 'BEGIN {
			printf "%10d %10.1f %8.1f %8.2f %8.2f %8.2f %6.1f%% %8.2f %6.1f%%  %s", n,
			       k / 1024, k * 1024 / n, w, c, l, (w > 0 ? 100 * l / w : 0), lc,
			       (c > 0 ? 100 * lc / c : 0), m }')
"
	done
	rm -f "$csv" "$db"
done
echo "ratio: how many times faster the floor is than memprof's replay loop"
echo
echo "memprof replay --pool=all --backend=sim (every device): peak RSS, wall and CPU"
echo "seconds, the replay loops' wall seconds (the results' replay_ns) and their share"
echo "of the wall time, the loops' CPU seconds (replay_cpu_ns) and their share of the"
echo "CPU time (issue 25 goal 4: at least 80% of the CPU)"
printf '%10s %10s %8s %8s %8s %8s %7s %8s %7s  %s\n' events "RSS MiB" "B/event" "wall s" "CPU s" \
	"loops s" share "loop CPU" "CPU %" build
printf '%s' "$RSS_LINES"
