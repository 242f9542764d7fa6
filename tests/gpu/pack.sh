#!/bin/bash
# tests/gpu/pack.sh [DEST] - the GPU pack ('make gpu-pack'): the committed HEAD built in a
# clean clone and packed into DEST (default .carry/ of the checkout, git-ignored) to run
# on a GPU machine that has only glibc, python3 and the CUDA driver (tests/gpu/README.md):
# memprof, the injected library, every pool plugin, the CUDA samples,
# tests/gpu/cuda_backend_run, the GPU checks and the files they read, one real snapshot
# when ../shared has it, every non-glibc library memprof needs (gpulib/), and the runner
# (gpu-oneshot.sh = tests/gpu/oneshot.sh).  Runs from any path: every binary finds
# gpulib/ through a DT_RPATH relative to itself ($ORIGIN), so nothing leaks into the
# recorded workload's environment.  Built without MPI: Open MPI's own RUNPATH would
# defeat the RPATH, and the GPU machine has one GPU and no Open MPI (replay --mpi then
# says memprof was built without it).
# Environment: GPU_PACK_BUILD (the clone, default $TMPDIR/memprof-gpu-pack-UID-HASH, one per
# checkout; concurrent packs of one checkout take turns),
# GPU_PACK_SNAPSHOT (a snapshot to carry instead of the shared one; "none" for none),
# GPU_PACK_QUICK=1 (the dry run in 'make check': built -O0 and without the CUDA samples,
# in a build directory of its own, so that it costs CI a third of the time; never a pack
# to carry to a GPU: PACK-INFO says so).
# Leaves DEST/PACK-INFO (commit, date, size).  Exit 0, or 1 saying what failed.
set -eu -o pipefail
root=$(git -C "$(dirname "$0")" rev-parse --show-toplevel 2>/dev/null) ||
	{ echo "gpu-pack: not in a git checkout: the pack is built from HEAD" >&2; exit 1; }
dest=${1:-$root/.carry}
# one clean build per checkout (its path hashed in), reused while HEAD does not change
quick=${GPU_PACK_QUICK:-0}
build=${GPU_PACK_BUILD:-${TMPDIR:-/tmp}/memprof-gpu-pack-$(id -u)-$(printf '%s' "$root" | cksum | cut -d' ' -f1)}
[ "$quick" = 1 ] && build=$build-quick # never reused by a real pack
head=$(git -C "$root" rev-parse HEAD)
log=$build.log
die() { echo "gpu-pack: $*" >&2; exit 1; }

git -C "$root" diff --quiet HEAD -- 2>/dev/null ||
	echo "gpu-pack: warning: uncommitted changes are not in the pack (it is built from HEAD)" >&2

# Two packs of one checkout at once (parallel test runs) take turns on its build.
if command -v flock >/dev/null 2>&1; then
	exec 9>"$build.lock"
	flock 9
fi

# 1. Build HEAD in a clean clone, reusing it when it is already at HEAD.
if [ "$(git -C "$build" rev-parse HEAD 2>/dev/null)" != "$head" ] || [ ! -f "$build/.pack-built" ]; then
	rm -rf "$build"
	git clone -q --no-hardlinks "$root" "$build" || die "cannot clone $root into $build"
	git -C "$build" checkout -q "$head"
	echo "gpu-pack: building $(git -C "$root" log --oneline -1 "$head") in $build (log: $log)" >&2
	# the build's own make, not the jobserver of a make this runs under (make check);
	# '&&': errexit does not apply inside a list whose status is tested
	(
		unset MAKEFLAGS MFLAGS MAKELEVEL
		ldflags='-Wl,--disable-new-dtags -Wl,-rpath,\$$ORIGIN/gpulib -Wl,-rpath,\$$ORIGIN/../../gpulib'
		if [ "$quick" = 1 ]; then cflags='-O0 -g0'; samples=; else cflags='-g -O2'; samples=samples-cuda; fi
		cd "$build" && autoreconf -fi &&
			./configure --without-mpi --disable-dependency-tracking CFLAGS="$cflags" &&
			make -j"$(nproc)" LDFLAGS="$ldflags" &&
			make -j"$(nproc)" $samples tests/gpu/cuda_backend_run LDFLAGS="$ldflags"
	) >"$log" 2>&1 || die "the build failed: $(tail -n 5 "$log")"
	touch "$build/.pack-built"
