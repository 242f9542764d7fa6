#!/bin/sh
# bench/plan-bench.sh - the planned pool on MiniMalloc's challenging
# instances (A-E of ../shared/datasets/minimalloc, capacity 1048576), through
# 'memprof import' and 'memprof replay --pool=planned' with its defaults,
# beside its floor: the same replay with --plan_time=0 (one greedy
# placement, no search), alternating in one run.  Prints, for each instance,
# the lower bound, the planned makespan, whether it is proved optimal, the
# plan time and the replay's wall time (medians), the floor's, and the
# ratio of the two wall times; and whether the goal (within the capacity,
# each under 10 s) is met.  Run from the build directory ('make
# bench-plan'); writes only under bench-out/.
#
# usage: plan-bench.sh [CSV...]   (default: A-E of the datasets directory)
# environment: MEMPROF (default ./memprof), REPEAT (default 3),
#              DATASETS (default $top_srcdir/../shared/datasets/minimalloc).
# Exits non-zero only when a command fails, never for a missed goal.

set -u
BENCH_NAME=plan-bench
. "$(dirname "$0")/lib.sh"

MEMPROF=${MEMPROF:-./memprof}
MEASURE=./bench/measure
OUT=bench-out
REPEAT=${REPEAT:-3}
DATASETS=${DATASETS:-${top_srcdir:-.}/../shared/datasets/minimalloc}
GOAL_BYTES=1048576
GOAL_S=10

if [ $# -eq 0 ]; then
	for x in A B C D E; do
		set -- "$@" "$DATASETS/$x.1048576.csv"
	done
fi
[ -x "$MEMPROF" ] || die "cannot run memprof '$MEMPROF' (build it, or set MEMPROF)"
[ -x "$MEASURE" ] || die "run 'make bench-plan' from the build directory"
command -v python3 >/dev/null || die "python3 is needed to read the JSON"
mkdir -p "$OUT" || die "cannot create '$OUT'"

# run NAME DB LOG [OPTION...]: one measured replay of planned; appends
# "wall_s=... plan_s=... bytes=... bound=... optimal=..." to LOG
run() {
	name=$1 db=$2 log=$3
	shift 3
	"$MEASURE" -o "$OUT/plan-$name.measure" -- "$MEMPROF" replay --pool=planned --baseline=none \
		--backend=sim --no-save --json "$@" "$db" >"$OUT/plan-$name.json" 2>/dev/null ||
		die "memprof replay failed on '$db'"
	wall=$(tail -n 1 "$OUT/plan-$name.measure" | sed -n 's/.*wall_s=\([0-9.]*\).*/\1/p')
	python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))["results"][0]
s = r["pool_stats"]
print("wall_s=%s plan_s=%.3f bytes=%d bound=%d optimal=%d" % (sys.argv[2], s["plan_ns"] / 1e9,
      r["peak_reserved_bytes"], r["lower_bound_bytes"], s["optimal"]))
' "$OUT/plan-$name.json" "$wall" >>"$log" || die "cannot read '$OUT/plan-$name.json'"
}

echo "planned on MiniMalloc's challenging instances (sim backend): $(date -u '+%Y-%m-%d %H:%M UTC')," \
	"$(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "each time is the median of $REPEAT runs, alternating planned (defaults) and its floor" \
	"(--plan_time=0: one greedy placement)"
printf '%-9s %8s %8s %7s %8s %7s %7s %8s %8s %7s %s\n' instance bound planned ratio optimal \
	"plan s" "wall s" "floor" "floor s" "wall x" goal
for csv in "$@"; do
	name=$(basename "$csv" .csv)
	db=$OUT/plan-$name.db
	[ -r "$csv" ] || die "cannot read '$csv'"
	rm -f "$db" "$OUT/plan-$name.log" "$OUT/plan-$name.floor.log"
	"$MEMPROF" import -q -o "$db" "$csv" || die "cannot import '$csv'"
	i=0
	while [ $i -lt "$REPEAT" ]; do
		run "$name" "$db" "$OUT/plan-$name.log"
		run "$name" "$db" "$OUT/plan-$name.floor.log" --plan_time=0
		i=$((i + 1))
	done
	log=$OUT/plan-$name.log
	flog=$OUT/plan-$name.floor.log
	bound=$(median "$log" bound)
	bytes=$(sed -n 's/.*bytes=\([0-9]*\).*/\1/p' "$log" | sort -n | tail -n 1)
	optimal=$(sed -n 's/.*optimal=\([0-9]*\).*/\1/p' "$log" | sort -n | head -n 1)
	fbytes=$(median "$flog" bytes)
	plan_s=$(median "$log" plan_s)
	wall=$(median "$log" wall_s)
	fwall=$(median "$flog" wall_s)
	worst=$(sed -n 's/.*wall_s=\([0-9.]*\).*/\1/p' "$log" | sort -g | tail -n 1)
	goal=met
	[ "$bytes" -le $GOAL_BYTES ] || goal="missed (over $GOAL_BYTES)"
	awk -v w="$worst" -v g=$GOAL_S 'BEGIN { exit !(w < g) }' || goal="missed (a run took ${worst} s)"
	printf '%-9s %8d %8d %7.4f %8s %7.3f %7.3f %8d %8.3f %7.1f %s\n' "$name" "$bound" "$bytes" \
		"$(awk -v a="$bytes" -v b="$bound" 'BEGIN { print a / b }')" \
		"$([ "$optimal" = 1 ] && echo yes || echo no)" "$plan_s" "$wall" "$fbytes" "$fwall" \
		"$(awk -v a="$wall" -v b="$fwall" 'BEGIN { print (b > 0 ? a / b : 0) }')" "$goal"
	[ -n "${KEEP:-}" ] || rm -f "$db"
done
echo "planned: the largest makespan and the lowest 'optimal' over the runs; floor: the greedy" \
	"makespan; wall x: planned's median wall time over the floor's"
