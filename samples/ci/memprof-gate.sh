#!/bin/bash
# memprof-gate.sh - the memory regression gate of a CI job, the one script
# the GitHub Actions workflow and the GitLab CI job in samples/ci/ run.
# Gets the trace of this change (records a command, imports a file, or
# takes a trace), compares it with the baseline through 'memprof diff' and
# leaves the text, Markdown, JSON and JUnit results in one directory for the
# CI system to publish; exits with memprof diff's status (3: a threshold
# was exceeded).  On the default branch, --update-baseline stores the trace
# as the next baseline instead.  See samples/ci/README.md.
set -u

usage() {
	cat <<'EOF'
usage: memprof-gate.sh [options] [-- COMMAND [ARGS...]]

The trace of this change (one of; environment variable in brackets):
  --trace=FILE        a memprof trace database              [MEMPROF_GATE_TRACE]
  --import=FILE       a file 'memprof import' reads, such as a PyTorch
                      snapshot pickle                          [MEMPROF_GATE_IMPORT]
  -- COMMAND ARGS     record COMMAND with 'memprof record' (a GPU runner)
                      [MEMPROF_GATE_RECORD: a shell command line]

The gate:
  --baseline=FILE     the baseline trace (default memprof-baseline.db)
                                                             [MEMPROF_GATE_BASELINE]
  --thresholds=OPTS   'memprof diff' thresholds, one word each
                      (default --max-peak-increase=2%)     [MEMPROF_GATE_THRESHOLDS]
  --budgets=OPTS      'memprof check' budgets, used when there is no baseline
                      (--max-peak=20GiB ...)                 [MEMPROF_GATE_BUDGETS]
  --require-baseline  a missing baseline is an error (exit 1); otherwise
                      the gate passes with a note        [MEMPROF_GATE_REQUIRE_BASELINE=1]
  --replay=POOLS      replay these pools into the trace first, for
                      --max-pool-increase (memprof replay --pool=POOLS)
                                                               [MEMPROF_GATE_REPLAY]
  --out-dir=DIR       where results go (default memprof-gate)  [MEMPROF_GATE_OUT]
  --update-baseline   copy the trace to the baseline and exit 0: for the
                      default branch                     [MEMPROF_GATE_UPDATE=1]
  --memprof=PATH      the memprof command (default memprof)          [MEMPROF]
  -h, --help          show this help

In DIR: trace.db (the trace gated), summary.md (the Markdown to publish),
diff.txt, diff.json, junit.xml, and status (the exit status).
Exit status: 0 pass, 1 error, 2 usage, 3 a threshold or budget exceeded.
EOF
}

say() {
	printf 'memprof-gate: %s\n' "$*" >&2
}

# fail STATUS MESSAGE: the message, the status file, and exit
fail() {
	local st=$1
	shift
	say "$*"
	[ -d "${OUT_DIR:-}" ] && printf '%s\n' "$st" >"$OUT_DIR/status"
	exit "$st"
}

TRACE=${MEMPROF_GATE_TRACE:-}
IMPORT=${MEMPROF_GATE_IMPORT:-}
RECORD=${MEMPROF_GATE_RECORD:-}
BASELINE=${MEMPROF_GATE_BASELINE:-memprof-baseline.db}
THRESHOLDS=${MEMPROF_GATE_THRESHOLDS:---max-peak-increase=2%}
BUDGETS=${MEMPROF_GATE_BUDGETS:-}
REQUIRE_BASELINE=${MEMPROF_GATE_REQUIRE_BASELINE:-0}
REPLAY=${MEMPROF_GATE_REPLAY:-}
OUT_DIR=${MEMPROF_GATE_OUT:-memprof-gate}
UPDATE=${MEMPROF_GATE_UPDATE:-0}
MEMPROF=${MEMPROF:-memprof}
RECORD_ARGV=()

while [ $# -gt 0 ]; do
	case $1 in
	--trace=*) TRACE=${1#*=} ;;
	--import=*) IMPORT=${1#*=} ;;
	--baseline=*) BASELINE=${1#*=} ;;
	--thresholds=*) THRESHOLDS=${1#*=} ;;
	--budgets=*) BUDGETS=${1#*=} ;;
	--require-baseline) REQUIRE_BASELINE=1 ;;
	--replay=*) REPLAY=${1#*=} ;;
	--out-dir=*) OUT_DIR=${1#*=} ;;
	--update-baseline) UPDATE=1 ;;
	--memprof=*) MEMPROF=${1#*=} ;;
	-h | --help)
		usage
		exit 0
		;;
	--)
		shift
		RECORD_ARGV=("$@")
		break
		;;
	*)
		say "unknown option '$1'"
		usage >&2
		exit 2
		;;
	esac
	shift
done

