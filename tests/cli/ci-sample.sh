#!/bin/bash
# ci-sample.sh - samples/ci/: memprof-gate.sh end to end (a regression fails
# with exit 3, a JUnit failure and Markdown naming the threshold; a change
# within the thresholds passes; the baseline refresh; no baseline; budgets;
# replayed pools; the record path through a stand-in memprof; errors), and
# the GitHub and GitLab files: they parse, every memprof command and option
# they use exists, every script they name is there.
set -u
. "$(dirname "$0")/lib.sh"

GATE=$top_srcdir/samples/ci/memprof-gate.sh
GH=$top_srcdir/samples/ci/github/memprof-gate.yml
GL=$top_srcdir/samples/ci/gitlab/memprof-gate.gitlab-ci.yml
XSD=$top_srcdir/tests/data/junit-10.xsd
DEMO=$top_srcdir/samples/traces/demo.csv
W=$TMP/work
mkdir "$W" || die "mkdir $W"
cd "$W" || die "cd $W"
export MEMPROF # the script's memprof
unset MEMPROF_GATE_TRACE MEMPROF_GATE_IMPORT MEMPROF_GATE_RECORD MEMPROF_GATE_BASELINE \
	MEMPROF_GATE_THRESHOLDS MEMPROF_GATE_BUDGETS MEMPROF_GATE_REQUIRE_BASELINE \
	MEMPROF_GATE_REPLAY MEMPROF_GATE_OUT MEMPROF_GATE_UPDATE

# head.csv: the demo with one more block of 100 MiB, never freed: peak live
# +100 MiB (+14.16%).
{
	head -n 4 "$DEMO"
	echo '1000000,alloc,9999,104857600,104857600,0x7e0000000000,0,7,4242,,,,main@train.py:99;cache_activations@train.py:12'
	tail -n +5 "$DEMO"
} >head.csv

# expect_junit FILE N_FAILURES: valid against the JUnit schema (when xmllint
# is here) with that many failures.
expect_junit() {
	expect_file_present "$1"
	if command -v xmllint >/dev/null && [ -f "$XSD" ]; then
		run xmllint --noout --schema "$XSD" "$1"
		expect_status 0
	fi
	expect_eq "$(grep -c '<failure' "$1")" "$2" "failures in $(basename "$1")"
}

# --- the default branch: a new baseline ------------------------------------------------
step "--update-baseline"
run "$GATE" --import="$DEMO" --baseline=store/baseline.db --out-dir=main
expect_status 0
expect_file_absent store/baseline.db
expect_eq "$(cat main/status)" 0 "status file"
expect_stderr_contains "memprof-gate: no baseline 'store/baseline.db'"
run "$GATE" --import="$DEMO" --baseline=store/baseline.db --out-dir=main --update-baseline
expect_status 0
expect_stderr_contains "baseline 'store/baseline.db' updated"
expect_file_present store/baseline.db
expect_no_temp_files store
run grep -q 'baseline updated' main/summary.md
expect_status 0
mp info --json store/baseline.db
check_json "$OUT" 'assert j["summary"]["peak_live_bytes"] == 740507648'

# --- a regression: exit 3, a JUnit failure, Markdown naming the threshold --------------
step "a regression fails the gate"
run "$GATE" --import=head.csv --baseline=store/baseline.db --out-dir=pr \
	--thresholds="--max-peak-increase=2%"
expect_status 3
expect_stderr_contains "memprof-gate: FAILED: a threshold was exceeded"
expect_stdout_contains "EXCEEDED"
expect_eq "$(cat pr/status)" 3 "status file"
expect_junit pr/junit.xml 1
run grep -F -e '--max-peak-increase=2%' pr/summary.md
expect_status 0
expect_stdout_contains "exceeded"
run grep -F 'cache\_activations (train.py:12)' pr/summary.md
expect_status 0
check_json pr/diff.json 'print(sorted(j))'
expect_file_present pr/diff.txt
expect_file_present pr/trace.db

step "the same change within a looser threshold passes"
run "$GATE" --import=head.csv --baseline=store/baseline.db --out-dir=pr \
	--thresholds="--max-peak-increase=15%"
expect_status 0
expect_stderr_contains "memprof-gate: passed"
expect_eq "$(cat pr/status)" 0 "status file"
expect_junit pr/junit.xml 0

