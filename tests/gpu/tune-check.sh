#!/bin/bash
# tests/gpu/tune-check.sh - does 'memprof tune' predict what PyTorch does?  (issue 27's
# GPU check.)  samples/torch/train_gpt.py is recorded with 'memprof record' (or the
# recording of tests/gpu/record-torch.sh is reused: the same arguments), 'memprof tune'
# predicts the peak reserved bytes under the current setting and recommends one; the
# training then runs twice without memprof, as it is and under the recommended
# PYTORCH_CUDA_ALLOC_CONF, and torch.cuda.max_memory_reserved() (tests/gpu/max_reserved.py)
# must come within 2% of each prediction.  Prints TAP; skips (77) with the reason without a
# GPU, PyTorch with CUDA, or the tune command.  Raw output in $GPU_OUT/tune.
set -u
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
top_builddir=${top_builddir:-.}
MEMPROF=${MEMPROF:-$top_builddir/memprof}
GPU_OUT=${GPU_OUT:-$top_builddir/gpu-runs}
out=$GPU_OUT/tune
PY=${PYTHON:-python3}
# the same training as tests/gpu/record-torch.sh's, so that its recording can be reused
TRAIN="$top_srcdir/samples/torch/train_gpt.py --steps ${TORCH_STEPS:-5} --layers 2 --d-model 256"
TOLERANCE=0.02

reason=$("$PY" "$top_srcdir/tests/gpu/have_gpu.py") || { echo "tune-check: SKIP: $reason"; exit 77; }
"$PY" -c 'import torch, sys; sys.exit(not torch.cuda.is_available())' 2>/dev/null ||
	{ echo "tune-check: SKIP: no PyTorch with CUDA in $PY"; exit 77; }
"$MEMPROF" tune --help >/dev/null 2>&1 || { echo "tune-check: SKIP: $MEMPROF has no tune command"; exit 77; }
mkdir -p "$out" || exit 99

echo "1..4"
db=$GPU_OUT/record-torch/cached.db
if [ -f "$db" ]; then
	cp "$db" "$out/train.db" && echo "ok 1 - the recording of record-torch reused ($db)"
else
	# shellcheck disable=SC2086
	if "$MEMPROF" record -o "$out/train.db" -- "$PY" $TRAIN >"$out/record.log" 2>"$out/record.err"; then
		echo "ok 1 - train_gpt.py recorded"
	else
		echo "not ok 1 - memprof record: exit $?; see $out/record.err"
		tail -n 15 "$out/record.err" | sed 's/^/# /'
		for c in 2 3 4; do echo "ok $c # SKIP no recording"; done
		exit 1
	fi
fi

if ! "$MEMPROF" tune --json --budget=10s "$out/train.db" >"$out/tune.json" 2>"$out/tune.err"; then
	echo "not ok 2 - memprof tune: exit $?; see $out/tune.err"
	tail -n 15 "$out/tune.err" | sed 's/^/# /'
	for c in 3 4; do echo "ok $c # SKIP tune failed"; done
	exit 1
fi
mapfile -t got < <("$PY" - "$out/tune.json" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))
f, r = t["fidelity"], t["recommended"]
for v in (f["model_peak_reserved_bytes"], r["conf"], r["peak_reserved_bytes"], f.get("error")):
    print(v)
PY
)
current_pred=${got[0]:-} conf=${got[1]:-} rec_pred=${got[2]:-} fidelity=${got[3]:-unknown}
echo "ok 2 - memprof tune: fidelity error $fidelity, recommended '${conf:-the defaults}'"

# measure N LABEL CONF PREDICTED: the training under CONF, its peak reserved against PREDICTED
measure() {
	local n=$1 label=$2 conf=$3 pred=$4 got
	# shellcheck disable=SC2086
	PYTORCH_CUDA_ALLOC_CONF=$conf "$PY" "$top_srcdir/tests/gpu/max_reserved.py" $TRAIN \
		>"$out/$label.log" 2>"$out/$label.err"
	got=$(sed -n 's/^MAX_RESERVED //p' "$out/$label.err" | tail -n 1)
	if [ -z "$got" ]; then
		echo "not ok $n - $label ('${conf:-the defaults}'): no max_memory_reserved; see $out/$label.err"
		tail -n 10 "$out/$label.err" | sed 's/^/# /'
		return 1
	fi
	if "$PY" -c 'import sys; g, p, t = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]); sys.exit(abs(g - p) > t * max(p, 1))' \
		"$got" "$pred" "$TOLERANCE"; then
		echo "ok $n - $label ('${conf:-the defaults}'): max_memory_reserved $got, predicted $pred"
	else
		echo "not ok $n - $label ('${conf:-the defaults}'): max_memory_reserved $got, predicted $pred: more than 2% apart"
		return 1
	fi
}
fail=0
measure 3 current "" "$current_pred" || fail=1
measure 4 recommended "$conf" "$rec_pred" || fail=1
exit $fail