fi
readelf -d "$build/memprof" | grep -q 'RPATH.*\$ORIGIN/gpulib' || die "$build/memprof has no RPATH \$ORIGIN/gpulib"
! readelf -d "$build/memprof" | grep -q 'libmpi' || die "$build/memprof links MPI"

# 2. The pack: the build's files in the build tree's layout (the checks find them there).
rm -rf "$dest"
mkdir -p "$dest"/{.libs,plugins/.libs,samples/cuda,samples/traces,samples/torch,tests/gpu,tests/cli/data,tests/tools,bench,gpulib,data}
cp "$build/memprof" "$dest/"
cp "$build/.libs/libmemprof-inject.so" "$dest/.libs/"
cp "$build"/plugins/.libs/*.so "$dest/plugins/.libs/"
for s in alloc_runtime alloc_async alloc_managed alloc_pinned alloc_driver alloc_vmm nccl_comm megatron_step; do
	[ -x "$build/samples/cuda/$s" ] && cp "$build/samples/cuda/$s" "$dest/samples/cuda/"
done
cp "$build/tests/gpu/cuda_backend_run" "$dest/tests/gpu/"
(cd "$build" && cp tests/gpu/*.sh tests/gpu/*.py tests/gpu/README.md "$dest/tests/gpu/")
cp "$build/tests/cli/check_exposition.py" "$dest/tests/cli/"
cp "$build/tests/cli/data/sharded-iterations.csv" "$dest/tests/cli/data/"
cp "$build/tests/tools/make_rank_traces.py" "$dest/tests/tools/"
cp "$build/bench/lib.sh" "$build/bench/record-overhead.sh" "$dest/bench/"
cp "$build/samples/traces/demo.csv" "$dest/samples/traces/"
cp "$build/samples/torch/train_gpt.py" "$dest/samples/torch/"
cp "$build/tests/gpu/oneshot.sh" "$dest/gpu-oneshot.sh"

# 3. Every library a carried binary needs that is not glibc's, found by the loader here.
libs_of() { ldd "$@" 2>/dev/null | awk '$2 == "=>" && $3 ~ /^\// { print $1, $3 }' | sort -u; }
libs_of "$dest/memprof" "$dest/tests/gpu/cuda_backend_run" "$dest/.libs/libmemprof-inject.so" \
	"$dest"/plugins/.libs/*.so | while read -r so path; do
	case $so in
	libc.so.* | libm.so.* | libpthread.so.* | libdl.so.* | librt.so.* | ld-linux* | libresolv.so.*) continue ;;
	libcuda.so.* | libnvidia-*) continue ;; # the driver's: the GPU machine's own
	esac
	cp -L "$path" "$dest/gpulib/$so"
done
# The inject library is loaded into the workload: it must need nothing beyond glibc.
if libs_of "$dest/.libs/libmemprof-inject.so" | grep -qvE '^(libc|libm|libpthread|libdl|librt|ld-linux)'; then
	die "libmemprof-inject.so needs more than glibc: $(libs_of "$dest/.libs/libmemprof-inject.so" | tr '\n' ' ')"
fi

# 4. A real snapshot for the cuda replay of every pool (../shared does not travel).
snap=${GPU_PACK_SNAPSHOT:-$root/../shared/datasets/torch-snapshots/cs336-ctx128-fullstep.pickle}
if [ "$snap" != none ] && [ -f "$snap" ]; then
	cp "$snap" "$dest/data/"
fi

size=$(du -sb "$dest" | awk '{ print $1 }')
[ "$size" -lt $((64 * 1048576)) ] || die "the pack is $size bytes: over the 64 MiB a run may carry"
{
	echo "commit $head"
	echo "built $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(uname -srm)"
	echo "configure --without-mpi; RPATH \$ORIGIN/gpulib"
	[ "$quick" = 1 ] && echo "QUICK dry-run build (-O0, no CUDA samples): not a pack to run on a GPU"
	echo "bytes $size"
	(cd "$dest" && find . -type f ! -name PACK-INFO -printf '%s %p\n' | sort -k2)
} >"$dest/PACK-INFO"
awk -v s="$size" -v d="$dest" 'BEGIN { printf "gpu-pack: %s: %.1f MiB\n", d, s / 1048576 }'
