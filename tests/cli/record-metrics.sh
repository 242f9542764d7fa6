#!/bin/bash
# record-metrics.sh - 'memprof record --metrics': the figures served for
# Prometheus while the command runs, scraped with curl while the workload is
# paused at known points (it writes its spools with tests/tools/spool_script
# and waits for a file the test makes), every line checked against the
# exposition grammar and the values against the known answers
# (tests/cli/check_exposition.py); 404, 405 and 400; the socket bound to
# 127.0.0.1 by default; a stalled client that does not hold up the end of
# the recording; a port in use refused before the command starts; the
# trace the same as without --metrics.  Skipped without curl unless
# MEMPROF_REQUIRE_LIVE_TOOLS=1.
set -u
. "$(dirname "$0")/lib.sh"

SPOOL_SCRIPT=$top_builddir/tests/tools/spool_script
CHECK=$top_srcdir/tests/cli/check_exposition.py
[ -x "$SPOOL_SCRIPT" ] || die "no '$SPOOL_SCRIPT' (make check builds it)"
if ! command -v curl >/dev/null || ! command -v python3 >/dev/null; then
	[ "${MEMPROF_REQUIRE_LIVE_TOOLS:-0}" = 1 ] && die "MEMPROF_REQUIRE_LIVE_TOOLS=1 but no curl or python3"
	skip "no curl or python3"
fi
cd "$TMP" || die "cd $TMP"
: >"$TMP/libmemprof-inject.so" # a stand-in: nothing here initialises CUDA
export MEMPROF_INJECT=$TMP/libmemprof-inject.so SPOOL_SCRIPT GO1=$TMP/go1 GO2=$TMP/go2
DEADLINE=${MEMPROF_TEST_DEADLINE:-60}

# pid 5001 (rank 0): 4 MiB in 7 us, 3 events lost; then pid 5000 (rank 1):
# device 0 gets 1 MiB (a driver call of 1.5 us inside a runtime call of
# 4 us: one allocation of 4 us), 3 MiB in 20 us, 512 B in 0.8 us then freed;
# device 1 an 8 MiB mapping with 2 MiB allocated in it (no duration).
# Paused (go1); then the 1 MiB is freed and an OOM comes; paused (go2).
cat >workload.sh <<'EOF'
#!/bin/bash
"$SPOOL_SCRIPT" <<SPOOL || exit 98
header pid=5001 ppid=1 start=2000
meta env:RANK 0
event kind=api name=cudaMalloc thread=2 ts=10 duration=7000 addr=0x7000 bytes=4194304 device=0
event kind=dropped extra=3
SPOOL
"$SPOOL_SCRIPT" <<SPOOL || exit 98
header pid=5000 ppid=1 start=1000
meta env:RANK 1
event kind=api name=cuMemAlloc_v2 thread=1 ts=10 duration=1500 addr=0x1000 bytes=1048576 device=0 flags=2
event kind=api name=cudaMalloc thread=1 ts=9 duration=4000 addr=0x1000 bytes=1048576 device=0
event kind=api name=cudaMalloc thread=1 ts=20 duration=20000 addr=0x200000 bytes=3145728 device=0
event kind=api name=cudaMalloc thread=1 ts=30 duration=800 addr=0x900000 bytes=512 device=0
event kind=api name=cudaFree thread=1 ts=40 addr=0x900000 device=0 flags=4
event kind=vmm_map thread=1 ts=50 addr=0x40000000 bytes=8388608 device=1
event kind=api name=cudaMalloc thread=1 ts=60 addr=0x50000000 bytes=2097152 device=1
flush
wait $GO1
event kind=api name=cudaFree thread=1 ts=70 addr=0x1000 device=0 flags=4
event kind=oom name=cudaMalloc thread=1 ts=80 bytes=1099511627776 device=0
flush
wait $GO2
SPOOL
echo "workload: done"
EOF
chmod +x workload.sh

