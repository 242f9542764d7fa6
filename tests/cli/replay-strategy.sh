#!/bin/bash
# replay-strategy.sh - the strategy pools on the synthetic Megatron-style
# workload of samples/megatron (4 layers, TP 2, DP 2, 2 gradient buckets,
# 3 iterations): every pool passes --verify on sim and host, and each pool's
# own figures are checked against what the trace itself says, read with
# sqlite3 independently of the pools:
#   mxfp8     pairs 'param bucket K' with 'grad bucket K': 2 pairs, each
#             iteration's parameter buffer lies in its gradient buffer
#             (2 x 3 shared blocks, each zeroed once: 6 memsets), and the
#             bytes saved are the parameter buffers' granted bytes;
#   global2x  restricted to the TP all-gather site serves those requests
#             from its buffers and sends every other request to caching;
#   bucketed  serves every request from a bucket or its large pool;
#   sharded   finds the 3 iterations from the phase markers;
#   compacting with its default threshold passes verify and reports its
#             compactions.
set -u
. "$(dirname "$0")/lib.sh"

command -v python3 >/dev/null || skip "python3 is needed for the generator and the JSON"
command -v sqlite3 >/dev/null || skip "sqlite3 is needed to read the trace"
W=$TMP/work
mkdir "$W" || die "mkdir $W"
cd "$W" || die "cd $W"

step "generate and import the workload"
run python3 "$top_srcdir/samples/megatron/megatron_step.py" --layers 4 --hidden 512 --heads 8 \
	--seq 512 --micro-batch 1 --tp 2 --dp 2 --buckets 2 --iterations 3 -o step.csv
expect_status 0
mp import -o step.db step.csv
expect_status 0

# what the trace says, for the checks below
q() { sqlite3 step.db "$1"; }
n_allocs=$(q "SELECT count(*) FROM events WHERE op = 1")
param_bytes=$(q "SELECT sum(m) FROM (SELECT max(e.size) AS m FROM events e JOIN phases p
	ON p.id = e.phase WHERE e.op = 1 AND p.name LIKE 'param bucket %' GROUP BY p.name)")
n_param=$(q "SELECT count(*) FROM events e JOIN phases p ON p.id = e.phase
	WHERE e.op = 1 AND p.name LIKE 'param bucket %'")
n_gather=$(q "SELECT count(*) FROM events e JOIN stacks s ON s.id = e.stack
	JOIN frames f ON f.id = s.frame WHERE e.op = 1 AND f.name = '_gather_along_first_dim'")
expect_eq "$n_param" 6 "parameter buffers: 2 buckets x 3 iterations"
[ "$n_gather" -gt 0 ] || fail "the workload has no TP all-gather buffers"

for be in sim host; do
	step "every pool with --verify on $be"
	mp replay --backend=$be --verify --no-save --json --sites='_gather_along_first_dim*' \
		step.db
	expect_status 0
	cp "$OUT" all-$be.json
	check_json all-$be.json "
r = {x['pool']: x for x in j['results']}
for x in j['results']:
    assert x['verify'] == 'passed', (x['pool'], x['verify_message'])
for p in ('global2x', 'bucketed', 'compacting', 'sharded', 'mxfp8', 'caching', 'direct'):
    assert p in r, p
c, m = r['caching'], r['mxfp8']
s = m['pool_stats']
assert s['pairs_found'] == 2, s
assert m['blocks_shared'] == $n_param, m['blocks_shared']
assert m['calls']['cudaMemsetAsync'] == $n_param, m['calls']
assert s['bytes_saved'] == $param_bytes, (s['bytes_saved'], $param_bytes)
assert m['peak_reserved_bytes'] < c['peak_reserved_bytes'], (m['peak_reserved_bytes'], c['peak_reserved_bytes'])
g = r['global2x']['pool_stats']
assert g['requests_outside_sites'] == $n_allocs - $n_gather, g
assert g['requests_served_from_buffer'] + g['buffer_reserves'] >= $n_gather, g
assert g['requests_served_from_buffer'] > 0, g
b = r['bucketed']['pool_stats']
assert b['bucketed_requests'] + b['large_requests'] == $n_allocs, b
h = r['sharded']['pool_stats']
assert h['iterations_from'] == 1 and h['iterations'] == 3, h
assert h['recurring_sites'] > 0 and h['allocations_avoided'] > 0, h
k = r['compacting']
assert 'compactions' in k['pool_stats'], k['pool_stats']
print('$be: caching %d, mxfp8 %d (saved %d), sharded %d, compacting %d, bucketed %d, global2x %d' % (
    c['peak_reserved_bytes'], m['peak_reserved_bytes'], s['bytes_saved'],
    r['sharded']['peak_reserved_bytes'], k['peak_reserved_bytes'],
    r['bucketed']['peak_reserved_bytes'], r['global2x']['peak_reserved_bytes']))
"
done

step "compacting's zero-copy variant with --verify on host"
mp replay --backend=host --verify --no-save --json --pool=compacting --mode=vmm step.db
expect_status 0
cp "$OUT" vmm.json
check_json vmm.json "
k = j['results'][0]
assert k['verify'] == 'passed', k['verify_message']
assert k['bytes_copied'] == 0, k['bytes_copied']
"

step "pool option names match with '-' and '_' as one; a bad value is refused by name"
mp replay --backend=sim --no-save --compact_at=0.5 --world_size=4 \
	--pool=compacting,sharded step.db
expect_status 0
mp replay --backend=sim --no-save --pool=compacting --compact-at=2 step.db
expect_status 1
expect_stderr_contains "bad option 'compact-at=2'"

finish
