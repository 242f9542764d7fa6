# tests/cli/lib.sh - helpers for the black-box tests of the memprof command.
# Sourced (not run) by tests/cli/*.sh, under bash with 'set -u'.
#
# Environment (set by AM_TESTS_ENVIRONMENT; defaults for running by hand):
#   MEMPROF        absolute path of the memprof binary
#   top_srcdir     the source tree;  top_builddir  the build tree
#   SQLITE3_SHELL  the sqlite3 shell, or empty when configure found none
#
# After sourcing: $TEST_NAME, $TMP (a fresh directory, removed on exit),
# run/expect_* helpers that record failures, and finish (exit 0 or 1).
# Checks do not stop the test: every failure is reported, then finish exits 1.

TEST_NAME=$(basename "$0" .sh)
_lib_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top_srcdir=${top_srcdir:-$(cd "$_lib_dir/../.." && pwd)}
top_builddir=${top_builddir:-$top_srcdir}
MEMPROF=${MEMPROF:-$top_builddir/memprof}
if [ -z "${SQLITE3_SHELL+set}" ]; then
	SQLITE3_SHELL=$(command -v sqlite3 || true)
fi
DATA=$top_srcdir/tests/cli/data

n_failed=0
n_checks=0
STEP=""       # what the test is doing now, shown in failure messages
LAST_CMD=""   # the last command given to run
status=0      # its exit status
OUT=""        # files holding its stdout and stderr
ERR=""

# --- messages -----------------------------------------------------------------

say() {
	printf '%s: %s\n' "$TEST_NAME" "$*"
}

# fail MESSAGE: record a failed check (the test goes on).
fail() {
	n_failed=$((n_failed + 1))
	printf '%s: FAIL%s: %s\n' "$TEST_NAME" "${STEP:+ [$STEP]}" "$*"
	if [ -n "$LAST_CMD" ]; then
		printf '    command: %s (exit status %s)\n' "$LAST_CMD" "$status"
		if [ -s "$ERR" ]; then
			printf '    stderr:\n'
			sed -n '1,12s/^/      | /p' "$ERR"
		fi
		if [ -s "$OUT" ]; then
			printf '    stdout:\n'
			sed -n '1,12s/^/      | /p' "$OUT"
		fi
	fi
}

pass() {
	n_checks=$((n_checks + 1))
}

# die MESSAGE: the test cannot go on (a broken setup, not a check).
die() {
	printf '%s: ERROR: %s\n' "$TEST_NAME" "$*"
	exit 99
}

# skip REASON: skip the whole test (exit 77).
skip() {
	printf '%s: SKIP: %s\n' "$TEST_NAME" "$*"
	exit 77
}

# step TEXT: name what follows, for failure messages.
step() {
	STEP=$*
}

# finish: exit 1 if any check failed, else 0.
finish() {
	STEP=""
	if [ "$n_failed" -gt 0 ]; then
		say "$n_failed check(s) failed"
		exit 1
	fi
	say "all $n_checks checks passed"
	exit 0
}

# --- the temporary directory ----------------------------------------------------

_cleanup() {
	if [ -n "${TMP:-}" ] && [ -d "$TMP" ]; then
		chmod -R u+rwx "$TMP" 2>/dev/null
		rm -rf "$TMP"
	fi
}

TMP=$(mktemp -d "${TMPDIR:-/tmp}/memprof-$TEST_NAME.XXXXXX") || die "mktemp -d failed"
trap _cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
OUT=$TMP/.stdout
ERR=$TMP/.stderr

[ -x "$MEMPROF" ] || die "no memprof binary at '$MEMPROF' (build it with 'make memprof')"

# --- running commands -----------------------------------------------------------

# run CMD [ARG...]: run a command, keeping its stdout in $OUT, stderr in $ERR
# and its exit status in $status.  Standard input is /dev/null.
run() {
	LAST_CMD=$*
	"$@" >"$OUT" 2>"$ERR" </dev/null
	status=$?
}

# run_stdin FILE CMD [ARG...]: the same with standard input read from FILE.
run_stdin() {
	local in=$1
	shift
	LAST_CMD="$* < $in"
	"$@" >"$OUT" 2>"$ERR" <"$in"
	status=$?
}

# mp ARG...: run memprof (shorthand for run "$MEMPROF" ARG...).
mp() {
	run "$MEMPROF" "$@"
	LAST_CMD="memprof $*"
}

# --- checks -----------------------------------------------------------------------

expect_status() {
	if [ "$status" -eq "$1" ]; then
		pass
	else
		fail "expected exit status $1, got $status"
	fi
	if [ "$status" -gt 128 ] && [ "$status" -lt 160 ]; then
		fail "killed by signal $((status - 128)) (a crash)"
	fi
}

_contains() { # FILE TEXT
	grep -qF -e "$2" "$1"
}

expect_stderr_contains() {
	if _contains "$ERR" "$1"; then pass; else fail "stderr does not contain: $1"; fi
}

expect_stderr_not_contains() {
	if _contains "$ERR" "$1"; then fail "stderr contains: $1"; else pass; fi
}

