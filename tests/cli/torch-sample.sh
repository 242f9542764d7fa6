#!/bin/bash
# torch-sample.sh - samples/torch/train_gpt.py byte-compiles, refuses bad options, and,
# when PyTorch imports here, trains a tiny model for a few steps on the CPU
# (--device=cpu): exit 0, a finite final loss near ln(vocab) (random tokens cannot be
# learned in 3 steps).  Without PyTorch it checks the missing-torch message and skips (77).
set -u
. "$(dirname "$0")/lib.sh"

command -v python3 >/dev/null || skip "python3 is needed"
SCRIPT=$top_srcdir/samples/torch/train_gpt.py

step "byte-compiles"
run python3 -c "import py_compile, sys; py_compile.compile(sys.argv[1], cfile=sys.argv[2], doraise=True)" \
	"$SCRIPT" "$TMP/train_gpt.pyc"
expect_status 0
expect_stderr_empty

step "bad options are usage errors (2), before PyTorch is imported"
run python3 "$SCRIPT" --d-model 10 --heads 3
expect_status 2
expect_stderr_contains "--d-model 10 is not a multiple of --heads 3"
run python3 "$SCRIPT" --steps 0
expect_status 2
expect_stderr_contains "--steps must be at least 1"

if ! python3 -c "import torch" >/dev/null 2>&1; then
	step "without PyTorch: one clear line, exit 1"
	run python3 "$SCRIPT" --device=cpu
	expect_status 1
	expect_stderr_contains "train_gpt: PyTorch is not installed"
	[ "$n_failed" -eq 0 ] || finish
	skip "PyTorch does not import here: the CPU training run was not tried"
fi

step "a CPU smoke run"
run python3 "$SCRIPT" --device=cpu --steps 3 --batch 2 --seq 16 --layers 2 --d-model 32 \
	--heads 4 --vocab 64
expect_status 0
expect_stdout_match "^train_gpt: [0-9]+ parameters, 2 layers, d_model 32, batch 2 x 16 tokens on cpu$"
expect_stdout_match "^train_gpt: 3 steps in [0-9.]+ s, final loss [0-9.]+$"
loss=$(sed -n 's/.*final loss \([0-9.]*\)$/\1/p' "$OUT")
# ln(64) = 4.16: a model that has learned nothing from random tokens
awk -v l="${loss:-x}" 'BEGIN { exit !(l + 0 > 3.5 && l + 0 < 5.5) }' && pass ||
	fail "final loss '$loss' is not near ln(64) = 4.16"
expect_stdout_not_contains "max_memory_allocated"

step "--device=cuda without CUDA fails cleanly"
if python3 -c "import torch, sys; sys.exit(torch.cuda.is_available())"; then
	run python3 "$SCRIPT" --steps 1
	expect_status 1
	expect_stderr_contains "train_gpt: no CUDA device usable by PyTorch"
fi

finish
