#!/bin/bash
# replay-mpi-nccl.sh - 'mpirun -np 2 memprof replay --mpi --backend=cuda' on this
# machine, with no GPU: the fake driver and the fake NCCL of tests/unit/
# (MEMPROF_LIBCUDA, MEMPROF_LIBNCCL) stand in for them.  This checks the calls memprof
# makes and what it decides across two real processes (the NCCL id sent over MPI,
# the ranks' GPU round, the verdicts), not NCCL or a GPU (tests/gpu/multi-gpu.sh does
# that on a lent machine).  A 2-rank trace, the sharded fixture twice, with the
# sharded pool: each rank on a GPU of its own (FAKECUDA_UUID_PER_PROCESS=1, as
# CUDA_VISIBLE_DEVICES per rank): collectives run on both ranks; both ranks on the
# fake's one GPU: refused on every rank, naming the two ranks, with one status and no
# hang; no NCCL: the collectives are skipped, exit 0, and a note says why.  Skips (77)
# without mpirun, MPI, CUDA headers or 'memprof merge'.
set -u
. "$(dirname "$0")/lib.sh"

W=$TMP/work
mkdir "$W" || die "mkdir $W"
cd "$W" || die "cd $W"
FAKE_CUDA=$top_builddir/tests/unit/.libs/fake_libcuda.so
FAKE_NCCL=$top_builddir/tests/unit/.libs/fake_libnccl.so
command -v python3 >/dev/null || skip "python3 is needed to check the JSON"
command -v mpirun >/dev/null || skip "no mpirun (install openmpi-bin)"
"$MEMPROF" replay --help 2>&1 | grep -q -- "--mpi" || skip "this memprof has no replay --mpi"
"$MEMPROF" replay --mpi --help 2>&1 | grep -q "built without MPI" && skip "built without MPI"
"$MEMPROF" merge --help >/dev/null 2>&1 || skip "this memprof has no merge"
[ -f "$FAKE_CUDA" ] && [ -f "$FAKE_NCCL" ] || skip "no fake driver (built without CUDA?)"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_btl_vader_single_copy_mechanism=none
export MEMPROF_LIBCUDA=$FAKE_CUDA MEMPROF_LIBNCCL=$FAKE_NCCL MEMPROF_NCCL_TIMEOUT=20

step "a 2-rank trace: the sharded fixture as rank 0 and rank 1"
for r in 0 1; do
	mp import -q -o s$r.db --rank=$r --local-rank=$r --world-size=2 --host=node0 \
		"$DATA/sharded-iterations.csv"
	expect_status 0
done
mp merge s0.db s1.db -o job.db
expect_status 0

# Under AddressSanitizer, Open MPI's own allocations at exit (in MCA components
# it has dlclose'd, so no suppression can name them) would be reported as
# leaks: leak detection is off for the ranks, every other ASan check stays on;
# the code they run is leak-checked by the single-process replay tests.
mpi_asan="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"

# mpi ARG...: memprof under mpirun -np 2, killed after 120 s (a hang fails the check).
mpi() {
	ASAN_OPTIONS=$mpi_asan run timeout 120 mpirun -np 2 --oversubscribe "$MEMPROF" "$@"
	LAST_CMD="mpirun -np 2 memprof $*"
}

# collectives FILE: 'rank:device:collectives_run' of every sharded result, sorted
collectives() {
	python3 - "$1" <<'PY'
import json, sys
t = open(sys.argv[1]).read()
j = json.loads(t[t.index("{"):])
out = []
def walk(x):
    if isinstance(x, dict):
        if x.get("pool") == "sharded" and isinstance(x.get("pool_stats"), dict):
            out.append("%s:%s:%s" % (x.get("rank"), x.get("device"),
                                     x["pool_stats"].get("collectives_run")))
        for v in x.values():
            walk(v)
    elif isinstance(x, list):
        for v in x:
            walk(v)
walk(j)
print(" ".join(sorted(out)))
PY
}

step "each rank on a GPU of its own: one NCCL rank per process, collectives on both"
FAKECUDA_UUID_PER_PROCESS=1 mpi replay job.db --mpi --backend=cuda --pool=sharded \
	--world-size=2 --json --no-save
expect_status 0
got=$(collectives "$OUT")
# The fixture's 5 recurring keys, an all-gather and a reduce-scatter each: 10 per rank.
[ "$got" = "0:0:10 1:1:10" ] && pass "collectives_run per rank: $got" ||
	fail "collectives_run per rank: '$got', expected '0:0:10 1:1:10'"

step "both ranks on the fake's one GPU: refused on every rank, naming them"
mpi replay job.db --mpi --backend=cuda --pool=sharded --world-size=2 --no-save
expect_status 1
expect_stderr_contains "ranks 0 and 1 are on the same GPU (GPU 0, GPU-00ababab-abab-abab-abab-abababababab): NCCL needs a GPU of its own for each rank (rank 0, local rank 0, sees 1 GPU here)"
expect_stderr_contains "(rank 1, local rank 1, sees 1 GPU here)"

step "no NCCL: the collectives are skipped on every rank, the replay goes on"
MEMPROF_LIBNCCL=/nonexistent/libnccl.so.2 FAKECUDA_UUID_PER_PROCESS=1 \
	mpi replay job.db --mpi --backend=cuda --pool=sharded --world-size=2 --json --no-save
expect_status 0
got=$(collectives "$OUT")
[ "$got" = "0:0:0 1:1:0" ] && pass "collectives_run per rank: $got" ||
	fail "collectives_run per rank: '$got', expected '0:0:0 1:1:0'"
expect_stdout_contains "no NCCL unique id: NCCL not found (/nonexistent/libnccl.so.2"

finish
