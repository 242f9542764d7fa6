#!/bin/bash
# replay-mpi.sh - 'mpirun -np N memprof replay --mpi' on this machine (no GPU):
# a merged N-rank trace made from tests/cli/data/sharded-iterations.csv (rank r:
# pid 100+r, its batches r x 4 MiB larger, so every rank's figures differ while
# the recurring buffers, and so the sharded pool's collectives, are the same on
# every rank; each rank's CSV imported with --rank, then 'memprof merge', which
# numbers rank r's GPU device r), replayed with 2 and 4 ranks on the sim and
# host backends with --pool=sharded,caching.  Checked: rank 0's per-rank results
# equal 'memprof replay' of each rank's own trace figure by figure (sim; times
# apart: they are measured; event numbers apart: they are positions in each
# trace), the job figures are the worst peak / the sums / the slowest rank's,
# the runs are stored once (per rank device, and the job as device -1), the
# host backend's collectives ran across the ranks on every rank; a trace with
# other ranks than -np, ranks given other options, and a rank that fails stop
# every rank with one status and no hang.  Skips (77) without mpirun, unless
# MEMPROF_REQUIRE_MPI=1.
set -u
. "$(dirname "$0")/lib.sh"

W=$TMP/work
mkdir "$W" || die "mkdir $W"
cd "$W" || die "cd $W"
command -v python3 >/dev/null || skip "python3 is needed to check the JSON"
[ -n "$SQLITE3_SHELL" ] || skip "the sqlite3 shell is needed to label the ranks"
if ! command -v mpirun >/dev/null; then
	[ "${MEMPROF_REQUIRE_MPI:-0}" = 1 ] && die "MEMPROF_REQUIRE_MPI=1 but no mpirun"
	skip "no mpirun (install openmpi-bin)"
fi
if "$MEMPROF" replay --mpi --help 2>&1 | grep -q "built without MPI"; then
	[ "${MEMPROF_REQUIRE_MPI:-0}" = 1 ] && die "MEMPROF_REQUIRE_MPI=1 but memprof has no MPI"
	skip "this memprof was built without MPI"
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_btl_vader_single_copy_mechanism=none

# Under AddressSanitizer, Open MPI's own allocations at exit (in MCA components
# it has dlclose'd, so no suppression can name them) would be reported as
# leaks: leak detection is off for the ranks, every other ASan check stays on;
# the code they run is leak-checked by the single-process replay tests.
mpi_asan="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"

# mpi NP ARG...: memprof under mpirun, killed after 120 s (a hang fails the check).
mpi() {
	local np=$1
	shift
	ASAN_OPTIONS=$mpi_asan run timeout 120 mpirun -np "$np" --oversubscribe "$MEMPROF" "$@"
	LAST_CMD="mpirun -np $np memprof $*"
}

# rank_csv R: the fixture as rank R's trace.
rank_csv() {
	python3 - "$DATA/sharded-iterations.csv" "$1" >"rank$1.csv" <<'EOF'
import sys
path, r = sys.argv[1], int(sys.argv[2])
for line in open(path):
    f = line.rstrip("\n").split(",")
    if line.startswith("#") or f[0] == "ts_ns":
        sys.stdout.write(line)
        continue
    f[0] = str(int(f[0]) + r)  # ranks interleave in the merged trace
    f[8] = str(100 + r)
    if f[13].endswith("get_batch@pretrain_gpt.py:80"):
        f[3] = f[4] = str(int(f[3]) + r * 4194304)
    print(",".join(f))
EOF
}

# job NP: job<NP>.db, ranks 0..NP-1 merged, and single<R>.db, each rank alone.
job() {
	local np=$1 r dbs=""
	for r in $(seq 0 $((np - 1))); do
		rank_csv "$r"
		mp import -q -f --rank="$r" --world-size="$np" -o "single$r.db" "rank$r.csv"
		[ "$status" -eq 0 ] || die "import rank$r.csv: $(cat "$ERR")"
		dbs="$dbs single$r.db"
	done
	# shellcheck disable=SC2086
	mp merge -q -o "job$np.db" $dbs
	[ "$status" -eq 0 ] || die "merge$dbs: $(cat "$ERR")"
}

for np in 2 4; do
	job $np
	step "np $np, sim: rank 0 prints every rank's results and the job's"
	mpi $np replay --mpi --backend=sim --pool=sharded,caching --world-size=$np --json job$np.db
	expect_status 0
	cp "$OUT" sim$np.json
	expect_eq "$(grep -c '"version"' sim$np.json)" 1
	for r in $(seq 0 $((np - 1))); do
		mp replay --backend=sim --pool=sharded,caching --world-size=$np --json --no-save \
			single$r.db
		expect_status 0
		cp "$OUT" single$r-$np.json
	done
	check_json sim$np.json "
