#!/bin/bash
# watch-fake-nvml.sh - 'memprof watch' against a fake NVML
# (tests/unit/fake_libnvml.c, loaded through MEMPROF_LIBNVML) scripted with a
# memory curve: the samples and their values, --count, csv, the watched
# process exiting, an unknown pid, no NVML at all, and usage errors.
set -u
. "$(dirname "$0")/lib.sh"

FAKE=$top_builddir/tests/unit/.libs/fake_libnvml.so
[ -f "$FAKE" ] || die "no fake NVML at '$FAKE' (make check builds it)"
MIB=1048576
GIB16=17179869184
CONTEXT=$((512 * MIB)) # the fake counts 512 MiB used on each device besides processes

sleep 60 </dev/null >/dev/null 2>&1 &
target=$!
trap 'kill $target 2>/dev/null; _cleanup' EXIT

export MEMPROF_LIBNVML=$FAKE FAKE_NVML_PID=$target
export FAKE_NVML_CURVE0=$((100 * MIB)),$((300 * MIB)),na,-,$((200 * MIB))

step "five samples of the curve"
mp watch --pid "$target" --interval=10ms --count=5 -o "$TMP/w.txt"
expect_status 0
expect_eq "$(head -n 1 "$TMP/w.txt")" "# memprof watch: GPU memory of pid $target as NVML reports it, every 10 ms: a coarse curve with no allocations, addresses or call stacks, and it includes the CUDA context; record the job with memprof record to see allocations" "header line"
expect_eq "$(grep -c '^# device 0: Fake GPU 0$' "$TMP/w.txt")" 1 "device line"
grep -v '^#' "$TMP/w.txt" | awk '{ print $2, $3, $4, $5 }' >"$TMP/got"
cat >"$TMP/want" <<EOT
0 $((100 * MIB)) $((CONTEXT + 100 * MIB)) $GIB16
0 $((300 * MIB)) $((CONTEXT + 300 * MIB)) $GIB16
0 n/a $CONTEXT $GIB16
0 0 $CONTEXT $GIB16
0 $((200 * MIB)) $((CONTEXT + 200 * MIB)) $GIB16
EOT
expect_same_file "$TMP/want" "$TMP/got"
# Times are seconds since the start, with milliseconds, and grow (how far
# the first is from 0 depends on the machine's load: not checked).
awk '!/^#/ { print $1 }' "$TMP/w.txt" >"$TMP/times"
expect_eq "$(grep -c -v -E '^[0-9]+\.[0-9]{3}$' "$TMP/times")" "0" "times as seconds.milliseconds"
expect_eq "$(sort -n "$TMP/times" | tr '\n' ' ')" "$(tr '\n' ' ' <"$TMP/times")" "times in order"

step "csv, two devices, more processes than memprof's first array"
FAKE_NVML_DEVICES=2 FAKE_NVML_OTHERS=40 FAKE_NVML_CURVE1=$((7 * MIB)) \
	mp watch --pid "$target" --interval=10ms --count=2 --format=csv
expect_status 0
cut -d, -f2- "$OUT" >"$TMP/got"
cat >"$TMP/want" <<EOT
device,pid_bytes,device_used_bytes,device_total_bytes
0,$((100 * MIB)),$((CONTEXT + 40 * MIB + 100 * MIB)),$GIB16
1,$((7 * MIB)),$((CONTEXT + 40 * MIB + 7 * MIB)),$((2 * GIB16))
0,$((300 * MIB)),$((CONTEXT + 40 * MIB + 300 * MIB)),$GIB16
1,$((7 * MIB)),$((CONTEXT + 40 * MIB + 7 * MIB)),$((2 * GIB16))
EOT
expect_same_file "$TMP/want" "$TMP/got"
expect_stderr_contains "# memprof watch: GPU memory of pid $target as NVML reports it, every 10 ms"

step "a pid NVML never lists"
FAKE_NVML_CURVE0=- mp watch --pid "$target" --interval=10ms --count=2
expect_status 0
expect_eq "$(grep -v '^#' "$OUT" | awk '{ print $3 }' | tr '\n' ' ')" "0 0 " "pid bytes"
expect_stderr_contains "NVML did not list pid $target on any device"

step "the watched process exits"
sleep 3 </dev/null >/dev/null 2>&1 & # long enough for memprof to start, even under ASan
short=$!
FAKE_NVML_PID=$short run timeout 30 "$MEMPROF" watch --pid "$short" --interval=50ms
expect_status 0
expect_stderr_contains "memprof watch: process $short exited"
n=$(grep -vc '^#' "$OUT")
if [ "$n" -ge 1 ]; then pass; else fail "no sample before the process exited"; fi

step "SIGINT ends it"
run timeout --preserve-status -s INT 1 "$MEMPROF" watch --pid "$target" --interval=20ms
expect_status 0
expect_stderr_contains "memprof watch: stopped by signal 2 after"

step "an unknown pid"
mp watch --pid 999999999 --count=1
expect_status 1
expect_one_message "memprof watch: no process 999999999"

step "no NVML"
MEMPROF_LIBNVML=$TMP/none.so mp watch --pid "$target" --count=1
expect_status 1
expect_one_message "memprof watch: cannot load NVML ($TMP/none.so: "
expect_stderr_contains "): watch needs the NVIDIA driver"
expect_stdout_empty
FAKE_NVML_INIT=9 mp watch --pid "$target" --count=1
expect_status 1
expect_one_message "memprof watch: NVML did not start (nvmlInit_v2: Driver Not Loaded, error 9): watch needs the NVIDIA driver"

step "usage errors"
mp watch
expect_status 2
expect_stderr_contains "no process given (--pid PID)"
mp watch --pid "$target" --interval=0
expect_status 2
expect_stderr_contains "invalid --interval '0': give 10ms to 1h"
# a duration takes its unit (issue 22, item 18)
mp watch --pid "$target" --interval=500
expect_status 2
expect_stderr_contains "invalid --interval '500': a duration needs a unit (ns, us, ms, s, min or h): did you mean '500ms'?"
mp watch --pid "$target" --interval=2h
expect_status 2
expect_stderr_contains "give 10ms to 1h"
mp watch --pid "$target" --format=json
expect_status 2
expect_stderr_contains "unknown format 'json'"
mp watch --pid abc
expect_status 2
expect_stderr_contains "invalid pid 'abc'"
mp watch --pid "$target" --count=1 -o "$TMP/no/such/dir/w.txt"
expect_status 1
expect_stderr_contains "cannot write '$TMP/no/such/dir/w.txt'"

finish
