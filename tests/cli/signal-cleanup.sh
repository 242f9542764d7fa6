#!/bin/bash
# signal-cleanup.sh - an import or export killed by SIGINT or SIGTERM leaves
# no temporary file and no output behind.
set -u
MEMPROF=${MEMPROF:?MEMPROF must name the memprof binary}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
failures=0
fail() { echo "signal-cleanup: FAIL: $*" >&2; failures=$((failures + 1)); }

awk 'BEGIN { print "ts_ns,op,id,size,stack"
	for (i = 1; i <= 3000000; i++) printf "%d,alloc,%d,%d,main@a.py:%d;f@b.py:%d\n", i, i, 512 * (i % 97 + 1), i % 50, i % 7 }' > "$dir/big.csv"

for sig in TERM INT; do
	mkdir "$dir/out"
	"$MEMPROF" import -q -o "$dir/out/t.db" "$dir/big.csv" &
	pid=$!
	# wait until the temporary trace exists, then kill
	for _ in $(seq 100); do
		ls "$dir/out"/*.tmp-* >/dev/null 2>&1 && break
		sleep 0.05
	done
	kill -"$sig" "$pid"
	wait "$pid"
	status=$?
	[ "$status" -gt 128 ] || fail "import killed by SIG$sig exited $status, expected death by the signal"
	left=$(ls -A "$dir/out")
	[ -z "$left" ] || fail "import killed by SIG$sig left: $left"
	rm -rf "$dir/out"
done

# export -o, killed the same way
"$MEMPROF" import -q -o "$dir/t.db" "$dir/big.csv" || fail "import of the big trace failed"
mkdir "$dir/exp"
"$MEMPROF" export -o "$dir/exp/t.csv" "$dir/t.db" &
pid=$!
for _ in $(seq 100); do
	ls "$dir/exp"/*.tmp-* >/dev/null 2>&1 && break
	sleep 0.05
done
kill -TERM "$pid"
wait "$pid"
status=$?
[ "$status" -gt 128 ] || fail "export killed by SIGTERM exited $status"
left=$(ls -A "$dir/exp")
[ -z "$left" ] || fail "export killed by SIGTERM left: $left"

[ "$failures" -eq 0 ] || exit 1
echo "signal-cleanup: ok"
