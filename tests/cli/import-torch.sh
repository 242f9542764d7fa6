#!/bin/bash
# import-torch.sh - 'memprof import' of PyTorch CUDA memory snapshots.
#
# The figures of 'memprof info --json' (per device: peak live and reserved
# bytes, the end state, event counts) must equal what an independent Python
# computation with the standard pickle module gives on the same file
# (tests/torch/snapshot_figures.py: backward walk from the final state, end
# figures from PyTorch's own segment fields), on the real snapshots in
# ../shared/datasets/torch-snapshots and on small generated ones
# (tests/torch/make_snapshots.py).  Then bad inputs: refused opcodes,
# truncation, wrong shapes, each with a message and nothing written.
set -u
. "$(dirname "$0")/lib.sh"

command -v python3 >/dev/null || skip "python3 is needed for the reference computation"
TORCH=$top_srcdir/tests/torch
W=$TMP/work
mkdir "$W" || die "mkdir $W"
cd "$W" || die "cd $W"

# same_figures NAME PICKLE: import, info --json, compare with the reference.
same_figures() {
	local name=$1 pickle=$2
	step "import $name"
	mp import -q -o "$name.db" "$pickle"
	expect_status 0
	step "info --json $name"
	mp info --json "$name.db"
	expect_status 0
	cp "$OUT" "$name.info.json"
	step "reference figures of $name"
	run python3 "$TORCH/snapshot_figures.py" "$pickle"
	expect_status 0
	cp "$OUT" "$name.expected.json"
	step "memprof's figures of $name equal the reference"
	run python3 "$TORCH/compare_info.py" "$name.expected.json" "$name.info.json"
	expect_status 0
	expect_stdout_empty
}

