#!/bin/bash
# tests/fuzz/run-fuzz.sh - what 'make fuzz' runs: builds the library's
# sources once with libFuzzer's instrumentation (in parallel, JOBS at a time),
# links each harness tests/fuzz/fuzz_NAME.c against those objects, and runs
# the targets under libFuzzer for FUZZ_SECONDS each, JOBS targets at a time,
# each from a copy of its seed corpus.  A target that finds a crash, a leak,
# a timeout or undefined behaviour fails the run, and its log's tail is shown.
#
# Environment (set by the Makefile): FUZZ_CC, FUZZ_CFLAGS (include paths and
# defines), FUZZ_LIBS, FUZZ_SOURCES (the library's .c files), FUZZ_TARGETS,
# FUZZ_SECONDS, JOBS, srcdir (the source tree), OUT (the output folder).
set -u
: "${FUZZ_CC:?}" "${FUZZ_SOURCES:?}" "${FUZZ_TARGETS:?}" "${srcdir:?}"
OUT=${OUT:-fuzz-out}
JOBS=${JOBS:-2}
FUZZ_SECONDS=${FUZZ_SECONDS:-60}
san="-g -O1 -fsanitize=address,undefined -fno-sanitize-recover=undefined -std=c11"
obj=$OUT/obj

rm -rf "$obj"
mkdir -p "$obj" || exit 1

# One object per library source; the name keeps the path (a/b.c -> a_b.o).
echo "== fuzz: building the library ($(echo "$FUZZ_SOURCES" | wc -w) files, $JOBS at a time)"
export FUZZ_CC FUZZ_CFLAGS san obj
# shellcheck disable=SC2016,SC2086
printf '%s\n' $FUZZ_SOURCES | xargs -P "$JOBS" -I{} sh -c '
	o=$obj/$(printf "%s" "{}" | sed "s|^\./||; s|[/.]|_|g").o
	$FUZZ_CC $san -fsanitize=fuzzer-no-link $FUZZ_CFLAGS -c "{}" -o "$o" || { echo "fuzz: cannot compile {}" >&2; exit 255; }
' || exit 1

for t in $FUZZ_TARGETS; do
	echo "== fuzz_$t: linking"
	# shellcheck disable=SC2086
	$FUZZ_CC $san -fsanitize=fuzzer $FUZZ_CFLAGS "$srcdir/tests/fuzz/fuzz_$t.c" "$obj"/*.o \
		$FUZZ_LIBS -o "$OUT/fuzz_$t" || exit 1
	rm -rf "$OUT/corpus-$t"
	cp -r "$srcdir/tests/fuzz/corpus/$t" "$OUT/corpus-$t" && chmod -R u+w "$OUT/corpus-$t" || exit 1
done

# Run one target; its status is the run's.
run_one() {
	local t=$1
	"./$OUT/fuzz_$t" -max_total_time="$FUZZ_SECONDS" -max_len=65536 -timeout=10 \
		-rss_limit_mb=2048 "$OUT/corpus-$t" 2>"$OUT/fuzz_$t.log"
}

failed=0
set -- $FUZZ_TARGETS
while [ $# -gt 0 ]; do
	batch=() pids=()
	while [ $# -gt 0 ] && [ ${#batch[@]} -lt "$JOBS" ]; do
		batch+=("$1")
		shift
	done
	echo "== fuzz: ${batch[*]}: $FUZZ_SECONDS s"
	for t in "${batch[@]}"; do
		run_one "$t" &
		pids+=($!)
	done
	for i in "${!batch[@]}"; do
		t=${batch[$i]}
		if wait "${pids[$i]}"; then
			echo "== fuzz_$t: $(tail -n 1 "$OUT/fuzz_$t.log")"
		else
			echo "== fuzz_$t: FAILED" >&2
			tail -n 40 "$OUT/fuzz_$t.log" >&2
			failed=1
		fi
	done
done
exit $failed
