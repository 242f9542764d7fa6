#!/bin/bash
# layering-check-fails.sh - tests/check-layering.sh is a real check: on fake
# source trees it names each forbidden include and exits 1, and it passes a
# tree that keeps the rule.
set -u
. "$(dirname "$0")/lib.sh"

CHECK=$top_srcdir/tests/check-layering.sh
[ -f "$CHECK" ] || die "no checker at '$CHECK'"

# file PATH LINE...: write a source file of the fake tree, one line per argument.
file() {
	local path=$1
	shift
	mkdir -p "$(dirname "$path")"
	printf '%s\n' "$@" >"$path"
}

# copy_tree FROM TO: copy a fake src/ directory.
copy_tree() {
	mkdir -p "$(dirname "$2")" && cp -R "$1" "$2" || die "cannot copy $1 to $2"
}

# --- a clean tree -----------------------------------------------------------------------------
CLEAN=$TMP/clean/src
file "$CLEAN/main.c" '#include "cmd/cmd.h"' '#include "util/suggest.h"' '#include <stdio.h>'
file "$CLEAN/cmd/cmd.h" '#include "util/error.h"'
file "$CLEAN/cmd/info.c" '#include "cmd/cmd.h"' '#include "analysis/summary.h"' \
	'#include "report/info.h"' '#include "store/reader.h"' '#include "import/import.h"'
file "$CLEAN/util/error.h" '#include <stdarg.h>'
file "$CLEAN/util/format.c" '#include "util/format.h"' '#include "memprof/trace.h"' \
	'#include "error.h"'
file "$CLEAN/store/store_internal.h" '#include <sqlite3.h>' '#include "store/store.h"'
file "$CLEAN/store/store.c" '#include "store/store_internal.h"' '#include "util/error.h"'
file "$CLEAN/import/import.c" '#include "import/import.h"' '#include "store/writer.h"' \
	'#include "util/strmap.h"' '#include "spool/reader.h"' '#include "spool/format.h"'
file "$CLEAN/analysis/summary.h" '#include "store/reader.h"' '#include "store/store.h"' \
	'#include "util/intmap.h"'
file "$CLEAN/replay/engine.c" '#include "analysis/summary.h"' '#include "store/reader.h"' \
	'#include "replay/engine.h"'
file "$CLEAN/report/info.c" '#include "report/info.h"' '#include "analysis/summary.h"' \
	'#include "util/format.h"' '#include <cjson/cJSON.h>' '#  include "memprof/trace.h"'
file "$CLEAN/capture/spool.c" '#include "capture/spool.h"' '#include "util/error.h"' \
	'#include "memprof/trace.h"' '#include "spool/writer.h"'
file "$CLEAN/spool/reader.c" '#include "spool/reader.h"' '#include "util/crc32.h"'
file "$CLEAN/load/gate_load.c" '#include "load/gate_load.h"' '#include "store/reader.h"' \
	'#include "store/results.h"' '#include "analysis/summary.h"' '#include "report/info.h"'
file "$CLEAN/live/state.c" '#include "live/state.h"' '#include "spool/format.h"' \
	'#include "import/symbols.h"' '#include "analysis/summary.h"' '#include "util/intmap.h"'

step "a clean tree passes"
run "$CHECK" "$CLEAN"
expect_status 0
expect_stdout_not_contains "must not include"

# --- a tree with forbidden includes ---------------------------------------------------------
BAD=$TMP/bad/src
copy_tree "$CLEAN" "$BAD"
file "$BAD/report/leak.c" '/* a report that reaches into the store */' \
	'#include "report/info.h"' '#include "store/store.h"'
file "$BAD/analysis/peaks.c" '#include "analysis/summary.h"' '#include <stdlib.h>' \
	'#include <sqlite3.h>'
file "$BAD/import/csv.c" '#include "import/import.h"' '#include "cmd/cmd.h"'
file "$BAD/analysis/raw.c" '#include "store/writer.h"'
file "$BAD/util/bad.c" '#include "util/bad.h"' '# include "store/store.h"'
file "$BAD/replay/pool.c" '#include "report/info.h"'
file "$BAD/main.c" '#include "cmd/cmd.h"' '#include "store/store.h"'
file "$BAD/import/peek.c" '#include "../store/store_internal.h"'

