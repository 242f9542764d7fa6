#!/bin/bash
# output-rule.sh - one rule for every output file (issue 23 item 10): an
# output that exists is refused without --force, and an output that is one of
# the input traces (by any name: the same path, a hard link, a symbolic link)
# is refused even with --force.  Covers report -o, analyze --timeline,
# check/diff -o/--text/--md/--json/--junit, export -o and import -o.
set -u
. "$(dirname "$0")/lib.sh"

W=$TMP/work
mkdir "$W" || die "mkdir $W"
"$MEMPROF" import -q -o "$W/a.db" "$DATA/small.csv" || die "cannot import small.csv"
"$MEMPROF" import -q -o "$W/b.db" "$DATA/small.csv" || die "cannot import small.csv"
cp "$W/a.db" "$W/a.orig" || die "cp"
ln "$W/a.db" "$W/hard.db" || die "ln"
ln -s a.db "$W/soft.db" || die "ln -s"

# refuses_existing CMD...: with $W/old.out present (holding "old"), the command
# must fail naming it and leave it alone.
refuses_existing() {
	printf 'old\n' >"$W/old.out"
	mp "$@"
	expect_status 1
	expect_stderr_contains "output exists '$W/old.out': use --force to replace it"
	expect_eq "$(cat "$W/old.out")" old "content of old.out"
	expect_no_temp_files "$W"
}

# replaces_with_force CMD...: with --force among the arguments it succeeds.
replaces_with_force() {
	printf 'old\n' >"$W/old.out"
	mp "$@"
	expect_status "$EXPECT"
	if [ "$(cat "$W/old.out")" != old ] && [ -s "$W/old.out" ]; then pass; else
		fail "old.out was not replaced"; fi
}

# refuses_input NAME CMD...: writing onto the trace (named NAME) fails, even
# with --force, and leaves the trace byte for byte as it was.
refuses_input() {
	local name=$1
	shift
	mp "$@"
	expect_status 1
	expect_stderr_contains "output is an input '$name'"
	expect_same_file "$W/a.orig" "$W/a.db"
	expect_no_temp_files "$W"
}

EXPECT=0
step "report -o an existing file"
refuses_existing report -o "$W/old.out" "$W/a.db"
step "report -o --force"
replaces_with_force report -f -o "$W/old.out" "$W/a.db"
for name in "$W/a.db" "$W/hard.db" "$W/soft.db"; do
	step "report -o the trace itself ($name), --force"
	refuses_input "$name" report --force -o "$name" "$W/a.db"
	step "report --format=md -o the trace itself ($name)"
	refuses_input "$name" report --format=md -o "$name" "$W/a.db"
done

step "analyze --timeline an existing file"
refuses_existing analyze --timeline="$W/old.out" "$W/a.db"
expect_stdout_empty
step "analyze --timeline --force"
replaces_with_force analyze --force --timeline="$W/old.out" "$W/a.db"
step "analyze --timeline the trace itself, --force"
refuses_input "$W/soft.db" analyze --force --timeline="$W/soft.db" "$W/a.db"
expect_stdout_empty

for opt in -o --text --md --json --junit; do
	step "check $opt an existing file"
	refuses_existing check "$opt" "$W/old.out" "$W/a.db"
	step "check $opt --force"
	replaces_with_force check --force "$opt" "$W/old.out" "$W/a.db"
	step "check $opt the trace itself, --force"
	refuses_input "$W/a.db" check --force "$opt" "$W/a.db" "$W/a.db"
	step "diff $opt an existing file"
	refuses_existing diff "$opt" "$W/old.out" "$W/a.db" "$W/b.db"
	step "diff $opt --force"
	replaces_with_force diff -f "$opt" "$W/old.out" "$W/a.db" "$W/b.db"
	step "diff $opt the head trace itself, --force"
	refuses_input "$W/hard.db" diff --force "$opt" "$W/hard.db" "$W/b.db" "$W/a.db"
done

step "export -o the trace itself, --force"
refuses_input "$W/a.db" export --force -o "$W/a.db" "$W/a.db"

step "import -o its own input, --force"
cp "$DATA/small.csv" "$W/in.csv" || die "cp"
cp "$W/in.csv" "$W/in.orig" || die "cp"
mp import --force -o "$W/in.csv" "$W/in.csv"
expect_status 1
expect_stderr_contains "output is an input '$W/in.csv'"
expect_same_file "$W/in.orig" "$W/in.csv"
expect_no_temp_files "$W"

step "devices are written to, never refused"
mp report -o /dev/null "$W/a.db"
expect_status 0
mp check --json /dev/null "$W/a.db"
expect_status 0

finish
