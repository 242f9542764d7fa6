#!/bin/bash
# record-no-driver.sh - a CUDA sample (samples/cuda/alloc_runtime.cu) run under
# 'memprof record' on a machine without a GPU driver: the sample fails cleanly (its own
# "no CUDA driver" line, exit 1), memprof record exits with the sample's status, says
# "no GPU driver" and "nothing was recorded", and leaves no trace file and no spool.
# Skipped without nvcc, and on a machine where the sample finds a usable GPU.
set -u
. "$(dirname "$0")/lib.sh"

NVCC=${NVCC:-$(command -v nvcc || true)}
[ -n "$NVCC" ] || [ ! -x /usr/local/cuda/bin/nvcc ] || NVCC=/usr/local/cuda/bin/nvcc
"$MEMPROF" record --help >/dev/null 2>&1 || skip "this memprof has no record command yet"

# The sample: the one 'make samples-cuda' built, else compiled here.
SAMPLE=$top_builddir/samples/cuda/alloc_runtime
SRC=$top_srcdir/samples/cuda/alloc_runtime.cu
if [ ! -x "$SAMPLE" ] || [ "$SRC" -nt "$SAMPLE" ]; then
	[ -n "$NVCC" ] || skip "no nvcc to build $SRC (set NVCC, or run 'make samples-cuda')"
	SAMPLE=$TMP/alloc_runtime
	"$NVCC" -O2 -o "$SAMPLE" "$SRC" >"$TMP/nvcc.log" 2>&1 ||
		die "nvcc failed on $SRC: $(tail -n 5 "$TMP/nvcc.log")"
fi

use_inject_library

W=$TMP/work
mkdir "$W" || die "mkdir $W"
cd "$W" || die "cd $W"

step "the sample alone"
run "$SAMPLE"
[ "$status" -ne 0 ] || skip "a CUDA driver and device are usable here: see tests/gpu/record-samples.sh"
expect_status 1
expect_stderr_contains "alloc_runtime: no CUDA driver: "
expect_stdout_empty

step "under memprof record"
run "$MEMPROF" record -o "$W/out.db" -- "$SAMPLE"
LAST_CMD="memprof record -o $W/out.db -- $SAMPLE"
expect_status 1
expect_stderr_contains "alloc_runtime: no CUDA driver: "
expect_stderr_contains "no GPU driver"
expect_stderr_contains "nothing was recorded"
expect_stdout_empty
expect_file_absent "$W/out.db"
expect_no_temp_files "$W"
expect_eq "$(find "$W" "$TMP" -name '*.mpt' | wc -l)" 0 "spool files left"

step "the default output name is not created either"
run "$MEMPROF" record -- "$SAMPLE"
LAST_CMD="memprof record -- $SAMPLE"
expect_status 1
expect_stderr_contains "nothing was recorded"
expect_eq "$(find "$W" -name 'memprof-*.db' | wc -l)" 0 "trace files left"

step "a usage error of the sample is its status too (2)"
run "$MEMPROF" record -o "$W/out.db" -- "$SAMPLE" --bogus
expect_status 2
expect_stderr_contains "alloc_runtime: unknown option '--bogus'"
expect_file_absent "$W/out.db"

finish