step "no change passes with the default threshold"
mp import -q -o same.db "$DEMO"
run "$GATE" --trace=same.db --baseline=store/baseline.db --out-dir=same
expect_status 0
expect_junit same/junit.xml 0
expect_file_present same.db

step "the same through environment variables"
run env MEMPROF_GATE_IMPORT=head.csv MEMPROF_GATE_BASELINE=store/baseline.db \
	MEMPROF_GATE_OUT=envout MEMPROF_GATE_THRESHOLDS="--max-peak-increase=14% --max-free-share=0.5" "$GATE"
expect_status 3
expect_junit envout/junit.xml 1
run grep -F -e '--max-peak-increase=14%' envout/summary.md
expect_status 0

# --- no baseline ------------------------------------------------------------------------
step "no baseline: the gate passes with a note"
run "$GATE" --import=head.csv --baseline=missing.db --out-dir=nobase
expect_status 0
run grep -q 'no baseline yet' nobase/summary.md
expect_status 0

step "no baseline: --require-baseline is an error"
run "$GATE" --import=head.csv --baseline=missing.db --out-dir=nobase --require-baseline
expect_status 1
expect_stderr_contains "no baseline 'missing.db'"
expect_eq "$(cat nobase/status)" 1 "status file"

step "no baseline: the budgets instead"
run "$GATE" --import=head.csv --baseline=missing.db --out-dir=budget --budgets="--max-peak=800MiB"
expect_status 3
expect_junit budget/junit.xml 1
run grep -F -e '--max-peak=800MiB' budget/summary.md
expect_status 0
run "$GATE" --import=head.csv --baseline=missing.db --out-dir=budget --budgets="--max-peak=900MiB"
expect_status 0

# --- replayed pools ---------------------------------------------------------------------
step "--replay and --max-pool-increase"
run "$GATE" --import="$DEMO" --baseline=pools/baseline.db --out-dir=pmain --replay=caching \
	--update-baseline
expect_status 0
run "$GATE" --import=head.csv --baseline=pools/baseline.db --out-dir=ppr --replay=caching \
	--thresholds="--max-pool-increase=1%"
expect_status 3
run grep -F -e '--max-pool-increase=1%' ppr/summary.md
expect_status 0
expect_junit ppr/junit.xml 1

# --- recording, through a stand-in memprof (no GPU needed) ------------------------------
step "-- COMMAND records with memprof record"
cat >fake-memprof <<EOF
#!/bin/bash
# stands in for memprof record: runs the command, then imports head.csv
if [ "\$1" = record ]; then
	printf '%s\n' "\$*" >"$W/record-args"
	shift
	while [ "\$1" != "--" ]; do [ "\$1" = -o ] && out=\$2; shift; done
	shift
	"\$@" || exit \$?
	exec "$MEMPROF" import -q -f -o "\$out" "$W/head.csv"
fi
exec "$MEMPROF" "\$@"
EOF
chmod +x fake-memprof
run "$GATE" --memprof="$W/fake-memprof" --baseline=store/baseline.db --out-dir=rec \
	-- sh -c 'echo training >"$0"' "$W/ran"
expect_status 3
expect_eq "$(cat record-args 2>/dev/null)" "record -q -f -o rec/trace.db -- sh -c echo training >\"\$0\" $W/ran" "memprof record's arguments"
expect_eq "$(cat ran 2>/dev/null)" training "the recorded command ran"
expect_junit rec/junit.xml 1
run env MEMPROF="$W/fake-memprof" MEMPROF_GATE_RECORD="exit 7" "$GATE" --baseline=store/baseline.db \
	--out-dir=rec
expect_status 1
expect_stderr_contains "the recorded command failed (exit status 7)"

# --- errors -----------------------------------------------------------------------------
step "usage errors"
run "$GATE" --baseline=store/baseline.db
expect_status 2
expect_stderr_contains "give one of --trace, --import or -- COMMAND"
run "$GATE" --trace=same.db --import=head.csv
expect_status 2
run "$GATE" --bogus
expect_status 2
expect_stderr_contains "unknown option '--bogus'"
run "$GATE" --help
expect_status 0
expect_stdout_contains "--update-baseline"

