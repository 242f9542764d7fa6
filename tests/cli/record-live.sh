#!/bin/bash
# record-live.sh - 'memprof record --live' driven in tmux (a private server:
# new-session -d -x 120 -y 40, capture-pane -p, send-keys).  The workload
# writes its spools with tests/tools/spool_script and pauses at known points
# (it waits for a file the test makes); the test polls the screen until the
# view shows the figures the spools hold there (known answers, every row),
# the command's output shown at the bottom and kept in the log, not on the
# terminal; 'q' closes the view and the recording goes on; Ctrl-C goes to
# the command and the terminal is given back; with stderr not a terminal a
# summary line per interval; the trace the same as without --live.
# Skipped without tmux unless MEMPROF_REQUIRE_LIVE_TOOLS=1.
set -u
. "$(dirname "$0")/lib.sh"

SPOOL_SCRIPT=$top_builddir/tests/tools/spool_script
[ -x "$SPOOL_SCRIPT" ] || die "no '$SPOOL_SCRIPT' (make check builds it)"
if ! command -v tmux >/dev/null; then
	[ "${MEMPROF_REQUIRE_LIVE_TOOLS:-0}" = 1 ] && die "MEMPROF_REQUIRE_LIVE_TOOLS=1 but no tmux"
	skip "no tmux"
fi
cd "$TMP" || die "cd $TMP"
: >"$TMP/libmemprof-inject.so" # a stand-in: nothing here initialises CUDA
export MEMPROF_INJECT=$TMP/libmemprof-inject.so SPOOL_SCRIPT GO1=$TMP/go1 GO2=$TMP/go2
DEADLINE=${MEMPROF_TEST_DEADLINE:-60}
SOCK=$TMP/tmux.sock
unset TMUX
trap 'tmux -S "$SOCK" kill-server 2>/dev/null; _cleanup' EXIT

# pid 5001 (rank 0): 4 MiB in 7 us, 3 events lost.  pid 5000 (rank 1):
# device 0: 1 MiB from train+0x2000 (a driver call of 1.5 us in a runtime
# call of 4 us: one allocation of 4 us), 3 MiB from train+0x1234 in 20 us,
# 512 B in 0.8 us freed; device 1: an 8 MiB mapping, 2 MiB in it.  Paused
# (go1); then the 1 MiB is freed; paused (go2).
cat >workload.sh <<'EOF'
#!/bin/bash
echo "workload: started"
"$SPOOL_SCRIPT" <<SPOOL || exit 98
header pid=5001 ppid=1 start=2000
meta env:RANK 0
event kind=api name=cudaMalloc thread=2 ts=10 duration=7000 addr=0x7000 bytes=4194304 device=0
event kind=dropped extra=3
SPOOL
"$SPOOL_SCRIPT" <<SPOOL || exit 98
header pid=5000 ppid=1 start=1000
meta env:RANK 1
module /srv/app/train base=0x400000 start=0x400000 end=0x500000
event kind=api name=cuMemAlloc_v2 thread=1 ts=10 duration=1500 addr=0x1000 bytes=1048576 device=0 flags=2 stack=0x402000
event kind=api name=cudaMalloc thread=1 ts=9 duration=4000 addr=0x1000 bytes=1048576 device=0 stack=0x402000
event kind=api name=cudaMalloc thread=1 ts=20 duration=20000 addr=0x200000 bytes=3145728 device=0 stack=0x401234
event kind=api name=cudaMalloc thread=1 ts=30 duration=800 addr=0x900000 bytes=512 device=0
event kind=api name=cudaFree thread=1 ts=40 addr=0x900000 device=0 flags=4
event kind=vmm_map thread=1 ts=50 addr=0x40000000 bytes=8388608 device=1
event kind=api name=cudaMalloc thread=1 ts=60 addr=0x50000000 bytes=2097152 device=1
flush
wait $GO1
event kind=api name=cudaFree thread=1 ts=70 addr=0x1000 device=0 flags=4
flush
wait $GO2
SPOOL
echo "workload: done"
EOF
chmod +x workload.sh

# row PID RANK DEV LIVE RESERVED PEAK_LIVE PEAK_RES FREE ALLOCS FREES P50 P99: a
# row of the view once a whole interval passed without allocations.
row() {
	printf '%-7s %4s %3s %10s %10s %10s %10s %7s %7s %7s %7s %10s %7s %7s' \
		"$1" "$2" "$3" "$4" "$5" "$6" "$7" "$8" "$9" "${10}" 0.0 "0 B/s" "${11}" "${12}"
}

screen() {
	tmux -S "$SOCK" capture-pane -p -t "$1"
}

# wait_screen SESSION TEXT...: poll the screen until it holds every TEXT.
wait_screen() {
	local s=$1 end=$((SECONDS + DEADLINE)) t ok
	shift
	while [ $SECONDS -lt $end ]; do
		screen "$s" >screen.txt 2>/dev/null
		ok=1
		for t in "$@"; do
			grep -qF -e "$t" screen.txt || ok=0
		done
		[ $ok = 1 ] && return 0
		sleep 0.2
	done
	return 1
}

# expect_screen SESSION WHAT TEXT...: wait_screen, a failure showing the screen.
expect_screen() {
	local s=$1 what=$2
	shift 2
	if wait_screen "$s" "$@"; then
		pass
	else
		fail "$what: the screen never showed: $(for t in "$@"; do grep -qF -e "$t" screen.txt || printf '[%s] ' "$t"; done)"
		sed 's/^/      | /' screen.txt
	fi
}

