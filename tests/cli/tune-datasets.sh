#!/bin/bash
# tune-datasets.sh - 'memprof tune' on every PyTorch snapshot in
# ../shared/datasets (recorded by others): the model under the snapshot's
# own setting lands within 2% of the peak reserved bytes PyTorch recorded
# (within 0.5% on the state-only snapshot, which the model starts from its
# recorded segments: issue 27 item 2), and the setting tune recommends is
# predicted no worse than the current one.  Prints, per snapshot, the
# fidelity error, the recommendation and its predicted peak against the
# recorded one.  Skips (77) when ../shared/datasets is absent.
set -u
. "$(dirname "$0")/lib.sh"

datasets=$top_srcdir/../shared/datasets
[ -d "$datasets/torch-snapshots" ] || skip "no $datasets/torch-snapshots"
command -v python3 >/dev/null || skip "python3 is needed to check the JSON"
W=$TMP/work
mkdir "$W" && cd "$W" || die "cannot make $W"

for f in "$datasets"/torch-snapshots/*.pickle; do
	name=$(basename "$f" .pickle)
	step "$name"
	mp import -o "$name.db" "$f"
	expect_status 0 || continue
	mp tune --json --no-save --budget=20s "$name.db"
	expect_status 0 || continue
	cp "$OUT" "$name.json"
	check_json "$name.json" "
f, cur, best = j['fidelity'], j['current'], j['recommended']
state_only = '$name'.endswith('state-only')
assert f['recorded'], f
assert abs(f['error']) <= (0.005 if state_only else 0.02), f
if state_only:
    assert f['seeded_segments'] > 0, f
assert best['peak_reserved_bytes'] <= cur['peak_reserved_bytes'] or best['ooms'] < cur['ooms'], (best, cur)
print('$name: fidelity %+.2f%%; recommended %r: %d bytes predicted against %d recorded (%+.2f%%); %d of %d settings in %.2f s' % (
    100 * f['error'], best['conf'] or '(defaults)', best['peak_reserved_bytes'],
    f['recorded_peak_reserved_bytes'],
    100.0 * (best['peak_reserved_bytes'] - f['recorded_peak_reserved_bytes']) / f['recorded_peak_reserved_bytes'],
    j['evaluated'], j['candidates'], j['wall_ns'] / 1e9))"
done

finish
