#!/bin/bash
# replay-frag.sh - without --verify, 'memprof replay' measures the external
# fragmentation at the reserved peak in its one pass (replay/peak_state.h:
# the state at the last rise of the peak, saved as the replay goes); with
# --verify it reads it from the address map it keeps anyway.  Both must
# give every pool the same figures, on a generated trace (a few thousand
# random allocs and frees, sizes 512 B to 4 MiB, on two streams) on which
# several pools fragment.
set -u
. "$(dirname "$0")/lib.sh"

W=$TMP/work
mkdir "$W" || die "mkdir $W"
cd "$W" || die "cd $W"
command -v python3 >/dev/null || skip "python3 is needed to write the trace and check the JSON"

python3 - >t.csv <<'PY'
import random
r = random.Random(25)
print("ts_ns,op,id,size,requested,address,device,stream,pid,phase,api,device_free,thread,stack")
live, nid, t = [], 1, 0
for i in range(4000):
    t += 10
    if live and (len(live) > 300 or r.random() < 0.45):
        k, s = live.pop(r.randrange(len(live)))
        print("%d,free,%d,%d,%d,0x%x,0,%d,5,,,,," % (t, k, s, s, 0x100000 * k, k % 2))
    else:
        s = r.choice([512, 4096, 65536, 1 << 20, 3 << 20, 4 << 20]) + 512 * r.randrange(4)
        live.append((nid, s))
        print("%d,alloc,%d,%d,%d,0x%x,0,%d,5,,,,," % (t, nid, s, s, 0x100000 * nid, nid % 2))
        nid += 1
PY
mp import -q -o t.db t.csv
[ "$status" -eq 0 ] || die "cannot import the trace: $(cat "$ERR")"

step "every pool: the one pass's fragmentation at the peak equals the address map's"
mp replay --pool=all --backend=sim --no-save --json t.db
expect_status 0
cp "$OUT" plain.json
mp replay --pool=all --backend=sim --no-save --json --verify t.db
expect_status 0
cp "$OUT" verify.json
python3 - plain.json verify.json <<'PY' >check.log 2>&1 || fail "the figures differ: $(cat check.log)"
import json, sys
a = {(x["device"], x["pool"]): x for x in json.load(open(sys.argv[1]))["results"]}
b = {(x["device"], x["pool"]): x for x in json.load(open(sys.argv[2]))["results"]}
assert a.keys() == b.keys(), (a.keys(), b.keys())
fragmented = 0
for k in a:
    for f in ("external_fragmentation_at_peak", "free_in_reserved_at_peak_bytes",
              "peak_reserved_bytes", "peak_reserved_seq"):
        assert a[k][f] == b[k][f], (k, f, a[k][f], b[k][f])
    fragmented += a[k]["external_fragmentation_at_peak"] > 0
assert fragmented >= 3, "too few pools fragment to test anything: %d" % fragmented
print("%d pools, %d with holes at the peak" % (len(a), fragmented))
PY
pass
say "$(cat check.log)"
finish