step "errors pass through as 1"
run "$GATE" --memprof=/nonexistent/memprof --trace=same.db
expect_status 1
printf 'not a trace\n' >bad.db
run "$GATE" --trace=same.db --baseline=bad.db --out-dir=bad
expect_status 1
expect_eq "$(cat bad/status)" 1 "status file"
run "$GATE" --import=no-such-file.pickle --out-dir=bad
expect_status 1
run "$GATE" --trace=same.db --baseline=store/baseline.db --thresholds=--max-peak-increase=lots \
	--out-dir=bad
expect_status 2

# --- the CI files -----------------------------------------------------------------------
step "the GitHub and GitLab files"
if python3 -c 'import yaml' 2>/dev/null; then
	cat >ci_yaml.py <<'EOF'
import sys, yaml
gh = yaml.safe_load(open(sys.argv[1]))
gl = yaml.safe_load(open(sys.argv[2]))
on = gh.get("on", gh.get(True))           # YAML 1.1 reads the key on as true
assert "pull_request" in on and "push" in on, on
steps = gh["jobs"]["memory-gate"]["steps"]
assert all(("run" in s) != ("uses" in s) for s in steps), "a step needs run or uses"
uses = {s["uses"].split("@")[0] for s in steps if "uses" in s}
assert {"actions/checkout", "actions/cache/restore", "actions/cache/save",
        "actions/upload-artifact", "mikepenz/action-junit-report"} <= uses, uses
runs = [s["run"] for s in steps if "run" in s]
assert any("GITHUB_STEP_SUMMARY" in r for r in runs) and any("gh pr comment" in r for r in runs)
jobs = {k: v for k, v in gl.items() if isinstance(v, dict) and not k.startswith(".")
        and k not in ("variables", "default", "workflow", "include", "stages")}
assert set(jobs) == {"memprof-gate", "memprof-baseline"}, set(jobs)
for name, job in jobs.items():
    assert job["extends"] in gl and "script" in job, name
assert gl["memprof-gate"]["artifacts"]["reports"]["junit"] == "memprof-gate/junit.xml"
assert gl["memprof-gate"]["artifacts"]["when"] == "always"
# what the files run (CMD) and the values they set (VAR), a line each
for s in steps:
    for line in s.get("run", "").splitlines():
        print("CMD", line)
for k, v in list(gh["env"].items()) + list(gl["variables"].items()):
    print("VAR", k, v)
for name, job in gl.items():
    if isinstance(job, dict):
        for key in ("before_script", "script"):
            for item in job.get(key, []):
                for line in item.splitlines():
                    print("CMD", line)
EOF
	run python3 ci_yaml.py "$GH" "$GL"
	expect_status 0
	cp "$OUT" ci-texts
	# every memprof command the files run exists
	subs=$( (grep '^CMD ' ci-texts | grep -oE '(^|[[:space:];&|(])memprof +[a-z][a-z-]*' |
		sed 's/.*memprof *//'
		grep -ohE '"\$MEMPROF" +[a-z][a-z-]*' "$GATE" | sed 's/.*" *//') | sort -u)
	expect_eq "$(echo $subs)" "check diff import info record replay" "memprof commands the samples run"
	for sub in $subs; do
		mp "$sub" --help
		expect_status 0
	done
	mp --version
	expect_status 0
	# every memprof diff and check option they set exists (the values too)
	n_opts=0
	for opt in $(grep -oE -e '--max-[a-z-]+=[^ "]+' ci-texts | sort -u); do
		n_opts=$((n_opts + 1))
		mp diff "$opt" --format=json -o "$W/opt-$n_opts.json" "$W/same.db" "$W/same.db"
		case $status in 0 | 3) pass ;; *) fail "memprof diff does not take $opt" ;; esac
	done
	expect_eq "$n_opts" 3 "thresholds set in the two files"
	# every script and file they name is there
	for path in $(grep -oE '(\./)?(samples|tests)/[A-Za-z0-9_./-]+|\./bootstrap' ci-texts | sort -u); do
		expect_file_present "$top_srcdir/${path#./}"
	done
	[ -x "$GATE" ] && pass || fail "memprof-gate.sh is not executable"
	run grep -c '^CMD .*samples/ci/memprof-gate.sh' ci-texts
	expect_eq "$(cat "$OUT")" 4 "lines calling memprof-gate.sh in the two files"
else
	say "PyYAML is missing (Debian package python3-yaml): the YAML checks are skipped"
fi

finish
