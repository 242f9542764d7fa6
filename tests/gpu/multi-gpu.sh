#!/bin/bash
# tests/gpu/multi-gpu.sh - issue 9's NCCL paths on the GPUs there are (run by
# tests/gpu/oneshot.sh (part nccl); raw output under $GPU_OUT/multi-gpu/ for docs/gpu-runs/).  Prints TAP.
#  1. a generated 2-rank trace (make_rank_traces.py, import --rank, merge) replayed on
#     the cuda backend in one process: the trace's devices in turn on the visible GPUs;
#  2. the sharded pool's collectives in one process (ncclCommInitAll over the visible
#     GPUs, up to --world-size): collectives_run > 0 in the JSON (on one GPU none runs:
#     a collective needs two ranks; the check skips and says so); with MEMPROF_LIBNCCL
#     naming no library: collectives_run 0, exit 0 (skipped, never hung);
#  3. mpirun -np 2 ... --mpi --backend=cuda (one NCCL rank per process, ncclCommInitRank)
#     when mpirun exists and there are 2 GPUs: collectives_run > 0 on every rank; with
#     one GPU, the two ranks must be refused as sharing it, in bounded time.
# A check that cannot run here says why ("# SKIP ..."); none is counted as passed.
# Without a GPU the whole script skips (77) with the reason.
set -u
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
top_builddir=${top_builddir:-$top_srcdir}
MEMPROF=${MEMPROF:-$top_builddir/memprof}
OUT=${GPU_OUT:-$top_builddir/gpu-runs}/multi-gpu
reason=$(python3 "$top_srcdir/tests/gpu/have_gpu.py") || { echo "multi-gpu: SKIP: $reason"; exit 77; }
mkdir -p "$OUT" || exit 1
[ -d /usr/local/cuda/lib64 ] && export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}/usr/local/cuda/lib64
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
n=0 fail=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
bad() { n=$((n + 1)); fail=1; echo "not ok $n - $*"; }
skip() { n=$((n + 1)); echo "ok $n - # SKIP $*"; }

# collectives NAME.json: 'min max count' of collectives_run over every sharded result
collectives() {
	python3 - "$1" <<'PY'
import json, sys
runs = []
def walk(x):
    if isinstance(x, dict):
        if x.get("pool") == "sharded" and isinstance(x.get("pool_stats"), dict):
            runs.append(x["pool_stats"].get("collectives_run", -1))
        for v in x.values():
            walk(v)
    elif isinstance(x, list):
        for v in x:
            walk(v)
try:
    walk(json.load(open(sys.argv[1])))
except Exception as e:
    print("-1 -1 0")
    sys.exit(0)
print(min(runs, default=-1), max(runs, default=-1), len(runs))
PY
}