expect_stdout_contains() {
	if _contains "$OUT" "$1"; then pass; else fail "stdout does not contain: $1"; fi
}

expect_stdout_not_contains() {
	if _contains "$OUT" "$1"; then fail "stdout contains: $1"; else pass; fi
}

# expect_stdout_line TEXT: some line of stdout is exactly TEXT.
expect_stdout_line() {
	if grep -qxF -e "$1" "$OUT"; then pass; else fail "no stdout line is exactly: $1"; fi
}

# expect_stdout_match ERE: some line of stdout matches the extended regex.
expect_stdout_match() {
	if grep -qE -e "$1" "$OUT"; then pass; else fail "no stdout line matches: $1"; fi
}

expect_stdout_empty() {
	if [ -s "$OUT" ]; then fail "stdout is not empty"; else pass; fi
}

expect_stderr_empty() {
	if [ -s "$ERR" ]; then fail "stderr is not empty"; else pass; fi
}

# expect_one_message PREFIX: stderr holds exactly one line starting with
# PREFIX (e.g. "memprof import: "), and nothing else but "hint: " lines.
expect_one_message() {
	local n_msg n_hint n_all
	n_msg=$(grep -c -F -e "$1" "$ERR")
	n_hint=$(grep -c '^hint: ' "$ERR")
	n_all=$(grep -c '' "$ERR")
	if [ "$n_msg" -eq 1 ] && [ "$(grep -c -e "^$1" "$ERR")" -eq 1 ] &&
		[ "$n_all" -eq $((n_msg + n_hint)) ]; then
		pass
	else
		fail "expected one message line starting '$1' (plus hint lines), got $n_all line(s)"
	fi
}

expect_file_present() {
	if [ -f "$1" ]; then pass; else fail "file '$1' does not exist"; fi
}

expect_file_absent() {
	if [ -e "$1" ] || [ -L "$1" ]; then fail "'$1' exists but should not"; else pass; fi
}

# expect_same_file EXPECTED ACTUAL: byte-for-byte equal.
expect_same_file() {
	if [ ! -f "$1" ]; then
		fail "'$1' does not exist"
	elif [ ! -f "$2" ]; then
		fail "'$2' does not exist"
	elif cmp -s "$1" "$2"; then
		pass
	else
		fail "'$2' differs from '$1':"
		diff -u "$1" "$2" | sed -n '1,30s/^/      /p'
	fi
}

# expect_eq ACTUAL EXPECTED WHAT
expect_eq() {
	if [ "$1" = "$2" ]; then pass; else fail "$3: expected '$2', got '$1'"; fi
}

# expect_no_temp_files DIR: no *.tmp-* file was left in DIR.
expect_no_temp_files() {
	local left
	left=$(find "$1" -maxdepth 1 -name '*.tmp-*' 2>/dev/null)
	if [ -z "$left" ]; then pass; else fail "temporary file(s) left in '$1': $(echo $left)"; fi
}

# expect_dir_empty DIR: nothing at all in DIR.
expect_dir_empty() {
	local left
	left=$(ls -A "$1" 2>/dev/null)
	if [ -z "$left" ]; then pass; else fail "'$1' should be empty but holds: $(echo $left)"; fi
}

# --- memprof record ------------------------------------------------------------------

# use_inject_library: export MEMPROF_INJECT as the injected library built
# here, or, when this build has none (no CUPTI), as an empty stand-in file:
# fine for commands that never initialise CUDA, where nothing loads it.
use_inject_library() {
	local f
	for f in "$top_builddir/.libs/libmemprof-inject.so" \
		"$top_builddir/src/capture/.libs/libmemprof-inject.so"; do
		if [ -f "$f" ]; then
			export MEMPROF_INJECT=$f
			return
		fi
	done
	: >"$TMP/libmemprof-inject.so"
	export MEMPROF_INJECT=$TMP/libmemprof-inject.so
}

# --- sqlite3 ------------------------------------------------------------------------

have_sqlite3() {
	[ -n "$SQLITE3_SHELL" ]
}

# sql DB QUERY: print the result of QUERY on DB (empty on error).
sql() {
	"$SQLITE3_SHELL" -batch "$1" "$2" 2>/dev/null
}

# check_json FILE PYTHON: run PYTHON (python3) with j the parsed FILE (what it
# prints is shown in the log), notes
# its "notes" joined by " | " (when it has them) and near(a, b) for ratios;
# a failed assert fails the check with the assert's message.
check_json() {
	local file=$1 code=$2 msg
	if msg=$(python3 -c "
import json, sys
j = json.load(open(sys.argv[1]))
notes = ' | '.join(j.get('notes', [])) if isinstance(j, dict) else ''
def near(a, b): return abs(a - b) < 1e-9
$code
" "$file" 2>&1); then
		pass
		[ -z "$msg" ] || printf '%s\n' "$msg" | sed "s/^/$TEST_NAME: /"
	else
		fail "JSON check failed: $(printf '%s' "$msg" | tail -3)"
	fi
}
