#!/bin/sh
# bench/import-floor.sh - 'memprof import' of each text format against the
# SQLite-alone floor, side by side in one run: for each format (memprof CSV
# from bench/gen_csv_trace, an RMM log from bench/gen_rmm_log, MiniMalloc CSV
# exported from the CSV trace), memprof imports the file, then
# 'bench/sqlite_floor -f' stores the very rows memprof stored (read into
# memory first, untimed) with the writer's statement shapes, alternating
# REPEAT times.  Prints medians of CPU time (user + system, what holds on a
# shared machine) and wall time, and memprof / floor for each (goal of
# issue 25: at most 1.2).  Run from the build directory ('make
# bench-import-floor'); writes only under bench-out/.
#
# usage: import-floor.sh [EVENTS]   (default 1000000)
# environment: MEMPROF (default ./memprof), REPEAT (default 3), KEEP (keep the inputs),
# FORMATS (default "csv rmm minimalloc"), BEFORE (another memprof, e.g. main's, run in the same alternation: its CPU
# median and its ratio to the floor are printed after the goal).
# Exits non-zero only when a command fails, never for a missed goal.

set -u
BENCH_NAME=import-floor
. "$(dirname "$0")/lib.sh"

MEMPROF=${MEMPROF:-./memprof}
MEASURE=./bench/measure
FLOOR=./bench/sqlite_floor
OUT=bench-out
REPEAT=${REPEAT:-3}
N=${1:-1000000}

[ -x "$MEMPROF" ] || die "cannot run memprof '$MEMPROF' (build it, or set MEMPROF)"
for p in "$MEASURE" "$FLOOR" ./bench/gen_csv_trace ./bench/gen_rmm_log; do
	[ -x "$p" ] || die "missing '$p': run 'make bench-import-floor' from the build directory"
done
mkdir -p "$OUT" || die "cannot create '$OUT'"

csv=$OUT/floor-$N.csv
rmm=$OUT/floor-$N.rmm.csv
mm=$OUT/floor-$N.minimalloc.csv
[ -s "$csv" ] || ./bench/gen_csv_trace -n "$N" -o "$csv" || die "cannot generate '$csv'"
[ -s "$rmm" ] || ./bench/gen_rmm_log -n "$N" -o "$rmm" || die "cannot generate '$rmm'"
if [ ! -s "$mm" ]; then
	"$MEMPROF" import -q -f -o "$OUT/floor-src.db" "$csv" || die "cannot import '$csv'"
	"$MEMPROF" export --format=minimalloc --device=0 -o "$mm" "$OUT/floor-src.db" ||
		die "cannot export '$mm'"
	rm -f "$OUT/floor-src.db"
fi

echo "memprof import vs SQLite alone storing the same rows (bench/sqlite_floor -f):" \
	"$(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "medians of $REPEAT alternating runs"
printf '%-11s %9s %7s %8s %8s %6s %7s %7s %6s %7s%s\n' format events MiB mp_cpu fl_cpu x_cpu \
	mp_s fl_s x_wall goal "${BEFORE:+   bf_cpu x_bf}"
for fmt in ${FORMATS:-csv rmm minimalloc}; do
	case $fmt in
	csv) f=$csv ;;
	rmm) f=$rmm ;;
	minimalloc) f=$mm ;;
	esac
	mlog=$OUT/floor-$fmt.memprof.log
	flog=$OUT/floor-$fmt.floor.log
	blog=$OUT/floor-$fmt.before.log
	: >"$mlog"
	: >"$flog"
	: >"$blog"
	i=0
	while [ "$i" -lt "$REPEAT" ]; do
		"$MEASURE" -o "$mlog" -- "$MEMPROF" import -q -f -o "$OUT/floor-mp.db" "$f" \
			2>>"$OUT/floor-warnings.txt" || die "memprof import failed on '$f'"
		if [ -n "${BEFORE:-}" ]; then
			"$MEASURE" -o "$blog" -- "$BEFORE" import -q -f -o "$OUT/floor-bf.db" "$f" \
				2>>"$OUT/floor-warnings.txt" || die "'$BEFORE' import failed on '$f'"
		fi
		rm -f "$OUT/floor-sq.db"
		"$FLOOR" -f "$OUT/floor-mp.db" -o "$OUT/floor-sq.db" >>"$flog" ||
			die "sqlite_floor failed on '$OUT/floor-mp.db'"
		i=$((i + 1))
	done
	rows=$(sed -n 's/^rows=\([0-9]*\).*/\1/p' "$flog" | head -n 1)
	mc=$(cpu_median "$mlog")
	fc=$(median "$flog" cpu_s)
	mw=$(median "$mlog" wall_s)
	fw=$(median "$flog" wall_s)
	bc=
	[ -z "${BEFORE:-}" ] || bc=$(cpu_median "$blog")
	awk -v bc="$bc" -v fmt=$fmt -v n="$rows" -v b="$(wc -c <"$f")" -v mc="$mc" -v fc="$fc" -v mw="$mw" \
		-v fw="$fw" 'BEGIN {
		x = mc / fc
		printf "%-11s %9d %7.1f %8.3f %8.3f %6.2f %7.3f %7.3f %6.2f %7s", fmt, n, b / 1048576,
		       mc, fc, x, mw, fw, mw / fw, (x <= 1.2) ? "met" : "NOT met"
		if (bc != "")
			printf " %8.3f %5.2f", bc, bc / fc
		printf "\n"
	}'
done
rm -f "$OUT/floor-mp.db" "$OUT/floor-sq.db" "$OUT/floor-bf.db"
[ -n "${KEEP:-}" ] || rm -f "$csv" "$rmm" "$mm"
echo "events: rows stored (phase markers and implied frees included); x_cpu = memprof CPU / floor CPU"
echo "(goal: x_cpu <= 1.2); the floor's times cover storing only, memprof's the whole command"
