#!/bin/bash
# import-messages.sh - misleading messages and bad data once accepted
# (issue 23, item 12): each case now gets an error that says what is wrong
# and where, not "out of memory", and nothing is stored that cannot be
# exported as it was read.  ('12abc' sizes: import-limits.sh; reversed
# timestamps: trace-extremes.sh.)
set -u
. "$(dirname "$0")/lib.sh"

W=$TMP/work
mkdir "$W" && cd "$W" || die "cannot make $W"

step "a NUL byte inside a CSV phase is refused, naming line and column"
printf 'ts_ns,op,id,size,phase\n1,phase_begin,0,0,fw\0d\n2,phase_end,0,0,fwd\n' >nul.csv
mp import -o nul.db nul.csv
expect_status 1
expect_one_message "memprof import: "
expect_stderr_contains "invalid phase 'nul.csv:2:19': a NUL byte at byte 3 of the field"
expect_file_absent nul.db
printf 'ts_ns,op,id,size,api\n1,alloc,1,16,"cuda\0Malloc"\n' >nul-api.csv
mp import -o nul.db nul-api.csv
expect_status 1
expect_stderr_contains "invalid api 'nul-api.csv:2:14': a NUL byte"

if command -v python3 >/dev/null && python3 -c 'import sqlite3' 2>/dev/null; then
	step "import --format=trace of a trace with an event on device -1"
	"$MEMPROF" import -q -o good.db "$DATA/small.csv" || die "cannot import small.csv"
	cp good.db minus.db
	python3 -c 'import sqlite3,sys; db = sqlite3.connect(sys.argv[1]); db.execute("UPDATE events SET device = -1 WHERE seq = 2"); db.commit()' \
		minus.db || die "cannot make minus.db"
	mp import --format=trace -o again.db minus.db
	expect_status 1
	expect_one_message "memprof import: "
	expect_stderr_contains "corrupt trace 'minus.db': event 2 is on device -1"
	expect_stderr_not_contains "out of memory"
	expect_file_absent again.db

	step "a PyTorch snapshot annotating 4097 devices"
	python3 - <<'EOF' || die "cannot write the snapshot"
import pickle
notes = [{"stage": "START", "name": "a", "device": i, "time_us": 1} for i in range(4097)]
with open("many.pickle", "wb") as f:
    pickle.dump({"segments": [], "device_traces": [], "external_annotations": notes}, f,
                protocol=2)
EOF
	mp import --format=torch -o many.db many.pickle
	expect_status 1
	expect_one_message "memprof import: "
	expect_stderr_contains "invalid PyTorch snapshot 'many.pickle': external_annotations[4096] is of device 4096, past the 4096 devices"
	expect_stderr_not_contains "out of memory"
	expect_file_absent many.db
else
	say "no python3 with sqlite3: the trace and snapshot cases are skipped"
fi

finish
