#!/bin/sh
# replay-corpus.sh - replay every fuzz corpus input through its fuzz target
# built with the ordinary toolchain (and sanitizers, in the CI's sanitizer
# build): tests/fuzz/corpus/NAME/* goes through tests/fuzz/fuzz_NAME_replay.
# Fails if any input crashes a target or a corpus has no target.
set -u
top_srcdir=${top_srcdir:-$(dirname "$0")/../..}
top_builddir=${top_builddir:-.}
n=0
for dir in "$top_srcdir"/tests/fuzz/corpus/*/; do
	name=$(basename "$dir")
	target="$top_builddir/tests/fuzz/fuzz_${name}_replay"
	if [ ! -x "$target" ]; then
		echo "corpus '$name' has no target '$target'" >&2
		exit 1
	fi
	set -- "$dir"*
	[ -e "$1" ] || { echo "empty corpus '$dir'" >&2; exit 1; }
	"$target" "$@" || { echo "fuzz_$name: an input of corpus '$name' failed" >&2; exit 1; }
	echo "fuzz_$name: $# inputs replayed"
	n=$((n + 1))
done
[ "$n" -gt 0 ] || { echo "no corpus under $top_srcdir/tests/fuzz/corpus" >&2; exit 1; }
