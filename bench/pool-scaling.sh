#!/bin/sh
# bench/pool-scaling.sh - every pool on traces whose live set grows with
# their length: is any pool worse than O(log n) per operation in the live
# set?  For N in SIZES (default 100000 200000 400000 allocations) it writes
# a memprof CSV where half the allocations stay live to the end (20 call
# sites, 16 sizes) and half are freed at once, imports it, and runs
# 'memprof replay --pool=all --backend=sim' REPEAT times (default 3, the
# sizes alternating); per pool it prints the median replay loop time
# (replay_ns; the least of the runs) at each size and the growth exponent between the smallest and
# the largest size (1: linear; log n per operation adds a little).  An
# exponent above 1.6 is flagged SUPERLINEAR.  Run from the build directory
# ('make bench-pool-scaling'); writes only under bench-out/.  Exits
# non-zero only when a command fails.
#
# environment: MEMPROF (default ./memprof), PYTHON (default /usr/bin/python3),
# REPEAT (default 3).

set -u
BENCH_NAME=pool-scaling
. "$(dirname "$0")/lib.sh"

MEMPROF=${MEMPROF:-./memprof}
PYTHON=${PYTHON:-/usr/bin/python3}
REPEAT=${REPEAT:-3}
OUT=bench-out
SIZES=${*:-100000 200000 400000}

[ -x "$MEMPROF" ] || die "cannot run memprof '$MEMPROF' (build it, or set MEMPROF)"
mkdir -p "$OUT" || die "cannot create $OUT"

# gen N: the trace, on standard output
gen() {
	awk -v n="$1" 'BEGIN {
		print "ts_ns,op,id,size,requested,address,device,stream,pid,phase,api,device_free,stack"
		t = 1000
		for (i = 1; i <= n; i++) {
			size = (1 + (i * 7) % 16) * 4096
			addr = sprintf("0x%x", 139637976727552 + i * 1048576)
			site = "grow_" (i % 20) "@model.py:" (i % 20) ";main@train.py:1"
			printf "%d,alloc,%d,%d,%d,%s,0,0,1,,,,%s\n", t++, i, size, size, addr, site
			if (i % 2 == 0)
				printf "%d,free,%d,%d,%d,%s,0,0,1,,,,\n", t++, i, size, size, addr
		}
	}'
}

for n in $SIZES; do
	[ -s "$OUT/grow-$n.db" ] && continue
	gen "$n" >"$OUT/grow-$n.csv" || die "cannot write $OUT/grow-$n.csv"
	"$MEMPROF" import -q -f -o "$OUT/grow-$n.db" "$OUT/grow-$n.csv" ||
		die "cannot import $OUT/grow-$n.csv"
	rm -f "$OUT/grow-$n.csv"
done
rm -f "$OUT"/grow-*.json
i=0
while [ "$i" -lt "$REPEAT" ]; do
	for n in $SIZES; do
		"$MEMPROF" replay --pool=all --baseline=none --backend=sim --no-save --json \
			"$OUT/grow-$n.db" >"$OUT/grow-$n.$i.json" 2>>"$OUT/grow-notes.txt" ||
			die "replay of $OUT/grow-$n.db failed"
	done
	i=$((i + 1))
done
"$PYTHON" - "$OUT" $SIZES <<'PY'
import glob, json, math, statistics, sys
out, sizes = sys.argv[1], [int(s) for s in sys.argv[2:]]
times = {}  # pool -> size -> [replay_ns]
for n in sizes:
    for f in sorted(glob.glob("%s/grow-%d.*.json" % (out, n))):
        for r in json.load(open(f)).get("results", []):
            if r.get("replay_ns") is not None:
                times.setdefault(r["pool"], {}).setdefault(n, []).append(r["replay_ns"])
print("%-12s" % "pool" + "".join("%12s" % ("%d s" % n) for n in sizes) + "   exponent")
bad = 0
for pool in sorted(times):
    med = [min(times[pool].get(n, [float("nan")])) / 1e9 for n in sizes]
    e = math.log(med[-1] / med[0]) / math.log(sizes[-1] / sizes[0]) if med[0] > 0 else float("nan")
    flag = "  SUPERLINEAR" if e > 1.6 else ""
    bad += e > 1.6
    print("%-12s" % pool + "".join("%12.4f" % m for m in med) + "   %7.2f%s" % (e, flag))
print("replay loop time (replay_ns, the least of the runs: the load of a shared machine only adds), live set growing with N; exponent = "
      "log(t_max / t_min) / log(N_max / N_min); %d pool(s) flagged" % bad)
PY
rm -f "$OUT"/grow-*.json
[ -n "${KEEP:-}" ] || rm -f "$OUT"/grow-*.db
