#!/bin/bash
# demo.sh - what 'make demo' does: import the sample trace, describe it,
# analyze it, and export it again.
set -u
. "$(dirname "$0")/lib.sh"

DEMO=$top_srcdir/samples/traces/demo.csv
[ -f "$DEMO" ] || skip "no sample trace at '$DEMO' yet"

W=$TMP/work
mkdir "$W" || die "mkdir $W"
cd "$W" || die "cd $W"

step "import the demo trace"
mp import -o demo.db "$DEMO"
expect_status 0
expect_stdout_match "^wrote 'demo\.db': [1-9][0-9]* events, "
expect_stderr_empty
expect_file_present demo.db
n_events=$(sed -n "s/^wrote 'demo\.db': \([0-9]*\) events.*/\1/p" "$OUT")

step "info on the demo trace"
mp info demo.db
expect_status 0
expect_stderr_empty
expect_stdout_match '^schema +v3$'
expect_stdout_match "^events +${n_events:-x}( |\$)"
expect_stdout_match '^peak live +.*\([1-9][0-9]* B\)'

step "info --json on the demo trace"
mp info --json demo.db
expect_status 0
expect_stdout_contains '"memprof_info_version":'

step "analyze the demo trace"
mp analyze --top=3 demo.db
expect_status 0
expect_stderr_empty
expect_stdout_match '^  peak live +[0-9.]+ [KMG]iB +at '
expect_stdout_contains 'fragmentation figures (segments model)'
expect_stdout_match '^ +bytes +share +blocks +by stack$'

step "replay the demo trace against every pool (sim), as make demo does"
mp replay --backend=sim demo.db
expect_status 0
expect_stdout_match '^  [0-9]+\*? +caching +[0-9.]+ [KMG]iB'
expect_stdout_match '^  [0-9]+\*? +planned +[0-9.]+ [KMG]iB'
expect_stdout_match '^  [0-9]+\*? +direct +[0-9.]+ [KMG]iB'
expect_stdout_contains '(modelled)'

step "export the demo trace"
mp export demo.db
expect_status 0
expect_stdout_match '^ts_ns,op,id,size,'
cp "$OUT" demo.out.csv

step "the exported demo trace imports to the same events"
mp import -o again.db demo.out.csv
expect_status 0
mp export again.db
cp "$OUT" again.csv
expect_same_file demo.out.csv again.csv

finish
