#!/bin/bash
# tests/gpu/oneshot-dry-run.sh - the GPU pack and its one-shot runner, tried here without a
# GPU as the GPU machine would run them: the pack is made from HEAD (tests/gpu/pack.sh; its
# clean build is reused while HEAD does not change), copied to another path, and run in a
# mount namespace where every non-glibc library memprof needs is hidden (/dev/null bound
# over the system's copies; the build tree's memprof must then fail to start, which shows
# the hiding works).  Checks: memprof starts from the pack, lists its pools, imports and
# analyzes the demo trace; every GPU part exits 77 with its reason; OUTDIR holds at most 5
# plain files, none in a folder, each under 16 MiB; the run stays within BUDGET.
# Skips (77) with the reason when not in a git checkout (a release tarball), not root, or
# without unshare.  Exit 0 pass, 1 fail.
set -u
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
top_builddir=${top_builddir:-$top_srcdir}
skip() { echo "oneshot-dry-run: SKIP: $*"; exit 77; }
fail() { echo "not ok - $*"; status=1; }
pass() { echo "ok - $*"; }
status=0

git -C "$top_srcdir" rev-parse HEAD >/dev/null 2>&1 || skip "not a git checkout: the pack is built from HEAD"
[ "$(id -u)" = 0 ] || skip "not root: the libraries cannot be hidden (unshare -m and bind mounts need root)"
command -v unshare >/dev/null || skip "no unshare"
unshare -m true 2>/dev/null || skip "unshare -m is not allowed here"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/oneshot-dry-XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
pack="$tmp/some where/pack"  # any path, a space included
mkdir -p "$(dirname "$pack")"
# GPU_PACK_QUICK: -O0 and no CUDA samples (the GPU parts skip here anyway), a third of
# the build time in CI; 'make gpu-pack' builds the real pack.
if GPU_PACK_QUICK=1 "$top_srcdir/tests/gpu/pack.sh" "$pack" >"$tmp/pack.log" 2>&1; then
	pass "the pack: $(tail -n 1 "$tmp/pack.log")"
else
	fail "the pack: $(tail -n 3 "$tmp/pack.log")"
	exit 1
fi
size=$(du -sb "$pack" | awk '{ print $1 }')
[ "$size" -lt $((64 * 1048576)) ] && pass "the pack is $size bytes, under 64 MiB" || fail "the pack is $size bytes"

# The system's copies of what the pack carries, to hide.
hide=""
for l in "$pack"/gpulib/*; do
	for p in $(ldconfig -p | awk -v l="${l##*/}" '$1 == l { print $NF }'); do
		hide="$hide $(readlink -f "$p")"
	done
done
[ -n "$hide" ] || fail "found none of the carried libraries on this machine to hide"

# In the namespace: hide them, check they are hidden, run the runner from elsewhere.
cat >"$tmp/inside.sh" <<'EOF'
set -u
for f in $HIDE; do mount --bind /dev/null "$f" || exit 90; done
"$BUILT_MEMPROF" --version >/dev/null 2>&1 && exit 91 # the hiding did not work
cd /
OUT="$TMP/out" WORK="$TMP/work" BUDGET=120 bash "$PACK/gpu-oneshot.sh"
EOF
t0=$(date +%s)
HIDE=$hide BUILT_MEMPROF=$top_builddir/memprof TMP=$tmp PACK=$pack \
	unshare -m bash "$tmp/inside.sh" >"$tmp/run.log" 2>&1
st=$?
took=$(($(date +%s) - t0))
case $st in
0) pass "the runner ran with the libraries hidden (exit 0, ${took}s of BUDGET=120)" ;;
90) fail "could not bind /dev/null over the system's libraries" ;;
91) fail "memprof of the build tree still starts: the libraries were not hidden" ;;
*) fail "the runner exited $st: $(tail -n 5 "$tmp/run.log")" ;;
esac
[ "$took" -le 120 ] || fail "the run took ${took}s, over its BUDGET of 120s"
sed 's/^/# /' "$tmp/run.log"

out=$tmp/out
n_files=$(find "$out" -mindepth 1 | wc -l)
n_plain=$(find "$out" -mindepth 1 -maxdepth 1 -type f -size -16000000c | wc -l)
[ "$n_files" -le 5 ] && [ "$n_files" = "$n_plain" ] &&
	pass "OUTDIR holds $n_files plain files, none in a folder, each under 16 MB" ||
	fail "OUTDIR holds $n_files entries, $n_plain of them plain files under 16 MB: $(ls -la "$out")"
for f in probe.txt summary.txt results.txt manifest.txt gpu-run.tgz; do
	[ -s "$out/$f" ] || fail "OUTDIR has no $f"
done
grep -q '^memprof [0-9]' "$out/probe.txt" && pass "memprof started from the pack (probe)" ||
	fail "the probe has no 'memprof VERSION' line: memprof did not start from the pack"
grep -q "libsqlite3.so.0 => .*/pack/gpulib/libsqlite3.so.0" "$out/probe.txt" &&
	pass "memprof's libraries come from the pack's gpulib/" ||
	fail "ldd in the probe does not show gpulib/: $(grep sqlite "$out/probe.txt")"
grep -q '^== smoke .* ok   6  not ok   0  pass' "$out/summary.txt" &&
	pass "smoke: memprof --version, --list-pools, import, info, analyze and a sim replay from the pack" ||
	fail "smoke: $(grep smoke "$out/summary.txt")"
grep -q '^smoke: ok 2 - memprof replay --list-pools' "$out/results.txt" || fail "results.txt lacks the smoke lines"
if python3 "$top_srcdir/tests/gpu/have_gpu.py" >/dev/null 2>&1; then
	echo "# a GPU is here: the GPU parts ran instead of skipping"
else
	for p in backend replay-real alone record-samples record-torch tune record-overhead nccl live-numa; do
		grep -qE "^== $p +exit  77 .*skip: .*(driver|GPU|device)" "$out/summary.txt" &&
			pass "$p skips with its reason" || fail "$p: $(grep "== $p " "$out/summary.txt")"
	done
fi
tar tzf "$out/gpu-run.tgz" | grep -q 'smoke/3.txt' && pass "the tarball holds the parts' output" ||
	fail "the tarball lacks parts/smoke: $(tar tzf "$out/gpu-run.tgz" | head)"
exit $status
