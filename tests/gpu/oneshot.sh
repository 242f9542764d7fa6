#!/bin/bash
# tests/gpu/oneshot.sh [OUTDIR] - every GPU check of memprof in one bounded command, from a
# GPU pack (tests/gpu/pack.sh, 'make gpu-pack'; carried as .carry/, where this script is
# .carry/gpu-oneshot.sh).  On the GPU machine, from anywhere:
#     OUT=DIR bash .carry/gpu-oneshot.sh        (or: bash .carry/gpu-oneshot.sh DIR)
# OUTDIR gets at most 5 plain files, none in a folder, each under 16 MiB:
#   probe.txt     the machine, driver, tools, which CUPTI/NCCL memprof and PyTorch use
#                 (written first, before anything can fail)
#   summary.txt   one line per part: exit status, seconds, limit, TAP counts
#   results.txt   every TAP line of every part, prefixed by the part's name
#   manifest.txt  every file the run wrote, with its size, and what the tarball left out
#   gpu-run.tgz   every log, check and trace (traces dropped first when it would be larger)
# BUDGET (seconds, default 480) bounds the whole run: each part has a limit, the limits
# (scaled by BUDGET/480) plus the kill grace, the probe and the packing add up to less
# than BUDGET, so the packing always runs; give the command BUDGET + 60 s.  PARTS=
# "backend nccl" runs only those parts (names below).  WORK (default /tmp/memprof-gpu-run)
# holds the raw output.  Without a GPU every GPU part exits 77 with its reason.
set -u
here=$(cd "$(dirname "$0")" && pwd)
if [ -x "$here/memprof" ]; then C=$here; else C=$(cd "$here/../.." && pwd); fi
O=${1:-${OUT:-$PWD/gpu-out}}
W=${WORK:-/tmp/memprof-gpu-run}
BUDGET=${BUDGET:-480}
T0=$(date +%s)
KILL_GRACE=3   # seconds 'timeout -k' waits after TERM
PACK_RESERVE=20
# name:limit (seconds at BUDGET=480) and what each proves (tests/gpu/README.md)
ALL_PARTS="smoke:15 backend:40 replay-real:57 alone:20 record-samples:65 record-torch:55 tune:50
record-overhead:30 nccl:30 live-numa:35"
PROBE_LIMIT=30
PARTS=${PARTS:-$(for p in $ALL_PARTS; do printf '%s ' "${p%%:*}"; done)}

