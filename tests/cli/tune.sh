#!/bin/bash
# tune.sh - 'memprof tune' on hand-built snapshots whose best allocator
# setting is worked out in tests/cli/make_tune_traces.py: max_split_size_mb
# against default splitting (130 MiB against 200, fidelity 0% against the
# trace's own segments), expandable segments (60 MiB against 120), rounding
# divisions (36 MiB against 70); with --capacity the setting that avoids the
# OOM; the results stored in the trace; and the errors (usage, a trace
# under cudaMallocAsync, a missing file).
set -u
. "$(dirname "$0")/lib.sh"

command -v python3 >/dev/null || skip "python3 is needed to write the snapshots"
W=$TMP/work
mkdir "$W" && cd "$W" || die "cannot make $W"
python3 "$top_srcdir/tests/cli/make_tune_traces.py" "$W" || die "make_tune_traces.py failed"
for n in split expand round async two; do
	mp import -o "$n.db" "$n.pickle"
	expect_status 0
done
MiB=1048576

# tune_json NAME CHECK [OPTIONS]: tune --json and check its output in Python
tune_json() {
	local name=$1 code=$2
	shift 2
	mp tune --json "$@" "$name.db"
	expect_status 0
	cp "$OUT" "$name.json"
	check_json "$name.json" "
M = $MiB
cur, best = j['current'], j['best'][0]
$code"
}

step "split: max_split_size_mb keeps the 100 MiB block whole"
tune_json split "
f = j['fidelity']
assert f['recorded'] and f['recorded_peak_reserved_bytes'] == 200 * M and f['error'] == 0, f
assert f['reliable'] and f['model_segments'] == f['recorded_segments'] == 2, f
assert cur['conf'] == '' and cur['peak_reserved_bytes'] == 200 * M, cur
assert best['peak_reserved_bytes'] == 130 * M and best['saved_bytes'] == 70 * M, best
assert best['conf'].startswith('max_split_size_mb:'), best
assert 30 <= int(best['conf'].split(':')[1].split(',')[0]) <= 100, best
assert j['evaluated'] > 100, j['evaluated']"

step "expand: expandable segments save 60 MiB"
tune_json expand "
assert not j['fidelity']['recorded'] and j['fidelity']['error'] is None, j['fidelity']
assert cur['peak_reserved_bytes'] == 120 * M and cur['cudamalloc_calls'] == 3, cur
assert best['conf'] == 'expandable_segments:True', best
assert best['peak_reserved_bytes'] == 60 * M and best['saved_bytes'] == 60 * M, best
assert best['cudamalloc_calls'] == 0 and best['cumemmap_calls'] == 3, best"

step "round: 8 divisions round 33..36 MiB to one reused 36 MiB segment"
tune_json round "
assert cur['peak_reserved_bytes'] == 70 * M, cur
assert best['peak_reserved_bytes'] == 36 * M and best['saved_bytes'] == 34 * M, best
assert best['conf'].startswith('roundup_power2_divisions:'), best
assert '8' in best['conf'], best"

step "split under --capacity=150MiB: the defaults run out of memory, max_split_size_mb does not"
tune_json split "
assert cur['ooms'] == 1 and best['ooms'] == 0, (cur, best)
assert j['capacity_bytes'] == 150 * M" --capacity=150MiB --objective=calls --threads=1
mp tune --capacity=150MiB --no-save split.db
expect_status 0
expect_stdout_contains "the current setting runs out of memory (1 OOMs)"
expect_stdout_contains "export PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:"
expect_stdout_contains "fidelity  peak reserved 200 MiB modelled against 200 MiB recorded (+0.00%)"

step "the results are stored in the trace"
if [ -n "$SQLITE3_SHELL" ]; then
	expect_eq "$(sql split.db "SELECT count(*) FROM replay_runs WHERE pool LIKE 'caching (tune%'")" 12 \
		"two tunes of 1 + 5 runs each"
	expect_eq "$(sql expand.db "SELECT pool || ' ' || options FROM replay_runs r JOIN replay_metrics m ON m.run = r.id WHERE m.name='tune_rank' AND m.value=1")" \
		"caching (tune #1) memprof tune: PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True" \
		"the best run's line"
fi
mp replay --backend=sim --pool=caching expand.db
expect_status 0
mp report --format=md -o expand.md expand.db
expect_status 0
expect_file_present expand.md
grep -q '| caching (tune \\#1) | sim | 60.0 MiB |' expand.md && pass ||
	fail "report lists the tune runs: $(grep caching expand.md)"
grep -q '| caching | sim | 120 MiB |' expand.md && pass ||
	fail "report keeps the replay's own caching run: $(grep caching expand.md)"
mp tune --no-save --best=2 --budget=10s round.db
expect_status 0
expect_stdout_contains "  #2 "
expect_stdout_not_contains "  #3 "

step "a recorded workload's PYTORCH_CUDA_ALLOC_CONF is kept in the trace's meta"
SPOOL_SCRIPT=$top_builddir/tests/tools/spool_script
if [ -x "$SPOOL_SCRIPT" ] && [ -n "$SQLITE3_SHELL" ]; then
	"$SPOOL_SCRIPT" env.mpt <<'SPOOL' || die "spool_script failed"
header pid=4242 ppid=1
meta env:PYTORCH_CUDA_ALLOC_CONF expandable_segments:True,max_split_size_mb:256
meta env:PYTORCH_ALLOC_CONF garbage_collection_threshold:0.6
device 0 name="Test GPU" uuid=GPU-1234 total=85899345920
event kind=api name=cudaMalloc corr=30 thread=78 ts=2100 duration=100 addr=0x7f0000300000 bytes=8192 device=0
SPOOL
	mp import -o env.db env.mpt
	expect_status 0
	expect_eq "$(sql env.db "SELECT value FROM meta WHERE key='env:PYTORCH_CUDA_ALLOC_CONF'")" \
		"expandable_segments:True,max_split_size_mb:256" "PYTORCH_CUDA_ALLOC_CONF in meta"
	expect_eq "$(sql env.db "SELECT value FROM meta WHERE key='env:PYTORCH_ALLOC_CONF'")" \
		"garbage_collection_threshold:0.6" "PYTORCH_ALLOC_CONF in meta"
fi

step "errors"
mp tune async.db
expect_status 1
expect_one_message "memprof tune: cannot model the allocator setting of 'async.db': bad value for 'backend': expected native (memprof models PyTorch's own caching allocator, not cudaMallocAsync)"
mp tune missing.db
expect_status 1
mp tune
expect_status 2
mp tune --objective=speed split.db
expect_status 2
expect_stderr_contains "invalid --objective 'speed': expected reserved, calls or time"
mp tune --budget=5 split.db
expect_status 2
expect_stderr_contains "invalid --budget '5'"
mp tune two.db
expect_status 1
expect_one_message "memprof tune: several devices in trace 'two.db': tune tunes one at a time"
tune_json two "
assert j['device'] == 1 and best['peak_reserved_bytes'] == 36 * M, (j['device'], best)" --device=1 --no-save
mp tune --device=3 split.db
expect_status 1
expect_stderr_contains "no device 3 in 'split.db'"

finish