import glob, json
np = $np
ranks = {}
for x in j['results']:
    ranks.setdefault(x['rank'], []).append(x)
assert sorted(ranks) == list(range(np)), sorted(ranks)
assert j['ranks'] == np
def figures(x):
    # times are measured (pool CPU time); seq numbers are positions in each trace
    out = {k: v for k, v in x.items() if '_ns' not in k and k not in
           ('rank', 'device', 'time_is', 'pool_stats', 'peak_reserved_seq', 'first_oom')}
    out['pool_stats'] = {k: v for k, v in x['pool_stats'].items() if '_ns' not in k}
    return out
for r in range(np):
    single = json.load(open('single%d-%d.json' % (r, np)))['results']
    assert len(single) == len(ranks[r]) == 2, (r, len(single), len(ranks[r]))
    for a, b in zip(ranks[r], single):
        assert a['device'] == r and b['device'] == 0, (r, a['device'], b['device'])
        fa, fb = figures(a), figures(b)
        assert fa == fb, (r, a['pool'], {k: (fa[k], fb.get(k)) for k in fa if fa[k] != fb.get(k)})
assert all(x['pool_stats']['collectives_run'] == 0 for x in j['results'] if x['pool'] == 'sharded')
job = {x['pool']: x for x in j['job']}
for pool, row in job.items():
    mine = [x for x in j['results'] if x['pool'] == pool]
    worst = max(mine, key=lambda x: x['peak_reserved_bytes'])
    assert row['peak_reserved_bytes'] == worst['peak_reserved_bytes'], row
    assert row['peak_rank'] == worst['rank'] and row['peak_device'] == worst['device'], row
    assert row['lower_bound_bytes'] == max(x['lower_bound_bytes'] for x in mine), row
    assert row['saved_bytes'] == sum(x['saved_bytes'] for x in mine), row
    # the job's time is the backend's, as every time saved is (a rank has one device here)
    slow = max(mine, key=lambda x: x['backend_ns'])
    assert row['backend_ns'] == slow['backend_ns'] and row['slowest_rank'] == slow['rank'], row
    assert row['ooms'] == sum(x['ooms'] for x in mine) and row['ranks'] == np, row
# the ranks differ: each rank's lower bound is above the one before (larger batches)
lb = [x['lower_bound_bytes'] for x in sorted(j['results'], key=lambda x: x['rank'])
      if x['pool'] == 'caching']
assert all(a < b for a, b in zip(lb, lb[1:])), lb
"
	step "np $np, sim: stored once, per rank device and for the job (device -1)"
	expect_eq "$(sql job$np.db 'SELECT count(*) FROM replay_runs')" $((2 * np + 2))
	expect_eq "$(sql job$np.db 'SELECT group_concat(device) FROM (SELECT DISTINCT device FROM replay_runs ORDER BY device)')" \
		"$(seq -s, -1 $((np - 1)))"
	want=$(python3 -c "import json; print(json.load(open('sim$np.json'))['job'][1]['peak_reserved_bytes'])")
	expect_eq "$(sql job$np.db "SELECT CAST(value AS INTEGER) FROM replay_metrics m JOIN replay_runs r ON r.id = m.run WHERE r.device = -1 AND r.pool = 'caching' AND m.name = 'peak_reserved_bytes'")" "$want"

	step "np $np, host: the sharded pool's collectives ran across the ranks"
	mpi $np replay --mpi --backend=host --pool=sharded,caching --world-size=$np --json \
		--verify --no-save job$np.db
	expect_status 0
	cp "$OUT" host$np.json
	check_json host$np.json "
sh = [x for x in j['results'] if x['pool'] == 'sharded']
assert sorted(x['rank'] for x in sh) == list(range($np))
for x in sh:
    assert x['pool_stats']['collectives_run'] == 10, (x['rank'], x['pool_stats'])
    assert x['verify'] == 'passed'
assert any('collectives ran across the $np ranks through MPI' in n for n in j['notes']), j['notes']
"

	step "np $np, host: without --world-size the sharded pool's shards are the ranks'"
	mpi $np replay --mpi --backend=host --pool=sharded --baseline=none --json --no-save job$np.db
	expect_status 0
	cp "$OUT" host-default$np.json
	check_json host-default$np.json "
sh = [x for x in j['results'] if x['pool'] == 'sharded']
assert sorted(x['rank'] for x in sh) == list(range($np))
for x in sh:
    assert x['pool_stats']['collectives_run'] == 10, (x['rank'], x['pool_stats'])