labels0='device="0",pid="5000",rank="1"'
labels1='device="1",pid="5000",rank="1"'
labelsb='device="0",pid="5001",rank="0"'
h=memprof_alloc_latency_seconds
cat >phase1.expected <<EOF
memprof_processes 2
memprof_live_bytes{$labels0} 4194304
memprof_peak_live_bytes{$labels0} 4194816
absent memprof_reserved_bytes{$labels0}
absent memprof_free_share_ratio{$labels0}
memprof_allocations_total{$labels0} 3
memprof_frees_total{$labels0} 1
memprof_allocated_bytes_total{$labels0} 4194816
memprof_ooms_total{$labels0} 0
${h}_bucket{$labels0,le="1e-06"} 1
${h}_bucket{$labels0,le="2.5e-06"} 1
${h}_bucket{$labels0,le="5e-06"} 2
${h}_bucket{$labels0,le="1e-05"} 2
${h}_bucket{$labels0,le="2.5e-05"} 3
${h}_bucket{$labels0,le="+Inf"} 3
${h}_count{$labels0} 3
${h}_sum{$labels0} 0.0000248
memprof_live_bytes{$labels1} 2097152
memprof_reserved_bytes{$labels1} 8388608
memprof_peak_reserved_bytes{$labels1} 8388608
memprof_free_share_ratio{$labels1} 0.75
memprof_allocations_total{$labels1} 1
${h}_count{$labels1} 0
memprof_live_bytes{$labelsb} 4194304
${h}_sum{$labelsb} 0.000007
memprof_dropped_events_total{pid="5001",rank="0"} 3
memprof_dropped_events_total{pid="5000",rank="1"} 0
EOF
cat >phase2.expected <<EOF
memprof_live_bytes{$labels0} 3145728
memprof_peak_live_bytes{$labels0} 4194816
memprof_frees_total{$labels0} 2
memprof_ooms_total{$labels0} 1
memprof_allocations_total{$labels0} 3
memprof_live_bytes{$labels1} 2097152
EOF

# wait_for TEXT FILE CMD...: run CMD into FILE until FILE holds TEXT, or the deadline.
wait_for() {
	local text=$1 file=$2 end=$((SECONDS + DEADLINE))
	shift 2
	while [ $SECONDS -lt $end ]; do
		"$@" >"$file" 2>/dev/null
		grep -qF -e "$text" "$file" && return 0
		sleep 0.2
	done
	return 1
}

# check_scrape FILE EXPECTED: the exposition's grammar and values.
check_scrape() {
	local msg
	if msg=$(python3 "$CHECK" "$1" "$2" 2>&1); then
		pass
	else
		fail "exposition check of $1: $(printf '%s' "$msg" | head -5)"
	fi
}

step "the exposition checker finds faults"
printf '# TYPE a_total counter\na_total 1\n# TYPE b histogram\nb_bucket{le="1"} 2\nb_bucket{le="+Inf"} 1\nb_count 2\nb_sum 0\nc 1\n' >bad.txt
if python3 "$CHECK" bad.txt >check.out 2>&1; then
	fail "check_exposition.py accepted a faulty exposition"
else
	pass
	expect_eq "$(grep -c . check.out)" 3 "problems found (not cumulative, +Inf != count, no TYPE)"
fi

step "served while the command runs"
"$MEMPROF" record --metrics=0 -o metrics.db -- ./workload.sh >run.out 2>run.err </dev/null &
rec=$!
wait_for "/metrics" url.txt cat run.err || fail "no URL printed on stderr"
url=$(grep -o 'http://127\.0\.0\.1:[0-9]*/metrics' run.err | head -1)
port=${url##*:}
port=${port%/metrics}
[ -n "$url" ] || fail "the URL printed is not http://127.0.0.1:PORT/metrics: $(cat run.err)"
if wait_for 'memprof_allocations_total{device="1",pid="5000",rank="1"} 1' scrape1.txt curl -sS "$url"; then
	pass
else
	fail "the figures of the first pause never came: $(head -5 scrape1.txt)"
fi
check_scrape scrape1.txt phase1.expected

step "headers"
curl -sS -D headers.txt -o /dev/null "$url"
expect_eq "$(grep -i '^content-type:' headers.txt | tr -d '\r')" \
	"Content-Type: text/plain; version=0.0.4; charset=utf-8" "the content type"
grep -q '^HTTP/1.1 200 OK' headers.txt && pass || fail "not 200: $(head -1 headers.txt)"

step "other paths, methods and bad requests"
expect_eq "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/")" 404 "GET /"
expect_eq "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/metricsx")" 404 "GET /metricsx"
expect_eq "$(curl -s -o /dev/null -w '%{http_code}' -X POST -d x=1 "$url")" 405 "POST"
expect_eq "$(curl -s -o /dev/null -w '%{http_code}' -X DELETE "$url")" 405 "DELETE"
expect_eq "$(curl -s -D - -o /dev/null -X PUT "$url" | grep -i '^allow:' | tr -d '\r')" \
	"Allow: GET, HEAD" "the Allow header of a 405"