n_gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
echo "# $n_gpus GPU(s); mpirun: $(command -v mpirun || echo none)"
nvidia-smi -L >"$OUT/gpus.txt" 2>&1
nvidia-smi topo -m >>"$OUT/gpus.txt" 2>&1
ls -l /usr/local/cuda/lib64/libnccl.so* >>"$OUT/gpus.txt" 2>&1
cd "$OUT" || exit 1
rm -f ./*.db

# The 2-rank job: two generated per-rank traces, and the sharded fixture twice.
have_merge=0
if "$MEMPROF" merge --help >/dev/null 2>&1 && [ -f "$top_srcdir/tests/tools/make_rank_traces.py" ]; then
	have_merge=1
	python3 "$top_srcdir/tests/tools/make_rank_traces.py" --ranks 2 --out ranks >make-ranks.txt 2>&1 &&
		for r in 0 1; do
			"$MEMPROF" import -q -f --rank=$r --local-rank=$r --world-size=2 --host=node0 \
				-o r$r.db ranks/rank$r.csv || exit 1
			"$MEMPROF" import -q -f --rank=$r --local-rank=$r --world-size=2 --host=node0 \
				-o s$r.db "$top_srcdir/tests/cli/data/sharded-iterations.csv" || exit 1
		done >import.txt 2>&1 &&
		"$MEMPROF" merge r0.db r1.db -o job.db >merge.txt 2>&1 &&
		"$MEMPROF" merge s0.db s1.db -o sharded-job.db >>merge.txt 2>&1 || have_merge=0
fi

# 1. one process, the job's devices on the GPUs
if [ "$have_merge" = 1 ]; then
	timeout 120 "$MEMPROF" replay --backend=cuda --verify --pool=caching,direct --json \
		--no-save job.db >replay-job.json 2>replay-job.err
	st=$?
	if [ $st -eq 0 ]; then
		ok "2-rank merged trace replayed on cuda in one process ($n_gpus GPU(s))"
	else
		bad "2-rank merged trace on cuda in one process: exit $st (replay-job.err)"
	fi
else
	skip "no 'memprof merge' or make_rank_traces.py in this build: no 2-rank trace"
fi

# 2. the sharded pool's collectives through ncclCommInitAll
if [ "$have_merge" = 1 ]; then db=sharded-job.db; else
	db=sharded.db
	"$MEMPROF" import -q -f -o $db "$top_srcdir/tests/cli/data/sharded-iterations.csv"
fi
ws=$((n_gpus < 2 ? 2 : n_gpus))
timeout 180 "$MEMPROF" replay --backend=cuda --verify --pool=sharded --world-size=$ws --json \
	--no-save $db >sharded-one.json 2>sharded-one.err
st=$?
read -r lo hi cnt <<<"$(collectives sharded-one.json)"
if [ "$n_gpus" -lt 2 ] && [ $st -eq 0 ] && [ "$cnt" -gt 0 ] && [ "$hi" -eq 0 ]; then
	# One GPU: NCCL would have one rank, where a collective moves nothing: none is run
	skip "one GPU: a collective needs two ranks, so none ran (collectives_run 0, exit 0; NCCL itself runs in the nccl_comm sample)"
elif [ "$n_gpus" -lt 2 ]; then
	bad "sharded pool on one GPU: exit $st, collectives_run $lo..$hi over $cnt run(s): expected none run (sharded-one.err)"
elif [ $st -eq 0 ] && [ "$cnt" -gt 0 ] && [ "$lo" -gt 0 ]; then
	ok "sharded pool in one process: collectives_run $lo..$hi over $cnt run(s), world size $ws, NCCL over min($ws, $n_gpus) GPU(s)"
else
	bad "sharded pool in one process: exit $st, collectives_run $lo..$hi over $cnt run(s) (sharded-one.err)"
fi
MEMPROF_LIBNCCL=/nonexistent/libnccl.so.2 timeout 120 "$MEMPROF" replay --backend=cuda \
	--pool=sharded --json --no-save $db >sharded-nonccl.json 2>sharded-nonccl.err
st=$?
read -r lo hi cnt <<<"$(collectives sharded-nonccl.json)"
if [ $st -eq 0 ] && [ "$cnt" -gt 0 ] && [ "$hi" -eq 0 ]; then
	ok "without NCCL the collectives are skipped (collectives_run 0), exit 0"
else
	bad "without NCCL: exit $st, collectives_run $lo..$hi over $cnt run(s) (sharded-nonccl.err)"
fi

# 3. mpirun -np 2 --mpi: one NCCL rank per process
np=2
if ! command -v mpirun >/dev/null; then
	skip "no mpirun on this machine: replay --mpi not run"
elif ! "$MEMPROF" replay --help 2>&1 | grep -q -- '--mpi'; then
	skip "this memprof was built without MPI: replay --mpi not run"
elif [ "$have_merge" != 1 ]; then
	skip "no 2-rank trace (no 'memprof merge'): replay --mpi not run"
elif [ "$n_gpus" -ge $np ]; then
	timeout 300 mpirun -np $np "$MEMPROF" replay sharded-job.db --mpi --backend=cuda --verify \
		--pool=sharded --world-size=$np --json --no-save >mpi-sharded.json 2>mpi-sharded.err
	st=$?
	read -r lo hi cnt <<<"$(collectives mpi-sharded.json)"
	if [ $st -eq 0 ] && [ "$cnt" -ge $np ] && [ "$lo" -gt 0 ]; then
		ok "mpirun -np $np --mpi --backend=cuda: collectives_run $lo..$hi on $cnt rank run(s)"
	else
		bad "mpirun -np $np --mpi --backend=cuda: exit $st, collectives_run $lo..$hi over $cnt (mpi-sharded.err)"
	fi
else
	# Two ranks, one GPU: NCCL cannot put both on it; memprof must say so, not hang.
	timeout 300 mpirun -np $np "$MEMPROF" replay sharded-job.db --mpi --backend=cuda \
		--pool=sharded --world-size=$np --no-save >mpi-one-gpu.txt 2>&1
	st=$?
	if [ $st -ne 0 ] && [ $st -ne 124 ] && grep -q 'are on the same GPU' mpi-one-gpu.txt; then
		ok "mpirun -np $np on $n_gpus GPU: refused as two ranks on one GPU (exit $st)"
	else
		bad "mpirun -np $np on $n_gpus GPU: exit $st, no 'are on the same GPU' (mpi-one-gpu.txt)"
	fi
	skip "fewer than $np GPUs ($n_gpus): mpirun -np $np --mpi collectives not run"
fi
echo "1..$n"
exit $fail
