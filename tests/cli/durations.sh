#!/bin/bash
# durations.sh - every duration option takes a unit (ns, us, ms, s, min, h)
# and refuses a bare number other than 0 with a suggestion (issue 22, item
# 18): analyze --churn-window and --at=+DURATION here, watch --interval in
# watch-fake-nvml.sh, the planned pool's plan-time in test_pool_planned.
# Pool options are listed with hyphens; underscores are still accepted.
set -u
. "$(dirname "$0")/lib.sh"

W=$TMP/work
mkdir "$W" || die "mkdir $W"
cd "$W" || die "cd $W"

HEADER=ts_ns,op,id,size,requested,address,device,stream,pid,phase,api,device_free,thread,stack
# a block freed after 400 us and one freed after 3 ms
printf '%s\n' "$HEADER" \
	"0,alloc,1,1048576,1048576,0x100000,0,0,1,,,,,f@a.py:1" \
	"400000,free,1,1048576,1048576,0x100000,0,0,1,,,,," \
	"500000,alloc,2,2097152,2097152,0x200000,0,0,1,,,,,g@a.py:2" \
	"3500000,free,2,2097152,2097152,0x200000,0,0,1,,,,," >d.csv
mp import -q -o d.db d.csv
[ "$status" -eq 0 ] || die "cannot import d.csv: $(cat "$ERR")"

step "--churn-window takes a unit"
mp analyze --churn-window=500 d.db
expect_status 2
expect_stderr_contains "memprof analyze: invalid --churn-window '500': a duration needs a unit (ns, us, ms, s, min or h): did you mean '500ns'?"
mp analyze --churn-window=500us d.db
expect_status 0
expect_stdout_contains "churn (freed within 500 us"
mp analyze --churn-window=5ms d.db
expect_status 0
expect_stdout_contains "churn (freed within 5 ms"
mp analyze --churn-window=0 d.db
expect_status 0
mp analyze --churn-window=soon d.db
expect_status 2
expect_stderr_contains "give a duration with its unit"

step "--at=+DURATION takes a unit"
mp analyze --at=+450 d.db
expect_status 2
expect_stderr_contains "did you mean '+450ns'?"
mp analyze --at=+450us d.db
expect_status 0
expect_stdout_contains "2.00 MiB"
mp analyze --at=450000 d.db
expect_status 0

step "pool options: hyphens listed, both spellings accepted"
mp replay --list-pools
expect_status 0
expect_stdout_contains "--max-split-size=BYTES"
expect_stdout_contains "--plan-time=DURATION"
expect_stdout_not_contains "--max_split_size"
for opt in --plan-time=50ms --plan_time=50ms --plan-time=0.05; do
	mp replay --pool=planned --backend=sim --no-save "$opt" d.db
	expect_status 0
done
mp replay --pool=planned --backend=sim --no-save --plan-time=soon d.db
expect_status 1
expect_stderr_contains "plan_time"

finish