[ -x "$C/memprof" ] || { echo "gpu-oneshot: no memprof in $C: make the pack (make gpu-pack) and carry it" >&2; exit 2; }
mkdir -p "$O" "$W" || exit 2
O=$(cd "$O" && pwd)
rm -rf "${W:?}"/* "$O"/probe.txt "$O"/summary.txt "$O"/results.txt "$O"/manifest.txt "$O"/gpu-run.tgz
export C top_srcdir=$C top_builddir=$C MEMPROF=$C/memprof GPU_OUT=$W/parts PYTHONUNBUFFERED=1
mkdir -p "$GPU_OUT"
left() { echo $((BUDGET - ($(date +%s) - T0))); }
scaled() { local l=$(($1 * BUDGET / 480)); [ "$l" -ge 5 ] && echo "$l" || echo 5; }

# --- the probe: first, and in OUTDIR at once --------------------------------------------
site_glob() {
	timeout 10 python3 - "$@" 2>/dev/null <<'PY'
import glob, os, site, sys
roots = []
try: roots = site.getsitepackages() + [site.getusersitepackages()]
except Exception: pass
for r in roots:
    for pat in sys.argv[1:]:
        for hit in sorted(glob.glob(os.path.join(r, pat))):
            print(hit)
PY
}
probe() {
	echo "# gpu-oneshot probe $(date -u +%Y-%m-%dT%H:%M:%SZ); $(uname -srm); $(grep -m1 PRETTY_NAME /etc/os-release 2>/dev/null)"
	echo "# pack: $(head -n 2 "$C/PACK-INFO" 2>/dev/null | tr '\n' ' ')"
	echo "# BUDGET=$BUDGET PARTS=$PARTS"
	echo "# $(ldd --version 2>&1 | head -n 1)"
	timeout 10 nvidia-smi -L 2>&1
	timeout 10 nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap --format=csv,noheader 2>&1
	echo "python3: $(command -v python3 || echo MISSING) ($(python3 -V 2>&1))"
	for t in sqlite3 curl mpirun nvcc git timeout tar gzip unshare; do
		printf 'tool %-8s %s\n' "$t" "$(command -v "$t" || echo MISSING)"
	done
	echo "MEMPROF_CUPTI=${MEMPROF_CUPTI:-(unset: memprof record finds it)} MEMPROF_LIBNCCL=${MEMPROF_LIBNCCL:-(unset: replay finds it)}"
	echo "CUDA_HOME=${CUDA_HOME:-} CUDA_PATH=${CUDA_PATH:-} LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}"
	ls -l /usr/local/cuda/lib64/libcupti.so* /usr/local/cuda/extras/CUPTI/lib64/libcupti.so* \
		/usr/local/cuda/lib64/libnccl.so* 2>&1
	echo "# the wheels' CUPTI and NCCL:"
	site_glob 'nvidia/*/lib/libcupti.so*' 'torch/lib/libcupti.so*' 'nvidia/*/lib/libnccl.so*'
	timeout 10 python3 -c 'import importlib.metadata as m
for n in ("torch", "nvidia-cuda-cupti", "nvidia-cuda-cupti-cu13", "nvidia-nccl-cu13", "nvidia-cuda-runtime"):
    try: print("wheel", n, m.version(n))
    except Exception as e: print("wheel", n, "-")' 2>&1
	echo "# memprof from the pack"
	ldd "$C/memprof" 2>&1
	"$C/memprof" --version 2>&1
	echo "# what PyTorch loads (cuda initialised):"
	timeout 25 python3 -c 'import torch; torch.zeros(1, device="cuda")
print("torch", torch.__version__, "cuda", torch.version.cuda, torch.cuda.get_device_name(0))
print("loaded:", sorted({l.split()[-1] for l in open("/proc/self/maps") if "cupti" in l or "nccl" in l}))' 2>&1 | tail -n 3
	echo "# NUMA nodes: $(ls /sys/devices/system/node 2>&1 | tr '\n' ' ')"
	echo "# probe took $(($(date +%s) - T0)) s"
}
timeout -k "$KILL_GRACE" "$(scaled $PROBE_LIMIT)" bash -c "$(declare -f probe site_glob); C='$C' BUDGET='$BUDGET' PARTS='$PARTS' T0='$T0' probe" >"$O/probe.txt" 2>&1
echo "# probe: exit $?" >>"$O/probe.txt"
cp "$O/probe.txt" "$W/probe.txt"

# --- the parts ---------------------------------------------------------------------------
part_smoke() { # memprof runs from the pack: pools, import, analyze, replay (no GPU needed)
	local d=$GPU_OUT/smoke n=0 fail=0
	mkdir -p "$d"
	# smoke_one WORDS...: one memprof command (paths may hold spaces: no word splitting)
	smoke_one() {
		n=$((n + 1))
		if "$MEMPROF" "$@" >"$d/$n.txt" 2>&1; then echo "ok $n - memprof $*"
		else echo "not ok $n - memprof $*: $(tail -n 1 "$d/$n.txt")"; fail=1; fi
	}
	smoke_one --version
	smoke_one replay --list-pools
	smoke_one import -q -f -o "$d/demo.db" "$C/samples/traces/demo.csv"
	smoke_one info "$d/demo.db"
	smoke_one analyze --top=3 "$d/demo.db"
	smoke_one replay --backend=sim --no-save "$d/demo.db"
	echo "1..$n"
	return $fail
}
part_backend() { "$C/tests/gpu/replay-cuda.sh"; }
part_replay_real() { "$C/tests/gpu/replay-real.sh"; }
part_alone() { # the samples alone: do they run, and what do they log?
	local reason s st n=0
	reason=$(python3 "$C/tests/gpu/have_gpu.py") || { echo "alone: SKIP: $reason"; return 77; }
	mkdir -p "$GPU_OUT/alone"
	for s in alloc_runtime alloc_async alloc_managed alloc_pinned alloc_driver alloc_vmm nccl_comm; do
		n=$((n + 1))
		MEMPROF_LIBNCCL=$(samples_nccl) timeout 4 "$C/samples/cuda/$s" >"$GPU_OUT/alone/$s.log" 2>&1
		st=$?
		if [ $st -eq 0 ]; then echo "ok $n - $s alone"; else echo "not ok $n - $s alone: exit $st"; fi
	done
	MEMPROF_LIBNCCL=$(samples_nccl) NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=ALLOC timeout 4 "$C/samples/cuda/nccl_comm" >"$GPU_OUT/alone/nccl_comm-debug.log" 2>&1
	echo "# nccl_comm with NCCL_DEBUG=INFO: exit $?"
	echo "1..$n"
}
# The samples dlopen libnccl.so.2 unless MEMPROF_LIBNCCL names it: the wheel's, else the toolkit's
samples_nccl() {
	[ -n "${MEMPROF_LIBNCCL:-}" ] && { echo "$MEMPROF_LIBNCCL"; return; }
	timeout 10 python3 -c 'import glob, site, sys
for r in site.getsitepackages() + [site.getusersitepackages()]:
    for h in sorted(glob.glob(r + "/nvidia/nccl/lib/libnccl.so.2*")):
        print(h); sys.exit(0)' 2>/dev/null && return
	ls /usr/local/cuda/lib64/libnccl.so.2 2>/dev/null
}
part_record_samples() { MEMPROF_LIBNCCL=$(samples_nccl) "$C/tests/gpu/record-samples.sh"; }
part_record_torch() { TORCH_STEPS=${TORCH_STEPS:-5} "$C/tests/gpu/record-torch.sh"; }
part_tune() { TORCH_STEPS=${TORCH_STEPS:-5} "$C/tests/gpu/tune-check.sh"; }
part_record_overhead() { # sized to end within its limit; the .times files are written as it goes
	OUT_DIR=$GPU_OUT/record-overhead REPS=${REPS:-2} LOOP=${LOOP:-20000} TORCH_REPS=${TORCH_REPS:-1} \
		TORCH_STEPS=${TORCH_STEPS:-5} "$C/bench/record-overhead.sh"
}
part_nccl() { "$C/tests/gpu/multi-gpu.sh"; }
part_live_numa() { "$C/tests/gpu/live-numa.sh"; }

# run_part NAME LIMIT: the part under its limit (its whole process group killed at the end)
run_part() {
	local name=$1 lim t0 st verdict
	lim=$(scaled "$2")
	[ "$lim" -le $(($(left) - PACK_RESERVE - KILL_GRACE)) ] || lim=$(($(left) - PACK_RESERVE - KILL_GRACE))
	if [ "$lim" -lt 1 ]; then
		printf '== %-16s not run: no time left in BUDGET=%s\n' "$name" "$BUDGET" >>"$W/summary.txt"
		return
	fi
	t0=$(date +%s)
	timeout -k "$KILL_GRACE" "$lim" bash -c "$(declare -f "part_${name//-/_}" samples_nccl); part_${name//-/_}" \
		>"$W/$name.txt" 2>&1
	st=$?
	case $st in 0) verdict=pass ;; 77) verdict="skip: $(grep -m1 -i 'skip' "$W/$name.txt" | cut -c1-160)" ;;
	124 | 137) verdict="TIMED OUT at its limit" ;; *) verdict=FAIL ;; esac
	printf '== %-16s exit %3d %4ds of %4ds  ok %3d  not ok %3d  %s\n' "$name" "$st" \
		"$(($(date +%s) - t0))" "$lim" "$(grep -c '^ok' "$W/$name.txt")" \
		"$(grep -c '^not ok' "$W/$name.txt")" "$verdict" >>"$W/summary.txt"
	grep -E '^(ok|not ok)' "$W/$name.txt" | sed "s/^/$name: /" >>"$W/results.txt"
	cp "$W/summary.txt" "$O/summary.txt"
	cp "$W/results.txt" "$O/results.txt"
}

# --- the packing: always, also when the run is stopped ---------------------------------------
packed=0
pack() {
	[ "$packed" = 1 ] && return
	packed=1
	echo "== total $(($(date +%s) - T0))s of BUDGET=${BUDGET}s" >>"$W/summary.txt"
	cp "$W/summary.txt" "$O/summary.txt"
	cp "$W/results.txt" "$O/results.txt"
	(cd "$W/.." && find "$(basename "$W")" -type f -printf '%10s %p\n' | sort -k2) >"$O/manifest.txt"
	local base=$(basename "$W")
	(cd "$W/.." && tar czf "$O/gpu-run.tgz" "$base" 2>/dev/null)
	if [ "$(stat -c %s "$O/gpu-run.tgz")" -ge 16000000 ]; then
		(cd "$W/.." && tar czf "$O/gpu-run.tgz" --exclude='*.db' --exclude='*.mpt' \
			--exclude='*.pickle' "$base" 2>/dev/null)
		echo "# the tarball left out the traces (*.db, *.mpt): it was over 16 MB" >>"$O/manifest.txt"
	fi
	if [ "$(stat -c %s "$O/gpu-run.tgz")" -ge 16000000 ]; then
		(cd "$W/.." && find "$base" -type f -size -1M -print0 | tar czf "$O/gpu-run.tgz" --null -T - 2>/dev/null)
		echo "# the tarball holds only the files under 1 MiB: it was still over 16 MB" >>"$O/manifest.txt"
	fi
	echo "# gpu-run.tgz: $(stat -c %s "$O/gpu-run.tgz") bytes" >>"$O/manifest.txt"
}
trap 'pack; exit 143' TERM INT
trap pack EXIT

: >"$W/summary.txt"
: >"$W/results.txt"
for p in $ALL_PARTS; do
	case " $PARTS " in *" ${p%%:*} "*) run_part "${p%%:*}" "${p#*:}" ;; esac
done
pack
trap - EXIT
cat "$O/summary.txt"
ls -l "$O"
