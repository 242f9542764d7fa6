#!/bin/sh
# make-nsys-seeds.sh - rebuild the seeds of corpus/nsys/ from the SQL fixtures
# in tests/cli/data/nsys/: for each case, CASE.sqlite (schema.sql plus the
# case, with 512-byte pages and VACUUM so that it stays a few KiB, far under
# the 64 KiB of 'make fuzz' -max_len=65536) and CASE.sql (the case alone,
# which fuzz_nsys.c runs on its own copy of the schema).  Needs sqlite3.
# usage: tests/fuzz/make-nsys-seeds.sh [CASE...]   (default: the usual set)
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
data=$top/tests/cli/data/nsys
out=$top/tests/fuzz/corpus/nsys
[ $# -gt 0 ] || set -- basic multi pool pairing old-schema renumbered no-memory \
	negative-bytes null-device
mkdir -p "$out"
for c in "$@"; do
	rm -f "$out/$c.sqlite"
	{ echo 'PRAGMA page_size=512;'; cat "$data/schema.sql" "$data/$c.sql"; echo 'VACUUM;'; } |
		sqlite3 -batch "$out/$c.sqlite"
	grep -v '^--' "$data/$c.sql" >"$out/$c.sql"
	echo "$out/$c.sqlite: $(wc -c <"$out/$c.sqlite") bytes"
done