wait_file() {
	local end=$((SECONDS + DEADLINE))
	while [ ! -s "$1" ] && [ $SECONDS -lt $end ]; do sleep 0.1; done
	[ -s "$1" ]
}

start() { # SESSION COMMAND: run COMMAND (bash) in a new 120x40 session
	tmux -S "$SOCK" -f /dev/null new-session -d -s "$1" -x 120 -y 40 \
		"bash -c '$2; echo \"EXIT=\$?\" >$1.exit; stty -a >$1.stty; sleep 600'" ||
		die "tmux new-session failed"
}

step "the view shows the figures of the first pause"
start live "'$MEMPROF' record --live -o live.db -- ./workload.sh"
expect_screen live "the rows of the first pause" \
	"memprof record --live" "2 processes   3 events dropped   q: close this view" \
	"$(row 5000 1 0 "4.00 MiB" - "4.00 MiB" - unknown 3 1 "4 us" "20 us")" \
	"$(row 5000 1 1 "2.00 MiB" "8.00 MiB" "2.00 MiB" "8.00 MiB" 0.750 1 0 - -)" \
	"$(row 5001 0 0 "4.00 MiB" - "4.00 MiB" - unknown 1 0 "7 us" "7 us")"
expect_screen live "the top call sites" "top call sites by live bytes:" \
	"    3.00 MiB      1 allocs  pid 5000     train+0x1234" \
	"    1.00 MiB      1 allocs  pid 5000     train+0x2000"
expect_screen live "the command's output at the bottom" "command output (live.log):" \
	"  workload: started"

step "the figures move on"
touch go1
expect_screen live "the second pause" \
	"$(row 5000 1 0 "3.00 MiB" - "4.00 MiB" - unknown 3 2 "4 us" "20 us")"

step "q closes the view, the recording goes on"
tmux -S "$SOCK" send-keys -t live q
expect_screen live "the view closed" \
	"memprof record: live view closed; recording goes on (the command's output is in 'live.log')"
if grep -qF "PEAK LIVE" screen.txt; then fail "the view is still on the screen"; else pass; fi
touch go2
wait_file live.exit || fail "memprof record --live did not finish"
expect_eq "$(cat live.exit)" "EXIT=0" "memprof record's exit status"
expect_screen live "the summary" "memprof record: the command's output is in 'live.log'" \
	" events of 2 processes -> live.db"
if grep -qF "workload:" screen.txt; then fail "the command's output reached the terminal"; else pass; fi
expect_eq "$(cat live.log)" "workload: started
workload: done" "the command's output in the log"
if grep -qw -- -icanon live.stty; then fail "the terminal was left without icanon"; else pass; fi

step "the trace is the one recorded without --live"
mp record -o plain.db -- ./workload.sh
expect_status 0
"$MEMPROF" export live.db >live.csv 2>&1
"$MEMPROF" export plain.db >plain.csv 2>&1
expect_same_file plain.csv live.csv

step "Ctrl-C goes to the command, the terminal is given back"
rm -f go1 go2
start ctrlc "'$MEMPROF' record --live -o ctrlc.db -- ./workload.sh"
expect_screen ctrlc "the first pause" "$(row 5000 1 0 "4.00 MiB" - "4.00 MiB" - unknown 3 1 "4 us" "20 us")"
tmux -S "$SOCK" send-keys -t ctrlc C-c
wait_file ctrlc.exit || fail "memprof record --live did not finish after Ctrl-C"
expect_eq "$(cat ctrlc.exit)" "EXIT=130" "exit status after Ctrl-C"
expect_screen ctrlc "the message" "memprof record: './workload.sh' was killed by signal 2 (Interrupt)"
if grep -qF "PEAK LIVE" screen.txt; then fail "the view is still on the screen"; else pass; fi
if grep -qw -- -icanon ctrlc.stty; then fail "the terminal was left without icanon"; else pass; fi

step "a line per interval when stderr is not a terminal"
touch go1 go2
mp record --live -o lines.db -- ./workload.sh
expect_status 0
expect_stdout_line "workload: started"
expect_stdout_line "workload: done"
last=$(grep '^memprof record: [0-9]*\.[0-9] s: ' "$ERR" | tail -1)
if [[ "$last" =~ ^"memprof record: "[0-9]+\.[0-9]" s: live 9.00 MiB, reserved 8.00 MiB, peaks: live 10.0 MiB, reserved 8.00 MiB, 5 allocs ("[0-9.]+/s,\ [^\)]*"), 2 frees, p50 4 us, p99 20 us, 2 processes, 3 dropped"$ ]]; then
	pass
else
	fail "the last summary line: '$last'"
fi
expect_stderr_not_contains "live.log"
expect_file_absent lines.log

step "--live-log without --live"
mp record --live-log=x.log -o x.db -- ./workload.sh
expect_status 2
expect_stderr_contains "--live-log needs --live"

step "an existing log is not replaced without --force"
echo keep >kept.log
mp record --live --live-log=kept.log -o kept.db -- ./workload.sh
expect_status 1
expect_stderr_contains "memprof record: the command's log 'kept.log' exists"
expect_eq "$(cat kept.log)" "keep" "the existing log"
expect_file_absent kept.db

finish
