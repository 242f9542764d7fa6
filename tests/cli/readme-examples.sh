#!/bin/sh
# tests/cli/readme-examples.sh - the README's example outputs are what memprof prints
# today: every code block marked '<!-- example -->' is run and compared
# (tests/cli/readme_examples.py).  'make readme-examples' rewrites them from the tool.
# Skips (77) without python3 or the shared datasets the examples read.
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
MEMPROF=${MEMPROF:-./memprof}
data=$top_srcdir/../shared/datasets
command -v python3 >/dev/null || { echo "readme-examples: SKIP: no python3"; exit 77; }
[ -d "$data" ] || { echo "readme-examples: SKIP: no $data (the examples read its snapshots)"; exit 77; }
exec python3 "$top_srcdir/tests/cli/readme_examples.py" "$top_srcdir/README.md" "$MEMPROF" \
	"$data" "$top_srcdir/samples" "$@"