said = [n for n in j['notes'] if '--world-size=$np: the number of ranks' in n]
assert len(said) == 1, j['notes']
"
done

step "text output names the ranks and the job"
mpi 2 replay --mpi --backend=sim --pool=sharded,caching --world-size=2 --no-save job2.db
expect_status 0
expect_stdout_contains "ranks     2 (MPI), gathered on rank 0"
expect_stdout_contains "device 1 (rank 1, block level)"
expect_stdout_contains "job (2 ranks): peak = the worst device's"
expect_eq "$(grep -c '^trace ' "$OUT")" 1

step "report and diff read the stored runs, the job's among them"
mp report --format=md -o report.md job2.db
expect_status 0
expect_eq "$(grep -c '| sim |' report.md)" 6
expect_eq "$(grep -c '^| job | ' report.md)" 2 "the job's rows labelled as such"
mp report -o report.html job2.db
expect_status 0
expect_eq "$(grep -c '<h3>The job (all ranks)</h3>' report.html)" 1 "the job's pools heading"
mp diff job2.db job2.db
expect_status 0
expect_eq "$(grep -c '(sim): peak reserved' "$OUT")" 6

step "a trace of 2 ranks under -np 3 fails on every rank, naming the ranks"
mpi 3 replay --mpi --backend=sim --pool=caching --no-save job2.db
expect_status 1
expect_stderr_contains "trace 'job2.db' has 2 ranks (0, 1) but 3 MPI ranks replay it"
expect_stderr_not_contains "rank 0:"

step "a trace with no rank 1 (its ranks 0 and 2) names them"
mp import -q -f --rank=2 -o r2.db rank1.csv
mp merge -q -o gap.db single0.db r2.db
[ "$status" -eq 0 ] || die "merge gap.db: $(cat "$ERR")"
mpi 2 replay --mpi --backend=sim --pool=caching --no-save gap.db
expect_status 1
expect_stderr_contains "trace 'gap.db' has no rank 1 (its ranks: 0, 2)"

step "a trace of one rank under -np 2"
mpi 2 replay --mpi --backend=sim --pool=caching --no-save single0.db
expect_status 1
expect_stderr_contains "trace 'single0.db' has 1 rank (0) but 2 MPI ranks replay it"

step "a trace without ranks says how to label them"
mp import -q -o norank.db rank0.csv
mpi 2 replay --mpi --backend=sim --pool=caching --no-save norank.db
expect_status 1
expect_stderr_contains "trace 'norank.db' has no ranks"
expect_stderr_contains "memprof import --rank=N"

step "ranks given different options fail together"
ASAN_OPTIONS=$mpi_asan run timeout 120 mpirun -np 2 --oversubscribe sh -c \
	'exec "$0" "$@" --capacity=$((1 + OMPI_COMM_WORLD_RANK))GiB' \
	"$MEMPROF" replay --mpi --backend=sim --pool=caching --no-save job2.db
expect_status 2
expect_stderr_contains "the ranks were not given the same replay"

# Rank 1's first pool cannot be created (the test pool envfail fails as a
# backend fault where MEMPROF_TEST_POOL_FAIL is set, and only rank 1 has it):
# rank 1 stops while rank 0 goes on to sharded and caching, and every rank
# must then stop with rank 1's message instead of waiting for it.
step "a rank whose replay fails stops every rank, with its message"
mkdir pl
run "${CC:-cc}" -std=c11 -shared -fPIC -I"$top_srcdir/include" -o pl/envfail.so \
	"$top_srcdir/tests/plugins/fail_on_env.c"
[ "$status" -eq 0 ] || die "cannot build the test pool: $(cat "$ERR")"
sql job2.db "DELETE FROM replay_metrics; DELETE FROM replay_runs" || die "sql job2.db"
ASAN_OPTIONS=$mpi_asan run timeout 120 mpirun -np 2 --oversubscribe sh -c \
	'[ "$OMPI_COMM_WORLD_RANK" = 1 ] && export MEMPROF_TEST_POOL_FAIL=1; exec "$0" "$@"' \
	"$MEMPROF" replay --mpi --backend=host --plugin-dir=pl --pool=envfail,sharded,caching \
	--world-size=2 job2.db
expect_status 1
expect_stderr_contains "failed on rank 1"
expect_stderr_contains "rank 1: memprof replay: device 1: pool 'envfail': cannot reserve: MEMPROF_TEST_POOL_FAIL is set"
expect_stdout_empty
expect_eq "$(sql job2.db 'SELECT count(*) FROM replay_runs')" 0

finish
