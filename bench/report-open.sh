#!/bin/sh
# bench/report-open.sh - 'memprof report' on a long trace (10^7 events by
# default, from bench/gen_csv_trace) against its floor, 'memprof analyze' on
# the same trace (the same events read by the same analyses, no HTML), and
# the report opened in headless Chromium (navigation to the load event, then
# the first screenshot) against a blank page opened the same way in the same
# browser session (tests/browser/open-time.mjs).  Prints medians and ratios.
# Run from the build directory ('make bench-report'); writes only under
# bench-out/.
#
# usage: report-open.sh [EVENTS]   (default: 10000000)
# environment: MEMPROF (default ./memprof), REPEAT (default 3), KEEP=1 keeps
# the trace database and the report in bench-out/.
# Exits non-zero only when a command fails, never for a slow figure.

set -u
BENCH_NAME=report-open
. "$(dirname "$0")/lib.sh"

MEMPROF=${MEMPROF:-./memprof}
GEN=./bench/gen_csv_trace
MEASURE=./bench/measure
OUT=bench-out
REPEAT=${REPEAT:-3}
top_srcdir=${top_srcdir:-$(dirname "$0")/..}
BROWSER=$top_srcdir/tests/browser
n=${1:-10000000}

case $n in
'' | *[!0-9]*) echo "usage: report-open.sh [EVENTS]" >&2; exit 2 ;;
esac
[ -x "$MEMPROF" ] || die "cannot run memprof '$MEMPROF' (build it, or set MEMPROF)"
{ [ -x "$GEN" ] && [ -x "$MEASURE" ]; } ||
	die "missing '$GEN' or '$MEASURE': run 'make bench-report' from the build directory"
[ -x /usr/bin/chromium ] || die "no /usr/bin/chromium (apt-get install chromium)"
[ -d "$BROWSER/node_modules/playwright-core" ] ||
	die "no '$BROWSER/node_modules' (npm ci --prefix tests/browser)"

csv=$OUT/report-trace-$n.csv
db=$OUT/report-trace-$n.db
html=$OUT/report-trace-$n.html
blank=$OUT/report-blank.html
cleanup() {
	rm -f "$csv" "$OUT/report-check.json"
	if [ "${KEEP:-0}" != 1 ]; then
		rm -f "$db" "$html"
	fi
}
mkdir -p "$OUT" || die "cannot create '$OUT'"
trap cleanup EXIT
trap 'exit 1' INT TERM

echo "memprof report benchmark: $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores," \
	"$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)," \
	"load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "memprof: $("$MEMPROF" --version 2>/dev/null | head -n 1)"
echo "chromium: $(/usr/bin/chromium --version 2>/dev/null | head -n 1)"
echo

if [ "${KEEP:-0}" != 1 ] || [ ! -f "$db" ]; then
	echo "generating and importing a trace of $n events ..."
	"$GEN" -n "$n" -o "$csv" || die "cannot generate '$csv'"
	"$MEMPROF" import -q -f "$csv" -o "$db" || die "cannot import '$csv'"
	rm -f "$csv"
fi
"$MEMPROF" analyze --json "$db" >"$OUT/report-check.json" || die "memprof analyze failed on '$db'"
got=$(sed -n 's/^[[:space:]]*"events":[[:space:]]*\([0-9]*\).*/\1/p' "$OUT/report-check.json" | head -n 1)
[ "$got" = "$n" ] || die "memprof analyze saw '$got' events of $n in '$db'"

# --- 1. writing the report, against analyze on the same trace -------------------------
rlog=$OUT/report-write-$n.log
alog=$OUT/report-analyze-$n.log
: >"$rlog"
: >"$alog"
i=0
while [ $i -lt "$REPEAT" ]; do
	rm -f "$html"
	"$MEASURE" -o "$rlog" -- "$MEMPROF" report -o "$html" "$db" >/dev/null ||
		die "memprof report failed on '$db'"
	"$MEASURE" -o "$alog" -- "$MEMPROF" analyze "$db" >/dev/null || die "memprof analyze failed"
	i=$((i + 1))
done
rw=$(median "$rlog" wall_s)
aw=$(median "$alog" wall_s)
size=$(wc -c <"$html")
echo "writing the report ($n events; medians of $REPEAT, alternating):"
printf '  memprof report   %8.3f s wall %8.3f s CPU %8.1f MiB RSS\n' "$rw" "$(cpu_median "$rlog")" \
	"$(awk -v k="$(median "$rlog" maxrss_kib)" 'BEGIN { print k / 1024 }')"
printf '  memprof analyze  %8.3f s wall %8.3f s CPU %8.1f MiB RSS   (floor)\n' "$aw" \
	"$(cpu_median "$alog")" "$(awk -v k="$(median "$alog" maxrss_kib)" 'BEGIN { print k / 1024 }')"
printf '  ratio report/analyze %.2f wall, %.2f CPU\n' \
	"$(awk -v a="$rw" -v b="$aw" 'BEGIN { print (b > 0 ? a / b : 0) }')" \
	"$(awk -v a="$(cpu_median "$rlog")" -v b="$(cpu_median "$alog")" 'BEGIN { print (b > 0 ? a / b : 0) }')"
printf '  report size %d bytes (%.1f KiB)\n\n' "$size" "$(awk -v s="$size" 'BEGIN { print s / 1024 }')"

# --- 2. opening it in Chromium, against a blank page ---------------------------------------
printf '<!DOCTYPE html><html><head><meta charset="utf-8"><title>blank</title></head><body></body></html>\n' \
	>"$blank"
echo "opening it in headless Chromium (load event + first screenshot; $((REPEAT + 2)) rounds, alternating):"
node "$BROWSER/open-time.mjs" --report "$html" --blank "$blank" --rounds $((REPEAT + 2)) \
	>"$OUT/report-open-$n.log" 2>&1
rc=$?
sed 's/^/  /' "$OUT/report-open-$n.log"
[ $rc -eq 0 ] || die "opening the report in Chromium failed (status $rc)"
