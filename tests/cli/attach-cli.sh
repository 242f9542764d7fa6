#!/bin/bash
# attach-cli.sh - 'memprof attach' against tests/tools/control_server, a
# stand-in for a workload recorded with 'memprof record --dormant' (a real
# one needs a GPU): it serves the real control socket (src/capture/control.c)
# over a test double of inject.c, with 3 live allocations of 1, 2 and 4 MiB.
# status/start/mark/stop and their replies, the spool it writes, a pid with
# no socket, a pid that does not exist, a directory open to others, usage.
set -u
. "$(dirname "$0")/lib.sh"

SERVER=$top_builddir/tests/tools/control_server
[ -x "$SERVER" ] || die "no '$SERVER' (make check builds it)"
export XDG_RUNTIME_DIR=$TMP/xdg
mkdir -m 0700 "$XDG_RUNTIME_DIR"

"$SERVER" "$TMP/job.mpt" >"$TMP/server.out" 2>"$TMP/server.err" </dev/null &
server=$!
trap 'kill $server 2>/dev/null; _cleanup' EXIT
for _ in $(seq 100); do
	grep -q '^ready ' "$TMP/server.out" 2>/dev/null && break
	sleep 0.1
done
sock=$XDG_RUNTIME_DIR/memprof/$server.sock
expect_eq "$(cat "$TMP/server.out")" "ready $sock" "server ready"

step "status while dormant"
mp attach "$server" status
expect_status 0
expect_stdout_line "process $server"
expect_stdout_line "  mode               dormant"
expect_stdout_line "  spool              $TMP/job.mpt"
expect_stdout_line "  live allocations   3"
expect_stdout_line "  live bytes         7340032 (7.00 MiB)"
expect_stderr_empty

step "mark before start"
mp attach "$server" mark early
expect_status 1
expect_one_message "memprof attach: process $server ($sock): not recording: a mark belongs inside a recording window"
expect_file_absent "$TMP/torch-mark-$server"

step "start"
mp attach "$server" start
expect_status 0
expect_stdout_line "process $server: recording started: recording, 3 live allocations written first"
mp attach "$server" start
expect_status 1
expect_one_message "memprof attach: process $server ($sock): already recording"

step "mark"
mp attach "$server" mark "epoch 2 begins"
expect_status 0
expect_stdout_line "process $server: mark 'epoch 2 begins' written"
mp attach "$server" mark -dash
expect_status 0
expect_stdout_line "process $server: mark '-dash' written"
# beside the spool, for PyTorch's sitecustomize (python/sitecustomize.py): the latest label
expect_eq "$(cat "$TMP/torch-mark-$server" 2>/dev/null)" "-dash" "torch-mark-PID beside the spool"
mp attach "$server" status
expect_stdout_line "  mode               recording"
# WINDOW_START, 3 PREEXISTING, 2 MARK.
expect_stdout_line "  events written     6"

step "stop"
mp attach "$server" stop
expect_status 0
expect_stdout_line "process $server: recording stopped: dormant"
mp attach "$server" stop
expect_status 1
expect_one_message "memprof attach: process $server ($sock): not recording"

step "list shows the serving process, its mode and command"
# a stale socket file of a process that ended is left out
: >"$XDG_RUNTIME_DIR/memprof/999999999.sock"
mp attach list
expect_status 0
expect_stdout_line "PID      MODE       COMMAND"
expect_stdout_match "^$server +dormant +$SERVER $TMP/job.mpt\$"
expect_eq "$(grep -c '' "$OUT")" 2 "lines of the list"
rm -f "$XDG_RUNTIME_DIR/memprof/999999999.sock"

step "a pid with no socket"
sleep 30 </dev/null >/dev/null 2>&1 &
plain=$!
mp attach "$plain" status
expect_status 1
expect_one_message "memprof attach: process $plain was not started with memprof record (no control socket at $XDG_RUNTIME_DIR/memprof/$plain.sock); 'memprof watch --pid $plain' can sample its GPU memory through NVML"
kill "$plain"

step "a pid that does not exist"
mp attach 999999999 status
expect_status 1
expect_one_message "memprof attach: no process 999999999"

step "a socket directory open to others is refused"
chmod 0755 "$XDG_RUNTIME_DIR/memprof"
mp attach "$server" status
expect_status 1
expect_one_message "memprof attach: refusing the control socket of process $server: its directory '$XDG_RUNTIME_DIR/memprof' must be a directory of yours of mode 0700 (it is uid $(id -u), mode 0755)"
chmod 0700 "$XDG_RUNTIME_DIR/memprof"

step "usage errors"
mp attach
expect_status 2
expect_stderr_contains "memprof attach: no PID given"
mp attach "$server"
expect_status 2
expect_stderr_contains "memprof attach: no request given"
mp attach 12x status
expect_status 2
expect_stderr_contains "invalid PID '12x'"
mp attach "$server" pause
expect_status 2
expect_stderr_contains "unknown request 'pause' (start, stop, status or mark LABEL)"
mp attach "$server" mark
expect_status 2
expect_stderr_contains "mark needs a LABEL"
mp attach "$server" status now
expect_status 2
expect_stderr_contains "unexpected argument 'now' after 'status'"
mp attach "$server" mark "$(printf 'two\nlines')"
expect_status 2
expect_stderr_contains "the label holds a control character"
mp attach "$server" mark "$(head -c 1019 /dev/zero | tr '\0' x)"
expect_status 2
expect_stderr_contains "the label is longer than 1018 bytes"
mp attach "$server" mark "$(head -c 1018 /dev/zero | tr '\0' x)"
expect_status 1 # the longest label is sent (and refused: not recording)
expect_stderr_contains "not recording"

step "the server ends: its socket goes"
kill -TERM "$server"
wait "$server"
expect_eq "$?" 0 "control_server exit status"
expect_file_absent "$sock"
mp attach "$server" status
expect_status 1
expect_stderr_contains "memprof attach: no process $server"
mp attach list
expect_status 0
expect_stdout_line "no process of yours serves a memprof control socket (looked in $XDG_RUNTIME_DIR/memprof and /tmp/memprof-$(id -u))"

step "the spool holds the window"
expect_file_present "$TMP/job.mpt"

finish