n_sources=0
for v in "$TRACE" "$IMPORT" "$RECORD"; do
	[ -n "$v" ] && n_sources=$((n_sources + 1))
done
[ ${#RECORD_ARGV[@]} -gt 0 ] && n_sources=$((n_sources + 1))
if [ "$n_sources" -ne 1 ]; then
	say "give one of --trace, --import or -- COMMAND (or their environment variables)"
	usage >&2
	exit 2
fi
command -v "$MEMPROF" >/dev/null 2>&1 || fail 1 "no memprof command '$MEMPROF': install memprof or give --memprof=PATH"
mkdir -p "$OUT_DIR" || fail 1 "cannot create the output directory '$OUT_DIR'"
rm -f "$OUT_DIR/status" "$OUT_DIR/summary.md" "$OUT_DIR/diff.txt" "$OUT_DIR/diff.json" \
	"$OUT_DIR/junit.xml"
HEAD=$OUT_DIR/trace.db

# --- the trace of this change ---------------------------------------------------------
if [ -n "$TRACE" ]; then
	[ -f "$TRACE" ] || fail 1 "no trace '$TRACE'"
	if [ "$(cd "$(dirname "$TRACE")" && pwd)/$(basename "$TRACE")" != \
		"$(cd "$OUT_DIR" && pwd)/trace.db" ]; then
		cp "$TRACE" "$HEAD" || fail 1 "cannot copy '$TRACE' to '$HEAD'"
	fi
elif [ -n "$IMPORT" ]; then
	"$MEMPROF" import -q -f -o "$HEAD" "$IMPORT" || fail 1 "memprof import of '$IMPORT' failed"
else
	if [ -n "$RECORD" ]; then
		RECORD_ARGV=(sh -c "$RECORD")
	fi
	"$MEMPROF" record -q -f -o "$HEAD" -- "${RECORD_ARGV[@]}"
	st=$?
	[ "$st" -eq 0 ] || fail 1 "the recorded command failed (exit status $st): no gate"
	[ -f "$HEAD" ] || fail 1 "memprof record wrote no trace '$HEAD'"
fi
if [ -n "$REPLAY" ]; then
	"$MEMPROF" replay "$HEAD" --pool="$REPLAY" >"$OUT_DIR/replay.txt" ||
		fail 1 "memprof replay --pool=$REPLAY failed (see $OUT_DIR/replay.txt)"
fi

# --- the default branch: this trace becomes the baseline ---------------------------------
if [ "$UPDATE" = 1 ]; then
	mkdir -p "$(dirname "$BASELINE")" && cp "$HEAD" "$BASELINE.tmp.$$" &&
		mv -f "$BASELINE.tmp.$$" "$BASELINE" || fail 1 "cannot write the baseline '$BASELINE'"
	"$MEMPROF" info "$BASELINE" >"$OUT_DIR/diff.txt"
	{
		printf '### memprof: baseline updated\n\n'
		printf 'This trace is now the baseline that changes are compared with.\n\n```\n'
		cat "$OUT_DIR/diff.txt"
		printf '```\n'
	} >"$OUT_DIR/summary.md"
	say "baseline '$BASELINE' updated"
	printf '0\n' >"$OUT_DIR/status"
	exit 0
fi

# --- the gate ---------------------------------------------------------------------------
outputs=(--force --text="$OUT_DIR/diff.txt" --md="$OUT_DIR/summary.md" --json="$OUT_DIR/diff.json"
	--junit="$OUT_DIR/junit.xml")
if [ -f "$BASELINE" ]; then
	# shellcheck disable=SC2086 # thresholds are words on purpose
	"$MEMPROF" diff "$BASELINE" "$HEAD" $THRESHOLDS "${outputs[@]}"
	st=$?
elif [ "$REQUIRE_BASELINE" = 1 ]; then
	fail 1 "no baseline '$BASELINE' (--require-baseline)"
elif [ -n "$BUDGETS" ]; then
	say "no baseline '$BASELINE': checking the budgets instead"
	# shellcheck disable=SC2086
	"$MEMPROF" check "$HEAD" $BUDGETS "${outputs[@]}"
	st=$?
else
	say "no baseline '$BASELINE': nothing to compare with, the gate passes"
	printf '### memprof: no baseline yet\n\nNothing to compare with: the gate passes. The default branch'"'"'s job stores a baseline (`memprof-gate.sh --update-baseline`).\n' \
		>"$OUT_DIR/summary.md"
	st=0
fi
case $st in
0) say "passed" ;;
3) say "FAILED: a threshold was exceeded (see $OUT_DIR/summary.md)" ;;
*) say "error: memprof exited with status $st" ;;
esac
printf '%s\n' "$st" >"$OUT_DIR/status"
exit "$st"
