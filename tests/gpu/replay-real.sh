#!/bin/bash
# tests/gpu/replay-real.sh [SNAPSHOT] - a real PyTorch snapshot (default: the one the GPU
# pack carries, data/*.pickle, else ../shared's cs336 full step, about 61 GiB reserved)
# replayed on a real GPU through every pool with --verify (compacting --mode=vmm too): the
# measured bytes and time each pool saves; then the same pools on the sim backend, whose
# times are the cost model's, so the two can be set side by side (replay-real/*.json).
# Prints TAP; skips (77) with the reason without a GPU or a snapshot.
set -u
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
top_builddir=${top_builddir:-.}
MEMPROF=${MEMPROF:-$top_builddir/memprof}
out=${GPU_OUT:-$top_builddir/gpu-runs}/replay-real
snap=${1:-}
if [ -z "$snap" ]; then
	for s in "$top_srcdir"/data/*.pickle \
		"$top_srcdir/../shared/datasets/torch-snapshots/cs336-ctx128-fullstep.pickle"; do
		[ -f "$s" ] && { snap=$s; break; }
	done
fi
reason=$(python3 "$top_srcdir/tests/gpu/have_gpu.py") || { echo "replay-real: SKIP: $reason"; exit 77; }
[ -n "$snap" ] && [ -f "$snap" ] || { echo "replay-real: SKIP: no snapshot to replay"; exit 77; }
mkdir -p "$out" || exit 99
db=$out/snapshot.db
n=0 fail=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
bad() { n=$((n + 1)); fail=1; echo "not ok $n - $*"; }

if "$MEMPROF" import -q -f -o "$db" "$snap" >"$out/import.txt" 2>&1; then
	ok "import $(basename "$snap")"
else
	bad "import $(basename "$snap"): $(tail -n 1 "$out/import.txt")"
	echo "1..$n"
	exit 1
fi
"$MEMPROF" info "$db" >"$out/info.txt" 2>&1
# 1. every pool on the GPU, measured; 2. compacting on VMM; 3. the cost model's view of both
run() {
	local name=$1 backend=$2
	shift 2
	if "$MEMPROF" replay "$db" --backend="$backend" --no-save --json "$@" >"$out/$name.json" \
		2>"$out/$name.err"; then
		ok "replay --backend=$backend $*"
	else
		bad "replay --backend=$backend $*: $(tail -n 1 "$out/$name.err")"
	fi
}
run cuda-all cuda --pool=all --verify
run cuda-compacting-vmm cuda --pool=compacting --pool-opt=mode=vmm --verify
run sim-all sim --pool=all
run sim-compacting-vmm sim --pool=compacting --pool-opt=mode=vmm
# One line per pool and backend: peak reserved, OOMs, verify, time and what it is
python3 - "$out" >"$out/table.txt" 2>&1 <<'PY'
import json, os, sys
d = sys.argv[1]
print("%-10s %-8s %16s %5s %-8s %14s %14s %s" % ("pool", "backend", "peak_reserved", "ooms",
      "verify", "total_ns", "backend_ns", "time_is"))
for name in ("cuda-all", "cuda-compacting-vmm", "sim-all", "sim-compacting-vmm"):
    try:
        doc = json.load(open(os.path.join(d, name + ".json")))
    except Exception as e:
        print("%s: no results (%s)" % (name, e))
        continue
    for r in doc.get("results", []):
        print("%-10s %-8s %16s %5s %-8s %14s %14s %s" % (r.get("pool"), r.get("backend"),
              r.get("peak_reserved_bytes"), r.get("ooms"), r.get("verify"), r.get("total_ns"),
              r.get("backend_ns"), r.get("time_is")))
PY
sed 's/^/# /' "$out/table.txt"
rm -f "$db"
echo "1..$n"
exit $fail
