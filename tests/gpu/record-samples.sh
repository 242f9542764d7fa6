#!/bin/bash
# tests/gpu/record-samples.sh - each CUDA sample of samples/cuda/ recorded with
# 'memprof record --keep-spool' on a real GPU, its own log compared with the trace by
# tests/gpu/check_sample_log.py (allocs, frees paired by address, sizes, api names, maps,
# phases).  Prints TAP; skips (77) with the reason without a GPU or without the record
# command.  Raw output (logs, traces, checks, kept spools, per-API counts) goes to
# $GPU_OUT/record-samples (default gpu-runs/ of the build directory).
# Needs the samples built ('make samples-cuda'; built here when missing and nvcc exists).
set -u
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
top_builddir=${top_builddir:-.}
MEMPROF=${MEMPROF:-$top_builddir/memprof}
out=${GPU_OUT:-$top_builddir/gpu-runs}/record-samples
gpu=$top_srcdir/tests/gpu

reason=$(python3 "$gpu/have_gpu.py") || { echo "record-samples: SKIP: $reason"; exit 77; }
"$MEMPROF" record --help >/dev/null 2>&1 ||
	{ echo "record-samples: SKIP: $MEMPROF has no record command"; exit 77; }
bins=$top_builddir/samples/cuda
if [ ! -x "$bins/nccl_comm" ] || [ ! -x "$bins/alloc_runtime" ]; then
	make -C "$top_builddir" samples-cuda >&2 ||
		{ echo "record-samples: no samples in $bins: run 'make samples-cuda'" >&2; exit 99; }
fi
mkdir -p "$out" || exit 99

# collect_spools ERR DEST: copy the spools memprof record named on stderr (files *.mpt,
# or directories holding them, only those written since $out/.start) to DEST.
collect_spools() {
	mkdir -p "$2"
	grep -oE "/[^ '\"\`]+" "$1" | sed 's/[.,:;)]*$//' | sort -u | while read -r p; do
		case $p in
		*.mpt) [ -f "$p" ] && cp "$p" "$2/" ;;
		*) [ -d "$p" ] && find "$p" -maxdepth 1 -name '*.mpt' -newer "$out/.start" \
			-exec cp {} "$2/" \; ;;
		esac
	done
	ls "$2"/*.mpt >/dev/null 2>&1
}

# api_counts DB: events by operation and API name (section 9 of shared/notes/cupti.md)
api_counts() {
	python3 - "$1" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
ops = {1: "alloc", 2: "free", 3: "preexisting", 4: "reserve", 5: "release", 6: "map",
       7: "unmap", 8: "oom", 9: "phase_begin", 10: "phase_end", 11: "free_requested"}
print("%-16s %-32s %8s" % ("op", "api", "events"))
for op, api, n in db.execute("SELECT e.op, a.name, count(*) FROM events e LEFT JOIN apis a "
                             "ON a.id = e.api GROUP BY e.op, a.name ORDER BY e.op, a.name"):
    print("%-16s %-32s %8d" % (ops.get(op, op), api, n))
print("meta:")
for k, v in db.execute("SELECT key, value FROM meta ORDER BY key"):
    print("  %s = %s" % (k, v))
PY
}

# name|environment|sample and arguments
CASES="alloc_runtime||alloc_runtime
alloc_runtime-loop||alloc_runtime --loop=1000
alloc_async||alloc_async
alloc_managed||alloc_managed
alloc_pinned||alloc_pinned
alloc_driver||alloc_driver
alloc_vmm||alloc_vmm
nccl_comm||nccl_comm
nccl_comm-nocumem|NCCL_CUMEM_ENABLE=0|nccl_comm"

echo "1..$(echo "$CASES" | wc -l)"
echo "# $reason; raw output in $out"
fail=0
i=0
while IFS='|' read -r name envs cmd; do
	i=$((i + 1))
	db=$out/$name.db
	rm -rf "$db" "$out/$name.spool"
	touch "$out/.start"
	set -- $cmd
	bin=$bins/$1
	shift
	# shellcheck disable=SC2086
	env $envs "$MEMPROF" record --keep-spool --spool-dir="$out/$name.spool" -o "$db" -- \
		"$bin" "$@" >"$out/$name.log" 2>"$out/$name.err"
	st=$?
	if [ "$st" -ne 0 ] || [ ! -f "$db" ]; then
		echo "not ok $i - $name: memprof record exited $st$([ -f "$db" ] || echo ', no trace')"
		sed 's/^/# /' "$out/$name.err" | tail -n 15
		fail=1
		continue
	fi
	ls "$out/$name.spool"/*.mpt >/dev/null 2>&1 ||
		collect_spools "$out/$name.err" "$out/$name.spool" ||
		echo "# $name: no kept spool in $out/$name.spool nor in memprof's messages"
	for s in "$out/$name.spool"/*.mpt; do
		[ -f "$s" ] && python3 "$gpu/spool_kinds.py" "$s"
	done >"$out/$name.kinds" 2>&1
	api_counts "$db" >"$out/$name.apis" 2>&1
	if python3 "$gpu/check_sample_log.py" "$out/$name.log" "$db" >"$out/$name.check" 2>&1; then
		echo "ok $i - $name: the trace agrees with the sample's log"
	else
		echo "not ok $i - $name: see $out/$name.check"
		fail=1
	fi
	sed 's/^/# /' "$out/$name.check"
done <<<"$CASES"
nvidia-smi -L >"$out/device.txt" 2>&1 || true
exit "$fail"
