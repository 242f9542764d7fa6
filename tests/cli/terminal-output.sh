#!/bin/bash
# terminal-output.sh - 'memprof report' and 'export --format=perfetto' with
# no -o and a terminal on standard output write next to the trace
# (TRACE.html / TRACE.json, .db replaced) and say so on stderr, refusing to
# replace a file there without --force; a pipe, '-o -' and the other
# formats still get standard output (issue 22, item 16).  The terminal is a
# pseudo-terminal from python3's pty module.
set -u
. "$(dirname "$0")/lib.sh"

W=$TMP/work
mkdir "$W" || die "mkdir $W"
cd "$W" || die "cd $W"
command -v python3 >/dev/null || skip "python3 is needed for a pseudo-terminal"

# tty CMD [ARG...]: run with standard output a pseudo-terminal (what it
# writes there in $OUT), stderr in $ERR, the status in $status.
tty() {
	LAST_CMD="$* (stdout a terminal)"
	python3 - "$OUT" "$@" 2>"$ERR" </dev/null <<'PY'
import os, subprocess, sys
master, slave = os.openpty()
p = subprocess.Popen(sys.argv[2:], stdout=slave, stdin=subprocess.DEVNULL)
os.close(slave)
out = b""
while True:
    try:
        d = os.read(master, 65536)
    except OSError:  # EIO: the last writer closed the terminal
        break
    if not d:
        break
    out += d
open(sys.argv[1], "wb").write(out)
sys.exit(p.wait())
PY
	status=$?
}

HEADER=ts_ns,op,id,size,requested,address,device,stream,pid,phase,api,device_free,thread,stack
printf '%s\n' "$HEADER" "1000,alloc,1,4096,4096,0x1000,0,0,1,,,,,main@t.py:3" \
	"2000,free,1,4096,4096,0x1000,0,0,1,,,,," >t.csv
mp import -q -o t.db t.csv
[ "$status" -eq 0 ] || die "cannot import t.csv: $(cat "$ERR")"

step "report to a terminal writes t.html"
tty "$MEMPROF" report t.db
expect_status 0
expect_stdout_empty
expect_stderr_contains "memprof report: wrote 't.html'"
expect_file_present t.html
grep -q '<html' t.html && pass || fail "t.html is not the HTML report"

step "a second time: t.html exists, refused without --force"
tty "$MEMPROF" report t.db
expect_status 1
expect_stderr_contains "t.html"
tty "$MEMPROF" report -f t.db
expect_status 0
expect_stderr_contains "wrote 't.html'"

step "perfetto to a terminal writes t.json"
tty "$MEMPROF" export --format=perfetto t.db
expect_status 0
expect_stdout_empty
expect_stderr_contains "memprof export: wrote 't.json'"
python3 -c 'import json,sys; json.load(open("t.json"))' && pass || fail "t.json is not JSON"

step "-o - still writes to the terminal"
tty "$MEMPROF" report --format=md t.db
expect_status 0
expect_stdout_contains "t.db"
tty "$MEMPROF" export --format=perfetto -o - t.db
expect_status 0
expect_stdout_contains "traceEvents"
tty "$MEMPROF" export t.db
expect_status 0
expect_stdout_contains "ts_ns,op,id"

step "a pipe gets standard output"
rm -f t.html
mp report t.db
expect_status 0
expect_stdout_contains "<html"
expect_file_absent t.html

finish
