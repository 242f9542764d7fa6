#!/bin/sh
# bench/report-snapshot.sh - 'memprof report' of a large generated PyTorch
# snapshot (bench/gen_torch_snapshot.py, N allocations; 2000000 make about
# 1 GB of pickle): the import and the report's time and peak memory, the
# HTML's size, and the time Chromium takes to open it (load event plus first
# screenshot, tests/browser/open-time.mjs) against a blank page.  When
# MEMORY_VIZ names PyTorch's torch/cuda/_memory_viz.py (not part of memprof,
# never fetched), its 'trace_plot' runs on the same file, killed after
# VIZ_LIMIT seconds (default 600), its address space capped at VIZ_MEM_KIB
# KiB when set (it holds the whole pickle, then its base64, in memory);
# else that row says it was skipped.
# Run from the build directory ('make bench-report-snapshot'); writes only
# under bench-out/.  Exits non-zero only when a memprof command fails.
#
# usage: report-snapshot.sh [N]   (default: 200000)
# environment: MEMPROF (default ./memprof), PYTHON (default python3),
# MEMORY_VIZ, VIZ_LIMIT, VIZ_MEM_KIB, KEEP=1 keeps the files in bench-out/.

set -u
BENCH_NAME=report-snapshot
. "$(dirname "$0")/lib.sh"

MEMPROF=${MEMPROF:-./memprof}
PYTHON=${PYTHON:-python3}
MEASURE=./bench/measure
OUT=bench-out
top_srcdir=${top_srcdir:-$(dirname "$0")/..}
BROWSER=$top_srcdir/tests/browser
n=${1:-200000}

case $n in
'' | *[!0-9]*) echo "usage: report-snapshot.sh [N]" >&2; exit 2 ;;
esac
[ -x "$MEMPROF" ] || die "cannot run memprof '$MEMPROF' (build it, or set MEMPROF)"
[ -x "$MEASURE" ] || die "missing '$MEASURE': run 'make bench-report-snapshot' from the build directory"
mkdir -p "$OUT" || die "cannot create '$OUT'"
snap=$OUT/snapshot-$n.pickle
db=$OUT/snapshot-$n.db
html=$OUT/snapshot-$n.html
cleanup() {
	[ "${KEEP:-0}" = 1 ] || rm -f "$snap" "$db" "$html" "$OUT/snapshot-viz-$n.html"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# row NAME LOG [BYTES]: one line of the table from a bench/measure log.
row() {
	printf '  %-34s %9.3f s wall %9.1f MiB RSS %s\n' "$1" "$(median "$2" wall_s)" \
		"$(awk -v k="$(median "$2" maxrss_kib)" 'BEGIN { print k / 1024 }')" "${3:-}"
}

echo "memprof report on a generated PyTorch snapshot: $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores," \
	"load average $(cut -d' ' -f1-3 /proc/loadavg)"
if [ "${KEEP:-0}" != 1 ] || [ ! -f "$snap" ]; then
	"$PYTHON" "$top_srcdir/bench/gen_torch_snapshot.py" "$n" "$snap" || die "cannot generate '$snap'"
fi
echo "snapshot: $n allocations, $(wc -c <"$snap") bytes of pickle"
: >"$OUT/snap-import.log"
: >"$OUT/snap-report.log"
rm -f "$db"
"$MEASURE" -o "$OUT/snap-import.log" -- "$MEMPROF" import -q -o "$db" "$snap" || die "import failed"
"$MEASURE" -o "$OUT/snap-report.log" -- "$MEMPROF" report -f -o "$html" "$db" >/dev/null ||
	die "report failed"
row "memprof import" "$OUT/snap-import.log"
row "memprof report" "$OUT/snap-report.log" "$(wc -c <"$html") bytes of HTML"

if [ -x /usr/bin/chromium ] && [ -d "$BROWSER/node_modules/playwright-core" ]; then
	printf '<!DOCTYPE html><html><head><meta charset="utf-8"><title>blank</title></head><body></body></html>\n' \
		>"$OUT/snapshot-blank.html"
	echo "opening it in headless Chromium (load event + first screenshot):"
	node "$BROWSER/open-time.mjs" --report "$html" --blank "$OUT/snapshot-blank.html" --rounds 3 2>&1 |
		sed 's/^/  /'
else
	echo "  Chromium or tests/browser/node_modules missing: not opened"
fi

if [ -n "${MEMORY_VIZ:-}" ] && [ -f "$MEMORY_VIZ" ]; then
	: >"$OUT/snap-viz.log"
	if (if [ -n "${VIZ_MEM_KIB:-}" ]; then ulimit -v "$VIZ_MEM_KIB" || exit 1; fi
		exec "$MEASURE" -o "$OUT/snap-viz.log" -- timeout "${VIZ_LIMIT:-600}" "$PYTHON" "$MEMORY_VIZ" \
			trace_plot "$snap" -o "$OUT/snapshot-viz-$n.html"); then
		row "_memory_viz.py trace_plot" "$OUT/snap-viz.log" \
			"$(wc -c <"$OUT/snapshot-viz-$n.html") bytes of HTML (loads its script from the network)"
	else
		echo "  _memory_viz.py trace_plot: did not finish within ${VIZ_LIMIT:-600} s" \
			"${VIZ_MEM_KIB:+or ${VIZ_MEM_KIB} KiB of address space }(or failed)"
	fi
else
	echo "  _memory_viz.py trace_plot: skipped (set MEMORY_VIZ to PyTorch's torch/cuda/_memory_viz.py)"
fi
