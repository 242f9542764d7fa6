#!/bin/sh
# tests/browser/readme-screenshot.sh - docs/report.png, the README's picture
# of a report made from a real trace: the PyTorch snapshot
# ../shared/datasets/torch-snapshots/cs336-ctx128-fullstep.pickle imported,
# every pool replayed and stored ('memprof replay --pool=all'), then
# 'memprof report'; the top of the page (the header, the notes, the trace's
# own facts and the memory chart) shot in headless Chromium at 1280 pixels
# wide (tests/browser/screenshot.mjs).  memprof runs by the name
# 'memprof' (its directory put first on PATH), so the page shows the command
# lines as a user types them.  Then docs/report-timeline.png: the active
# memory timeline and the allocator state at the peak of device 0.  Then
# docs/report-diff.png: 'memprof report BASE HEAD' with the forward pass
# alone (BASE_SNAPSHOT) against the full step, device 0's two active memory
# timelines on one axis and one byte scale.
# Re-runnable; writes only those three files.
#
# environment: MEMPROF (default: ./memprof of the source tree), SNAPSHOT (the
# pickle), BASE_SNAPSHOT, OUT (default docs/report.png), OUT_VIEWS (default
# docs/report-timeline.png), OUT_DIFF (default docs/report-diff.png)
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
MEMPROF=${MEMPROF:-$top/memprof}
SNAPSHOT=${SNAPSHOT:-$top/../shared/datasets/torch-snapshots/cs336-ctx128-fullstep.pickle}
OUT=${OUT:-$top/docs/report.png}
OUT_VIEWS=${OUT_VIEWS:-$top/docs/report-timeline.png}
BASE_SNAPSHOT=${BASE_SNAPSHOT:-$top/../shared/datasets/torch-snapshots/cs336-ctx128-forward-mixed.pickle}
OUT_DIFF=${OUT_DIFF:-$top/docs/report-diff.png}

[ -x "$MEMPROF" ] || { echo "readme-screenshot: no memprof at '$MEMPROF' (make, or set MEMPROF)" >&2; exit 1; }
[ -f "$SNAPSHOT" ] || { echo "readme-screenshot: no snapshot '$SNAPSHOT' (set SNAPSHOT)" >&2; exit 1; }
[ -f "$BASE_SNAPSHOT" ] || { echo "readme-screenshot: no snapshot '$BASE_SNAPSHOT' (set BASE_SNAPSHOT)" >&2; exit 1; }
[ -d "$top/tests/browser/node_modules/playwright-core" ] ||
	{ echo "readme-screenshot: no tests/browser/node_modules (npm ci --prefix tests/browser)" >&2; exit 1; }
case $MEMPROF in /*) ;; *) MEMPROF=$PWD/$MEMPROF ;; esac
case $OUT in /*) ;; *) OUT=$PWD/$OUT ;; esac
case $OUT_VIEWS in /*) ;; *) OUT_VIEWS=$PWD/$OUT_VIEWS ;; esac
case $OUT_DIFF in /*) ;; *) OUT_DIFF=$PWD/$OUT_DIFF ;; esac
case $BASE_SNAPSHOT in /*) ;; *) BASE_SNAPSHOT=$PWD/$BASE_SNAPSHOT ;; esac

tmp=$(mktemp -d "${TMPDIR:-/tmp}/memprof-screenshot.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
name=$(basename "$SNAPSHOT" .pickle)
# Relative names, so the report's header shows the commands as a user types them.
ln -s "$(cd "$(dirname "$SNAPSHOT")" && pwd)/$(basename "$SNAPSHOT")" "$tmp/$name.pickle"
cd "$tmp"
mkdir bin
ln -s "$MEMPROF" bin/memprof
PATH=$tmp/bin:$PATH
memprof import -q -o "$name.db" "$name.pickle"
memprof replay --pool=all "$name.db" >/dev/null
memprof report -o report.html "$name.db"
mkdir -p "$(dirname "$OUT")"
node "$top/tests/browser/screenshot.mjs" --report report.html --out "$OUT" --width 1280 \
	--until 'svg.chart[data-chart=memory]' --max-height 1500
node "$top/tests/browser/screenshot.mjs" --report report.html --out "$OUT_VIEWS" --width 1280 \
	--element 'div.bands-view'
memprof import -q -o base.db "$BASE_SNAPSHOT"
memprof report -o diff.html base.db "$name.db"
node "$top/tests/browser/screenshot.mjs" --report diff.html --out "$OUT_DIFF" --width 1280 \
	--element 'section.device'
