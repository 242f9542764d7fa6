#!/bin/bash
# signal-cleanup.sh - an import or export killed by SIGINT or SIGTERM leaves
# no temporary file and no output behind; after SIGKILL, the next import of the
# same output removes what the killed one left.
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
# wait until it writes its output: a named temporary, or an unnamed one (O_TMPFILE),
# which only its open file descriptors show
for _ in $(seq 400); do
	ls "$dir/exp"/*.tmp-* >/dev/null 2>&1 && break
	ls -l "/proc/$pid/fd" 2>/dev/null | grep -q -- "-> $dir/exp/" && break
	sleep 0.05
done
kill -TERM "$pid"
wait "$pid"
status=$?
[ "$status" -gt 128 ] || fail "export killed by SIGTERM exited $status"
left=$(ls -A "$dir/exp")
[ -z "$left" ] || fail "export killed by SIGTERM left: $left"

# SIGKILL cannot be caught: the import's temporary trace stays, named for its host and
# process; the next import of the same output removes it (its process is gone), and
# leaves the temporary of a process still running, and one made on another host.
mkdir "$dir/kill"
"$MEMPROF" import -q -o "$dir/kill/t.db" "$dir/big.csv" &
pid=$!
for _ in $(seq 100); do
	ls "$dir/kill"/*.tmp-* >/dev/null 2>&1 && break
	sleep 0.05
done
kill -KILL "$pid"
wait "$pid"
left=$(ls "$dir/kill")
case $left in
t.db.tmp-*-"$pid"-??????) ;;
*) fail "a SIGKILLed import left '$left', expected t.db.tmp-HOST-$pid-XXXXXX" ;;
esac
sleep 30 &
alive=$!
host=${left#t.db.tmp-}
host=${host%-"$pid"-??????}
: >"$dir/kill/t.db.tmp-$host-$alive-abcdef"
: >"$dir/kill/t.db.tmp-otherhost-$pid-abcdef"
: >"$dir/kill/u.db.tmp-$host-$pid-abcdef"
printf 'ts_ns,op,id,size\n1,alloc,1,512\n' >"$dir/small.csv"
"$MEMPROF" import -q -o "$dir/kill/t.db" "$dir/small.csv" || fail "the import after the kill failed"
kill "$alive" 2>/dev/null
[ ! -e "$dir/kill/$left" ] || fail "the next import of t.db left the killed import's $left"
[ -e "$dir/kill/t.db.tmp-$host-$alive-abcdef" ] || fail "a running process's temporary was removed"
[ -e "$dir/kill/t.db.tmp-otherhost-$pid-abcdef" ] || fail "another host's temporary was removed"
[ -e "$dir/kill/u.db.tmp-$host-$pid-abcdef" ] || fail "another output's temporary was removed"
[ -f "$dir/kill/t.db" ] || fail "no t.db after the second import"

[ "$failures" -eq 0 ] || exit 1
echo "signal-cleanup: ok"