# --- generated snapshots: every case, small ---------------------------------------------
run python3 "$TORCH/make_snapshots.py" "$W/gen"
expect_status 0
for f in "$W"/gen/*.pickle; do
	same_figures "$(basename "$f" .pickle)" "$f"
done

step "the comparison can fail"
python3 - two-devices.expected.json <<'PY' || die "cannot edit the reference"
import json, sys
j = json.load(open(sys.argv[1]))
j["devices"]["0"]["peak_live_bytes"] += 512
json.dump(j, open("wrong.expected.json", "w"))
PY
run python3 "$TORCH/compare_info.py" wrong.expected.json two-devices.info.json
expect_status 1
expect_stdout_contains "device 0 peak_live_bytes"

step "two-devices: the window's prelude and ops, exported"
mp export two-devices.db
expect_status 0
# a block freed by the program before the window: preexisting then free_requested
expect_stdout_contains ",preexisting,2,1024,700,0x10180000,0,0,0,"
expect_stdout_contains ",free_requested,2,1024,700,0x10180000,0,0,0,"
# an unsigned 64-bit stream survives
expect_stdout_contains ",reserve,8,2097152,2097152,0x30000000,1,9223372036854775813,"
# C++ frames keep PyTorch's '??' file
expect_stdout_contains "main@train.py:7;forward@model.py:42;torch::unwind::unwind()@??"
expect_stdout_contains ",phase_begin,0,0,0,0x0,0,0,0,forward,"

step "protocols 2 to 5 give the same trace"
for p in 2 3 5; do
	mp export "two-devices-p$p.db"
	cp "$OUT" "p$p.csv"
	mp export two-devices.db
	expect_same_file "p$p.csv" "$OUT"
done

step "allocator settings and the clock go to meta"
expect_eq "$(sql two-devices.db "SELECT value FROM meta WHERE key='allocator_settings'")" \
	'{"PYTORCH_CUDA_ALLOC_CONF":"","max_split_size":-1,"garbage_collection_threshold":0,"expandable_segments":false,"roundup_power2_divisions":{"1":0,"2":0}}' \
	"allocator_settings"
expect_eq "$(sql two-devices.db "SELECT value FROM meta WHERE key='source'")" torch "source"
expect_eq "$(sql old-free.db "SELECT count(*) FROM meta WHERE key='allocator_settings'")" 0 \
	"no allocator_settings in an old snapshot"

# --- the real snapshots -----------------------------------------------------------------
datasets=$top_srcdir/../shared/datasets/torch-snapshots
if [ -d "$datasets" ]; then
	for f in "$datasets"/*.pickle; do
		same_figures "$(basename "$f" .pickle)" "$f"
	done
	# From a pipe the pickle is counted through a copy in $TMPDIR (gone once
	# read), or read as it comes when no copy can be made: the same trace.
	big=$(ls -S "$datasets"/*.pickle | head -1)
	name=$(basename "$big" .pickle)
	mp export "$name.db"
	cp "$OUT" "$name.file.csv"
	mkdir "$W/tmpdir" || die "mkdir $W/tmpdir"
	for tmpdir in "$W/tmpdir" /nonexistent/memprof-test; do
		step "$name from a pipe, TMPDIR=$tmpdir"
		rm -f pipe.db
		LAST_CMD="cat $name.pickle | TMPDIR=$tmpdir memprof import -q -o pipe.db -"
		cat "$big" | TMPDIR=$tmpdir "$MEMPROF" import -q -o pipe.db - >"$OUT" 2>"$ERR"
		status=$?
		expect_status 0
		expect_dir_empty "$W/tmpdir"
		mp export pipe.db
		expect_same_file "$name.file.csv" "$OUT"
	done
else
	say "note: no $datasets: the real snapshots were not checked"
fi

# --- bad input --------------------------------------------------------------------------
# bad NAME EXPECTED...: import of $W/NAME.pickle fails, says each EXPECTED, writes nothing.
bad() {
	local name=$1 text
	shift
	step "bad input $name"
	mp import -o "out-$name.db" "$name.pickle"
	expect_status 1
	expect_one_message "memprof import: "
	for text in "$@"; do
		expect_stderr_contains "$text"
	done
	expect_file_absent "out-$name.db"
	expect_no_temp_files "$W"
}

python3 - <<'PY' || die "cannot write the bad inputs"
import collections, pickle
good = open("gen/two-devices.pickle", "rb").read()
def w(name, data):
    open(name + ".pickle", "wb").write(data)
w("global", pickle.dumps(collections.OrderedDict(a=1), protocol=4))
w("reduce", b"\x80\x04" + b"\x8c\x08builtins\x94\x8c\x04eval\x94\x93\x94." )
w("truncated", good[: len(good) // 2])
w("no-stop", good[:-1])
w("memo", b"\x80\x04]h\x07.")                     # BINGET 7, never stored
w("absurd", b"\x80\x04\x8d" + (1 << 62).to_bytes(8, "little") + b"x.")
w("deep", b"\x80\x04" + b"]" * 200000 + b"a" * 199999 + b".")
w("not-snapshot", pickle.dumps({"hello": 1}, protocol=4))
w("negative-size", pickle.dumps({"segments": [], "device_traces": [[
    {"action": "alloc", "addr": 4096, "size": -5, "stream": 0, "time_us": 1}]]}, protocol=4))
w("entry-not-dict", pickle.dumps({"segments": [], "device_traces": [[7]]}, protocol=4))
w("protocol-0", pickle.dumps({"segments": []}, protocol=0))
PY
bad global "refused pickle" "GLOBAL" "at byte"
bad reduce "refused pickle" "STACK_GLOBAL" "at byte 20"
bad truncated "truncated pickle" "at byte"
bad no-stop "no STOP"
bad memo "memo reference 7 was never stored" "at byte 3"
bad absurd "4611686018427387904 bytes but only"
bad deep "segments[0] is not a dict"
bad not-snapshot "is not a dict with 'segments'"
bad negative-size "device_traces[0][0] has 'size' = -5, out of range"
bad entry-not-dict "device_traces[0][0] is not a dict"
step "a protocol 0 pickle is not detected as a snapshot"
mp import -o out-p0.db protocol-0.pickle
expect_status 1
expect_stderr_contains "unknown trace format"
step "--format=torch names the opcode of a protocol 0 pickle"
mp import --format=torch -o out-p0.db protocol-0.pickle
expect_status 1
expect_stderr_contains "protocol 0"

# A crafted pickle whose values would take far more memory than the file
# (48 MB of None opcodes: more than 2 GB of values) is refused at the
# memory budget, here 200 MiB, rather than run until memory runs out.
python3 -c 'import sys; sys.stdout.buffer.write(b"\x80\x04" + b"N" * 48000000)' >nones.pickle ||
	die "cannot write nones.pickle"
MEMPROF_MAX_MEMORY=200M
export MEMPROF_MAX_MEMORY
bad nones "pickle 'nones.pickle' at byte" "holds more than this import may take" \
	"(MEMPROF_MAX_MEMORY); refused before memory runs out"
unset MEMPROF_MAX_MEMORY

finish
