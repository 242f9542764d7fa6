#!/bin/bash
# samples-cuda-build.sh - samples/cuda/megatron_step.cu compiles with nvcc (skipped without
# one), performs exactly the allocations and ranges of samples/megatron/megatron_step.py
# (its --dry-run log against the generator's CSV: op, requested bytes, range names, in order),
# and on a machine without a usable GPU fails cleanly: exit 1 and the CUDA error named.
# With a GPU it runs tiny dimensions for real and its log must match the dry run.
set -u
. "$(dirname "$0")/lib.sh"

SRC=$top_srcdir/samples/cuda/megatron_step.cu
GEN=$top_srcdir/samples/megatron/megatron_step.py
NVCC=${NVCC:-$(command -v nvcc || true)}
[ -n "$NVCC" ] || [ ! -x /usr/local/cuda/bin/nvcc ] || NVCC=/usr/local/cuda/bin/nvcc
[ -n "$NVCC" ] || skip "no nvcc (set NVCC, or put the CUDA toolkit's bin/ on PATH)"
command -v python3 >/dev/null || skip "python3 is needed to run the generator"

W=$TMP/work
mkdir "$W" || die "mkdir $W"
cd "$W" || die "cd $W"

step "compile with nvcc, warning-free"
run "$NVCC" -O2 -Xcompiler -Wall,-Wextra,-Wshadow -o megatron_step "$SRC"
expect_status 0
expect_stderr_empty
[ -x megatron_step ] || { fail "no binary"; finish; }

# as_events: the generator's CSV or the program's log as "alloc BYTES", "free BYTES",
# "push RANGE", "pop RANGE" lines (the CSV's SYNTHETIC marker range has no counterpart).
csv_events() {
	awk -F, '/^#/ || /^ts_ns,/ { next }
		$2 == "alloc" || $2 == "free" { print $2, $5 }
		$2 == "phase_begin" && $10 !~ /^SYNTHETIC / { print "push", $10 }
		$2 == "phase_end" && $10 !~ /^SYNTHETIC / { print "pop", $10 }' "$1"
}
log_events() {
	awk '/^#/ { next } $1 == "alloc" || $1 == "free" { print $1, $3; next } { print }' "$1"
}

DIMS="--layers 3 --hidden 64 --heads 4 --vocab 256 --seq 32 --micro-batch 2 --tp 2 --dp 2"
DIMS="$DIMS --buckets 2 --iterations 2"
DIMS_B="--layers 5 --hidden 96 --heads 3 --vocab 100 --seq 10 --tp 1 --dp 3 --buckets 3"
DIMS_B="$DIMS_B --iterations 2"
for dims in "$DIMS" "$DIMS_B"; do
	step "the dry run performs the generator's events ($dims)"
	run python3 "$GEN" $dims -o gen.csv
	expect_status 0
	run ./megatron_step $dims --dry-run
	expect_status 0
	cp "$OUT" dry.log
	csv_events gen.csv >gen.events
	log_events dry.log >dry.events
	[ -s gen.events ] && pass || fail "no events from the generator"
	expect_same_file gen.events dry.events
	expect_eq "$(grep '^# bucket elements' dry.log | cut -d: -f2)" \
		"$(grep '^# bucket elements' gen.csv | sed 's/.*: \([0-9 ]*\)\..*/ \1/')" "bucket elements"
done

step "the default dimensions agree too"
run python3 "$GEN" -o gen.csv
expect_status 0
run ./megatron_step --dry-run
expect_status 0
cp "$OUT" dry.log
csv_events gen.csv >gen.events
log_events dry.log >dry.events
expect_same_file gen.events dry.events

step "bad options are usage errors"
run ./megatron_step --layers 3 --buckets 4 --dry-run
expect_status 2
expect_stderr_contains "exceeds --layers 3"
run ./megatron_step --layers=x --dry-run
expect_status 2
expect_stderr_contains "'x'"
run ./megatron_step --bogus --dry-run
expect_status 2
expect_stderr_contains "unknown option '--bogus'"

step "for real: tiny dimensions on a GPU, or a clean failure without one"
run ./megatron_step $DIMS
if [ "$status" -eq 0 ]; then
	say "a CUDA device is usable: comparing the real run with the dry run"
	cp "$OUT" real.log
	run ./megatron_step $DIMS --dry-run
	cp "$OUT" dry.log
	log_events real.log >real.events
	log_events dry.log >dry.events
	expect_same_file dry.events real.events
	expect_eq "$(awk '$1 == "alloc" && $4 == "0x0"' real.log | wc -l)" 0 "no null address"
else
	expect_status 1
	expect_stderr_contains "megatron_step: no usable CUDA device: "
	expect_eq "$(grep -c '^alloc' "$OUT")" 0 "nothing allocated"
fi

finish