step "a tree with forbidden includes fails"
run "$CHECK" "$BAD"
expect_status 1
expect_stdout_contains 'src/report/leak.c:3: report must not include "store/store.h"'
expect_stdout_contains 'src/analysis/peaks.c:3: analysis must not include <sqlite3.h>'
expect_stdout_contains 'src/import/csv.c:2: import must not include "cmd/cmd.h"'
expect_stdout_contains 'src/analysis/raw.c:1: analysis must not include "store/writer.h"'
expect_stdout_contains 'src/util/bad.c:2: util must not include "store/store.h"'
expect_stdout_contains 'src/replay/pool.c:1: replay must not include "report/info.h"'
expect_stdout_contains 'src/main.c:2: main must not include "store/store.h"'
expect_stdout_contains 'src/import/peek.c:1: import must not include "../store/store_internal.h"'
expect_eq "$(grep -c 'must not include' "$OUT")" 8 "number of violations"
# Each line says why, in parentheses.
expect_eq "$(grep 'must not include' "$OUT" | grep -c -v ' (.*)$')" 0 "violations without a reason"
expect_stdout_not_contains "src/report/info.c"
expect_stdout_not_contains "src/cmd/info.c"

# --- one violation at a time: each alone makes the check fail ------------------------------------
one() { # NAME PATH LINE: a clean tree plus one file; the check must name it
	local tree=$TMP/$1/src
	copy_tree "$CLEAN" "$tree"
	file "$tree/$2" "$3"
	step "only $1"
	run "$CHECK" "$tree"
	expect_status 1
	expect_stdout_contains "src/$2:1: "
	expect_eq "$(grep -c 'must not include' "$OUT")" 1 "number of violations"
}
one report-store report/x.c '#include "store/store.h"'
one analysis-sqlite analysis/x.c '#include <sqlite3.h>'
one cmd-from-util util/x.c '#include "cmd/cmd.h"'
one cmd-from-report report/y.h '#include "cmd/cmd.h"'
one capture-store capture/x.c '#include "store/reader.h"'
one import-capture import/x.c '#include "capture/capture.h"'
one store-import store/x.c '#include "import/import.h"'
one live-store live/x.c '#include "store/writer.h"'
one live-import live/y.c '#include "import/import.h"'
one spool-store spool/x.c '#include "store/writer.h"'
one spool-capture spool/y.c '#include "capture/capture.h"'
one capture-import capture/y.c '#include "import/import.h"'
one load-writer load/x.c '#include "store/writer.h"'
one load-import load/y.c '#include "import/import.h"'
one report-load report/z.c '#include "load/gate_load.h"'
one analysis-load analysis/x.c '#include "load/trace_meta.h"'
one main-load main.c '#include "load/trace_meta.h"'

step "an unknown layer is reported"
UNK=$TMP/unknown/src
copy_tree "$CLEAN" "$UNK"
file "$UNK/frobnicate/x.c" '#include "util/error.h"'
run "$CHECK" "$UNK"
expect_status 1
expect_stdout_contains "src/frobnicate/x.c"

step "docs/ARCHITECTURE.md must name every part, and only parts that exist"
DOC=$TMP/doc/src
copy_tree "$CLEAN" "$DOC"
file "$TMP/doc/docs/ARCHITECTURE.md" '| folder | what |' '|---|---|' '| `src/util/` | helpers |' \
	'| `src/gone/` | a part removed |'
run "$CHECK" "$DOC"
expect_status 1
expect_stdout_contains 'docs/ARCHITECTURE.md: no row for src/store/'
expect_stdout_contains 'docs/ARCHITECTURE.md: a row for src/gone/, which does not exist'

step "a missing source directory is an error, not a pass"
run "$CHECK" "$TMP/no-such-dir"
if [ "$status" -ne 0 ] && [ "$status" -ne 77 ]; then pass; else fail "exit status $status for a missing directory"; fi

step "the real tree passes"
run "$CHECK" "$top_srcdir/src"
expect_status 0

finish
