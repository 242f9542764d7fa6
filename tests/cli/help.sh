#!/bin/bash
# help.sh - memprof's global options, command dispatch, "did you mean", each
# command's --help, and usage errors (exit 2).
set -u
. "$(dirname "$0")/lib.sh"

step "--help"
mp --help
expect_status 0
expect_stdout_contains "usage: memprof"
for c in import export info; do
	if grep -qE "^  $c +[a-z]" "$OUT"; then pass; else fail "--help does not list '$c'"; fi
done
expect_stderr_empty

step "-h"
mp -h
expect_status 0
expect_stdout_contains "usage: memprof"

step "help (no command)"
mp help
expect_status 0
expect_stdout_contains "usage: memprof"

step "--version"
version=$(sed -n 's/^#define PACKAGE_VERSION "\(.*\)"$/\1/p' "$top_builddir/config.h")
[ -n "$version" ] || die "no PACKAGE_VERSION in '$top_builddir/config.h'"
mp --version
expect_status 0
if [ "$(cat "$OUT")" = "memprof $version" ]; then pass; else fail "--version should print exactly 'memprof $version'"; fi
expect_stderr_empty

step "no arguments"
mp
expect_status 2
expect_stderr_contains "usage: memprof"
expect_stdout_empty

# A mistyped command: exit 2, named, and the closest command suggested.
check_suggestion() { # TYPO COMMAND
	step "mistyped '$1'"
	mp "$1"
	expect_status 2
	expect_stderr_contains "unknown command '$1'"
	expect_stderr_contains "did you mean"
	expect_stderr_contains "memprof $2"
	expect_stdout_empty
}
check_suggestion imprt import
check_suggestion exprot export
check_suggestion inf info
check_suggestion improt import

step "unknown command without a close match"
mp frobnicate
expect_status 2
expect_stderr_contains "unknown command 'frobnicate'"
expect_stderr_not_contains "did you mean"
expect_stdout_empty

step "unknown global option"
mp --bogus
expect_status 2
expect_stderr_contains "'--bogus'"
expect_stdout_empty

step "help with an unknown command"
mp help nope
expect_status 2
expect_stderr_contains "unknown command 'nope'"

for c in import export info; do
	step "$c --help"
	mp "$c" --help
	expect_status 0
	expect_stdout_contains "usage: memprof $c "
	expect_stderr_empty
	cp "$OUT" "$TMP/$c-help.txt"

	step "$c -h"
	mp "$c" -h
	expect_status 0
	expect_same_file "$TMP/$c-help.txt" "$OUT"

	step "help $c"
	mp help "$c"
	expect_status 0
	expect_same_file "$TMP/$c-help.txt" "$OUT"

	step "$c with an unknown long option"
	mp "$c" --bogus x
	expect_status 2
	expect_stderr_contains "memprof $c: "
	expect_stderr_contains "'--bogus'"
	expect_stderr_contains "usage: memprof $c"
	expect_stdout_empty

	step "$c with an unknown short option"
	mp "$c" -z x
	expect_status 2
	expect_stderr_contains "'-z'"
	expect_stdout_empty

	step "$c without an operand"
	mp "$c"
	expect_status 2
	expect_stderr_contains "memprof $c: "
	expect_stderr_contains "usage: memprof $c"
	expect_stdout_empty

	[ "$c" = import ] && continue # import takes several files
	step "$c with two operands"
	mp "$c" a b
	expect_status 2
	expect_stderr_contains "memprof $c: "
	expect_stdout_empty
done

step "import --help lists the formats"
mp import --help
expect_stdout_contains "csv"

step "info --help mentions --json"
mp info --help
expect_stdout_contains "--json"

step "missing option value"
mp import -o
expect_status 2
expect_stderr_contains "'-o'"
expect_stderr_contains "needs a value"
expect_stdout_empty
mp import --output
expect_status 2
expect_stderr_contains "'--output'"
mp import --format
expect_status 2
expect_stderr_contains "'--format'"
mp export -o
expect_status 2
expect_stderr_contains "'-o'"

step "import from standard input without --output"
mp import -
expect_status 2
expect_stderr_contains "--output"

step "options after the operand are still options"
mp info x.db --bogus
expect_status 2
expect_stderr_contains "'--bogus'"

finish