bad=$(python3 - "$port" <<'EOF'
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=10)
s.sendall(b"this is not http\r\n\r\n")
print(s.recv(100).split(b"\r\n")[0].decode())
EOF
)
expect_eq "$bad" "HTTP/1.1 400 Bad Request" "a request that does not parse"

step "bound to the loopback address"
hexport=$(printf '%04X' "$port")
expect_eq "$(awk -v p=":$hexport" '$2 ~ p"$" && $4 == "0A" {print $2}' /proc/net/tcp)" \
	"0100007F:$hexport" "the listening socket in /proc/net/tcp"

step "the figures move on"
touch go1
if wait_for 'memprof_ooms_total{device="0",pid="5000",rank="1"} 1' scrape2.txt curl -sS "$url"; then
	pass
else
	fail "the figures of the second pause never came"
fi
check_scrape scrape2.txt phase2.expected

step "a stalled client does not hold up the end"
python3 - "$port" "$TMP/stalled" <<'EOF' &
import os, socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.sendall(b"GET /metrics HTTP/1.1\r\n")  # and never the end of the headers
open(sys.argv[2], "w").close()
time.sleep(60)
EOF
stalled=$!
end=$((SECONDS + DEADLINE))
while [ ! -e stalled ] && [ $SECONDS -lt $end ]; do sleep 0.1; done
touch go2
end=$((SECONDS + DEADLINE))
while kill -0 "$rec" 2>/dev/null && [ $SECONDS -lt $end ]; do sleep 0.1; done
if kill -0 "$rec" 2>/dev/null; then
	fail "memprof record did not finish with a stalled client connected"
	kill "$rec"
fi
wait "$rec"
status=$?
kill "$stalled" 2>/dev/null
wait "$stalled" 2>/dev/null
LAST_CMD="memprof record --metrics=0 -o metrics.db -- ./workload.sh"
ERR=$TMP/run.err
expect_status 0
expect_stderr_contains " events of 2 processes -> metrics.db"
expect_eq "$(cat run.out)" "workload: done" "the command's own output"
ERR=$TMP/.stderr

step "the trace is the one recorded without --metrics"
mp record -o plain.db -- ./workload.sh
expect_status 0
"$MEMPROF" export metrics.db >metrics.csv 2>&1
"$MEMPROF" export plain.db >plain.csv 2>&1
expect_same_file plain.csv metrics.csv

step "a port in use is refused before the command runs"
python3 - "$TMP/port" <<'EOF' &
import socket, sys, time
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(1)
open(sys.argv[1] + ".tmp", "w").write(str(s.getsockname()[1]))
import os; os.rename(sys.argv[1] + ".tmp", sys.argv[1])
time.sleep(60)
EOF
holder=$!
end=$((SECONDS + DEADLINE))
while [ ! -s port ] && [ $SECONDS -lt $end ]; do sleep 0.1; done
busy=$(cat port)
cat >marker.sh <<'EOF'
#!/bin/sh
touch ran
EOF
chmod +x marker.sh
mp record --metrics="$busy" -o busy.db -- ./marker.sh
expect_status 1
expect_stderr_contains "memprof record: port $busy of '127.0.0.1' is in use"
expect_file_absent ran
expect_file_absent busy.db
kill "$holder" 2>/dev/null
wait "$holder" 2>/dev/null

step "bad --metrics values"
for v in x 70000 :80 -1 '1.2.3.4:'; do
	mp record --metrics="$v" -o bad.db -- ./marker.sh
	expect_status 2
	expect_stderr_contains "bad --metrics '$v'"
done
expect_file_absent ran

finish
