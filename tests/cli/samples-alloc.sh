#!/bin/bash
# samples-alloc.sh - the allocation samples of samples/cuda/ (alloc_*.cu, nccl_comm.cu)
# compile with nvcc without a warning (skipped without nvcc), link no libcuda (so they
# start without a driver), answer --help and refuse unknown options (exit 2); without a
# usable GPU each prints one line "NAME: no CUDA driver: ..." (or "no CUDA device")
# on stderr, nothing on stdout, and exits 1.  On a GPU, each run's log must agree with its
# own "end" line (tests/gpu/record-samples.sh compares it with a recording).
set -u
. "$(dirname "$0")/lib.sh"

NVCC=${NVCC:-$(command -v nvcc || true)}
[ -n "$NVCC" ] || [ ! -x /usr/local/cuda/bin/nvcc ] || NVCC=/usr/local/cuda/bin/nvcc
[ -n "$NVCC" ] || skip "no nvcc (set NVCC, or put the CUDA toolkit's bin/ on PATH)"
cd "$TMP" || die "cd $TMP"

SAMPLES="alloc_runtime alloc_async alloc_managed alloc_pinned alloc_driver alloc_vmm nccl_comm"
for s in $SAMPLES; do
	step "$s: compile with nvcc, warning-free"
	run "$NVCC" -O2 -Xcompiler -Wall,-Wextra,-Wshadow -o "$s" "$top_srcdir/samples/cuda/$s.cu"
	expect_status 0
	expect_stderr_empty
	[ -x "$s" ] || { fail "no binary"; continue; }

	step "$s: links no libcuda and no libnccl"
	run readelf -d "$s"
	expect_stdout_not_contains "libcuda.so"
	expect_stdout_not_contains "libnccl"

	step "$s: --help, and an unknown option is a usage error"
	run "./$s" --help
	expect_status 0
	expect_stdout_contains "usage: $s"
	run "./$s" --bogus
	expect_status 2
	expect_stderr_contains "$s: unknown option '--bogus'"

	step "$s: runs, or fails cleanly without a GPU"
	run "./$s"
	if [ "$status" -eq 0 ]; then
		# the end line's counts are the log's own lines
		n_alloc=$(grep -c '^memprof-sample alloc ' "$OUT")
		n_free=$(grep -c '^memprof-sample free ' "$OUT")
		expect_stdout_match "^memprof-sample end sample=$s allocs=$n_alloc frees=$n_free "
		expect_stdout_match "^memprof-sample begin sample=$s pid=[0-9]+ "
	else
		expect_status 1
		expect_eq "$(grep -c '' "$ERR")" 1 "stderr lines"
		if grep -q "no CUDA device" "$ERR"; then
			expect_stderr_contains "$s: no CUDA device: "
		else
			expect_stderr_contains "$s: no CUDA driver: "
		fi
		expect_stdout_empty
	fi
done

step "alloc_runtime: --loop wants a number"
run ./alloc_runtime --loop=many
expect_status 2
expect_stderr_contains "alloc_runtime: --loop wants a whole number, not 'many'"
run ./nccl_comm --ranks=-1
expect_status 2

finish
