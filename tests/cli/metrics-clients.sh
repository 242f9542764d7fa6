#!/bin/bash
# metrics-clients.sh - no client holds 'memprof record --metrics' (issue 23
# item 2): while clients trickle a request byte by byte, trickle bytes after
# their answer without reading it, or connect and send nothing (and 100 more
# connect on top), ordinary scrapes are answered, memprof keeps at most 32
# client connections, and record ends when the command does, with the
# clients still at it (tests/cli/metrics_clients.py).  Skipped without
# python3 unless MEMPROF_REQUIRE_LIVE_TOOLS=1.
set -u
. "$(dirname "$0")/lib.sh"

SPOOL_SCRIPT=$top_builddir/tests/tools/spool_script
CLIENTS=$top_srcdir/tests/cli/metrics_clients.py
[ -x "$SPOOL_SCRIPT" ] || die "no '$SPOOL_SCRIPT' (make check builds it)"
if ! command -v python3 >/dev/null; then
	[ "${MEMPROF_REQUIRE_LIVE_TOOLS:-0}" = 1 ] && die "MEMPROF_REQUIRE_LIVE_TOOLS=1 but no python3"
	skip "no python3"
fi
cd "$TMP" || die "cd $TMP"
: >"$TMP/libmemprof-inject.so" # a stand-in: nothing here initialises CUDA
export MEMPROF_INJECT=$TMP/libmemprof-inject.so SPOOL_SCRIPT GO=$TMP/go
DEADLINE=${MEMPROF_TEST_DEADLINE:-60}

cat >workload.sh <<'EOS'
#!/bin/bash
"$SPOOL_SCRIPT" <<SPOOL || exit 98
header pid=5000 ppid=1 start=1000
event kind=api name=cudaMalloc thread=1 ts=10 duration=4000 addr=0x1000 bytes=1048576 device=0
flush
wait $GO
SPOOL
echo "workload: done"
EOS
chmod +x workload.sh

# wait_file FILE: until FILE exists, or the deadline; 0 when it does.
wait_file() {
	local end=$((SECONDS + DEADLINE))
	while [ ! -e "$1" ] && [ $SECONDS -lt $end ]; do sleep 0.1; done
	[ -e "$1" ]
}

step "scrapes are answered beside hostile clients"
"$MEMPROF" record --metrics=0 -o m.db -- ./workload.sh >run.out 2>run.err </dev/null &
rec=$!
end=$((SECONDS + DEADLINE))
while ! grep -q '/metrics' run.err && [ $SECONDS -lt $end ]; do sleep 0.1; done
url=$(grep -o 'http://127\.0\.0\.1:[0-9]*/metrics' run.err | head -1)
port=${url##*:}
port=${port%/metrics}
[ -n "$port" ] || die "no metrics URL on stderr: $(cat run.err)"
mkdir state
python3 "$CLIENTS" "$port" "$rec" state >clients.out 2>&1 &
clients=$!
wait_file state/checked || fail "the client checks did not finish: $(cat clients.out)"
while read -r line; do
	case $line in
	ok*) pass ;;
	*) fail "$line" ;;
	esac
done <clients.out
[ -s clients.out ] || fail "no output from metrics_clients.py"

step "record ends with the clients still at it"
touch go
end=$((SECONDS + DEADLINE))
while kill -0 "$rec" 2>/dev/null && [ $SECONDS -lt $end ]; do sleep 0.1; done
if kill -0 "$rec" 2>/dev/null; then
	fail "memprof record did not finish while clients trickled"
	kill "$rec"
fi
wait "$rec"
status=$?
touch state/stop
wait "$clients"
LAST_CMD="memprof record --metrics=0 -o m.db -- ./workload.sh"
ERR=$TMP/run.err
expect_status 0
expect_stderr_contains " events of 1 process -> m.db"
expect_eq "$(cat run.out)" "workload: done" "the command's own output"

finish
