#!/bin/sh
# replay-corpus.sh - replay every fuzz corpus input through the fuzz target
# built with the ordinary toolchain (and sanitizers, in the CI's sanitizer
# build).  Fails if any input crashes it.
set -u
top_srcdir=${top_srcdir:-$(dirname "$0")/../..}
top_builddir=${top_builddir:-.}
set -- "$top_srcdir"/tests/fuzz/corpus/csv/*
[ -e "$1" ] || { echo "no corpus in $top_srcdir/tests/fuzz/corpus/csv" >&2; exit 1; }
exec "$top_builddir/tests/fuzz/fuzz_csv_replay" "$@"
